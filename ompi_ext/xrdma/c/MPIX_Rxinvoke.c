/* MPIX_Rxinvoke: see MPIX_Xinvoke(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Rxinvoke is a weak alias of PMPIX_Rxinvoke: a profiling tool defines MPIX_Rxinvoke and calls
 * PMPIX_Rxinvoke (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Rxinvoke = PMPIX_Rxinvoke

int PMPIX_Rxinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win,
                  MPI_Request *request)
{
    if (request == NULL) {
        const int err = xrdma_mpi_error_code(MPI_ERR_REQUEST, "MPIX_Rxinvoke: request is NULL");
        return MPI_Win_call_errhandler(win, err), err;
    }
    return xrdma_mpi_xop(XRDMA_OP_INVOKE, NULL, 0, MPI_BYTE, target_rank, 0, 0, MPI_BYTE, ifunc,
                         args, args_size, win, request);
}
