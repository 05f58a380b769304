/* The table of functions of a window's one-sided component (osc_table.h). */
#include "osc_table.h"

#include "xrdma_config.h"

#include <stddef.h>

#if XRDMA_HAVE_OSC_TABLE
#include "ompi_config.h"
#include "ompi/win/win.h"
#include "ompi/mca/osc/osc.h"

static const size_t offsets[XRDMA_OSC_NSLOTS] = {
    offsetof(ompi_osc_base_module_t, osc_put),
    offsetof(ompi_osc_base_module_t, osc_get),
    offsetof(ompi_osc_base_module_t, osc_accumulate),
    offsetof(ompi_osc_base_module_t, osc_compare_and_swap),
    offsetof(ompi_osc_base_module_t, osc_fetch_and_op),
    offsetof(ompi_osc_base_module_t, osc_get_accumulate),
    offsetof(ompi_osc_base_module_t, osc_rput),
    offsetof(ompi_osc_base_module_t, osc_rget),
    offsetof(ompi_osc_base_module_t, osc_raccumulate),
    offsetof(ompi_osc_base_module_t, osc_rget_accumulate),
    offsetof(ompi_osc_base_module_t, osc_lock),
    offsetof(ompi_osc_base_module_t, osc_unlock),
    offsetof(ompi_osc_base_module_t, osc_lock_all),
    offsetof(ompi_osc_base_module_t, osc_unlock_all),
    offsetof(ompi_osc_base_module_t, osc_flush),
    offsetof(ompi_osc_base_module_t, osc_flush_all),
    offsetof(ompi_osc_base_module_t, osc_flush_local),
    offsetof(ompi_osc_base_module_t, osc_flush_local_all),
};

void **xrdma_osc_slot(MPI_Win win, int slot)
{
    if (!win || slot < 0 || slot >= XRDMA_OSC_NSLOTS || !win->w_osc_module) return NULL;
    return (void **)((char *)win->w_osc_module + offsets[slot]);
}
#else
void **xrdma_osc_slot(MPI_Win win, int slot)
{
    (void)win;
    (void)slot;
    return NULL;
}
#endif

const char *xrdma_osc_ucx_name(int slot)
{
    static const char *const names[XRDMA_OSC_NSLOTS] = {
        "ompi_osc_ucx_put", "ompi_osc_ucx_get", "ompi_osc_ucx_accumulate", "ompi_osc_ucx_compare_and_swap",
        "ompi_osc_ucx_fetch_and_op", "ompi_osc_ucx_get_accumulate", "ompi_osc_ucx_rput", "ompi_osc_ucx_rget",
        "ompi_osc_ucx_raccumulate", "ompi_osc_ucx_rget_accumulate", "ompi_osc_ucx_lock", "ompi_osc_ucx_unlock",
        "ompi_osc_ucx_lock_all", "ompi_osc_ucx_unlock_all", "ompi_osc_ucx_flush", "ompi_osc_ucx_flush_all",
        "ompi_osc_ucx_flush_local", "ompi_osc_ucx_flush_local_all",
    };
    return slot >= 0 && slot < XRDMA_OSC_NSLOTS ? names[slot] : "";
}
