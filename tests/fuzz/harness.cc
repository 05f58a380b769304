// Fuzz harnesses (see harness.h). Each decoder runs on an exact-size heap
// copy of the input, so AddressSanitizer sees any read past its end.
#include "harness.h"

#include "image/elf_reader.h"
#include "image/image.h"
#include "image/sha256.h"
#include "wire/wire.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace xrdma;

namespace xrdma_fuzz {

namespace {

// An exact-size copy: a read one past the end is a heap overflow.
struct Bytes {
    explicit Bytes(const uint8_t *p, size_t n) : size(n), buf(new uint8_t[n ? n : 1])
    {
        if (n) memcpy(buf.get(), p, n);
    }
    const uint8_t *data() const { return buf.get(); }
    uint8_t *data() { return buf.get(); }
    size_t size;
    std::unique_ptr<uint8_t[]> buf;
};

bool inside(const void *p, size_t n, const uint8_t *base, size_t size)
{
    auto q = static_cast<const uint8_t *>(p);
    return q >= base && q <= base + size && n <= size_t(base + size - q);
}

// Reads every byte of [p, p+n): ASan reports it if any is out of bounds.
uint8_t touch(const void *p, size_t n)
{
    volatile uint8_t x = 0;
    auto q = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < n; ++i) x = x ^ q[i];
    return x;
}

// Takes an int: a value outside the enumeration must not be loaded as one.
bool is_status(int st)
{
    switch (st) {
    case UCX_IFUNC_OK: case UCX_IFUNC_INPROGRESS: case UCX_IFUNC_ERR_INVALID_PARAM:
    case UCX_IFUNC_ERR_NO_MEMORY: case UCX_IFUNC_ERR_IO: case UCX_IFUNC_ERR_TRUNCATED:
    case UCX_IFUNC_ERR_BAD_MAGIC: case UCX_IFUNC_ERR_BAD_VERSION: case UCX_IFUNC_ERR_BAD_LENGTH:
    case UCX_IFUNC_ERR_HASH_MISMATCH: case UCX_IFUNC_ERR_NO_ENTRY: case UCX_IFUNC_ERR_NO_PART:
    case UCX_IFUNC_ERR_BAD_CODE: case UCX_IFUNC_ERR_LINK: case UCX_IFUNC_ERR_DENIED:
    case UCX_IFUNC_ERR_FAULT: case UCX_IFUNC_ERR_RETURN: case UCX_IFUNC_ERR_PEER:
    case UCX_IFUNC_ERR_NO_ROUTE: case UCX_IFUNC_ERR_PROTOCOL: case UCX_IFUNC_ERR_TRANSPORT:
    case UCX_IFUNC_ERR_TIMEOUT: case UCX_IFUNC_ERR_NEED_CODE:
        return true;
    }
    return false;
}

bool is_identifier(std::string_view s)
{
    if (s.empty() || s.size() > 255) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = s[i];
        bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

// Messages end up in logs and at the origin: bounded and one line.
void check_message(const std::string &why, bool ok)
{
    FUZZ_CHECK(ok == why.empty(), "status %s but message \"%s\"", ok ? "OK" : "error", why.c_str());
    FUZZ_CHECK(why.size() < 2048, "message of %zu bytes", why.size());
    for (unsigned char c : why) FUZZ_CHECK(c >= 0x20 && c < 0x7f, "unprintable byte 0x%02x in \"%s\"", c, why.c_str());
}

Hash content_hash(const uint8_t *b, size_t n)
{
    static const uint8_t zeros[32] = {};
    Sha256 s;
    s.update(b, 32);
    s.update(zeros, 32);
    s.update(b + 64, n - 64);
    return s.finish();
}

// What the code cache relies on after image_parse() said OK.
void check_valid_image(const uint8_t *b, size_t n, const ImageView &v)
{
    FUZZ_CHECK(v.version == 1, "version %u", v.version);
    FUZZ_CHECK(!v.entries.empty() && v.entries.size() <= 256, "%zu entries", v.entries.size());
    FUZZ_CHECK(!v.parts.empty() && v.parts.size() <= 64, "%zu parts", v.parts.size());
    for (size_t i = 0; i < v.entries.size(); ++i) {
        const auto &e = v.entries[i];
        FUZZ_CHECK(inside(e.data(), e.size(), b, n), "entry %zu outside the image", i);
        FUZZ_CHECK(is_identifier(e), "entry %zu is not an identifier", i);
        FUZZ_CHECK(v.has_entry(e), "has_entry misses entry %zu", i);
        for (size_t j = 0; j < i; ++j) FUZZ_CHECK(v.entries[j] != e, "entries %zu and %zu are equal", j, i);
        touch(e.data(), e.size());
    }
    for (size_t i = 0; i < v.parts.size(); ++i) {
        const PartView &p = v.parts[i];
        FUZZ_CHECK(inside(p.triple.data(), p.triple.size(), b, n), "part %zu triple outside", i);
        FUZZ_CHECK(!p.triple.empty() && p.triple.size() <= 64, "part %zu triple length %zu", i, p.triple.size());
        FUZZ_CHECK(inside(p.data, p.size, b, n), "part %zu data outside", i);
        FUZZ_CHECK(p.data >= b + 64, "part %zu data overlaps the header", i);
        touch(p.data, p.size);
        for (size_t j = 0; j < i; ++j) {
            const PartView &q = v.parts[j];
            bool overlap = p.size && q.size && p.data < q.data + q.size && q.data < p.data + p.size;
            FUZZ_CHECK(!overlap, "parts %zu and %zu overlap", j, i);
        }
    }
    Hash peek;
    FUZZ_CHECK(image_peek_hash(b, n, &peek) && peek == v.hash, "peeked hash differs");
    FUZZ_CHECK(content_hash(b, n) == v.hash, "hash does not cover the image");

    // Rebuilt from what was parsed, the image parses again to the same thing.
    std::vector<std::string> entries(v.entries.begin(), v.entries.end());
    std::vector<PartSpec> parts;
    for (const PartView &p : v.parts)
        parts.push_back(PartSpec{p.kind, std::string(p.triple), std::vector<uint8_t>(p.data, p.data + p.size)});
    std::vector<uint8_t> again = image_build(entries, parts);
    Bytes copy(again.data(), again.size());
    ImageView w;
    std::string why;
    ucx_ifunc_status_t st = image_parse(copy.data(), copy.size, &w, &why);
    FUZZ_CHECK(st == UCX_IFUNC_OK, "rebuilt image rejected: %s", why.c_str());
    FUZZ_CHECK(w.entries.size() == v.entries.size() && w.parts.size() == v.parts.size(), "rebuilt image differs");
    for (size_t i = 0; i < w.entries.size(); ++i) FUZZ_CHECK(w.entries[i] == v.entries[i], "entry %zu differs", i);
    for (size_t i = 0; i < w.parts.size(); ++i)
        FUZZ_CHECK(w.parts[i].kind == v.parts[i].kind && w.parts[i].triple == v.parts[i].triple &&
                       w.parts[i].size == v.parts[i].size &&
                       (v.parts[i].size == 0 || !memcmp(w.parts[i].data, v.parts[i].data, v.parts[i].size)),
                   "part %zu differs after a rebuild", i);

    // One byte less or one more is never the same image.
    if (n > 0) {
        Bytes shorter(b, n - 1);
        FUZZ_CHECK(image_parse(shorter.data(), shorter.size, nullptr, nullptr) != UCX_IFUNC_OK, "truncated copy accepted");
    }
    std::vector<uint8_t> longer(b, b + n);
    longer.push_back(0);
    Bytes lc(longer.data(), longer.size());
    FUZZ_CHECK(image_parse(lc.data(), lc.size, nullptr, nullptr) != UCX_IFUNC_OK, "copy with a trailing byte accepted");
}

}  // namespace

void fuzz_image(const uint8_t *data, size_t size)
{
    Bytes in(data, size);
    ImageView v;
    std::string why;
    ucx_ifunc_status_t st = image_parse(in.data(), in.size, &v, &why);
    FUZZ_CHECK(is_status(st), "unknown status %d", int(st));
    check_message(why, st == UCX_IFUNC_OK);
    std::string why2;
    FUZZ_CHECK(image_parse(in.data(), in.size, nullptr, &why2) == st && why2 == why, "parse is not deterministic");
    switch (st) {
    case UCX_IFUNC_OK:
        check_valid_image(in.data(), in.size, v);
        break;
    case UCX_IFUNC_ERR_HASH_MISMATCH: {
        // The hash is checked last: with the right hash the image is valid.
        FUZZ_CHECK(size >= 64, "hash mismatch on %zu bytes", size);
        Hash h = content_hash(in.data(), in.size);
        memcpy(in.data() + 32, h.data(), h.size());
        ImageView w;
        std::string why3;
        st = image_parse(in.data(), in.size, &w, &why3);
        FUZZ_CHECK(st == UCX_IFUNC_OK, "only the hash was wrong, but now: %s", why3.c_str());
        check_valid_image(in.data(), in.size, w);
        break;
    }
    case UCX_IFUNC_ERR_TRUNCATED: case UCX_IFUNC_ERR_BAD_MAGIC: case UCX_IFUNC_ERR_BAD_VERSION:
    case UCX_IFUNC_ERR_BAD_LENGTH: case UCX_IFUNC_ERR_NO_ENTRY:
        break;
    default:
        FUZZ_CHECK(false, "image_parse returned %d (%s)", int(st), why.c_str());
    }
}

void fuzz_elf(const uint8_t *data, size_t size)
{
    Bytes in(data, size);
    ElfInfo info;
    std::string why;
    ucx_ifunc_status_t st = elf_inspect(in.data(), in.size, &info, &why);
    FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_BAD_CODE, "elf_inspect returned %d", int(st));
    check_message(why, st == UCX_IFUNC_OK);
    ElfInfo again;
    std::string why2;
    FUZZ_CHECK(elf_inspect(in.data(), in.size, &again, &why2) == st && why2 == why, "not deterministic");
    if (st != UCX_IFUNC_OK) return;
    FUZZ_CHECK(info.dynsyms.size() <= size / 24, "%zu symbols in %zu bytes", info.dynsyms.size(), size);
    for (const ElfSymbol &s : info.dynsyms) {
        FUZZ_CHECK(s.name.find('\0') == std::string::npos, "NUL inside a symbol name");
        FUZZ_CHECK(s.name.size() < size, "symbol name longer than the file");
        FUZZ_CHECK(!s.in_code || s.defined, "undefined symbol '%s' in code", s.name.c_str());
    }
    // What the loader checks next (loader_native.cc), short of dlopen().
    for (const std::string &n : info.needed)
        FUZZ_CHECK(!n.empty() && n.find('/') == std::string::npos, "DT_NEEDED \"%s\" accepted", n.c_str());
    std::string why3;
    st = elf_check_load_code(info, &why3);
    FUZZ_CHECK(st == (info.load_code.empty() ? UCX_IFUNC_OK : UCX_IFUNC_ERR_BAD_CODE), "elf_check_load_code returned %d",
               int(st));
    check_message(why3, st == UCX_IFUNC_OK);
}

namespace {

// Whether header check @p check (called @p name) accepted; what it
// answered, and why, is checked either way.
template <typename Check>
bool accepted(const char *name, Check check)
{
    std::string why;
    ucx_ifunc_status_t st = check(&why);
    FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "%s returned %d", name, int(st));
    check_message(why, st == UCX_IFUNC_OK);
    return st == UCX_IFUNC_OK;
}

// A short (warm) invocation: header, then only the args.
void check_invoke_short(const uint8_t *hdr, size_t hdr_len, const uint8_t *d, size_t len)
{
    if (!accepted("invoke_short_check", [&](std::string *why) { return invoke_short_check(hdr, hdr_len, len, why); }))
        return;
    InvokeShortHdr h;
    memcpy(&h, hdr, sizeof(h));
    FUZZ_CHECK(h.index < kMaxBindings, "index %u", h.index);
    FUZZ_CHECK(!(h.flags & ~kShortFlags), "flags %u", h.flags);
    touch(d, len);
}

// A withdrawal or an ack request (a header of a short invocation's size,
// refused as one, that the target then checks as either): no data.
void check_withdrawal(const uint8_t *hdr, size_t hdr_len, size_t len)
{
    for (uint32_t magic : {kInvokeWithdrawMagic, kAckRequestMagic}) {
        if (!accepted("invoke_withdraw_check",
                      [&](std::string *why) { return invoke_withdraw_check(hdr, hdr_len, len, why, magic); }))
            continue;
        InvokeWithdrawHdr h;
        memcpy(&h, hdr, sizeof(h));
        FUZZ_CHECK(h.magic == magic && h.flags == 0 && len == 0, "withdrawal or ack request accepted with flags %u",
                   h.flags);
    }
}

void check_invoke(const uint8_t *hdr, size_t hdr_len, const uint8_t *d, size_t len, bool need_code_copy)
{
    std::string why;
    ucx_ifunc_status_t st = invoke_hdr_check(hdr, hdr_len, len, &why);
    FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "invoke_hdr_check returned %d", int(st));
    check_message(why, st == UCX_IFUNC_OK);
    if (st != UCX_IFUNC_OK) return;
    // What target_handle_invoke() (or, for the copy in a need-code answer,
    // the origin's resend) then takes from the data.
    InvokeHdr h;
    memcpy(&h, hdr, sizeof(h));
    FUZZ_CHECK(h.entry_len >= 1 && h.entry_len <= kMaxEntryLen, "entry_len %u", h.entry_len);
    FUZZ_CHECK((h.flags & kHasCode) || h.image_len == 0, "image without the code flag");
    FUZZ_CHECK(h.bind <= kMaxBindings, "binding %u", h.bind);
    const uint8_t *entry = d;
    const uint8_t *image = d + h.entry_len;
    const uint8_t *args = need_code_copy ? d + h.entry_len : image + h.image_len;
    FUZZ_CHECK(inside(entry, h.entry_len, d, len), "entry outside the data");
    FUZZ_CHECK(inside(image, h.image_len, d, len), "image outside the data");
    FUZZ_CHECK(inside(args, h.args_len, d, len), "args outside the data");
    touch(entry, h.entry_len);
    touch(args, h.args_len);
    if (need_code_copy) {
        FUZZ_CHECK(!(h.flags & kHasCode), "a need-code answer returns an invocation that had the code");
        FUZZ_CHECK(uint64_t(h.entry_len) + h.args_len == len, "need-code copy: lengths do not add up");
    }
    if (h.flags & kHasCode) fuzz_image(image, h.image_len);
}

void check_reply(const uint8_t *hdr, size_t hdr_len, const uint8_t *d, size_t len)
{
    std::string why;
    ucx_ifunc_status_t st = reply_hdr_check(hdr, hdr_len, len, &why);
    FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "reply_hdr_check returned %d", int(st));
    check_message(why, st == UCX_IFUNC_OK);
    if (st != UCX_IFUNC_OK) return;
    ReplyHdr h;
    memcpy(&h, hdr, sizeof(h));
    if (h.kind == kReplyResult) {
        // origin_handle_reply() hands status, message and reply to the user.
        FUZZ_CHECK(is_status(h.status) && h.status != UCX_IFUNC_INPROGRESS &&
                       h.status != UCX_IFUNC_ERR_NEED_CODE,
                   "reply status %d is not a completion status", h.status);
        FUZZ_CHECK(inside(d, h.msg_len, d, len), "message outside the data");
        FUZZ_CHECK(inside(d + h.msg_len, h.reply_len, d, len), "reply outside the data");
        touch(d, h.msg_len);
        touch(d + h.msg_len, h.reply_len);
    } else if (h.kind == kReplyAcks) {
        // origin_handle_reply() completes each listed request.
        FUZZ_CHECK(h.status == UCX_IFUNC_OK && h.msg_len == 0, "ack batch with status %d", h.status);
        FUZZ_CHECK(len > 0 && len % 8 == 0 && len <= kMaxAcks * 8 && h.reply_len == len, "ack batch of %zu bytes", len);
        touch(d, len);
    } else if (h.kind == kReplyNeedBind) {
        // handle_need_bind(): the original short invocation follows.
        FUZZ_CHECK(h.status == UCX_IFUNC_ERR_NEED_CODE, "need-bind answer with status %d", h.status);
        std::string why2;
        st = need_bind_check(d, len, &why2);
        FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "need_bind_check returned %d", int(st));
        check_message(why2, st == UCX_IFUNC_OK);
        if (st != UCX_IFUNC_OK) return;
        FUZZ_CHECK(len >= sizeof(InvokeShortHdr), "need-bind answer of %zu bytes", len);
        check_invoke_short(d, sizeof(InvokeShortHdr), d + sizeof(InvokeShortHdr), len - sizeof(InvokeShortHdr));
    } else {
        FUZZ_CHECK(h.kind == kReplyNeedCode, "kind %u accepted", h.kind);
        FUZZ_CHECK(h.status == UCX_IFUNC_ERR_NEED_CODE, "need-code answer with status %d", h.status);
        // handle_need_code(): the original invocation follows.
        std::string why2;
        st = need_code_check(d, len, &why2);
        FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "need_code_check returned %d", int(st));
        check_message(why2, st == UCX_IFUNC_OK);
        if (st != UCX_IFUNC_OK) return;
        FUZZ_CHECK(len >= sizeof(InvokeHdr), "need-code answer of %zu bytes", len);
        check_invoke(d, sizeof(InvokeHdr), d + sizeof(InvokeHdr), len - sizeof(InvokeHdr), true);
    }
}

// frame_poll(): ready word, size, checksum, then frame_check(), then the
// entry, image and args at the places the header names.
void check_frame(uint8_t *buf, size_t size, bool seal)
{
    if (size < sizeof(FrameHdr) + 8) return;  // ucx_ifunc_poll() refuses such buffers
    if (seal) {
        uint64_t ready = kFrameReady;
        memcpy(buf, &ready, 8);
        FrameHdr h;
        memcpy(&h, buf, sizeof(h));
        if (h.frame_size >= sizeof(FrameHdr) + 8 && h.frame_size <= size) {
            memcpy(buf + h.frame_size - 8, &h.nonce, 8);
            uint64_t sum = frame_checksum(buf, h.frame_size);
            memcpy(buf + offsetof(FrameHdr, checksum), &sum, 8);
        }
    }
    std::string why;
    ucx_ifunc_status_t st = frame_check(buf, size, &why);
    FUZZ_CHECK(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_PROTOCOL, "frame_check returned %d", int(st));
    check_message(why, st == UCX_IFUNC_OK);

    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    if (h.ready != kFrameReady) return;
    if (h.frame_size < sizeof(FrameHdr) + 8 || h.frame_size > size) return;
    bool complete = frame_checksum(buf, h.frame_size) == h.checksum;
    if (seal) FUZZ_CHECK(complete, "sealed frame fails its checksum");
    if (!complete || st != UCX_IFUNC_OK) return;

    const uint8_t *entry = buf + sizeof(FrameHdr);
    const uint8_t *image = entry + h.entry_len;
    const uint8_t *args = buf + h.args_off;
    const size_t body = h.frame_size - 8;  // the trailer is not the frame's to give away
    FUZZ_CHECK(h.entry_len >= 1 && h.entry_len <= kMaxEntryLen, "entry_len %u", h.entry_len);
    FUZZ_CHECK(inside(entry, h.entry_len, buf, body), "entry outside the frame");
    FUZZ_CHECK(inside(image, h.image_len, buf, body), "image outside the frame");
    FUZZ_CHECK(image + h.image_len <= args, "image runs into the args");
    FUZZ_CHECK(inside(args, h.args_len, buf, body), "args outside the frame");
    FUZZ_CHECK((h.flags & kFrameHasCode) || h.image_len == 0, "image without the code flag");
    FUZZ_CHECK(h.args_off % 16 == 0, "args at %u, not 16-aligned", h.args_off);
    touch(entry, h.entry_len);
    touch(args, h.args_len);
    if (h.flags & kFrameHasCode) fuzz_image(image, h.image_len);
}

}  // namespace

void fuzz_wire(const uint8_t *data, size_t size)
{
    if (size < 1) return;
    const uint8_t sel = data[0] % 4;
    data++, size--;
    if (sel == kWireFrame || sel == kWireFrameSealed) {
        Bytes buf(data, size);
        check_frame(buf.data(), buf.size, sel == kWireFrameSealed);
        return;
    }
    // Byte 1: the header length. Below 0x80 the real one; else the low bits
    // (headers of a wrong size must be refused too).
    if (size < 1) return;
    const size_t want = sel == kWireInvoke ? sizeof(InvokeHdr) : sizeof(ReplyHdr);
    size_t hdr_len = data[0] < 0x80 ? want : data[0] & 0x7f;
    data++, size--;
    if (hdr_len > size) hdr_len = size;
    Bytes hdr(data, hdr_len);
    Bytes rest(data + hdr_len, size - hdr_len);
    if (sel == kWireInvoke && hdr.size == sizeof(InvokeShortHdr)) {  // as the target tells them apart
        check_invoke_short(hdr.data(), hdr.size, rest.data(), rest.size);
        check_withdrawal(hdr.data(), hdr.size, rest.size);
    } else if (sel == kWireInvoke)
        check_invoke(hdr.data(), hdr.size, rest.data(), rest.size, false);
    else
        check_reply(hdr.data(), hdr.size, rest.data(), rest.size);
}

}  // namespace xrdma_fuzz
