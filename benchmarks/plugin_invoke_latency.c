/* plugin_invoke_latency: what an injected function costs over a plain UCP
 * active message, on the same transport in the same run.
 *
 *   mpirun -n 2 benchmarks/plugin_invoke_latency [-i N] [--csv]
 *
 * Rank 0 measures round trips to rank 1, interleaved one by one so both
 * modes see the same machine noise:
 *   AM     ucp_am_send_nbx of 8 bytes to a handler predeployed at rank 1
 *          that sends them back (the floor for "run something there").
 *   ifunc  ucx_ifunc_invoke_nb of benchmarks/echo_ifunc.c with an 8-byte
 *          argument, which the ifunc replies. Its code is already cached at
 *          rank 1 (warm-up first), so each call carries only its hash.
 *   bitcode the same ifunc from an image with LLVM bitcode only
 *          (echo_ifunc_bc.xfn, xrdma-cc --emit=bitcode): rank 1 runs the
 *          code its JIT compiled.
 * Before that, the cold first invocations (the image travels and rank 1
 * loads it, or compiles its bitcode) are timed once; after it, invocations
 * that follow a flush of rank 1's code cache (need-code answer, resend with
 * the image, load or compile; with XRDMA_JIT_CACHE_DIR the compiled object
 * comes from disk) are timed.
 * Only rank 0 reads the image files.
 */
#include "bench_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>

enum {
    AM_PING = 0x50,    /* 0 -> 1: 8 bytes to echo */
    AM_PONG = 0x51,    /* 1 -> 0: the echo */
    AM_FLUSH = 0x52,   /* 0 -> 1: drop your code cache */
    AM_FLUSHED = 0x53, /* 1 -> 0: done */
};

static struct {
    struct bench_ucx *b;
    uint64_t out; /* echo send buffer (one message in flight) */
    volatile int got;
    uint64_t value;
    volatile int flush_asked;
} g;

static void send8(int to, unsigned id, uint64_t v)
{
    g.out = v;
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_am_send_nbx(g.b->eps[to], id, NULL, 0, &g.out, sizeof(g.out), &p);
    if (UCS_PTR_IS_ERR(r)) bench_die("ucp_am_send_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    if (r) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(g.b->worker);
        ucp_request_free(r);
    }
}

static ucs_status_t on_am(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    (void)header, (void)header_length, (void)param;
    unsigned id = (unsigned)(uintptr_t)arg;
    uint64_t v = 0;
    if (length == sizeof(v)) memcpy(&v, data, sizeof(v));
    switch (id) {
    case AM_PING: /* reply from the handler: nothing else in the way */
    {
        ucp_request_param_t p;
        p.op_attr_mask = 0;
        g.out = v;
        ucs_status_ptr_t r = ucp_am_send_nbx(g.b->eps[0], AM_PONG, NULL, 0, &g.out, sizeof(g.out), &p);
        if (UCS_PTR_IS_ERR(r)) bench_die("reply: %s", ucs_status_string(UCS_PTR_STATUS(r)));
        if (r) ucp_request_free(r); /* g.out stays put until the next ping */
        break;
    }
    case AM_PONG:
    case AM_FLUSHED:
        g.value = v;
        g.got = 1;
        break;
    case AM_FLUSH:
        g.flush_asked = 1;
        break;
    }
    return UCS_OK;
}

static void install(ucp_worker_h w, unsigned id)
{
    ucp_am_handler_param_t p;
    memset(&p, 0, sizeof(p));
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = id;
    p.cb = on_am;
    p.arg = (void *)(uintptr_t)id;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    bench_ucx_check(ucp_worker_set_am_recv_handler(w, &p), "ucp_worker_set_am_recv_handler");
}

/* Rank 1's serving loop asks this between progress calls. */
static void flush_hook(struct bench_ucx *b)
{
    if (!g.flush_asked) return;
    g.flush_asked = 0;
    ucx_ifunc_cache_flush(b->ictx);
    send8(0, AM_FLUSHED, 1);
}

static void wait_got(struct bench_ucx *b, long spin)
{
    long idle = 0;
    while (!g.got) {
        if (ucx_ifunc_progress(b->ictx)) idle = 0;
        else if (++idle > spin) sched_yield();
    }
}

static double am_rtt(struct bench_ucx *b, uint64_t v, long spin)
{
    g.got = 0;
    double t0 = bench_now_us();
    send8(1, AM_PING, v);
    wait_got(b, spin);
    double dt = bench_now_us() - t0;
    if (g.value != v) bench_die("AM echo %" PRIu64 " for %" PRIu64, g.value, v);
    return dt;
}

static double ifunc_rtt(struct bench_ucx *b, ucx_ifunc_h f, uint64_t v, long spin)
{
    struct bench_u64_reply e;
    memset(&e, 0, sizeof(e));
    double t0 = bench_now_us();
    ucx_ifunc_status_t st = ucx_ifunc_invoke_nb(f, b->eps[1], &v, sizeof(v), bench_u64_done, &e);
    if (st != UCX_IFUNC_INPROGRESS) bench_die("ucx_ifunc_invoke_nb: %s", ucx_ifunc_status_string(st));
    long idle = 0;
    while (!e.done) {
        if (ucx_ifunc_progress(b->ictx)) idle = 0;
        else if (++idle > spin) sched_yield();
    }
    double dt = bench_now_us() - t0;
    if (e.status != UCX_IFUNC_OK) bench_die("echo ifunc: %s (%s)", ucx_ifunc_status_string(e.status), e.message);
    if (e.value != v) bench_die("ifunc echo %" PRIu64 " for %" PRIu64, e.value, v);
    return dt;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n 2 plugin_invoke_latency [options]\n"
            "Round trip of a warm ucx_ifunc invocation against a plain UCP AM\n"
            "ping-pong (8 bytes, interleaved), plus the cold first invocation.\n\n"
            "  -i, --iterations N  measured round trips per mode (default 20000)\n"
            "  -w, --warmup N      unmeasured ones first (default 1000)\n"
            "      --reloads N     invocations after a target cache flush (default 20)\n"
            "      --image PATH    echo image (default: echo_ifunc.xfn beside this program)\n"
            "      --bitcode-image PATH\n"
            "                      the same with bitcode only (default: echo_ifunc_bc.xfn\n"
            "                      beside this program; \"none\" skips the bitcode mode)\n"
            "      --spin S        idle progress calls before sched_yield\n"
            "      --csv           CSV output\n"
            "  -h, --help          this text\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_name = "plugin_invoke_latency";
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long iters = 20000, warmup = 1000, reloads = 20, spin = -1;
    int csv = 0;
    const char *image = NULL, *bc_image = NULL;
    static const struct option lo[] = {
        {"iterations", required_argument, 0, 'i'}, {"warmup", required_argument, 0, 'w'},
        {"reloads", required_argument, 0, 'R'},    {"image", required_argument, 0, 'I'},
        {"spin", required_argument, 0, 'S'},       {"csv", no_argument, 0, 'C'},
        {"bitcode-image", required_argument, 0, 'B'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "i:w:h", lo, NULL)) != -1) {
        long v = 0;
        if (optarg && c != 'I' && c != 'B') {
            char *end;
            errno = 0;
            v = strtol(optarg, &end, 0);
            if (errno || *end || v < 0) c = '?';
        }
        switch (c) {
        case 'i': iters = v; break;
        case 'w': warmup = v; break;
        case 'R': reloads = v; break;
        case 'S': spin = v; break;
        case 'I': image = optarg; break;
        case 'B': bc_image = optarg; break;
        case 'C': csv = 1; break;
        case 'h':
            if (bench_rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        default:
            if (bench_rank == 0) usage(stderr);
            MPI_Finalize();
            return 2;
        }
    }
    if (size != 2 || iters <= 0) {
        if (bench_rank == 0) fprintf(stderr, "plugin_invoke_latency: needs exactly 2 ranks and -i > 0\n");
        MPI_Finalize();
        return 2;
    }
    if (spin < 0) spin = bench_choose_spin();

    struct bench_ucx b;
    bench_ucx_init(&b, NULL);
    g.b = &b;
    install(b.worker, AM_PING);
    install(b.worker, AM_PONG);
    install(b.worker, AM_FLUSH);
    install(b.worker, AM_FLUSHED);

    ucx_ifunc_h f = NULL, fb = NULL; /* native, bitcode-only */
    int ok = 1;
    double t_register = 0; /* read + parse + verify (SHA-256) at the origin */
    long image_bytes = -1;
    if (bench_rank == 0) {
        if (!image) image = beside_exe("echo_ifunc.xfn");
        double t0 = bench_now_us();
        ucx_ifunc_status_t st = ucx_ifunc_register_file(b.ictx, image, "echo", &f);
        t_register = bench_now_us() - t0;
        struct stat sb;
        if (stat(image, &sb) == 0) image_bytes = (long)sb.st_size;
        if (st != UCX_IFUNC_OK) {
            fprintf(stderr, "plugin_invoke_latency: cannot register %s: %s\n", image,
                    ucx_ifunc_status_string(st));
            ok = 0;
        }
        if (!bc_image) bc_image = beside_exe("echo_ifunc_bc.xfn");
        if (ok && strcmp(bc_image, "none") != 0) {
            st = ucx_ifunc_register_file(b.ictx, bc_image, "echo", &fb);
            if (st != UCX_IFUNC_OK) {
                fprintf(stderr, "plugin_invoke_latency: cannot register %s: %s\n", bc_image,
                        ucx_ifunc_status_string(st));
                ok = 0;
            }
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Request stop;
    if (bench_rank == 0) {
        double *am = malloc(iters * sizeof(double)), *fn = malloc(iters * sizeof(double));
        double *rl = malloc((reloads ? reloads : 1) * sizeof(double));
        double *bc = malloc(iters * sizeof(double)), *rlb = malloc((reloads ? reloads : 1) * sizeof(double));
        if (!am || !fn || !rl || !bc || !rlb) bench_die("out of memory");
        /* Connect the AM path first, so the cold number is about code, not
         * about UCX wire-up (both modes share the endpoint). */
        for (int k = 0; k < 10; ++k) am_rtt(&b, 1000000 + k, spin);
        double cold = ifunc_rtt(&b, f, 42, spin);
        double second = ifunc_rtt(&b, f, 43, spin);
        /* Bitcode: the first call ships the image and rank 1 compiles it. */
        double cold_bc = fb ? ifunc_rtt(&b, fb, 44, spin) : 0;
        double second_bc = fb ? ifunc_rtt(&b, fb, 45, spin) : 0;
        for (long i = 0; i < warmup; ++i) {
            am_rtt(&b, i, spin);
            ifunc_rtt(&b, f, i, spin);
            if (fb) ifunc_rtt(&b, fb, i, spin);
        }
        for (long i = 0; i < iters; ++i) {
            uint64_t v = 0x100000000ull + (uint64_t)i;
            if (i & 1) {
                fn[i] = ifunc_rtt(&b, f, v, spin);
                if (fb) bc[i] = ifunc_rtt(&b, fb, v, spin);
                am[i] = am_rtt(&b, v, spin);
            } else {
                am[i] = am_rtt(&b, v, spin);
                if (fb) bc[i] = ifunc_rtt(&b, fb, v, spin);
                fn[i] = ifunc_rtt(&b, f, v, spin);
            }
        }
        for (long i = 0; i < reloads; ++i) {
            g.got = 0;
            send8(1, AM_FLUSH, 0);
            wait_got(&b, spin);
            rl[i] = ifunc_rtt(&b, f, (uint64_t)i, spin);
            ifunc_rtt(&b, f, (uint64_t)i, spin); /* and warm again */
            if (fb) {
                rlb[i] = ifunc_rtt(&b, fb, (uint64_t)i, spin); /* need-code, resend, compile */
                ifunc_rtt(&b, fb, (uint64_t)i, spin);
            }
        }
        ucx_ifunc_stats_t s1;
        ucx_ifunc_stats(b.ictx, &s1);

        struct bench_stats sa = bench_summarize(am, iters), sf = bench_summarize(fn, iters);
        struct bench_stats sr = bench_summarize(rl, reloads);
        struct bench_stats sb = bench_summarize(bc, fb ? iters : 0), srb = bench_summarize(rlb, fb ? reloads : 0);
        const char *tls = getenv("UCX_TLS");
        if (csv) {
            printf("mode,ucx_tls,samples,median_us,mean_us,min_us,p99_us\n");
            printf("ucp_am_pingpong,%s,%ld,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", iters,
                   sa.median, sa.mean, sa.min, sa.p99);
            printf("ifunc_invoke_warm,%s,%ld,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", iters,
                   sf.median, sf.mean, sf.min, sf.p99);
            printf("ifunc_invoke_cold,%s,1,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", cold, cold,
                   cold, cold);
            printf("image_register,%s,1,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", t_register,
                   t_register, t_register, t_register);
            if (reloads)
                printf("ifunc_invoke_after_cache_flush,%s,%ld,%.3f,%.3f,%.3f,%.3f\n",
                       tls ? tls : "default", reloads, sr.median, sr.mean, sr.min, sr.p99);
            if (fb) {
                printf("ifunc_bitcode_invoke_warm,%s,%ld,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", iters,
                       sb.median, sb.mean, sb.min, sb.p99);
                printf("ifunc_bitcode_invoke_cold,%s,1,%.3f,%.3f,%.3f,%.3f\n", tls ? tls : "default", cold_bc,
                       cold_bc, cold_bc, cold_bc);
                if (reloads)
                    printf("ifunc_bitcode_invoke_after_cache_flush,%s,%ld,%.3f,%.3f,%.3f,%.3f\n",
                           tls ? tls : "default", reloads, srb.median, srb.mean, srb.min, srb.p99);
            }
        } else {
            printf("# XRDMA plugin invoke latency (ucx_ifunc %s)\n", ucx_ifunc_version());
            printf("# 2 ranks, UCX_TLS=%s, 8-byte payload, %ld round trips per mode interleaved"
                   " (+%ld warm-up), idle spin %ld\n",
                   tls ? tls : "(default)", iters, warmup, spin);
            printf("# %-30s %10s %10s %10s %10s\n", "Mode", "Median(us)", "Mean(us)", "Min(us)",
                   "P99(us)");
            printf("  %-30s %10.2f %10.2f %10.2f %10.2f\n", "UCP AM ping-pong (predeployed)", sa.median,
                   sa.mean, sa.min, sa.p99);
            printf("  %-30s %10.2f %10.2f %10.2f %10.2f\n", "ifunc invoke round trip (warm)", sf.median,
                   sf.mean, sf.min, sf.p99);
            if (fb)
                printf("  %-30s %10.2f %10.2f %10.2f %10.2f\n", "ifunc from bitcode (JIT, warm)", sb.median,
                       sb.mean, sb.min, sb.p99);
            printf("# ratio ifunc/AM: median %.2f, mean %.2f (ifunc extra per round trip: %.2f us median)\n",
                   sf.median / sa.median, sf.mean / sa.mean, sf.median - sa.median);
            printf("# cold first invocation (image shipped, loaded at rank 1): %.1f us (the next one: %.1f us)\n",
                   cold, second);
            if (reloads)
                printf("# after a flush of rank 1's code cache (need-code, resend with image, load):"
                       " median %.1f us, mean %.1f us over %ld\n",
                       sr.median, sr.mean, reloads);
            if (fb) {
                printf("# bitcode-only image: cold first invocation (image shipped, JIT-compiled at rank 1):"
                       " %.1f us (the next one: %.1f us)\n",
                       cold_bc, second_bc);
                if (reloads)
                    printf("# bitcode after a cache flush (need-code, resend, compile%s): median %.1f us,"
                           " mean %.1f us over %ld\n",
                           getenv("XRDMA_JIT_CACHE_DIR") ? " or load from XRDMA_JIT_CACHE_DIR" : " again",
                           srb.median, srb.mean, reloads);
            }
            printf("# registering the %ld-byte image at rank 0 (read, parse, SHA-256 check): %.1f us\n",
                   image_bytes, t_register);
            printf("# image sends: %" PRIu64 " of %" PRIu64 " invocations carried the code\n",
                   s1.code_sends, s1.invocations_sent);
        }
        fflush(stdout);
        free(am);
        free(fn);
        free(rl);
        free(bc);
        free(rlb);
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &stop);
    bench_serve_until(&b, &stop, spin, bench_rank == 1 ? flush_hook : NULL);

    if (f) ucx_ifunc_deregister(f);
    if (fb) ucx_ifunc_deregister(fb);
    bench_ucx_fini(&b);
    MPI_Finalize();
    return 0;
}
