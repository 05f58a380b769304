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
 *                  per node that is not rank 0's. It reads a second window
 *                  with the same list, one that never sees an X-op, as a
 *                  program without XRDMA's functions has it (from a
 *                  window's first X-op XRDMA counts its MPI RMA calls, to
 *                  skip flushes with nothing to complete: XRDMA_FLUSH_SKIP).
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
#include <inttypes.h>
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beside_exe.h" /* the image beside the program */
#include "chase_common.h"
#include "xrdma_chase.h"

#define IMAGE_NAME "mpi_chase_ifunc.xfn"

/* ---- the two chases (rank 0, inside MPI_Win_lock_all) ----------------- */

static int g_requests; /* --requests */

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
    if (rc != MPI_SUCCESS) return chase_report("mpi_pointer_chase", rc, g_requests ? "MPIX_Rxget" : "MPIX_Xget", start);
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

/* --requests */
static int handle(int c, const char *arg, void *data)
{
    (void)arg, (void)data;
    if (c != 'R') return 0;
    g_requests = 1;
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option extra[] = {{"requests", no_argument, 0, 'R'}, {0, 0, 0, 0}};
    const struct chase_cli cli = {"mpi_pointer_chase", usage, 'w', 1, extra, "", handle, NULL};
    struct chase_options o = {4096, 256, 200, 10, 0, NULL};
    int rank, size;
    chase_start(&argc, &argv, &cli, &o, &rank, &size); /* MPI_Init, the command line */
    const uint64_t npr = o.nodes_per_rank;
    const uint64_t n = npr * (uint64_t)size;
    uint64_t *next = chase_build_list(npr, size, 1.0 / size, NULL); /* random placement */
    if (!next) {
        fprintf(stderr, "mpi_pointer_chase: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Only rank 0 reads the image; the targets get the code over the network. */
    MPIX_Ifunc f = chase_load_ifunc("mpi_pointer_chase", rank, o.image ? o.image : beside_exe(IMAGE_NAME),
                                    "\n(build it with make, or give --image)");

    /* The application's window: this rank's slice of the list, then the two
     * counters the ifunc keeps (steps run here, forwards); and the same
     * slice again in the MPI_Get chain's window. */
    uint64_t *base, *base_get;
    MPI_Win win, win_get;
    /* (Errors of MPI_Get / MPIX_Xget come back as return codes, not aborts.) */
    chase_list_window(0, (MPI_Aint)((npr + 2) * 8), MPI_INFO_NULL, &base, &win);
    chase_list_window(0, (MPI_Aint)(npr * 8), MPI_INFO_NULL, &base_get, &win_get);
    memcpy(base, next + (uint64_t)rank * npr, npr * 8);
    memcpy(base_get, base, npr * 8);
    base[npr] = base[npr + 1] = 0;

    MPI_Barrier(MPI_COMM_WORLD); /* every window filled */

    const int total = o.warmup + o.reps;
    double t_get = 0, t_x = 0, t_cold = 0;
    int ok_get = 0, ok_x = 0, failed = 0;
    uint64_t sum_gets = 0, sum_msgs = 0;
    if (rank == 0) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win_get);
        for (int i = 0; i < total && !failed; ++i) {
            uint64_t start = chase_start_node(i, n);
            struct chase_walk ref = chase_walk(next, npr, start, o.depth);
            if (i >= o.warmup) sum_gets += ref.remote_hops, sum_msgs += ref.messages;
            for (int k = 0; k < 2 && !failed; ++k) {
                int x = (i + k) % 2 == 0; /* alternate which mode goes first */
                uint64_t got = UINT64_MAX;
                double t0 = chase_now_us();
                int rc = x ? xrdma_chase(win, f, base, npr, start, o.depth, &got)
                           : chase_get("mpi_pointer_chase", win_get, base_get, npr, start, o.depth, g_requests, &got);
                double dt = chase_now_us() - t0;
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
        MPI_Win_unlock_all(win_get);
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
        const char *completion = g_requests ? "request" : "flush";
        const char *get_name = g_requests ? "MPI_Rget chain" : "MPI_Get chain";
        const char *x_name = g_requests ? "X-RDMA (Rxget)" : "X-RDMA (Xget)";
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
                   g_requests ? "MPI_Wait on a request" : "MPI_Win_flush");
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
    MPI_Win_free(&win_get);
    MPI_Win_free(&win);
    free(next);
    MPI_Finalize();
    return failed ? 1 : 0;
}
