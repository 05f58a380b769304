/* Kernel 1 of the Graph500 specification: from the generated edge list to
 * the distributed graph every variant searches, and the sampling of the
 * search keys ("Randomly sample 64 unique search keys with degree at least
 * one, not counting self-loops").
 *
 * Each rank generates an equal slice of the edge list (kronecker.c) and
 * sends each edge (u, v) to the owners of both ends, which keep the
 * adjacency of their vertices as CSR, sorted, without duplicates and
 * self-loops (the specification lets the kernels ignore both "if
 * correctness is preserved"; validation still sees every generated edge). */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

#define EDGE_FACTOR 16

static int by_word(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void graph_build(struct graph *g, int scale, uint64_t seed)
{
    const int P = app_size;
    memset(g, 0, sizeof(*g));
    g->scale = scale;
    g->n = (int64_t)1 << scale;
    g->nlocal = bfs_nlocal(g->n, app_rank);
    const int64_t m = EDGE_FACTOR * g->n;
    const int64_t first = m * app_rank / P, last = m * (app_rank + 1) / P;
    g->nedges = last - first;
    g->edges = app_alloc(sizeof(int64_t) * 2 * (size_t)g->nedges);
    kronecker_edges(scale, seed, first, g->nedges, g->edges);

    /* Both directions of every edge to the owners of its ends, as
     * (local index << 32 | neighbour). */
    int *scount = app_calloc((size_t)P, sizeof(int)), *rcount = app_calloc((size_t)P, sizeof(int));
    int *sdispl = app_calloc((size_t)P + 1, sizeof(int)), *rdispl = app_calloc((size_t)P + 1, sizeof(int));
    for (int64_t i = 0; i < g->nedges; ++i) {
        int64_t u = g->edges[2 * i], v = g->edges[2 * i + 1];
        if (u == v) continue;
        scount[bfs_owner(u)]++;
        scount[bfs_owner(v)]++;
    }
    for (int r = 0; r < P; ++r) sdispl[r + 1] = sdispl[r] + scount[r];
    uint64_t *sbuf = app_alloc(sizeof(uint64_t) * (size_t)sdispl[P]);
    int *fill = app_alloc(sizeof(int) * (size_t)P);
    memcpy(fill, sdispl, sizeof(int) * (size_t)P);
    for (int64_t i = 0; i < g->nedges; ++i) {
        int64_t u = g->edges[2 * i], v = g->edges[2 * i + 1];
        if (u == v) continue;
        sbuf[fill[bfs_owner(u)]++] = (uint64_t)bfs_local(u) << 32 | (uint64_t)v;
        sbuf[fill[bfs_owner(v)]++] = (uint64_t)bfs_local(v) << 32 | (uint64_t)u;
    }
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < P; ++r) rdispl[r + 1] = rdispl[r] + rcount[r];
    uint64_t *rbuf = app_alloc(sizeof(uint64_t) * (size_t)rdispl[P]);
    MPI_Alltoallv(sbuf, scount, sdispl, MPI_UINT64_T, rbuf, rcount, rdispl, MPI_UINT64_T, MPI_COMM_WORLD);
    free(sbuf);

    /* Sorted by (local, neighbour): rows in order, duplicates adjacent. */
    const size_t nrecv = (size_t)rdispl[P];
    qsort(rbuf, nrecv, sizeof(uint64_t), by_word);
    g->row = app_calloc((size_t)g->nlocal + 1, sizeof(int64_t));
    g->adj = app_alloc(sizeof(uint32_t) * nrecv);
    int64_t k = 0;
    for (size_t i = 0; i < nrecv; ++i) {
        if (i > 0 && rbuf[i] == rbuf[i - 1]) continue;
        int64_t local = (int64_t)(rbuf[i] >> 32);
        if (local >= g->nlocal) app_die("kernel 1: vertex %lld is not this rank's", (long long)local);
        g->adj[k++] = (uint32_t)rbuf[i];
        g->row[local + 1]++;
    }
    for (int64_t l = 0; l < g->nlocal; ++l) g->row[l + 1] += g->row[l];
    free(rbuf);
    free(scount);
    free(rcount);
    free(sdispl);
    free(rdispl);
    free(fill);
}

void graph_free(struct graph *g)
{
    free(g->row);
    free(g->adj);
    free(g->edges);
    memset(g, 0, sizeof(*g));
}

int graph_search_keys(const struct graph *g, uint64_t seed, int want, int64_t *keys)
{
    /* Every rank draws the same candidates; their owners say whether they
     * have a neighbour other than themselves (self-loops are not in adj). */
    enum { ROUND = 64 };
    int found = 0;
    uint64_t st = seed;
    for (int64_t tried = 0; found < want && tried < g->n; tried += ROUND) {
        int64_t cand[ROUND];
        int deg[ROUND], all[ROUND];
        for (int i = 0; i < ROUND; ++i) {
            cand[i] = (int64_t)(app_splitmix64(&st) & (uint64_t)(g->n - 1));
            deg[i] = 0;
            if (bfs_owner(cand[i]) == app_rank) {
                int64_t l = bfs_local(cand[i]);
                deg[i] = g->row[l + 1] > g->row[l];
            }
        }
        MPI_Allreduce(deg, all, ROUND, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < ROUND && found < want; ++i) {
            if (!all[i]) continue;
            int dup = 0;
            for (int j = 0; j < found; ++j) dup |= keys[j] == cand[i];
            if (!dup) keys[found++] = cand[i];
        }
    }
    return found;
}
