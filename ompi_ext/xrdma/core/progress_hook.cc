// Open MPI's progress engine calls our progress while a rank sits in any
// blocking MPI call, so targets execute arriving code without polling loops.
// Kept apart: opal's headers clash with hwloc's.
#include <opal_config.h>
#include <opal/runtime/opal_progress.h>

#include "runtime.h"
#include "xrdma_common/hot.h"

namespace xrdma::mpi {

namespace {
XRDMA_HOT int opal_hook() { return int(Runtime::get().try_progress()); }
}  // namespace

void progress_hook_register() { opal_progress_register(opal_hook); }
void progress_hook_unregister() { opal_progress_unregister(opal_hook); }
bool progress_yield_when_idle(bool yield) { return opal_progress_set_yield_when_idle(yield); }

}  // namespace xrdma::mpi
