/* A plain C MPI program as the target of functions written in Python
 * (tests/python/test_c_target.py is rank 0; mpirun starts this program as
 * the other ranks). It never runs Python: the Python function arrives as
 * LLVM bitcode in an image, and XRDMA's JIT compiles it here.
 *
 * Rank 0 broadcasts nodes_per_rank, every rank allocates a window of
 * nodes_per_rank list words and two counters, rank 0 sends each rank its
 * slice of the list, then chases while the ranks here wait in a barrier
 * (XRDMA runs what arrives), and finally gathers the counters. */
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    uint64_t npr = 0;
    MPI_Bcast(&npr, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    uint64_t *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)((npr + 2) * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Recv(base, (int)npr, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    base[npr] = base[npr + 1] = 0;
    MPI_Barrier(MPI_COMM_WORLD); /* windows filled */
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 chased */
    uint64_t mine[2] = {base[npr], base[npr + 1]};
    MPI_Gather(mine, 2, MPI_UINT64_T, NULL, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
