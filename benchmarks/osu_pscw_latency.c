/* PSCW latency of plain MPI_Put / MPI_Get (8 B), OSU style: rank 0 opens an
 * access epoch (MPI_Win_start), puts or gets, closes it (MPI_Win_complete);
 * rank 1 exposes its window (MPI_Win_post, MPI_Win_wait). No MPIX call: the
 * same source is built plain and with XRDMA linked (benchmarks/suite.mk), and
 * benchmarks/drivers/pscw-ratio runs the two in turn to show what linking costs.
 * Options: -b batches (default 21), -i iterations per batch (default 500),
 * --csv. Prints, per operation, the median over batches of the mean epoch. */
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
    int batches = 21, iters = 500, csv = 0;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc) batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv")) csv = 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "osu_pscw_latency needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    double *mem, buf = 1.0;
    MPI_Win win;
    MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Group world, peer;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peer);
    double *t = malloc(sizeof(double) * (size_t)batches);
    if (csv && rank == 0) printf("benchmark,op,size,median_us,min_us,batches,iterations\n");
    for (int op = 0; op < 2; ++op) {
        for (int b = -1; b < batches; ++b) {  /* batch -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; ++i) {
                if (rank == 0) {
                    MPI_Win_start(peer, 0, win);
                    if (op == 0) MPI_Put(&buf, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win);
                    else MPI_Get(&buf, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win);
                    MPI_Win_complete(win);
                } else {
                    MPI_Win_post(peer, 0, win);
                    MPI_Win_wait(win);
                }
            }
            if (b >= 0) t[b] = (MPI_Wtime() - t0) * 1e6 / iters;
        }
        if (rank == 0) {
            qsort(t, (size_t)batches, sizeof(double), cmp);
            const char *name = op == 0 ? "put" : "get";
            if (csv)
                printf("osu_pscw_latency,%s,8,%.3f,%.3f,%d,%d\n", name, t[batches / 2], t[0], batches, iters);
            else
                printf("PSCW %s 8 B: %.3f us median epoch (min %.3f, %d x %d)\n", name, t[batches / 2], t[0],
                       batches, iters);
        }
    }
    free(t);
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
