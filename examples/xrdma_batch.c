/* xrdma_batch: a stream of small invocations completed batch by batch, with
 * acknowledgements that wait until the origin asks for them.
 *
 * Rank 0 invokes examples/batch_ifunc.c ("bump": add the argument to a
 * counter the target owns, no reply bytes) at every other rank, in batches
 * of -b invocations per target, and completes each batch before the next,
 * two ways, batch by batch in turn:
 *
 *   acknowledged  flags 0: each target acknowledges what it ran at the end
 *                 of each of its progress passes (one message per pass,
 *                 often one per invocation when the target keeps up).
 *   lazy          UCX_IFUNC_INVOKE_LAZY_ACK: the targets hold the
 *                 acknowledgements; rank 0 asks for them once per batch
 *                 (ucx_ifunc_request_acks()) when it starts to wait, and
 *                 each target answers the batch in one message.
 *
 * Every invocation's completion is checked, and at the end every target's
 * counter against what rank 0 sent it. Only rank 0 reads the image; the
 * others receive the code over UCX. MPI bootstraps UCX; the ranks connect on
 * demand (ucx_ifunc_context_params_t.connect): rank 0 to every target as it
 * first invokes there, each target only back to rank 0, which it answers
 * (checked: ucx_ifunc_stats() counts each process's peers).
 *
 *   mpirun -n N xrdma_batch [-b 64] [-r 200] [--image PATH]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>

#include "bench_common.h" /* UCX over MPI: worker, endpoints, ifunc context; beside_exe() */
#include "chase_common.h" /* chase_now_us() */

struct batch {
    long left;   /* completions still to come */
    long failed; /* completions with an error */
};

static void counted(const ucx_ifunc_result_t *r, void *user_data)
{
    struct batch *b = user_data;
    if (r->status != UCX_IFUNC_OK) {
        if (b->failed++ == 0)
            fprintf(stderr, "xrdma_batch: bump at rank %d failed: %s (%s)\n", r->rank,
                    ucx_ifunc_status_string(r->status), r->message ? r->message : "");
    }
    b->left--;
}

/* Rank 0: one batch of @p n bumps by @p delta at every other rank, completed
 * before it returns; the time it took, in microseconds. */
static double one_batch(struct bench_ucx *u, ucx_ifunc_h bump, long n, int64_t delta, int lazy, long *failed)
{
    struct batch b = {0, 0};
    const double t0 = chase_now_us();
    for (long i = 0; i < n; ++i)
        for (int t = 1; t < u->size; ++t) {
            ucx_ifunc_status_t st = ucx_ifunc_invoke_nbx(bump, bench_ucx_ep(u, t), &delta, sizeof(delta),
                                                         lazy ? UCX_IFUNC_INVOKE_LAZY_ACK : 0, counted, &b);
            if (st != UCX_IFUNC_INPROGRESS) bench_die("ucx_ifunc_invoke_nbx: %s", ucx_ifunc_status_string(st));
            b.left++;
        }
    if (lazy)
        for (int t = 1; t < u->size; ++t) ucx_ifunc_request_acks(u->ictx, bench_ucx_ep(u, t)); /* once per batch */
    while (b.left > 0) ucx_ifunc_progress_wait(u->ictx); /* waits for answers: watches the rings between passes */
    *failed += b.failed;
    return chase_now_us() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    bench_name = "xrdma_batch";
    long per_target = 64, reps = 200;
    const char *image = NULL;
    static const struct option lo[] = {{"batch", required_argument, 0, 'b'}, {"reps", required_argument, 0, 'r'},
                                       {"image", required_argument, 0, 'G'}, {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:r:h", lo, NULL)) != -1) {
        switch (c) {
        case 'b': per_target = atol(optarg); break;
        case 'r': reps = atol(optarg); break;
        case 'G': image = optarg; break;
        default:
            if (bench_rank == 0)
                fprintf(c == 'h' ? stdout : stderr,
                        "Usage: mpirun -n N xrdma_batch [-b per_target] [-r batches] [--image PATH]\n"
                        "Batches of invocations completed together, acknowledged each at once or\n"
                        "when the origin asks (UCX_IFUNC_INVOKE_LAZY_ACK); every completion checked.\n");
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || per_target < 1 || reps < 1) {
        if (bench_rank == 0) fprintf(stderr, "xrdma_batch: needs 2 ranks or more, -b and -r at least 1\n");
        MPI_Finalize();
        return 2;
    }

    int64_t counter = 0; /* what bump() adds to, at every rank but 0 */
    struct bench_ucx u;
    bench_ucx_init_on_demand(&u, &counter);
    const long spin = bench_choose_spin();
    if (spin == 0) ucx_ifunc_set_spin(u.ictx, 0); /* more ranks here than cores: progress does not spin on rings */

    ucx_ifunc_h bump = NULL;
    int ok = 1;
    if (bench_rank == 0) {
        const char *path = image ? image : beside_exe("batch_ifunc.xfn");
        ucx_ifunc_status_t st = ucx_ifunc_register_file(u.ictx, path, "bump", &bump);
        if (st != UCX_IFUNC_OK) {
            fprintf(stderr, "xrdma_batch: cannot register %s: %s\n", path, ucx_ifunc_status_string(st));
            ok = 0;
        } else {
            /* bump never forwards: a layer could run several calls of it
             * under one invocation (ucx_ifunc_ctx_next_call(); the MPI
             * layer bundles MPIX_Xinvoke calls so). */
            printf("# bump ends where it runs (ucx_ifunc_stays): %s\n",
                   ucx_ifunc_stays(bump) == UCX_IFUNC_OK ? "yes" : "no");
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        return 2;
    }

    /* Rank 0 runs the batches (the modes in turn, which goes first
     * alternating); the others serve until it is done. */
    double us[2] = {0, 0};
    long failed = 0;
    int64_t sent = 0; /* what every target must have added */
    MPI_Request stop;
    if (bench_rank == 0) {
        for (long i = 0; i < reps + 1; ++i) /* the first round warms up (ships the code) */
            for (int k = 0; k < 2; ++k) {
                const int lazy = (k + (int)i) % 2;
                const int64_t delta = 1 + i % 7;
                const double dt = one_batch(&u, bump, per_target, delta, lazy, &failed);
                sent += delta * per_target;
                if (i > 0) us[lazy] += dt;
            }
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &stop);
    bench_serve_until(&u, &stop, spin, NULL);

    MPI_Bcast(&sent, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    /* Peers on demand: a target's peer table holds rank 0 at most (none
     * where rank 0's messages came through a ring, which knows its
     * sender), never another target. */
    ucx_ifunc_stats_t st;
    ucx_ifunc_stats(u.ictx, &st);
    const uint64_t most_peers = bench_rank == 0 ? (uint64_t)(size - 1) : 1;
    int wrong = (bench_rank != 0 && counter != sent) || st.peers > most_peers, any_wrong = 0;
    if (st.peers > most_peers)
        fprintf(stderr, "xrdma_batch: rank %d has %" PRIu64 " peers, at most %" PRIu64 " expected\n", bench_rank,
                (uint64_t)st.peers, most_peers);
    MPI_Reduce(&wrong, &any_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrong) fprintf(stderr, "xrdma_batch: rank %d counted %" PRId64 ", expected %" PRId64 "\n", bench_rank,
                       counter, sent);
    int status = 0;
    if (bench_rank == 0) {
        const double ops = (double)reps * per_target * (size - 1);
        printf("# xrdma_batch: %d ranks, batches of %ld invocations per target, %ld batches per mode\n", size,
               per_target, reps);
        printf("  %-14s %10.3f us per invocation\n", "acknowledged", us[0] / ops);
        printf("  %-14s %10.3f us per invocation (acknowledged when asked: %.2fx)\n", "lazy", us[1] / ops,
               us[0] / us[1]);
        status = failed || any_wrong;
        printf("answers checked: %ld failed completions, %d targets with a wrong count: %s\n", failed, any_wrong,
               status ? "FAILED" : "ok");
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bump) ucx_ifunc_deregister(bump);
    bench_ucx_fini(&u);
    MPI_Finalize();
    return status;
}
