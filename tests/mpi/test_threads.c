/* MPI_THREAD_MULTIPLE: 4 threads per rank issue X-operations concurrently
 * (accumulate into every rank, request variants waited on per thread), then
 * the totals must be exact. argv[1]: mpi_ops.xfn. */
#include <mpix_xrdma.h>
#include <pthread.h>
#include <stdint.h>

#include "mpitest.h"

#define THREADS 4
#define OPS 200

static int rank, size;
static int64_t *base;
static MPI_Win win;
static MPIX_Ifunc f_acc, f_sum;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < OPS; ++i) {
        int t = (rank + i) % size;
        int64_t one[2] = {1, id};
        if (i % 4 == 0) {
            MPI_Request r;
            MPIX_Rxput(one, 2, MPI_INT64_T, t, 2 * id, 2, MPI_INT64_T, f_acc, NULL, 0, win, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPIX_Xput(one, 2, MPI_INT64_T, t, 2 * id, 2, MPI_INT64_T, f_acc, NULL, 0, win);
        }
        if (i % 50 == 49) MPI_Win_flush(t, win);
    }
    /* A thread's Xget sees its own completed accumulates. */
    MPI_Win_flush_all(win);
    int64_t s = -1;
    MPIX_Xget(&s, 1, MPI_INT64_T, rank, 2 * id, 1, MPI_INT64_T, f_sum, NULL, 0, win);
    MPI_Win_flush(rank, win);
    CHECK(s > 0, "thread %d: sum %ld", id, (long)s);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mt_rank = rank;
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        return 77;
    }
    MPI_Win_allocate(2 * THREADS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 2 * THREADS; ++i) base[i] = 0;
    MPIX_Ifunc_load(argv[1], "accumulate", &f_acc);
    MPIX_Ifunc_load(argv[1], "sum", &f_sum);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; ++i) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Each thread id of each rank hit rank t exactly OPS/size times (+1 for the
     * remainder), each adding 1 to word 2*id and id to word 2*id+1. */
    for (int id = 0; id < THREADS; ++id) {
        int64_t want = 0;
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < OPS; ++i)
                if ((r + i) % size == rank) want++;
        CHECK(base[2 * id] == want, "word %d: %ld, want %ld", 2 * id, (long)base[2 * id], (long)want);
        CHECK(base[2 * id + 1] == want * id, "word %d: %ld, want %ld", 2 * id + 1, (long)base[2 * id + 1],
              (long)(want * id));
    }
    MPIX_Ifunc_free(&f_acc);
    MPIX_Ifunc_free(&f_sum);
    MPI_Win_free(&win);
    return mt_finalize("threads");
}
