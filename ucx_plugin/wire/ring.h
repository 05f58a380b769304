// Rings: small messages between two contexts written straight into a ring
// in the receiver's memory (put-and-poll for the plugin's own messages),
// where UCX can map that memory into the sender (ucp_rkey_ptr: shared
// memory). The receiver finds them in its progress, without the active-
// message path; credit is a counter the receiver stores in the ring, which
// the sender reads (no message per operation). Everything else travels as
// an active message, and a count of those carried in each frame keeps the
// sender's order across the two paths (ring.cc).
#pragma once

#include "wire/wire.h"
#include "xrdma_common/bytes.h"
#include "ucx_ifunc.h"

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

struct ucx_ifunc_context;

namespace xrdma {

// A piece of a message to send (header or data), as a view.
struct Piece {
    const void *p;
    size_t len;
};

constexpr size_t kRingCtrl = 64;  // a ring's control word (the receiver's consumed count), then its slots

inline uint64_t load_acquire(const uint8_t *p)
{
    return __atomic_load_n(reinterpret_cast<const uint64_t *>(p), __ATOMIC_ACQUIRE);
}
inline void store_release(uint8_t *p, uint64_t v) { __atomic_store_n(reinterpret_cast<uint64_t *>(p), v, __ATOMIC_RELEASE); }
// A slot's sequence word (RingSlotHdr::seq).
inline uint32_t load_seq(const uint8_t *slot)
{
    return __atomic_load_n(reinterpret_cast<const uint32_t *>(slot), __ATOMIC_ACQUIRE);
}
inline void publish_seq(uint8_t *slot, uint64_t frames)
{
    __atomic_store_n(reinterpret_cast<uint32_t *>(slot), uint32_t(frames), __ATOMIC_RELEASE);
}

// Towards one receiver endpoint (sender side). (Here, not in ring.cc:
// staging a forward and publishing it are inline on the hot path.)
struct RingOut {
    enum State : uint8_t { kNone, kRequesting, kRequested, kActive, kOff };
    ucp_ep_h ep;
    State state = kNone;
    uint64_t am_sent = 0;   // active messages sent (from the request on: since the request)
    uint64_t next = 0;      // frames written
    // Frames the receiver had taken when last read: the credit word (which
    // the receiver writes after every frame) is read again only when this
    // says the ring is full, not on every write (a cache line the two cores
    // would otherwise pass back and forth once per message).
    uint64_t taken_seen = 0;
    uint32_t slots = 0, slot_size = 0;
    uint8_t *base = nullptr;  // the ring, mapped here
    ucp_rkey_h rkey = nullptr;
    // A staged frame (ring_stage) in slot `next` (staged_slot): where its
    // data goes if it has to be moved out (nullptr: none staged), its
    // header's and data's lengths.
    Bytes *staged_to = nullptr;
    uint8_t *staged_slot = nullptr;
    uint16_t staged_hdr_len = 0;
    uint32_t staged_len = 0;
};

struct RingIn;   // from one sender endpoint (receiver side)

// (Sender side: ring_out(), context.h, finds the ring towards an endpoint.)
// Write message (@p hdr, @p pieces) of kind @p am_id (kAmInvoke, kAmReply, kRingAcks)
// into ring @p r: false if it has no active ring, the message does not fit
// a slot or the ring is full (send it as an active message then).
bool ring_write(RingOut &r, uint16_t am_id, const void *hdr, size_t hdr_len, const Piece (&pieces)[3]);
// A frame written into the next slot of @p r but not yet visible to the
// receiver: a forward made while its ifunc still runs, which goes only if
// the ifunc ends well (its arguments written once, straight into the slot).
// ring_stage() writes the RingSlotHdr and @p hdr and returns where the
// frame's @p data_len bytes of data go; nullptr if it cannot be staged (no
// active ring, too long for a slot, full, one staged already). Until
// ring_publish() or ring_drop(), any other write on the ring first moves
// the staged data into *@p unstage_to (the frame becomes an ordinary
// message to send later, after that write); ring_unstage() does so on
// demand. ring_publish() makes it visible (in its place in the sender's
// order: after every active message sent before now) and says how many
// bytes of data it has; false if it was moved (or the ring went off
// meanwhile, moved now): send *@p unstage_to.
void ring_unstage(RingOut &r);

// Where frame @p frame lies in a ring of @p slots slots (a power of two):
// frames in turn lie kSlotStride slots apart (with 1 KiB slots, a page and
// more), not side by side. A receiver reads the frames in turn; were they
// side by side, its hardware prefetcher would follow and pull the slots the
// sender is about to write into the receiver's cache, and each of the
// sender's frames would wait for its line (osu_xinvoke_mr, shm: the
// sender's issue loop 20-30 % shorter with them apart).
constexpr uint64_t kSlotStride = 37;  // odd: every slot in turn
inline uint64_t ring_slot_index(uint64_t frame, uint32_t slots) { return (frame * kSlotStride) & (slots - 1); }

// The slot of @p r's next frame.
inline uint8_t *ring_slot(const RingOut &r)
{
    return r.base + kRingCtrl + ring_slot_index(r.next, r.slots) * size_t(r.slot_size);
}

// The next slot of @p r, if a message of @p len bytes fits a slot and the
// slot is free (nullptr: send it as an active message).
inline uint8_t *ring_next_slot(RingOut &r, size_t len)
{
    if (r.state != RingOut::kActive || sizeof(RingSlotHdr) + len > r.slot_size || len > UINT16_MAX) return nullptr;
    if (r.next - r.taken_seen >= r.slots) {  // full as far as we knew: read the credit word again
        r.taken_seen = load_acquire(r.base);
        if (r.next - r.taken_seen >= r.slots) return nullptr;  // full: the receiver is behind
    }
    return ring_slot(r);
}

// Write the slot header (all but its sequence word, which publishes it;
// with @p before, also the count of active messages sent before it) and the
// message header; returns where the data goes.
inline uint8_t *ring_write_front(uint8_t *slot, const RingOut &r, uint16_t am_id, const void *hdr, size_t hdr_len,
                                 size_t data_len, bool before = true)
{
    RingSlotHdr h{0, uint32_t(r.am_sent), uint8_t(am_id), uint8_t(hdr_len), uint16_t(data_len)};
    constexpr size_t from = offsetof(RingSlotHdr, kind);  // (kind, the lengths)
    if (before) {
        memcpy(slot + sizeof(h.seq), reinterpret_cast<const uint8_t *>(&h) + sizeof(h.seq), sizeof(h) - sizeof(h.seq));
    } else {
        static_assert(offsetof(RingSlotHdr, am_before) + sizeof(h.am_before) == from, "slot header layout");
        memcpy(slot + from, reinterpret_cast<const uint8_t *>(&h) + from, sizeof(h) - from);
    }
    memcpy(slot + sizeof(h), hdr, hdr_len);
    return slot + sizeof(h) + hdr_len;
}

// A small message (the common one: a warm invocation of a few bytes of
// arguments) written into the next slot of @p r with inline copies of fixed
// or bounded size, no calls: false if it is larger than kRingSmallData bytes
// of data, a forward is staged, or there is no room (ring_write() then).
constexpr size_t kRingSmallData = 32;
inline __attribute__((always_inline)) bool ring_write_small(RingOut &r, uint16_t am_id, const void *hdr,
                                                            size_t hdr_len, const void *data, size_t len)
{
    if (len > kRingSmallData || hdr_len > UINT8_MAX || r.staged_to) return false;  // (RingSlotHdr::hdr_len)
    uint8_t *slot = ring_next_slot(r, hdr_len + len);
    if (!slot) return false;
    copy_bytes(ring_write_front(slot, r, am_id, hdr, hdr_len, len), data, len);
    publish_seq(slot, ++r.next);
    return true;
}

inline uint8_t *ring_stage(RingOut &r, uint16_t am_id, const void *hdr, size_t hdr_len, size_t data_len,
                           Bytes *unstage_to)
{
    if (hdr_len > UINT8_MAX) return nullptr;  // (RingSlotHdr::hdr_len)
    if (r.staged_to) return nullptr;
    uint8_t *slot = ring_next_slot(r, hdr_len + data_len);
    if (!slot) return nullptr;
    r.staged_to = unstage_to;
    r.staged_slot = slot;
    r.staged_hdr_len = uint16_t(hdr_len);
    r.staged_len = uint32_t(data_len);
    return ring_write_front(slot, r, am_id, hdr, hdr_len, data_len, false);  // (ring_publish() writes am_before)
}

inline __attribute__((always_inline)) bool ring_publish(RingOut &r, size_t *data_len)
{
    if (!r.staged_to) return false;  // moved out by a later write
    if (r.state != RingOut::kActive) {  // (the peer failed meanwhile)
        ring_unstage(r);
        return false;
    }
    r.staged_to = nullptr;
    *data_len = r.staged_len;
    uint8_t *slot = r.staged_slot;  // (= ring_slot(r): nothing was written since)
    // After every active message sent on the endpoint until now.
    const uint32_t before = uint32_t(r.am_sent);
    memcpy(slot + offsetof(RingSlotHdr, am_before), &before, sizeof(before));
    publish_seq(slot, ++r.next);
    return true;
}

inline void ring_drop(RingOut &r) { r.staged_to = nullptr; }
// An active message was sent on @p r's endpoint: counted (frames written
// later wait for it at the receiver); asks for a ring after a few.
void ring_sent_am(ucx_ifunc_context *ctx, ucp_ep_h ep, RingOut &r);

// Receiver side, from the active-message handler: a ring control message
// (request, offer, decline) is handled here (true); any other message from
// @p reply_ep first lets the frames that sender wrote before it arrive
// (ring_before_am: only for a context some peer writes into a ring of:
// ctx->rings_in).
bool ring_control(ucx_ifunc_context *ctx, const void *hdr, size_t hdr_len, const void *data, size_t len,
                  ucp_ep_h reply_ep);
void ring_before_am(ucx_ifunc_context *ctx, ucp_ep_h reply_ep);
// Progress: frames in the rings of every context of @p worker (those of
// another context are queued for it, as its active messages are). Inline:
// a pass without any ring (TCP, rings off, not yet asked for) costs a load.
extern std::atomic<int> g_rings_polled;  // contexts with rings to poll, of any worker
unsigned ring_poll_rings(ucp_worker_h worker);
inline unsigned ring_poll(ucp_worker_h worker)
{
    return g_rings_polled.load(std::memory_order_relaxed) ? ring_poll_rings(worker) : 0;
}
// Answers (replies, acks) this thread's last ring_poll_rings() took: a pass
// that took one may end a wait, and does not linger (receive.cc,
// ring_linger()).
extern __thread unsigned t_ring_answers __attribute__((tls_model("initial-exec")));
// XRDMA_RING_LINGER (read when a context makes its rings): empty looks at
// the rings a pass that served invocations from them takes before it
// returns.
extern unsigned g_ring_linger;
// XRDMA_RING_WAIT: looks at the rings an empty pass of
// ucx_ifunc_progress_wait() takes (receive.cc, ring_wait()).
extern unsigned g_ring_wait;

// Context setup (rings on unless XRDMA_RING=off; @p ucp: the worker's UCP
// context, nullptr: no rings), teardown, a failed peer.
void rings_create(ucx_ifunc_context *ctx, ucp_context_h ucp);
void rings_destroy(ucx_ifunc_context *ctx);
void rings_peer_failed(ucx_ifunc_context *ctx, ucp_ep_h ep);
// The rings' counters (ucx_ifunc_stats()).
void rings_stats(const ucx_ifunc_context *ctx, ucx_ifunc_stats_t *stats);

}  // namespace xrdma
