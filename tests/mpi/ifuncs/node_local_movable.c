/* Functions test_node_local runs where the data is: no writable data of
 * their own and no target-only state, so with XRDMA_EXEC=auto an origin that
 * maps the target's window runs them itself (xrdma_ifunc(3), "Where the code
 * runs"). Their twins in node_local_pinned.c always run at the target. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Xput: add the incoming int64 values into the target region, one by one
 * (a read-modify-write that loses updates unless functions at one target
 * run one at a time). */
XRDMA_IFUNC(acc_movable)
{
    (void)args, (void)args_size;
    size_t n, room;
    const int64_t *in = xrdma_incoming(ctx, &n);
    volatile int64_t *t = xrdma_target(ctx, &room);
    if (n > room || !t) return 1;
    for (size_t i = 0; i < n / 8; ++i) t[i] = t[i] + in[i];
    return 0;
}

/* Xput/Xinvoke: append the int64 argument to the log in the target region,
 * [count][value...]. */
XRDMA_IFUNC(append_movable)
{
    size_t room;
    int64_t *t = xrdma_target(ctx, &room);
    int64_t v;
    if (args_size != sizeof(v) || !t) return 1;
    memcpy(&v, args, sizeof(v));
    if ((size_t)(t[0] + 2) * 8 > room) return 2;
    t[1 + t[0]] = v;
    t[0]++;
    return 0;
}

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
