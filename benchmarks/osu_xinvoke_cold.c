/* osu_xinvoke_cold: what the first MPIX_Xinvoke of an image costs at a
 * target that never had it (the image travels, the target checks and loads
 * it: dlopen of the native part, or JIT compilation of the bitcode part),
 * for images of 4 KiB .. 1 MiB (benchmarks/gen-cold-ifunc pads them with
 * incompressible data; a native image is never below ~16 KiB, the size of
 * an empty shared object).
 *
 * Each repetition creates a new window, whose target has an empty code
 * cache, and rank 0 then times
 *   cold   MPIX_Xinvoke + MPI_Win_flush to rank 1: ship + load + run;
 *   warm   the same again (the code is cached: only its hash travels);
 * before them, an invocation at rank 0 itself registers the image with the
 * window (origin-side parse and SHA-256 check) so that the cold number is
 * the target's first use. Printed beside it, from the same run:
 *   ship   a plain UCP active-message round trip carrying as many bytes as
 *          the image (the floor for shipping it).
 *
 *   mpirun -n 2 osu_xinvoke_cold [--kinds native,bitcode] [--sizes 4k,16k,...]
 */
#include "osu_common.h"

static const char *const all_sizes[] = {"4k", "16k", "64k", "256k", "1m"};
static const char *const all_kinds[] = {"native", "bitcode"};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n 2 osu_xinvoke_cold [options]\n"
            "First use (ship + load) of ifunc images of several sizes at a target, native\n"
            "and bitcode, against a UCP active-message round trip of the image's size.\n\n"
            "  -r, --reps N        repetitions (new window each) per image (default 10;\n"
            "                      half of that from 256 KiB on)\n"
            "      --kinds LIST    native,bitcode (default both)\n"
            "      --sizes LIST    4k,16k,64k,256k,1m (default all)\n"
            "      --dir DIR       where the images cold_<kind>_<size>.xfn are (default:\n"
            "                      beside this program)\n"
            "      --spin S        idle UCP progress calls before sched_yield\n"
            "      --csv           CSV output\n"
            "  -h, --help          this text\n");
}

static int listed(const char *list, const char *item)
{
    if (!list) return 1;
    size_t n = strlen(item);
    for (const char *p = list; (p = strstr(p, item)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static double am_ship_rtt(size_t bytes, int reps)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (bench_rank != 0) {
        osu_am_serve();
        return 0;
    }
    double *t = malloc((size_t)reps * sizeof(double));
    osu_am.replies = 0;
    for (int i = 0; i < reps + 2; ++i) {
        double t0 = bench_now_us();
        osu_am_send(OSU_AM_REQ, osu_am.obuf, bytes, 0, 1, 1);
        osu_am_wait_replies(i + 1);
        if (i >= 2) t[i - 2] = bench_now_us() - t0;
    }
    osu_am_stop_target();
    double m = bench_summarize(t, (size_t)reps).median;
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_name = "osu_xinvoke_cold";
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long reps = 10, spin = -1;
    int csv = 0;
    const char *kinds = NULL, *sizes = NULL, *dir = NULL;
    static const struct option lo[] = {{"reps", required_argument, 0, 'r'}, {"kinds", required_argument, 0, 'K'},
                                       {"sizes", required_argument, 0, 'Z'}, {"dir", required_argument, 0, 'D'},
                                       {"spin", required_argument, 0, 'S'},  {"csv", no_argument, 0, 'C'},
                                       {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "r:h", lo, NULL)) != -1) {
        switch (c) {
        case 'r': reps = atol(optarg), bad = reps <= 0; break;
        case 'S': spin = atol(optarg); break;
        case 'K': kinds = optarg; break;
        case 'Z': sizes = optarg; break;
        case 'D': dir = optarg; break;
        case 'C': csv = 1; break;
        case 'h':
            if (bench_rank == 0) usage(stdout);
            MPI_Finalize();
            return 0;
        default: bad = 1;
        }
    }
    if (bad || optind < argc || nranks != 2) {
        if (bench_rank == 0) usage(stderr);
        MPI_Finalize();
        return 2;
    }
    if (spin < 0) spin = bench_choose_spin();
    osu_am_init(2u << 20, spin);

    if (bench_rank == 0) {
        if (csv)
            printf("benchmark,transport,kind,size,image_bytes,reps,cold_median_us,cold_mean_us,cold_min_us,"
                   "warm_median_us,ship_am_us,origin_register_us,cold_over_ship\n");
        else {
            printf("# OSU MPI-XRDMA Invoke Cold Start Test (XRDMA %s)\n", MPIX_XRDMA_VERSION);
            printf("# UCX_TLS=%s; first MPIX_Xinvoke + MPI_Win_flush at a target with an empty code cache\n",
                   getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)");
            printf("# ship = UCP AM round trip carrying the image's bytes; register = origin's first use\n"
                   "# (parse, SHA-256) timed at rank 0 itself; times are medians over the repetitions, in us\n");
            printf("# %-8s %6s %10s %5s %12s %12s %12s %10s %12s\n", "Kind", "Size", "Image(B)", "Reps", "Cold(us)",
                   "Warm(us)", "Ship(us)", "Cold/ship", "Register(us)");
        }
        fflush(stdout);
    }
    int failed = 0;
    for (size_t k = 0; k < 2; ++k) {
        if (!listed(kinds, all_kinds[k])) continue;
        for (size_t z = 0; z < sizeof(all_sizes) / sizeof(*all_sizes); ++z) {
            if (!listed(sizes, all_sizes[z])) continue;
            char name[64], path[PATH_MAX];
            snprintf(name, sizeof(name), "cold_%s_%s.xfn", all_kinds[k], all_sizes[z]);
            if (dir) snprintf(path, sizeof(path), "%s/%s", dir, name);
            else snprintf(path, sizeof(path), "%s", beside_exe(name));
            long image_bytes = 0;
            MPIX_Ifunc f = MPIX_IFUNC_NULL;
            int ok = 1;
            if (bench_rank == 0) {
                FILE *fp = fopen(path, "rb");
                if (fp) fseek(fp, 0, SEEK_END), image_bytes = ftell(fp), fclose(fp);
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                if (MPIX_Ifunc_load(path, "cold", &f) != MPI_SUCCESS) {
                    fprintf(stderr, "osu_xinvoke_cold: cannot load %s\n", path);
                    ok = 0;
                }
            }
            MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (!ok) {
                failed = 1;
                continue;
            }
            long n = z >= 3 ? (reps + 1) / 2 : reps;
            double *cold = calloc((size_t)n, sizeof(double)), *warm = calloc((size_t)n, sizeof(double));
            double *reg = calloc((size_t)n, sizeof(double));
            for (long r = 0; r < n; ++r) {
                MPI_Win win;
                char *base;
                MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
                MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
                if (bench_rank == 0) {
                    unsigned idx = (unsigned)r;
                    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
                    double t0 = bench_now_us();
                    osu_check(MPIX_Xinvoke(f, &idx, sizeof(idx), 0, win), "MPIX_Xinvoke (self)");
                    osu_check(MPI_Win_flush(0, win), "MPI_Win_flush (self)");
                    double t1 = bench_now_us();
                    osu_check(MPIX_Xinvoke(f, &idx, sizeof(idx), 1, win), "MPIX_Xinvoke (cold)");
                    osu_check(MPI_Win_flush(1, win), "MPI_Win_flush (cold)");
                    double t2 = bench_now_us();
                    osu_check(MPIX_Xinvoke(f, &idx, sizeof(idx), 1, win), "MPIX_Xinvoke (warm)");
                    osu_check(MPI_Win_flush(1, win), "MPI_Win_flush (warm)");
                    double t3 = bench_now_us();
                    MPI_Win_unlock_all(win);
                    reg[r] = t1 - t0, cold[r] = t2 - t1, warm[r] = t3 - t2;
                }
                MPI_Barrier(MPI_COMM_WORLD); /* rank 1 runs the code in here */
                MPI_Win_free(&win);
            }
            double ship = am_ship_rtt(image_bytes > 0 ? (size_t)image_bytes : 1, 20);
            if (bench_rank == 0) {
                double mean = 0;
                for (long r = 0; r < n; ++r) mean += cold[r];
                mean /= (double)n;
                struct bench_stats sc = bench_summarize(cold, (size_t)n);
                struct bench_stats sw = bench_summarize(warm, (size_t)n);
                struct bench_stats sr = bench_summarize(reg, (size_t)n);
                if (csv)
                    printf("osu_xinvoke_cold,%s,%s,%s,%ld,%ld,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f\n", osu_tls(),
                           all_kinds[k], all_sizes[z], image_bytes, n, sc.median, mean, sc.min, sw.median, ship,
                           sr.median, sc.median / ship);
                else
                    printf("  %-8s %6s %10ld %5ld %12.1f %12.1f %12.1f %10.2f %12.1f\n", all_kinds[k], all_sizes[z],
                           image_bytes, n, sc.median, sw.median, ship, sc.median / ship, sr.median);
                fflush(stdout);
            }
            free(cold), free(warm), free(reg);
            MPIX_Ifunc_free(&f);
        }
    }
    osu_am_fini();
    MPI_Finalize();
    return failed;
}
