/* The shared start, checks, statistics and CSV of the applications
 * (app.h). */
#define _GNU_SOURCE
#include "app.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int app_rank, app_size;
static const char *g_name = "app";

void app_init(int *argc, char ***argv, const char *name)
{
    g_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &app_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &app_size);
}

static void vwarn(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s[rank %d]: ", g_name, app_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void app_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

void app_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void app_fail_mpi(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    app_die("%s: %s", what, msg);
}

void *app_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) app_die("out of memory (%zu bytes)", bytes);
    return p;
}

void *app_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) app_die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* The image @p file in this program's directory. */
static const char *beside_program(const char *file)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) return file;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    if (dir + strlen(file) + 1 > sizeof(path)) return file;
    strcpy(path + dir, file);
    return path;
}

MPIX_Ifunc app_load_ifunc(const char *path, const char *file, const char *entry)
{
    long len = -1;
    char *img = NULL;
    if (!path) path = beside_program(file);
    if (app_rank == 0) {
        FILE *f = fopen(path, "rb");
        int ok = f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
                 (img = malloc((size_t)len)) && fread(img, 1, (size_t)len, f) == (size_t)len;
        if (!ok) {
            app_warn("cannot read the image %s (build it with make apps, or give --image)", path);
            len = -1;
        }
        if (f) fclose(f);
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (len <= 0 || len > INT_MAX) {
        MPI_Finalize();
        exit(2);
    }
    if (app_rank != 0) img = app_alloc((size_t)len);
    MPI_Bcast(img, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPIX_Ifunc fn;
    int rc = MPIX_Ifunc_load_mem(img, (size_t)len, entry, &fn);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPIX_Ifunc_load_mem");
    free(img);
    return fn;
}

void app_exit_usage(void (*usage)(FILE *), int status)
{
    if (app_rank == 0) usage(status ? stderr : stdout);
    MPI_Finalize();
    exit(status);
}

long long app_number(const char *what, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    long long unit = 1;
    if (end != s && *end && !end[1]) {
        switch (*end) {
        case 'k': case 'K': unit = 1LL << 10; end++; break;
        case 'm': case 'M': unit = 1LL << 20; end++; break;
        case 'g': case 'G': unit = 1LL << 30; end++; break;
        default: break;
        }
    }
    if (errno || end == s || *end || v < lo / unit || v > hi / unit || v * unit < lo) {
        if (app_rank == 0) fprintf(stderr, "%s: %s: '%s' is not a number in [%lld, %lld]\n", g_name, what, s, lo, hi);
        MPI_Finalize();
        exit(2);
    }
    return v * unit;
}

unsigned app_variants(const char *list, const char *const *known, int n_known)
{
    unsigned mask = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < n_known && strcmp(t, known[i]) != 0) i++;
        if (i == n_known) {
            if (app_rank == 0) {
                fprintf(stderr, "%s: unknown variant '%s' (known:", g_name, t);
                for (int k = 0; k < n_known; ++k) fprintf(stderr, " %s", known[k]);
                fprintf(stderr, ")\n");
            }
            free(copy);
            MPI_Finalize();
            exit(2);
        }
        mask |= 1u << i;
    }
    free(copy);
    if (!mask) {
        if (app_rank == 0) fprintf(stderr, "%s: no variant to run\n", g_name);
        MPI_Finalize();
        exit(2);
    }
    return mask;
}

int app_round_order(unsigned mask, int n_known, int round, int *order)
{
    int n = 0, all[32];
    for (int i = 0; i < n_known; ++i)
        if (mask & (1u << i)) all[n++] = i;
    for (int i = 0; i < n; ++i) order[i] = all[(i + round) % n];
    return n;
}

struct app_counts app_counts_sum(const struct app_counts *mine)
{
    uint64_t in[3] = {mine->msgs, mine->bytes, mine->syncs}, out[3];
    MPI_Allreduce(in, out, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    struct app_counts sum = {out[0], out[1], out[2], {0}};
    MPI_Allreduce(mine->time, sum.time, APP_PHASES, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double app_quartile(double *v, int n, int q)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof(*v), by_value);
    /* Linear interpolation between the closest ranks. */
    double pos = (n - 1) * q / 4.0;
    int i = (int)pos;
    double f = pos - i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

double app_median(double *v, int n)
{
    return app_quartile(v, n, 2);
}

double app_hmean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i) s += 1.0 / v[i];
    return n > 0 ? n / s : NAN;
}

void app_csv_header(FILE *f)
{
    fprintf(f, "app,variant,transport,ranks,size,metric,value,unit,verified\n");
}

void app_csv_row(FILE *f, const char *app, const char *variant, const char *transport, long long size,
                 const char *metric, double value, const char *unit, int verified)
{
    fprintf(f, "%s,%s,%s,%d,%lld,%s,%.6g,%s,%d\n", app, variant, transport, app_size, size, metric, value, unit,
            verified);
}
