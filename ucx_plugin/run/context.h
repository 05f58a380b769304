// Internal state of a ucx_ifunc context (origin and target sides).
// And of one call (xrdma_ctx: what an ifunc's ctx points to; its header
// fields are also the invocation's identity from hop to hop, invoke_id()),
// the send memo of an entry (SendMemo: the endpoint used last and a few
// others, so that a warm send looks nothing up), and the inline parts of
// every dispatch (dispatch_entry(), run_chain()).
#pragma once

#include "xrdma_common/bytes.h"
#include "load/code_cache.h"
#include "run/fault.h"
#include "xrdma_common/free_list.h"
#include "image/image.h"
#include "run/pending.h"
#include "ucx_ifunc.h"
#include "wire/wire.h"
#include "ucx_ifunc/runtime.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace xrdma {
struct Rings;
struct RingOut;
struct BoundEntry;

// Where an image and entry were last sent (the rank, for a forward; the
// endpoint; the index they are bound to there), valid while the context's
// bound_epoch is @p epoch: a stream of sends to the same place goes in the
// short form without any lookup. Kept by an origin's registered entry and
// by a target's binding (its forwards).
struct LastSend {
    int rank = -1;
    ucp_ep_h ep = nullptr;
    uint32_t index = 0;
    uint64_t epoch = 0;
    RingOut *ring = nullptr;  // ep's (ring_out()), once looked up

    bool to_ep(ucp_ep_h e, uint64_t now) const { return ep == e && epoch == now; }
    bool to_rank(int r, uint64_t now) const { return rank == r && epoch == now; }
    // After send_invoke() to @p e (@p r) returned @p st and bound @p bind
    // there (-1: none).
    void record(ucp_ep_h e, int r, int bind, ucx_ifunc_status_t st, uint64_t now)
    {
        if (bind < 0 || (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS)) return;
        if (ep != e) ring = nullptr;
        ep = e;
        rank = r;
        index = uint32_t(bind);
        epoch = now;
    }
    void forget() { *this = LastSend(); }
};

// A few more places an endpoint-keyed memo keeps, behind the one it tests
// first (the place used last, which a stream to one place always finds): a
// chase over several ranks, an origin's round of X-ops over several
// targets, several senders' invocations at a target. Direct-mapped by rank
// or endpoint address: two places on one way take turns, and a miss takes
// the full path, as with one place.
constexpr unsigned kMemoWays = 4;
inline unsigned memo_way(int rank) { return unsigned(rank) % kMemoWays; }
inline unsigned memo_way(const void *ep)
{
    static_assert(kMemoWays == 4, "two bits");  // (Fibonacci hashing: the top bits of address * 2^64 / phi)
    return unsigned((reinterpret_cast<uintptr_t>(ep) * 0x9E3779B97F4A7C15ull) >> 62);
}

// An endpoint-keyed memo of tables: the one used last (last_ep, last),
// tested first where it is used, and one more per way (memo_way()).
template <typename T>
struct EpMemo {
    ucp_ep_h last_ep = nullptr;
    T *last = nullptr;
    ucp_ep_h way_ep[kMemoWays] = {};
    T *way[kMemoWays] = {};

    // @p ep's table if it is in its way (nullptr: not there).
    T *in_way(ucp_ep_h ep) const
    {
        const unsigned w = memo_way(ep);
        return way_ep[w] == ep ? way[w] : nullptr;
    }
    // @p t, @p ep's table, becomes the last one; the previous one goes to its way.
    T *use(ucp_ep_h ep, T *t)
    {
        if (last_ep) {
            const unsigned v = memo_way(last_ep);
            way_ep[v] = last_ep;
            way[v] = last;
        }
        last_ep = ep;
        return last = t;
    }
    void clear() { *this = EpMemo(); }
};

// LastSend for several places: `last`, tested first, and the others by way
// (a forward's by destination rank, an origin's by endpoint). A hit in a way
// becomes `last`, the previous one goes back to its own way.
struct SendMemo {
    LastSend last;
    LastSend way[kMemoWays];

    LastSend *to_rank(int r, uint64_t now)
    {
        if (__builtin_expect(last.to_rank(r, now), 1)) return &last;
        return from_way(way[memo_way(r)].to_rank(r, now) ? &way[memo_way(r)] : nullptr, memo_way(last.rank));
    }
    LastSend *to_ep(ucp_ep_h e, uint64_t now)
    {
        if (__builtin_expect(last.to_ep(e, now), 1)) return &last;
        return from_way(way[memo_way(e)].to_ep(e, now) ? &way[memo_way(e)] : nullptr, memo_way(last.ep));
    }
    // LastSend::record() for the place of rank @p r / endpoint @p e.
    void record_rank(ucp_ep_h e, int r, int bind, ucx_ifunc_status_t st, uint64_t now)
    {
        if (last.rank != r && recorded(bind, st)) park(memo_way(last.rank));
        last.record(e, r, bind, st, now);
    }
    void record_ep(ucp_ep_h e, int bind, ucx_ifunc_status_t st, uint64_t now)
    {
        if (last.ep != e && recorded(bind, st)) park(memo_way(last.ep));
        last.record(e, -1, bind, st, now);
    }
    void forget()
    {
        last.forget();
        for (LastSend &w : way) w.forget();
    }

private:
    static bool recorded(int bind, ucx_ifunc_status_t st)
    {
        return bind >= 0 && (st == UCX_IFUNC_OK || st == UCX_IFUNC_INPROGRESS);
    }
    // `last` into its way @p w (a fresh `last` follows).
    void park(unsigned w)
    {
        if (last.ep) way[w] = last;
        last.forget();
    }
    // A hit @p hit in a way (nullptr: a miss) made `last`; `last` parked in
    // its way @p w first (a copy of the hit first: it may be that way).
    LastSend *from_way(LastSend *hit, unsigned w)
    {
        if (!hit) return nullptr;
        const LastSend h = *hit;
        park(w);
        last = h;
        return &last;
    }
};

}  // namespace xrdma

// A registered image entry at the origin.
struct ucx_ifunc {
    ucx_ifunc_context *ctx;
    std::shared_ptr<const std::vector<uint8_t>> image;
    xrdma::Hash hash;
    std::string entry;
    // Local execution (ucx_ifunc_invoke_local): the code loaded here, its
    // entry and whether it may run outside its target (ucx_ifunc_movable()).
    std::shared_ptr<xrdma::CachedImage> local;
    void *local_fn = nullptr;
    ucx_ifunc_status_t movable = UCX_IFUNC_INPROGRESS;  // not yet decided
    std::string why_pinned;
    ucx_ifunc_status_t stays = UCX_IFUNC_INPROGRESS;  // ucx_ifunc_stays(), once decided
    xrdma::SendMemo out;  // where it was last sent (by endpoint)
};

// Per-invocation context handed to the entry function (xrdma_ctx_t).
struct xrdma_ctx {
    ucx_ifunc_context *context;
    xrdma::InvokeShortHdr *hdr;       // the invocation's identity (invoke_id()); nullptr in put-and-poll mode
    xrdma::CachedImage *image;         // while it runs (its caller holds a reference)
    const std::string *entry;          // its name (the invocation's, alive while it runs)
    ucp_ep_h reply_ep;                 // direct sender
    void *target_args;                 // put-and-poll mode
    void *layer_data;                  // for the layer above
    bool replied, forwarded;
    std::vector<uint8_t> reply;        // sent after the entry returns
    int fwd_rank;
    bool fwd_stays;                    // the forward continues in this process (xrdma_forward() asked)
    xrdma::Bytes fwd_args;
    const uint8_t *payload;            // what the dispatch hook was given
    size_t fwd_prefix;                 // bytes of it kept in front of forwards
    // Set by ucx_ifunc_ctx_fail() or on a fault; UCX_IFUNC_INPROGRESS: the
    // layer deferred it (ucx_ifunc_ctx_defer()): kept, not answered.
    ucx_ifunc_status_t fail_status;
    std::string fail_message;
    xrdma_ifunc_entry_t real_entry;    // what the guarded trampoline calls
    int exec_rank;                     // whose memory it runs on (the peer)
    int shown_rank;                    // exec_rank as its function sees it (xrdma_rank(): in the view's ranks)
    bool local;                        // started here by ucx_ifunc_invoke_local()
    // The ranks its function sees (ucx_ifunc_ctx_set_view()); nullptr: the
    // context's own. Set by the dispatch hook, cleared when a dispatch starts.
    const ucx_ifunc_view_t *view;
    // Hops of this dispatch that continued here (run_chain): their
    // arguments, and how many there were.
    xrdma::Bytes hop_args;
    unsigned hops_here;
    // The binding the invocation arrived by (nullptr: none), whose last
    // forward says where the short form goes; and a forward staged in a
    // ring slot by xrdma_forward() (nullptr: none, or in fwd_args), which
    // the invocation publishes if its ifunc ends well and drops otherwise.
    xrdma::BoundEntry *bound;
    xrdma::RingOut *staged;

    // Ready for the next call of an entry within one invocation (a forward
    // that continues in this process): what a call sets goes back to its
    // initial value; the buffers keep their capacity (no allocation per
    // call) and what the invocation set (context, image, entry) stays.
    void next_call(int rank)
    {
        replied = forwarded = fwd_stays = false;
        reply.clear();
        fwd_rank = -1;  // (fwd_args keeps its size: xrdma_forward() resizes it, mostly to the same)
        fwd_prefix = 0;
        layer_data = nullptr;
        fail_status = UCX_IFUNC_OK;
        if (!fail_message.empty()) fail_message.clear();
        exec_rank = shown_rank = rank;
    }
};

namespace xrdma {
// Entries running on this thread, of any context (dispatch_entry()): no
// message of any context is handled where it arrives meanwhile (one ifunc
// at a time per thread: the fault guard is the thread's).
extern __thread int t_dispatching __attribute__((tls_model("initial-exec")));
}  // namespace xrdma

namespace xrdma {

// Bytes seen where they are (a span).
struct View {
    const uint8_t *p = nullptr;
    size_t n = 0;
    const uint8_t *data() const { return p; }
    size_t size() const { return n; }
};

// A message that arrived (an active message or a ring frame). Handled right
// where it arrived when ucx_ifunc_progress() of its context runs and nothing
// is queued before it (hdr and data then view UCX's or the ring's buffers);
// else a QueuedIncoming.
struct Incoming {
    uint16_t am_id;
    View hdr, data;
    ucp_ep_h reply_ep;
    bool ready;  // false while a rendezvous receive is in flight
    ucx_ifunc_status_t recv_status;
};
// A message copied into buffers of its own, run later from progress in
// arrival order (which keeps per-origin order, also across rendezvous), or
// parked for a compile (compile_queue.h).
struct QueuedIncoming : Incoming {
    std::vector<uint8_t> hdr_buf;
    Bytes data_buf;
};

// binding.cc: at a target, the image and entry a sender bound to an index
// on its endpoint (InvokeShortHdr), resolved; valid while the cache still
// holds that image (img and serial: a binding does not keep code alive, the
// cache's bound holds).
struct BoundEntry {
    Hash hash{};
    std::string entry;
    const CachedImage *img = nullptr;
    uint64_t serial = 0;
    void *fn = nullptr;
    SendMemo out;  // where it was forwarded (by rank)
};
// compat/poll_warm.h: the last frame without code that frame_poll()
// checked and looked up the slow way, by the words that lay it out and name
// its code (all of its header but the ready word, nonce and checksum, then
// its entry name and padding up to the payload), and what it resolved to. A
// frame with the same words needs neither the header checks nor the lookup
// while the code cache keeps that image (nothing put into it or dropped from
// it since: cache_changes) and nothing is quarantined.
struct PollWarm {
    using Lane = uint64_t __attribute__((vector_size(16)));
    static constexpr size_t kMaxName = 48;  // longer entry names are not kept
    Lane want[(sizeof(FrameHdr) + kMaxName) / sizeof(Lane)] = {};  // the frame's first bytes
    unsigned name_lanes = 0;  // of want, after the header (0: nothing kept)
    uint32_t frame_size = 0, args_off = 0, args_len = 0;  // (as in want)
    uint8_t flags = 0;
    uint64_t cache_changes = 0;
    const CachedImage *img = nullptr;
    void *fn = nullptr;
    const std::string *entry = nullptr;  // the entry's name, kept by img
};
// At a sender, what it bound on an endpoint; announce: the next invocation
// of it goes in full again (binds anew), as after a need-bind answer.
struct BoundSlot {
    Hash hash{};
    std::string entry;
    bool announce = true;
};
// At a target, the successful answers without reply bytes owed to one
// sender (queue_ack()).
struct AckBatch {
    ucp_ep_h ep;
    std::vector<uint64_t> ids;
    bool due = false;    // goes at the end of this pass: not only answers the sender lets wait
    uint64_t asked = 0;  // the sender asked for its answers up to this request id
};

}  // namespace xrdma

struct ucx_ifunc_context {
    ucx_ifunc_context_params_t params{};
    bool am_enabled;
    uint16_t am_invoke, am_reply;  // AM ids of this context
    int in_dispatch = 0;  // >0 while an entry runs: no nested dispatch
    // frame_poll()'s private copy of a frame (kept for its capacity).
    std::vector<uint8_t> poll_copy;
    bool in_progress = false;  // inside ucx_ifunc_progress(): handlers may run messages
    bool in_handler = false;  // a message is being handled inside UCX's progress
    bool spin = true;  // progress may linger on the rings and wait on them (ucx_ifunc_set_spin())
    bool queued_listed = false;  // in the list of contexts with queued messages (context.cc)
    // Some peer writes into a ring here (ring.cc): its active messages wait
    // for its earlier frames (ring_before_am()). (In what was padding.)
    bool rings_in = false;
    // Smallest message size an immediate send was refused for (transmit()).
    size_t imm_fail_min = SIZE_MAX;
    unsigned imm_skipped = 0;
    uint64_t next_req_id = 1;
    // Invocations in flight, by request id (pending.h).
    xrdma::PendingTable pending;
    // The peer an answer went to last (route_to_origin); reset when peers
    // change.
    int origin_last = -1;
    ucp_ep_h origin_last_ep = nullptr;
    // Which image hashes each peer endpoint has been sent; the last pair
    // found there (code_known_by; reset whenever an entry is removed).
    std::unordered_map<ucp_ep_h, std::unordered_set<xrdma::Hash, xrdma::HashKey>> code_sent;
    ucp_ep_h known_ep = nullptr;
    xrdma::Hash known_hash{};
    // Short invocations (binding.cc): per sender endpoint at a target, per
    // destination endpoint at a sender; the endpoint and table used last.
    std::unordered_map<ucp_ep_h, std::vector<xrdma::BoundEntry>> bound_in;
    std::unordered_map<ucp_ep_h, std::vector<xrdma::BoundSlot>> bound_out;
    // (A target with several senders finds theirs without the map.)
    xrdma::EpMemo<std::vector<xrdma::BoundEntry>> bound_in_memo;
    ucp_ep_h bound_out_ep = nullptr;
    std::vector<xrdma::BoundSlot> *bound_out_last = nullptr;
    // Changes whenever a send memo (LastSend) may no longer hold:
    // peers change, a binding must be announced again, code_sent forgets.
    uint64_t bound_epoch = 1;
    uint32_t bound_out_index = 0;  // the slot of bound_out[bound_out_ep] used last
    // Images registered here (origin side), by hash, for need-code resends.
    std::unordered_map<xrdma::Hash, std::weak_ptr<const std::vector<uint8_t>>, xrdma::HashKey> registered;
    // Successful answers without reply bytes, per origin endpoint, sent as
    // one kReplyAcks message at the end of a progress pass (flush_acks), or,
    // answers the sender lets wait (kLazyAck), when it asks or kLazyAcks are
    // held (queue_ack()).
    std::vector<xrdma::AckBatch> acks;
    xrdma::AckBatch *acks_last = nullptr;  // the batch queue_ack() used last (a stream answers one sender)
    size_t acks_waiting = 0;  // ids in due batches: a pass with none skips flush_acks()
    size_t acks_held = 0;     // ids in all batches, due or waiting to be asked for
    // Endpoints reported failed (ucx_ifunc_peer_failed): no more sends.
    std::unordered_set<ucp_ep_h> failed_eps;
    // Images whose code faulted here: refused from then on.
    std::unordered_set<xrdma::Hash, xrdma::HashKey> quarantined;
    xrdma::CodeCache cache;
    xrdma::PollWarm poll_warm;
    std::deque<std::unique_ptr<xrdma::QueuedIncoming>> incoming;
    // Handled messages kept for reuse: their buffers keep their capacity, so
    // a steady stream of messages allocates nothing.
    xrdma::SizedFreeList<xrdma::QueuedIncoming, 64, 16> spare;
    // The invocation state handed to entries (one runs at a time).
    xrdma_ctx xctx{};
    ucx_ifunc_stats_t stats{};
    // Rings to and from peers (ring.h); nullptr: rings are off. The ring
    // towards the endpoint last looked up (ring_out()).
    xrdma::Rings *rings = nullptr;
    xrdma::EpMemo<xrdma::RingOut> ring_out_memo;
    // The peers (ucx_ifunc_peer_add()) by rank, nullptr where none: where
    // answers and forwards go, and the sender a message names
    // (peers_by_rank). (Last: a member added in the middle moves the hot
    // ones further from the start, and their accesses take longer
    // instructions.)
    std::vector<ucp_ep_h> peer_eps;

    explicit ucx_ifunc_context(size_t cache_capacity) : cache(cache_capacity) {}
};

namespace xrdma {

// A rank the peer table has no endpoint for: connected on demand through
// the layer's connect hook (context.cc), else nullptr.
ucp_ep_h peer_connect(ucx_ifunc_context *ctx, int32_t rank);
// The endpoint of peer @p rank of @p ctx, or nullptr: not a peer (never
// added nor connectable, or failed since).
inline ucp_ep_h peer_ep(ucx_ifunc_context *ctx, int32_t rank)
{
    if (__builtin_expect(rank >= 0 && size_t(rank) < ctx->peer_eps.size(), 1)) {
        const ucp_ep_h ep = ctx->peer_eps[size_t(rank)];
        if (__builtin_expect(ep != nullptr, 1)) return ep;
    }
    return peer_connect(ctx, rank);
}

// The rank of peer @p peer as the function of @p x sees it (its view's), and
// the peer of its rank @p rank (-1: not in the view).
inline int view_rank(const xrdma_ctx *x, int peer)
{
    const ucx_ifunc_view_t *v = x->view;
    return __builtin_expect(v == nullptr || v->rank_of == nullptr, 1) ? peer : v->rank_of(v, peer);
}
inline int view_peer(const xrdma_ctx *x, int rank)
{
    const ucx_ifunc_view_t *v = x->view;
    if (__builtin_expect(v == nullptr, 1)) return rank;
    if (rank < 0 || rank >= v->size) return -1;
    return v->peer_of ? v->peer_of[rank] : rank;
}

// Send an invocation (header + entry + optional image + args) on @p ep:
// the short form if the image and entry are bound there and announced.
// Once it went out with the image, @p ep counts as having the code.
// @p bound (may be null): the index they are bound to on @p ep, -1 if none.
ucx_ifunc_status_t send_invoke(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeHdr &hdr,
                               const std::string &entry,
                               std::shared_ptr<const std::vector<uint8_t>> image,
                               const void *args, size_t args_len, int *bound = nullptr);
// send_invoke() of invocation @p id of image @p hash (whose bytes are
// @p image): with the image unless @p ep has it already (code_known_by()).
// The origin's first send of an ifunc to an endpoint, and a forward to a
// rank its binding did not send to before.
ucx_ifunc_status_t send_invoke_full(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeShortHdr &id, const Hash &hash,
                                    const std::string &entry, std::shared_ptr<const std::vector<uint8_t>> image,
                                    const void *args, size_t args_len, int *bound);
// Send the short form of invocation @p hdr with index @p index on @p ep.
ucx_ifunc_status_t send_invoke_short(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeShortHdr &id, uint32_t index,
                                     const void *args, size_t args_len);
// Sender side, from every send: the ring towards @p ep (nullptr: rings are
// off, for this context or this endpoint); inline for the endpoint last
// looked up, else ring_out_find() (ring.cc).
RingOut *ring_out_find(ucx_ifunc_context *ctx, ucp_ep_h ep);
inline RingOut *ring_out(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    if (!ctx->rings) return nullptr;
    if (ctx->ring_out_memo.last_ep == ep) return ctx->ring_out_memo.last;
    return ring_out_find(ctx, ep);
}

// A short invocation went (send_invoke_short(), or published from a ring
// slot where xrdma_forward() staged it): counted.
inline void count_short_sent(ucx_ifunc_context *ctx, size_t args_len)
{
    ctx->stats.invocations_sent++;
    ctx->stats.bytes_sent += sizeof(InvokeShortHdr) + args_len;
}

// target.cc: make the forward @p x just made the next hop of its chain in
// this process, if the layer has the rank's memory here (1: it continues
// here; 0: it travels as a message; -1: the layer refused).
int continue_here(ucx_ifunc_context *ctx, xrdma_ctx *x);

// The entry of a dispatch, and the forwards that continue in this process
// through the layer's continue_at hook, one after the other: what
// guarded_entry runs under fault containment (inline: it is the frame
// around every ifunc call).
inline int run_chain(xrdma_ctx *x, const void *args, size_t len)
{
    int rc = x->real_entry(x, args, len);
    // (Most calls end without a forward that stays here: fwd_stays is set
    // only by xrdma_forward(), and cleared for every call.)
    if (__builtin_expect(!x->fwd_stays, 1)) return rc;
    ucx_ifunc_context *ctx = x->context;
    if (!ctx->params.continue_at || !x->hdr) return rc;
    while (rc == 0 && x->forwarded && x->fwd_stays && x->fail_status == UCX_IFUNC_OK) {
        const int next = continue_here(ctx, x);
        if (next <= 0) return next < 0 ? -1 : rc;
        rc = x->real_entry(x, x->hop_args.data() + x->fwd_prefix, x->hop_args.size() - x->fwd_prefix);
    }
    return rc;
}
// Send a result reply (status, message, reply bytes) on @p ep.
void send_reply(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id, ucx_ifunc_status_t status,
                const std::string &msg, const void *reply, size_t reply_len);
// Answer invocation @p req_id with success and no reply bytes: batched
// with others to the same endpoint until flush_acks() (or a full batch);
// @p lazy (kLazyAck, not forwarded): until the sender asks for it
// (ack_request()) or kLazyAcks are held for it, unless it asked already.
void queue_ack(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id, bool lazy = false);
void flush_acks(ucx_ifunc_context *ctx);
// The sender on @p ep asked for its answers up to invocation @p upto
// (kAckRequestMagic): those held go now, later ones as they finish.
void ack_request(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t upto);
// Send that request to the target on @p ep (ucx_ifunc_request_acks()).
ucx_ifunc_status_t send_ack_request(ucx_ifunc_context *ctx, ucp_ep_h ep);
// Ask the sender of an invocation for its code (kReplyNeedCode), or to
// resend a short one in full (kReplyNeedBind): the invocation goes back.
void send_need(ucx_ifunc_context *ctx, ucp_ep_h ep, const Incoming &in, ReplyKind kind);
// Tell the target on @p ep that invocation @p req_id (of origin
// @p origin_rank), which it asked to be resent, will not be: its hole
// closes (wire.h, InvokeWithdrawHdr).
void send_withdraw(ucx_ifunc_context *ctx, ucp_ep_h ep, int32_t origin_rank, uint64_t req_id);
// Send a control message (@p hdr, @p data) on the reply id, always as an
// active message and outside the rings' count (ring.cc).
ucx_ifunc_status_t send_control(ucx_ifunc_context *ctx, ucp_ep_h ep, const void *hdr, size_t hdr_len,
                                const void *data, size_t len);

// Target side: run one arrived invocation.
void target_handle_invoke(ucx_ifunc_context *ctx, Incoming &in);
// The same for one whose header is an InvokeShortHdr's size (a warm
// invocation, or a sender's withdrawal), handled where it arrived
// (arrive()): its @p hdr, its @p len bytes of @p data, its sender.
void target_handle_short(ucx_ifunc_context *ctx, const uint8_t *hdr, const uint8_t *data, size_t len,
                         ucp_ep_h reply_ep);
// End an arrived invocation (full or short form) that will not run with
// @p st and @p why, at its origin: as any answer goes (its sender, or the
// origin once forwarded; here if this is the origin).
void refuse_invocation(ucx_ifunc_context *ctx, const Incoming &in, ucx_ifunc_status_t st, const std::string &why);
// Origin side: handle one arrived reply.
void origin_handle_reply(ucx_ifunc_context *ctx, Incoming &in);
// Origin side: end the @p n requests whose req_ids (uint64 each, as they
// travel) are at @p ids, answered by @p rank with success and no reply
// bytes (a kReplyAcks reply, or a ring's kRingAcks frame).
void origin_complete_acks(ucx_ifunc_context *ctx, int rank, const uint8_t *ids, size_t n);
// Origin side: end request @p req_id of this context with an answer made here.
void complete_local(ucx_ifunc_context *ctx, uint64_t req_id, ucx_ifunc_status_t status, const std::string &msg,
                    const void *reply, size_t reply_len);
// Image bytes for hash @p h, from the registry or the cache; nullptr if gone.
std::shared_ptr<const std::vector<uint8_t>> find_image_bytes(ucx_ifunc_context *ctx, const Hash &h);
// Whether @p ep was sent the image with hash @p h (send_invoke() records it
// once an invocation that carried it went out).
bool code_known_by(ucx_ifunc_context *ctx, ucp_ep_h ep, const Hash &h);

// binding.cc. Target: the binding @p index of sender @p ep, if it still
// names a cached image (else nullptr, and it is forgotten); bind (or
// unbind, @p img null) @p index of @p ep (the binding, nullptr if unbound). Sender: the index to name image
// @p hash and @p entry by on @p ep (-1: none left), and whether this
// invocation must go in full (@p full: first use, or announce again);
// binding_sent() once a full one with the index went out; the slot of an
// index (nullptr if never bound), marked to be announced again. Forget what
// concerns @p ep (it failed); forget the target's bindings (the code cache
// was flushed: they must not keep its code loaded).
BoundEntry *binding_find_slow(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index);
inline BoundEntry *binding_find(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index)
{
    // (Inline: the same sender as last time, naming the image at the front
    // of the cache, the usual case of a stream of warm invocations.)
    const auto &m = ctx->bound_in_memo;
    if (m.last_ep == ep && m.last && index < m.last->size()) {
        BoundEntry &b = (*m.last)[index];
        if (b.img && b.img == ctx->cache.front() && b.img->serial == b.serial) return &b;
    }
    return binding_find_slow(ctx, ep, index);
}
BoundEntry *binding_set(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index, const Hash &hash,
                        const std::string &entry, const std::shared_ptr<CachedImage> &img, void *fn);
int binding_for_send(ucx_ifunc_context *ctx, ucp_ep_h ep, const Hash &hash, const std::string &entry, bool *full);
void binding_sent(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index);
const BoundSlot *binding_reannounce(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index);
void bindings_forget(ucx_ifunc_context *ctx, ucp_ep_h ep);
void bindings_unload(ucx_ifunc_context *ctx);

// code_lookup.cc, the step every path that runs an image shares: whether
// image @p hash is quarantined here (then @p why says so); its code and
// entry @p entry, from the cache or loaded from @p code (@p code_len bytes;
// nullptr: none came, UCX_IFUNC_ERR_NEED_CODE).
bool refuse_quarantined(ucx_ifunc_context *ctx, const Hash &hash, std::string *why);
// Quarantine image @p hash here: its code faulted or ran past its time (@p why).
void quarantine(ucx_ifunc_context *ctx, const Hash &hash, const std::string &why);
ucx_ifunc_status_t find_entry(ucx_ifunc_context *ctx, const Hash &hash, const uint8_t *code, size_t code_len,
                              const std::string &entry, std::shared_ptr<CachedImage> *img, void **fn,
                              std::string *why);

// receive.cc: install (or remove) the context's AM handlers; forget it in
// the list of contexts with queued messages (before it is deleted).
ucs_status_t set_am_handlers(ucx_ifunc_context *ctx, bool on);
void forget_queued(ucx_ifunc_context *ctx);

// dispatch.cc: run an entry through the context's dispatch hook; and what
// came of it, for every path alike: the failure a contained fault, a
// timeout or the layer set, else the entry's own non-zero result
// (UCX_IFUNC_ERR_RETURN), else UCX_IFUNC_OK. (Inline: the success of
// every call; entry_failure() says what went wrong otherwise.)
ucx_ifunc_status_t entry_failure(const xrdma_ctx &x, int rc, std::string *why);
inline bool entry_ran_well(const xrdma_ctx &x, int rc) { return rc == 0 && x.fail_status == UCX_IFUNC_OK; }
inline ucx_ifunc_status_t entry_outcome(const xrdma_ctx &x, int rc, std::string *why)
{
    return entry_ran_well(x, rc) ? UCX_IFUNC_OK : entry_failure(x, rc, why);
}
// (dispatch_entry() inline: it brackets every call. After a failure,
// dispatch_failed() quarantines the image of a fault or timeout; without a
// hook, dispatch_direct() is the dispatch: ucx_ifunc_context_create() puts
// it in params.dispatch.)
__attribute__((cold)) int dispatch_failed(ucx_ifunc_context *ctx, const xrdma_ctx &x, int rc);
int dispatch_direct(void *, xrdma_ctx *x, int (*entry)(xrdma_ctx *, const void *, size_t), const void *args,
                    size_t len);
inline int dispatch_entry(ucx_ifunc_context *ctx, xrdma_ctx *x, void *entry, const void *args, size_t args_len)
{
    x->payload = static_cast<const uint8_t *>(args);
    x->real_entry = reinterpret_cast<xrdma_ifunc_entry_t>(entry);
    x->view = nullptr;  // (shown_rank is exec_rank: next_call())
    t_dispatching++;
    ctx->in_dispatch++;
    const int rc = ctx->params.dispatch(ctx->params.dispatch_arg, x, guarded_entry, args, args_len);
    const ucx_ifunc_status_t failed = x->fail_status;  // (read once, before the counters' stores)
    t_dispatching--;
    ctx->in_dispatch--;
    ctx->stats.executed++;
    if (__builtin_expect(failed != UCX_IFUNC_OK, 0)) return dispatch_failed(ctx, *x, rc);
    return rc;
}

ucx_ifunc_status_t from_ucs(ucs_status_t st);

}  // namespace xrdma
