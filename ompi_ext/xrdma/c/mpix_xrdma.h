/* XRDMA: ship code with MPI one-sided operations (stand-alone library).
 * Link with -lmpix_xrdma (or pkg-config mpix-xrdma). Injected functions use
 * <xrdma_ifunc.h>; build them with xrdma-cc(1). */
#ifndef MPIX_XRDMA_H
#define MPIX_XRDMA_H
#include <mpi.h>
#include "mpiext_xrdma_c.h"
#endif
