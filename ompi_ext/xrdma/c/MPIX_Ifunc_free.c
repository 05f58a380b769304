/* MPIX_Ifunc_free: see MPIX_Ifunc_load(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

int MPIX_Ifunc_free(MPIX_Ifunc *ifunc)
{
    return xrdma_mpi_ifunc_free(ifunc);
}
