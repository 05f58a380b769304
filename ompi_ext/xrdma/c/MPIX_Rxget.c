/* MPIX_Rxget: see MPIX_Xget(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Rxget is a weak alias of PMPIX_Rxget: a profiling tool defines MPIX_Rxget and calls
 * PMPIX_Rxget (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Rxget = PMPIX_Rxget

int PMPIX_Rxget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request)
{
    if (request == NULL) {
        const int err = xrdma_mpi_error_code(MPI_ERR_REQUEST, "MPIX_Rxget: request is NULL");
        return MPI_Win_call_errhandler(win, err), err;
    }
    return xrdma_mpi_xop(XRDMA_OP_GET, origin_addr, origin_count, origin_datatype, target_rank,
                         target_disp, target_count, target_datatype, ifunc, args, args_size, win,
                         request);
}
