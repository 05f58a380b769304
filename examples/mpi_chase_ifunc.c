/* The injected step of examples/mpi_pointer_chase.c (and of
 * benchmarks/xrdma_pointer_chase.c, built from this file).
 *
 * Rank 0 calls MPIX_Xget on the owner of a list node with a chase_args
 * argument. At each rank this function follows the list through the rank's
 * own window (in place, no copies) while it stays local, then either
 * xrdma_forward()s itself to the owner of the next node, or, when the hops
 * are done, xrdma_reply()s the final node index straight to rank 0.
 *
 * Only rank 0 loaded this code (MPIX_Ifunc_load): every other rank receives
 * it over the network with the first operation that reaches it.
 *
 * Window layout at every rank: nodes_per_rank uint64 "next" entries (global
 * node indices; node g lives at rank g / nodes_per_rank), then two uint64
 * counters this function keeps: steps run here, and how many forwarded. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "xrdma_chase.h" /* struct chase_args */

XRDMA_IFUNC(chase)
{
    struct chase_args a;
    size_t bytes;
    uint64_t *base = xrdma_win_base(ctx, &bytes);
    if (args_size != sizeof(a) || !base) return 1;
    memcpy(&a, args, sizeof(a));

    const uint64_t npr = a.nodes_per_rank;
    if (npr == 0 || bytes / 8 < npr + 2) return 2; /* not our window layout */
    const uint64_t lo = (uint64_t)xrdma_rank(ctx) * npr;
    if (a.node - lo >= npr) return 3; /* sent to the wrong rank */

    while (a.remaining > 0 && a.node - lo < npr) {
        a.node = base[a.node - lo];
        a.remaining--;
    }
    base[npr]++; /* steps run at this rank */
    if (a.remaining == 0) return xrdma_reply(ctx, &a.node, sizeof(a.node)) != 0;

    uint64_t owner = a.node / npr;
    if (owner >= (uint64_t)xrdma_size(ctx)) return 4; /* corrupt list */
    base[npr + 1]++; /* forwarded */
    return xrdma_forward(ctx, (int)owner, &a, sizeof(a)) != 0;
}
