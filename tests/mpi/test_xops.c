/* MPIX_Xput / MPIX_Xget / MPIX_Xinvoke on one kind of window (argv[1]:
 * create, allocate, shared, dynamic), on every rank. The images (argv[2..6])
 * are read by rank 0 only; every rank loads them from memory rank 0
 * broadcast, and targets get the code only through XRDMA. */
#include <mpix_xrdma.h>
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

#define WORDS 1024

static int rank, size;
static int64_t *base;          /* this rank's window memory */
static MPI_Aint *addr;         /* dynamic windows: every rank's base address */
static int dynamic;
static MPI_Win win;
static MPIX_Ifunc f_acc, f_max, f_sum, f_filter, f_double, f_bump, f_log, f_tour, f_fail, f_noop, f_outputs,
    f_unresolved, f_segv, f_spin, f_forbidden, f_libc_fault;

/* target_disp of word @p w at rank @p r */
static MPI_Aint disp(int r, int w) { return dynamic ? addr[r] + (MPI_Aint)w * 8 : w; }
static int64_t init_value(int r, int w) { return (int64_t)r * 100000 + w; }

static void reset_window(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < WORDS; ++i) base[i] = init_value(rank, i);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Images: rank 0 reads the files, every rank loads the bytes from memory
 * (the other ranks never open a file of the code). */
static void load_image(const char *path, int n, MPIX_Ifunc **f, const char **names)
{
    char *img = NULL;
    long len = 0;
    if (rank == 0) {
        FILE *fp = fopen(path, "rb");
        if (!fp) { perror(path); MPI_Abort(MPI_COMM_WORLD, 2); }
        fseek(fp, 0, SEEK_END);
        len = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        img = malloc((size_t)len);
        if (fread(img, 1, (size_t)len, fp) != (size_t)len) MPI_Abort(MPI_COMM_WORLD, 2);
        fclose(fp);
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0) img = malloc((size_t)len);
    MPI_Bcast(img, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
        CHECK(MPIX_Ifunc_load_mem(img, (size_t)len, names[i], f[i]) == MPI_SUCCESS, "load %s", names[i] ? names[i] : path);
    free(img);
}

static const char *ops_image_path; /* the first image, for origin-side checks */

static void load_all(char **paths)
{
    ops_image_path = paths[0];
    MPIX_Ifunc *ops[] = {&f_acc, &f_max, &f_sum, &f_filter, &f_double, &f_bump, &f_log, &f_tour, &f_fail, &f_noop,
                         &f_outputs};
    const char *names[] = {"accumulate", "store_max", "sum", "filter_gt", "double_then_get", "bump",
                           "log_seq", "tour", "fail_with", "noop", "size_outputs"};
    load_image(paths[0], 11, ops, names);
    MPIX_Ifunc *one[1];
    const char *none[1] = {NULL}, *segv[1] = {"crash_segv"};
    one[0] = &f_unresolved;
    load_image(paths[1], 1, one, none);
    one[0] = &f_segv;
    load_image(paths[2], 1, one, segv);
    one[0] = &f_spin;
    load_image(paths[3], 1, one, none);
    one[0] = &f_forbidden;
    load_image(paths[4], 1, one, none);
    const char *copy_from[1] = {"copy_from"};
    one[0] = &f_libc_fault;
    load_image(paths[5], 1, one, copy_from);
}

static void test_xget_sum(void)
{
    mt_section("Xget: ifunc reply from every rank");
    reset_window();
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; ++t) {
        int64_t s = -1, want = 0;
        for (int w = 10; w < 20; ++w) want += init_value(t, w);
        CHECK(MPIX_Xget(&s, 1, MPI_INT64_T, t, disp(t, 10), 10, MPI_INT64_T, f_sum, NULL, 0, win) == MPI_SUCCESS, "xget");
        MPI_Win_flush(t, win);
        CHECK(s == want, "sum at rank %d: %ld, want %ld", t, (long)s, (long)want);
    }
    MPI_Win_unlock_all(win);
}

static void test_accessor_outputs(void)
{
    mt_section("Accessors: sizes stored through every kind of pointer, NULL for an unmapped one");
    reset_window();
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size; ++t) {
        int64_t got[6] = {0, 0, 0, 0, 0, 0};
        CHECK(MPIX_Xget(got, 6, MPI_INT64_T, t, disp(t, 4), 3, MPI_INT64_T, f_outputs, NULL, 0, win) == MPI_SUCCESS,
              "xget");
        CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush");
        CHECK(got[0] == WORDS * 8, "rank %d: window bytes %ld, want %d", t, (long)got[0], WORDS * 8);
        CHECK(got[1] == 24 && got[2] == 24, "rank %d: region bytes through an unaligned local %ld, window memory %ld",
              t, (long)got[1], (long)got[2]);
        CHECK(got[3] == 1 && got[4] == 1 && got[5] == 1, "rank %d: NULL size %ld, unmapped size %ld %ld", t,
              (long)got[3], (long)got[4], (long)got[5]);
    }
    MPI_Win_unlock_all(win);
}

static void test_xput_accumulate_atomic(void)
{
    mt_section("Xput: user-defined accumulate, all ranks into one word, exact total");
    reset_window();
    const int n = 100;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < n; ++i) {
        int64_t one[2] = {1, rank};
        CHECK(MPIX_Xput(one, 2, MPI_INT64_T, 0, disp(0, 5), 2, MPI_INT64_T, f_acc, NULL, 0, win) == MPI_SUCCESS, "xput");
    }
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t want6 = init_value(0, 6) + (int64_t)n * (size * (size - 1) / 2);
        CHECK(base[5] == init_value(0, 5) + (int64_t)n * size, "word 5 = %ld, want %ld", (long)base[5],
              (long)(init_value(0, 5) + (int64_t)n * size));
        CHECK(base[6] == want6, "word 6 = %ld, want %ld", (long)base[6], (long)want6);
    }
    /* And a max-accumulate, which MPI_Accumulate with MPI_MAX does on int64
     * too, but through code: every rank offers rank*7 into word 7 of rank 1%size. */
    reset_window();
    int t = 1 % size;
    MPI_Win_lock_all(0, win);
    int64_t offer = init_value(t, 7) + rank * 7;
    MPIX_Xput(&offer, 1, MPI_INT64_T, t, disp(t, 7), 1, MPI_INT64_T, f_max, NULL, 0, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) CHECK(base[7] == init_value(t, 7) + (size - 1) * 7, "max = %ld", (long)base[7]);
}

static void test_ordering(void)
{
    mt_section("ordering: X-ops from one origin to one target run in issue order");
    reset_window();
    const int k = 50;
    if (rank == 0) { base[1] = 0; }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < k; ++i) {
        int64_t seq = (int64_t)rank * 1000000 + i;
        MPIX_Xinvoke(f_log, &seq, 8, 0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(base[1] == (int64_t)k * size, "log has %ld entries, want %d", (long)base[1], k * size);
        int64_t last[64];
        for (int r = 0; r < size && r < 64; ++r) last[r] = -1;
        for (int64_t i = 0; i < base[1] && 2 + i < WORDS; ++i) {
            int r = (int)(base[2 + i] / 1000000), s = (int)(base[2 + i] % 1000000);
            CHECK(r >= 0 && r < size && s == last[r] + 1, "entry %ld: origin %d seq %d after %ld", (long)i, r, s,
                  (long)last[r]);
            if (r >= 0 && r < size) last[r] = s;
        }
    }
}

static void test_forwarding(void)
{
    mt_section("forwarding: a tour through every rank answers the origin");
    reset_window();
    MPI_Win_lock_all(0, win);
    struct { int32_t next, left; int64_t total; } t = {0, size, 0};
    int64_t total = -1, want = 0;
    for (int r = 0; r < size; ++r) want += init_value(r, 0);
    int start = (rank + 1) % size;
    CHECK(MPIX_Xget(&total, 1, MPI_INT64_T, start, disp(start, 0), 0, MPI_INT64_T, f_tour, &t, sizeof(t), win) == MPI_SUCCESS, "tour");
    MPI_Win_flush(start, win);
    CHECK(total == want, "tour total %ld, want %ld", (long)total, (long)want);
    MPI_Win_unlock_all(win);
}

static void test_filter_and_default_reply(void)
{
    mt_section("Xget: remote filter, and the target region when the ifunc does not reply");
    reset_window();
    int t = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    int64_t out[64], lim = init_value(t, 100) + 9;  /* words 110..119 match */
    for (int i = 0; i < 64; ++i) out[i] = -7;
    MPIX_Xget(out, 64, MPI_INT64_T, t, disp(t, 100), 20, MPI_INT64_T, f_filter, &lim, 8, win);
    MPI_Win_flush(t, win);
    for (int i = 0; i < 10; ++i) CHECK(out[i] == init_value(t, 110 + i), "filtered[%d] = %ld", i, (long)out[i]);
    CHECK(out[10] == -7, "the origin buffer past the reply is untouched");
    /* An empty target region (target count 0) that the ifunc does not
     * answer: the Xget completes, with nothing to copy back. */
    int64_t none = -7;
    CHECK(MPIX_Xget(&none, 1, MPI_INT64_T, t, disp(t, 100), 0, MPI_INT64_T, f_noop, NULL, 0, win) == MPI_SUCCESS,
          "xget of an empty region");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "flush of an unanswered xget of an empty region");
    CHECK(none == -7, "empty region: the origin buffer is untouched (%ld)", (long)none);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* double_then_get: changes the target and returns the region. */
    MPI_Win_lock_all(0, win);
    int64_t got[4] = {0};
    MPIX_Xget(got, 4, MPI_INT64_T, t, disp(t, 200 + rank * 4), 4, MPI_INT64_T, f_double, NULL, 0, win);
    MPI_Win_flush_all(win);
    for (int i = 0; i < 4; ++i) CHECK(got[i] == 2 * init_value(t, 200 + rank * 4 + i), "doubled[%d]", i);
    MPI_Win_unlock_all(win);
}

static void test_null_ifunc_and_datatypes(void)
{
    mt_section("MPIX_IFUNC_NULL is MPI_Put/MPI_Get; vector target datatypes");
    reset_window();
    int t = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    int64_t v[3] = {rank + 11, rank + 12, rank + 13}, back[3] = {0};
    MPIX_Xput(v, 3, MPI_INT64_T, t, disp(t, 300 + 3 * rank), 3, MPI_INT64_T, MPIX_IFUNC_NULL, NULL, 0, win);
    MPI_Win_flush(t, win);
    MPIX_Xget(back, 3, MPI_INT64_T, t, disp(t, 300 + 3 * rank), 3, MPI_INT64_T, MPIX_IFUNC_NULL, NULL, 0, win);
    MPI_Win_flush(t, win);
    CHECK(back[0] == v[0] && back[2] == v[2], "null ifunc put/get round trip");
    /* Every 4th word of 8 words, by an ifunc without reply (region comes back). */
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 4, MPI_INT64_T, &vec);
    MPI_Type_commit(&vec);
    int64_t strided[8] = {0};
    MPIX_Xget(strided, 8, MPI_INT64_T, t, disp(t, 400), 1, vec, f_noop, NULL, 0, win);
    MPI_Win_flush(t, win);
    for (int i = 0; i < 8; ++i) CHECK(strided[i] == init_value(t, 400 + 4 * i), "strided[%d] = %ld", i, (long)strided[i]);
    MPI_Type_free(&vec);
    MPI_Win_unlock_all(win);
}

/* Issue an accumulate of 1 into word 9 of @p t. */
/* X-ops in a row to one target: past the 8 after which the MPI layer lets
 * their acknowledgements wait until a synchronisation call asks (lazy). */
#define STREAM 40
static void bump9(int t)
{
    int64_t one = 1;
    for (int i = 0; i < STREAM; ++i)
        MPIX_Xput(&one, 1, MPI_INT64_T, t, disp(t, 9), 1, MPI_INT64_T, f_acc, NULL, 0, win);
}
static int64_t read9(int t)
{
    int64_t v = -1;
    MPI_Get(&v, 1, MPI_INT64_T, t, disp(t, 9), 1, MPI_INT64_T, win);
    MPI_Win_flush(t, win);
    return v;
}

static void test_sync_calls_complete(void)
{
    mt_section("every synchronisation call completes X-ops");
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    const char *names[] = {"flush", "flush_all", "flush_local", "flush_local_all", "unlock", "unlock_all"};
    for (int k = 0; k < 6; ++k) {
        reset_window();
        /* Only one origin per target at a time keeps the expected value exact. */
        if (k == 4) MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win); else MPI_Win_lock_all(0, win);
        bump9(t);
        switch (k) {
        case 0: MPI_Win_flush(t, win); break;
        case 1: MPI_Win_flush_all(win); break;
        case 2: MPI_Win_flush_local(t, win); break;
        case 3: MPI_Win_flush_local_all(win); break;
        case 4: MPI_Win_unlock(t, win); break;
        case 5: MPI_Win_unlock_all(win); break;
        }
        if (k >= 4) MPI_Win_lock_all(0, win);
        CHECK(read9(t) == init_value(t, 9) + STREAM, "after %s the ifuncs have run at rank %d", names[k], t);
        MPI_Win_unlock_all(win);
    }
    /* fence */
    reset_window();
    MPI_Win_fence(0, win);
    bump9(t);
    MPI_Win_fence(0, win);
    CHECK(base[9] == init_value(rank, 9) + STREAM, "after fence my word was bumped by rank %d", from);
    MPI_Win_fence(0, win);
    /* post/start/complete/wait */
    reset_window();
    MPI_Group world, to, fr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &t, &to);
    MPI_Group_incl(world, 1, &from, &fr);
    MPI_Win_post(fr, 0, win);
    MPI_Win_start(to, 0, win);
    bump9(t);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    CHECK(base[9] == init_value(rank, 9) + STREAM, "after complete/wait my word was bumped");
    MPI_Group_free(&world);
    MPI_Group_free(&to);
    MPI_Group_free(&fr);
}

static void test_requests(void)
{
    mt_section("MPIX_Rx*: generalized requests");
    reset_window();
    int t = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    int64_t s = -1, want = 0;
    for (int w = 0; w < 4; ++w) want += init_value(t, w);
    MPI_Request rq[3];
    CHECK(MPIX_Rxget(&s, 1, MPI_INT64_T, t, disp(t, 0), 4, MPI_INT64_T, f_sum, NULL, 0, win, &rq[0]) == MPI_SUCCESS, "rxget");
    int64_t one = 1, five = 5;
    CHECK(MPIX_Rxput(&one, 1, MPI_INT64_T, t, disp(t, 9), 1, MPI_INT64_T, f_acc, NULL, 0, win, &rq[1]) == MPI_SUCCESS, "rxput");
    CHECK(MPIX_Rxinvoke(f_bump, &five, 8, t, win, &rq[2]) == MPI_SUCCESS, "rxinvoke");
    MPI_Status st[3];
    CHECK(MPI_Waitall(3, rq, st) == MPI_SUCCESS, "waitall");
    CHECK(s == want, "rxget result %ld", (long)s);
    CHECK(read9(t) == init_value(t, 9) + 1, "rxput ran");
    int64_t w0 = -1;
    MPI_Get(&w0, 1, MPI_INT64_T, t, disp(t, 0), 1, MPI_INT64_T, win);
    MPI_Win_flush(t, win);
    CHECK(w0 == init_value(t, 0) + 5, "rxinvoke ran: %ld", (long)w0);
    /* MPI_Test until done */
    MPI_Request r;
    int done = 0;
    MPIX_Rxget(&s, 1, MPI_INT64_T, t, disp(t, 0), 4, MPI_INT64_T, f_sum, NULL, 0, win, &r);
    while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    CHECK(s == want + 5, "rxget after rxinvoke: %ld", (long)s);
    /* The reply's length in the status: 8 bytes from sum, and from a filter
     * the 3 of 8 words above its limit. */
    int cnt = -1;
    CHECK(MPI_Get_count(&st[0], MPI_BYTE, &cnt) == MPI_SUCCESS && cnt == 8, "rxget reply bytes: %d", cnt);
    CHECK(MPI_Get_count(&st[0], MPI_INT64_T, &cnt) == MPI_SUCCESS && cnt == 1, "rxget reply count: %d", cnt);
    int64_t above[8], lim = init_value(t, 4);
    MPI_Status fst;
    MPIX_Rxget(above, 8, MPI_INT64_T, t, disp(t, 1), 7, MPI_INT64_T, f_filter, &lim, 8, win, &r); /* words 1-7 */
    CHECK(MPI_Wait(&r, &fst) == MPI_SUCCESS, "rxget filter");
    CHECK(MPI_Get_count(&fst, MPI_INT64_T, &cnt) == MPI_SUCCESS && cnt == 3, "filter reply count: %d", cnt);
    CHECK(MPI_Get_elements(&fst, MPI_BYTE, &cnt) == MPI_SUCCESS && cnt == 24, "filter reply bytes: %d", cnt);
    CHECK(cnt == 24 && above[0] == init_value(t, 5) && above[2] == init_value(t, 7), "filter reply");
    MPI_Win_unlock_all(win);
}

static void test_errors(void)
{
    mt_section("errors come back as MPI error classes; the target keeps serving");
    reset_window();
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int t = (rank + 1) % size;
    char tr[32];
    snprintf(tr, sizeof(tr), "rank %d", t);
    MPI_Win_lock_all(0, win);
    int32_t seven = 7;
    CHECK(MPIX_Xinvoke(f_fail, &seven, 4, t, win) == MPI_SUCCESS, "issue");
    int err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 7"), "ifunc return reported by flush");
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, tr), "names the rank");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "reported once");
    /* In a stream (acknowledgements held until the flush asks): the failure
     * still comes back, and the X-ops around it complete. */
    for (int i = 0; i < 30; ++i) MPIX_Xinvoke(f_noop, NULL, 0, t, win);
    MPIX_Xinvoke(f_fail, &seven, 4, t, win);
    for (int i = 0; i < 10; ++i) MPIX_Xinvoke(f_noop, NULL, 0, t, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 7"), "a failure among lazily acknowledged X-ops");
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS, "reported once, the stream complete");

    MPIX_Xinvoke(f_unresolved, NULL, 0, t, win);
    err = MPI_Win_flush_all(win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_LINK, "xrdma_test_no_such_symbol"), "unresolved symbol");

    int64_t out;
    MPIX_Xget(&out, 1, MPI_INT64_T, t, disp(t, WORDS + 5), 1, MPI_INT64_T, f_noop, NULL, 0, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPI_ERR_RMA_RANGE, "outside the window"), "target_disp out of range");

    /* MPI_Wait on a generalized request reports through MPI_COMM_WORLD's
     * handler (Open MPI): the application chooses it. */
    MPI_Request r;
    MPI_Status st;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPIX_Rxinvoke(f_fail, &seven, 4, t, win, &r);
    err = MPI_Wait(&r, &st);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_RETURN, "returned 7"), "Rx error from MPI_Wait");
    /* Multiple completion: MPI_ERR_IN_STATUS and the cause in the status. */
    MPI_Request rs[2];
    MPI_Status sts[2];
    int64_t five = 5;
    MPIX_Rxinvoke(f_bump, &five, 8, t, win, &rs[0]);
    MPIX_Rxinvoke(f_fail, &seven, 4, t, win, &rs[1]);
    err = MPI_Waitall(2, rs, sts);
    CHECK(err == MPI_ERR_IN_STATUS, "waitall: %d", err);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "the good one succeeded");
    CHECK(mt_error_is(sts[1].MPI_ERROR, MPIX_ERR_IFUNC_RETURN, "returned 7"), "Rx error in status");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* A reply larger than the origin buffer. */
    int64_t small;
    MPIX_Xget(&small, 1, MPI_INT64_T, t, disp(t, 0), 4, MPI_INT64_T, f_noop, NULL, 0, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPI_ERR_TRUNCATE, NULL), "reply too large");

    /* Argument errors, reported at once through the window's handler, each
     * saying what is wrong (and, for args_size, the limit). */
    char want[160];
    snprintf(want, sizeof(want), "MPIX_Xinvoke: target_rank %d is not a rank of the window's group (0 to %d) nor MPI_PROC_NULL",
             size + 3, size - 1);
    CHECK(mt_error_string_is(MPIX_Xinvoke(f_bump, NULL, 0, size + 3, win), MPI_ERR_RANK, want), "bad rank");
    CHECK(mt_error_string_is(MPIX_Xget(&out, -1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, f_noop, NULL, 0, win), MPI_ERR_COUNT,
                             "MPIX_Xget: origin_count is -1"),
          "bad count");
    CHECK(mt_error_is(MPIX_Xget(&out, 1, MPI_DATATYPE_NULL, t, 0, 1, MPI_INT64_T, f_noop, NULL, 0, win), MPI_ERR_TYPE, "MPIX_Xget: origin datatype: MPI_DATATYPE_NULL"), "null type");
    CHECK(mt_error_string_is(MPIX_Xinvoke(MPIX_IFUNC_NULL, NULL, 0, t, win), MPI_ERR_ARG,
                             "MPIX_Xinvoke: ifunc is MPIX_IFUNC_NULL: an Xinvoke has no data, it needs a function"),
          "invoke without code");
    CHECK(mt_error_string_is(MPIX_Xinvoke(f_bump, NULL, -2, t, win), MPI_ERR_ARG,
                             "MPIX_Xinvoke: args_size is -2: args are 0 to 2147483647 bytes (INT_MAX, the limit of the "
                             "int args_size)"),
          "negative args size");
    CHECK(mt_error_string_is(MPIX_Xput(&out, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, f_noop, NULL, 8, win), MPI_ERR_ARG,
                             "MPIX_Xput: args is NULL but args_size is 8"),
          "NULL args");
    CHECK(mt_error_string_is(MPIX_Xput(NULL, 2, MPI_INT64_T, t, 0, 1, MPI_INT64_T, f_noop, NULL, 0, win), MPI_ERR_BUFFER,
                             "MPIX_Xput: origin_addr is NULL but the origin data is 16 bytes"),
          "NULL origin");
    CHECK(mt_error_string_is(MPIX_Rxinvoke(f_bump, NULL, 0, t, win, NULL), MPI_ERR_REQUEST,
                             "MPIX_Rxinvoke: request is NULL"),
          "NULL request");
    /* A request variant's error names the call that was made. */
    MPI_Request rq = MPI_REQUEST_NULL;
    CHECK(mt_error_string_is(MPIX_Rxput(NULL, 2, MPI_INT64_T, t, 0, 1, MPI_INT64_T, f_noop, NULL, 0, win, &rq),
                             MPI_ERR_BUFFER, "MPIX_Rxput: origin_addr is NULL but the origin data is 16 bytes"),
          "Rx error names the Rx call");
    CHECK(rq == MPI_REQUEST_NULL, "a refused Rx call leaves MPI_REQUEST_NULL");
    CHECK(MPIX_Xinvoke(f_bump, NULL, 0, MPI_PROC_NULL, win) == MPI_SUCCESS, "MPI_PROC_NULL is a no-op");
    int64_t out2[2];
    /* Every target datatype MPI_Get takes: a struct with a hole, its
     * blocks gathered in datatype order (test_datatypes compares many). */
    MPI_Datatype stype;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 16};
    MPI_Datatype tt[2] = {MPI_INT64_T, MPI_INT64_T};
    MPI_Type_create_struct(2, bl, dp, tt, &stype);
    MPI_Type_commit(&stype);
    out2[0] = out2[1] = -1;
    err = MPIX_Xget(out2, 2, MPI_INT64_T, t, disp(t, 0), 1, stype, f_noop, NULL, 0, win);
    CHECK(err == MPI_SUCCESS && MPI_Win_flush(t, win) == MPI_SUCCESS, "struct target type");
    int64_t by_get[2] = {-2, -2};
    MPI_Get(by_get, 2, MPI_INT64_T, t, disp(t, 0), 1, stype, win);
    MPI_Win_flush(t, win);
    CHECK(out2[0] == by_get[0] && out2[1] == by_get[1], "struct target type: %ld %ld, MPI_Get: %ld %ld",
          (long)out2[0], (long)out2[1], (long)by_get[0], (long)by_get[1]);
    MPI_Type_free(&stype);
    /* Refused: more separate target blocks than an X-op carries. */
    MPI_Datatype many;
    MPI_Type_vector(70000, 1, 2, MPI_INT8_T, &many);
    MPI_Type_commit(&many);
    err = MPIX_Xput(out2, 2, MPI_INT64_T, t, disp(t, 0), 1, many, f_acc, NULL, 0, win);
    CHECK(mt_error_is(err, MPI_ERR_TYPE, "MPIX_Xput: target datatype: more than 65536 separate blocks"),
          "too many target blocks refused");
    MPI_Type_free(&many);

    /* Still serving. */
    int64_t s = -1;
    MPIX_Xget(&s, 1, MPI_INT64_T, t, disp(t, 0), 1, MPI_INT64_T, f_sum, NULL, 0, win);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && s == init_value(t, 0) + 5, "target serves after errors: %ld", (long)s);
    MPI_Win_unlock_all(win);

    /* Origin-side image errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPIX_Ifunc bad;
    char junk[100] = "not an image";
    CHECK(mt_error_is(MPIX_Ifunc_load_mem(junk, sizeof(junk), "x", &bad), MPIX_ERR_IFUNC_IMAGE, "magic"), "junk image");
    CHECK(mt_error_is(MPIX_Ifunc_load("/nonexistent/f.xfn", NULL, &bad), MPI_ERR_FILE, "/nonexistent/f.xfn"), "missing file");
    /* An empty file (a failed build): the image class, and the message is
     * text that ends where it should. */
    char empty[] = "/tmp/xrdma-empty-XXXXXX";
    int fd = mkstemp(empty);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        close(fd);
        char want[sizeof(empty) + 64];
        snprintf(want, sizeof(want), "MPIX_Ifunc_load: %s: empty file", empty);
        bad = (MPIX_Ifunc)&bad;
        CHECK(mt_error_string_is(MPIX_Ifunc_load(empty, NULL, &bad), MPIX_ERR_IFUNC_IMAGE, want) &&
                  bad == MPIX_IFUNC_NULL,
              "empty image file");
        unlink(empty);
    }
    CHECK(mt_error_string_is(MPIX_Ifunc_load_mem(junk, 0, NULL, &bad), MPIX_ERR_IFUNC_IMAGE,
                             "MPIX_Ifunc_load: image in memory: the image is empty (0 bytes)"),
          "empty image in memory");
    CHECK(mt_error_string_is(MPIX_Ifunc_load_mem(NULL, 0, NULL, &bad), MPI_ERR_ARG, "MPIX_Ifunc_load_mem: image is NULL"),
          "NULL image");
    /* A name that is not text (a control character, a byte that is no
     * UTF-8) is quoted as text; UTF-8 stays. */
    CHECK(mt_error_string_is(MPIX_Ifunc_load("/nonexistent/\x01\xff\xc3\xa9.xfn", NULL, &bad), MPI_ERR_FILE,
                             "MPIX_Ifunc_load: cannot read /nonexistent/??\xc3\xa9.xfn: No such file or directory"),
          "a file name that is not text");
    /* A file larger than the limit every target applies is refused at load. */
    setenv("XRDMA_MAX_IMAGE_SIZE", "64", 1);
    CHECK(mt_error_is(MPIX_Ifunc_load(ops_image_path, "sum", &bad), MPIX_ERR_IFUNC_DENIED, "XRDMA_MAX_IMAGE_SIZE=64"),
          "image over XRDMA_MAX_IMAGE_SIZE");
    unsetenv("XRDMA_MAX_IMAGE_SIZE");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

static void test_progress_in_blocking_calls(void)
{
    mt_section("a target blocked in MPI_Recv or MPI_Barrier still runs code");
    reset_window();
    if (size < 2) return;
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        int64_t s = -1;
        MPIX_Xget(&s, 1, MPI_INT64_T, 1, disp(1, 0), 1, MPI_INT64_T, f_sum, NULL, 0, win);
        MPI_Win_flush(1, win);  /* rank 1 sits in MPI_Recv meanwhile */
        CHECK(s == init_value(1, 0), "served from MPI_Recv");
        MPI_Send(&s, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
        MPIX_Xget(&s, 1, MPI_INT64_T, 1, disp(1, 1), 1, MPI_INT64_T, f_sum, NULL, 0, win);
        MPI_Win_flush(1, win);  /* rank 1 sits in MPI_Barrier meanwhile */
        CHECK(s == init_value(1, 1), "served from MPI_Barrier");
        MPI_Win_unlock_all(win);
    } else if (rank == 1) {
        int64_t x;
        MPI_Recv(&x, 1, MPI_INT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_code_from_memory(void)
{
    mt_section("targets run the code from memory (memfd), never from a file");
    /* Every rank has run code of others by now: its maps show it in a memfd. */
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int memfd = 0, from_file = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strstr(line, "/memfd:xrdma:")) memfd++;
        if (strstr(line, ".xfn")) from_file++;
    }
    if (f) fclose(f);
    /* Code compiled from bitcode (XRDMA_CODE=bitcode) lives in JIT memory. */
    const char *code = getenv("XRDMA_CODE");
    if (!code || strcmp(code, "bitcode") != 0) CHECK(memfd > 0, "no memfd:xrdma mapping at rank %d", rank);
    CHECK(from_file == 0, "an image file is mapped at rank %d", rank);
}

static void test_contained_faults(void)
{
    mt_section("faults, runaways and denied symbols: their own classes, target still serving");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int t = (rank + 1) % size;
    char tr[32];
    snprintf(tr, sizeof(tr), "rank %d", t);
    MPI_Win_lock_all(0, win);
    /* A bad pointer handed to memcpy: the fault is inside libc (an image of
     * its own: the target quarantines it). */
    int err;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) /* (their memcpy checks first) */
    uint64_t bad[2] = {0x1000, 64};
    MPIX_Xinvoke(f_libc_fault, bad, sizeof(bad), t, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "SIGSEGV at address 0x10") &&
              mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "in memcpy") && mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "copy_from"),
          "fault inside libc contained, naming the function");
#endif
    MPIX_Xinvoke(f_segv, NULL, 0, t, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "SIGSEGV"), "segv contained");
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_FAULT, "crash_segv") && mt_error_is(err, MPIX_ERR_IFUNC_FAULT, tr),
          "names the function and rank");
    /* A runaway, at this rank itself (its own image: no race with the quarantine). */
    MPIX_Xinvoke(f_spin, NULL, 0, rank, win);
    err = MPI_Win_flush(rank, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_TIMEOUT, "XRDMA_IFUNC_TIMEOUT"), "runaway stopped");
    const char cmd[] = "true";
    MPIX_Xinvoke(f_forbidden, cmd, sizeof(cmd), t, win);
    err = MPI_Win_flush(t, win);
    CHECK(mt_error_is(err, MPIX_ERR_IFUNC_DENIED, "'system'"), "forbidden import refused");
    int64_t s = -1;
    MPIX_Xget(&s, 1, MPI_INT64_T, t, disp(t, 3), 1, MPI_INT64_T, f_sum, NULL, 0, win);
    CHECK(MPI_Win_flush(t, win) == MPI_SUCCESS && s == init_value(t, 3), "target serves after faults: %ld", (long)s);
    MPI_Win_unlock_all(win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, &rank, &size);
    mt_require(argc == 8, "usage: test_xops create|allocate|shared|dynamic mpi_ops.xfn unresolved.xfn faults.xfn "
                          "runaway.xfn forbidden.xfn libc_faults.xfn");
    const char *kind = argv[1];
    MPI_Comm node;
    if (!strcmp(kind, "create")) {
        base = malloc(WORDS * 8);
        MPI_Win_create(base, WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else if (!strcmp(kind, "allocate")) {
        MPI_Win_allocate(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    } else if (!strcmp(kind, "shared")) {
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Win_allocate_shared(WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Comm_free(&node);
    } else if (!strcmp(kind, "dynamic")) {
        dynamic = 1;
        base = malloc(WORDS * 8);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, base, WORDS * 8);
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    addr = mt_addresses(base);
    load_all(argv + 2);

    test_xget_sum();
    test_accessor_outputs();
    test_xput_accumulate_atomic();
    test_ordering();
    test_forwarding();
    test_filter_and_default_reply();
    test_null_ifunc_and_datatypes();
    test_sync_calls_complete();
    test_requests();
    test_errors();
    test_progress_in_blocking_calls();
    test_code_from_memory();
    test_contained_faults();

    /* MPI_Win_free completes X-ops too (X-ops need no MPI epoch). */
    mt_section("MPI_Win_free completes X-ops");
    reset_window();
    bump9((rank + 1) % size);
    int64_t *keep = base;
    int keep_local = strcmp(kind, "create") == 0 || dynamic;
    MPI_Win_free(&win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (keep_local) {
        CHECK(keep[9] == init_value(rank, 9) + STREAM, "after free: %ld", (long)keep[9]);
        free(keep);
    }
    /* Past the 4096 distinct messages XRDMA keeps a code for, an error keeps
     * its class, and the class's string. (Last: it fills that table.) */
    mt_section("past 4096 distinct error messages");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int wrong = -1, last = MPI_SUCCESS;
    for (int i = 0; i < 4200 && wrong < 0; ++i) {
        char name[32];
        snprintf(name, sizeof(name), "no_such_%d", i);
        MPIX_Ifunc none;
        int cls = -1;
        last = MPIX_Ifunc_load(ops_image_path, name, &none);
        MPI_Error_class(last, &cls);
        if (cls != MPIX_ERR_IFUNC_IMAGE) wrong = i;
    }
    CHECK(wrong < 0, "error %d of a load: not of class MPIX_ERR_IFUNC_IMAGE", wrong);
    CHECK(mt_error_string_is(last, MPIX_ERR_IFUNC_IMAGE, "MPIX_ERR_IFUNC_IMAGE: invalid ifunc image"),
          "the class's string past the table");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPIX_Ifunc *all[] = {&f_acc, &f_max, &f_sum, &f_filter, &f_double, &f_bump, &f_log, &f_tour, &f_fail, &f_noop,
                         &f_unresolved, &f_segv, &f_spin, &f_forbidden};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) MPIX_Ifunc_free(all[i]);
    free(addr);
    return mt_finalize(kind);
}
