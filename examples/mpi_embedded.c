/* mpi_embedded: an MPI program that carries its injected code inside
 * itself, so it needs no image file at run time.
 *
 * The build turns examples/mpi_embedded_ifunc.c into C source with
 *     xrdma-cc --c-array=add_image mpi_embedded_ifunc.c   (writes add_image.c)
 * and links it in; MPIX_Ifunc_load_mem() loads the array. Every rank then
 * adds rank + 1 to a counter at every rank with MPIX_Xput, and each checks
 * that its counter holds 1 + 2 + ... + size.
 *
 *   mpicc mpi_embedded.c add_image.c -lmpix_xrdma -o mpi_embedded
 *   mpirun -n 3 ./mpi_embedded */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>

extern const unsigned char add_image[];
extern const size_t add_image_size;

int main(int argc, char **argv)
{
    int rank, size, bad = 0, all_bad = 0;
    int64_t *counter, mine;
    MPIX_Ifunc add_to;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPIX_Ifunc_load_mem(add_image, add_image_size, "add_to", &add_to) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win);
    *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    mine = rank + 1;
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; t++)
        MPIX_Xput(&mine, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, add_to, NULL, 0, win);
    MPI_Win_flush_all(win); /* the additions ran at every target */
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    bad = *counter != (int64_t)size * (size + 1) / 2;
    MPI_Win_unlock(rank, win);
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_embedded: image of %zu bytes embedded; answers checked: %s\n", add_image_size,
               all_bad ? "FAILED" : "ok");
    MPI_Win_free(&win);
    MPIX_Ifunc_free(&add_to);
    MPI_Finalize();
    return all_bad != 0;
}
