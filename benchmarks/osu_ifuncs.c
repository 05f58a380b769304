/* The injected functions of the OSU-style benchmarks (osu_x*.c), one image
 * with three entries, each doing what its MPI counterpart does:
 *   osu_store   MPIX_Xput: store the incoming data into the target region
 *   osu_fetch   MPIX_Xget: answer with the target region
 *   osu_nop     MPIX_Xinvoke: look at the arguments, move no data
 *   osu_add     MPIX_Xput: add the incoming int64 values into the target
 *               region (MPI_Accumulate with MPI_SUM) */
#include <stdint.h>
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

XRDMA_IFUNC(osu_add)
{
    (void)args, (void)args_size;
    size_t n, room;
    const int64_t *in = xrdma_incoming(ctx, &n);
    int64_t *t = xrdma_target(ctx, &room);
    if (n > room) return 1;
    for (size_t i = 0; i < n / 8; ++i) t[i] += in[i];
    return 0;
}
