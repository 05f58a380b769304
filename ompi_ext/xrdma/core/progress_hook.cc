// Open MPI's progress engine calls our progress while a rank sits in any
// blocking MPI call, so targets execute arriving code without polling loops.
// Kept apart: opal's headers clash with hwloc's.
#include <opal_config.h>
#include <opal/runtime/opal_progress.h>

#include "runtime.h"
#include "xrdma_common/hot.h"

namespace xrdma::mpi {

namespace {
// One pass, then back to Open MPI. No linger here when the pass found
// nothing (the rings' linger is inside the pass, ring_linger()): over TCP
// every empty pass is a system call, and the TCP chase took 1.059x its
// same-run baseline with a linger here, 1.042x without. No pause
// (cpu_relax()) after an empty pass either: a target waits on the
// operation's path, and where the two ranks share a core's pipeline the
// chase took 1.65-1.78x its baseline with one, 1.52-1.58x without.
XRDMA_HOT int opal_hook() { return int(Runtime::get().try_progress()); }
}  // namespace

void progress_hook_register() { opal_progress_register(opal_hook); }
void progress_hook_unregister() { opal_progress_unregister(opal_hook); }
bool progress_yield_when_idle(bool yield) { return opal_progress_set_yield_when_idle(yield); }

}  // namespace xrdma::mpi
