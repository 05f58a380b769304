/* mpi_stream_reduce: a large reduction into every rank's vector at once,
 * with a streaming function.
 *
 * Every rank owns a vector of N doubles plus two report cells in its window
 * (MPI_Win_allocate). Each rank adds its own vector into the next rank's,
 * R times, with MPIX_Xput of a streaming function
 * (mpi_stream_reduce_ifunc.c, XRDMA_STREAM): at the target the payload
 * handler adds each piece of the data as it arrives, and the completion
 * handler adds the number of pieces and the sum of the incoming values to
 * the report cells. Sent to another process, data larger than one chunk
 * (XRDMA_STREAM_CHUNK, default 1 MiB) stays at the origin until the target
 * has fetched it, chunk by chunk: the target never holds a staging copy of
 * the message, and no second pass over it is needed, as it would be with
 * MPI_Put into a staging buffer followed by the target's own loop (what
 * -m mpi runs, for comparison). Each rank checks its vector and its report
 * sum (exact: small integers); the exit status is 1 if one differs.
 *
 *   mpirun -n 3 mpi_stream_reduce [-n N] [-r R] [-m xrdma|mpi] [--image P]
 */
#include <getopt.h>
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beside_exe.h"  /* the image beside the program */
#include "mpi_example.h" /* the start, error messages */

#define IMAGE_NAME "mpi_stream_reduce_ifunc.xfn"

static int g_rank;

/* Rank r's data: small integers, so every sum is exact. */
static double value(int r, long i) { return (double)((r + 1) * (i % 97 + 1)); }

int main(int argc, char **argv)
{
    long n = 1 << 20;
    int reps = 3, use_mpi = 0;
    const char *image = NULL;
    int size;
    example_init(&argc, &argv, "mpi_stream_reduce", &g_rank, &size);
    static const struct option longopts[] = {{"image", required_argument, 0, 'i'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:r:m:", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': n = atol(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'm': use_mpi = !strcmp(optarg, "mpi"); break;
        case 'i': image = optarg; break;
        default:
            if (g_rank == 0) fprintf(stderr, "usage: mpi_stream_reduce [-n N] [-r R] [-m xrdma|mpi] [--image P]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n < 1 || n > (1L << 28) || reps < 1) {
        if (g_rank == 0) fprintf(stderr, "mpi_stream_reduce: need 1 <= N <= 2^28 and R >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int next = (g_rank + 1) % size, prev = (g_rank + size - 1) % size;
    double *vec, *staging = NULL, *mine = malloc(sizeof(double) * (size_t)n);
    MPI_Win win, swin = MPI_WIN_NULL;
    example_check(MPI_Win_allocate((MPI_Aint)((n + 2) * (long)sizeof(double)), sizeof(double), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &vec, &win),
                  "MPI_Win_allocate");
    for (long i = 0; i < n + 2; ++i) vec[i] = 0.0;
    for (long i = 0; i < n; ++i) mine[i] = value(g_rank, i);
    MPIX_Ifunc reduce = MPIX_IFUNC_NULL;
    if (use_mpi)
        example_check(MPI_Win_allocate((MPI_Aint)(n * (long)sizeof(double)), sizeof(double), MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &staging, &swin),
                      "MPI_Win_allocate (staging)");
    else
        example_check(MPIX_Ifunc_load(image ? image : beside_exe(IMAGE_NAME), "stream_reduce", &reduce),
                      "MPIX_Ifunc_load");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, win);
    if (use_mpi) MPI_Win_lock_all(0, swin);
    const int64_t report_at = n;  /* the report cells follow the vector */
    for (int r = 0; r < reps; ++r) {
        if (use_mpi) {
            /* Into the next rank's staging buffer; then each adds its own. */
            example_check(MPI_Put(mine, (int)n, MPI_DOUBLE, next, 0, (int)n, MPI_DOUBLE, swin), "MPI_Put");
            example_check(MPI_Win_flush(next, swin), "MPI_Win_flush");
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_sync(swin);
            double sum = 0;
            for (long i = 0; i < n; ++i) {
                vec[i] += staging[i];
                sum += staging[i];
            }
            vec[n] += 1;
            vec[n + 1] += sum;
            MPI_Barrier(MPI_COMM_WORLD);  /* staging is free again */
        } else {
            example_check(MPIX_Xput(mine, (int)n, MPI_DOUBLE, next, 0, (int)n, MPI_DOUBLE, reduce, &report_at,
                                    sizeof(report_at), win),
                          "MPIX_Xput");
            /* The origin buffer is read until the operation completes. */
            example_check(MPI_Win_flush(next, win), "MPI_Win_flush");
        }
    }
    if (use_mpi) MPI_Win_unlock_all(swin);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    double secs = MPI_Wtime() - t0;

    long bad = 0;
    double sum = 0;
    for (long i = 0; i < n; ++i) {
        bad += vec[i] != reps * value(prev, i);
        sum += value(prev, i);
    }
    bad += vec[n + 1] != reps * sum;
    long total_bad = 0;
    MPI_Reduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double pieces = vec[n];
    if (g_rank == 0) {
        printf("mpi_stream_reduce (%s): %d ranks, %ld doubles (%.1f MiB) x %d into the next rank: %.3f s; "
               "%.0f pieces per operation at rank 0\n",
               use_mpi ? "MPI_Put + combine loop" : "streaming MPIX_Xput", size, n, n * 8.0 / (1 << 20), reps, secs,
               pieces / reps);
        printf("%s: every vector and report sum checked\n", total_bad ? "FAILED" : "OK");
    }
    if (reduce != MPIX_IFUNC_NULL) MPIX_Ifunc_free(&reduce);
    if (swin != MPI_WIN_NULL) MPI_Win_free(&swin);
    MPI_Win_free(&win);
    free(mine);
    MPI_Finalize();
    return total_bad ? 1 : 0;
}
