/* MPI-3 RMA BFS, level-synchronous: the parent array is a window
 * (MPI_Win_allocate, one passive epoch for the whole run), and each edge to
 * another rank's vertex is an MPI_Compare_and_swap of the parent into the
 * child's entry, which succeeds only while it is -1. Up to a batch of them
 * are in flight before an MPI_Win_flush_all. A rank claims its own
 * vertices with the same atomic operation in memory. After a level each
 * owner finds the vertices others claimed by comparing its parent array
 * with the vertices it had seen, and the sum of the next frontiers ends the
 * search. */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

struct rma {
    const struct graph *g;
    MPI_Win win;
    int64_t *pred;            /* the window */
    uint32_t *cur, *next;
    unsigned char *seen;      /* vertices already in a frontier */
    int64_t *parent, *result; /* a batch of compare-and-swaps: origin values, results */
    int batch;
};

static void *create(const struct graph *g, const struct bfs_options *o)
{
    struct rma *s = app_calloc(1, sizeof(*s));
    s->g = g;
    s->batch = o->batch;
    int rc = MPI_Win_allocate((MPI_Aint)sizeof(int64_t) * (g->nlocal + 1), sizeof(int64_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &s->pred, &s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_allocate");
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->cur = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->next = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->seen = app_alloc((size_t)g->nlocal + 1);
    s->parent = app_alloc(sizeof(int64_t) * (size_t)s->batch);
    s->result = app_alloc(sizeof(int64_t) * (size_t)s->batch);
    return s;
}

/* Complete the compare-and-swaps in flight (their results are not needed:
 * the owners find what was claimed). */
static void complete(struct rma *s, struct app_counts *c)
{
    int rc = MPI_Win_flush_all(s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_flush_all");
    c->syncs++;
}

static const int64_t *search(void *state, int64_t root, struct app_counts *c)
{
    struct rma *s = state;
    const struct graph *g = s->g;
    const int me = app_rank;
    const int64_t none = -1;
    int64_t *pred = s->pred;
    for (int64_t l = 0; l < g->nlocal; ++l) pred[l] = -1;
    memset(s->seen, 0, (size_t)g->nlocal);
    int64_t ncur = 0;
    if (bfs_owner(root) == me) {
        pred[bfs_local(root)] = root, s->seen[bfs_local(root)] = 1;
        s->cur[ncur++] = (uint32_t)bfs_local(root);
    }
    /* Every rank's reset done before anyone's first compare-and-swap. */
    double t = bfs_start_together(s->win, c);
    for (;;) {
        int64_t nnext = 0;
        int k = 0;
        for (int64_t i = 0; i < ncur; ++i) {
            const int64_t u = bfs_global(s->cur[i], me);
            for (int64_t e = g->row[s->cur[i]]; e < g->row[s->cur[i] + 1]; ++e) {
                const int64_t v = g->adj[e];
                const int o = bfs_owner(v);
                const int64_t l = bfs_local(v);
                if (o == me) {
                    int64_t expect = -1;
                    if (pred[l] < 0 &&
                        __atomic_compare_exchange_n(&pred[l], &expect, u, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                        s->seen[l] = 1, s->next[nnext++] = (uint32_t)l;
                    }
                    continue;
                }
                s->parent[k] = u;
                int rc = MPI_Compare_and_swap(&s->parent[k], &none, &s->result[k], MPI_INT64_T, o, l, s->win);
                if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Compare_and_swap");
                app_count(c, o, 2 * sizeof(int64_t)); /* compare and swap values */
                app_count(c, o, sizeof(int64_t));     /* the reply (counted as the origin's) */
                if (++k == s->batch) complete(s, c), k = 0;
            }
        }
        complete(s, c);
        app_phase(c, APP_WORK, &t); /* (the compare-and-swaps complete as they go: all work) */
        /* Every claim of this level done (ours by the flush, everyone's by
         * the barrier): the others' are in our array. The scan must end
         * before anyone starts the next level's claims (the sum below). */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(s->win);
        for (int64_t l = 0; l < g->nlocal; ++l)
            if (!s->seen[l] && pred[l] >= 0) s->seen[l] = 1, s->next[nnext++] = (uint32_t)l;
        if (!bfs_level_end(nnext, 2, c, &t)) break; /* the barrier and the sum */
        uint32_t *t = s->cur;
        s->cur = s->next, s->next = t, ncur = nnext;
    }
    return pred;
}

static void destroy(void *state)
{
    struct rma *s = state;
    MPI_Win_unlock_all(s->win);
    MPI_Win_free(&s->win);
    free(s->cur);
    free(s->next);
    free(s->seen);
    free(s->parent);
    free(s->result);
    free(s);
}

const struct bfs_variant bfs_rma = {"rma", create, search, destroy};
