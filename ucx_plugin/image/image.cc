// Image container, format version 1 (man/xrdma-image.5).
//
// Everything that comes from the image is untrusted: each field is checked
// before it is used, with arithmetic that cannot overflow, and nothing is
// read outside [bytes, bytes + size).
#include "image/image.h"

#include "xrdma_common/bytes.h"
#include "xrdma_common/file.h"
#include "image/sha256.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace xrdma {

namespace {

constexpr char kMagic[8] = {'X', 'R', 'D', 'M', 'A', 'I', 'M', 'G'};
constexpr uint16_t kVersion = 1;
constexpr uint32_t kHeaderSize = 64;
constexpr uint32_t kEntrySize = 8;   // {u32 name_off, u32 name_len}
constexpr uint32_t kPartSize = 32;   // {u32 kind, flags, triple_off, triple_len; u64 data_off, data_len}
constexpr uint32_t kMaxEntries = 256;
constexpr uint32_t kMaxParts = 64;
constexpr size_t kMaxTripleLen = 64;
constexpr size_t kDataAlign = 16;

// Header field offsets.
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderSize = 10;
constexpr size_t kOffFlags = 12;
constexpr size_t kOffTotalSize = 16;
constexpr size_t kOffNEntries = 24;
constexpr size_t kOffNParts = 28;
constexpr size_t kOffHash = 32;

// Little-endian loads/stores; callers guarantee the bytes are in bounds.
uint16_t ld16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t ld32(const uint8_t *p)
{
    return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t ld64(const uint8_t *p) { return uint64_t(ld32(p)) | (uint64_t(ld32(p + 4)) << 32); }

void st16(uint8_t *p, uint16_t v)
{
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
}
void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void st64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

ucx_ifunc_status_t fail(std::string *why, ucx_ifunc_status_t st, std::string msg)
{
    if (why) *why = std::move(msg);
    return st;
}

// Is [off, off+len) inside [lo, hi]? Overflow-safe for any 64-bit inputs.
bool range_ok(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
    return off >= lo && off <= hi && len <= hi - off;
}

bool is_triple_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}


Hash compute_hash(const uint8_t *bytes, size_t total)
{
    static const uint8_t zeros[32] = {};
    Sha256 s;
    s.update(bytes, kOffHash);
    s.update(zeros, sizeof(zeros));
    s.update(bytes + kOffHash + 32, total - (kOffHash + 32));
    return s.finish();
}

}  // namespace

std::string describe_parts(const ImageView &img)
{
    std::string s;
    for (const PartView &p : img.parts) {
        if (!s.empty()) s += ", ";
        s += p.kind == PartKind::native_elf ? "native " : p.kind == PartKind::llvm_bitcode ? "bitcode " : "other ";
        s += std::string(p.triple);
    }
    return s.empty() ? "none" : s;
}

ucx_ifunc_status_t read_file(const std::string &path, std::vector<uint8_t> *out, size_t max)
{
    const int err = read_whole_file(path, out, max);
    if (err == 0) return UCX_IFUNC_OK;
    if (err == EFBIG) return UCX_IFUNC_ERR_DENIED;
    errno = err;  // callers say why
    return UCX_IFUNC_ERR_IO;
}

bool is_c_identifier(std::string_view s)
{
    if (s.empty()) return false;
    auto alpha = [](unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
    auto digit = [](unsigned char c) { return c >= '0' && c <= '9'; };
    if (!alpha(s[0])) return false;
    for (unsigned char c : s)
        if (!alpha(c) && !digit(c)) return false;
    return true;
}

std::string printable(std::string_view s, size_t max)
{
    std::string out;
    for (size_t i = 0; i < s.size() && i < max; ++i) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7f) {
            out += char(c);
        } else {
            char b[8];
            snprintf(b, sizeof(b), "\\x%02x", c);
            out += b;
        }
    }
    if (s.size() > max) out += "...";
    return out;
}

bool ImageView::has_entry(std::string_view name) const
{
    for (const auto &e : entries)
        if (e == name) return true;
    return false;
}

ucx_ifunc_status_t image_parse(const uint8_t *bytes, size_t size, ImageView *out,
                               std::string *why, bool check_hash)
{
    if (!bytes && size > 0) return fail(why, UCX_IFUNC_ERR_INVALID_PARAM, "null image pointer");
    if (size == 0) return fail(why, UCX_IFUNC_ERR_TRUNCATED, "the image is empty (0 bytes)");
    if (size < sizeof(kMagic))
        return fail(why, UCX_IFUNC_ERR_TRUNCATED,
                    "image is " + std::to_string(size) + " bytes, too short for the magic");
    if (memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
        return fail(why, UCX_IFUNC_ERR_BAD_MAGIC, "not an XRDMA image (magic is not \"XRDMAIMG\")");
    if (size < kHeaderSize)
        return fail(why, UCX_IFUNC_ERR_TRUNCATED,
                    "image is " + std::to_string(size) + " bytes, shorter than its 64-byte header");

    const uint16_t version = ld16(bytes + kOffVersion);
    if (version != kVersion)
        return fail(why, UCX_IFUNC_ERR_BAD_VERSION,
                    "image format version " + std::to_string(version) + " is not supported (this reader knows version 1)");

    const uint16_t header_size = ld16(bytes + kOffHeaderSize);
    if (header_size != kHeaderSize)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                    "header_size is " + std::to_string(header_size) + ", must be 64");
    const uint32_t flags = ld32(bytes + kOffFlags);
    if (flags != 0)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH, "header flags are " + std::to_string(flags) + ", must be 0");

    const uint64_t total = ld64(bytes + kOffTotalSize);
    if (total > size)
        return fail(why, UCX_IFUNC_ERR_TRUNCATED,
                    "total_size says " + std::to_string(total) + " bytes but only " + std::to_string(size) +
                        " are present");
    if (total < size)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                    std::to_string(size - total) + " trailing bytes after total_size (" + std::to_string(total) + ")");

    const uint32_t n_entries = ld32(bytes + kOffNEntries);
    const uint32_t n_parts = ld32(bytes + kOffNParts);
    if (n_entries == 0) return fail(why, UCX_IFUNC_ERR_NO_ENTRY, "image has no entries (n_entries is 0)");
    if (n_entries > kMaxEntries)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                    "n_entries is " + std::to_string(n_entries) + ", more than 256");
    if (n_parts == 0) return fail(why, UCX_IFUNC_ERR_BAD_LENGTH, "n_parts is 0, an image needs at least one part");
    if (n_parts > kMaxParts)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH, "n_parts is " + std::to_string(n_parts) + ", more than 64");

    // Both counts are bounded, so this cannot overflow.
    const uint64_t entry_table = kHeaderSize;
    const uint64_t part_table = entry_table + uint64_t(n_entries) * kEntrySize;
    const uint64_t tables_end = part_table + uint64_t(n_parts) * kPartSize;
    if (tables_end > total)
        return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                    "entry and part tables end at " + std::to_string(tables_end) + ", past total_size " +
                        std::to_string(total));

    ImageView view;
    view.version = version;
    memcpy(view.hash.data(), bytes + kOffHash, view.hash.size());

    view.entries.reserve(n_entries);
    for (uint32_t i = 0; i < n_entries; ++i) {
        const uint8_t *e = bytes + entry_table + uint64_t(i) * kEntrySize;
        const uint32_t off = ld32(e), len = ld32(e + 4);
        const std::string field = "entry " + std::to_string(i) + " name";
        if (!range_ok(off, len, tables_end, total))
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        field + " [" + std::to_string(off) + ", +" + std::to_string(len) +
                            ") lies outside the string/data area [" + std::to_string(tables_end) + ", " +
                            std::to_string(total) + ")");
        if (len == 0) return fail(why, UCX_IFUNC_ERR_BAD_LENGTH, field + " is empty");
        if (len > kMaxEntryLen)
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        field + " is " + std::to_string(len) + " bytes, longer than 255");
        std::string_view name(reinterpret_cast<const char *>(bytes + off), len);
        if (!is_c_identifier(name))
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        field + " \"" + printable(name) + "\" is not a C identifier");
        for (const auto &prev : view.entries)
            if (prev == name)
                return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                            field + " \"" + std::string(name) + "\" is a duplicate");
        view.entries.push_back(name);
    }

    view.parts.reserve(n_parts);
    for (uint32_t i = 0; i < n_parts; ++i) {
        const uint8_t *p = bytes + part_table + uint64_t(i) * kPartSize;
        const uint32_t kind = ld32(p), pflags = ld32(p + 4);
        const uint32_t toff = ld32(p + 8), tlen = ld32(p + 12);
        const uint64_t doff = ld64(p + 16), dlen = ld64(p + 24);
        const std::string part = "part " + std::to_string(i);
        const bool known = kind == uint32_t(PartKind::native_elf) || kind == uint32_t(PartKind::llvm_bitcode);
        // Flags of kinds this reader knows are reserved; an unknown kind may
        // give its flags a meaning, and is ignored anyway.
        if (known && pflags != 0)
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        part + " flags are " + std::to_string(pflags) + ", must be 0");
        if (!range_ok(toff, tlen, tables_end, total))
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        part + " triple [" + std::to_string(toff) + ", +" + std::to_string(tlen) +
                            ") lies outside the string/data area [" + std::to_string(tables_end) + ", " +
                            std::to_string(total) + ")");
        if (tlen == 0) return fail(why, UCX_IFUNC_ERR_BAD_LENGTH, part + " triple is empty");
        if (tlen > kMaxTripleLen)
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        part + " triple is " + std::to_string(tlen) + " bytes, longer than 64");
        std::string_view triple(reinterpret_cast<const char *>(bytes + toff), tlen);
        for (unsigned char c : triple)
            if (!is_triple_char(c))
                return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                            part + " triple \"" + printable(triple) +
                                "\" has a character outside [A-Za-z0-9_.-]");
        if (!range_ok(doff, dlen, tables_end, total))
            return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                        part + " data [" + std::to_string(doff) + ", +" + std::to_string(dlen) +
                            ") lies outside the string/data area [" + std::to_string(tables_end) + ", " +
                            std::to_string(total) + ")");
        // Both ranges are inside the image now, so doff + dlen cannot overflow.
        for (uint32_t j = 0; j < i; ++j) {
            const PartView &q = view.parts[j];
            const uint64_t qoff = uint64_t(q.data - bytes), qend = qoff + q.size;
            if (dlen > 0 && q.size > 0 && doff < qend && qoff < doff + dlen)
                return fail(why, UCX_IFUNC_ERR_BAD_LENGTH,
                            part + " data overlaps the data of part " + std::to_string(j));
        }
        view.parts.push_back(PartView{static_cast<PartKind>(kind), triple, bytes + doff, size_t(dlen)});
    }

    const Hash actual = check_hash ? compute_hash(bytes, total) : view.hash;
    if (actual != view.hash)
        return fail(why, UCX_IFUNC_ERR_HASH_MISMATCH,
                    "content hash " + hash_hex(actual, 8) + "... does not match the header's " +
                        hash_hex(view.hash, 8) + "...");

    if (out) *out = std::move(view);
    if (why) why->clear();
    return UCX_IFUNC_OK;
}

std::vector<uint8_t> image_build(const std::vector<std::string> &entries,
                                 const std::vector<PartSpec> &parts)
{
    const size_t tables_end = kHeaderSize + entries.size() * kEntrySize + parts.size() * kPartSize;

    // String area: entry names, then triples.
    size_t strings_size = 0;
    for (const auto &e : entries) strings_size += e.size();
    for (const auto &p : parts) strings_size += p.triple.size();

    // Data area: each part aligned to 16.
    std::vector<size_t> data_off(parts.size());
    size_t total = tables_end + strings_size;
    for (size_t i = 0; i < parts.size(); ++i) {
        total = align_up(total, kDataAlign);
        data_off[i] = total;
        total += parts[i].data.size();
    }

    std::vector<uint8_t> img(total, 0);
    uint8_t *b = img.data();
    memcpy(b, kMagic, sizeof(kMagic));
    st16(b + kOffVersion, kVersion);
    st16(b + kOffHeaderSize, kHeaderSize);
    st32(b + kOffFlags, 0);
    st64(b + kOffTotalSize, total);
    st32(b + kOffNEntries, uint32_t(entries.size()));
    st32(b + kOffNParts, uint32_t(parts.size()));

    size_t str = tables_end;
    uint8_t *et = b + kHeaderSize;
    for (size_t i = 0; i < entries.size(); ++i) {
        st32(et + i * kEntrySize, uint32_t(str));
        st32(et + i * kEntrySize + 4, uint32_t(entries[i].size()));
        memcpy(b + str, entries[i].data(), entries[i].size());
        str += entries[i].size();
    }
    uint8_t *pt = et + entries.size() * kEntrySize;
    for (size_t i = 0; i < parts.size(); ++i) {
        uint8_t *p = pt + i * kPartSize;
        st32(p, uint32_t(parts[i].kind));
        st32(p + 4, 0);
        st32(p + 8, uint32_t(str));
        st32(p + 12, uint32_t(parts[i].triple.size()));
        st64(p + 16, data_off[i]);
        st64(p + 24, parts[i].data.size());
        memcpy(b + str, parts[i].triple.data(), parts[i].triple.size());
        str += parts[i].triple.size();
        if (!parts[i].data.empty()) memcpy(b + data_off[i], parts[i].data.data(), parts[i].data.size());
    }

    const Hash h = compute_hash(b, total);
    memcpy(b + kOffHash, h.data(), h.size());
    return img;
}

bool image_peek_hash(const uint8_t *bytes, size_t size, Hash *out)
{
    if (!bytes || size < kHeaderSize || memcmp(bytes, kMagic, sizeof(kMagic)) != 0) return false;
    if (out) memcpy(out->data(), bytes + kOffHash, out->size());
    return true;
}

const std::string &host_triple()
{
#if defined(__x86_64__)
    static const std::string triple = "x86_64-linux-gnu";
#elif defined(__aarch64__)
    static const std::string triple = "aarch64-linux-gnu";
#else
#error "XRDMA: unsupported host architecture (add its triple to image.cc)"
#endif
    return triple;
}

std::string triple_normal(std::string_view t)
{
    // arch-vendor-os-env (LLVM's x86_64-pc-linux-gnu, x86_64-unknown-linux-gnu)
    // or arch-os-env (Debian's x86_64-linux-gnu): the vendor says nothing
    // about the code, so it is dropped; "linux" alone means "linux-gnu".
    std::vector<std::string> f;
    size_t b = 0;
    for (size_t e; (e = t.find('-', b)) != std::string_view::npos; b = e + 1) f.emplace_back(t.substr(b, e - b));
    f.emplace_back(t.substr(b));
    if (f[0] == "amd64") f[0] = "x86_64";
    if (f[0] == "arm64") f[0] = "aarch64";
    if (f.size() >= 3 && f[1] != "linux" && f[2] == "linux") f.erase(f.begin() + 1);
    if (f.size() == 2 && f[1] == "linux") f.push_back("gnu");
    std::string out;
    for (const std::string &x : f) out += (out.empty() ? "" : "-") + x;
    return out;
}

bool triple_is_host(std::string_view t) { return triple_normal(t) == host_triple(); }

std::string hash_hex(const Hash &h, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    if (nbytes > h.size()) nbytes = h.size();
    std::string s;
    s.reserve(2 * nbytes);
    for (size_t i = 0; i < nbytes; ++i) {
        s += digits[h[i] >> 4];
        s += digits[h[i] & 15];
    }
    return s;
}

}  // namespace xrdma
