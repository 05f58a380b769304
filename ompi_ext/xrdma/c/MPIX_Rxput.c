/* MPIX_Rxput: see MPIX_Xput(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Rxput is a weak alias of PMPIX_Rxput: a profiling tool defines MPIX_Rxput and calls
 * PMPIX_Rxput (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Rxput = PMPIX_Rxput

int PMPIX_Rxput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request)
{
    if (request == NULL) {
        const int err = xrdma_mpi_error_code(MPI_ERR_REQUEST, "MPIX_Rxput: request is NULL");
        return MPI_Win_call_errhandler(win, err), err;
    }
    return xrdma_mpi_xop(XRDMA_OP_PUT, (void *)origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count, target_datatype, ifunc, args,
                         args_size, win, request);
}
