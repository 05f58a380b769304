// Hostile input at a target: images that are
// damaged or built to harm the process that loads them, and malformed wire
// messages and frames. The origin registers the images with
// UCX_IFUNC_REGISTER_NO_VERIFY, so the target must refuse them itself, each
// with its own status and a message that says why, before any of their code
// runs; every test ends with the target serving a valid invocation.
#include "cluster.h"
#include "run/context.h"
#include "image/image.h"
#include "wire/ring.h"
#include "image/sha256.h"
#include "wire/wire.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>

using namespace xrdma_test;
using xrdma::PartKind;

namespace {

std::vector<uint8_t> read_image(const std::string &name)
{
    std::vector<uint8_t> img;
    if (xrdma::read_file(Cluster::image_path(name), &img) != UCX_IFUNC_OK) ADD_FAILURE() << "cannot read image " << name;
    return img;
}

uint64_t get(const std::vector<uint8_t> &b, size_t off, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= uint64_t(b.at(off + i)) << (8 * i);
    return v;
}
void put(std::vector<uint8_t> &b, size_t off, int width, uint64_t v)
{
    for (int i = 0; i < width; ++i) b.at(off + i) = uint8_t(v >> (8 * i));
}

// Recompute the header's content hash (so that only the damage under test
// is wrong, and each hostile image has a hash of its own).
void fix_hash(std::vector<uint8_t> &img)
{
    static const uint8_t zeros[32] = {};
    xrdma::Sha256 s;
    s.update(img.data(), 32);
    s.update(zeros, 32);
    s.update(img.data() + 64, img.size() - 64);
    auto h = s.finish();
    memcpy(img.data() + 32, h.data(), 32);
}

// The native part of a test image.
std::vector<uint8_t> native_of(const std::string &name)
{
    std::vector<uint8_t> img = read_image(name);
    xrdma::ImageView v;
    std::string why;
    EXPECT_EQ(UCX_IFUNC_OK, xrdma::image_parse(img.data(), img.size(), &v, &why)) << why;
    for (const auto &p : v.parts)
        if (p.kind == PartKind::native_elf && p.triple == xrdma::host_triple())
            return std::vector<uint8_t>(p.data, p.data + p.size);
    ADD_FAILURE() << name << " has no native part for this host";
    return {};
}

std::vector<uint8_t> image_of(const std::vector<std::string> &entries, PartKind kind, const std::vector<uint8_t> &code)
{
    return xrdma::image_build(entries, {{kind, xrdma::host_triple(), code}});
}

// Just enough of an ELF shared object to patch what the loader reads.
struct Elf {
    std::vector<uint8_t> b;
    struct Load {
        uint64_t off, vaddr, filesz;
    };
    std::vector<Load> loads;
    uint64_t dyn_off = 0, dyn_size = 0;

    explicit Elf(std::vector<uint8_t> so) : b(std::move(so))
    {
        const uint64_t phoff = get(b, 32, 8), phnum = get(b, 56, 2);
        for (uint64_t i = 0; i < phnum; ++i) {
            const size_t p = phoff + 56 * i;
            const uint32_t type = uint32_t(get(b, p, 4));
            if (type == 1) loads.push_back({get(b, p + 8, 8), get(b, p + 16, 8), get(b, p + 32, 8)});
            if (type == 2) dyn_off = get(b, p + 8, 8), dyn_size = get(b, p + 32, 8);
        }
    }
    size_t phdr(uint32_t type) const
    {
        const uint64_t phoff = get(b, 32, 8), phnum = get(b, 56, 2);
        for (uint64_t i = 0; i < phnum; ++i)
            if (get(b, phoff + 56 * i, 4) == type) return phoff + 56 * i;
        return 0;
    }
    size_t off(uint64_t vaddr) const
    {
        for (const Load &l : loads)
            if (vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz) return size_t(l.off + vaddr - l.vaddr);
        ADD_FAILURE() << "vaddr " << vaddr << " not in the file";
        return 0;
    }
    // File offset of the dynamic entry with @p tag (0 if none).
    size_t dyn_entry(uint64_t tag) const
    {
        for (uint64_t i = 0; i + 16 <= dyn_size; i += 16)
            if (get(b, dyn_off + i, 8) == tag) return size_t(dyn_off + i);
        return 0;
    }
    uint64_t dyn(uint64_t tag) const
    {
        size_t e = dyn_entry(tag);
        EXPECT_NE(0u, e) << "no dynamic tag " << tag;
        return e ? get(b, e + 8, 8) : 0;
    }
    // File offset of the first relocation (DT_RELA, then DT_JMPREL) of @p type.
    size_t reloc(uint32_t type) const
    {
        for (auto t : {std::make_pair(7, 8), std::make_pair(23, 2)}) {
            if (!dyn_entry(t.first)) continue;
            const size_t at = off(dyn(t.first));
            for (uint64_t i = 0; i < dyn(t.second); i += 24)
                if (uint32_t(get(b, at + i + 8, 4)) == type) return at + i;
        }
        ADD_FAILURE() << "no relocation of type " << type;
        return 0;
    }
};

class Hostile : public ::testing::Test {
protected:
    void SetUp() override { use_transport("shm"); }
    void start() { c = std::make_unique<Cluster>(1); }
    // A message straight on the wire to rank 1 (not through the library,
    // which never sends such), on the plugin's AM id @p am_id.
    void send_am(uint16_t am_id, const void *hdr, size_t hdr_len, const std::vector<uint8_t> &data)
    {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_REPLY;
        ucs_status_ptr_t r = ucp_am_send_nbx(c->peer(1).ep, am_id, hdr, hdr_len, data.data(), data.size(), &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(c->env.worker);
            ucp_request_free(r);
        }
    }
    void TearDown() override
    {
        for (auto f : fs) ucx_ifunc_deregister(f);
        fs.clear();
        c.reset();
    }

    ucx_ifunc_h reg(const std::vector<uint8_t> &img, const char *entry)
    {
        ucx_ifunc_h f = nullptr;
        EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), entry,
                                                       UCX_IFUNC_REGISTER_NO_VERIFY, &f));
        fs.push_back(f);
        return f;
    }
    // Invoke @p img's @p entry at rank 1 and expect it refused with @p st,
    // with @p words in the message, before any of its code ran.
    void expect_refused(const std::vector<uint8_t> &img, const char *entry, ucx_ifunc_status_t st,
                        const std::string &words)
    {
        const ucx_ifunc_stats_t before = c->peer_stats(1);
        Result r = c->invoke(reg(img, entry), 1, nullptr, 0);
        EXPECT_EQ(st, r.status) << ucx_ifunc_status_string(r.status) << ": " << r.message;
        EXPECT_NE(std::string::npos, r.message.find(words)) << r.message;
        EXPECT_EQ(1, r.rank);
        ASSERT_TRUE(c->peer_alive(1)) << "the target died";
        const ucx_ifunc_stats_t after = c->peer_stats(1);
        EXPECT_EQ(before.executed, after.executed) << "refused code ran";
        EXPECT_EQ(before.images_loaded, after.images_loaded) << "refused image was cached";
    }
    // The target still runs valid code after whatever happened before.
    void expect_serving()
    {
        ucx_ifunc_h add = nullptr;
        ASSERT_EQ(UCX_IFUNC_OK,
                  ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), "add_u64", &add));
        fs.push_back(add);
        uint64_t a[2] = {40, 2};
        Result r = c->invoke(add, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        uint64_t sum = 0;
        ASSERT_EQ(8u, r.reply.size());
        memcpy(&sum, r.reply.data(), 8);
        EXPECT_EQ(42u, sum);
        EXPECT_TRUE(c->peer_alive(1));
    }

    // What @p n invocations of basic's count at rank 1 answered, in turn
    // (fewer if one failed: the test has failed then).
    std::vector<uint64_t> counted(ucx_ifunc_h count, int n)
    {
        std::vector<uint64_t> got;
        for (int i = 0; i < n; ++i) {
            Result r = c->invoke(count, 1, nullptr, 0);
            EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;
            EXPECT_EQ(8u, r.reply.size());
            if (r.status != UCX_IFUNC_OK || r.reply.size() != 8) break;
            uint64_t v;
            memcpy(&v, r.reply.data(), 8);
            got.push_back(v);
        }
        return got;
    }

    std::unique_ptr<Cluster> c;
    std::vector<ucx_ifunc_h> fs;
};

// Image header offsets (man/xrdma-image.5).
constexpr size_t kTotalSize = 16, kNEntries = 24, kNParts = 28, kHash = 32, kTables = 64;

TEST_F(Hostile, OversizedLengths)
{
    setenv("XRDMA_MAX_IMAGE_SIZE", "200000", 1);  // for the target only
    start();
    unsetenv("XRDMA_MAX_IMAGE_SIZE");
    const std::vector<uint8_t> good = read_image("basic");
    const uint32_t n_entries = uint32_t(get(good, kNEntries, 4));
    const size_t part0 = kTables + 8 * n_entries;

    std::vector<uint8_t> img = good;
    put(img, kTotalSize, 8, good.size() + 4096);  // says more than it has
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_TRUNCATED, "total_size");

    img = good;
    put(img, part0 + 24, 8, uint64_t(1) << 62);  // part 0's data_len
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "part 0 data");

    img = good;
    put(img, part0 + 16, 8, ~uint64_t(0) - 15);  // part 0's data_off: off + len wraps
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "part 0 data");

    img = good;
    put(img, kNEntries, 4, 0xffffffffu);
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "n_entries");

    img = good;
    put(img, kNParts, 4, 65);
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "n_parts");

    img = good;
    put(img, kTables + 4, 4, 0xffffffffu);  // entry 0's name_len
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "entry 0 name");

    // Valid, but larger than the target's XRDMA_MAX_IMAGE_SIZE.
    xrdma::ImageView v;
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(good.data(), good.size(), &v, nullptr));
    std::vector<uint8_t> so(v.parts[0].data, v.parts[0].data + v.parts[0].size);
    img = xrdma::image_build({"add_u64"}, {{PartKind::native_elf, xrdma::host_triple(), so},
                                           {PartKind(9), "padding", std::vector<uint8_t>(300000, 0)}});
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_DENIED, "XRDMA_MAX_IMAGE_SIZE");
    expect_serving();
}

TEST_F(Hostile, OverlappingParts)
{
    start();
    const std::vector<uint8_t> so = native_of("basic");
    std::vector<uint8_t> img = xrdma::image_build(
        {"add_u64"}, {{PartKind::native_elf, xrdma::host_triple(), so}, {PartKind(9), "other", std::vector<uint8_t>(64, 7)}});
    const size_t part1 = kTables + 8 + 32;
    put(img, part1 + 16, 8, get(img, kTables + 8 + 16, 8) + 100);  // part 1 inside part 0's code
    fix_hash(img);
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_BAD_LENGTH, "overlaps");
    expect_serving();
}

TEST_F(Hostile, HashMismatch)
{
    start();
    std::vector<uint8_t> img = read_image("basic");
    img[img.size() - 200] ^= 0x40;  // in the code; the header's hash stays
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_HASH_MISMATCH, "does not match");
    img = read_image("basic");
    for (size_t i = 0; i < 32; ++i) img[kHash + i] = uint8_t(i * 37 + 1);  // a hash of nothing
    expect_refused(img, "add_u64", UCX_IFUNC_ERR_HASH_MISMATCH, "does not match");
    expect_serving();
}

TEST_F(Hostile, ElfThatIsNotASharedObject)
{
    start();
    for (auto t : {std::make_pair(2, "ET_EXEC"), std::make_pair(1, "ET_REL"), std::make_pair(4, "ET_CORE")}) {
        std::vector<uint8_t> so = native_of("basic");
        put(so, 16, 2, t.first);
        expect_refused(image_of({"add_u64"}, PartKind::native_elf, so), "add_u64", UCX_IFUNC_ERR_BAD_CODE,
                       std::string("not a shared object (") + t.second);
    }
    std::vector<uint8_t> junk(4096, 0x5a);
    expect_refused(image_of({"add_u64"}, PartKind::native_elf, junk), "add_u64", UCX_IFUNC_ERR_BAD_CODE,
                   "not an ELF file");
    expect_serving();
}

TEST_F(Hostile, ElfForAnotherMachine)
{
    start();
    std::vector<uint8_t> so = native_of("basic");
    const bool x86 = xrdma::host_triple() == "x86_64-linux-gnu";
    put(so, 18, 2, x86 ? 183 : 62);  // EM_AARCH64 on x86-64, EM_X86_64 on AArch64
    expect_refused(image_of({"add_u64"}, PartKind::native_elf, so), "add_u64", UCX_IFUNC_ERR_BAD_CODE,
                   x86 ? "machine 183 (AArch64)" : "machine 62 (x86-64)");
    expect_serving();
}

// Code that would run when the image is loaded (or unloaded): constructors,
// DT_INIT, destructors, IFUNC resolvers. Each traps, which would kill the
// target, so "refused, target alive" also means "did not run".
TEST_F(Hostile, CodeThatRunsAtLoadIsRefused)
{
    start();
    struct Case {
        const char *image, *entry, *words;
    } cases[] = {
        {"hostile_ctor", "ctor_victim", "constructor 'at_load'"},
        {"hostile_init", "init_victim", "DT_INIT function 'at_init'"},
        {"hostile_dtor", "dtor_victim", "destructor 'at_unload'"},
        {"hostile_ifunc", "ifunc_victim", "IRELATIVE"},
    };
    for (const Case &k : cases) {
        SCOPED_TRACE(k.image);
        expect_refused(read_image(k.image), k.entry, UCX_IFUNC_ERR_BAD_CODE, k.words);
    }
    // The images xrdma-cc builds have none of it.
    Result r = c->invoke(reg(read_image("basic"), "fail_with"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    expect_serving();
}

// A definition of its own that the loader binds to the process's symbol of
// the same name is an import like any other.
TEST_F(Hostile, DefinitionBoundToTheProcessIsAnImport)
{
    start();  // XRDMA_SYMBOLS=runtime
    expect_refused(read_image("hostile_interpose"), "whoami", UCX_IFUNC_ERR_DENIED, "'getpid'");
    expect_serving();
    TearDown();
    // Allowed, the call indeed reaches the target's getpid(), not the image's.
    setenv("XRDMA_SYMBOLS", "all", 1);
    start();
    unsetenv("XRDMA_SYMBOLS");
    Result r = c->invoke(reg(read_image("hostile_interpose"), "whoami"), 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    int pid = 0;
    ASSERT_EQ(sizeof(pid), r.reply.size());
    memcpy(&pid, r.reply.data(), sizeof(pid));
    EXPECT_EQ(c->peer(1).pid, pid);
    expect_serving();
}

// An entry the image lists but does not define is not looked up in the
// libraries the image depends on (dlsym() would find libc's function), nor
// in the process.
TEST_F(Hostile, EntryNotDefinedByTheImage)
{
    start();
    const std::vector<uint8_t> img = image_of({"getpid"}, PartKind::native_elf, native_of("basic"));
    Result r = c->invoke(reg(img, "getpid"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY, r.status) << ucx_ifunc_status_string(r.status) << ": " << r.message;
    EXPECT_EQ(0u, c->peer_stats(1).executed);
    {
        // Nor in the process's symbols, for bitcode (the JIT links against them).
        std::vector<uint8_t> img0 = read_image("basic");
        xrdma::ImageView v;
        ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(img0.data(), img0.size(), &v, nullptr));
        std::vector<uint8_t> bc;
        for (const auto &p : v.parts)
            if (p.kind == PartKind::llvm_bitcode && p.triple == xrdma::host_triple()) bc.assign(p.data, p.data + p.size);
        ASSERT_FALSE(bc.empty());
        const std::vector<uint8_t> img2 = image_of({"getpid"}, PartKind::llvm_bitcode, bc);
        Result r2 = c->invoke(reg(img2, "getpid"), 1, nullptr, 0);
        EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY, r2.status) << ucx_ifunc_status_string(r2.status) << ": " << r2.message;
    }
    expect_serving();
}

// Native parts built to make the dynamic loader harm the process: each would
// crash, hang or weaken the target inside dlopen() or dlsym().
TEST_F(Hostile, ElfThatMisleadsTheLoader)
{
    start();
    const Elf good(native_of("basic"));
    const bool x86 = xrdma::host_triple() == "x86_64-linux-gnu";
    const uint32_t jump_slot = x86 ? 7 : 1026;
    auto refused = [&](const Elf &e, const std::string &words) {
        expect_refused(image_of({"add_u64"}, PartKind::native_elf, e.b), "add_u64", UCX_IFUNC_ERR_BAD_CODE, words);
    };
    {
        SCOPED_TRACE("relocation into the code");
        Elf e = good;
        put(e.b, e.reloc(jump_slot), 8, e.loads.at(1).vaddr + 16);
        refused(e, "outside the writable segments");
    }
    {
        SCOPED_TRACE("relocation far outside the object");
        Elf e = good;
        put(e.b, e.reloc(jump_slot), 8, uint64_t(1) << 44);
        refused(e, "outside the writable segments");
    }
    {
        SCOPED_TRACE("relocation into the dynamic section");
        Elf e = good;
        const size_t strtab_entry = e.dyn_entry(5);  // DT_STRTAB's value, which the loader adjusts
        const uint64_t dyn_vaddr = get(e.b, e.phdr(2) + 16, 8);
        put(e.b, e.reloc(jump_slot), 8, dyn_vaddr + (strtab_entry - e.dyn_off) + 8);
        refused(e, "dynamic section");
    }
    {
        SCOPED_TRACE("hash chain that loops");
        Elf e = good;
        const size_t h = e.off(e.dyn(4));  // DT_HASH
        const uint32_t nbucket = uint32_t(get(e.b, h, 4));
        uint32_t first = 0;
        for (uint32_t i = 0; i < nbucket && !first; ++i) first = uint32_t(get(e.b, h + 8 + 4 * i, 4));
        ASSERT_NE(0u, first);
        put(e.b, h + 8 + 4 * nbucket + 4 * first, 4, first);  // chain[first] = first
        refused(e, "loops");
    }
    {
        SCOPED_TRACE("executable stack");
        Elf e = good;
        const size_t ph = e.phdr(0x6474e551);  // PT_GNU_STACK
        ASSERT_NE(0u, ph);
        put(e.b, ph + 4, 4, get(e.b, ph + 4, 4) | 1);
        refused(e, "executable stack");
    }
    {
        SCOPED_TRACE("DT_NEEDED with a path");
        Elf e = good;
        const size_t name = e.off(e.dyn(5)) + e.dyn(1);  // DT_STRTAB + DT_NEEDED
        ASSERT_EQ(0, memcmp(&e.b[name], "libc.so.6", 10));
        memcpy(&e.b[name], "/tmp/c.so", 9);
        refused(e, "is a path");
    }
    {
        SCOPED_TRACE("version index out of range");
        Elf e = good;
        put(e.b, e.off(e.dyn(0x6ffffff0)) + 2, 2, 0x7ff0);  // DT_VERSYM[1]
        refused(e, "version index");
    }
    {
        SCOPED_TRACE("dynamic section without an end");
        Elf e = good;
        for (uint64_t i = 0; i + 16 <= e.dyn_size; i += 16)
            if (get(e.b, e.dyn_off + i, 8) == 0) put(e.b, e.dyn_off + i, 8, 21);  // DT_NULL -> DT_DEBUG
        refused(e, "DT_NULL");
    }
    {
        SCOPED_TRACE("symbol index past the symbol table");
        Elf e = good;
        const size_t r = e.reloc(jump_slot);
        put(e.b, r + 12, 4, 0x7fffffff);
        refused(e, "symbols");
    }
    expect_serving();
}

// Loading a library runs its constructors: an image may name only
// libraries the target has already loaded, unless XRDMA_SYMBOLS=all - in a
// native part's DT_NEEDED, and in a library-list part (kind 3), which the
// JIT used to dlopen() whatever it held: naming libasan.so.8 killed the
// target (its constructor exits when it is not first in the process).
TEST_F(Hostile, LibrariesTheTargetHasNotLoaded)
{
    start();
    {
        SCOPED_TRACE("DT_NEEDED");
        Elf e(native_of("basic"));
        // A spare DT_NULL at the end of the dynamic section becomes a second
        // DT_NEEDED, naming "c.so.6" (the tail of "libc.so.6").
        size_t spare = 0;
        for (uint64_t i = 0; i + 32 <= e.dyn_size; i += 16)
            if (get(e.b, e.dyn_off + i, 8) == 0 && get(e.b, e.dyn_off + i + 16, 8) == 0) {
                spare = size_t(e.dyn_off + i);
                break;
            }
        ASSERT_NE(0u, spare) << "no spare dynamic entry";
        put(e.b, spare, 8, 1);
        put(e.b, spare + 8, 8, e.dyn(1) + 3);
        expect_refused(image_of({"add_u64"}, PartKind::native_elf, e.b), "add_u64", UCX_IFUNC_ERR_DENIED,
                       "library 'c.so.6' is not loaded");
    }
    {
        SCOPED_TRACE("library list");
        std::vector<uint8_t> basic = read_image("basic");
        xrdma::ImageView v;
        ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(basic.data(), basic.size(), &v, nullptr));
        std::vector<uint8_t> bc;
        for (const auto &p : v.parts)
            if (p.kind == PartKind::llvm_bitcode && p.triple == xrdma::host_triple()) bc.assign(p.data, p.data + p.size);
        ASSERT_FALSE(bc.empty());
        // hwloc: installed (a dependency of the MPI layer), not a library
        // any build of this test has loaded (an ASan build has libasan, the
        // JIT brings libLLVM's dependencies). A library found nowhere loads
        // nothing either: only warned about (Compat.MissingLibraryOnlyWarns).
        const std::string list = "# needs\nlibc.so.6\n  libxrdma-absent.so.8  # nowhere\nlibhwloc.so.15\n";
        const auto img = xrdma::image_build({"add_u64"}, {{PartKind::llvm_bitcode, xrdma::host_triple(), bc},
                                                          {PartKind::library_list, "any", {list.begin(), list.end()}}});
        expect_refused(img, "add_u64", UCX_IFUNC_ERR_DENIED, "library list entry 'libhwloc.so.15'");
    }
    expect_serving();
}

// The checks refuse what the loader would misread, not the shapes linkers
// produce: the same code linked with other options loads and runs.
TEST_F(Hostile, OtherLinkOptionsStillLoad)
{
    start();
    for (const char *name : {"linkopt_now", "linkopt_verdef"}) {
        SCOPED_TRACE(name);
        ucx_ifunc_h f = reg(read_image(name), "add_u64");
        uint64_t a[2] = {20, 3};
        Result r = c->invoke(f, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        uint64_t sum = 0;
        ASSERT_EQ(8u, r.reply.size());
        memcpy(&sum, r.reply.data(), 8);
        EXPECT_EQ(23u, sum);
    }
    expect_serving();
}

TEST_F(Hostile, BitcodeThatIsNotBitcode)
{
    start();
    std::vector<uint8_t> junk(2048);
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = uint8_t(i * 131 + 7);
    expect_refused(image_of({"add_u64"}, PartKind::llvm_bitcode, junk), "add_u64", UCX_IFUNC_ERR_BAD_CODE,
                   "not valid LLVM bitcode");
    // The bitcode magic and then nothing sensible.
    std::vector<uint8_t> fake = {'B', 'C', 0xc0, 0xde};
    fake.insert(fake.end(), junk.begin(), junk.begin() + 100);
    expect_refused(image_of({"add_u64"}, PartKind::llvm_bitcode, fake), "add_u64", UCX_IFUNC_ERR_BAD_CODE,
                   "not valid LLVM bitcode");
    // An ELF object where bitcode should be.
    expect_refused(image_of({"add_u64"}, PartKind::llvm_bitcode, native_of("basic")), "add_u64",
                   UCX_IFUNC_ERR_BAD_CODE, "not valid LLVM bitcode");
    expect_refused(image_of({"add_u64"}, PartKind::llvm_bitcode, {}), "add_u64", UCX_IFUNC_ERR_BAD_CODE, "empty");
    expect_serving();
}

// Malformed invocations straight on the wire (not through the origin's
// library, which never sends them): dropped or answered with PROTOCOL.
TEST_F(Hostile, MalformedInvocations)
{
    start();
    const ucx_ifunc_stats_t before = c->peer_stats(1);
    auto send_raw = [&](const void *hdr, size_t hdr_len, const std::vector<uint8_t> &data) {
        send_am(xrdma::kAmInvoke, hdr, hdr_len, data);
    };
    xrdma::InvokeHdr h = xrdma::make_invoke_hdr(0, 0, 0, 1u << 30);  // no request of the origin's
    h.entry_len = 7;
    const std::vector<uint8_t> entry = {'a', 'd', 'd', '_', 'u', '6', '4'};
    int sent = 0;
    xrdma::InvokeHdr b = h;
    b.image_len = ~uint64_t(0);  // without the code flag, and more than there is
    send_raw(&b, sizeof(b), entry), ++sent;
    b = h;
    b.flags = xrdma::kHasCode;
    b.image_len = ~uint64_t(0) - 6;  // entry + image + args wrap around
    b.args_len = 7;
    send_raw(&b, sizeof(b), entry), ++sent;
    b = h;
    b.entry_len = 0;
    send_raw(&b, sizeof(b), entry), ++sent;
    b = h;
    b.magic = 0x12345678;
    send_raw(&b, sizeof(b), entry), ++sent;
    send_raw(&h, sizeof(h) - 1, entry), ++sent;  // short header
    b = h;
    b.args_len = 0xffffffffu;  // args beyond the data
    send_raw(&b, sizeof(b), entry), ++sent;
    b = h;
    b.bind = xrdma::kMaxBindings + 1;  // an index no sender may bind
    send_raw(&b, sizeof(b), entry), ++sent;
    // Short (warm) invocations: malformed ones are refused; a well-formed one
    // with an index this sender never bound is sent back to be resent in
    // full, and runs nothing.
    const xrdma::InvokeShortHdr s{xrdma::kInvokeShortMagic, xrdma::kWireVersion, 0, 0, 0, 0, 1u << 30};
    xrdma::InvokeShortHdr bs = s;
    bs.magic = 0x12345678;
    send_raw(&bs, sizeof(bs), entry), ++sent;
    bs = s;
    bs.flags = xrdma::kHasCode;
    send_raw(&bs, sizeof(bs), entry), ++sent;
    bs = s;
    bs.index = 0xffff;
    send_raw(&bs, sizeof(bs), entry), ++sent;
    // Without a user header, a message's header is the front of its data
    // (wire.h, kFrontHdr): too short for one, or a malformed one there, is
    // refused on either id.
    send_raw(nullptr, 0, entry), ++sent;
    send_am(xrdma::kAmReply, nullptr, 0, entry), ++sent;
    std::vector<uint8_t> front(sizeof(bs));
    bs = s;
    bs.magic = 0x12345678;
    memcpy(front.data(), &bs, sizeof(bs));
    send_raw(nullptr, 0, front), ++sent;
    bs = s;
    bs.index = 3;
    send_raw(&bs, sizeof(bs), entry);
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected >= before.rejected + sent; }, 30))
        << "the target did not reject all malformed invocations";
    EXPECT_EQ(before.executed, c->peer_stats(1).executed);
    expect_serving();
}

// A sender that is asked to resend an invocation and never does (nor
// withdraws it) holds only its own later invocations, and only
// XRDMA_MAX_PARKED of them: more are refused with an error answer; other
// senders are served meanwhile. A malformed withdrawal is dropped; a
// well-formed one closes the hole, and the held invocations run in order.
namespace {
struct Answers {
    std::vector<xrdma::ReplyHdr> got;
    std::vector<std::string> message;
};
ucs_status_t answer_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                       const ucp_am_recv_param_t *param)
{
    xrdma::ReplyHdr h;
    if (header_length != sizeof(h) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (h.magic != xrdma::kReplyMagic) return UCS_OK;  // (ring requests and the like)
    auto *a = static_cast<Answers *>(arg);
    a->got.push_back(h);
    a->message.emplace_back(static_cast<const char *>(data), h.kind == xrdma::kReplyResult ? std::min<size_t>(h.msg_len, length) : 0);
    return UCS_OK;
}
// A sender of the test's own collects the answers it gets in @p a.
ucs_status_t collect_answers(UcxEnv &sender, Answers *a)
{
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = xrdma::kAmReply;
    hp.cb = answer_cb;
    hp.arg = a;
    return ucp_worker_set_am_recv_handler(sender.worker, &hp);
}
// @p r as the 4 bytes that name a sender's rank after its args (kSenderRank).
std::vector<uint8_t> rank_bytes(int32_t r)
{
    std::vector<uint8_t> b(4);
    memcpy(b.data(), &r, 4);
    return b;
}
// A sender of the test's own that rank 1 knows as rank @p as (its peer
// table), sending warm invocations as a context with peers_by_rank does:
// the header in front, then @p tail (the args and a rank), no reply
// endpoint. Collects the answers it gets.
struct NamedSender {
    UcxEnv env{4096};
    Answers answers;
    ucp_ep_h ep = nullptr;
    NamedSender(xrdma_test::Cluster &c, int as)
    {
        EXPECT_EQ(UCS_OK, collect_answers(env, &answers));
        std::vector<uint8_t> add{'C'};
        xrdma_test::put_u64(add, uint64_t(as));
        add.insert(add.end(), env.address.begin(), env.address.end());
        c.ctrl(1, add);
        ep = env.connect(c.peer(1).address);
    }
    ~NamedSender() { env.close(ep); }
    void send(uint64_t req_id, const std::vector<uint8_t> &tail)
    {
        const xrdma::InvokeShortHdr s{xrdma::kInvokeShortMagic, xrdma::kWireVersion, 0, 5, 7, 0, req_id};
        std::vector<uint8_t> d(sizeof(s));
        memcpy(d.data(), &s, sizeof(s));
        d.insert(d.end(), tail.begin(), tail.end());
        ucp_request_param_t p{};
        ucs_status_ptr_t r = ucp_am_send_nbx(ep, xrdma::kAmInvoke, nullptr, 0, d.data(), d.size(), &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(env.worker);
            ucp_request_free(r);
        }
    }
    bool wait_answers(xrdma_test::Cluster &c, size_t n)
    {
        return c.progress_until([&] { return ucp_worker_progress(env.worker), answers.got.size() >= n; }, 30);
    }
};
}  // namespace

TEST_F(Hostile, HoleNeverFilledHoldsOnlyItsSender)
{
    setenv("XRDMA_MAX_PARKED", "8", 1);
    start();
    unsetenv("XRDMA_MAX_PARKED");
    const ucx_ifunc_stats_t before = c->peer_stats(1);
    // A sender of its own, without the library: it never answers.
    UcxEnv silent(4096);
    Answers answers;
    ASSERT_EQ(UCS_OK, collect_answers(silent, &answers));
    ucp_ep_h ep = silent.connect(c->peer(1).address);
    auto send = [&](const void *hdr, size_t len) {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_REPLY;
        ucs_status_ptr_t r = ucp_am_send_nbx(ep, xrdma::kAmInvoke, hdr, len, nullptr, 0, &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(silent.worker);
            ucp_request_free(r);
        }
    };
    auto wait_answers = [&](size_t n) {
        return c->progress_until([&] { return ucp_worker_progress(silent.worker), answers.got.size() >= n; }, 30);
    };
    // An index the target never bound: asked for in full, which never comes.
    xrdma::InvokeShortHdr s{xrdma::kInvokeShortMagic, xrdma::kWireVersion, 0, 5, 0, 0, 1};
    send(&s, sizeof(s));
    ASSERT_TRUE(wait_answers(1));
    EXPECT_EQ(xrdma::kReplyNeedBind, answers.got[0].kind);
    // Held behind it: 7 (with the hole, 8 parked); the 13 past them refused.
    for (uint64_t id = 2; id <= 21; ++id) {
        s.req_id = id;
        send(&s, sizeof(s));
    }
    ASSERT_TRUE(wait_answers(14)) << "the target answered " << answers.got.size() << " of 14";
    for (size_t i = 1; i < 14; ++i) {
        EXPECT_EQ(xrdma::kReplyResult, answers.got[i].kind);
        EXPECT_EQ(UCX_IFUNC_ERR_NO_MEMORY, answers.got[i].status);
        EXPECT_EQ(8 + i, answers.got[i].req_id) << "refused out of order";
        EXPECT_NE(std::string::npos, answers.message[i].find("XRDMA_MAX_PARKED")) << answers.message[i];
    }
    expect_serving();  // another sender meanwhile
    // A malformed withdrawal (a flag set) changes nothing; a well-formed one
    // lets the first held invocation (request 2) run: asked for in full again.
    xrdma::InvokeWithdrawHdr w{xrdma::kInvokeWithdrawMagic, xrdma::kWireVersion, 1, 0, 0, 0, 1};
    const uint64_t rejected = c->peer_stats(1).rejected;
    send(&w, sizeof(w));
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected > rejected; }, 30))
        << "the malformed withdrawal was not rejected";
    EXPECT_EQ(14u, answers.got.size());
    w.flags = 0;
    send(&w, sizeof(w));
    ASSERT_TRUE(wait_answers(15));
    EXPECT_EQ(xrdma::kReplyNeedBind, answers.got[14].kind);
    EXPECT_EQ(2u, answers.got[14].req_id) << "the held invocations did not run in order";
    EXPECT_EQ(before.executed + 1, c->peer_stats(1).executed);  // expect_serving()'s only
    silent.close(ep);
}

// peers_by_rank: a warm invocation that came without UCX's reply endpoint
// names its sender by the rank after its args (wire.h, kSenderRank). A
// sender of its own, made a peer of rank 1 as rank 7, is answered through
// the peer table (here: asked for the full invocation, an index it never
// bound); a rank the target does not know, a negative one, or no room for
// one are dropped, and the target keeps serving.
TEST_F(Hostile, SenderNamedByRank)
{
    setenv("XRDMA_TEST_PEERS_BY_RANK", "1", 1);
    start();
    unsetenv("XRDMA_TEST_PEERS_BY_RANK");
    NamedSender sender(*c, 7);  // rank 1 knows it as rank 7
    const uint64_t rejected = c->peer_stats(1).rejected;
    sender.send(1, rank_bytes(7));
    ASSERT_TRUE(sender.wait_answers(*c, 1)) << "rank 1 did not answer the sender its rank named";
    EXPECT_EQ(xrdma::kReplyNeedBind, sender.answers.got[0].kind);
    EXPECT_EQ(1u, sender.answers.got[0].req_id);
    EXPECT_EQ(1, sender.answers.got[0].rank);
    // Dropped where they arrive, before anything is held for their sender.
    sender.send(2, rank_bytes(9));   // no such peer
    sender.send(3, rank_bytes(-1));  // no rank at all
    sender.send(4, {0x07, 0x00});    // no room for one (the front header alone has none)
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected >= rejected + 3; }, 30))
        << "rank 1 did not drop the invocations from unknown senders";
    for (int i = 0; i < 100; ++i) ucp_worker_progress(sender.env.worker);
    EXPECT_EQ(1u, sender.answers.got.size()) << "an invocation from an unknown sender was answered";
    expect_serving();
}

// The same sender at a target whose context was created without
// peers_by_rank (a job that mixes the setting, which ucx_ifunc(3) forbids):
// refused with UCX_IFUNC_ERR_PROTOCOL through the peer table, which knows
// the rank, instead of left unanswered (its origin would wait for ever);
// dropped where no peer has the rank; the target keeps serving.
TEST_F(Hostile, SenderNamedByRankAtContextWithout)
{
    start();
    NamedSender sender(*c, 7);
    const uint64_t rejected = c->peer_stats(1).rejected;
    sender.send(1, rank_bytes(7));
    ASSERT_TRUE(sender.wait_answers(*c, 1)) << "rank 1 did not answer a sender named by rank";
    EXPECT_EQ(xrdma::kReplyResult, sender.answers.got[0].kind);
    EXPECT_EQ(UCX_IFUNC_ERR_PROTOCOL, sender.answers.got[0].status);
    EXPECT_EQ(1u, sender.answers.got[0].req_id);
    EXPECT_NE(std::string::npos, sender.answers.message[0].find("without peers_by_rank"))
        << sender.answers.message[0];
    sender.send(2, rank_bytes(9));  // no such peer: nowhere to answer
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected >= rejected + 2; }, 30))
        << "rank 1 did not count both invocations as rejected";
    for (int i = 0; i < 100; ++i) ucp_worker_progress(sender.env.worker);
    EXPECT_EQ(1u, sender.answers.got.size()) << "an invocation from an unknown rank was answered";
    expect_serving();
}

// Ring control messages straight on the wire (ring.cc): malformed ones are
// dropped, offers nobody asked for are declined, declines and refusals of
// rings that do not exist change nothing, and a request without the probe
// key a ring needs is refused.
TEST_F(Hostile, MalformedRingMessages)
{
    start();
    const ucx_ifunc_stats_t before = c->peer_stats(1);
    auto send_raw = [&](const xrdma::RingMsg &m, const std::vector<uint8_t> &data) {
        send_am(xrdma::kAmReply, &m, sizeof(m), data);
    };
    xrdma::RingMsg m{};
    m.magic = xrdma::kRingMagic;
    m.version = xrdma::kWireVersion;
    int rejected = 0;
    xrdma::RingMsg b = m;
    b.version = 99;
    send_raw(b, {}), ++rejected;
    b = m;
    b.kind = 77;
    send_raw(b, {}), ++rejected;
    b = m;
    b.kind = xrdma::kRingOffer;
    b.slots = 0;  // no slots
    b.slot_size = 512;
    b.rkey_len = 8;
    b.addr = 0x1000;
    send_raw(b, std::vector<uint8_t>(8, 0xff)), ++rejected;
    b.slots = 100;  // not a power of two
    send_raw(b, std::vector<uint8_t>(8, 0xff)), ++rejected;
    b.slots = 64;
    b.rkey_len = 9;  // a key longer than the data
    send_raw(b, std::vector<uint8_t>(8, 0xff)), ++rejected;
    b.slot_size = 12;  // smaller than a slot's header
    b.rkey_len = 8;
    send_raw(b, std::vector<uint8_t>(8, 0xff)), ++rejected;
    b.slot_size = 512;  // well formed, but asked for by nobody: declined, its key never read
    send_raw(b, std::vector<uint8_t>(8, 0xab));
    b = m;
    b.kind = xrdma::kRingDecline;
    b.addr = 0xdeadbeef;
    send_raw(b, {});
    b = m;
    b.kind = xrdma::kRingRefuse;
    send_raw(b, {});
    b = m;
    b.kind = xrdma::kRingRequest;  // without the probe a request must show: refused
    send_raw(b, {}), ++rejected;
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected >= before.rejected + rejected; }, 30))
        << "the target did not reject all malformed ring messages";
    EXPECT_EQ(before.executed, c->peer_stats(1).executed);
    expect_serving();
    // The ordinary traffic since then may use a ring the library asked for
    // itself; whatever it did, every answer came back.
    ucx_ifunc_h count = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), "count", &count));
    const std::vector<uint64_t> got = counted(count, 40);
    ASSERT_EQ(40u, got.size());
    uint64_t last = 0;
    for (uint64_t v : got) {
        EXPECT_GT(v, last);
        last = v;
    }
    ucx_ifunc_deregister(count);
    EXPECT_GT(c->peer_stats(1).ring_frames, 0u) << "no ring after the hostile messages";
}

// A sender may write anything into the ring a target gave it (the memory
// is mapped for it): here frames of random kinds, lengths and bytes, and
// warm invocations whose header is nearly right, each published behind its
// sequence word as a sender would. Every frame is taken and its slot's
// credit returned; those of no kind a ring carries, or longer than a slot,
// are dropped by the ring itself; the rest fail the checks of their kind.
// None runs code, and the target serves the sender's next invocations
// through the same ring.
TEST_F(Hostile, GarbageFramesInARing)
{
    start();
    ucx_ifunc_h count = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), "count", &count));
    fs.push_back(count);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(UCX_IFUNC_OK, c->invoke(count, 1, nullptr, 0).status);  // (rings set up)
    xrdma::RingOut *r = xrdma::ring_out(c->ctx, c->peer(1).ep);
    ASSERT_TRUE(r && r->state == xrdma::RingOut::kActive && r->base) << "no ring towards rank 1";
    const ucx_ifunc_stats_t before = c->peer_stats(1);
    std::mt19937_64 rng(20261128);
    constexpr int kFrames = 600;
    const size_t room = r->slot_size - sizeof(xrdma::RingSlotHdr);
    int dropped_by_ring = 0;
    for (int i = 0; i < kFrames; ++i) {
        uint8_t *slot = nullptr;
        ASSERT_TRUE(c->progress_until([&] { return (slot = xrdma::ring_next_slot(*r, 0)) != nullptr; }, 30))
            << "the target stopped taking frames after " << i;
        std::vector<uint8_t> body(room);
        for (auto &b : body) b = uint8_t(rng());
        xrdma::RingSlotHdr h{};
        // (After the active messages really sent: a frame that waits for
        // more holds its own sender's ring, like a hole never filled.)
        h.am_before = uint32_t(r->am_sent);
        static const uint8_t kinds[] = {xrdma::kAmInvoke, xrdma::kAmReply, xrdma::kRingAcks, 0, 0xA2, 0xff};
        h.kind = kinds[rng() % sizeof(kinds)];
        h.hdr_len = uint8_t(rng());
        h.data_len = uint16_t(rng() % (2 * r->slot_size));
        if (i % 4 == 0) {  // a warm invocation, right up to its flags
            xrdma::InvokeShortHdr s = xrdma::make_invoke_short_hdr(0, 0, 0, rng(), uint32_t(rng() % xrdma::kMaxBindings));
            s.flags = uint8_t(xrdma::kHasCode | (rng() & xrdma::kShortFlags));
            memcpy(body.data(), &s, sizeof(s));
            h.kind = xrdma::kAmInvoke;
            h.hdr_len = sizeof(s);
            h.data_len = uint16_t(rng() % (room - sizeof(s)));
        }
        const bool carried = h.kind == xrdma::kAmInvoke || h.kind == xrdma::kAmReply || h.kind == xrdma::kRingAcks;
        if (!carried || size_t(h.hdr_len) + h.data_len > room) ++dropped_by_ring;
        memcpy(slot + sizeof(h), body.data(), body.size());
        memcpy(slot + sizeof(h.seq), reinterpret_cast<const uint8_t *>(&h) + sizeof(h.seq), sizeof(h) - sizeof(h.seq));
        xrdma::publish_seq(slot, ++r->next);
    }
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).ring_frames >= before.ring_frames + kFrames; }, 60))
        << "the target did not take every frame";
    ASSERT_GT(dropped_by_ring, 0);
    const ucx_ifunc_stats_t after = c->peer_stats(1);
    EXPECT_GE(after.rejected, before.rejected + uint64_t(dropped_by_ring)) << "frames the ring carries no kind of";
    EXPECT_EQ(before.executed, after.executed) << "a garbage frame ran code";
    ASSERT_TRUE(c->peer_alive(1)) << "the target died";
    // The sender's own invocations go on through the same ring, in order.
    const std::vector<uint64_t> got = counted(count, 41);
    ASSERT_EQ(41u, got.size());
    for (size_t i = 1; i < got.size(); ++i) EXPECT_EQ(got[i - 1] + 1, got[i]);
    EXPECT_GT(c->peer_stats(1).ring_frames, after.ring_frames) << "the ring stopped turning";
    expect_serving();
}

// Malformed put-and-poll frames in the target's buffer, with a valid
// checksum so that they are taken as complete, and again with the ready word
// of a frame its writer stored itself (no checksum is verified): each is
// consumed and dropped.
TEST_F(Hostile, MalformedFrames)
{
    start();
    c->ctrl(1, {'P', 1});
    bool stored = false;
    auto put_frame = [&](std::vector<uint8_t> f) {
        xrdma::FrameHdr h;
        memcpy(&h, f.data(), sizeof(h));
        h.ready = stored ? xrdma::kFrameStored : xrdma::kFrameReady;
        h.nonce = 0x1234567;
        memcpy(f.data(), &h, sizeof(h));
        if (h.frame_size >= sizeof(h) + 8 && h.frame_size <= f.size()) {
            memcpy(&f[h.frame_size - 8], &h.nonce, 8);
            uint64_t sum = xrdma::frame_checksum(f.data(), h.frame_size);
            memcpy(&f[offsetof(xrdma::FrameHdr, checksum)], &sum, 8);
        }
        const ucx_ifunc_stats_t before = c->peer_stats(1);
        ucp_request_param_t p{};
        ucs_status_ptr_t r = ucp_put_nbx(c->peer(1).ep, f.data(), f.size(), c->peer(1).buffer, c->peer(1).rkey, &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(c->env.worker);
            ucp_request_free(r);
        }
        c->env.flush(c->peer(1).ep);
        EXPECT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected > before.rejected; }, 30))
            << "frame not rejected";
    };
    auto frame = [](uint32_t size, uint16_t entry_len, uint32_t args_off, uint32_t args_len, uint64_t image_len,
                    uint8_t flags) {
        std::vector<uint8_t> f(4096, 0);
        xrdma::FrameHdr h{};
        h.frame_size = size;
        h.version = xrdma::kWireVersion;
        h.flags = flags;
        h.entry_len = entry_len;
        h.args_off = args_off;
        h.args_len = args_len;
        h.image_len = image_len;
        memcpy(f.data(), &h, sizeof(h));
        memcpy(&f[sizeof(h)], "add_u64", 7);
        return f;
    };
    for (bool s : {false, true}) {
        SCOPED_TRACE(s ? "stored" : "put");
        stored = s;
        put_frame(frame(256, 7, 96, 0xffffffffu, 0, 0));            // args past the frame
        put_frame(frame(256, 7, 104, 8, 0, 0));                     // args not 16-aligned
        put_frame(frame(256, 7, 96, 8, 1u << 20, xrdma::kFrameHasCode));  // image past the frame
        put_frame(frame(256, 7, 96, 8, 40, 0));                     // image length without code
        put_frame(frame(256, 0, 96, 8, 0, 0));                      // no entry
        put_frame(frame(256, 7, 96, 8, 0, xrdma::kFrameHasCode | 0)); // "code" of 0 bytes
    }
    c->ctrl(1, {'P', 0});
    EXPECT_EQ(0u, c->peer_stats(1).executed);
    expect_serving();
}

}  // namespace
