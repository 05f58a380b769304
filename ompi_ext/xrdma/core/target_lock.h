// The per-target lock of node-local execution: functions at one target run
// one at a time wherever they run (its own dispatch, or a node peer that
// maps its window), so each code-running rank of a node has one of these in
// the node's lock segment (node_local.cc).
//
// A word in shared memory holding the owner's process id (0: free). Taking
// a free lock is one compare-and-swap and releasing it one store, where a
// robust process-shared pthread mutex costs ~140 instructions per hop of a
// chase (its robust-list bookkeeping), which node-local execution pays on
// every hop. Robust all the same: a waiter that finds the owner's process
// gone (killed while its code ran on a peer's window) takes the lock over,
// so a dead peer cannot hang the node. Process ids are compared within one
// PID namespace (node identity includes it, node_local.cc).
#pragma once

#include <atomic>
#include <cstdint>

namespace xrdma::mpi {

struct alignas(64) NodeLock {  // one cache line each: no false sharing between targets
    std::atomic<uint32_t> owner;
};
static_assert(sizeof(NodeLock) == 64, "one cache line per lock");

// This process's id as the locks record it (read at load time, and again
// in a child after fork()).
extern uint32_t lock_owner_id;

// Slow path of lock(): waits, spinning then yielding the core, and takes
// over the lock of a dead owner.
void lock_contended(NodeLock *l, uint32_t me);

inline void lock(NodeLock *l)
{
    const uint32_t me = lock_owner_id;
    uint32_t free_word = 0;
    if (__builtin_expect(l->owner.compare_exchange_strong(free_word, me, std::memory_order_acquire), 1)) return;
    lock_contended(l, me);
}

inline void unlock(NodeLock *l) { l->owner.store(0, std::memory_order_release); }

// Holds at most one target's lock: the one of the window the code currently
// runs on. A local forward chain moves it from target to target
// (switch_to: release, then take; never two at once, so no lock order).
class HeldLock {
public:
    HeldLock() = default;
    explicit HeldLock(NodeLock *l) { take(l); }
    ~HeldLock() { switch_to(nullptr); }
    HeldLock(const HeldLock &) = delete;
    HeldLock &operator=(const HeldLock &) = delete;

    // The first lock of a holder that holds none (a fresh one): what
    // switch_to() does then, without its tests of the one held.
    void take(NodeLock *l)
    {
        held_ = l;
        if (l) lock(l);
    }
    void switch_to(NodeLock *l)
    {
        if (l == held_) return;
        if (held_) unlock(held_);
        held_ = l;
        if (held_) lock(held_);
    }

private:
    NodeLock *held_ = nullptr;
};

}  // namespace xrdma::mpi
