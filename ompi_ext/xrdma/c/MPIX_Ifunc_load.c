/* MPIX_Ifunc_load: see MPIX_Ifunc_load(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Ifunc_load is a weak alias of PMPIX_Ifunc_load: a profiling tool defines MPIX_Ifunc_load and calls
 * PMPIX_Ifunc_load (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Ifunc_load = PMPIX_Ifunc_load

int PMPIX_Ifunc_load(const char *path, const char *name, MPIX_Ifunc *ifunc)
{
    if (path == NULL) {
        const int err = xrdma_mpi_error_code(MPI_ERR_ARG, "MPIX_Ifunc_load: path is NULL");
        return MPI_Comm_call_errhandler(MPI_COMM_WORLD, err), err;
    }
    return xrdma_mpi_ifunc_load(path, NULL, 0, name, ifunc);
}
