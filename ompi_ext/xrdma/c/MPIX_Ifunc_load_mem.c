/* MPIX_Ifunc_load_mem: see MPIX_Ifunc_load(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* MPIX_Ifunc_load_mem is a weak alias of PMPIX_Ifunc_load_mem: a profiling tool defines MPIX_Ifunc_load_mem and calls
 * PMPIX_Ifunc_load_mem (the MPI profiling interface, as Open MPI's own extensions do). */
#pragma weak MPIX_Ifunc_load_mem = PMPIX_Ifunc_load_mem

int PMPIX_Ifunc_load_mem(const void *image, size_t size, const char *name, MPIX_Ifunc *ifunc)
{
    if (image == NULL) {
        const int err = xrdma_mpi_error_code(MPI_ERR_ARG, "MPIX_Ifunc_load_mem: image is NULL");
        return MPI_Comm_call_errhandler(MPI_COMM_WORLD, err), err;
    }
    return xrdma_mpi_ifunc_load(NULL, image, size, name, ifunc);
}
