/* xrdma_chase: the X-RDMA pointer chase against an MPI_Get chain.
 *
 * A linked list of global "next" indices forms one random cycle through
 * nodes_per_rank * nranks nodes, block-distributed over the ranks. Rank 0
 * follows it for `depth` hops from many start nodes, two ways:
 *
 *   MPI_Get chain  one MPI_Get + MPI_Win_flush per remote hop (passive
 *                  target): one network round trip per remote hop.
 *   X-RDMA         rank 0 invokes examples/chase_ifunc.c at the owner of the
 *                  first remote node; the ifunc walks local pointers in place,
 *                  forwards itself to the next owner when the list leaves the
 *                  rank, and the last hop replies straight to rank 0: one
 *                  one-way message per change of owner.
 *
 * Rank 0's own nodes are read from local memory in both modes. Only rank 0
 * reads the ifunc image; the other ranks receive the code over UCX the first
 * time it reaches them. MPI bootstraps UCX (worker addresses are exchanged
 * with MPI_Allgatherv) and provides the baseline. Every answer is checked
 * against a sequential walk of the same list (all ranks can build it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <ucx_ifunc.h>
#include <unistd.h>

#include "xrdma_chase.h"

#define LIST_SEED 0x5eed1234abcdULL
#define START_SEED 0x57a27ULL
#define TIMEOUT_S 30.0

struct options {
    uint64_t nodes_per_rank;
    uint64_t depth;
    int reps;
    int warmup;
    const char *image;
    int csv;
    long spin; /* idle progress calls before sched_yield; <0: choose */
};

static int g_rank = -1;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xrdma_chase[rank %d]: ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* ---- the list --------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias. */
static uint64_t below(uint64_t *state, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = splitmix64(state);
    while (x >= limit);
    return x % n;
}

/* next[] of one random cycle through all n nodes; identical on every rank. */
static uint64_t *build_list(uint64_t n)
{
    uint64_t *perm = malloc(n * sizeof(*perm));
    uint64_t *next = malloc(n * sizeof(*next));
    if (!perm || !next) die("out of memory for %" PRIu64 " nodes", n);
    uint64_t st = LIST_SEED;
    for (uint64_t i = 0; i < n; ++i) perm[i] = i;
    for (uint64_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
        uint64_t j = below(&st, i + 1);
        uint64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint64_t i = 0; i < n; ++i) next[perm[i]] = perm[(i + 1) % n];
    free(perm);
    return next;
}

static uint64_t start_node(int rep, uint64_t n)
{
    uint64_t st = START_SEED + (uint64_t)rep * 7919;
    return below(&st, n);
}

/* Reference answer, and what each mode costs on this path. */
struct walk_info {
    uint64_t answer;
    uint64_t remote_hops; /* hops whose node is not rank 0's: MPI_Gets */
    uint64_t messages;    /* X-RDMA messages: invoke + forwards + reply */
};

static struct walk_info walk(const uint64_t *next, uint64_t npr, uint64_t start, uint64_t depth)
{
    struct walk_info w = {start, 0, 0};
    uint64_t node = start, hop = 0;
    while (hop < depth && node / npr == 0) node = next[node], ++hop; /* rank 0's own */
    if (hop < depth) {
        w.messages = 2; /* invoke + reply */
        uint64_t owner = node / npr;
        for (; hop < depth; ++hop) {
            if (node / npr != owner) owner = node / npr, w.messages++;
            if (node / npr != 0) w.remote_hops++;
            node = next[node];
        }
        /* hops that pass through rank 0 are not MPI_Gets */
    }
    w.answer = node;
    return w;
}

/* ---- UCX bootstrap over MPI ------------------------------------------- */

struct ucx_boot {
    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* eps[r], NULL for ourselves */
    ucx_ifunc_context_h ictx;
};

static void ucx_check(ucs_status_t st, const char *what)
{
    if (st != UCS_OK) die("%s: %s", what, ucs_status_string(st));
}

static void ucx_boot_init(struct ucx_boot *b, int rank, int size, void *user_ptr)
{
    ucp_config_t *cfg;
    ucx_check(ucp_config_read(NULL, NULL, &cfg), "ucp_config_read");
    ucp_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    ucx_check(ucp_init(&p, cfg, &b->ucp), "ucp_init");
    ucp_config_release(cfg);

    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    ucx_check(ucp_worker_create(b->ucp, &wp, &b->worker), "ucp_worker_create");

    /* Worker addresses differ in length: gather the lengths, then them. */
    ucp_address_t *addr;
    size_t len;
    ucx_check(ucp_worker_get_address(b->worker, &addr, &len), "ucp_worker_get_address");
    if (len > INT_MAX) die("worker address too long");
    int mylen = (int)len;
    int *lens = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size; ++r) {
        displs[r] = total;
        if (lens[r] > INT_MAX - total) die("worker addresses too long");
        total += lens[r];
    }
    char *all = malloc(total ? total : 1);
    MPI_Allgatherv(addr, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, MPI_COMM_WORLD);
    ucp_worker_release_address(b->worker, addr);

    ucx_ifunc_context_params_t cp;
    memset(&cp, 0, sizeof(cp));
    cp.worker = b->worker;
    cp.rank = rank;
    cp.size = size;
    cp.user_ptr = user_ptr;
    ucx_ifunc_status_t ist = ucx_ifunc_context_create(&cp, &b->ictx);
    if (ist != UCX_IFUNC_OK) die("ucx_ifunc_context_create: %s", ucx_ifunc_status_string(ist));

    b->eps = calloc(size, sizeof(ucp_ep_h));
    for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        ucp_ep_params_t ep;
        memset(&ep, 0, sizeof(ep));
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = (const ucp_address_t *)(all + displs[r]);
        ucx_check(ucp_ep_create(b->worker, &ep, &b->eps[r]), "ucp_ep_create");
        ist = ucx_ifunc_peer_add(b->ictx, r, b->eps[r]);
        if (ist != UCX_IFUNC_OK) die("ucx_ifunc_peer_add: %s", ucx_ifunc_status_string(ist));
    }
    free(all);
    free(lens);
    free(displs);
}

static void ucx_boot_fini(struct ucx_boot *b, int size)
{
    /* Close our endpoints, then wait for everyone before the workers go:
     * a peer may still be flushing towards us. */
    ucs_status_ptr_t *reqs = calloc(size, sizeof(*reqs));
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    for (int r = 0; r < size; ++r)
        if (b->eps[r]) reqs[r] = ucp_ep_close_nbx(b->eps[r], &p);
    for (int r = 0; r < size; ++r) {
        if (!reqs[r] || UCS_PTR_IS_ERR(reqs[r])) continue;
        while (ucp_request_check_status(reqs[r]) == UCS_INPROGRESS) ucp_worker_progress(b->worker);
        ucp_request_free(reqs[r]);
    }
    free(reqs);
    MPI_Barrier(MPI_COMM_WORLD);
    ucx_ifunc_context_destroy(b->ictx);
    ucp_worker_destroy(b->worker);
    ucp_cleanup(b->ucp);
    free(b->eps);
}

/* Progress UCX (run arriving ifuncs) until *req completes. */
static void serve_until(ucx_ifunc_context_h ictx, MPI_Request *req, long spin)
{
    long idle = 0;
    int done = 0;
    while (!done) {
        if (ucx_ifunc_progress(ictx)) {
            idle = 0;
            continue;
        }
        if (++idle > spin) sched_yield();
        if (idle % 256 == 0) MPI_Test(req, &done, MPI_STATUS_IGNORE);
    }
}

/* ---- the same chase with predeployed UCP active messages (reference) -- */

/* What an application would write without injected code: the chase step is
 * compiled into every rank and installed as an AM handler before the run. */
enum { AM_HOP = 0x40, AM_DONE = 0x41 };

static struct {
    const struct chase_slice *s;
    ucp_ep_h *eps;
    struct chase_msg ring[64]; /* send buffers: live until UCX completes them */
    unsigned next;
    int done;
    uint64_t answer;
} g_am;

static void am_send(int to, unsigned id, const struct chase_msg *m)
{
    struct chase_msg *buf = &g_am.ring[g_am.next++ % 64];
    *buf = *m;
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(g_am.eps[to], id, NULL, 0, buf, sizeof(*buf), &p);
    if (UCS_PTR_IS_ERR(r)) die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r); /* completes on its own */
}

static ucs_status_t am_hop(void *arg, const void *header, size_t header_length, void *data,
                           size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)param;
    const struct chase_slice *s = g_am.s;
    struct chase_msg m;
    if (length != sizeof(m)) die("AM chase message of %zu bytes", length);
    memcpy(&m, data, sizeof(m));
    const uint64_t lo = (uint64_t)s->rank * s->nodes_per_rank;
    while (m.remaining > 0 && m.node - lo < s->nodes_per_rank) {
        m.node = s->base[m.node - lo];
        m.remaining--;
    }
    if (m.remaining > 0)
        am_send((int)(m.node / s->nodes_per_rank), AM_HOP, &m);
    else if (s->rank == 0)
        g_am.answer = m.node, g_am.done = 1;
    else
        am_send(0, AM_DONE, &m);
    return UCS_OK;
}

static ucs_status_t am_done(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)param;
    struct chase_msg m;
    if (length != sizeof(m)) die("AM answer of %zu bytes", length);
    memcpy(&m, data, sizeof(m));
    g_am.answer = m.node;
    g_am.done = 1;
    return UCS_OK;
}

static void am_install(ucp_worker_h worker, const struct chase_slice *s, ucp_ep_h *eps)
{
    g_am.s = s;
    g_am.eps = eps;
    ucp_am_handler_param_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    p.id = AM_HOP;
    p.cb = am_hop;
    ucx_check(ucp_worker_set_am_recv_handler(worker, &p), "AM handler");
    p.id = AM_DONE;
    p.cb = am_done;
    ucx_check(ucp_worker_set_am_recv_handler(worker, &p), "AM handler");
}

/* Rank 0: chase from start with the predeployed handlers. */
static uint64_t am_chase(struct ucx_boot *b, const struct chase_slice *s, uint64_t start,
                         uint64_t depth, long spin)
{
    struct chase_msg m = {start, depth};
    while (m.remaining > 0 && m.node < s->nodes_per_rank) {
        m.node = s->base[m.node];
        m.remaining--;
    }
    if (m.remaining == 0) return m.node;
    g_am.done = 0;
    am_send((int)(m.node / s->nodes_per_rank), AM_HOP, &m);
    long idle = 0;
    double t0 = 0;
    while (!g_am.done) {
        if (ucx_ifunc_progress(b->ictx)) {
            idle = 0;
            continue;
        }
        if (++idle > spin) sched_yield();
        if ((idle & 0xffff) == 0) {
            if (t0 == 0) t0 = now_us();
            else if (now_us() - t0 > TIMEOUT_S * 1e6) die("no answer to an AM chase after %.0f s", TIMEOUT_S);
        }
    }
    return g_am.answer;
}

/* ---- one X-RDMA chase ------------------------------------------------- */

struct chase_result {
    int done;
    ucx_ifunc_status_t status;
    uint64_t node;
    int rank;
    char message[256];
};

static void chase_done(const ucx_ifunc_result_t *r, void *user_data)
{
    struct chase_result *out = user_data;
    out->status = r->status;
    out->rank = r->rank;
    if (r->status != UCX_IFUNC_OK) /* not on the measured path */
        snprintf(out->message, sizeof(out->message), "%s", r->message ? r->message : "");
    if (r->status == UCX_IFUNC_OK && r->reply_size != sizeof(uint64_t)) {
        out->status = UCX_IFUNC_ERR_PROTOCOL;
        snprintf(out->message, sizeof(out->message), "reply of %zu bytes", r->reply_size);
    } else if (r->status == UCX_IFUNC_OK) {
        memcpy(&out->node, r->reply, sizeof(out->node));
    }
    out->done = 1;
}

/* Rank 0: chase from start; returns the final node (or dies). */
static uint64_t xrdma_chase(struct ucx_boot *b, ucx_ifunc_h f, const struct chase_slice *s,
                            uint64_t start, uint64_t depth, long spin)
{
    struct chase_msg m = {start, depth};
    while (m.remaining > 0 && m.node < s->nodes_per_rank) { /* rank 0's own */
        m.node = s->base[m.node];
        m.remaining--;
    }
    if (m.remaining == 0) return m.node;
    struct chase_result res;
    memset(&res, 0, sizeof(res));
    int owner = (int)(m.node / s->nodes_per_rank);
    ucx_ifunc_status_t st = ucx_ifunc_invoke_nb(f, b->eps[owner], &m, sizeof(m), chase_done, &res);
    if (st != UCX_IFUNC_INPROGRESS) die("ucx_ifunc_invoke_nb: %s", ucx_ifunc_status_string(st));
    long idle = 0;
    double t0 = 0;
    while (!res.done) {
        if (ucx_ifunc_progress(b->ictx)) {
            idle = 0;
            continue;
        }
        if (++idle > spin) sched_yield();
        if ((idle & 0xffff) == 0) {
            if (t0 == 0) t0 = now_us();
            else if (now_us() - t0 > TIMEOUT_S * 1e6) die("no answer to a chase after %.0f s", TIMEOUT_S);
        }
    }
    if (res.status != UCX_IFUNC_OK)
        die("chase from node %" PRIu64 " failed at rank %d: %s (%s)", start, res.rank,
            ucx_ifunc_status_string(res.status), res.message);
    return res.node;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N xrdma_chase [options]\n"
            "X-RDMA pointer chase (injected function forwarded from owner to owner)\n"
            "against an MPI_Get + MPI_Win_flush chain, on a random list spread over\n"
            "all ranks. Rank 0 measures; every answer is checked.\n\n"
            "  -n, --nodes N    list nodes per rank (default 4096)\n"
            "  -d, --depth D    hops per chase (default 256)\n"
            "  -r, --reps R     measured chases per mode (default 200)\n"
            "  -w, --warmup W   unmeasured chases per mode first (default 10)\n"
            "      --image P    ifunc image (default: chase_ifunc.xfn next to this program)\n"
            "      --spin S     idle progress calls before sched_yield (default: 0 when\n"
            "                   ranks outnumber cores, else 10000)\n"
            "      --csv        print CSV instead of the table\n"
            "  -h, --help       this text\n");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option lo[] = {
        {"nodes", required_argument, 0, 'n'}, {"depth", required_argument, 0, 'd'},
        {"reps", required_argument, 0, 'r'},  {"warmup", required_argument, 0, 'w'},
        {"image", required_argument, 0, 'I'}, {"spin", required_argument, 0, 'S'},
        {"csv", no_argument, 0, 'C'},         {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    o->nodes_per_rank = 4096;
    o->depth = 256;
    o->reps = 200;
    o->warmup = 10;
    o->image = NULL;
    o->csv = 0;
    o->spin = -1;
    int c;
    while ((c = getopt_long(argc, argv, "n:d:r:w:h", lo, NULL)) != -1) {
        char *end = NULL;
        long long v = 0;
        if (optarg) {
            errno = 0;
            v = strtoll(optarg, &end, 0);
            if (c != 'I' && (errno || *end || v < 0)) {
                if (g_rank == 0) fprintf(stderr, "xrdma_chase: bad number '%s'\n", optarg);
                MPI_Finalize();
                exit(2);
            }
        }
        switch (c) {
        case 'n': o->nodes_per_rank = (uint64_t)v; break;
        case 'd': o->depth = (uint64_t)v; break;
        case 'r': o->reps = (int)v; break;
        case 'w': o->warmup = (int)v; break;
        case 'I': o->image = optarg; break;
        case 'S': o->spin = (long)v; break;
        case 'C': o->csv = 1; break;
        case 'h':
            if (g_rank == 0) usage(stdout);
            MPI_Finalize();
            exit(0);
        default:
            if (g_rank == 0) usage(stderr);
            MPI_Finalize();
            exit(2);
        }
    }
    if (o->nodes_per_rank == 0 || o->reps <= 0) {
        if (g_rank == 0) fprintf(stderr, "xrdma_chase: -n and -r must be positive\n");
        MPI_Finalize();
        exit(2);
    }
}

/* chase_ifunc.xfn in the directory of this executable. */
static char *default_image(void)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
    if (n <= 0) return "chase_ifunc.xfn";
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    strcpy(slash ? slash + 1 : path, "chase_ifunc.xfn");
    return path;
}

/* Ranks on this node vs. cores we may run on: idle ranks must yield at once
 * when they share cores, or the rank with work waits for a time slice. */
static long choose_spin(void)
{
    MPI_Comm local;
    int nlocal;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &nlocal);
    MPI_Comm_free(&local);
    /* mpirun binds each rank to one core when there are enough of them:
     * trust the affinity mask only if it has room for all local ranks. */
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= nlocal)
        cores = CPU_COUNT(&set);
    return nlocal > cores ? 0 : 10000;
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
    if (o.spin < 0) o.spin = choose_spin();
    if (size < 2) die("needs at least 2 ranks");
    const uint64_t npr = o.nodes_per_rank;
    if (npr > UINT64_MAX / 8 / (uint64_t)size) die("list too large");
    const uint64_t n = npr * (uint64_t)size;

    /* The list, everywhere; each rank exposes its slice in the window. */
    uint64_t *next = build_list(n);
    uint64_t *base;
    MPI_Win win;
    if (npr * 8 > (uint64_t)LONG_MAX) die("slice too large for MPI_Aint");
    MPI_Win_allocate((MPI_Aint)(npr * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memcpy(base, next + (uint64_t)rank * npr, npr * 8);
    struct chase_slice slice = {base, npr, rank, size};

    struct ucx_boot b;
    ucx_boot_init(&b, rank, size, &slice);
    am_install(b.worker, &slice, b.eps);

    /* Only rank 0 has the image: the others get the code over UCX. */
    ucx_ifunc_h f = NULL;
    const char *image = o.image ? o.image : default_image();
    int ok = 1;
    if (rank == 0) {
        ucx_ifunc_status_t st = ucx_ifunc_register_file(b.ictx, image, "chase", &f);
        if (st != UCX_IFUNC_OK) {
            fprintf(stderr, "xrdma_chase: cannot register %s: %s (build it with make, or give --image)\n",
                    image, ucx_ifunc_status_string(st));
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* windows filled everywhere */

    const int total = o.warmup + o.reps;
    double t_get = 0, t_x = 0, t_am = 0, t_cold = 0;
    int ok_get = 0, ok_x = 0, ok_am = 0;
    struct walk_info *ref = NULL;
    uint64_t sum_gets = 0, sum_msgs = 0;
    if (rank == 0) {
        ref = malloc(total * sizeof(*ref));
        for (int i = 0; i < total; ++i) {
            ref[i] = walk(next, npr, start_node(i, n), o.depth);
            if (i >= o.warmup) sum_gets += ref[i].remote_hops, sum_msgs += ref[i].messages;
        }
    }

    /* Phase 1: MPI_Get chain. The other ranks wait in a barrier. */
    if (rank == 0) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        double t0 = 0;
        for (int i = 0; i < total; ++i) {
            if (i == o.warmup) t0 = now_us();
            uint64_t node = start_node(i, n);
            for (uint64_t h = 0; h < o.depth; ++h) {
                int owner = (int)(node / npr);
                if (owner == 0) {
                    node = base[node];
                } else {
                    uint64_t v;
                    MPI_Get(&v, 1, MPI_UINT64_T, owner, (MPI_Aint)(node % npr), 1, MPI_UINT64_T, win);
                    MPI_Win_flush(owner, win);
                    node = v;
                }
            }
            if (i >= o.warmup) ok_get += node == ref[i].answer;
            else if (node != ref[i].answer) ok_get = INT_MIN; /* warm-up wrong too */
        }
        t_get = now_us() - t0;
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 2: X-RDMA, interleaved chase by chase with the predeployed-AM
     * reference (same transport, same moment). The other ranks run what
     * arrives until rank 0 is done. */
    MPI_Request stop;
    if (rank == 0) {
        for (int i = 0; i < total; ++i) {
            uint64_t start = start_node(i, n);
            for (int k = 0; k < 2; ++k) {
                int x = (k + i) % 2 == 0; /* alternate which goes first */
                double t0 = now_us();
                uint64_t node = x ? xrdma_chase(&b, f, &slice, start, o.depth, o.spin)
                                  : am_chase(&b, &slice, start, o.depth, o.spin);
                double dt = now_us() - t0;
                if (x && i == 0) t_cold = dt;
                int good = node == ref[i].answer;
                int *okp = x ? &ok_x : &ok_am;
                if (i >= o.warmup) {
                    *(x ? &t_x : &t_am) += dt;
                    *okp += good;
                } else if (!good) {
                    *okp = INT_MIN;
                }
            }
        }
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &stop);
    serve_until(b.ictx, &stop, o.spin);

    /* Who ran what, and who loaded the code they were sent. */
    ucx_ifunc_stats_t s;
    ucx_ifunc_stats(b.ictx, &s);
    uint64_t mine[4] = {s.executed, s.forwarded, s.images_loaded, s.code_sends};
    uint64_t *all = rank == 0 ? malloc(4 * sizeof(uint64_t) * size) : NULL;
    MPI_Gather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    int failed = 0;
    if (rank == 0) {
        double us_get = t_get / o.reps, us_x = t_x / o.reps, us_am = t_am / o.reps;
        failed = ok_get != o.reps || ok_x != o.reps || ok_am != o.reps;
        if (o.csv) {
            printf("mode,ranks,nodes_per_rank,depth,reps,us_per_chase,speedup_vs_mpi_get,answers_ok\n");
            printf("mpi_get_chain,%d,%" PRIu64 ",%" PRIu64 ",%d,%.3f,1.000,%d\n", size, npr, o.depth,
                   o.reps, us_get, ok_get < 0 ? 0 : ok_get);
            printf("xrdma,%d,%" PRIu64 ",%" PRIu64 ",%d,%.3f,%.3f,%d\n", size, npr, o.depth, o.reps,
                   us_x, us_get / us_x, ok_x < 0 ? 0 : ok_x);
            printf("ucp_am_predeployed,%d,%" PRIu64 ",%" PRIu64 ",%d,%.3f,%.3f,%d\n", size, npr, o.depth,
                   o.reps, us_am, us_get / us_am, ok_am < 0 ? 0 : ok_am);
        } else {
            const char *tls = getenv("UCX_TLS");
            printf("# XRDMA pointer chase (ucx_ifunc %s)\n", ucx_ifunc_version());
            printf("# ranks %d, nodes/rank %" PRIu64 ", depth %" PRIu64 ", chases %d (+%d warm-up)\n",
                   size, npr, o.depth, o.reps, o.warmup);
            printf("# UCX_TLS=%s, idle spin %ld before sched_yield\n", tls ? tls : "(default)", o.spin);
            printf("# per chase: %.1f MPI_Get round trips, %.1f X-RDMA one-way messages\n",
                   (double)sum_gets / o.reps, (double)sum_msgs / o.reps);
            printf("# first X-RDMA chase (ships the image, loads it at the targets): %.1f us\n", t_cold);
            for (int r = 0; r < size; ++r)
                printf("# rank %d ran %" PRIu64 " ifuncs (%" PRIu64 " forwarded), loaded %" PRIu64
                       " image(s) %s\n",
                       r, all[4 * r], all[4 * r + 1], all[4 * r + 2],
                       r == 0 ? "(the only rank that read chase_ifunc.xfn)"
                              : "(received over UCX, never read from a file)");
            printf("# %-20s %14s %10s %12s\n", "Mode", "Time/chase(us)", "Speedup", "Per hop(us)");
            printf("  %-20s %14.2f %10.2f %12.3f\n", "MPI_Get chain", us_get, 1.0, us_get / o.depth);
            printf("  %-20s %14.2f %10.2f %12.3f\n", "X-RDMA", us_x, us_get / us_x, us_x / o.depth);
            printf("# reference, not injected: the same chase as a UCP AM handler built into every rank\n");
            printf("  %-20s %14.2f %10.2f %12.3f\n", "UCP AM predeployed", us_am, us_get / us_am,
                   us_am / o.depth);
            printf("# X-RDMA / predeployed AM: %.2f\n", us_x / us_am);
        }
        printf("answers checked: %d/%d %s (MPI_Get chain), %d/%d %s (X-RDMA), %d/%d %s (AM)\n",
               ok_get < 0 ? 0 : ok_get, o.reps, ok_get == o.reps ? "ok" : "FAILED",
               ok_x < 0 ? 0 : ok_x, o.reps, ok_x == o.reps ? "ok" : "FAILED",
               ok_am < 0 ? 0 : ok_am, o.reps, ok_am == o.reps ? "ok" : "FAILED");
        if (failed) printf("FAILED: wrong answers\n");
        fflush(stdout);
        free(all);
        free(ref);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    if (f) ucx_ifunc_deregister(f);
    ucx_boot_fini(&b, size);
    MPI_Win_free(&win);
    free(next);
    MPI_Finalize();
    return failed ? 1 : 0;
}
