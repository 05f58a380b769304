// Process-wide state of the MPI layer: one UCP worker shared by all windows,
// endpoints by peer address, the window table, and progress (Open MPI's
// progress engine, MPIX calls, and the optional progress thread).
#pragma once

#include "bundle.h"
#include "ucx_ifunc.h"

#include <mpi.h>

#include <atomic>
#include <bitset>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace xrdma::mpi {

struct Window;
// Window slots: 2 UCP AM ids each from 0x40; UCP AM ids are 16 bit and UCX
// 1.13 grows its handler table to the highest id set (no other limit), so
// about 32k windows with X-operations can be alive at once per process.
constexpr int kAmIdBase = 0x40;
constexpr int kSlots = (0x10000 - kAmIdBase) / 2;

class Runtime {
public:
    // (Inline: every MPIX call asks for it.)
    static Runtime &get()
    {
        static Runtime rt;
        return rt;
    }
    Runtime();  // (out of line: Window is incomplete here)
    // Windows still alive at exit are abandoned, not released: MPI and the
    // worker they use are gone by then.
    ~Runtime();

    // Guards all XRDMA state; progress from hooks only try-locks it.
    std::recursive_mutex mu;

    ucp_context_h ucp = nullptr;
    ucp_worker_h worker = nullptr;
    std::vector<uint8_t> address;
    std::map<std::vector<uint8_t>, ucp_ep_h> eps;
    std::unordered_map<MPI_Win, std::unique_ptr<Window>> windows;
    // The window window_find() found last (a stream of X-ops names one
    // window): forgotten whenever windows changes.
    MPI_Win last_win = MPI_WIN_NULL;
    Window *last_window = nullptr;
    std::bitset<kSlots> slots;
    int thread_level = MPI_THREAD_SINGLE;
    // XRDMA_EXEC=auto: X-ops whose target memory is mapped here run here.
    bool exec_auto = true;
    // More ranks on this node than processing units: waiting loops yield at
    // once instead of spinning (a spinning origin takes its target's core).
    bool oversubscribed = false;
    // Idle progress calls before a waiting loop yields.
    unsigned spin_before_yield() const { return oversubscribed ? 1 : 256; }
    // Endpoint failure from UCX: fail every X-op pending on it.
    void ep_failed(ucp_ep_h ep);

    // Start UCX, the progress hook and thread (idempotent). MPI error code.
    int start();
    // Tear everything down (MPI_Finalize).
    void stop();
    // Endpoint to a worker address; @p detect_failure asks UCX for peer
    // failure detection (only transports that have it, e.g. TCP, qualify).
    ucp_ep_h ep_to(const std::vector<uint8_t> &address, bool detect_failure);
    // Progress every window; caller holds mu. Returns events handled.
    // @p waiting: the caller waits for answers to its X-ops (a
    // synchronisation call): an empty pass then watches the rings a moment
    // (ucx_ifunc_progress_wait()).
    unsigned progress(bool waiting = false);
    // From progress hooks: progress if nobody else holds the lock.
    // (Inline, as app_progress() and progress_locked(): every idle poll
    // of a waiting rank runs them; their usual case is a call of the
    // plugin's progress.)
    unsigned try_progress()
    {
        if (one_thread_.load(std::memory_order_relaxed)) return progress_locked();
        return try_progress_shared();
    }
    // From the application (MPIX_Xprogress): progress, under the lock
    // when another thread may call.
    unsigned app_progress()
    {
        if (!lock_needed()) return progress_locked();  // (nothing to count for a progress thread either)
        return app_progress_shared();
    }
    // Whether mu must be taken: another thread may call (the thread level
    // is serialized or multiple, or the progress thread runs).
    bool lock_needed() const { return !one_thread_.load(std::memory_order_relaxed); }
    // The windows changed (caller holds mu): progress_locked() serves
    // them through the context of one of them (nullptr: before the
    // window leaves, so that nothing reaches its context meanwhile).
    void windows_changed(bool leaving = false);

private:
    bool started_ = false;
    // One thread makes every MPI call (thread level single or funneled) and
    // there is no progress thread: progress from hooks takes no lock (there
    // is nobody to exclude; the recursive lock never kept a thread's own
    // nested calls out either) and counts nothing for the thread.
    std::atomic<bool> one_thread_{false};  // (read relaxed: written once, by start())
    std::thread thread_;
    std::atomic<bool> thread_stop_{false};
    // Progress calls of the application's threads (MPI waits, MPIX calls):
    // while it moves, the application drives progress itself and the
    // progress thread stays off the lock (thread_main).
    std::atomic<unsigned> app_progress_{0};
    // One pass over the shared worker serves every window's context (the
    // plugin runs what the pass queued for each): 300 windows cost one pass,
    // not 300 (an MPI_Barrier with 300 windows took 86 us instead of 4 us).
    // Through the context of one window (windows_changed()); without one,
    // progress_other().
    ucx_ifunc_context_h progress_ctx_ = nullptr;
    unsigned progress_locked(bool waiting = false)
    {
        bundle_flush_if_any();  // (a bundle waits for no pass: bundle.h)
        ucx_ifunc_context_h c = progress_ctx_;
        if (__builtin_expect(c == nullptr, 0)) return progress_other();
        return waiting ? ucx_ifunc_progress_wait(c) : ucx_ifunc_progress(c);
    }
    unsigned progress_other();
    unsigned try_progress_shared();
    unsigned app_progress_shared();
    void thread_main();
};

// Runtime::mu as the paths of every operation take it (std::unique_lock
// over this): not at all when only one thread makes MPI calls and no
// progress thread runs. Decided when made, so lock and unlock agree.
class RuntimeLock {
public:
    explicit RuntimeLock(Runtime &rt) : mu_(rt.lock_needed() ? &rt.mu : nullptr) {}
    void lock() { if (mu_) mu_->lock(); }
    void unlock() { if (mu_) mu_->unlock(); }

private:
    std::recursive_mutex *mu_;
};

// progress_hook.cc: whether opal_progress() yields the processor when it
// found nothing to do (mpirun --mca mpi_yield_when_idle); returns the setting
// it replaces.
bool progress_yield_when_idle(bool yield);

}  // namespace xrdma::mpi
