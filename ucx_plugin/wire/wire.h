// Wire protocol of the plugin over UCP active messages and put-and-poll
// frames. All integers little-endian (this is checked at build time: only
// little-endian hosts are supported). The layout is documented here, field by
// field; the image a message may carry is man xrdma-image(5), and the use of
// put-and-poll frames is ucx_ifunc(3), "Put-and-poll frames".
//
// The messages: InvokeHdr (a full invocation, with the image unless the
// peer has it), InvokeShortHdr (a warm one, by the index bound to its image
// and entry: binding.cc), InvokeWithdrawHdr (a sender gives up a resend),
// ReplyHdr (answers, a ReplyKind each), the ring's frames (ring.h) and the
// put-and-poll FrameHdr, with FrameRefusal, the record a refused frame
// leaves; and their checks (wire.cc), run before anything of a message is
// used.
#pragma once

#include "image/image.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian hosts only");

namespace xrdma {

// Default AM ids (a context may be given others: invoke id, reply = id + 1).
constexpr uint16_t kAmInvoke = 0xA1;  // origin/forwarder -> target
constexpr uint16_t kAmReply  = 0xA2;  // target -> origin (or -> sender: need code)
// 2: 12-byte ring slot headers, frames kSlotStride slots apart (ring.h);
// 3: kRingAcks frames.
constexpr uint8_t  kWireVersion = 3;

// An active message's header travels as UCP's user header, or at the front
// of the data with no user header (header length 0): send_invoke_short()
// sends a warm invocation so to a peer without a ring when it can send at
// once (its InvokeShortHdr and the args, one piece from the stack). UCX
// gathers one piece less, and the send skips transmit()'s general path:
// a warm hop over TCP, 1 421 -> 1 331 instructions at the target, of which
// the front header alone, sent through transmit_am(), is ~10. A receiver
// takes any message without a user header this way (front_header()).
constexpr size_t kFrontHdr = 24;

// The receiver's side: a message of @p length bytes of data that came
// without a user header has its header in front (false: too short for one).
inline bool front_header(const void **header, size_t *header_length, const void **data, size_t *length)
{
    if (*length < kFrontHdr) return false;
    *header = *data;
    *header_length = kFrontHdr;
    *data = static_cast<const uint8_t *>(*data) + kFrontHdr;
    *length -= kFrontHdr;
    return true;
}

enum InvokeFlags : uint8_t {
    kHasCode   = 1u << 0,  // the image follows the entry name
    kForwarded = 1u << 1,  // reply goes to origin_rank through the peer table
    kQueued    = 1u << 2,  // run from the target's progress, never in UCX's handler
    // A success without reply bytes may wait at the target, batched, until
    // its sender asks for it (an ack request, below) or a batch of
    // kLazyAcks fills; not once forwarded (the sender would ask another
    // rank): UCX_IFUNC_INVOKE_LAZY_ACK.
    kLazyAck   = 1u << 3,
};
// The flags a short invocation may carry.
constexpr uint8_t kShortFlags = kForwarded | kQueued | kLazyAck;

// AM header of an invocation. Data: entry name, image (if kHasCode), args.
struct InvokeHdr {
    uint32_t magic;       // kInvokeMagic
    uint8_t  version;     // kWireVersion
    uint8_t  flags;       // InvokeFlags
    uint16_t entry_len;   // 1..255
    int32_t  origin_rank; // rank of the origin (-1: unknown, only direct replies)
    uint32_t hops;        // forwards so far
    uint64_t req_id;      // origin's request id
    uint32_t args_len;
    uint32_t bind;        // 0, or 1 + the index the sender binds image and entry to (below)
    uint64_t image_len;   // 0 without kHasCode
    uint8_t  hash[32];
};
static_assert(sizeof(InvokeHdr) == 72, "wire layout");
constexpr uint32_t kInvokeMagic = 0x56495258;  // "XRIV"

// Warm invocations name image and entry by a short index instead of hash and
// name: a sender binds an index per endpoint with its first full invocation
// of an image and entry (InvokeHdr.bind), the target remembers the binding
// per sender endpoint once that invocation found its code (binding.cc), and
// later invocations carry only this header and the args. A target that does
// not know the index (never bound, image dropped from its cache, restarted)
// answers kReplyNeedBind and the sender resends in full: no state has to
// agree for an invocation to be correct, only for it to be short.
struct InvokeShortHdr {
    uint32_t magic;       // kInvokeShortMagic
    uint8_t  version;     // kWireVersion
    uint8_t  flags;       // kShortFlags only
    uint16_t index;       // < kMaxBindings
    int32_t  origin_rank; // as in InvokeHdr (the same offsets up to req_id)
    uint32_t hops;
    uint64_t req_id;
};  // data: the args (all of it)
static_assert(sizeof(InvokeShortHdr) == kFrontHdr, "wire layout");
// A context created with peers_by_rank sends a warm invocation whose header
// is in front (above) without UCX's reply endpoint: the sender's rank, an
// int32, follows the args instead, and a receiver with peers_by_rank finds
// the sender's endpoint in its peer table (receive.cc, sender_by_rank()).
constexpr size_t kSenderRank = sizeof(int32_t);
constexpr uint32_t kInvokeShortMagic = 0x53495258;  // "XRIS"
constexpr uint32_t kMaxBindings = 1024;             // indices per sender endpoint

// A sender's answer to a need-code or need-bind answer when it cannot
// resend the invocation (the image is gone here, the index was never bound,
// the send failed): the target held that sender's later invocations behind
// the one it asked for (compile_queue.h), and lets them run now. Sent on
// the invocation id; the same size and front as InvokeShortHdr (the target
// tells them apart by magic, off the path of invocations), no data.
struct InvokeWithdrawHdr {
    uint32_t magic;       // kInvokeWithdrawMagic
    uint8_t  version;     // kWireVersion
    uint8_t  flags;       // 0
    uint16_t reserved;    // 0
    int32_t  origin_rank; // as in the invocation withdrawn
    uint32_t reserved2;   // 0
    uint64_t req_id;      // the invocation withdrawn
};
static_assert(sizeof(InvokeWithdrawHdr) == sizeof(InvokeShortHdr), "wire layout");
static_assert(offsetof(InvokeWithdrawHdr, origin_rank) == offsetof(InvokeShortHdr, origin_rank) &&
                  offsetof(InvokeWithdrawHdr, req_id) == offsetof(InvokeShortHdr, req_id),
              "wire layout");
constexpr uint32_t kInvokeWithdrawMagic = 0x57495258;  // "XRIW"

// A sender's request for the answers it let wait (kLazyAck): the target
// sends those it holds for this sender at once, and those of its
// invocations up to req_id (the last one the sender had issued) as soon as
// they finish. The layout of InvokeWithdrawHdr (origin_rank: the sender's),
// with this magic; sent on the invocation id, behind the invocations it
// asks about. ucx_ifunc_request_acks().
constexpr uint32_t kAckRequestMagic = 0x41495258;  // "XRIA"
using AckRequestHdr = InvokeWithdrawHdr;

enum ReplyKind : uint8_t { kReplyResult = 0, kReplyNeedCode = 1, kReplyAcks = 2, kReplyNeedBind = 3 };

// AM header of a reply. Data: message (msg_len), then reply bytes. For
// kReplyNeedCode the data is the original InvokeHdr, entry and args instead,
// so the sender can resend with code without having kept a copy. For
// kReplyAcks (successful invocations without reply bytes, answered together)
// the data is their req_ids, uint64 each (reply_len bytes, status OK,
// msg_len 0, req_id 0). For kReplyNeedBind (a short invocation whose index
// the target does not know; status UCX_IFUNC_ERR_NEED_CODE) the data is the
// original InvokeShortHdr and args, for a resend in full.
struct ReplyHdr {
    uint32_t magic;      // kReplyMagic
    uint8_t  version;
    uint8_t  kind;       // ReplyKind
    uint16_t msg_len;    // readable error message length (0 on success)
    int32_t  status;     // ucx_ifunc_status_t
    int32_t  rank;       // rank that answered
    uint64_t req_id;
    uint32_t reply_len;
    uint32_t reserved;
};
static_assert(sizeof(ReplyHdr) == 32, "wire layout");
constexpr uint32_t kReplyMagic = 0x50525258;  // "XRRP"

inline ReplyHdr make_reply_hdr(ReplyKind kind, int32_t status, int32_t rank, uint64_t req_id,
                               uint32_t reply_len = 0, uint16_t msg_len = 0)
{
    return ReplyHdr{kReplyMagic, kWireVersion, kind, msg_len, status, rank, req_id, reply_len, 0};
}

// An invocation header with what every sender sets (@p hash: 32 bytes, or
// nullptr for none yet); the lengths of entry and image, the code flag and
// the binding are send_invoke()'s.
inline InvokeHdr make_invoke_hdr(uint8_t flags, int32_t origin_rank, uint32_t hops, uint64_t req_id,
                                 const uint8_t *hash = nullptr, uint32_t args_len = 0)
{
    InvokeHdr h{kInvokeMagic, kWireVersion, flags, 0, origin_rank, hops, req_id, args_len, 0, 0, {}};
    if (hash) memcpy(h.hash, hash, sizeof(h.hash));
    return h;
}

// The short form of an invocation, as sent with binding @p index. Without
// an index (invoke_id()), the identity an invocation carries from hop to hop
// in both forms (their fronts agree): what the answer and the next hop need.
inline InvokeShortHdr make_invoke_short_hdr(uint8_t flags, int32_t origin_rank, uint32_t hops, uint64_t req_id,
                                            uint32_t index)
{
    return InvokeShortHdr{kInvokeShortMagic, kWireVersion, uint8_t(flags & kShortFlags), uint16_t(index),
                          origin_rank,       hops,         req_id};
}
inline InvokeShortHdr invoke_id(uint8_t flags, int32_t origin_rank, uint32_t hops, uint64_t req_id)
{
    return make_invoke_short_hdr(flags, origin_rank, hops, req_id, 0);
}
// The identity of the invocation header @p h (an InvokeHdr, or the front
// both forms share).
template <typename Hdr>
inline InvokeShortHdr invoke_id(const Hdr &h)
{
    return invoke_id(h.flags, h.origin_rank, h.hops, h.req_id);
}
// The full header of invocation @p id, naming image @p hash (32 bytes).
inline InvokeHdr make_invoke_hdr(const InvokeShortHdr &id, const uint8_t *hash)
{
    return make_invoke_hdr(id.flags, id.origin_rank, id.hops, id.req_id, hash);
}

constexpr size_t kMaxAcks = 512;  // req_ids in one kReplyAcks
// Answers a target lets wait (kLazyAck) for one sender before it sends them
// unasked: a window of 64 X-ops answered in one message that fits a ring slot.
constexpr size_t kLazyAcks = 64;

// Check an InvokeHdr against the data length that came with it.
ucx_ifunc_status_t invoke_hdr_check(const void *hdr, size_t hdr_len, size_t data_len,
                                    std::string *why);
// Check an InvokeShortHdr (@p hdr_len bytes) and its data length: inline,
// on the path of every warm invocation; what is wrong is said out of line.
ucx_ifunc_status_t invoke_short_reject(const void *hdr, size_t hdr_len, size_t data_len, std::string *why);
inline bool invoke_short_valid(const InvokeShortHdr &h, size_t data_len)  // (h copied out of the message)
{
    return h.magic == kInvokeShortMagic && h.version == kWireVersion && !(h.flags & ~kShortFlags) &&
           h.index < kMaxBindings && data_len <= UINT32_MAX;
}
inline bool invoke_short_ok(const void *hdr, size_t hdr_len, size_t data_len)
{
    InvokeShortHdr h;
    if (hdr_len != sizeof(h)) return false;
    memcpy(&h, hdr, sizeof(h));
    return invoke_short_valid(h, data_len);
}
inline ucx_ifunc_status_t invoke_short_check(const void *hdr, size_t hdr_len, size_t data_len, std::string *why)
{
    return invoke_short_ok(hdr, hdr_len, data_len) ? UCX_IFUNC_OK : invoke_short_reject(hdr, hdr_len, data_len, why);
}
// Check an InvokeWithdrawHdr (or, with kAckRequestMagic, an ack request)
// and its data length (none).
ucx_ifunc_status_t invoke_withdraw_check(const void *hdr, size_t hdr_len, size_t data_len, std::string *why,
                                         uint32_t magic = kInvokeWithdrawMagic);
// Check a ReplyHdr against its data length: inline, a batch of
// acknowledgements or a successful result (what nearly every reply is);
// every other kind, and what is wrong, out of line (reply_hdr_check_all).
ucx_ifunc_status_t reply_hdr_check_all(const void *hdr, size_t hdr_len, size_t data_len, std::string *why);
inline ucx_ifunc_status_t reply_hdr_check(const void *hdr, size_t hdr_len, size_t data_len, std::string *why)
{
    ReplyHdr h;
    if (hdr_len != sizeof(h)) return reply_hdr_check_all(hdr, hdr_len, data_len, why);
    memcpy(&h, hdr, sizeof(h));
    if (h.magic != kReplyMagic || h.version != kWireVersion || h.status != UCX_IFUNC_OK)
        return reply_hdr_check_all(hdr, hdr_len, data_len, why);
    if (h.kind == kReplyAcks && h.msg_len == 0 && h.req_id == 0 && h.reply_len == data_len && data_len != 0 &&
        data_len % sizeof(uint64_t) == 0 && data_len <= kMaxAcks * sizeof(uint64_t))
        return UCX_IFUNC_OK;
    if (h.kind == kReplyResult && uint64_t(h.msg_len) + h.reply_len == data_len) return UCX_IFUNC_OK;
    return reply_hdr_check_all(hdr, hdr_len, data_len, why);
}
// Check the data of a need-code reply (after reply_hdr_check()): the
// original InvokeHdr, entry and args, without code.
ucx_ifunc_status_t need_code_check(const uint8_t *data, size_t data_len, std::string *why);
// The same for a need-bind reply: the original InvokeShortHdr and args.
ucx_ifunc_status_t need_bind_check(const uint8_t *data, size_t data_len, std::string *why);

// ---- rings (ring.cc) ----
// A ring control message: an active message on the reply id, header only
// (an offer carries the packed memory key as its data).
struct RingMsg {
    uint32_t magic;      // kRingMagic
    uint8_t  version;
    uint8_t  kind;       // RingKind
    uint16_t rkey_len;   // kRingRequest (the sender's probe), kRingOffer (the ring): bytes of key in the data
    uint32_t slots;      // kRingOffer: the ring's geometry
    uint32_t slot_size;
    uint64_t addr;       // kRingRequest: the probe's address; kRingOffer, kRingDecline: the ring's
};
static_assert(sizeof(RingMsg) == kFrontHdr, "wire layout");
constexpr uint32_t kRingMagic = 0x47525258;  // "XRRG"
enum RingKind : uint8_t {
    kRingRequest = 1,  // sender -> receiver: make a ring for my messages, if you can map my probe
    kRingOffer = 2,    // receiver -> sender: here it is
    kRingRefuse = 3,   // receiver -> sender: no ring (rings off here, the probe not mapped, or no memory)
    kRingDecline = 4,  // sender -> receiver: cannot write into it (not mapped here): free it
};
// A frame in a ring slot: this header, then the message's header and data.
// seq is written last (release): the frame is there when seq is the
// receiver's next frame number + 1 (both modulo 2^32). 12 bytes: a warm
// 8-byte MPIX_Xinvoke (this, InvokeShortHdr, the MPI layer's OpHdr, the
// args) fits one 64-byte cache line.
struct RingSlotHdr {
    uint32_t seq;
    uint32_t am_before;  // active messages the sender sent on this endpoint before it (since the request), mod 2^32
    uint8_t  kind;       // kAmInvoke, kAmReply or kRingAcks
    uint8_t  hdr_len;
    uint16_t data_len;
};
static_assert(sizeof(RingSlotHdr) == 12, "wire layout");

// A ring frame of acknowledgements (kind kRingAcks, only ever in a ring
// slot): the compact form of a kReplyAcks reply, as a target answers X-ops
// that end well without reply bytes (send_acks()). Header RingAcksHdr; data:
// its n req_ids, uint64 each. The origin completes them from the frame,
// without the reply's checks and its way through arrive() (ring_take()).
constexpr uint8_t kRingAcks = 0xA3;
struct RingAcksHdr {
    int32_t  rank;  // the answering rank
    uint32_t n;     // req_ids in the data
};
static_assert(sizeof(RingAcksHdr) == 8, "wire layout");
// Whether a kRingAcks frame's lengths agree (its header copied out).
inline bool ring_acks_valid(const RingAcksHdr &a, size_t hdr_len, size_t data_len)
{
    return hdr_len == sizeof(a) && a.n != 0 && a.n <= kMaxAcks && data_len == size_t(a.n) * sizeof(uint64_t);
}

// ---- put-and-poll frames ----
// [FrameHdr][entry][image][pad to 16][args][pad to 8][u64 nonce]
// One put of the whole frame; the target runs it once ready word, trailer
// nonce and checksum agree (a frame still being written never does). Or,
// where the writer maps the target's memory, its own stores (kFrameStored).
struct FrameHdr {
    uint64_t ready;       // kFrameReady (or kFrameStored) once the whole frame is there
    uint32_t frame_size;  // whole frame incl. header and trailer
    uint8_t  version;
    uint8_t  flags;       // FrameFlags
    uint16_t entry_len;
    uint64_t nonce;       // repeated in the trailer
    uint64_t checksum;    // frame_checksum(): over everything but ready and itself
    uint32_t args_off;    // from frame start, 16-aligned
    uint32_t args_len;
    uint64_t image_len;
    uint8_t  hash[32];
};
static_assert(sizeof(FrameHdr) == 80, "wire layout");
constexpr uint64_t kFrameReady = 0x31454d4152465258ull;  // "XRFRAME1"
// The ready word of a frame its writer stored itself into memory it maps
// (ucp_rkey_ptr: shared memory): everything else first, then this word after
// a release fence, so a reader that sees it (acquire) sees the whole frame
// and verifies no checksum.
constexpr uint64_t kFrameStored = 0x53454d4152465258ull;  // "XRFRAMES"

enum FrameFlags : uint8_t {
    kFrameHasCode = 1u << 0,
    kFrameCompat  = 1u << 1,  // entry is <name>_main(payload, size, target_args)
};

// Whether header @p h of a frame in a buffer of @p buffer_size bytes (that
// holds the frame's trailer nonce @p tail) is well formed: inline, for every
// frame; frame_check_hdr() says what is wrong.
inline bool frame_hdr_ok(const FrameHdr &h, uint64_t tail, size_t buffer_size)
{
    const uint64_t size = h.frame_size;
    // image_len is compared with size first, so code_end cannot overflow.
    const uint64_t code_end = sizeof(FrameHdr) + uint64_t(h.entry_len) + h.image_len;
    return buffer_size >= sizeof(FrameHdr) + 8 && h.version == kWireVersion && size >= sizeof(FrameHdr) + 8 &&
           size <= buffer_size && h.entry_len != 0 && h.entry_len <= kMaxEntryLen &&
           ((h.flags & kFrameHasCode) || !h.image_len) && h.image_len <= size && code_end <= h.args_off &&
           h.args_off <= size && uint64_t(h.args_off) + h.args_len <= size - 8 && h.args_off % 16 == 0 &&
           tail == h.nonce;
}
// Validate a frame found in a buffer of @p buffer_size bytes.
ucx_ifunc_status_t frame_check(const uint8_t *buf, size_t buffer_size, std::string *why);
// The same for a copy @p h of the frame's header: a caller that goes on
// using its copy validates that copy, not the buffer, which the origin may
// be writing meanwhile (no second fetch of the header).
ucx_ifunc_status_t frame_check_hdr(const FrameHdr &h, const uint8_t *buf, size_t buffer_size,
                                   std::string *why);
// Checksum of the first @p size bytes of a frame (size >= sizeof(FrameHdr) + 8):
// over everything but the ready word and the checksum field.
uint64_t frame_checksum(const uint8_t *frame, size_t size);

// What a target leaves in a slot whose frame it consumed without running it
// (refused: malformed, too large for the buffer, its code unknown, refused
// or failing to load or link), for the frame's origin, which has no other
// way to hear of it, to read back (frame_watch.h). Written body first, the
// magic word last after a release fence; [FrameRefusal][reason], within the
// poller's buffer.
struct FrameRefusal {
    uint64_t magic;       // kFrameRefused
    uint64_t nonce;       // the refused frame's nonce and checksum: which frame
    uint64_t checksum;
    int32_t  status;      // ucx_ifunc_status_t
    uint32_t reason_len;  // bytes of the reason that follow, <= kMaxRefusalReason
    uint64_t sum;         // refusal_sum()
};
static_assert(sizeof(FrameRefusal) == 40, "wire layout");
constexpr uint64_t kFrameRefused = 0x4453554645525258ull;  // "XRREFUSD"
constexpr size_t kMaxRefusalReason = 400;
// The check of a refusal record: over its fields from nonce to reason_len
// and its @p reason_len reason bytes.
uint64_t refusal_sum(const FrameRefusal &r, const uint8_t *reason);

}  // namespace xrdma
