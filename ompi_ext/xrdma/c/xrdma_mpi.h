/* What the MPIX_* entry points (c/, one file per function, as in an Open
 * MPI mpiext) include to call the C++ core: the public API's types, then
 * the core's C interface. */
#ifndef XRDMA_MPI_CORE_H
#define XRDMA_MPI_CORE_H

#include <mpi.h>
#include "mpiext_xrdma_c.h"
#include "../core/core_api.h"

#endif
