/* The injected function of examples/mpi_stream_reduce.c: a streaming
 * reduction (XRDMA_STREAM). The payload handler adds each piece of the
 * incoming doubles into the target region as it arrives, and keeps the
 * piece count and the sum of the incoming values in its per-operation
 * state; the completion handler adds those two into the target's report
 * cells (args: their displacement from the region, in doubles). The
 * target never holds the whole message: a 1 GiB reduction needs a few
 * chunks (XRDMA_STREAM_CHUNK) of memory there, not 1 GiB. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

struct reduce_state {
    int64_t report_at; /* where the report cells are, in doubles from the region */
    double pieces, sum;
};

static int reduce_header(xrdma_ctx_t *ctx, void *s, const void *args, size_t args_size, size_t incoming)
{
    (void)ctx, (void)incoming;
    struct reduce_state *st = s;
    if (args_size != sizeof(st->report_at)) return 1;
    memcpy(&st->report_at, args, sizeof(st->report_at));
    return 0;
}

static int reduce_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)ctx, (void)offset;
    struct reduce_state *st = s;
    /* Pieces hold whole doubles: the chunk size and the contiguous target
     * are multiples of 8 bytes. */
    if (!target || bytes % sizeof(double)) return 2;
    double *t = target;
    const double *d = data;
    for (size_t i = 0; i < bytes / sizeof(double); ++i) {
        t[i] += d[i];
        st->sum += d[i];
    }
    st->pieces += 1;
    return 0;
}

static int reduce_completion(xrdma_ctx_t *ctx, void *s)
{
    const struct reduce_state *st = s;
    size_t bytes;
    double *region = xrdma_target(ctx, &bytes);
    size_t win_bytes;
    char *win = xrdma_win_base(ctx, &win_bytes);
    double *report = region + st->report_at;
    /* The report cells must lie in this rank's window memory. */
    if (!region || (char *)report < win || (char *)(report + 2) > win + win_bytes) return 3;
    report[0] += st->pieces;
    report[1] += st->sum;
    return 0;
}

XRDMA_STREAM(stream_reduce, struct reduce_state, reduce_header, reduce_payload, reduce_completion)
