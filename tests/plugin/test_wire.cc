// The inline reply check (reply_hdr_check, on the path of every reply) says
// exactly what the full one (reply_hdr_check_all) says, for valid replies of
// every kind and for every single-field corruption of them; and what a
// ring's compact frame of acks must be.
#include "wire/wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace xrdma;

namespace {

struct Case {
    ReplyHdr h;
    size_t data_len;
};

std::vector<Case> valid_replies()
{
    return {
        {make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, 1, 0, 8), 8},
        {make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, 1, 0, uint32_t(kMaxAcks * 8)), kMaxAcks * 8},
        {make_reply_hdr(kReplyResult, UCX_IFUNC_OK, 2, 7), 0},
        {make_reply_hdr(kReplyResult, UCX_IFUNC_OK, 2, 7, 16), 16},
        {make_reply_hdr(kReplyResult, UCX_IFUNC_ERR_BAD_CODE, 2, 7, 0, 5), 5},
        {make_reply_hdr(kReplyNeedCode, UCX_IFUNC_ERR_NEED_CODE, 3, 9), sizeof(InvokeHdr) + 4},
        {make_reply_hdr(kReplyNeedBind, UCX_IFUNC_ERR_NEED_CODE, 3, 9), sizeof(InvokeShortHdr)},
    };
}

void expect_same(const Case &c, size_t hdr_len)
{
    std::string why_fast, why_all;
    const ucx_ifunc_status_t fast = reply_hdr_check(&c.h, hdr_len, c.data_len, &why_fast);
    const ucx_ifunc_status_t all = reply_hdr_check_all(&c.h, hdr_len, c.data_len, &why_all);
    ASSERT_EQ(fast, all) << "kind " << int(c.h.kind) << " status " << c.h.status << " msg_len " << c.h.msg_len
                         << " reply_len " << c.h.reply_len << " req_id " << c.h.req_id << " data " << c.data_len
                         << ": " << why_all;
    EXPECT_EQ(why_fast, why_all);
}

}  // namespace

TEST(ReplyHdrCheck, ValidRepliesPass)
{
    for (const Case &c : valid_replies()) {
        std::string why;
        EXPECT_EQ(reply_hdr_check(&c.h, sizeof(c.h), c.data_len, &why), UCX_IFUNC_OK) << why;
        expect_same(c, sizeof(c.h));
    }
}

TEST(ReplyHdrCheck, InlineAgreesWithFullOnCorruptions)
{
    std::mt19937_64 rng(14);
    const uint64_t interesting[] = {0, 1, 7, 8, 9, 16, kMaxAcks * 8, kMaxAcks * 8 + 8, 0xffffffffull, 1ull << 32};
    for (const Case &base : valid_replies()) {
        expect_same(base, sizeof(base.h) - 1);
        expect_same(base, sizeof(base.h) + 1);
        for (int i = 0; i < 4000; ++i) {
            Case c = base;
            const uint64_t v = (rng() & 1) ? interesting[rng() % (sizeof(interesting) / sizeof(interesting[0]))] : rng();
            switch (rng() % 9) {
            case 0: c.h.magic = uint32_t(v); break;
            case 1: c.h.version = uint8_t(v); break;
            case 2: c.h.kind = uint8_t(v % 8); break;
            case 3: c.h.msg_len = uint16_t(v); break;
            case 4: c.h.status = int32_t(int64_t(v % 40) - 30); break;
            case 5: c.h.req_id = v % 3; break;
            case 6: c.h.reply_len = uint32_t(v); break;
            case 7: c.data_len = size_t(v % (kMaxAcks * 8 + 64)); break;
            default: c.h.reply_len = uint32_t(v % 64); c.data_len = size_t(c.h.msg_len) + c.h.reply_len; break;
            }
            expect_same(c, sizeof(c.h));
        }
    }
}

// A ring's compact frame of acks (kRingAcks): valid exactly when its count
// is 1..kMaxAcks and the data holds that many req_ids behind an 8-byte
// header; and every valid one, queued as the kReplyAcks reply it stands for
// (ring.cc, take_acks()), passes the reply check.
TEST(RingAcks, ValidExactlyWhenCountAndLengthsAgree)
{
    for (uint32_t n = 0; n <= kMaxAcks + 2; ++n) {
        const RingAcksHdr a{5, n};
        const size_t len = size_t(n) * sizeof(uint64_t);
        const bool want = n >= 1 && n <= kMaxAcks;
        EXPECT_EQ(want, ring_acks_valid(a, sizeof(a), len)) << n << " req_ids";
        EXPECT_FALSE(ring_acks_valid(a, sizeof(a) - 1, len)) << n;
        EXPECT_FALSE(ring_acks_valid(a, sizeof(a) + 1, len)) << n;
        EXPECT_FALSE(ring_acks_valid(a, sizeof(a), len + 8)) << n;
        EXPECT_FALSE(ring_acks_valid(a, sizeof(a), len + 1)) << n;
        if (len) {
            EXPECT_FALSE(ring_acks_valid(a, sizeof(a), len - 8)) << n;
        }
        if (!want) continue;
        const ReplyHdr rh = make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, a.rank, 0, uint32_t(len));
        std::string why;
        EXPECT_EQ(UCX_IFUNC_OK, reply_hdr_check(&rh, sizeof(rh), len, &why)) << n << ": " << why;
    }
    // A count that overflows the length in 32 bits is not taken for a small one.
    EXPECT_FALSE(ring_acks_valid(RingAcksHdr{5, 1u << 29}, sizeof(RingAcksHdr), 0));
}
