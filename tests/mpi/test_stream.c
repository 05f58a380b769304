/* Streaming X-operations (XRDMA_STREAM) on one kind of window
 * (argv[1]: create, allocate, shared or dynamic), with the images of
 * tests/mpi/ifuncs/stream.c (argv[2]) and stream_crash.c (argv[3]).
 * run-mpitest sets XRDMA_STREAM_CHUNK=4096: the data below spans several
 * chunks, so an Xput to another process is fetched by the target chunk by
 * chunk, and one run at the origin (node-local) is cut the same way.
 *   - accumulate: each rank adds N doubles into the next rank's window with
 *     st_add: contiguous data, a strided origin datatype (packed at the
 *     origin), a strided target datatype (pieces end at its blocks); and a
 *     function that reads the (streamed) data whole instead;
 *   - every rank but 0 adds into the same region of rank 0 at once: each
 *     message is applied whole, none is lost;
 *   - a handler's non-zero return ends the operation with
 *     MPIX_ERR_IFUNC_RETURN (header, payload, completion), and the next
 *     operation works;
 *   - MPIX_Xinvoke and MPIX_Xget of a streaming function: the Xget's
 *     region streams through the payload handler, and the Xget returns the
 *     region as MPI_Get would; one whose handler replies piece by piece
 *     (xrdma_stream_reply) returns what it chose;
 *   - a payload handler that faults ends the operation with
 *     MPIX_ERR_IFUNC_FAULT; the target lives on and streams again. */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

#define N 3001 /* doubles: 24008 bytes, about 6 chunks of 4096 */
#define ACC 0                       /* region of the accumulate tests (doubles) */
#define SHARED_AT (2 * N)           /* region every rank adds into at rank 0 */
#define COUNT_AT (3 * N)            /* st_count's two int64 */
#define WIN_DOUBLES (3 * N + 8)

static int rank, size, dynamic;
static double *base;
static MPI_Win win;
static MPI_Aint *addr;
static MPIX_Ifunc f_add, f_count, f_above, f_whole, f_crash;
static uint64_t chunk;

static MPI_Aint disp(int r, MPI_Aint d) { return dynamic ? addr[r] + d * (MPI_Aint)sizeof(double) : d; }

/* Every rank's window back to 1000 + i. The barrier first: Open MPI's osc
 * ucx waits for an exclusive lock without the progress engine, so a rank
 * must not wait for one while a neighbour holds a shared lock on it and
 * waits (in MPI_Win_unlock) for an X-op this rank has yet to serve. */
static void reset(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < WIN_DOUBLES; ++i) base[i] = 1000.0 + i;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* st_add of @p count elements of @p otype from @p data into @p tcount
 * @p ttype at the next rank's ACC region; the error the unlock reports. */
static int add_to(int target, const void *data, int count, MPI_Datatype otype, MPI_Aint at, int tcount,
                  MPI_Datatype ttype, const uint64_t args[4])
{
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    int err = MPIX_Xput(data, count, otype, target, disp(target, at), tcount, ttype, f_add, args,
                        4 * sizeof(uint64_t), win);
    int err2 = MPI_Win_unlock(target, win);
    return err != MPI_SUCCESS ? err : err2;
}

static void test_accumulate(void)
{
    mt_section("accumulate");
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *data = malloc(sizeof(double) * 2 * N);
    for (int i = 0; i < 2 * N; ++i) data[i] = (double)(rank * 10000 + i);
    const uint64_t args[4] = {chunk, 0, 0, 0};

    /* Contiguous. */
    reset();
    int err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, args);
    CHECK(err == MPI_SUCCESS, "st_add of %d doubles: error %d", N, err);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += base[ACC + i] != 1000.0 + (ACC + i) + (double)(prev * 10000 + i);
    CHECK(bad == 0, "contiguous st_add: %d of %d doubles wrong", bad, N);

    /* Strided origin: every other double of data (packed at the origin). */
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    reset();
    err = add_to(next, data, 1, every_other, ACC, N, MPI_DOUBLE, args);
    CHECK(err == MPI_SUCCESS, "st_add, strided origin: error %d", err);
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < N; ++i) bad += base[ACC + i] != 1000.0 + (ACC + i) + (double)(prev * 10000 + 2 * i);
    CHECK(bad == 0, "strided-origin st_add: %d of %d doubles wrong", bad, N);

    /* Strided target: into every other double of the 2N from ACC. */
    reset();
    err = add_to(next, data, N, MPI_DOUBLE, ACC, 1, every_other, args);
    CHECK(err == MPI_SUCCESS, "st_add, strided target: error %d", err);
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < 2 * N; ++i) {
        double want = 1000.0 + (ACC + i) + (i % 2 ? 0.0 : (double)(prev * 10000 + i / 2));
        bad += base[ACC + i] != want;
    }
    CHECK(bad == 0, "strided-target st_add: %d of %d doubles wrong", bad, 2 * N);
    MPI_Type_free(&every_other);

    /* A function that reads the streamed data whole (xrdma_incoming). */
    reset();
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    err = MPIX_Xput(data, N, MPI_DOUBLE, next, disp(next, ACC), N, MPI_DOUBLE, f_whole, NULL, 0, win);
    int err2 = MPI_Win_unlock(next, win);
    CHECK(err == MPI_SUCCESS && err2 == MPI_SUCCESS, "st_whole: error %d, %d", err, err2);
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < N; ++i) bad += base[ACC + i] != 1000.0 + (ACC + i) + (double)(prev * 10000 + i);
    CHECK(bad == 0, "st_whole: %d of %d doubles wrong", bad, N);
    free(data);
}

static void test_concurrent(void)
{
    mt_section("concurrent streams into one region");
    reset();
    double *data = malloc(sizeof(double) * N);
    for (int i = 0; i < N; ++i) data[i] = (double)(rank * 100 + i % 7);
    const uint64_t args[4] = {chunk, 0, 0, 0};
    for (int round = 0; round < 3 && rank != 0; ++round) {
        int err = add_to(0, data, N, MPI_DOUBLE, SHARED_AT, N, MPI_DOUBLE, args);
        CHECK(err == MPI_SUCCESS, "st_add into rank 0, round %d: error %d", round, err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int bad = 0;
        for (int i = 0; i < N; ++i) {
            double want = 1000.0 + (SHARED_AT + i);
            for (int r = 1; r < size; ++r) want += 3.0 * (r * 100 + i % 7);
            bad += base[SHARED_AT + i] != want;
        }
        CHECK(bad == 0, "%d concurrent streams: %d of %d doubles wrong", 3 * (size - 1), bad, N);
    }
    free(data);
}

static void test_errors(void)
{
    mt_section("handler errors");
    const int next = (rank + 1) % size;
    double *data = calloc(N, sizeof(double));
    const uint64_t fail_header[4] = {chunk, 7, 0, 0};
    const uint64_t fail_payload[4] = {chunk, 0, (uint64_t)(N * sizeof(double)) - 8, 0};
    const uint64_t fail_completion[4] = {chunk, 0, 0, 9};
    const uint64_t ok[4] = {chunk, 0, 0, 0};
    int err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, fail_header);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 7"), "header failure");
    err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, fail_payload);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 100"), "payload failure in the last chunk");
    err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, fail_completion);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 9"), "completion failure");
    err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, ok);
    CHECK(err == MPI_SUCCESS, "st_add after the failures: error %d", err);
    MPI_Barrier(MPI_COMM_WORLD);
    free(data);
}

static void test_no_incoming(void)
{
    mt_section("Xinvoke and Xget of a streaming function");
    reset();
    const int next = (rank + 1) % size;
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    /* Xinvoke has no target region: the completion finds none (96). */
    int err = MPIX_Xinvoke(f_count, NULL, 0, next, win);
    int err2 = MPI_Win_unlock(next, win);
    CHECK(mt_error_is(err != MPI_SUCCESS ? err : err2, MPIX_ERR_IFUNC_RETURN, "returned 96"),
          "MPIX_Xinvoke(st_count) runs the completion");
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    int64_t got[2] = {-1, -1};
    err = MPIX_Xget(got, 2, MPI_INT64_T, next, disp(next, COUNT_AT), 2, MPI_INT64_T, f_count, NULL, 0, win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xget(st_count): error %d", err);
    err = MPI_Win_unlock(next, win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xget(st_count) completes: error %d", err);
    CHECK(got[0] == 1 && got[1] == 1, "st_count via Xget: %lld pieces, ran %lld (want 1, 1)", (long long)got[0],
          (long long)got[1]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A reply made piece by piece: the doubles above a threshold, of the
     * region's ~6 chunks. */
    reset();
    const double threshold = 1000.0 + ACC + N / 2;
    double *above = malloc(sizeof(double) * N);
    MPI_Request req;
    MPI_Status st;
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    err = MPIX_Rxget(above, N, MPI_DOUBLE, next, disp(next, ACC), N, MPI_DOUBLE, f_above, &threshold,
                     sizeof(threshold), win, &req);
    CHECK(err == MPI_SUCCESS, "MPIX_Rxget(st_above): error %d", err);
    err = MPI_Wait(&req, &st);
    CHECK(err == MPI_SUCCESS, "MPIX_Rxget(st_above) completes: error %d", err);
    MPI_Win_unlock(next, win);
    int got_n = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &got_n);
    int want_n = 0, bad = 0;
    for (int i = 0; i < N; ++i) {
        if (1000.0 + ACC + i <= threshold) continue;
        if (want_n < got_n && above[want_n] != 1000.0 + ACC + i) ++bad;
        ++want_n;
    }
    CHECK(got_n == want_n && bad == 0, "st_above: %d doubles (want %d), %d wrong", got_n, want_n, bad);

    /* A large Xget with no reply of its own: the region (written into the
     * origin buffer chunk by chunk when it goes to another process), after
     * st_count's completion wrote its two counts at the region's start. */
    reset();
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    err = MPIX_Rxget(above, N, MPI_DOUBLE, next, disp(next, ACC), N, MPI_DOUBLE, f_count, NULL, 0, win, &req);
    CHECK(err == MPI_SUCCESS, "MPIX_Rxget(st_count) of %d doubles: error %d", N, err);
    err = MPI_Wait(&req, &st);
    CHECK(err == MPI_SUCCESS, "MPIX_Rxget(st_count) of %d doubles completes: error %d", N, err);
    MPI_Win_unlock(next, win);
    MPI_Get_count(&st, MPI_DOUBLE, &got_n);
    int64_t counts[2];
    memcpy(counts, above, sizeof(counts));
    bad = 0;
    for (int i = 2; i < N; ++i) bad += above[i] != 1000.0 + ACC + i;
    CHECK(got_n == N && bad == 0 && counts[0] > 1 && counts[1] == 1,
          "st_count's region: %d doubles (want %d), %d wrong, counts %lld %lld", got_n, N, bad, (long long)counts[0],
          (long long)counts[1]);
    free(above);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_crash(void)
{
    mt_section("a payload handler that faults");
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *data = malloc(sizeof(double) * N);
    for (int i = 0; i < N; ++i) data[i] = 1.0;
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    int err = MPIX_Xput(data, N, MPI_DOUBLE, next, disp(next, ACC), N, MPI_DOUBLE, f_crash, NULL, 0, win);
    int err2 = MPI_Win_unlock(next, win);
    CHECK(mt_error_is(err != MPI_SUCCESS ? err : err2, MPIX_ERR_IFUNC_FAULT, "st_crash"), "st_crash faults");
    reset();
    const uint64_t ok[4] = {chunk, 0, 0, 0};
    err = add_to(next, data, N, MPI_DOUBLE, ACC, N, MPI_DOUBLE, ok);
    CHECK(err == MPI_SUCCESS, "st_add after the fault: error %d", err);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += base[ACC + i] != 1000.0 + (ACC + i) + 1.0;
    CHECK(bad == 0, "st_add after the fault (from rank %d): %d doubles wrong", prev, bad);
    free(data);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, &rank, &size);
    mt_require(argc == 4, "usage: test_stream create|allocate|shared|dynamic stream.xfn stream_crash.xfn");
    const char *c = getenv("XRDMA_STREAM_CHUNK");
    chunk = c ? strtoull(c, NULL, 10) : 1048576;
    const char *kind = argv[1];
    const MPI_Aint bytes = WIN_DOUBLES * (MPI_Aint)sizeof(double);
    dynamic = mt_window(kind, bytes, sizeof(double), &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    addr = mt_addresses(base);
    CHECK(MPIX_Ifunc_load(argv[2], "st_add", &f_add) == MPI_SUCCESS, "load st_add");
    CHECK(MPIX_Ifunc_load(argv[2], "st_count", &f_count) == MPI_SUCCESS, "load st_count");
    CHECK(MPIX_Ifunc_load(argv[2], "st_above", &f_above) == MPI_SUCCESS, "load st_above");
    CHECK(MPIX_Ifunc_load(argv[2], "st_whole", &f_whole) == MPI_SUCCESS, "load st_whole");
    CHECK(MPIX_Ifunc_load(argv[3], NULL, &f_crash) == MPI_SUCCESS, "load st_crash (the image's only entry)");

    test_accumulate();
    test_concurrent();
    test_errors();
    test_no_incoming();
    test_crash();

    MPIX_Ifunc_free(&f_add);
    MPIX_Ifunc_free(&f_count);
    MPIX_Ifunc_free(&f_above);
    MPIX_Ifunc_free(&f_whole);
    MPIX_Ifunc_free(&f_crash);
    mt_window_free(kind, base, &win);
    free(addr);
    return mt_finalize("streaming X-operations");
}
