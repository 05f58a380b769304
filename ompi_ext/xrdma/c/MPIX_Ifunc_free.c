/* MPIX_Ifunc_free: see MPIX_Ifunc_load(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Ifunc_free is a weak alias of PMPIX_Ifunc_free: a profiling tool defines MPIX_Ifunc_free and calls
 * PMPIX_Ifunc_free (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Ifunc_free = PMPIX_Ifunc_free

int PMPIX_Ifunc_free(MPIX_Ifunc *ifunc)
{
    return xrdma_mpi_ifunc_free(ifunc);
}
