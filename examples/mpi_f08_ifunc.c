/* The injected functions of examples/mpi_f08_xops.f90 (the Fortran example):
 * int64 arithmetic on the target's window, one entry per X-operation kind.
 * Only the Fortran program's origin ranks load the image; targets get it over
 * the network. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Xput: target region += incoming data, element by element. */
XRDMA_IFUNC(add_i64)
{
    (void)args, (void)args_size;
    size_t tbytes, ibytes;
    int64_t *t = xrdma_target(ctx, &tbytes);
    const unsigned char *in = xrdma_incoming(ctx, &ibytes);
    if (!t || !in || ibytes != tbytes || tbytes % 8) return 1;
    for (size_t i = 0; i < tbytes / 8; ++i) {
        int64_t v;
        memcpy(&v, in + 8 * i, 8); /* incoming data need not be aligned */
        t[i] += v;
    }
    return 0;
}

/* Xget: reply the sum of the target region, times the int64 in args. */
XRDMA_IFUNC(scaled_sum)
{
    int64_t scale, s = 0;
    size_t bytes;
    const int64_t *t = xrdma_target(ctx, &bytes);
    if (!t || args_size != sizeof scale) return 1;
    memcpy(&scale, args, sizeof scale);
    for (size_t i = 0; i < bytes / 8; ++i) s += t[i];
    s *= scale;
    return xrdma_reply(ctx, &s, sizeof s) != 0;
}

/* Xinvoke: add the int64 in args to the last word of the window. */
XRDMA_IFUNC(bump_last)
{
    int64_t by;
    size_t bytes;
    int64_t *w = xrdma_win_base(ctx, &bytes);
    if (!w || bytes < 8 || args_size != sizeof by) return 1;
    memcpy(&by, args, sizeof by);
    w[bytes / 8 - 1] += by;
    return 0;
}

/* Any operation: fail with the code in args (an int32), to show errors. */
XRDMA_IFUNC(fail_with)
{
    int32_t code;
    if (args_size != sizeof code) return 1;
    memcpy(&code, args, sizeof code);
    return code;
}
