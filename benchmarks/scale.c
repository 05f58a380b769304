/* scale: what X-operations cost per rank as a job grows. Every rank
 * X-operates on every other (--pattern all) or on its two ring neighbours
 * (--pattern ring) through several windows of several kinds, and the job
 * reports per rank: resident memory, file descriptors and sockets, System V
 * segments on the node, and the time window set-up took. The same program
 * with MPI_Accumulate in place of MPIX_Xput (--mode accumulate) is the
 * baseline. Exact totals are checked in both modes: a wrong or lost update
 * fails the run.
 *
 *   scale [--mode xrdma|accumulate] [--windows N] [--pattern all|ring]
 *         [--rounds R] [--image PATH] [--csv]
 *
 * Segments are counted node-wide (/proc/sysvipc/shm): run the job in an IPC
 * namespace of its own (unshare --ipc mpirun ...) to count only its own.
 * With XRDMA_STATS=1 each rank also prints XRDMA's counters at MPI_Finalize
 * (contexts, images and code bytes sent, endpoints, ring memory). */
#include <mpi.h>
#include <mpix_xrdma.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum kind { K_ALLOCATE, K_CREATE, K_DYNAMIC };
static const char *kind_name[] = {"allocate", "create", "dynamic"};

struct win {
    enum kind kind;
    MPI_Win win;
    int64_t *slots;       /* one per rank of MPI_COMM_WORLD */
    MPI_Aint *addr;       /* dynamic: every rank's attached address */
};

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "scale: %s: %s\n", what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CHECK(call)                            \
    do {                                       \
        int rc_ = (call);                      \
        if (rc_ != MPI_SUCCESS) die(#call, rc_); \
    } while (0)

/* VmRSS of this process, in KiB. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld", &v) == 1) break;
    if (f) fclose(f);
    return v;
}

/* Open descriptors of this process, and how many of them are sockets. */
static void fds(long *all, long *sockets)
{
    *all = *sockets = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], target[64];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ++*all;
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n > 0 && strncmp(target, "socket:", 7) == 0) ++*sockets;
    }
    if (d) closedir(d);
}

/* System V shared memory segments on this node (this IPC namespace). */
static long sysv_segments(void)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    char line[512];
    long n = -1;  /* (its first line is a header) */
    while (f && fgets(line, sizeof(line), f)) ++n;
    if (f) fclose(f);
    return n < 0 ? 0 : n;
}

int main(int argc, char **argv)
{
    const char *mode = "xrdma", *pattern = "all", *image = NULL;
    int nwin = 5, rounds = 4, csv = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc) mode = argv[++i];
        else if (!strcmp(argv[i], "--windows") && i + 1 < argc) nwin = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pattern") && i + 1 < argc) pattern = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--image") && i + 1 < argc) image = argv[++i];
        else if (!strcmp(argv[i], "--csv")) csv = 1;
        else {
            fprintf(stderr, "usage: %s [--mode xrdma|accumulate] [--windows N] [--pattern all|ring] "
                            "[--rounds R] [--image PATH] [--csv]\n", argv[0]);
            return 2;
        }
    }
    const int xrdma = strcmp(mode, "accumulate") != 0;
    const int ring = strcmp(pattern, "ring") == 0;
    if (nwin < 1 || rounds < 1) return 2;

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    char path[4096];
    if (!image) {  /* beside this program */
        snprintf(path, sizeof(path), "%s", argv[0]);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
                 "osu_ifuncs.xfn");
        image = path;
    }
    MPIX_Ifunc add = MPIX_IFUNC_NULL;
    if (xrdma) CHECK(MPIX_Ifunc_load(image, "osu_add", &add));

    const long seg0 = sysv_segments();
    MPI_Barrier(MPI_COMM_WORLD);
    struct win *w = calloc((size_t)nwin, sizeof(*w));
    const MPI_Aint bytes = (MPI_Aint)size * 8;
    double t0 = MPI_Wtime();
    for (int i = 0; i < nwin; ++i) {
        w[i].kind = i == 3 ? K_DYNAMIC : i % 2 == 0 ? K_ALLOCATE : K_CREATE;
        switch (w[i].kind) {
        case K_ALLOCATE:
            CHECK(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w[i].slots, &w[i].win));
            break;
        case K_CREATE:
            w[i].slots = malloc((size_t)bytes);
            CHECK(MPI_Win_create(w[i].slots, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w[i].win));
            break;
        case K_DYNAMIC:
            w[i].slots = malloc((size_t)bytes);
            CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w[i].win));
            CHECK(MPI_Win_attach(w[i].win, w[i].slots, bytes));
            break;
        }
        memset(w[i].slots, 0, (size_t)bytes);
        w[i].addr = malloc(sizeof(MPI_Aint) * (size_t)size);
        MPI_Aint mine;
        MPI_Get_address(w[i].slots, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, w[i].addr, 1, MPI_AINT, MPI_COMM_WORLD);
        MPI_Win_set_errhandler(w[i].win, MPI_ERRORS_RETURN);
    }
    const double setup = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every origin adds (its rank + 1) into its own slot at each target,
     * rounds times, in every window. */
    t0 = MPI_Wtime();
    const int64_t v = rank + 1;
    for (int i = 0; i < nwin; ++i) {
        CHECK(MPI_Win_lock_all(0, w[i].win));
        for (int r = 0; r < rounds; ++r)
            for (int k = 0; k < (ring ? 2 : size); ++k) {
                const int t = ring ? (rank + (k ? size - 1 : 1)) % size : (rank + k) % size;
                const MPI_Aint disp = w[i].kind == K_DYNAMIC ? w[i].addr[t] + (MPI_Aint)rank * 8 : rank;
                if (xrdma)
                    CHECK(MPIX_Xput(&v, 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, add, NULL, 0, w[i].win));
                else
                    CHECK(MPI_Accumulate(&v, 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, MPI_SUM, w[i].win));
            }
        CHECK(MPI_Win_flush_all(w[i].win));
        CHECK(MPI_Win_unlock_all(w[i].win));
    }
    const double ops = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Exact totals at this rank, in every window. */
    long bad = 0;
    for (int i = 0; i < nwin; ++i) {
        CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w[i].win));
        for (int o = 0; o < size; ++o) {
            const int sends = ring ? (o == (rank + size - 1) % size) + (o == (rank + 1) % size) : 1;
            const int64_t want = (int64_t)rounds * (o + 1) * sends;
            if (w[i].slots[o] != want) {
                if (bad < 5)
                    fprintf(stderr, "scale: rank %d window %d (%s) slot %d: %lld, want %lld\n", rank, i,
                            kind_name[w[i].kind], o, (long long)w[i].slots[o], (long long)want);
                ++bad;
            }
        }
        CHECK(MPI_Win_unlock(rank, w[i].win));
    }

    long mine[4] = {rss_kib(), 0, 0, bad}, sum[4], max[4];
    fds(&mine[1], &mine[2]);
    const long seg = sysv_segments();
    MPI_Reduce(mine, sum, 4, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, max, 4, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    double tmax[2], t[2] = {setup, ops};
    MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (csv)
            printf("mode,ranks,windows,pattern,rss_kib_mean,rss_kib_max,fds_mean,sockets_mean,segments,"
                   "segments_before,setup_ms,ops_ms,wrong\n"
                   "%s,%d,%d,%s,%ld,%ld,%.1f,%.1f,%ld,%ld,%.2f,%.2f,%ld\n",
                   mode, size, nwin, pattern, sum[0] / size, max[0], (double)sum[1] / size,
                   (double)sum[2] / size, seg, seg0, tmax[0] * 1e3, tmax[1] * 1e3, sum[3]);
        else
            printf("scale: %s, %d ranks, %d windows, pattern %s: RSS mean %.1f MB (max %.1f), fds %.1f "
                   "(sockets %.1f) per rank, %ld System V segments on the node (%ld before the windows), "
                   "window set-up %.2f ms, X-operations %.2f ms; %s\n",
                   mode, size, nwin, pattern, sum[0] / 1024.0 / size, max[0] / 1024.0, (double)sum[1] / size,
                   (double)sum[2] / size, seg, seg0, tmax[0] * 1e3, tmax[1] * 1e3,
                   sum[3] ? "WRONG TOTALS" : "totals checked: ok");
    }
    for (int i = 0; i < nwin; ++i) {
        if (w[i].kind == K_DYNAMIC) MPI_Win_detach(w[i].win, w[i].slots);
        MPI_Win_free(&w[i].win);
        if (w[i].kind != K_ALLOCATE) free(w[i].slots);
        free(w[i].addr);
    }
    free(w);
    if (add) MPIX_Ifunc_free(&add);
    long any = 0;
    MPI_Allreduce(&mine[3], &any, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
