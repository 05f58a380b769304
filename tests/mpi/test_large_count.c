/* MPI-4's large-count window calls (MPI_Win_create_c, MPI_Win_allocate_c,
 * MPI_Win_allocate_shared_c) make XRDMA windows as their MPI-3 forms do:
 * an Xget and an Xput on each, at displacements their MPI_Aint disp_unit
 * scales. A disp_unit beyond an int (in the last rank only) leaves a working
 * MPI window without X-operations, saying why: at the call in that rank,
 * at the flush in the rank that targets it. Under an MPI-3 library (Open
 * MPI 4.1) there is nothing to test: exit 77. argv[last]: mpi_ops.xfn (sum,
 * accumulate). */
#include <limits.h>
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

#if MPI_VERSION >= 4
static int size;
static MPIX_Ifunc sum, accumulate;

/* A window of 4 int64 {10r, 10r+1, 10r+2, 10r+3} (r: this rank) made by the
 * large-count call @p kind, with a disp_unit of 8 bytes. */
static int64_t *make(const char *kind, MPI_Win *win)
{
    int64_t *mem = NULL;
    int rc = MPI_ERR_OTHER;
    if (!strcmp(kind, "create")) {
        mem = malloc(4 * 8);
        rc = MPI_Win_create_c(mem, 4 * 8, (MPI_Aint)8, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    } else if (!strcmp(kind, "allocate")) {
        rc = MPI_Win_allocate_c(4 * 8, (MPI_Aint)8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, win);
    } else {
        rc = MPI_Win_allocate_shared_c(4 * 8, (MPI_Aint)8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, win);
    }
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Win_%s_c: %d", kind, kind, rc);
    for (int i = 0; i < 4; ++i) mem[i] = 10 * mt_rank + i;
    return mem;
}

/* Xget the sum of the next rank's elements 1 and 2 (displacement 1), Xput
 * {100, 200} added to its elements 2 and 3 (displacement 2). */
static void xops(const char *kind)
{
    mt_section(kind);
    MPI_Win win;
    int64_t *mem = make(kind, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    const int t = (mt_rank + 1) % size;
    int64_t s = -1, add[2] = {100, 200};
    MPI_Win_lock_all(0, win);
    CHECK(MPIX_Xget(&s, 1, MPI_INT64_T, t, 1, 2, MPI_INT64_T, sum, NULL, 0, win) == MPI_SUCCESS, "%s: xget", kind);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "%s: flush after xget", kind);
    CHECK(s == 20 * t + 3, "%s: xget sum %lld, want %lld", kind, (long long)s, (long long)(20 * t + 3));
    CHECK(MPIX_Xput(add, 2, MPI_INT64_T, t, 2, 2, MPI_INT64_T, accumulate, NULL, 0, win) == MPI_SUCCESS,
          "%s: xput", kind);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "%s: flush after xput", kind);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    const int64_t want[4] = {10 * mt_rank, 10 * mt_rank + 1, 10 * mt_rank + 102, 10 * mt_rank + 203};
    for (int i = 0; i < 4; ++i)
        CHECK(mem[i] == want[i], "%s: element %d is %lld, want %lld", kind, i, (long long)mem[i],
              (long long)want[i]);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "%s: free", kind);
    if (!strcmp(kind, "create")) free(mem);
}

/* The last rank's disp_unit does not fit an int. */
static void huge_unit(void)
{
    mt_section("a disp_unit beyond an int in the last rank");
    const int last = size - 1, t = (mt_rank + 1) % size;
    const MPI_Aint unit = mt_rank == last ? (MPI_Aint)INT_MAX + 1 : 8;
    MPI_Win win;
    int64_t *mem = NULL;
    CHECK(MPI_Win_allocate_c(2 * 8, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) == MPI_SUCCESS, "allocate");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    mem[0] = mt_rank + 1;
    mem[1] = 10 * (mt_rank + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t got = -1, s = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(MPI_Get(&got, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win) == MPI_SUCCESS, "get");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && got == t + 1, "plain get %lld", (long long)got);
    int rc = MPIX_Xget(&s, 1, MPI_INT64_T, t, 0, 2, MPI_INT64_T, sum, NULL, 0, win);
    if (mt_rank == last) {
        CHECK(mt_error_is(rc, MPI_ERR_WIN, "disp_unit 2147483648 in rank") &&
                  mt_error_is(rc, MPI_ERR_WIN, "larger than XRDMA takes"),
              "the xget reports the disp_unit here");
    } else if (t == last) {
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(t, win);
        CHECK(mt_error_is(rc, MPIX_ERR_PEER, "disp_unit 2147483648 in rank"),
              "an xget to the last rank reports its disp_unit");
    } else {
        CHECK(rc == MPI_SUCCESS, "xget: %d", rc);
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && s == 11 * (t + 1), "xget sum %lld", (long long)s);
    }
    CHECK(MPI_Win_unlock(t, win) == MPI_SUCCESS, "unlock");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS, "free");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "sum", &sum) == MPI_SUCCESS, "load sum");
    CHECK(MPIX_Ifunc_load(argv[argc - 1], "accumulate", &accumulate) == MPI_SUCCESS, "load accumulate");
    xops("create");
    xops("allocate");
    xops("shared");
    huge_unit();
    MPIX_Ifunc_free(&sum);
    MPIX_Ifunc_free(&accumulate);
    int r = mt_finish("large-count window calls");
    MPI_Finalize();
    return r;
}
#else
int main(void)
{
    printf("SKIP: MPI %d.%d has no large-count window calls (MPI-4)\n", MPI_VERSION, MPI_SUBVERSION);
    return 77;
}
#endif
