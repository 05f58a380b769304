/* The Graph500-style BFS: the distributed graph every variant searches, and
 * the interface of a variant (two-sided, MPI-3 RMA, XRDMA).
 *
 * Vertices are dealt out cyclically: vertex v lives on rank v % P at local
 * index v / P. Each rank holds the adjacency of its vertices (CSR, the
 * neighbours' global numbers, duplicates and self-loops removed by kernel
 * 1) and its slice of the generated edge list (for validation and for
 * counting the edges a search traversed). */
#ifndef APPS_BFS_BFS_H
#define APPS_BFS_BFS_H
#include <stdint.h>

#include "../common/app.h"

struct graph {
    int scale;
    int64_t n;          /* vertices, 2^scale */
    int64_t nlocal;     /* vertices of this rank */
    int64_t *row;       /* nlocal + 1 offsets into adj */
    uint32_t *adj;      /* neighbours (global numbers) */
    int64_t nedges;     /* generated edges of this rank's slice */
    int64_t *edges;     /* 2 * nedges: (u, v) pairs, as generated */
};

static inline int bfs_owner(int64_t v)
{
    return (int)(v % app_size);
}
static inline int64_t bfs_local(int64_t v)
{
    return v / app_size;
}
static inline int64_t bfs_global(int64_t local, int rank)
{
    return local * app_size + rank;
}
/* Vertices rank @p r owns. */
static inline int64_t bfs_nlocal(int64_t n, int r)
{
    return (n - r + app_size - 1) / app_size;
}

/* The start of a search in the one-sided variants: this rank's reset of its
 * window memory (MPI_Win_sync) and everyone's done before anyone's first
 * access (a barrier, counted and timed as synchronisation). Collective;
 * returns the time the search's phases count from. */
static inline double bfs_start_together(MPI_Win win, struct app_counts *c)
{
    MPI_Win_sync(win);
    double t = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    c->syncs++;
    app_phase(c, APP_SYNC, &t);
    return t;
}

/* The end of a level in every variant: the sum over the ranks of the next
 * level's vertices (0: the search is over). @p syncs counts the level's
 * synchronising calls, this sum included; the time since *t is charged to
 * synchronisation. Collective. */
static inline int64_t bfs_level_end(int64_t nnext, int syncs, struct app_counts *c, double *t)
{
    int64_t all;
    MPI_Allreduce(&nnext, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    c->syncs += (uint64_t)syncs;
    app_phase(c, APP_SYNC, t);
    return all;
}

struct bfs_options {
    int batch;          /* edges per message (two-sided, XRDMA) or RMA operations per flush */
    const char *image;  /* the ifunc image (NULL: beside the program) */
};

/* A variant: create its state (windows, buffers) once, search from a root
 * (returns this rank's parent array: -1 unreached, the root its own), and
 * count what it sent. */
struct bfs_variant {
    const char *name;
    void *(*create)(const struct graph *g, const struct bfs_options *o);
    const int64_t *(*search)(void *state, int64_t root, struct app_counts *c);
    void (*destroy)(void *state);
};

extern const struct bfs_variant bfs_a2a, bfs_p2p, bfs_rma, bfs_xrdma;

/* Kernel 1 (graph.c): generate the edge list (kronecker.c) and build the
 * graph. */
void graph_build(struct graph *g, int scale, uint64_t seed);
void graph_free(struct graph *g);
/* 64 (or @p want) search keys of degree >= 1 not counting self-loops, the
 * same on every rank (collective). Returns how many. */
int graph_search_keys(const struct graph *g, uint64_t seed, int want, int64_t *keys);

/* Validation (validate.c): the five rules of the Graph500 specification for
 * the parent array of a search from @p root (collective). Returns 1 if
 * every rule holds and sets *edges to the input edges of the component
 * (the numerator of TEPS); prints what failed otherwise. */
int bfs_validate(const struct graph *g, int64_t root, const int64_t *pred, int64_t *edges);

/* Kronecker edge generator (kronecker.c): edges [first, first + count) of
 * the graph of 2^scale vertices from @p seed, as (u, v) pairs, vertex
 * numbers already permuted. Any rank generates any edge the same way. */
void kronecker_edges(int scale, uint64_t seed, int64_t first, int64_t count, int64_t *out);

#endif
