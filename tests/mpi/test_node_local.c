/* Node-local execution (XRDMA_EXEC, xrdma_ifunc(3) "Where the code runs") on
 * one kind of window (argv[1]: allocate or shared), with the images of
 * tests/mpi/ifuncs/node_local_{movable,pinned,crash}.c (argv[2..4]).
 *
 * XRDMA_TEST_EXPECT_LOCAL=1 (set by run-mpitest where node peers' windows
 * can be mapped: XRDMA_EXEC=auto over shared memory, or a shared window)
 * says where movable code must run; every other check holds either way:
 * - exact totals when code run at origins (movable) and code run at the
 *   target (pinned) accumulate into the same cells at once, from all ranks;
 * - a mixed sequence from one origin to one target runs in issue order;
 * - exact totals when chains of forwards accumulate at every rank they
 *   visit (continuing in one process across mapped windows, under each
 *   target's lock in turn) while pinned code runs at the targets;
 * - a forwarded Xput carries its data on (by reference locally, by value
 *   once it may leave the process);
 * - the function sees the target's rank and window wherever it runs;
 * - a fault in movable code ends that op with MPIX_ERR_IFUNC_FAULT, the
 *   process that ran it survives, and its message names where it ran; a
 *   fault after hops releases the target lock it held;
 * - MPI_Win_free detaches every node peer's segment (/proc/self/maps). */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

#define CELLS 64
#define LOG 512
/* (An even count: MPICH 4.0.2's own MPI_Get from a node peer's
 * MPI_Win_allocate window whose size is not a multiple of 16 bytes reads 8
 * bytes before the displacement asked for.) */
#define WORDS (CELLS + 1 + LOG + 65)

static int rank, size, expect_local;
static int64_t *base;
static MPI_Win win;
static MPIX_Ifunc f_acc, f_acc_pinned, f_append, f_append_pinned, f_fwd, f_where, f_crash, f_acc_chain, f_crash_hops;

/* The inode (System V shmid) of the mapping that holds @p addr, or -1. */
static long segment_of(const void *addr)
{
    FILE *fp = fopen("/proc/self/maps", "r");
    char line[512];
    long id = -1;
    uintptr_t a = (uintptr_t)addr;
    while (fp && fgets(line, sizeof(line), fp)) {
        unsigned long lo, hi, off, inode;
        char perms[8], dev[32];
        if (sscanf(line, "%lx-%lx %7s %lx %31s %lu", &lo, &hi, perms, &off, dev, &inode) == 6 && a >= lo && a < hi &&
            strstr(line, "/SYSV"))
            id = (long)inode;
    }
    if (fp) fclose(fp);
    return id;
}

/* How many of the other ranks' window segments (@p ids, by rank) this
 * process has mapped. */
static int peers_mapped(const long *ids)
{
    FILE *fp = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (fp && fgets(line, sizeof(line), fp)) {
        unsigned long lo, hi, off, inode;
        char perms[8], dev[32];
        if (sscanf(line, "%lx-%lx %7s %lx %31s %lu", &lo, &hi, perms, &off, dev, &inode) != 6 || !strstr(line, "/SYSV"))
            continue;
        for (int r = 0; r < size; ++r)
            if (r != rank && ids[r] >= 0 && (unsigned long)ids[r] == inode) n++;
    }
    if (fp) fclose(fp);
    return n;
}

static void load(const char *path, const char *entry, MPIX_Ifunc *f)
{
    CHECK(MPIX_Ifunc_load(path, entry, f) == MPI_SUCCESS, "MPIX_Ifunc_load(%s, %s)", path, entry);
}

static void reset_window(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < WORDS; ++i) base[i] = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_where(void)
{
    mt_section("the function sees the target's rank and window");
    reset_window();
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    base[0] = 1000 + rank;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; ++t) {
        int64_t out[3] = {-1, -1, -1};
        CHECK(MPIX_Xget(out, 3, MPI_INT64_T, t, 0, 1, MPI_INT64_T, f_where, NULL, 0, win) == MPI_SUCCESS, "Xget");
        MPI_Win_flush(t, win);
        CHECK(out[0] == t && out[1] == WORDS * 8 && out[2] == 1000 + t, "target %d: rank %lld, %lld bytes, first %lld",
              t, (long long)out[0], (long long)out[1], (long long)out[2]);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_mixed_accumulate(void)
{
    mt_section("exact totals: code at origins and at targets into the same cells at once");
    reset_window();
    enum { ROUNDS = 400 };
    int64_t ones[CELLS];
    for (int i = 0; i < CELLS; ++i) ones[i] = 1;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < ROUNDS; ++k) {
        for (int d = 0; d < size; ++d) {
            int t = (rank + d) % size;
            CHECK(MPIX_Xput(ones, CELLS, MPI_INT64_T, t, 0, CELLS, MPI_INT64_T, f_acc, NULL, 0, win) == MPI_SUCCESS,
                  "Xput acc");
            CHECK(MPIX_Xput(ones, CELLS, MPI_INT64_T, t, 0, CELLS, MPI_INT64_T, f_acc_pinned, NULL, 0, win) ==
                      MPI_SUCCESS,
                  "Xput acc_pinned");
            /* Drained now and then, so that movable ones run at the origin
             * while other origins' pinned ones run at the target. */
            if (k % 2) MPI_Win_flush(t, win);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < CELLS; ++i) bad += base[i] != 2 * ROUNDS * size;
    CHECK(bad == 0, "%d of %d cells differ from %d (cell 0: %lld)", bad, CELLS, 2 * ROUNDS * size, (long long)base[0]);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_chain_accumulate(void)
{
    mt_section("exact totals: chains that accumulate at every rank they visit, with code at the targets");
    reset_window();
    enum { ROUNDS = 2000 };
    int64_t ones[CELLS];
    for (int i = 0; i < CELLS; ++i) ones[i] = 1;
    /* Each chain visits 2 * size ranks: every rank twice. Every 8th round
     * also a pinned accumulate at the target (a message); the chains to a
     * target run in this process while none of ours is in flight to it. */
    int64_t hops = 2 * size - 1;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < ROUNDS; ++k) {
        int t = (rank + k) % size;
        CHECK(MPIX_Xput(ones, CELLS, MPI_INT64_T, t, 0, CELLS, MPI_INT64_T, f_acc_chain, &hops, sizeof(hops), win) ==
                  MPI_SUCCESS,
              "Xput acc_chain");
        if (k % 8 == 0)
            CHECK(MPIX_Xput(ones, CELLS, MPI_INT64_T, t, 0, CELLS, MPI_INT64_T, f_acc_pinned, NULL, 0, win) ==
                      MPI_SUCCESS,
                  "Xput acc_pinned");
        if (k % 8 == 7) MPI_Win_flush_all(win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Per rank: 2 per chain from each origin's ROUNDS chains, plus the
     * pinned ones that went to it (from origin o: the k % 8 == 0 with
     * (o + k) % size == rank). */
    int64_t pinned = 0;
    for (int o = 0; o < size; ++o)
        for (int k = 0; k < ROUNDS; k += 8) pinned += (o + k) % size == rank;
    const int64_t want = 2 * (int64_t)ROUNDS * size + pinned;
    int bad = 0;
    for (int i = 0; i < CELLS; ++i) bad += base[i] != want;
    CHECK(bad == 0, "%d of %d cells differ from %lld (cell 0: %lld)", bad, CELLS, (long long)want, (long long)base[0]);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_order(void)
{
    mt_section("issue order of a mixed sequence from one origin to one target");
    reset_window();
    enum { N = 300 };
    if (rank == 0) {
        int t = 1 % size;
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        for (int64_t v = 0; v < N; ++v) {
            /* runs of 1-3 of each kind, in issue order */
            MPIX_Ifunc f = (v / (1 + v % 3)) % 2 ? f_append_pinned : f_append;
            CHECK(MPIX_Xput(NULL, 0, MPI_INT64_T, t, CELLS, LOG + 1, MPI_INT64_T, f, &v, sizeof(v), win) ==
                      MPI_SUCCESS,
                  "Xput append %lld", (long long)v);
            if (v % 50 == 49) CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush after %lld", (long long)v);
        }
        CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "unlock");
        int64_t log[N + 1];
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        MPI_Get(log, N + 1, MPI_INT64_T, t, CELLS, N + 1, MPI_INT64_T, win);
        MPI_Win_unlock(t, win);
        CHECK(log[0] == N, "log has %lld entries, want %d", (long long)log[0], N);
        int out_of_order = 0;
        for (int i = 0; i < N && i < log[0]; ++i) out_of_order += log[1 + i] != i;
        CHECK(out_of_order == 0, "%d entries out of issue order", out_of_order);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_forward_put(void)
{
    mt_section("a forwarded Xput carries its data along");
    reset_window();
    int64_t data[8];
    for (int i = 0; i < 8; ++i) data[i] = 100 * rank + i + 1;
    int64_t hops = size;
    /* Each rank's data ends in its own slot at rank (rank+1+hops) % size. */
    MPI_Win_lock_all(0, win);
    int t = (rank + 1) % size;
    MPI_Request req;
    CHECK(MPIX_Rxput(data, 8, MPI_INT64_T, t, CELLS + 1 + 8 * rank, 8, MPI_INT64_T, f_fwd, &hops, sizeof(hops), win,
                     &req) == MPI_SUCCESS,
          "Rxput");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The slot of origin o lives at rank (o + 1 + size) % size == (o + 1) % size. */
    int o = (rank - 1 + size) % size;
    int bad = 0;
    for (int i = 0; i < 8; ++i) bad += base[CELLS + 1 + 8 * o + i] != 100 * o + i + 1;
    CHECK(bad == 0, "slot of origin %d: %d of 8 words wrong (first %lld)", o, bad, (long long)base[CELLS + 1 + 8 * o]);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_fault(void)
{
    mt_section("a fault in movable code: MPIX_ERR_IFUNC_FAULT, and the process that ran it survives");
    reset_window();
    if (rank == 0 && size > 1) {
        int t = 1;
        char want[64];
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        int64_t v = 0;
        CHECK(MPIX_Xinvoke(f_crash, &v, sizeof(v), t, win) == MPI_SUCCESS, "Xinvoke crash");
        int err = MPI_Win_flush(t, win);
        CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "SIGSEGV"), "first crash");
        /* Quarantined where it ran: here (rank 0) or at the target. */
        CHECK(MPIX_Xinvoke(f_crash, &v, sizeof(v), t, win) == MPI_SUCCESS, "Xinvoke crash again");
        err = MPI_Win_flush(t, win);
        snprintf(want, sizeof(want), "rank %d: image", expect_local ? 0 : t);
        CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "quarantined") && mt_error_is(err, MPIX_ERR_IFUNC_FAULT, want),
              "second crash quarantined at rank %d", expect_local ? 0 : t);
        /* Both processes keep working. */
        CHECK(MPIX_Xput(NULL, 0, MPI_INT64_T, t, CELLS, LOG + 1, MPI_INT64_T, f_append, &v, sizeof(v), win) ==
                  MPI_SUCCESS,
              "Xput after the fault");
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush after the fault");
        /* A fault after hops that continued in one process: the lock it
         * held is released (the accumulates below would wait forever). */
        int64_t hops = 2 * size - 1;
        CHECK(MPIX_Xinvoke(f_crash_hops, &hops, sizeof(hops), t, win) == MPI_SUCCESS, "Xinvoke crash_after_hops");
        err = MPI_Win_flush(t, win);
        CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "SIGSEGV"), "crash after %lld hops", (long long)hops);
        int64_t one = 1;
        for (int r = 0; r < size; ++r) {
            if (r != t) MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win);
            CHECK(MPIX_Xput(&one, 1, MPI_INT64_T, r, 0, 1, MPI_INT64_T, f_acc_pinned, NULL, 0, win) == MPI_SUCCESS,
                  "Xput acc_pinned to rank %d after the fault", r);
            CHECK(MPI_Win_flush(r, win) == MPI_SUCCESS, "acc on rank %d after the fault", r);
            if (r != t) MPI_Win_unlock(r, win);
        }
        MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, &rank, &size);
    mt_require(argc >= 5, "usage: test_node_local allocate|shared movable.xfn pinned.xfn crash.xfn");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *e = getenv("XRDMA_TEST_EXPECT_LOCAL");
    expect_local = e && strcmp(e, "1") == 0;
    int shared = strcmp(argv[1], "shared") == 0;
    load(argv[2], "acc_movable", &f_acc);
    load(argv[2], "append_movable", &f_append);
    load(argv[2], "forward_store", &f_fwd);
    load(argv[2], "where", &f_where);
    load(argv[3], "acc_pinned", &f_acc_pinned);
    load(argv[3], "append_pinned", &f_append_pinned);
    load(argv[2], "acc_chain", &f_acc_chain);
    load(argv[4], "crash", &f_crash);
    load(argv[2], "crash_after_hops", &f_crash_hops);

    if (shared)
        MPI_Win_allocate_shared(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    else
        MPI_Win_allocate(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long *ids = malloc(sizeof(long) * (size_t)size), own = shared ? -1 : segment_of(base);
    MPI_Allgather(&own, 1, MPI_LONG, ids, 1, MPI_LONG, MPI_COMM_WORLD);

    test_where();
    test_mixed_accumulate();
    test_chain_accumulate();
    test_order();
    test_forward_put();
    test_fault();

    int during = peers_mapped(ids);
    MPI_Win_free(&win);
    int after = peers_mapped(ids);
    mt_section("MPI_Win_free detaches every node peer's segment");
    CHECK(after == 0, "%d node peers' window segments still mapped after MPI_Win_free (%d before)", after, during);
    /* Locally run code attached the peers' segments (allocate windows over
     * shared memory: osc ucx puts them in System V segments; its own RMA
     * may map them too, so this counts at least one mapping per peer).
     * MPICH maps its node's window memory in every process itself (no
     * System V segment: nothing to attach). */
    if (expect_local && !shared && own >= 0)
        CHECK(during >= size - 1, "%d mappings of %d node peers' window segments while in use", during, size - 1);
    free(ids);
    MPIX_Ifunc *all[] = {&f_acc,          &f_append, &f_fwd,       &f_where,      &f_acc_pinned,
                         &f_append_pinned, &f_crash,  &f_acc_chain, &f_crash_hops};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) MPIX_Ifunc_free(all[i]);
    return mt_finalize("node-local execution");
}
