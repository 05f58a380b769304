/* MPIX_Xinvoke: see MPIX_Xinvoke(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Xinvoke is a weak alias of PMPIX_Xinvoke: a profiling tool defines MPIX_Xinvoke and calls
 * PMPIX_Xinvoke (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Xinvoke = PMPIX_Xinvoke

int PMPIX_Xinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win)
{
    return xrdma_mpi_xop(XRDMA_OP_INVOKE, NULL, 0, MPI_BYTE, target_rank, 0, 0, MPI_BYTE, ifunc,
                         args, args_size, win, NULL);
}
