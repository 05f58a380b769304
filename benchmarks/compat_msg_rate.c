/* compat_msg_rate: the published ifunc API's put-and-poll path against the
 * same program putting plain frames, in the same run: message rate (the
 * throughput loop of the API's users) and latency (their ping-pong).
 *
 *   mpirun -n 2 benchmarks/compat_msg_rate [--csv] [-n MESSAGES] [-b LAPS]
 *                                          [-l ROUNDTRIPS] [-B ROUNDTRIPS_PER_BLOCK]
 *
 * Rate: rank 1 exposes a ring of 32 slots and polls them in order; rank 0
 * fills the ring, waits for rank 1's count (one ucp_put into rank 0 per
 * lap), and fills it again. Latency: each rank polls one slot of its own;
 * rank 0 puts a frame into rank 1's slot, rank 1 takes it and puts one into
 * rank 0's, and so on (half a round trip is reported, as the API's users
 * do). Both parts alternate the two modes in blocks, so that both see the
 * same machine noise:
 *   ifunc  one ucp_ifunc_msg_t of compat_inc.so (1-byte payload, a library
 *          built with `gcc -shared -fPIC` like the published API's users
 *          build theirs), resent without a flush in between
 *          (ucp_ifunc_send_nbix; a flush only when it did not complete at
 *          once, as those programs do); the receiver runs it with
 *          ucp_poll_ifunc. The code travels with the first message only
 *          (warm-up).
 *   plain  a frame of the same size without code, put with ucp_put_nbx:
 *          [u64 1][1-byte payload, padding][u64 1]; the receiver takes it
 *          when head and tail are set, adds the payload, clears both.
 * Ratios are medians of the ratios of adjacent blocks (ifunc / plain; robust
 * to blocks in which another process had the core): rate >= 0.9x and
 * latency <= 1.3x are the targets (benchmarks/drivers/summary).
 */
#include "bench_common.h"
#include "ucx_ifunc/ucp_compat.h"

#include <getopt.h>
#include <stdatomic.h>

#define SLOTS 32
#define SLOT_SIZE 32768
/* The size of a frame without code for entry "compat_inc_main" and a
 * 1-byte payload (put_poll.cc frame_build: 80-byte header, entry, args at a
 * 16-byte boundary, 8-byte trailer). The plain frame has the same size. */
#define PLAIN_SIZE (((80 + 15 + 15) / 16 * 16 + 1 + 7) / 8 * 8 + 8)

static struct bench_ucx b;

struct memory {
    ucp_mem_h mem;
    void *base;
    uint64_t addr;
    ucp_rkey_h rkey; /* the peer's, unpacked here */
};

/* Map @p size bytes here and give the peer (rank 1 - me) their address and rkey. */
static void share(struct memory *mine, struct memory *theirs, size_t size)
{
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    bench_ucx_check(ucp_mem_map(b.ucp, &mp, &mine->mem), "ucp_mem_map");
    ucp_mem_attr_t ma;
    ma.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    bench_ucx_check(ucp_mem_query(mine->mem, &ma), "ucp_mem_query");
    mine->base = ma.address;
    memset(mine->base, 0, size);
    void *packed;
    size_t plen;
    bench_ucx_check(ucp_rkey_pack(b.ucp, mine->mem, &packed, &plen), "ucp_rkey_pack");
    char out[1024], in[1024];
    if (plen + 16 > sizeof(out)) bench_die("rkey too long");
    uint64_t a = (uint64_t)(uintptr_t)mine->base, l = plen;
    memcpy(out, &a, 8);
    memcpy(out + 8, &l, 8);
    memcpy(out + 16, packed, plen);
    ucp_rkey_buffer_release(packed);
    const int peer = 1 - b.rank;
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, peer, 7, in, sizeof(in), MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    memcpy(&theirs->addr, in, 8);
    bench_ucx_check(ucp_ep_rkey_unpack(b.eps[peer], in + 16, &theirs->rkey), "ucp_ep_rkey_unpack");
}

/* Complete a request, or none (completed at once). */
static void wait_request(ucs_status_ptr_t r, const char *what)
{
    if (UCS_PTR_IS_ERR(r)) bench_die("%s: %s", what, ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(b.worker);
        ucp_request_free(r);
    }
}

static void put_wait(const void *buf, size_t len, uint64_t addr, ucp_rkey_h rkey)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    wait_request(ucp_put_nbx(b.eps[1 - b.rank], buf, len, addr, rkey, &p), "ucp_put_nbx");
}

static void flush_ep(void)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    wait_request(ucp_ep_flush_nbx(b.eps[1 - b.rank], &p), "ucp_ep_flush_nbx");
}

/* Take a plain frame from @p slot if one is there. */
static int plain_poll(uint8_t *slot, uint64_t *counter)
{
    volatile uint64_t *head = (volatile uint64_t *)slot, *tail = (volatile uint64_t *)(slot + PLAIN_SIZE - 8);
    if (*head != 1 || *tail != 1) {
        ucp_worker_progress(b.worker);
        return 0;
    }
    atomic_thread_fence(memory_order_acquire);
    *counter += slot[8];
    *head = 0;
    *tail = 0;
    atomic_thread_fence(memory_order_release);
    return 1;
}

static void ifunc_poll(uint8_t *slot, uint64_t *counter)
{
    ucs_status_t st;
    while ((st = ucp_poll_ifunc(b.ucp, slot, SLOT_SIZE, counter, b.worker)) == UCS_ERR_NO_MESSAGE) {}
    if (st != UCS_OK) bench_die("ucp_poll_ifunc: %s", ucs_status_string(st));
}

/* One frame to the peer's @p at: a plain put (without waiting) or the message. */
static void send_frame(int plain_mode, const uint8_t *plain, ucp_ifunc_msg_t msg, uint64_t at, ucp_rkey_h rkey,
                       int flush_unless_done)
{
    ucs_status_t st;
    if (plain_mode) {
        ucp_request_param_t p;
        p.op_attr_mask = 0;
        ucs_status_ptr_t r = ucp_put_nbx(b.eps[1 - b.rank], plain, PLAIN_SIZE, at, rkey, &p);
        if (UCS_PTR_IS_ERR(r)) bench_die("ucp_put_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
        if (r) ucp_request_free(r);
        st = r ? UCS_INPROGRESS : UCS_OK;
    } else {
        st = ucp_ifunc_send_nbix(b.eps[1 - b.rank], msg, at, rkey);
        if (UCS_STATUS_IS_ERR(st)) bench_die("ucp_ifunc_send_nbix: %s", ucs_status_string(st));
    }
    if (st != UCS_OK && flush_unless_done) flush_ep();
}

/* Median over @p n block pairs of ifunc[i] / plain[i]. */
static double pair_ratio(const double *ifunc, const double *plain, long n)
{
    double *r = calloc(n ? n : 1, sizeof(double));
    for (long i = 0; i < n; ++i) r[i] = ifunc[i] / plain[i];
    const double m = bench_summarize(r, n).median;
    free(r);
    return m;
}

static const char *tls_name(void)
{
    static char tls[64];
    snprintf(tls, sizeof(tls), "%s", getenv("UCX_TLS") ? getenv("UCX_TLS") : "default");
    for (char *p = tls; *p; ++p)
        if (*p == ',') *p = '+'; /* a CSV field */
    return tls;
}

struct result {
    double ifunc, plain, ratio; /* medians: per mode, and of the block pairs' ratios */
    long blocks, per_block;
};

/* Message rate: rank 0 fills rank 1's ring, lap after lap. */
static struct result rate(struct memory *ring, struct memory *peer_ring, struct memory *ack,
                          struct memory *peer_ack, ucp_ifunc_msg_t msg, const uint8_t *plain, long total, long block)
{
    struct result res = {0, 0, 0, 0, 0};
    const long laps = total / SLOTS;
    if (b.rank == 1) {
        uint64_t counter = 0, done = 0;
        for (long lap = 0; lap < 2 * laps; ++lap) {
            const int plain_mode = (lap / block) % 2 == 1;
            for (int i = 0; i < SLOTS; ++i) {
                uint8_t *slot = (uint8_t *)ring->base + (size_t)i * SLOT_SIZE;
                if (plain_mode) {
                    while (!plain_poll(slot, &counter)) {}
                } else {
                    ifunc_poll(slot, &counter);
                }
            }
            done += SLOTS;
            put_wait(&done, 8, peer_ack->addr, peer_ack->rkey);
        }
        if (counter != done) bench_die("rank 1 counted %llu of %llu", (unsigned long long)counter,
                                       (unsigned long long)done);
        return res;
    }
    volatile uint64_t *acked = (volatile uint64_t *)ack->base;
    *acked = 0;
    uint64_t sent = 0;
    const long whole = laps / block; /* whole blocks only (the last one may be short) */
    double *blocks[2] = {calloc(whole + 1, sizeof(double)), calloc(whole + 1, sizeof(double))};
    for (long lap = 0; lap < 2 * laps; ++lap) {
        const int plain_mode = (lap / block) % 2 == 1;
        const double t0 = bench_now_us();
        for (int i = 0; i < SLOTS; ++i)
            send_frame(plain_mode, plain, msg, peer_ring->addr + (uint64_t)i * SLOT_SIZE, peer_ring->rkey, 0);
        sent += SLOTS;
        while (*acked != sent) ucp_worker_progress(b.worker);
        if (lap / (2 * block) < whole) blocks[plain_mode][lap / (2 * block)] += bench_now_us() - t0;
    }
    res.blocks = whole;
    res.per_block = block * SLOTS;
    res.ratio = pair_ratio(blocks[1], blocks[0], whole); /* rate ratio: plain time / ifunc time */
    res.ifunc = res.per_block / bench_summarize(blocks[0], whole).median * 1e6; /* msg/s */
    res.plain = res.per_block / bench_summarize(blocks[1], whole).median * 1e6;
    free(blocks[0]);
    free(blocks[1]);
    return res;
}

/* Latency: ping-pong between slot 0 of each rank's memory, half a round trip. */
static struct result latency(struct memory *mine, struct memory *theirs, ucp_ifunc_msg_t msg,
                             const uint8_t *plain, long total, long block)
{
    struct result res = {0, 0, 0, 0, 0};
    uint8_t *slot = (uint8_t *)mine->base;
    uint64_t counter = 0;
    const long nblocks = 2 * ((total + block - 1) / block);
    double *blocks[2] = {calloc(nblocks, sizeof(double)), calloc(nblocks, sizeof(double))};
    /* Warm-up: the ifunc's code travels in each direction once. */
    for (int i = 0; i < 2; ++i) {
        if (b.rank == 0) send_frame(0, plain, msg, theirs->addr, theirs->rkey, 1);
        ifunc_poll(slot, &counter);
        if (b.rank == 1) send_frame(0, plain, msg, theirs->addr, theirs->rkey, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < nblocks; ++k) {
        const int plain_mode = k % 2;
        const double t0 = bench_now_us();
        for (long i = 0; i < block; ++i) {
            if (b.rank == 0) send_frame(plain_mode, plain, msg, theirs->addr, theirs->rkey, 1);
            if (plain_mode)
                while (!plain_poll(slot, &counter)) {}
            else
                ifunc_poll(slot, &counter);
            if (b.rank == 1) send_frame(plain_mode, plain, msg, theirs->addr, theirs->rkey, 1);
        }
        blocks[plain_mode][k / 2] = (bench_now_us() - t0) / block / 2;
    }
    const uint64_t want = 2 + (uint64_t)nblocks * block; /* every frame adds 1 */
    if (counter != want) bench_die("rank %d counted %llu of %llu", b.rank, (unsigned long long)counter,
                                   (unsigned long long)want);
    res.blocks = nblocks / 2;
    res.per_block = block;
    res.ratio = pair_ratio(blocks[0], blocks[1], res.blocks);
    res.ifunc = bench_summarize(blocks[0], res.blocks).median; /* us, one way */
    res.plain = bench_summarize(blocks[1], res.blocks).median;
    free(blocks[0]);
    free(blocks[1]);
    return res;
}

int main(int argc, char **argv)
{
    long total = 1000000, block = 10, rts = 200000, rt_block = 200;
    int csv = 0;
    static const struct option lo[] = {{"csv", no_argument, NULL, 'c'}, {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "n:b:l:B:", lo, NULL)) != -1;) {
        if (c == 'c') csv = 1;
        else if (c == 'n') total = atol(optarg);
        else if (c == 'b') block = atol(optarg);
        else if (c == 'l') rts = atol(optarg);
        else if (c == 'B') rt_block = atol(optarg);
        else bench_die("usage: %s [--csv] [-n MESSAGES] [-b LAPS] [-l ROUNDTRIPS] [-B ROUNDTRIPS_PER_BLOCK]", argv[0]);
    }
    if (total < SLOTS || block < 1 || rts < 1 || rt_block < 1 || total / SLOTS < block) bench_die("bad arguments");
    MPI_Init(&argc, &argv);
    bench_name = "compat_msg_rate";
    bench_ucx_init(&b, NULL);
    bench_rank = b.rank;
    if (b.size != 2) bench_die("needs 2 ranks");
    struct memory ring = {0}, ack = {0}, peer_ring = {0}, peer_ack = {0};
    share(&ring, &peer_ring, (size_t)SLOTS * SLOT_SIZE);
    share(&ack, &peer_ack, 8); /* rank 0's ack word is used */

    setenv("UCX_IFUNC_LIB_DIR", beside_exe(""), 1);
    ucp_ifunc_reg_param_t rp;
    memset(&rp, 0, sizeof(rp));
    rp.name = "compat_inc";
    ucp_ifunc_h f;
    bench_ucx_check(ucp_register_ifunc(b.ucp, rp, &f), "ucp_register_ifunc");
    uint8_t one = 1;
    ucp_ifunc_msg_t msg;
    bench_ucx_check(ucp_ifunc_msg_create(f, &one, 1, &msg), "ucp_ifunc_msg_create");
    uint8_t plain[PLAIN_SIZE] = {0};
    const uint64_t mark = 1;
    memcpy(plain, &mark, 8);
    plain[8] = 1;
    memcpy(plain + PLAIN_SIZE - 8, &mark, 8);

    /* Latency first: its warm-up sends the code in both directions. */
    const struct result lat = latency(&ring, &peer_ring, msg, plain, rts, rt_block);
    bench_ucx_flush(&b);
    MPI_Barrier(MPI_COMM_WORLD);
    const struct result rt = rate(&ring, &peer_ring, &ack, &peer_ack, msg, plain, total, block);

    if (b.rank == 0) {
        if (csv) {
            printf("benchmark,tls,metric,ifunc_median,plain_median,ifunc_over_plain_median,blocks,per_block\n");
            printf("compat_msg_rate,%s,rate_msg_per_s,%.0f,%.0f,%.4f,%ld,%ld\n", tls_name(), rt.ifunc, rt.plain,
                   rt.ratio, rt.blocks, rt.per_block);
            printf("compat_msg_rate,%s,latency_us,%.4f,%.4f,%.4f,%ld,%ld\n", tls_name(), lat.ifunc, lat.plain,
                   lat.ratio, lat.blocks, lat.per_block);
        } else {
            printf("compat_msg_rate over %s: 1-byte payload, %d-byte frames\n", tls_name(), PLAIN_SIZE);
            printf("%-48s %12s %12s %8s\n", "", "ifunc", "plain", "ratio");
            printf("%-48s %12.0f %12.0f %7.2fx\n", "message rate (msg/s), ring of 32, median block", rt.ifunc,
                   rt.plain, rt.ratio);
            printf("%-48s %12.3f %12.3f %7.2fx\n", "latency (us, half a round trip), median block", lat.ifunc,
                   lat.plain, lat.ratio);
            printf("(%ld pairs of blocks of %ld messages; %ld pairs of blocks of %ld round trips; ratios are "
                   "medians of adjacent pairs' ratios)\n", rt.blocks, rt.per_block, lat.blocks, lat.per_block);
        }
    }
    ucp_ifunc_msg_free(msg);
    ucp_deregister_ifunc(b.ucp, f);
    bench_ucx_flush(&b);
    MPI_Barrier(MPI_COMM_WORLD);
    ucp_rkey_destroy(peer_ring.rkey);
    ucp_rkey_destroy(peer_ack.rkey);
    ucp_mem_unmap(b.ucp, ring.mem);
    ucp_mem_unmap(b.ucp, ack.mem);
    bench_ucx_fini(&b);
    MPI_Finalize();
    return 0;
}
