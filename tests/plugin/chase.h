// The chase ifunc (tests/plugin/ifuncs/basic.c) seen from the origin: the
// args for a route and the chase_args its last hop replies, read back.
#pragma once

#include "cluster.h"
#include "peer_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>

namespace xrdma_test {

// Args that visit @p ranks in order (at most CHASE_MAX).
inline chase_args chase_route(std::initializer_list<int> ranks)
{
    chase_args a{};
    a.hops = int32_t(ranks.size());
    int i = 0;
    for (int r : ranks) a.route[i++] = r;
    return a;
}

// @p r succeeded and carries a chase_args, copied to @p out; use as
// ASSERT_TRUE(chase_reply(r, &out)).
inline ::testing::AssertionResult chase_reply(const Result &r, chase_args *out)
{
    if (r.status != UCX_IFUNC_OK)
        return ::testing::AssertionFailure() << "status " << r.status << ": " << r.message;
    if (r.reply.size() != sizeof(*out))
        return ::testing::AssertionFailure() << "a reply of " << r.reply.size() << " bytes, not " << sizeof(*out);
    memcpy(out, r.reply.data(), sizeof(*out));
    return ::testing::AssertionSuccess();
}

}  // namespace xrdma_test
