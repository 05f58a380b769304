/* MPI_Accumulate in PSCW epochs: every rank adds to rank 0, 100 times. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    long *base;
    MPI_Win win;
    MPI_Group world, g;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    *base = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < 100; it++) {
        long one = rank + 1;
        if (rank == 0) {
            int others[64], n = 0;
            for (int r = 1; r < size && n < 64; r++) others[n++] = r;
            MPI_Group_incl(world, n, others, &g);
            MPI_Win_post(g, 0, win);
            MPI_Win_wait(win);
            MPI_Group_free(&g);
        } else {
            int zero = 0;
            MPI_Group_incl(world, 1, &zero, &g);
            MPI_Win_start(g, 0, win);
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_complete(win);
            MPI_Group_free(&g);
        }
    }
    if (rank == 0) printf("total %ld (want %ld)\n", *base, 100L * ((long)size * (size + 1) / 2 - 1));
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
