/* XRDMA BFS, level-synchronous: the frontier's edges go in batches to the
 * owners of their children with MPIX_Xput, and the function shipped with
 * them (bfs_ifunc.c) claims each child at its owner and appends it to the
 * owner's next frontier in place. The window (MPI_Win_allocate, one passive
 * epoch for the whole run) holds the parent array and the frontier queues
 * (bfs_claim.h). A rank's own edges take the same way (an Xput to itself
 * runs at once, under the lock that keeps functions at one target one at a
 * time). After a level, MPI_Win_flush_all completes this rank's batches, a
 * barrier everyone's, and the sum of the next frontiers ends the search. */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "bfs_claim.h"

#define IMAGE "bfs_ifunc.xfn"

struct xr {
    const struct graph *g;
    MPI_Win win;
    int64_t *base; /* the window */
    MPIX_Ifunc claim;
    int batch;
    uint64_t *buf; /* a batch per destination */
    int *fill;
};

static void *create(const struct graph *g, const struct bfs_options *o)
{
    struct xr *s = app_calloc(1, sizeof(*s));
    s->g = g;
    s->batch = o->batch;
    int rc = MPI_Win_allocate((MPI_Aint)(sizeof(int64_t) * bfs_win_words(g->nlocal)), sizeof(int64_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &s->base, &s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_allocate");
    MPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->claim = app_load_ifunc(o->image, IMAGE, "bfs_claim_batch");
    s->buf = app_alloc(sizeof(uint64_t) * (size_t)app_size * (size_t)s->batch);
    s->fill = app_calloc((size_t)app_size, sizeof(int));
    return s;
}

/* Ship destination @p d's batch; it claims into the queue of @p parity. */
static void ship(struct xr *s, int d, uint32_t parity, struct app_counts *c)
{
    const int n = s->fill[d];
    s->fill[d] = 0;
    int rc = MPIX_Xput(s->buf + (size_t)d * (size_t)s->batch, n, MPI_UINT64_T, d, 0,
                       (int)bfs_win_words(bfs_nlocal(s->g->n, d)), MPI_INT64_T, s->claim, &parity, sizeof(parity),
                       s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPIX_Xput");
    app_count(c, d, sizeof(uint64_t) * (uint64_t)n + sizeof(parity));
}

static const int64_t *search(void *state, int64_t root, struct app_counts *c)
{
    struct xr *s = state;
    const struct graph *g = s->g;
    const int P = app_size, me = app_rank;
    int64_t *pred = bfs_win_pred(s->base);
    for (int64_t l = 0; l < g->nlocal; ++l) pred[l] = -1;
    s->base[0] = s->base[1] = 0;
    uint32_t parity = 0; /* the queue the current level reads */
    if (bfs_owner(root) == me) {
        pred[bfs_local(root)] = root;
        bfs_win_queue(s->base, g->nlocal, parity)[s->base[parity]++] = (uint32_t)bfs_local(root);
    }
    /* Every rank's reset done before anyone's first batch. */
    double t = bfs_start_together(s->win, c);
    for (;;) {
        const uint32_t *cur = bfs_win_queue(s->base, g->nlocal, parity);
        const int64_t ncur = s->base[parity];
        for (int64_t i = 0; i < ncur; ++i) {
            const int64_t u = bfs_global(cur[i], me);
            for (int64_t e = g->row[cur[i]]; e < g->row[cur[i] + 1]; ++e) {
                const int64_t v = g->adj[e];
                const int o = bfs_owner(v);
                /* (Others' claims may be writing our array: a parent once
                 * set stays, so a stale -1 only costs an edge.) */
                if (o == me && __atomic_load_n(&pred[bfs_local(v)], __ATOMIC_RELAXED) >= 0) continue;
                s->buf[(size_t)o * (size_t)s->batch + (size_t)s->fill[o]++] = bfs_edge_word(u, bfs_local(v));
                if (s->fill[o] == s->batch) ship(s, o, !parity, c);
            }
        }
        for (int k = 1; k <= P; ++k) {
            int d = (me + k) % P;
            if (s->fill[d]) ship(s, d, !parity, c);
        }
        /* The queue just read fills at the next level, which others may
         * begin as soon as they leave the barrier below. */
        s->base[parity] = 0;
        app_phase(c, APP_WORK, &t);
        int rc = MPI_Win_flush_all(s->win);
        if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_flush_all (a claim failed)");
        app_phase(c, APP_COMPLETE, &t);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(s->win);
        if (!bfs_level_end(s->base[!parity], 3, c, &t)) break; /* the flush, the barrier and the sum */
        parity = !parity;
    }
    return pred;
}

static void destroy(void *state)
{
    struct xr *s = state;
    MPI_Win_unlock_all(s->win);
    MPIX_Ifunc_free(&s->claim);
    MPI_Win_free(&s->win);
    free(s->buf);
    free(s->fill);
    free(s);
}

const struct bfs_variant bfs_xrdma = {"xrdma", create, search, destroy};
