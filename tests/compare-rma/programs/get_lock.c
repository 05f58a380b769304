/* MPI_Get under passive target locks on MPI_Win_allocate memory. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, *base, got = -1;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *base = 1000 + rank;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + size - 1) % size;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Get(&got, 1, MPI_INT, t, 0, 1, MPI_INT, win);
    MPI_Win_unlock(t, win);
    printf("rank %d read %d from rank %d\n", rank, got, t);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
