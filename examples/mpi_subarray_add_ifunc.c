/* The injected function of examples/mpi_subarray_add.c: add the incoming
 * doubles into the target region, block by block.
 *
 * The target datatype (a 2-D subarray of the target's matrix) is not
 * contiguous: xrdma_target_blocks() hands over its blocks (one row of the
 * sub-matrix each) in datatype order, and the incoming data, packed with
 * the origin datatype, fills them in that order, as MPI_Put would. The
 * whole operation is atomic against every other function at the target. */
#include <string.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(subarray_add)
{
    (void)args, (void)args_size;
    size_t in_bytes, nblocks, at = 0;
    const char *in = xrdma_incoming(ctx, &in_bytes);
    const xrdma_block_t *b = xrdma_target_blocks(ctx, &nblocks);
    for (size_t i = 0; i < nblocks; ++i) {
        if (at + b[i].len > in_bytes || b[i].len % sizeof(double)) return 1;
        double *t = b[i].addr;
        for (size_t k = 0; k < b[i].len / sizeof(double); ++k) {
            double v;
            memcpy(&v, in + at + k * sizeof(double), sizeof(v)); /* need not be aligned */
            t[k] += v;
        }
        at += b[i].len;
    }
    return at == in_bytes ? 0 : 2;
}
