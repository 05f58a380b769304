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
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>

#include "bench_common.h" /* UCX over MPI: worker, endpoints, ifunc context */
#include "chase_common.h"
#include "xrdma_chase.h"

#define IMAGE_NAME "chase_ifunc.xfn"
#define TIMEOUT_S 30.0

static long g_spin = -1; /* --spin: idle progress calls before sched_yield; <0: choose */

/* Rank 0: progress (spinning @p spin idle polls before each yield) until
 * *done; dies after TIMEOUT_S without an answer to @p what. */
static void wait_for(struct bench_ucx *b, volatile int *done, long spin, const char *what)
{
    long idle = 0;
    double t0 = 0;
    while (!*done) {
        if (ucx_ifunc_progress(b->ictx)) {
            idle = 0;
            continue;
        }
        if (++idle > spin) sched_yield();
        if ((idle & 0xffff) == 0) {
            if (t0 == 0) t0 = chase_now_us();
            else if (chase_now_us() - t0 > TIMEOUT_S * 1e6) bench_die("no answer to %s after %.0f s", what, TIMEOUT_S);
        }
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
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r); /* completes on its own */
}

static ucs_status_t am_hop(void *arg, const void *header, size_t header_length, void *data,
                           size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)param;
    const struct chase_slice *s = g_am.s;
    struct chase_msg m;
    if (length != sizeof(m)) bench_die("AM chase message of %zu bytes", length);
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
    if (length != sizeof(m)) bench_die("AM answer of %zu bytes", length);
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
    bench_ucx_check(ucp_worker_set_am_recv_handler(worker, &p), "AM handler");
    p.id = AM_DONE;
    p.cb = am_done;
    bench_ucx_check(ucp_worker_set_am_recv_handler(worker, &p), "AM handler");
}

/* Rank 0: chase from start with the predeployed handlers. */
static uint64_t am_chase(struct bench_ucx *b, const struct chase_slice *s, uint64_t start,
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
    wait_for(b, &g_am.done, spin, "an AM chase");
    return g_am.answer;
}

/* ---- one X-RDMA chase ------------------------------------------------- */

/* Rank 0: chase from start; returns the final node (or dies). */
static uint64_t xrdma_chase(struct bench_ucx *b, ucx_ifunc_h f, const struct chase_slice *s,
                            uint64_t start, uint64_t depth, long spin)
{
    struct chase_msg m = {start, depth};
    while (m.remaining > 0 && m.node < s->nodes_per_rank) { /* rank 0's own */
        m.node = s->base[m.node];
        m.remaining--;
    }
    if (m.remaining == 0) return m.node;
    /* The last hop replies the final node (bench_common.h reads it back). */
    struct bench_u64_reply res;
    memset(&res, 0, sizeof(res));
    int owner = (int)(m.node / s->nodes_per_rank);
    ucx_ifunc_status_t st = ucx_ifunc_invoke_nb(f, b->eps[owner], &m, sizeof(m), bench_u64_done, &res);
    if (st != UCX_IFUNC_INPROGRESS) bench_die("ucx_ifunc_invoke_nb: %s", ucx_ifunc_status_string(st));
    wait_for(b, &res.done, spin, "a chase");
    if (res.status != UCX_IFUNC_OK)
        bench_die("chase from node %" PRIu64 " failed at rank %d: %s (%s)", start, res.rank,
            ucx_ifunc_status_string(res.status), res.message);
    return res.value;
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

/* --spin */
static int handle(int c, const char *arg, void *data)
{
    (void)data;
    long long v;
    if (c != 'S' || !chase_number(arg, 0, LONG_MAX, &v)) return 0;
    g_spin = (long)v;
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option extra[] = {{"spin", required_argument, 0, 'S'}, {0, 0, 0, 0}};
    const struct chase_cli cli = {"xrdma_chase", usage, 'w', 1, extra, "", handle, NULL};
    struct chase_options o = {4096, 256, 200, 10, 0, NULL};
    int rank, size;
    chase_start(&argc, &argv, &cli, &o, &rank, &size); /* MPI_Init, the command line */
    bench_name = "xrdma_chase";
    bench_rank = rank;
    const long spin = g_spin >= 0 ? g_spin : bench_choose_spin();
    const uint64_t npr = o.nodes_per_rank;
    const uint64_t n = npr * (uint64_t)size;

    /* The list, everywhere; each rank exposes its slice in the window. */
    uint64_t *next = chase_build_list(npr, size, 1.0 / size, NULL); /* random placement */
    if (!next) bench_die("out of memory for %" PRIu64 " nodes", n);
    uint64_t *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(npr * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memcpy(base, next + (uint64_t)rank * npr, npr * 8);
    struct chase_slice slice = {base, npr, rank, size};

    struct bench_ucx b;
    bench_ucx_init(&b, &slice);
    am_install(b.worker, &slice, b.eps);

    /* Only rank 0 has the image: the others get the code over UCX. */
    ucx_ifunc_h f = NULL;
    const char *image = o.image ? o.image : beside_exe(IMAGE_NAME);
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
    struct chase_walk *ref = NULL;
    uint64_t sum_gets = 0, sum_msgs = 0;
    if (rank == 0) {
        ref = malloc(total * sizeof(*ref));
        for (int i = 0; i < total; ++i) {
            ref[i] = chase_walk(next, npr, chase_start_node(i, n), o.depth);
            if (i >= o.warmup) sum_gets += ref[i].remote_hops, sum_msgs += ref[i].messages;
        }
    }

    /* Phase 1: MPI_Get chain. The other ranks wait in a barrier. */
    if (rank == 0) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        double t0 = 0;
        for (int i = 0; i < total; ++i) {
            if (i == o.warmup) t0 = chase_now_us();
            uint64_t node = UINT64_MAX;
            if (chase_get("xrdma_chase", win, base, npr, chase_start_node(i, n), o.depth, 0, &node) != MPI_SUCCESS)
                node = UINT64_MAX; /* reported; counts as a wrong answer */
            if (i >= o.warmup) ok_get += node == ref[i].answer;
            else if (node != ref[i].answer) ok_get = INT_MIN; /* warm-up wrong too */
        }
        t_get = chase_now_us() - t0;
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 2: X-RDMA, interleaved chase by chase with the predeployed-AM
     * reference (same transport, same moment). The other ranks run what
     * arrives until rank 0 is done. */
    MPI_Request stop;
    if (rank == 0) {
        for (int i = 0; i < total; ++i) {
            uint64_t start = chase_start_node(i, n);
            for (int k = 0; k < 2; ++k) {
                int x = (k + i) % 2 == 0; /* alternate which goes first */
                double t0 = chase_now_us();
                uint64_t node = x ? xrdma_chase(&b, f, &slice, start, o.depth, spin)
                                  : am_chase(&b, &slice, start, o.depth, spin);
                double dt = chase_now_us() - t0;
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
    bench_serve_until(&b, &stop, spin, NULL);

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
            printf("# UCX_TLS=%s, idle spin %ld before sched_yield\n", tls ? tls : "(default)", spin);
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
    bench_ucx_fini(&b);
    MPI_Win_free(&win);
    free(next);
    MPI_Finalize();
    return failed ? 1 : 0;
}
