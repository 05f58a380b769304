// The origin's table of invocations in flight (pending.h): what goes in
// comes out once, under its id, whatever the order of completion, however
// many are in flight and however long one of them waits.
#include "run/pending.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

using xrdma::Pending;
using xrdma::PendingTable;

namespace {

ucp_ep_h ep_of(uintptr_t n) { return reinterpret_cast<ucp_ep_h>(n); }
Pending pending_of(uint64_t id, uintptr_t ep) { return Pending{nullptr, reinterpret_cast<void *>(id), ep_of(ep)}; }

}  // namespace

TEST(PendingTable, PutFindTake)
{
    PendingTable t;
    Pending p;
    EXPECT_EQ(t.find(1), nullptr);
    EXPECT_FALSE(t.take(1, &p));
    t.put(1, pending_of(1, 7));
    t.put(2, pending_of(2, 8));
    EXPECT_EQ(t.size(), 2u);
    ASSERT_NE(t.find(2), nullptr);
    EXPECT_EQ(t.find(2)->ep, ep_of(8));
    EXPECT_EQ(t.find(3), nullptr);
    ASSERT_TRUE(t.take(1, &p));
    EXPECT_EQ(p.user_data, reinterpret_cast<void *>(1));
    EXPECT_FALSE(t.take(1, &p));  // once only
    EXPECT_EQ(t.size(), 1u);
    t.put(2, pending_of(20, 9));  // the same id again replaces
    EXPECT_EQ(t.size(), 1u);
    EXPECT_EQ(t.find(2)->ep, ep_of(9));
}

// Ids that share a slot (one waits while later ones come and go) and
// ids that differ only above the slot bits stay apart.
TEST(PendingTable, OneWaitsWhileManyPass)
{
    PendingTable t;
    t.put(1, pending_of(1, 1));
    Pending p;
    for (uint64_t id = 2; id < 100000; ++id) {
        t.put(id, pending_of(id, 2));
        ASSERT_TRUE(t.take(id, &p)) << id;
        ASSERT_EQ(p.user_data, reinterpret_cast<void *>(id));
    }
    EXPECT_EQ(t.size(), 1u);
    EXPECT_LE(t.capacity(), 64u);  // one that waits does not grow the array
    ASSERT_TRUE(t.take(1, &p));
    EXPECT_EQ(p.ep, ep_of(1));
    EXPECT_EQ(t.size(), 0u);
}

// Many in flight, completed in random order, against a reference map.
TEST(PendingTable, RandomOrderAgainstMap)
{
    PendingTable t;
    std::map<uint64_t, uintptr_t> ref;
    std::mt19937_64 rng(14);
    uint64_t next = 1;
    for (int step = 0; step < 200000; ++step) {
        const bool add = ref.size() < 3000 && (ref.empty() || rng() % 100 < 52);
        if (add) {
            uint64_t id = next++;
            if (rng() % 50 == 0) id += uint64_t(1) << 40;  // far apart
            if (ref.count(id)) continue;
            const uintptr_t ep = 1 + rng() % 4;
            t.put(id, pending_of(id, ep));
            ref[id] = ep;
        } else {
            auto it = ref.begin();
            std::advance(it, rng() % std::min<size_t>(ref.size(), 64));
            Pending p;
            ASSERT_TRUE(t.take(it->first, &p));
            ASSERT_EQ(p.ep, ep_of(it->second));
            ASSERT_EQ(p.user_data, reinterpret_cast<void *>(it->first));
            ASSERT_EQ(t.find(it->first), nullptr);
            ref.erase(it);
        }
        ASSERT_EQ(t.size(), ref.size());
    }
    for (const auto &kv : ref) {
        ASSERT_NE(t.find(kv.first), nullptr);
        EXPECT_EQ(t.find(kv.first)->ep, ep_of(kv.second));
    }
    EXPECT_EQ(t.find(next + 1), nullptr);
    EXPECT_LE(t.capacity(), 8192u);  // at most about twice what was in flight
}

// A failed peer's invocations leave together, in issue order; the others stay.
TEST(PendingTable, TakeAllByEndpoint)
{
    PendingTable t;
    for (uint64_t id = 1; id <= 500; ++id) t.put(id, pending_of(id, id % 3 == 0 ? 5 : 6));
    t.put(1 + 64 * 1000, pending_of(1 + 64 * 1000, 5));  // shares a slot with id 1
    std::vector<std::pair<uint64_t, Pending>> gone;
    t.take_all(ep_of(5), &gone);
    ASSERT_EQ(gone.size(), 167u);
    for (size_t i = 1; i < gone.size(); ++i) EXPECT_LT(gone[i - 1].first, gone[i].first);
    for (const auto &g : gone) EXPECT_EQ(g.second.ep, ep_of(5));
    EXPECT_EQ(gone.back().first, 1u + 64 * 1000);
    EXPECT_EQ(t.size(), 334u);
    EXPECT_EQ(t.find(3), nullptr);
    EXPECT_NE(t.find(4), nullptr);
    t.take_all(nullptr, &gone);
    EXPECT_EQ(gone.size(), 334u);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.find(4), nullptr);
}
