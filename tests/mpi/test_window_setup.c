/* The error path of window set-up releases what it acquired. run-mpitest
 * sets XRDMA_DEBUG_WINDOW_FAIL=2 (the second window's set-up fails once it
 * holds its slot and its ifunc context), which this test keeps in its last
 * rank only: the others learn of the failure from the set-up's allreduce, as
 * of a real one, instead of waiting alone in its collectives; and
 * XRDMA_MAX_WINDOWS=1 (one slot:
 * a window after a leaked slot would have no X-operations). The failed
 * window must stay a working MPI window whose X-ops report why; the window
 * after it must get the slot back and run X-ops through a new context on the
 * same AM ids (a leaked context would still dispatch to the freed window).
 * argv[last]: mpi_ops.xfn (sum). */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

static int size;
static MPIX_Ifunc sum;

/* Allocate a window of two int64 {rank+1, 10*(rank+1)} and check an Xget sum
 * on the next rank: it succeeds (want_xops) or fails with MPI_ERR_WIN naming
 * the injected failure. Plain RMA works either way. */
static void one_window(const char *what, int want_xops)
{
    mt_section(what);
    MPI_Win win;
    int64_t *mem;
    CHECK(MPI_Win_allocate(2 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) == MPI_SUCCESS, "%s: allocate",
          what);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    mem[0] = mt_rank + 1;
    mem[1] = 10 * (mt_rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (mt_rank + 1) % size;
    int64_t got = -1, s = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(MPI_Get(&got, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, win) == MPI_SUCCESS, "%s: get", what);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && got == 10 * (t + 1), "%s: get %lld", what, (long long)got);
    int rc = MPIX_Xget(&s, 1, MPI_INT64_T, t, 0, 2, MPI_INT64_T, sum, NULL, 0, win);
    if (want_xops) {
        CHECK(rc == MPI_SUCCESS, "%s: xget: %d", what, rc);
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && s == 11 * (t + 1), "%s: xget sum %lld", what, (long long)s);
    } else {
        const int here = mt_rank == size - 1; /* (the rank with the knob) */
        CHECK(mt_error_is(rc, MPI_ERR_WIN, here ? "on purpose in this rank" : "in another rank") &&
                  mt_error_is(rc, MPI_ERR_WIN, here ? "XRDMA_DEBUG_WINDOW_FAIL=2" : "XRDMA_DEBUG_WINDOW_FAIL)"),
              "%s: xget reports the failed set-up", what);
    }
    CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "%s: unlock", what);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "%s: free", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (mt_rank != size - 1) unsetenv("XRDMA_DEBUG_WINDOW_FAIL");
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "sum", &sum) == MPI_SUCCESS, "load sum");
    one_window("window 1: X-ops", 1);
    one_window("window 2: set-up fails on purpose", 0);
    one_window("window 3: the slot and the AM ids serve again", 1);
    one_window("window 4: and again after a normal free", 1);
    MPIX_Ifunc_free(&sum);
    int r = mt_finish("window set-up error path");
    MPI_Finalize();
    return r;
}
