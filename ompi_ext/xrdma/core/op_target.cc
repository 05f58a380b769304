// Target side of an X-operation: find the region the origin named, check it
// lies in this rank's window memory, run the ifunc on it, and for Xget return
// the region when the ifunc did not reply itself. Also the accessors injected
// code calls (xrdma_target, xrdma_target_blocks, xrdma_incoming,
// xrdma_win_base), which the plugin learns of through
// ucx_ifunc_register_runtime().
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

// Point @p v at rank @p exec's window memory, where the function runs: this
// rank's, or a node peer's mapped here (node-local execution). Checks that
// the operation's blocks lie inside it and takes its lock: one function at
// a time per target, wherever it runs.
int bind(xrdma_ctx *x, OpView &v, int exec)
{
    Window *w = v.w;
    char *base = w->base;
    size_t bytes = size_t(w->bytes);
    int disp_unit = w->disp_unit;
    NodeLock *lock = nullptr;
    if (exec == w->rank) {
        if (w->node) lock = w->node->lock_of(exec);
    } else {
        const PeerWindow *p = w->node ? w->node->mapped(exec) : nullptr;
        if (!p) return not_mapped(x, w, exec);
        base = p->base;
        bytes = size_t(p->bytes);
        disp_unit = p->disp_unit;
        lock = p->lock;
    }
    char *region = w->kind == WinKind::dynamic ? reinterpret_cast<char *>(v.disp) : base + v.disp * int64_t(disp_unit);
    for (const Block &b : *v.blocks)
        if (b.offset < 0 || !in_window(w, base, bytes, region + b.offset, b.len)) return outside(x, v, exec);
    v.base = base;
    v.bytes = bytes;
    v.region = region;
    v.lock.switch_to(lock);
    return 0;
}

}  // namespace

int window_continue_at(void *window, xrdma_ctx *x, int rank)
{
    auto *v = static_cast<OpView *>(ucx_ifunc_ctx_layer(x));
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
    // Under the plugin's one-at-a-time dispatch: one scratch vector per window.
    std::vector<Block> &blocks = w->dispatch_blocks;
    if (h.nblocks || !blocks.empty()) blocks.resize(h.nblocks);
    if (h.nblocks) memcpy(blocks.data(), p + sizeof(h), blocks_len);
    size_t prefix = sizeof(h) + blocks_len + h.incoming_len;

    OpView view(w, h.op, h.disp, &blocks, &w->dispatch_at);
    if (h.nblocks) {
        int64_t lo = 0, hi = 0;
        blocks_span(blocks.data(), blocks.size(), &lo, &hi);
        view.region_bytes = size_t(hi);
    }  // (no blocks: Xinvoke, count 0: an empty region)
    const void *incoming = p + sizeof(h) + blocks_len;
    size_t incoming_len = h.incoming_len;
    if (h.flags & (kIncomingStream | kReplyStream)) {
        // Still at the origin: fetched when the function asks for it (or,
        // an Xget's reply: written there).
        std::string why;
        const bool reply = h.flags & kReplyStream;
        if ((h.flags & kIncomingByRef) || (h.flags & kIncomingStream && reply) || reply != (h.op == XRDMA_OP_GET) ||
            !stream_view(view, xrdma_origin(x), p + sizeof(h) + blocks_len, h.incoming_len, reply, &why))
            return fail(x, UCX_IFUNC_ERR_PROTOCOL, "malformed X-operation: " + why);
    } else if (h.flags & kIncomingByRef) {
        // Only from this process's own MPI layer (node-local execution).
        if (!ucx_ifunc_ctx_local(x) || h.incoming_len != sizeof(IncomingRef))
            return fail(x, UCX_IFUNC_ERR_PROTOCOL, "X-operation refers to memory of another process");
        IncomingRef ref;
        memcpy(&ref, incoming, sizeof(ref));
        incoming = reinterpret_cast<const void *>(uintptr_t(ref.addr));
        incoming_len = size_t(ref.len);
    }
    if (!view.streamed()) {
        view.incoming = incoming;
        view.incoming_len = incoming_len;
    }
    if (bind(x, view, xrdma_rank(x)) != 0) return -1;
    ucx_ifunc_ctx_set_layer(x, &view);
    ucx_ifunc_ctx_set_forward_prefix(x, prefix);
    // The function, and the forwards it makes to ranks whose windows are
    // mapped here (window_continue_at re-points the view at each).
    int rc = entry(x, p + prefix, size - prefix);
    char *const region = view.region;
    if (rc == 0 && view.push()) {
        if (stream_push_reply(x, view) != 0) rc = -1;
    } else if (rc == 0 && h.op == XRDMA_OP_GET && !ucx_ifunc_ctx_answered(x)) {
        // No reply of its own: the target region goes back (MPI_Get).
        if (blocks.size() <= 1) {  // straight from the window
            xrdma_reply(x, blocks.empty() ? nullptr : region + blocks[0].offset, blocks.empty() ? 0 : blocks[0].len);
        } else {  // gathered into the window's scratch buffer (no allocation per X-op once it is large enough)
            xrdma::Bytes &out = w->dispatch_reply;
            out.resize(size_t(blocks_bytes(blocks)));
            uint8_t *d = out.data();
            for (const Block &b : blocks) {
                memcpy(d, region + b.offset, size_t(b.len));
                d += b.len;
            }
            xrdma_reply(x, out.data(), out.size());
        }
    }
    if (rc == 0 && (h.flags & kIncomingByRef) && ucx_ifunc_ctx_forwarded(x)) {
        // A forward may leave the process: it carries the data itself (a
        // reply needs no copy).
        xrdma::Bytes &pre = w->forward_prefix;
        OpHdr fh = h;
        fh.flags &= uint8_t(~kIncomingByRef);
        fh.incoming_len = uint32_t(incoming_len);
        pre.resize(sizeof(fh) + blocks_len + incoming_len);
        memcpy(pre.data(), &fh, sizeof(fh));
        memcpy(pre.data() + sizeof(fh), p + sizeof(h), blocks_len);
        if (incoming_len) memcpy(pre.data() + sizeof(fh) + blocks_len, incoming, incoming_len);
        ucx_ifunc_ctx_replace_forward_prefix(x, pre.data(), pre.size());
    }
    if (view.stream_used) stream_end(x);  // (after the reply: it may still write into the origin's buffer)
    ucx_ifunc_ctx_set_layer(x, nullptr);
    return rc;
}

}  // namespace xrdma::mpi

using xrdma::mpi::OpView;
using xrdma::mpi::WinKind;

namespace {
using xrdma::mpi::view_of;

// Store a size through the ifunc's pointer; false if it cannot be written
// (a fault inside a runtime call is not contained: check instead).
bool store_size(size_t *bytes, size_t n) { return !bytes || ucx_ifunc_copy_checked(bytes, &n, sizeof(n)) == 0; }
}  // namespace

extern "C" {

void *xrdma_target(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!store_size(bytes, v ? v->region_bytes : 0)) return nullptr;
    return v ? v->region : nullptr;
}

const void *xrdma_incoming(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!store_size(bytes, v ? v->incoming_len : 0)) return nullptr;
    if (v && v->streamed() && !v->incoming) return xrdma::mpi::stream_stage_all(x, *v);  // (a function that does not stream)
    return v ? v->incoming : nullptr;
}

const xrdma_block_t *xrdma_target_blocks(xrdma_ctx_t *x, size_t *count)
{
    OpView *v = view_of(x);
    size_t n = v ? v->blocks->size() : 0;
    if (count && ucx_ifunc_copy_checked(count, &n, sizeof(n)) != 0) return nullptr;
    if (n == 0) return nullptr;
    if (v->at_region != v->region || v->at->size() != n) {
        v->at->resize(n);
        for (size_t i = 0; i < n; ++i)
            (*v->at)[i] = xrdma_block_t{v->region + (*v->blocks)[i].offset, size_t((*v->blocks)[i].len)};
        v->at_region = v->region;
    }
    return v->at->data();
}

void *xrdma_win_base(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!v || (v->w->kind == WinKind::dynamic && v->w->attached.empty())) {
        store_size(bytes, 0);
        return nullptr;
    }
    if (v->w->kind == WinKind::dynamic) {
        const auto &first = v->w->attached.front();
        return store_size(bytes, first.second) ? reinterpret_cast<void *>(first.first) : nullptr;
    }
    return store_size(bytes, v->bytes) ? v->base : nullptr;  // one store through the ifunc's pointer
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
