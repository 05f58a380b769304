/* mpi_subarray_add: add a tile into a sub-matrix of every rank's matrix at
 * once, with MPIX_Xput and a subarray target datatype.
 *
 * Every rank owns an N x N matrix of doubles (row-major) in its window
 * (MPI_Win_allocate). Every rank adds its own T x T tile, R times, into the
 * sub-matrix at (S, S) of every rank's matrix: MPIX_Xput with a contiguous
 * origin buffer and an MPI_Type_create_subarray target datatype; the
 * function (mpi_subarray_add_ifunc.c) adds the tile row by row into the
 * datatype's blocks (xrdma_target_blocks). All ranks add into the same
 * cells concurrently; the sums are exact only if each X-op is atomic at its
 * target. Each rank then checks its whole matrix (the tiles are the same
 * formula everywhere); the exit status is 1 if a cell differs.
 *
 * MPI_Accumulate(MPI_SUM) with the same datatypes does this too (and is
 * what -m mpi runs, for comparison); the shipped function could do what no
 * predefined op does (scale, clamp, keep a count) in the same pass. -m plain
 * ships the function written the ordinary way instead, for a contiguous
 * region (mpi_subarray_add_plain_ifunc.c): XRDMA runs it once per row of
 * the sub-matrix, and the cells between the rows stay untouched.
 *
 *   mpirun -n 3 mpi_subarray_add [-n N] [-t T] [-s S] [-r R] [-m xrdma|plain|mpi] [--image P]
 */
#include <getopt.h>
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beside_exe.h"  /* the image beside the program */
#include "mpi_example.h" /* the start, error messages */

#define IMAGE_NAME "mpi_subarray_add_ifunc.xfn"
#define PLAIN_IMAGE_NAME "mpi_subarray_add_plain_ifunc.xfn"

static int g_rank;

/* Cell (i, j) of rank r's tile. */
static double tile_value(int r, int i, int j) { return (double)(r + 1) * 0.5 + i * 0.25 + j; }

int main(int argc, char **argv)
{
    int size;
    example_init(&argc, &argv, "mpi_subarray_add", &g_rank, &size);
    int n = 64, t = 16, s = 8, rounds = 10, use_mpi = 0, plain = 0;
    const char *image = NULL;
    static const struct option longopts[] = {{"image", required_argument, 0, 'I'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:t:s:r:m:", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': n = atoi(optarg); break;
        case 't': t = atoi(optarg); break;
        case 's': s = atoi(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 'm':
            use_mpi = !strcmp(optarg, "mpi");
            plain = !strcmp(optarg, "plain");
            break;
        case 'I': image = optarg; break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: mpi_subarray_add [-n N] [-t T] [-s S] [-r R] [-m xrdma|plain|mpi]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n <= 0 || t <= 0 || s < 0 || s + t > n || rounds <= 0) {
        if (g_rank == 0) fprintf(stderr, "mpi_subarray_add: need 0 <= S, S + T <= N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    double *m;
    MPI_Win win;
    example_check(MPI_Win_allocate((MPI_Aint)n * n * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &m, &win),
                  "MPI_Win_allocate");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, win);
    for (int i = 0; i < n * n; ++i) m[i] = 0;
    MPI_Win_unlock(g_rank, win);

    /* The target datatype: the T x T sub-matrix at (S, S) of an N x N matrix. */
    MPI_Datatype sub;
    int sizes[2] = {n, n}, subsizes[2] = {t, t}, starts[2] = {s, s};
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
    MPI_Type_commit(&sub);
    double *tile = malloc(sizeof(double) * (size_t)t * (size_t)t);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) tile[i * t + j] = tile_value(g_rank, i, j);

    MPIX_Ifunc f = MPIX_IFUNC_NULL;
    if (!use_mpi)
        example_check(MPIX_Ifunc_load(image ? image : beside_exe(plain ? PLAIN_IMAGE_NAME : IMAGE_NAME),
                                      plain ? "subarray_add_plain" : "subarray_add", &f),
                      "MPIX_Ifunc_load");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < rounds; ++k)
        for (int d = 0; d < size; ++d) {
            int r = (g_rank + d) % size;
            if (use_mpi)
                example_check(MPI_Accumulate(tile, t * t, MPI_DOUBLE, r, 0, 1, sub, MPI_SUM, win), "MPI_Accumulate");
            else
                example_check(MPIX_Xput(tile, t * t, MPI_DOUBLE, r, 0, 1, sub, f, NULL, 0, win), "MPIX_Xput");
        }
    example_check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
    double elapsed = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every cell: inside the sub-matrix, rounds x the sum of all ranks' tile
     * values (exact in binary: quarters); outside, 0. */
    long bad = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0;
            if (i >= s && i < s + t && j >= s && j < s + t)
                for (int r = 0; r < size; ++r) want += rounds * tile_value(r, i - s, j - s);
            bad += m[i * n + j] != want;
        }
    MPI_Win_unlock(g_rank, win);
    long all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("mpi_subarray_add: %d ranks, %dx%d tile into (%d,%d) of %dx%d, %d rounds, %s: %.1f us per op; "
               "%s (%ld cells wrong)\n",
               size, t, t, s, s, n, n, rounds,
               use_mpi ? "MPI_Accumulate" : plain ? "MPIX_Xput, plain function (block by block)" : "MPIX_Xput",
               slowest * 1e6 / (rounds * size),
               all_bad ? "FAILED" : "checked", all_bad);
    if (!use_mpi) MPIX_Ifunc_free(&f);
    MPI_Type_free(&sub);
    free(tile);
    MPI_Win_free(&win);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
