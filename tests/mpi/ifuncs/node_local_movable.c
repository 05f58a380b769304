/* Functions test_node_local runs where the data is: no writable data of
 * their own and no target-only state, so with XRDMA_EXEC=auto an origin that
 * maps the target's window runs them itself (xrdma_ifunc(3), "Where the code
 * runs"). Their twins in node_local_pinned.c always run at the target. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "node_local_ops.h"

XRDMA_IFUNC(acc_movable)
{
    (void)args, (void)args_size;
    return op_accumulate(ctx);
}

XRDMA_IFUNC(append_movable) { return op_append(ctx, args, args_size); }

/* Xput: carried along `hops` forwards (each to the next rank), then store
 * the incoming data into the target region of the last rank; reply with the
 * rank that stored it. */
XRDMA_IFUNC(forward_store)
{
    int64_t hops = hops_of(args, args_size);
    if (hops < 0) return 1;
    if (hops > 0) return forward_next(ctx, hops);
    size_t n, room;
    const void *in = xrdma_incoming(ctx, &n);
    void *t = xrdma_target(ctx, &room);
    if (n > room || !t) return 2;
    memcpy(t, in, n);
    int64_t me = xrdma_rank(ctx);
    return xrdma_reply(ctx, &me, sizeof(me)) != 0;
}

/* Xget: the executing rank, its window size and the first word of its
 * window, as it sees them. */
XRDMA_IFUNC(where)
{
    (void)args, (void)args_size;
    size_t bytes;
    int64_t *base = xrdma_win_base(ctx, &bytes);
    int64_t out[3] = {xrdma_rank(ctx), (int64_t)bytes, base ? base[0] : -1};
    return xrdma_reply(ctx, out, sizeof(out)) != 0;
}

/* Xput: accumulate the incoming data into the target region at every rank
 * of a chain of `hops` forwards (each to the next rank): a chain that
 * continues in one process runs under each visited target's lock in turn. */
XRDMA_IFUNC(acc_chain)
{
    int64_t hops = hops_of(args, args_size);
    if (hops < 0) return 1;
    if (op_accumulate(ctx) != 0) return 2;
    return hops == 0 ? 0 : forward_next(ctx, hops);
}

/* A bug after hops: forwarded `hops` times (each to the next rank), then a
 * null dereference. The hops that continue in one process run under the
 * locks of the targets they visit; the fault must release the one it
 * holds. (Quarantines this image where it faults: test_node_local runs it
 * last.) */
XRDMA_IFUNC(crash_after_hops)
{
    int64_t hops = hops_of(args, args_size);
    if (hops < 0) return 1;
    if (hops > 0) return forward_next(ctx, hops);
    volatile int64_t *p = (volatile int64_t *)(uintptr_t)(hops > 1000000 ? 1 : 0);
    return (int)*p;
}
