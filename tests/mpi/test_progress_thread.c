/* XRDMA_PROGRESS_THREAD=1: a target that computes without calling MPI still
 * runs arriving code. Rank 1 spins on its window word 0, making no MPI call;
 * only rank 0's Xinvoke can release it. Without the progress thread this
 * would never finish (the test's timeout would fail it). argv[1]: mpi_ops.xfn */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_rank = rank;
    const char *pt = getenv("XRDMA_PROGRESS_THREAD");
    mt_require(pt && atoi(pt) == 1, "run with XRDMA_PROGRESS_THREAD=1");
    volatile int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, (void *)&base, &win);
    base[0] = 0;
    MPIX_Ifunc set_flag;
    MPIX_Ifunc_load(argv[1], "set_flag", &set_flag);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        uint64_t spins = 0;
        while (base[0] == 0) spins++;  /* computing; no MPI call */
        CHECK(base[0] == 42, "flag %ld", (long)base[0]);
    } else if (rank == 0) {
        /* No MPI epoch: osc ucx's own locks need the target inside MPI, which
         * rank 1 is not; X-ops need no epoch. */
        int64_t v = 42;
        MPI_Request r;
        MPIX_Rxinvoke(set_flag, &v, 8, 1, win, &r);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "completes once rank 1's thread ran it");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPIX_Ifunc_free(&set_flag);
    MPI_Win_free(&win);
    return mt_finalize("progress thread");
}
