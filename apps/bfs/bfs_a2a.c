/* Two-sided BFS, level-synchronous, with one MPI_Alltoallv per level: each
 * rank walks its frontier's adjacency, claims its own vertices at once,
 * and sorts the edges to other ranks' vertices by owner (a pass that keeps
 * them and counts them per owner, then one that places them in the send
 * buffer); the owners claim what they receive (bfs_claim.h) and the sum of
 * the next frontiers ends the search. */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "bfs_claim.h"

struct a2a {
    const struct graph *g;
    int64_t *pred;
    uint64_t *stage;   /* a level's edges to other ranks, in walk order ... */
    uint32_t *owner;   /* ... and their owners */
    uint32_t *cur, *next;
    int *sc, *sd, *rc, *rd, *fill;
    uint64_t *sbuf, *rbuf;
    size_t scap, rcap;
};

static void *create(const struct graph *g, const struct bfs_options *o)
{
    (void)o;
    const int P = app_size;
    struct a2a *s = app_calloc(1, sizeof(*s));
    s->g = g;
    s->pred = app_alloc(sizeof(int64_t) * ((size_t)g->nlocal + 1));
    s->stage = app_alloc(sizeof(uint64_t) * ((size_t)g->row[g->nlocal] + 1));
    s->owner = app_alloc(sizeof(uint32_t) * ((size_t)g->row[g->nlocal] + 1));
    s->cur = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->next = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->sc = app_calloc(5 * ((size_t)P + 1), sizeof(int));
    s->sd = s->sc + P + 1, s->rc = s->sd + P + 1, s->rd = s->rc + P + 1, s->fill = s->rd + P + 1;
    return s;
}

/* @p buf holds at least @p n words. */
static void reserve(uint64_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap) return;
    free(*buf);
    *cap = n + n / 4;
    *buf = app_alloc(sizeof(uint64_t) * *cap);
}

static const int64_t *search(void *state, int64_t root, struct app_counts *c)
{
    struct a2a *s = state;
    const struct graph *g = s->g;
    const int P = app_size, me = app_rank;
    int64_t *pred = s->pred;
    for (int64_t l = 0; l < g->nlocal; ++l) pred[l] = -1;
    int64_t ncur = 0;
    if (bfs_owner(root) == me) pred[bfs_local(root)] = root, s->cur[ncur++] = (uint32_t)bfs_local(root);
    double t = MPI_Wtime();
    for (;;) {
        int64_t nnext = 0, nstage = 0;
        memset(s->sc, 0, sizeof(int) * (size_t)P);
        for (int64_t i = 0; i < ncur; ++i) {
            const int64_t u = bfs_global(s->cur[i], me);
            for (int64_t e = g->row[s->cur[i]]; e < g->row[s->cur[i] + 1]; ++e) {
                const int64_t v = g->adj[e];
                const int o = bfs_owner(v);
                if (o != me) {
                    s->sc[o]++;
                    s->owner[nstage] = (uint32_t)o;
                    s->stage[nstage++] = bfs_edge_word(u, bfs_local(v));
                } else if (pred[bfs_local(v)] < 0) {
                    pred[bfs_local(v)] = u;
                    s->next[nnext++] = (uint32_t)bfs_local(v);
                }
            }
        }
        s->sd[0] = 0;
        for (int r = 0; r < P; ++r) s->sd[r + 1] = s->sd[r] + s->sc[r];
        reserve(&s->sbuf, &s->scap, (size_t)s->sd[P]);
        memcpy(s->fill, s->sd, sizeof(int) * (size_t)P);
        for (int64_t i = 0; i < nstage; ++i) s->sbuf[s->fill[s->owner[i]]++] = s->stage[i];
        app_phase(c, APP_WORK, &t);
        MPI_Alltoall(s->sc, 1, MPI_INT, s->rc, 1, MPI_INT, MPI_COMM_WORLD);
        s->rd[0] = 0;
        for (int r = 0; r < P; ++r) s->rd[r + 1] = s->rd[r] + s->rc[r];
        reserve(&s->rbuf, &s->rcap, (size_t)s->rd[P]);
        MPI_Alltoallv(s->sbuf, s->sc, s->sd, MPI_UINT64_T, s->rbuf, s->rc, s->rd, MPI_UINT64_T, MPI_COMM_WORLD);
        for (int r = 0; r < P; ++r) {
            app_count(c, r, sizeof(int)); /* the count */
            if (s->sc[r]) app_count(c, r, sizeof(uint64_t) * (uint64_t)s->sc[r]);
        }
        app_phase(c, APP_COMPLETE, &t);
        nnext = bfs_claim(pred, s->next, nnext, g->nlocal, s->rbuf, (uint64_t)s->rd[P]);
        if (nnext < 0) app_die("bfs a2a: an edge names a vertex this rank does not have");
        app_phase(c, APP_WORK, &t);
        if (!bfs_level_end(nnext, 3, c, &t)) break; /* the two exchanges and the sum */
        uint32_t *t = s->cur;
        s->cur = s->next, s->next = t, ncur = nnext;
    }
    return pred;
}

static void destroy(void *state)
{
    struct a2a *s = state;
    free(s->pred);
    free(s->stage);
    free(s->owner);
    free(s->cur);
    free(s->next);
    free(s->sc);
    free(s->sbuf);
    free(s->rbuf);
    free(s);
}

const struct bfs_variant bfs_a2a = {"a2a", create, search, destroy};
