// X-ops waiting for a bitcode compile or a resend, and those behind them (compile_queue.h).
#include "load/compile_queue.h"

#include "load/code_cache.h"
#include "xrdma_common/config.h"
#include "run/context.h"
#include "load/loader_jit.h"
#include "xrdma_common/log.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace xrdma {

std::atomic<size_t> g_compile_parked{0};

namespace {

struct Parked {
    std::unique_ptr<QueuedIncoming> in;  // a copy: the original may be UCX's buffer; nullptr: a hole
    std::string key;               // the compile it waits for; empty: it waits behind the one before
    // Deferred by the layer (key empty): tried again once g_resumed moved past this.
    bool deferred = false;
    uint64_t resumed = 0;
    // A hole: the X-op its sender was asked to resend (its origin's rank and request id).
    int32_t origin = 0;
    uint64_t req_id = 0;
};

struct Sender {
    ucp_ep_h ep;
    std::deque<Parked> ops;
};

struct Queue {
    std::list<Sender> senders;  // (Sender is move-only)
    // The X-op being run from the front of @p releasing's queue: it is not
    // parked behind the ones it was in front of.
    ucp_ep_h releasing = nullptr;
    ucp_ep_h front = nullptr;  // (the same, for the whole of its run: a deferral puts it back first)
    bool in_release = false;
    bool compiled = false;  // and its compile is done: it loads now
};

std::mutex g_mu;
std::unordered_map<ucx_ifunc_context *, Queue> g_queues;
std::atomic<uint64_t> g_resumed{0};  // compile_queue_resume() calls

// Who sent @p in first (origin rank and request id: at the same place in
// both invocation headers and in a withdrawal).
void identity(const Incoming &in, int32_t *origin, uint64_t *req_id)
{
    InvokeShortHdr f;
    memcpy(&f, in.hdr.data(), sizeof(f));
    *origin = f.origin_rank;
    *req_id = f.req_id;
}

// Whether @p in is the resend (or the withdrawal) of the X-op hole @p p waits for.
bool fills(const Parked &p, const Incoming &in)
{
    if (p.in) return false;
    int32_t origin;
    uint64_t req_id;
    identity(in, &origin, &req_id);
    return p.origin == origin && p.req_id == req_id;
}

size_t max_parked()
{
    static const size_t bound = std::max<size_t>(1, config_get_ull("XRDMA_MAX_PARKED"));
    return bound;
}

// An X-op beyond its sender's XRDMA_MAX_PARKED: answered with an error (to
// its origin, once forwarded), so that a sender that never fills its hole,
// or floods a compile, holds only so many of its own X-ops here.
void refuse(ucx_ifunc_context *ctx, const Incoming &in, size_t parked)
{
    const std::string why = "rank " + std::to_string(ctx->params.rank) + ": X-op refused, " +
                            std::to_string(parked) +
                            " X-ops of its sender already wait here for a compile or a resend (XRDMA_MAX_PARKED)";
    XRDMA_DEBUG("%s", why.c_str());
    refuse_invocation(ctx, in, UCX_IFUNC_ERR_NO_MEMORY, why);
}

std::unique_ptr<QueuedIncoming> copy_of(const Incoming &in)
{
    auto c = std::make_unique<QueuedIncoming>();
    c->am_id = in.am_id;
    c->hdr_buf.assign(in.hdr.data(), in.hdr.data() + in.hdr.size());
    c->data_buf.assign(in.data.data(), in.data.data() + in.data.size());
    c->hdr = View{c->hdr_buf.data(), c->hdr_buf.size()};
    c->data = View{c->data_buf.data(), c->data_buf.size()};
    c->reply_ep = in.reply_ep;
    c->ready = true;
    c->recv_status = in.recv_status;
    return c;
}

Sender &sender_of(Queue &q, ucp_ep_h ep)
{
    for (Sender &s : q.senders)
        if (s.ep == ep) return s;
    q.senders.emplace_back();
    q.senders.back().ep = ep;
    return q.senders.back();
}

// Whether the image @p in carries must be compiled from bitcode here, and
// the compile could start without waiting: its key in @p key. Anything
// else (cached, native, invalid, refused, no helper) is left to the usual
// path, which answers it at once.
bool compile_started(ucx_ifunc_context *ctx, const Incoming &in, const InvokeHdr &h, std::string *key)
{
    Hash hash;
    memcpy(hash.data(), h.hash, hash.size());
    if (ctx->quarantined.count(hash) || ctx->cache.find_current(hash)) return false;
    if (h.image_len > config_get_ull("XRDMA_MAX_IMAGE_SIZE")) return false;
    const uint8_t *image = in.data.data() + h.entry_len;
    ImageView view;
    std::string why;
    // The parts first (no hash: a native image is not hashed twice), then,
    // for bitcode, all of it: compiles are shared by hash.
    if (image_parse(image, h.image_len, &view, &why, false) != UCX_IFUNC_OK) return false;
    const PartView *part = choose_part(view);
    if (!part || part->kind != PartKind::llvm_bitcode) return false;
    if (image_parse(image, h.image_len, &view, &why) != UCX_IFUNC_OK || view.hash != hash) return false;
    part = choose_part(view);
    return part && jit_compile_start(view, *part, hash_hex(hash, 8), key) == UCX_IFUNC_INPROGRESS;
}

// The next X-op of @p q that may run (its sender's first, with its compile
// done or none), taken out of the queue; false if none may.
bool next_ready(Queue &q, Parked *out, ucp_ep_h *ep)
{
    for (Sender &s : q.senders) {
        if (s.ops.empty()) continue;
        Parked &p = s.ops.front();
        if (!p.in || (!p.key.empty() && !jit_compile_done(p.key))) continue;  // a hole, or compiling
        if (p.deferred && p.resumed == g_resumed.load(std::memory_order_relaxed)) continue;  // not resumed since
        *out = std::move(p);
        *ep = s.ep;
        s.ops.pop_front();
        g_compile_parked--;
        return true;
    }
    return false;
}

// Forget what sender @p s parked (the compiles its X-ops wait for in @p keys).
void forget_ops(Sender &s, std::vector<std::string> *keys)
{
    for (Parked &p : s.ops) {
        g_compile_parked--;
        if (!p.key.empty()) keys->push_back(p.key);
    }
    s.ops.clear();
}

// A failed sender's X-ops go, and its hole: nothing will fill it, and no
// answer could reach it.
void drop_failed(ucx_ifunc_context *ctx)
{
    if (ctx->failed_eps.empty()) return;
    std::vector<std::string> keys;
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto it = g_queues.find(ctx);
        if (it == g_queues.end()) return;
        for (Sender &s : it->second.senders) {
            if (s.ops.empty() || !ctx->failed_eps.count(s.ep)) continue;
            XRDMA_DEBUG("dropping %zu X-ops parked for a compile or a resend: their sender failed", s.ops.size());
            forget_ops(s, &keys);
        }
    }
    for (const std::string &k : keys) jit_compile_release(k);
}

unsigned release_ready(ucx_ifunc_context *ctx)
{
    if (ctx->in_handler || ctx->in_dispatch || t_dispatching) return 0;
    drop_failed(ctx);
    unsigned n = 0;
    for (;;) {
        Parked p;
        ucp_ep_h ep;
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = g_queues.find(ctx);
            if (it == g_queues.end()) break;
            Queue &q = it->second;
            if (!next_ready(q, &p, &ep)) {
                q.senders.remove_if([](const Sender &s) { return s.ops.empty(); });
                if (q.senders.empty()) g_queues.erase(it);
                break;
            }
            q.releasing = ep;
            q.front = ep;
            q.in_release = true;
            q.compiled = !p.key.empty();
        }
        if (ctx->failed_eps.count(ep)) {
            XRDMA_DEBUG("dropping an X-op parked for a compile: its sender failed");
        } else {
            target_handle_invoke(ctx, *p.in);  // as if it had just arrived
            ++n;
        }
        {
            std::lock_guard<std::mutex> g(g_mu);
            auto it = g_queues.find(ctx);
            if (it != g_queues.end()) {
                it->second.in_release = false;
                it->second.front = nullptr;
            }
        }
        if (!p.key.empty()) jit_compile_release(p.key);
    }
    if (n) flush_acks(ctx);
    return n;
}

}  // namespace

bool compile_queue_park(ucx_ifunc_context *ctx, const Incoming &in, const InvokeHdr *h)
{
    bool releasing = false, compiled = false;
    size_t full = 0;  // X-ops its sender has parked, when it may not park one more
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto it = g_queues.find(ctx);
        if (it != g_queues.end()) {
            Queue &q = it->second;
            releasing = q.in_release && q.releasing == in.reply_ep;
            compiled = releasing && q.compiled;
            q.in_release = false;
            if (!releasing) {
                for (Sender &s : q.senders) {
                    if (s.ep != in.reply_ep || s.ops.empty()) continue;
                    if (fills(s.ops.front(), in)) {  // the resend its sender's hole waits for: it is first
                        s.ops.pop_front();
                        g_compile_parked--;
                        releasing = true;
                        break;
                    }
                    if (s.ops.size() >= max_parked()) {
                        full = s.ops.size();
                        break;
                    }
                    s.ops.push_back(Parked{copy_of(in), std::string()});  // behind its sender's waiting X-op
                    g_compile_parked++;
                    return true;
                }
            }
        }
    }
    if (full) {
        refuse(ctx, in, full);
        return true;
    }
    if (compiled) return false;
    std::string key;
    if (!h || !(h->flags & kHasCode) || !compile_started(ctx, in, *h, &key)) return false;
    XRDMA_DEBUG("rank %d: X-op %llu waits for its bitcode to compile", ctx->params.rank,
                (unsigned long long)h->req_id);
    std::lock_guard<std::mutex> g(g_mu);
    Sender &s = sender_of(g_queues[ctx], in.reply_ep);
    Parked p{copy_of(in), key};
    if (releasing)
        s.ops.push_front(std::move(p));  // it was first: it stays first
    else
        s.ops.push_back(std::move(p));
    g_compile_parked++;
    return true;
}

unsigned compile_queue_release(ucx_ifunc_context *ctx)
{
    if (ctx->in_handler || ctx->in_dispatch || t_dispatching) return 0;
    jit_compile_poll();
    std::vector<ucx_ifunc_context *> mine;  // contexts sharing the worker (one per MPI window)
    {
        std::lock_guard<std::mutex> g(g_mu);
        for (auto &kv : g_queues)
            if (kv.first->params.worker == ctx->params.worker) mine.push_back(kv.first);
    }
    unsigned n = 0;
    for (ucx_ifunc_context *c : mine) n += release_ready(c);
    return n;
}

void compile_queue_need(ucx_ifunc_context *ctx, const Incoming &in, ReplyKind kind)
{
    if (!in.reply_ep) return;
    send_need(ctx, in.reply_ep, in, kind);
    Parked p;
    identity(in, &p.origin, &p.req_id);
    std::lock_guard<std::mutex> g(g_mu);
    // It was its sender's first X-op here (arrived with nothing parked
    // before it, or released from the front): all parked came after it.
    sender_of(g_queues[ctx], in.reply_ep).ops.push_front(std::move(p));
    g_compile_parked++;
}

void compile_queue_defer(ucx_ifunc_context *ctx, const Incoming &in)
{
    std::lock_guard<std::mutex> g(g_mu);
    Queue &q = g_queues[ctx];
    Sender &s = sender_of(q, in.reply_ep);
    Parked p{copy_of(in), std::string(), true, g_resumed.load(std::memory_order_relaxed)};
    if (q.front == in.reply_ep)
        s.ops.push_front(std::move(p));  // it was first: it stays first
    else
        s.ops.push_back(std::move(p));  // (nothing of its sender waited: arrive() checked)
    g_compile_parked++;
}

void compile_queue_resume() { g_resumed.fetch_add(1, std::memory_order_relaxed); }

bool compile_queue_withdrawal(ucx_ifunc_context *ctx, const Incoming &in)
{
    uint32_t magic;
    if (in.hdr.size() < sizeof(magic)) return false;
    memcpy(&magic, in.hdr.data(), sizeof(magic));
    if (magic != kInvokeWithdrawMagic) return false;
    std::string why;
    if (invoke_withdraw_check(in.hdr.data(), in.hdr.size(), in.data.size(), &why) != UCX_IFUNC_OK) {
        ctx->stats.rejected++;
        XRDMA_WARN("rank %d: dropping malformed withdrawal: %s", ctx->params.rank, why.c_str());
        return true;
    }
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto it = g_queues.find(ctx);
        if (it != g_queues.end()) {
            for (Sender &s : it->second.senders) {
                if (s.ep != in.reply_ep || s.ops.empty() || !fills(s.ops.front(), in)) continue;
                s.ops.pop_front();  // the X-ops behind it run from progress, in order
                g_compile_parked--;
                return true;
            }
        }
    }
    XRDMA_DEBUG("rank %d: withdrawal of an X-op no hole waits for: ignored", ctx->params.rank);
    return true;
}

void compile_queue_drop(ucx_ifunc_context *ctx)
{
    std::vector<std::string> keys;
    {
        std::lock_guard<std::mutex> g(g_mu);
        auto it = g_queues.find(ctx);
        if (it == g_queues.end()) return;
        for (Sender &s : it->second.senders) forget_ops(s, &keys);
        g_queues.erase(it);
    }
    for (const std::string &k : keys) jit_compile_release(k);
}

}  // namespace xrdma
