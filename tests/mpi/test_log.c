/* xrdma_log() from injected code: every rank asks the next one to log 30
 * lines at once, then (after more than a second) one more. run-mpitest runs
 * it with XRDMA_LOG_RATE=5 and the default symbol policy and checks the
 * output: lines prefixed with the target's rank and the entry, at most a
 * burst of 5 of the 30, and the count of dropped lines. argv[1]: log.xfn. */
#include <mpix_xrdma.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPIX_Ifunc say;
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "say", &say) == MPI_SUCCESS, "load say");
    MPI_Win win;
    char *base;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int t = (mt_rank + 1) % size;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 30; ++i)
        CHECK(MPIX_Xinvoke(say, &i, sizeof(i), t, win) == MPI_SUCCESS, "xinvoke %d", i);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(1300 * 1000);  /* the bucket refills */
    MPI_Win_lock_all(0, win);
    int last = 99;
    CHECK(MPIX_Xinvoke(say, &last, sizeof(last), t, win) == MPI_SUCCESS, "xinvoke last");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush last");
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPIX_Ifunc_free(&say);
    return mt_finalize("log");
}
