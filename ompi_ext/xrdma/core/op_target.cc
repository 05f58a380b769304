// Target side of an X-operation: find the region the origin named, check it
// lies in this rank's window memory, run the ifunc on it, and for Xget return
// the region when the ifunc did not reply itself. Also the accessors injected
// code calls (xrdma_target, xrdma_target_blocks, xrdma_incoming,
// xrdma_win_base), which the plugin learns of through
// ucx_ifunc_register_runtime(); they find the running operation's view in
// this layer's thread-local t_running, without a call into the plugin (this
// runs on every hop: issue 14).
#include "datatype.h"
#include "op_view.h"
#include "op_wire.h"
#include "stream.h"
#include "window.h"
#include "xrdma_ifunc.h"
#include "xrdma_mpi.h"

#include <cstring>
#include <string>

namespace xrdma::mpi {

namespace {

// Whether [p, p+len) lies inside the window memory at [base, base+bytes)
// (the attached regions of a dynamic window).
bool in_window(const Window *w, const char *base, size_t bytes, const char *p, uint64_t len)
{
    auto inside = [&](uintptr_t lo, size_t n) {
        uintptr_t a = reinterpret_cast<uintptr_t>(p);
        return a >= lo && len <= n && a - lo <= n - len;
    };
    if (w->kind != WinKind::dynamic) return inside(reinterpret_cast<uintptr_t>(base), bytes);
    for (const auto &r : w->attached)
        if (inside(r.first, r.second)) return true;
    return false;
}

int fail(xrdma_ctx *x, ucx_ifunc_status_t st, const std::string &msg)
{
    ucx_ifunc_ctx_fail(x, st, msg.c_str());
    return -1;
}

// bind()'s errors (out of line: the hot path stays small).
__attribute__((noinline, cold)) int not_mapped(xrdma_ctx *x, const Window *w, int exec)
{
    return fail(x, UCX_IFUNC_ERR_NO_ROUTE,
                "rank " + std::to_string(exec) + "'s window is not mapped in rank " + std::to_string(w->rank));
}
__attribute__((noinline, cold)) int outside(xrdma_ctx *x, const OpView &v, int exec)
{
    return fail(x, UCX_IFUNC_ERR_INVALID_PARAM,
                "target_disp " + std::to_string(v.disp) + " with its datatype lies outside the window" +
                    (exec != v.w->rank ? " of rank " + std::to_string(exec) : std::string()));
}

// Whether the operation's blocks lie inside rank @p exec's window memory
// [base, base+bytes) at @p region (out of line: Xinvoke and count 0 have
// none); -1 after failing @p x if not.
__attribute__((noinline)) int check_blocks(xrdma_ctx *x, const OpView &v, int exec, const char *base, size_t bytes,
                                           const char *region)
{
    for (const Block &b : v.blocks)
        if (b.offset < 0 || !in_window(v.w, base, bytes, region + b.offset, b.len)) return outside(x, v, exec);
    return 0;
}

// Point @p v at rank @p exec's window memory, [base, base+bytes) with
// @p disp_unit, where the function runs: checks that the operation's blocks
// lie inside it and takes its @p lock (one function at a time per target,
// wherever it runs).
__attribute__((always_inline)) inline int bind_at(xrdma_ctx *x, OpView &v, int exec, char *base, size_t bytes,
                                                  int disp_unit, NodeLock *lock)
{
    char *region =
        v.w->kind == WinKind::dynamic ? reinterpret_cast<char *>(v.disp) : base + v.disp * int64_t(disp_unit);
    if (!v.blocks.empty() && check_blocks(x, v, exec, base, bytes, region) != 0) return -1;
    v.base = base;
    v.bytes = bytes;
    v.region = region;
    v.lock.switch_to(lock);
    return 0;
}

// bind_at() @p exec's window: this rank's (inline: every X-op that arrives),
// or a node peer's mapped here (node-local execution).
__attribute__((always_inline)) inline int bind(xrdma_ctx *x, OpView &v, int exec)
{
    Window *w = v.w;
    if (__builtin_expect(exec == w->rank, 1))
        return bind_at(x, v, exec, w->base, size_t(w->bytes), w->disp_unit,
                       w->node ? w->node->lock_of(exec) : nullptr);
    const PeerWindow *p = w->node ? w->node->mapped(exec) : nullptr;
    if (!p) return not_mapped(x, w, exec);
    return bind_at(x, v, exec, p->base, size_t(p->bytes), p->disp_unit, p->lock);
}

// The incoming field of an operation with flags (out of line: most have
// none): still at the origin (streamed; or an Xget's reply buffer), or a
// reference to the origin's memory in this process.
__attribute__((noinline)) int incoming_flagged(xrdma_ctx *x, OpView &view, const OpHdr &h, const uint8_t *field)
{
    if (h.flags & (kIncomingStream | kReplyStream)) {
        // Fetched when the function asks for it (or, an Xget's reply:
        // written there).
        std::string why;
        const bool reply = h.flags & kReplyStream;
        if ((h.flags & kIncomingByRef) || (h.flags & kIncomingStream && reply) || reply != (h.op == XRDMA_OP_GET) ||
            !stream_view(view, xrdma_origin(x), field, h.incoming_len, reply, &why))
            return fail(x, UCX_IFUNC_ERR_PROTOCOL, "malformed X-operation: " + why);
        if (!view.streamed()) {
            view.incoming = field;
            view.incoming_len = h.incoming_len;
        }
        return 0;
    }
    if (h.flags & kIncomingByRef) {
        // Only from this process's own MPI layer (node-local execution).
        if (!ucx_ifunc_ctx_local(x) || h.incoming_len != sizeof(IncomingRef))
            return fail(x, UCX_IFUNC_ERR_PROTOCOL, "X-operation refers to memory of another process");
        IncomingRef ref;
        memcpy(&ref, field, sizeof(ref));
        view.incoming = reinterpret_cast<const void *>(uintptr_t(ref.addr));
        view.incoming_len = size_t(ref.len);
        return 0;
    }
    view.incoming = field;  // (flags this layer does not set: ignored, as before)
    view.incoming_len = h.incoming_len;
    return 0;
}

// A plain Xget whose function did not reply: the target region goes back
// (MPI_Get).
__attribute__((noinline)) void reply_region(xrdma_ctx *x, Window *w, const BlockSpan &blocks, char *region)
{
    if (blocks.size() <= 1) {  // straight from the window
        xrdma_reply(x, blocks.empty() ? nullptr : region + blocks[0].offset, blocks.empty() ? 0 : blocks[0].len);
        return;
    }
    // Gathered into the window's scratch buffer (no allocation per X-op once
    // it is large enough).
    xrdma::Bytes &out = w->dispatch_reply;
    out.resize(size_t(blocks_bytes(blocks.data, blocks.n)));
    uint8_t *d = out.data();
    for (const Block &b : blocks) {
        memcpy(d, region + b.offset, size_t(b.len));
        d += b.len;
    }
    xrdma_reply(x, out.data(), out.size());
}

// A forward of an operation whose incoming data is a reference may leave
// the process: it carries the data itself (a reply needs no copy).
__attribute__((noinline)) void forward_by_value(xrdma_ctx *x, Window *w, const OpHdr &h, const uint8_t *blocks,
                                                const OpView &view)
{
    const uint64_t blocks_len = uint64_t(h.nblocks) * sizeof(Block);
    xrdma::Bytes &pre = w->forward_prefix;
    OpHdr fh = h;
    fh.flags &= uint8_t(~kIncomingByRef);
    fh.incoming_len = uint32_t(view.incoming_len);
    pre.resize(sizeof(fh) + blocks_len + view.incoming_len);
    memcpy(pre.data(), &fh, sizeof(fh));
    memcpy(pre.data() + sizeof(fh), blocks, blocks_len);
    if (view.incoming_len) memcpy(pre.data() + sizeof(fh) + blocks_len, view.incoming, view.incoming_len);
    ucx_ifunc_ctx_replace_forward_prefix(x, pre.data(), pre.size());
}

}  // namespace

__thread Running t_running __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr};

int window_continue_at(void *window, xrdma_ctx *x, int rank)
{
    OpView *v = view_of(x);
    if (!v || v->w != window) return fail(x, UCX_IFUNC_ERR_PROTOCOL, "no X-operation to continue");
    if (rank != v->w->rank && !v->w->runs_here(rank)) return 1;  // a message
    return bind(x, *v, rank);
}

int window_dispatch(void *window, xrdma_ctx *x, int (*entry)(xrdma_ctx *, const void *, size_t),
                    const void *payload, size_t size)
{
    auto *w = static_cast<Window *>(window);
    const auto *p = static_cast<const uint8_t *>(payload);
    OpHdr h;
    if (size < sizeof(h)) return fail(x, UCX_IFUNC_ERR_PROTOCOL, "X-operation without its header");
    memcpy(&h, p, sizeof(h));
    uint64_t blocks_len = uint64_t(h.nblocks) * sizeof(Block);
    if (h.magic != kOpMagic || h.nblocks > kMaxBlocks || sizeof(h) + blocks_len + h.incoming_len > size)
        return fail(x, UCX_IFUNC_ERR_PROTOCOL, "malformed X-operation header");
    const size_t prefix = sizeof(h) + blocks_len + h.incoming_len;
    const uint8_t *field = p + sizeof(h) + blocks_len;  // the incoming data

    OpView view(w, h.op, h.disp);
    if (h.nblocks) {
        // Copied before they are checked: the payload may lie where its
        // sender can still write (a ring slot). Under the plugin's
        // one-at-a-time dispatch: one scratch vector per window.
        std::vector<Block> &blocks = w->dispatch_blocks;
        blocks.resize(h.nblocks);
        memcpy(blocks.data(), p + sizeof(h), blocks_len);
        view.blocks = BlockSpan{blocks.data(), blocks.size()};
        view.at_region = nullptr;
        int64_t lo = 0, hi = 0;
        blocks_span(blocks.data(), blocks.size(), &lo, &hi);
        view.region_bytes = size_t(hi);
    }  // (no blocks: Xinvoke, count 0: an empty region)
    if (__builtin_expect(h.flags == 0, 1)) {
        view.incoming = field;
        view.incoming_len = h.incoming_len;
    } else if (incoming_flagged(x, view, h, field) != 0) {
        return -1;
    }
    if (bind(x, view, xrdma_rank(x)) != 0) return -1;
    ucx_ifunc_ctx_set_forward_prefix(x, prefix);
    // The function, and the forwards it makes to ranks whose windows are
    // mapped here (window_continue_at re-points the view at each). Its
    // frames lie below the view.
    // (One dispatch per thread at a time, the plugin's rule: nothing to
    // save and restore.)
    Running &running = t_running;
    running = Running{x, &view};
    int rc = entry(x, p + prefix, size - prefix);
    if (rc == 0) {
        if (view.push()) {
            if (stream_push_reply(x, view) != 0) rc = -1;
        } else if (view.op == XRDMA_OP_GET && !ucx_ifunc_ctx_answered(x)) {
            reply_region(x, w, view.blocks, view.region);
        }
        if (rc == 0 && (h.flags & kIncomingByRef) && ucx_ifunc_ctx_forwarded(x))
            forward_by_value(x, w, h, p + sizeof(h), view);
    }
    if (view.stream_used) stream_end(x);  // (after the reply: it may still write into the origin's buffer)
    running.view = nullptr;
    return rc;
}

}  // namespace xrdma::mpi

using xrdma::mpi::OpView;
using xrdma::mpi::WinKind;

namespace {
using xrdma::mpi::view_of;

// Store a size through the ifunc's pointer; false if it cannot be written
// (a fault inside a runtime call is not contained: the plugin checks).
bool copy_size(size_t *bytes, size_t n) { return !bytes || ucx_ifunc_copy_checked(bytes, &n, sizeof(n)) == 0; }

// Whether [p, p+n) lies in the live frames of the running entry above the
// accessor whose canonical frame address (its caller's stack pointer before
// the call: __builtin_dwarf_cfa() there) is @p cfa: mapped and writable, no
// probe needed (an output variable of the ifunc, the usual case).
inline bool in_entry_frames(const void *p, size_t n, uintptr_t cfa)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(p), hi = reinterpret_cast<uintptr_t>(xrdma::mpi::t_running.view);
    return a >= cfa && a < hi && hi - a >= n;  // (hi is 0 outside an entry; p nullptr lies below cfa)
}

// copy_size() without the plugin's probe where in_entry_frames().
__attribute__((always_inline)) inline bool store_size(size_t *bytes, size_t n, uintptr_t cfa)
{
    if (in_entry_frames(bytes, sizeof(n), cfa)) {
        memcpy(bytes, &n, sizeof(n));  // (an ifunc's pointer need not be aligned)
        return true;
    }
    return copy_size(bytes, n);
}
// The accessor's canonical frame address (a macro: evaluated in the accessor).
#define XRDMA_CFA uintptr_t(__builtin_dwarf_cfa())

// xrdma_win_base() but for its usual case (out of line).
__attribute__((noinline)) void *win_base_rest(OpView *v, size_t *bytes)
{
    if (!v || (v->w->kind == WinKind::dynamic && v->w->attached.empty())) {
        copy_size(bytes, 0);
        return nullptr;
    }
    if (v->w->kind == WinKind::dynamic) {
        const auto &first = v->w->attached.front();
        return copy_size(bytes, first.second) ? reinterpret_cast<void *>(first.first) : nullptr;
    }
    return copy_size(bytes, v->bytes) ? v->base : nullptr;
}
}  // namespace

extern "C" {

void *xrdma_target(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!store_size(bytes, v ? v->region_bytes : 0, XRDMA_CFA)) return nullptr;
    return v ? v->region : nullptr;
}

const void *xrdma_incoming(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!store_size(bytes, v ? v->incoming_len : 0, XRDMA_CFA)) return nullptr;
    if (v && v->streamed() && !v->incoming) return xrdma::mpi::stream_stage_all(x, *v);  // (a function that does not stream)
    return v ? v->incoming : nullptr;
}

const xrdma_block_t *xrdma_target_blocks(xrdma_ctx_t *x, size_t *count)
{
    OpView *v = view_of(x);
    const size_t n = v ? v->blocks.size() : 0;
    if (!store_size(count, n, XRDMA_CFA)) return nullptr;
    if (n == 0) return nullptr;
    std::vector<xrdma_block_t> &at = v->w->dispatch_at;
    if (v->at_region != v->region || at.size() != n) {
        at.resize(n);
        for (size_t i = 0; i < n; ++i) at[i] = xrdma_block_t{v->region + v->blocks[i].offset, size_t(v->blocks[i].len)};
        v->at_region = v->region;
    }
    return at.data();
}

void *xrdma_win_base(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    // The usual case (every chase hop): this rank's or a peer's static
    // window, the size stored into a variable of the ifunc.
    if (__builtin_expect(v && v->w->kind != WinKind::dynamic && in_entry_frames(bytes, sizeof(*bytes), XRDMA_CFA), 1)) {
        memcpy(bytes, &v->bytes, sizeof(*bytes));
        return v->base;
    }
    return win_base_rest(v, bytes);
}

}  // extern "C"

namespace xrdma::mpi {

ucx_ifunc_status_t register_window_accessors()
{
    static const ucx_ifunc_runtime_symbol_t accessors[] = {
        {"xrdma_target", reinterpret_cast<void *>(&xrdma_target)},
        {"xrdma_incoming", reinterpret_cast<void *>(&xrdma_incoming)},
        {"xrdma_win_base", reinterpret_cast<void *>(&xrdma_win_base)},
        {"xrdma_target_blocks", reinterpret_cast<void *>(&xrdma_target_blocks)},
        {"xrdma_stream", reinterpret_cast<void *>(&xrdma_stream)},
        {"xrdma_stream_reply", reinterpret_cast<void *>(&xrdma_stream_reply)},
    };
    return ucx_ifunc_register_runtime(accessors, sizeof(accessors) / sizeof(accessors[0]));
}

}  // namespace xrdma::mpi
