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

/* osu_stream_add (osu_xstream): a streaming accumulate, double by double, of
 * each piece as it arrives (XRDMA_STREAM); pieces of whole doubles. */
static int stream_add_payload(xrdma_ctx_t *ctx, void *state, void *target, const void *data, size_t bytes,
                              size_t offset)
{
    (void)ctx, (void)state, (void)offset;
    if (!target || bytes % sizeof(double)) return 1;
    double *t = target;
    const double *d = data;
    for (size_t i = 0; i < bytes / sizeof(double); ++i) t[i] += d[i];
    return 0;
}
XRDMA_STREAM(osu_stream_add, char, NULL, stream_add_payload, NULL)
