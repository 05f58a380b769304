// Rings (ring.h). A sender asks a receiver for a ring after a few active
// messages on an endpoint, showing it a probe: the key of a few bytes of
// UCX memory. A receiver that can map the probe with ucp_rkey_ptr, which
// succeeds only where memory is reachable by load and store (shared
// memory), allocates the ring with UCX (ucp_mem_map) and offers it with its
// key; the sender maps it the same way. Elsewhere the receiver refuses
// without allocating anything (and should the sender still fail to map an
// offered ring, it declines and the ring is freed). An ordinary ucp_put_nbx of a frame measured slower than an active
// message over TCP (1.7x the one-way time) and faster over shared memory
// (0.55x), so rings are used exactly where stores reach the receiver.
//
// Order. Messages that do not fit a slot, or find the ring full, still go as
// active messages. Each frame carries how many active messages its sender
// had sent on the endpoint before it (am_before, counted from the request);
// the receiver counts the active messages that arrive from that endpoint. A
// frame is taken only once that many have arrived, and an arriving active
// message first takes the frames sent before it: the receiver sees the
// sender's messages in the order they were sent, on either path.
//
// Ring memory: [control: consumed frame count, 64 bytes][slot]... A slot
// holds a RingSlotHdr and the message. A context's rings lie in one UCX
// allocation (RingPool), made at its first request or offer and bounded by
// XRDMA_RING_MEMORY: one shared segment per process, whatever the number of
// peers (a segment per ring filled a node's System V table at 32 ranks).
// Its first bytes are the probe. The first kBigRings senders get
// kRingSlots-slot rings, later ones kSmallRingSlots: a node of many ranks
// keeps the memory per rank small, a few peers keep their full window of
// small X-ops in flight. A sender the pool has no room for is refused (its
// messages stay active messages), which the receiver says at debug level. A warm invocation runs from its slot
// and the consumed count (the sender's credit) is stored when it ends; any
// other frame is copied out of the ring before it is handled, and its
// credit stored at once (ring_take()).
#include "wire/ring.h"

#include "run/arrive.h"
#include "run/context.h"
#include "xrdma_common/config.h"
#include "xrdma_common/log.h"
#include "xrdma_common/hot.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace xrdma {

namespace {

constexpr uint32_t kRingSlots = 128;  // a power of two
constexpr uint32_t kSmallRingSlots = 16;  // the same, for the senders after the first kBigRings
constexpr unsigned kBigRings = 8;
constexpr uint32_t kRingSlotSize = 1024;  // a warm invocation, or the acks of a window of 64 X-ops
// A frame this small (a warm invocation's header and args) is copied out of
// its slot as a block of this size, without a call: the slot has the room.
constexpr size_t kSmallFrame = 128;
static_assert(kSmallFrame <= kRingSlotSize - sizeof(RingSlotHdr), "a small frame's copy stays in its slot");
constexpr unsigned long long kRingLingerMax = 4096;  // XRDMA_RING_LINGER's and XRDMA_RING_WAIT's ceiling
constexpr uint32_t kRingAfter = 4;  // active messages on an endpoint before a ring is asked for
constexpr uint16_t kMaxRkey = 4096;

}  // namespace

struct RingIn {
    ucp_ep_h ep;  // the sender (its reply endpoint here)
    uint32_t slots = 0;       // (a power of two)
    uint8_t *base = nullptr;  // in the pool; nullptr once freed (declined)
    uint64_t mask = 0;        // slots - 1
    uint8_t *slots_base = nullptr;  // base + kRingCtrl
    uint64_t next = 0;        // the next frame's number
    uint64_t am_arrived = 0;  // active messages from ep since the request
    bool held = false;        // a warm invocation runs from its slot (ring_take())
};

// A context's ring memory (ring.cc, the opening comment): slices of one
// UCX allocation, handed out from its end and returned to a free list.
struct RingPool {
    ucp_mem_h mem = nullptr;
    uint8_t *base = nullptr;
    size_t size = 0, used = 0, given = 0;  // the allocation; its bytes handed out so far; in use now
    std::vector<std::pair<size_t, size_t>> free;  // slices returned (offset, length)
    std::vector<uint8_t> key;  // packed once: every offer and request carries it
    bool failed = false;       // could not be made: no rings in this context

    // A slice of @p len bytes, zeroed (fresh pages are: they are not
    // touched here, so a ring costs memory only as it is used).
    uint8_t *take(size_t len)
    {
        for (size_t i = 0; i < free.size(); ++i)
            if (free[i].second == len) {
                uint8_t *p = base + free[i].first;
                free.erase(free.begin() + long(i));
                given += len;
                memset(p, 0, len);  // (no stale frame may look fresh)
                return p;
            }
        if (used + len > size) return nullptr;
        uint8_t *p = base + used;
        used += len;
        given += len;
        return p;
    }
    void put(uint8_t *p, size_t len)
    {
        free.emplace_back(size_t(p - base), len);
        given -= len;
    }
};

struct Rings {
    ucp_context_h ucp = nullptr;
    RingPool pool;
    std::unordered_map<ucp_ep_h, std::unique_ptr<RingOut>> outs;  // (the last one looked up: in the context)
    // Kept until the context goes (a frame being handled may refer to its
    // ring's entry), freed memory and all.
    std::vector<std::unique_ptr<RingIn>> ins;
    RingIn *in_last = nullptr;
    unsigned rings_in = 0;  // senders with a ring here now
};

namespace {

// Contexts with rings to poll, for every worker; a thread polls from a copy
// it refreshes when the list changed.
std::mutex g_mu;
std::vector<std::pair<ucp_worker_h, ucx_ifunc_context *>> g_polled;
std::atomic<uint64_t> g_gen{1};

void polled_add(ucx_ifunc_context *ctx)
{
    std::lock_guard<std::mutex> guard(g_mu);
    for (auto &e : g_polled)
        if (e.second == ctx) return;
    g_polled.emplace_back(ctx->params.worker, ctx);
    g_rings_polled.store(int(g_polled.size()), std::memory_order_relaxed);
    g_gen.fetch_add(1, std::memory_order_release);
}

void polled_remove(ucx_ifunc_context *ctx)
{
    std::lock_guard<std::mutex> guard(g_mu);
    for (size_t i = 0; i < g_polled.size(); ++i)
        if (g_polled[i].second == ctx) {
            g_polled.erase(g_polled.begin() + long(i));
            break;
        }
    g_rings_polled.store(int(g_polled.size()), std::memory_order_relaxed);
    g_gen.fetch_add(1, std::memory_order_release);
}

ucx_ifunc_status_t send_ring_msg(ucx_ifunc_context *ctx, ucp_ep_h ep, RingKind kind, uint64_t addr,
                                 const void *rkey = nullptr, uint16_t rkey_len = 0, uint32_t slots = 0)
{
    const bool is_offer = kind == kRingOffer;  // only an offer carries the ring's geometry
    const RingMsg m{kRingMagic, kWireVersion, kind, rkey_len, is_offer ? slots : 0, is_offer ? kRingSlotSize : 0, addr};
    return send_control(ctx, ep, &m, sizeof(m), rkey, rkey_len);
}

size_t ring_bytes(uint32_t slots) { return kRingCtrl + size_t(slots) * kRingSlotSize; }

RingIn *find_in(Rings *g, ucp_ep_h ep)
{
    if (g->in_last && g->in_last->ep == ep) return g->in_last;
    for (auto &r : g->ins)
        if (r->ep == ep && r->base) return g->in_last = r.get();
    return nullptr;
}

void free_in(Rings *g, RingIn &r)
{
    if (r.base) {
        g->pool.put(r.base, ring_bytes(r.slots));
        g->rings_in--;
    }
    r.base = nullptr;
    if (g->in_last == &r) g->in_last = nullptr;
}

// Map @p len bytes of key @p data, for memory at @p addr in @p ep's process,
// into this one (nullptr: UCX cannot: not shared memory). The key is unpacked
// from a copy followed by zeros (ucp_ep_rkey_unpack takes no length: a
// malformed key must not make it read past the data); *@p rkey must be
// destroyed by the caller when it is not nullptr.
void *map_peer(ucp_ep_h ep, const void *data, size_t len, uint64_t addr, ucp_rkey_h *rkey)
{
    std::vector<uint8_t> key(len + 256, 0);
    memcpy(key.data(), data, len);
    void *ptr = nullptr;
    *rkey = nullptr;
    ucs_status_t st = ucp_ep_rkey_unpack(ep, key.data(), rkey);
    if (st == UCS_OK) st = ucp_rkey_ptr(*rkey, addr, &ptr);
    if (st == UCS_OK) return ptr;
    if (*rkey) ucp_rkey_destroy(*rkey);
    *rkey = nullptr;
    return nullptr;
}

// The context's ring memory, made on first use (XRDMA_RING_MEMORY bytes,
// at least the probe and one small ring); nullptr if it cannot be made.
RingPool *pool_of(Rings *g)
{
    RingPool &p = g->pool;
    if (p.base || p.failed) return p.base ? &p : nullptr;
    p.failed = true;  // (until it is made)
    const size_t size =
        std::max<size_t>(size_t(config_get_ull("XRDMA_RING_MEMORY")), kRingCtrl + ring_bytes(kSmallRingSlots));
    ucp_mem_map_params_t mp;
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucp_mem_attr_t ma;
    ma.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    ucs_status_t st = ucp_mem_map(g->ucp, &mp, &p.mem);
    if (st != UCS_OK) {
        XRDMA_DEBUG("no ring memory (%zu bytes): ucp_mem_map: %s; active messages only", size, ucs_status_string(st));
        p.mem = nullptr;
        return nullptr;
    }
    void *key = nullptr;
    size_t key_len = 0;
    if (ucp_mem_query(p.mem, &ma) != UCS_OK || ucp_rkey_pack(g->ucp, p.mem, &key, &key_len) != UCS_OK) {
        ucp_mem_unmap(g->ucp, p.mem);
        p.mem = nullptr;
        return nullptr;
    }
    if (key_len <= kMaxRkey) p.key.assign(static_cast<uint8_t *>(key), static_cast<uint8_t *>(key) + key_len);
    ucp_rkey_buffer_release(key);
    if (p.key.empty()) {
        ucp_mem_unmap(g->ucp, p.mem);
        p.mem = nullptr;
        return nullptr;
    }
    p.base = static_cast<uint8_t *>(ma.address);
    p.size = std::min<size_t>(size, ma.length);
    p.used = kRingCtrl;  // the probe: what a request shows its receiver
    p.failed = false;
    return &p;
}

// The receiver: a ring for @p ep's messages, offered to it if this process
// can map the probe that came with the request (request @p m, key @p data),
// which says the sender will be able to map the ring.
void offer(ucx_ifunc_context *ctx, ucp_ep_h ep, const RingMsg &m, const void *data, size_t len)
{
    Rings *g = ctx->rings;
    const bool sane = m.rkey_len == len && len > 0 && len <= kMaxRkey && m.addr;
    ucp_rkey_h probe = nullptr;
    if (!g || !sane || !map_peer(ep, data, len, m.addr, &probe)) {
        if (g && !sane) ctx->stats.rejected++;
        send_ring_msg(ctx, ep, kRingRefuse, 0);
        return;
    }
    ucp_rkey_destroy(probe);
    // A sender asks once and counts its messages from its request: a ring
    // it had (it asked again: a peer out of step) starts afresh, in the same
    // entry (a peer that keeps asking holds one entry, not one per request).
    RingIn *r = nullptr;
    for (auto &e : g->ins)
        if (e->ep == ep) {
            free_in(g, *e);
            r = e.get();
        }
    RingPool *pool = pool_of(g);
    uint32_t slots = g->rings_in < kBigRings ? kRingSlots : kSmallRingSlots;
    uint8_t *mem = pool ? pool->take(ring_bytes(slots)) : nullptr;
    if (!mem && pool && slots != kSmallRingSlots) mem = pool->take(ring_bytes(slots = kSmallRingSlots));
    if (!mem) {
        XRDMA_DEBUG("rank %d: no ring for a peer: %s; its messages stay active messages", ctx->params.rank,
                    pool ? "XRDMA_RING_MEMORY is taken by the rings of other peers" : "no ring memory");
        send_ring_msg(ctx, ep, kRingRefuse, 0);
        return;
    }
    if (!r) {
        g->ins.push_back(std::unique_ptr<RingIn>(new RingIn{ep}));
        r = g->ins.back().get();
        ctx->rings_in = true;  // (ins never shrinks while the context lives)
    }
    *r = RingIn{ep, slots, mem, slots - 1u, mem + kRingCtrl};
    g->rings_in++;
    polled_add(ctx);
    send_ring_msg(ctx, ep, kRingOffer, reinterpret_cast<uintptr_t>(r->base), pool->key.data(),
                  uint16_t(pool->key.size()), slots);
}

// The sender: map the ring offered by @p ep, or decline it.
void accept(ucx_ifunc_context *ctx, ucp_ep_h ep, const RingMsg &m, const void *data, size_t len)
{
    RingOut *r = ring_out(ctx, ep);
    const bool sane = m.slots > 0 && m.slots <= 4096 && (m.slots & (m.slots - 1)) == 0 && m.slot_size >= 64 &&
                      m.slot_size <= 65536 && m.slot_size % 8 == 0 && m.rkey_len == len && len > 0 &&
                      len <= kMaxRkey && m.addr;
    if (!r || r->state != RingOut::kRequested || !sane) {
        if (!sane) ctx->stats.rejected++;
        if (m.addr) send_ring_msg(ctx, ep, kRingDecline, m.addr);
        return;
    }
    ucp_rkey_h rkey;
    void *ptr = map_peer(ep, data, len, m.addr, &rkey);
    if (!ptr) {
        XRDMA_DEBUG("rank %d: a peer's ring is not mapped here: active messages", ctx->params.rank);
        r->state = RingOut::kOff;
        send_ring_msg(ctx, ep, kRingDecline, m.addr);
        return;
    }
    r->rkey = rkey;
    r->base = static_cast<uint8_t *>(ptr);
    r->slots = m.slots;
    r->slot_size = m.slot_size;
    r->state = RingOut::kActive;
}

uint8_t *slot_of(const RingIn &r, uint64_t frame)
{
    return r.slots_base + ((frame * kSlotStride) & r.mask) * kRingSlotSize;  // (ring_slot_index())
}

// Whether the next frame of @p r is there, in @p slot (its slot_of()).
bool frame_in(const RingIn &r, const uint8_t *slot) { return r.base && load_seq(slot) == uint32_t(r.next + 1); }
// The same, its slot found here (a cheap test before ring_take()).
bool frame_there(const RingIn &r) { return frame_in(r, slot_of(r, r.next)); }

// A frame of acks (kRingAcks, copied out to @p f; its slot header @p h)
// from @p ep: the requests end here, unless messages wait before it (or
// progress may not run it here): then it is queued as the reply it stands
// for.
inline __attribute__((always_inline)) void take_acks(ucx_ifunc_context *ctx, const uint8_t *f, const RingSlotHdr &h,
                                                     ucp_ep_h ep, bool in_ucx)
{
    RingAcksHdr a;
    memcpy(&a, f, sizeof(a));
    if (!ring_acks_valid(a, h.hdr_len, h.data_len)) {
        ctx->stats.rejected++;
        XRDMA_WARN("rank %d: dropping a malformed ring frame of acks (%u req_ids in %u bytes)", ctx->params.rank,
                   unsigned(h.hdr_len) >= sizeof(a) ? a.n : 0u, unsigned(h.data_len));
        return;
    }
    const uint8_t *ids = f + sizeof(a);
    if (arrive_here_ok(ctx)) {
        handle_here(ctx, in_ucx, [&] { origin_complete_acks(ctx, a.rank, ids, a.n); });
        return;
    }
    const ReplyHdr rh = make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, a.rank, 0, uint32_t(h.data_len));
    arrive_queued(ctx, kAmReply, &rh, sizeof(rh), ids, h.data_len, ep);
}

// Take the frames of @p r that are there (its next one is: the caller
// checked) and were sent before the first @p limit active messages from its
// sender. A warm invocation runs from its slot (its handling copies the
// header it checks, and the layer its own: run_invocation(), window_dispatch());
// its slot is held, its credit stored once it ends. Anything else is copied
// out first and its credit stored at once, and so is every frame taken
// while a slot of the ring is held (a nested pass: the held one's credit
// must wait).
__attribute__((noinline)) XRDMA_HOT unsigned ring_take(ucx_ifunc_context *ctx, RingIn &r, uint64_t limit, bool in_ucx)
{
    unsigned n = 0;
    alignas(16) uint8_t buf[kRingSlotSize];
    uint8_t *slot = slot_of(r, r.next);
    do {
        RingSlotHdr h;
        memcpy(&h, slot, sizeof(h));
        if (int32_t(h.am_before - uint32_t(limit)) > 0) break;  // an active message sent before it has not arrived yet
        const size_t len = size_t(h.hdr_len) + h.data_len;
        const bool ok =
            len <= kRingSlotSize - sizeof(h) && (h.kind == kAmInvoke || h.kind == kAmReply || h.kind == kRingAcks);
        r.next++;
        ++n;
        ctx->stats.ring_frames++;
        if (ok && h.kind == kAmInvoke && h.hdr_len == sizeof(InvokeShortHdr) && !r.held) {
            r.held = true;
            const uint8_t *d = slot + sizeof(h);
            arrive(ctx, kAmInvoke, d, sizeof(InvokeShortHdr), d + sizeof(InvokeShortHdr), h.data_len, r.ep, in_ucx);
            r.held = false;
            if (r.base) store_release(r.base, r.next);  // (its credit, and that of frames a nested pass took)
            // Its acknowledgement, with the others due, goes now when no
            // frame follows it in this ring, rather than at the end of the
            // pass (run_queued()): the origin of a lone X-op waits for it.
            // A burst still shares one frame of acks. (Not from inside
            // UCX's handler, nor during an ifunc: their pass sends them.)
            if (ctx->acks_waiting && !in_ucx && !t_dispatching && !frame_in(r, slot_of(r, r.next))) flush_acks(ctx);
        } else {
            if (ok && len <= kSmallFrame)
                __builtin_memcpy(buf, slot + sizeof(h), kSmallFrame);  // (a fixed size, copied inline: the slot has room)
            else if (ok)
                memcpy(buf, slot + sizeof(h), len);
            if (!r.held) store_release(r.base, r.next);  // the slot is free again: the sender's credit
            if (h.kind != kAmInvoke) ++t_ring_answers;
            if (ok && h.kind == kRingAcks) {
                take_acks(ctx, buf, h, r.ep, in_ucx);
            } else if (ok) {
                arrive(ctx, h.kind, buf, h.hdr_len, buf + h.hdr_len, h.data_len, r.ep, in_ucx);
            } else {
                ctx->stats.rejected++;
                XRDMA_WARN("rank %d: dropping a malformed ring frame (kind %u, %zu bytes)", ctx->params.rank,
                           unsigned(h.kind), len);
            }
        }
        slot = slot_of(r, r.next);  // (kept for the next turn)
    } while (frame_in(r, slot));
    return n;
}

}  // namespace

RingOut *ring_out_find(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    RingOut *r = ctx->ring_out_memo.in_way(ep);  // (RingOuts live as long as the rings)
    if (!r) {
        std::unique_ptr<RingOut> &p = ctx->rings->outs[ep];  // (ring_out() checked there are rings)
        if (!p) p.reset(new RingOut{ep});
        r = p.get();
    }
    return ctx->ring_out_memo.use(ep, r);
}

void ring_unstage(RingOut &r)
{
    if (!r.staged_to) return;
    const uint8_t *d = r.staged_slot + sizeof(RingSlotHdr) + r.staged_hdr_len;
    r.staged_to->assign(d, d + r.staged_len);
    r.staged_to = nullptr;
}

bool ring_write(RingOut &r, uint16_t am_id, const void *hdr, size_t hdr_len, const Piece (&pieces)[3])
{
    if (hdr_len > UINT8_MAX) return false;  // (RingSlotHdr::hdr_len; no header is that long)
    if (r.staged_to) ring_unstage(r);  // (a staged forward goes after this message)
    const size_t data_len = pieces[0].len + pieces[1].len + pieces[2].len;
    uint8_t *slot = ring_next_slot(r, hdr_len + data_len);
    if (!slot) return false;
    uint8_t *d = ring_write_front(slot, r, am_id, hdr, hdr_len, data_len);
    for (const Piece &pc : pieces) {
        if (pc.len) memcpy(d, pc.p, pc.len);
        d += pc.len;
    }
    publish_seq(slot, ++r.next);
    return true;
}

void ring_sent_am(ucx_ifunc_context *ctx, ucp_ep_h ep, RingOut &r)
{
    if (r.state == RingOut::kRequested || r.state == RingOut::kActive) {
        r.am_sent++;
        return;
    }
    if (r.state != RingOut::kNone || ++r.am_sent < kRingAfter) return;
    RingPool *pool = pool_of(ctx->rings);
    if (!pool) {  // (no UCX memory to show the peer: no ring)
        r.state = RingOut::kOff;
        return;
    }
    r.state = RingOut::kRequesting;  // (the request itself is not counted)
    ucx_ifunc_status_t st = send_ring_msg(ctx, ep, kRingRequest, reinterpret_cast<uintptr_t>(pool->base),
                                          pool->key.data(), uint16_t(pool->key.size()));
    r.state = (st == UCX_IFUNC_OK || st == UCX_IFUNC_INPROGRESS) ? RingOut::kRequested : RingOut::kOff;
    r.am_sent = 0;
}

bool ring_control(ucx_ifunc_context *ctx, const void *hdr, size_t hdr_len, const void *data, size_t len,
                  ucp_ep_h reply_ep)
{
    RingMsg m;
    if (hdr_len != sizeof(m)) return false;
    memcpy(&m, hdr, sizeof(m));
    if (m.magic != kRingMagic) return false;
    if (!reply_ep || m.version != kWireVersion) {
        ctx->stats.rejected++;
        return true;
    }
    switch (m.kind) {
    case kRingRequest: offer(ctx, reply_ep, m, data, len); break;
    case kRingOffer: accept(ctx, reply_ep, m, data, len); break;
    case kRingRefuse:
        if (RingOut *r = ring_out(ctx, reply_ep))
            if (r->state == RingOut::kRequested) r->state = RingOut::kOff;
        break;
    case kRingDecline:
        if (ctx->rings)
            for (auto &r : ctx->rings->ins)
                if (r->ep == reply_ep && r->base && reinterpret_cast<uintptr_t>(r->base) == m.addr) {
                    // (A sender declines a ring it could not map, so it never
                    // wrote into it: one with a slot held is not freed under
                    // the invocation that runs from it.)
                    if (r->held)
                        ctx->stats.rejected++;
                    else
                        free_in(ctx->rings, *r);
                }
        break;
    default: ctx->stats.rejected++; break;
    }
    return true;
}

XRDMA_HOT void ring_before_am(ucx_ifunc_context *ctx, ucp_ep_h reply_ep)
{
    Rings *g = ctx->rings;  // (the caller checked rings_in)
    if (!reply_ep) return;
    RingIn *r = find_in(g, reply_ep);
    if (!r) return;
    const uint64_t k = r->am_arrived++;
    std::atomic_thread_fence(std::memory_order_acquire);  // (pairs with transmit()'s release before the message)
    if (frame_there(*r)) ring_take(ctx, *r, k, true);
}

namespace {
// This thread's copy of g_polled, taken again when g_gen changes: no lock
// per poll. Reached through an initial-exec pointer (one %fs-relative load;
// a thread_local vector costs a __tls_get_addr() call and an
// initialisation check on every poll, most of an empty poll's cost).
struct PolledCopy {
    uint64_t seen = 0;
    std::vector<std::pair<ucp_worker_h, ucx_ifunc_context *>> list;
};
thread_local PolledCopy t_polled_storage;  // (owns it: freed when the thread ends)
__thread PolledCopy *t_polled __attribute__((tls_model("initial-exec"))) = nullptr;

__attribute__((noinline)) PolledCopy &polled_refresh(uint64_t gen)
{
    if (!t_polled) t_polled = &t_polled_storage;
    PolledCopy &c = *t_polled;
    if (c.seen != gen) {
        std::lock_guard<std::mutex> guard(g_mu);
        c.list = g_polled;
        c.seen = g_gen.load(std::memory_order_relaxed);
    }
    return c;
}
}  // namespace

std::atomic<int> g_rings_polled{0};
__thread unsigned t_ring_answers = 0;
unsigned g_ring_linger = 0;
unsigned g_ring_wait = 0;

XRDMA_HOT unsigned ring_poll_rings(ucp_worker_h worker)
{
    const uint64_t gen = g_gen.load(std::memory_order_acquire);
    PolledCopy &c = __builtin_expect(t_polled && t_polled->seen == gen, 1) ? *t_polled : polled_refresh(gen);
    const auto &polled = c.list;
    unsigned n = 0;
    t_ring_answers = 0;
    for (size_t i = 0; i < polled.size(); ++i) {
        if (polled[i].first != worker) continue;
        ucx_ifunc_context *ctx = polled[i].second;
        // (by index: a ring may be added while a frame is handled)
        for (size_t k = 0; k < ctx->rings->ins.size(); ++k) {
            RingIn &r = *ctx->rings->ins[k];
            if (frame_there(r)) n += ring_take(ctx, r, r.am_arrived, false);
        }
    }
    return n;
}

void rings_create(ucx_ifunc_context *ctx, ucp_context_h ucp)
{
    const char *mode = config_get("XRDMA_RING");
    if (!ucp || !ctx->am_enabled || (mode && strcmp(mode, "off") == 0)) return;
    if (mode && strcmp(mode, "auto") != 0)
        XRDMA_WARN("XRDMA_RING=%s is neither auto nor off: auto", mode);
    ctx->rings = new Rings();
    ctx->rings->ucp = ucp;
    g_ring_linger = unsigned(std::min<unsigned long long>(config_get_ull("XRDMA_RING_LINGER"), kRingLingerMax));
    g_ring_wait = unsigned(std::min<unsigned long long>(config_get_ull("XRDMA_RING_WAIT"), kRingLingerMax));
}

void rings_destroy(ucx_ifunc_context *ctx)
{
    Rings *g = ctx->rings;
    if (!g) return;
    polled_remove(ctx);
    for (auto &r : g->ins) free_in(g, *r);
    for (auto &kv : g->outs)
        if (kv.second->rkey) ucp_rkey_destroy(kv.second->rkey);
    if (g->pool.mem) ucp_mem_unmap(g->ucp, g->pool.mem);
    delete g;
    ctx->rings = nullptr;
    ctx->ring_out_memo.clear();
}

void rings_stats(const ucx_ifunc_context *ctx, ucx_ifunc_stats_t *stats)
{
    const Rings *g = ctx->rings;
    stats->rings_in = g ? g->rings_in : 0;
    stats->ring_bytes = g ? g->pool.given : 0;
}

void rings_peer_failed(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    if (!ctx->rings) return;
    if (RingOut *r = ring_out(ctx, ep)) r->state = RingOut::kOff;
}

}  // namespace xrdma
