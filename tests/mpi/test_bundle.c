/* Bundles of Xinvokes (XRDMA_BUNDLE, ompi_ext/xrdma/core/bundle.h): a
 * stream of Xinvokes to one target with a function that never forwards
 * goes in bundles. Each rank sends to the next and serves the previous.
 *   - a stream mixing two functions (one replies), with requests and an
 *     Xinvoke of another image between: every X-op runs once, in order;
 *   - an X-op that fails: the flush reports it (and, bundled, says that
 *     those behind it in its bundle did not run); the ones before it ran;
 *   - no synchronisation call: a bundle goes at the next progress pass
 *     (here MPI_Test, MPI_Iprobe), so a rank that waits in MPI for its
 *     target to see the X-op is not left waiting.
 * argv: [kind] bundle.xfn mpi_ops.xfn; kind "single" is a create window
 * with XRDMA_BUNDLE=1 (run-mpitest), every Xinvoke alone. */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

struct step { int64_t seq, fail_at; };

static MPI_Win win;
static volatile int64_t *mem;
static int size;

/* Own window words 0-4 to zero, in every rank. */
static void reset(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int i = 0; i < 5; ++i) mem[i] = 0;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *kind = argc > 3 ? argv[1] : "create";
    const int bundling = strcmp(kind, "single") != 0;
    if (!bundling) kind = "create";
    MPIX_Ifunc seq, seq_reply, set_flag, bump;
    CHECK(MPIX_Ifunc_load(argv[argc - 2], "seq", &seq) == MPI_SUCCESS, "load seq");
    CHECK(MPIX_Ifunc_load(argv[argc - 2], "seq_reply", &seq_reply) == MPI_SUCCESS, "load seq_reply");
    CHECK(MPIX_Ifunc_load(argv[argc - 2], "set_flag", &set_flag) == MPI_SUCCESS, "load set_flag");
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "bump", &bump) == MPI_SUCCESS, "load bump");
    void *base;
    mt_window(kind, 64, 8, &base, &win);
    mem = base;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    const int t = (mt_rank + 1) % size;
    reset();
    MPI_Win_lock_all(0, win);

    mt_section("a stream of two functions, requests and another image between: each X-op once, in order");
    enum { kOps = 2000 };
    for (int64_t i = 0; i < kOps; ++i) {
        struct step s = {i, -1};
        if (i % 500 == 250) {
            MPI_Request r;
            CHECK(MPIX_Rxinvoke(seq, &s, sizeof(s), t, win, &r) == MPI_SUCCESS, "Rxinvoke %lld", (long long)i);
            CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %lld", (long long)i);
        } else {
            CHECK(MPIX_Xinvoke(i % 50 < 40 ? seq : seq_reply, &s, sizeof(s), t, win) == MPI_SUCCESS,
                  "Xinvoke %lld", (long long)i);
        }
        if (i % 700 == 300) {  /* (another image, whose code forwards: never bundled) */
            int64_t zero = 0;
            CHECK(MPIX_Xinvoke(bump, &zero, 8, t, win) == MPI_SUCCESS, "bump");
        }
    }
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    CHECK(mem[0] == kOps && mem[1] == 0 && mem[2] == (int64_t)kOps * (kOps - 1) / 2 && mem[3] == kOps,
          "next %lld, out of order %lld, sum %lld, runs %lld", (long long)mem[0], (long long)mem[1],
          (long long)mem[2], (long long)mem[3]);
    reset();

    mt_section("a failing X-op: the flush reports it; those before it ran");
    enum { kFailAt = 5, kFailOps = 16 };
    for (int64_t i = 0; i < kFailOps; ++i) {
        struct step s = {i, kFailAt};
        CHECK(MPIX_Xinvoke(seq, &s, sizeof(s), t, win) == MPI_SUCCESS, "Xinvoke %lld", (long long)i);
    }
    int err = MPI_Win_flush(t, win);
    CHECK(err != MPI_SUCCESS, "the flush reported no error");
    if (err != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, s, &len);
        CHECK(strstr(s, "MPIX_Xinvoke to rank") != NULL, "%s", s);
        CHECK(!bundling || strstr(s, "XRDMA_BUNDLE") != NULL, "bundled, but the error does not say so: %s", s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    /* The first kFailAt ran in order; alone, every other one ran too. */
    CHECK(mem[3] >= kFailAt && mem[3] <= kFailOps - 1 && mem[2] >= (int64_t)kFailAt * (kFailAt - 1) / 2,
          "runs %lld, sum %lld", (long long)mem[3], (long long)mem[2]);
    CHECK(bundling || (mem[3] == kFailOps - 1 && mem[1] == 1), "alone: runs %lld, out of order %lld",
          (long long)mem[3], (long long)mem[1]);
    reset();

    mt_section("no synchronisation call: the bundle goes at the next progress pass");
    /* (The first after a synchronisation call goes alone; the second waits
     * in the bundle: the flag reads 1 once it ran.) */
    int64_t two = 2, one = 1;
    CHECK(MPIX_Xinvoke(set_flag, &two, 8, t, win) == MPI_SUCCESS, "set_flag 2");
    CHECK(MPIX_Xinvoke(set_flag, &one, 8, t, win) == MPI_SUCCESS, "set_flag 1");
    MPI_Request recv;
    int token = 0, got = 0, sent = 0;
    MPI_Irecv(&token, 1, MPI_INT, t, 9, MPI_COMM_WORLD, &recv);
    while (!got || !sent) {
        /* (Calls that progress, every turn: MPI_Win_sync does not.) */
        int none;
        if (!got) MPI_Test(&recv, &got, MPI_STATUS_IGNORE);
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &none, MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        if (!sent && mem[4] == 1) {  /* the previous rank's Xinvoke ran here: tell it */
            const int yes = 1;
            MPI_Send(&yes, 1, MPI_INT, (mt_rank + size - 1) % size, 9, MPI_COMM_WORLD);
            sent = 1;
        }
    }
    CHECK(token == 1, "token %d", token);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush");

    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    mt_window_free(kind, base, &win);
    MPIX_Ifunc_free(&seq);
    MPIX_Ifunc_free(&seq_reply);
    MPIX_Ifunc_free(&set_flag);
    MPIX_Ifunc_free(&bump);
    return mt_finalize("bundle");
}
