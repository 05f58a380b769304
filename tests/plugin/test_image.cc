// Unit tests of SHA-256, the image container (man xrdma-image(5)) and the
// ELF reader.
#include "image/elf_reader.h"
#include "image/image.h"
#include "image/sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <sys/mman.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace xrdma;

namespace {

// ------------------------------------------------------------------ helpers

std::string hex(const Hash &h) { return hash_hex(h); }

Hash sha(const std::string &s) { return Sha256::of(s.data(), s.size()); }

// A little-endian field of type T (an unsigned integer) at @p off.
template <typename T> void put(std::vector<uint8_t> &b, size_t off, T v)
{
    static_assert(std::is_unsigned<T>::value, "a field is an unsigned integer");
    for (size_t i = 0; i < sizeof(T); ++i) b.at(off + i) = uint8_t(uint64_t(v) >> (8 * i));
}
void put16(std::vector<uint8_t> &b, size_t off, uint16_t v) { put(b, off, v); }
void put32(std::vector<uint8_t> &b, size_t off, uint32_t v) { put(b, off, v); }
void put64(std::vector<uint8_t> &b, size_t off, uint64_t v) { put(b, off, v); }
uint32_t get32(const std::vector<uint8_t> &b, size_t off)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(b.at(off + i)) << (8 * i);
    return v;
}
uint64_t get64(const std::vector<uint8_t> &b, size_t off)
{
    return uint64_t(get32(b, off)) | (uint64_t(get32(b, off + 4)) << 32);
}

// The hash rule of the format, written independently of image.cc: SHA-256
// of the whole image with bytes [32, 64) zeroed, stored at 32.
void rehash(std::vector<uint8_t> &img)
{
    std::vector<uint8_t> copy = img;
    memset(copy.data() + 32, 0, 32);
    Hash h = Sha256::of(copy.data(), copy.size());
    memcpy(img.data() + 32, h.data(), 32);
}

// @p img with the field at @p off set to @p v and the hash redone, so that
// the field is the only thing wrong.
template <typename T> std::vector<uint8_t> with_field(std::vector<uint8_t> img, size_t off, T v)
{
    put(img, off, v);
    rehash(img);
    return img;
}

// Offsets of table records in an image (format version 1).
size_t entry_rec(size_t i) { return 64 + 8 * i; }
size_t part_rec(const std::vector<uint8_t> &img, size_t i) { return 64 + 8 * get32(img, 24) + 32 * i; }
uint64_t tables_end(const std::vector<uint8_t> &img) { return 64 + 8 * get32(img, 24) + 32 * get32(img, 28); }

std::vector<uint8_t> bytes_of(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A valid image with three entries and two parts.
std::vector<uint8_t> sample()
{
    return image_build({"add", "echo", "_x9"},
                       {{PartKind::native_elf, "x86_64-linux-gnu", bytes_of("native part bytes")},
                        {PartKind::llvm_bitcode, "aarch64-linux-gnu", bytes_of("BC\xc0\xde bitcode")}});
}

struct Result {
    ucx_ifunc_status_t status;
    std::string why;
};

Result parse(const std::vector<uint8_t> &img, size_t size)
{
    Result r;
    ImageView v;
    r.status = image_parse(img.data(), size, &v, &r.why);
    return r;
}
Result parse(const std::vector<uint8_t> &img) { return parse(img, img.size()); }

#define EXPECT_STATUS(img, st, why_part)                                              \
    do {                                                                              \
        Result r_ = parse(img);                                                       \
        EXPECT_EQ(r_.status, st) << "why: " << r_.why;                                \
        EXPECT_NE(r_.why.find(why_part), std::string::npos) << "why: " << r_.why;     \
    } while (0)

// Bytes placed so that they end exactly at an inaccessible page: any read
// past the end faults instead of going unnoticed.
class Guarded {
public:
    explicit Guarded(const std::vector<uint8_t> &src) : size_(src.size())
    {
        page_ = size_t(sysconf(_SC_PAGESIZE));
        data_pages_ = (size_ + page_ - 1) / page_ + 1;
        map_len_ = (data_pages_ + 1) * page_;
        void *m = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) abort();
        base_ = static_cast<uint8_t *>(m);
        if (mprotect(base_ + data_pages_ * page_, page_, PROT_NONE) != 0) abort();
        ptr_ = base_ + data_pages_ * page_ - size_;
        if (size_) memcpy(ptr_, src.data(), size_);
    }
    ~Guarded() { munmap(base_, map_len_); }
    Guarded(const Guarded &) = delete;
    Guarded &operator=(const Guarded &) = delete;
    const uint8_t *data() const { return ptr_; }
    size_t size() const { return size_; }

private:
    size_t size_, page_, data_pages_, map_len_;
    uint8_t *base_, *ptr_;
};

bool inside(const void *p, size_t n, const uint8_t *base, size_t size)
{
    const uint8_t *q = static_cast<const uint8_t *>(p);
    return q >= base && q <= base + size && n <= size_t(base + size - q);
}

std::string builddir()
{
    const char *b = getenv("XRDMA_TEST_BUILDDIR");
    return b ? b : ".";
}

// The shared object inside the test image make check built with xrdma-cc.
std::vector<uint8_t> real_shared_object()
{
    std::string path = builddir() + "/tests/plugin/ifuncs/unit_two.xfn";
    std::vector<uint8_t> img;
    if (xrdma::read_file(path, &img) != UCX_IFUNC_OK || img.empty()) {
        ADD_FAILURE() << "cannot read " << path << " (built by make check)";
        return {};
    }
    ImageView v;
    std::string why;
    if (image_parse(img.data(), img.size(), &v, &why) != UCX_IFUNC_OK) {
        ADD_FAILURE() << path << ": " << why;
        return {};
    }
    for (const auto &p : v.parts)
        if (p.kind == PartKind::native_elf) return std::vector<uint8_t>(p.data, p.data + p.size);
    ADD_FAILURE() << path << " has no native part";
    return {};
}

// ------------------------------------------------------------------ SHA-256

TEST(Sha256, Fips180Vectors)
{
    EXPECT_EQ(hex(sha("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(sha("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(hex(sha(std::string(1000000, 'a'))),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, MillionAIncremental)
{
    // Uneven chunks exercise the partial-block buffer.
    const std::string a(1000, 'a');
    Sha256 s;
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = std::min({step, a.size(), size_t(1000000 - done)});
        s.update(a.data(), n);
        done += n;
        step = step * 7 % 997 + 1;
    }
    EXPECT_EQ(hex(s.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries)
{
    // Lengths around the 55/56/64-byte padding edges: one-shot == byte-wise.
    for (size_t len = 0; len <= 130; ++len) {
        std::string m(len, 'q');
        Sha256 s;
        for (char c : m) s.update(&c, 1);
        EXPECT_EQ(s.finish(), sha(m)) << "length " << len;
    }
    EXPECT_EQ(hex(sha(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Image, HashHexAndHostTriple)
{
    Hash h{};
    h[0] = 0xab;
    h[1] = 0x01;
    EXPECT_EQ(hash_hex(h, 2), "ab01");
    EXPECT_EQ(hash_hex(h).size(), 64u);
    EXPECT_EQ(hash_hex(h, 100).size(), 64u);
#if defined(__x86_64__)
    EXPECT_EQ(host_triple(), "x86_64-linux-gnu");
    EXPECT_EQ(elf_host_machine(), 62);
#elif defined(__aarch64__)
    EXPECT_EQ(host_triple(), "aarch64-linux-gnu");
    EXPECT_EQ(elf_host_machine(), 183);
#endif
}

// ------------------------------------------------------------------ images

TEST(Image, RoundTrip)
{
    std::vector<uint8_t> n(1000), b(33);
    for (size_t i = 0; i < n.size(); ++i) n[i] = uint8_t(i * 31);
    for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(255 - i);
    std::vector<uint8_t> img = image_build(
        {"add", "echo"}, {{PartKind::native_elf, "x86_64-linux-gnu", n}, {PartKind::llvm_bitcode, "aarch64-linux-gnu", b}});

    // Header fields.
    ASSERT_GE(img.size(), 64u);
    EXPECT_EQ(memcmp(img.data(), "XRDMAIMG", 8), 0);
    EXPECT_EQ(img[8] | (img[9] << 8), 1);
    EXPECT_EQ(img[10] | (img[11] << 8), 64);
    EXPECT_EQ(get32(img, 12), 0u);
    EXPECT_EQ(get64(img, 16), img.size());
    EXPECT_EQ(get32(img, 24), 2u);
    EXPECT_EQ(get32(img, 28), 2u);

    ImageView v;
    std::string why = "stale";
    ASSERT_EQ(image_parse(img.data(), img.size(), &v, &why), UCX_IFUNC_OK) << why;
    EXPECT_TRUE(why.empty());
    EXPECT_EQ(v.version, 1);
    ASSERT_EQ(v.entries.size(), 2u);
    EXPECT_EQ(v.entries[0], "add");
    EXPECT_EQ(v.entries[1], "echo");
    EXPECT_TRUE(v.has_entry("add"));
    EXPECT_TRUE(v.has_entry("echo"));
    EXPECT_FALSE(v.has_entry("ad"));
    EXPECT_FALSE(v.has_entry(""));
    ASSERT_EQ(v.parts.size(), 2u);
    EXPECT_EQ(v.parts[0].kind, PartKind::native_elf);
    EXPECT_EQ(v.parts[0].triple, "x86_64-linux-gnu");
    EXPECT_EQ(std::vector<uint8_t>(v.parts[0].data, v.parts[0].data + v.parts[0].size), n);
    EXPECT_EQ(v.parts[1].kind, PartKind::llvm_bitcode);
    EXPECT_EQ(v.parts[1].triple, "aarch64-linux-gnu");
    EXPECT_EQ(std::vector<uint8_t>(v.parts[1].data, v.parts[1].data + v.parts[1].size), b);
    for (const auto &p : v.parts) {
        EXPECT_EQ((p.data - img.data()) % 16, 0) << "part data must be aligned to 16";
        EXPECT_GE(uint64_t(p.data - img.data()), tables_end(img));
    }
    for (const auto &e : v.entries) EXPECT_TRUE(inside(e.data(), e.size(), img.data(), img.size()));

    // The stored hash follows the rule of the format.
    std::vector<uint8_t> copy = img;
    rehash(copy);
    EXPECT_EQ(copy, img);
    Hash peek;
    ASSERT_TRUE(image_peek_hash(img.data(), img.size(), &peek));
    EXPECT_EQ(peek, v.hash);
    std::vector<uint8_t> zeroed = img;
    memset(zeroed.data() + 32, 0, 32);
    EXPECT_EQ(Sha256::of(zeroed.data(), zeroed.size()), v.hash);

    // Building is deterministic; different content gives a different hash.
    EXPECT_EQ(image_build({"add", "echo"}, {{PartKind::native_elf, "x86_64-linux-gnu", n},
                                            {PartKind::llvm_bitcode, "aarch64-linux-gnu", b}}),
              img);
    std::vector<uint8_t> other = image_build({"add"}, {{PartKind::native_elf, "x86_64-linux-gnu", n}});
    Hash other_hash;
    ASSERT_TRUE(image_peek_hash(other.data(), other.size(), &other_hash));
    EXPECT_NE(other_hash, v.hash);

    // Null out/why are allowed.
    EXPECT_EQ(image_parse(img.data(), img.size(), nullptr, nullptr), UCX_IFUNC_OK);
}

TEST(Image, MaximumCountsAndLengths)
{
    std::vector<std::string> entries;
    for (int i = 0; i < 256; ++i) entries.push_back("e" + std::to_string(i));
    entries[0] = std::string(255, 'n');
    std::vector<PartSpec> parts;
    for (int i = 0; i < 64; ++i) parts.push_back({PartKind::native_elf, "t" + std::to_string(i), {uint8_t(i)}});
    parts[0].triple = std::string(64, 'T');
    std::vector<uint8_t> img = image_build(entries, parts);
    ImageView v;
    std::string why;
    ASSERT_EQ(image_parse(img.data(), img.size(), &v, &why), UCX_IFUNC_OK) << why;
    EXPECT_EQ(v.entries.size(), 256u);
    EXPECT_EQ(v.parts.size(), 64u);
    EXPECT_EQ(v.parts[63].data[0], 63);
}

TEST(Image, UnknownPartKindIsAccepted)
{
    std::vector<uint8_t> img = image_build(
        {"f"}, {{static_cast<PartKind>(7), "riscv64-linux-gnu", bytes_of("future")},
                {PartKind::native_elf, "x86_64-linux-gnu", bytes_of("elf")}});
    put32(img, part_rec(img, 0) + 4, 0x55);  // flags of an unknown kind are its own
    rehash(img);
    ImageView v;
    std::string why;
    ASSERT_EQ(image_parse(img.data(), img.size(), &v, &why), UCX_IFUNC_OK) << why;
    ASSERT_EQ(v.parts.size(), 2u);
    EXPECT_EQ(uint32_t(v.parts[0].kind), 7u);
    EXPECT_EQ(v.parts[0].triple, "riscv64-linux-gnu");
}

TEST(Image, EmptyPartDataIsAccepted)
{
    std::vector<uint8_t> img = image_build({"f"}, {{PartKind::native_elf, "x86_64-linux-gnu", {}},
                                                   {PartKind::llvm_bitcode, "x86_64-linux-gnu", {}}});
    EXPECT_EQ(parse(img).status, UCX_IFUNC_OK) << parse(img).why;
}

TEST(Image, PeekHash)
{
    std::vector<uint8_t> img = sample();
    Hash h;
    EXPECT_TRUE(image_peek_hash(img.data(), 64, &h));
    EXPECT_EQ(0, memcmp(h.data(), img.data() + 32, 32));
    EXPECT_FALSE(image_peek_hash(img.data(), 63, &h));
    EXPECT_FALSE(image_peek_hash(nullptr, 0, &h));
    img[0] = 'Y';
    EXPECT_FALSE(image_peek_hash(img.data(), img.size(), &h));
}

TEST(ImageMalformed, Truncated)
{
    std::vector<uint8_t> img = sample();
    // Below the magic, below the header, inside the tables, inside the data.
    for (size_t size : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(40), size_t(63), size_t(64),
                        size_t(100), size_t(tables_end(img)), img.size() - 1}) {
        Result r = parse(img, size);
        EXPECT_EQ(r.status, UCX_IFUNC_ERR_TRUNCATED) << "size " << size << ": " << r.why;
        EXPECT_FALSE(r.why.empty());
    }
    EXPECT_NE(parse(img, 3).why.find("magic"), std::string::npos);
    EXPECT_NE(parse(img, 40).why.find("header"), std::string::npos);
    EXPECT_NE(parse(img, 100).why.find("total_size"), std::string::npos);
}

TEST(ImageMalformed, BadMagic)
{
    std::vector<uint8_t> img = sample();
    img[3] = 'm';
    EXPECT_STATUS(img, UCX_IFUNC_ERR_BAD_MAGIC, "magic");
    // Magic is checked before the header size.
    EXPECT_EQ(parse(img, 8).status, UCX_IFUNC_ERR_BAD_MAGIC);
    std::vector<uint8_t> elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    EXPECT_EQ(parse(elf).status, UCX_IFUNC_ERR_BAD_MAGIC);
}

TEST(ImageMalformed, BadVersion)
{
    for (uint16_t version : {0, 2, 0x100, 0xffff})
        EXPECT_STATUS(with_field(sample(), 8, version), UCX_IFUNC_ERR_BAD_VERSION, "version");
}

TEST(ImageMalformed, BadHeaderSizeOrFlags)
{
    EXPECT_STATUS(with_field<uint16_t>(sample(), 10, 72), UCX_IFUNC_ERR_BAD_LENGTH, "header_size");
    EXPECT_STATUS(with_field<uint32_t>(sample(), 12, 1), UCX_IFUNC_ERR_BAD_LENGTH, "flags");
}

TEST(ImageMalformed, TotalSizeLargerThanBuffer)
{
    const std::vector<uint8_t> img = sample();
    EXPECT_STATUS(with_field<uint64_t>(img, 16, img.size() + 1), UCX_IFUNC_ERR_TRUNCATED, "total_size");
    EXPECT_STATUS(with_field(img, 16, ~uint64_t(0)), UCX_IFUNC_ERR_TRUNCATED, "total_size");
}

TEST(ImageMalformed, TrailingBytes)
{
    const std::vector<uint8_t> good = sample();
    std::vector<uint8_t> img = good;
    img.push_back(0);
    EXPECT_STATUS(img, UCX_IFUNC_ERR_BAD_LENGTH, "trailing");
    // total_size smaller than what we hand in
    EXPECT_STATUS(with_field<uint64_t>(good, 16, good.size() - 1), UCX_IFUNC_ERR_BAD_LENGTH, "trailing");
}

TEST(ImageMalformed, NoEntries)
{
    EXPECT_STATUS(with_field<uint32_t>(sample(), 24, 0), UCX_IFUNC_ERR_NO_ENTRY, "entries");
    // Built without entries at all.
    std::vector<uint8_t> none = image_build({}, {{PartKind::native_elf, "x86_64-linux-gnu", {1}}});
    EXPECT_EQ(parse(none).status, UCX_IFUNC_ERR_NO_ENTRY);
}

TEST(ImageMalformed, BadCounts)
{
    for (uint32_t n : {257u, 0xffffffffu})
        EXPECT_STATUS(with_field(sample(), 24, n), UCX_IFUNC_ERR_BAD_LENGTH, "n_entries");
    for (uint32_t n : {0u, 65u, 0x80000000u})
        EXPECT_STATUS(with_field(sample(), 28, n), UCX_IFUNC_ERR_BAD_LENGTH, "n_parts");
}

TEST(ImageMalformed, TablesPastTheEnd)
{
    // 2 KiB of entry table in a small image
    EXPECT_STATUS(with_field<uint32_t>(sample(), 24, 256), UCX_IFUNC_ERR_BAD_LENGTH, "tables");
    EXPECT_STATUS(with_field<uint32_t>(sample(), 28, 64), UCX_IFUNC_ERR_BAD_LENGTH, "tables");
}

TEST(ImageMalformed, NameOutOfRange)
{
    const std::vector<uint8_t> good = sample();
    const uint64_t total = good.size(), tend = tables_end(good);
    struct Case {
        uint32_t off, len;
    } cases[] = {
        {0, 3},                                 // inside the header
        {uint32_t(tend - 1), 3},                // starts inside the part table
        {uint32_t(total - 2), 3},               // runs past the end
        {uint32_t(total), 1},                   // starts at the end
        {0xffffffff, 3},                        // far outside
        {uint32_t(tend), 0xffffffff},           // length overflows
        {0xfffffff0, 0x20},                     // off + len wraps in 32 bits
    };
    for (const Case &c : cases)
        EXPECT_STATUS(with_field(with_field(good, entry_rec(1), c.off), entry_rec(1) + 4, c.len),
                      UCX_IFUNC_ERR_BAD_LENGTH, "entry 1 name");
}

TEST(ImageMalformed, BadNames)
{
    EXPECT_STATUS(image_build({"ok", ""}, {{PartKind::native_elf, "x86_64-linux-gnu", {1}}}),
                  UCX_IFUNC_ERR_BAD_LENGTH, "empty");
    EXPECT_STATUS(image_build({std::string(256, 'a')}, {{PartKind::native_elf, "x86_64-linux-gnu", {1}}}),
                  UCX_IFUNC_ERR_BAD_LENGTH, "longer than 255");
    const std::vector<std::string> bad_names = {"1abc", "a-b", "a b", "a.b", "\xc3\xa9t\xc3\xa9", "x\n",
                                                std::string("a\0b", 3)};
    for (const std::string &name : bad_names)
        EXPECT_STATUS(image_build({name}, {{PartKind::native_elf, "x86_64-linux-gnu", {1}}}),
                      UCX_IFUNC_ERR_BAD_LENGTH, "C identifier");
    EXPECT_STATUS(image_build({"f", "g", "f"}, {{PartKind::native_elf, "x86_64-linux-gnu", {1}}}),
                  UCX_IFUNC_ERR_BAD_LENGTH, "duplicate");
}

TEST(ImageMalformed, TripleOutOfRange)
{
    const std::vector<uint8_t> img = sample();
    const size_t p0 = part_rec(img, 0), p1 = part_rec(img, 1);
    EXPECT_STATUS(with_field<uint32_t>(with_field(img, p1 + 8, uint32_t(img.size()) - 4), p1 + 12, 17),
                  UCX_IFUNC_ERR_BAD_LENGTH, "part 1 triple");
    // points at the header
    EXPECT_STATUS(with_field<uint32_t>(img, p0 + 8, 8), UCX_IFUNC_ERR_BAD_LENGTH, "part 0 triple");
}

TEST(ImageMalformed, BadTriples)
{
    auto with_triple = [](const std::string &t) {
        return image_build({"f"}, {{PartKind::native_elf, t, {1}}});
    };
    EXPECT_STATUS(with_triple(""), UCX_IFUNC_ERR_BAD_LENGTH, "triple is empty");
    EXPECT_STATUS(with_triple(std::string(65, 'x')), UCX_IFUNC_ERR_BAD_LENGTH, "longer than 64");
    for (const char *t : {"x86_64 linux", "x86_64/linux", "x86_64-linux-gnu\n", "a+b", "\x80"})
        EXPECT_STATUS(with_triple(t), UCX_IFUNC_ERR_BAD_LENGTH, "triple");
    EXPECT_EQ(parse(with_triple("A-Z_a.z-09")).status, UCX_IFUNC_OK);
}

TEST(ImageMalformed, PartFlags)
{
    const std::vector<uint8_t> img = sample();
    EXPECT_STATUS(with_field<uint32_t>(img, part_rec(img, 1) + 4, 1), UCX_IFUNC_ERR_BAD_LENGTH, "part 1 flags");
}

TEST(ImageMalformed, DataOutOfRange)
{
    const std::vector<uint8_t> good = sample();
    const uint64_t total = good.size(), tend = tables_end(good);
    struct Case {
        uint64_t off, len;
    } cases[] = {
        {0, 4},                                  // inside the header
        {tend - 8, 4},                           // inside the part table
        {total - 4, 5},                          // runs past the end
        {total + 16, 0},                         // empty but past the end
        {~uint64_t(0) - 7, 16},                  // off + len wraps
        {tend, ~uint64_t(0)},                    // huge length
        {uint64_t(1) << 63, uint64_t(1) << 63},  // wraps exactly to 0
    };
    const size_t p0 = part_rec(good, 0);
    for (const Case &c : cases)
        EXPECT_STATUS(with_field(with_field(good, p0 + 16, c.off), p0 + 24, c.len), UCX_IFUNC_ERR_BAD_LENGTH,
                      "part 0 data");
}

TEST(ImageMalformed, OverlappingParts)
{
    const std::vector<uint8_t> img = sample();
    const size_t p0 = part_rec(img, 0), p1 = part_rec(img, 1);
    const uint64_t off0 = get64(img, p0 + 16), len0 = get64(img, p0 + 24);
    // Part 1 placed at (off, len).
    auto part1_at = [&](uint64_t off, uint64_t len) { return with_field(with_field(img, p1 + 16, off), p1 + 24, len); };
    // Starts in the middle of part 0.
    EXPECT_STATUS(part1_at(off0 + 2, 4), UCX_IFUNC_ERR_BAD_LENGTH, "overlaps");
    // Same range twice.
    EXPECT_STATUS(part1_at(off0, len0), UCX_IFUNC_ERR_BAD_LENGTH, "overlaps");
    // Adjacent ranges do not overlap.
    const Result adjacent = parse(part1_at(off0 + len0, 1));
    EXPECT_EQ(adjacent.status, UCX_IFUNC_OK) << adjacent.why;
}

TEST(ImageMalformed, HashMismatch)
{
    std::vector<uint8_t> img = sample();
    ImageView v;
    ASSERT_EQ(image_parse(img.data(), img.size(), &v, nullptr), UCX_IFUNC_OK);
    img[v.parts[1].data - img.data()] ^= 0x01;  // one bit of part data
    EXPECT_STATUS(img, UCX_IFUNC_ERR_HASH_MISMATCH, "hash");

    img = sample();
    img[40] ^= 0x80;  // the stored hash itself
    EXPECT_STATUS(img, UCX_IFUNC_ERR_HASH_MISMATCH, "hash");

    img = sample();
    img[tables_end(img)] = 'b';  // "add" -> "bdd": still a valid name
    EXPECT_STATUS(img, UCX_IFUNC_ERR_HASH_MISMATCH, "hash");
}

TEST(ImageMalformed, StatusesAreDistinct)
{
    std::set<int> s = {UCX_IFUNC_ERR_TRUNCATED, UCX_IFUNC_ERR_BAD_MAGIC, UCX_IFUNC_ERR_BAD_VERSION,
                       UCX_IFUNC_ERR_BAD_LENGTH, UCX_IFUNC_ERR_HASH_MISMATCH, UCX_IFUNC_ERR_NO_ENTRY};
    EXPECT_EQ(s.size(), 6u);
}

// Random damage must never crash or read outside the buffer, and every
// result must be either OK (with views inside the buffer) or an error.
TEST(ImageRobustness, RandomMutations)
{
    const std::vector<uint8_t> good =
        image_build({"add", "echo", "_x9"}, {{PartKind::native_elf, "x86_64-linux-gnu", bytes_of("native part")},
                                             {static_cast<PartKind>(9), "any", bytes_of("unknown kind")},
                                             {PartKind::llvm_bitcode, "aarch64-linux-gnu", bytes_of("bitcode")}});
    const uint64_t tend = tables_end(good);
    std::mt19937_64 rng(12345);
    auto rnd = [&](uint64_t n) { return n ? rng() % n : 0; };
    // Values that make interesting lengths and offsets.
    const uint64_t interesting[] = {0,        1,        7,         8,          15,          16,       63,
                                    64,       255,      256,       257,        tend - 1,    tend,     good.size() - 1,
                                    good.size(), good.size() + 1, 0x7fffffff, 0x80000000, 0xffffffff,
                                    0x100000000ull, ~uint64_t(0), ~uint64_t(0) - 15};
    int ok = 0, by_status[32] = {};
    for (int iter = 0; iter < 20000; ++iter) {
        std::vector<uint8_t> img = good;
        int ops = 1 + int(rnd(4));
        for (int k = 0; k < ops && !img.empty(); ++k) {
            switch (rnd(6)) {
            case 0:  // flip random bits
                img[rnd(img.size())] ^= uint8_t(1u << rnd(8));
                break;
            case 1:  // random byte
                img[rnd(img.size())] = uint8_t(rnd(256));
                break;
            case 2: {  // interesting 32-bit value in the header or the tables
                size_t off = rnd(tend - 3) & ~size_t(3);
                if (off + 4 <= img.size())
                    put32(img, off, uint32_t(interesting[rnd(sizeof(interesting) / sizeof(interesting[0]))]));
                break;
            }
            case 3: {  // interesting 64-bit value in a part's data_off/data_len
                size_t part = rnd(get32(good, 28));
                size_t off = part_rec(good, part) + 16 + 8 * rnd(2);
                if (off + 8 <= img.size())
                    put64(img, off, interesting[rnd(sizeof(interesting) / sizeof(interesting[0]))]);
                break;
            }
            case 4:  // truncate
                img.resize(rnd(img.size() + 1));
                break;
            case 5:  // extend
                img.resize(img.size() + 1 + rnd(64), uint8_t(rnd(256)));
                break;
            }
        }
        // Half the time make the hash right, so the structural checks are
        // what decides rather than the hash.
        if (img.size() >= 64 && (iter & 1)) {
            if (rnd(4)) put64(img, 16, img.size());
            rehash(img);
        }

        Guarded g(img);
        ImageView v;
        std::string why;
        ucx_ifunc_status_t st = image_parse(g.data(), g.size(), &v, &why);
        if (st == UCX_IFUNC_OK) {
            ++ok;
            ASSERT_FALSE(v.entries.empty());
            ASSERT_FALSE(v.parts.empty());
            for (const auto &e : v.entries) ASSERT_TRUE(inside(e.data(), e.size(), g.data(), g.size()));
            for (const auto &p : v.parts) {
                ASSERT_TRUE(inside(p.triple.data(), p.triple.size(), g.data(), g.size()));
                ASSERT_TRUE(inside(p.data, p.size, g.data(), g.size()));
            }
        } else {
            ASSERT_TRUE(st == UCX_IFUNC_ERR_TRUNCATED || st == UCX_IFUNC_ERR_BAD_MAGIC ||
                        st == UCX_IFUNC_ERR_BAD_VERSION || st == UCX_IFUNC_ERR_BAD_LENGTH ||
                        st == UCX_IFUNC_ERR_HASH_MISMATCH || st == UCX_IFUNC_ERR_NO_ENTRY)
                << "unexpected status " << st;
            ASSERT_FALSE(why.empty()) << "status " << st;
            ++by_status[-st];
        }
    }
    // The mutations reach every class of error, and some survive as valid.
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_TRUNCATED], 0);
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_BAD_MAGIC], 0);
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_BAD_VERSION], 0);
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_BAD_LENGTH], 0);
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_HASH_MISMATCH], 0);
    EXPECT_GT(by_status[-UCX_IFUNC_ERR_NO_ENTRY], 0);
    EXPECT_GT(ok, 0);
}

// ------------------------------------------------------------------ ELF

// Section header fields of a test .so, read independently of elf.cc.
struct Sections {
    uint64_t shoff;
    uint16_t shnum;
    size_t dynsym = 0;  // index
};

Sections sections_of(const std::vector<uint8_t> &so)
{
    Sections s;
    s.shoff = get64(so, 40);
    s.shnum = uint16_t(so.at(60) | (so.at(61) << 8));
    for (size_t i = 1; i < s.shnum; ++i)
        if (get32(so, s.shoff + 64 * i + 4) == 11) s.dynsym = i;
    return s;
}

ucx_ifunc_status_t inspect(const std::vector<uint8_t> &so, std::string *why = nullptr, ElfInfo *info = nullptr)
{
    Guarded g(so);
    ElfInfo local;
    std::string w;
    ucx_ifunc_status_t st = elf_inspect(g.data(), g.size(), info ? info : &local, &w);
    if (why) *why = w;
    if (st != UCX_IFUNC_OK) {
        EXPECT_FALSE(w.empty());
    }
    return st;
}

TEST(Elf, RealSharedObject)
{
    std::vector<uint8_t> so = real_shared_object();
    ASSERT_FALSE(so.empty());
    ElfInfo info;
    std::string why;
    ASSERT_EQ(inspect(so, &why, &info), UCX_IFUNC_OK) << why;
    EXPECT_EQ(info.machine, elf_host_machine());
    auto find = [&](const std::string &n) -> const ElfSymbol * {
        for (const auto &s : info.dynsyms)
            if (s.name == n) return &s;
        return nullptr;
    };
    for (const char *n : {"add", "echo", "__xrdma_entry_add", "__xrdma_entry_echo"}) {
        const ElfSymbol *s = find(n);
        ASSERT_NE(s, nullptr) << n;
        EXPECT_TRUE(s->defined) << n;
    }
    const ElfSymbol *reply = find("xrdma_reply");
    ASSERT_NE(reply, nullptr);
    EXPECT_FALSE(reply->defined);
    EXPECT_EQ(find("sum"), nullptr) << "static helpers are not exported";
    EXPECT_EQ(find(""), nullptr) << "the null symbol is skipped";
}

TEST(Elf, Garbage)
{
    std::string why;
    EXPECT_EQ(inspect({}, &why), UCX_IFUNC_ERR_BAD_CODE);
    EXPECT_EQ(inspect(bytes_of("hello, world"), &why), UCX_IFUNC_ERR_BAD_CODE);
    std::vector<uint8_t> junk(4096);
    std::mt19937 rng(7);
    for (auto &b : junk) b = uint8_t(rng());
    EXPECT_EQ(inspect(junk, &why), UCX_IFUNC_ERR_BAD_CODE);
    junk[0] = 0x7f, junk[1] = 'E', junk[2] = 'L', junk[3] = 'F';
    EXPECT_EQ(inspect(junk, &why), UCX_IFUNC_ERR_BAD_CODE);
    // An image is not an ELF file.
    EXPECT_EQ(inspect(sample(), &why), UCX_IFUNC_ERR_BAD_CODE);
    EXPECT_NE(why.find("ELF"), std::string::npos) << why;
    EXPECT_EQ(elf_inspect(nullptr, 0, nullptr, nullptr), UCX_IFUNC_ERR_BAD_CODE);
}

TEST(Elf, Truncated)
{
    std::vector<uint8_t> so = real_shared_object();
    ASSERT_FALSE(so.empty());
    Sections s = sections_of(so);
    const uint64_t needed = s.shoff + 64ull * s.shnum;
    ASSERT_LE(needed, so.size());
    for (size_t size = 0; size < so.size(); ++size) {
        std::vector<uint8_t> part(so.begin(), so.begin() + size);
        ucx_ifunc_status_t st = inspect(part);
        if (size < needed) {
            ASSERT_EQ(st, UCX_IFUNC_ERR_BAD_CODE) << "size " << size;
        }
    }
}

TEST(Elf, BadHeaderFields)
{
    const std::vector<uint8_t> so = real_shared_object();
    ASSERT_FALSE(so.empty());
    struct Case {
        size_t off;
        int width;
        uint64_t value;
        const char *why;
    } cases[] = {
        {0, 1, 0x7e, "magic"},
        {4, 1, 1, "64-bit"},            // ELFCLASS32
        {5, 1, 2, "little-endian"},     // ELFDATA2MSB
        {6, 1, 0, "version"},           // EI_VERSION
        {20, 4, 2, "version"},          // e_version
        {16, 2, 2, "not a shared object"},  // ET_EXEC
        {16, 2, 1, "not a shared object"},  // ET_REL
        {58, 2, 40, "e_shentsize"},
        {40, 8, 0, "section header"},
        {40, 8, ~uint64_t(0) - 8, "section header"},
        {40, 8, so.size() - 64, "section header"},
        {60, 2, 0xffff, "section header"},
    };
    for (const Case &c : cases) {
        std::vector<uint8_t> bad = so;
        if (c.width == 1) bad[c.off] = uint8_t(c.value);
        if (c.width == 2) put16(bad, c.off, uint16_t(c.value));
        if (c.width == 4) put32(bad, c.off, uint32_t(c.value));
        if (c.width == 8) put64(bad, c.off, c.value);
        std::string why;
        EXPECT_EQ(inspect(bad, &why), UCX_IFUNC_ERR_BAD_CODE) << "offset " << c.off;
        EXPECT_NE(why.find(c.why), std::string::npos) << "offset " << c.off << ": " << why;
    }
    // e_machine is not checked here (callers compare it with their own).
    std::vector<uint8_t> other = so;
    put16(other, 18, 183 + 62 - elf_host_machine());
    ElfInfo info;
    EXPECT_EQ(inspect(other, nullptr, &info), UCX_IFUNC_OK);
    EXPECT_NE(info.machine, elf_host_machine());
}

TEST(Elf, BadDynamicSymbolTable)
{
    const std::vector<uint8_t> so = real_shared_object();
    ASSERT_FALSE(so.empty());
    const Sections s = sections_of(so);
    ASSERT_NE(s.dynsym, 0u);
    const size_t sh = s.shoff + 64 * s.dynsym;  // .dynsym's section header
    const uint64_t sym_off = get64(so, sh + 24), sym_size = get64(so, sh + 32);
    const uint32_t link = get32(so, sh + 40);
    const size_t str_sh = s.shoff + 64 * link;

    auto expect_bad = [&](std::vector<uint8_t> bad, const char *what) {
        std::string why;
        EXPECT_EQ(inspect(bad, &why), UCX_IFUNC_ERR_BAD_CODE) << what;
        EXPECT_FALSE(why.empty());
    };
    std::vector<uint8_t> b = so;
    put64(b, sh + 24, so.size() - 8);  // .dynsym offset past the end
    expect_bad(b, "dynsym offset");
    b = so;
    put64(b, sh + 32, ~uint64_t(0) - 23);  // size overflows
    expect_bad(b, "dynsym size");
    b = so;
    put64(b, sh + 32, sym_size + 1);  // not a multiple of the entry size
    expect_bad(b, "dynsym size multiple");
    b = so;
    put64(b, sh + 56, 16);  // wrong entry size
    expect_bad(b, "dynsym entsize");
    b = so;
    put32(b, sh + 40, s.shnum);  // link to a missing section
    expect_bad(b, "dynsym link");
    b = so;
    put32(b, sh + 40, 0);
    expect_bad(b, "dynsym link 0");
    b = so;
    put32(b, str_sh + 4, 1);  // linked section is not a string table
    expect_bad(b, "dynstr type");
    b = so;
    put64(b, str_sh + 32, so.size());  // string table runs past the end
    expect_bad(b, "dynstr size");
    b = so;
    put32(b, sym_off + 24, 0x7fffffff);  // symbol 1's name outside .dynstr
    expect_bad(b, "symbol name");
    b = so;
    put32(b, sh + 4, 2);  // no SHT_DYNSYM left (now SHT_SYMTAB)
    expect_bad(b, "no dynsym");
    // Name not NUL-terminated: the last byte of .dynstr.
    b = so;
    const uint64_t str_off = get64(so, str_sh + 24), str_size = get64(so, str_sh + 32);
    b[str_off + str_size - 1] = 'x';
    put32(b, sym_off + 24, uint32_t(str_size - 1));
    expect_bad(b, "unterminated name");
}

TEST(Elf, RandomMutations)
{
    const std::vector<uint8_t> so = real_shared_object();
    ASSERT_FALSE(so.empty());
    const Sections s = sections_of(so);
    std::mt19937_64 rng(99);
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<uint8_t> b = so;
        for (int k = 0; k < 4; ++k) {
            size_t off;
            switch (rng() % 3) {
            case 0: off = rng() % 64; break;                                        // ELF header
            case 1: off = s.shoff + rng() % (64ull * s.shnum); break;               // section headers
            default: off = rng() % b.size(); break;                                  // anywhere
            }
            if (off < b.size()) b[off] = uint8_t(rng());
        }
        ucx_ifunc_status_t st = inspect(b);
        ASSERT_TRUE(st == UCX_IFUNC_OK || st == UCX_IFUNC_ERR_BAD_CODE);
    }
}

}  // namespace
