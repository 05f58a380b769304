/* The error path of window set-up. run-mpitest sets
 * XRDMA_DEBUG_WINDOW_FAIL=2 (the second window's set-up fails), which this
 * test keeps in its last rank only: set-up involves no other process, so
 * the others' windows work, and only X-ops that need the failed rank's
 * state report it: its own (MPI_ERR_WIN, at the call) and those to it
 * (refused there with the reason, reported by the flush as MPIX_ERR_PEER).
 * The failed window must stay a working MPI window; the windows after it
 * must have X-operations everywhere (nothing of the failed one is left in
 * the way). argv[last]: mpi_ops.xfn (sum). */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

static int size;
static MPIX_Ifunc sum;

/* Allocate a window of two int64 {rank+1, 10*(rank+1)} and check an Xget sum
 * on the next rank: it succeeds (want_xops) or fails where the injected
 * failure is in the way. Plain RMA works either way. */
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
    const int t = (mt_rank + 1) % size, failed = size - 1; /* (the rank with the knob) */
    int64_t got = -1, s = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(MPI_Get(&got, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, win) == MPI_SUCCESS, "%s: get", what);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && got == 10 * (t + 1), "%s: get %lld", what, (long long)got);
    int rc = MPIX_Xget(&s, 1, MPI_INT64_T, t, 0, 2, MPI_INT64_T, sum, NULL, 0, win);
    if (want_xops || (mt_rank != failed && t != failed)) {
        CHECK(rc == MPI_SUCCESS, "%s: xget: %d", what, rc);
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && s == 11 * (t + 1), "%s: xget sum %lld", what, (long long)s);
    } else if (mt_rank == failed) {
        CHECK(mt_error_is(rc, MPI_ERR_WIN, "on purpose in rank") &&
                  mt_error_is(rc, MPI_ERR_WIN, "XRDMA_DEBUG_WINDOW_FAIL=2"),
              "%s: xget reports the failed set-up here", what);
    } else {
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(t, win);
        CHECK(mt_error_is(rc, MPIX_ERR_PEER, "has no X-operations here: set-up failed on purpose in rank") &&
                  mt_error_is(rc, MPIX_ERR_PEER, "XRDMA_DEBUG_WINDOW_FAIL=2"),
              "%s: an xget to the failed rank reports its reason", what);
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
    one_window("window 3: X-ops everywhere again", 1);
    one_window("window 4: and after a normal free", 1);
    MPIX_Ifunc_free(&sum);
    return mt_finalize("window set-up error path");
}
