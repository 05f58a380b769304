/* The pointer-chase programs' shared part: chase_common.h. */
#define _GNU_SOURCE
#include "chase_common.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIST_SEED 0x5eed1234abcdULL
#define START_SEED 0x57a27ULL

/* ---- the list ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n) /* uniform in [0, n), no modulo bias */
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do x = splitmix64(s);
    while (x >= limit);
    return x % n;
}

static double unit(uint64_t *s) { return (double)(splitmix64(s) >> 11) * 0x1.0p-53; }

uint64_t *chase_build_list(uint64_t npr, int size, double loc, double *measured)
{
    uint64_t n = npr * (uint64_t)size, st = LIST_SEED ^ (uint64_t)(loc * 1e6);
    uint64_t *next = malloc(n * sizeof(*next)), *seq = malloc(n * sizeof(*seq));
    uint64_t *left = calloc((size_t)size, sizeof(*left)), *perm = malloc(n * sizeof(*perm));
    int *owner = malloc(n * sizeof(*owner));
    if (!next || !seq || !left || !perm || !owner) {
        free(next), free(seq), free(left), free(perm), free(owner);
        return NULL;
    }
    /* The owners along the cycle. */
    for (int r = 0; r < size; ++r) left[r] = npr;
    int cur = (int)below(&st, (uint64_t)size);
    for (uint64_t i = 0; i < n; ++i) {
        if (i > 0 && !(left[cur] && unit(&st) < loc)) {
            uint64_t others = 0;
            for (int r = 0; r < size; ++r) others += r != cur && left[r];
            if (others) {
                uint64_t k = below(&st, others);
                for (int r = 0; r < size; ++r)
                    if (r != cur && left[r] && k-- == 0) {
                        cur = r;
                        break;
                    }
            }
        }
        owner[i] = cur;
        left[cur]--;
    }
    /* Each rank's nodes in random order along the cycle. */
    for (uint64_t i = 0; i < n; ++i) perm[i] = i;
    for (int r = 0; r < size; ++r) {
        uint64_t *p = perm + (uint64_t)r * npr;
        for (uint64_t i = npr - 1; i > 0; --i) { /* Fisher-Yates */
            uint64_t j = below(&st, i + 1), t = p[i];
            p[i] = p[j], p[j] = t;
        }
        left[r] = 0;
    }
    for (uint64_t i = 0; i < n; ++i) seq[i] = perm[(uint64_t)owner[i] * npr + left[owner[i]]++];
    uint64_t same = 0;
    for (uint64_t i = 0; i < n; ++i) {
        next[seq[i]] = seq[(i + 1) % n];
        same += owner[i] == owner[(i + 1) % n];
    }
    if (measured) *measured = (double)same / (double)n;
    free(seq), free(left), free(perm), free(owner);
    return next;
}

uint64_t chase_start_node(int i, uint64_t n)
{
    uint64_t st = START_SEED + (uint64_t)i * 7919;
    return below(&st, n);
}

struct chase_walk chase_walk(const uint64_t *next, uint64_t npr, uint64_t start, uint64_t depth)
{
    struct chase_walk w = {0, 0, 0};
    uint64_t node = start, hop = 0;
    while (hop < depth && node / npr == 0) node = next[node], ++hop; /* rank 0's own */
    if (hop < depth) {
        uint64_t owner = node / npr;
        w.messages = 2; /* the first message and the reply */
        for (; hop < depth; ++hop) {
            if (node / npr != owner) owner = node / npr, w.messages++;
            if (node / npr != 0) w.remote_hops++;
            node = next[node];
        }
    }
    w.answer = node;
    return w;
}

void *chase_list_window(int create, MPI_Aint bytes, MPI_Info info, uint64_t **base, MPI_Win *win)
{
    void *owned = NULL;
    if (create) {
        owned = *base = malloc((size_t)bytes);
        if (!owned) {
            fprintf(stderr, "chase: out of memory for a window of %ld bytes\n", (long)bytes);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Win_create(*base, bytes, 8, info, MPI_COMM_WORLD, win);
    } else {
        MPI_Win_allocate(bytes, 8, info, MPI_COMM_WORLD, base, win);
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    return owned;
}

int chase_get(const char *prog, MPI_Win win, const uint64_t *base, uint64_t npr, uint64_t start, uint64_t depth,
              int requests, uint64_t *out)
{
    uint64_t node = start;
    for (uint64_t h = 0; h < depth; ++h) {
        int owner = (int)(node / npr);
        if (owner == 0) {
            node = base[node];
            continue;
        }
        uint64_t v;
        int rc;
        if (requests) {
            MPI_Request rq;
            rc = MPI_Rget(&v, 1, MPI_UINT64_T, owner, (MPI_Aint)(node % npr), 1, MPI_UINT64_T, win, &rq);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Get(&v, 1, MPI_UINT64_T, owner, (MPI_Aint)(node % npr), 1, MPI_UINT64_T, win);
            if (rc == MPI_SUCCESS) rc = MPI_Win_flush(owner, win);
        }
        if (rc != MPI_SUCCESS) return chase_report(prog, rc, requests ? "MPI_Rget" : "MPI_Get", start);
        node = v;
    }
    *out = node;
    return MPI_SUCCESS;
}

int chase_report(const char *prog, int rc, const char *what, uint64_t start)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "%s: %s (chase from node %" PRIu64 "): %s\n", prog, what, start, msg);
    return rc;
}

/* ---- the command line -------------------------------------------------------- */

int chase_number(const char *arg, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 0);
    if (errno || end == arg || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static void chase_parse(int argc, char **argv, int rank, const struct chase_cli *cli, struct chase_options *o)
{
    struct option lo[40] = {
        {"nodes", required_argument, 0, 'n'}, {"depth", required_argument, 0, 'd'},
        {"reps", required_argument, 0, 'r'},  {"warmup", required_argument, 0, cli->warmup_short},
        {"csv", no_argument, 0, 'C'},         {"help", no_argument, 0, 'h'},
    };
    int nlo = 6;
    if (cli->has_image) lo[nlo++] = (struct option){"image", required_argument, 0, 'I'};
    for (const struct option *e = cli->extra; e && e->name && nlo < 39; ++e) lo[nlo++] = *e;
    lo[nlo] = (struct option){0, 0, 0, 0};
    char shorts[64];
    snprintf(shorts, sizeof(shorts), "n:d:r:%c:h%s", cli->warmup_short, cli->extra_short);

    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        long long v = 0;
        int good = 1;
        if (c == 'n') {
            good = chase_number(optarg, 1, LLONG_MAX, &v);
            o->nodes_per_rank = (uint64_t)v;
        } else if (c == 'd') {
            good = chase_number(optarg, 0, LLONG_MAX, &v);
            o->depth = (uint64_t)v;
        } else if (c == 'r') {
            good = chase_number(optarg, 1, INT_MAX, &v);
            o->reps = (int)v;
        } else if (c == cli->warmup_short) {
            good = chase_number(optarg, 0, INT_MAX, &v);
            o->warmup = (int)v;
        } else if (c == 'C') {
            o->csv = 1;
        } else if (c == 'I' && cli->has_image) {
            o->image = optarg;
        } else if (c == 'h') {
            if (rank == 0) cli->usage(stdout);
            chase_quit(0);
        } else if (c == '?' || !cli->handle) {
            if (rank == 0) cli->usage(stderr);
            chase_quit(2);
        } else {
            good = cli->handle(c, optarg, cli->data);
        }
        if (!good) {
            const char *name = "?";
            for (int i = 0; i < nlo; ++i)
                if (lo[i].val == c) name = lo[i].name;
            if (rank == 0) fprintf(stderr, "%s: bad value '%s' for --%s (see --help)\n", cli->prog, optarg, name);
            chase_quit(2);
        }
    }
    if (optind < argc) {
        if (rank == 0) cli->usage(stderr);
        chase_quit(2);
    }
}

/* ---- the start --------------------------------------------------------------- */

void chase_quit(int code)
{
    MPI_Finalize();
    exit(code);
}

void chase_start(int *argc, char ***argv, const struct chase_cli *cli, struct chase_options *o, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    chase_parse(*argc, *argv, *rank, cli, o);
    /* A chase needs two ranks, and npr * size nodes must fit a window. */
    const uint64_t npr = o->nodes_per_rank;
    const char *why = *size < 2 ? "needs at least 2 ranks"
                      : npr > (uint64_t)INT_MAX / 8 / (uint64_t)*size ? "-n too large" : NULL;
    if (!why) return;
    if (*rank == 0) fprintf(stderr, "%s: %s\n", cli->prog, why);
    chase_quit(2);
}

double chase_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}
