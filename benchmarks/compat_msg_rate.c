/* compat_msg_rate: message rate of the published ifunc API's throughput
 * loop against the same loop putting plain frames, in the same run.
 *
 *   mpirun -n 2 benchmarks/compat_msg_rate [-n MESSAGES] [-b LAPS]
 *
 * Rank 1 exposes a ring of 32 slots and polls them in order; rank 0 fills
 * the ring, waits for rank 1's count (one ucp_put into rank 0 per lap),
 * and fills it again. Both modes alternate in blocks of LAPS laps, so they
 * see the same machine noise:
 *   ifunc  one ucp_ifunc_msg_t of compat_inc.so (1-byte payload, a library
 *          built with `gcc -shared -fPIC` like the published API's users
 *          build theirs), resent into every slot without a flush in between
 *          (ucp_ifunc_send_nbix); rank 1 runs it with ucp_poll_ifunc. The
 *          code travels with the first message only (warm-up).
 *   plain  a frame of the same size without code, put with ucp_put_nbx:
 *          [u64 1][1-byte payload, padding][u64 1]; rank 1 takes it when head
 *          and tail are set, adds the payload, clears both.
 * Prints both rates and their ratio (ifunc / plain), from the median block
 * time of each mode (robust to blocks in which another process had the
 * core) and from the total time.
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

static void put_wait(const void *buf, size_t len, uint64_t addr, ucp_rkey_h rkey)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_put_nbx(b.eps[1 - b.rank], buf, len, addr, rkey, &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_put_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(b.worker);
        ucp_request_free(r);
    }
}

/* Rank 1: take a plain frame from @p slot if one is there. */
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

int main(int argc, char **argv)
{
    long total = 1000000, block = 10;
    int c;
    while ((c = getopt(argc, argv, "n:b:")) != -1) {
        if (c == 'n') total = atol(optarg);
        else if (c == 'b') block = atol(optarg);
        else bench_die("usage: %s [-n MESSAGES] [-b LAPS]", argv[0]);
    }
    MPI_Init(&argc, &argv);
    bench_ucx_init(&b, NULL);
    if (b.size != 2) bench_die("needs 2 ranks");
    struct memory ring = {0}, ack = {0}, peer_ring = {0}, peer_ack = {0};
    share(&ring, &peer_ring, (size_t)SLOTS * SLOT_SIZE); /* rank 1's ring is used */
    share(&ack, &peer_ack, 8);                         /* rank 0's ack word is used */
    const long laps = total / SLOTS;

    if (b.rank == 1) {
        uint64_t counter = 0, done = 0;
        /* Warm-up (the message with code), then laps of each mode in turn. */
        for (long lap = -1; lap < 2 * laps; ++lap) {
            const int plain = lap >= 0 && (lap / block) % 2 == 1;
            const int n = lap < 0 ? 1 : SLOTS;
            for (int i = 0; i < n; ++i) {
                uint8_t *slot = (uint8_t *)ring.base + (size_t)i * SLOT_SIZE;
                if (plain) {
                    while (!plain_poll(slot, &counter)) {}
                } else {
                    ucs_status_t st;
                    while ((st = ucp_poll_ifunc(b.ucp, slot, SLOT_SIZE, &counter, b.worker)) == UCS_ERR_NO_MESSAGE) {}
                    if (st != UCS_OK) bench_die("ucp_poll_ifunc: %s", ucs_status_string(st));
                }
            }
            done += n;
            put_wait(&done, 8, peer_ack.addr, peer_ack.rkey);
        }
        if (counter != done) bench_die("rank 1 counted %llu of %llu", (unsigned long long)counter,
                                       (unsigned long long)done);
    } else {
        setenv("UCX_IFUNC_LIB_DIR", bench_beside_exe(""), 1);
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
        volatile uint64_t *acked = (volatile uint64_t *)ack.base;
        uint64_t sent = 0;
        double t[2] = {0, 0};
        const long nblocks = (laps + block - 1) / block;
        double *blocks[2] = {calloc(nblocks, sizeof(double)), calloc(nblocks, sizeof(double))};
        for (long lap = -1; lap < 2 * laps; ++lap) {
            const int plain_mode = lap >= 0 && (lap / block) % 2 == 1;
            const int n = lap < 0 ? 1 : SLOTS;
            const double t0 = bench_now_us();
            for (int i = 0; i < n; ++i) {
                const uint64_t at = peer_ring.addr + (uint64_t)i * SLOT_SIZE;
                if (plain_mode) {
                    ucp_request_param_t p;
                    p.op_attr_mask = 0;
                    ucs_status_ptr_t r = ucp_put_nbx(b.eps[1], plain, PLAIN_SIZE, at, peer_ring.rkey, &p);
                    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_put_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
                    if (r) ucp_request_free(r);
                } else {
                    ucs_status_t st = ucp_ifunc_send_nbix(b.eps[1], msg, at, peer_ring.rkey);
                    if (UCS_STATUS_IS_ERR(st)) bench_die("ucp_ifunc_send_nbix: %s", ucs_status_string(st));
                }
            }
            sent += n;
            while (*acked != sent) ucp_worker_progress(b.worker);
            if (lap >= 0) {
                const double dt = bench_now_us() - t0;
                t[plain_mode] += dt;
                blocks[plain_mode][lap / (2 * block)] += dt;
            }
        }
        const double n = (double)laps * SLOTS, per_block = (double)block * SLOTS;
        /* Whole blocks only for the medians (the last one may be short). */
        const long whole = laps / block;
        const struct bench_stats bi = bench_summarize(blocks[0], whole), bp = bench_summarize(blocks[1], whole);
        const double ifunc_med = per_block / bi.median, plain_med = per_block / bp.median; /* msg/us */
        printf("compat_msg_rate: %ld messages per mode, 1-byte payload, %d-byte frames, ring of %d, "
               "%ld blocks of %ld messages\n", laps * SLOTS, PLAIN_SIZE, SLOTS, whole, (long)per_block);
        printf("%-46s %12s %12s\n", "msg/s", "median block", "total");
        printf("%-46s %12.0f %12.0f\n", "ifunc (ucp_ifunc_send_nbix + ucp_poll_ifunc)", ifunc_med * 1e6, n / t[0] * 1e6);
        printf("%-46s %12.0f %12.0f\n", "plain (ucp_put_nbx + poll)", plain_med * 1e6, n / t[1] * 1e6);
        printf("ratio ifunc/plain: %.2f (median block), %.2f (total)\n", ifunc_med / plain_med, t[1] / t[0]);
        free(blocks[0]);
        free(blocks[1]);
        ucp_ifunc_msg_free(msg);
        ucp_deregister_ifunc(b.ucp, f);
    }
    bench_ucx_flush(&b);
    MPI_Barrier(MPI_COMM_WORLD);
    ucp_rkey_destroy(b.rank == 0 ? peer_ring.rkey : peer_ack.rkey);
    ucp_rkey_destroy(b.rank == 0 ? peer_ack.rkey : peer_ring.rkey);
    ucp_mem_unmap(b.ucp, ring.mem);
    ucp_mem_unmap(b.ucp, ack.mem);
    bench_ucx_fini(&b);
    MPI_Finalize();
    return 0;
}
