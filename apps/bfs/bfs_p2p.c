/* Two-sided BFS, level-synchronous, the way the Graph500 reference's MPI
 * code (bfs_simple) does it: a coalescing buffer per destination, sent
 * with MPI_Isend as soon as it holds a batch of edges (two per destination,
 * so that one fills while the other travels), a receive posted from every
 * rank, and the arrivals claimed (bfs_claim.h) whenever the sender polls,
 * so that communication overlaps the walk of the frontier. The last buffer
 * of a level goes with an end tag; a level ends when every rank's end has
 * arrived, and the sum of the next frontiers ends the search. */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"
#include "bfs_claim.h"

#define TAG_DATA 1
#define TAG_END 2
#define POLL_EVERY 4096 /* edges walked between two looks at the receives */

struct p2p {
    const struct graph *g;
    int64_t *pred;
    uint32_t *cur, *next;
    int64_t nnext;
    int batch, ends;
    uint64_t *obuf, *ibuf; /* 2 sending halves per destination; a receive buffer per source */
    int *ofill, *oside;
    MPI_Request *oreq, *ireq;
    struct app_counts *c;
};

static void post_recv(struct p2p *s, int r)
{
    MPI_Irecv(s->ibuf + (size_t)r * (size_t)s->batch, s->batch, MPI_UINT64_T, r, MPI_ANY_TAG, MPI_COMM_WORLD,
              &s->ireq[r]);
}

static void *create(const struct graph *g, const struct bfs_options *o)
{
    const int P = app_size;
    struct p2p *s = app_calloc(1, sizeof(*s));
    s->g = g;
    s->batch = o->batch;
    s->pred = app_alloc(sizeof(int64_t) * ((size_t)g->nlocal + 1));
    s->cur = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->next = app_alloc(sizeof(uint32_t) * ((size_t)g->nlocal + 1));
    s->obuf = app_alloc(sizeof(uint64_t) * 2 * (size_t)P * (size_t)s->batch);
    s->ibuf = app_alloc(sizeof(uint64_t) * (size_t)P * (size_t)s->batch);
    s->ofill = app_calloc((size_t)P, sizeof(int));
    s->oside = app_calloc((size_t)P, sizeof(int));
    s->oreq = app_alloc(sizeof(MPI_Request) * 2 * (size_t)P);
    s->ireq = app_alloc(sizeof(MPI_Request) * (size_t)P);
    for (int r = 0; r < 2 * P; ++r) s->oreq[r] = MPI_REQUEST_NULL;
    for (int r = 0; r < P; ++r) {
        s->ireq[r] = MPI_REQUEST_NULL;
        if (r != app_rank) post_recv(s, r);
    }
    return s;
}

/* Claim what arrived from rank @p r and post its receive again. */
static void arrived(struct p2p *s, int r, const MPI_Status *st)
{
    int n;
    MPI_Get_count(st, MPI_UINT64_T, &n);
    s->nnext = bfs_claim(s->pred, s->next, s->nnext, s->g->nlocal, s->ibuf + (size_t)r * (size_t)s->batch,
                         (uint64_t)n);
    if (s->nnext < 0) app_die("bfs p2p: an edge names a vertex this rank does not have");
    if (st->MPI_TAG == TAG_END) s->ends++;
    post_recv(s, r);
}

static void poll(struct p2p *s)
{
    for (;;) {
        int idx, flag;
        MPI_Status st;
        MPI_Testany(app_size, s->ireq, &idx, &flag, &st);
        if (!flag || idx == MPI_UNDEFINED) return;
        arrived(s, idx, &st);
    }
}

/* Send destination @p d's filling half with @p tag; the other half, which
 * fills next, must have left first (its receiver may be waiting for us:
 * keep receiving meanwhile). */
static void send(struct p2p *s, int d, int tag)
{
    const size_t half = (size_t)d * 2 + (size_t)s->oside[d];
    MPI_Isend(s->obuf + half * (size_t)s->batch, s->ofill[d], MPI_UINT64_T, d, tag, MPI_COMM_WORLD, &s->oreq[half]);
    app_count(s->c, d, sizeof(uint64_t) * (uint64_t)s->ofill[d]);
    s->oside[d] ^= 1;
    s->ofill[d] = 0;
    MPI_Request *other = &s->oreq[(size_t)d * 2 + (size_t)s->oside[d]];
    while (*other != MPI_REQUEST_NULL) {
        int done;
        MPI_Test(other, &done, MPI_STATUS_IGNORE);
        if (!done) poll(s);
    }
}

static const int64_t *search(void *state, int64_t root, struct app_counts *c)
{
    struct p2p *s = state;
    const struct graph *g = s->g;
    const int P = app_size, me = app_rank;
    int64_t *pred = s->pred;
    s->c = c;
    for (int64_t l = 0; l < g->nlocal; ++l) pred[l] = -1;
    int64_t ncur = 0;
    if (bfs_owner(root) == me) pred[bfs_local(root)] = root, s->cur[ncur++] = (uint32_t)bfs_local(root);
    double t = MPI_Wtime();
    for (;;) {
        s->nnext = 0;
        unsigned walked = 0;
        for (int64_t i = 0; i < ncur; ++i) {
            const int64_t u = bfs_global(s->cur[i], me);
            for (int64_t e = g->row[s->cur[i]]; e < g->row[s->cur[i] + 1]; ++e) {
                const int64_t v = g->adj[e];
                const int o = bfs_owner(v);
                if (o == me) {
                    if (pred[bfs_local(v)] < 0) {
                        pred[bfs_local(v)] = u;
                        s->next[s->nnext++] = (uint32_t)bfs_local(v);
                    }
                } else {
                    s->obuf[((size_t)o * 2 + (size_t)s->oside[o]) * (size_t)s->batch + (size_t)s->ofill[o]++] =
                        bfs_edge_word(u, bfs_local(v));
                    if (s->ofill[o] == s->batch) send(s, o, TAG_DATA);
                }
                if (++walked % POLL_EVERY == 0) poll(s);
            }
        }
        app_phase(c, APP_WORK, &t);
        for (int k = 1; k < P; ++k) send(s, (me + k) % P, TAG_END);
        while (s->ends < P - 1) {
            int idx;
            MPI_Status st;
            MPI_Waitany(P, s->ireq, &idx, &st);
            arrived(s, idx, &st);
        }
        s->ends = 0;
        MPI_Waitall(2 * P, s->oreq, MPI_STATUSES_IGNORE);
        app_phase(c, APP_COMPLETE, &t);
        if (!bfs_level_end(s->nnext, 1, c, &t)) break;
        uint32_t *t = s->cur;
        s->cur = s->next, s->next = t, ncur = s->nnext;
    }
    return pred;
}

static void destroy(void *state)
{
    struct p2p *s = state;
    for (int r = 0; r < app_size; ++r)
        if (s->ireq[r] != MPI_REQUEST_NULL) {
            MPI_Cancel(&s->ireq[r]);
            MPI_Wait(&s->ireq[r], MPI_STATUS_IGNORE);
        }
    free(s->pred);
    free(s->cur);
    free(s->next);
    free(s->obuf);
    free(s->ibuf);
    free(s->ofill);
    free(s->oside);
    free(s->oreq);
    free(s->ireq);
    free(s);
}

const struct bfs_variant bfs_p2p = {"p2p", create, search, destroy};
