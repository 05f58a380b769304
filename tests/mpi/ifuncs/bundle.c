/* Ifuncs of test_bundle: Xinvokes the MPI layer bundles (XRDMA_BUNDLE).
 * The image never forwards (ucx_ifunc_stays); one function replies, which
 * a bundle drops. Window words: 0 the next sequence number expected, 1
 * arrivals out of order, 2 the sum of the sequence numbers, 3 the runs,
 * 4 a flag. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

struct step { int64_t seq, fail_at; };

static int step(xrdma_ctx_t *ctx, const void *args, size_t args_size)
{
    size_t n;
    int64_t *w = xrdma_win_base(ctx, &n);
    struct step s;
    if (!w || n < 5 * 8 || args_size != sizeof(s)) return 3;
    memcpy(&s, args, sizeof(s));
    if (s.seq == s.fail_at) return 7;
    if (s.seq != w[0]) w[1]++;
    w[0] = s.seq + 1;
    w[2] += s.seq;
    w[3]++;
    return 0;
}

/* One step of the sequence. */
XRDMA_IFUNC(seq) { return step(ctx, args, args_size); }

/* The same, then a reply (an Xinvoke's reply is not delivered). */
XRDMA_IFUNC(seq_reply)
{
    int rc = step(ctx, args, args_size);
    if (rc == 0) rc = xrdma_reply(ctx, args, 8);
    return rc;
}

/* Word 4 := the int64 argument. */
XRDMA_IFUNC(set_flag)
{
    size_t n;
    volatile int64_t *w = xrdma_win_base(ctx, &n);
    if (!w || n < 5 * 8 || args_size != 8) return 3;
    int64_t v;
    memcpy(&v, args, 8);
    w[4] = v;
    return 0;
}
