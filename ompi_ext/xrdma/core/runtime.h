// Process-wide state of the MPI layer: one UCP worker and one plugin context
// shared by every window (a window is a view: its id travels in each
// X-operation's header), the processes it talks to (MPI_COMM_WORLD ranks:
// worker addresses learnt at a group's first window, endpoints made at the
// first message either way), the window tables, and progress (Open MPI's
// progress engine, MPIX calls, and the optional progress thread).
#pragma once

#include "bundle.h"
#include "node_local.h"
#include "ucx_ifunc.h"

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

struct MPIX_Ifunc_s;

namespace xrdma::mpi {

struct Window;
// The plugin context's two UCP AM ids, and the MPI layer's own (node-local
// execution's queries and offers, node_local.cc).
constexpr uint16_t kAmIdBase = 0x40;
constexpr uint16_t kAmControl = kAmIdBase + 2;

// Another process of the job, by MPI_COMM_WORLD rank.
struct Peer {
    std::vector<uint8_t> address;  // its worker's (empty: not learnt yet)
    ucp_ep_h ep = nullptr;         // made at the first message either way (Runtime::peer_ep())
    bool remote = false;           // on another host: failure detection (XRDMA_PEER_FAILURE=auto)
    bool local = false;            // on this node: its window memory may be mapped here
    bool failed = false;           // its endpoint failed: never connected again
};

class Runtime {
public:
    // (Inline: every MPIX call asks for it.)
    // Never destroyed: MPI_Finalize may run after static destructors (a
    // program's atexit(MPI_Finalize) registered before the first window,
    // which made this, runs after it would be destroyed).
    static Runtime &get()
    {
        static Runtime *const rt = new Runtime;
        return *rt;
    }
    Runtime();  // (out of line: Window is incomplete here)
    // Windows still alive at exit are abandoned, not released: MPI and the
    // worker they use are gone by then.
    ~Runtime();

    // Guards all XRDMA state; progress from hooks only try-locks it.
    std::recursive_mutex mu;

    ucp_context_h ucp = nullptr;
    ucp_worker_h worker = nullptr;
    ucx_ifunc_context_h ctx = nullptr;  // the plugin context every window shares
    std::vector<uint8_t> address;
    int world_rank = 0, world_size = 1;
    std::vector<Peer> peers;  // by MPI_COMM_WORLD rank
    std::unordered_map<MPI_Win, std::unique_ptr<Window>> windows;
    // MPIX_Ifuncs registered with the plugin (released at MPI_Finalize if
    // the program did not free them).
    std::unordered_set<::MPIX_Ifunc_s *> ifuncs;
    unsigned long connected = 0;  // endpoints made (Runtime::connect())
    // The same windows by id (a target finds an X-op's window by the id in
    // its header: window_by_id(), window.h).
    std::unordered_map<uint32_t, Window *> by_id;
    // The window window_find() found last (a stream of X-ops names one
    // window): forgotten whenever windows changes.
    MPI_Win last_win = MPI_WIN_NULL;
    Window *last_window = nullptr;
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

    // Start UCX, the plugin context, the progress hook and thread
    // (idempotent). MPI error code.
    int start();
    bool started() const { return started_; }
    // Tear everything down (MPI_Finalize).
    void stop();
    // What a group's first window taught about process @p world.
    void learn_peer(int world, const uint8_t *address, size_t len, bool remote, bool local);
    // The endpoint to process @p world, made now if there is none yet
    // (nullptr: its address is unknown here, or it failed).
    ucp_ep_h peer_ep(int world)
    {
        if (__builtin_expect(world >= 0 && world < int(peers.size()) && peers[size_t(world)].ep, 1))
            return peers[size_t(world)].ep;
        return connect(world);
    }
    ucp_ep_h connect(int world);

    // Progress every window; caller holds mu. Returns events handled.
    // @p waiting: the caller waits for answers to its X-ops (a
    // synchronisation call): an empty pass then watches the rings a moment
    // (ucx_ifunc_progress_wait()).
    unsigned progress(bool waiting = false);
    // From progress hooks: progress if nobody else holds the lock.
    // (Inline, as app_progress() and progress_locked(): every idle poll
    // of a waiting rank runs them; their usual case is a call of the
    // plugin's progress.)
    // A process without a window has nothing XRDMA must progress (an
    // X-op that comes before its window exists here waits in UCX until it
    // does): plain MPI code after the last window pays nothing.
    unsigned try_progress()
    {
        if (no_windows_.load(std::memory_order_relaxed)) return 0;
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
    // The windows changed (caller holds mu): what remembers one found last forgets it.
    void windows_changed();
    // Whether a window is alive in this process (it has X-ops to serve).
    bool has_windows() const { return !no_windows_.load(std::memory_order_relaxed); }

private:
    bool started_ = false;
    // One thread makes every MPI call (thread level single or funneled) and
    // there is no progress thread: progress from hooks takes no lock (there
    // is nobody to exclude; the recursive lock never kept a thread's own
    // nested calls out either) and counts nothing for the thread.
    std::atomic<bool> one_thread_{false};  // (read relaxed: written once, by start())
    // No window is alive in this process (windows_changed() keeps it).
    std::atomic<bool> no_windows_{true};
    std::thread thread_;
    std::atomic<bool> thread_stop_{false};
    // Progress calls of the application's threads (MPI waits, MPIX calls):
    // while it moves, the application drives progress itself and the
    // progress thread stays off the lock (thread_main).
    std::atomic<unsigned> app_progress_{0};
    // One pass over the worker serves every window (one context); nullptr
    // before start() and after stop().
    ucx_ifunc_context_h progress_ctx_ = nullptr;
    unsigned progress_locked(bool waiting = false)
    {
        bundle_flush_if_any();  // (a bundle waits for no pass: bundle.h)
        ucx_ifunc_context_h c = progress_ctx_;
        if (__builtin_expect(c == nullptr, 0)) return 0;
        const unsigned n = waiting ? ucx_ifunc_progress_wait(c) : ucx_ifunc_progress(c);
        node_local_progress();  // (node peers' questions that came while a function ran)
        return n;
    }
    unsigned try_progress_shared();
    unsigned app_progress_shared();
    void thread_main();
    void ifuncs_release();
    void print_stats();  // XRDMA_STATS=1, at MPI_Finalize
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

}  // namespace xrdma::mpi
