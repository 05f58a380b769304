/* Ifuncs the MPI tests ship to ranks that never had them. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Xput: add the incoming int64s to the target region (user-defined accumulate). */
XRDMA_IFUNC(accumulate)
{
    size_t n, m;
    int64_t *t = xrdma_target(ctx, &n);
    const int64_t *in = xrdma_incoming(ctx, &m);
    if (!t || n != m) return 1;
    for (size_t i = 0; i < n / 8; ++i) t[i] += in[i];
    return 0;
}

/* Xput: store only where the incoming value is larger (max-accumulate). */
XRDMA_IFUNC(store_max)
{
    size_t n, m;
    int64_t *t = xrdma_target(ctx, &n);
    const int64_t *in = xrdma_incoming(ctx, &m);
    if (!t || n != m) return 1;
    for (size_t i = 0; i < n / 8; ++i)
        if (in[i] > t[i]) t[i] = in[i];
    return 0;
}

/* Xget: reply the sum of the int64s in the target region. */
XRDMA_IFUNC(sum)
{
    size_t n;
    const int64_t *t = xrdma_target(ctx, &n);
    int64_t s = 0;
    for (size_t i = 0; i < n / 8; ++i) s += t[i];
    return xrdma_reply(ctx, &s, sizeof(s));
}

/* Xget: reply only the int64s of the region greater than the argument. */
XRDMA_IFUNC(filter_gt)
{
    size_t n;
    const int64_t *t = xrdma_target(ctx, &n);
    int64_t lim, out[1024];
    size_t k = 0;
    if (args_size != 8) return 2;
    memcpy(&lim, args, 8);
    for (size_t i = 0; i < n / 8 && k < 1024; ++i)
        if (t[i] > lim) out[k++] = t[i];
    return xrdma_reply(ctx, out, k * 8);
}

/* Xget without a reply of its own: the target region comes back. Doubles it first. */
XRDMA_IFUNC(double_then_get)
{
    size_t n;
    int64_t *t = xrdma_target(ctx, &n);
    for (size_t i = 0; i < n / 8; ++i) t[i] *= 2;
    return 0;
}

/* Xinvoke: window word 0 += argument; reply (ignored by Xinvoke). */
XRDMA_IFUNC(bump)
{
    size_t n;
    int64_t *base = xrdma_win_base(ctx, &n);
    int64_t v = 1;
    if (args_size == 8) memcpy(&v, args, 8);
    if (!base || n < 8) return 3;
    base[0] += v;
    return 0;
}

/* Xinvoke: append the operation's sequence number to a log in the window:
 * word 1 counts, words 2.. hold what arrived (ordering check). */
XRDMA_IFUNC(log_seq)
{
    size_t n;
    int64_t *base = xrdma_win_base(ctx, &n);
    int64_t seq;
    if (args_size != 8 || n < 16) return 4;
    memcpy(&seq, args, 8);
    int64_t k = base[1];
    if ((size_t)(2 + k) * 8 < n) base[2 + k] = seq;
    base[1] = k + 1;
    return 0;
}

/* Xget: visit every rank in order (forwarding), adding each rank's window
 * word 0; the last one replies the total straight to the origin. */
struct tour { int32_t next, left; int64_t total; };
XRDMA_IFUNC(tour)
{
    struct tour t;
    size_t n;
    int64_t *base = xrdma_win_base(ctx, &n);
    if (args_size != sizeof(t) || !base) return 5;
    memcpy(&t, args, sizeof(t));
    t.total += base[0];
    if (--t.left == 0) return xrdma_reply(ctx, &t.total, sizeof(t.total));
    t.next = (xrdma_rank(ctx) + 1) % xrdma_size(ctx);
    return xrdma_forward(ctx, t.next, &t, sizeof(t));
}

/* Return the int32 argument. */
XRDMA_IFUNC(fail_with)
{
    int32_t rc = 0;
    if (args_size >= 4) memcpy(&rc, args, 4);
    return rc;
}

/* Does nothing: for Xget, the (datatype-shaped) target region comes back. */
XRDMA_IFUNC(noop) { return 0; }

/* Xinvoke: set window word 0 to the argument (releases a spinning target). */
XRDMA_IFUNC(set_flag)
{
    size_t n;
    volatile int64_t *base = xrdma_win_base(ctx, &n);
    int64_t v = 1;
    if (args_size == 8) memcpy(&v, args, 8);
    base[0] = v;
    return 0;
}

/* Xget: the accessors' size outputs through each kind of pointer an ifunc
 * may hand over (its local variable, one not aligned, window memory off its
 * stack, NULL, an unmapped address: then the accessor returns NULL and the
 * target keeps serving). Replies what each gave. */
XRDMA_IFUNC(size_outputs)
{
    int64_t out[6];
    size_t n = 0, m = 0;
    unsigned char raw[sizeof(size_t) + 1];
    int64_t *base = xrdma_win_base(ctx, &n);
    if (!base || n < 16) return 6;
    out[0] = (int64_t)n;
    void *t = xrdma_target(ctx, (size_t *)(void *)(raw + 1));
    memcpy(&m, raw + 1, sizeof(m));
    out[1] = t ? (int64_t)m : -1;
    base[1] = -1;
    out[2] = xrdma_target(ctx, (size_t *)(void *)&base[1]) == t ? base[1] : -2;
    out[3] = t && xrdma_target(ctx, NULL) == t && xrdma_win_base(ctx, NULL) == base;
    out[4] = xrdma_win_base(ctx, (size_t *)16) == NULL;
    out[5] = xrdma_target(ctx, (size_t *)16) == NULL && xrdma_incoming(ctx, (size_t *)16) == NULL;
    return xrdma_reply(ctx, out, sizeof(out));
}
