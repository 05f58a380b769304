/* The one place that knows an Open MPI internal: the table of functions of a
 * window's one-sided component (ompi_osc_base_module_t, a copy per window,
 * ompi/mca/osc/osc.h). osc_flush.cc wraps some of its entries. C, because
 * Open MPI's internal headers do not compile as C++. */
#pragma once

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The entries osc_flush.cc wraps, in this order. */
enum xrdma_osc_slot {
    XRDMA_OSC_PUT, XRDMA_OSC_GET, XRDMA_OSC_ACCUMULATE, XRDMA_OSC_COMPARE_AND_SWAP, XRDMA_OSC_FETCH_AND_OP,
    XRDMA_OSC_GET_ACCUMULATE, XRDMA_OSC_RPUT, XRDMA_OSC_RGET, XRDMA_OSC_RACCUMULATE, XRDMA_OSC_RGET_ACCUMULATE,
    XRDMA_OSC_LOCK, XRDMA_OSC_UNLOCK, XRDMA_OSC_LOCK_ALL, XRDMA_OSC_UNLOCK_ALL,
    XRDMA_OSC_FLUSH, XRDMA_OSC_FLUSH_ALL, XRDMA_OSC_FLUSH_LOCAL, XRDMA_OSC_FLUSH_LOCAL_ALL,
    XRDMA_OSC_NSLOTS
};

/* The name of @p slot's function in osc ucx ("ompi_osc_ucx_put"...): what a
 * slot must hold before it is wrapped (a check of the table's layout). */
const char *xrdma_osc_ucx_name(int slot);

/* Where @p win's component keeps its function for @p slot; NULL when XRDMA
 * was built without Open MPI's internal headers. */
void **xrdma_osc_slot(MPI_Win win, int slot);

#ifdef __cplusplus
}
#endif
