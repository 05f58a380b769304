/* Helpers of the OSU-style X-RDMA benchmarks (osu_x*.c): options, message
 * sizes, MPI windows of the three kinds, the three synchronisation modes,
 * and the plain UCP active-message "floor" each benchmark measures in the
 * same run on a worker of its own.
 *
 * Roles, as in the OSU one-sided benchmarks: rank 0 is the origin and
 * measures; rank 1 is the target. During the MPI and X-RDMA phases the
 * target sits in MPI_Barrier (lock and flush) or calls MPI_Win_fence with the
 * origin (fence): X-operations run at the target inside those calls, through
 * Open MPI's progress engine, which is how an application serves them. During
 * the UCP phase the target progresses the benchmark's own worker (spin, then
 * sched_yield, as bench_common.h decides) until the origin tells it to stop.
 *
 * Header-only: each benchmark is one translation unit. */
#ifndef XRDMA_OSU_COMMON_H
#define XRDMA_OSU_COMMON_H

#include "bench_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <mpix_xrdma.h>
#include <stdint.h>

enum osu_win { OSU_WIN_CREATE, OSU_WIN_ALLOCATE, OSU_WIN_DYNAMIC };
enum osu_sync { OSU_SYNC_FLUSH, OSU_SYNC_LOCK, OSU_SYNC_FENCE, OSU_SYNC_REQUEST };
static const char *const osu_win_names[] = {"create", "allocate", "dynamic"};
static const char *const osu_sync_names[] = {"flush", "lock", "fence", "request"};

struct osu_opts {
    size_t min_size, max_size;
    long iters, warmup;             /* sizes up to large_size */
    long iters_large, warmup_large; /* larger sizes */
    size_t large_size;
    long window;          /* bandwidth / message rate: operations per flush */
    size_t window_bytes;  /* cap on the data of one window (large sizes) */
    enum osu_win win;
    enum osu_sync sync;
    int csv;
    const char *image;
    long spin; /* idle UCP progress calls before sched_yield; <0: choose */
    long rounds; /* the modes take turns this many times per size */
    int target_poll; /* target polls MPIX_Xprogress instead of waiting in MPI_Barrier */
};

__attribute__((unused)) static void osu_usage(FILE *f, const char *what, int bw)
{
    fprintf(f,
            "Usage: mpirun -n 2 %s [options]\n%s\n\n"
            "  -m, --message-size [MIN:]MAX  sizes from MIN to MAX bytes, powers of two\n"
            "                                (default 1:4m; suffixes k, m)\n"
            "  -i, --iterations N            measured %s per size up to --large-size\n"
            "                                (default %d)\n"
            "  -x, --warmup N                unmeasured ones first (default %d)\n"
            "  -I, --iterations-large N      the same for larger sizes (default %d)\n"
            "  -X, --warmup-large N          warm-up for larger sizes (default %d)\n"
            "      --large-size B            where large sizes start (default %s)\n"
            "%s"
            "  -w, --win-option KIND         create, allocate (default) or dynamic window\n"
            "  -s, --sync-option SYNC        flush (default: one lock, a flush per %s),\n"
            "                                lock (lock/unlock per %s), fence, or request\n"
            "                                (one lock; each operation a request variant,\n"
            "                                MPIX_Rx* / MPI_Rput / MPI_Rget, and MPI_Wait)\n"
            "      --rounds R                the modes take turns R times per size (default 5)\n"
            "      --target-poll             the target busy-polls MPIX_Xprogress (flush, lock)\n"
            "                                instead of waiting in MPI_Barrier\n"
            "      --image PATH              ifunc image (default: osu_ifuncs.xfn beside this\n"
            "                                program)\n"
            "      --spin S                  idle UCP progress calls before sched_yield\n"
            "      --csv                     CSV output\n"
            "  -h, --help                    this text\n",
            bench_name, what, bw ? "windows" : "iterations", bw ? 50 : 1000, bw ? 5 : 100, bw ? 10 : 30, 5,
            bw ? "64k" : "8k",
            bw ? "  -W, --window N                operations in flight before one flush (default 64)\n"
                 "      --window-bytes B          at most B bytes in flight (default 16m: fewer\n"
                 "                                operations per window for the largest sizes)\n"
               : "",
            bw ? "window" : "operation", bw ? "window" : "operation");
}

__attribute__((unused)) static int osu_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s) return -1;
    if (*end == 'k' || *end == 'K') v <<= 10, ++end;
    else if (*end == 'm' || *end == 'M') v <<= 20, ++end;
    if (*end) return -1;
    *out = (size_t)v;
    return 0;
}

/* Parses the command line; exits (after MPI_Finalize) on -h or an error. */
__attribute__((unused)) static void osu_parse(int argc, char **argv, struct osu_opts *o, const char *what, int bw)
{
    *o = (struct osu_opts){1, 4u << 20, 1000, 100, 30, 5, 8192, 64, 16u << 20,
                           OSU_WIN_ALLOCATE, OSU_SYNC_FLUSH, 0, NULL, -1, 5, 0};
    if (bw) o->iters = 50, o->warmup = 5, o->iters_large = 10, o->warmup_large = 5, o->large_size = 65536;
    static const struct option lo[] = {
        {"message-size", required_argument, 0, 'm'}, {"iterations", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, 'x'},       {"iterations-large", required_argument, 0, 'I'},
        {"warmup-large", required_argument, 0, 'X'}, {"large-size", required_argument, 0, 'L'},
        {"window", required_argument, 0, 'W'},       {"window-bytes", required_argument, 0, 'B'},
        {"win-option", required_argument, 0, 'w'},   {"sync-option", required_argument, 0, 's'},
        {"image", required_argument, 0, 'G'},        {"spin", required_argument, 0, 'S'},
        {"csv", no_argument, 0, 'C'},                {"help", no_argument, 0, 'h'},
        {"rounds", required_argument, 0, 'R'},       {"target-poll", no_argument, 0, 'P'},
        {0, 0, 0, 0}};
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "m:i:x:I:X:W:w:s:h", lo, NULL)) != -1) {
        long v = 0;
        if (strchr("ixIXWSR", c)) {
            char *end;
            errno = 0;
            v = strtol(optarg, &end, 0);
            if (errno || *end || v < 0) bad = 1;
        }
        switch (c) {
        case 'm': {
            char *colon = strchr(optarg, ':');
            if (colon) {
                *colon = '\0';
                bad = (*optarg && osu_parse_size(optarg, &o->min_size)) || osu_parse_size(colon + 1, &o->max_size);
            } else {
                bad = osu_parse_size(optarg, &o->max_size);
            }
            break;
        }
        case 'i': o->iters = v; break;
        case 'x': o->warmup = v; break;
        case 'I': o->iters_large = v; break;
        case 'X': o->warmup_large = v; break;
        case 'W': o->window = v; break;
        case 'S': o->spin = v; break;
        case 'R': o->rounds = v ? v : 1; break;
        case 'L': bad = osu_parse_size(optarg, &o->large_size); break;
        case 'B': bad = osu_parse_size(optarg, &o->window_bytes); break;
        case 'w':
            if (!strcmp(optarg, "create")) o->win = OSU_WIN_CREATE;
            else if (!strcmp(optarg, "allocate")) o->win = OSU_WIN_ALLOCATE;
            else if (!strcmp(optarg, "dynamic")) o->win = OSU_WIN_DYNAMIC;
            else bad = 1;
            break;
        case 's':
            if (!strcmp(optarg, "flush")) o->sync = OSU_SYNC_FLUSH;
            else if (!strcmp(optarg, "lock")) o->sync = OSU_SYNC_LOCK;
            else if (!strcmp(optarg, "fence")) o->sync = OSU_SYNC_FENCE;
            else if (!strcmp(optarg, "request")) o->sync = OSU_SYNC_REQUEST;
            else bad = 1;
            break;
        case 'G': o->image = optarg; break;
        case 'C': o->csv = 1; break;
        case 'P': o->target_poll = 1; break;
        case 'h':
            if (bench_rank == 0) osu_usage(stdout, what, bw);
            MPI_Finalize();
            exit(0);
        default: bad = 1;
        }
    }
    if (bad || optind < argc || o->min_size == 0 || o->min_size > o->max_size || o->iters == 0 ||
        o->iters_large == 0 || o->window == 0 || o->max_size > INT_MAX) {
        if (bench_rank == 0) osu_usage(stderr, what, bw);
        MPI_Finalize();
        exit(2);
    }
}

/* The transport of the X-operations: XRDMA's UCX context reads
 * XRDMA_UCX_TLS over UCX_TLS (under MPICH on one host scripts/mpi-launch
 * puts only XRDMA's context on TCP that way). */
static const char *osu_tls(void)
{
    const char *t = getenv("XRDMA_UCX_TLS");
    if (!t || !*t) t = getenv("UCX_TLS");
    if (!t) return "default";
    if (strstr(t, "tcp")) return "tcp";
    if (strstr(t, "sm") || strstr(t, "posix") || strstr(t, "sysv")) return "shm";
    return t;
}

/* ---- windows ----------------------------------------------------------- */

struct osu_window {
    MPI_Win win;
    char *buf;      /* this rank's window memory */
    size_t bytes;
    MPI_Aint disp;  /* displacement of the peer's window memory (address: dynamic) */
    void *owned;    /* create / dynamic: our allocation */
};

__attribute__((unused)) static void osu_win_create(struct osu_window *w, enum osu_win kind, size_t bytes)
{
    memset(w, 0, sizeof(*w));
    w->bytes = bytes;
    MPI_Info info = MPI_INFO_NULL;
    switch (kind) {
    case OSU_WIN_ALLOCATE:
        MPI_Win_allocate((MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, &w->buf, &w->win);
        break;
    case OSU_WIN_CREATE:
        w->owned = w->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
        if (!w->buf) bench_die("out of memory");
        MPI_Win_create(w->buf, (MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, &w->win);
        break;
    case OSU_WIN_DYNAMIC: {
        w->owned = w->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
        if (!w->buf) bench_die("out of memory");
        MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &w->win);
        MPI_Win_attach(w->win, w->buf, (MPI_Aint)bytes);
        break;
    }
    }
    memset(w->buf, 0, bytes);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    /* The peer's displacement: its address for a dynamic window, else 0. */
    MPI_Aint mine = 0;
    if (kind == OSU_WIN_DYNAMIC) MPI_Get_address(w->buf, &mine);
    MPI_Aint all[2] = {0, 0};
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    w->disp = all[bench_rank == 0 ? 1 : 0];
}

__attribute__((unused)) static void osu_win_free(struct osu_window *w, enum osu_win kind)
{
    if (kind == OSU_WIN_DYNAMIC) MPI_Win_detach(w->win, w->buf);
    MPI_Win_free(&w->win);
    free(w->owned);
}

__attribute__((unused)) static void osu_check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    bench_die("%s: %s", what, msg);
}

/* ---- synchronisation (rank 0 origin, rank 1 target) -------------------- */

/* Before a timed loop: the access epoch of the flush mode, the first fence. */
__attribute__((unused)) static void osu_epoch_begin(const struct osu_opts *o, MPI_Win win)
{
    if ((o->sync == OSU_SYNC_FLUSH || o->sync == OSU_SYNC_REQUEST) && bench_rank == 0)
        osu_check(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win), "MPI_Win_lock");
    if (o->sync == OSU_SYNC_FENCE) osu_check(MPI_Win_fence(0, win), "MPI_Win_fence");
}

__attribute__((unused)) static void osu_epoch_end(const struct osu_opts *o, MPI_Win win)
{
    if ((o->sync == OSU_SYNC_FLUSH || o->sync == OSU_SYNC_REQUEST) && bench_rank == 0)
        osu_check(MPI_Win_unlock(1, win), "MPI_Win_unlock");
    if (o->sync == OSU_SYNC_FENCE) osu_check(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), "MPI_Win_fence");
}

/* Lock mode opens an epoch around each batch of operations. */
__attribute__((unused)) static void osu_batch_begin(const struct osu_opts *o, MPI_Win win)
{
    if (o->sync == OSU_SYNC_LOCK) osu_check(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win), "MPI_Win_lock");
}

/* Completes the batch: flush, unlock or fence (the target fences too). */
__attribute__((unused)) static void osu_batch_end(const struct osu_opts *o, MPI_Win win)
{
    switch (o->sync) {
    case OSU_SYNC_FLUSH: osu_check(MPI_Win_flush(1, win), "MPI_Win_flush"); break;
    case OSU_SYNC_LOCK: osu_check(MPI_Win_unlock(1, win), "MPI_Win_unlock"); break;
    case OSU_SYNC_FENCE: osu_check(MPI_Win_fence(0, win), "MPI_Win_fence"); break;
    case OSU_SYNC_REQUEST: break; /* each operation waited for its request */
    }
}

/* The origin's end of a one-sided phase (meets osu_target_serve). */
__attribute__((unused)) static void osu_origin_done(const struct osu_opts *o)
{
    if (o->target_poll && o->sync != OSU_SYNC_FENCE) {
        MPI_Request rq; /* a nonblocking barrier only matches its kind */
        MPI_Ibarrier(MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* What the target does while the origin runs @p batches timed batches. */
__attribute__((unused)) static void osu_target_serve(const struct osu_opts *o, MPI_Win win, long batches)
{
    osu_epoch_begin(o, win);
    if (o->sync == OSU_SYNC_FENCE)
        for (long i = 0; i < batches; ++i) osu_check(MPI_Win_fence(0, win), "MPI_Win_fence");
    osu_epoch_end(o, win);
    if (o->target_poll && o->sync != OSU_SYNC_FENCE) {
        /* A dedicated target: run arriving code without Open MPI's idle
         * policy in the way; look for the origin's barrier now and then. */
        MPI_Request rq;
        int done = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &rq);
        for (unsigned long i = 1; !done; ++i) {
            MPIX_Xprogress();
            if (i % 256 == 0) MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        }
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* X-operations run in here */
}

/* ---- the plain UCP active-message floor -------------------------------- */

enum { OSU_AM_REQ = 0x60, OSU_AM_RSP = 0x61, OSU_AM_STOP = 0x62 };

/* Header of a request: how many bytes to answer with, and whether to. */
struct osu_am_hdr {
    uint32_t reply_bytes;
    uint8_t reply; /* answer this one */
    uint8_t land;  /* copy eager data into the target buffer (put); 0: the
                      handler only looks at it in place (invoke) */
    uint16_t pad;
};

static struct {
    struct bench_ucx b;
    char *tbuf, *obuf; /* target memory (requests land, replies come from) / origin buffer */
    size_t bytes;
    volatile long replies; /* origin: replies received */
    volatile int stop;     /* target: stop serving */
    unsigned sink;
    long spin;
} osu_am;

struct osu_am_pending { /* a rendezvous request still being received */
    struct osu_am_hdr h;
    ucp_ep_h ep;
};

__attribute__((unused)) static void osu_am_reply(ucp_ep_h ep, uint32_t bytes)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, OSU_AM_RSP, NULL, 0, osu_am.tbuf, bytes, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("reply: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r); /* tbuf stays put */
}

__attribute__((unused)) static void osu_am_req_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length;
    struct osu_am_pending *pd = user_data;
    if (status != UCS_OK) bench_die("AM receive: %s", ucs_status_string(status));
    if (pd->h.reply) osu_am_reply(pd->ep, pd->h.reply_bytes);
    free(pd);
    ucp_request_free(request);
}

__attribute__((unused)) static void osu_am_rsp_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length, (void)user_data;
    if (status != UCS_OK) bench_die("AM receive: %s", ucs_status_string(status));
    osu_am.replies++;
    ucp_request_free(request);
}

/* Data arrives in @p dst: copied (eager) or received there (rendezvous). */
__attribute__((unused)) static int osu_am_land(void *dst, void *data, size_t length, const ucp_am_recv_param_t *param,
                       ucp_am_recv_data_nbx_callback_t cb, void *user)
{
    if (length > osu_am.bytes) bench_die("AM of %zu bytes, buffer of %zu", length, osu_am.bytes);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        if (length) memcpy(dst, data, length);
        return 1;
    }
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = cb;
    p.user_data = user;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(osu_am.b.worker, data, dst, length, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_recv_data_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    return r == NULL; /* done already */
}

__attribute__((unused)) static ucs_status_t osu_am_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    if (id == OSU_AM_STOP) {
        osu_am.stop = 1;
    } else if (id == OSU_AM_REQ) {
        struct osu_am_hdr h = {0, 0, 1, 0};
        if (header_length == sizeof(h)) memcpy(&h, header, sizeof(h));
        ucp_ep_h ep = osu_am.b.eps[0];
        struct osu_am_pending *pd = NULL;
        if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
            pd = malloc(sizeof(*pd)); /* off the eager path */
            pd->h = h, pd->ep = ep;
        }
        if (!h.land && !pd) {
            if (length) osu_am.sink += ((const volatile char *)data)[0];
            if (h.reply) osu_am_reply(ep, h.reply_bytes);
        } else if (osu_am_land(osu_am.tbuf, data, length, param, osu_am_req_done, pd)) {
            free(pd);
            if (h.reply) osu_am_reply(ep, h.reply_bytes);
        }
    } else if (id == OSU_AM_RSP) {
        if (osu_am_land(osu_am.obuf, data, length, param, osu_am_rsp_done, NULL)) osu_am.replies++;
    }
    return UCS_OK;
}

__attribute__((unused)) static void osu_am_install(unsigned id)
{
    ucp_am_handler_param_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = id;
    p.cb = osu_am_cb;
    p.arg = (void *)(uintptr_t)id;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    bench_ucx_check(ucp_worker_set_am_recv_handler(osu_am.b.worker, &p), "ucp_worker_set_am_recv_handler");
}

/* The benchmark's own UCP worker (the transport UCX_TLS names), endpoints
 * wired up through MPI, buffers of @p bytes. */
__attribute__((unused)) static void osu_am_init(size_t bytes, long spin)
{
    bench_ucx_init(&osu_am.b, NULL);
    osu_am.bytes = bytes;
    osu_am.tbuf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    osu_am.obuf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!osu_am.tbuf || !osu_am.obuf) bench_die("out of memory");
    memset(osu_am.tbuf, 1, bytes);
    memset(osu_am.obuf, 2, bytes);
    osu_am.spin = spin;
    osu_am_install(OSU_AM_REQ);
    osu_am_install(OSU_AM_RSP);
    osu_am_install(OSU_AM_STOP);
    MPI_Barrier(MPI_COMM_WORLD);
}

__attribute__((unused)) static void osu_am_fini(void)
{
    bench_ucx_fini(&osu_am.b);
    free(osu_am.tbuf);
    free(osu_am.obuf);
}

__attribute__((unused)) static void osu_am_send(unsigned id, const void *buf, size_t len, uint32_t reply_bytes, int reply, int land)
{
    /* UCX 1.13 reads the header until the send completes (there is no
     * UCP_AM_SEND_FLAG_COPY_HEADER yet): a ring far longer than any window. */
    static struct osu_am_hdr ring[4096];
    static unsigned next;
    struct osu_am_hdr *h = &ring[next++ % 4096];
    *h = (struct osu_am_hdr){reply_bytes, (uint8_t)reply, (uint8_t)land, 0};
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(osu_am.b.eps[1], id, h, sizeof(*h), buf, len, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r);
}

/* Origin: progress until @p n replies arrived in all (spin, then yield). */
__attribute__((unused)) static void osu_am_wait_replies(long n)
{
    long idle = 0;
    while (osu_am.replies < n) {
        if (ucp_worker_progress(osu_am.b.worker)) idle = 0;
        else if (++idle > osu_am.spin) sched_yield();
    }
}

/* Target: serve requests until the origin says stop. */
__attribute__((unused)) static void osu_am_serve(void)
{
    long idle = 0;
    osu_am.stop = 0;
    while (!osu_am.stop) {
        if (ucp_worker_progress(osu_am.b.worker)) idle = 0;
        else if (++idle > osu_am.spin) sched_yield();
    }
}

__attribute__((unused)) static void osu_am_stop_target(void)
{
    /* Sent from a buffer of its own; local completion is enough (an
     * endpoint flush would wait for the target, which stops progressing). */
    struct osu_am_hdr *h = malloc(sizeof(*h));
    *h = (struct osu_am_hdr){0, 0, 0, 0};
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(osu_am.b.eps[1], OSU_AM_STOP, h, sizeof(*h), NULL, 0, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(osu_am.b.worker);
        ucp_request_free(r);
    }
    free(h);
}

/* ---- misc --------------------------------------------------------------- */

__attribute__((unused)) static MPIX_Ifunc osu_load_ifunc(const struct osu_opts *o, const char *entry)
{
    MPIX_Ifunc f = MPIX_IFUNC_NULL;
    const char *image = o->image ? o->image : beside_exe("osu_ifuncs.xfn");
    int ok = 1;
    if (bench_rank == 0) { /* only the origin reads the image */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPIX_Ifunc_load(image, entry, &f);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "%s: %s\n", bench_name, msg);
            ok = 0;
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        exit(2);
    }
    return f;
}

__attribute__((unused)) static long osu_spin(const struct osu_opts *o) { return o->spin >= 0 ? o->spin : bench_choose_spin(); }

#endif
