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
    int64_t hops;
    if (args_size != sizeof(hops)) return 1;
    memcpy(&hops, args, sizeof(hops));
    if (hops > 0) {
        hops--;
        return xrdma_forward(ctx, (xrdma_rank(ctx) + 1) % xrdma_size(ctx), &hops, sizeof(hops)) != 0;
    }
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
