/* Ifuncs that record the order they ran in at the target: each takes the
 * next number of the target's counter (its user pointer) and replies it.
 * An image apart from basic.xfn's "count", which does the same, so that a
 * target with room for one image drops one when the other comes; built
 * twice (order_b.xfn with ORDER_IMAGE_B: one entry more, another image) for
 * two images that forward. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "../peer_state.h"

static int next_number(xrdma_ctx_t *ctx)
{
    struct peer_state *st = xrdma_user_ptr(ctx);
    uint64_t v = ++st->counter;
    return xrdma_reply(ctx, &v, sizeof(v));
}

XRDMA_IFUNC(tick) { (void)args; (void)args_size; return next_number(ctx); }
XRDMA_IFUNC(tock) { (void)args; (void)args_size; return next_number(ctx); }

/* tick at the rank the args (an int32) name, forwarded there from elsewhere. */
XRDMA_IFUNC(tick_at)
{
    int32_t rank;
    if (args_size != sizeof(rank)) return 1;
    memcpy(&rank, args, sizeof(rank));
    if (xrdma_rank(ctx) != rank) return xrdma_forward(ctx, rank, args, args_size);
    return next_number(ctx);
}

#ifdef ORDER_IMAGE_B
XRDMA_IFUNC(tick_b) { (void)args; (void)args_size; return next_number(ctx); }
#endif
