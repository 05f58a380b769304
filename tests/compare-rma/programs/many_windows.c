/* 300 windows alive at once (created and allocated), then freed: every
 * call must succeed and nothing but this program's lines be printed. */
#include <mpi.h>
#include <stdio.h>

#define N 300

int main(int argc, char **argv)
{
    static MPI_Win win[N];
    static int mem[N];
    int rank, failed = 0, all;
    void *p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < N; i++)
        if ((i % 2 ? MPI_Win_create(&mem[i], sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win[i])
                   : MPI_Win_allocate(sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win[i])) != MPI_SUCCESS)
            failed++;
    for (int i = 0; i < N; i++)
        if (MPI_Win_free(&win[i]) != MPI_SUCCESS) failed++;
    MPI_Reduce(&failed, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d windows, %d failed calls\n", N, all);
    MPI_Finalize();
    return 0;
}
