/* Streaming functions test_stream ships (XRDMA_STREAM).
 *   st_add    MPIX_Xput: adds the incoming doubles to the target's, piece by
 *             piece; checks what the handlers are promised: pieces in
 *             order, none crossing a multiple of the chunk size (args[0]),
 *             whole doubles, together the incoming bytes. args[1] != 0 makes
 *             the header fail with it, args[2] != 0 the payload handler at
 *             the piece holding that byte offset (with 100), args[3] != 0
 *             the completion (with it).
 *   st_count  the completion writes how many payload pieces it saw and 1
 *             for its own run into the target's first two int64 (an
 *             Xinvoke has no region: it fails with 96).
 *   st_above  MPIX_Xget: replies, piece by piece, the doubles of the target
 *             region above args[0] (xrdma_stream_reply). */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

struct add_state {
    uint64_t chunk, fail_payload_at, fail_completion;
    size_t next, total, pieces;
};

static int add_header(xrdma_ctx_t *ctx, void *s, const void *args, size_t args_size, size_t incoming)
{
    (void)ctx;
    struct add_state *st = s;
    const uint64_t *a = args;
    if (args_size != 4 * sizeof(uint64_t)) return 90;
    if (a[1]) return (int)a[1];
    st->chunk = a[0];
    st->fail_payload_at = a[2];
    st->fail_completion = a[3];
    st->total = incoming;
    return 0;
}

static int add_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)ctx;
    struct add_state *st = s;
    if (offset != st->next) return 91;                                   /* out of order */
    if (st->chunk && offset / st->chunk != (offset + bytes - 1) / st->chunk) return 92; /* crosses a chunk */
    if (offset % sizeof(double) || bytes % sizeof(double)) return 93;     /* splits a double */
    if (!target) return 94;
    if (st->fail_payload_at && offset <= st->fail_payload_at - 1 && st->fail_payload_at - 1 < offset + bytes)
        return 100;
    double *t = target;
    const double *d = data;
    for (size_t i = 0; i < bytes / sizeof(double); ++i) t[i] += d[i];
    st->next += bytes;
    st->pieces++;
    return 0;
}

static int add_completion(xrdma_ctx_t *ctx, void *s)
{
    (void)ctx;
    const struct add_state *st = s;
    if (st->fail_completion) return (int)st->fail_completion;
    return st->next == st->total && st->pieces ? 0 : 95;
}

XRDMA_STREAM(st_add, struct add_state, add_header, add_payload, add_completion)

struct count_state {
    int64_t pieces;
};
static int count_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)ctx, (void)target, (void)data, (void)bytes, (void)offset;
    ((struct count_state *)s)->pieces++;
    return 0;
}
static int count_completion(xrdma_ctx_t *ctx, void *s)
{
    size_t n;
    int64_t *t = xrdma_target(ctx, &n);
    if (!t || n < 2 * sizeof(int64_t)) return 96;
    t[0] = ((struct count_state *)s)->pieces;
    t[1] = 1;
    return 0;
}
XRDMA_STREAM(st_count, struct count_state, NULL, count_payload, count_completion)

struct above_state {
    double threshold;
};
static int above_header(xrdma_ctx_t *ctx, void *s, const void *args, size_t args_size, size_t bytes)
{
    (void)ctx, (void)bytes;
    if (args_size != sizeof(double)) return 97;
    memcpy(&((struct above_state *)s)->threshold, args, sizeof(double));
    return 0;
}
static int above_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)target, (void)offset;
    const struct above_state *st = s;
    const double *d = data;
    for (size_t i = 0; i < bytes / sizeof(double); ++i)
        if (d[i] > st->threshold && xrdma_stream_reply(ctx, &d[i], sizeof(double)) != 0) return 98;
    return 0;
}
XRDMA_STREAM(st_above, struct above_state, above_header, above_payload, NULL)

/* st_whole: marked streaming by hand (its marker entry), so the origin
 * leaves large data for the target to fetch, but it reads all of it at once
 * with xrdma_incoming() (the target fetches it whole), then adds it. */
XRDMA_IFUNC(st_whole__xrdma_stream)
{
    (void)ctx, (void)args, (void)args_size;
    return -1;
}
XRDMA_IFUNC(st_whole)
{
    (void)args, (void)args_size;
    size_t n, room;
    const double *in = xrdma_incoming(ctx, &n);
    double *t = xrdma_target(ctx, &room);
    if (!in || !t || n > room) return 99;
    for (size_t i = 0; i < n / sizeof(double); ++i) t[i] += in[i];
    return 0;
}
