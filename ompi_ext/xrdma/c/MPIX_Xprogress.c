/* MPIX_Xprogress: see MPIX_Xprogress(3). */
#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

int MPIX_Xprogress(void)
{
    return xrdma_mpi_progress();
}
