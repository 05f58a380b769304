/* dht: a distributed hash table (8-byte keys and values, open addressing
 * per rank) measured with every variant in the same job: each round, for
 * each key distribution (uniform, Zipf 0.99), every variant in turn (the
 * order rotated from round to round) empties its table, inserts the same
 * keys from every rank, then looks up the same keys, and verifies its
 * answers (verify.c). Reports insert and lookup rates (keys per second over
 * all ranks, median of the rounds) and what each variant sent per key; with
 * --csv the rows of apps/README.md. Exit status: 0, APP_EXIT_VERIFY if a
 * verification failed, 1 on other errors, 2 on bad arguments. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "dht.h"

static const struct dht_variant *const variants[] = {&dht_a2a, &dht_bulk, &dht_rma, &dht_xrdma};
static const char *const names[] = {"a2a", "bulk", "rma", "xrdma"};
#define NV ((int)(sizeof(variants) / sizeof(variants[0])))
static const char *const dists[] = {"uniform", "zipf"};
#define ND 2

struct options {
    uint64_t keys;
    int rounds, csv;
    unsigned mask, dist_mask;
    double budget;
    uint64_t seed;
    const char *transport;
    struct dht_options dht;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N dht [options]\n"
            "A distributed hash table: every rank inserts its keys, then looks keys up;\n"
            "every variant on the same keys, each round verified.\n\n"
            "  -s, --keys N        inserts and lookups per rank (default 1m = 2^20)\n"
            "  -r, --rounds R      rounds per distribution (default 5)\n"
            "  -b, --batch B       operations per message, RMA operations per flush\n"
            "                      (default 1024, at most 4096)\n"
            "  -d, --dist L        comma list of uniform, zipf (default both)\n"
            "  -v, --variants L    comma list of a2a, bulk, rma, xrdma (default all)\n"
            "      --budget S      a variant that has spent S seconds inserting and looking\n"
            "                      up in a distribution sits out its later rounds (default: none)\n"
            "      --seed X        the keys' seed (default 1)\n"
            "      --transport T   the transport's name in the CSV rows (default '-')\n"
            "      --csv           CSV rows on standard output, the report on standard error\n"
            "      --image P       the XRDMA functions' image (default: dht_ifunc.xfn beside\n"
            "                      this program)\n"
            "  -h, --help          this text\n");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option lo[] = {{"keys", required_argument, 0, 's'},     {"rounds", required_argument, 0, 'r'},
                                       {"batch", required_argument, 0, 'b'},    {"dist", required_argument, 0, 'd'},
                                       {"variants", required_argument, 0, 'v'}, {"budget", required_argument, 0, 'B'},
                                       {"seed", required_argument, 0, 'S'},     {"transport", required_argument, 0, 'T'},
                                       {"csv", no_argument, 0, 'C'},            {"image", required_argument, 0, 'I'},
                                       {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    *o = (struct options){1 << 20, 5, 0, (1u << NV) - 1, 3, 0, 1, "-", {1024, 0, NULL}};
    int c;
    while ((c = getopt_long(argc, argv, "s:r:b:d:v:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': o->keys = (uint64_t)app_number("--keys", optarg, 1, 1LL << 30); break;
        case 'r': o->rounds = (int)app_number("--rounds", optarg, 1, 1 << 20); break;
        case 'b': o->dht.batch = (int)app_number("--batch", optarg, 1, DHT_MAX_BATCH); break;
        case 'd': o->dist_mask = app_variants(optarg, dists, ND); break;
        case 'v': o->mask = app_variants(optarg, names, NV); break;
        case 'B': o->budget = (double)app_number("--budget", optarg, 1, 1 << 30); break;
        case 'S': o->seed = (uint64_t)app_number("--seed", optarg, 0, INT64_MAX); break;
        case 'T': o->transport = optarg; break;
        case 'C': o->csv = 1; break;
        case 'I': o->dht.image = optarg; break;
        case 'h': app_exit_usage(usage, 0);
        default: app_exit_usage(usage, 2);
        }
    }
    if (optind < argc) app_exit_usage(usage, 2);
    /* Load at most 1/2 when keys spread evenly over the owners. */
    o->dht.slots = 1;
    while (o->dht.slots < 2 * o->keys) o->dht.slots <<= 1;
}

/* What one variant measured in one distribution. */
struct result {
    double *insert, *lookup; /* rates, keys/s over all ranks */
    int rounds, verified;
    double spent;
    struct app_counts ins, look;
};

/* The time of a collective phase: from a barrier to a barrier. */
static double phase_start(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}
static double phase_end(double start)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - start, all;
    MPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static void report(const struct options *o, struct result *r, int v, int d, FILE *out)
{
    const int n = r->rounds, ok = r->verified == n;
    const double ops = (double)o->keys * app_size * n;
    char metric[64];
    const double ins = app_median(r->insert, n), look = app_median(r->lookup, n);
    fprintf(stderr,
            "%-6s %-8s %s  insert %.4g keys/s (median of %d; %.3f msgs %.1f bytes per key)  lookup %.4g keys/s "
            "(%.3f msgs %.1f bytes per key)\n",
            names[v], dists[d], ok ? "verified" : "FAILED", ins, n, r->ins.msgs / ops, r->ins.bytes / ops, look,
            r->look.msgs / ops, r->look.bytes / ops);
    if (!out) return;
    const struct {
        const char *what;
        double value;
        const char *unit;
    } rows[] = {{"insert_rate", ins, "keys/s"},          {"lookup_rate", look, "keys/s"},
                {"insert_msgs_per_key", r->ins.msgs / ops, "msg/key"},
                {"insert_bytes_per_key", r->ins.bytes / ops, "B/key"},
                {"lookup_msgs_per_key", r->look.msgs / ops, "msg/key"},
                {"lookup_bytes_per_key", r->look.bytes / ops, "B/key"},
                {"insert_syncs_per_round", (double)r->ins.syncs / app_size / n, "sync/round"},
                {"lookup_syncs_per_round", (double)r->look.syncs / app_size / n, "sync/round"},
                {"rounds", n, "rounds"}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); ++i) {
        snprintf(metric, sizeof(metric), "%s_%s", rows[i].what, dists[d]);
        app_csv_row(out, "dht", names[v], o->transport, (long long)o->keys, metric, rows[i].value, rows[i].unit, ok);
    }
}

int main(int argc, char **argv)
{
    app_init(&argc, &argv, "dht");
    struct options o;
    parse(argc, argv, &o);
    if (app_rank == 0)
        fprintf(stderr, "# dht: %llu keys per rank, %d ranks, %llu slots per rank, batch %d, %d rounds\n",
                (unsigned long long)o.keys, app_size, (unsigned long long)o.dht.slots, o.dht.batch, o.rounds);
    void *state[NV] = {0};
    for (int v = 0; v < NV; ++v)
        if (o.mask & (1u << v)) state[v] = variants[v]->create(&o.dht);
    uint64_t *values = app_alloc(sizeof(uint64_t) * o.keys);
    unsigned char *found = app_alloc(o.keys);
    int failed = 0;
    if (app_rank == 0 && o.csv) app_csv_header(stdout);
    for (int d = 0; d < ND; ++d) {
        if (!(o.dist_mask & (1u << d))) continue;
        struct dht_input in;
        dht_make_input(&in, (enum dht_dist)d, o.keys, o.seed);
        struct result res[NV];
        memset(res, 0, sizeof(res));
        for (int v = 0; v < NV; ++v) {
            res[v].insert = app_alloc(sizeof(double) * (size_t)o.rounds);
            res[v].lookup = app_alloc(sizeof(double) * (size_t)o.rounds);
        }
        for (int round = 0; round < o.rounds; ++round) {
            int order[NV];
            const int n = app_round_order(o.mask, NV, round, order);
            for (int i = 0; i < n; ++i) {
                const int v = order[i];
                struct result *r = &res[v];
                if (o.budget > 0 && r->rounds > 0 && r->spent > o.budget) continue; /* (the same on every rank) */
                variants[v]->clear(state[v]);
                struct app_counts ci = {0, 0, 0, {0}}, cl = {0, 0, 0, {0}};
                double t = phase_start();
                variants[v]->insert(state[v], in.kv, in.n, &ci);
                const double ti = phase_end(t);
                memset(found, 0, o.keys);
                t = phase_start();
                variants[v]->lookup(state[v], in.look, in.n, values, found, &cl);
                const double tl = phase_end(t);
                const int ok = dht_verify(variants[v], state[v], &o.dht, &in, values, found);
                const struct app_counts si = app_counts_sum(&ci), sl = app_counts_sum(&cl);
                const double ops = (double)o.keys * app_size;
                r->insert[r->rounds] = ops / ti;
                r->lookup[r->rounds++] = ops / tl;
                r->spent += ti + tl;
                r->verified += ok;
                r->ins.msgs += si.msgs, r->ins.bytes += si.bytes, r->ins.syncs += si.syncs;
                r->look.msgs += sl.msgs, r->look.bytes += sl.bytes, r->look.syncs += sl.syncs;
                if (!ok) failed = 1;
            }
        }
        if (app_rank == 0)
            for (int v = 0; v < NV; ++v)
                if (res[v].rounds) report(&o, &res[v], v, d, o.csv ? stdout : NULL);
        for (int v = 0; v < NV; ++v) {
            free(res[v].insert);
            free(res[v].lookup);
        }
        dht_free_input(&in);
    }
    if (app_rank == 0) {
        fprintf(stderr, "dht: %s\n", failed ? "VERIFICATION FAILED" : "every round verified");
        fflush(stdout);
    }
    for (int v = 0; v < NV; ++v)
        if (state[v]) variants[v]->destroy(state[v]);
    free(values);
    free(found);
    MPI_Finalize();
    return failed ? APP_EXIT_VERIFY : 0;
}
