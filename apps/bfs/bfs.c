/* bfs: a Graph500-style breadth-first search ("Search", kernels 1 and 2 of
 * the Graph500 specification) measured with every variant in the same job:
 * a Kronecker graph (kronecker.c, graph.c), 64 search keys, and for each
 * key every variant in turn (the order rotated from key to key) on the
 * same graph, each search validated by the specification's five rules
 * (validate.c). Reports TEPS as the specification defines them (harmonic
 * mean over the searches, quartiles), the time of kernel 1, and what each
 * variant sent per traversed edge; with --csv the rows of apps/README.md.
 * Exit status: 0, APP_EXIT_VERIFY if a search failed validation, 1 on
 * other errors, 2 on bad arguments. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bfs.h"

static const struct bfs_variant *const variants[] = {&bfs_a2a, &bfs_p2p, &bfs_rma, &bfs_xrdma};
static const char *const names[] = {"a2a", "p2p", "rma", "xrdma"};
#define NV ((int)(sizeof(variants) / sizeof(variants[0])))

struct options {
    int scale, keys, csv;
    unsigned mask;
    double budget;
    uint64_t seed;
    const char *transport;
    struct bfs_options bfs;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N bfs [options]\n"
            "Graph500-style BFS (Kronecker graph, edge factor 16), every variant on the\n"
            "same graph and search keys, each search validated.\n\n"
            "  -s, --scale S       2^S vertices (default 18)\n"
            "  -k, --keys K        search keys (default 64)\n"
            "  -b, --batch B       edges per message (a2a: none), RMA operations per flush\n"
            "                      (default 1024)\n"
            "  -v, --variants L    comma list of a2a, p2p, rma, xrdma (default all)\n"
            "      --budget S      a variant that has spent S seconds searching sits out the\n"
            "                      later keys (default: none)\n"
            "      --seed X        the graph's seed (default 1)\n"
            "      --transport T   the transport's name in the CSV rows (default '-')\n"
            "      --csv           CSV rows on standard output, the report on standard error\n"
            "      --image P       the XRDMA function's image (default: bfs_ifunc.xfn beside\n"
            "                      this program)\n"
            "  -h, --help          this text\n");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option lo[] = {{"scale", required_argument, 0, 's'},    {"keys", required_argument, 0, 'k'},
                                       {"batch", required_argument, 0, 'b'},    {"variants", required_argument, 0, 'v'},
                                       {"seed", required_argument, 0, 'S'},     {"transport", required_argument, 0, 'T'},
                                       {"csv", no_argument, 0, 'C'},            {"image", required_argument, 0, 'I'},
                                       {"budget", required_argument, 0, 'B'},   {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    *o = (struct options){18, 64, 0, (1u << NV) - 1, 0, 1, "-", {1024, NULL}};
    int c;
    while ((c = getopt_long(argc, argv, "s:k:b:v:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': o->scale = (int)app_number("--scale", optarg, 2, 31); break; /* (numbers in 32 bits) */
        case 'k': o->keys = (int)app_number("--keys", optarg, 1, 1 << 16); break;
        case 'b': o->bfs.batch = (int)app_number("--batch", optarg, 1, 1 << 24); break;
        case 'v': o->mask = app_variants(optarg, names, NV); break;
        case 'S': o->seed = (uint64_t)app_number("--seed", optarg, 0, INT64_MAX); break;
        case 'T': o->transport = optarg; break;
        case 'C': o->csv = 1; break;
        case 'I': o->bfs.image = optarg; break;
        case 'B': o->budget = (double)app_number("--budget", optarg, 1, 1 << 30); break;
        case 'h': app_exit_usage(usage, 0);
        default: app_exit_usage(usage, 2);
        }
    }
    if (optind < argc) app_exit_usage(usage, 2);
}

/* What one variant measured over the searches. */
struct result {
    double *time, *teps, spent;
    int searched, verified;
    int64_t edges;
    struct app_counts counts;
};

static void report(const struct options *o, const struct result *r, int v, FILE *out)
{
    const int n = r->searched;
    double *t = app_alloc(sizeof(double) * (size_t)n), *e = app_alloc(sizeof(double) * (size_t)n);
    memcpy(t, r->time, sizeof(double) * (size_t)n);
    memcpy(e, r->teps, sizeof(double) * (size_t)n);
    const struct app_counts sum = r->counts;
    const double hm = app_hmean(e, n), med = app_median(e, n), tmed = app_median(t, n);
    const double per_edge = r->edges ? 1.0 / (double)r->edges : 0;
    /* Where a rank's time went, per search (the mean over ranks). */
    double phase[APP_PHASES];
    for (int p = 0; p < APP_PHASES; ++p) phase[p] = sum.time[p] / app_size / (n ? n : 1);
    fprintf(stderr,
            "%-6s %s  time min %.4f q1 %.4f median %.4f q3 %.4f max %.4f s  TEPS harmonic mean %.4g median "
            "%.4g  per edge: %.3f messages %.2f bytes  %.1f syncs/search  per search %.4f s working, %.4f s "
            "completing, %.4f s synchronising\n",
            names[v], r->verified == n ? "valid" : "INVALID", app_quartile(t, n, 0), app_quartile(t, n, 1), tmed,
            app_quartile(t, n, 3), app_quartile(t, n, 4), hm, med, (double)sum.msgs * per_edge,
            (double)sum.bytes * per_edge, (double)sum.syncs / app_size / (n ? n : 1), phase[APP_WORK],
            phase[APP_COMPLETE], phase[APP_SYNC]);
    if (out) {
        const int ok = r->verified == n;
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "teps_hmean", hm, "TEPS", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "teps_median", med, "TEPS", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "time_median", tmed, "s", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "msgs_per_edge", (double)sum.msgs * per_edge,
                    "msg/edge", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "bytes_per_edge", (double)sum.bytes * per_edge,
                    "B/edge", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "syncs_per_search",
                    (double)sum.syncs / app_size / (n ? n : 1), "sync/search", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "searches", n, "searches", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "phase_work", phase[APP_WORK], "s/search", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "phase_complete", phase[APP_COMPLETE], "s/search",
                    ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "phase_sync", phase[APP_SYNC], "s/search", ok);
        app_csv_row(out, "bfs", names[v], o->transport, o->scale, "edges_per_search", n ? (double)r->edges / n : 0,
                    "edges", ok);
    }
    free(t);
    free(e);
}

int main(int argc, char **argv)
{
    app_init(&argc, &argv, "bfs");
    struct options o;
    parse(argc, argv, &o);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    struct graph g;
    graph_build(&g, o.scale, o.seed);
    MPI_Barrier(MPI_COMM_WORLD);
    const double construction = MPI_Wtime() - t0;
    int64_t *keys = app_alloc(sizeof(int64_t) * (size_t)o.keys);
    const int nkeys = graph_search_keys(&g, o.seed ^ 0x6b657973ULL, o.keys, keys);
    if (app_rank == 0)
        fprintf(stderr, "# bfs: SCALE %d, edgefactor 16, %d ranks, %d search keys, construction_time %.3f s, batch %d\n",
                o.scale, app_size, nkeys, construction, o.bfs.batch);

    void *state[NV] = {0};
    struct result res[NV];
    memset(res, 0, sizeof(res));
    for (int v = 0; v < NV; ++v) {
        if (!(o.mask & (1u << v))) continue;
        state[v] = variants[v]->create(&g, &o.bfs);
        res[v].time = app_alloc(sizeof(double) * (size_t)nkeys);
        res[v].teps = app_alloc(sizeof(double) * (size_t)nkeys);
    }
    int failed = 0;
    for (int k = 0; k < nkeys; ++k) {
        int order[NV];
        const int n = app_round_order(o.mask, NV, k, order);
        for (int i = 0; i < n; ++i) {
            const int v = order[i];
            if (o.budget > 0 && res[v].searched > 0 && res[v].spent > o.budget) continue; /* (the same everywhere) */
            struct app_counts c = {0, 0, 0, {0}};
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            const int64_t *pred = variants[v]->search(state[v], keys[k], &c);
            double mine = MPI_Wtime() - start, t;
            MPI_Allreduce(&mine, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int64_t edges = 0;
            const int ok = bfs_validate(&g, keys[k], pred, &edges);
            struct app_counts sum = app_counts_sum(&c);
            struct result *r = &res[v];
            r->spent += t;
            r->time[r->searched] = t;
            r->teps[r->searched++] = edges / t;
            r->verified += ok;
            r->edges += edges;
            r->counts.msgs += sum.msgs, r->counts.bytes += sum.bytes, r->counts.syncs += sum.syncs;
            for (int p = 0; p < APP_PHASES; ++p) r->counts.time[p] += sum.time[p];
            if (!ok) {
                failed = 1;
                if (app_rank == 0) app_warn("%s: the search from key %d (vertex %lld) is not valid", names[v], k,
                                            (long long)keys[k]);
            }
        }
    }
    if (app_rank == 0) {
        if (o.csv) app_csv_header(stdout);
        for (int v = 0; v < NV; ++v)
            if (o.mask & (1u << v)) report(&o, &res[v], v, o.csv ? stdout : NULL);
        if (o.csv) app_csv_row(stdout, "bfs", "graph", o.transport, o.scale, "construction_time", construction, "s", 1);
        fprintf(stderr, "bfs: %d searches per variant: %s\n", nkeys, failed ? "VALIDATION FAILED" : "all valid");
        fflush(stdout);
    }
    for (int v = 0; v < NV; ++v)
        if (state[v]) {
            variants[v]->destroy(state[v]);
            free(res[v].time);
            free(res[v].teps);
        }
    free(keys);
    graph_free(&g);
    MPI_Finalize();
    return failed ? APP_EXIT_VERIFY : 0;
}
