// The bitcode path between real processes: images with bitcode only, a native
// part for a foreign triple (the target must compile the bitcode), the
// compiled-code cache in memory and on disk (across a target restart), part
// choice with XRDMA_CODE, and each kind of bad bitcode (rejected with a clear
// error at the origin while the target keeps serving). Plus, in-process, one
// compile for concurrent first loads of one image.
#include "chase.h"
#include "cluster.h"
#include "image/image.h"
#include "load/loader_jit.h"
#include "peer_state.h"
#include "ucx_ifunc/ucp_compat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

using namespace xrdma_test;
using xrdma::PartKind;
using xrdma::PartSpec;

namespace {

std::vector<uint8_t> read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> read_image(const std::string &name) { return read_file(Cluster::image_path(name)); }

std::string builddir()
{
    const char *b = getenv("XRDMA_TEST_BUILDDIR");
    return b && *b ? b : ".";
}

uint64_t as_u64(const std::vector<uint8_t> &v)
{
    uint64_t x = 0;
    EXPECT_EQ(v.size(), 8u);
    if (v.size() == 8) memcpy(&x, v.data(), 8);
    return x;
}

struct Parts {
    std::vector<std::string> entries;
    std::vector<PartSpec> parts;
};

// The entries and parts of a built image, to recombine them.
Parts parts_of(const std::vector<uint8_t> &img)
{
    xrdma::ImageView v;
    std::string why;
    EXPECT_EQ(UCX_IFUNC_OK, xrdma::image_parse(img.data(), img.size(), &v, &why)) << why;
    Parts p;
    for (auto e : v.entries) p.entries.emplace_back(e);
    for (const auto &pv : v.parts)
        p.parts.push_back(PartSpec{pv.kind, std::string(pv.triple), std::vector<uint8_t>(pv.data, pv.data + pv.size)});
    return p;
}

const PartSpec *find_part(const Parts &p, PartKind kind, const std::string &triple)
{
    for (const auto &s : p.parts)
        if (s.kind == kind && s.triple == triple) return &s;
    return nullptr;
}

const std::string kForeign = xrdma::host_triple() == "aarch64-linux-gnu" ? "x86_64-linux-gnu" : "aarch64-linux-gnu";

struct JitCounts {
    uint64_t compiles = 0, cache_loads = 0, shared = 0;
};

class Jit : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override
    {
        use_transport(GetParam());
        unsetenv("XRDMA_JIT_CACHE_DIR");
        unsetenv("XRDMA_CODE");
        basic = parts_of(read_image("basic"));
        ASSERT_NE(nullptr, find_part(basic, PartKind::native_elf, xrdma::host_triple()));
        ASSERT_NE(nullptr, find_part(basic, PartKind::llvm_bitcode, xrdma::host_triple()))
            << "xrdma-cc emits bitcode for the host by default";
        ASSERT_NE(nullptr, find_part(basic, PartKind::llvm_bitcode, "aarch64-linux-gnu"))
            << "xrdma-cc emits bitcode for aarch64 by default";
    }
    void TearDown() override
    {
        for (auto f : fs) ucx_ifunc_deregister(f);
        fs.clear();
        c.reset();
        unsetenv("XRDMA_JIT_CACHE_DIR");
        unsetenv("XRDMA_CODE");
        unsetenv("XRDMA_SYMBOLS");
    }

    void start(int npeers) { c = std::make_unique<Cluster>(npeers); }

    ucx_ifunc_h reg_mem(const std::vector<uint8_t> &img, const char *entry, unsigned flags = 0)
    {
        ucx_ifunc_h f = nullptr;
        EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), entry, flags, &f));
        fs.push_back(f);
        return f;
    }
    // An image with the entries of basic.xfn and the parts selected by @p keep.
    std::vector<uint8_t> basic_with(std::vector<PartSpec> parts) { return xrdma::image_build(basic.entries, parts); }
    std::vector<uint8_t> bitcode_only()
    {
        std::vector<PartSpec> ps;
        for (const auto &p : basic.parts)
            if (p.kind == PartKind::llvm_bitcode) ps.push_back(p);
        return basic_with(ps);
    }
    const PartSpec &host_bc() { return *find_part(basic, PartKind::llvm_bitcode, xrdma::host_triple()); }

    JitCounts peer_jit(int rank)
    {
        auto ans = c->ctrl(rank, {'J'});
        JitCounts j;
        EXPECT_EQ(ans.size(), 25u);
        if (ans.size() == 25) {
            j.compiles = get_u64(&ans[1]);
            j.cache_loads = get_u64(&ans[9]);
            j.shared = get_u64(&ans[17]);
        }
        return j;
    }
    void expect_add(ucx_ifunc_h add, int rank, uint64_t a, uint64_t b)
    {
        uint64_t args[2] = {a, b};
        Result r = c->invoke(add, rank, args, sizeof(args));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(a + b, as_u64(r.reply));
    }
    // The target still runs valid code (compiled from bitcode) after a failure.
    void expect_serving(int rank)
    {
        ucx_ifunc_h add = reg_mem(bitcode_only(), "add_u64");
        expect_add(add, rank, 40, 2);
        EXPECT_TRUE(c->peer_alive(rank));
    }
    // Start one target with @p knob=@p value and ship it bitcode (add_u64 1+2).
    Result bitcode_under(const char *knob, const char *value)
    {
        setenv(knob, value, 1);
        start(1);
        unsetenv(knob);
        uint64_t args[2] = {1, 2};
        return c->invoke(reg_mem(bitcode_only(), "add_u64"), 1, args, sizeof(args));
    }
    // The target is alive and still runs native code.
    void expect_native_serving(int rank)
    {
        EXPECT_TRUE(c->peer_alive(rank));
        expect_add(reg_mem(basic_with({*find_part(basic, PartKind::native_elf, xrdma::host_triple())}), "add_u64"),
                   rank, 5, 6);
    }
    // Invoke add_u64 of an image with one bad bitcode part for the host.
    Result invoke_bad(const std::vector<uint8_t> &bitcode, const std::string &label)
    {
        auto img = basic_with({PartSpec{PartKind::llvm_bitcode, label, bitcode}});
        uint64_t args[1] = {1};
        return c->invoke(reg_mem(img, "add_u64"), 1, args, sizeof(args));
    }

    Parts basic;
    std::unique_ptr<Cluster> c;
    std::vector<ucx_ifunc_h> fs;
};

TEST_P(Jit, BitcodeOnlyImageRunsEverywhere)
{
    start(2);
    ucx_ifunc_h add = reg_mem(bitcode_only(), "add_u64");
    expect_add(add, 1, 1, 2);
    expect_add(add, 2, 3, 4);
    // Forwarding ships the bitcode on to the next hop, which compiles it too.
    ucx_ifunc_h chase = reg_mem(bitcode_only(), "chase");
    chase_args a = chase_route({1, 2, 0, 2});
    chase_args out;
    ASSERT_TRUE(chase_reply(c->invoke(chase, 1, &a, sizeof(a)), &out));
    for (int i = 0; i < a.hops; ++i) EXPECT_EQ(a.route[i], out.path[i]) << "hop " << i;
    // The runtime API (xrdma_user_ptr) binds for compiled code as for native.
    ucx_ifunc_h count = reg_mem(bitcode_only(), "count");
    for (uint64_t i = 1; i <= 3; ++i) {
        Result rc = c->invoke(count, 1, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, rc.status) << rc.message;
        EXPECT_EQ(i, as_u64(rc.reply));
    }
    EXPECT_EQ(1u, peer_jit(1).compiles) << "one image, one compile";
    EXPECT_EQ(1u, peer_jit(2).compiles);
}

// LLVM is mapped only by a process that received bitcode: the
// JIT module is loaded on first need.
TEST_P(Jit, LlvmIsMappedOnlyOnceBitcodeArrives)
{
    start(1);
    using Maps = std::pair<uint64_t, uint64_t>;
    auto mapped = [&] {
        auto ans = c->ctrl(1, {'M'});
        EXPECT_EQ(ans.size(), 17u);
        return ans.size() == 17 ? Maps(get_u64(&ans[1]), get_u64(&ans[9])) : Maps(~0ull, ~0ull);
    };
    const Maps none(0, 0);
    EXPECT_EQ(none, mapped()) << "(libLLVM, libxrdma_jit) mappings of a fresh target";
    ucx_ifunc_h native = reg_mem(basic_with({*find_part(basic, PartKind::native_elf, xrdma::host_triple())}), "add_u64");
    expect_add(native, 1, 1, 2);
    EXPECT_EQ(none, mapped()) << "a native X-op maps no LLVM";
    expect_add(reg_mem(bitcode_only(), "add_u64"), 1, 3, 4);
    auto after = mapped();
    EXPECT_GT(after.first, 0u) << "bitcode loads libLLVM";
    EXPECT_GT(after.second, 0u) << "through the JIT module";
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

// Without its JIT module a target refuses bitcode with a readable link
// error, and keeps serving native code.
TEST_P(Jit, MissingJitModuleIsALinkError)
{
    Result r = bitcode_under("XRDMA_JIT_MODULE", "/nonexistent/libxrdma_jit.so");
    EXPECT_EQ(UCX_IFUNC_ERR_LINK, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("cannot compile bitcode")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("/nonexistent/libxrdma_jit.so")) << r.message;
    expect_native_serving(1);
}

TEST_P(Jit, NativePartForForeignTripleForcesJit)
{
    start(1);
    PartSpec native = *find_part(basic, PartKind::native_elf, xrdma::host_triple());
    native.triple = kForeign;  // as if built on the other machine
    auto img = basic_with({native, host_bc()});
    ucx_ifunc_h add = reg_mem(img, "add_u64");
    expect_add(add, 1, 20, 22);
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

TEST_P(Jit, NoUsablePartListsTheImagesTriples)
{
    start(1);
    const PartSpec *foreign_bc = find_part(basic, PartKind::llvm_bitcode, kForeign);
    ASSERT_NE(nullptr, foreign_bc);
    PartSpec native = *find_part(basic, PartKind::native_elf, xrdma::host_triple());
    native.triple = kForeign;
    uint64_t args[1] = {1};
    Result r = c->invoke(reg_mem(basic_with({native, *foreign_bc}), "add_u64"), 1, args, sizeof(args));
    EXPECT_EQ(UCX_IFUNC_ERR_NO_PART, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("native " + kForeign)) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("bitcode " + kForeign)) << r.message;
    EXPECT_NE(std::string::npos, r.message.find(xrdma::host_triple())) << "names the target's triple: " << r.message;
    expect_serving(1);
}

TEST_P(Jit, CodeChoiceFollowsXrdmaCode)
{
    // XRDMA_CODE=bitcode: a fat image runs compiled bitcode.
    setenv("XRDMA_CODE", "bitcode", 1);
    start(1);
    ucx_ifunc_h add = reg_mem(read_image("basic"), "add_u64");
    expect_add(add, 1, 5, 6);
    EXPECT_EQ(1u, peer_jit(1).compiles);
    for (auto f : fs) ucx_ifunc_deregister(f);  // before the context goes (ucx_ifunc.h)
    fs.clear();
    c.reset();
    // XRDMA_CODE=native: a bitcode-only image is refused, naming its parts.
    setenv("XRDMA_CODE", "native", 1);
    start(1);
    uint64_t args[1] = {1};
    Result r = c->invoke(reg_mem(bitcode_only(), "add_u64"), 1, args, sizeof(args));
    EXPECT_EQ(UCX_IFUNC_ERR_NO_PART, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("XRDMA_CODE=native")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("bitcode " + xrdma::host_triple())) << r.message;
    // ...and a fat image runs its native part without compiling.
    expect_add(reg_mem(read_image("basic"), "add_u64"), 1, 1, 1);
    EXPECT_EQ(0u, peer_jit(1).compiles);
    // auto (the default) prefers native when the triple matches.
    for (auto f : fs) ucx_ifunc_deregister(f);  // before the context goes (ucx_ifunc.h)
    fs.clear();
    c.reset();
    unsetenv("XRDMA_CODE");
    start(1);
    expect_add(reg_mem(read_image("basic"), "add_u64"), 1, 2, 2);
    EXPECT_EQ(0u, peer_jit(1).compiles);
}

TEST_P(Jit, SecondUseHitsTheCache)
{
    start(1);
    ucx_ifunc_h add = reg_mem(bitcode_only(), "add_u64");
    for (uint64_t i = 0; i < 10; ++i) expect_add(add, 1, i, 100);
    // Another entry of the same image: same compiled code.
    ucx_ifunc_h count = reg_mem(bitcode_only(), "count");
    ASSERT_EQ(UCX_IFUNC_OK, c->invoke(count, 1, nullptr, 0).status);
    EXPECT_EQ(1u, peer_jit(1).compiles);
    EXPECT_EQ(1u, c->peer_stats(1).images_loaded);
    // Dropped from the code cache, the image is compiled again (no disk cache).
    c->ctrl(1, {'F'});
    expect_add(add, 1, 1, 1);
    EXPECT_EQ(2u, peer_jit(1).compiles);
}

TEST_P(Jit, ManyConcurrentFirstInvocationsCompileOnce)
{
    start(1);
    ucx_ifunc_h add = reg_mem(bitcode_only(), "add_u64");
    std::vector<Result> rs(50);
    uint64_t args[2] = {7, 8};
    for (auto &r : rs) c->invoke_async(add, 1, args, sizeof(args), &r);
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    for (const auto &r : rs) {
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(15u, as_u64(r.reply));
    }
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

std::vector<std::string> list_dir(const std::string &dir)
{
    std::vector<std::string> out;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) out.push_back(e->d_name);
        closedir(d);
    }
    return out;
}

// The compiled objects in a disk cache (each has its .imports beside it).
std::vector<std::string> objects_in(const std::string &dir)
{
    std::vector<std::string> out;
    for (const std::string &f : list_dir(dir)) {
        if (f.size() < 2 || f.compare(f.size() - 2, 2, ".o") != 0) continue;
        EXPECT_EQ(0, access((dir + "/" + f.substr(0, f.size() - 2) + ".imports").c_str(), R_OK)) << f;
        out.push_back(f);
    }
    return out;
}

void remove_dir(const std::string &dir)
{
    for (const auto &f : list_dir(dir)) unlink((dir + "/" + f).c_str());
    rmdir(dir.c_str());
}

TEST_P(Jit, DiskCacheSurvivesTargetRestart)
{
    char tmpl[] = "/tmp/xrdma-jitcache-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    const std::string dir = std::string(tmpl) + "/objects";  // created on demand
    setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
    std::vector<uint8_t> img = bitcode_only();

    start(1);
    expect_add(reg_mem(img, "add_u64"), 1, 1, 2);
    JitCounts j = peer_jit(1);
    EXPECT_EQ(1u, j.compiles);
    EXPECT_EQ(0u, j.cache_loads);
    auto files = objects_in(dir);
    ASSERT_EQ(1u, files.size());
    EXPECT_EQ(2u, list_dir(dir).size()) << "the object and its imports, nothing else";
    xrdma::Hash h;
    ASSERT_TRUE(xrdma::image_peek_hash(img.data(), img.size(), &h));
    EXPECT_EQ(0u, files[0].rfind(xrdma::hash_hex(h), 0)) << "named after the image hash: " << files[0];
    const std::string arch = xrdma::host_triple().substr(0, xrdma::host_triple().find('-'));
    EXPECT_NE(std::string::npos, files[0].find("." + arch + "-")) << "and the triple: " << files[0];
    EXPECT_NE(std::string::npos, files[0].find(".llvm14")) << files[0];
    TearDown();

    // A new target process: the object comes from disk, nothing is compiled.
    setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
    start(1);
    ucx_ifunc_h add = reg_mem(img, "add_u64");
    expect_add(add, 1, 30, 12);
    ucx_ifunc_h count = reg_mem(img, "count");
    Result r = c->invoke(count, 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(1u, as_u64(r.reply));
    j = peer_jit(1);
    EXPECT_EQ(0u, j.compiles);
    EXPECT_EQ(1u, j.cache_loads);
    TearDown();

    // A damaged object is not trusted: the target compiles again.
    {
        std::ofstream(dir + "/" + files[0], std::ios::binary | std::ios::trunc) << "not an object";
    }
    setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
    start(1);
    expect_add(reg_mem(img, "add_u64"), 1, 2, 3);
    j = peer_jit(1);
    EXPECT_EQ(1u, j.compiles);
    EXPECT_EQ(0u, j.cache_loads);
    TearDown();
    remove_dir(dir);
    rmdir(tmpl);
}

TEST_P(Jit, OptimisationLevelIsPartOfTheKey)
{
    char tmpl[] = "/tmp/xrdma-jitopt-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    const std::string dir = tmpl;
    std::vector<uint8_t> img = bitcode_only();
    for (const char *level : {"0", "3"}) {
        setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
        setenv("XRDMA_JIT_OPT_LEVEL", level, 1);
        start(1);
        unsetenv("XRDMA_JIT_OPT_LEVEL");
        expect_add(reg_mem(img, "add_u64"), 1, 2, 2);
        EXPECT_EQ(1u, peer_jit(1).compiles) << "an object compiled at another level is not reused";
        TearDown();
    }
    auto files = objects_in(dir);
    std::sort(files.begin(), files.end());
    ASSERT_EQ(2u, files.size());
    EXPECT_NE(std::string::npos, files[0].find(".O0.o")) << files[0];
    EXPECT_NE(std::string::npos, files[1].find(".O3.o")) << files[1];
    remove_dir(dir);
}

TEST_P(Jit, TruncatedBitcodeIsRejected)
{
    start(1);
    std::vector<uint8_t> bc = host_bc().data;
    bc.resize(bc.size() / 2);
    Result r = invoke_bad(bc, xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("not valid LLVM bitcode")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("rank 1")) << r.message;
    // Not bitcode at all, and an empty part.
    r = invoke_bad(std::vector<uint8_t>(512, 0x42), xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    r = invoke_bad({}, xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("empty")) << r.message;
    expect_serving(1);
}

TEST_P(Jit, BitcodeForWrongTripleIsRejected)
{
    start(1);
    // Bitcode for the other architecture, labelled as this one's.
    Result r = invoke_bad(find_part(basic, PartKind::llvm_bitcode, kForeign)->data, xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("holds a module for '" + kForeign.substr(0, kForeign.find('-'))))
        << r.message;
    expect_serving(1);
}

TEST_P(Jit, InvalidIrIsRejected)
{
    start(1);
    std::string path = builddir() + "/tests/plugin/ifuncs/invalid_ir.bc";
    std::vector<uint8_t> bc = read_file(path);
    ASSERT_FALSE(bc.empty()) << path;
    Result r = invoke_bad(bc, xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("invalid IR")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("dominate")) << "the verifier's reason: " << r.message;
    expect_serving(1);
}

// Bitcode is compiled in a helper process: an LLVM abort, a
// compile past XRDMA_JIT_TIMEOUT or past XRDMA_JIT_MEMORY_LIMIT ends only
// that image, with a readable error, and the target keeps serving; a helper
// that died is started again for the next image.
TEST_P(Jit, LlvmAbortFailsOnlyThatImage)
{
    if (xrdma::host_triple() != "x86_64-linux-gnu") GTEST_SKIP() << "the aborting IR is x86-64's";
    start(1);
    std::string path = builddir() + "/tests/plugin/ifuncs/llvm_abort.bc";
    std::vector<uint8_t> bc = read_file(path);
    ASSERT_FALSE(bc.empty()) << path;
    Result r = invoke_bad(bc, xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("signal 6")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("Unsupported library call operation")) << "LLVM's words: " << r.message;
    EXPECT_TRUE(c->peer_alive(1));
    expect_serving(1);  // bitcode again: a new helper compiles it
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

// Bitcode on which LLVM's reader calls report_fatal_error (fuzz_bitcode found
// it): the target never reads bitcode itself, the helper dies of it.
TEST_P(Jit, BitcodeThatAbortsLlvmsReaderFailsOnlyThatImage)
{
    const char *src = getenv("XRDMA_TEST_SRCDIR");
    std::vector<uint8_t> in =
        read_file(std::string(src ? src : "..") + "/tests/fuzz/regressions/bitcode/target-reader-fatal-invalid-abbrev");
    auto nul = std::find(in.begin(), in.end(), uint8_t(0));
    ASSERT_NE(in.end(), nul);
    start(1);
    Result r = invoke_bad(std::vector<uint8_t>(nul + 1, in.end()), xrdma::host_triple());
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("Invalid abbrev number")) << "LLVM's words: " << r.message;
    EXPECT_TRUE(c->peer_alive(1));
    expect_serving(1);
}

TEST_P(Jit, CompileTimeoutStopsTheCompiler)
{
    Result r = bitcode_under("XRDMA_JIT_TIMEOUT", "0.001");  // less than the helper takes to start
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("XRDMA_JIT_TIMEOUT=0.001")) << r.message;
    expect_native_serving(1);
}

TEST_P(Jit, CompileMemoryLimitFailsTheImage)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "the helper's address space is not limited in sanitizer builds";
#endif
    Result r = bitcode_under("XRDMA_JIT_MEMORY_LIMIT", "32");  // MiB: not even enough to map libLLVM
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("bitcode compiler")) << r.message;
    expect_native_serving(1);
}

TEST_P(Jit, CompilesInProcessWithoutHelper)
{
    Result r = bitcode_under("XRDMA_JIT_HELPER", "none");
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(3u, as_u64(r.reply));
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

TEST_P(Jit, UnresolvedSymbolIsLinkError)
{
    setenv("XRDMA_SYMBOLS", "all", 1);  // allowed by policy, missing in the process
    start(1);
    unsetenv("XRDMA_SYMBOLS");
    auto un = parts_of(read_image("unresolved"));
    const PartSpec *bc = find_part(un, PartKind::llvm_bitcode, xrdma::host_triple());
    ASSERT_NE(nullptr, bc);
    auto img = xrdma::image_build(un.entries, {*bc});
    Result r = c->invoke(reg_mem(img, "unresolved"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_LINK, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("xrdma_test_no_such_symbol")) << r.message;
    expect_serving(1);
}

TEST_P(Jit, UnresolvedSymbolIsLinkErrorUnderDefaultPolicy)
{
    start(1);  // default policy: runtime
    auto un = parts_of(read_image("unresolved"));
    const PartSpec *bc = find_part(un, PartKind::llvm_bitcode, xrdma::host_triple());
    ASSERT_NE(nullptr, bc);
    Result r = c->invoke(reg_mem(xrdma::image_build(un.entries, {*bc}), "unresolved"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_LINK, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("xrdma_test_no_such_symbol")) << r.message;
    expect_serving(1);
}

TEST_P(Jit, SymbolPolicyAppliesToBitcode)
{
    char tmpl[] = "/tmp/xrdma-jitpolicy-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    const std::string dir = tmpl;
    setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
    auto fb = parts_of(read_image("forbidden"));
    const PartSpec *bc = find_part(fb, PartKind::llvm_bitcode, xrdma::host_triple());
    ASSERT_NE(nullptr, bc);
    auto img = xrdma::image_build(fb.entries, {*bc});
    const char cmd[] = "true";

    // Compiled under XRDMA_SYMBOLS=all (and cached on disk)...
    setenv("XRDMA_SYMBOLS", "all", 1);
    start(1);
    Result r = c->invoke(reg_mem(img, "forbidden"), 1, cmd, sizeof(cmd));
    EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    TearDown();
    ASSERT_EQ(1u, objects_in(dir).size());

    // ...a target with the default policy refuses it before it runs, even
    // though the compiled object is in its disk cache.
    unsetenv("XRDMA_SYMBOLS");
    setenv("XRDMA_JIT_CACHE_DIR", dir.c_str(), 1);
    start(1);
    r = c->invoke(reg_mem(img, "forbidden"), 1, cmd, sizeof(cmd));
    EXPECT_EQ(UCX_IFUNC_ERR_DENIED, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("'system'")) << r.message;
    EXPECT_EQ(0u, c->peer_stats(1).executed);
    expect_serving(1);
    TearDown();
    remove_dir(dir);
}

// Put one published-API message into the peer's buffer and wait for @p want.
void compat_send(Cluster &c, ucp_ifunc_h ih, uint64_t v, uint64_t want)
{
    ucp_ifunc_msg_t msg;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_create(ih, &v, sizeof(v), &msg));
    ucs_status_t st = ucp_ifunc_send_nbix(c.peer(1).ep, msg, c.peer(1).buffer, c.peer(1).rkey);
    ASSERT_TRUE(st == UCS_OK || st == UCS_INPROGRESS);
    c.env.flush(c.peer(1).ep);
    EXPECT_TRUE(c.progress_until([&] { return c.peer_counter(1) == want; }, 30))
        << "counter " << c.peer_counter(1) << ", want " << want;
    ucp_ifunc_msg_free(msg);
}

TEST_P(Jit, PublishedApiShipsBitcode)
{
    setenv("XRDMA_SYMBOLS", "all", 1);  // hwver calls hwloc, outside the default allowlist
    start(1);
    unsetenv("XRDMA_SYMBOLS");
    const std::string libdir = builddir() + "/tests/plugin/compat/bc";
    setenv("UCX_IFUNC_LIB_DIR", libdir.c_str(), 1);
    c->ctrl(1, {'P', 2});

    // No counter.so there: the origin compiles the payload functions itself.
    ucp_ifunc_reg_param_t p{};
    p.name = const_cast<char *>("counter");
    p.llvm_bc = 1;
    ucp_ifunc_h ih;
    ASSERT_EQ(UCS_OK, ucp_register_ifunc(c->env.context, p, &ih));
    compat_send(*c, ih, 5, 5);
    compat_send(*c, ih, 7, 12);
    EXPECT_EQ(1u, peer_jit(1).compiles);
    ucp_deregister_ifunc(c->env.context, ih);

    // hwver.deps makes the target load libhwloc before linking hwver_main.
    void *hw = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nullptr, hw) << dlerror();
    auto api = reinterpret_cast<unsigned (*)()>(dlsym(hw, "hwloc_get_api_version"));
    ASSERT_NE(nullptr, api);
    const uint64_t want = 12 + 1 + api();
    p.name = const_cast<char *>("hwver");
    ASSERT_EQ(UCS_OK, ucp_register_ifunc(c->env.context, p, &ih));
    compat_send(*c, ih, 1, want);
    EXPECT_EQ(2u, peer_jit(1).compiles);
    ucp_deregister_ifunc(c->env.context, ih);
    dlclose(hw);

    // No bitcode of that name: refused at the origin.
    p.name = const_cast<char *>("nosuch");
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucp_register_ifunc(c->env.context, p, &ih));
    unsetenv("UCX_IFUNC_LIB_DIR");
}

INSTANTIATE_TEST_SUITE_P(Transports, Jit, ::testing::ValuesIn(transports()),
                         [](const auto &info) { return info.param; });

// A compile does not stall the target: while the compile helper
// holds one sender's X-op (gated_jit_helper: the test says when it may
// compile, or that it crashes), the target serves X-ops from other senders;
// the held sender's later X-ops wait behind it, in order; a failed compile
// ends only its X-op and releases those behind it.
class JitGated : public Jit {
protected:
    void SetUp() override
    {
        Jit::SetUp();
        char tmpl[] = "/tmp/xrdma-gate-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir = tmpl;
        ASSERT_EQ(0, mkfifo((dir + "/ready").c_str(), 0600));
        ASSERT_EQ(0, mkfifo((dir + "/gate").c_str(), 0600));
        // Open for both ends: the helper's opens do not block, nor do writes.
        ready = open((dir + "/ready").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
        gate = open((dir + "/gate").c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(ready, 0);
        ASSERT_GE(gate, 0);
        char *top = realpath(builddir().c_str(), nullptr);  // the peers run in directories of their own
        ASSERT_NE(nullptr, top);
        const std::string build = top;
        free(top);
        setenv("XRDMA_JIT_HELPER", (build + "/tests/plugin/gated_jit_helper").c_str(), 1);
        setenv("XRDMA_TEST_JIT_REAL_HELPER", (build + "/xrdma-jit-helper").c_str(), 1);
        setenv("XRDMA_TEST_JIT_GATE", dir.c_str(), 1);
        start(2);
        unsetenv("XRDMA_JIT_HELPER");
        native = basic_with({*find_part(basic, PartKind::native_elf, xrdma::host_triple())});
    }
    void TearDown() override
    {
        Jit::TearDown();
        if (ready >= 0) close(ready);
        if (gate >= 0) close(gate);
        remove_dir(dir);
    }
    // Progress until a helper started and waits at the gate.
    bool helper_waits()
    {
        return c->progress_until([&] {
            char b;
            return read(ready, &b, 1) == 1;
        });
    }
    void open_gate(char how) { ASSERT_EQ(1, write(gate, &how, 1)); }
    // 0 -> 2 -> 1: an X-op that reaches rank 1 from rank 2, another sender.
    void chase_via_2(Result *r)
    {
        chase_args a = chase_route({2, 1});
        c->invoke_async(reg_mem(native, "chase"), 2, &a, sizeof(a), r);
    }
    void expect_chased(const Result &r)
    {
        chase_args out;
        ASSERT_TRUE(chase_reply(r, &out));
        EXPECT_EQ(2, out.path[0]);
        EXPECT_EQ(1, out.path[1]);
    }
    // Warm: rank 1 has the native image, from rank 0 and from rank 2.
    void warm_up()
    {
        Result r;
        chase_via_2(&r);
        ASSERT_TRUE(c->progress_until([&] { return r.done; }));
        expect_chased(r);
        Result n = c->invoke(reg_mem(native, "count"), 1, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, n.status) << n.message;
        EXPECT_EQ(1u, as_u64(n.reply));
    }

    std::string dir;
    int ready = -1, gate = -1;
    std::vector<uint8_t> native;
};

TEST_P(JitGated, OtherSendersAreServedDuringACompileAndOrderIsKept)
{
    warm_up();
    Result cold, behind[2], other;
    c->invoke_async(reg_mem(bitcode_only(), "count"), 1, nullptr, 0, &cold);  // counter 2
    ASSERT_TRUE(helper_waits());
    c->invoke_async(reg_mem(native, "count"), 1, nullptr, 0, &behind[0]);  // 3, after the cold one
    c->invoke_async(reg_mem(native, "count"), 1, nullptr, 0, &behind[1]);  // 4
    chase_via_2(&other);
    ASSERT_TRUE(c->progress_until([&] { return other.done; })) << "rank 1 serves while it compiles";
    expect_chased(other);
    EXPECT_FALSE(cold.done);
    EXPECT_FALSE(behind[0].done) << "rank 0's X-ops wait behind its X-op that waits for the compile";
    open_gate('g');
    ASSERT_TRUE(c->progress_until([&] { return cold.done && behind[0].done && behind[1].done; }));
    ASSERT_EQ(UCX_IFUNC_OK, cold.status) << cold.message;
    EXPECT_EQ(2u, as_u64(cold.reply));
    for (uint64_t i = 0; i < 2; ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, behind[i].status) << behind[i].message;
        EXPECT_EQ(3 + i, as_u64(behind[i].reply)) << "in issue order";
    }
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

// Warm invocations of the image that waits for its compile go short (the
// full one bound their index as it left); the target binds that index only
// once the compile is done, so they wait in the queue too, in issue order,
// ahead of a later full invocation from the same sender.
TEST_P(JitGated, ShortInvocationsBehindACompileKeepIssueOrder)
{
    ucx_ifunc_h count_bc = reg_mem(bitcode_only(), "count");
    Result cold, warm[3], full;
    c->invoke_async(count_bc, 1, nullptr, 0, &cold);  // counter 1
    ASSERT_TRUE(helper_waits());
    const ucx_ifunc_stats_t s0 = c->stats();
    for (Result &r : warm) c->invoke_async(count_bc, 1, nullptr, 0, &r);  // 2, 3, 4
    ucx_ifunc_stats_t s1 = c->stats();
    EXPECT_EQ(3 * 24u, s1.bytes_sent - s0.bytes_sent) << "they go in the short form";
    c->invoke_async(reg_mem(native, "count"), 1, nullptr, 0, &full);  // 5: another image, in full
    open_gate('g');
    ASSERT_TRUE(c->progress_until([&] { return cold.done && full.done && warm[2].done; }));
    ASSERT_EQ(UCX_IFUNC_OK, cold.status) << cold.message;
    EXPECT_EQ(1u, as_u64(cold.reply));
    for (uint64_t i = 0; i < 3; ++i) {
        ASSERT_TRUE(warm[i].done);
        ASSERT_EQ(UCX_IFUNC_OK, warm[i].status) << warm[i].message;
        EXPECT_EQ(2 + i, as_u64(warm[i].reply)) << "in issue order";
    }
    ASSERT_EQ(UCX_IFUNC_OK, full.status) << full.message;
    EXPECT_EQ(5u, as_u64(full.reply)) << "after the warm ones issued before it";
    s1 = c->stats();
    EXPECT_EQ(0u, s1.need_code_received);
    EXPECT_EQ(1u, peer_jit(1).compiles);
}

TEST_P(JitGated, FailedCompileEndsOnlyItsOpAndReleasesThoseBehind)
{
    warm_up();
    Result cold, behind, other;
    ucx_ifunc_h count_bc = reg_mem(bitcode_only(), "count");
    c->invoke_async(count_bc, 1, nullptr, 0, &cold);
    ASSERT_TRUE(helper_waits());
    c->invoke_async(reg_mem(native, "count"), 1, nullptr, 0, &behind);
    chase_via_2(&other);
    ASSERT_TRUE(c->progress_until([&] { return other.done; }));
    expect_chased(other);
    open_gate('c');  // the compiler crashes
    ASSERT_TRUE(c->progress_until([&] { return cold.done && behind.done; }));
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, cold.status) << cold.message;
    EXPECT_NE(std::string::npos, cold.message.find("signal 6")) << cold.message;
    EXPECT_NE(std::string::npos, cold.message.find("rank 1")) << cold.message;
    ASSERT_EQ(UCX_IFUNC_OK, behind.status) << behind.message;
    EXPECT_EQ(2u, as_u64(behind.reply)) << "the failed X-op changed nothing";
    // A new helper (gated again) compiles the same image for the next X-op.
    open_gate('g');
    Result again = c->invoke(count_bc, 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, again.status) << again.message;
    EXPECT_EQ(3u, as_u64(again.reply));
    EXPECT_TRUE(c->peer_alive(1));
}

// A compile fails while short invocations of its image wait behind it:
// the first of them is asked for again (its index names no code), and the
// X-ops behind it, of that image or another, wait for its resend (issue
// order, ucx_ifunc(3)), which brings the code and compiles anew.
TEST_P(JitGated, FailedCompileKeepsIssueOrderOfThoseBehind)
{
    ucx_ifunc_h count_bc = reg_mem(bitcode_only(), "count");
    Result cold, warm[2], full;
    c->invoke_async(count_bc, 1, nullptr, 0, &cold);
    ASSERT_TRUE(helper_waits());
    for (Result &r : warm) c->invoke_async(count_bc, 1, nullptr, 0, &r);  // short, behind it
    c->invoke_async(reg_mem(native, "count"), 1, nullptr, 0, &full);     // another image, after them
    open_gate('c');  // the compiler crashes
    ASSERT_TRUE(c->progress_until([&] { return cold.done; }));
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, cold.status) << cold.message;
    ASSERT_TRUE(helper_waits()) << "the resend of the first warm one did not compile";
    EXPECT_FALSE(full.done) << "an X-op ran before those issued ahead of it, which were asked for again";
    open_gate('g');
    ASSERT_TRUE(c->progress_until([&] { return warm[0].done && warm[1].done && full.done; }));
    for (uint64_t i = 0; i < 2; ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, warm[i].status) << warm[i].message;
        EXPECT_EQ(1 + i, as_u64(warm[i].reply)) << "in issue order";
    }
    ASSERT_EQ(UCX_IFUNC_OK, full.status) << full.message;
    EXPECT_EQ(3u, as_u64(full.reply)) << "after the warm ones issued before it";
    EXPECT_TRUE(c->peer_alive(1));
}

INSTANTIATE_TEST_SUITE_P(Transports, JitGated, ::testing::ValuesIn(transports()),
                         [](const auto &info) { return info.param; });

// In one process: threads that load the same image at once compile it once
// and share the code; the others wait for it instead of compiling.
TEST(JitInProcess, ConcurrentFirstLoadsCompileOnce)
{
    auto p = parts_of(read_image("basic"));
    const PartSpec *bc = find_part(p, PartKind::llvm_bitcode, xrdma::host_triple());
    ASSERT_NE(nullptr, bc);
    // A fresh image (its own hash) so no earlier test of this process has it.
    PartSpec extra{PartKind(99), "any", {1, 2, 3}};
    auto img = xrdma::image_build(p.entries, {*bc, extra});
    xrdma::ImageView v;
    std::string why;
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(img.data(), img.size(), &v, &why)) << why;
    const xrdma::JitCounters before = xrdma::jit_counters();
    const int n = 4;
    std::vector<std::unique_ptr<xrdma::LoadedCode>> code(n);
    std::vector<ucx_ifunc_status_t> st(n);
    std::vector<std::string> whys(n);
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i)
        ts.emplace_back([&, i] {
            ready++;
            while (ready < n) std::this_thread::yield();
            st[i] = xrdma::load_bitcode(v, v.parts[0], "concurrent", &code[i], &whys[i]);
        });
    for (auto &t : ts) t.join();
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, st[i]) << whys[i];
        EXPECT_NE(nullptr, code[i]->symbol("add_u64"));
        EXPECT_EQ(code[0]->symbol("add_u64"), code[i]->symbol("add_u64")) << "one copy of the code";
    }
    const xrdma::JitCounters after = xrdma::jit_counters();
    EXPECT_EQ(1u, after.compiles - before.compiles);
    EXPECT_EQ(uint64_t(n - 1), after.shared - before.shared);
}

}  // namespace
