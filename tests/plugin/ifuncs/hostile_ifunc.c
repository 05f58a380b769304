/* A GNU indirect function: its resolver runs while the loader relocates the
 * image (an IRELATIVE relocation), before any entry is called. */
#include <xrdma_ifunc.h>

static int impl(void) { return 1; }
static void *resolve(void)
{
    __builtin_trap();
    return (void *)impl;
}
int pick(void) __attribute__((ifunc("resolve")));

XRDMA_IFUNC(ifunc_victim)
{
    int v = pick();
    (void)args, (void)args_size;
    return xrdma_reply(ctx, &v, sizeof v);
}
