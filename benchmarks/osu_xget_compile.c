/* osu_xget_compile: does a target keep serving while it compiles bitcode
 * (out of process)? 3 ranks, rank 0 the target. Each repetition makes a new window
 * (the target compiles the image again) and times
 *   quiet    rank 2: warm MPIX_Xget + MPI_Win_flush of 8 B to rank 0 (native
 *            image), nothing else going on;
 *   compile  rank 1: the first MPIX_Xinvoke + MPI_Win_flush to rank 0 of a
 *            ~1 MiB bitcode-only image (cold_bitcode_1m.xfn): ship, compile,
 *            link and run, the "compile time"; meanwhile rank 2 runs the same
 *            Xgets back to back, and those that started after rank 1's
 *            Xinvoke and ended before its flush returned are "during the
 *            compile".
 * Two modes alternate repetition by repetition in the same run: helper (the
 * compile helper, default: the target's progress never waits for it) and
 * inprocess (XRDMA_JIT_HELPER=none at rank 0: the compile runs inside the
 * target's progress, which is how compiles ran before the compile helper).
 * Per mode: compile time (median), Xget latency during the compile (median,
 * worst) against the quiet one (median, worst) of the same run. A first
 * repetition per mode is reported apart ("first"): in it the target loads
 * LLVM (the JIT module) and starts the helper, once per process.
 *
 *   mpirun -n 3 osu_xget_compile [-r REPS] [--csv]
 */
#include "osu_common.h"

#define MAX_DURING (1 << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n 3 osu_xget_compile [options]\n"
            "Warm MPIX_Xget latency from rank 2 to rank 0 while rank 0 compiles a cold 1 MiB\n"
            "bitcode image from rank 1, against the same Xget with nothing compiling.\n\n"
            "  -r, --reps N        repetitions per mode (default 4)\n"
            "  -n, --quiet N       quiet Xgets per repetition (default 500)\n"
            "      --modes LIST    helper,inprocess (default both)\n"
            "      --dir DIR       where cold_bitcode_1m.xfn and osu_ifuncs.xfn are (default:\n"
            "                      beside this program)\n"
            "      --csv           CSV output\n"
            "  -h, --help          this text\n");
}

static const char *image_path(const char *dir, const char *name)
{
    static char path[2][PATH_MAX];
    static int k;
    k ^= 1;
    if (dir) snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
    else snprintf(path[k], sizeof(path[k]), "%s", beside_exe(name));
    return path[k];
}

static double xget(MPIX_Ifunc f, uint64_t *out, MPI_Win win)
{
    double t0 = bench_now_us();
    osu_check(MPIX_Xget(out, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, f, NULL, 0, win), "MPIX_Xget");
    osu_check(MPI_Win_flush(0, win), "MPI_Win_flush (Xget)");
    return bench_now_us() - t0;
}

struct mode_stats {
    double *compile, *quiet, *during;
    size_t n_compile, n_quiet, n_during;
    double first_compile, first_max;  /* the first repetition's */
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_name = "osu_xget_compile";
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long reps = 4, quiet_n = 500;
    int csv = 0;
    const char *dir = NULL, *modes = "helper,inprocess";
    static const struct option lo[] = {{"reps", required_argument, 0, 'r'}, {"quiet", required_argument, 0, 'n'},
                                       {"modes", required_argument, 0, 'M'}, {"dir", required_argument, 0, 'D'},
                                       {"csv", no_argument, 0, 'C'},         {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c, bad = 0, help = 0;
    while (!bad && !help && (c = getopt_long(argc, argv, "r:n:h", lo, NULL)) != -1) {
        if (c == 'r') reps = atol(optarg), bad = reps <= 0;
        else if (c == 'n') quiet_n = atol(optarg), bad = quiet_n <= 0;
        else if (c == 'M') modes = optarg;
        else if (c == 'D') dir = optarg;
        else if (c == 'C') csv = 1;
        else help = c == 'h', bad = !help;
    }
    if (help || bad || optind < argc || nranks != 3) {
        if (bench_rank == 0) usage(help ? stdout : stderr);
        MPI_Finalize();
        return help ? 0 : 2;
    }
    const char *mode_names[2] = {"helper", "inprocess"};
    int mode_on[2] = {strstr(modes, "helper") != NULL, strstr(modes, "inprocess") != NULL};
    struct mode_stats st[2];
    memset(st, 0, sizeof(st));
    for (int m = 0; m < 2; ++m) {
        st[m].compile = calloc((size_t)reps, sizeof(double));
        st[m].quiet = calloc((size_t)(reps * quiet_n), sizeof(double));
        st[m].during = calloc(MAX_DURING, sizeof(double));
    }
    MPIX_Ifunc fetch = MPIX_IFUNC_NULL, cold = MPIX_IFUNC_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (bench_rank == 2) osu_check(MPIX_Ifunc_load(image_path(dir, "osu_ifuncs.xfn"), "osu_fetch", &fetch), "load osu_ifuncs.xfn");
    if (bench_rank == 1)
        osu_check(MPIX_Ifunc_load(image_path(dir, "cold_bitcode_1m.xfn"), "cold", &cold), "load cold_bitcode_1m.xfn");

    uint64_t *base;
    MPI_Alloc_mem(64, MPI_INFO_NULL, &base);
    memset(base, 0, 64);
    for (long r = -1; r < reps; ++r) { /* -1: the first, apart */
        for (int m = 0; m < 2; ++m) {
            if (!mode_on[m]) continue;
            if (bench_rank == 0) {  /* read by the target when the compile starts */
                if (m == 1) setenv("XRDMA_JIT_HELPER", "none", 1);
                else unsetenv("XRDMA_JIT_HELPER");
            }
            /* MPI_Win_create memory: never mapped by a node peer, so every
             * X-op is a message the target serves. */
            MPI_Win win;
            MPI_Win_create(base, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
            uint64_t out = 0;
            if (bench_rank != 0) MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
            if (bench_rank == 2)
                for (int i = 0; i < 10; ++i) xget(fetch, &out, win); /* ships the code; warm */
            MPI_Barrier(MPI_COMM_WORLD);
            if (bench_rank == 2 && r >= 0)
                for (long i = 0; i < quiet_n; ++i) st[m].quiet[st[m].n_quiet++] = xget(fetch, &out, win);
            MPI_Barrier(MPI_COMM_WORLD);
            if (bench_rank == 1) {
                unsigned idx = (unsigned)r;
                double span[2];
                span[0] = bench_now_us();
                osu_check(MPIX_Xinvoke(cold, &idx, sizeof(idx), 0, win), "MPIX_Xinvoke (cold)");
                osu_check(MPI_Win_flush(0, win), "MPI_Win_flush (cold)");
                span[1] = bench_now_us();
                MPI_Send(span, 2, MPI_DOUBLE, 2, 0, MPI_COMM_WORLD);
            } else if (bench_rank == 2) {
                double span[2], *t = malloc(2 * sizeof(double) * MAX_DURING);
                size_t k = 0;
                MPI_Request req;
                int done = 0;
                MPI_Irecv(span, 2, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &req);
                while (!done) {
                    double s = bench_now_us(), lat = xget(fetch, &out, win);
                    if (k < MAX_DURING) t[2 * k] = s, t[2 * k + 1] = lat, ++k;
                    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                }
                if (r < 0) st[m].first_compile = span[1] - span[0];
                else st[m].compile[st[m].n_compile++] = span[1] - span[0];
                for (size_t i = 0; i < k; ++i) {
                    if (t[2 * i] < span[0] || t[2 * i] + t[2 * i + 1] > span[1]) continue;
                    if (r < 0) st[m].first_max = t[2 * i + 1] > st[m].first_max ? t[2 * i + 1] : st[m].first_max;
                    else if (st[m].n_during < MAX_DURING) st[m].during[st[m].n_during++] = t[2 * i + 1];
                }
                free(t);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (bench_rank != 0) MPI_Win_unlock_all(win);
            MPI_Win_free(&win);
        }
    }
    if (bench_rank == 2) {
        if (csv)
            printf("benchmark,transport,mode,reps,compile_median_us,compile_max_us,during_n,during_median_us,"
                   "during_max_us,quiet_n,quiet_median_us,quiet_max_us,during_max_over_compile,"
                   "during_median_over_quiet,first_compile_us,first_during_max_us\n");
        else
            printf("# OSU MPI-XRDMA Xget during a bitcode compile (XRDMA %s), UCX_TLS=%s\n"
                   "# rank 2 -> rank 0 MPIX_Xget 8 B while rank 1's cold 1 MiB bitcode image compiles at rank 0\n"
                   "# %-10s %5s %12s %8s %12s %12s %12s %12s %10s %14s\n",
                   MPIX_XRDMA_VERSION, osu_tls(), "Mode", "Reps", "Compile(us)", "During", "Med(us)", "Worst(us)",
                   "QuietMed", "QuietWorst", "Worst/comp", "First(us/wst)");
        for (int m = 0; m < 2; ++m) {
            if (!mode_on[m]) continue;
            struct mode_stats *s = &st[m];
            double cmax = 0, dmax = 0, qmax = 0;
            for (size_t i = 0; i < s->n_compile; ++i) cmax = s->compile[i] > cmax ? s->compile[i] : cmax;
            for (size_t i = 0; i < s->n_during; ++i) dmax = s->during[i] > dmax ? s->during[i] : dmax;
            for (size_t i = 0; i < s->n_quiet; ++i) qmax = s->quiet[i] > qmax ? s->quiet[i] : qmax;
            struct bench_stats sc = bench_summarize(s->compile, s->n_compile);
            struct bench_stats sd = bench_summarize(s->during, s->n_during);
            struct bench_stats sq = bench_summarize(s->quiet, s->n_quiet);
            if (csv)
                printf("osu_xget_compile,%s,%s,%zu,%.1f,%.1f,%zu,%.2f,%.1f,%zu,%.2f,%.1f,%.4f,%.3f,%.1f,%.1f\n",
                       osu_tls(), mode_names[m], s->n_compile, sc.median, cmax, s->n_during, sd.median, dmax,
                       s->n_quiet, sq.median, qmax, sc.median > 0 ? dmax / sc.median : 0,
                       sq.median > 0 ? sd.median / sq.median : 0, s->first_compile, s->first_max);
            else
                printf("  %-10s %5zu %12.1f %8zu %12.2f %12.1f %12.2f %12.1f %10.4f %7.0f/%.0f\n", mode_names[m],
                       s->n_compile, sc.median, s->n_during, sd.median, dmax, sq.median, qmax,
                       sc.median > 0 ? dmax / sc.median : 0, s->first_compile, s->first_max);
        }
        fflush(stdout);
    }
    for (int m = 0; m < 2; ++m) free(st[m].compile), free(st[m].quiet), free(st[m].during);
    if (fetch != MPIX_IFUNC_NULL) MPIX_Ifunc_free(&fetch);
    if (cold != MPIX_IFUNC_NULL) MPIX_Ifunc_free(&cold);
    MPI_Free_mem(base);
    MPI_Finalize();
    return 0;
}
