/* MPIX_Rxinvoke: see MPIX_Xinvoke(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

int MPIX_Rxinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win,
                  MPI_Request *request)
{
    if (request == NULL) return MPI_Win_call_errhandler(win, MPI_ERR_REQUEST), MPI_ERR_REQUEST;
    return xrdma_mpi_xop(XRDMA_OP_INVOKE, NULL, 0, MPI_BYTE, target_rank, 0, 0, MPI_BYTE, ifunc,
                         args, args_size, win, request);
}
