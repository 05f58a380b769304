// Code moving between processors: this x86-64 process is the origin; its
// peers are whatever XRDMA_TEST_PEER starts (test_aarch64.sh: an aarch64
// build of the test peer under qemu-aarch64-static), connected over UCX TCP
// on loopback. The images were built here, on x86-64, by xrdma-cc; an
// aarch64 peer can run them only by JIT-compiling their aarch64 bitcode.
#include "chase.h"
#include "cluster.h"
#include "image/image.h"
#include "peer_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace xrdma_test;

namespace {

std::string image(const std::string &rel)
{
    return std::string(getenv("XRDMA_TEST_BUILDDIR")) + "/tests/" + rel + ".xfn";
}

struct Machine {
    std::string arch;
    uint64_t sum = 0;
};

Machine machine_of(const Result &r)
{
    Machine m;
    EXPECT_EQ(24u, r.reply.size()) << r.message;
    if (r.reply.size() == 24) {
        m.arch.assign(reinterpret_cast<const char *>(r.reply.data()), strnlen(reinterpret_cast<const char *>(r.reply.data()), 16));
        memcpy(&m.sum, r.reply.data() + 16, 8);
    }
    return m;
}

uint64_t jit_compiles(Cluster &c, int rank)
{
    auto ans = c.ctrl(rank, {'J'});
    return ans.size() >= 9 ? get_u64(&ans[1]) : ~0ull;
}

double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Hetero : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (!getenv("XRDMA_TEST_PEER")) GTEST_SKIP() << "XRDMA_TEST_PEER is not set (run tests/hetero/test_aarch64.sh)";
        use_transport("tcp");
    }
    void TearDown() override
    {
        for (auto f : fs) ucx_ifunc_deregister(f);
        fs.clear();
        c.reset();
    }
    ucx_ifunc_h reg(const std::string &path, const char *entry)
    {
        ucx_ifunc_h f = nullptr;
        EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, path.c_str(), entry, &f)) << path;
        fs.push_back(f);
        return f;
    }
    std::unique_ptr<Cluster> c;
    std::vector<ucx_ifunc_h> fs;
};

TEST_F(Hetero, X86ImageRunsAsCompiledAarch64Code)
{
    c = std::make_unique<Cluster>(1);
    ucx_ifunc_h f = reg(image("hetero/ifuncs/hetero"), "machine");
    uint64_t args[3] = {1, 2, 39};
    double t0 = now_us();
    Result cold = c->invoke(f, 1, args, sizeof(args));
    double t_cold = now_us() - t0;
    ASSERT_EQ(UCX_IFUNC_OK, cold.status) << cold.message;
    Machine m = machine_of(cold);
    EXPECT_EQ("aarch64", m.arch) << "the peer ran code compiled for aarch64";
    EXPECT_EQ(42u, m.sum);
    EXPECT_EQ(1u, jit_compiles(*c, 1)) << "the aarch64 bitcode was compiled at the peer";
    // Warm: the compiled code is cached at the peer, only the hash travels.
    const int n = 20;
    t0 = now_us();
    for (int i = 0; i < n; ++i) {
        Result r = c->invoke(f, 1, args, sizeof(args));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ("aarch64", machine_of(r).arch);
    }
    double t_warm = (now_us() - t0) / n;
    EXPECT_EQ(1u, jit_compiles(*c, 1));
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(1u, s.code_sends);
    // The same image runs natively here (the origin is x86-64).
    printf("[ timing ] aarch64 peer under qemu: cold (ship + JIT) %.0f us, warm %.0f us per invocation\n", t_cold,
           t_warm);
}

TEST_F(Hetero, ChaseAcrossX86AndAarch64)
{
    // Two aarch64 peers; the route also passes through the x86-64 origin,
    // which runs the native part of the same image.
    c = std::make_unique<Cluster>(2);
    ucx_ifunc_h chase = reg(image("plugin/ifuncs/basic"), "chase");
    chase_args a = chase_route({1, 2, 0, 1, 2});
    Result r = c->invoke(chase, 1, &a, sizeof(a));
    chase_args out;
    ASSERT_TRUE(chase_reply(r, &out));
    ASSERT_EQ(5, out.n);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(a.route[i], out.path[i]) << "hop " << i;
    EXPECT_EQ(0, out.origin);
    EXPECT_EQ(2, r.rank);
    EXPECT_EQ(1u, jit_compiles(*c, 1));
    EXPECT_EQ(1u, jit_compiles(*c, 2));
    // The runtime API binds in compiled code: count uses xrdma_user_ptr.
    ucx_ifunc_h count = reg(image("plugin/ifuncs/basic"), "count");
    for (uint64_t i = 1; i <= 3; ++i) {
        Result rc = c->invoke(count, 2, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, rc.status) << rc.message;
        ASSERT_EQ(8u, rc.reply.size());
        uint64_t v;
        memcpy(&v, rc.reply.data(), 8);
        EXPECT_EQ(i, v);
    }
}

TEST_F(Hetero, ImageWithoutAarch64PartIsRefused)
{
    c = std::make_unique<Cluster>(1);
    // Keep only the x86-64 parts of the image.
    std::ifstream in(image("hetero/ifuncs/hetero"), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    xrdma::ImageView v;
    std::string why;
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(bytes.data(), bytes.size(), &v, &why)) << why;
    std::vector<xrdma::PartSpec> parts;
    for (const auto &p : v.parts)
        if (p.triple == "x86_64-linux-gnu")
            parts.push_back({p.kind, std::string(p.triple), std::vector<uint8_t>(p.data, p.data + p.size)});
    auto img = xrdma::image_build({"machine"}, parts);
    ucx_ifunc_h f = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), "machine", 0, &f));
    fs.push_back(f);
    Result r = c->invoke(f, 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_NO_PART, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("aarch64-linux-gnu")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("bitcode x86_64-linux-gnu")) << r.message;
    EXPECT_TRUE(c->peer_alive(1));
}

}  // namespace
