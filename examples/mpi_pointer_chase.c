/* mpi_pointer_chase: the X-RDMA pointer chase across MPI ranks, against an
 * MPI_Get chain. The main demo (scripts/demo).
 *
 * A linked list of global "next" indices forms one random cycle through
 * nodes_per_rank * nranks nodes, block-distributed over the ranks: node g is
 * entry g % nodes_per_rank of rank g / nodes_per_rank's window (an ordinary
 * MPI_Win_allocate window). Rank 0 follows the list for `depth` hops from
 * many start nodes, two ways, chase by chase in alternating order:
 *
 *   MPI_Get chain  MPI_Get + MPI_Win_flush per remote hop: one round trip
 *                  per node that is not rank 0's.
 *   X-RDMA         one MPIX_Xget to the owner of the first remote node; its
 *                  ifunc (mpi_chase_ifunc.c) walks local nodes in place,
 *                  xrdma_forward()s itself to the owner of the next node, and
 *                  the last hop xrdma_reply()s the final node straight into
 *                  rank 0's buffer: one one-way message per change of owner.
 *
 * Rank 0's own nodes are read from local memory in both modes. Only rank 0
 * loads the image (MPIX_Ifunc_load); the other ranks never open the file and
 * get the code over the network. They sit in MPI_Barrier meanwhile: the MPI
 * layer runs arriving code inside blocking MPI calls. Every answer is
 * checked against a sequential walk; the exit status is 1 if one is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIST_SEED 0x5eed1234abcdULL
#define START_SEED 0x57a27ULL
#define IMAGE_NAME "mpi_chase_ifunc.xfn"

/* The ifunc's arguments: must match mpi_chase_ifunc.c. */
struct chase_args {
    uint64_t node;
    uint64_t remaining;
    uint64_t nodes_per_rank;
};

struct options {
    uint64_t nodes_per_rank;
    uint64_t depth;
    int reps;
    int warmup;
    const char *image;
    int csv;
    int requests; /* complete with MPI_Wait on MPI_Rget / MPIX_Rxget requests */
};

static int g_rank = -1;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* ---- the list (identical on every rank) ------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *state, uint64_t n) /* uniform in [0, n) */
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do x = splitmix64(state);
    while (x >= limit);
    return x % n;
}

/* next[] of one random cycle through all n nodes (Fisher-Yates permutation). */
static uint64_t *build_list(uint64_t n)
{
    uint64_t *perm = malloc(n * sizeof(*perm)), *next = malloc(n * sizeof(*next));
    if (!perm || !next) return NULL;
    uint64_t st = LIST_SEED;
    for (uint64_t i = 0; i < n; ++i) perm[i] = i;
    for (uint64_t i = n - 1; i > 0; --i) {
        uint64_t j = below(&st, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint64_t i = 0; i < n; ++i) next[perm[i]] = perm[(i + 1) % n];
    free(perm);
    return next;
}

static uint64_t start_node(int i, uint64_t n)
{
    uint64_t st = START_SEED + (uint64_t)i * 7919;
    return below(&st, n);
}

/* The sequential answer, and what each mode sends on this path. */
struct walk_info {
    uint64_t answer;
    uint64_t remote_hops; /* nodes not on rank 0: MPI_Get round trips */
    uint64_t messages;    /* X-RDMA: the Xget + forwards + the reply */
};

static struct walk_info walk(const uint64_t *next, uint64_t npr, uint64_t start, uint64_t depth)
{
    struct walk_info w = {0, 0, 0};
    uint64_t node = start, hop = 0;
    while (hop < depth && node / npr == 0) node = next[node], ++hop;
    if (hop < depth) {
        uint64_t owner = node / npr;
        w.messages = 2;
        for (; hop < depth; ++hop) {
            if (node / npr != owner) owner = node / npr, w.messages++;
            if (node / npr != 0) w.remote_hops++;
            node = next[node];
        }
    }
    w.answer = node;
    return w;
}

/* ---- the two chases (rank 0, inside MPI_Win_lock_all) ----------------- */

static int report(int rc, const char *what, uint64_t start)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mpi_pointer_chase: %s (chase from node %" PRIu64 "): %s\n", what, start, msg);
    return rc;
}

static int g_requests; /* --requests */

static int get_chase(MPI_Win win, const uint64_t *base, uint64_t npr, uint64_t start, uint64_t depth,
                     uint64_t *out)
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
        if (g_requests) {
            MPI_Request rq;
            rc = MPI_Rget(&v, 1, MPI_UINT64_T, owner, (MPI_Aint)(node % npr), 1, MPI_UINT64_T, win, &rq);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Get(&v, 1, MPI_UINT64_T, owner, (MPI_Aint)(node % npr), 1, MPI_UINT64_T, win);
            if (rc == MPI_SUCCESS) rc = MPI_Win_flush(owner, win);
        }
        if (rc != MPI_SUCCESS) return report(rc, g_requests ? "MPI_Rget" : "MPI_Get", start);
        node = v;
    }
    *out = node;
    return MPI_SUCCESS;
}

static int xrdma_chase(MPI_Win win, MPIX_Ifunc f, const uint64_t *base, uint64_t npr, uint64_t start,
                       uint64_t depth, uint64_t *out)
{
    struct chase_args a = {start, depth, npr};
    while (a.remaining > 0 && a.node < npr) { /* rank 0's own nodes */
        a.node = base[a.node];
        a.remaining--;
    }
    if (a.remaining == 0) {
        *out = a.node;
        return MPI_SUCCESS;
    }
    int owner = (int)(a.node / npr);
    uint64_t answer = UINT64_MAX;
    /* No target region (count 0): the ifunc uses the window itself. The
     * reply, from whichever rank ends the chase, lands in `answer`. */
    int rc;
    if (g_requests) {
        MPI_Request rq;
        rc = MPIX_Rxget(&answer, 1, MPI_UINT64_T, owner, 0, 0, MPI_UINT64_T, f, &a, (int)sizeof(a), win, &rq);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        rc = MPIX_Xget(&answer, 1, MPI_UINT64_T, owner, 0, 0, MPI_UINT64_T, f, &a, (int)sizeof(a), win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(owner, win);
    }
    if (rc != MPI_SUCCESS) return report(rc, g_requests ? "MPIX_Rxget" : "MPIX_Xget", start);
    *out = answer;
    return MPI_SUCCESS;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N mpi_pointer_chase [options]      (N >= 2)\n"
            "Pointer chase over a random list spread across the windows of all ranks:\n"
            "MPIX_Xget with a forwarding ifunc against an MPI_Get + MPI_Win_flush chain.\n"
            "Rank 0 measures; every answer is checked against a sequential walk.\n\n"
            "  -n, --nodes N    list nodes per rank (default 4096)\n"
            "  -d, --depth D    hops per chase (default 256)\n"
            "  -r, --reps R     measured chases per mode, each from another start (default 200)\n"
            "  -w, --warmup W   unmeasured chases per mode first (default 10)\n"
            "      --image P    the ifunc image (default: " IMAGE_NAME " next to this program)\n"
            "      --requests   complete each MPI_Get / MPIX_Xget through a request instead\n"
            "                   of MPI_Win_flush: MPI_Rget / MPIX_Rxget + MPI_Wait\n"
            "      --csv        CSV instead of the table\n"
            "  -h, --help       this text\n");
}

static __attribute__((noreturn)) void quit(int code)
{
    MPI_Finalize();
    exit(code);
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option lo[] = {
        {"nodes", required_argument, 0, 'n'}, {"depth", required_argument, 0, 'd'},
        {"reps", required_argument, 0, 'r'},  {"warmup", required_argument, 0, 'w'},
        {"image", required_argument, 0, 'I'}, {"csv", no_argument, 0, 'C'},
        {"requests", no_argument, 0, 'R'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (struct options){4096, 256, 200, 10, NULL, 0, 0};
    int c;
    while ((c = getopt_long(argc, argv, "n:d:r:w:h", lo, NULL)) != -1) {
        long long v = 0;
        if (optarg && c != 'I') {
            char *end;
            errno = 0;
            v = strtoll(optarg, &end, 0);
            if (errno || *end || v < 0 || (c != 'n' && c != 'd' && v > INT_MAX)) {
                if (g_rank == 0) fprintf(stderr, "mpi_pointer_chase: bad number '%s'\n", optarg);
                quit(2);
            }
        }
        switch (c) {
        case 'n': o->nodes_per_rank = (uint64_t)v; break;
        case 'd': o->depth = (uint64_t)v; break;
        case 'r': o->reps = (int)v; break;
        case 'w': o->warmup = (int)v; break;
        case 'I': o->image = optarg; break;
        case 'C': o->csv = 1; break;
        case 'R': o->requests = 1; break;
        case 'h':
            if (g_rank == 0) usage(stdout);
            quit(0);
        default:
            if (g_rank == 0) usage(stderr);
            quit(2);
        }
    }
    if (optind < argc || o->nodes_per_rank == 0 || o->reps <= 0) {
        if (g_rank == 0) usage(stderr);
        quit(2);
    }
}

/* IMAGE_NAME in the directory of this executable. */
static const char *default_image(void)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - sizeof(IMAGE_NAME));
    if (n <= 0) return IMAGE_NAME;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, IMAGE_NAME);
    return path;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;
    struct options o;
    parse(argc, argv, &o);
    g_requests = o.requests;
    const uint64_t npr = o.nodes_per_rank;
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "mpi_pointer_chase: needs at least 2 ranks\n");
        quit(2);
    }
    if (npr > (uint64_t)INT_MAX / 8 / (uint64_t)size) {
        if (rank == 0) fprintf(stderr, "mpi_pointer_chase: -n too large\n");
        quit(2);
    }
    const uint64_t n = npr * (uint64_t)size;
    uint64_t *next = build_list(n);
    if (!next) {
        fprintf(stderr, "mpi_pointer_chase: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* The application's window: this rank's slice of the list, then the two
     * counters the ifunc keeps (steps run here, forwards). */
    uint64_t *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)((npr + 2) * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memcpy(base, next + (uint64_t)rank * npr, npr * 8);
    base[npr] = base[npr + 1] = 0;
    /* Errors of MPI_Get / MPIX_Xget come back as return codes, not aborts. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* Only rank 0 reads the image; the targets get the code over the network. */
    MPIX_Ifunc f = MPIX_IFUNC_NULL;
    const char *image = o.image ? o.image : default_image();
    int ok = 1;
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPIX_Ifunc_load(image, "chase", &f);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "mpi_pointer_chase: %s\n(build it with make, or give --image)\n", msg);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Win_free(&win);
        quit(2);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every window filled */

    const int total = o.warmup + o.reps;
    double t_get = 0, t_x = 0, t_cold = 0;
    int ok_get = 0, ok_x = 0, failed = 0;
    uint64_t sum_gets = 0, sum_msgs = 0;
    if (rank == 0) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int i = 0; i < total && !failed; ++i) {
            uint64_t start = start_node(i, n);
            struct walk_info ref = walk(next, npr, start, o.depth);
            if (i >= o.warmup) sum_gets += ref.remote_hops, sum_msgs += ref.messages;
            for (int k = 0; k < 2 && !failed; ++k) {
                int x = (i + k) % 2 == 0; /* alternate which mode goes first */
                uint64_t got = UINT64_MAX;
                double t0 = now_us();
                int rc = x ? xrdma_chase(win, f, base, npr, start, o.depth, &got)
                           : get_chase(win, base, npr, start, o.depth, &got);
                double dt = now_us() - t0;
                if (rc != MPI_SUCCESS) {
                    failed = 1;
                    break;
                }
                if (x && i == 0) t_cold = dt;
                int good = got == ref.answer;
                if (!good)
                    fprintf(stderr, "mpi_pointer_chase: %s chase from node %" PRIu64 " ended at %" PRIu64
                                    ", want %" PRIu64 "\n",
                            x ? "X-RDMA" : "MPI_Get", start, got, ref.answer);
                if (i < o.warmup) {
                    failed |= !good;
                } else if (x) {
                    t_x += dt, ok_x += good;
                } else {
                    t_get += dt, ok_get += good;
                }
            }
        }
        MPI_Win_unlock_all(win);
    }
    /* Ranks other than 0 wait here; the ifunc runs inside this call. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* What each rank ran. Its counters are only written by the ifunc, run by
     * this process, which is now past the barrier. */
    uint64_t mine[2] = {base[npr], base[npr + 1]};
    uint64_t *all = rank == 0 ? malloc(2 * sizeof(uint64_t) * (size_t)size) : NULL;
    MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        failed |= ok_get != o.reps || ok_x != o.reps;
        double us_get = t_get / o.reps, us_x = t_x / o.reps;
        const char *tls = getenv("UCX_TLS");
        const char *completion = o.requests ? "request" : "flush";
        const char *get_name = o.requests ? "MPI_Rget chain" : "MPI_Get chain";
        const char *x_name = o.requests ? "X-RDMA (Rxget)" : "X-RDMA (Xget)";
        if (o.csv) {
            printf("mode,completion,ranks,nodes_per_rank,depth,reps,us_per_chase,speedup_vs_mpi_get,answers_ok\n");
            printf("mpi_get_chain,%s,%d,%" PRIu64 ",%" PRIu64 ",%d,%.3f,1.000,%d\n", completion, size, npr, o.depth,
                   o.reps, us_get, ok_get);
            printf("xrdma_xget,%s,%d,%" PRIu64 ",%" PRIu64 ",%d,%.3f,%.3f,%d\n", completion, size, npr, o.depth,
                   o.reps, us_x, us_x > 0 ? us_get / us_x : 0.0, ok_x);
        } else {
            printf("# MPI pointer chase (MPIX %s): %d ranks, %" PRIu64 " nodes/rank, depth %" PRIu64
                   ", %d chases (+%d warm-up), UCX_TLS=%s\n",
                   MPIX_XRDMA_VERSION, size, npr, o.depth, o.reps, o.warmup, tls ? tls : "(default)");
            printf("# per chase: %.1f MPI_Get round trips, %.1f X-RDMA one-way messages; completion: %s\n",
                   (double)sum_gets / o.reps, (double)sum_msgs / o.reps,
                   o.requests ? "MPI_Wait on a request" : "MPI_Win_flush");
            printf("# first X-RDMA chase (image shipped to the targets and loaded there): %.1f us\n", t_cold);
            printf("# only rank 0 loaded %s (MPIX_Ifunc_load); the other ranks got the code over the network\n",
                   IMAGE_NAME);
            for (int r = 0; r < size; ++r)
                printf("# rank %d ran the chase ifunc %" PRIu64 " times, forwarded %" PRIu64 "\n", r, all[2 * r],
                       all[2 * r + 1]);
            printf("# %-16s %14s %9s %12s\n", "Mode", "Time/chase(us)", "Speedup", "Per hop(us)");
            printf("  %-16s %14.2f %9.2f %12.3f\n", get_name, us_get, 1.0, us_get / (double)o.depth);
            printf("  %-16s %14.2f %9.2f %12.3f\n", x_name, us_x, us_x > 0 ? us_get / us_x : 0.0,
                   us_x / (double)o.depth);
        }
        printf("answers checked: %d/%d %s (MPI_Get chain), %d/%d %s (X-RDMA)\n", ok_get, o.reps,
               ok_get == o.reps ? "ok" : "FAILED", ok_x, o.reps, ok_x == o.reps ? "ok" : "FAILED");
        if (failed) printf("FAILED\n");
        fflush(stdout);
        free(all);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPIX_Ifunc_free(&f);
    MPI_Win_free(&win);
    free(next);
    MPI_Finalize();
    return failed ? 1 : 0;
}
