// Context lifecycle, AM receive handlers, progress and message sending.
#include "context.h"

#include "compile_queue.h"
#include "xrdma_common/config.h"
#include "fault.h"
#include "xrdma_common/free_list.h"
#include "xrdma_common/log.h"
#include "sha256.h"
#include "xrdma_config.h"

#include <algorithm>
#include <cstring>
#include <mutex>

using namespace xrdma;

namespace xrdma {

ucx_ifunc_status_t from_ucs(ucs_status_t st)
{
    switch (st) {
    case UCS_OK: return UCX_IFUNC_OK;
    case UCS_INPROGRESS: return UCX_IFUNC_INPROGRESS;
    case UCS_ERR_NO_MEMORY: return UCX_IFUNC_ERR_NO_MEMORY;
    case UCS_ERR_INVALID_PARAM: return UCX_IFUNC_ERR_INVALID_PARAM;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CANCELED:
    case UCS_ERR_REJECTED: return UCX_IFUNC_ERR_PEER;
    default: return UCX_IFUNC_ERR_TRANSPORT;
    }
}

namespace {

// A message to send, as views: header, up to three data pieces, and the
// image (shared) for code-carrying invocations.
struct Message {
    const void *hdr;
    size_t hdr_len;
    struct Piece {
        const void *p;
        size_t len;
    } piece[3];
    std::shared_ptr<const std::vector<uint8_t>> image;  // sent after piece[0]

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
thread_local SizedFreeList<SendOp, 64, 4> send_pool;

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

ucx_ifunc_status_t transmit(ucx_ifunc_context *ctx, ucp_ep_h ep, uint16_t am_id, const Message &m)
{
    ucp_worker_h worker = ctx->params.worker;
    size_t len = m.data_len();
    if (len >= ctx->imm_fail_min && ++ctx->imm_skipped >= kImmediateRetry) {
        ctx->imm_fail_min = SIZE_MAX;
        ctx->imm_skipped = 0;
    }
    if (!m.image && len <= kImmediateMax && len < ctx->imm_fail_min) {
        uint8_t buf[kImmediateMax];
        size_t n = 0;
        for (const auto &pc : m.piece) {
            if (pc.len) memcpy(buf + n, pc.p, pc.len);
            n += pc.len;
        }
        ucp_request_param_t p;
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
        p.flags = UCP_AM_SEND_FLAG_REPLY;
        ucs_status_ptr_t r = ucp_am_send_nbx(ep, am_id, m.hdr, m.hdr_len, buf, n, &p);
        if (r == nullptr) return UCX_IFUNC_OK;
        if (UCS_PTR_IS_PTR(r)) {  // not expected with FORCE_IMM_CMPL: the stack buffer must outlive it
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker);
            ucp_request_free(r);
            return UCX_IFUNC_OK;
        }
        if (UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE) {
            XRDMA_WARN("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
            return from_ucs(UCS_PTR_STATUS(r));
        }
        ctx->imm_fail_min = len;
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
    p.flags = UCP_AM_SEND_FLAG_REPLY;
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

void rndv_done(void *request, ucs_status_t status, size_t, void *user_data)
{
    auto *in = static_cast<Incoming *>(user_data);
    in->ready = true;
    in->recv_status = from_ucs(status);
    ucp_request_free(request);
}

// Contexts that a worker pass (through any context of that worker) queued
// messages for; ucx_ifunc_progress() runs them after its pass.
std::mutex g_queued_mu;
std::vector<ucx_ifunc_context *> g_queued;

void mark_queued(ucx_ifunc_context *ctx)
{
    std::lock_guard<std::mutex> guard(g_queued_mu);
    if (ctx->queued_listed) return;
    ctx->queued_listed = true;
    g_queued.push_back(ctx);
}

void handle(ucx_ifunc_context *ctx, Incoming &in)
{
    if (in.am_id == kAmInvoke)
        target_handle_invoke(ctx, in);
    else
        origin_handle_reply(ctx, in);
}

ucs_status_t am_receive(ucx_ifunc_context *ctx, uint16_t am_id, const void *header,
                        size_t header_length, void *data, size_t length,
                        const ucp_am_recv_param_t *param)
{
    const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    ucp_ep_h reply_ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : nullptr;
    if (!rndv && ctx->in_progress && !ctx->in_dispatch && ctx->incoming.empty()) {
        // Nothing waits before it: run it now, from UCX's buffers.
        Incoming in{am_id, View{static_cast<const uint8_t *>(header), header_length},
                    View{static_cast<const uint8_t *>(data), length}, {}, {}, reply_ep, true, UCX_IFUNC_OK};
        ctx->in_progress = false;  // (a send inside may progress: queue what comes then)
        ctx->in_handler = true;
        handle(ctx, in);
        ctx->in_handler = false;
        ctx->in_progress = true;
        return UCS_OK;
    }
    std::unique_ptr<Incoming> in(ctx->spare.get(length));
    in->am_id = am_id;
    in->hdr_buf.assign(static_cast<const uint8_t *>(header),
                       static_cast<const uint8_t *>(header) + header_length);
    in->hdr = View{in->hdr_buf.data(), in->hdr_buf.size()};
    in->reply_ep = reply_ep;
    in->recv_status = UCX_IFUNC_OK;
    in->ready = true;
    if (rndv) {
        // Large message: fetch it; its place in the queue is kept meanwhile.
        in->data_buf.resize(length);
        in->data = View{in->data_buf.data(), length};
        in->ready = false;
        ucp_request_param_t p;
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.recv_am = rndv_done;
        p.user_data = in.get();
        ucs_status_ptr_t r =
            ucp_am_recv_data_nbx(ctx->params.worker, data, in->data_buf.data(), length, &p);
        if (r == nullptr) {
            in->ready = true;
        } else if (UCS_PTR_IS_ERR(r)) {
            in->ready = true;
            in->recv_status = from_ucs(UCS_PTR_STATUS(r));
        }
    } else {
        in->data_buf.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + length);
        in->data = View{in->data_buf.data(), length};
    }
    ctx->incoming.push_back(std::move(in));
    mark_queued(ctx);
    return UCS_OK;
}

ucs_status_t am_invoke_cb(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    return am_receive(static_cast<ucx_ifunc_context *>(arg), kAmInvoke, header, header_length,
                      data, length, param);
}

ucs_status_t am_reply_cb(void *arg, const void *header, size_t header_length, void *data,
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

void fail_pending(ucx_ifunc_context *ctx, ucp_ep_h ep, const char *why)
{
    // Collect first: callbacks may issue new invocations.
    std::vector<std::pair<uint64_t, Pending>> gone;
    for (auto &kv : ctx->pending)
        if (ep == nullptr || kv.second.ep == ep) gone.emplace_back(kv);
    for (auto &kv : gone) ctx->pending.erase(kv.first);
    for (auto &kv : gone) {
        ucx_ifunc_result_t r{UCX_IFUNC_ERR_PEER, nullptr, 0, -1, why};
        kv.second.cb(&r, kv.second.user_data);
    }
}

}  // namespace

namespace {
void send_acks(ucx_ifunc_context *ctx, ucp_ep_h ep, std::vector<uint64_t> *ids);
}

ucx_ifunc_status_t send_invoke(ucx_ifunc_context *ctx, ucp_ep_h ep, const InvokeHdr &hdr,
                               const std::string &entry,
                               std::shared_ptr<const std::vector<uint8_t>> image,
                               const void *args, size_t args_len)
{
    // A failed endpoint may take a send and never complete it.
    if (!ctx->failed_eps.empty() && ctx->failed_eps.count(ep)) return UCX_IFUNC_ERR_PEER;
    InvokeHdr h = hdr;
    h.image_len = image ? image->size() : 0;
    h.flags = image ? (h.flags | kHasCode) : (h.flags & ~kHasCode);
    h.entry_len = uint16_t(entry.size());
    h.args_len = uint32_t(args_len);
    ctx->stats.invocations_sent++;
    if (h.flags & kHasCode) ctx->stats.code_sends++;
    ctx->stats.bytes_sent += sizeof(h) + entry.size() + h.image_len + args_len;
    Message m{&h, sizeof(h), {{entry.data(), entry.size()}, {args, args_len}, {nullptr, 0}}, std::move(image)};
    return transmit(ctx, ep, ctx->am_invoke, m);
}

void send_reply(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id, ucx_ifunc_status_t status,
                const std::string &msg, const void *reply, size_t reply_len)
{
    // Earlier answers to this endpoint still batched go first: the origin
    // sees its completions in the order they happened.
    for (auto &a : ctx->acks)
        if (a.first == ep && !a.second.empty()) send_acks(ctx, ep, &a.second);
    ReplyHdr h = make_reply_hdr(kReplyResult, status, ctx->params.rank, req_id, uint32_t(reply_len),
                                uint16_t(std::min<size_t>(msg.size(), 1024)));
    ctx->stats.bytes_sent += sizeof(h) + h.msg_len + reply_len;
    Message m{&h, sizeof(h), {{msg.data(), h.msg_len}, {reply, reply_len}, {nullptr, 0}}, nullptr};
    transmit(ctx, ep, ctx->am_reply, m);
}

namespace {
void send_acks(ucx_ifunc_context *ctx, ucp_ep_h ep, std::vector<uint64_t> *ids)
{
    ReplyHdr h = make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, ctx->params.rank, 0,
                                uint32_t(ids->size() * sizeof(uint64_t)));
    ctx->stats.bytes_sent += sizeof(h) + h.reply_len;
    Message m{&h, sizeof(h), {{ids->data(), h.reply_len}, {nullptr, 0}, {nullptr, 0}}, nullptr};
    transmit(ctx, ep, ctx->am_reply, m);
    ids->clear();
}
}  // namespace

void queue_ack(ucx_ifunc_context *ctx, ucp_ep_h ep, uint64_t req_id)
{
    for (auto &a : ctx->acks) {
        if (a.first != ep) continue;
        a.second.push_back(req_id);
        if (a.second.size() >= kMaxAcks) send_acks(ctx, ep, &a.second);
        return;
    }
    ctx->acks.emplace_back(ep, std::vector<uint64_t>{req_id});
}

void flush_acks(ucx_ifunc_context *ctx)
{
    for (auto &a : ctx->acks)
        if (!a.second.empty()) send_acks(ctx, a.first, &a.second);
}

void send_need_code(ucx_ifunc_context *ctx, ucp_ep_h ep, const Incoming &in)
{
    InvokeHdr ih;
    memcpy(&ih, in.hdr.data(), sizeof(ih));
    ReplyHdr h = make_reply_hdr(kReplyNeedCode, UCX_IFUNC_ERR_NEED_CODE, ctx->params.rank, ih.req_id);
    ctx->stats.bytes_sent += sizeof(h) + in.hdr.size() + in.data.size();
    Message m{&h, sizeof(h), {{in.hdr.data(), in.hdr.size()}, {in.data.data(), in.data.size()}, {nullptr, 0}},
              nullptr};
    transmit(ctx, ep, ctx->am_reply, m);
}

bool code_known_by(ucx_ifunc_context *ctx, ucp_ep_h ep, const Hash &h, bool mark)
{
    // The same endpoint and image as last time (a stream of forwards or
    // invocations): known without the two table lookups.
    if (ctx->known_ep == ep && ep && ctx->known_hash == h) return true;
    auto &set = ctx->code_sent[ep];
    if (set.count(h)) {
        ctx->known_ep = ep;
        ctx->known_hash = h;
        return true;
    }
    if (mark) set.insert(h);
    return false;
}

std::shared_ptr<const std::vector<uint8_t>> find_image_bytes(ucx_ifunc_context *ctx, const Hash &h)
{
    auto it = ctx->registered.find(h);
    if (it != ctx->registered.end())
        if (auto bytes = it->second.lock()) return bytes;
    if (auto img = ctx->cache.find(h))
        return std::shared_ptr<const std::vector<uint8_t>>(img, &img->bytes);
    return nullptr;
}

namespace {

// What a dispatch hook calls as "the entry": the real one under fault
// containment, so a contained fault unwinds only the ifunc's own frames.
int guarded_entry(xrdma_ctx *x, const void *args, size_t len)
{
    FaultInfo fault;
    int rc = guarded_call(x->image ? x->image->code.get() : nullptr, run_chain, x, args, len, &fault);
    if (fault.signal || fault.timeout) {
        x->fail_status = fault.timeout ? UCX_IFUNC_ERR_TIMEOUT : UCX_IFUNC_ERR_FAULT;
        x->fail_message = "ifunc '" + *x->entry + "': " + describe(fault);
    }
    return rc;
}

}  // namespace

int dispatch_entry(ucx_ifunc_context *ctx, xrdma_ctx *x, void *entry, const void *args, size_t args_len)
{
    x->payload = static_cast<const uint8_t *>(args);
    x->real_entry = reinterpret_cast<xrdma_ifunc_entry_t>(entry);
    ctx->in_dispatch++;
    int rc = ctx->params.dispatch
                 ? ctx->params.dispatch(ctx->params.dispatch_arg, x, guarded_entry, args, args_len)
                 : guarded_entry(x, args, args_len);
    ctx->in_dispatch--;
    ctx->stats.executed++;
    if (x->fail_status == UCX_IFUNC_ERR_FAULT || x->fail_status == UCX_IFUNC_ERR_TIMEOUT) {
        ctx->quarantined.insert(x->image->view.hash);
        XRDMA_WARN("rank %d: %s; image %s quarantined", ctx->params.rank, x->fail_message.c_str(),
                   hash_hex(x->image->view.hash, 8).c_str());
    }
    return rc;
}

}  // namespace xrdma

extern "C" {

const char *ucx_ifunc_version(void) { return PACKAGE_VERSION; }

ucx_ifunc_status_t ucx_ifunc_context_create(const ucx_ifunc_context_params_t *params,
                                            ucx_ifunc_context_h *ctx_p)
{
    if (!params || !params->worker || !ctx_p || params->size < 0 || params->rank < 0 ||
        (params->size > 0 && params->rank >= params->size))
        return UCX_IFUNC_ERR_INVALID_PARAM;
    auto *ctx = new (std::nothrow) ucx_ifunc_context(config_get_ull("XRDMA_CODE_CACHE_SIZE"));
    if (!ctx) return UCX_IFUNC_ERR_NO_MEMORY;
    Sha256::prepare();  // not on the first image's path
    ctx->params = *params;
    if (ctx->params.size == 0) ctx->params.size = 1;
    ctx->am_invoke = params->am_id ? params->am_id : kAmInvoke;
    ctx->am_reply = uint16_t(ctx->am_invoke + 1);
    ucs_status_t st = set_handler(params->worker, ctx->am_invoke, am_invoke_cb, ctx);
    if (st == UCS_OK) st = set_handler(params->worker, ctx->am_reply, am_reply_cb, ctx);
    ctx->am_enabled = (st == UCS_OK);
    if (!ctx->am_enabled)
        XRDMA_INFO("active messages unavailable on this worker (%s): put-and-poll only",
                   ucs_status_string(st));
    *ctx_p = ctx;
    return UCX_IFUNC_OK;
}

void ucx_ifunc_context_destroy(ucx_ifunc_context_h ctx)
{
    if (!ctx) return;
    if (ctx->am_enabled) {
        set_handler(ctx->params.worker, ctx->am_invoke, nullptr, nullptr);
        set_handler(ctx->params.worker, ctx->am_reply, nullptr, nullptr);
    }
    // Rendezvous receives still write into queued messages: let them finish.
    for (int i = 0; i < 100000; ++i) {
        bool busy = false;
        for (auto &in : ctx->incoming) busy |= !in->ready;
        if (!busy) break;
        ucp_worker_progress(ctx->params.worker);
    }
    fail_pending(ctx, nullptr, "context destroyed before the reply arrived");
    compile_queue_drop(ctx);
    {
        std::lock_guard<std::mutex> guard(g_queued_mu);
        g_queued.erase(std::remove(g_queued.begin(), g_queued.end(), ctx), g_queued.end());
    }
    delete ctx;
}

ucx_ifunc_status_t ucx_ifunc_peer_add(ucx_ifunc_context_h ctx, int rank, ucp_ep_h ep)
{
    if (!ctx || rank < 0 || !ep) return UCX_IFUNC_ERR_INVALID_PARAM;
    ctx->peers[rank] = ep;
    return UCX_IFUNC_OK;
}

void ucx_ifunc_peer_failed(ucx_ifunc_context_h ctx, ucp_ep_h ep)
{
    if (!ctx || !ep) return;
    ctx->failed_eps.insert(ep);
    ctx->code_sent.erase(ep);
    ctx->known_ep = nullptr;
    for (auto it = ctx->acks.begin(); it != ctx->acks.end();)
        it = (it->first == ep) ? ctx->acks.erase(it) : std::next(it);
    for (auto it = ctx->peers.begin(); it != ctx->peers.end();)
        it = (it->second == ep) ? ctx->peers.erase(it) : std::next(it);
    fail_pending(ctx, ep, "peer failed or unreachable");
}

namespace {

// Run what @p ctx has queued (invocations, replies, then batched acks).
unsigned run_queued(ucx_ifunc_context *ctx)
{
    if (ctx->in_handler || ctx->in_dispatch) {
        if (!ctx->incoming.empty()) mark_queued(ctx);  // run it on a later pass
        return 0;
    }
    unsigned n = 0;
    while (!ctx->incoming.empty() && ctx->incoming.front()->ready) {
        std::unique_ptr<Incoming> in = std::move(ctx->incoming.front());
        ctx->incoming.pop_front();
        handle(ctx, *in);
        ++n;
        const size_t cap = in->data_buf.capacity();
        ctx->spare.put(in.release(), cap);
    }
    if (!ctx->acks.empty()) flush_acks(ctx);
    if (!ctx->incoming.empty()) mark_queued(ctx);  // a large message still arriving
    return n;
}

// Run what a pass over @p worker queued for its other contexts.
unsigned run_others(ucp_worker_h worker)
{
    std::vector<ucx_ifunc_context *> mine;
    {
        std::lock_guard<std::mutex> guard(g_queued_mu);
        if (g_queued.empty()) return 0;
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
    }
    unsigned n = 0;
    for (ucx_ifunc_context *c : mine) n += run_queued(c);
    return n;
}

}  // namespace

unsigned ucx_ifunc_progress(ucx_ifunc_context_h ctx)
{
    // Called from a completion callback that runs inside UCX's progress (a
    // message handled in the AM handler): UCX progress must not recurse.
    if (ctx->in_handler) return 0;
    ctx->in_progress = !ctx->in_dispatch;  // no nested ifuncs: each runs alone
    unsigned n = ucp_worker_progress(ctx->params.worker);  // (counts messages handled in the handler)
    ctx->in_progress = false;
    if (ctx->in_dispatch) return n;
    // This context, then every other one of the worker that the pass queued
    // messages for: contexts sharing a worker (one per MPI window) cost one
    // worker pass, not one each.
    n += run_queued(ctx);
    n += compile_queue_progress(ctx);  // X-ops that waited for a bitcode compile
    return n + run_others(ctx->params.worker);
}

size_t ucx_ifunc_pending(ucx_ifunc_context_h ctx) { return ctx ? ctx->pending.size() : 0; }

void ucx_ifunc_cache_flush(ucx_ifunc_context_h ctx)
{
    if (ctx) ctx->cache.clear();
}

void ucx_ifunc_stats(ucx_ifunc_context_h ctx, ucx_ifunc_stats_t *stats)
{
    if (!ctx || !stats) return;
    *stats = ctx->stats;
    stats->cache_entries = ctx->cache.size();
}

const char *ucx_ifunc_status_string(ucx_ifunc_status_t s)
{
    switch (s) {
    case UCX_IFUNC_OK: return "success";
    case UCX_IFUNC_INPROGRESS: return "in progress";
    case UCX_IFUNC_ERR_INVALID_PARAM: return "invalid parameter";
    case UCX_IFUNC_ERR_NO_MEMORY: return "out of memory";
    case UCX_IFUNC_ERR_IO: return "I/O error";
    case UCX_IFUNC_ERR_TRUNCATED: return "image truncated";
    case UCX_IFUNC_ERR_BAD_MAGIC: return "not an XRDMA image (bad magic)";
    case UCX_IFUNC_ERR_BAD_VERSION: return "unsupported image format version";
    case UCX_IFUNC_ERR_BAD_LENGTH: return "image length or offset out of bounds";
    case UCX_IFUNC_ERR_HASH_MISMATCH: return "image hash mismatch";
    case UCX_IFUNC_ERR_NO_ENTRY: return "no such entry in image";
    case UCX_IFUNC_ERR_NO_PART: return "no part of the image runs here";
    case UCX_IFUNC_ERR_BAD_CODE: return "invalid code in image";
    case UCX_IFUNC_ERR_LINK: return "code could not be linked at the target";
    case UCX_IFUNC_ERR_DENIED: return "refused by target policy";
    case UCX_IFUNC_ERR_FAULT: return "fault in injected code";
    case UCX_IFUNC_ERR_RETURN: return "injected function returned an error";
    case UCX_IFUNC_ERR_PEER: return "peer failed or unreachable";
    case UCX_IFUNC_ERR_NO_ROUTE: return "no route to rank";
    case UCX_IFUNC_ERR_PROTOCOL: return "malformed message";
    case UCX_IFUNC_ERR_TRANSPORT: return "transport error";
    case UCX_IFUNC_ERR_TIMEOUT: return "injected function timed out";
    case UCX_IFUNC_ERR_NEED_CODE: return "target needs the code";
    }
    return "unknown status";
}

}  // extern "C"
