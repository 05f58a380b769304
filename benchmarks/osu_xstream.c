/* osu_xstream: a large reduction into a target region. Rank 0
 * adds B bytes of doubles into rank 1's window, two ways, in the same run:
 *   xrdma  MPIX_Xput with a streaming function (osu_stream_add): the target
 *          adds each chunk as it arrives (XRDMA_STREAM_CHUNK), holding a few
 *          chunks, never the whole message;
 *   mpi    MPI_Put of the data into a staging window at the target, then the
 *          target's own combine loop over it (what a program does without
 *          XRDMA).
 * Both end with the same two barriers (data at the target, combine done).
 * First the target's extra memory for one streaming Xput (VmHWM before and
 * after, with no staging window yet), then REPS interleaved pairs of timed
 * runs (xrdma, mpi, xrdma, ...). Prints the medians, their ratio, and the
 * extra memory in bytes and chunks; checks the sums.
 *   -b BYTES   data per operation (default 268435456: 256 MiB)
 *   -r REPS    timed pairs (default 5)
 *   --csv      CSV instead of text */
#include "bench_common.h"  /* (first: it defines _GNU_SOURCE) */

#include <mpix_xrdma.h>

static long vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &v) == 1) break;
    if (f) fclose(f);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    bench_name = "osu_xstream";
    size_t bytes = 256ul << 20;
    int reps = 5, csv = 0;
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc)
            bytes = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else
            bench_die("usage: osu_xstream [-b BYTES] [-r REPS] [--csv]");
    }
    if (size != 2) bench_die("runs on 2 ranks");
    if (reps < 1 || bytes < sizeof(double) || bytes > (size_t)INT_MAX * sizeof(double)) bench_die("bad -b or -r");
    const size_t n = bytes / sizeof(double);
    bytes = n * sizeof(double);
    const int origin = 0, target = 1, me = bench_rank;

    MPIX_Ifunc add;
    if (MPIX_Ifunc_load(beside_exe("osu_ifuncs.xfn"), "osu_stream_add", &add) != MPI_SUCCESS)
        bench_die("cannot load osu_ifuncs.xfn");
    double *dst, *src = NULL;
    MPI_Win win;
    MPI_Win_allocate(me == target ? (MPI_Aint)bytes : 0, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dst, &win);
    if (me == target)
        for (size_t i = 0; i < n; ++i) dst[i] = 0.0;
    if (me == origin) {
        src = malloc(bytes);
        if (!src) bench_die("no memory for %zu bytes", bytes);
        for (size_t i = 0; i < n; ++i) src[i] = 1.0;
    }
    MPI_Win_lock_all(0, win);

    /* The target's extra memory for one streaming Xput (after a small one
     * loaded the code). */
    if (me == origin) {
        MPIX_Xput(src, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, add, NULL, 0, win);
        MPI_Win_flush(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long hwm0 = me == target ? vm_hwm_kib() : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == origin) {
        int err = MPIX_Xput(src, (int)n, MPI_DOUBLE, target, 0, (int)n, MPI_DOUBLE, add, NULL, 0, win);
        if (err == MPI_SUCCESS) err = MPI_Win_flush(target, win);
        if (err != MPI_SUCCESS) bench_die("streaming MPIX_Xput failed: error %d", err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long extra_kib = me == target ? vm_hwm_kib() - hwm0 : 0;
    MPI_Bcast(&extra_kib, 1, MPI_LONG, target, MPI_COMM_WORLD);
    double expect = 2.0;  /* 1 (small Xput, element 0 only) + 1 */
    int bad = 0;
    if (me == target) bad = dst[0] != expect || dst[n - 1] != 1.0;

    /* Timed pairs. */
    double *staging;
    MPI_Win swin;
    MPI_Win_allocate(me == target ? (MPI_Aint)bytes : 0, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &staging,
                     &swin);
    MPI_Win_lock_all(0, swin);
    double *tx = malloc(sizeof(double) * (size_t)reps), *tm = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; ++r) {
        for (int mode = 0; mode < 2; ++mode) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = bench_now_us();
            if (mode == 0) {
                if (me == origin) {
                    MPIX_Xput(src, (int)n, MPI_DOUBLE, target, 0, (int)n, MPI_DOUBLE, add, NULL, 0, win);
                    MPI_Win_flush(target, win);
                }
                MPI_Barrier(MPI_COMM_WORLD);
            } else {
                if (me == origin) {
                    MPI_Put(src, (int)n, MPI_DOUBLE, target, 0, (int)n, MPI_DOUBLE, swin);
                    MPI_Win_flush(target, swin);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                if (me == target)
                    for (size_t i = 0; i < n; ++i) dst[i] += staging[i];
            }
            MPI_Barrier(MPI_COMM_WORLD);
            (mode == 0 ? tx : tm)[r] = (bench_now_us() - t0) * 1e-6;
        }
    }
    expect += 2.0 * reps;
    if (me == target) bad += dst[0] != expect || dst[n / 2] != 1.0 + 2.0 * reps || dst[n - 1] != 1.0 + 2.0 * reps;
    MPI_Bcast(&bad, 1, MPI_INT, target, MPI_COMM_WORLD);
    if (bad) bench_die("wrong sums at the target");

    if (me == origin) {
        const char *c = getenv("XRDMA_STREAM_CHUNK");
        const double chunk = c ? atof(c) : 1048576.0;
        const double mx = median(tx, reps), mm = median(tm, reps);
        const double extra = (double)extra_kib * 1024.0;
        if (csv) {
            printf("benchmark,bytes,chunk,reps,xrdma_median_s,mpi_median_s,x_over_mpi_median,extra_hwm_bytes,"
                   "extra_hwm_chunks\n");
            printf("osu_xstream,%zu,%.0f,%d,%.4f,%.4f,%.3f,%.0f,%.2f\n", bytes, chunk, reps, mx, mm, mx / mm, extra,
                   extra / chunk);
        } else {
            printf("# osu_xstream: %zu bytes of doubles added into rank 1, %d pairs\n", bytes, reps);
            printf("streaming MPIX_Xput     %10.4f s (median)\n", mx);
            printf("MPI_Put + combine loop  %10.4f s (median)\n", mm);
            printf("ratio                   %10.3f\n", mx / mm);
            printf("target extra VmHWM      %10.0f bytes = %.2f chunks of %.0f\n", extra, extra / chunk, chunk);
        }
    }
    MPI_Win_unlock_all(swin);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&swin);
    MPI_Win_free(&win);
    MPIX_Ifunc_free(&add);
    free(src), free(tx), free(tm);
    MPI_Finalize();
    return 0;
}
