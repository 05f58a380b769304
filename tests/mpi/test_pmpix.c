/* The profiling interface: this program wraps MPIX_Xinvoke and
 * MPIX_Ifunc_load the way a tracing tool does (its own definitions, which
 * call the PMPIX_ entry points) and checks that every call went through
 * the wrappers and still did its work. argv[1]: tests/mpi/ifuncs/mpi_ops.xfn. */
#include <mpix_xrdma.h>

#include "mpitest.h"

static int wrapped_invokes, wrapped_loads;

int MPIX_Xinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win)
{
    wrapped_invokes++;
    return PMPIX_Xinvoke(ifunc, args, args_size, target_rank, win);
}

int MPIX_Ifunc_load(const char *path, const char *name, MPIX_Ifunc *ifunc)
{
    wrapped_loads++;
    return PMPIX_Ifunc_load(path, name, ifunc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) MPI_Abort(MPI_COMM_WORLD, 2);
    mt_section("MPIX_ calls reach a tool's wrappers, which reach XRDMA through PMPIX_");
    MPIX_Ifunc bump;
    CHECK(MPIX_Ifunc_load(argv[1], "bump", &bump) == MPI_SUCCESS, "load bump");
    CHECK(wrapped_loads == 1, "%d wrapped loads", wrapped_loads);
    int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 8; ++i) base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    /* bump adds its int64 argument to word 0 of the target's window. */
    enum { N = 10 };
    int t = (mt_rank + 1) % size;
    MPI_Win_lock_all(0, win);
    for (int64_t i = 0; i < N; ++i) {
        int64_t one = 1;
        CHECK(MPIX_Xinvoke(bump, &one, sizeof(one), t, win) == MPI_SUCCESS, "Xinvoke %lld", (long long)i);
    }
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(wrapped_invokes == N, "%d of %d invokes went through the wrapper", wrapped_invokes, N);
    CHECK(base[0] == N, "the target counted %lld bumps, want %d", (long long)base[0], N);
    MPI_Win_free(&win);
    MPIX_Ifunc_free(&bump);
    return mt_finalize("profiling interface");
}
