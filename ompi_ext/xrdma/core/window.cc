#include "window.h"

#include "bundle.h"

#include "xrdma_common/config.h"
#include "errors.h"
#include "xrdma_common/log.h"
#include "op_view.h"
#include "runtime.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <sched.h>
#include <unordered_map>
#include <unistd.h>

namespace xrdma::mpi {

Window::~Window() = default;

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
// is to fail (tests of that error path): the window has no X-operations in
// this process, as after a real failure, and its X-ops from other
// processes are refused here with the reason.
// (The knob read once: a lookup and parse per window was half of what
// XRDMA did per window that never sees an X-op.)
bool injected_setup_failure()
{
    static const unsigned long long fail_at = config_get_ull("XRDMA_DEBUG_WINDOW_FAIL");
    static unsigned long long setups = 0;
    return ++setups == fail_at;
}

// Windows that have no X-operations in this process, by id, with the
// reason an X-op that arrives for one is refused with.
std::unordered_map<uint32_t, std::string> g_refused;

}  // namespace

uint32_t g_window_hit_id = kNoWindow;
Window *g_window_hit = nullptr;

Window *window_by_id_slow(uint32_t id)
{
    Runtime &rt = Runtime::get();
    auto it = rt.by_id.find(id);
    if (it == rt.by_id.end()) return nullptr;
    if (!it->second->view) {
        g_window_hit_id = id;
        g_window_hit = it->second;
    }
    return it->second;
}

std::string window_refusal(uint32_t id)
{
    auto it = g_refused.find(id);
    return it == g_refused.end() ? std::string() : it->second;
}

int window_setup(MPI_Win win, MPI_Comm comm, WinKind kind, void *base, MPI_Aint bytes, MPI_Aint disp_unit,
                 MPI_Info info)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::recursive_mutex> guard(rt.mu);
    // A plain MPI call keeps its result: without XRDMA state the window
    // works as without XRDMA, and only X-ops on it report why.
    auto w = std::make_unique<Window>();
    w->win = win;
    PMPI_Comm_rank(comm, &w->rank);
    PMPI_Comm_size(comm, &w->size);
    w->kind = kind;
    // (A dynamic window has no base and its displacements are addresses:
    // the target side relies on base nullptr and unit 1 there, op_target.cc.)
    const bool dynamic = kind == WinKind::dynamic;
    w->base = dynamic ? nullptr : static_cast<char *>(base);
    w->bytes = dynamic ? 0 : bytes;
    w->disp_unit = dynamic ? 1 : int(disp_unit);
    Group *g = group_of(comm);  // (collective at the first window of its group only; starts the runtime)
    w->exec_auto = exec_auto_for(info, rt.exec_auto);
    w->group = g;
    w->view = g->view();
    w->world_ranks = g->identity;
    // Every process takes the next sequence number of the group, whatever
    // becomes of the window here: the same id everywhere.
    w->id = window_id(g->gid, g->next_seq++);
    w->unusable = g->unusable;
    if (w->unusable.empty() && injected_setup_failure()) {
        const std::string knob = config_get("XRDMA_DEBUG_WINDOW_FAIL");
        w->unusable = "set-up failed on purpose in rank " + std::to_string(w->rank) +
                      " of the window (XRDMA_DEBUG_WINDOW_FAIL=" + knob + ")";
    }
    if (w->unusable.empty() && disp_unit > INT_MAX)  // (MPI_Win_allocate_c and co. take any MPI_Aint)
        w->unusable = "its disp_unit " + std::to_string(disp_unit) + " in rank " + std::to_string(w->rank) +
                      " is larger than XRDMA takes (" + std::to_string(INT_MAX) + ")";
    if (w->unusable.empty() && rt.by_id.count(w->id))
        w->unusable = "more than " + std::to_string(kSeqMask + 1) +
                      " windows of one communicator's processes alive at once";
    Window *made = w.get();
    if (w->unusable.empty())
        rt.by_id[w->id] = made;
    else
        g_refused[w->id] = w->unusable;
    rt.windows[win] = std::move(w);
    rt.windows_changed();
    if (made->unusable.empty() && rt.started()) {
        // X-ops that arrived before the window existed here, and node
        // peers' questions about it, are answered now.
        ucx_ifunc_resume(rt.ctx);
        node_local_window_ready(made);
    }
    return MPI_SUCCESS;
}

ucp_ep_h Window::connect(int t)
{
    return eps[size_t(t)] = Runtime::get().peer_ep(group->world[size_t(t)]);
}

bool origin_ready(Window *w, int *err)
{
    if (!w->unusable.empty()) {
        *err = MPI_ERR_WIN;
        return false;
    }
    if (w->origin()) return true;
    const size_t n = size_t(w->size);
    w->eps.assign(n, nullptr);
    w->unsynced.assign(n, 0);
    w->peer_failed.assign(n, 0);
    w->error.assign(n, MPI_SUCCESS);
    w->pending.assign(n, 0);  // (last: origin() from here on)
    // The window's first X-op: its flushes may skip the component's
    // (osc_flush.h); windows without X-ops keep its table.
    if (!w->osc_checked) {
        w->osc_checked = true;
        w->osc = osc_flush_wrap(w->win, w->size);
    }
    // Node peers' memory this process may run code on (node_local.h):
    // asked, and awaited, before the first X-op decides where it runs.
    if (!w->node_checked) {
        w->node_checked = true;
        w->node.reset(NodeLocal::ask(w));
    }
    if (w->node) w->node->wait();
    return true;
}

int window_complete(MPI_Win win, int target)
{
    Runtime &rt = Runtime::get();
    RuntimeLock m(rt);
    std::unique_lock<RuntimeLock> lock(m);
    bundle_synced();  // (before the acknowledgements are asked for)
    Window *w = window_find(win);
    if (!w || !w->origin()) return MPI_SUCCESS;
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
                ucx_ifunc_request_acks(rt.ctx, w->eps[size_t(t)]);  // (a failed peer fails its X-ops)
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

int window_release(MPI_Win win)
{
    const int err = window_complete(win, -1);
    Runtime &rt = Runtime::get();
    std::lock_guard<std::recursive_mutex> guard(rt.mu);
    // The component's own table back while its module still exists.
    if (Window *w = window_find(win)) w->osc.reset();
    return err;
}

void window_forget(MPI_Win win)
{
    Runtime &rt = Runtime::get();
    std::lock_guard<std::recursive_mutex> guard(rt.mu);
    auto it = rt.windows.find(win);
    if (it == rt.windows.end()) return;
    Window *w = it->second.get();
    auto id = rt.by_id.find(w->id);
    if (id != rt.by_id.end() && id->second == w) rt.by_id.erase(id);
    if (!w->unusable.empty()) g_refused.erase(w->id);
    if (g_bundle_alone == w) g_bundle_alone = nullptr;
    rt.windows.erase(it);  // ~Window releases it
    rt.windows_changed();
}

namespace {
// (Out of line: a window's node peers are asked once.)
__attribute__((noinline)) int runs_here_unknown(Window *w, int r)
{
    if (r >= 0 && !w->node_checked && r != w->rank && w->exec_auto) node_local_want(w);  // (this one travels as a message)
    return 0;
}
}  // namespace

int window_runs_here(void *, int peer)
{
    OpView *v = t_running.view;
    if (!v) return 0;
    Window *w = v->w;
    const int r = w->rank_of(peer);
    if (__builtin_expect(r >= 0 && w->runs_here(r), 1)) return 1;
    return runs_here_unknown(w, r);
}

ucx_ifunc_h window_register_ifunc(Window *w, MPIX_Ifunc f, int *err)
{
    Runtime &rt = Runtime::get();
    if (!f->handle) {
        ucx_ifunc_h h = nullptr;
        ucx_ifunc_status_t st = ucx_ifunc_register_mem(rt.ctx, f->image.data(), f->image.size(),
                                                       f->entry.c_str(), 0, &h);
        if (st != UCX_IFUNC_OK) {
            *err = error_code(error_class_of(st), std::string("ifunc '") + f->entry +
                                                      "' cannot be used: " + ucx_ifunc_status_string(st));
            return nullptr;
        }
        f->handle = h;
        f->stays = ucx_ifunc_stays(h) == UCX_IFUNC_OK;
        std::vector<uint8_t>().swap(f->image);  // (the plugin keeps the bytes: one copy per process)
        rt.ifuncs.insert(f);
    }
    w->last_ifunc = f;
    w->last_handle = f->handle;
    w->last_stays = f->stays;
    return f->handle;
}

void windows_forget_ifunc(MPIX_Ifunc f)
{
    Runtime &rt = Runtime::get();
    bundle_flush_if_any();  // (it may hold a handle of f)
    for (auto &kv : rt.windows)
        if (kv.second->last_ifunc == f) kv.second->last_ifunc = nullptr;
    if (!f->handle) return;
    ucx_ifunc_deregister(f->handle);
    f->handle = nullptr;
    rt.ifuncs.erase(f);
}

}  // namespace xrdma::mpi
