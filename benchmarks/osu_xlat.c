/* osu_xput_latency, osu_xget_latency, osu_xinvoke_latency (this file, built
 * three times with OSU_OP = 0, 1, 2): OSU-style latency of an X-operation
 * with a warm code cache, against, measured in the same run,
 *   MPI        MPI_Put (put, invoke: the same bytes moved) or MPI_Get, with
 *              the same synchronisation (-s) on the same window (-w);
 *   UCP AM     a plain UCP active-message ping-pong on the same transport,
 *              on a worker of its own: the request carries the data of the
 *              operation (put: the data, stored by the handler; invoke: the
 *              arguments, looked at in place) or asks for it (get: the reply
 *              carries it). One round trip, as one X-operation + flush is:
 *              the floor for any code-carrying operation.
 * Latency: time of one operation and its completion (flush, lock/unlock or
 * fence), in microseconds, averaged over the iterations of each size.
 *
 *   mpirun -n 2 osu_xput_latency [-m MIN:MAX] [-w KIND] [-s SYNC] [--csv]
 */
#include "osu_ops.h"

#if OSU_OP == 0
#define OP_TITLE "Put"
#define OP_PROG "osu_xput_latency"
#elif OSU_OP == 1
#define OP_TITLE "Get"
#define OP_PROG "osu_xget_latency"
#else
#define OP_TITLE "Invoke"
#define OP_PROG "osu_xinvoke_latency"
#endif

static struct osu_opts o;

/* Per-iteration samples of the current size, by mode. */
static double *samples[3];
static long nsamples[3];

/* One-sided phase: rank 0 runs warm-up + iters operations, each completed,
 * and records the time of each measured one; rank 1 serves. */
static void one_sided(int x, size_t size, long iters, long warmup)
{
    if (bench_rank == 0) {
        double *out = samples[x] + nsamples[x];
        osu_epoch_begin(&o, w.win);
        for (long i = 0; i < warmup + iters; ++i) {
            double t0 = bench_now_us();
            osu_batch_begin(&o, w.win);
            x ? x_op(size) : mpi_op(size);
            osu_batch_end(&o, w.win);
            if (i >= warmup) out[i - warmup] = bench_now_us() - t0;
        }
        osu_epoch_end(&o, w.win);
        nsamples[x] += iters;
        osu_origin_done(&o);
        return;
    }
    osu_target_serve(&o, w.win, warmup + iters);
}

static void am_pingpong(size_t size, long iters, long warmup)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (bench_rank != 0) {
        osu_am_serve();
        return;
    }
    double *out = samples[2] + nsamples[2];
    osu_am.replies = 0;
    for (long i = 0; i < warmup + iters; ++i) {
        double t0 = bench_now_us();
#if OSU_OP == 0
        osu_am_send(OSU_AM_REQ, origin, size, 0, 1, 1);
#elif OSU_OP == 1
        osu_am_send(OSU_AM_REQ, NULL, 0, (uint32_t)size, 1, 1);
#else
        osu_am_send(OSU_AM_REQ, origin, size, 0, 1, 0);
#endif
        osu_am_wait_replies(i + 1);
        if (i >= warmup) out[i - warmup] = bench_now_us() - t0;
    }
    nsamples[2] += iters;
    osu_am_stop_target();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_name = OP_PROG;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    osu_parse(argc, argv, &o, "Latency of " OP_X " (warm code cache) against " OP_MPI
                              " and a UCP active-message ping-pong, measured in the same run.", 0);
    if (!osu_ops_setup(&o)) return 2;

    if (bench_rank == 0) {
        if (o.csv) {
            printf("benchmark,transport,window,sync,size,iterations,xrdma_us,mpi_us,am_us,x_over_am,x_over_mpi,"
                   "xrdma_median_us,mpi_median_us,am_median_us,x_over_am_median,x_over_mpi_median\n");
        } else {
            printf("# OSU MPI-XRDMA %s Latency Test (XRDMA %s)\n", OP_TITLE, MPIX_XRDMA_VERSION);
            printf("# Window creation: MPI_Win_%s\n", o.win == OSU_WIN_DYNAMIC ? "create_dynamic"
                                                      : osu_win_names[o.win]);
            printf("# Synchronization: %s\n", o.sync == OSU_SYNC_FLUSH    ? "MPI_Win_flush (passive, one lock)"
                                              : o.sync == OSU_SYNC_LOCK    ? "MPI_Win_lock/unlock"
                                              : o.sync == OSU_SYNC_REQUEST ? "request variants + MPI_Wait (one lock)"
                                                                           : "MPI_Win_fence");
            printf("# UCX_TLS=%s; UCP AM = active-message round trip on a separate worker (the floor)\n",
                   getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)");
            printf("# latency: mean of %ld (%ld above %zu B) iterations in %ld rounds; X/AM med: ratio of medians\n",
                   o.iters, o.iters_large, o.large_size, o.rounds);
            printf("# %-10s %14s %14s %14s %8s %8s %8s\n", "Size", OP_X "(us)", OP_MPI "(us)", "UCP AM(us)", "X/AM",
                   "X/MPI", "X/AM med");
        }
        fflush(stdout);
    }
    long most = o.iters > o.iters_large ? o.iters : o.iters_large;
    for (int m = 0; m < 3; ++m)
        if (!(samples[m] = malloc((size_t)(most + o.rounds) * sizeof(double)))) bench_die("out of memory");
    for (size_t s = o.min_size; s <= o.max_size; s *= 2) {
        int large = s > o.large_size;
        long it = large ? o.iters_large : o.iters, wu = large ? o.warmup_large : o.warmup;
        /* Rounds of the three modes in turn, so that a slow spell of the
         * machine hits them alike; each round warms up again. */
        long rounds = o.rounds < it ? o.rounds : it;
        nsamples[0] = nsamples[1] = nsamples[2] = 0;
        for (long r = 0; r < rounds; ++r) {
            long n = it / rounds + (r < it % rounds);
            long wr = (wu + rounds - 1) / rounds;
            one_sided(1, s, n, wr);
            one_sided(0, s, n, wr);
            am_pingpong(s, n, wr);
        }
        if (bench_rank == 0) {
            struct bench_stats sx = bench_summarize(samples[1], nsamples[1]);
            struct bench_stats sm = bench_summarize(samples[0], nsamples[0]);
            struct bench_stats sa = bench_summarize(samples[2], nsamples[2]);
            if (o.csv)
                printf("%s,%s,%s,%s,%zu,%ld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", OP_PROG, osu_tls(),
                       osu_win_names[o.win], osu_sync_names[o.sync], s, it, sx.mean, sm.mean, sa.mean,
                       sx.mean / sa.mean, sx.mean / sm.mean, sx.median, sm.median, sa.median,
                       sx.median / sa.median, sx.median / sm.median);
            else
                printf("  %-10zu %14.2f %14.2f %14.2f %8.2f %8.2f %8.2f\n", s, sx.mean, sm.mean, sa.mean,
                       sx.mean / sa.mean, sx.mean / sm.mean, sx.median / sa.median);
            fflush(stdout);
        }
        if (s > o.max_size / 2) break;
    }
    for (int m = 0; m < 3; ++m) free(samples[m]);

    osu_ops_teardown(&o);
    MPI_Finalize();
    return 0;
}
