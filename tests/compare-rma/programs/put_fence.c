/* MPI_Put with fences on MPI_Win_create memory: a ring of values. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, buf[4] = {0}, v[4];
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < 4; i++) v[i] = 10 * rank + i;
    MPI_Win_fence(0, win);
    MPI_Put(v, 4, MPI_INT, (rank + 1) % size, 0, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    printf("rank %d got %d %d %d %d\n", rank, buf[0], buf[1], buf[2], buf[3]);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
