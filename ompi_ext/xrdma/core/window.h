// XRDMA state of one MPI window: its ifunc context (own AM ids on the shared
// worker), endpoints by window rank, window memory, and the X-operations in
// flight per target with the first error each has to report.
#pragma once

#include "mpix_xrdma.h"
#include "node_local.h"
#include "op_wire.h"
#include "osc_flush.h"
#include "runtime.h"

#include "xrdma_common/bytes.h"
#include "ucx_ifunc.h"
#include "xrdma_ifunc.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

struct MPIX_Ifunc_s {
    std::vector<uint8_t> image;
    std::string entry;
    bool streams = false;  // XRDMA_STREAM: large Xput data is fetched by the target
};

namespace xrdma::mpi {

enum class WinKind { created, allocated, shared, dynamic };

// X-ops to one target since its last synchronisation call before the next
// may be sent with UCX_IFUNC_INVOKE_LAZY_ACK: a lone X-op and its flush keep
// the round trip of an acknowledgement sent at once (asking costs one more
// message, whose arrival the answer then waits for: 8 B Xinvoke + flush
// 0.45 vs 0.32 us over shared memory, 19.9 vs 11.1 us over TCP), a stream
// pays one acknowledgement per batch.
constexpr uint32_t kLazyAckAfter = 8;

// One owner (Runtime::windows, or window_setup() until it succeeds): the
// destructor releases what the window holds, so no error path can leak it.
struct Window {
    Window() = default;
    Window(const Window &) = delete;
    Window &operator=(const Window &) = delete;
    // Deregisters its ifuncs, destroys its ifunc context (whose dispatch
    // argument is this window), frees its slot and releases its communicator.
    ~Window();

    MPI_Win win;
    MPI_Comm comm = MPI_COMM_NULL;  // shared dup of the window's communicator
    int rank, size;
    WinKind kind;
    char *base;
    MPI_Aint bytes;
    int disp_unit;
    std::vector<std::pair<uintptr_t, size_t>> attached;  // dynamic windows
    ucx_ifunc_context_h context = nullptr;  // the plugin context of its slot
    int slot = -1;  // the slot (AM ids) it holds in Runtime::slots; -1: none
    std::vector<ucp_ep_h> eps;       // by window rank
    std::vector<uint64_t> pending;   // X-ops in flight, by target
    // X-ops without a request sent since the last synchronisation call
    // (window_complete()), by target; those after the first few went with
    // UCX_IFUNC_INVOKE_LAZY_ACK (ops.cc), and that call asks for their
    // acknowledgements.
    std::vector<uint32_t> unsynced;
    // Targets whose endpoint failed (Runtime::ep_failed): their Xinvokes
    // are not bundled, so that the call itself reports MPIX_ERR_PEER.
    std::vector<uint8_t> peer_failed;
    std::vector<int> error;          // first error to report, by target
    std::unordered_map<MPIX_Ifunc, ucx_ifunc_h> registered;
    // The entry of registered window_ifunc() returned last (a stream of
    // X-ops names one function): forgotten with the entry.
    MPIX_Ifunc last_ifunc = MPIX_IFUNC_NULL;
    ucx_ifunc_h last_handle = nullptr;
    bool last_stays = false;  // ucx_ifunc_stays(last_handle): its Xinvokes may be bundled (bundle.h)
    // Node peers whose window memory is mapped here (XRDMA_EXEC=auto,
    // MPI_Win_allocate(_shared) windows); nullptr: every X-op is a message.
    std::unique_ptr<NodeLocal> node;
    // node->lock_of(rank), read once at set-up: every X-op that arrives
    // takes it (nullptr: no node peer runs code on this window).
    NodeLock *own_lock = nullptr;
    std::vector<Block> dispatch_blocks;  // window_dispatch's scratch
    std::vector<xrdma_block_t> dispatch_at;  // xrdma_target_blocks()'s
    xrdma::Bytes forward_prefix;         // and for by-value forward prefixes
    xrdma::Bytes dispatch_reply;         // and for a plain Xget's reply gathered from several blocks

    // MPI_Win_flush without the component's flush when it has nothing to
    // complete (osc_flush.h), from the first X-op; nullptr: with it.
    OscFlushPtr osc;
    bool osc_checked = false;  // (asked at the first X-op only)

    // Whether code may run in this process on rank @p r's window memory.
    bool runs_here(int r) { return (r == rank && exec_auto) || (node && node->base_of(r)); }
    bool exec_auto;  // XRDMA_EXEC=auto (or info key xrdma_exec=auto) when it was created
};

// Called right after the window was created (collective over @p comm).
// Info key "xrdma_exec" ("auto" or "target") overrides XRDMA_EXEC for it.
int window_setup(MPI_Win win, MPI_Comm comm, WinKind kind, void *base, MPI_Aint bytes,
                 int disp_unit, MPI_Info info);
// Complete every X-op and release the window's XRDMA state (collective).
int window_teardown(MPI_Win win);
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
// Why XRDMA has no state for @p win although MPI created it ("" if it has,
// or if XRDMA never saw the window). Caller holds mu.
std::string window_unavailable(MPI_Win win);
// Progress until no X-op to @p target (-1: any) is in flight, then hand back
// (and clear) the first error they reported: MPI_SUCCESS or an error code.
int window_complete(MPI_Win win, int target);
// The plugin handle of @p f in window @p w (registered on first use, by
// window_register_ifunc(); inline: the one returned last answers a stream).
ucx_ifunc_h window_register_ifunc(Window *w, MPIX_Ifunc f, int *err);
inline ucx_ifunc_h window_ifunc(Window *w, MPIX_Ifunc f, int *err)
{
    if (f && f == w->last_ifunc) return w->last_handle;
    return window_register_ifunc(w, f, err);
}
// Forget @p f in every window (MPIX_Ifunc_free).
void windows_forget_ifunc(MPIX_Ifunc f);

// The plugin's runs_here hook: Window::runs_here().
int window_runs_here(void *window, int rank);
// The plugin's continue_at hook: the view of the running X-operation moves
// to @p rank's window (mapped here), under its lock.
int window_continue_at(void *window, struct xrdma_ctx *x, int rank);
// Add the window accessors injected code calls (xrdma_target() ...) to the
// plugin's runtime API (ucx_ifunc_register_runtime()).
ucx_ifunc_status_t register_window_accessors();
// Target side: the dispatch hook the window's context runs entries through.
int window_dispatch(void *window, struct xrdma_ctx *x,
                    int (*entry)(struct xrdma_ctx *, const void *, size_t),
                    const void *payload, size_t payload_size);

}  // namespace xrdma::mpi
