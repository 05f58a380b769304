// Receiving and progress: the UCP active-message handlers (a message runs
// right in the handler when nothing waits before it, else it is queued with
// its own copy, large ones fetched by rendezvous), the queue of every context
// of a worker, and ucx_ifunc_progress().
// Where UCX gave no reply endpoint, the sender comes from the peer table:
// by the rank an invocation carries (peers_by_rank) or an answer's
// ReplyHdr names. Progress looks at the rings a little longer after a pass
// that ran ring invocations (XRDMA_RING_LINGER), and between passes while a
// caller waits for answers (ucx_ifunc_progress_wait(), XRDMA_RING_WAIT);
// ucx_ifunc_set_spin() turns both off.
#include "run/context.h"

#include "run/arrive.h"
#include "load/compile_queue.h"

#include "run/fault.h"
#include "wire/ring.h"
#include "xrdma_common/cpu.h"
#include "xrdma_common/free_list.h"
#include "xrdma_common/log.h"
#include "xrdma_common/hot.h"

#include <cstddef>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

using namespace xrdma;

namespace xrdma {

__thread ucp_worker_h t_serving = nullptr;  // (arrive.h)

namespace {

void rndv_done(void *request, ucs_status_t status, size_t, void *user_data)
{
    auto *in = static_cast<QueuedIncoming *>(user_data);
    in->ready = true;
    in->recv_status = from_ucs(status);
    ucp_request_free(request);
}

// Contexts that a worker pass (through any context of that worker) queued
// messages for, or handled messages for and owe batched acks (arrive());
// ucx_ifunc_progress() runs them after its pass. Their number
// (changed under the lock) lets a progress call with nothing queued, the
// usual case, skip the lock.
std::mutex g_queued_mu;
std::vector<ucx_ifunc_context *> g_queued;
std::atomic<size_t> g_queued_n{0};

// A message whose sender names itself by a rank this context has no peer
// for (@p rank; INT32_MIN: too short to name one): dropped (false), said
// once per rank.
__attribute__((noinline)) bool unknown_sender(ucx_ifunc_context *ctx, int32_t rank)
{
    ctx->stats.rejected++;
    static std::mutex mu;
    static std::unordered_set<int32_t> said;
    std::lock_guard<std::mutex> guard(mu);
    if (!said.insert(rank).second) return false;
    if (rank == INT32_MIN)
        XRDMA_ERROR("rank %d: an invocation without a reply endpoint too short to name its sender's rank, dropped",
                    ctx->params.rank);
    else
        XRDMA_ERROR("rank %d: an invocation from rank %d, which is not (or no longer) a peer of this context, dropped "
                    "(peers_by_rank: every sender must be added with ucx_ifunc_peer_add() before it sends)",
                    ctx->params.rank, rank);
    return false;
}

// The sender of a message that came without UCX's reply endpoint to a
// context with peers_by_rank: its rank ends the data (wire.h, kSenderRank);
// taken off *@p length. False: no rank there, or not a peer.
inline bool sender_by_rank(ucx_ifunc_context *ctx, const void *data, size_t *length, ucp_ep_h *ep)
{
    if (*length < kSenderRank) return unknown_sender(ctx, INT32_MIN);
    int32_t rank;
    *length -= kSenderRank;
    memcpy(&rank, static_cast<const uint8_t *>(data) + *length, kSenderRank);
    *ep = peer_ep(ctx, rank);
    return *ep != nullptr || unknown_sender(ctx, rank);
}

// A warm invocation without UCX's reply endpoint at a context created
// without peers_by_rank: its sender's context has it and named itself by
// the rank after the args (kSenderRank), a setting every context of a job
// must share (ucx_ifunc(3)). Refused with UCX_IFUNC_ERR_PROTOCOL where that
// rank (or, forwarded, the origin's) is a peer here, so that its origin does
// not wait for an answer that never comes; else dropped. Said once per
// process.
__attribute__((noinline, cold)) void named_without_peers_by_rank(ucx_ifunc_context *ctx, const void *header,
                                                                 size_t header_length, const void *data,
                                                                 size_t length)
{
    ctx->stats.rejected++;
    static std::atomic<bool> said{false};
    const std::string why = "rank " + std::to_string(ctx->params.rank) +
                            ": an invocation named its sender by rank (peers_by_rank), and this context was created "
                            "without peers_by_rank: set it in every context of the job or in none";
    if (!said.exchange(true)) XRDMA_ERROR("%s", why.c_str());
    InvokeShortHdr h;
    if (header_length != sizeof(h) || length < kSenderRank) return;
    memcpy(&h, header, sizeof(h));
    int32_t rank;
    memcpy(&rank, static_cast<const uint8_t *>(data) + length - kSenderRank, kSenderRank);
    const ucp_ep_h sender = peer_ep(ctx, rank);
    const bool answerable = (h.flags & kForwarded)
                                ? h.origin_rank == ctx->params.rank || peer_ep(ctx, h.origin_rank) != nullptr
                                : sender != nullptr;
    if (h.magic != kInvokeShortMagic || !answerable) return;
    const Incoming in{kAmInvoke, View{static_cast<const uint8_t *>(header), header_length},
                      View{static_cast<const uint8_t *>(data), length - kSenderRank}, sender, true, UCX_IFUNC_OK};
    refuse_invocation(ctx, in, UCX_IFUNC_ERR_PROTOCOL, why);
}

// The same for an answer (a ReplyHdr, which names the rank that answered):
// its sender's endpoint, or nullptr (answers need none: only ring order
// and resends use it).
inline ucp_ep_h reply_sender(ucx_ifunc_context *ctx, const void *header, size_t header_length)
{
    ReplyHdr h;
    if (header_length != sizeof(h)) return nullptr;
    memcpy(&h, header, sizeof(h));
    return h.magic == kReplyMagic ? peer_ep(ctx, h.rank) : nullptr;
}

}  // namespace

void mark_queued(ucx_ifunc_context *ctx)
{
    std::lock_guard<std::mutex> guard(g_queued_mu);
    if (ctx->queued_listed) return;
    ctx->queued_listed = true;
    g_queued.push_back(ctx);
    g_queued_n.store(g_queued.size(), std::memory_order_relaxed);
}

namespace {

// Queue a message that arrived (its own copy of the header; the data is
// copied or, @p rndv, fetched into it), to run from progress in order.
QueuedIncoming *enqueue(ucx_ifunc_context *ctx, uint16_t am_id, const void *header, size_t header_length,
                        size_t length, ucp_ep_h reply_ep)
{
    std::unique_ptr<QueuedIncoming> in(ctx->spare.get(length));
    in->am_id = am_id;
    in->hdr_buf.assign(static_cast<const uint8_t *>(header),
                       static_cast<const uint8_t *>(header) + header_length);
    in->hdr = View{in->hdr_buf.data(), in->hdr_buf.size()};
    in->reply_ep = reply_ep;
    in->recv_status = UCX_IFUNC_OK;
    in->ready = true;
    ctx->incoming.push_back(std::move(in));
    mark_queued(ctx);
    return ctx->incoming.back().get();
}

XRDMA_HOT ucs_status_t am_receive(ucx_ifunc_context *ctx, uint16_t am_id, const void *header,
                        size_t header_length, void *data, size_t length,
                        const ucp_am_recv_param_t *param)
{
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    ucp_ep_h reply_ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    const void *d = data;
    if (header_length == 0 && !rndv) {
        if (!front_header(&header, &header_length, &d, &length)) {
            ctx->stats.rejected++;  // (no header at all: a stray message)
            return UCS_OK;
        }
        // A warm invocation without a reply endpoint names its sender
        // (kSenderRank): found in the peer table where the context has
        // peers_by_rank, refused where not (a job that mixes the setting).
        if (__builtin_expect(!reply_ep && am_id == kAmInvoke, 1)) {
            if (__builtin_expect(!ctx->params.peers_by_rank, 0))
                return named_without_peers_by_rank(ctx, header, header_length, d, length), UCS_OK;
            if (!sender_by_rank(ctx, d, &length, &reply_ep)) return UCS_OK;
        }
    } else if (!reply_ep && am_id == kAmReply) {
        // An answer names its sender in its header; found in the peer table
        // also by a context without peers_by_rank, in a job that mixes it:
        // ring order counts it (ring_before_am()).
        reply_ep = reply_sender(ctx, header, header_length);
    }
    data = const_cast<void *>(d);
    // A ring's control message is taken aside; anything else comes after
    // the frames its sender wrote into a ring before it.
    if (am_id == kAmReply && !rndv && ring_control(ctx, header, header_length, data, length, reply_ep))
        return UCS_OK;
    if (ctx->rings_in) ring_before_am(ctx, reply_ep);  // (a call only once a peer writes into a ring here)
    if (!rndv) {
        arrive(ctx, am_id, header, header_length, data, length, reply_ep, true);
        return UCS_OK;
    }
    QueuedIncoming *in = enqueue(ctx, am_id, header, header_length, length, reply_ep);
    {
        // Large message: fetch it; its place in the queue is kept meanwhile.
        in->data_buf.resize(length);
        in->data = View{in->data_buf.data(), length};
        in->ready = false;
        ucp_request_param_t p;
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.recv_am = rndv_done;
        p.user_data = in;
        ucs_status_ptr_t r =
            ucp_am_recv_data_nbx(ctx->params.worker, data, in->data_buf.data(), length, &p);
        if (r == nullptr) {
            in->ready = true;
        } else if (UCS_PTR_IS_ERR(r)) {
            in->ready = true;
            in->recv_status = from_ucs(UCS_PTR_STATUS(r));
        }
    }
    return UCS_OK;
}

XRDMA_HOT ucs_status_t am_invoke_cb(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    return am_receive(static_cast<ucx_ifunc_context *>(arg), kAmInvoke, header, header_length,
                      data, length, param);
}

XRDMA_HOT ucs_status_t am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
                         size_t length, const ucp_am_recv_param_t *param)
{
    return am_receive(static_cast<ucx_ifunc_context *>(arg), kAmReply, header, header_length,
                      data, length, param);
}

ucs_status_t set_handler(ucp_worker_h worker, uint16_t id, ucp_am_recv_callback_t cb, void *arg)
{
    ucp_am_handler_param_t p;
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = id;
    p.cb = cb;
    p.arg = arg;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    return ucp_worker_set_am_recv_handler(worker, &p);
}

// Run what @p ctx has queued (invocations, replies, then batched acks).
unsigned run_queued(ucx_ifunc_context *ctx)
{
    if (ctx->in_handler || ctx->in_dispatch || t_dispatching) {  // (an ifunc of any context runs on this thread)
        if (!ctx->incoming.empty()) mark_queued(ctx);  // run it on a later pass
        return 0;
    }
    unsigned n = 0;
    while (!ctx->incoming.empty() && ctx->incoming.front()->ready) {
        std::unique_ptr<QueuedIncoming> in = std::move(ctx->incoming.front());
        ctx->incoming.pop_front();
        handle(ctx, *in);
        ++n;
        const size_t cap = in->data_buf.capacity();
        ctx->spare.put(in.release(), cap);
    }
    if (ctx->acks_waiting) flush_acks(ctx);
    if (!ctx->incoming.empty()) mark_queued(ctx);  // a large message still arriving
    return n;
}

// Run what a pass over @p worker queued for its other contexts, when the
// pass queued anything (run_others()).
__attribute__((noinline)) unsigned run_others_listed(ucp_worker_h worker)
{
    std::vector<ucx_ifunc_context *> mine;
    {
        std::lock_guard<std::mutex> guard(g_queued_mu);
        size_t keep = 0;
        for (ucx_ifunc_context *c : g_queued) {
            if (c->params.worker == worker) {
                c->queued_listed = false;
                mine.push_back(c);
            } else {
                g_queued[keep++] = c;
            }
        }
        g_queued.resize(keep);
        g_queued_n.store(keep, std::memory_order_relaxed);
    }
    unsigned n = 0;
    for (ucx_ifunc_context *c : mine) n += run_queued(c);
    return n;
}
// Run what a pass over @p worker queued for its other contexts: mostly
// nothing, one load (inline: the rest, with its lock and list, out of line
// keeps an empty progress pass short).
inline unsigned run_others(ucp_worker_h worker)
{
    return g_queued_n.load(std::memory_order_relaxed) ? run_others_listed(worker) : 0;
}

// One look at the rings of @p ctx's worker outside a pass (ring_linger(),
// ring_wait()), what it takes served as a pass serves it (@p serving: the
// caller's t_serving): the frames taken and the messages handled.
inline unsigned ring_look(ucx_ifunc_context *ctx, ucp_worker_h serving)
{
    const ucp_worker_h worker = ctx->params.worker;
    ctx->in_progress = true;
    t_serving = worker;
    unsigned k = ring_poll(worker);
    ctx->in_progress = false;
    t_serving = serving;
    if (!k) return 0;
    if (!ctx->incoming.empty() || ctx->acks_waiting) k += run_queued(ctx);
    return k + run_others(worker);
}

// The rest of a pass that served invocations from rings and took no
// answer: the rings are watched a little longer (g_ring_linger empty
// looks, ring frames only: no UCX pass, no system call), so that the next
// small X-op of a ping-pong is taken as it arrives, not after the rest of
// the caller's progress turn (Open MPI's other components: half a turn,
// ~320 instructions, in MPI_Barrier). Each frame it takes is served as a
// pass serves it, its acks sent at once; an answer taken ends it (the
// rank waits for it), and so does kLingerTurns looks in all. An empty look
// ends with cpu_relax(): where the two ranks share a physical core (this
// VM's fast-AM mode) the sender's work gets the issue slots; without it,
// the linger gained half as much there.
constexpr unsigned kLingerTurns = 8;  // x g_ring_linger: the most looks one linger takes
__attribute__((noinline)) unsigned ring_linger(ucx_ifunc_context *ctx, ucp_worker_h serving)
{
    const unsigned most = kLingerTurns * g_ring_linger;
    unsigned n = 0;
    for (unsigned idle = 0, looks = 0; idle < g_ring_linger && looks < most; ++looks) {
        const unsigned k = ring_look(ctx, serving);
        if (!k) {
            ++idle;
            cpu_relax();  // (a sibling hyperthread, maybe the sender, gets the core meanwhile)
            continue;
        }
        idle = 0;
        n += k;
        if (t_ring_answers) break;
    }
    return n;
}

// The rest of an empty pass of ucx_ifunc_progress_wait(): the caller
// waits for answers, which over shared memory come through rings. Up to
// g_ring_wait looks at the rings, each after cpu_relax(): the first frame
// ends it (served as a pass serves it). Where the two ranks share a
// physical core (this VM's fast-AM mode), the waiting origin leaves the
// issue slots to the target meanwhile, and it sees the answer within a
// look instead of within a UCX pass (~300 instructions).
__attribute__((noinline)) unsigned ring_wait(ucx_ifunc_context *ctx, ucp_worker_h serving)
{
    for (unsigned looks = 0; looks < g_ring_wait; ++looks) {
        cpu_relax();
        if (const unsigned k = ring_look(ctx, serving)) return k;
    }
    return 0;
}

// A progress pass (ucx_ifunc_progress(); @p waiting: _wait()).
inline __attribute__((always_inline)) unsigned progress_pass(ucx_ifunc_context *ctx, bool waiting)
{
    // Called from a completion callback that runs inside UCX's progress (a
    // message handled in the AM handler): UCX progress must not recurse.
    if (ctx->in_handler) return 0;
    const bool serve = !ctx->in_dispatch && !t_dispatching;  // no nested ifuncs: each runs alone
    ctx->in_progress = serve;
    const ucp_worker_h serving = t_serving;
    if (serve) t_serving = ctx->params.worker;  // (and the worker's other contexts: arrive())
    unsigned n = ucp_worker_progress(ctx->params.worker);  // (counts messages handled in the handler)
    if (ctx->in_dispatch) {
        ctx->in_progress = false;
        t_serving = serving;
        return n;
    }
    const unsigned framed = ring_poll(ctx->params.worker);  // frames in rings (of every context of the worker)
    n += framed;
    ctx->in_progress = false;
    t_serving = serving;
    // This context, then every other one of the worker that the pass queued
    // messages for: contexts sharing a worker (one per MPI window) cost one
    // worker pass, not one each.
    if (!ctx->incoming.empty() || ctx->acks_waiting) n += run_queued(ctx);  // (most passes: nothing)
    n += compile_queue_progress(ctx);  // X-ops that waited for a bitcode compile
    n += run_others(ctx->params.worker);
    if (__builtin_expect(framed != 0, 0) && serve && !t_ring_answers && g_ring_linger && ctx->spin)
        n += ring_linger(ctx, serving);
    else if (waiting && !n && serve && g_ring_wait && ctx->spin && g_rings_polled.load(std::memory_order_relaxed))
        n += ring_wait(ctx, serving);
    return n;
}

}  // namespace

void arrive_queued(ucx_ifunc_context *ctx, uint16_t am_id, const void *header, size_t header_length,
                   const void *data, size_t length, ucp_ep_h reply_ep)
{
    QueuedIncoming *in = enqueue(ctx, am_id, header, header_length, length, reply_ep);
    in->data_buf.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + length);
    in->data = View{in->data_buf.data(), length};
}

ucs_status_t set_am_handlers(ucx_ifunc_context *ctx, bool on)
{
    ucp_worker_h w = ctx->params.worker;
    ucs_status_t st = set_handler(w, ctx->am_invoke, on ? am_invoke_cb : nullptr, on ? ctx : nullptr);
    if (st == UCS_OK || !on) st = set_handler(w, ctx->am_reply, on ? am_reply_cb : nullptr, on ? ctx : nullptr);
    return st;
}

void forget_queued(ucx_ifunc_context *ctx)
{
    std::lock_guard<std::mutex> guard(g_queued_mu);
    g_queued.erase(std::remove(g_queued.begin(), g_queued.end(), ctx), g_queued.end());
    g_queued_n.store(g_queued.size(), std::memory_order_relaxed);
}

}  // namespace xrdma

extern "C" {

XRDMA_HOT unsigned ucx_ifunc_progress(ucx_ifunc_context_h ctx) { return progress_pass(ctx, false); }

XRDMA_HOT unsigned ucx_ifunc_progress_wait(ucx_ifunc_context_h ctx) { return progress_pass(ctx, true); }

}  // extern "C"
