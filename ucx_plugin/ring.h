// Rings: small messages between two contexts written straight into a ring
// in the receiver's memory (put-and-poll for the plugin's own messages),
// where UCX can map that memory into the sender (ucp_rkey_ptr: shared
// memory). The receiver finds them in its progress, without the active-
// message path; credit is a counter the receiver stores in the ring, which
// the sender reads (no message per operation). Everything else travels as
// an active message, and a count of those carried in each frame keeps the
// sender's order across the two paths (ring.cc).
#pragma once

#include "xrdma_common/bytes.h"

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <memory>

struct ucx_ifunc_context;

namespace xrdma {

// A piece of a message to send (header or data), as a view.
struct Piece {
    const void *p;
    size_t len;
};

struct RingOut;  // towards one receiver endpoint (sender side)
struct RingIn;   // from one sender endpoint (receiver side)

// Sender side, from transmit(): the ring towards @p ep (nullptr: rings are
// off, for this context or this endpoint).
RingOut *ring_out(ucx_ifunc_context *ctx, ucp_ep_h ep);
// Write message (@p hdr, @p pieces) of kind @p am_id (kAmInvoke/kAmReply)
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
uint8_t *ring_stage(RingOut &r, uint16_t am_id, const void *hdr, size_t hdr_len, size_t data_len, Bytes *unstage_to);
bool ring_publish(RingOut &r, size_t *data_len);
void ring_unstage(RingOut &r);
void ring_drop(RingOut &r);
// An active message was sent on @p r's endpoint: counted (frames written
// later wait for it at the receiver); asks for a ring after a few.
void ring_sent_am(ucx_ifunc_context *ctx, ucp_ep_h ep, RingOut &r);

// Receiver side, from the active-message handler: a ring control message
// (request, offer, decline) is handled here (true); any other message from
// @p reply_ep first lets the frames that sender wrote before it arrive
// (ring_before_am: only for a context with rings).
bool ring_control(ucx_ifunc_context *ctx, const void *hdr, size_t hdr_len, const void *data, size_t len,
                  ucp_ep_h reply_ep);
void ring_before_am(ucx_ifunc_context *ctx, ucp_ep_h reply_ep);
// Progress: frames in the rings of every context of @p worker (those of
// another context are queued for it, as its active messages are).
unsigned ring_poll(ucp_worker_h worker);

// Context setup (rings on unless XRDMA_RING=off; @p ucp: the worker's UCP
// context, nullptr: no rings), teardown, a failed peer.
void rings_create(ucx_ifunc_context *ctx, ucp_context_h ucp);
void rings_destroy(ucx_ifunc_context *ctx);
void rings_peer_failed(ucx_ifunc_context *ctx, ucp_ep_h ep);

// receive.cc: a message that arrived (by a ring here), handled now if
// nothing waits before it and progress may run it, else queued.
void arrive(ucx_ifunc_context *ctx, uint16_t am_id, const void *hdr, size_t hdr_len, const void *data,
            size_t len, ucp_ep_h reply_ep, bool in_ucx);

}  // namespace xrdma
