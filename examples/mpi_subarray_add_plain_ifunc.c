/* The injected function of examples/mpi_subarray_add.c -m plain: the same
 * addition written the ordinary way, for a contiguous region: add the
 * incoming doubles into xrdma_target(). The target datatype has holes (the
 * rest of each row of the matrix): XRDMA runs this once per block of it,
 * each call seeing one row of the sub-matrix as its region and that row's
 * slice of the incoming data, all under one hold of the target's lock
 * (xrdma_ifunc(3), "Target datatypes with holes"), so the cells between the
 * rows are never touched, as MPI_Accumulate would leave them. (An image of
 * its own: one whose code calls xrdma_target_blocks() shows all its
 * functions the whole layout.) */
#include <string.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(subarray_add_plain)
{
    (void)args, (void)args_size;
    size_t bytes, in_bytes;
    double *t = xrdma_target(ctx, &bytes);
    const char *in = xrdma_incoming(ctx, &in_bytes);
    if (!t || in_bytes != bytes || bytes % sizeof(double)) return 1;
    for (size_t k = 0; k < bytes / sizeof(double); ++k) {
        double v;
        memcpy(&v, in + k * sizeof(double), sizeof(v)); /* need not be aligned */
        t[k] += v;
    }
    return 0;
}
