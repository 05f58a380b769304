/* 1000 windows made and freed one after the other (created and allocated
 * in turn, as a program that makes a window per phase or time step does),
 * each carrying an MPI_Put to the next rank that is checked: every call must
 * succeed and nothing but this program's lines be printed. */
#include <mpi.h>
#include <stdio.h>

#define N 1000

int main(int argc, char **argv)
{
    int rank, size, failed = 0, wrong = 0, all[2], mine[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* 16 bytes: MPICH 4.0.2's own RMA on a node peer's MPI_Win_allocate
     * window whose size is not a multiple of 16 bytes misses by 8 bytes
     * (xrdma(7), MPI LIBRARIES), with or without XRDMA. */
    static int created[4];
    for (int i = 0; i < N; i++) {
        MPI_Win win;
        int *mem = created;
        if (i % 2) {
            if (MPI_Win_create(created, sizeof(created), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) != MPI_SUCCESS)
                failed++;
        } else if (MPI_Win_allocate(sizeof(created), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) !=
                   MPI_SUCCESS) {
            failed++;
        }
        mem[0] = -1;
        MPI_Win_fence(0, win);
        int v = i * size + rank;
        if (MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win) != MPI_SUCCESS) failed++;
        MPI_Win_fence(0, win);
        if (mem[0] != i * size + (rank + size - 1) % size) wrong++;
        if (MPI_Win_free(&win) != MPI_SUCCESS) failed++;
    }
    mine[0] = failed;
    mine[1] = wrong;
    MPI_Reduce(mine, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d windows made and freed in turn, %d failed calls, %d puts not landed\n", N, all[0], all[1]);
    MPI_Finalize();
    return 0;
}
