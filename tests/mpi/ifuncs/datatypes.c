/* Functions test_datatypes ships with non-contiguous target datatypes.
 *   dt_store  MPIX_Xput: scatter the incoming data into the target blocks
 *             in datatype order (xrdma_target_blocks): what MPI_Put does
 *   dt_gather MPIX_Xget: no reply of its own, so the target region's blocks
 *             go back in datatype order: what MPI_Get does */
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
