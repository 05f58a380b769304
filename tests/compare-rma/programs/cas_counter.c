/* MPI_Compare_and_swap and MPI_Fetch_and_op on one counter at rank 0. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    long *base, old, one = 1;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    base[0] = base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 50; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    long expect = 0, mine = rank + 1;
    do { /* claim slot 1 once, by CAS from what was there */
        MPI_Compare_and_swap(&mine, &expect, &old, MPI_LONG, 0, 1, win);
        MPI_Win_flush(0, win);
        if (old == expect) break;
        expect = old;
        mine = old + rank + 1;
    } while (1);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("counter %ld (want %d), sum %ld (want %d)\n", base[0], 50 * size, base[1], size * (size + 1) / 2);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
