// XRDMA state of one MPI window: a view of the process's one plugin context.
// At creation it costs a table entry and an id (group.h: the same id in
// every process, so X-ops name it without a message); what an origin
// needs per target (endpoints, X-ops in flight, errors) is made at its first
// X-operation, and node peers' memory is mapped when it is first used.
// Its life: window_setup() at creation (no message), origin_ready() at its
// first X-op, window_complete() at each synchronisation call,
// window_release() before MPI_Win_free and window_forget() after it.
#pragma once

#include "core_api.h"
#include "group.h"
#include "node_local.h"
#include "op_wire.h"
#include "osc_flush.h"
#include "runtime.h"

#include "xrdma_common/bytes.h"
#include "ucx_ifunc.h"
#include "xrdma_ifunc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct MPIX_Ifunc_s {
    std::vector<uint8_t> image;  // until it is registered with the plugin (then the plugin keeps the bytes)
    std::string entry;
    bool streams = false;  // XRDMA_STREAM: large Xput data is fetched by the target
    // Its plugin handle, registered at its first X-op (one per process,
    // whatever the number of windows), and whether its invocations end
    // where they run (ucx_ifunc_stays(): its Xinvokes may be bundled).
    ucx_ifunc_h handle = nullptr;
    bool stays = false;
};
// The handle programs know as MPIX_Ifunc (mpiext_xrdma_c.h).
typedef MPIX_Ifunc_s *MPIX_Ifunc;

namespace xrdma::mpi {

enum class WinKind { created, allocated, shared, dynamic };

// X-ops to one target since its last synchronisation call before the next
// may be sent with UCX_IFUNC_INVOKE_LAZY_ACK: a lone X-op and its flush keep
// the round trip of an acknowledgement sent at once (asking costs one more
// message, whose arrival the answer then waits for: 8 B Xinvoke + flush
// 0.45 vs 0.32 us over shared memory, 19.9 vs 11.1 us over TCP), a stream
// pays one acknowledgement per batch.
constexpr uint32_t kLazyAckAfter = 8;

// One owner (Runtime::windows): the destructor releases what the window
// holds, so no error path can leak it.
struct Window {
    Window() = default;
    Window(const Window &) = delete;
    Window &operator=(const Window &) = delete;
    ~Window();

    MPI_Win win;
    uint32_t id = 0;        // (group.h) the same in every process of the window
    Group *group = nullptr;
    const ucx_ifunc_view_t *view = nullptr;  // what functions see of ranks: its group's (nullptr: MPI_COMM_WORLD's)
    bool world_ranks = false;  // its ranks are MPI_COMM_WORLD's (no view)
    // Its rank of world rank @p peer (a peer's, in the plugin's hooks), or -1.
    int rank_of(int peer) const { return world_ranks ? (peer < size ? peer : -1) : group->rank_of_world(peer); }
    int rank, size;
    WinKind kind;
    char *base;
    MPI_Aint bytes;
    int disp_unit;
    std::vector<std::pair<uintptr_t, size_t>> attached;  // dynamic windows
    // Why X-operations on it fail ("" if they do not): its group's reason,
    // or its own (XRDMA_DEBUG_WINDOW_FAIL).
    std::string unusable;

    // Origin side, made at its first X-op (origin_ready()), by window rank.
    std::vector<ucp_ep_h> eps;       // the target's process (Runtime::peer_ep(), on first use)
    std::vector<uint64_t> pending;   // X-ops in flight
    // X-ops without a request sent since the last synchronisation call
    // (window_complete()); those after the first few went with
    // UCX_IFUNC_INVOKE_LAZY_ACK (ops.cc), and that call asks for their
    // acknowledgements.
    std::vector<uint32_t> unsynced;
    // Targets whose endpoint failed (Runtime::ep_failed): their Xinvokes
    // are not bundled, so that the call itself reports MPIX_ERR_PEER.
    std::vector<uint8_t> peer_failed;
    std::vector<int> error;          // first error to report
    bool origin() const { return !pending.empty(); }
    // The function window_ifunc() returned last here (a stream of X-ops
    // names one): its handle and whether it stays.
    MPIX_Ifunc last_ifunc = nullptr;
    ucx_ifunc_h last_handle = nullptr;
    bool last_stays = false;
    // Node peers whose window memory may be mapped here (XRDMA_EXEC=auto,
    // MPI_Win_allocate(_shared) windows, node peers in the group); made at
    // the first X-op that could run here; nullptr: every X-op is a message.
    std::unique_ptr<NodeLocal> node;
    bool node_checked = false;  // its node peers were asked (NodeLocal::ask())
    bool node_wanted = false;   // to be asked from the next progress pass (node_local_want())
    std::vector<Block> dispatch_blocks;  // window_dispatch's scratch
    std::vector<xrdma_block_t> dispatch_at;  // xrdma_target_blocks()'s
    xrdma::Bytes forward_prefix;         // and for by-value forward prefixes
    xrdma::Bytes dispatch_reply;         // and for a plain Xget's reply gathered from several blocks
    xrdma::Bytes block_replies;          // and for the replies of a function run block by block

    // MPI_Win_flush without the component's flush when it has nothing to
    // complete (osc_flush.h), from the first X-op; nullptr: with it.
    OscFlushPtr osc;
    bool osc_checked = false;  // (asked at the first X-op only)

    // Whether code may run in this process on rank @p r's window memory.
    bool runs_here(int r) { return (r == rank && exec_auto) || (node && node->base_of(r)); }
    bool exec_auto;  // XRDMA_EXEC=auto (or info key xrdma_exec=auto) when it was created
    // The endpoint to target @p t (made on first use); nullptr: unreachable.
    ucp_ep_h ep(int t)
    {
        ucp_ep_h e = eps[size_t(t)];
        return __builtin_expect(e != nullptr, 1) ? e : connect(t);
    }
    ucp_ep_h connect(int t);
};

// Called right after MPI created the window (collective over @p comm only
// at the first window of @p comm's group, group.h). Info key "xrdma_exec"
// ("auto" or "target") overrides XRDMA_EXEC for it.
int window_setup(MPI_Win win, MPI_Comm comm, WinKind kind, void *base, MPI_Aint bytes,
                 MPI_Aint disp_unit, MPI_Info info);
// Complete every X-op this process has in flight on the window, before
// MPI_Win_free (MPI_SUCCESS or the first error they reported); its flushes
// go to the component again (osc_flush.h) while the component exists.
int window_release(MPI_Win win);
// The window with id @p id here, or nullptr (inline: the one found last,
// which a target's dispatch also tests first: a stream of X-ops names one).
// Only a window of MPI_COMM_WORLD's ranks is kept there (its dispatch needs
// no view); kNoWindow when none is.
constexpr uint32_t kNoWindow = ~0u;  // (no window id: its group would be the last, which kMaxGroups excludes)
extern uint32_t g_window_hit_id __attribute__((visibility("hidden")));
extern Window *g_window_hit __attribute__((visibility("hidden")));
Window *window_by_id_slow(uint32_t id);
inline Window *window_by_id(uint32_t id)
{
    if (__builtin_expect(id == g_window_hit_id, 1)) return g_window_hit;
    return window_by_id_slow(id);
}
// Why the window with id @p id has no X-operations in this process ("":
// it has, or it is not known here).
std::string window_refusal(uint32_t id);
// Forget the window, once MPI_Win_free has returned: every process of the
// window had entered it, so no X-op on it is in flight anywhere.
void window_forget(MPI_Win win);
// The window's state, or nullptr if XRDMA does not know it. Caller holds mu.
// (Inline: the window found last answers a stream of X-ops; else the
// table, window_lookup().)
Window *window_lookup(MPI_Win win);
inline Window *window_find(MPI_Win win)
{
    Runtime &rt = Runtime::get();
    if (rt.last_window && rt.last_win == win) return rt.last_window;
    return window_lookup(win);
}
// What an origin needs for X-ops on @p w (made at its first one): false if
// it cannot have any (Window::unusable says why).
bool origin_ready(Window *w, int *err);
// Progress until no X-op to @p target (-1: any) is in flight, then hand back
// (and clear) the first error they reported: MPI_SUCCESS or an error code.
int window_complete(MPI_Win win, int target);
// The plugin handle of @p f (registered on first use, by
// window_register_ifunc(); inline: the one returned last answers a stream).
ucx_ifunc_h window_register_ifunc(Window *w, MPIX_Ifunc f, int *err);
inline ucx_ifunc_h window_ifunc(Window *w, MPIX_Ifunc f, int *err)
{
    if (f && f == w->last_ifunc) return w->last_handle;
    return window_register_ifunc(w, f, err);
}
// Forget @p f (MPIX_Ifunc_free): its handle is deregistered.
void windows_forget_ifunc(MPIX_Ifunc f);

// The plugin's runs_here hook: Window::runs_here() of the running X-op's
// window for world rank @p peer.
int window_runs_here(void *, int peer);
// The plugin's continue_at hook: the view of the running X-operation moves
// to world rank @p peer's window (mapped here), under its lock.
int window_continue_at(void *, struct xrdma_ctx *x, int peer);
// Add the window accessors injected code calls (xrdma_target() ...) to the
// plugin's runtime API (ucx_ifunc_register_runtime()).
ucx_ifunc_status_t register_window_accessors();
// Target side: the dispatch hook every X-op runs through; it finds the
// window by the id in the X-op's header.
int window_dispatch(void *, struct xrdma_ctx *x,
                    int (*entry)(struct xrdma_ctx *, const void *, size_t),
                    const void *payload, size_t payload_size);

}  // namespace xrdma::mpi
