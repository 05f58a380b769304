// The plugin between real processes, over shared memory and over TCP:
// invoke/reply, forwarding through a third process, code sent once per peer,
// need-code recovery, put-and-poll, the published-API compat layer, and bad
// input at the target (which must keep serving).
#include "cluster.h"
#include "run/context.h"
#include "image/image.h"
#include "chase.h"
#include "peer_state.h"
#include "ucx_ifunc/ucp_compat.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <signal.h>
#include <unistd.h>

using namespace xrdma_test;

namespace {

std::vector<uint8_t> read_image(const std::string &name)
{
    std::ifstream in(Cluster::image_path(name), std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint64_t as_u64(const std::vector<uint8_t> &v)
{
    uint64_t x = 0;
    EXPECT_EQ(v.size(), 8u);
    if (v.size() == 8) memcpy(&x, v.data(), 8);
    return x;
}

class Plugin : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { use_transport(GetParam()); }

    void start(int npeers) { c = std::make_unique<Cluster>(npeers); }
    // start() with @p knob set to @p value for the peers (only).
    void start_under(const char *knob, const char *value, int npeers)
    {
        setenv(knob, value, 1);
        start(npeers);
        unsetenv(knob);
    }

    ucx_ifunc_h reg(const std::string &image, const char *entry)
    {
        ucx_ifunc_h f = nullptr;
        EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, Cluster::image_path(image).c_str(), entry, &f));
        fs.push_back(f);
        return f;
    }
    ucx_ifunc_h reg_mem(const std::vector<uint8_t> &img, const char *entry, unsigned flags = 0)
    {
        ucx_ifunc_h f = nullptr;
        EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), entry, flags, &f));
        fs.push_back(f);
        return f;
    }
    // The target still runs valid code after whatever happened before.
    void expect_serving(int rank)
    {
        ucx_ifunc_h add = reg("basic", "add_u64");
        uint64_t a[2] = {40, 2};
        Result r = c->invoke(add, rank, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(42u, as_u64(r.reply));
        EXPECT_TRUE(c->peer_alive(rank));
    }
    // An invocation @p r the target stopped with @p status, its message
    // naming @p what; the target goes on serving.
    void expect_stopped(const Result &r, ucx_ifunc_status_t status, const char *what, int rank = 1)
    {
        EXPECT_EQ(status, r.status) << r.message;
        EXPECT_NE(std::string::npos, r.message.find(what)) << r.message;
        expect_serving(rank);
    }
    // Two faults in a row at rank 1, each contained: a SIGSEGV in the ifunc's
    // own code, then one from another image's entry @p libc_entry (of
    // libc_faults, handed an unmapped range), its message naming @p what.
    // Under a sanitizer only the first: its interceptors stand in for libc.
    void expect_faults_contained(const char *libc_entry, const char *what)
    {
        expect_stopped(c->invoke(reg("faults", "crash_segv"), 1, nullptr, 0), UCX_IFUNC_ERR_FAULT, "SIGSEGV");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
        uint64_t bad[2] = {0x1000, 64};
        expect_stopped(c->invoke(reg("libc_faults", libc_entry), 1, bad, sizeof(bad)), UCX_IFUNC_ERR_FAULT, what);
#else
        (void)libc_entry;
        (void)what;
#endif
    }
    // An allowlist file for XRDMA_SYMBOLS holding @p list; the caller unlinks it.
    std::string allowlist(const std::string &list)
    {
        char path[] = "/tmp/xrdma-allow-XXXXXX";
        int fd = mkstemp(path);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(ssize_t(list.size()), write(fd, list.data(), list.size()));
        close(fd);
        return path;
    }
    void TearDown() override
    {
        for (auto f : fs) ucx_ifunc_deregister(f);
        fs.clear();
        c.reset();
    }

    void expect_issue_order_across_resends(const char *x_first, const char *x_again);
    // A stream of invocations to rank 1 that mixes small (ring) and large
    // (active-message) arguments runs and answers in issue order.
    void expect_order_across_paths();
    // A chain of forwards through every rank of three, the origin and
    // forwards to self among them, answers from its last hop.
    void expect_long_chain();

    std::unique_ptr<Cluster> c;
    std::vector<ucx_ifunc_h> fs;
};

TEST_P(Plugin, InvokeReturnsReply)
{
    start(1);
    ucx_ifunc_h add = reg("basic", "add_u64");
    uint64_t a[3] = {1, 2, 3};
    Result r = c->invoke(add, 1, a, sizeof(a));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(6u, as_u64(r.reply));
    EXPECT_EQ(1, r.rank);
}

TEST_P(Plugin, IfuncChangesTargetState)
{
    start(1);
    ucx_ifunc_h count = reg("basic", "count");
    for (uint64_t i = 1; i <= 5; ++i) {
        Result r = c->invoke(count, 1, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(i, as_u64(r.reply));
    }
    EXPECT_EQ(5u, c->peer_counter(1));
}

TEST_P(Plugin, ManyInFlightCompleteInOrder)
{
    start(1);
    ucx_ifunc_h count = reg("basic", "count");
    std::vector<Result> rs(200);
    for (auto &r : rs) c->invoke_async(count, 1, nullptr, 0, &r);
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    for (size_t i = 0; i < rs.size(); ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, rs[i].status) << rs[i].message;
        EXPECT_EQ(i + 1, as_u64(rs[i].reply)) << "operations ran out of issue order";
    }
}

// A completion callback that calls ucx_ifunc_progress() and invokes again
// (whether its reply was handled inside UCX's progress or from the queue):
// no recursion into UCX, every chained invocation completes, in order.
namespace {
struct Chain {
    ucx_ifunc_context_h ctx;
    ucx_ifunc_h f;
    ucp_ep_h ep;
    int left;
    std::vector<uint64_t> seen;
    ucx_ifunc_status_t bad = UCX_IFUNC_OK;
};
void chain_cb(const ucx_ifunc_result_t *res, void *arg)
{
    auto *ch = static_cast<Chain *>(arg);
    uint64_t v = 0;
    if (res->status != UCX_IFUNC_OK || res->reply_size != sizeof(v)) {
        ch->bad = res->status == UCX_IFUNC_OK ? UCX_IFUNC_ERR_PROTOCOL : res->status;
        return;
    }
    memcpy(&v, res->reply, sizeof(v));
    ch->seen.push_back(v);
    ucx_ifunc_progress(ch->ctx);  // must not recurse into UCX
    if (--ch->left > 0) {
        ucx_ifunc_status_t st = ucx_ifunc_invoke_nb(ch->f, ch->ep, nullptr, 0, chain_cb, ch);
        if (st != UCX_IFUNC_INPROGRESS) ch->bad = st;
    }
}
}  // namespace

void Plugin::expect_order_across_paths()
{
    ucx_ifunc_h count = reg("basic", "count");
    const size_t sizes[] = {0, 8, 0, 600, 0, 0, 200000, 16, 0, 4000};
    std::vector<uint8_t> big(200000, 7);
    // A few one at a time first (the rings are asked for and offered
    // meanwhile), then all the rest in flight at once.
    for (uint64_t i = 1; i <= 10; ++i) {
        Result r = c->invoke(count, 1, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        ASSERT_EQ(i, as_u64(r.reply));
    }
    std::vector<Result> rs(400);
    unsigned pick = 12345;
    for (auto &r : rs) {
        pick = pick * 1103515245u + 12345u;
        const size_t n = sizes[(pick >> 16) % (sizeof(sizes) / sizeof(sizes[0]))];
        c->invoke_async(count, 1, n ? big.data() : nullptr, n, &r);
    }
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    for (size_t i = 0; i < rs.size(); ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, rs[i].status) << rs[i].message;
        ASSERT_EQ(i + 11, as_u64(rs[i].reply)) << "operation " << i << " ran out of issue order";
    }
    const ucx_ifunc_stats_t mine = c->stats();
    const uint64_t theirs = c->peer_stats(1).ring_frames;
    if (GetParam() == "shm") {
        EXPECT_GT(theirs, 32u) << "invocations did not use the peer's ring";
        EXPECT_GT(mine.ring_frames, 32u) << "replies did not use the origin's ring";
    } else {
        EXPECT_EQ(0u, theirs) << "a ring over " << GetParam();
        EXPECT_EQ(0u, mine.ring_frames);
    }
    expect_serving(1);
}

// Small messages go through a ring in the peer's memory where UCX maps it
// (shared memory), the rest as active messages: a stream that mixes both
// (small, eager and rendezvous-sized arguments, all in flight, starting
// before the ring exists) still runs and answers in issue order.
TEST_P(Plugin, RingsKeepOrderAcrossPaths)
{
    start(1);
    expect_order_across_paths();
}

// The same in a job that mixes peers_by_rank (the peers have it, this
// process not: ucx_ifunc(3) asks for all or none). The peer's answers come
// without UCX's reply endpoint, naming their sender in their header; the
// ones that travel as active messages must still count for the order of the
// ring frames the peer writes after them, or those frames wait for ever.
TEST_P(Plugin, MixedPeersByRankAnswersKeepRingOrder)
{
    start_under("XRDMA_TEST_PEERS_BY_RANK", "peers", 1);
    expect_order_across_paths();
}

// A warm invocation runs from its ring slot; the slot is the sender's again
// (its credit) only once the invocation has ended. Here each entry first
// progresses the worker (the peer's dispatch hook, as the MPI layer's
// streams do), so active messages arrive while a slot is held, and take the
// frames written before them (ring_before_am()): every invocation still sees
// its own arguments, runs once and answers, and the ring keeps turning (more
// frames through it than it has slots: the held slots' credit came back).
TEST_P(Plugin, EntryThatProgressesKeepsItsSlot)
{
    start(1);
    std::vector<uint8_t> passes{'D'};
    put_u64(passes, 3);
    c->ctrl(1, passes);
    ucx_ifunc_h add = reg("basic", "add_u64");
    // Small arguments (a ring frame) and, every fourth, large ones (an active
    // message: more than a slot), issued while the origin progresses.
    constexpr uint64_t kOps = 1200, kLarge = 4, kLargeWords = 256;
    std::vector<std::vector<uint64_t>> args(kOps);
    std::vector<Result> rs(kOps);
    for (uint64_t k = 0; k < kOps; ++k) {
        args[k].assign(k % kLarge == kLarge - 1 ? kLargeWords : 2, 0);
        args[k][0] = k;
        args[k][1] = 3 * k + 1;
        c->invoke_async(add, 1, args[k].data(), args[k].size() * sizeof(uint64_t), &rs[k]);
        ucx_ifunc_progress(c->ctx);
    }
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    for (uint64_t k = 0; k < kOps; ++k) {
        ASSERT_EQ(UCX_IFUNC_OK, rs[k].status) << rs[k].message;
        ASSERT_EQ(4 * k + 1, as_u64(rs[k].reply)) << "operation " << k;
    }
    const ucx_ifunc_stats_t theirs = c->peer_stats(1);
    EXPECT_EQ(kOps, theirs.executed);
    // Then one at a time: over shared memory each goes through the ring,
    // more of them than it has slots, so every held slot came back.
    constexpr uint64_t kAfter = 150;  // more than the ring's 128 slots
    for (uint64_t k = kOps; k < kOps + kAfter; ++k) {
        const uint64_t a[2] = {k, 3 * k + 1};
        Result r = c->invoke(add, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        ASSERT_EQ(4 * k + 1, as_u64(r.reply));
    }
    if (GetParam() == "shm") {
        EXPECT_EQ(theirs.ring_frames + kAfter, c->peer_stats(1).ring_frames) << "the ring stopped turning";
    }
    expect_serving(1);
}

// XRDMA_RING=off: active messages only, on any transport.
// ucx_ifunc_stays() reads the image's native part: an image with a function
// that forwards may forward (all of it: the image is one unit), one without
// stays; an image without a native part for this machine cannot tell, and
// none of its code is looked at. Decided once: the same answer again.
TEST_P(Plugin, StaysIsReadFromTheImage)
{
    start(1);
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_stays(nullptr));
    ucx_ifunc_h add = nullptr, where = nullptr, bc = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), "add_u64", &add));
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, Cluster::image_path("probe").c_str(), "where", &where));
    EXPECT_EQ(UCX_IFUNC_ERR_DENIED, ucx_ifunc_stays(add)) << "basic has a function that forwards";
    EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_stays(where)) << "probe never forwards";
    EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_stays(where));
    const std::vector<uint8_t> img =
        xrdma::image_build({"f"}, {{xrdma::PartKind::llvm_bitcode, xrdma::host_triple(), std::vector<uint8_t>(64, 0x5a)}});
    ASSERT_EQ(UCX_IFUNC_OK,
              ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), "f", UCX_IFUNC_REGISTER_NO_VERIFY, &bc));
    EXPECT_EQ(UCX_IFUNC_ERR_DENIED, ucx_ifunc_stays(bc)) << "no native part to tell";
    // The answer does not change what runs: both still do.
    uint64_t a[2] = {40, 2};
    Result r = c->invoke(add, 1, a, sizeof(a));
    EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    ucx_ifunc_deregister(add);
    ucx_ifunc_deregister(where);
    ucx_ifunc_deregister(bc);
}

TEST_P(Plugin, RingsOffByKnob)
{
    start_under("XRDMA_RING", "off", 1);
    ucx_ifunc_h count = reg("basic", "count");
    for (uint64_t i = 1; i <= 50; ++i) {
        Result r = c->invoke(count, 1, nullptr, 0);
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        ASSERT_EQ(i, as_u64(r.reply));
    }
    const ucx_ifunc_stats_t mine = c->stats();
    EXPECT_EQ(0u, mine.ring_frames);
    EXPECT_EQ(0u, c->peer_stats(1).ring_frames);
}

TEST_P(Plugin, CallbackMayProgressAndInvokeAgain)
{
    start(1);
    Chain ch{c->ctx, reg("basic", "count"), c->peer(1).ep, 50, {}, UCX_IFUNC_OK};
    ASSERT_EQ(UCX_IFUNC_INPROGRESS, ucx_ifunc_invoke_nb(ch.f, ch.ep, nullptr, 0, chain_cb, &ch));
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    EXPECT_EQ(UCX_IFUNC_OK, ch.bad) << ucx_ifunc_status_string(ch.bad);
    ASSERT_EQ(50u, ch.seen.size());
    for (size_t i = 0; i < ch.seen.size(); ++i) EXPECT_EQ(i + 1, ch.seen[i]);
}

// A forward leaves only once the ifunc that made it has ended well: one
// that forwards and then fails (a return value, a fault) answers the origin
// with its error, and the forward never runs. Over shared memory a warm
// forward is written straight into the next rank's ring while its ifunc
// still runs (ring.h: ring_stage), and is made visible only afterwards.
TEST_P(Plugin, AForwardGoesOnlyIfItsIfuncEndsWell)
{
    start(2);
    ucx_ifunc_h f = reg("basic", "forward_then");
    struct Args {
        int32_t to, then;
    };
    const Args go{2, 0};
    // Warm: rank 1 forwards to rank 2 in the short form, by now through its ring.
    for (uint64_t i = 1; i <= 20; ++i) {
        Result r = c->invoke(f, 1, &go, sizeof(go));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        ASSERT_EQ(i, as_u64(r.reply));
    }
    if (GetParam() == "shm") {
        EXPECT_GT(c->peer_stats(2).ring_frames, 0u) << "forwards did not use rank 2's ring";
    }
    const Args fail{2, 7};
    Result r = c->invoke(f, 1, &fail, sizeof(fail));
    EXPECT_EQ(UCX_IFUNC_ERR_RETURN, r.status) << r.message;
    r = c->invoke(f, 1, &go, sizeof(go));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(21u, as_u64(r.reply)) << "the forward of an ifunc that failed ran";
    const Args crash{2, -1};
    r = c->invoke(f, 1, &crash, sizeof(crash));
    EXPECT_EQ(UCX_IFUNC_ERR_FAULT, r.status) << r.message;
    // (The image is quarantined at rank 1 now: rank 2 is asked directly.)
    r = c->invoke(f, 2, &go, sizeof(go));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(22u, as_u64(r.reply)) << "the forward of an ifunc that faulted ran";
    expect_serving(2);
}

TEST_P(Plugin, CodeIsSentOncePerPeer)
{
    start(2);
    ucx_ifunc_h add = reg("basic", "add_u64");
    const size_t image_size = read_image("basic").size();
    uint64_t a[1] = {7};
    for (int i = 0; i < 10; ++i) ASSERT_EQ(UCX_IFUNC_OK, c->invoke(add, 1, a, sizeof(a)).status);
    ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(10u, s.invocations_sent);
    EXPECT_EQ(1u, s.code_sends);
    // One image plus ten small headers, nothing more.
    EXPECT_GE(s.bytes_sent, image_size);
    EXPECT_LT(s.bytes_sent, image_size + 10 * 128);
    // A second peer gets the code once too.
    ASSERT_EQ(UCX_IFUNC_OK, c->invoke(add, 2, a, sizeof(a)).status);
    s = c->stats();
    EXPECT_EQ(2u, s.code_sends);
    EXPECT_EQ(1u, c->peer_stats(1).images_loaded);
    EXPECT_EQ(10u, c->peer_stats(1).executed);
}

// After first contact an invocation names its image and entry by the index
// the target bound for this sender (wire.h, InvokeShortHdr): only that
// header and the args travel, and two entries of one image stay apart.
TEST_P(Plugin, WarmInvocationsAreShort)
{
    start(1);
    ucx_ifunc_h add = reg("basic", "add_u64");
    ucx_ifunc_h fail = reg("basic", "fail_with");
    uint64_t a[2] = {5, 6};
    ASSERT_EQ(UCX_IFUNC_OK, c->invoke(add, 1, a, sizeof(a)).status);
    const ucx_ifunc_stats_t s0 = c->stats();
    for (int i = 0; i < 3; ++i) {
        Result r = c->invoke(add, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(11u, as_u64(r.reply));
    }
    const ucx_ifunc_stats_t s1 = c->stats();
    EXPECT_EQ(3 * (24 + sizeof(a)), s1.bytes_sent - s0.bytes_sent) << "warm invocations carry a 24-byte header";
    const int32_t seven = 7;
    for (int i = 0; i < 2; ++i) {  // its first call binds the next index, the second uses it
        Result r = c->invoke(fail, 1, &seven, sizeof(seven));
        EXPECT_EQ(UCX_IFUNC_ERR_RETURN, r.status);
        EXPECT_NE(std::string::npos, r.message.find("'fail_with' returned 7")) << r.message;
        r = c->invoke(add, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(11u, as_u64(r.reply));
    }
    EXPECT_EQ(1u, c->peer_stats(1).images_loaded);
    EXPECT_EQ(8u, c->peer_stats(1).executed);
}

// A binding does not keep code the target's cache dropped: with room for
// one image there, two images taking turns are each asked for again (need
// bind, then need code) and keep giving the right answers.
TEST_P(Plugin, BindingsFollowTheCodeCache)
{
    start_under("XRDMA_CODE_CACHE_SIZE", "1", 1);
    ucx_ifunc_h add = reg("basic", "add_u64");
    ucx_ifunc_h echo = reg("unit_two", "echo");
    uint64_t a[2] = {5, 6};
    for (int i = 0; i < 3; ++i) {
        Result r = c->invoke(add, 1, a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(11u, as_u64(r.reply));
        const uint64_t v = 40 + uint64_t(i);
        r = c->invoke(echo, 1, &v, sizeof(v));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
        EXPECT_EQ(v, as_u64(r.reply));
    }
    EXPECT_EQ(1u, c->peer_stats(1).cache_entries);
    EXPECT_EQ(6u, c->peer_stats(1).images_loaded) << "each turn loads its image again";
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(4u, s.need_code_received);
}

TEST_P(Plugin, NeedCodeAfterTargetDropsCache)
{
    start(1);
    ucx_ifunc_h add = reg("basic", "add_u64");
    uint64_t a[2] = {5, 6};
    ASSERT_EQ(UCX_IFUNC_OK, c->invoke(add, 1, a, sizeof(a)).status);
    c->ctrl(1, {'F'});
    EXPECT_EQ(0u, c->peer_stats(1).cache_entries);
    Result r = c->invoke(add, 1, a, sizeof(a));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(11u, as_u64(r.reply));
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(1u, s.need_code_received);
    EXPECT_EQ(2u, s.code_sends);
    EXPECT_EQ(2u, c->peer_stats(1).images_loaded);
}

// Invocations from one origin to one target run in the order they were
// issued, also when the target asks for one again (ucx_ifunc(3)). With
// room for one image there, order.xfn and basic.xfn take turns; each round
// issues @p x (order.xfn, whose image the target dropped: asked for again)
// and right behind it "count" (basic.xfn), already on its way when the
// target asks for the first: it must wait for the first's resend. Each
// ifunc replies the number it took from the target's counter.
void Plugin::expect_issue_order_across_resends(const char *x_first, const char *x_again)
{
    start_under("XRDMA_CODE_CACHE_SIZE", "1", 1);
    ucx_ifunc_h first = reg("order", x_first);
    ucx_ifunc_h again = reg("order", x_again);
    ucx_ifunc_h count = reg("basic", "count");
    Result r = c->invoke(first, 1, nullptr, 0);  // order.xfn loaded and bound
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    ASSERT_EQ(1u, as_u64(r.reply));
    r = c->invoke(count, 1, nullptr, 0);  // basic.xfn loaded and bound, order.xfn dropped
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    ASSERT_EQ(2u, as_u64(r.reply));
    const ucx_ifunc_stats_t s0 = c->stats();
    for (uint64_t round = 0; round < 3; ++round) {
        Result a, b;
        c->invoke_async(again, 1, nullptr, 0, &a);
        c->invoke_async(count, 1, nullptr, 0, &b);
        ASSERT_TRUE(c->progress_until([&] { return a.done && b.done; })) << "round " << round;
        ASSERT_EQ(UCX_IFUNC_OK, a.status) << a.message;
        ASSERT_EQ(UCX_IFUNC_OK, b.status) << b.message;
        EXPECT_EQ(3 + 2 * round, as_u64(a.reply)) << "round " << round << ": '" << x_again
                                                  << "' was asked for again and overtaken by 'count' issued after it";
        EXPECT_EQ(4 + 2 * round, as_u64(b.reply)) << "round " << round;
    }
    const ucx_ifunc_stats_t s1 = c->stats();
    EXPECT_GE(s1.need_code_received - s0.need_code_received, 3u) << "the target never asked for the code again";
    EXPECT_EQ(0u, c->peer_stats(1).rejected);
}

// The first of the pair is short (its binding names the dropped image):
// need bind, then need code for its full resend.
TEST_P(Plugin, IssueOrderKeptAcrossNeedBind) { expect_issue_order_across_resends("tick", "tick"); }

// The first of the pair is the first call of another entry of the dropped
// image: sent in full without the code (this target had it), need code.
TEST_P(Plugin, IssueOrderKeptAcrossNeedCode) { expect_issue_order_across_resends("tick", "tock"); }

// The same for invocations a forwarder sends on (rank 2 forwards both to
// rank 1, which has room for one image): the need answers go to the
// forwarder, which resends, and rank 1 holds what the forwarder sent after
// the one it asked for again.
TEST_P(Plugin, IssueOrderKeptAcrossResendsOfForwards)
{
    start_under("XRDMA_TEST_CACHE_1_AT", "1", 2);  // (the forwarder keeps both images, to resend them)
    ucx_ifunc_h x = reg("order", "tick_at");
    ucx_ifunc_h y = reg("order_b", "tick_at");
    const int32_t at = 1;
    for (ucx_ifunc_h f : {x, y}) {  // each image to rank 1 once: y's drops x's there
        Result r = c->invoke(f, 2, &at, sizeof(at));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    }
    for (uint64_t round = 0; round < 3; ++round) {
        Result a, b;
        c->invoke_async(x, 2, &at, sizeof(at), &a);
        c->invoke_async(y, 2, &at, sizeof(at), &b);
        ASSERT_TRUE(c->progress_until([&] { return a.done && b.done; })) << "round " << round;
        ASSERT_EQ(UCX_IFUNC_OK, a.status) << a.message;
        ASSERT_EQ(UCX_IFUNC_OK, b.status) << b.message;
        EXPECT_EQ(1, a.rank);
        EXPECT_EQ(3 + 2 * round, as_u64(a.reply)) << "round " << round << ": overtaken by a later forward";
        EXPECT_EQ(4 + 2 * round, as_u64(b.reply)) << "round " << round;
    }
    EXPECT_EQ(8u, c->peer_counter(1));
    EXPECT_EQ(0u, c->peer_counter(2)) << "nothing ran at the forwarder";
}

// A target asks for an invocation that its origin can no longer resend
// (the image was deregistered meanwhile): the origin ends it with an error
// and withdraws it at the target (wire.h), whose later invocations from
// this origin, held behind it, then run.
TEST_P(Plugin, WithdrawnResendDoesNotStallLaterInvocations)
{
    start(1);
    ucx_ifunc_h gone = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK,
              ucx_ifunc_register_file(c->ctx, Cluster::image_path("order").c_str(), "tick", &gone));
    ucx_ifunc_h count = reg("basic", "count");
    Result r = c->invoke(gone, 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    r = c->invoke(count, 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    ASSERT_EQ(2u, as_u64(r.reply));
    c->ctrl(1, {'F'});  // the target forgets both images, and the bindings
    Result a, b;
    c->invoke_async(gone, 1, nullptr, 0, &a);
    c->invoke_async(count, 1, nullptr, 0, &b);
    ucx_ifunc_deregister(gone);  // its image goes with it: the need-code answer finds nothing to send
    ASSERT_TRUE(c->progress_until([&] { return a.done && b.done; }, 30))
        << "an invocation held behind a withdrawn one never ran";
    EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY, a.status) << a.message;
    EXPECT_NE(std::string::npos, a.message.find("no longer has")) << a.message;
    ASSERT_EQ(UCX_IFUNC_OK, b.status) << b.message;
    EXPECT_EQ(3u, as_u64(b.reply));
    expect_serving(1);
}

TEST_P(Plugin, ForwardToThirdProcessRepliesToOrigin)
{
    start(2);
    ucx_ifunc_h chase = reg("basic", "chase");
    chase_args a = chase_route({1, 2});
    Result r = c->invoke(chase, 1, &a, sizeof(a));
    chase_args out;
    ASSERT_TRUE(chase_reply(r, &out));
    EXPECT_EQ(2, r.rank) << "the last hop answers the origin itself";
    EXPECT_EQ(2, out.n);
    EXPECT_EQ(1, out.path[0]);
    EXPECT_EQ(2, out.path[1]);
    EXPECT_EQ(0, out.origin);
    EXPECT_EQ(1u, c->peer_stats(1).forwarded);
    // Rank 1 shipped the code on to rank 2; the origin sent it only to rank 1.
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(1u, s.code_sends);
    EXPECT_EQ(1u, c->peer_stats(1).code_sends);
}

TEST_P(Plugin, LongChainThroughAllRanksIncludingOriginAndSelf)
{
    start(2);
    expect_long_chain();
}

// XRDMA_RING_LINGER: a pass that ran invocations taken from rings looks at
// them again before it returns, until an answer comes or it has looked as
// often as the knob says without a frame. With the longest linger at every
// process: a stream that mixes both paths still runs and answers in issue
// order (frames the target takes while it lingers keep their place, and
// their acks go), and a chain through every rank, the origin among them,
// still answers (the origin serves hops between its waits; the answer ends
// its linger). Then with lingering off, the same.
TEST_P(Plugin, LingeringKeepsOrderAndAnswers)
{
    for (const char *linger : {"4096", "0"}) {
        SCOPED_TRACE(std::string("XRDMA_RING_LINGER=") + linger);
        start_under("XRDMA_RING_LINGER", linger, 2);
        expect_order_across_paths();
        expect_long_chain();
        expect_serving(2);
        TearDown();
    }
}

// ucx_ifunc_progress_wait(), the pass of a caller that waits for its
// answers, still progresses UCX (answers that travel as active messages:
// over TCP, larger ones, those before the rings exist) and between passes
// looks at the rings: every answer of a stream that mixes both paths comes,
// in issue order, and a chain through every rank answers, whether it looks
// at the rings the default 8 times, 4096 times, never, or 4096 times but
// with spinning turned off (ucx_ifunc_set_spin(), as an oversubscribed MPI
// rank does; a null context is ignored).
TEST_P(Plugin, ProgressWaitDeliversEveryAnswer)
{
    ucx_ifunc_set_spin(nullptr, 0);
    for (const char *looks : {"8", "4096", "0", "4096 without spin"}) {
        SCOPED_TRACE(std::string("XRDMA_RING_WAIT=") + looks);
        start_under("XRDMA_RING_WAIT", std::string(looks).substr(0, std::string(looks).find(' ')).c_str(), 2);
        if (strchr(looks, ' ')) ucx_ifunc_set_spin(c->ctx, 0);
        c->pass = ucx_ifunc_progress_wait;
        expect_order_across_paths();
        expect_long_chain();
        TearDown();
    }
}

void Plugin::expect_long_chain()
{
    ucx_ifunc_h chase = reg("basic", "chase");
    chase_args a = chase_route({1, 2, 2, 0, 1, 0, 0, 2, 1, 2});
    Result r = c->invoke(chase, 1, &a, sizeof(a));
    chase_args out;
    ASSERT_TRUE(chase_reply(r, &out));
    ASSERT_EQ(a.hops, out.n);
    for (int i = 0; i < a.hops; ++i) EXPECT_EQ(a.route[i], out.path[i]) << "hop " << i;
    EXPECT_EQ(2, r.rank);
}

// With peers_by_rank everywhere, warm invocations and forwards that travel
// as active messages name their sender by rank instead of carrying UCX's
// reply endpoint (over TCP, once a ring was refused; over shared memory
// those before the rings). The origin binds "bump" first, so its index for
// forward_then at ranks 1 and 2 differs from the one rank 1 and rank 2 bind
// for each other: a target that took one sender for another would run the
// wrong function or ask for a resend.
TEST_P(Plugin, WarmInvocationsNameTheirSenderByRank)
{
    start_under("XRDMA_TEST_PEERS_BY_RANK", "1", 2);
    ucx_ifunc_h bump = reg("basic", "bump");
    for (int rank : {1, 2}) ASSERT_EQ(UCX_IFUNC_OK, c->invoke(bump, rank, nullptr, 0).status);
    ucx_ifunc_h f = reg("basic", "forward_then");
    struct Args {
        int32_t to, then;
    };
    for (uint64_t round = 0; round < 40; ++round) {
        for (int via : {1, 2}) {
            const Args a{3 - via, 0};  // through one peer to the other, which counts and answers
            Result r = c->invoke(f, via, &a, sizeof(a));
            ASSERT_EQ(UCX_IFUNC_OK, r.status) << "round " << round << " via " << via << ": " << r.message;
            EXPECT_EQ(a.to, r.rank);
            ASSERT_EQ(2 + round, as_u64(r.reply)) << "round " << round << " via " << via;
        }
    }
    for (int rank : {1, 2}) EXPECT_EQ(0u, c->peer_stats(rank).rejected) << "rank " << rank;
    // No resend, as a sender a target did not recognise would have had to
    // make: the origin sent each invocation once, each peer forwarded 40.
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(2 + 2 * 40u, s.invocations_sent);
    for (int rank : {1, 2}) EXPECT_EQ(40u, c->peer_stats(rank).invocations_sent) << "rank " << rank;
}

// Peers on demand (ucx_ifunc_context_params_t.connect): the peers know each
// other's addresses but connect to a rank only when they first need it. A
// chain 0 -> 1 -> 2 answers the origin; rank 3, which nothing involves,
// connects to nobody, and rank 1 only to the ranks it talked to.
TEST_P(Plugin, PeersConnectOnDemand)
{
    setenv("XRDMA_TEST_PEERS_BY_RANK", "1", 1);
    start_under("XRDMA_TEST_ON_DEMAND", "1", 3);
    unsetenv("XRDMA_TEST_PEERS_BY_RANK");
    ucx_ifunc_h f = reg("basic", "forward_then");
    struct Args {
        int32_t to, then;
    };
    for (uint64_t round = 1; round <= 20; ++round) {
        const Args a{2, 0};
        Result r = c->invoke(f, 1, &a, sizeof(a));
        ASSERT_EQ(UCX_IFUNC_OK, r.status) << "round " << round << ": " << r.message;
        EXPECT_EQ(2, r.rank);
        ASSERT_EQ(round, as_u64(r.reply));
    }
    EXPECT_EQ(0u, c->peer_stats(3).peers) << "rank 3 connected to a rank it never talked to";
    EXPECT_LE(c->peer_stats(1).peers, 2u) << "rank 1 talked to ranks 0 and 2 only";
    EXPECT_GE(c->peer_stats(2).peers, 1u) << "rank 2 answered rank 0 without a peer";
    for (int rank : {1, 2, 3}) EXPECT_EQ(0u, c->peer_stats(rank).rejected) << "rank " << rank;
}

// A target's layer defers an invocation (ucx_ifunc_ctx_defer(): what it
// names is not there yet); the same sender's later ones wait behind it,
// and all run in issue order once the layer resumes them. "count" replies
// the target's counter after it incremented it: 1..5 in issue order.
TEST_P(Plugin, DeferredInvocationsRunInOrderAfterResume)
{
    start(1);
    ucx_ifunc_h count = reg("basic", "count");
    ASSERT_EQ(UCX_IFUNC_OK, c->invoke(reg("basic", "add_u64"), 1, nullptr, 0).status);  // (connected, bound)
    std::vector<uint8_t> defer_one{'Y'};
    put_u64(defer_one, 1);
    c->ctrl(1, defer_one);
    Result r[5];
    for (auto &x : r) c->invoke_async(count, 1, nullptr, 0, &x);
    ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).deferred == 1; })) << "the first was not deferred";
    EXPECT_FALSE(r[0].done) << "a deferred invocation was answered";
    std::vector<uint8_t> resume{'Y'};
    put_u64(resume, 0);
    c->ctrl(1, resume);
    ASSERT_TRUE(c->progress_until([&] {
        for (auto &x : r)
            if (!x.done) return false;
        return true;
    }));
    for (uint64_t i = 0; i < 5; ++i) {
        ASSERT_EQ(UCX_IFUNC_OK, r[i].status) << r[i].message;
        EXPECT_EQ(i + 1, as_u64(r[i].reply)) << "invocation " << i << " ran out of issue order";
    }
    EXPECT_EQ(1u, c->peer_stats(1).deferred);
    EXPECT_EQ(0u, c->peer_stats(1).rejected);
}

// A layer's view of ranks (ucx_ifunc_ctx_set_view()): at ranks 1 and 2 of
// three processes the view lists them in reverse, so the function at
// process 1 is rank 1 of 3, its origin (process 0) is rank 2, and a forward
// to its rank 0 goes to process 2, where it is rank 0.
TEST_P(Plugin, ViewsTranslateRanks)
{
    start(2);
    std::vector<uint8_t> reverse{'V'};
    put_u64(reverse, 1);
    for (int rank : {1, 2}) c->ctrl(rank, reverse);
    Result r = c->invoke(reg("basic", "ranks"), 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    ASSERT_EQ(12u, r.reply.size());
    int32_t got[3];
    memcpy(got, r.reply.data(), sizeof(got));
    EXPECT_EQ(1, got[0]) << "xrdma_rank";
    EXPECT_EQ(3, got[1]) << "xrdma_size";
    EXPECT_EQ(2, got[2]) << "xrdma_origin: process 0 is rank 2 in the reversed view";
    struct Args {
        int32_t to, then;
    };
    const Args a{0, 0};  // view rank 0: process 2 (counts there)
    r = c->invoke(reg("basic", "forward_then"), 1, &a, sizeof(a));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(2, r.rank) << "the forward to view rank 0 went to process 2";
    EXPECT_EQ(1u, c->peer_counter(2));
    EXPECT_EQ(0u, c->peer_counter(1));
}

// A forward that carried the code but was not sent does not count as code
// the next hop has: the next forward there carries it again, without a
// need-code round trip. The hop is rank 0, this process, where the test
// makes the send fail: the endpoint to rank 2 counts as failed for the
// first chase (send_invoke() refuses it), then works again.
TEST_P(Plugin, FailedForwardDoesNotCountAsCodeSent)
{
    start(2);
    ucx_ifunc_h chase = reg("basic", "chase");
    chase_args a = chase_route({1, 0, 2});
    ucp_ep_h to2 = c->peer(2).ep;
    c->ctx->failed_eps.insert(to2);
    Result r = c->invoke(chase, 1, &a, sizeof(a));
    c->ctx->failed_eps.erase(to2);
    EXPECT_EQ(UCX_IFUNC_ERR_PEER, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("forwarding to rank 2 failed")) << r.message;
    for (int i = 0; i < 2; ++i) {
        r = c->invoke(chase, 1, &a, sizeof(a));
        chase_args out;
        ASSERT_TRUE(chase_reply(r, &out));
        for (int h = 0; h < a.hops; ++h) EXPECT_EQ(a.route[h], out.path[h]) << "hop " << h;
    }
    const ucx_ifunc_stats_t s = c->stats();
    EXPECT_EQ(0u, s.need_code_received) << "the forward that went carried the code";
    EXPECT_EQ(2u, s.code_sends) << "once to rank 1, once on to rank 2";
    EXPECT_EQ(1u, c->peer_stats(2).images_loaded);
}

TEST_P(Plugin, ForwardToUnknownRankFails)
{
    start(1);
    ucx_ifunc_h chase = reg("basic", "chase");
    chase_args a = chase_route({1, 7});
    Result r = c->invoke(chase, 1, &a, sizeof(a));
    EXPECT_EQ(UCX_IFUNC_ERR_RETURN, r.status);
    EXPECT_NE(std::string::npos, r.message.find("returned -2")) << r.message;
    expect_serving(1);
}

TEST_P(Plugin, UnresolvedSymbolIsLinkError)
{
    start_under("XRDMA_SYMBOLS", "all", 1);  // allowed by policy, missing in the process
    ucx_ifunc_h bad = reg("unresolved", nullptr);
    Result r = c->invoke(bad, 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_LINK, r.status);
    EXPECT_NE(std::string::npos, r.message.find("xrdma_test_no_such_symbol")) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("rank 1")) << r.message;
    expect_serving(1);
}

// Under the default policy too: a symbol nothing defines is a link error,
// not a refusal (DENIED is for what exists but the policy forbids).
TEST_P(Plugin, UnresolvedSymbolIsLinkErrorUnderDefaultPolicy)
{
    start(1);  // default policy: runtime
    Result r = c->invoke(reg("unresolved", nullptr), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_LINK, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("'xrdma_test_no_such_symbol' is defined by no object"))
        << r.message;
    Result f = c->invoke(reg("forbidden", nullptr), 1, "true", 5);
    EXPECT_EQ(UCX_IFUNC_ERR_DENIED, f.status) << f.message;
    EXPECT_NE(std::string::npos, f.message.find("'system'")) << f.message;
    expect_serving(1);
}

// Invocations sent with UCX_IFUNC_INVOKE_LAZY_ACK that succeed without
// reply bytes are answered when the origin asks (ucx_ifunc_request_acks())
// or once 64 are held; a failure among them is answered at once, behind the
// answers held before it.
TEST_P(Plugin, LazyAcksComeWhenAskedOrWhenABatchFills)
{
    start(1);
    ucx_ifunc_h bump = reg("basic", "bump");
    ucx_ifunc_h fail = reg("basic", "fail_with");
    const auto done = [](const std::vector<Result> &rs) {
        size_t n = 0;
        for (const Result &r : rs) n += r.done;
        return n;
    };
    std::vector<Result> rs(5);
    for (Result &r : rs) c->invoke_async(bump, 1, nullptr, 0, &r, UCX_IFUNC_INVOKE_LAZY_ACK);
    // The target ran all five (its counter, read over the control socket)
    // and holds their answers: passes here bring none.
    ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == 5; }));
    for (int i = 0; i < 1000; ++i) ucx_ifunc_progress(c->ctx);
    EXPECT_EQ(0u, done(rs)) << "answers the origin did not ask for came";
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_request_acks(c->ctx, c->peer(1).ep));
    ASSERT_TRUE(c->progress_until([&] { return done(rs) == rs.size(); })) << "asked for, the answers never came";
    for (const Result &r : rs) EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;

    // 70 more, not asked for: the first 64 are answered unasked, 6 held.
    std::vector<Result> more(70);
    for (Result &r : more) c->invoke_async(bump, 1, nullptr, 0, &r, UCX_IFUNC_INVOKE_LAZY_ACK);
    ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == 75 && done(more) >= 64; }));
    for (int i = 0; i < 1000; ++i) ucx_ifunc_progress(c->ctx);
    EXPECT_EQ(64u, done(more));
    for (size_t i = 0; i < 64; ++i) EXPECT_TRUE(more[i].done) << "answered out of order at " << i;
    // A failure is answered at once, and the six held before it first.
    Result bad;
    int32_t rc = 3;
    c->invoke_async(fail, 1, &rc, sizeof(rc), &bad, UCX_IFUNC_INVOKE_LAZY_ACK);
    ASSERT_TRUE(c->progress_until([&] { return bad.done; }));
    EXPECT_EQ(UCX_IFUNC_ERR_RETURN, bad.status) << bad.message;
    EXPECT_EQ(more.size(), done(more)) << "a failure overtook the answers held before it";
    for (const Result &r : more) EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;

    // Asking when nothing is held changes nothing; bad arguments are refused.
    EXPECT_EQ(UCX_IFUNC_OK, ucx_ifunc_request_acks(c->ctx, c->peer(1).ep));
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_request_acks(nullptr, c->peer(1).ep));
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_request_acks(c->ctx, nullptr));
    expect_serving(1);
}

// Successes without reply bytes are answered as acks; where the origin has
// a ring (shared memory) they come back through it as compact frames
// (kRingAcks, one per target pass: a few invocations each), in issue order
// with a failure answered behind them, and not one is lost.
TEST_P(Plugin, AcksComeBackThroughTheRing)
{
    start(1);
    ucx_ifunc_h bump = reg("basic", "bump");
    ucx_ifunc_h fail = reg("basic", "fail_with");
    for (int i = 0; i < 8; ++i) ASSERT_EQ(UCX_IFUNC_OK, c->invoke(bump, 1, nullptr, 0).status);  // (rings set up)
    const ucx_ifunc_stats_t before = c->stats();
    std::vector<Result> rs(300);
    Result bad;
    const int32_t rc = 4;
    for (size_t i = 0; i < rs.size(); ++i) {
        c->invoke_async(bump, 1, nullptr, 0, &rs[i]);
        if (i == 200) c->invoke_async(fail, 1, &rc, sizeof(rc), &bad);
        if (i % 3 == 0) ucx_ifunc_progress(c->ctx);
    }
    ASSERT_TRUE(c->progress_until([&] { return ucx_ifunc_pending(c->ctx) == 0; }));
    for (size_t i = 0; i < rs.size(); ++i) {
        ASSERT_TRUE(rs[i].done) << "operation " << i;
        EXPECT_EQ(UCX_IFUNC_OK, rs[i].status) << "operation " << i << ": " << rs[i].message;
    }
    EXPECT_EQ(UCX_IFUNC_ERR_RETURN, bad.status) << bad.message;
    EXPECT_EQ(8u + rs.size(), c->peer_counter(1));
    const ucx_ifunc_stats_t after = c->stats();
    const uint64_t frames = after.ring_frames - before.ring_frames;
    if (GetParam() == "shm") {
        EXPECT_GT(frames, 0u) << "no answer came back through the origin's ring";
        EXPECT_LE(frames, rs.size() + 1) << "more ring frames than answers";
    } else {
        EXPECT_EQ(0u, frames) << "a ring over " << GetParam();
    }
    expect_serving(1);
}

TEST_P(Plugin, IfuncErrorReturnReachesOrigin)
{
    start(1);
    ucx_ifunc_h fail = reg("basic", "fail_with");
    int32_t rc = 7;
    Result r = c->invoke(fail, 1, &rc, sizeof(rc));
    EXPECT_EQ(UCX_IFUNC_ERR_RETURN, r.status);
    EXPECT_NE(std::string::npos, r.message.find("'fail_with' returned 7")) << r.message;
    expect_serving(1);
}

TEST_P(Plugin, CorruptCodeIsRejectedAtTarget)
{
    start(1);
    std::vector<uint8_t> garbage(4096, 0x5a);
    memcpy(garbage.data(), "\x7f" "ELF", 4);
    auto img = xrdma::image_build({"add_u64"}, {{xrdma::PartKind::native_elf, xrdma::host_triple(), garbage}});
    Result r = c->invoke(reg_mem(img, "add_u64"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    expect_serving(1);
}

TEST_P(Plugin, TamperedImageIsRejectedAtTarget)
{
    start(1);
    std::vector<uint8_t> img = read_image("basic");
    img[img.size() - 100] ^= 0xff;  // inside the code; the stored hash no longer matches
    Result r = c->invoke(reg_mem(img, "add_u64", UCX_IFUNC_REGISTER_NO_VERIFY), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_HASH_MISMATCH, r.status) << r.message;
    std::vector<uint8_t> junk(300, 0x11);
    r = c->invoke(reg_mem(junk, "add_u64", UCX_IFUNC_REGISTER_NO_VERIFY), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_MAGIC, r.status) << r.message;
    expect_serving(1);
}

TEST_P(Plugin, MissingEntryIsReported)
{
    start(1);
    // An image whose table lists "ghost", but whose code does not define it.
    xrdma::ImageView v;
    std::string why;
    std::vector<uint8_t> basic = read_image("basic");
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::image_parse(basic.data(), basic.size(), &v, &why)) << why;
    std::vector<uint8_t> so(v.parts[0].data, v.parts[0].data + v.parts[0].size);
    auto img = xrdma::image_build({"ghost"}, {{xrdma::PartKind::native_elf, xrdma::host_triple(), so}});
    Result r = c->invoke(reg_mem(img, "ghost"), 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY, r.status);
    EXPECT_NE(std::string::npos, r.message.find("ghost")) << r.message;
    // And the origin refuses an entry the image does not list at all.
    ucx_ifunc_h f = nullptr;
    EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY,
              ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), "nope", &f));
    expect_serving(1);
}

TEST_P(Plugin, TargetNeverHadTheCode)
{
    start_under("XRDMA_SYMBOLS", "all", 1);  // the probe reads /proc and lists the cwd
    // The image exists only in the origin's memory by the time it runs.
    char dir[] = "/tmp/xrdma-origin-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string copy = std::string(dir) + "/where.xfn";
    {
        std::vector<uint8_t> img = read_image("probe");
        std::ofstream(copy, std::ios::binary).write(reinterpret_cast<char *>(img.data()), long(img.size()));
    }
    ucx_ifunc_h f = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_file(c->ctx, copy.c_str(), "where", &f));
    fs.push_back(f);
    ASSERT_EQ(0, unlink(copy.c_str()));
    ASSERT_EQ(0, rmdir(dir));
    Result r = c->invoke(f, 1, nullptr, 0);
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    std::string out(r.reply.begin(), r.reply.end());
    EXPECT_EQ(0, out.rfind("0\n", 0)) << "target cwd is not empty: " << out;
    EXPECT_NE(std::string::npos, out.find("/memfd:xrdma:")) << "code not loaded from memory: " << out;
}

// A fault in injected code fails that invocation, quarantines the image, and
// the target keeps serving.
TEST_P(Plugin, FaultsInInjectedCodeAreContained)
{
    struct Case {
        const char *entry, *signal;
    } cases[] = {{"crash_segv", "SIGSEGV"}, {"crash_fpe", "SIGFPE"}, {"crash_ill", "SIGILL"}};
    for (const Case &k : cases) {
        start(1);
        ucx_ifunc_h f = reg("faults", k.entry);
        Result r = c->invoke(f, 1, nullptr, 0);
        EXPECT_EQ(UCX_IFUNC_ERR_FAULT, r.status) << k.entry << ": " << r.message;
        EXPECT_NE(std::string::npos, r.message.find(k.signal)) << r.message;
        EXPECT_NE(std::string::npos, r.message.find(k.entry)) << r.message;
        EXPECT_NE(std::string::npos, r.message.find("rank 1")) << r.message;
        // Quarantined: refused without running again, whatever the entry.
        r = c->invoke(reg("faults", "crash_segv"), 1, nullptr, 0);
        EXPECT_EQ(UCX_IFUNC_ERR_FAULT, r.status);
        EXPECT_NE(std::string::npos, r.message.find("quarantined")) << r.message;
        EXPECT_EQ(1u, c->peer_stats(1).executed) << "the quarantined image ran again";
        expect_serving(1);
        TearDown();
    }
}

// A fault inside a libc function the ifunc called (default policy: only
// lock-free ones) ends that invocation like one in its own code, naming the
// function and the address; the target keeps serving.
// Under a sanitizer, libc's memcpy/strlen are the sanitizer's interceptors,
// which check a pointer first and report a bad one (ending the process).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_SANITIZER() GTEST_SKIP() << "sanitizer interceptors stand in for libc here"
#else
#define SKIP_UNDER_SANITIZER() (void)0
#endif

TEST_P(Plugin, FaultsInLibcCalledByInjectedCodeAreContained)
{
    SKIP_UNDER_SANITIZER();
    // qsort with a bad base faults in the ifunc's comparator, which reads
    // the elements first: contained as ever, after unwinding qsort.
    struct Case {
        const char *entry, *function;
    } cases[] = {{"copy_from", "memcpy"}, {"length_of", "strlen"}, {"sort_at", nullptr}};
    for (const Case &k : cases) {
        start(1);
        uint64_t bad[2] = {0x1000, 64};
        Result r = c->invoke(reg("libc_faults", k.entry), 1, bad, sizeof(bad));
        EXPECT_EQ(UCX_IFUNC_ERR_FAULT, r.status) << k.entry << ": " << r.message;
        EXPECT_NE(std::string::npos, r.message.find("SIGSEGV at address 0x10")) << r.message;
        if (k.function) {
            EXPECT_NE(std::string::npos, r.message.find(std::string("in ") + k.function)) << r.message;
            EXPECT_NE(std::string::npos, r.message.find("libc.so")) << r.message;
            EXPECT_NE(std::string::npos, r.message.find("called by the ifunc")) << r.message;
        }
        EXPECT_NE(std::string::npos, r.message.find(k.entry)) << r.message;
        EXPECT_NE(std::string::npos, r.message.find("rank 1")) << r.message;
        expect_serving(1);
        TearDown();
    }
}

// The runtime API checks the memory it is handed instead of faulting: a
// reply from an unreadable buffer is an error return, the ifunc goes on.
TEST_P(Plugin, RuntimeCallsRefuseUnreadableBuffers)
{
    start(1);
    uint64_t bad[2] = {0x1000, 64};
    Result r = c->invoke(reg("libc_faults", "reply_from"), 1, bad, sizeof(bad));
    ASSERT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    EXPECT_EQ(uint64_t(-1), as_u64(r.reply));
    r = c->invoke(reg("libc_faults", "reply_from"), 1, bad, sizeof(bad));
    EXPECT_EQ(UCX_IFUNC_OK, r.status) << "not quarantined: " << r.message;
    expect_serving(1);
}

// Under a policy that lets injected code call functions which take locks
// (XRDMA_SYMBOLS=all), a fault inside libc is not contained; an allowlist
// within the runtime set keeps containment.
TEST_P(Plugin, LibcFaultContainmentFollowsThePolicy)
{
    SKIP_UNDER_SANITIZER();
    std::string path = allowlist("memcpy\nstrlen\nqsort\nxrdma_reply\n__cxa_finalize\n__gmon_start__\n"
                                 "_ITM_registerTMCloneTable\n_ITM_deregisterTMCloneTable\n__stack_chk_fail\n");
    start_under("XRDMA_SYMBOLS", path.c_str(), 1);
    uint64_t bad[2] = {0x1000, 64};
    Result r = c->invoke(reg("libc_faults", "copy_from"), 1, bad, sizeof(bad));
    EXPECT_EQ(UCX_IFUNC_ERR_FAULT, r.status) << r.message;
    EXPECT_TRUE(c->peer_alive(1));
    TearDown();
    unlink(path.c_str());

    start_under("XRDMA_SYMBOLS", "all", 1);
    Result dead;
    c->invoke_async(reg("libc_faults", "copy_from"), 1, bad, sizeof(bad), &dead);
    EXPECT_TRUE(c->progress_until([&] { return !c->peer_alive(1); }, 30)) << "the target survived";
    TearDown();  // while `dead` still exists: the context completes it
}

TEST_P(Plugin, RunawayIfuncIsStoppedAfterTimeout)
{
    start_under("XRDMA_IFUNC_TIMEOUT", "0.2", 1);
    expect_stopped(c->invoke(reg("runaway", "spin_forever"), 1, nullptr, 0), UCX_IFUNC_ERR_TIMEOUT,
                   "XRDMA_IFUNC_TIMEOUT");
}

// One target process contains fault after fault and a timeout after them:
// each contained call leaves its guard ready for the next (the handler's
// signal unblocked, the jump target set anew, no call marked as running).
TEST_P(Plugin, ContainmentHoldsForEveryFaultOfAProcess)
{
    start_under("XRDMA_IFUNC_TIMEOUT", "0.2", 1);
    // The second SIGSEGV in the ifunc's comparator, called by qsort.
    expect_faults_contained("sort_at", "SIGSEGV at address 0x10");
    expect_stopped(c->invoke(reg("runaway", "spin_forever"), 1, nullptr, 0), UCX_IFUNC_ERR_TIMEOUT,
                   "XRDMA_IFUNC_TIMEOUT");
}

// The same without XRDMA_IFUNC_TIMEOUT, where a call after the first takes
// the guard's fast path (run_guarded(), fault.cc): a fault after calls that
// ended well is contained, and so is the next one.
TEST_P(Plugin, ContainmentHoldsForEveryFaultOfAnUntimedProcess)
{
    start(1);
    expect_serving(1);
    expect_serving(1);
    // The second SIGSEGV in memcpy, called by the ifunc.
    expect_faults_contained("copy_from", "in memcpy");
}

// XRDMA_CONTAIN_FAULTS=0: a fault in injected code is the process's, as in
// any program (the guard is off, not only its report).
TEST_P(Plugin, FaultsAreNotContainedWhenContainmentIsOff)
{
    start_under("XRDMA_CONTAIN_FAULTS", "0", 1);
    expect_serving(1);
    Result dead;
    c->invoke_async(reg("faults", "crash_segv"), 1, nullptr, 0, &dead);
    EXPECT_TRUE(c->progress_until([&] { return !c->peer_alive(1); }, 30)) << "the target survived";
    TearDown();  // while `dead` still exists: the context completes it
}

// A target that dies while running an invocation: the origin's completion
// reports the peer (UCX peer failure detection; TCP only in UCX 1.13).
TEST_P(Plugin, DeadPeerFailsPendingInvocations)
{
    if (GetParam() != "tcp") GTEST_SKIP() << "UCX 1.13 shared memory has no peer failure detection";
    start(2);
    Result slow, other;
    c->invoke_async(reg("runaway", "spin_forever"), 1, nullptr, 0, &slow);
    ASSERT_FALSE(slow.done);
    kill(c->peer(1).pid, SIGKILL);  // whether or not it got to run it
    ASSERT_TRUE(c->progress_until([&] { return slow.done; }, 60)) << "no completion after the peer died";
    EXPECT_EQ(UCX_IFUNC_ERR_PEER, slow.status) << slow.message;
    // A later invocation on the failed endpoint ends at once, not never.
    Result later;
    c->invoke_async(reg("basic", "add_u64"), 1, nullptr, 0, &later);
    EXPECT_TRUE(later.done);
    EXPECT_EQ(UCX_IFUNC_ERR_PEER, later.status) << later.message;
    // The other peer is unaffected.
    uint64_t a[2] = {2, 3};
    other = c->invoke(reg("basic", "add_u64"), 2, a, sizeof(a));
    EXPECT_EQ(UCX_IFUNC_OK, other.status) << other.message;
}

TEST_P(Plugin, SymbolPolicyRefusesImportsBeforeRunning)
{
    start(1);  // default policy: runtime
    ucx_ifunc_h f = reg("forbidden", nullptr);
    const char cmd[] = "true";
    Result r = c->invoke(f, 1, cmd, sizeof(cmd));
    EXPECT_EQ(UCX_IFUNC_ERR_DENIED, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("'system'")) << r.message;
    EXPECT_EQ(0u, c->peer_stats(1).executed);
    EXPECT_EQ(0u, c->peer_stats(1).images_loaded);
    expect_serving(1);
    TearDown();

    // An allowlist file that names it lets it through.
    std::string path = allowlist("# test allowlist\nsystem\n__cxa_finalize\n__gmon_start__\n"
                                 "_ITM_registerTMCloneTable\n_ITM_deregisterTMCloneTable\n");
    start_under("XRDMA_SYMBOLS", path.c_str(), 1);
    r = c->invoke(reg("forbidden", nullptr), 1, cmd, sizeof(cmd));
    EXPECT_EQ(UCX_IFUNC_OK, r.status) << r.message;
    unlink(path.c_str());
}

TEST_P(Plugin, PutAndPollRunsFramesFromTargetMemory)
{
    start(1);
    ucx_ifunc_h f = reg("basic", "poll_add");
    c->ctrl(1, {'P', 1});
    uint64_t total = 0;
    for (int i = 0; i < 5; ++i) {
        uint64_t v = 10 + uint64_t(i);
        ucx_ifunc_frame_t fr;
        ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_frame_create(f, &v, sizeof(v), i == 0, &fr));
        ucx_ifunc_status_t st = ucx_ifunc_frame_put(c->peer(1).ep, &fr, c->peer(1).buffer, c->peer(1).rkey);
        ASSERT_TRUE(st == UCX_IFUNC_OK || st == UCX_IFUNC_INPROGRESS);
        c->env.flush(c->peer(1).ep);
        ucx_ifunc_frame_free(&fr);
        total += v;
        // The next frame goes into the same buffer: wait until this one ran.
        ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == total; }, 30))
            << "frame " << i << " did not run";
    }
    auto s = c->peer_stats(1);
    EXPECT_EQ(5u, s.executed);
    EXPECT_EQ(1u, s.images_loaded) << "later frames carried only the hash";
}

// The target runs a frame laid out and named like the one it ran last
// without a lookup, but not one that names another entry of the same length
// or an image it has no code for: the same frame with its entry name or its
// image hash changed in one bit is refused (and leaves the counter alone),
// and the next good frame runs.
TEST_P(Plugin, PutAndPollFramesLikeTheLastAreChecked)
{
    start(1);
    ucx_ifunc_h f = reg("basic", "poll_add");
    c->ctrl(1, {'P', 1});
    uint64_t total = 0;
    // Put a frame of v for poll_add (changed by @p edit first), and wait until
    // it ran (or was refused).
    auto put = [&](uint64_t v, bool with_code, const std::function<void(uint8_t *)> &edit) {
        ucx_ifunc_frame_t fr;
        ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_frame_create(f, &v, sizeof(v), with_code, &fr));
        if (edit) edit(static_cast<uint8_t *>(fr.frame));
        const ucx_ifunc_stats_t before = c->peer_stats(1);
        ucx_ifunc_status_t st = ucx_ifunc_frame_put(c->peer(1).ep, &fr, c->peer(1).buffer, c->peer(1).rkey);
        ASSERT_TRUE(st == UCX_IFUNC_OK || st == UCX_IFUNC_INPROGRESS);
        c->env.flush(c->peer(1).ep);
        ucx_ifunc_frame_free(&fr);
        if (edit) {
            ASSERT_TRUE(c->progress_until([&] { return c->peer_stats(1).rejected > before.rejected; }, 30))
                << "the changed frame was not refused";
            EXPECT_EQ(before.executed, c->peer_stats(1).executed) << "the changed frame ran";
        } else {
            total += v;
            ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == total; }, 30)) << "frame of " << v;
        }
    };
    for (uint64_t v = 1; v <= 4; ++v) put(v, v == 1, nullptr);
    put(100, false, [](uint8_t *fr) { fr[sizeof(xrdma::FrameHdr)] ^= 1; });  // "qoll_add"
    put(200, false, [](uint8_t *fr) { fr[offsetof(xrdma::FrameHdr, hash)] ^= 1; });
    put(5, false, nullptr);
    EXPECT_EQ(total, c->peer_counter(1));
    EXPECT_EQ(1u, c->peer_stats(1).images_loaded);
}

TEST_P(Plugin, PublishedApiCompat)
{
    start(1);
    std::string libdir = Cluster::image_path("x");
    libdir = libdir.substr(0, libdir.rfind("/ifuncs/")) + "/compat";
    setenv("UCX_IFUNC_LIB_DIR", libdir.c_str(), 1);
    ucp_ifunc_reg_param_t p{};
    p.name = const_cast<char *>("counter");
    ucp_ifunc_h ih;
    ASSERT_EQ(UCS_OK, ucp_register_ifunc(c->env.context, p, &ih));
    uint64_t five = 5;
    ucp_ifunc_msg_t msg;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_create(ih, &five, sizeof(five), &msg));
    c->ctrl(1, {'P', 2});
    ucs_status_t st = ucp_ifunc_send_nbix(c->peer(1).ep, msg, c->peer(1).buffer, c->peer(1).rkey);
    ASSERT_TRUE(st == UCS_OK || st == UCS_INPROGRESS);
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == 5; }, 30));
    // Change the payload in place and send the same message again.
    void *payload;
    size_t size;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_get_payload_ptr(&msg, &payload, &size));
    ASSERT_EQ(8u, size);
    uint64_t seven = 7;
    memcpy(payload, &seven, 8);
    st = ucp_ifunc_send_nbix(c->peer(1).ep, msg, c->peer(1).buffer, c->peer(1).rkey);
    ASSERT_TRUE(st == UCS_OK || st == UCS_INPROGRESS);
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(c->progress_until([&] { return c->peer_counter(1) == 12; }, 30));
    ucp_ifunc_msg_free(msg);
    ucp_deregister_ifunc(c->env.context, ih);
    unsetenv("UCX_IFUNC_LIB_DIR");
}

TEST_P(Plugin, BadArgumentsAreRefused)
{
    start(1);
    ucx_ifunc_h add = reg("basic", "add_u64");
    ucx_ifunc_h f = nullptr;
    EXPECT_EQ(UCX_IFUNC_ERR_IO, ucx_ifunc_register_file(c->ctx, "/nonexistent/x.xfn", nullptr, &f));
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_register_file(nullptr, "x", nullptr, &f));
    uint8_t junk[4] = {0};
    EXPECT_EQ(UCX_IFUNC_ERR_TRUNCATED, ucx_ifunc_register_mem(c->ctx, junk, sizeof(junk), nullptr, 0, &f));
    EXPECT_EQ(UCX_IFUNC_ERR_NO_ENTRY,
              ucx_ifunc_register_file(c->ctx, Cluster::image_path("basic").c_str(), nullptr, &f))
        << "an image with several entries needs a name";
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_invoke_nb(add, nullptr, nullptr, 0, nullptr, nullptr));
    EXPECT_EQ(UCX_IFUNC_ERR_INVALID_PARAM, ucx_ifunc_invoke_nb(add, c->peer(1).ep, nullptr, 4,
                                                               [](const ucx_ifunc_result_t *, void *) {}, nullptr));
}

INSTANTIATE_TEST_SUITE_P(Transports, Plugin, ::testing::ValuesIn(transports()),
                         [](const auto &info) { return info.param; });

}  // namespace
