// Sending: invocations, replies, batched acknowledgements and "need code"
// answers, each through transmit() (the immediate-send heuristic and the
// pooled send buffers); and which peer was sent which image.
// Acknowledgements a target may hold until the origin asks for them
// (UCX_IFUNC_INVOKE_LAZY_ACK: an ack request), the "need code" and "need
// bind" answers (send_need()) and a sender's withdrawal of a resend it
// cannot make (send_withdraw()) go out here too.
#include "run/context.h"

#include "run/fault.h"
#include "wire/ring.h"
#include "xrdma_common/free_list.h"
#include "xrdma_common/log.h"
#include "xrdma_common/hot.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

using namespace xrdma;

namespace xrdma {

namespace {

// A message to send, as views: header, up to three data pieces, and the
// image (shared) for code-carrying invocations.
struct Message {
    const void *hdr;
    size_t hdr_len;
    Piece piece[3];
    std::shared_ptr<const std::vector<uint8_t>> image;  // sent after piece[0]
    // A ReplyHdr names its sender (rank): with peers_by_rank it travels
    // without UCX's reply endpoint.
    bool named = false;

    size_t data_len() const
    {
        return piece[0].len + piece[1].len + piece[2].len + (image ? image->size() : 0);
    }
};

// What UCX reads a message from until the send completes: header and data,
// the data as one contiguous buffer (UCX sends a contiguous message above its
// rendezvous threshold zero-copy through cma, knem or RDMA, an IOV one as
// bcopy fragments through its pending queue, several times slower).
struct SendOp {
    std::vector<uint8_t> hdr;
    Bytes data;
};

// Finished SendOps kept for reuse by the thread that completes them, so a
// stream of messages allocates nothing. A send completes in the calling
// thread or in whichever thread progresses the worker later.
thread_local SizedFreeList<SendOp, 64, 16> send_pool;

SendOp *send_op_get(size_t bytes) { return send_pool.get(bytes); }
void send_op_put(SendOp *op) { send_pool.put(op, op->data.capacity()); }

void send_done(void *request, ucs_status_t status, void *user_data)
{
    if (status != UCS_OK && status != UCS_ERR_CANCELED)
        XRDMA_DEBUG("send failed: %s", ucs_status_string(status));
    send_op_put(static_cast<SendOp *>(user_data));
    ucp_request_free(request);
}

// A small message first goes out from the stack, as a short send UCX
// completes at once; if UCX cannot (no resources, or longer than its short
// limit: 228 bytes with the MPI layer's 256-byte shared-memory FIFO
// elements, 100 with UCX's default), from a pooled buffer with a callback.
// Sizes that failed are sent the second way directly for a while (a
// context's transport rarely changes its limit, but a full FIFO clears).
constexpr size_t kImmediateMax = 256;
constexpr unsigned kImmediateRetry = 1024;

// send_immediate(), when UCX did not complete the send at once (@p r).
__attribute__((noinline)) bool immediate_not_sent(ucx_ifunc_context *ctx, ucs_status_ptr_t r, size_t len,
                                                  ucx_ifunc_status_t *st)
{
    if (UCS_PTR_IS_PTR(r)) {  // not expected with FORCE_IMM_CMPL: the caller's buffer must outlive it
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(ctx->params.worker);
        ucp_request_free(r);
        return true;
    }
    if (UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE) {
        XRDMA_WARN("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
        *st = from_ucs(UCS_PTR_STATUS(r));
        return true;
    }
    ctx->imm_fail_min = len;
    return false;
}

// Send (@p hdr, @p data) at once from where they are, as a short message UCX
// completes before it returns: false if it cannot (no resources, or too
// long for its short path; noted in imm_fail_min), else *@p st is the result.
// With UCX's reply endpoint unless @p by_rank (the message names its sender,
// peers_by_rank).
inline __attribute__((always_inline)) bool send_immediate(ucx_ifunc_context *ctx, ucp_ep_h ep, uint16_t am_id, const void *hdr, size_t hdr_len,
                    const void *data, size_t len, ucx_ifunc_status_t *st, bool by_rank = false)
{
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    p.flags = by_rank ? 0 : UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, am_id, hdr, hdr_len, data, len, &p);
    *st = UCX_IFUNC_OK;
    if (__builtin_expect(r == nullptr, 1)) return true;
    return immediate_not_sent(ctx, r, len, st);
}

// Whether a message of @p len bytes of data is tried at once first (the
// sizes that failed are retried after kImmediateRetry messages).
inline bool try_immediate(ucx_ifunc_context *ctx, size_t len)
{
    if (len >= ctx->imm_fail_min && ++ctx->imm_skipped >= kImmediateRetry) {
        ctx->imm_fail_min = SIZE_MAX;
        ctx->imm_skipped = 0;
    }
    return len <= kImmediateMax && len < ctx->imm_fail_min;
}

// Send @p m as an active message.
XRDMA_HOT ucx_ifunc_status_t transmit_am(ucx_ifunc_context *ctx, ucp_ep_h ep, uint16_t am_id, const Message &m)
{
    size_t len = m.data_len();
    if (!m.image && try_immediate(ctx, len)) {
        uint8_t buf[kImmediateMax];
        const void *data = m.piece[0].p;  // one piece: sent from where it is
        if (m.piece[1].len || m.piece[2].len) {
            size_t n = 0;
            for (const auto &pc : m.piece) {
                if (pc.len) memcpy(buf + n, pc.p, pc.len);
                n += pc.len;
            }
            data = buf;
        }
        ucx_ifunc_status_t st;
        if (send_immediate(ctx, ep, am_id, m.hdr, m.hdr_len, data, len, &st, m.named)) return st;
    }
    SendOp *op = send_op_get(m.data_len());
    op->hdr.assign(static_cast<const uint8_t *>(m.hdr), static_cast<const uint8_t *>(m.hdr) + m.hdr_len);
    op->data.resize(m.data_len());
    uint8_t *d = op->data.data();
    auto put = [&d](const void *p, size_t len) {
        if (len) memcpy(d, p, len);
        d += len;
    };
    put(m.piece[0].p, m.piece[0].len);
    if (m.image) put(m.image->data(), m.image->size());
    put(m.piece[1].p, m.piece[1].len);
    put(m.piece[2].p, m.piece[2].len);

    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = m.named ? 0 : UCP_AM_SEND_FLAG_REPLY;
    p.cb.send = send_done;
    p.user_data = op;
    ucs_status_ptr_t r =
        ucp_am_send_nbx(ep, am_id, op->hdr.data(), op->hdr.size(), op->data.data(), op->data.size(), &p);
    if (r == nullptr) {
        send_op_put(op);
        return UCX_IFUNC_OK;
    }
    if (UCS_PTR_IS_ERR(r)) {
        XRDMA_WARN("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
        send_op_put(op);
        return from_ucs(UCS_PTR_STATUS(r));
    }
    return UCX_IFUNC_INPROGRESS;
}

// Write message (@p hdr, @p piece) into ring @p r as a frame of @p kind: a
// small message of one piece (a few acks, a small reply) with inline copies
// (ring_write_small(), as send_invoke_short() writes a small invocation),
// anything else piece by piece. False: it does not go there (no active
// ring, too large, full).
inline __attribute__((always_inline)) bool ring_put(RingOut &r, uint16_t kind, const void *hdr, size_t hdr_len,
                                                    const Piece (&piece)[3])
{
    if (!piece[1].len && !piece[2].len && ring_write_small(r, kind, hdr, hdr_len, piece[0].p, piece[0].len))
        return true;
    return ring_write(r, kind, hdr, hdr_len, piece);
}

// Send @p m on @p ep: written into the receiver's ring when there is one
// it fits (ring.h), else as an active message, counted for the ring's order.
XRDMA_HOT ucx_ifunc_status_t transmit(ucx_ifunc_context *ctx, ucp_ep_h ep, uint16_t am_id, const Message &m)
{
    RingOut *ring = ring_out(ctx, ep);
    if (!ring || ring->state == RingOut::kOff) return transmit_am(ctx, ep, am_id, m);  // (no ring: nothing to count)
    if (!m.image && ring_put(*ring, am_id == ctx->am_invoke ? kAmInvoke : kAmReply, m.hdr, m.hdr_len, m.piece))
        return UCX_IFUNC_OK;
    // The frames written before this message are visible before it is
    // (ring_before_am() takes them first); free on x86, a barrier where
    // stores may become visible out of order.
    std::atomic_thread_fence(std::memory_order_release);
    ucx_ifunc_status_t st = transmit_am(ctx, ep, am_id, m);
    if (st == UCX_IFUNC_OK || st == UCX_IFUNC_INPROGRESS) ring_sent_am(ctx, ep, *ring);
    return st;
}

}  // namespace

ucx_ifunc_status_t send_control(ucx_ifunc_context *ctx, ucp_ep_h ep, const void *hdr, size_t hdr_len,
                                const void *data, size_t len)
{
    if (!ctx->failed_eps.empty() && ctx->failed_eps.count(ep)) return UCX_IFUNC_ERR_PEER;
    Message m{hdr, hdr_len, {{data, len}, {nullptr, 0}, {nullptr, 0}}, nullptr};
    return transmit_am(ctx, ep, ctx->am_reply, m);  // (not counted: the receiver takes it aside)
}

namespace {
void send_acks(ucx_ifunc_context *ctx, AckBatch &b);
}

ucx_ifunc_status_t send_invoke(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeHdr &hdr,
                               const std::string &entry,
                               std::shared_ptr<const std::vector<uint8_t>> image,
                               const void *args, size_t args_len, int *bound)
{
    // A failed endpoint may take a send and never complete it.
    if (!ctx->failed_eps.empty() && ctx->failed_eps.count(ep)) return UCX_IFUNC_ERR_PEER;
    Hash hash;
    memcpy(hash.data(), hdr.hash, hash.size());
    bool full = true;
    const int bind = binding_for_send(ctx, ep, hash, entry, &full);
    if (bound) *bound = bind;
    if (!full && !image)
        return send_invoke_short(ctx, ep, invoke_id(hdr), uint32_t(bind), args, args_len);
    ctx->stats.invocations_sent++;
    InvokeHdr h = hdr;
    h.image_len = image ? image->size() : 0;
    h.flags = image ? (h.flags | kHasCode) : (h.flags & ~kHasCode);
    h.entry_len = uint16_t(entry.size());
    h.args_len = uint32_t(args_len);
    h.bind = bind >= 0 ? uint32_t(bind) + 1 : 0;
    if (h.flags & kHasCode) ctx->stats.code_sends++;
    ctx->stats.bytes_sent += sizeof(h) + entry.size() + h.image_len + args_len;
    Message m{&h, sizeof(h), {{entry.data(), entry.size()}, {args, args_len}, {nullptr, 0}}, std::move(image)};
    ucx_ifunc_status_t st = transmit(ctx, ep, ctx->am_invoke, m);
    if (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS) return st;
    if (bind >= 0) binding_sent(ctx, ep, uint32_t(bind));
    if (h.flags & kHasCode) ctx->code_sent[ep].insert(hash);  // (only once it went: code_known_by())
    return st;
}

ucx_ifunc_status_t send_invoke_full(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeShortHdr &id, const Hash &hash,
                                    const std::string &entry, std::shared_ptr<const std::vector<uint8_t>> image,
                                    const void *args, size_t args_len, int *bound)
{
    const InvokeHdr h = make_invoke_hdr(id, hash.data());
    if (code_known_by(ctx, ep, hash)) image = nullptr;
    return send_invoke(ctx, ep, h, entry, std::move(image), args, args_len, bound);
}

XRDMA_HOT ucx_ifunc_status_t send_invoke_short(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeShortHdr &id, uint32_t index,
                                     const void *args, size_t args_len)
{
    // (A failed endpoint: send_invoke() refuses it, and forgets its bindings.)
    const InvokeShortHdr s = make_invoke_short_hdr(id.flags, id.origin_rank, id.hops, id.req_id, index);
    count_short_sent(ctx, args_len);
    // To a peer without a ring, mostly: the header in front of the
    // arguments, one piece from the stack (wire.h, kFrontHdr), and with
    // peers_by_rank this rank after them (kSenderRank).
    RingOut *ring = ring_out(ctx, ep);
    if (ring && ring_write_small(*ring, kAmInvoke, &s, sizeof(s), args, args_len)) return UCX_IFUNC_OK;
    const bool by_rank = ctx->params.peers_by_rank;
    const size_t len = kFrontHdr + args_len + (by_rank ? kSenderRank : 0);
    if ((!ring || ring->state == RingOut::kOff) && try_immediate(ctx, len)) {
        uint8_t buf[kFrontHdr + kImmediateMax];
        memcpy(buf, &s, kFrontHdr);
        memcpy(buf + kFrontHdr, args, args_len);
        if (by_rank) memcpy(buf + kFrontHdr + args_len, &ctx->params.rank, kSenderRank);
        ucx_ifunc_status_t st;
        if (send_immediate(ctx, ep, ctx->am_invoke, nullptr, 0, buf, len, &st, by_rank)) return st;
    }
    Message m{&s, sizeof(s), {{args, args_len}, {nullptr, 0}, {nullptr, 0}}, nullptr};
    return transmit(ctx, ep, ctx->am_invoke, m);
}

void send_reply(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id, ucx_ifunc_status_t status,
                const std::string &msg, const void *reply, size_t reply_len)
{
    // Earlier answers to this endpoint still batched go first: the origin
    // sees its completions in the order they happened.
    if (ctx->acks_held)
        for (AckBatch &b : ctx->acks)
            if (b.ep == ep && !b.ids.empty()) send_acks(ctx, b);
    ReplyHdr h = make_reply_hdr(kReplyResult, status, ctx->params.rank, req_id, uint32_t(reply_len),
                                uint16_t(std::min<size_t>(msg.size(), 1024)));
    ctx->stats.bytes_sent += sizeof(h) + h.msg_len + reply_len;
    Message m{&h, sizeof(h), {{msg.data(), h.msg_len}, {reply, reply_len}, {nullptr, 0}}, nullptr,
              bool(ctx->params.peers_by_rank)};
    transmit(ctx, ep, ctx->am_reply, m);
}

namespace {
// Batch @p b as a ring's compact frame of acks (kRingAcks), if the
// endpoint has a ring it fits: its short header and the req_ids
// (ring_put()); false: send it as a reply.
inline bool ring_acks(ucx_ifunc_context *ctx, AckBatch &b)
{
    RingOut *ring = ring_out(ctx, b.ep);
    if (!ring || ring->state != RingOut::kActive) return false;
    const RingAcksHdr a{ctx->params.rank, uint32_t(b.ids.size())};
    const Piece pieces[3] = {{b.ids.data(), b.ids.size() * sizeof(uint64_t)}, {nullptr, 0}, {nullptr, 0}};
    return ring_put(*ring, kRingAcks, &a, sizeof(a), pieces);
}

XRDMA_HOT void send_acks(ucx_ifunc_context *ctx, AckBatch &b)
{
    if (ring_acks(ctx, b)) {
        ctx->stats.bytes_sent += sizeof(RingAcksHdr) + b.ids.size() * sizeof(uint64_t);
    } else {
        ReplyHdr h = make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, ctx->params.rank, 0,
                                    uint32_t(b.ids.size() * sizeof(uint64_t)));
        ctx->stats.bytes_sent += sizeof(h) + h.reply_len;
        Message m{&h, sizeof(h), {{b.ids.data(), h.reply_len}, {nullptr, 0}, {nullptr, 0}}, nullptr,
                  bool(ctx->params.peers_by_rank)};
        transmit(ctx, b.ep, ctx->am_reply, m);
    }
    if (b.due) ctx->acks_waiting -= b.ids.size();
    ctx->acks_held -= b.ids.size();
    b.due = false;
    b.ids.clear();
}

__attribute__((noinline)) AckBatch &ack_batch_lookup(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    for (AckBatch &b : ctx->acks)
        if (b.ep == ep) return *(ctx->acks_last = &b);
    ctx->acks.push_back(AckBatch{ep, {}});  // (may move the others: the memo is this one)
    return *(ctx->acks_last = &ctx->acks.back());
}
inline AckBatch &ack_batch(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    if (ctx->acks_last && ctx->acks_last->ep == ep) return *ctx->acks_last;
    return ack_batch_lookup(ctx, ep);
}

// Batch @p b goes at the end of this pass (flush_acks()).
void make_due(ucx_ifunc_context *ctx, AckBatch &b)
{
    if (b.due) return;
    b.due = true;
    ctx->acks_waiting += b.ids.size();
}
}  // namespace

XRDMA_HOT void queue_ack(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id, bool lazy)
{
    AckBatch &b = ack_batch(ctx, ep);
    b.ids.push_back(req_id);
    ctx->acks_held++;
    if (b.due)
        ctx->acks_waiting++;
    else if (!lazy || req_id <= b.asked)
        make_due(ctx, b);
    if (b.ids.size() >= (b.due ? kMaxAcks : kLazyAcks)) send_acks(ctx, b);
}

void flush_acks(ucx_ifunc_context *ctx)
{
    if (!ctx->acks_waiting) return;
    for (AckBatch &b : ctx->acks)
        if (b.due && !b.ids.empty()) send_acks(ctx, b);
}

void ack_request(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t upto)
{
    AckBatch &b = ack_batch(ctx, ep);
    b.asked = std::max(b.asked, upto);
    if (!b.ids.empty()) send_acks(ctx, b);
}

ucx_ifunc_status_t send_ack_request(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    if (!ctx->failed_eps.empty() && ctx->failed_eps.count(ep)) return UCX_IFUNC_ERR_PEER;
    const AckRequestHdr r{kAckRequestMagic, kWireVersion, 0, 0, ctx->params.rank, 0, ctx->next_req_id - 1};
    ctx->stats.bytes_sent += sizeof(r);
    Message m{&r, sizeof(r), {{nullptr, 0}, {nullptr, 0}, {nullptr, 0}}, nullptr};
    return transmit(ctx, ep, ctx->am_invoke, m);  // (behind the invocations it asks about)
}

void send_need(ucx_ifunc_context *ctx, ucp_ep_h ep, const Incoming &in, ReplyKind kind)
{
    uint64_t req_id;  // at the same place in both invocation headers
    static_assert(offsetof(InvokeHdr, req_id) == offsetof(InvokeShortHdr, req_id), "wire layout");
    memcpy(&req_id, in.hdr.data() + offsetof(InvokeHdr, req_id), sizeof(req_id));
    ReplyHdr h = make_reply_hdr(kind, UCX_IFUNC_ERR_NEED_CODE, ctx->params.rank, req_id);
    ctx->stats.bytes_sent += sizeof(h) + in.hdr.size() + in.data.size();
    Message m{&h, sizeof(h), {{in.hdr.data(), in.hdr.size()}, {in.data.data(), in.data.size()}, {nullptr, 0}},
              nullptr, bool(ctx->params.peers_by_rank)};
    transmit(ctx, ep, ctx->am_reply, m);
}

bool code_known_by(ucx_ifunc_context *ctx, ucp_ep_h ep, const Hash &h)
{
    // The same endpoint and image as last time (a stream of forwards or
    // invocations): known without the two table lookups.
    if (ctx->known_ep == ep && ep && HashKey::same(ctx->known_hash, h)) return true;
    auto sent = ctx->code_sent.find(ep);
    if (sent == ctx->code_sent.end() || !sent->second.count(h)) return false;
    ctx->known_ep = ep;
    ctx->known_hash = h;
    return true;
}

void send_withdraw(ucx_ifunc_context *ctx, ucp_ep_h ep, int32_t origin_rank, uint64_t req_id)
{
    if (!ep || (!ctx->failed_eps.empty() && ctx->failed_eps.count(ep))) return;
    const InvokeWithdrawHdr w{kInvokeWithdrawMagic, kWireVersion, 0, 0, origin_rank, 0, req_id};
    ctx->stats.bytes_sent += sizeof(w);
    Message m{&w, sizeof(w), {{nullptr, 0}, {nullptr, 0}, {nullptr, 0}}, nullptr};
    transmit(ctx, ep, ctx->am_invoke, m);  // (behind the invocations sent there before it)
}

}  // namespace xrdma
