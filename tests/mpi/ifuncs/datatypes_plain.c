/* Functions test_datatypes ships with non-contiguous target datatypes,
 * written for a contiguous region, the ordinary way (xrdma_target,
 * xrdma_incoming): on a datatype with holes they run once per block, and
 * must never reach the memory between the blocks. (An image apart: one
 * whose code calls xrdma_target_blocks() shows its functions the whole
 * layout, xrdma_ifunc(3).) */
#include <string.h>
#include <xrdma_ifunc.h>

/* Copy the incoming bytes into the region, as far as both go. */
XRDMA_IFUNC(dt_plain_copy)
{
    (void)args, (void)args_size;
    size_t n, m;
    char *t = xrdma_target(ctx, &n);
    const char *in = xrdma_incoming(ctx, &m);
    if (!t || !in) return 1;
    memcpy(t, in, n < m ? n : m);
    return 0;
}

/* Reply the region's bytes. */
XRDMA_IFUNC(dt_plain_get)
{
    (void)args, (void)args_size;
    size_t n;
    const char *t = xrdma_target(ctx, &n);
    return t ? xrdma_reply(ctx, t, n) : 1;
}
