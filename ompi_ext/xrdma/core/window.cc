#include "window.h"

#include "bundle.h"

#include "xrdma_common/config.h"
#include "errors.h"
#include "xrdma_common/log.h"
#include "runtime.h"

#include <algorithm>
#include <cstring>
#include <sched.h>
#include <unistd.h>

namespace xrdma::mpi {

namespace {

// The lowest window slot free at every rank of @p comm (-1 if none, or if
// @p usable is false at any rank). Only the words up to the highest slot in
// use anywhere travel: a few windows cost two small allreduces.
int agree_on_slot(Runtime &rt, MPI_Comm comm, bool usable)
{
    int mine[2] = {0, usable ? 0 : 1}, all_hi[2];  // {highest used slot + 1, any unusable}
    for (int i = kSlots - 1; i >= 0; --i)
        if (rt.slots[size_t(i)]) {
            mine[0] = i + 1;
            break;
        }
    PMPI_Allreduce(mine, all_hi, 2, MPI_INT, MPI_MAX, comm);
    if (all_hi[1]) return -1;
    int words = all_hi[0] / 64 + 1;
    std::vector<uint64_t> used(size_t(words), 0), all(size_t(words), 0);
    for (int i = 0; i < all_hi[0]; ++i)
        if (rt.slots[size_t(i)]) used[size_t(i / 64)] |= 1ull << (i % 64);
    PMPI_Allreduce(used.data(), all.data(), words, MPI_UINT64_T, MPI_BOR, comm);
    int limit = int(std::min<unsigned long long>(config_get_ull("XRDMA_MAX_WINDOWS"), kSlots));
    for (int i = 0; i < words * 64 && i < limit; ++i)
        if (!(all[size_t(i / 64)] & (1ull << (i % 64)))) return i;
    return -1;
}

// XRDMA's own communicators for window collectives, shared by the windows
// of congruent communicators (same group, same order). A dup per window
// slowed every collective of a plain program: with 300 windows, 300 extra
// communicators made MPI_Barrier 15x slower in Open MPI 4.1. Members of a
// group create and free windows on it collectively, so every member finds
// the same entry.
struct SharedComm {
    MPI_Comm comm;
    int users;
};
std::vector<SharedComm> g_comms;

MPI_Comm comm_acquire(MPI_Comm comm)
{
    for (SharedComm &c : g_comms) {
        int res;
        PMPI_Comm_compare(c.comm, comm, &res);
        if (res == MPI_IDENT || res == MPI_CONGRUENT) {
            c.users++;
            return c.comm;
        }
    }
    MPI_Comm dup;
    PMPI_Comm_dup(comm, &dup);
    g_comms.push_back(SharedComm{dup, 1});
    return dup;
}

void comm_release(MPI_Comm *comm)
{
    for (auto it = g_comms.begin(); it != g_comms.end(); ++it)
        if (it->comm == *comm) {
            if (--it->users == 0) {
                PMPI_Comm_free(&it->comm);
                g_comms.erase(it);
            }
            break;
        }
    *comm = MPI_COMM_NULL;
}

// Windows XRDMA could not set up, with the reason an X-op on them reports.
// Such a window is still a working MPI window: its creation succeeded.
std::unordered_map<MPI_Win, std::string> g_unavailable;

}  // namespace

Window::~Window()
{
    for (auto &kv : registered) ucx_ifunc_deregister(kv.second);
    if (context) ucx_ifunc_context_destroy(context);
    if (slot >= 0) Runtime::get().slots.reset(size_t(slot));
    if (comm != MPI_COMM_NULL) comm_release(&comm);
}

Window *window_lookup(MPI_Win win)
{
    Runtime &rt = Runtime::get();
    auto it = rt.windows.find(win);
    if (it == rt.windows.end()) return nullptr;
    rt.last_win = win;
    rt.last_window = it->second.get();
    return rt.last_window;
}

namespace {

// XRDMA_EXEC, or the window's info key "xrdma_exec" when it has one.
bool exec_auto_for(MPI_Info info, bool dflt)
{
    if (info == MPI_INFO_NULL) return dflt;
    char v[16] = {0};
    int found = 0;
    PMPI_Info_get(info, "xrdma_exec", int(sizeof(v)) - 1, v, &found);
    if (!found) return dflt;
    if (strcmp(v, "auto") == 0) return true;
    if (strcmp(v, "target") == 0) return false;
    XRDMA_WARN("info key xrdma_exec=%s is neither auto nor target: ignored", v);
    return dflt;
}

// XRDMA_DEBUG_WINDOW_FAIL=N: whether this set-up, the N-th of the process,
// is to fail once it holds a slot and a context (tests of that error path).
// It fails as a real failure would: every rank of the window learns it in
// the allreduce that follows, so that none goes on alone into the set-up's
// collectives (the knob may be set in some ranks only).
bool injected_setup_failure()
{
    static unsigned long long setups = 0;
    return ++setups == config_get_ull("XRDMA_DEBUG_WINDOW_FAIL");
}

}  // namespace

int window_setup(MPI_Win win, MPI_Comm comm, WinKind kind, void *base, MPI_Aint bytes, int disp_unit,
                 MPI_Info info)
{
    Runtime &rt = Runtime::get();
    bool started = rt.start() == MPI_SUCCESS;
    std::lock_guard<std::recursive_mutex> guard(rt.mu);
    // A plain MPI call keeps its result: without XRDMA state the window
    // works as without XRDMA, and only X-ops on it report why.
    auto unavailable = [&](const std::string &why) {
        g_unavailable[win] = why;
        return MPI_SUCCESS;
    };
    auto w = std::make_unique<Window>();
    w->win = win;
    w->comm = comm_acquire(comm);
    PMPI_Comm_rank(w->comm, &w->rank);
    PMPI_Comm_size(w->comm, &w->size);
    w->kind = kind;
    // (A dynamic window has no base and its displacements are addresses:
    // the target side relies on base nullptr and unit 1 there, op_target.cc.)
    const bool dynamic = kind == WinKind::dynamic;
    w->base = dynamic ? nullptr : static_cast<char *>(base);
    w->bytes = dynamic ? 0 : bytes;
    w->disp_unit = dynamic ? 1 : disp_unit;
    w->exec_auto = exec_auto_for(info, rt.exec_auto);
    // From here on every early return releases what w holds (~Window).
    const int slot = agree_on_slot(rt, w->comm, started);
    if (slot < 0)
        return unavailable(started ? "more than " + std::string(config_get("XRDMA_MAX_WINDOWS")) +
                                         " windows with X-operations alive at once"
                                   : "XRDMA could not start UCX in some rank of the window");
    ucx_ifunc_context_params_t cp{};
    cp.worker = rt.worker;
    cp.ucp_context = rt.ucp;
    cp.rank = w->rank;
    cp.size = w->size;
    cp.user_ptr = w.get();
    cp.dispatch = window_dispatch;
    cp.dispatch_arg = w.get();
    cp.runs_here = window_runs_here;
    cp.continue_at = window_continue_at;
    cp.am_id = uint16_t(kAmIdBase + 2 * slot);
    // Every rank of the window adds every other as a peer below, before any
    // sends (the allreduce after): warm invocations name their sender by rank.
    cp.peers_by_rank = 1;
    // Every rank learns whether all could create theirs: none goes on alone
    // into the collectives below.
    // (-1: a failure injected here, XRDMA_DEBUG_WINDOW_FAIL.)
    int ok = ucx_ifunc_context_create(&cp, &w->context) == UCX_IFUNC_OK, all_ok = 0;
    if (!ok) w->context = nullptr;
    if (ok && injected_setup_failure()) ok = -1;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w->comm);
    if (all_ok == 0 || ok == 0)
        return unavailable("the X-operation context could not be created in some rank of the window");
    rt.slots.set(size_t(slot));
    w->slot = slot;
    if (all_ok < 0) {
        const std::string knob = config_get("XRDMA_DEBUG_WINDOW_FAIL");
        return unavailable("set-up failed on purpose in " + std::string(ok < 0 ? "this rank" : "another rank") +
                           " of the window (XRDMA_DEBUG_WINDOW_FAIL" + (knob != "0" ? "=" + knob : "") + ")");
    }

    // Ranks per node against processing units (for the waiting policy).
    MPI_Comm node;
    PMPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local = 1;
    PMPI_Comm_size(node, &local);
    PMPI_Comm_free(&node);
    long pus = sysconf(_SC_NPROCESSORS_ONLN);
    if (pus > 0 && local > pus) rt.oversubscribed = true;
    // Oversubscribed: no spinning on the rings either, in any window's
    // context (progress runs through one of them).
    if (rt.oversubscribed) {
        ucx_ifunc_set_spin(w->context, 0);
        for (auto &kv : rt.windows) ucx_ifunc_set_spin(kv.second->context, 0);
    }

    // Everyone's handlers exist before anyone gets the addresses: no X-op
    // can arrive at a rank that is not ready for it. Host names decide where
    // peer failure detection is asked for.
    char host[64] = {0};
    gethostname(host, sizeof(host) - 1);
    std::vector<char> hosts(size_t(w->size) * sizeof(host));
    PMPI_Allgather(host, sizeof(host), MPI_CHAR, hosts.data(), sizeof(host), MPI_CHAR, w->comm);
    std::string mode = config_get("XRDMA_PEER_FAILURE");
    int len = int(rt.address.size());
    std::vector<int> lens(size_t(w->size)), displs(size_t(w->size));
    PMPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, w->comm);
    int total = 0;
    for (int i = 0; i < w->size; ++i) {
        displs[size_t(i)] = total;
        total += lens[size_t(i)];
    }
    std::vector<uint8_t> all(static_cast<size_t>(total));
    PMPI_Allgatherv(rt.address.data(), len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE,
                    w->comm);
    // Node peers' mapped memory (collective: before anything a rank may
    // fail at alone).
    if (kind == WinKind::allocated || kind == WinKind::shared) w->node.reset(NodeLocal::setup(w.get(), w->comm));
    if (w->node) w->own_lock = w->node->lock_of(w->rank);
    w->eps.resize(size_t(w->size));
    int unreached = -1;
    for (int i = 0; i < w->size && unreached < 0; ++i) {
        std::vector<uint8_t> a(all.begin() + displs[size_t(i)], all.begin() + displs[size_t(i)] + lens[size_t(i)]);
        bool remote = strncmp(&hosts[size_t(i) * sizeof(host)], host, sizeof(host)) != 0;
        bool detect = mode == "on" || (mode == "auto" && remote);
        w->eps[size_t(i)] = rt.ep_to(a, detect);
        if (w->eps[size_t(i)])
            ucx_ifunc_peer_add(w->context, i, w->eps[size_t(i)]);
        else
            unreached = i;
    }
    // Every rank knows every other as a peer before any X-op can reach it
    // (peers_by_rank), and none goes on alone if one could not.
    ok = unreached < 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w->comm);
    if (!all_ok)
        return unavailable(ok ? "some rank of the window has no UCX endpoint to another"
                              : "no UCX endpoint to rank " + std::to_string(unreached) + " of the window");
    w->pending.assign(size_t(w->size), 0);
    w->unsynced.assign(size_t(w->size), 0);
    w->peer_failed.assign(size_t(w->size), 0);
    w->error.assign(size_t(w->size), MPI_SUCCESS);
    rt.last_window = nullptr;
    rt.windows[win] = std::move(w);
    rt.windows_changed();
    return MPI_SUCCESS;
}

int window_complete(MPI_Win win, int target)
{
    Runtime &rt = Runtime::get();
    RuntimeLock m(rt);
    std::unique_lock<RuntimeLock> lock(m);
    bundle_synced();  // (before the acknowledgements are asked for)
    Window *w = window_find(win);
    if (!w) return MPI_SUCCESS;
    // The targets this call completes: one, or all.
    const int lo = target >= 0 ? target : 0, hi = target >= 0 ? target + 1 : w->size;
    auto busy = [&] {
        for (int t = lo; t < hi; ++t)
            if (w->pending[size_t(t)]) return true;
        return false;
    };
    // Answers the targets hold (X-ops sent with UCX_IFUNC_INVOKE_LAZY_ACK,
    // ops.cc): asked for once, behind the X-ops; again for those another
    // thread sent while this one let go of the lock (this wait includes
    // them: unasked, they would be answered only once 64 were held).
    const auto ask_acks = [&] {
        for (int t = lo; t < hi; ++t) {
            if (!w->unsynced[size_t(t)]) continue;
            if (w->unsynced[size_t(t)] > kLazyAckAfter && w->pending[size_t(t)])
                ucx_ifunc_request_acks(w->context, w->eps[size_t(t)]);  // (a failed peer fails its X-ops)
            w->unsynced[size_t(t)] = 0;
        }
    };
    ask_acks();
    // The first idle passes of a wait also watch the rings a moment
    // (ucx_ifunc_progress_wait()): a small X-op's answer comes within a
    // few. A longer wait goes back to plain passes, so that the loop still
    // yields (below) as soon as it did: with 2 hosts x 2 ranks on 2 cores,
    // where each rank's node counts 2, a chase took 2x as long when every
    // idle pass of its origin looked.
    constexpr unsigned kWaitPasses = 8;
    unsigned idle = 0;
    while (busy()) {
        if (rt.progress(idle < kWaitPasses)) {
            idle = 0;
        } else if (++idle >= rt.spin_before_yield()) {
            // Let other threads (and an oversubscribed target) run.
            lock.unlock();
            sched_yield();
            lock.lock();
            idle = 0;
            ask_acks();
        }
    }
    int err = MPI_SUCCESS;
    for (int t = lo; t < hi; ++t) {
        if (err == MPI_SUCCESS) err = w->error[size_t(t)];
        w->error[size_t(t)] = MPI_SUCCESS;
    }
    return err;
}

int window_teardown(MPI_Win win)
{
    Runtime &rt = Runtime::get();
    int err = window_complete(win, -1);
    Window *w;
    {
        std::lock_guard<std::recursive_mutex> guard(rt.mu);
        g_unavailable.erase(win);
        w = window_find(win);
        if (!w) return MPI_SUCCESS;
    }
    // Others may still run code here until they completed theirs; the barrier
    // progresses (Open MPI's progress engine calls us) while it waits.
    PMPI_Barrier(w->comm);
    std::lock_guard<std::recursive_mutex> guard(rt.mu);
    rt.last_window = nullptr;
    rt.windows_changed(true);
    rt.windows.erase(win);  // ~Window releases it
    rt.windows_changed();
    return err;
}

int window_runs_here(void *window, int rank) { return static_cast<Window *>(window)->runs_here(rank); }

std::string window_unavailable(MPI_Win win)
{
    auto it = g_unavailable.find(win);
    return it == g_unavailable.end() ? std::string() : it->second;
}

ucx_ifunc_h window_register_ifunc(Window *w, MPIX_Ifunc f, int *err)
{
    auto it = w->registered.find(f);
    if (it != w->registered.end()) {
        w->last_ifunc = f;
        w->last_handle = it->second;
        w->last_stays = ucx_ifunc_stays(it->second) == UCX_IFUNC_OK;
        return it->second;
    }
    ucx_ifunc_h h = nullptr;
    ucx_ifunc_status_t st = ucx_ifunc_register_mem(w->context, f->image.data(), f->image.size(),
                                                   f->entry.c_str(), 0, &h);
    if (st != UCX_IFUNC_OK) {
        *err = error_code(error_class_of(st), std::string("ifunc '") + f->entry +
                                                  "' cannot be used: " + ucx_ifunc_status_string(st));
        return nullptr;
    }
    w->registered.emplace(f, h);
    // The window's first X-op: its flushes may skip the component's
    // (osc_flush.h); windows without X-ops keep its table.
    if (!w->osc_checked) {
        w->osc_checked = true;
        w->osc = osc_flush_wrap(w->win, w->size);
    }
    w->last_ifunc = f;
    w->last_handle = h;
    w->last_stays = ucx_ifunc_stays(h) == UCX_IFUNC_OK;
    return h;
}

void windows_forget_ifunc(MPIX_Ifunc f)
{
    bundle_flush_if_any();  // (it may hold a handle of f)
    for (auto &kv : Runtime::get().windows) {
        auto it = kv.second->registered.find(f);
        if (it != kv.second->registered.end()) {
            ucx_ifunc_deregister(it->second);
            kv.second->registered.erase(it);
            if (kv.second->last_ifunc == f) kv.second->last_ifunc = MPIX_IFUNC_NULL;
        }
    }
}

}  // namespace xrdma::mpi
