/* The operation an osu_x* benchmark measures, chosen at build time with
 * OSU_OP (0: MPIX_Xput, 1: MPIX_Xget, 2: MPIX_Xinvoke, 3: MPIX_Xput of a
 * function that adds the incoming int64 values into the target), and its MPI
 * counterpart (MPI_Put, MPI_Get; MPI_Put of the argument bytes for Xinvoke;
 * MPI_Accumulate(MPI_SUM) on int64 for 3),
 * on the benchmark's window w with the origin buffer origin and the ifunc f
 * (entry OP_ENTRY of osu_ifuncs.xfn). Shared by osu_xlat.c and osu_xbw.c. */
#pragma once

#include "osu_common.h"

#ifndef OSU_OP
#define OSU_OP 0
#endif
#if OSU_OP == 0
#define OP_X "MPIX_Xput"
#define OP_MPI "MPI_Put"
#define OP_ENTRY "osu_store"
#elif OSU_OP == 1
#define OP_X "MPIX_Xget"
#define OP_MPI "MPI_Get"
#define OP_ENTRY "osu_fetch"
#elif OSU_OP == 2
#define OP_X "MPIX_Xinvoke"
#define OP_MPI "MPI_Put"
#define OP_ENTRY "osu_nop"
#else /* 3: user-defined accumulate */
#define OP_X "MPIX_Xput(add)"
#define OP_MPI "MPI_Accumulate"
#define OP_ENTRY "osu_add"
#endif

static struct osu_window w;
static char *origin; /* origin buffer */
static MPIX_Ifunc f;
static int with_requests; /* -s request: request variants, each waited for */

static void wait_request(MPI_Request *rq, const char *what)
{
    osu_check(MPI_Wait(rq, MPI_STATUS_IGNORE), what);
}

static void x_op(size_t size)
{
    MPI_Request rq;
#if OSU_OP == 0
    if (with_requests) {
        osu_check(MPIX_Rxput(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, f, NULL, 0, w.win, &rq),
                  "MPIX_Rxput");
        wait_request(&rq, "MPI_Wait (MPIX_Rxput)");
        return;
    }
    osu_check(MPIX_Xput(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, f, NULL, 0, w.win), OP_X);
#elif OSU_OP == 1
    if (with_requests) {
        osu_check(MPIX_Rxget(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, f, NULL, 0, w.win, &rq),
                  "MPIX_Rxget");
        wait_request(&rq, "MPI_Wait (MPIX_Rxget)");
        return;
    }
    osu_check(MPIX_Xget(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, f, NULL, 0, w.win), OP_X);
#elif OSU_OP == 2
    if (with_requests) {
        osu_check(MPIX_Rxinvoke(f, origin, (int)size, 1, w.win, &rq), "MPIX_Rxinvoke");
        wait_request(&rq, "MPI_Wait (MPIX_Rxinvoke)");
        return;
    }
    osu_check(MPIX_Xinvoke(f, origin, (int)size, 1, w.win), OP_X);
#else
    const int n = (int)(size / 8);
    if (with_requests) {
        osu_check(MPIX_Rxput(origin, n, MPI_INT64_T, 1, w.disp, n, MPI_INT64_T, f, NULL, 0, w.win, &rq),
                  "MPIX_Rxput");
        wait_request(&rq, "MPI_Wait (MPIX_Rxput)");
        return;
    }
    osu_check(MPIX_Xput(origin, n, MPI_INT64_T, 1, w.disp, n, MPI_INT64_T, f, NULL, 0, w.win), OP_X);
#endif
    (void)rq;
}

static void mpi_op(size_t size)
{
    MPI_Request rq;
#if OSU_OP == 3
    const int n = (int)(size / 8);
    if (with_requests) {
        osu_check(MPI_Raccumulate(origin, n, MPI_INT64_T, 1, w.disp, n, MPI_INT64_T, MPI_SUM, w.win, &rq),
                  "MPI_Raccumulate");
        wait_request(&rq, "MPI_Wait (MPI_Raccumulate)");
        return;
    }
    osu_check(MPI_Accumulate(origin, n, MPI_INT64_T, 1, w.disp, n, MPI_INT64_T, MPI_SUM, w.win), OP_MPI);
#elif OSU_OP == 1
    if (with_requests) {
        osu_check(MPI_Rget(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, w.win, &rq), "MPI_Rget");
        wait_request(&rq, "MPI_Wait (MPI_Rget)");
        return;
    }
    osu_check(MPI_Get(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, w.win), OP_MPI);
#else
    if (with_requests) {
        osu_check(MPI_Rput(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, w.win, &rq), "MPI_Rput");
        wait_request(&rq, "MPI_Wait (MPI_Rput)");
        return;
    }
    osu_check(MPI_Put(origin, (int)size, MPI_BYTE, 1, w.disp, (int)size, MPI_BYTE, w.win), OP_MPI);
#endif
}

/* After osu_parse(): the AM baseline, the window, the origin buffer and the
 * ifunc; then one X-operation so that the target's code cache is warm (the
 * code travels with the first one). 0 (after MPI_Finalize) unless the job
 * has exactly the 2 ranks these benchmarks need. */
static int osu_ops_setup(const struct osu_opts *o)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (bench_rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks\n", bench_name);
        MPI_Finalize();
        return 0;
    }
    with_requests = o->sync == OSU_SYNC_REQUEST;
    osu_am_init(o->max_size, osu_spin(o));
    osu_win_create(&w, o->win, o->max_size);
    origin = aligned_alloc(4096, (o->max_size + 4095) & ~(size_t)4095);
    if (!origin) bench_die("out of memory");
    memset(origin, 2, o->max_size);
    f = osu_load_ifunc(o, OP_ENTRY);
    if (bench_rank == 0) {
        osu_epoch_begin(o, w.win);
        osu_batch_begin(o, w.win);
        x_op(o->min_size);
        osu_batch_end(o, w.win);
        osu_epoch_end(o, w.win);
        osu_origin_done(o);
    } else {
        osu_target_serve(o, w.win, 1);
    }
    return 1;
}

static void osu_ops_teardown(const struct osu_opts *o)
{
    MPIX_Ifunc_free(&f);
    osu_win_free(&w, o->win);
    osu_am_fini();
    free(origin);
}
