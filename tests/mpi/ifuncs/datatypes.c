/* Functions test_datatypes ships with non-contiguous target datatypes.
 *   dt_store  MPIX_Xput: scatter the incoming data into the target blocks
 *             in datatype order (xrdma_target_blocks): what MPI_Put does
 *   dt_gather MPIX_Xget: no reply of its own, so the target region's blocks
 *             go back in datatype order: what MPI_Get does
 * (dt_plain_copy and dt_plain_get are in datatypes_plain.c: an image
 * whose code calls xrdma_target_blocks() shows all its functions the whole
 * layout.) */
#include <string.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(dt_store)
{
    (void)args, (void)args_size;
    size_t n, nblocks;
    const char *in = xrdma_incoming(ctx, &n);
    const xrdma_block_t *b = xrdma_target_blocks(ctx, &nblocks);
    size_t at = 0;
    for (size_t i = 0; i < nblocks; ++i) {
        if (at + b[i].len > n) return 1; /* fewer bytes than the blocks hold */
        memcpy(b[i].addr, in + at, b[i].len);
        at += b[i].len;
    }
    return at != n ? 2 : 0;
}

XRDMA_IFUNC(dt_gather)
{
    (void)ctx, (void)args, (void)args_size;
    return 0;
}

/* dt_stream_store: dt_store as a streaming function (XRDMA_STREAM): each
 * piece of the incoming data arrives with the address MPI_Put would store
 * it at; the pieces come in order and add up to the incoming bytes. */
struct store_state {
    size_t next, total;
};
static int ss_header(xrdma_ctx_t *ctx, void *s, const void *args, size_t args_size, size_t incoming)
{
    (void)ctx, (void)args, (void)args_size;
    ((struct store_state *)s)->total = incoming;
    return 0;
}
static int ss_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)ctx;
    struct store_state *st = s;
    if (offset != st->next) return 3; /* out of order */
    if (!target) return 4;            /* more data than the blocks hold */
    memcpy(target, data, bytes);
    st->next += bytes;
    return 0;
}
static int ss_completion(xrdma_ctx_t *ctx, void *s)
{
    (void)ctx;
    const struct store_state *st = s;
    return st->next == st->total ? 0 : 5;
}
XRDMA_STREAM(dt_stream_store, struct store_state, ss_header, ss_payload, ss_completion)

