// Context lifecycle: create and destroy, peers, statistics, status strings.
// The rest of a context's work lives by concept: send.cc (sending),
// receive.cc (AM receive, queueing, progress), dispatch.cc (guarded dispatch,
// quarantine), target.cc and origin.cc (the two sides of an invocation).
#include "run/context.h"

#include "load/compile_queue.h"
#include "wire/ring.h"

#include "xrdma_common/config.h"
#include "run/fault.h"
#include "xrdma_common/free_list.h"
#include "xrdma_common/log.h"
#include "image/sha256.h"
#include "xrdma_config.h"

#include <algorithm>
#include <atomic>
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

void fail_pending(ucx_ifunc_context *ctx, ucp_ep_h ep, const char *why)
{
    // Collect first: callbacks may issue new invocations.
    std::vector<std::pair<uint64_t, Pending>> gone;
    ctx->pending.take_all(ep, &gone);
    for (auto &kv : gone) {
        ucx_ifunc_result_t r{UCX_IFUNC_ERR_PEER, nullptr, 0, -1, why};
        kv.second.cb(&r, kv.second.user_data);
    }
}

}  // namespace

std::shared_ptr<const std::vector<uint8_t>> find_image_bytes(ucx_ifunc_context *ctx, const Hash &h)
{
    auto it = ctx->registered.find(h);
    if (it != ctx->registered.end())
        if (auto bytes = it->second.lock()) return bytes;
    if (auto img = ctx->cache.find(h))
        return std::shared_ptr<const std::vector<uint8_t>>(img, &img->bytes);
    return nullptr;
}

}  // namespace xrdma

namespace {

void peer_set(ucx_ifunc_context *ctx, int rank, ucp_ep_h ep)
{
    if (ctx->peer_eps.size() <= size_t(rank)) ctx->peer_eps.resize(size_t(rank) + 1, nullptr);
    if (!ctx->peer_eps[size_t(rank)]) ctx->stats.peers++;
    ctx->peer_eps[size_t(rank)] = ep;
}

}  // namespace

namespace xrdma {

// (A peer that joins this way was simply absent before: what the memos
// remember of other peers still holds, so the epoch stays.)
ucp_ep_h peer_connect(ucx_ifunc_context *ctx, int32_t rank)
{
    if (!ctx->params.connect || rank < 0 || rank >= ctx->params.size) return nullptr;
    const ucp_ep_h ep = ctx->params.connect(ctx->params.dispatch_arg, rank);
    if (ep && !ctx->failed_eps.count(ep)) {
        peer_set(ctx, rank, ep);
        return ep;
    }
    return nullptr;
}

}  // namespace xrdma

extern "C" {

const char *ucx_ifunc_version(void) { return PACKAGE_VERSION; }

// peers_by_rank took the padding after am_id: the members after it are
// where they were; connect came last (LP64).
static_assert(sizeof(void *) != 8 || (offsetof(ucx_ifunc_context_params_t, runs_here) == 48 &&
                                      offsetof(ucx_ifunc_context_params_t, connect) == 72 &&
                                      sizeof(ucx_ifunc_context_params_t) == 80),
              "ucx_ifunc_context_params_t layout");

static std::atomic<uint64_t> g_contexts{0};  // alive in this process (ucx_ifunc_stats_t.contexts)

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
    if (!ctx->params.dispatch) ctx->params.dispatch = dispatch_direct;  // (dispatch_entry() calls it as is)
    ctx->xctx.context = ctx;
    ctx->am_invoke = params->am_id ? params->am_id : kAmInvoke;
    ctx->am_reply = uint16_t(ctx->am_invoke + 1);
    ucs_status_t st = set_am_handlers(ctx, true);
    ctx->am_enabled = (st == UCS_OK);
    if (!ctx->am_enabled)
        XRDMA_INFO("active messages unavailable on this worker (%s): put-and-poll only",
                   ucs_status_string(st));
    rings_create(ctx, params->ucp_context);
    g_contexts++;
    *ctx_p = ctx;
    return UCX_IFUNC_OK;
}

void ucx_ifunc_context_destroy(ucx_ifunc_context_h ctx)
{
    if (!ctx) return;
    if (ctx->am_enabled) set_am_handlers(ctx, false);
    rings_destroy(ctx);
    // Rendezvous receives still write into queued messages: let them finish.
    for (int i = 0; i < 100000; ++i) {
        bool busy = false;
        for (auto &in : ctx->incoming) busy |= !in->ready;
        if (!busy) break;
        ucp_worker_progress(ctx->params.worker);
    }
    fail_pending(ctx, nullptr, "context destroyed before the reply arrived");
    compile_queue_drop(ctx);
    forget_queued(ctx);
    g_contexts--;
    delete ctx;
}

ucx_ifunc_status_t ucx_ifunc_peer_add(ucx_ifunc_context_h ctx, int rank, ucp_ep_h ep)
{
    if (!ctx || rank < 0 || !ep) return UCX_IFUNC_ERR_INVALID_PARAM;
    peer_set(ctx, rank, ep);
    ctx->origin_last = -1;
    ctx->bound_epoch++;
    return UCX_IFUNC_OK;
}

void ucx_ifunc_peer_failed(ucx_ifunc_context_h ctx, ucp_ep_h ep)
{
    if (!ctx || !ep) return;
    ctx->failed_eps.insert(ep);
    rings_peer_failed(ctx, ep);
    ctx->code_sent.erase(ep);
    ctx->known_ep = nullptr;
    bindings_forget(ctx, ep);
    ctx->origin_last = -1;
    for (auto it = ctx->acks.begin(); it != ctx->acks.end();) {
        if (it->ep != ep) {
            ++it;
            continue;
        }
        if (it->due) ctx->acks_waiting -= it->ids.size();
        ctx->acks_held -= it->ids.size();
        it = ctx->acks.erase(it);
        ctx->acks_last = nullptr;  // (the others moved)
    }
    for (ucp_ep_h &p : ctx->peer_eps)
        if (p == ep) {
            p = nullptr;
            ctx->stats.peers--;
        }
    fail_pending(ctx, ep, "peer failed or unreachable");
}

size_t ucx_ifunc_pending(ucx_ifunc_context_h ctx) { return ctx ? ctx->pending.size() : 0; }

void ucx_ifunc_set_spin(ucx_ifunc_context_h ctx, int spin)
{
    if (ctx) ctx->spin = spin != 0;
}

void ucx_ifunc_cache_flush(ucx_ifunc_context_h ctx)
{
    if (!ctx) return;
    ctx->cache.clear();
    bindings_unload(ctx);
}

void ucx_ifunc_stats(ucx_ifunc_context_h ctx, ucx_ifunc_stats_t *stats)
{
    if (!ctx || !stats) return;
    *stats = ctx->stats;
    stats->cache_entries = ctx->cache.size();
    stats->contexts = g_contexts.load();
    rings_stats(ctx, stats);
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
