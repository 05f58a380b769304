#include "wire/wire.h"

#include <cstddef>
#include <cstring>

namespace xrdma {

namespace {

// Statuses an invocation can complete with at the origin: success or an
// error the origin's callbacks know (the value is checked as an int before
// it is ever loaded as the enumeration).
bool is_completion_status(int32_t st)
{
    switch (st) {
    case UCX_IFUNC_OK: case UCX_IFUNC_ERR_INVALID_PARAM: case UCX_IFUNC_ERR_NO_MEMORY:
    case UCX_IFUNC_ERR_IO: case UCX_IFUNC_ERR_TRUNCATED: case UCX_IFUNC_ERR_BAD_MAGIC:
    case UCX_IFUNC_ERR_BAD_VERSION: case UCX_IFUNC_ERR_BAD_LENGTH: case UCX_IFUNC_ERR_HASH_MISMATCH:
    case UCX_IFUNC_ERR_NO_ENTRY: case UCX_IFUNC_ERR_NO_PART: case UCX_IFUNC_ERR_BAD_CODE:
    case UCX_IFUNC_ERR_LINK: case UCX_IFUNC_ERR_DENIED: case UCX_IFUNC_ERR_FAULT:
    case UCX_IFUNC_ERR_RETURN: case UCX_IFUNC_ERR_PEER: case UCX_IFUNC_ERR_NO_ROUTE:
    case UCX_IFUNC_ERR_PROTOCOL: case UCX_IFUNC_ERR_TRANSPORT: case UCX_IFUNC_ERR_TIMEOUT:
        return true;
    default:
        return false;  // INPROGRESS and NEED_CODE are no completions either
    }
}

}  // namespace

ucx_ifunc_status_t invoke_hdr_check(const void *hdr_p, size_t hdr_len, size_t data_len,
                                    std::string *why)
{
    if (hdr_len != sizeof(InvokeHdr)) {
        *why = "invocation header has " + std::to_string(hdr_len) + " bytes, expected " +
               std::to_string(sizeof(InvokeHdr));
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    InvokeHdr h;
    memcpy(&h, hdr_p, sizeof(h));
    if (h.magic != kInvokeMagic || h.version != kWireVersion) {
        *why = "invocation header has a wrong magic or protocol version";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.entry_len == 0 || h.entry_len > kMaxEntryLen) {
        *why = "entry name length " + std::to_string(h.entry_len) + " out of range";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (!(h.flags & kHasCode) && h.image_len != 0) {
        *why = "image length without code flag";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.bind > kMaxBindings) {
        *why = "binding " + std::to_string(h.bind) + " out of range";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    // Sum in 64 bits: each term is below 2^32 except image_len, checked first.
    if (h.image_len > data_len ||
        uint64_t(h.entry_len) + h.image_len + h.args_len != data_len) {
        *why = "lengths in the invocation header (entry " + std::to_string(h.entry_len) +
               ", image " + std::to_string(h.image_len) + ", args " + std::to_string(h.args_len) +
               ") do not add up to the " + std::to_string(data_len) + " bytes received";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t invoke_short_reject(const void *hdr_p, size_t hdr_len, size_t data_len, std::string *why)
{
    if (hdr_len != sizeof(InvokeShortHdr)) {
        *why = "short invocation header has " + std::to_string(hdr_len) + " bytes, expected " +
               std::to_string(sizeof(InvokeShortHdr));
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    InvokeShortHdr h;
    memcpy(&h, hdr_p, sizeof(h));
    if (h.magic != kInvokeShortMagic || h.version != kWireVersion) {
        *why = "short invocation header has a wrong magic or protocol version";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.flags & ~kShortFlags) {
        *why = "short invocation with flags " + std::to_string(h.flags);
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.index >= kMaxBindings || data_len > UINT32_MAX) {
        *why = "short invocation with index " + std::to_string(h.index) + " and " + std::to_string(data_len) +
               " bytes of args";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;  // (called only for a header invoke_short_check() refused)
}

ucx_ifunc_status_t invoke_withdraw_check(const void *hdr_p, size_t hdr_len, size_t data_len, std::string *why,
                                         uint32_t magic)
{
    const char *const what = magic == kAckRequestMagic ? "ack request" : "withdrawal";  // (a string only on a failure)
    InvokeWithdrawHdr h;
    if (hdr_len != sizeof(h)) {
        *why = std::string(what) + " header has " + std::to_string(hdr_len) + " bytes, expected " + std::to_string(sizeof(h));
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    memcpy(&h, hdr_p, sizeof(h));
    if (h.magic != magic || h.version != kWireVersion) {
        *why = std::string(what) + " header has a wrong magic or protocol version";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.flags || h.reserved || h.reserved2) {
        *why = std::string(what) + " with flags " + std::to_string(h.flags) + " or reserved fields set";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (data_len) {
        *why = std::string(what) + " with " + std::to_string(data_len) + " bytes of data";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t reply_hdr_check_all(const void *hdr_p, size_t hdr_len, size_t data_len, std::string *why)
{
    if (hdr_len != sizeof(ReplyHdr)) {
        *why = "reply header size mismatch";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    ReplyHdr h;
    memcpy(&h, hdr_p, sizeof(h));
    if (h.magic != kReplyMagic || h.version != kWireVersion) {
        *why = "reply header has a wrong magic or protocol version";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.kind == kReplyResult) {
        if (!is_completion_status(h.status)) {
            *why = "reply status " + std::to_string(h.status) + " is not a completion status";
            return UCX_IFUNC_ERR_PROTOCOL;
        }
        if (uint64_t(h.msg_len) + h.reply_len != data_len) {
            *why = "reply lengths do not add up";
            return UCX_IFUNC_ERR_PROTOCOL;
        }
    } else if (h.kind == kReplyNeedCode || h.kind == kReplyNeedBind) {
        if (h.status != UCX_IFUNC_ERR_NEED_CODE) {
            *why = "need-code reply with status " + std::to_string(h.status);
            return UCX_IFUNC_ERR_PROTOCOL;
        }
        if (data_len < (h.kind == kReplyNeedCode ? sizeof(InvokeHdr) : sizeof(InvokeShortHdr))) {
            *why = "need-code reply without the invocation";
            return UCX_IFUNC_ERR_PROTOCOL;
        }
    } else if (h.kind == kReplyAcks) {
        if (h.status != UCX_IFUNC_OK || h.msg_len != 0 || h.req_id != 0) {
            *why = "acknowledgement batch with a status, message or request id";
            return UCX_IFUNC_ERR_PROTOCOL;
        }
        if (h.reply_len != data_len || data_len == 0 || data_len % sizeof(uint64_t) != 0 ||
            data_len > kMaxAcks * sizeof(uint64_t)) {
            *why = "acknowledgement batch of " + std::to_string(data_len) + " bytes";
            return UCX_IFUNC_ERR_PROTOCOL;
        }
    } else {
        *why = "unknown reply kind";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t need_code_check(const uint8_t *data, size_t data_len, std::string *why)
{
    if (data_len < sizeof(InvokeHdr)) {
        *why = "need-code reply without the invocation";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    ucx_ifunc_status_t st = invoke_hdr_check(data, sizeof(InvokeHdr), data_len - sizeof(InvokeHdr), why);
    if (st != UCX_IFUNC_OK) {
        *why = "need-code reply: " + *why;
        return st;
    }
    InvokeHdr h;
    memcpy(&h, data, sizeof(h));
    // A target asks for code only for an invocation that came without it.
    if (h.flags & kHasCode) {
        *why = "need-code reply returns an invocation that carried its code";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t need_bind_check(const uint8_t *data, size_t data_len, std::string *why)
{
    if (data_len < sizeof(InvokeShortHdr)) {
        *why = "need-bind reply without the invocation";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    ucx_ifunc_status_t st =
        invoke_short_check(data, sizeof(InvokeShortHdr), data_len - sizeof(InvokeShortHdr), why);
    if (st != UCX_IFUNC_OK) *why = "need-bind reply: " + *why;
    return st;
}

ucx_ifunc_status_t frame_check(const uint8_t *buf, size_t buffer_size, std::string *why)
{
    if (buffer_size < sizeof(FrameHdr) + 8) {
        *why = "poll buffer smaller than a frame header";
        return UCX_IFUNC_ERR_INVALID_PARAM;
    }
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    return frame_check_hdr(h, buf, buffer_size, why);
}

ucx_ifunc_status_t frame_check_hdr(const FrameHdr &h, const uint8_t *buf, size_t buffer_size, std::string *why)
{
    if (buffer_size >= sizeof(FrameHdr) + 8 && h.frame_size >= sizeof(FrameHdr) + 8 && h.frame_size <= buffer_size) {
        uint64_t tail;
        memcpy(&tail, buf + h.frame_size - 8, 8);
        if (frame_hdr_ok(h, tail, buffer_size)) return UCX_IFUNC_OK;
    }
    if (buffer_size < sizeof(FrameHdr) + 8) {
        *why = "poll buffer smaller than a frame header";
        return UCX_IFUNC_ERR_INVALID_PARAM;
    }
    uint64_t size = h.frame_size;
    if (h.version != kWireVersion || size < sizeof(FrameHdr) + 8 || size > buffer_size ||
        h.entry_len == 0 || h.entry_len > kMaxEntryLen) {
        *why = "frame header is malformed (size " + std::to_string(size) + " in a buffer of " +
               std::to_string(buffer_size) + ")";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (!(h.flags & kFrameHasCode) && h.image_len) {
        *why = "frame has an image length without the code flag";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    // image_len is checked against size first, so code_end cannot overflow.
    const uint64_t code_end = sizeof(FrameHdr) + uint64_t(h.entry_len) + h.image_len;
    if (h.image_len > size || code_end > h.args_off || h.args_off > size ||
        uint64_t(h.args_off) + h.args_len > size - 8) {
        *why = "frame lengths do not fit in the frame";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    if (h.args_off % 16 != 0) {
        *why = "frame args at offset " + std::to_string(h.args_off) + ", which is not 16-aligned";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    uint64_t nonce;
    memcpy(&nonce, buf + size - 8, 8);
    if (nonce != h.nonce) {
        *why = "frame trailer does not match its header (torn or corrupt frame)";
        return UCX_IFUNC_ERR_PROTOCOL;
    }
    return UCX_IFUNC_OK;
}

uint64_t refusal_sum(const FrameRefusal &r, const uint8_t *reason)
{
    // FNV-1a over the fields after the magic word and the reason: rare, and
    // read back by an origin that compares it, so plain and portable.
    uint64_t h = 0xcbf29ce484222325ull;
    auto add = [&h](const void *p, size_t n) {
        for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t *>(p)[i]) * 0x100000001b3ull;
    };
    add(&r.nonce, offsetof(FrameRefusal, sum) - offsetof(FrameRefusal, nonce));
    add(reason, r.reason_len);
    return h;
}

uint64_t frame_checksum(const uint8_t *frame, size_t size)
{
    // 64-bit multiply-xor over 8-byte words of [8, 24) and [32, size), in
    // four independent lanes kept in registers (a target verifies every
    // frame it runs: one serial chain was the longest step of a small
    // frame's path), then the lanes and the last bytes folded together.
    constexpr uint64_t kPrime = 0x100000001b3ull;
    auto mix = [](uint64_t h, const uint8_t *p) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * kPrime;
        return h ^ (h >> 29);
    };
    uint64_t a = mix(0xcbf29ce484222325ull, frame + 8), b = mix(0x84222325cbf29ce4ull, frame + 16);
    uint64_t c = 0x9ce484222325cbf2ull, d = 0x2325cbf29ce48422ull;
    const uint8_t *p = frame + 32, *end = frame + size;
    for (; end - p >= 32; p += 32) {
        a = mix(a, p);
        b = mix(b, p + 8);
        c = mix(c, p + 16);
        d = mix(d, p + 24);
    }
    uint64_t h = ((a ^ (b * kPrime)) * kPrime) ^ ((c ^ (d * kPrime)) * kPrime);
    for (; end - p >= 8; p += 8) h = mix(h, p);
    for (; p < end; ++p) h = (h ^ *p) * kPrime;
    return h ^ (h >> 29);
}

}  // namespace xrdma
