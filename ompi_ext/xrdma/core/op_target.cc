// Target side of an X-operation: find the region the origin named, check it
// lies in this rank's window memory, run the ifunc on it, and for Xget return
// the region when the ifunc did not reply itself. Also the accessors injected
// code calls (xrdma_target, xrdma_target_blocks, xrdma_incoming,
// xrdma_win_base), which the plugin learns of through
// ucx_ifunc_register_runtime(); they find the running operation's view in
// this layer's thread-local t_running, without a call into the plugin: this
// runs on every hop, where a call into another library costs its jump and
// the code lines it touches (xrdma_common/hot.h).
#include "datatype.h"
#include "op_view.h"
#include "op_wire.h"
#include "stream.h"
#include "window.h"
#include "xrdma_ifunc.h"
#include "core_api.h"
#include "xrdma_common/hot.h"

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

// A malformed X-operation (out of line: the hot path stays small). It
// takes the dispatch hook's arguments where they are, so the hook moves
// none; noipa: GCC would drop the unused ones, and move the others.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa, cold))
#else
__attribute__((noinline, cold))
#endif
int refuse(void *, xrdma_ctx *x, int (*)(xrdma_ctx *, const void *, size_t), const void *, size_t, const char *why)
{
    return fail(x, UCX_IFUNC_ERR_PROTOCOL, why);
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

// What bind() reads of the view (the dispatch passes them from its
// registers, not from the view it just stored them in): its target_disp,
// whether it has blocks.
struct BindOf {
    int64_t disp;
    bool blocks;
};

// Point @p v at rank @p exec's window memory, [base, base+bytes) with
// @p disp_unit, where the function runs: checks that the operation's blocks
// lie inside it. (The caller takes that window's lock: one function at a
// time per target, wherever it runs.)
__attribute__((always_inline)) inline int bind_at(xrdma_ctx *x, OpView &v, BindOf o, int exec, char *base,
                                                  size_t bytes, int disp_unit)
{
    // (A dynamic window's base is nullptr and its unit 1, window_setup():
    // its region lies at the address target_disp.)
    char *region = reinterpret_cast<char *>(reinterpret_cast<uintptr_t>(base) + uint64_t(o.disp) * uint64_t(disp_unit));
    if (o.blocks && check_blocks(x, v, exec, base, bytes, region) != 0) return -1;
    v.base = base;
    v.bytes = bytes;
    v.region = region;
    return 0;
}

// bind_at() @p exec's window: this rank's (inline: every X-op that arrives),
// or a node peer's mapped here (node-local execution); @p lock: the lock
// of that window (nullptr: none needed).
__attribute__((always_inline)) inline int bind(xrdma_ctx *x, OpView &v, BindOf o, int exec, NodeLock **lock)
{
    Window *w = v.w;
    if (__builtin_expect(exec == w->rank, 1)) {
        *lock = g_own_lock;
        return bind_at(x, v, o, exec, w->base, size_t(w->bytes), w->disp_unit);
    }
    const PeerWindow *p = w->node ? w->node->mapped(exec) : nullptr;
    if (!p) return not_mapped(x, w, exec);
    *lock = p->lock;
    return bind_at(x, v, o, exec, p->base, size_t(p->bytes), p->disp_unit);
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
    pre.resize(kOpHdrMax + blocks_len + view.incoming_len);
    const size_t hl = op_hdr_write(pre.data(), fh, true);
    memcpy(pre.data() + hl, blocks, blocks_len);
    if (view.incoming_len) memcpy(pre.data() + hl + blocks_len, view.incoming, view.incoming_len);
    pre.resize(hl + blocks_len + view.incoming_len);
    ucx_ifunc_ctx_replace_forward_prefix(x, pre.data(), pre.size());
}

using Entry = int (*)(xrdma_ctx *, const void *, size_t);

// Whether the function of @p x sees a target datatype with holes block by
// block: it looks at the region (xrdma_target(), xrdma_incoming()) and does
// not ask for the blocks (xrdma_target_blocks()) nor streams (its handlers
// get each piece where it goes). Unknown imports keep the whole view.
bool by_block(xrdma_ctx *x)
{
    return ucx_ifunc_ctx_imports(x, "xrdma_target_blocks") == 0 && ucx_ifunc_ctx_imports(x, "xrdma_stream") == 0 &&
           ucx_ifunc_ctx_imports(x, "xrdma_stream_reply") == 0 &&
           (ucx_ifunc_ctx_imports(x, "xrdma_target") == 1 || ucx_ifunc_ctx_imports(x, "xrdma_incoming") == 1);
}

// The function of @p x, written for a contiguous region, on a target
// datatype with holes (xrdma_ifunc(3), "Target datatypes with holes"): one
// call per block, in datatype order, each seeing that block as its region
// and, when the incoming data is as long as the blocks, its slice of it;
// the calls' replies go back together, in order. Memory between the blocks
// is never handed to it: MPI_Put leaves it alone too. All calls run under
// the one hold of the target's lock the X-op has; the first that fails ends
// the X-op (the blocks before it were done). A call that forwards fails it.
__attribute__((noinline)) int run_by_block(xrdma_ctx *x, Entry entry, OpView &v, const uint8_t *args,
                                           size_t args_len)
{
    char *const region = v.region;
    const BlockSpan all = v.blocks;
    const auto *incoming = static_cast<const uint8_t *>(v.incoming);
    const size_t incoming_len = v.incoming_len;
    const bool slices = incoming_len == blocks_bytes(all.data, all.n);
    xrdma::Bytes &replies = v.w->block_replies;
    replies.clear();
    bool replied = false;
    size_t at = 0;
    int rc = 0;
    for (size_t i = 0; i < all.n; ++i) {
        const Block one{0, all[i].len};
        v.blocks = BlockSpan{&one, 1};
        v.region = region + all[i].offset;
        v.region_bytes = size_t(all[i].len);
        v.at_region = nullptr;
        if (slices) {
            v.incoming = incoming + at;
            v.incoming_len = size_t(all[i].len);
            at += size_t(all[i].len);
        }
        rc = entry(x, args, args_len);
        if (rc != 0) break;
        if (ucx_ifunc_ctx_forwarded(x)) {
            rc = fail(x, UCX_IFUNC_ERR_PROTOCOL,
                      "the function forwarded while it ran block by block on a target datatype with holes; a function "
                      "that forwards sees the whole layout with xrdma_target_blocks() (xrdma_ifunc(3))");
            break;
        }
        const void *d;
        size_t n;
        if (ucx_ifunc_ctx_reply(x, &d, &n)) {
            replies.insert(replies.end(), static_cast<const uint8_t *>(d), static_cast<const uint8_t *>(d) + n);
            replied = true;
        }
        ucx_ifunc_ctx_next_call(x);  // (its reply is in replies)
    }
    v.blocks = all;
    v.region = region;
    v.incoming = incoming;
    v.incoming_len = incoming_len;
    v.at_region = nullptr;
    if (rc == 0 && replied && xrdma_reply(x, replies.data(), replies.size()) != 0)
        rc = fail(x, UCX_IFUNC_ERR_NO_MEMORY, "the replies of the blocks could not be joined");
    return rc;
}

// What run() is instantiated for: an operation on this rank's window
// without flags or blocks (Xinvoke, count 0: an empty region;
// dispatch_bare), or without flags (dispatch_general), or any (run_any:
// flags, another rank's window). Each instance has only its own paths, so
// the frame of the common ones stays small.
enum class Shape { bare, own, any };

// Run the operation of validated header @p h (copied out of @p p, the
// payload of @p size bytes) on rank @p exec's window memory.
template <Shape kShape>
__attribute__((always_inline)) inline int run(Window *w, xrdma_ctx *x, Entry entry, const uint8_t *p, size_t size,
                                              const OpHdr &h, int exec)
{
    constexpr bool kOwn = kShape != Shape::any;  // this rank's window, no flags
    const uint64_t blocks_len = kShape == Shape::bare ? 0 : uint64_t(h.nblocks) * sizeof(Block);
    const size_t hl = kShape == Shape::bare ? sizeof(OpWire) : h.wire_len;  // (bare: never extended)
    const size_t prefix = hl + blocks_len + h.incoming_len;
    const uint8_t *field = p + hl + blocks_len;  // the incoming data
    const uint8_t *args = p + prefix;
    const size_t args_len = size - prefix;
    if (kOwn) exec = w->rank;  // (the same: one value less to keep)

    OpView view(w, h.op, h.disp);
    if (kShape != Shape::bare && h.nblocks) {
        // Copied before they are checked: the payload may lie where its
        // sender can still write (a ring slot). Under the plugin's
        // one-at-a-time dispatch: one scratch vector per window.
        std::vector<Block> &blocks = w->dispatch_blocks;
        blocks.resize(h.nblocks);
        memcpy(blocks.data(), p + hl, blocks_len);
        view.blocks = BlockSpan{blocks.data(), blocks.size()};
        view.at_region = nullptr;
        int64_t lo = 0, hi = 0;
        blocks_span(blocks.data(), blocks.size(), &lo, &hi);
        view.region_bytes = size_t(hi);
        view.holes = blocks.size() > 1 || blocks[0].offset != 0;
    }
    if (kOwn || h.flags == 0) {
        view.incoming = field;
        view.incoming_len = h.incoming_len;
    } else if (incoming_flagged(x, view, h, field) != 0) {
        return -1;
    }
    NodeLock *lock = nullptr;  // (kOwn: exec is this rank, so bind() takes its own window's branch)
    if (bind(x, view, BindOf{h.disp, kShape != Shape::bare && h.nblocks != 0}, exec, &lock) != 0) return -1;
    view.lock.take(lock);
    ucx_ifunc_ctx_set_forward_prefix(x, prefix);
    // The function, and the forwards it makes to ranks whose windows are
    // mapped here (window_continue_at re-points the view at each). Its
    // frames lie below the view.
    // (One dispatch per thread at a time, the plugin's rule: nothing to
    // save and restore.)
    Running &running = t_running;
    running.x = x;
    running.view = &view;
    int rc = kShape != Shape::bare && __builtin_expect(view.holes, 0) && by_block(x)
                 ? run_by_block(x, entry, view, args, args_len)
                 : entry(x, args, args_len);
    if (rc == 0) {
        if (!kOwn && view.push()) {  // (only with kReplyStream)
            if (stream_push_reply(x, view) != 0) rc = -1;
        } else if (kShape != Shape::bare && view.op == XRDMA_OP_GET && !view.blocks.empty() &&
                   !ucx_ifunc_ctx_answered(x)) {
            // (An empty region unanswered: the plugin's own answer, success
            // without bytes, is that reply.)
            reply_region(x, w, view.blocks, view.region);
        }
        if (!kOwn && rc == 0 && (h.flags & kIncomingByRef) && ucx_ifunc_ctx_forwarded(x))
            forward_by_value(x, w, h, p + hl, view);
    }
    if (view.stream_used) stream_end(x);  // (after the reply: it may still write into the origin's buffer)
    running.view = nullptr;
    return rc;
}

__attribute__((noinline)) int run_any(Window *w, xrdma_ctx *x, Entry entry, const uint8_t *p, size_t size,
                                      const OpHdr &h, int exec)
{
    return run<Shape::any>(w, x, entry, p, size, h, exec);
}

// The header of the X-operation this thread dispatches, copied out of the
// payload once by window_dispatch(), checked there and read by the path it
// chose: the payload may lie where its sender can still write (a ring
// slot), and what is checked must be what is used. (One dispatch per
// thread at a time, the plugin's rule.)
__thread OpHdr t_header __attribute__((tls_model("initial-exec")));

// window_dispatch() of an operation with blocks or flags.
__attribute__((noinline)) int dispatch_general(Window *w, xrdma_ctx *x, Entry entry, const void *payload,
                                               size_t size)
{
    const OpHdr &h = t_header;
    const int exec = xrdma_rank(x);
    if (__builtin_expect(exec == w->rank && h.flags == 0, 1))
        return run<Shape::own>(w, x, entry, static_cast<const uint8_t *>(payload), size, h, exec);
    return run_any(w, x, entry, static_cast<const uint8_t *>(payload), size, h, exec);
}

// window_dispatch() of an operation without blocks or flags (Xinvoke,
// count 0: an empty region).
__attribute__((noinline)) XRDMA_HOT int dispatch_bare(Window *w, xrdma_ctx *x, Entry entry, const void *payload,
                                            size_t size)
{
    const OpHdr &h = t_header;  // (no blocks, no flags: window_dispatch() checked this copy)
    const int exec = xrdma_rank(x);
    if (__builtin_expect(exec != w->rank, 0))
        return run_any(w, x, entry, static_cast<const uint8_t *>(payload), size, h, exec);
    return run<Shape::bare>(w, x, entry, static_cast<const uint8_t *>(payload), size, h, exec);
}

// The next record of a bundle at @p p (before @p end): its X-op's bytes
// (*@p rec, *@p rec_len) and header (*@p h); false if malformed. A record
// is an Xinvoke without flags, blocks or incoming data.
inline bool bundle_record(const uint8_t *p, const uint8_t *end, const uint8_t **rec, size_t *rec_len, OpHdr *h,
                          uint32_t win)
{
    uint32_t len;
    if (size_t(end - p) < 4) return false;
    memcpy(&len, p, 4);
    if (len < sizeof(OpWire) || len > size_t(end - p) - 4) return false;
    if (op_hdr_read(p + 4, len, h) != sizeof(OpWire)) return false;  // (never extended)
    *rec = p + 4;
    *rec_len = len;
    return h->magic == kOpMagic && h->op == XRDMA_OP_INVOKE && h->flags == 0 && h->win == win;
}

// window_dispatch() of a bundle (kBundle, bundle.h): its records run in
// order until one fails. Each is checked as it is read (the bytes may lie
// where the sender can still write, a ring slot); a malformed one fails the
// bundle there, as does a count that does not match (those before it ran:
// only a sender that does not follow the protocol gets that). What a call
// replies is dropped (an Xinvoke's reply is not delivered: the origin
// drops it too). Its code never forwards (the origin bundles only code
// that stays, ucx_ifunc_stays()): one that does fails the bundle, rather
// than take the others along.
__attribute__((noinline)) int dispatch_bundle(Window *w, xrdma_ctx *x, Entry entry, const void *payload,
                                              size_t size)
{
    const int64_t count = t_header.disp;
    const uint32_t win = t_header.win;
    if (t_header.op != XRDMA_OP_INVOKE || t_header.nblocks != 0 || t_header.incoming_len != 0 || count < 2 ||
        count > kBundleMaxOps)
        return refuse(w, x, entry, payload, size, "malformed bundle of X-operations");
    const uint8_t *p = static_cast<const uint8_t *>(payload) + t_header.wire_len;
    const uint8_t *const end = static_cast<const uint8_t *>(payload) + size;
    int64_t n = 0;
    for (; p != end; ++n) {
        const uint8_t *rec;
        size_t rec_len;
        if (n == count || !bundle_record(p, end, &rec, &rec_len, &t_header, win))
            return refuse(w, x, entry, payload, size, "malformed X-operation in a bundle");
        const int rc = dispatch_bare(w, x, entry, rec, rec_len);
        if (rc != 0) return rc;
        if (ucx_ifunc_ctx_next_call(x) != 0)
            return fail(x, UCX_IFUNC_ERR_PROTOCOL,
                        "an X-operation of a bundle forwarded (XRDMA_BUNDLE: the origin bundles code that never "
                        "forwards, ucx_ifunc_stays)");
        p = rec + rec_len;
    }
    if (n != count) return refuse(w, x, entry, payload, size, "bundle shorter than its count");
    return 0;
}

// An X-op whose window is not in this process's table (out of line: every
// other finds it): one being created here still (its group does not have it
// yet) waits (ucx_ifunc_ctx_defer(): window_setup() resumes it); one that
// failed here, or is gone, fails with the reason.
__attribute__((noinline, cold)) int window_missing(xrdma_ctx *x, uint32_t id)
{
    const Group *g = group_by_id(id_group(id));
    if ((!g || g->ahead(id_seq(id))) && ucx_ifunc_ctx_defer(x) == 0) return -1;
    const std::string why = window_refusal(id);
    return fail(x, UCX_IFUNC_ERR_NO_ROUTE,
                "world rank " + std::to_string(Runtime::get().world_rank) + ": the X-operation's window " +
                    (why.empty() ? "is not (or no longer) here" : "has no X-operations here: " + why));
}

}  // namespace

__thread Running t_running __attribute__((tls_model("initial-exec"))) = {nullptr, nullptr};

int window_continue_at(void *, xrdma_ctx *x, int peer)
{
    OpView *v = view_of(x);
    if (!v) return fail(x, UCX_IFUNC_ERR_PROTOCOL, "no X-operation to continue");
    const int rank = v->w->rank_of(peer);
    if (rank < 0 || (rank != v->w->rank && !v->w->runs_here(rank))) return 1;  // a message
    NodeLock *lock = nullptr;
    if (bind(x, *v, BindOf{v->disp, !v->blocks.empty()}, rank, &lock) != 0) return -1;
    v->lock.switch_to(lock);
    return 0;
}

namespace {

// window_dispatch() past its usual case (out of line: a stream of X-ops to
// one window of MPI_COMM_WORLD's ranks never comes here): the header with
// its extension (blocks, incoming data), checked; the window by its id (an
// X-op for a window this process is still creating waits, one for a window
// not here fails: window_missing()); the view of ranks its function sees;
// then the path of its shape.
// (noipa: GCC would drop the unused first argument, and move the others.)
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#else
__attribute__((noinline))
#endif
int dispatch_found(void *, xrdma_ctx *x, Entry entry, const void *payload, size_t size)
{
    OpHdr &h = t_header;
    const size_t hl = op_hdr_read(static_cast<const uint8_t *>(payload), size, &h);
    if (hl == 0 || h.magic != kOpMagic || h.nblocks > kMaxBlocks ||
        hl + uint64_t(h.nblocks) * sizeof(Block) + h.incoming_len > size)
        return refuse(nullptr, x, entry, payload, size, "malformed X-operation header");
    Window *w = window_by_id(h.win);
    if (__builtin_expect(w == nullptr, 0)) return window_missing(x, h.win);
    if (w->view) ucx_ifunc_ctx_set_view(x, w->view);  // (ranks of a communicator other than MPI_COMM_WORLD)
    if (h.nblocks != 0 || h.flags != 0)
        return h.flags == kBundle ? dispatch_bundle(w, x, entry, payload, size)
                                  : dispatch_general(w, x, entry, payload, size);
    return dispatch_bare(w, x, entry, payload, size);
}

}  // namespace

// The usual X-op (a header without extension, for the window found last,
// whose ranks are MPI_COMM_WORLD's: window_by_id() keeps only such a one)
// goes on where its shape is handled after one copy and two tests;
// anything else through dispatch_found() (tail calls: this frame is gone by
// then).
XRDMA_HOT int window_dispatch(void *, xrdma_ctx *x, Entry entry, const void *payload, size_t size)
{
    OpHdr &h = t_header;  // (read once: the checks and the path use this copy)
    // (Every call below takes the hook's arguments where they arrived:
    // nothing is moved on the way.)
    if (__builtin_expect(size < sizeof(OpWire), 0))
        return refuse(nullptr, x, entry, payload, size, "X-operation without its header");
    memcpy(&h, payload, sizeof(OpWire));  // (OpHdr starts as OpWire)
    uint32_t front;  // magic, op, flags: the magic, and no extension
    memcpy(&front, &h, sizeof(front));
    if (__builtin_expect((front & 0x008000ffu) != kOpMagic || h.win != g_window_hit_id, 0))
        return dispatch_found(nullptr, x, entry, payload, size);
    h.nblocks = 0;
    h.incoming_len = 0;
    h.wire_len = sizeof(OpWire);
    Window *w = g_window_hit;
    if (h.flags != 0)
        return h.flags == kBundle ? dispatch_bundle(w, x, entry, payload, size)
                                  : dispatch_general(w, x, entry, payload, size);
    return dispatch_bare(w, x, entry, payload, size);
}

}  // namespace xrdma::mpi

using xrdma::mpi::OpView;
using xrdma::mpi::WinKind;

namespace {
using xrdma::mpi::view_of;

// Store a size through the ifunc's pointer; false if it cannot be written
// (a fault inside a runtime call is not contained: the plugin checks).
bool copy_size(size_t *bytes, size_t n) { return !bytes || ucx_ifunc_copy_checked(bytes, &n, sizeof(n)) == 0; }

// Whether [p, p+n) lies in the live frames of the running entry whose
// view is @p v (not nullptr: the view lies in window_dispatch()'s frame,
// above them) above the accessor whose canonical frame address (its
// caller's stack pointer before the call: __builtin_dwarf_cfa() there) is
// @p cfa: mapped and writable, no probe needed (an output variable of the
// ifunc, the usual case). (p nullptr lies below cfa; v, a stack address,
// lies far above n.)
inline bool in_entry_frames(const void *p, size_t n, uintptr_t cfa, const OpView *v)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(p), hi = reinterpret_cast<uintptr_t>(v);
    return a >= cfa && a <= hi - n;
}

// copy_size() without the plugin's probe where in_entry_frames() of the
// running entry @p v (nullptr: none).
__attribute__((always_inline)) inline bool store_size(size_t *bytes, size_t n, uintptr_t cfa, const OpView *v)
{
    if (v && in_entry_frames(bytes, sizeof(n), cfa, v)) {
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
    if (!store_size(bytes, v ? v->region_bytes : 0, XRDMA_CFA, v)) return nullptr;
    return v ? v->region : nullptr;
}

const void *xrdma_incoming(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    if (!store_size(bytes, v ? v->incoming_len : 0, XRDMA_CFA, v)) return nullptr;
    if (v && v->streamed() && !v->incoming) return xrdma::mpi::stream_stage_all(x, *v);  // (a function that does not stream)
    return v ? v->incoming : nullptr;
}

const xrdma_block_t *xrdma_target_blocks(xrdma_ctx_t *x, size_t *count)
{
    OpView *v = view_of(x);
    const size_t n = v ? v->blocks.size() : 0;
    if (!store_size(count, n, XRDMA_CFA, v)) return nullptr;
    if (n == 0) return nullptr;
    std::vector<xrdma_block_t> &at = v->w->dispatch_at;
    if (v->at_region != v->region || at.size() != n) {
        at.resize(n);
        for (size_t i = 0; i < n; ++i) at[i] = xrdma_block_t{v->region + v->blocks[i].offset, size_t(v->blocks[i].len)};
        v->at_region = v->region;
    }
    return at.data();
}

XRDMA_HOT void *xrdma_win_base(xrdma_ctx_t *x, size_t *bytes)
{
    OpView *v = view_of(x);
    // The usual case (every chase hop): this rank's or a peer's static
    // window (a dynamic one's base is nullptr, window_setup()), the size
    // stored into a variable of the ifunc.
    char *base = v ? v->base : nullptr;
    if (__builtin_expect(base && in_entry_frames(bytes, sizeof(*bytes), XRDMA_CFA, v), 1)) {
        memcpy(bytes, &v->bytes, sizeof(*bytes));
        return base;
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
