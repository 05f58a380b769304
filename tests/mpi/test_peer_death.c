/* A rank that dies: X-ops pending on it end with MPIX_ERR_PEER in bounded
 * time, and X-ops to the other ranks are unaffected. Needs 3 ranks, UCX over
 * TCP with XRDMA_PEER_FAILURE=on, and mpirun --enable-recovery (so the job
 * outlives the death). argv[1]: runaway.xfn, argv[2]: mpi_ops.xfn,
 * argv[3]: stream.xfn. Rank 2 dies while rank 1 fetches the data of its
 * streaming Xput (XRDMA_STREAM): rank 1 must neither crash nor hang in the
 * fetch, and answers rank 0 afterwards. Exit status and the closing line
 * come from rank 0 alone (rank 2 is gone). */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    mt_require(size == 3 && argc == 4, "needs 3 ranks and 3 images");
    int64_t *base;
    MPI_Win win;
    /* Every X-op runs at its target (xrdma_exec=target): under MPICH this
     * window's memory is shared on the node, and an X-op run here on the
     * dead rank's memory would not be the operation pending on a dead
     * process that this test is about. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "xrdma_exec", "target");
    MPI_Win_allocate(128, 8, info, MPI_COMM_WORLD, &base, &win);  /* st_count writes at 8 */
    MPI_Info_free(&info);
    for (int i = 0; i < 8; ++i) base[i] = 100 * rank + i;
    MPIX_Ifunc spin, sum;
    MPIX_Ifunc_load(argv[1], NULL, &spin);
    MPIX_Ifunc_load(argv[2], "sum", &sum);
    /* Rank 2 streams 32 MiB to rank 1 (whose function only counts the
     * pieces) and dies as soon as it sent the operation: rank 1 is left
     * fetching from a dead rank. Its code went first, with a small
     * operation, so that the large one is only a header. */
    MPIX_Ifunc count;
    MPIX_Ifunc_load(argv[3], "st_count", &count);
    const int n = 4 << 20;
    double *data = rank == 2 ? calloc((size_t)n, sizeof(double)) : NULL;
    if (rank == 2) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPIX_Xput(data, 1, MPI_DOUBLE, 1, 8, 8, MPI_INT64_T, count, NULL, 0, win);
        MPI_Win_flush(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2) {
        MPIX_Xput(data, n, MPI_DOUBLE, 1, 8, 8, MPI_INT64_T, count, NULL, 0, win);
        /* Gone at once, its sockets closed by the kernel, as after a crash.
         * Not by a signal: MPICH's process manager (hydra 4.0) kills every
         * rank when one ends by a signal, -disable-auto-cleanup or not. */
        _exit(0);
    }
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        /* The call itself says so when this process already knows the
         * rank is gone (no endpoint to it), else its request does. */
        MPI_Request r;
        int err = MPIX_Rxinvoke(spin, NULL, 0, 2, win, &r);
        if (err == MPI_SUCCESS) err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(mt_error_is(err, MPIX_ERR_PEER, "rank 2"), "pending op on the dead rank");
        err = MPIX_Rxinvoke(spin, NULL, 0, 2, win, &r);
        if (err == MPI_SUCCESS) err = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(mt_error_is(err, MPIX_ERR_PEER, NULL), "a later op to the dead rank");
        /* Without a request (the short path of ops.cc): the call says so. */
        err = MPIX_Xinvoke(spin, NULL, 0, 2, win);
        CHECK(mt_error_is(err, MPIX_ERR_PEER, "rank 2"), "an Xinvoke to the dead rank: %d", err);
        int64_t s = -1;
        MPIX_Rxget(&s, 1, MPI_INT64_T, 1, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &r);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && s == 800 + 28, "rank 1 unaffected: %ld", (long)s);
        int done = 1;
        MPI_Send(&done, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        printf("peer death: %d checks, %d failed\n", mt_checks, mt_failures);
        fflush(stdout);
    } else if (rank == 1) {
        int done;
        MPI_Recv(&done, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);  /* serving meanwhile */
    }
    /* MPI_Finalize would wait for the dead rank. */
    _exit(mt_failures ? 1 : 0);
}
