/* MPIX_Ifunc_load: see MPIX_Ifunc_load(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

int MPIX_Ifunc_load(const char *path, const char *name, MPIX_Ifunc *ifunc)
{
    if (path == NULL) return MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_ARG), MPI_ERR_ARG;
    return xrdma_mpi_ifunc_load(path, NULL, 0, name, ifunc);
}
