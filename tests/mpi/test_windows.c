/* Plain MPI programs keep their results with XRDMA linked: 300 windows
 * (created and allocated, alive at once) all succeed, XRDMA prints nothing
 * (run-mpitest checks the output), and they are freed. X-operations on every
 * one of them land (one plugin context serves them all: no limit on windows
 * alive but memory). argv[1] "many": 10 000 windows, 2000 under MPICH (MPI_Win_create: each
 * MPI_Win_allocate of Open MPI's osc ucx is a System V segment, and a node
 * has 4 096), each with X-operations. An X-op on a window created past
 * XRDMA (PMPI_Win_allocate) says that XRDMA is not interposed on it.
 * argv[last]: mpi_ops.xfn (accumulate). */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int many = argc > 2 && strcmp(argv[1], "many") == 0;
#ifdef MPICH_VERSION
    /* MPICH allows a process 2048 communicators, and each window holds one
     * (MPICH's own, with or without XRDMA). */
    const int NMANY = 2000;
#else
    const int NMANY = 10000;
#endif
    const int NWIN = many ? NMANY : 300;
    MPIX_Ifunc acc;
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "accumulate", &acc) == MPI_SUCCESS, "load accumulate");

    mt_section(many ? "many windows alive at once" : "300 windows alive at once");
    MPI_Win *win = calloc((size_t)NWIN, sizeof(MPI_Win));
    int64_t (*created)[4] = calloc((size_t)NWIN, sizeof(*created));
    int64_t **mem = calloc((size_t)NWIN, sizeof(int64_t *));
    int failed = 0;
    for (int i = 0; i < NWIN; ++i) {
        int rc;
        if (i % 2 || many) {
            mem[i] = created[i];
            rc = MPI_Win_create(mem[i], sizeof(created[i]), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win[i]);
        } else {
            rc = MPI_Win_allocate(4 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem[i], &win[i]);
        }
        if (rc != MPI_SUCCESS) failed++;
        else {
            MPI_Win_set_errhandler(win[i], MPI_ERRORS_RETURN);
            memset(mem[i], 0, 4 * 8);
        }
    }
    CHECK(failed == 0, "%d of %d window creations failed", failed, NWIN);

    mt_section("plain RMA on the last window");
    int64_t v = mt_rank + 1, got = -1;
    int t = (mt_rank + 1) % size;
    MPI_Win_fence(0, win[NWIN - 1]);
    CHECK(MPI_Put(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win[NWIN - 1]) == MPI_SUCCESS, "put");
    CHECK(MPI_Win_fence(0, win[NWIN - 1]) == MPI_SUCCESS, "fence");
    CHECK(mem[NWIN - 1][0] == (mt_rank + size - 1) % size + 1, "put landed: %lld", (long long)mem[NWIN - 1][0]);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[NWIN - 2]);
    CHECK(MPI_Get(&got, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win[NWIN - 2]) == MPI_SUCCESS, "get");
    CHECK(MPI_Win_unlock(t, win[NWIN - 2]) == MPI_SUCCESS, "unlock");
    CHECK(got == 0, "get: %lld", (long long)got);

    mt_section("X-ops on every window");
    int64_t one[1] = {5};
    failed = 0;
    for (int i = 0; i < NWIN; ++i) {
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[i]);
        if (MPIX_Xput(one, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, acc, NULL, 0, win[i]) != MPI_SUCCESS) failed++;
        if (MPI_Win_unlock(t, win[i]) != MPI_SUCCESS) failed++;
    }
    CHECK(failed == 0, "%d X-ops or unlocks failed", failed);
    MPI_Barrier(MPI_COMM_WORLD);
    failed = 0;
    for (int i = 0; i < NWIN; ++i) failed += mem[i][1] != 5;
    CHECK(failed == 0, "%d windows without their X-op's result (window 0: %lld, last: %lld)", failed,
          (long long)mem[0][1], (long long)mem[NWIN - 1][1]);

    mt_section("a freed function or window is not used again");
    /* A stream of X-ops reuses the window and the function it named last: a
     * function freed and another loaded (likely at the same address) runs
     * the new code, and a new window on a freed one's handle is reached. */
    int64_t seven[1] = {7}, three[1] = {3}, nine[1] = {9};
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[0]);
    CHECK(MPIX_Xput(seven, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, acc, NULL, 0, win[0]) == MPI_SUCCESS, "xput 7");
    CHECK(MPI_Win_unlock(t, win[0]) == MPI_SUCCESS, "unlock win 0");
    MPIX_Ifunc_free(&acc);
    MPIX_Ifunc max;
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "store_max", &max) == MPI_SUCCESS, "load store_max");
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[0]);
    CHECK(MPIX_Xput(three, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, max, NULL, 0, win[0]) == MPI_SUCCESS, "xput 3");
    CHECK(MPI_Win_unlock(t, win[0]) == MPI_SUCCESS, "unlock win 0");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[0][2] == 7, "store_max ran, not accumulate: %lld", (long long)mem[0][2]);
    CHECK(MPI_Win_free(&win[0]) == MPI_SUCCESS, "free win 0");
    CHECK(MPI_Win_allocate(4 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem[0], &win[0]) == MPI_SUCCESS, "allocate again");
    memset(mem[0], 0, 4 * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[0]);
    CHECK(MPIX_Xput(nine, 1, MPI_INT64_T, t, 3, 1, MPI_INT64_T, max, NULL, 0, win[0]) == MPI_SUCCESS, "xput 9");
    CHECK(MPI_Win_unlock(t, win[0]) == MPI_SUCCESS, "unlock new win 0");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[0][3] == 9, "xput reached the new window: %lld", (long long)mem[0][3]);
    acc = max;

    mt_section("a window XRDMA did not set up");
    /* Created past XRDMA's MPI_Win_allocate, as when libmpi comes before the
     * core in a program's search order: an X-op on it says what is wrong. */
    MPI_Win raw;
    int64_t *raw_mem;
    CHECK(PMPI_Win_allocate(4 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &raw_mem, &raw) == MPI_SUCCESS,
          "PMPI_Win_allocate");
    MPI_Win_set_errhandler(raw, MPI_ERRORS_RETURN);
    int rc = MPIX_Xput(one, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, acc, NULL, 0, raw);
    CHECK(mt_error_is(rc, MPI_ERR_WIN,
                      "MPIX_Xput: XRDMA is not interposed on this window: libmpix_xrdma_core must come before "
                      "libmpi (see xrdma(7))"),
          "xput on a window XRDMA did not set up");
    CHECK(PMPI_Win_free(&raw) == MPI_SUCCESS, "PMPI_Win_free");

    mt_section("free them");
    failed = 0;
    for (int i = NWIN - 1; i >= 0; --i)
        if (MPI_Win_free(&win[i]) != MPI_SUCCESS) failed++;
    CHECK(failed == 0, "%d window frees failed", failed);
    MPIX_Ifunc_free(&acc);
    free(win);
    free(created);
    free(mem);
    return mt_finalize(many ? "windows (many)" : "windows");
}
