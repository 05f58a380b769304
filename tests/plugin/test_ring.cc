// Staging a frame in a ring (ring.h: ring_stage, ring_publish, ring_drop,
// ring_unstage): a staged frame is invisible to the receiver until it is
// published, in its place after every active message sent before that;
// dropped, it leaves nothing behind; any other write on the ring first
// moves it out (it is then sent after that write). The ring here is plain
// memory laid out as a receiver's (credit word, then slots).
#include "wire/ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

using xrdma::Bytes;
using xrdma::Piece;
using xrdma::RingOut;
using xrdma::RingSlotHdr;

namespace {

constexpr uint32_t kSlots = 4, kSlotSize = 128;
constexpr uint16_t kKind = 0xA1;  // (any kind: the ring carries it as it is)

struct Ring {
    std::vector<uint8_t> mem = std::vector<uint8_t>(xrdma::kRingCtrl + kSlots * kSlotSize, 0);
    RingOut r{};

    Ring()
    {
        r.state = RingOut::kActive;
        r.base = mem.data();
        r.slots = kSlots;
        r.slot_size = kSlotSize;
    }
    const uint8_t *slot(uint64_t frame) const { return mem.data() + xrdma::kRingCtrl + (frame % kSlots) * kSlotSize; }
    RingSlotHdr hdr(uint64_t frame) const
    {
        RingSlotHdr h;
        memcpy(&h, slot(frame), sizeof(h));
        return h;
    }
    bool visible(uint64_t frame) const { return hdr(frame).seq == uint32_t(frame + 1); }
    // The message of @p frame as the receiver reads it: header, then data.
    std::vector<uint8_t> message(uint64_t frame) const
    {
        const RingSlotHdr h = hdr(frame);
        const uint8_t *p = slot(frame) + sizeof(h);
        return std::vector<uint8_t>(p, p + h.hdr_len + h.data_len);
    }
    void consumed(uint64_t n) { memcpy(mem.data(), &n, sizeof(n)); }  // the receiver's credit
};

// Stage header @p hdr with @p data in @p g; false if it could not be staged.
bool stage(Ring &g, const std::vector<uint8_t> &hdr, const std::vector<uint8_t> &data, Bytes *to)
{
    uint8_t *d = xrdma::ring_stage(g.r, kKind, hdr.data(), hdr.size(), data.size(), to);
    if (!d) return false;
    memcpy(d, data.data(), data.size());
    return true;
}

std::vector<uint8_t> concat(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b)
{
    std::vector<uint8_t> v(a);
    v.insert(v.end(), b.begin(), b.end());
    return v;
}

const std::vector<uint8_t> kHdr(24, 0x11), kData{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};

}  // namespace

TEST(RingStage, InvisibleUntilPublished)
{
    Ring g;
    Bytes to;
    g.r.am_sent = 3;
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    EXPECT_FALSE(g.visible(0)) << "a staged frame is visible before it is published";
    g.r.am_sent = 5;  // active messages sent meanwhile: the frame goes after them
    size_t len = 0;
    ASSERT_TRUE(xrdma::ring_publish(g.r, &len));
    EXPECT_EQ(kData.size(), len);
    EXPECT_TRUE(g.visible(0));
    EXPECT_EQ(5u, g.hdr(0).am_before);
    EXPECT_EQ(kKind, g.hdr(0).kind);
    EXPECT_EQ(concat(kHdr, kData), g.message(0));
    EXPECT_EQ(1u, g.r.next);
    EXPECT_TRUE(to.empty());
    EXPECT_FALSE(xrdma::ring_publish(g.r, &len)) << "published twice";
}

TEST(RingStage, DroppedLeavesNothing)
{
    Ring g;
    Bytes to;
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    xrdma::ring_drop(g.r);
    EXPECT_FALSE(g.visible(0));
    EXPECT_EQ(0u, g.r.next);
    // The slot is written again by the next message, which is frame 0.
    const std::vector<uint8_t> other(40, 0x22);
    const Piece pieces[3] = {{other.data(), other.size()}, {nullptr, 0}, {nullptr, 0}};
    ASSERT_TRUE(xrdma::ring_write(g.r, kKind, kHdr.data(), kHdr.size(), pieces));
    EXPECT_TRUE(g.visible(0));
    EXPECT_EQ(concat(kHdr, other), g.message(0));
    size_t len;
    EXPECT_FALSE(xrdma::ring_publish(g.r, &len));
}

TEST(RingStage, AnotherWriteMovesItOut)
{
    Ring g;
    Bytes to;
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    const std::vector<uint8_t> other(40, 0x33);
    const Piece pieces[3] = {{other.data(), other.size()}, {nullptr, 0}, {nullptr, 0}};
    ASSERT_TRUE(xrdma::ring_write(g.r, kKind, kHdr.data(), kHdr.size(), pieces));
    // The other message took the slot; the staged data waits in `to`, to be
    // sent after it.
    EXPECT_TRUE(g.visible(0));
    EXPECT_EQ(concat(kHdr, other), g.message(0));
    EXPECT_EQ(std::vector<uint8_t>(kData.begin(), kData.end()), std::vector<uint8_t>(to.begin(), to.end()));
    size_t len;
    EXPECT_FALSE(xrdma::ring_publish(g.r, &len)) << "a frame moved out was published too";
    EXPECT_FALSE(g.visible(1));
}

TEST(RingStage, RingOffMovesItOutAtPublish)
{
    Ring g;
    Bytes to;
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    g.r.state = RingOut::kOff;  // (the peer failed while the ifunc ran)
    size_t len;
    EXPECT_FALSE(xrdma::ring_publish(g.r, &len));
    EXPECT_FALSE(g.visible(0));
    EXPECT_EQ(std::vector<uint8_t>(kData.begin(), kData.end()), std::vector<uint8_t>(to.begin(), to.end()));
}

TEST(RingStage, OneAtATimeAndOnlyWhereItFits)
{
    Ring g;
    Bytes to;
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    EXPECT_FALSE(stage(g, kHdr, kData, &to)) << "two frames staged at once";
    xrdma::ring_drop(g.r);
    EXPECT_FALSE(stage(g, kHdr, std::vector<uint8_t>(kSlotSize, 0), &to)) << "staged beyond a slot";
    // A full ring (the receiver took nothing): nothing is staged until it
    // gives credit.
    size_t len;
    for (uint64_t i = 0; i < kSlots; ++i) {
        ASSERT_TRUE(stage(g, kHdr, kData, &to));
        ASSERT_TRUE(xrdma::ring_publish(g.r, &len));
    }
    EXPECT_FALSE(stage(g, kHdr, kData, &to)) << "staged into a full ring";
    g.consumed(1);
    ASSERT_TRUE(stage(g, kHdr, kData, &to));
    ASSERT_TRUE(xrdma::ring_publish(g.r, &len));
    EXPECT_TRUE(g.visible(kSlots));
    EXPECT_EQ(concat(kHdr, kData), g.message(kSlots));
}
