// The published ifunc API (ucx_ifunc/ucp_compat.h) as its users build and
// run it, over shared memory and TCP, the target in an empty
// directory: libraries built with plain gcc or clang (start files, a search
// path), a constructor of the author's own, replies from inside main, the
// same message resent without flushes into a ring, shrunk and large
// payloads, frames larger than the slot, bitcode with -unknown- triples and
// a .deps list, refusals and faults reported, and no UCX warning about
// UCX_IFUNC_LIB_DIR.
#include "cluster.h"
#include "image/image.h"
#include "ucx_ifunc/ucp_compat.h"  // before peer_state.h: struct compat_reply
#include "peer_state.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <tuple>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace xrdma_test;

namespace {

std::string compat_dir(const std::string &sub)
{
    std::string d = Cluster::image_path("x");
    return d.substr(0, d.rfind("/ifuncs/")) + "/compat/" + sub;
}

class Compat : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override
    {
        use_transport(GetParam());
        c = std::make_unique<Cluster>(1);
    }
    void TearDown() override
    {
        release();
        c.reset();
    }
    // Free the test's messages and ifuncs (before their cluster goes).
    void release()
    {
        for (auto &m : msgs) ucp_ifunc_msg_free(m);
        for (auto f : ifuncs) ucp_deregister_ifunc(c->env.context, f);
        msgs.clear();
        ifuncs.clear();
    }

    // ucp_register_ifunc with UCX_IFUNC_LIB_DIR set to @p sub of the
    // libraries' build directory (only the origin sees it).
    ucp_ifunc_h reg(const std::string &sub, const char *name, int llvm_bc = 0)
    {
        setenv("UCX_IFUNC_LIB_DIR", compat_dir(sub).c_str(), 1);
        ucp_ifunc_reg_param_t p{};
        p.name = const_cast<char *>(name);
        p.llvm_bc = llvm_bc;
        ucp_ifunc_h f = nullptr;
        EXPECT_EQ(UCS_OK, ucp_register_ifunc(c->env.context, p, &f)) << sub << "/" << name;
        unsetenv("UCX_IFUNC_LIB_DIR");
        if (f) ifuncs.push_back(f);
        return f;
    }
    ucp_ifunc_msg_t msg(ucp_ifunc_h f, const void *args, size_t size)
    {
        ucp_ifunc_msg_t m{};
        EXPECT_EQ(UCS_OK, ucp_ifunc_msg_create(f, const_cast<void *>(args), size, &m));
        msgs.push_back(m);
        return m;
    }
    void send(const ucp_ifunc_msg_t &m, size_t offset = 0)
    {
        ucs_status_t st = ucp_ifunc_send_nbix(c->peer(1).ep, m, c->peer(1).buffer + offset, c->peer(1).rkey);
        ASSERT_TRUE(st == UCS_OK || st == UCS_INPROGRESS) << ucs_status_string(st);
    }
    // send() and a flush: the message is in the peer's memory.
    void deliver(const ucp_ifunc_msg_t &m)
    {
        send(m);
        c->env.flush(c->peer(1).ep);
    }
    // deliver() @p m, a message that adds 1, @p n times, each once the one
    // before it ran.
    void deliver_ones(const ucp_ifunc_msg_t &m, uint64_t n)
    {
        const uint64_t base = c->peer_counter(1);
        for (uint64_t i = 1; i <= n; ++i) {
            deliver(m);
            ASSERT_TRUE(counter_reaches(base + i));
        }
    }
    void set_payload(ucp_ifunc_msg_t *m, uint64_t v)
    {
        void *p;
        size_t n;
        ASSERT_EQ(UCS_OK, ucp_ifunc_msg_get_payload_ptr(m, &p, &n));
        ASSERT_EQ(8u, n);
        memcpy(p, &v, 8);
    }
    // The peer polls with ucp_poll_ifunc: one slot (mode 2), or a ring of
    // @p slot-byte slots (mode 3).
    void poll_mode(uint8_t mode, uint64_t slot = 0)
    {
        std::vector<uint8_t> cmd{'P', mode};
        if (slot) put_u64(cmd, slot);
        c->ctrl(1, cmd);
    }
    bool counter_reaches(uint64_t want) { return c->progress_until([&] { return c->peer_counter(1) >= want; }, 60); }
    // counter, shipped as the bitcode in @p sub (llvm_bc = 1), runs: with 5,
    // then with its payload changed to 7; no error at the peer.
    void bitcode_counter_runs(const std::string &sub)
    {
        poll_mode(2);
        uint64_t five = 5;
        ucp_ifunc_msg_t m = msg(reg(sub, "counter", 1), &five, sizeof(five));
        send(m);
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(5));
        set_payload(&m, 7);
        send(m);
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(12));
        EXPECT_EQ(0u, peer_errors().first);
    }
    // ucp_poll_ifunc's errors at the peer: count and last status.
    std::pair<uint64_t, ucs_status_t> peer_errors()
    {
        std::vector<uint8_t> r = c->ctrl(1, {'E'});
        EXPECT_EQ(17u, r.size());
        if (r.size() != 17) return {~0ull, UCS_OK};
        return {get_u64(&r[1]), ucs_status_t(int64_t(get_u64(&r[9])))};
    }

    // The origin's poll loop, with its log (stderr) kept: the status it ends
    // on (or UCS_ERR_NO_MESSAGE after 60 s) and what was logged.
    std::pair<ucs_status_t, std::string> origin_polls()
    {
        std::fflush(stderr);
        char path[] = "/tmp/xrdma-compat-log-XXXXXX";
        const int fd = mkstemp(path), saved = dup(2);
        EXPECT_GE(fd, 0);
        dup2(fd, 2);
        ucs_status_t st = UCS_ERR_NO_MESSAGE;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (long i = 1; st == UCS_ERR_NO_MESSAGE; ++i) {
            st = ucp_poll_ifunc(c->env.context, c->env.buffer, c->env.buffer_size, &origin_got, c->env.worker);
            if (i % 4096 == 0 && std::chrono::steady_clock::now() > deadline) break;
        }
        std::fflush(stderr);
        dup2(saved, 2);
        close(saved);
        std::string log;
        char b[4096];
        lseek(fd, 0, SEEK_SET);
        for (ssize_t n; (n = read(fd, b, sizeof(b))) > 0;) log.append(b, size_t(n));
        close(fd);
        unlink(path);
        return {st, log};
    }

    std::unique_ptr<Cluster> c;
    uint64_t origin_got = 0;  // what ifuncs run at the origin added up (origin_polls())
    std::vector<ucp_ifunc_h> ifuncs;
    std::vector<ucp_ifunc_msg_t> msgs;
};

// Points 1, 2, 9: `gcc -shared -fPIC -Wl,-rpath,...` and `clang -shared
// -fPIC` libraries run; a changed payload is sent again; after the first
// message the code stays behind (later frames fit slots far smaller than
// the library).
TEST_P(Compat, GccAndClangLibrariesRun)
{
    uint64_t want = 0;
    for (const char *sub : {"gcc", "clang"}) {
        SCOPED_TRACE(sub);
        poll_mode(2);
        ucp_ifunc_h f = reg(sub, "counter");
        ASSERT_NE(nullptr, f);
        uint64_t five = 5;
        ucp_ifunc_msg_t m = msg(f, &five, sizeof(five));
        EXPECT_GT(m.frame_size, 4096u) << "the first message carries the library";
        send(m);
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(want += 5));
        set_payload(&m, 7);
        send(m);
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(want += 7));
        // Later messages carry only the hash: they fit 256-byte slots.
        poll_mode(3, 256);
        for (size_t i = 0; i < 8; ++i) {
            set_payload(&m, 1);
            send(m, i * 256);
        }
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(want += 8));
        EXPECT_EQ(want, c->peer_counter(1));
    }
    EXPECT_EQ(0u, peer_errors().first);
}

// Point 1: a constructor the author wrote is refused, by name, at the
// origin (native API) and at the target's caller (ucp_poll_ifunc, once, as
// a discarded message); the target keeps serving.
TEST_P(Compat, AuthorsConstructorIsRefusedByName)
{
    std::vector<uint8_t> so;
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::read_file(compat_dir("ctor") + "/counter.so", &so));
    std::vector<uint8_t> img = xrdma::image_build(
        {"counter_main"}, {xrdma::PartSpec{xrdma::PartKind::native_elf, xrdma::host_triple(), so}});
    ucx_ifunc_h nf = nullptr;
    ASSERT_EQ(UCX_IFUNC_OK, ucx_ifunc_register_mem(c->ctx, img.data(), img.size(), "counter_main", 0, &nf));
    Result r = c->invoke(nf, 1, nullptr, 0);
    EXPECT_EQ(UCX_IFUNC_ERR_BAD_CODE, r.status) << r.message;
    EXPECT_NE(std::string::npos, r.message.find("constructor 'counter_setup'")) << r.message;
    ucx_ifunc_deregister(nf);

    poll_mode(2);
    uint64_t five = 5;
    send(msg(reg("ctor", "counter"), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(c->progress_until([&] { return peer_errors().first == 1; }, 60));
    EXPECT_EQ(UCS_ERR_CANCELED, peer_errors().second);
    EXPECT_EQ(0u, c->peer_counter(1));
    // The slot was consumed: the next message runs.
    send(msg(reg("gcc", "counter"), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5));
    EXPECT_EQ(1u, peer_errors().first);
}

// Points 3, 8: ping_main replies from inside main (ucp_ifunc_msg_get_payload_ptr,
// ucp_ifunc_send_nbix under the default symbol policy); the origin answers
// each pong with the next ping into the same slot at once. Over shared
// memory ping_main returns only once that next ping is in the slot, so a
// poller that cleared the slot after main would lose it. Every ping runs.
TEST_P(Compat, RepliesFromInsideMain)
{
    std::vector<uint8_t> cmd{'R'};
    put_u64(cmd, reinterpret_cast<uint64_t>(c->env.buffer));
    put_u64(cmd, c->env.rkey.size());
    cmd.insert(cmd.end(), c->env.rkey.begin(), c->env.rkey.end());
    const std::string dir = compat_dir("gcc");
    cmd.insert(cmd.end(), dir.begin(), dir.end());
    ASSERT_EQ('k', c->ctrl(1, cmd).at(0));
    poll_mode(4);
    uint64_t zero = 0, got = 0, want = 0;
    ucp_ifunc_msg_t ping = msg(reg("gcc", "ping"), &zero, sizeof(zero));
    const uint64_t rounds = GetParam() == "tcp" ? 1000 : 5000;
    for (uint64_t i = 1; i <= rounds; ++i) {
        set_payload(&ping, i | (i < rounds ? COMPAT_PING_MORE : 0));
        send(ping);  // no flush: the pong says the ping arrived
        want += i;
        ucs_status_t st = UCS_ERR_NO_MESSAGE;
        for (int spins = 0; st == UCS_ERR_NO_MESSAGE && spins < 50000000; ++spins)
            st = ucp_poll_ifunc(c->env.context, c->env.buffer, c->env.buffer_size, &got, c->env.worker);
        ASSERT_EQ(UCS_OK, st) << "pong " << i;
        ASSERT_EQ(want, got) << "round " << i;
    }
    EXPECT_EQ(rounds, c->peer_counter(1));
    EXPECT_EQ(0u, peer_errors().first);
}

// Points 7, 9: 100 000 sends of one message, resent without a flush in
// between into a ring of 32 slots (a flush only per lap, before a slot is
// reused), exact count at the target and no error.
TEST_P(Compat, SameMessageResentIntoARing)
{
    constexpr uint64_t kSlot = 32768, kSlots = (1 << 20) / kSlot, kTotal = 100000;
    poll_mode(3, kSlot);
    uint64_t one = 1;
    ucp_ifunc_msg_t m = msg(reg("gcc", "counter"), &one, sizeof(one));
    ASSERT_LE(m.frame_size, kSlot);
    uint64_t sent = 0;
    while (sent < kTotal) {
        const uint64_t lap = std::min(kSlots, kTotal - sent);
        for (uint64_t i = 0; i < lap; ++i) send(m, ((sent + i) % kSlots) * kSlot);
        sent += lap;
        c->env.flush(c->peer(1).ep);
        ASSERT_TRUE(counter_reaches(sent)) << "after " << sent << " sends the target counted " << c->peer_counter(1);
    }
    EXPECT_EQ(kTotal, c->peer_counter(1));
    EXPECT_EQ(0u, peer_errors().first);
}

// Points 10, 9: a payload <name>_payload_init shrinks travels at its
// shrunk size (counter_main runs only on 8 bytes); a 256 KiB payload; a
// frame larger than the slot is an error once (a discarded message), and the
// ring goes on.
TEST_P(Compat, ShrunkLargeAndOversizedPayloads)
{
    poll_mode(2);
    uint64_t five = 5;
    ucp_ifunc_msg_t m = msg(reg("shrink", "counter"), &five, sizeof(five));
    void *p;
    size_t n = 0;
    ASSERT_EQ(UCS_OK, ucp_ifunc_msg_get_payload_ptr(&m, &p, &n));
    EXPECT_EQ(8u, n);
    send(m);
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5));

    std::vector<uint64_t> words(32768);
    std::iota(words.begin(), words.end(), 1);
    const uint64_t sum = std::accumulate(words.begin(), words.end(), uint64_t(0));
    ucp_ifunc_h big = reg("gcc", "bigsum");
    send(msg(big, words.data(), words.size() * 8));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5 + sum));

    poll_mode(3, 65536);  // 16 slots of 64 KiB; the next frame is twice that
    words.resize(16384);
    send(msg(big, words.data(), words.size() * 8));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(c->progress_until([&] { return peer_errors().first == 1; }, 60));
    EXPECT_EQ(UCS_ERR_CANCELED, peer_errors().second);
    uint64_t small[2] = {3, 4};
    send(msg(big, small, sizeof(small)), 65536);
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5 + sum + 7));
    EXPECT_EQ(5 + sum + 7, c->peer_counter(1));
    EXPECT_EQ(1u, peer_errors().first);
}

// Point 4, 5: llvm_bc = 1 with files named for LLVM's triples
// (counter.x86_64-unknown-linux-gnu.bc) and a .deps list naming libc.so, a
// linker script, and libc.so.6, loaded already.
TEST_P(Compat, BitcodeWithUnknownVendorTriplesAndDeps)
{
    bitcode_counter_runs("bcu");
}

// Bitcode mode as the published API's makefile generates it: its .deps
// lists every library `gcc -Wl,--trace` opened, libgcc_s.so among them (a
// linker script in GCC's own directory, which the dynamic loader does not
// search). The target follows it as the link editor would and runs the
// ifunc, under the default symbol policy and with XRDMA_SYMBOLS=all (which
// loads what it finds).
TEST_P(Compat, BitcodeDepsAsTheMakefileWritesThem)
{
    std::vector<uint8_t> deps;
    ASSERT_EQ(UCX_IFUNC_OK, xrdma::read_file(compat_dir("bcdeps") + "/counter.deps", &deps));
    const std::string list(deps.begin(), deps.end());
    ASSERT_NE(std::string::npos, list.find("libgcc_s.so\n")) << list;
    for (const char *policy : {"runtime", "all"}) {
        SCOPED_TRACE(policy);
        release();
        c.reset();
        setenv("XRDMA_SYMBOLS", policy, 1);  // the peer's policy
        c = std::make_unique<Cluster>(1);
        unsetenv("XRDMA_SYMBOLS");
        bitcode_counter_runs("bcdeps");
    }
}

// A library the .deps names that no directory holds is only warned about
// (as the published implementation does) when the code needs nothing of it;
// code that calls a function only such a library could define does not
// link, and the frame is refused.
TEST_P(Compat, MissingLibraryOnlyWarns)
{
    poll_mode(2);
    uint64_t five = 5;
    send(msg(reg("bcmiss", "counter", 1), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5));
    EXPECT_EQ(0u, peer_errors().first);

    send(msg(reg("bcmiss", "absent", 1), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(c->progress_until([&] { return peer_errors().first == 1; }, 60));
    EXPECT_EQ(5u, c->peer_counter(1));
}

// A message the target refuses is reported at its origin: the target leaves
// a refusal record in the slot, and the origin's next ucp_poll_ifunc calls
// with nothing to run read it back, return UCS_ERR_REJECTED once and log the
// target's reason (here: a constructor of the author's own; code that needs
// a function from a library no machine has). The target's own
// ucp_poll_ifunc said UCS_ERR_CANCELED; later messages run.
TEST_P(Compat, RefusalReachesTheOrigin)
{
    poll_mode(2);
    uint64_t five = 5;
    send(msg(reg("ctor", "counter"), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    auto [st, log] = origin_polls();
    EXPECT_EQ(UCS_ERR_REJECTED, st) << ucs_status_string(st);
    EXPECT_NE(std::string::npos, log.find("the target refused")) << log;
    EXPECT_NE(std::string::npos, log.find("constructor 'counter_setup'")) << log;
    ASSERT_TRUE(c->progress_until([&] { return peer_errors().first == 1; }, 60));
    EXPECT_EQ(UCS_ERR_CANCELED, peer_errors().second);

    send(msg(reg("bcmiss", "absent", 1), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    std::tie(st, log) = origin_polls();
    EXPECT_EQ(UCS_ERR_REJECTED, st) << ucs_status_string(st);
    EXPECT_NE(std::string::npos, log.find("'xrdma_test_absent_function'")) << log;

    // Reported once: later looks (several in 300 000 idle polls) find
    // nothing more; the next message runs.
    for (int i = 0; i < 300000; ++i)
        ASSERT_EQ(UCS_ERR_NO_MESSAGE, ucp_poll_ifunc(c->env.context, c->env.buffer, c->env.buffer_size,
                                                     &origin_got, c->env.worker));
    send(msg(reg("gcc", "counter"), &five, sizeof(five)));
    c->env.flush(c->peer(1).ep);
    ASSERT_TRUE(counter_reaches(5));
    EXPECT_EQ(2u, peer_errors().first);
    EXPECT_EQ(0u, origin_got);
}

// The origin remembers where the target's slot is mapped (shared memory),
// but not past the rkey: one destroyed and another unpacked at the same
// handle address, which maps the slot elsewhere (its old place is taken by
// a decoy page here), gets the frame into the slot, nothing into the decoy.
TEST_P(Compat, NewRkeyAtAnOldHandleIsAskedAgain)
{
    Dl_info where{};
    void *destroy = dlsym(RTLD_DEFAULT, "ucp_rkey_destroy");
    ASSERT_TRUE(destroy && dladdr(destroy, &where) && strstr(where.dli_fname, "libucx_ifunc"))
        << "this program's ucp_rkey_destroy is not libucx_ifunc's: the origin remembers nothing";
    poll_mode(2);
    uint64_t one = 1;
    ucp_ifunc_msg_t m = msg(reg("gcc", "counter"), &one, sizeof(one));
    deliver_ones(m, 3);  // the code, then two frames without it through the memo
    Peer &p = c->peer(1);
    void *old_map = nullptr;
    if (ucp_rkey_ptr(p.rkey, p.buffer, &old_map) != UCS_OK) GTEST_SKIP() << "UCX maps no target memory here";
    const long page = sysconf(_SC_PAGESIZE);
    auto *old_page = reinterpret_cast<uint8_t *>(uintptr_t(old_map) & ~uintptr_t(page - 1));
    const ucp_rkey_h old_handle = p.rkey;
    ucp_rkey_destroy(p.rkey);
    p.rkey = nullptr;
    void *decoy = mmap(old_page, size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
    ASSERT_EQ(static_cast<void *>(old_page), decoy) << "UCX kept the old mapping: " << strerror(errno);
    // UCX hands a freed handle out again (its pool): unpack until it does.
    std::vector<ucp_rkey_h> others;
    for (int i = 0; i < 64 && p.rkey != old_handle; ++i) {
        if (p.rkey) others.push_back(p.rkey);
        ASSERT_EQ(UCS_OK, ucp_ep_rkey_unpack(p.ep, p.packed_rkey.data(), &p.rkey));
    }
    for (ucp_rkey_h r : others) ucp_rkey_destroy(r);
    ASSERT_EQ(old_handle, p.rkey) << "no new rkey at the old handle's address";
    void *new_map = nullptr;
    ASSERT_EQ(UCS_OK, ucp_rkey_ptr(p.rkey, p.buffer, &new_map));
    ASSERT_NE(old_map, new_map);
    send(m);
    const uint64_t decoy_word = *reinterpret_cast<volatile uint64_t *>(static_cast<uint8_t *>(decoy) +
                                                                       (uintptr_t(old_map) - uintptr_t(old_page)));
    EXPECT_EQ(0u, decoy_word) << "the frame went where the destroyed rkey mapped the slot";
    if (decoy_word == 0) EXPECT_TRUE(counter_reaches(4));
    munmap(decoy, size_t(page));
    EXPECT_EQ(0u, peer_errors().first);
}

// A <name>_main that faults is contained at the target, also when it
// arrives like the messages before it, which the target ran without a
// lookup: discarded there (UCS_ERR_CANCELED), its library quarantined. The
// same message again is refused without running, and the origin hears why;
// another ifunc still runs in the same slot.
TEST_P(Compat, FaultInMainIsContained)
{
    poll_mode(2);
    uint64_t one = 1;
    ucp_ifunc_msg_t m = msg(reg("fault", "counter"), &one, sizeof(one));
    deliver_ones(m, 4);
    set_payload(&m, uint64_t(1) << 63);  // counter_main stores to address 0
    deliver(m);
    ASSERT_TRUE(c->progress_until([&] { return peer_errors().first == 1; }, 60));
    EXPECT_EQ(UCS_ERR_CANCELED, peer_errors().second);

    set_payload(&m, 1);
    deliver(m);
    auto [st, log] = origin_polls();
    EXPECT_EQ(UCS_ERR_REJECTED, st) << ucs_status_string(st);
    EXPECT_NE(std::string::npos, log.find("quarantined here after a fault")) << log;
    EXPECT_EQ(2u, peer_errors().first);
    EXPECT_EQ(UCS_ERR_CANCELED, peer_errors().second);
    EXPECT_EQ(4u, c->peer_counter(1)) << "the quarantined library ran";

    uint64_t five = 5;
    deliver(msg(reg("gcc", "counter"), &five, sizeof(five)));
    ASSERT_TRUE(counter_reaches(9));
    EXPECT_EQ(9u, c->peer_counter(1));
    EXPECT_EQ(2u, peer_errors().first);
    EXPECT_EQ(0u, origin_got);
}

// The target's code cache holds one library here: another library's first
// message drops the first one's code, so that library's next message, laid
// out like the ones the target ran without a lookup, is refused (not run),
// and the origin hears that the target has no code for it.
TEST_P(Compat, MessageOfADroppedLibraryIsRefused)
{
    release();
    c.reset();
    setenv("XRDMA_TEST_CACHE_1_AT", "1", 1);
    c = std::make_unique<Cluster>(1);
    unsetenv("XRDMA_TEST_CACHE_1_AT");
    poll_mode(2);
    uint64_t one = 1;
    ucp_ifunc_msg_t gcc = msg(reg("gcc", "counter"), &one, sizeof(one));
    deliver_ones(gcc, 3);
    deliver_ones(msg(reg("clang", "counter"), &one, sizeof(one)), 1);
    deliver(gcc);
    auto [st, log] = origin_polls();
    EXPECT_EQ(UCS_ERR_REJECTED, st) << ucs_status_string(st);
    EXPECT_NE(std::string::npos, log.find("which is not cached here")) << log;
    EXPECT_EQ(1u, peer_errors().first);
    EXPECT_EQ(4u, c->peer_counter(1));
}

// Point 11: a process started with UCX_IFUNC_LIB_DIR set gets no "unused env
// variable" warning from UCX (the test runs itself again, as that process).
TEST(CompatEnv, NoUnusedVariableWarning)
{
    if (getenv("XRDMA_TEST_UCX_INIT_ONLY")) {  // the process started below
        UcxEnv env;
        return;
    }
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);  // UCX logs to stdout
        dup2(fds[1], 2);
        close(fds[0]);
        setenv("UCX_IFUNC_LIB_DIR", "/nonexistent", 1);
        setenv("XRDMA_TEST_UCX_INIT_ONLY", "1", 1);
        unsetenv("UCX_WARN_UNUSED_ENV_VARS");
        execl("/proc/self/exe", "test_compat", "--gtest_filter=CompatEnv.NoUnusedVariableWarning", nullptr);
        _exit(127);
    }
    close(fds[1]);
    std::string err;
    char b[4096];
    for (ssize_t n; (n = read(fds[0], b, sizeof(b))) > 0;) err.append(b, size_t(n));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
    EXPECT_EQ(std::string::npos, err.find("unused env variable")) << err;
}

INSTANTIATE_TEST_SUITE_P(Transports, Compat, ::testing::ValuesIn(transports()),
                         [](const auto &info) { return info.param; });

}  // namespace
