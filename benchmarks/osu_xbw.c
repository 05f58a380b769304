/* osu_xput_bw, osu_xget_bw (OSU_OP 0, 1: bandwidth in MB/s),
 * osu_xinvoke_mr (OSU_OP 2: message rate) and osu_xacc_mr (OSU_OP 3:
 * message rate of a user-defined accumulate through MPIX_Xput against
 * MPI_Accumulate with MPI_SUM on int64): this file, built four times.
 * Rank 0 issues a window of W operations back to back, then completes them
 * all with one synchronisation call (-s: flush, lock/unlock or fence); the
 * time of each window is one sample. Measured in the same run, on the same
 * window:
 *   MPI        MPI_Put (put; invoke: the argument bytes) or MPI_Get;
 *   UCP AM     plain UCP active messages on a worker of their own: W
 *              requests back to back, the last one answered (put, invoke:
 *              a stream, as ucx_perftest's am_bw), or each one answered
 *              with the data (get). For the message rate the same with an
 *              answer to every request is printed as well ("AM acked"):
 *              what an X-operation's remote completion costs at the least.
 * MB/s = 10^6 bytes per second, as OSU; message rate in operations/s.
 *
 *   mpirun -n 2 osu_xput_bw [-m MIN:MAX] [-W 64] [-w KIND] [-s SYNC] [--csv]
 */
#include "osu_ops.h"

#if OSU_OP == 0
#define OP_TITLE "Put Bandwidth"
#define OP_PROG "osu_xput_bw"
#elif OSU_OP == 1
#define OP_TITLE "Get Bandwidth"
#define OP_PROG "osu_xget_bw"
#elif OSU_OP == 2
#define OP_TITLE "Invoke Message Rate"
#define OP_PROG "osu_xinvoke_mr"
#else
#define OP_TITLE "Accumulate Message Rate"
#define OP_PROG "osu_xacc_mr"
#endif
#define MR (OSU_OP >= 2)

static struct osu_opts o;

enum { M_X, M_MPI, M_AM, M_AM_ACKED, M_N };
static const char *const mode_names[M_N] = {"xrdma", "mpi", "am", "am_acked"};
static double *samples[M_N]; /* seconds per window */
static long nsamples[M_N];

static void one_sided(int mode, size_t size, long wnd, long iters, long warmup)
{
    if (bench_rank == 0) {
        double *out = samples[mode] + nsamples[mode];
        osu_epoch_begin(&o, w.win);
        for (long i = 0; i < warmup + iters; ++i) {
            double t0 = bench_now_us();
            osu_batch_begin(&o, w.win);
            for (long k = 0; k < wnd; ++k) mode == M_X ? x_op(size) : mpi_op(size);
            osu_batch_end(&o, w.win);
            if (i >= warmup) out[i - warmup] = (bench_now_us() - t0) * 1e-6;
        }
        osu_epoch_end(&o, w.win);
        nsamples[mode] += iters;
        osu_origin_done(&o);
        return;
    }
    osu_target_serve(&o, w.win, warmup + iters);
}

static void am_stream(int mode, size_t size, long wnd, long iters, long warmup)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (bench_rank != 0) {
        osu_am_serve();
        return;
    }
    double *out = samples[mode] + nsamples[mode];
    osu_am.replies = 0;
    long want = 0;
    for (long i = 0; i < warmup + iters; ++i) {
        double t0 = bench_now_us();
        for (long k = 0; k < wnd; ++k) {
            int last = k == wnd - 1;
            (void)last;
#if OSU_OP == 0
            osu_am_send(OSU_AM_REQ, origin, size, 0, last, 1);
#elif OSU_OP == 3
            osu_am_send(OSU_AM_REQ, origin, size, 0, last || mode == M_AM_ACKED, 1);
#elif OSU_OP == 1
            osu_am_send(OSU_AM_REQ, NULL, 0, (uint32_t)size, 1, 1);
#else
            osu_am_send(OSU_AM_REQ, origin, size, 0, last || mode == M_AM_ACKED, 0);
#endif
        }
        want += (OSU_OP == 1 || mode == M_AM_ACKED) ? wnd : 1;
        osu_am_wait_replies(want);
        if (i >= warmup) out[i - warmup] = (bench_now_us() - t0) * 1e-6;
    }
    nsamples[mode] += iters;
    osu_am_stop_target();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_name = OP_PROG;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    osu_parse(argc, argv, &o,
              MR ? "Message rate of " OP_X " (windows of operations, one flush each) against " OP_MPI
                   " and UCP active messages, measured in the same run."
                 : "Bandwidth of " OP_X " (windows of operations, one flush each) against " OP_MPI
                   " and UCP active messages, measured in the same run.",
              1);
    if (!osu_ops_setup(&o)) return 2;

    if (bench_rank == 0) {
        if (o.csv) {
            printf("benchmark,transport,window,sync,size,ops_per_window,windows,unit,xrdma,mpi,am,am_acked,"
                   "x_over_am,x_over_mpi,xrdma_median,mpi_median,am_median,am_acked_median,x_over_am_median,"
                   "x_over_mpi_median\n");
        } else {
            printf("# OSU MPI-XRDMA %s Test (XRDMA %s)\n", OP_TITLE, MPIX_XRDMA_VERSION);
            printf("# Window creation: MPI_Win_%s\n", o.win == OSU_WIN_DYNAMIC ? "create_dynamic"
                                                      : osu_win_names[o.win]);
            printf("# Synchronization: %s once per window of %ld operations (fewer when they would hold more"
                   " than %zu bytes)\n",
                   o.sync == OSU_SYNC_FLUSH     ? "MPI_Win_flush"
                   : o.sync == OSU_SYNC_LOCK    ? "MPI_Win_lock/unlock"
                   : o.sync == OSU_SYNC_REQUEST ? "MPI_Wait per operation (request variants)"
                                                : "MPI_Win_fence",
                   o.window, o.window_bytes);
            printf("# UCX_TLS=%s; UCP AM on a separate worker: %s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)",
                   OSU_OP == 1 ? "each request answered with the data"
                               : "a stream, the last request of a window answered");
            printf("# %ld windows (%ld above %zu B) in %ld rounds per size; ratios: of totals (X/AM med: of"
                   " median windows)\n",
                   o.iters, o.iters_large, o.large_size, o.rounds);
            if (MR)
                printf("# %-10s %16s %16s %16s %16s %8s %8s %8s\n", "Size", OP_X "(ops/s)", OP_MPI "(ops/s)",
                       "UCP AM(ops/s)", "AM acked(ops/s)", "X/AM", "X/MPI", "X/AM med");
            else
                printf("# %-10s %16s %16s %16s %8s %8s %8s\n", "Size", OP_X "(MB/s)", OP_MPI "(MB/s)",
                       "UCP AM(MB/s)", "X/AM", "X/MPI", "X/AM med");
        }
        fflush(stdout);
    }
    long most = o.iters > o.iters_large ? o.iters : o.iters_large;
    for (int m = 0; m < M_N; ++m)
        if (!(samples[m] = malloc((size_t)(most + o.rounds) * sizeof(double)))) bench_die("out of memory");
    for (size_t s = o.min_size; s <= o.max_size; s *= 2) {
        int large = s >= o.large_size;
        long it = large ? o.iters_large : o.iters, wu = large ? o.warmup_large : o.warmup;
        long wnd = o.window;
        if ((size_t)wnd * s > o.window_bytes) wnd = (long)(o.window_bytes / s) ? (long)(o.window_bytes / s) : 1;
        long rounds = o.rounds < it ? o.rounds : it;
        for (int m = 0; m < M_N; ++m) nsamples[m] = 0;
        for (long r = 0; r < rounds; ++r) {
            long n = it / rounds + (r < it % rounds), wr = (wu + rounds - 1) / rounds;
            one_sided(M_X, s, wnd, n, wr);
            one_sided(M_MPI, s, wnd, n, wr);
            am_stream(M_AM, s, wnd, n, wr);
            if (MR) am_stream(M_AM_ACKED, s, wnd, n, wr);
        }
        if (bench_rank == 0) {
            double total[M_N], median[M_N]; /* MB/s or ops/s */
            double unit = MR ? (double)wnd : (double)wnd * (double)s / 1e6;
            for (int m = 0; m < M_N; ++m) {
                if (!nsamples[m]) {
                    total[m] = median[m] = 0;
                    continue;
                }
                struct bench_stats st = bench_summarize(samples[m], nsamples[m]);
                total[m] = unit / st.mean;
                median[m] = unit / st.median;
            }
            if (o.csv)
                printf("%s,%s,%s,%s,%zu,%ld,%ld,%s,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f\n",
                       OP_PROG, osu_tls(), osu_win_names[o.win], osu_sync_names[o.sync], s, wnd, it,
                       MR ? "ops/s" : "MB/s", total[M_X], total[M_MPI], total[M_AM], total[M_AM_ACKED],
                       total[M_X] / total[M_AM], total[M_X] / total[M_MPI], median[M_X], median[M_MPI],
                       median[M_AM], median[M_AM_ACKED], median[M_X] / median[M_AM], median[M_X] / median[M_MPI]);
            else if (MR)
                printf("  %-10zu %16.0f %16.0f %16.0f %16.0f %8.2f %8.2f %8.2f\n", s, total[M_X], total[M_MPI],
                       total[M_AM], total[M_AM_ACKED], total[M_X] / total[M_AM], total[M_X] / total[M_MPI],
                       median[M_X] / median[M_AM]);
            else
                printf("  %-10zu %16.2f %16.2f %16.2f %8.2f %8.2f %8.2f\n", s, total[M_X], total[M_MPI], total[M_AM],
                       total[M_X] / total[M_AM], total[M_X] / total[M_MPI], median[M_X] / median[M_AM]);
            fflush(stdout);
        }
        if (s > o.max_size / 2) break;
    }
    (void)mode_names;
    for (int m = 0; m < M_N; ++m) free(samples[m]);
    osu_ops_teardown(&o);
    MPI_Finalize();
    return 0;
}
