/* Ifuncs that record the order they ran in at the target: each takes the
 * next number of the target's counter (its user pointer) and replies it.
 * An image apart from basic.xfn's "count", which does the same, so that a
 * target with room for one image drops one when the other comes. */
#include <stdint.h>
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
