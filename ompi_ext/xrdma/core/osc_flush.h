// MPI_Win_flush without Open MPI's component flush when the component has
// nothing of its own to complete: a window whose traffic is X-ops pays only
// for them. osc ucx's flush costs ~330 instructions with nothing outstanding
// (a UCP endpoint flush on its own worker), which an X-op run in the origin
// process (XRDMA_EXEC=auto) and its MPI_Win_flush paid on every call.
//
// At a window's first X-op, its component table (osc_table.h) is wrapped
// when the component is osc ucx, XRDMA_FLUSH_SKIP is on and MPI calls are
// never concurrent (below MPI_THREAD_MULTIPLE); a window without X-ops keeps
// the component's own table. From then on every RMA call the component gets
// is counted per target, from whichever language binding or profiling layer
// it came (Open MPI's Fortran bindings call PMPI_Put directly, so counting
// MPI_Put here would miss them); what came before is counted as one call to
// every target. A flush, flush_all, unlock or unlock_all that succeeds
// discounts what was counted before it began. A flush (or flush_local) to a
// target with nothing counted returns at once in a passive epoch: one the
// component confirmed (its lock, lock_all or flush succeeded) and no unlock
// ended since. Anything else goes to the component, which also reports a
// flush outside an epoch.
#pragma once

#include <mpi.h>

#include <memory>

namespace xrdma::mpi {

struct OscFlush;
struct OscFlushRelease {
    void operator()(OscFlush *f) const;  // puts the component's table back
};
using OscFlushPtr = std::unique_ptr<OscFlush, OscFlushRelease>;

// Wraps @p win's component table; nullptr when XRDMA_FLUSH_SKIP is off,
// MPI calls may be concurrent, the component is not osc ucx, or XRDMA was
// built without Open MPI's internal headers.
OscFlushPtr osc_flush_wrap(MPI_Win win, int size);

}  // namespace xrdma::mpi
