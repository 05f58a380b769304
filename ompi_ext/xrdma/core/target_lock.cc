#include "target_lock.h"

#include "xrdma_common/cpu.h"
#include "xrdma_common/log.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace xrdma::mpi {

uint32_t lock_owner_id = uint32_t(getpid());

namespace {

struct OwnerIdAfterFork {
    OwnerIdAfterFork()
    {
        pthread_atfork(nullptr, nullptr, [] { lock_owner_id = uint32_t(getpid()); });
    }
} owner_id_after_fork;

}  // namespace

namespace {

// Whether process @p pid no longer exists (not: whether we may signal it).
bool gone(uint32_t pid) { return kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

void lock_contended(NodeLock *l, uint32_t me)
{
    for (unsigned spins = 1;; ++spins) {
        uint32_t cur = l->owner.load(std::memory_order_relaxed);
        if (cur == 0) {
            if (l->owner.compare_exchange_weak(cur, me, std::memory_order_acquire)) return;
            continue;
        }
        if (spins < 128) {
            cpu_relax();
            continue;
        }
        // Held for a while: check now and then that its owner still lives.
        if (spins % 64 == 0 && cur != me && gone(cur) &&
            l->owner.compare_exchange_strong(cur, me, std::memory_order_acquire)) {
            XRDMA_WARN("process %u died holding a target lock of node-local execution: taken over by %u", cur, me);
            return;
        }
        sched_yield();  // ranks may outnumber cores: let the owner run
    }
}

}  // namespace xrdma::mpi
