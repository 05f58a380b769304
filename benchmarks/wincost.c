/* wincost: what a window costs to make and free, for a program that makes
 * no X-operation: MPI_Win_create + MPI_Win_free of a 64 KiB buffer, and
 * MPI_Win_allocate + MPI_Win_free of 64 KiB, each timed over a batch of
 * iterations (batches of --iters, --batches of them, the first a warm-up).
 * Built twice, plain and with XRDMA linked; benchmarks/drivers/linked-ratio runs the
 * two in turn and reports the ratio (a linked program cannot also run
 * unlinked in one process). --csv: per operation the median over batches of
 * the mean time per create + free. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int batches = 11, iters = 50, csv = 0;
    const MPI_Aint bytes = 64 * 1024;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc) batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv")) csv = 1;
    }
    if (batches < 2 || iters < 1) return 2;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc((size_t)bytes);
    memset(buf, 0, (size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)batches);
    if (csv && rank == 0) printf("benchmark,op,size,median_us,min_us,batches,iterations\n");
    for (int op = 0; op < 2; ++op) {
        const char *name = op == 0 ? "create" : "allocate";
        for (int b = 0; b <= batches; ++b) {  /* batch 0: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; ++i) {
                MPI_Win win;
                void *base;
                if (op == 0)
                    MPI_Win_create(buf, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
                else
                    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
                MPI_Win_free(&win);
            }
            double dt = (MPI_Wtime() - t0) / iters * 1e6, all;
            MPI_Reduce(&dt, &all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (b) t[b - 1] = all;
        }
        if (rank == 0) {
            qsort(t, (size_t)batches, sizeof(double), cmp);
            if (csv)
                printf("wincost,%s,%ld,%.3f,%.3f,%d,%d\n", name, (long)bytes, t[batches / 2], t[0], batches, iters);
            else
                printf("MPI_Win_%s + MPI_Win_free, %ld B: %.3f us median (min %.3f, %d x %d)\n", name, (long)bytes,
                       t[batches / 2], t[0], batches, iters);
        }
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
