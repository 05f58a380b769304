/* Helpers of the MPI-launched benchmarks: MPI bootstraps one UCP worker
 * plus ucx_ifunc context per rank (endpoints to every other rank), idle
 * policy, timing and sample statistics. Header-only: each benchmark is one
 * translation unit. */
#ifndef XRDMA_BENCH_COMMON_H
#define XRDMA_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <ucx_ifunc.h>
#include <unistd.h>

#include "beside_exe.h"

static const char *bench_name = "bench";
static int bench_rank = -1;

static void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s[rank %d]: ", bench_name, bench_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

__attribute__((unused)) static double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

struct bench_ucx {
    ucp_context_h ucp;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* eps[r]; NULL for this rank (on demand: NULL until connected, bench_ucx_ep()) */
    ucx_ifunc_context_h ictx;
    int rank, size;
    char *addresses; /* on demand: every rank's worker address, at displs[r] */
    int *displs;
};

/* The endpoint to rank @p r, made now if there is none (bench_ucx_init_on_demand()). */
__attribute__((unused)) static ucp_ep_h bench_ucx_ep(struct bench_ucx *b, int r)
{
    if (b->eps[r] || !b->addresses || r == b->rank) return b->eps[r];
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof(ep));
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = (const ucp_address_t *)(b->addresses + b->displs[r]);
    if (ucp_ep_create(b->worker, &ep, &b->eps[r]) != UCS_OK) b->eps[r] = NULL;
    return b->eps[r];
}
/* The ifunc context's connect hook: the same endpoint (one per pair). */
static ucp_ep_h bench_ucx_connect(void *b, int rank) { return bench_ucx_ep((struct bench_ucx *)b, rank); }

static void bench_ucx_check(ucs_status_t st, const char *what)
{
    if (st != UCS_OK) bench_die("%s: %s", what, ucs_status_string(st));
}

/* Context (AM + RMA), worker, ifunc context; worker addresses exchanged with
 * MPI_Allgather of their lengths then MPI_Allgatherv; an endpoint to every
 * other rank, each made a peer of the ifunc context, or with @p on_demand
 * none until the first message either way needs it (the ifunc context's
 * connect hook, bench_ucx_ep()). */
static void bench_ucx_setup(struct bench_ucx *b, void *user_ptr, int on_demand)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->size);
    ucp_config_t *cfg;
    bench_ucx_check(ucp_config_read(NULL, NULL, &cfg), "ucp_config_read");
    ucp_params_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    bench_ucx_check(ucp_init(&p, cfg, &b->ucp), "ucp_init");
    ucp_config_release(cfg);
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    bench_ucx_check(ucp_worker_create(b->ucp, &wp, &b->worker), "ucp_worker_create");

    ucp_address_t *addr;
    size_t len;
    bench_ucx_check(ucp_worker_get_address(b->worker, &addr, &len), "ucp_worker_get_address");
    if (len > INT_MAX) bench_die("worker address too long");
    int mylen = (int)len, total = 0;
    int *lens = malloc(b->size * sizeof(int)), *displs = malloc(b->size * sizeof(int));
    MPI_Allgather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < b->size; ++r) {
        displs[r] = total;
        if (lens[r] > INT_MAX - total) bench_die("worker addresses too long");
        total += lens[r];
    }
    char *all = malloc(total ? total : 1);
    MPI_Allgatherv(addr, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, MPI_COMM_WORLD);
    ucp_worker_release_address(b->worker, addr);

    ucx_ifunc_context_params_t cp;
    memset(&cp, 0, sizeof(cp));
    cp.worker = b->worker;
    cp.ucp_context = b->ucp; /* rings for small messages where UCX maps the peer's memory */
    cp.rank = b->rank;
    cp.size = b->size;
    cp.user_ptr = user_ptr;
    /* Every rank adds every other as a peer below, before any rank sends
     * (the barrier after): warm invocations name their sender by rank. */
    cp.peers_by_rank = 1;
    if (on_demand) {
        cp.dispatch_arg = b; /* (the default dispatch ignores it) */
        cp.connect = bench_ucx_connect;
    }
    ucx_ifunc_status_t ist = ucx_ifunc_context_create(&cp, &b->ictx);
    if (ist != UCX_IFUNC_OK) bench_die("ucx_ifunc_context_create: %s", ucx_ifunc_status_string(ist));

    b->eps = calloc(b->size, sizeof(ucp_ep_h));
    b->addresses = NULL;
    b->displs = NULL;
    if (on_demand) {
        b->addresses = all;
        b->displs = displs;
        free(lens);
        MPI_Barrier(MPI_COMM_WORLD); /* every context exists before anyone sends */
        return;
    }
    for (int r = 0; r < b->size; ++r) {
        if (r == b->rank) continue;
        ucp_ep_params_t ep;
        memset(&ep, 0, sizeof(ep));
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = (const ucp_address_t *)(all + displs[r]);
        bench_ucx_check(ucp_ep_create(b->worker, &ep, &b->eps[r]), "ucp_ep_create");
        ist = ucx_ifunc_peer_add(b->ictx, r, b->eps[r]);
        if (ist != UCX_IFUNC_OK) bench_die("ucx_ifunc_peer_add: %s", ucx_ifunc_status_string(ist));
    }
    free(all);
    free(lens);
    free(displs);
    MPI_Barrier(MPI_COMM_WORLD); /* peers_by_rank: no rank sends before all know it */
}
__attribute__((unused)) static void bench_ucx_init(struct bench_ucx *b, void *user_ptr)
{
    bench_ucx_setup(b, user_ptr, 0);
}
__attribute__((unused)) static void bench_ucx_init_on_demand(struct bench_ucx *b, void *user_ptr)
{
    bench_ucx_setup(b, user_ptr, 1);
}

/* Wait until every operation this rank started on its worker completed
 * (puts not awaited one by one). */
__attribute__((unused)) static void bench_ucx_flush(struct bench_ucx *b)
{
    ucp_request_param_t fp;
    fp.op_attr_mask = 0;
    ucs_status_ptr_t fr = ucp_worker_flush_nbx(b->worker, &fp);
    if (UCS_PTR_IS_PTR(fr)) {
        while (ucp_request_check_status(fr) == UCS_INPROGRESS) ucp_worker_progress(b->worker);
        ucp_request_free(fr);
    }
}

__attribute__((unused)) static void bench_ucx_fini(struct bench_ucx *b)
{
    ucs_status_ptr_t *reqs = calloc(b->size, sizeof(*reqs));
    ucp_request_param_t p;
    memset(&p, 0, sizeof(p));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    for (int r = 0; r < b->size; ++r)
        if (b->eps[r]) reqs[r] = ucp_ep_close_nbx(b->eps[r], &p);
    for (int r = 0; r < b->size; ++r) {
        if (!reqs[r] || UCS_PTR_IS_ERR(reqs[r])) continue;
        while (ucp_request_check_status(reqs[r]) == UCS_INPROGRESS) ucp_worker_progress(b->worker);
        ucp_request_free(reqs[r]);
    }
    free(reqs);
    MPI_Barrier(MPI_COMM_WORLD); /* no worker goes while a peer still closes */
    ucx_ifunc_context_destroy(b->ictx);
    ucp_worker_destroy(b->worker);
    ucp_cleanup(b->ucp);
    free(b->eps);
    free(b->addresses);
    free(b->displs);
}

/* Idle progress calls before sched_yield: none when the ranks of this node
 * outnumber its cores (the rank with work needs the core now), else many. */
__attribute__((unused)) static long bench_choose_spin(void)
{
    MPI_Comm local;
    int nlocal;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &nlocal);
    MPI_Comm_free(&local);
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= nlocal)
        cores = CPU_COUNT(&set);
    return nlocal > cores ? 0 : 10000;
}

/* Progress (run arriving ifuncs and AM handlers) until *req completes. */
__attribute__((unused)) static void bench_serve_until(struct bench_ucx *b, MPI_Request *req, long spin,
                              void (*poll_hook)(struct bench_ucx *))
{
    long idle = 0;
    int done = 0;
    while (!done) {
        if (poll_hook) poll_hook(b);
        if (ucx_ifunc_progress(b->ictx)) {
            idle = 0;
            continue;
        }
        if (++idle > spin) sched_yield();
        if (idle % 1024 == 0) MPI_Test(req, &done, MPI_STATUS_IGNORE);
    }
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_stats {
    double median, mean, min, p99;
};

/* Sorts v in place. */
__attribute__((unused)) static struct bench_stats bench_summarize(double *v, size_t n)
{
    struct bench_stats s = {0, 0, 0, 0};
    if (n == 0) return s;
    qsort(v, n, sizeof(*v), bench_cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += v[i];
    s.mean = sum / n;
    s.min = v[0];
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.p99 = v[(size_t)((n - 1) * 0.99)];
    return s;
}

/* The completion of an invocation whose reply is one uint64_t (the
 * callback bench_u64_done): a reply of another size is
 * UCX_IFUNC_ERR_PROTOCOL; message is set only on an error. */
struct bench_u64_reply {
    volatile int done;
    ucx_ifunc_status_t status;
    int rank; /* that answered */
    uint64_t value;
    char message[256];
};

__attribute__((unused)) static void bench_u64_done(const ucx_ifunc_result_t *r, void *user_data)
{
    struct bench_u64_reply *out = user_data;
    out->status = r->status;
    out->rank = r->rank;
    if (r->status != UCX_IFUNC_OK) { /* not on the measured path */
        snprintf(out->message, sizeof(out->message), "%s", r->message ? r->message : "");
    } else if (r->reply_size != sizeof(out->value)) {
        out->status = UCX_IFUNC_ERR_PROTOCOL;
        snprintf(out->message, sizeof(out->message), "reply of %zu bytes", r->reply_size);
    } else {
        memcpy(&out->value, r->reply, sizeof(out->value));
    }
    out->done = 1;
}

#endif
