// Target side: run an arrived invocation, then reply to the origin or
// forward it; and the runtime API the injected code calls (xrdma_*).
// Where the answer goes is a Route; node-local runs (an invocation run in
// this process on a node peer's mapped memory, ucx_ifunc_invoke_local())
// take the same path.
#include "run/context.h"

#include "load/compile_queue.h"
#include "wire/ring.h"
#include "xrdma_common/config.h"
#include "run/fault.h"
#include "xrdma_common/log.h"
#include "xrdma_common/hot.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

using namespace xrdma;

namespace {

const std::string kNoMessage;  // (a success's message, not made per invocation)

// Where the final answer of an invocation goes.
struct Route {
    ucx_ifunc_context *ctx;
    const InvokeShortHdr &h;  // the invocation's identity (the answer's req_id)
    ucp_ep_h ep;  // nullptr: the origin is this process (complete locally)
    // An invocation started here by ucx_ifunc_invoke_local(): its completion,
    // called directly (it enters ctx->pending only if a forward leaves).
    const Pending *started_here = nullptr;

    // Success, with the reply (if any): no message string is made.
    void done(const void *reply, size_t len) const { answer(UCX_IFUNC_OK, kNoMessage, reply, len); }

    void answer(ucx_ifunc_status_t st, const std::string &msg, const void *reply = nullptr,
                size_t len = 0) const
    {
        if (st != UCX_IFUNC_OK) ctx->stats.rejected++;
        if (ep && st == UCX_IFUNC_OK && len == 0) {
            // (Once forwarded the answer goes to the origin, which asks its
            // first target only: sent unasked.)
            queue_ack(ctx, ep, h.req_id, (h.flags & (kLazyAck | kForwarded)) == kLazyAck);
        } else if (ep) {
            send_reply(ctx, ep, h.req_id, st, msg, reply, len);
        } else if (started_here) {
            ucx_ifunc_result_t r{st, reply, len, ctx->params.rank, msg.c_str()};
            started_here->cb(&r, started_here->user_data);
        } else {
            complete_local(ctx, h.req_id, st, msg, reply, len);
        }
    }
};

// Once forwarded, answers go to the origin through the peer table (or stay
// here if this is the origin). False if the origin cannot be reached.
__attribute__((noinline)) bool route_to_origin_lookup(ucx_ifunc_context *ctx, const InvokeShortHdr &h, ucp_ep_h *ep)
{
    const ucp_ep_h p = peer_ep(ctx, h.origin_rank);
    if (!p) {
        XRDMA_ERROR("origin rank %d is not reachable from rank %d: its answer is lost",
                    h.origin_rank, ctx->params.rank);
        return false;
    }
    *ep = p;
    ctx->origin_last = h.origin_rank;
    ctx->origin_last_ep = p;
    return true;
}
inline bool route_to_origin(ucx_ifunc_context *ctx, const InvokeShortHdr &h, ucp_ep_h *ep)
{
    if (h.origin_rank == ctx->params.rank) {
        *ep = nullptr;
        return true;
    }
    if (ctx->origin_last_ep && h.origin_rank == ctx->origin_last) {  // (a stream of forwards for one origin)
        *ep = ctx->origin_last_ep;
        return true;
    }
    return route_to_origin_lookup(ctx, h, ep);
}

std::string at_rank(int rank) { return "rank " + std::to_string(rank) + ": "; }
std::string at_rank(ucx_ifunc_context *ctx) { return at_rank(ctx->params.rank); }

// Whether a forward of @p x to @p rank continues in this process: to this
// rank, or to a node peer whose memory is mapped here, for code that may
// run anywhere (xrdma_forward() asks, and keeps the answer in fwd_stays).
bool stays(ucx_ifunc_context *ctx, const xrdma_ctx &x, int rank)
{
    return rank == ctx->params.rank ||
           (x.image->code->movable && ctx->params.runs_here && ctx->params.runs_here(ctx->params.dispatch_arg, rank));
}

// Run entry @p fn of @p img on @p exec_rank's memory and answer through
// @p route; forwards that stay in this process continue in the loop. Both
// paths use it: an invocation that arrived (target_handle_invoke) and one
// started here (ucx_ifunc_invoke_local). True if the layer deferred it
// (ucx_ifunc_ctx_defer()): nothing ran, nothing was answered, and the
// caller keeps it (compile_queue_defer()).
inline __attribute__((always_inline)) bool run_invocation(ucx_ifunc_context *ctx, InvokeShortHdr &h, const std::string &entry,
                    const std::shared_ptr<CachedImage> &img, void *fn, const uint8_t *args, size_t args_len,
                    ucp_ep_h reply_ep, Route &route, int exec_rank, BoundEntry *bound)
{
    // The arguments are read where they arrived; only a forward that stays
    // in this process makes new ones (kept in x.hop_args, which only the
    // continue_at path uses otherwise: not this one).
    const uint8_t *cur = args;
    size_t cur_len = args_len;
    const bool local = route.started_here != nullptr;
    xrdma_ctx &x = ctx->xctx;
    struct Release {  // a finished invocation does not point at the image, nor leaves a forward staged
        xrdma_ctx &x;
        ~Release()
        {
            x.image = nullptr;
            if (x.staged) ring_drop(*x.staged);
            x.staged = nullptr;
        }
    } release{x};
    x.hdr = &h;  // (x.context is ctx from the context's creation)
    x.image = img.get();  // (a reference per call would cost two atomic operations)
    x.entry = &entry;
    x.reply_ep = reply_ep;  // (x.target_args stays nullptr: put-and-poll runs on an xrdma_ctx of its own)
    x.local = local;
    x.bound = bound;
    for (;;) {
        x.next_call(exec_rank);
        x.hops_here = 0;
        int rc = dispatch_entry(ctx, &x, fn, cur, cur_len);
        exec_rank = x.exec_rank;  // where the chain of hops in this process ended
        if (x.hops_here && !local && !route_to_origin(ctx, h, &route.ep)) return false;
        if (!entry_ran_well(x, rc)) {  // (a string only for a failure)
            if (x.fail_status == UCX_IFUNC_INPROGRESS) return true;  // (deferred: nothing ran)
            std::string why;
            const ucx_ifunc_status_t failed = entry_failure(x, rc, &why);
            route.answer(failed, at_rank(exec_rank) + why);
            return false;
        }
        ucx_ifunc_status_t st;
        if (!x.forwarded) {
            route.done(x.reply.data(), x.reply.size());
            return false;
        }
        ctx->stats.forwarded++;
        h.hops++;
        h.flags |= kForwarded;
        // The data is here (this rank's, or a node peer's memory mapped
        // here, for code that may run anywhere): no message.
        if (!ctx->params.continue_at && x.fwd_stays) {  // (with it, run_chain continued)
            x.hop_args.swap(x.fwd_args);
            cur = x.hop_args.data();
            cur_len = x.hop_args.size();
            exec_rank = x.fwd_rank;
            if (!local && !route_to_origin(ctx, h, &route.ep)) return false;
            continue;
        }
        size_t staged_len;
        if (x.staged && ring_publish(*x.staged, &staged_len)) {
            // Written into the ring by xrdma_forward(): now visible.
            x.staged = nullptr;
            count_short_sent(ctx, staged_len);
            st = UCX_IFUNC_OK;
        } else if (const LastSend *m = bound ? bound->out.to_rank(x.fwd_rank, ctx->bound_epoch) : nullptr) {
            // Forwarded to a rank it was forwarded to before, which has the
            // code and the binding: the short form, without any lookup (a
            // staged forward moved out of the ring meanwhile: from fwd_args).
            st = send_invoke_short(ctx, m->ep, h, m->index, x.fwd_args.data(), x.fwd_args.size());
        } else {
            // (xrdma_forward() checked the rank; it may have failed since.)
            ucp_ep_h dest = peer_ep(ctx, x.fwd_rank);
            int index = -1;
            st = dest ? send_invoke_full(ctx, dest, h, img->view.hash, entry,
                                         std::shared_ptr<const std::vector<uint8_t>>(img, &img->bytes),
                                         x.fwd_args.data(), x.fwd_args.size(), &index)
                      : UCX_IFUNC_ERR_PEER;
            if (bound && dest) bound->out.record_rank(dest, x.fwd_rank, index, st, ctx->bound_epoch);
        }
        if (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS) {
            if (local || route_to_origin(ctx, h, &route.ep))
                route.answer(st, at_rank(exec_rank) + "forwarding to rank " + std::to_string(x.fwd_rank) +
                                     " failed");
        } else if (local) {
            ctx->pending.put(h.req_id, *route.started_here);  // the answer comes here later
        }
        return false;
    }
}

// xrdma_forward(): where the forward's @p args_len bytes of arguments (after
// the layer's prefix) go when it can be written straight into the ring of
// the rank it leaves for (the short form, to where the binding's forward to
// that rank went, @p m): staged in x->staged; nullptr if not (fwd_args then).
XRDMA_HOT uint8_t *stage_forward(ucx_ifunc_context *ctx, xrdma_ctx *x, LastSend &m, size_t args_len)
{
    RingOut *r = m.ring ? m.ring : (m.ring = ring_out(ctx, m.ep));
    if (r->state != RingOut::kActive) return nullptr;  // (no ring to that peer: TCP, mostly)
    // As run_invocation() sends it: the identity (a short header already,
    // invoke_id()), one hop more, forwarded, with the binding's index.
    InvokeShortHdr s = *x->hdr;
    s.flags |= kForwarded;
    s.hops++;
    s.index = uint16_t(m.index);
    uint8_t *d = ring_stage(*r, kAmInvoke, &s, sizeof(s), x->fwd_prefix + args_len, &x->fwd_args);
    if (d) x->staged = r;
    return d;
}

}  // namespace

namespace xrdma {

// Make the forward @p x just made the next hop of its chain in this
// process (run_chain) if the layer has the rank's memory here: the layer
// points its view there, the forward's arguments become the call's. 1: it
// continues here; 0: it travels as a message; -1: the layer refused (the
// invocation ends with the error it set).
int continue_here(ucx_ifunc_context *ctx, xrdma_ctx *x)
{
    const int rank = x->fwd_rank;
    if (!x->fwd_stays) return 0;  // (xrdma_forward() asked, before the layer: most forwards leave)
    RuntimeCall runtime;  // ours, not the ifunc's: a fault here is not contained
    const int st = ctx->params.continue_at(ctx->params.dispatch_arg, x, rank);
    if (st != 0) {
        if (st > 0) return 0;
        if (x->fail_status == UCX_IFUNC_OK)
            ucx_ifunc_ctx_fail(x, UCX_IFUNC_ERR_NO_ROUTE, "the layer cannot run the forward here");
        return -1;
    }
    ctx->stats.forwarded++;
    ctx->stats.executed++;
    x->hdr->hops++;
    x->hdr->flags |= kForwarded;
    x->hops_here++;
    x->hop_args.swap(x->fwd_args);
    x->payload = x->hop_args.data();
    // As next_call(), but the layer's view and prefix stay (it moved them).
    x->replied = x->forwarded = x->fwd_stays = false;
    x->reply.clear();
    x->fwd_rank = -1;
    x->exec_rank = rank;
    x->shown_rank = view_rank(x, rank);
    return 1;
}

namespace {

// Where the answer of an arrived invocation goes: its sender, or the origin
// through the peer table once forwarded. False (dropped) if nowhere.
__attribute__((noinline)) bool unanswerable(ucx_ifunc_context *ctx, bool forwarded)
{
    if (!forwarded) XRDMA_ERROR("invocation without a reply endpoint: dropped");
    ctx->stats.rejected++;
    return false;
}
inline bool answer_to(ucx_ifunc_context *ctx, const InvokeShortHdr &h, ucp_ep_h reply_ep, ucp_ep_h *back)
{
    *back = reply_ep;
    const bool forwarded = h.flags & kForwarded;
    if (forwarded ? route_to_origin(ctx, h, back) : *back != nullptr) return true;
    return unanswerable(ctx, forwarded);
}

// A malformed invocation: answered if the header at least says who is
// waiting (the request id is at the same place in both forms), else dropped.
void reject_malformed(ucx_ifunc_context *ctx, const Incoming &in, ucx_ifunc_status_t st, const std::string &why)
{
    ctx->stats.rejected++;
    InvokeShortHdr ih;  // (the common front of both headers)
    if ((in.hdr.size() == sizeof(InvokeHdr) || in.hdr.size() == sizeof(InvokeShortHdr)) && in.reply_ep) {
        memcpy(&ih, in.hdr.data(), sizeof(ih));
        if ((ih.magic == kInvokeMagic || ih.magic == kInvokeShortMagic) && !(ih.flags & kForwarded))
            send_reply(ctx, in.reply_ep, ih.req_id, st, at_rank(ctx) + why, nullptr, 0);
    }
    XRDMA_WARN("dropping malformed invocation: %s", why.c_str());
}

// A sender's ack request (wire.h; the header is an InvokeShortHdr's size).
__attribute__((noinline)) void serve_ack_request(ucx_ifunc_context *ctx, const uint8_t *hdr, size_t len,
                                                 ucp_ep_h reply_ep)
{
    AckRequestHdr r;
    memcpy(&r, hdr, sizeof(r));
    std::string why;
    if (invoke_withdraw_check(hdr, sizeof(r), len, &why, kAckRequestMagic) != UCX_IFUNC_OK || !reply_ep) {
        ctx->stats.rejected++;
        XRDMA_WARN("rank %d: dropping malformed ack request: %s", ctx->params.rank,
                   reply_ep ? why.c_str() : "no reply endpoint");
        return;
    }
    ack_request(ctx, reply_ep, r.req_id);
}

__attribute__((noinline, cold)) void reject_short(ucx_ifunc_context *ctx, const Incoming &in)
{
    if (compile_queue_withdrawal(ctx, in)) return;  // not an invocation: a sender's withdrawal (wire.h)
    std::string why;
    const ucx_ifunc_status_t st = invoke_short_check(in.hdr.data(), in.hdr.size(), in.data.size(), &why);
    reject_malformed(ctx, in, st, why);
}

__attribute__((noinline, cold)) bool answer_quarantined(ucx_ifunc_context *ctx, const Route &route, const Hash &hash)
{
    std::string why;
    if (!refuse_quarantined(ctx, hash, &why)) return false;
    route.answer(UCX_IFUNC_ERR_FAULT, at_rank(ctx) + why);
    return true;
}
// Whether the image is quarantined here (answered with the fault that put
// it there); no string is made while nothing is.
inline bool refused(ucx_ifunc_context *ctx, const Route &route, const Hash &hash)
{
    return !ctx->quarantined.empty() && answer_quarantined(ctx, route, hash);
}

}  // namespace

// A warm invocation: image and entry named by the sender's binding; one it
// does not know is sent back to be resent in full. Taken apart where it
// arrived: the Incoming the rare paths need is made only there.
XRDMA_HOT void target_handle_short(ucx_ifunc_context *ctx, const uint8_t *hdr, const uint8_t *data, size_t len,
                                   ucp_ep_h reply_ep)
{
    const auto in = [&] { return Incoming{kAmInvoke, View{hdr, sizeof(InvokeShortHdr)}, View{data, len}, reply_ep,
                                          true, UCX_IFUNC_OK}; };
    InvokeShortHdr s;
    memcpy(&s, hdr, sizeof(s));
    if (!invoke_short_valid(s, len)) {
        if (s.magic == kAckRequestMagic)
            serve_ack_request(ctx, hdr, len, reply_ep);  // not an invocation (wire.h)
        else
            reject_short(ctx, in());
        return;
    }
    // Behind its sender's X-op that waits for a compile or a resend (before
    // the lookup: that X-op may be the full one that binds this index).
    if (reply_ep && compile_queue_any() && compile_queue_park(ctx, in(), nullptr)) return;
    BoundEntry *b = reply_ep ? binding_find(ctx, reply_ep, s.index) : nullptr;
    if (!b) {
        if (reply_ep) {
            XRDMA_DEBUG("rank %d: unknown binding %u, asking for the full invocation", ctx->params.rank, s.index);
            compile_queue_need(ctx, in(), kReplyNeedBind);  // (its sender's later X-ops wait for the resend)
        } else {
            ctx->stats.rejected++;
        }
        return;
    }
    // The short header is the invocation's identity on the common path.
    ucp_ep_h back;
    if (!answer_to(ctx, s, reply_ep, &back)) return;
    Route route{ctx, s, back};
    if (refused(ctx, route, b->hash)) return;
    // The cache holds the image (binding_find() made it the front) and keeps
    // it while it runs: nothing changes the cache during a dispatch (arrivals
    // and finished compiles wait for its end), so no reference of our own,
    // which would cost two atomic operations per invocation.
    if (__builtin_expect(
            run_invocation(ctx, s, b->entry, ctx->cache.front_shared(), b->fn, data, len, reply_ep, route,
                           ctx->params.rank, b),
            0))
        compile_queue_defer(ctx, in());
}

void refuse_invocation(ucx_ifunc_context *ctx, const Incoming &in, ucx_ifunc_status_t st, const std::string &why)
{
    InvokeShortHdr f;  // (the common front of both headers)
    memcpy(&f, in.hdr.data(), sizeof(f));
    const InvokeShortHdr id = invoke_id(f);
    ucp_ep_h back;
    if (answer_to(ctx, id, in.reply_ep, &back)) Route{ctx, id, back}.answer(st, why);
}

void target_handle_invoke(ucx_ifunc_context *ctx, Incoming &in)
{
    if (in.recv_status != UCX_IFUNC_OK) {
        XRDMA_ERROR("receiving an invocation failed: %s", ucx_ifunc_status_string(in.recv_status));
        return;
    }
    if (in.hdr.size() == sizeof(InvokeShortHdr)) {
        target_handle_short(ctx, in.hdr.data(), in.data.data(), in.data.size(), in.reply_ep);
        return;
    }
    std::string why;
    ucx_ifunc_status_t st = invoke_hdr_check(in.hdr.data(), in.hdr.size(), in.data.size(), &why);
    if (st != UCX_IFUNC_OK) {
        reject_malformed(ctx, in, st, why);
        return;
    }
    InvokeHdr h;
    memcpy(&h, in.hdr.data(), sizeof(h));
    if (compile_queue_hold(ctx, in, h)) return;  // waits for its bitcode's compile, or behind one

    InvokeShortHdr id = invoke_id(h);
    ucp_ep_h back;
    if (!answer_to(ctx, id, in.reply_ep, &back)) return;
    Route route{ctx, id, back};

    const uint8_t *d = in.data.data();
    std::string entry(reinterpret_cast<const char *>(d), h.entry_len);
    const uint8_t *image = d + h.entry_len;
    const uint8_t *args = image + h.image_len;
    Hash hash;
    memcpy(hash.data(), h.hash, hash.size());
    // A new binding replaces the index's old one before anything can fail:
    // a stale one never outlives its announcement.
    if (h.bind && in.reply_ep) binding_set(ctx, in.reply_ep, h.bind - 1, hash, entry, nullptr, nullptr);

    if (refused(ctx, route, hash)) return;
    std::shared_ptr<CachedImage> img;
    void *fn = nullptr;
    st = find_entry(ctx, hash, (h.flags & kHasCode) ? image : nullptr, h.image_len, entry, &img, &fn, &why);
    if (st == UCX_IFUNC_ERR_NEED_CODE) {
        XRDMA_DEBUG("need code for %s", hash_hex(hash, 8).c_str());
        compile_queue_need(ctx, in, kReplyNeedCode);
        return;
    }
    if (st != UCX_IFUNC_OK) {
        route.answer(st, at_rank(ctx) + why);
        return;
    }
    BoundEntry *bound = (h.bind && in.reply_ep) ? binding_set(ctx, in.reply_ep, h.bind - 1, hash, entry, img, fn)
                                                : nullptr;

    if (run_invocation(ctx, id, entry, img, fn, args, h.args_len, in.reply_ep, route, ctx->params.rank, bound))
        compile_queue_defer(ctx, in);
}

namespace {

// Room for @p bytes the ifunc asks to send; false (no exception across
// the C API) if they cannot be allocated.
template <typename Vec>
bool resize_for(Vec *v, size_t bytes)
{
    try {
        v->resize(bytes);
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

}  // namespace

}  // namespace xrdma

extern "C" {

// The runtime calls check what the ifunc hands them (a buffer it cannot read
// is an error return, -1) rather than fault: a fault inside them is not
// contained (fault.h), they update the invocation's state.
int xrdma_reply(xrdma_ctx_t *x, const void *buf, size_t bytes)
{
    xrdma::RuntimeCall runtime;
    if (!x || !x->hdr || x->replied || x->forwarded || (bytes && !buf)) return -1;
    if (!xrdma::resize_for(&x->reply, bytes) || !xrdma::checked_read(x->reply.data(), buf, bytes)) {
        x->reply.clear();
        return -1;
    }
    x->replied = true;
    return 0;
}

XRDMA_HOT int xrdma_forward(xrdma_ctx_t *x, int view_rank, const void *args, size_t args_size)
{
    xrdma::RuntimeCall runtime;
    if (!x || !x->hdr || x->replied || x->forwarded || (args_size && !args) || args_size > UINT32_MAX)
        return -1;
    ucx_ifunc_context *ctx = x->context;
    int rank = view_rank;  // (the peer: the function names a rank of its view)
    if (__builtin_expect(x->view != nullptr, 0) && (rank = xrdma::view_peer(x, view_rank)) < 0) return -2;
    // Where the binding's forward to this rank went as a message before (the
    // peers the same since): a peer, and it leaves again (runs_here()'s
    // answer for a rank stays while the peers do, ucx_ifunc.h).
    xrdma::LastSend *m = x->bound ? x->bound->out.to_rank(rank, ctx->bound_epoch) : nullptr;
    const bool again = m != nullptr;
    if (!again && rank != ctx->params.rank && !xrdma::peer_ep(ctx, rank)) return -2;
    x->fwd_stays = !again && stays(ctx, *x, rank);
    uint8_t *d = again && ctx->rings ? stage_forward(ctx, x, *m, args_size) : nullptr;
    if (!d) {  // (fwd_args keeps its capacity, and mostly its size, from call to call)
        if (!xrdma::resize_for(&x->fwd_args, x->fwd_prefix + args_size)) return -1;
        d = x->fwd_args.data();
    }
    if (!xrdma::checked_read(d + x->fwd_prefix, args, args_size)) {
        if (x->staged) xrdma::ring_drop(*x->staged);
        x->staged = nullptr;
        x->fwd_args.clear();
        return -1;
    }
    if (x->fwd_prefix) xrdma::copy_bytes(d, x->payload, x->fwd_prefix);
    x->fwd_rank = rank;
    x->forwarded = true;
    return 0;
}

int xrdma_origin(xrdma_ctx_t *x) { return (x && x->hdr) ? xrdma::view_rank(x, x->hdr->origin_rank) : -1; }
XRDMA_HOT int xrdma_rank(xrdma_ctx_t *x) { return x ? x->shown_rank : -1; }
XRDMA_HOT int xrdma_size(xrdma_ctx_t *x) { return x ? (x->view ? x->view->size : x->context->params.size) : -1; }
void *xrdma_user_ptr(xrdma_ctx_t *x) { return x ? x->context->params.user_ptr : nullptr; }
void *xrdma_target_args(xrdma_ctx_t *x) { return x ? x->target_args : nullptr; }

// Injected code may print, but a loop of prints must not flood the target's
// output: a token bucket of XRDMA_LOG_RATE lines a second per process.
int xrdma_log(xrdma_ctx_t *x, const char *fmt, ...)
{
    if (!x || !fmt) return -1;
    static std::mutex mu;
    static double tokens = -1;
    static unsigned long long dropped = 0;
    static auto last = std::chrono::steady_clock::now();
    static const double rate = double(config_get_ull("XRDMA_LOG_RATE"));
    unsigned long long was_dropped;
    {
        std::lock_guard<std::mutex> guard(mu);
        auto now = std::chrono::steady_clock::now();
        if (tokens < 0) tokens = rate;
        tokens = std::min(rate, tokens + rate * std::chrono::duration<double>(now - last).count());
        last = now;
        if (tokens < 1) {
            ++dropped;
            return 1;
        }
        tokens -= 1;
        was_dropped = dropped;
        dropped = 0;
    }
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    size_t n = strlen(text);
    if (n && text[n - 1] == '\n') text[n - 1] = 0;
    // (The count is this process's; the line names the rank whose memory the
    // function runs on, the target's, also where node-local execution runs
    // it in the origin's process.)
    if (was_dropped)
        fprintf(stderr, "[xrdma rank %d] xrdma_log: %llu lines dropped (XRDMA_LOG_RATE=%s)\n", x->context->params.rank,
                was_dropped, config_get("XRDMA_LOG_RATE"));
    fprintf(stderr, "[xrdma rank %d ifunc '%s'] %s\n", x->exec_rank, x->entry ? x->entry->c_str() : "?", text);
    return 0;
}

void ucx_ifunc_ctx_set_layer(xrdma_ctx_t *x, void *layer_data) { x->layer_data = layer_data; }
void *ucx_ifunc_ctx_layer(xrdma_ctx_t *x) { return x ? x->layer_data : nullptr; }
XRDMA_HOT void ucx_ifunc_ctx_set_forward_prefix(xrdma_ctx_t *x, size_t prefix_len) { x->fwd_prefix = prefix_len; }
int ucx_ifunc_ctx_answered(xrdma_ctx_t *x) { return x->replied || x->forwarded; }
int ucx_ifunc_ctx_next_call(xrdma_ctx_t *x)
{
    if (!x || x->forwarded) return -1;
    x->replied = false;
    x->reply.clear();
    return 0;
}
int ucx_ifunc_ctx_forwarded(xrdma_ctx_t *x) { return x && x->forwarded; }
int ucx_ifunc_ctx_imports(xrdma_ctx_t *x, const char *name)
{
    if (!x || !name || !x->image || !x->image->code || !x->image->code->imports_known) return -1;
    const auto &v = x->image->code->imports;
    return std::binary_search(v.begin(), v.end(), std::string(name)) ? 1 : 0;
}
int ucx_ifunc_ctx_reply(xrdma_ctx_t *x, const void **data, size_t *size)
{
    if (!x || !x->replied) return 0;
    if (data) *data = x->reply.data();
    if (size) *size = x->reply.size();
    return 1;
}
void ucx_ifunc_ctx_set_view(xrdma_ctx_t *x, const ucx_ifunc_view_t *view)
{
    if (!x) return;
    x->view = view;
    x->shown_rank = xrdma::view_rank(x, x->exec_rank);
}
int ucx_ifunc_ctx_defer(xrdma_ctx_t *x)
{
    // (Only what arrived from another process can be kept: its bytes are
    // copied as they arrived. A forward that continued here has run.)
    if (!x || x->local || !x->hdr || x->hops_here || x->forwarded || x->replied) return -1;
    x->fail_status = UCX_IFUNC_INPROGRESS;  // (run_invocation() keeps it: compile_queue_defer())
    return 0;
}
void ucx_ifunc_resume(ucx_ifunc_context_h ctx)
{
    if (ctx) xrdma::compile_queue_resume();
}
int ucx_ifunc_ctx_local(xrdma_ctx_t *x) { return x && x->local; }

int ucx_ifunc_ctx_progress(xrdma_ctx_t *x)
{
    if (!x || !x->context || x->context->in_handler) return -1;
    return int(ucx_ifunc_progress(x->context));  // (inside a dispatch: one worker pass, arrivals queue)
}

void ucx_ifunc_ctx_replace_forward_prefix(xrdma_ctx_t *x, const void *prefix, size_t len)
{
    if (x && x->staged) {  // staged in a ring: into fwd_args, sent from there
        xrdma::ring_unstage(*x->staged);
        x->staged = nullptr;
    }
    if (!x || !x->forwarded || x->fwd_args.size() < x->fwd_prefix) return;
    const auto *p = static_cast<const uint8_t *>(prefix);
    x->fwd_args.erase(x->fwd_args.begin(), x->fwd_args.begin() + ptrdiff_t(x->fwd_prefix));
    x->fwd_args.insert(x->fwd_args.begin(), p, p + len);
    x->fwd_prefix = len;
}

ucx_ifunc_status_t ucx_ifunc_movable(ucx_ifunc_h f, char *why_out, size_t why_size)
{
    if (!f) return UCX_IFUNC_ERR_INVALID_PARAM;
    if (f->movable == UCX_IFUNC_INPROGRESS) {  // decided once per registered ifunc
        std::shared_ptr<CachedImage> img;
        f->movable = find_entry(f->ctx, f->hash, f->image->data(), f->image->size(), f->entry, &img, &f->local_fn,
                                &f->why_pinned);
        if (f->movable == UCX_IFUNC_OK) {
            f->local = img;
            if (!img->code->movable) {
                f->movable = UCX_IFUNC_ERR_DENIED;
                f->why_pinned = img->code->why_pinned;
            }
        }
        if (f->movable != UCX_IFUNC_OK)
            XRDMA_DEBUG("ifunc '%s' runs only at its target: %s", f->entry.c_str(), f->why_pinned.c_str());
    }
    if (why_out && why_size) snprintf(why_out, why_size, "%s", f->why_pinned.c_str());
    return f->movable;
}

ucx_ifunc_status_t ucx_ifunc_invoke_local(ucx_ifunc_h f, int rank, const void *args, size_t args_size,
                                          ucx_ifunc_complete_cb_t cb, void *user_data)
{
    if (!f || !cb || (args_size && !args) || args_size > UINT32_MAX || rank < 0 || !f->local)
        return UCX_IFUNC_ERR_INVALID_PARAM;
    // Pinned code runs only on this process's own memory.
    if (rank != f->ctx->params.rank && f->movable != UCX_IFUNC_OK) return UCX_IFUNC_ERR_DENIED;
    ucx_ifunc_context *ctx = f->ctx;
    InvokeShortHdr h = invoke_id(0, ctx->params.rank, 0, ctx->next_req_id++);
    const Pending done{cb, user_data, nullptr};
    Route route{ctx, h, nullptr, &done};
    if (refused(ctx, route, f->hash)) return UCX_IFUNC_INPROGRESS;
    std::shared_ptr<CachedImage> img = f->local;  // alive while it runs, even if the cache drops it
    run_invocation(ctx, h, f->entry, img, f->local_fn, static_cast<const uint8_t *>(args), args_size, nullptr,
                   route, rank, nullptr);
    return UCX_IFUNC_INPROGRESS;
}

int ucx_ifunc_copy_checked(void *dst, const void *src, size_t n) { return xrdma::checked_write(dst, src, n) ? 0 : -1; }

void ucx_ifunc_ctx_fail(xrdma_ctx_t *x, ucx_ifunc_status_t status, const char *message)
{
    x->fail_status = status;
    x->fail_message = message ? message : ucx_ifunc_status_string(status);
}

}  // extern "C"
