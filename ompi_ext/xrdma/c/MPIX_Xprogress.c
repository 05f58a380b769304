/* MPIX_Xprogress: see MPIX_Xprogress(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Xprogress is a weak alias of PMPIX_Xprogress: a profiling tool defines MPIX_Xprogress and calls
 * PMPIX_Xprogress (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Xprogress = PMPIX_Xprogress

int PMPIX_Xprogress(void)
{
    return xrdma_mpi_progress();
}
