/* Built against an installed XRDMA: one Xget of a sum computed at rank 1.
 * The image is argv[1], or with XRDMA_EMBEDDED_IMAGE the array sum_array
 * that xrdma-cc --c-array wrote (the CMake test builds it both ways). It
 * calls MPI functions of its own besides (MPI_Wtime, MPI_Barrier,
 * MPI_Bcast), as programs do: libmpi is then a direct dependency, and the
 * link must still put XRDMA's core ahead of it. Also built as C++. */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>

#ifdef XRDMA_EMBEDDED_IMAGE
extern const unsigned char sum_array[];
extern const size_t sum_array_size;
#endif

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    const double t0 = MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(4 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 4; ++i) base[i] = 10 * rank + i;
    MPI_Barrier(MPI_COMM_WORLD);
    int ok = 1;
    if (rank == 0) {
        MPIX_Ifunc sum;
#ifdef XRDMA_EMBEDDED_IMAGE
        MPIX_Ifunc_load_mem(sum_array, sum_array_size, NULL, &sum);
#else
        MPIX_Ifunc_load(argv[1], NULL, &sum);
#endif
        int64_t s = -1;
        MPI_Win_lock_all(0, win);
        MPIX_Xget(&s, 1, MPI_INT64_T, size - 1, 0, 4, MPI_INT64_T, sum, NULL, 0, win);
        MPI_Win_unlock_all(win);
        int64_t want = 4 * 10 * (size - 1) + 6;
        ok = s == want;
        printf("sum at rank %d: %ld (%s) after %.3f s\n", size - 1, (long)s, ok ? "ok" : "WRONG", MPI_Wtime() - t0);
        MPIX_Ifunc_free(&sum);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return ok ? 0 : 1;
}
