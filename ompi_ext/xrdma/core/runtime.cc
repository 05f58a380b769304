#include "runtime.h"

#include <algorithm>

#include "xrdma_common/config.h"
#include "xrdma_common/log.h"
#include "op_wire.h"
#include "group.h"
#include "mpi_impl.h"
#include "window.h"
#include "xrdma_common/hot.h"

#include <hwloc.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sched.h>
#include <time.h>

namespace xrdma::mpi {

namespace {

// Pin the progress thread to the last PU this process may run on (the
// application's threads usually start on the first).
void pin_to_last_pu()
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) == 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(set)) {
            int last = hwloc_bitmap_last(set);
            hwloc_bitmap_only(set, unsigned(last));
            if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) != 0)
                XRDMA_INFO("could not pin the progress thread to PU %d", last);
            else
                XRDMA_DEBUG("progress thread pinned to PU %d", last);
        }
        hwloc_bitmap_free(set);
    }
    hwloc_topology_destroy(topo);
}
// XRDMA's own UCP context reads XRDMA_UCX_<NAME> over UCX_<NAME>, so that it
// may use other transports than the MPI's UCX (which reads UCX_<NAME> only).
constexpr const char *kUcxEnvPrefix = "XRDMA";

// The UCX setting NAME (without "UCX_") as XRDMA's context sees it, or null.
const char *ucx_env(const char *name)
{
    const char *v = getenv((std::string(kUcxEnvPrefix) + "_UCX_" + name).c_str());
    return v ? v : getenv((std::string("UCX_") + name).c_str());
}

// Whether UCX_TLS lets UCX use its shared-memory (mm) transports: UCX warns
// about settings for transports it did not load.
bool shared_memory_selected()
{
    const char *tls = ucx_env("TLS");
    if (!tls || !*tls) return true;
    bool exclude = tls[0] == '^';
    std::string list = exclude ? tls + 1 : tls;
    bool named = false;
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        std::string t = list.substr(pos, end - pos);
        if (t == "all" || t == "sm" || t == "shm" || t == "mm" || t == "posix" || t == "sysv") named = true;
        pos = end + 1;
    }
    return exclude ? !named : named;
}

}  // namespace

Runtime::Runtime() = default;

Runtime::~Runtime()
{
    for (auto &kv : windows) (void)kv.second.release();
}

namespace {
// The plugin's connect hook: a peer it has no endpoint for yet.
ucp_ep_h connect_hook(void *, int rank) { return Runtime::get().connect(rank); }
}  // namespace

int Runtime::start()
{
    std::lock_guard<std::recursive_mutex> guard(mu);
    if (started_) return MPI_SUCCESS;
    if (register_window_accessors() != UCX_IFUNC_OK) {
        XRDMA_ERROR("the window accessors (xrdma_target ...) cannot be added to the runtime API");
        return MPI_ERR_OTHER;
    }
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    // Shared-memory FIFO elements large enough that a warm X-op (the
    // plugin's per-invocation bytes for a 16-byte entry name, the X-op
    // header, 32 bytes of arguments, and UCX's own ~32 bytes of headers)
    // fits one short message instead of a bcopy send: 256 bytes instead of
    // UCX's 128. Only XRDMA's own UCP context, only when UCX_TLS lets UCX
    // use shared memory; UCX_{MM,POSIX,SYSV}_FIFO_ELEM_SIZE set in the
    // environment win.
    const size_t warm_op = ucx_ifunc_invoke_overhead(16) + kOpHdrMax + 32 + 32;
    size_t elem = 128;
    while (elem < warm_op) elem *= 2;
    const std::string elem_size = std::to_string(elem);
    ucp_config_t *cfg = nullptr;
    if (ucp_config_read(kUcxEnvPrefix, nullptr, &cfg) != UCS_OK) cfg = nullptr;
    if (cfg && elem > 128 && shared_memory_selected() && !ucx_env("MM_FIFO_ELEM_SIZE") &&
        !ucx_env("POSIX_FIFO_ELEM_SIZE") && !ucx_env("SYSV_FIFO_ELEM_SIZE") &&
        ucp_config_modify(cfg, "MM_FIFO_ELEM_SIZE", elem_size.c_str()) != UCS_OK)
        XRDMA_DEBUG("UCX has no MM_FIFO_ELEM_SIZE: left as it is");
    ucs_status_t st = ucp_init(&p, cfg, &ucp);
    if (cfg) ucp_config_release(cfg);
    if (st != UCS_OK) {
        XRDMA_ERROR("ucp_init: %s", ucs_status_string(st));
        return MPI_ERR_OTHER;
    }
    // The level MPI provides, also when MPI_Init_thread() did not come
    // through pmpi.cc (a program that loads this library after MPI_Init).
    int provided;
    if (MPI_Query_thread(&provided) == MPI_SUCCESS) thread_level = provided;
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // Every UCX call is made under mu, so serialized is enough for any level.
    wp.thread_mode = thread_level == MPI_THREAD_SINGLE ? UCS_THREAD_MODE_SINGLE : UCS_THREAD_MODE_SERIALIZED;
    st = ucp_worker_create(ucp, &wp, &worker);
    if (st != UCS_OK) {
        XRDMA_ERROR("ucp_worker_create: %s", ucs_status_string(st));
        ucp_cleanup(ucp);
        return MPI_ERR_OTHER;
    }
    ucp_address_t *a;
    size_t len;
    ucp_worker_get_address(worker, &a, &len);
    address.assign(reinterpret_cast<uint8_t *>(a), reinterpret_cast<uint8_t *>(a) + len);
    ucp_worker_release_address(worker, a);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    peers.assign(size_t(world_size), Peer{});
    // One context for every window: a window is a view, named in each
    // X-op's header (op_wire.h); its code, bindings, rings and endpoints
    // are per process pair.
    ucx_ifunc_context_params_t cp{};
    cp.worker = worker;
    cp.ucp_context = ucp;
    cp.rank = world_rank;
    cp.size = world_size;
    cp.dispatch = window_dispatch;
    cp.runs_here = window_runs_here;
    cp.continue_at = window_continue_at;
    cp.am_id = kAmIdBase;
    // Warm invocations and answers name their sender by world rank; a rank
    // the table has no endpoint for is connected then (connect_hook).
    cp.peers_by_rank = 1;
    cp.connect = connect_hook;
    if (ucx_ifunc_context_create(&cp, &ctx) != UCX_IFUNC_OK || node_local_start(worker) != UCS_OK) {
        XRDMA_ERROR("the X-operation context cannot be created on XRDMA's UCP worker");
        if (ctx) ucx_ifunc_context_destroy(ctx);
        ctx = nullptr;
        ucp_worker_destroy(worker);
        ucp_cleanup(ucp);
        worker = nullptr;
        ucp = nullptr;
        return MPI_ERR_OTHER;
    }
    progress_ctx_ = ctx;
    mpi_progress_start();  // (MPI serves X-ops from here on: mpi_impl.h)
    std::string exec = config_get("XRDMA_EXEC");
    if (exec != "auto" && exec != "target")
        XRDMA_WARN("XRDMA_EXEC=%s is neither auto nor target: using auto", exec.c_str());
    exec_auto = exec != "target";
    started_ = true;
    if (config_get_ull("XRDMA_PROGRESS_THREAD")) {
        if (thread_level != MPI_THREAD_MULTIPLE)
            XRDMA_INFO("XRDMA_PROGRESS_THREAD=1 with thread level %d: XRDMA serialises internally", thread_level);
        thread_stop_ = false;
        thread_ = std::thread([this] { thread_main(); });
    }
    one_thread_.store(thread_level <= MPI_THREAD_FUNNELED && !thread_.joinable(), std::memory_order_relaxed);
    return MPI_SUCCESS;
}

void Runtime::stop()
{
    if (thread_.joinable()) {
        thread_stop_ = true;
        thread_.join();
    }
    std::lock_guard<std::recursive_mutex> guard(mu);
    groups_release();
    if (!started_) return;
    bundle_flush_if_any();  // (its window was not freed: it goes like the X-ops sent before it)
    progress_ctx_ = nullptr;
    mpi_progress_stop();
    if (config_get_ull("XRDMA_STATS")) print_stats();
    for (auto &kv : windows) XRDMA_WARN("window %#llx was not freed before MPI_Finalize", mpi_handle(kv.first));
    // (Windows still alive are abandoned: nothing reaches them from here on.)
    ifuncs_release();
    ucx_ifunc_context_destroy(ctx);
    ctx = nullptr;
    node_local_stop();
    for (Peer &p : peers) {
        if (!p.ep) continue;
        ucp_request_param_t rp{};
        rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
        ucs_status_ptr_t r = ucp_ep_close_nbx(p.ep, &rp);
        if (r && !UCS_PTR_IS_ERR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker);
            ucp_request_free(r);
        }
        p.ep = nullptr;
    }
    ucp_worker_destroy(worker);
    ucp_cleanup(ucp);
    worker = nullptr;
    ucp = nullptr;
    started_ = false;
}

namespace {
void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    XRDMA_WARN("peer endpoint failed: %s", ucs_status_string(status));
    static_cast<Runtime *>(arg)->ep_failed(ep);
}
}  // namespace

void Runtime::ep_failed(ucp_ep_h ep)
{
    std::lock_guard<std::recursive_mutex> guard(mu);
    for (Peer &p : peers)
        if (p.ep == ep) p.failed = true;
    if (ctx) ucx_ifunc_peer_failed(ctx, ep);
    for (auto &kv : windows) {
        Window &w = *kv.second;
        for (size_t t = 0; t < w.eps.size(); ++t)
            if (w.eps[t] == ep) w.peer_failed[t] = 1;
    }
}

void Runtime::learn_peer(int world, const uint8_t *addr, size_t len, bool remote, bool local)
{
    if (world < 0 || world >= int(peers.size())) return;
    Peer &p = peers[size_t(world)];
    if (p.address.empty()) p.address.assign(addr, addr + len);
    p.remote = remote;
    p.local = local;
}

ucp_ep_h Runtime::connect(int world)
{
    if (!started_ || world < 0 || world >= int(peers.size())) return nullptr;
    Peer &p = peers[size_t(world)];
    if (p.ep || p.failed) return p.ep;
    if (p.address.empty()) {
        XRDMA_DEBUG("rank %d: no address of world rank %d (no window shared with it)", world_rank, world);
        return nullptr;
    }
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t *>(p.address.data());
    static const std::string mode = config_get("XRDMA_PEER_FAILURE");
    if (mode == "on" || (mode == "auto" && p.remote)) {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = on_ep_error;
        ep.err_handler.arg = this;
    }
    ucs_status_t st = ucp_ep_create(worker, &ep, &p.ep);
    if (st != UCS_OK) {
        XRDMA_ERROR("ucp_ep_create to world rank %d: %s", world, ucs_status_string(st));
        p.ep = nullptr;
        return nullptr;
    }
    connected++;
    return p.ep;
}

unsigned Runtime::progress(bool waiting)
{
    if (!one_thread_.load(std::memory_order_relaxed)) app_progress_.fetch_add(1, std::memory_order_relaxed);
    const unsigned n = progress_locked(waiting);
    if (!n) mpi_progress_idle();
    return n;
}

void Runtime::ifuncs_release()
{
    for (MPIX_Ifunc f : ifuncs) {
        ucx_ifunc_deregister(f->handle);
        f->handle = nullptr;
    }
    ifuncs.clear();
}

// One line of counters per process (XRDMA_STATS=1): what the scale
// benchmark and tests read (benchmarks/scale.c).
void Runtime::print_stats()
{
    ucx_ifunc_stats_t s{};
    ucx_ifunc_stats(ctx, &s);
    fprintf(stderr,
            "[xrdma stats] rank %d: contexts %llu windows %zu endpoints %lu peers %llu invocations_sent %llu "
            "code_sends %llu bytes_sent %llu executed %llu rings_in %llu ring_bytes %llu deferred %llu\n",
            world_rank, (unsigned long long)s.contexts, windows.size(), connected, (unsigned long long)s.peers,
            (unsigned long long)s.invocations_sent, (unsigned long long)s.code_sends,
            (unsigned long long)s.bytes_sent, (unsigned long long)s.executed, (unsigned long long)s.rings_in,
            (unsigned long long)s.ring_bytes, (unsigned long long)s.deferred);
}

void Runtime::windows_changed()
{
    last_window = nullptr;
    no_windows_.store(windows.empty(), std::memory_order_relaxed);
    g_window_hit_id = kNoWindow;
    g_window_hit = nullptr;
}

unsigned Runtime::app_progress_shared()
{
    std::lock_guard<std::recursive_mutex> guard(mu);
    return progress();
}

unsigned Runtime::try_progress_shared()
{
    app_progress_.fetch_add(1, std::memory_order_relaxed);  // (also when the lock is busy: it waits)
    std::unique_lock<std::recursive_mutex> lock(mu, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    return progress_locked();
}

// The progress thread serves while the application computes. While the
// application itself waits in MPI (its progress calls keep coming), the
// thread stays off the lock and naps: two threads polling one worker only
// take the lock from each other (a thread preempted while holding it
// stalls the waiting application for a time slice: MPIX_Rxget + MPI_Wait
// took 74 us instead of 1.1 us over shm).
void Runtime::thread_main()
{
    pin_to_last_pu();
    unsigned idle = 0;
    unsigned seen = app_progress_.load(std::memory_order_relaxed);
    long nap_us = 0;  // grows while the application keeps waiting in MPI
    while (!thread_stop_) {
        const unsigned now = app_progress_.load(std::memory_order_relaxed);
        if (now != seen) {
            seen = now;
            idle = 0;
            nap_us = nap_us ? std::min(nap_us * 2, 1000L) : 20;
            struct timespec ts{0, nap_us * 1000};
            nanosleep(&ts, nullptr);
            continue;
        }
        nap_us = 0;
        std::unique_lock<std::recursive_mutex> lock(mu, std::try_to_lock);
        if (lock.owns_lock() && progress_locked()) {
            idle = 0;
            continue;
        }
        lock = {};
        // Spin briefly, then yield, then sleep: an idle thread must not burn
        // the core a computing rank needs.
        if (++idle < spin_before_yield() * 4) continue;
        if (idle < 2000) {
            sched_yield();
            continue;
        }
        struct timespec ts{0, 50 * 1000};
        nanosleep(&ts, nullptr);
    }
}

}  // namespace xrdma::mpi
