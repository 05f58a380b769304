/* xrdma_pointer_chase: a linked list spread over the windows of N ranks,
 * followed for D hops from many start nodes, five ways, chase by chase in
 * rotating order (each chase starts at the same node in every mode):
 *
 *   get       MPI_Get + MPI_Win_flush per node that is not rank 0's (the
 *             baseline: one round trip per remote hop), on a window of its
 *             own (same list) that sees no X-op, as a program without
 *             XRDMA's functions has it;
 *   am        the published "AM" baseline: a UCP active-message handler
 *             compiled into this program (predeployed at every rank, on a
 *             UCP worker of its own) walks local nodes and sends the chase
 *             on to the owner of the next node; the last rank answers rank 0;
 *   native    MPIX_Xget of xchase_native.xfn (native code only): the ifunc
 *             walks local nodes, xrdma_forward()s itself, replies at the end;
 *   bitcode   the same ifunc from xchase_bitcode.xfn (LLVM bitcode only:
 *             each target JIT-compiles it on first use);
 *   msg       native, on a second window (same list) created with info key
 *             xrdma_exec=target: every hop travels to its owner as a
 *             message, as with XRDMA_EXEC=target (native and bitcode follow
 *             XRDMA_EXEC, by default auto: code runs where the data is mapped).
 *
 * Before each measured chase, --settle (default 1) unmeasured chases of the
 * same mode from other start nodes: each mode is measured in its own steady
 * state (its code and the list where its own chases leave them), not in the
 * state the mode before it left. Without them (--settle 0), a chase that
 * follows one run by messages (am, msg: ~35 us of UCX traffic at both
 * ranks) finds its code and data out of the caches: over shared memory, 2
 * ranks, L = 1/2, native took 5.3-5.7 us after am or msg and 4.4-4.5 us
 * after get, the MPI_Get chain 9.0-9.3 us with am in the rotation and
 * 8.3 us without, and bitcode, which always follows native (on the same
 * list), 3.8-4.1 us; with one settling chase, get 7.9-8.0, native
 * 4.2-4.4, bitcode 3.9-4.1 us.
 *
 * Locality L: the probability that the next node lives on the same rank as
 * the current one (the list is one cycle through all N * n nodes whose
 * owners follow that rule; L = 1/N is random placement). Rank 0 reads its
 * own nodes from memory in every mode.
 *
 * Idle policy, the same for all modes: ranks other than 0 wait in
 * MPI_Barrier, where Open MPI's progress engine runs both the X-RDMA hook
 * and this program's UCP worker (registered with opal_progress_register),
 * yielding the core when idle if ranks outnumber cores (Open MPI's default
 * mpi_yield_when_idle); under MPICH, which has no such hook, they test an
 * MPI_Ibarrier (XRDMA serves from its wrapper of MPI_Test) and progress the
 * worker in turn, yielding as rank 0 does; rank 0
 * waits for an answer polling the way the X-RDMA layer's MPI_Win_flush does
 * (256 idle polls, or 1 when the ranks outnumber the cores, then
 * sched_yield). Every answer is checked against a sequential walk; the exit
 * status is 1 if one is wrong.
 *
 *   mpirun -n N xrdma_pointer_chase [-d 256] [-L 0.5,0.9] [--modes ...] [--csv]
 */
#include "bench_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mpix_xrdma.h>
#include <stdint.h>

#include "chase_common.h"
#include "xrdma_chase.h" /* struct chase_args: the ifunc's arguments and the AM's payload */


enum { MODE_GET, MODE_AM, MODE_NATIVE, MODE_BITCODE, MODE_MSG, NMODES };
static const char *const mode_names[NMODES] = {"get", "am", "native", "bitcode", "msg"};
static const char *const mode_titles[NMODES] = {"MPI_Get chain", "AM handler", "X-RDMA native",
                                                "X-RDMA bitcode", "X-RDMA as message"};

/* This benchmark's own options (beside struct chase_options). */
struct options {
    double loc[32];
    int nloc;
    int modes[NMODES];
    const char *image[2];
    int win_create;
    long idle_polls; /* --idle-polls */
    int settle;      /* --settle */
};

static int g_rank = -1, g_size;

/* ---- waiting at rank 0: as the X-RDMA layer's MPI_Win_flush does ---------- */

static unsigned g_spin_before_yield = 256;

static void choose_idle_policy(void)
{
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    long pus = sysconf(_SC_NPROCESSORS_ONLN);
    if (pus > 0 && local > pus) g_spin_before_yield = 1;
}

/* ---- the predeployed active-message handler ------------------------------ */

enum { AM_CHASE = 0x70, AM_DONE = 0x71 };

static struct {
    struct bench_ucx b;
    const uint64_t *base; /* this rank's nodes */
    uint64_t npr;
    struct chase_args out; /* the one message this rank has in flight */
    uint64_t done_value;
    volatile int done;
    uint64_t steps, forwards;
} am;

static void am_send(int to, unsigned id, const void *buf, size_t len)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(am.b.eps[to], id, NULL, 0, buf, len, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r); /* am.out stays put until this rank sends again */
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    (void)header, (void)header_length, (void)param;
    if ((uintptr_t)arg == AM_DONE) {
        memcpy(&am.done_value, data, sizeof(am.done_value));
        am.done = 1;
        return UCS_OK;
    }
    struct chase_args a;
    if (length != sizeof(a)) bench_die("chase message of %zu bytes", length);
    memcpy(&a, data, sizeof(a));
    const uint64_t npr = a.nodes_per_rank, lo = (uint64_t)am.b.rank * npr;
    while (a.remaining > 0 && a.node - lo < npr) {
        a.node = am.base[a.node - lo];
        a.remaining--;
    }
    am.steps++;
    am.out = a;
    if (a.remaining == 0) {
        if (am.b.rank == 0) { /* the chase ended here, at its origin */
            am.done_value = a.node;
            am.done = 1;
        } else {
            am_send(0, AM_DONE, &am.out.node, sizeof(am.out.node));
        }
        return UCS_OK;
    }
    am.forwards++;
    am_send((int)(a.node / npr), AM_CHASE, &am.out, sizeof(am.out));
    return UCS_OK;
}

static void am_install(unsigned id)
{
    ucp_am_handler_param_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = id;
    p.cb = am_cb;
    p.arg = (void *)(uintptr_t)id;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    bench_ucx_check(ucp_worker_set_am_recv_handler(am.b.worker, &p), "ucp_worker_set_am_recv_handler");
}

/* Open MPI's progress engine calls this while a rank waits in MPI. */
static int am_progress_hook(void) { return (int)ucp_worker_progress(am.b.worker); }

#ifdef OPEN_MPI
/* Open MPI's progress engine (libopen-pal), declared here rather than
 * through opal's headers. */
typedef int (*opal_progress_callback_t)(void);
int opal_progress_register(opal_progress_callback_t cb);
int opal_progress_unregister(opal_progress_callback_t cb);
static void am_serve_start(void) { opal_progress_register(am_progress_hook); }
static void am_serve_stop(void) { opal_progress_unregister(am_progress_hook); }
/* Ranks other than 0 serve in here (both the ifunc and the AM). */
static void serve_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
#else
static void am_serve_start(void) {}
static void am_serve_stop(void) {}
static void serve_barrier(void)
{
    MPI_Request r;
    int done = 0;
    unsigned idle = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!done) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (am_progress_hook()) {
            idle = 0;
        } else if (++idle >= g_spin_before_yield) {
            sched_yield();
            idle = 0;
        }
    }
}
#endif

/* ---- the four chases (rank 0, inside MPI_Win_lock_all) ------------------- */

/* Rank 0's own nodes first, in every mode. Returns 1 if the chase is over. */
static int local_prefix(struct chase_args *a, const uint64_t *base, uint64_t npr)
{
    while (a->remaining > 0 && a->node < npr) {
        a->node = base[a->node];
        a->remaining--;
    }
    return a->remaining == 0;
}

static int am_chase(const uint64_t *base, uint64_t npr, uint64_t start, uint64_t depth, uint64_t *out)
{
    struct chase_args a = {start, depth, npr};
    if (local_prefix(&a, base, npr)) {
        *out = a.node;
        return MPI_SUCCESS;
    }
    am.done = 0;
    am.out = a;
    am_send((int)(a.node / npr), AM_CHASE, &am.out, sizeof(am.out));
    unsigned idle = 0;
    while (!am.done) {
        if (ucp_worker_progress(am.b.worker)) {
            idle = 0;
        } else if (++idle >= g_spin_before_yield) {
            sched_yield();
            idle = 0;
        }
    }
    *out = am.done_value;
    return MPI_SUCCESS;
}

static int x_chase(MPI_Win win, MPIX_Ifunc f, const uint64_t *base, uint64_t npr, uint64_t start, uint64_t depth,
                   uint64_t *out)
{
    struct chase_args a = {start, depth, npr};
    if (local_prefix(&a, base, npr)) {
        *out = a.node;
        return MPI_SUCCESS;
    }
    int owner = (int)(a.node / npr);
    uint64_t answer = UINT64_MAX;
    int rc = MPIX_Xget(&answer, 1, MPI_UINT64_T, owner, 0, 0, MPI_UINT64_T, f, &a, (int)sizeof(a), win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(owner, win);
    if (rc != MPI_SUCCESS) return chase_report("xrdma_pointer_chase", rc, "MPIX_Xget", start);
    *out = answer;
    return MPI_SUCCESS;
}

/* Polls with nothing to do (--idle-polls): what an empty progress pass
 * costs, the X-RDMA layer's and the bare UCP worker's (counted by callgrind
 * in benchmarks/drivers/profile-hop). Not inlined: callgrind collects inside them. */
__attribute__((noinline)) static void idle_xrdma_polls(long k)
{
    for (long i = 0; i < k; ++i) MPIX_Xprogress();
}
__attribute__((noinline)) static void idle_am_polls(long k)
{
    for (long i = 0; i < k; ++i) ucp_worker_progress(am.b.worker);
}

/* What one chase of any mode needs (rank 0). */
struct chase_set {
    MPI_Win win, win_msg, win_get;
    uint64_t *base, *base_msg, *base_get;
    MPIX_Ifunc f[2];
    uint64_t npr, depth;
};

/* One chase of mode @p m from node @p start: its answer in *@p got. */
static int one_chase(const struct chase_set *c, int m, uint64_t start, uint64_t *got)
{
    switch (m) {
    case MODE_GET: return chase_get("xrdma_pointer_chase", c->win_get, c->base_get, c->npr, start, c->depth, 0, got);
    case MODE_AM: return am_chase(c->base, c->npr, start, c->depth, got);
    case MODE_MSG: return x_chase(c->win_msg, c->f[0], c->base_msg, c->npr, start, c->depth, got);
    default: return x_chase(c->win, c->f[m - MODE_NATIVE], c->base, c->npr, start, c->depth, got);
    }
}

/* ---- options ----------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N xrdma_pointer_chase [options]      (N >= 2)\n"
            "Pointer chase over a list spread across the windows of all ranks: an MPI_Get\n"
            "chain, a predeployed UCP active-message handler, and MPIX_Xget with a\n"
            "forwarding ifunc from a native and from a bitcode image.\n\n"
            "  -n, --nodes N      list nodes per rank (default 4096)\n"
            "  -d, --depth D      hops per chase (default 256)\n"
            "  -L, --locality L   probability that the next node is on the same rank; a\n"
            "                     comma-separated list runs each (default: 1/N, random)\n"
            "  -r, --reps R       measured chases per mode and locality (default 100)\n"
            "  -x, --warmup W     unmeasured chases per mode first (default 5)\n"
            "      --settle S     unmeasured chases of the same mode, from other start\n"
            "                     nodes, right before each measured one (default 1; 0:\n"
            "                     each mode starts where the mode before it left the caches)\n"
            "      --modes LIST   get,am,native,bitcode,msg (default all; get is the baseline)\n"
            "  -w, --win-option K allocate (default) or create: the list's window\n"
            "      --image-native P, --image-bitcode P\n"
            "                     the images (default: xchase_native.xfn, xchase_bitcode.xfn\n"
            "                     beside this program)\n"
            "      --idle-polls K after the chases, every rank polls K times with nothing\n"
            "                     to do: MPIX_Xprogress (idle_xrdma_polls), then the AM\n"
            "                     handler's worker (idle_am_polls), for benchmarks/drivers/profile-hop\n"
            "      --csv          CSV instead of the table\n"
            "  -h, --help         this text\n");
}

/* -L, --modes, -w, --image-native, --image-bitcode, --idle-polls, --settle */
static int handle(int c, const char *arg, void *data)
{
    struct options *o = data;
    char *end;
    switch (c) {
    case 'L':
        for (const char *p = arg; *p;) {
            if (o->nloc == 32) return 0;
            double v = strtod(p, &end);
            if (end == p || v < 0 || v > 1 || (*end && *end != ',')) return 0;
            o->loc[o->nloc++] = v;
            p = *end == ',' ? end + 1 : end;
        }
        return 1;
    case 'M':
        for (int m = 0; m < NMODES; ++m) {
            size_t k = strlen(mode_names[m]);
            const char *p = strstr(arg, mode_names[m]);
            o->modes[m] = p && (p == arg || p[-1] == ',') && (p[k] == ',' || p[k] == '\0');
        }
        o->modes[MODE_GET] = 1; /* the baseline */
        return 1;
    case 'w':
        if (!strcmp(arg, "create")) o->win_create = 1;
        else if (strcmp(arg, "allocate") != 0) return 0;
        return 1;
    case 'I':
        o->idle_polls = strtol(arg, &end, 10);
        return *arg && !*end && o->idle_polls >= 0;
    case 'S': {
        long v = strtol(arg, &end, 10);
        o->settle = (int)v;
        return *arg && !*end && v >= 0 && v <= 100;
    }
    case 'N': o->image[0] = arg; return 1;
    case 'B': o->image[1] = arg; return 1;
    default: return 0;
    }
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    static const struct option extra[] = {
        {"locality", required_argument, 0, 'L'},      {"modes", required_argument, 0, 'M'},
        {"win-option", required_argument, 0, 'w'},    {"image-native", required_argument, 0, 'N'},
        {"image-bitcode", required_argument, 0, 'B'}, {"idle-polls", required_argument, 0, 'I'},
        {"settle", required_argument, 0, 'S'},
        {0, 0, 0, 0}};
    struct options o;
    memset(&o, 0, sizeof(o));
    for (int m = 0; m < NMODES; ++m) o.modes[m] = 1;
    o.settle = 1;
    const struct chase_cli cli = {"xrdma_pointer_chase", usage, 'x', 0, extra, "L:w:", handle, &o};
    struct chase_options co = {4096, 256, 100, 5, 0, NULL};
    chase_start(&argc, &argv, &cli, &co, &g_rank, &g_size); /* MPI_Init, the command line */
    bench_rank = g_rank;
    bench_name = "xrdma_pointer_chase";
    if (!o.nloc) o.loc[o.nloc++] = 1.0 / g_size;
    const uint64_t npr = co.nodes_per_rank, n = npr * (uint64_t)g_size;
    choose_idle_policy();

    /* The window: this rank's slice, then the ifunc's two counters. */
    uint64_t *base;
    MPI_Win win;
    const MPI_Aint bytes = (MPI_Aint)((npr + 2) * 8);
    void *owned = chase_list_window(o.win_create, bytes, MPI_INFO_NULL, &base, &win);
    /* The same list again, in a window whose X-ops always travel. */
    uint64_t *base_msg = NULL;
    MPI_Win win_msg = MPI_WIN_NULL;
    void *owned_msg = NULL;
    if (o.modes[MODE_MSG]) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "xrdma_exec", "target");
        owned_msg = chase_list_window(o.win_create, bytes, info, &base_msg, &win_msg);
        MPI_Info_free(&info);
    }
    /* And in a window without X-ops for the MPI_Get chain: a program
     * without XRDMA's functions has its window as Open MPI made it (from a
     * window's first X-op XRDMA counts its MPI RMA calls, XRDMA_FLUSH_SKIP). */
    uint64_t *base_get = NULL;
    MPI_Win win_get = MPI_WIN_NULL;
    void *owned_get = NULL;
    if (o.modes[MODE_GET]) owned_get = chase_list_window(o.win_create, bytes, MPI_INFO_NULL, &base_get, &win_get);

    bench_ucx_init(&am.b, NULL);
    am.base = base;
    am.npr = npr;
    am_install(AM_CHASE);
    am_install(AM_DONE);
    am_serve_start();

    MPIX_Ifunc f[2] = {MPIX_IFUNC_NULL, MPIX_IFUNC_NULL};
    if (o.modes[MODE_NATIVE] || o.modes[MODE_MSG]) 
        f[0] = chase_load_ifunc("xrdma_pointer_chase", g_rank,
                                o.image[0] ? o.image[0] : beside_exe("xchase_native.xfn"), "");
    if (o.modes[MODE_BITCODE]) 
        f[1] = chase_load_ifunc("xrdma_pointer_chase", g_rank,
                                o.image[1] ? o.image[1] : beside_exe("xchase_bitcode.xfn"), "");

    if (g_rank == 0) {
        const char *tls = getenv("UCX_TLS");
        if (co.csv) {
            printf("benchmark,transport,ranks,nodes_per_rank,depth,locality,measured_locality,mode,reps,"
                   "mean_us,median_us,speedup_mean,speedup_median,per_hop_us,remote_hops,messages,answers_ok\n");
        } else {
            printf("# XRDMA pointer chase (MPIX %s): %d ranks, %" PRIu64 " nodes/rank, depth %" PRIu64
                   ", %d chases per mode (+%d warm-up), UCX_TLS=%s, MPI_Win_%s\n",
                   MPIX_XRDMA_VERSION, g_size, npr, co.depth, co.reps, co.warmup, tls ? tls : "(default)",
                   o.win_create ? "create" : "allocate");
            printf("# modes interleaved chase by chase, each measured chase after %d unmeasured one(s) of its mode;\n"
                   "# idle ranks wait in MPI_Barrier (Open MPI's progress engine runs the X-RDMA layer and the AM\n"
                   "# handler's worker alike; MPICH: testing an MPI_Ibarrier, then the worker); rank 0 spins %u\n"
                   "# polls, then yields\n",
                   o.settle, g_spin_before_yield);
        }
        fflush(stdout);
    }

    int failed = 0;
    for (int li = 0; li < o.nloc && !failed; ++li) {
        double measured;
        uint64_t *next = chase_build_list(npr, g_size, o.loc[li], &measured);
        if (!next) bench_die("out of memory");
        uint64_t *const slices[3] = {base, base_msg, base_get};
        for (int k = 0; k < 3; ++k)
            if (slices[k]) {
                memcpy(slices[k], next + (uint64_t)g_rank * npr, npr * 8);
                slices[k][npr] = slices[k][npr + 1] = 0;
            }
        am.steps = am.forwards = 0;
        MPI_Barrier(MPI_COMM_WORLD); /* every slice in place */

        const int total = co.warmup + co.reps;
        double *t[NMODES];
        int ok[NMODES] = {0};
        for (int m = 0; m < NMODES; ++m) t[m] = calloc((size_t)co.reps, sizeof(double));
        uint64_t sum_remote = 0, sum_msgs = 0;
        double t_first_x[2] = {0, 0};
        if (g_rank == 0) {
            MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
            if (base_msg) MPI_Win_lock_all(MPI_MODE_NOCHECK, win_msg);
            if (base_get) MPI_Win_lock_all(MPI_MODE_NOCHECK, win_get);
            const struct chase_set cs = {win, win_msg, win_get, base, base_msg, base_get, {f[0], f[1]}, npr, co.depth};
            for (int i = 0; i < total && !failed; ++i) {
                uint64_t start = chase_start_node(i + li * 100003, n);
                struct chase_walk ref = chase_walk(next, npr, start, co.depth);
                if (i >= co.warmup) sum_remote += ref.remote_hops, sum_msgs += ref.messages;
                for (int k = 0; k < NMODES && !failed; ++k) {
                    int m = (i + k) % NMODES; /* rotate which mode goes first */
                    if (!o.modes[m]) continue;
                    uint64_t got = UINT64_MAX;
                    /* Settling chases (checked too), from start nodes of another stretch of the sequence. */
                    for (int s = 0; s < o.settle && !failed; ++s) {
                        const uint64_t from = chase_start_node(i + li * 100003 + 50021 * (s + 1), n);
                        const uint64_t want = chase_walk(next, npr, from, co.depth).answer;
                        if (one_chase(&cs, m, from, &got) != MPI_SUCCESS || got != want) {
                            fprintf(stderr, "xrdma_pointer_chase: settling %s chase from node %" PRIu64
                                            " failed or ended at %" PRIu64 ", want %" PRIu64 "\n",
                                    mode_names[m], from, got, want);
                            failed = 1;
                        }
                    }
                    if (failed) break;
                    double t0 = chase_now_us();
                    int rc = one_chase(&cs, m, start, &got);
                    double dt = chase_now_us() - t0;
                    if (rc != MPI_SUCCESS) {
                        failed = 1;
                        break;
                    }
                    if (i == 0 && (m == MODE_NATIVE || m == MODE_BITCODE)) t_first_x[m - MODE_NATIVE] = dt;
                    if (got != ref.answer) {
                        fprintf(stderr, "xrdma_pointer_chase: %s chase from node %" PRIu64 " ended at %" PRIu64
                                        ", want %" PRIu64 "\n",
                                mode_names[m], start, got, ref.answer);
                        failed = 1;
                    } else if (i >= co.warmup) {
                        t[m][i - co.warmup] = dt;
                        ok[m]++;
                    }
                }
            }
            if (base_msg) MPI_Win_unlock_all(win_msg);
            if (base_get) MPI_Win_unlock_all(win_get);
            MPI_Win_unlock_all(win);
        }
        serve_barrier();
        MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

        uint64_t mine[4] = {base[npr], base[npr + 1], am.steps, am.forwards}, *all = NULL;
        if (g_rank == 0) all = malloc(4 * sizeof(uint64_t) * (size_t)g_size);
        MPI_Gather(mine, 4, MPI_UINT64_T, all, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        if (g_rank == 0 && !failed) {
            double mean[NMODES] = {0}, med[NMODES] = {0};
            for (int m = 0; m < NMODES; ++m) {
                if (!o.modes[m]) continue;
                for (int i = 0; i < co.reps; ++i) mean[m] += t[m][i];
                mean[m] /= co.reps;
                med[m] = bench_summarize(t[m], (size_t)co.reps).median;
            }
            const char *tr = getenv("UCX_TLS");
            const char *tl = !tr ? "default" : strstr(tr, "tcp") ? "tcp" : strstr(tr, "sm") ? "shm" : tr;
            double remote = (double)sum_remote / co.reps, msgs = (double)sum_msgs / co.reps;
            if (!co.csv) {
                printf("# L=%.3f (measured %.3f): per chase %.1f MPI_Get round trips, %.1f one-way messages"
                       " (AM, X-RDMA); first X-RDMA chase (code shipped): native %.0f us, bitcode %.0f us\n",
                       o.loc[li], measured, remote, msgs, t_first_x[0], t_first_x[1]);
                printf("# %-16s %8s %14s %14s %9s %9s %11s %8s\n", "Mode", "L", "Mean(us)", "Median(us)",
                       "Speedup", "Spd(med)", "Per hop(us)", "Answers");
            }
            for (int m = 0; m < NMODES; ++m) {
                if (!o.modes[m]) continue;
                double sp = mean[m] > 0 ? mean[MODE_GET] / mean[m] : 0, spm = med[m] > 0 ? med[MODE_GET] / med[m] : 0;
                if (co.csv)
                    printf("xrdma_pointer_chase,%s,%d,%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%s,%d,%.3f,%.3f,%.3f,%.3f,%.4f,"
                           "%.1f,%.1f,%d\n",
                           tl, g_size, npr, co.depth, o.loc[li], measured, mode_names[m], co.reps, mean[m], med[m], sp,
                           spm, mean[m] / (double)co.depth, remote, m == MODE_GET ? 2 * remote : msgs, ok[m]);
                else
                    printf("  %-16s %8.3f %14.2f %14.2f %9.2f %9.2f %11.3f %4d/%-4d\n", mode_titles[m], o.loc[li],
                           mean[m], med[m], sp, spm, mean[m] / (double)co.depth, ok[m], co.reps);
            }
            if (!co.csv) {
                for (int r = 0; r < g_size; ++r)
                    printf("# rank %d: ifunc ran %" PRIu64 " times (forwarded %" PRIu64 "), AM handler %" PRIu64
                           " (forwarded %" PRIu64 ")\n",
                           r, all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]);
            }
            for (int m = 0; m < NMODES; ++m)
                if (o.modes[m] && ok[m] != co.reps) failed = 1;
            fflush(stdout);
        }
        free(all);
        for (int m = 0; m < NMODES; ++m) free(t[m]);
        free(next);
        MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) printf("%sanswers checked: %s\n", co.csv ? "# " : "", failed ? "FAILED" : "ok");
    if (o.idle_polls > 0) { /* nothing in flight: every rank polls alone */
        MPI_Barrier(MPI_COMM_WORLD);
        idle_xrdma_polls(o.idle_polls);
        idle_am_polls(o.idle_polls);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    am_serve_stop();
    MPIX_Ifunc_free(&f[0]);
    MPIX_Ifunc_free(&f[1]);
    if (base_msg) MPI_Win_free(&win_msg);
    if (base_get) MPI_Win_free(&win_get);
    MPI_Win_free(&win);
    bench_ucx_fini(&am.b);
    free(owned);
    free(owned_msg);
    free(owned_get);
    MPI_Finalize();
    return failed ? 1 : 0;
}
