/* Validation of a BFS parent array by the five rules of the Graph500
 * specification ("Validation"), written from its text:
 *   1. the BFS tree is a tree and does not contain cycles,
 *   2. each tree edge connects vertices whose BFS levels differ by exactly
 *      one,
 *   3. every edge in the input list has vertices with levels that differ by
 *      at most one or that both are not in the BFS tree,
 *   4. the BFS tree spans an entire connected component's vertices,
 *   5. a node and its BFS parent are joined by an edge of the original
 *      graph.
 * Levels are the depth of each vertex in the parent tree, found by
 * following parents from the root outwards, round by round: a reached
 * vertex that never gets a level sits on a cycle or on a chain that does
 * not end at the root (rule 1). Rules 3-5 are checked against the
 * generated edge list itself (each rank its slice), not against the graph
 * the variants searched, which also yields the edges of the component (the
 * numerator of TEPS, "counting any multiple edges and self-loops").
 * Plain MPI (Alltoallv), independent of every variant; not timed. */
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

#define CHUNK (1 << 18) /* queries per exchange, to bound memory */
#define REPORT 3        /* failures printed per rank and rule */

/* What an owner does with one query about its local vertex @p l: write
 * its answer (the exchange's width in words) to @p out. */
typedef void (*serve_fn)(int64_t l, void *ctx, int64_t *out);

/* Ask the owners of the n vertices q[] (global numbers): out[i * width ...]
 * gets the answer about q[i]. Collective: every rank must call it, with its
 * own n (0 included). */
static void exchange(const int64_t *q, int64_t n, int width, serve_fn serve, void *ctx, int64_t *out)
{
    const int P = app_size;
    int64_t chunks = (n + CHUNK - 1) / CHUNK, most;
    MPI_Allreduce(&chunks, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    int *sc = app_alloc(sizeof(int) * 4 * (size_t)(P + 1)), *sd = sc + P + 1, *rc = sd + P + 1, *rd = rc + P + 1;
    int *fill = app_alloc(sizeof(int) * (size_t)P), *sc2 = app_alloc(sizeof(int) * 4 * (size_t)P);
    int *sd2 = sc2 + P, *rc2 = sd2 + P, *rd2 = rc2 + P;
    int64_t *sq = app_alloc(sizeof(int64_t) * CHUNK), *pos = app_alloc(sizeof(int64_t) * CHUNK);
    for (int64_t c = 0; c < most; ++c) {
        const int64_t lo = c * CHUNK, len = lo >= n ? 0 : (n - lo < CHUNK ? n - lo : CHUNK);
        memset(sc, 0, sizeof(int) * (size_t)(P + 1));
        for (int64_t i = 0; i < len; ++i) sc[bfs_owner(q[lo + i])]++;
        sd[0] = 0;
        for (int r = 0; r < P; ++r) sd[r + 1] = sd[r] + sc[r];
        memcpy(fill, sd, sizeof(int) * (size_t)P);
        for (int64_t i = 0; i < len; ++i) {
            int o = bfs_owner(q[lo + i]);
            pos[fill[o]] = i;
            sq[fill[o]++] = bfs_local(q[lo + i]);
        }
        MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
        rd[0] = 0;
        for (int r = 0; r < P; ++r) rd[r + 1] = rd[r] + rc[r];
        int64_t *rq = app_alloc(sizeof(int64_t) * ((size_t)rd[P] + 1));
        MPI_Alltoallv(sq, sc, sd, MPI_INT64_T, rq, rc, rd, MPI_INT64_T, MPI_COMM_WORLD);
        int64_t *ans = app_alloc(sizeof(int64_t) * ((size_t)rd[P] * (size_t)width + 1));
        for (int i = 0; i < rd[P]; ++i) serve(rq[i], ctx, ans + (size_t)i * (size_t)width);
        if (width > 0) {
            int64_t *back = app_alloc(sizeof(int64_t) * ((size_t)len * (size_t)width + 1));
            for (int r = 0; r < P; ++r) {
                sc2[r] = rc[r] * width, sd2[r] = rd[r] * width;
                rc2[r] = sc[r] * width, rd2[r] = sd[r] * width;
            }
            MPI_Alltoallv(ans, sc2, sd2, MPI_INT64_T, back, rc2, rd2, MPI_INT64_T, MPI_COMM_WORLD);
            for (int64_t k = 0; k < len; ++k)
                memcpy(out + (size_t)(lo + pos[k]) * (size_t)width, back + (size_t)k * (size_t)width,
                       sizeof(int64_t) * (size_t)width);
            free(back);
        }
        free(rq);
        free(ans);
    }
    free(sc);
    free(fill);
    free(sc2);
    free(sq);
    free(pos);
}

struct state {
    const int64_t *pred;
    int64_t *level;
    unsigned char *marked; /* rule 5: the edge to the parent was seen */
};

static void serve_level(int64_t l, void *ctx, int64_t *out)
{
    out[0] = ((struct state *)ctx)->level[l];
}
static void serve_pred_level(int64_t l, void *ctx, int64_t *out)
{
    out[0] = ((struct state *)ctx)->pred[l];
    out[1] = ((struct state *)ctx)->level[l];
}
static void serve_mark(int64_t l, void *ctx, int64_t *out)
{
    (void)out;
    ((struct state *)ctx)->marked[l] = 1;
}

/* The sum of @p v over all ranks. */
static int64_t total(int64_t v)
{
    int64_t s;
    MPI_Allreduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

int bfs_validate(const struct graph *g, int64_t root, const int64_t *pred, int64_t *edges)
{
    const int64_t nl = g->nlocal;
    int64_t bad[6] = {0}; /* per rule (index 1-5), and parent values out of range (0) */
    struct state s = {pred, app_alloc(sizeof(int64_t) * ((size_t)nl + 1)), app_calloc((size_t)nl + 1, 1)};
    int64_t *q = app_alloc(sizeof(int64_t) * ((size_t)nl + 1)), *who = app_alloc(sizeof(int64_t) * ((size_t)nl + 1));
    int64_t *ans = app_alloc(sizeof(int64_t) * 2 * ((size_t)nl + 1));
    *edges = 0;

    for (int64_t l = 0; l < nl; ++l) {
        int64_t v = bfs_global(l, app_rank);
        s.level[l] = v == root ? 0 : -1;
        if (pred[l] < -1 || pred[l] >= g->n) {
            if (bad[0]++ < REPORT) app_warn("vertex %lld: parent %lld is not a vertex", (long long)v, (long long)pred[l]);
        } else if (v == root && pred[l] != root) {
            if (bad[1]++ < REPORT) app_warn("root %lld: parent %lld, not itself", (long long)v, (long long)pred[l]);
        }
    }
    if (total(bad[0] + bad[1])) goto done;

    /* Rule 1: levels from the root outwards; what is left never reaches it. */
    for (int64_t round = 0;; ++round) {
        int64_t n = 0;
        for (int64_t l = 0; l < nl; ++l)
            if (pred[l] >= 0 && s.level[l] < 0) who[n] = l, q[n++] = pred[l];
        exchange(q, n, 1, serve_level, &s, ans);
        int64_t set = 0;
        for (int64_t i = 0; i < n; ++i)
            if (ans[i] >= 0) s.level[who[i]] = ans[i] + 1, set++;
        int64_t left = total(n - set), progress = total(set);
        if (!left) break;
        if (!progress || round > g->n) {
            for (int64_t l = 0; l < nl; ++l)
                if (pred[l] >= 0 && s.level[l] < 0 && bad[1]++ < REPORT)
                    app_warn("rule 1: vertex %lld (parent %lld) is on a cycle or a chain away from the root",
                             (long long)bfs_global(l, app_rank), (long long)pred[l]);
            if (!bad[1]) bad[1] = 1; /* (another rank's vertices: it says which) */
            break;
        }
    }
    if (total(bad[1])) goto done;

    /* Rule 2: each tree edge joins levels k and k + 1. */
    {
        int64_t n = 0;
        for (int64_t l = 0; l < nl; ++l)
            if (pred[l] >= 0 && bfs_global(l, app_rank) != root) who[n] = l, q[n++] = pred[l];
        exchange(q, n, 1, serve_level, &s, ans);
        for (int64_t i = 0; i < n; ++i)
            if (ans[i] + 1 != s.level[who[i]] && bad[2]++ < REPORT)
                app_warn("rule 2: vertex %lld at level %lld, its parent %lld at level %lld",
                         (long long)bfs_global(who[i], app_rank), (long long)s.level[who[i]], (long long)q[i],
                         (long long)ans[i]);
    }

    /* Rules 3, 4 and 5 on every input edge: the parent and level of both
     * ends; an edge from a vertex to its parent marks that vertex. */
    int64_t in_component = 0;
    {
        const int64_t step = CHUNK / 2;
        int64_t *eq = app_alloc(sizeof(int64_t) * 2 * (size_t)step), *ea = app_alloc(sizeof(int64_t) * 4 * (size_t)step);
        int64_t *mark = app_alloc(sizeof(int64_t) * 2 * (size_t)step);
        int64_t chunks = (g->nedges + step - 1) / step, most;
        MPI_Allreduce(&chunks, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        for (int64_t c = 0; c < most; ++c) {
            int64_t lo = c * step, len = lo >= g->nedges ? 0 : (g->nedges - lo < step ? g->nedges - lo : step);
            memcpy(eq, g->edges + 2 * lo, sizeof(int64_t) * 2 * (size_t)len);
            exchange(eq, 2 * len, 2, serve_pred_level, &s, ea);
            int64_t nm = 0;
            for (int64_t i = 0; i < len; ++i) {
                int64_t u = eq[2 * i], v = eq[2 * i + 1];
                int64_t pu = ea[4 * i], lu = ea[4 * i + 1], pv = ea[4 * i + 2], lv = ea[4 * i + 3];
                if ((lu >= 0) != (lv >= 0)) {
                    if (bad[4]++ < REPORT)
                        app_warn("rule 4: edge %lld-%lld leaves the tree (levels %lld, %lld)", (long long)u,
                                 (long long)v, (long long)lu, (long long)lv);
                    continue;
                }
                if (lu < 0) continue;
                in_component++;
                if ((lu > lv ? lu - lv : lv - lu) > 1 && bad[3]++ < REPORT)
                    app_warn("rule 3: edge %lld-%lld joins levels %lld and %lld", (long long)u, (long long)v,
                             (long long)lu, (long long)lv);
                if (pv == u && v != root) mark[nm++] = v;
                if (pu == v && u != root) mark[nm++] = u;
            }
            exchange(mark, nm, 0, serve_mark, &s, NULL);
        }
        free(eq);
        free(ea);
        free(mark);
    }
    for (int64_t l = 0; l < nl; ++l)
        if (pred[l] >= 0 && bfs_global(l, app_rank) != root && !s.marked[l] && bad[5]++ < REPORT)
            app_warn("rule 5: vertex %lld and its parent %lld are not joined by an input edge",
                     (long long)bfs_global(l, app_rank), (long long)pred[l]);
    *edges = total(in_component);

done:;
    int64_t all[6];
    MPI_Allreduce(bad, all, 6, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int ok = 1;
    for (int i = 0; i < 6; ++i) ok &= all[i] == 0;
    if (!ok && app_rank == 0)
        app_warn("validation from root %lld failed: rule 1: %lld, 2: %lld, 3: %lld, 4: %lld, 5: %lld, parent out "
                 "of range: %lld",
                 (long long)root, (long long)all[1], (long long)all[2], (long long)all[3], (long long)all[4],
                 (long long)all[5], (long long)all[0]);
    free(s.level);
    free(s.marked);
    free(q);
    free(who);
    free(ans);
    return ok;
}
