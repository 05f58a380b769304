/* The injected accumulate of examples/mpi_accumulate.c: a histogram insert.
 *
 * MPIX_Xput delivers a batch of (key, value) samples to the rank that owns
 * the keys. This function runs there, on the target region (the rank's
 * histogram: one struct bin per bucket of keys) and, for every sample,
 * picks the bin from the key and updates count, sum, min and max of the
 * values together. Injected functions run one at a time at a target, so a
 * whole batch is one atomic update even when all ranks send at once.
 *
 * MPI_Accumulate cannot do this in one operation: it applies one predefined
 * op element by element at a displacement the origin computed; here the
 * target chooses the bin, and one struct gets three different ops. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "mpi_accumulate.h" /* a bin, a sample, the arguments */

XRDMA_IFUNC(hist_insert)
{
    struct hist_args a;
    size_t region_bytes, in_bytes;
    struct bin *bins = xrdma_target(ctx, &region_bytes);
    const struct sample *in = xrdma_incoming(ctx, &in_bytes);
    if (args_size != sizeof(a) || !bins) return 1;
    memcpy(&a, args, sizeof(a));
    const int64_t nbins = (int64_t)(region_bytes / sizeof(struct bin));
    if (a.bin_width <= 0 || nbins == 0 || in_bytes % sizeof(struct sample)) return 2;

    /* This rank owns keys [lo, lo + nbins * bin_width). */
    const int64_t span = nbins * a.bin_width, lo = (int64_t)xrdma_rank(ctx) * span;
    const size_t n = in_bytes / sizeof(struct sample);
    struct sample s;
    for (size_t i = 0; i < n; ++i) { /* check the batch before changing anything */
        memcpy(&s, &in[i], sizeof(s));
        if (s.key < lo || s.key - lo >= span) return 3; /* not this rank's key */
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(&s, &in[i], sizeof(s)); /* incoming data need not be aligned */
        struct bin *b = &bins[(s.key - lo) / a.bin_width];
        int64_t v = s.value;
        b->count++;
        b->sum += v;
        if (v < b->min) b->min = v;
        if (v > b->max) b->max = v;
    }
    return 0;
}
