/* MPI_Win_flush without Open MPI's component flush when the component has
 * nothing of its own to complete (XRDMA_FLUSH_SKIP, osc_flush.h). Each rank
 * works on the next one's window while its predecessor works on its own:
 * a flush after X-ops alone returns without the component; one after an
 * MPI RMA call (MPI_Put, PMPI_Put as Open MPI's Fortran bindings call it,
 * MPI_Accumulate, MPI_Rput) goes to it, and the data is at the target when
 * the origin says so; a flush outside an epoch is still an error; a window
 * without X-ops keeps the component's table.
 * argv[1]: the window kind (create, allocate) or "off" (run-mpitest sets
 * XRDMA_FLUSH_SKIP=0: every flush goes to the component, and the data is
 * there just the same); argv[last]: mpi_ops.xfn (bump). */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"
#include "xrdma_mpi.h"

enum { kWords = 1 << 17, kData = 8 }; /* 1 MiB of data after 8 words */

static int size, off;
static MPI_Win win;
static int64_t *mem, *buf;
static unsigned long long last[2];

/* Flushes since the last call: skipped (without the component), passed. */
static void counts(unsigned long long *skipped, unsigned long long *passed)
{
    unsigned long long now[2];
    int wrapped = xrdma_mpi_osc_flush_counts(win, now);
    CHECK(wrapped == !off, "the component's table is %swrapped", wrapped ? "" : "not ");
    *skipped = now[0] - last[0];
    *passed = now[1] - last[1];
    last[0] = now[0];
    last[1] = now[1];
}

static void expect(const char *what, unsigned long long skipped, unsigned long long passed)
{
    unsigned long long s, p;
    counts(&s, &p);
    if (off) skipped = 0, passed = 0; /* (not wrapped: nothing counted) */
    CHECK(s == skipped && p == passed, "%s: %llu flushes without the component (want %llu), %llu with it (want %llu)",
          what, s, skipped, p, passed);
}

static void pattern(int64_t *to, int64_t seed)
{
    for (int i = 0; i < kWords; ++i) to[i] = seed * 1000003 + i;
}

/* The origin flushed its data to the next rank: tell it, and check the data
 * the previous rank says it flushed here. */
static void check_arrived(const char *what, int64_t seed)
{
    const int t = (mt_rank + 1) % size, p = (mt_rank + size - 1) % size;
    int64_t theirs = -1;
    MPI_Sendrecv(&seed, 1, MPI_INT64_T, t, 7, &theirs, 1, MPI_INT64_T, p, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_sync(win);
    int bad = -1;
    for (int i = 0; i < kWords && bad < 0; ++i)
        if (mem[kData + i] != theirs * 1000003 + i) bad = i;
    CHECK(bad < 0, "%s: word %d of the data rank %d flushed here: %lld", what, bad, p,
          bad < 0 ? 0LL : (long long)mem[kData + bad]);
    MPI_Barrier(MPI_COMM_WORLD); /* (before the next data comes) */
}

/* 1 MiB through @p put to the next rank, a flush that goes to the
 * component, and the data there. */
typedef int put_fn(const void *, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Win);
static void put_flush_check(const char *what, put_fn *put, int64_t seed)
{
    const int t = (mt_rank + 1) % size;
    pattern(buf, seed);
    CHECK(put(buf, kWords, MPI_INT64_T, t, kData, kWords, MPI_INT64_T, win) == MPI_SUCCESS, "%s", what);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "%s: flush", what);
    expect(what, 0, 1);
    check_arrived(what, seed);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *kind = argc > 2 ? argv[1] : "create";
    /* MPICH has no component table to wrap: every flush goes to MPI there,
     * as with the knob off (run-mpitest exports XRDMA_MPI). */
    const char *mpi = getenv("XRDMA_MPI");
    off = !strcmp(kind, "off") || (mpi && !strcmp(mpi, "mpich"));
    if (!strcmp(kind, "off")) kind = "create";
    MPIX_Ifunc bump;
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "bump", &bump) == MPI_SUCCESS, "load bump");
    mt_window(kind, (kData + kWords) * 8, 8, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(mem, 0, (kData + kWords) * 8);
    buf = malloc(kWords * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    const int t = (mt_rank + 1) % size;

    mt_section("a window without X-ops keeps the component's table");
    MPI_Win_lock_all(0, win);
    int64_t one = 1;
    CHECK(MPI_Put(&one, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, win) == MPI_SUCCESS, "put before X-ops");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush before X-ops");
    CHECK(MPI_Put(&one, 1, MPI_INT64_T, mt_rank, 2, 1, MPI_INT64_T, win) == MPI_SUCCESS, "put to self, not flushed");
    unsigned long long c[2];
    CHECK(!xrdma_mpi_osc_flush_counts(win, c), "the table is wrapped before the first X-op");

    mt_section("X-ops alone: from the second, the flush returns without the component");
    for (int i = 0; i < 10; ++i) {
        CHECK(MPIX_Xinvoke(bump, &one, 8, t, win) == MPI_SUCCESS, "xinvoke %d", i);
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush %d", i);
    }
    /* (The first asks the component: what came before the table was
     * wrapped, and the epoch, are not known.) */
    expect("ten Xinvoke + flush", 9, 1);
    CHECK(MPI_Win_flush(mt_rank, win) == MPI_SUCCESS, "flush self");
    expect("the flush of a put made before the table was wrapped", 0, 1);

    mt_section("MPI_Put: the flush goes to the component, the data is there");
    put_flush_check("MPI_Put", MPI_Put, 1 + mt_rank);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush again");
    expect("a flush after it completed the put", 1, 0);

    mt_section("PMPI_Put (Open MPI's Fortran bindings): counted all the same");
    put_flush_check("PMPI_Put", PMPI_Put, 100 + mt_rank);

    mt_section("calls to another target: this target's flush returns at once");
    CHECK(MPI_Put(&one, 1, MPI_INT64_T, mt_rank, 1, 1, MPI_INT64_T, win) == MPI_SUCCESS, "put to self");
    if (t != mt_rank) {
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush another target");
        expect("a put to self, flush of the next rank", 1, 0);
    }
    CHECK(MPI_Win_flush(mt_rank, win) == MPI_SUCCESS, "flush self");
    expect("a put to self, flush of self", 0, 1);

    mt_section("MPI_Accumulate, MPI_Rput and MPI_Win_flush_all");
    pattern(buf, 200 + mt_rank);
    MPI_Request r;
    CHECK(MPI_Rput(buf, kWords / 2, MPI_INT64_T, t, kData, kWords / 2, MPI_INT64_T, win, &r) == MPI_SUCCESS, "rput");
    CHECK(MPI_Accumulate(buf + kWords / 2, kWords / 2, MPI_INT64_T, t, kData + kWords / 2, kWords / 2, MPI_INT64_T,
                         MPI_REPLACE, win) == MPI_SUCCESS,
          "accumulate");
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait rput");
    CHECK(MPI_Win_flush_all(win) == MPI_SUCCESS, "flush_all");
    expect("rput + accumulate + flush_all", 0, 1);
    check_arrived("MPI_Rput + MPI_Accumulate", 200 + mt_rank);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush after flush_all");
    expect("a flush after flush_all completed them", 1, 0);
    MPI_Win_unlock_all(win);

    mt_section("an unlock completes: the flush of the next epoch returns at once");
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win) == MPI_SUCCESS, "lock");
    pattern(buf, 300 + mt_rank);
    CHECK(MPI_Put(buf, kWords, MPI_INT64_T, t, kData, kWords, MPI_INT64_T, win) == MPI_SUCCESS, "put in lock");
    CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "unlock");
    CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win) == MPI_SUCCESS, "lock again");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush in the new epoch");
    expect("a flush after unlock completed the put", 1, 0);
    CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "unlock again");
    MPI_Win_lock_all(0, win);
    check_arrived("MPI_Put in a lock epoch", 300 + mt_rank);
    MPI_Win_unlock_all(win);

    mt_section("no epoch: MPI_Win_flush is an error, from the component");
    int rc = MPI_Win_flush(t, win);
    CHECK(mt_error_is(rc, MPI_ERR_RMA_SYNC, NULL), "flush outside an epoch: %d", rc);
    expect("a flush outside an epoch", 0, 1);

    mt_section("the X-ops ran");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    CHECK(mem[0] == 10, "bump count %lld", (long long)mem[0]);
    MPI_Win_unlock_all(win);

    MPI_Barrier(MPI_COMM_WORLD);
    mt_window_free(kind, mem, &win);
    free(buf);
    MPIX_Ifunc_free(&bump);
    return mt_finalize(off ? "flush (XRDMA_FLUSH_SKIP=0)" : "flush");
}
