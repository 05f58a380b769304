/* Ifuncs the plugin tests ship to target processes that never had them. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "../peer_state.h"

/* Reply the sum of the uint64 arguments. */
XRDMA_IFUNC(add_u64)
{
    uint64_t sum = 0;
    for (size_t i = 0; i + 8 <= args_size; i += 8) {
        uint64_t v;
        memcpy(&v, (const char *)args + i, 8);
        sum += v;
    }
    return xrdma_reply(ctx, &sum, sizeof(sum));
}

/* Increment the target's counter (its user pointer) and reply the new value. */
XRDMA_IFUNC(count)
{
    struct peer_state *st = xrdma_user_ptr(ctx);
    uint64_t v = ++st->counter;
    return xrdma_reply(ctx, &v, sizeof(v));
}

/* Increment the target's counter; no reply bytes (a success is acknowledged). */
XRDMA_IFUNC(bump)
{
    (void)args;
    (void)args_size;
    struct peer_state *st = xrdma_user_ptr(ctx);
    ++st->counter;
    return 0;
}

/* Return the value given as argument (non-zero = failure at the origin). */
XRDMA_IFUNC(fail_with)
{
    int32_t rc = 0;
    if (args_size >= 4) memcpy(&rc, args, 4);
    return rc;
}

/* Visit the ranks in route[], appending each visited rank to path[]; the last
 * one replies the whole chase_args to the origin. */
XRDMA_IFUNC(chase)
{
    struct chase_args a;
    if (args_size != sizeof(a)) return 100;
    memcpy(&a, args, sizeof(a));
    if (a.n >= CHASE_MAX) return 101;
    a.path[a.n++] = xrdma_rank(ctx);
    a.origin = xrdma_origin(ctx);
    if (a.n >= a.hops) return xrdma_reply(ctx, &a, sizeof(a));
    int rc = xrdma_forward(ctx, a.route[a.n], &a, sizeof(a));
    return rc;  /* -2: unknown rank */
}

/* Put-and-poll: add the uint64 argument to the counter in target_args. */
XRDMA_IFUNC(poll_add)
{
    struct peer_state *st = xrdma_target_args(ctx);
    uint64_t v;
    if (!st || args_size != 8) return 1;
    memcpy(&v, args, 8);
    st->counter += v;
    return 0;
}

/* Forward to rank a[0] (where it counts: increments the target's counter,
 * its user pointer, and replies the new value), then end with a[1]: 0 (the
 * forward goes), a return value, or -1: a NULL write. A forward goes only
 * if the ifunc that made it ends well. */
struct forward_then_args {
    int32_t to, then;
};
XRDMA_IFUNC(forward_then)
{
    struct forward_then_args a;
    if (args_size != sizeof(a)) return 100;
    memcpy(&a, args, sizeof(a));
    if (xrdma_rank(ctx) == a.to) {
        struct peer_state *st = xrdma_user_ptr(ctx);
        uint64_t v = ++st->counter;
        return xrdma_reply(ctx, &v, sizeof(v));
    }
    if (xrdma_forward(ctx, a.to, &a, sizeof(a)) != 0) return 101;
    if (a.then == -1) *(volatile int *)(uintptr_t)0 = 1;
    return a.then;
}

/* Reply the ranks as the function sees them: {xrdma_rank, xrdma_size,
 * xrdma_origin}, int32 each. */
XRDMA_IFUNC(ranks)
{
    (void)args, (void)args_size;
    int32_t r[3] = {xrdma_rank(ctx), xrdma_size(ctx), xrdma_origin(ctx)};
    return xrdma_reply(ctx, r, sizeof(r));
}
