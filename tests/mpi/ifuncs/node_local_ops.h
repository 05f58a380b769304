/* The operations test_node_local runs, shared by its movable and its pinned
 * image (node_local_movable.c, node_local_pinned.c): the same code, which
 * runs where the data is or only at its target depending on the image. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Xput: add the incoming int64 values into the target region, one by one
 * (a read-modify-write that loses updates unless functions at one target
 * run one at a time). */
static inline int op_accumulate(xrdma_ctx_t *ctx)
{
    size_t n, room;
    const int64_t *in = xrdma_incoming(ctx, &n);
    volatile int64_t *t = xrdma_target(ctx, &room);
    if (n > room || !t) return 1;
    for (size_t i = 0; i < n / 8; ++i) t[i] = t[i] + in[i];
    return 0;
}

/* Xput: append the int64 argument to the log in the target region,
 * [count][value...]. */
static inline int op_append(xrdma_ctx_t *ctx, const void *args, size_t args_size)
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

/* Chains: the hop count an Xput carries as its argument (-1 if the
 * argument is not one int64), and the forward to the next rank with one
 * hop less. */
static inline int64_t hops_of(const void *args, size_t args_size)
{
    int64_t hops;
    if (args_size != sizeof(hops)) return -1;
    memcpy(&hops, args, sizeof(hops));
    return hops;
}

static inline int forward_next(xrdma_ctx_t *ctx, int64_t hops)
{
    hops--;
    return xrdma_forward(ctx, (xrdma_rank(ctx) + 1) % xrdma_size(ctx), &hops, sizeof(hops)) != 0;
}
