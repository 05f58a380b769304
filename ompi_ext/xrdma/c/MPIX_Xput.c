/* MPIX_Xput: see MPIX_Xput(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Xput is a weak alias of PMPIX_Xput: a profiling tool defines MPIX_Xput and calls
 * PMPIX_Xput (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Xput = PMPIX_Xput

int PMPIX_Xput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
              MPI_Win win)
{
    return xrdma_mpi_xop(XRDMA_OP_PUT, (void *)origin_addr, origin_count, origin_datatype,
                         target_rank, target_disp, target_count, target_datatype, ifunc, args,
                         args_size, win, NULL);
}
