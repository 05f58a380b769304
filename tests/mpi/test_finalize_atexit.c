/* MPI_Finalize registered with atexit() before XRDMA's first window, as
 * some programs and language runtimes do: the job ends through it, after
 * main returns, with X-operations done and windows freed. XRDMA's runtime
 * must still be alive then (it is made at the first window, after the
 * atexit registration, so a static destroyed at exit would be gone before
 * MPI_Finalize runs: AddressSanitizer's use-after-free, or with
 * XRDMA_PROGRESS_THREAD=1 std::terminate on a joinable thread).
 * run-mpitest runs the TCP configuration with the progress thread.
 * argv[last]: mpi_ops.xfn (accumulate). */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

static void finalize(void)
{
    MPI_Finalize();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    atexit(finalize);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPIX_Ifunc acc;
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "accumulate", &acc) == MPI_SUCCESS, "load accumulate");

    mt_section("X-ops, then the window freed, MPI_Finalize left to atexit");
    MPI_Win win;
    int64_t *mem;
    CHECK(MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) == MPI_SUCCESS, "allocate");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win);
    mem[0] = 0;
    MPI_Win_unlock(mt_rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    const int t = (mt_rank + 1) % size;
    const int64_t add = mt_rank + 1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(MPIX_Xput(&add, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, acc, NULL, 0, win) == MPI_SUCCESS, "xput");
    MPI_Win_unlock(t, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win);
    const int from = (mt_rank + size - 1) % size;
    CHECK(mem[0] == from + 1, "rank %d's accumulate landed: %lld", from, (long long)mem[0]);
    MPI_Win_unlock(mt_rank, win);
    MPI_Win_free(&win);
    MPIX_Ifunc_free(&acc);
    return mt_finish("finalize_atexit");
}
