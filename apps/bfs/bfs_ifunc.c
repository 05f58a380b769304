/* The XRDMA variant's function: a batch of frontier edges arrives at the
 * owner of their children (MPIX_Xput), which claims each child not reached
 * yet for its parent and appends it to its own next frontier, in place
 * (bfs_claim.h). Functions run one at a time at a target, so a batch is
 * applied atomically even when every rank sends to the same owner at once,
 * and the frontier count needs no atomic operation.
 *
 * Target region: the owner's whole window (bfs_claim.h); args: the parity
 * of the next frontier's queue (uint32). Built twice more for the tests
 * that show validation catches a broken function: BFS_MUTANT_DROP loses
 * the last edge of every batch, BFS_MUTANT_TWICE claims a child again
 * when it already has a parent (a later parent replaces the first). */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "bfs_claim.h"

XRDMA_IFUNC(bfs_claim_batch)
{
    size_t bytes, in_bytes;
    int64_t *base = xrdma_target(ctx, &bytes);
    const char *in = xrdma_incoming(ctx, &in_bytes);
    uint32_t parity;
    if (!base || args_size != sizeof(parity) || in_bytes % sizeof(uint64_t)) return 1;
    memcpy(&parity, args, sizeof(parity));
    const int64_t nlocal = (int64_t)(bytes / sizeof(int64_t) - BFS_WIN_COUNTS) / 2;
    if (bytes / sizeof(int64_t) != bfs_win_words(nlocal) || parity > 1) return 2;
    uint64_t n = in_bytes / sizeof(uint64_t);
    int64_t *pred = bfs_win_pred(base), *count = &base[parity];
    uint32_t *next = bfs_win_queue(base, nlocal, parity);
#if defined(BFS_MUTANT_DROP)
    if (n) n--;
#endif
#if defined(BFS_MUTANT_TWICE)
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t x;
        memcpy(&x, in + 8 * i, sizeof(x));
        const uint32_t l = (uint32_t)x;
        if ((int64_t)l >= nlocal) return 3;
        if (pred[l] < 0) next[(*count)++] = l;
        pred[l] = (int64_t)(x >> 32); /* the bug: a later parent replaces the first */
    }
    return 0;
#else
    const int64_t c = bfs_claim(pred, next, *count, nlocal, in, n);
    if (c < 0) return 3;
    *count = c;
    return 0;
#endif
}
