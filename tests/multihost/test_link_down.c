/* A link that goes down while X-ops are pending on it. 3 ranks on 3 hosts
 * (network namespaces, see run-multihost); the script takes rank 2's data
 * link down. Rank 0 and 1 must see every X-op to rank 2 end with
 * MPIX_ERR_PEER within XRDMA_LINKDOWN_LIMIT seconds, keep working with each
 * other meanwhile and after, and finish; rank 2, cut off, must see its X-ops
 * to both others end the same way.
 *
 * argv[1]: mpi_ops.xfn. XRDMA_LINKDOWN_DIR: a directory shared with the
 * script: rank 0 creates "cut" once X-ops to rank 2 are pending; the script
 * then takes the link down and writes the time it did so (seconds since the
 * epoch) to "down"; times below are counted from it.
 *
 * Rank 2 makes no MPI call from the moment it told the others until the link
 * is down, so what rank 0 and 1 sent it is still unanswered when the link
 * goes. Each rank prints a result line; rank 0 adds rank 1's counts to its
 * own for the survivors' verdict. MPI_Finalize would wait for the cut-off
 * rank: _exit. */
#include <mpix_xrdma.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "../mpi/mpitest.h"

static char dir[4096];
static double limit = 60;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* When the script took the link down (0: not yet). */
static double down_time(void)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/down", dir);
    FILE *f = fopen(path, "r");
    double t = 0;
    if (!f) return 0;
    if (fscanf(f, "%lf", &t) != 1) t = 0;
    fclose(f);
    return t;
}

/* Complete @p r by the deadline: its error, or -1 if it is still pending
 * (then left behind). Spins a little, then naps 0.1 ms between tests: the
 * ranks share 2 cores with everything else. */
static int finish(MPI_Request *r, double deadline)
{
    int flag = 0, err = MPI_SUCCESS;
    for (long i = 0; !flag; ++i) {
        err = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        if (flag) break;
        if (now() > deadline) return -1;
        if (i > 1000) nap(100);
    }
    return err;
}

static void report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static long sum_of(int rank) { return 800L * rank + 28; } /* words 100*rank+i, i<8 */

/* An Xget of the sum at @p peer that must succeed. */
static void get_ok(MPIX_Ifunc sum, int peer, MPI_Win win, const char *when)
{
    MPI_Request r;
    int64_t s = -1;
    MPIX_Rxget(&s, 1, MPI_INT64_T, peer, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &r);
    int err = finish(&r, now() + limit);
    CHECK(err == MPI_SUCCESS && s == sum_of(peer), "%s: Xget from rank %d: err %d, sum %ld", when, peer, err,
          (long)s);
}

/* An X-op on @p peer that must end with MPIX_ERR_PEER naming the rank:
 * when it ended, or 0 if it did not. */
static double expect_peer_error(MPI_Request *r, int peer, const char *what)
{
    int err = finish(r, now() + limit);
    double t = now();
    if (err == -1) {
        CHECK(0, "%s on rank %d still pending after %.0f s", what, peer, limit);
        return 0;
    }
    char needle[32];
    snprintf(needle, sizeof(needle), "rank %d", peer);
    CHECK(mt_error_is(err, MPIX_ERR_PEER, needle), "%s on rank %d", what, peer);
    return t;
}

static double since(double t, double down) { return t && down ? t - down : -1; }

int main(int argc, char **argv)
{
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    const char *d = getenv("XRDMA_LINKDOWN_DIR");
    mt_require(size == 3 && argc == 2 && d, "needs 3 ranks, mpi_ops.xfn and XRDMA_LINKDOWN_DIR");
    snprintf(dir, sizeof(dir), "%s", d);
    if (getenv("XRDMA_LINKDOWN_LIMIT")) limit = atof(getenv("XRDMA_LINKDOWN_LIMIT"));
    char host[64] = "?";
    gethostname(host, sizeof(host) - 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < 8; ++i) base[i] = 100 * rank + i;
    MPIX_Ifunc sum, bump, accumulate;
    MPIX_Ifunc_load(argv[1], "sum", &sum);
    MPIX_Ifunc_load(argv[1], "bump", &bump);
    MPIX_Ifunc_load(argv[1], "accumulate", &accumulate);
    MPI_Barrier(MPI_COMM_WORLD);

    /* All links up: everyone reaches everyone. */
    for (int p = 0; p < size; ++p) get_ok(sum, p, win, "links up");
    MPI_Barrier(MPI_COMM_WORLD);

    int quiet = 1;
    if (rank == 2) {
        /* From here on this rank serves nothing until the link is down. */
        MPI_Send(&quiet, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Send(&quiet, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        double deadline = now() + 60, down;
        while ((down = down_time()) == 0 && now() < deadline) nap(5000);
        CHECK(down > 0, "the link never went down");
        MPIX_Xprogress(); /* runs what arrived; the replies cannot leave */
        MPI_Request r0, r1;
        int64_t s0, s1;
        MPIX_Rxget(&s0, 1, MPI_INT64_T, 0, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &r0);
        MPIX_Rxget(&s1, 1, MPI_INT64_T, 1, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &r1);
        double t0 = expect_peer_error(&r0, 0, "Xget");
        double t1 = expect_peer_error(&r1, 1, "Xget");
        report("link down: rank 2 (%s, cut off): its Xget on rank 0 ended with MPIX_ERR_PEER after %.2f s, on "
               "rank 1 after %.2f s; %d checks, %d failed",
               host, since(t0, down), since(t1, down), mt_checks, mt_failures);
        _exit(mt_failures ? 1 : 0);
    }

    /* Rank 0 and 1: an Xget, an Xinvoke and an Xput to rank 2, left pending
     * (it does not serve); then rank 0 has the link cut. */
    int other = 1 - rank;
    MPI_Recv(&quiet, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request get2, inv2, put2;
    int64_t s2 = -1, one = 1, add[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPIX_Rxget(&s2, 1, MPI_INT64_T, 2, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &get2);
    MPIX_Rxinvoke(bump, &one, 8, 2, win, &inv2);
    MPIX_Rxput(add, 8, MPI_INT64_T, 2, 0, 8, MPI_INT64_T, accumulate, NULL, 0, win, &put2);
    int ready = 1;
    if (rank == 1) MPI_Send(&ready, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Recv(&ready, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char path[4200];
        snprintf(path, sizeof(path), "%s/cut", dir);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL, "cannot create %s", path);
        if (f) fclose(f);
    }
    /* While the link goes and until the loss is known, the other survivor
     * keeps answering. */
    int flag = 0, err = MPI_SUCCESS, served = 0;
    double deadline = now() + limit;
    while (!flag && now() < deadline) {
        int before = mt_failures;
        get_ok(sum, other, win, "while rank 2 is being lost");
        if (mt_failures != before) break;
        ++served;
        err = MPI_Test(&get2, &flag, MPI_STATUS_IGNORE);
    }
    double t_get = now();
    if (!flag) {
        CHECK(0, "Xget on rank 2 still pending after %.0f s", limit);
        t_get = 0;
    } else {
        CHECK(mt_error_is(err, MPIX_ERR_PEER, "rank 2"), "pending Xget on rank 2");
    }
    double t_inv = expect_peer_error(&inv2, 2, "pending Xinvoke");
    double t_put = expect_peer_error(&put2, 2, "pending Xput");
    double down = down_time();
    CHECK(down > 0, "no time in %s/down", dir);
    /* Later X-ops to rank 2 fail at once; rank 0 <-> 1 still work. */
    MPI_Request r;
    double t = now();
    MPIX_Rxget(&s2, 1, MPI_INT64_T, 2, 0, 8, MPI_INT64_T, sum, NULL, 0, win, &r);
    expect_peer_error(&r, 2, "a later Xget");
    double later = now() - t;
    CHECK(later < 1, "a later Xget on rank 2 took %.2f s to fail", later);
    for (int i = 0; i < 100 && !mt_failures; ++i) get_ok(sum, other, win, "after rank 2 was lost");
    MPIX_Rxinvoke(bump, &one, 8, other, win, &r);
    CHECK(finish(&r, now() + limit) == MPI_SUCCESS, "Xinvoke on rank %d after rank 2 was lost", other);

    report("link down: rank %d (%s): pending X-ops on rank 2 ended with MPIX_ERR_PEER after %.2f s (Xget), %.2f s "
           "(Xinvoke), %.2f s (Xput), a later Xget after %.3f s; %d Xgets to rank %d meanwhile; %d checks, %d "
           "failed",
           rank, host, since(t_get, down), since(t_inv, down), since(t_put, down), later, served, other,
           mt_checks, mt_failures);
    /* The survivors finish together (each serves the other until both are
     * done); rank 0 gives the verdict. */
    int counts[2] = {mt_checks, mt_failures};
    if (rank == 1) {
        MPI_Send(counts, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(counts, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        int theirs[2];
        MPI_Recv(theirs, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        counts[0] += theirs[0];
        counts[1] += theirs[1];
        report("link down: survivors: %d checks, %d failed", counts[0], counts[1]);
        MPI_Send(counts, 2, MPI_INT, 1, 1, MPI_COMM_WORLD);
    }
    _exit(counts[1] ? 1 : 0);
}
