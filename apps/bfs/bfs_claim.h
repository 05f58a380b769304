/* The step every BFS variant that ships edges to their owner runs there:
 * claim the parent of each vertex not reached yet and append it to the
 * owner's next frontier. The same code runs in the two-sided variants
 * (after a receive) and in the XRDMA function (bfs_ifunc.c), so that they
 * differ only in how the edges travel. Also the layout of the XRDMA
 * variant's window. No MPI, no C library: the ifunc includes it. */
#ifndef APPS_BFS_CLAIM_H
#define APPS_BFS_CLAIM_H
#include <stdint.h>

/* A frontier edge on the wire: the parent's global number in the high 32
 * bits, the child's local index at its owner in the low 32. */
static inline uint64_t bfs_edge_word(int64_t parent, int64_t child_local)
{
    return (uint64_t)parent << 32 | (uint64_t)child_local;
}

/* Claim the children of the @p n edges @p w for their parents where no
 * parent was set (pred < 0), appending each child claimed to @p next after
 * @p count entries. Returns the new count, or -1 if an edge names a vertex
 * past @p nlocal (nothing after it is applied). */
static inline int64_t bfs_claim(int64_t *pred, uint32_t *next, int64_t count, int64_t nlocal, const void *w,
                                uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t x; /* (data that arrived with an X-operation need not be aligned) */
        __builtin_memcpy(&x, (const char *)w + 8 * i, sizeof(x));
        const uint32_t l = (uint32_t)x;
        if ((int64_t)l >= nlocal) return -1;
        if (pred[l] < 0) {
            pred[l] = (int64_t)(x >> 32);
            next[count++] = l;
        }
    }
    return count;
}

/* The XRDMA variant's window, in 8-byte words: the two frontier counts,
 * the parent array, then two frontier queues of 32-bit local indices (the
 * next level's queue is the one the current level does not read). */
#define BFS_WIN_COUNTS 2
static inline uint64_t bfs_win_words(int64_t nlocal)
{
    return BFS_WIN_COUNTS + 2 * (uint64_t)nlocal;
}
static inline int64_t *bfs_win_pred(int64_t *base)
{
    return base + BFS_WIN_COUNTS;
}
static inline uint32_t *bfs_win_queue(int64_t *base, int64_t nlocal, unsigned parity)
{
    return (uint32_t *)(base + BFS_WIN_COUNTS + nlocal) + (parity ? nlocal : 0);
}

#endif
