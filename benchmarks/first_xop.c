/* first_xop: what the first X-operation on a new window costs beyond a warm
 * one, now that a window pays nothing for XRDMA at creation. 2 ranks; rank 0
 * makes a window (MPI_Win_create of 64 KiB, or MPI_Win_allocate), opens a
 * passive epoch, and times an 8-byte MPIX_Xput + MPI_Win_flush to rank 1:
 * the window's first, then --warm more on the same window (their median is
 * the warm time); the window is freed and the next one made, --windows of
 * each kind. The process's very first X-operation (its endpoint to the
 * target and the image sent there once per process pair) is reported
 * apart: it is paid once per pair, not per window.
 *
 *   first_xop [--windows N] [--warm W] [--image PATH] [--csv]
 *
 * --csv: per kind the median over windows of the first X-op, of the warm
 * one, and of their difference (the extra latency), in microseconds. Every
 * addition is checked at the target at the end: a lost or doubled update
 * fails the run (exit 1). */
#include "bench_common.h"

#include <mpix_xrdma.h>
#include <stdint.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != MPI_SUCCESS) {                                                       \
            char msg_[MPI_MAX_ERROR_STRING];                                            \
            int len_ = 0;                                                               \
            MPI_Error_string(rc_, msg_, &len_);                                         \
            fprintf(stderr, "first_xop: %s: %s\n", #call, msg_);                        \
            MPI_Abort(MPI_COMM_WORLD, 2);                                               \
        }                                                                               \
    } while (0)

/* The median of v[0..n) (sorts it). */
static double median(double *v, int n) { return bench_summarize(v, (size_t)n).median; }

/* One 8-byte add into rank 1's window and its flush, timed at rank 0 (us). */
static double xop(MPIX_Ifunc add, MPI_Win win)
{
    int64_t one = 1;
    double t0 = MPI_Wtime();
    CHECK(MPIX_Xput(&one, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, add, NULL, 0, win));
    CHECK(MPI_Win_flush(1, win));
    return (MPI_Wtime() - t0) * 1e6;
}

int main(int argc, char **argv)
{
    int nwin = 30, warm = 9, csv = 0;
    const char *image = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--windows") && i + 1 < argc) nwin = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warm") && i + 1 < argc) warm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--image") && i + 1 < argc) image = argv[++i];
        else if (!strcmp(argv[i], "--csv")) csv = 1;
        else {
            fprintf(stderr, "usage: %s [--windows N] [--warm W] [--image PATH] [--csv]\n", argv[0]);
            return 2;
        }
    }
    if (nwin < 1 || warm < 1) return 2;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "first_xop: run with 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (!image) image = beside_exe("osu_ifuncs.xfn");
    MPIX_Ifunc add = MPIX_IFUNC_NULL;
    CHECK(MPIX_Ifunc_load(image, "osu_add", &add));

    const MPI_Aint bytes = 64 * 1024;
    int64_t *buf = calloc(1, (size_t)bytes);
    double *first = malloc(sizeof(double) * (size_t)nwin), *warmt = malloc(sizeof(double) * (size_t)nwin);
    double *extra = malloc(sizeof(double) * (size_t)nwin), *w = malloc(sizeof(double) * (size_t)warm);
    double process_first = 0;
    int wrong = 0;
    if (csv && rank == 0) printf("benchmark,op,first_median_us,warm_median_us,extra_median_us,windows,warm\n");
    for (int kind = 0; kind < 2; ++kind) {
        const char *name = kind == 0 ? "create" : "allocate";
        for (int i = 0; i < nwin; ++i) {
            MPI_Win win;
            int64_t *base = buf;
            if (kind == 0)
                CHECK(MPI_Win_create(buf, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            else
                CHECK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
            base[0] = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                first[i] = xop(add, win);
                for (int k = 0; k < warm; ++k) w[k] = xop(add, win);
                CHECK(MPI_Win_unlock(1, win));
                warmt[i] = median(w, warm);
                extra[i] = first[i] - warmt[i];
                if (kind == 0 && i == 0) process_first = first[0];
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1 && base[0] != warm + 1) {
                fprintf(stderr, "first_xop: %s window %d holds %lld, expected %d\n", name, i, (long long)base[0],
                        warm + 1);
                wrong = 1;
            }
            CHECK(MPI_Win_free(&win));
        }
        if (rank == 0) {
            /* The process's first X-op (window 0 of the first kind) is the
             * pair's, not the window's: reported apart, left out here. */
            const int skip = kind == 0 ? 1 : 0, n = nwin - skip;
            if (n > 0) {
                double f = median(first + skip, n), wm = median(warmt + skip, n), e = median(extra + skip, n);
                if (csv)
                    printf("first_xop,%s,%.3f,%.3f,%.3f,%d,%d\n", name, f, wm, e, n, warm);
                else
                    printf("MPI_Win_%s: first X-op %.1f us, warm %.1f us, extra %.1f us (medians of %d windows)\n",
                           name, f, wm, e, n);
            }
        }
    }
    if (rank == 0) {
        if (csv)
            printf("first_xop,process_first,%.3f,,,1,\n", process_first);
        else
            printf("the process's first X-op (endpoint, image sent once per pair): %.1f us\n", process_first);
    }
    int any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPIX_Ifunc_free(&add);
    free(w);
    free(extra);
    free(warmt);
    free(first);
    free(buf);
    MPI_Finalize();
    return any ? 1 : 0;
}
