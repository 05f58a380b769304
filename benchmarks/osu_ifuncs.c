/* The injected functions of the OSU-style benchmarks (osu_x*.c), one image
 * with three entries, each doing what its MPI counterpart does:
 *   osu_store   MPIX_Xput: store the incoming data into the target region
 *   osu_fetch   MPIX_Xget: answer with the target region
 *   osu_nop     MPIX_Xinvoke: look at the arguments, move no data */
#include <string.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(osu_store)
{
    (void)args, (void)args_size;
    size_t n, room;
    const void *in = xrdma_incoming(ctx, &n);
    void *t = xrdma_target(ctx, &room);
    if (n > room) return 1;
    if (n) memcpy(t, in, n);
    return 0;
}

XRDMA_IFUNC(osu_fetch)
{
    (void)args, (void)args_size;
    size_t room;
    void *t = xrdma_target(ctx, &room);
    return xrdma_reply(ctx, t, room) != 0;
}

XRDMA_IFUNC(osu_nop)
{
    (void)ctx;
    /* Touch the arguments, as the UCP handler of the floor does. */
    return args_size && ((const volatile char *)args)[0] == 0x7f;
}
