/* ucp_path_probe: which way a small message reaches a peer fastest, in plain
 * UCX, measured in one run: the one-way time (half a ping-pong) of an 8 B
 * active message, of a 32 B frame written with ucp_put_nbx into a buffer the
 * peer polls, and of the same frame written with plain stores through
 * ucp_rkey_ptr() (only where UCX maps the peer's memory: shared memory).
 * Rounds interleave the three; ratios are of the medians over rounds. This
 * is the measurement behind the plugin's rings (ucx_plugin/wire/ring.cc): stores
 * where they work, active messages elsewhere.
 *
 *   mpirun -n 2 ucp_path_probe [--csv] [-i ITERS] [-r ROUNDS] */
#include "bench_common.h"

#include <getopt.h>
#include <stdatomic.h>

static volatile uint64_t am_got;

static ucs_status_t am_cb(void *arg, const void *h, size_t hl, void *d, size_t l, const ucp_am_recv_param_t *p)
{
    (void)arg, (void)h, (void)hl, (void)d, (void)l, (void)p;
    am_got++;
    return UCS_OK;
}

static void send_free(ucs_status_ptr_t r, const char *what)
{
    if (UCS_PTR_IS_ERR(r)) bench_die("%s: %s", what, ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) ucp_request_free(r);
}

/* How a frame is written into the peer's polled buffer. */
struct writer {
    int stores;                 /* through ucp_rkey_ptr, else ucp_put_nbx */
    volatile uint64_t *theirs;  /* stores: the peer's buffer, mapped here */
    ucp_ep_h ep;
    uint64_t raddr;
    ucp_rkey_h rkey;
};

static void write_frame(const struct writer *w, uint64_t *frame, uint64_t seq)
{
    if (w->stores) {
        w->theirs[0] = frame[0], w->theirs[1] = frame[1], w->theirs[2] = frame[2];
        atomic_thread_fence(memory_order_release);
        w->theirs[3] = seq;
        return;
    }
    ucp_request_param_t rp;
    rp.op_attr_mask = 0;
    frame[3] = seq;
    send_free(ucp_put_nbx(w->ep, frame, 4 * sizeof(uint64_t), w->raddr, w->rkey, &rp), "ucp_put_nbx");
}

/* One-way time (us) of @p iters frames ping-ponged: a frame is there when
 * the last word of the polled buffer holds its number. */
static double frames(struct bench_ucx *b, const struct writer *w, volatile uint64_t *mine, uint64_t *seq, int iters)
{
    uint64_t frame[4] = {1, 2, 3, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now_us();
    for (int i = 0; i < iters; ++i) {
        uint64_t want = ++*seq;
        if (b->rank == 1)
            while (mine[3] != want) ucp_worker_progress(b->worker);
        write_frame(w, frame, want);
        if (b->rank == 0)
            while (mine[3] != want) ucp_worker_progress(b->worker);
    }
    return (bench_now_us() - t0) / iters / 2;
}

int main(int argc, char **argv)
{
    int csv = 0, iters = 20000, rounds = 7;
    static const struct option lo[] = {{"csv", no_argument, NULL, 'c'}, {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "i:r:", lo, NULL)) != -1;) {
        if (c == 'c') csv = 1;
        else if (c == 'i') iters = atoi(optarg);
        else if (c == 'r') rounds = atoi(optarg);
        else bench_die("usage: ucp_path_probe [--csv] [-i ITERS] [-r ROUNDS]");
    }
    if (iters < 1 || rounds < 1 || rounds > 100) bench_die("bad -i or -r");
    MPI_Init(&argc, &argv);
    struct bench_ucx b;
    bench_ucx_init(&b, NULL);
    if (b.size != 2) bench_die("ucp_path_probe runs on 2 ranks");
    int peer = 1 - b.rank;
    ucp_am_handler_param_t hp;
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
    hp.id = 60;
    hp.cb = am_cb;
    bench_ucx_check(ucp_worker_set_am_recv_handler(b.worker, &hp), "ucp_worker_set_am_recv_handler");

    /* The polled buffer: allocated by UCX, so that it can be shared. */
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = 4096;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucp_mem_h mh;
    bench_ucx_check(ucp_mem_map(b.ucp, &mp, &mh), "ucp_mem_map");
    ucp_mem_attr_t ma = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    bench_ucx_check(ucp_mem_query(mh, &ma), "ucp_mem_query");
    volatile uint64_t *mine = ma.address;
    memset((void *)mine, 0, 4096);
    void *packed;
    size_t packed_len;
    bench_ucx_check(ucp_rkey_pack(b.ucp, mh, &packed, &packed_len), "ucp_rkey_pack");
    char key[4096];
    uint64_t addr = (uint64_t)(uintptr_t)mine, raddr;
    if (packed_len > sizeof(key)) bench_die("memory key too long");
    MPI_Sendrecv(packed, (int)packed_len, MPI_BYTE, peer, 0, key, sizeof(key), MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&addr, 8, MPI_BYTE, peer, 1, &raddr, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ucp_rkey_h rkey;
    bench_ucx_check(ucp_ep_rkey_unpack(b.eps[peer], key, &rkey), "ucp_ep_rkey_unpack");
    void *rptr = NULL;
    int stores = ucp_rkey_ptr(rkey, raddr, &rptr) == UCS_OK;
    int all_stores = 0;
    MPI_Allreduce(&stores, &all_stores, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    double *t_am = calloc(rounds, sizeof(double)), *t_put = calloc(rounds, sizeof(double)),
           *t_st = calloc(rounds, sizeof(double));
    uint64_t msg = 0, seq = 0;
    ucp_request_param_t rp;
    rp.op_attr_mask = 0;
    for (int round = 0; round < rounds; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);
        am_got = 0;
        double t0 = bench_now_us();
        for (int i = 0; i < iters; ++i) {
            if (b.rank == 1)
                while (am_got <= (uint64_t)i) ucp_worker_progress(b.worker);
            send_free(ucp_am_send_nbx(b.eps[peer], 60, NULL, 0, &msg, 8, &rp), "ucp_am_send_nbx");
            if (b.rank == 0)
                while (am_got <= (uint64_t)i) ucp_worker_progress(b.worker);
        }
        t_am[round] = (bench_now_us() - t0) / iters / 2;

        struct writer put = {0, NULL, b.eps[peer], raddr, rkey}, st = {1, rptr, NULL, 0, NULL};
        t_put[round] = frames(&b, &put, mine, &seq, iters);
        if (all_stores) t_st[round] = frames(&b, &st, mine, &seq, iters);
    }
    /* Rank 0's puts may still be in flight towards rank 1 (not awaited). */
    bench_ucx_flush(&b);
    MPI_Barrier(MPI_COMM_WORLD);
    if (b.rank == 0) {
        char tls[64];
        snprintf(tls, sizeof(tls), "%s", getenv("UCX_TLS") ? getenv("UCX_TLS") : "default");
        for (char *p = tls; *p; ++p)
            if (*p == ',') *p = '+'; /* a CSV field */
        double ratio_put[100], ratio_st[100];
        for (int r = 0; r < rounds; ++r) {
            ratio_put[r] = t_put[r] / t_am[r];
            ratio_st[r] = all_stores ? t_st[r] / t_am[r] : 0;
        }
        struct bench_stats am = bench_summarize(t_am, rounds), put = bench_summarize(t_put, rounds),
                           st = bench_summarize(t_st, rounds), rp_ = bench_summarize(ratio_put, rounds),
                           rs = bench_summarize(ratio_st, rounds);
        if (csv) {
            printf("benchmark,tls,path,median_us,am_median_us,over_am_median\n");
            printf("ucp_path_probe,%s,put,%.4f,%.4f,%.4f\n", tls, put.median, am.median, rp_.median);
            if (all_stores) printf("ucp_path_probe,%s,store,%.4f,%.4f,%.4f\n", tls, st.median, am.median, rs.median);
        } else {
            printf("# one-way time of a small message (us, medians of %d rounds of %d ping-pongs), UCX_TLS=%s\n",
                   rounds, iters, tls);
            printf("%-34s %10.3f\n", "active message (8 B)", am.median);
            printf("%-34s %10.3f  %.2fx\n", "ucp_put_nbx + poll (32 B)", put.median, rp_.median);
            if (all_stores)
                printf("%-34s %10.3f  %.2fx\n", "stores via ucp_rkey_ptr (32 B)", st.median, rs.median);
            else
                printf("%-34s %10s\n", "stores via ucp_rkey_ptr", "n/a (not mapped)");
        }
    }
    free(t_am), free(t_put), free(t_st);
    ucp_rkey_destroy(rkey);
    ucp_rkey_buffer_release(packed);
    MPI_Barrier(MPI_COMM_WORLD);
    ucp_mem_unmap(b.ucp, mh);
    bench_ucx_fini(&b);
    MPI_Finalize();
    return 0;
}
