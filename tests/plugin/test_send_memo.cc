// Where an entry was sent before (context.h: SendMemo, memo_way; EpMemo for
// the tables and rings by endpoint): a lookup
// finds the place recorded last for that rank or endpoint, or nothing (the
// caller then sends in full and records again), never another place's;
// places on different ways are all kept however the sends alternate; a
// new epoch forgets them all; a failed send records nothing.
#include "run/context.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

using xrdma::LastSend;
using xrdma::SendMemo;

namespace {

ucp_ep_h ep_of(uintptr_t n) { return reinterpret_cast<ucp_ep_h>(n * 4096 + 64 * n); }

// The ranks' endpoints and bound indexes in a test: rank r at ep_of(r + 1), index 100 + r.
void record(SendMemo &m, int r, uint64_t epoch, int index = -1)
{
    m.record_rank(ep_of(uintptr_t(r) + 1), r, index < 0 ? 100 + r : index, UCX_IFUNC_OK, epoch);
}

}  // namespace

TEST(SendMemo, FindsWhatWasRecordedForThatRankOnly)
{
    SendMemo m;
    EXPECT_EQ(m.to_rank(1, 1), nullptr);
    record(m, 1, 1);
    const LastSend *s = m.to_rank(1, 1);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->ep, ep_of(2));
    EXPECT_EQ(s->index, 101u);
    EXPECT_EQ(m.to_rank(2, 1), nullptr);
    EXPECT_EQ(m.to_rank(5, 1), nullptr);  // (rank 1's way: another rank there is not rank 1)
}

TEST(SendMemo, KeepsOnePlacePerWayWhateverTheOrder)
{
    SendMemo m;
    for (int r = 0; r < int(xrdma::kMemoWays); ++r) record(m, r, 7);
    // A chase's order over 4 ranks, each on its own way: every lookup hits.
    const int order[] = {2, 0, 3, 1, 1, 0, 2, 3, 0, 3, 2, 1};
    for (int r : order) {
        const LastSend *s = m.to_rank(r, 7);
        ASSERT_NE(s, nullptr) << "rank " << r;
        EXPECT_EQ(s->rank, r);
        EXPECT_EQ(s->ep, ep_of(uintptr_t(r) + 1));
        EXPECT_EQ(s->index, uint32_t(100 + r));
    }
}

TEST(SendMemo, ARingFoundOnceStaysWithItsPlace)
{
    SendMemo m;
    record(m, 0, 1);
    record(m, 1, 1);
    auto *ring = reinterpret_cast<xrdma::RingOut *>(uintptr_t(0x1000));
    m.to_rank(0, 1)->ring = ring;  // (stage_forward() caches it)
    ASSERT_NE(m.to_rank(1, 1), nullptr);
    const LastSend *s = m.to_rank(0, 1);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->ring, ring);
    EXPECT_EQ(m.to_rank(1, 1)->ring, nullptr);
}

TEST(SendMemo, ANewEpochForgetsEveryPlace)
{
    SendMemo m;
    for (int r = 0; r < 4; ++r) record(m, r, 3);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(m.to_rank(r, 4), nullptr) << "rank " << r;
    record(m, 2, 4);
    EXPECT_NE(m.to_rank(2, 4), nullptr);
    EXPECT_EQ(m.to_rank(0, 4), nullptr);
}

TEST(SendMemo, AFailedSendRecordsNothing)
{
    SendMemo m;
    record(m, 1, 1);
    m.record_rank(ep_of(3), 2, 5, UCX_IFUNC_ERR_PEER, 1);
    m.record_rank(ep_of(3), 2, -1, UCX_IFUNC_OK, 1);  // (nothing bound)
    EXPECT_EQ(m.to_rank(2, 1), nullptr);
    ASSERT_NE(m.to_rank(1, 1), nullptr);
    EXPECT_EQ(m.to_rank(1, 1)->index, 101u);
}

TEST(SendMemo, ForgetForgetsAll)
{
    SendMemo m;
    for (int r = 0; r < 4; ++r) record(m, r, 1);
    m.forget();
    for (int r = 0; r < 4; ++r) EXPECT_EQ(m.to_rank(r, 1), nullptr);
}

// Random sends over @p keys places (more than ways: places sharing a way
// take turns): @p find(key) looks a place up (nullptr: none), @p record(key,
// index) records a send after a miss; a lookup must find the index recorded
// last for that key, or nothing. Returns the hits.
template <typename Find, typename Record>
unsigned random_sends(unsigned keys, uint32_t seed, Find find, Record record)
{
    std::mt19937 rng(seed);
    std::map<unsigned, uint32_t> latest;  // key -> index recorded last
    unsigned hits = 0;
    for (int i = 0; i < 20000; ++i) {
        const unsigned k = unsigned(rng() % keys);
        if (const LastSend *s = find(k)) {
            ++hits;
            EXPECT_EQ(latest.count(k), 1u) << "found place " << k << ", never recorded";
            EXPECT_EQ(s->index, latest[k]) << "place " << k;
            if (::testing::Test::HasFailure()) return hits;
        } else {
            const uint32_t index = uint32_t(rng() % 1000);  // the full path binds anew
            record(k, index);
            latest[k] = index;
        }
    }
    return hits;
}

TEST(SendMemo, NeverAnotherRanksPlace)
{
    SendMemo m;
    const unsigned hits = random_sends(
        11, 12345,
        [&](unsigned r) {
            const LastSend *s = m.to_rank(int(r), 1);
            if (s) {
                EXPECT_EQ(s->ep, ep_of(r + 1));
            }
            return s;
        },
        [&](unsigned r, uint32_t index) { record(m, int(r), 1, int(index)); });
    EXPECT_GT(hits, 0u);
}

// An origin's sends by endpoint: the same, keyed by the endpoint's address.
TEST(SendMemo, ByEndpoint)
{
    SendMemo m;
    const unsigned hits = random_sends(
        9, 7,
        [&](unsigned n) {
            const LastSend *s = m.to_ep(ep_of(n + 1), 2);
            if (s) {
                EXPECT_EQ(s->ep, ep_of(n + 1));
            }
            return s;
        },
        [&](unsigned n, uint32_t index) { m.record_ep(ep_of(n + 1), int(index), UCX_IFUNC_OK, 2); });
    EXPECT_GT(hits, 0u);
    // Two endpoints on different ways, used in turn, are both found every time.
    uintptr_t other = 2;
    while (xrdma::memo_way(ep_of(other)) == xrdma::memo_way(ep_of(1))) ++other;
    SendMemo two;
    two.record_ep(ep_of(1), 11, UCX_IFUNC_OK, 2);
    two.record_ep(ep_of(other), 12, UCX_IFUNC_OK, 2);
    for (int i = 0; i < 6; ++i) {
        const uintptr_t n = i % 2 ? other : 1;
        const LastSend *s = two.to_ep(ep_of(n), 2);
        ASSERT_NE(s, nullptr) << "endpoint " << n;
        EXPECT_EQ(s->index, n == 1 ? 11u : 12u);
    }
}

// The receiver's tables and the rings by endpoint (EpMemo): the last one and
// one per way; a table found is the one used for that endpoint, never
// another's, however the endpoints alternate.
TEST(EpMemo, TheTableOfThatEndpointOrNothing)
{
    xrdma::EpMemo<int> m;
    int tables[9];
    EXPECT_EQ(m.in_way(ep_of(1)), nullptr);
    std::mt19937 rng(3);
    unsigned found = 0;
    for (int i = 0; i < 20000; ++i) {
        const uintptr_t n = 1 + rng() % 9;
        int *t = m.last_ep == ep_of(n) ? m.last : m.in_way(ep_of(n));
        if (t) {
            ++found;
            ASSERT_EQ(t, &tables[n - 1]) << "endpoint " << n;
        }
        m.use(ep_of(n), &tables[n - 1]);
        ASSERT_EQ(m.last, &tables[n - 1]);
    }
    EXPECT_GT(found, 0u);
    m.clear();
    for (uintptr_t n = 1; n <= 9; ++n) EXPECT_EQ(m.in_way(ep_of(n)), nullptr);
    EXPECT_EQ(m.last, nullptr);
}
