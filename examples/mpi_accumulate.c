/* mpi_accumulate: a user-defined accumulate with MPIX_Xput, from all ranks
 * into all ranks at once.
 *
 * Every rank owns a histogram of a key range in its window (MPI_Win_allocate):
 * bins of {count, sum, min, max} of the values whose key falls in the bin.
 * Every rank produces (key, value) samples for every rank's key range and
 * ships them in batches with MPIX_Xput; the ifunc (mpi_accumulate_ifunc.c)
 * runs at the owner, picks each sample's bin and updates the four fields.
 * All ranks send to all ranks (themselves included) concurrently, into the
 * same bins: the totals are exact only if every batch is applied atomically.
 *
 * MPI_Accumulate cannot express this in one call: it takes one predefined
 * op applied element by element at a displacement the origin computed; the
 * same histogram would need the origin to find the bin and three
 * accumulates per sample (SUM on count and sum, MIN, MAX).
 *
 * Every rank recomputes the histogram it should hold from the same
 * generators and compares every bin exactly; the exit status is 1 if one
 * differs. Only rank 0 reads the image file; it broadcasts the bytes and
 * every rank loads them with MPIX_Ifunc_load_mem (they all send).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beside_exe.h"     /* the image beside the program */
#include "mpi_accumulate.h" /* a bin, a sample, the arguments */
#include "mpi_example.h"    /* the start, error messages, splitmix64() */

#define IMAGE_NAME "mpi_accumulate_ifunc.xfn"
#define BIN_WIDTH 1000
#define VALUE_RANGE 1000000 /* values in [-VALUE_RANGE, VALUE_RANGE] */

struct options {
    int samples, batch, bins, rounds;
    const char *image;
};

/* ---- the samples: the same on every rank, so targets can check --------- */

/* Samples origin sends to target in round: keys in target's range. */
static void make_samples(struct sample *s, int n, int origin, int target, int round, int bins)
{
    uint64_t st = ((uint64_t)origin << 42) ^ ((uint64_t)target << 21) ^ (uint64_t)round;
    st = splitmix64(&st); /* a seed far from its neighbours' */
    const int64_t span = (int64_t)bins * BIN_WIDTH, lo = (int64_t)target * span;
    for (int i = 0; i < n; ++i) {
        s[i].key = lo + (int64_t)(splitmix64(&st) % (uint64_t)span);
        s[i].value = (int64_t)(splitmix64(&st) % (2 * VALUE_RANGE + 1)) - VALUE_RANGE;
    }
}

static void clear_bins(struct bin *b, int n)
{
    for (int i = 0; i < n; ++i) b[i] = (struct bin){0, 0, INT64_MAX, INT64_MIN};
}

/* ---- options, image ---------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N mpi_accumulate [options]\n"
            "Histogram insert with MPIX_Xput from every rank into every rank; checks\n"
            "every bin exactly.\n\n"
            "  -s, --samples S  samples per origin, target and round (default 4096)\n"
            "  -b, --batch B    samples per MPIX_Xput (default 256)\n"
            "  -k, --bins K     histogram bins per rank (default 64)\n"
            "  -r, --rounds R   rounds (default 10)\n"
            "      --image P    the ifunc image (default: " IMAGE_NAME " next to this program)\n"
            "  -h, --help       this text\n");
}

static void parse(int argc, char **argv, int rank, struct options *o)
{
    static const struct option lo[] = {
        {"samples", required_argument, 0, 's'}, {"batch", required_argument, 0, 'b'},
        {"bins", required_argument, 0, 'k'},    {"rounds", required_argument, 0, 'r'},
        {"image", required_argument, 0, 'I'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (struct options){4096, 256, 64, 10, NULL};
    int c;
    while ((c = getopt_long(argc, argv, "s:b:k:r:h", lo, NULL)) != -1) {
        long v = 0;
        if (optarg && c != 'I') {
            char *end;
            errno = 0;
            v = strtol(optarg, &end, 0);
            if (errno || *end || v <= 0 || v > (1 << 24)) {
                if (rank == 0) fprintf(stderr, "mpi_accumulate: bad number '%s'\n", optarg);
                example_quit(2);
            }
        }
        switch (c) {
        case 's': o->samples = (int)v; break;
        case 'b': o->batch = (int)v; break;
        case 'k': o->bins = (int)v; break;
        case 'r': o->rounds = (int)v; break;
        case 'I': o->image = optarg; break;
        case 'h': example_usage_quit(usage, 0);
        default: example_usage_quit(usage, 2);
        }
    }
    if (optind < argc) example_usage_quit(usage, 2);
}

/* Rank 0 reads the image and broadcasts it; every rank loads it from memory. */
static MPIX_Ifunc load_everywhere(const char *path, int rank)
{
    long len = -1;
    char *img = NULL;
    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        int ok = f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
                 (img = malloc((size_t)len)) && fread(img, 1, (size_t)len, f) == (size_t)len;
        if (!ok) {
            fprintf(stderr, "mpi_accumulate: cannot read %s (build it with make, or give --image)\n", path);
            len = -1;
        }
        if (f) fclose(f);
    }
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (len <= 0 || len > INT_MAX) example_quit(2);
    if (rank != 0) img = malloc((size_t)len);
    MPI_Bcast(img, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPIX_Ifunc f;
    int rc = MPIX_Ifunc_load_mem(img, (size_t)len, "hist_insert", &f);
    example_check(rc, "MPIX_Ifunc_load_mem");
    free(img);
    return f;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int rank, size;
    example_init(&argc, &argv, "mpi_accumulate", &rank, &size);
    struct options o;
    parse(argc, argv, rank, &o);
    if ((int64_t)size * o.bins * BIN_WIDTH > INT64_MAX / 4) example_quit(2);

    /* The application's window: this rank's histogram. */
    struct bin *hist;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)o.bins * (MPI_Aint)sizeof(struct bin), sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &hist, &win);
    clear_bins(hist, o.bins);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPIX_Ifunc f = load_everywhere(o.image ? o.image : beside_exe(IMAGE_NAME), rank);

    struct sample *buf = malloc(sizeof(struct sample) * (size_t)o.samples * (size_t)size);
    if (!buf) example_check(MPI_ERR_NO_MEM, "samples");
    const struct hist_args args = {BIN_WIDTH};
    const int batches = (o.samples + o.batch - 1) / o.batch;
    long xputs = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = MPI_Wtime();
    MPI_Win_lock_all(0, win);
    for (int r = 0; r < o.rounds; ++r) {
        for (int t = 0; t < size; ++t) make_samples(buf + (size_t)t * o.samples, o.samples, rank, t, r, o.bins);
        /* Batch j to every target in turn, starting with the next rank: all
         * ranks hit all histograms at the same time. */
        for (int j = 0; j < batches; ++j) {
            int n = j == batches - 1 ? o.samples - j * o.batch : o.batch;
            for (int k = 1; k <= size; ++k) {
                int t = (rank + k) % size;
                const struct sample *s = buf + (size_t)t * o.samples + (size_t)j * o.batch;
                /* Origin: n samples. Target: the whole histogram (disp 0, 4
                 * int64 per bin), which the ifunc sees as xrdma_target(). */
                int rc = MPIX_Xput(s, 2 * n, MPI_INT64_T, t, 0, 4 * o.bins, MPI_INT64_T, f, &args,
                                   (int)sizeof(args), win);
                example_check(rc, "MPIX_Xput");
                xputs++;
            }
        }
        /* Every batch applied at its target (buffers reusable next round). */
        example_check(MPI_Win_flush_all(win), "MPI_Win_flush_all");
    }
    MPI_Win_unlock_all(win);
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's Xputs have run everywhere */
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    /* What this rank's histogram must be: every origin's samples for us. */
    struct bin *want = malloc(sizeof(struct bin) * (size_t)o.bins);
    struct sample *s = malloc(sizeof(struct sample) * (size_t)o.samples);
    clear_bins(want, o.bins);
    const int64_t lo = (int64_t)rank * o.bins * BIN_WIDTH;
    for (int origin = 0; origin < size; ++origin)
        for (int r = 0; r < o.rounds; ++r) {
            make_samples(s, o.samples, origin, rank, r, o.bins);
            for (int i = 0; i < o.samples; ++i) {
                struct bin *b = &want[(s[i].key - lo) / BIN_WIDTH];
                b->count++;
                b->sum += s[i].value;
                if (s[i].value < b->min) b->min = s[i].value;
                if (s[i].value > b->max) b->max = s[i].value;
            }
        }
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* read our own window */
    long bad = 0, counted = 0;
    for (int i = 0; i < o.bins; ++i) {
        counted += hist[i].count;
        if (memcmp(&hist[i], &want[i], sizeof(struct bin)) == 0) continue;
        if (bad++ < 3)
            fprintf(stderr,
                    "mpi_accumulate[rank %d]: bin %d: count %" PRId64 " sum %" PRId64 " min %" PRId64
                    " max %" PRId64 ", want %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n",
                    rank, i, hist[i].count, hist[i].sum, hist[i].min, hist[i].max, want[i].count,
                    want[i].sum, want[i].min, want[i].max);
    }
    struct bin first = hist[0];
    MPI_Win_unlock(rank, win);

    long tot[3] = {bad, counted, xputs}, all[3];
    MPI_Reduce(tot, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int failed = 0;
    if (rank == 0) {
        long samples = (long)size * size * o.samples * o.rounds, bins = (long)size * o.bins;
        failed = all[0] != 0 || all[1] != samples;
        printf("# mpi_accumulate: %d ranks, %d bins/rank, %d rounds x %d samples from every rank to every rank,"
               " %d per MPIX_Xput\n",
               size, o.bins, o.rounds, o.samples, o.batch);
        printf("# %ld MPIX_Xput in all (MPI_Accumulate: 3 calls per sample, %ld, with the origin finding the"
               " bin)\n",
               all[2], 3 * samples);
        printf("# %.1f ms for all rounds (slowest rank), %.2f M samples/s\n", slowest * 1e3,
               samples / slowest * 1e-6);
        printf("# rank 0 bin 0: count %" PRId64 ", sum %" PRId64 ", min %" PRId64 ", max %" PRId64 "\n",
               first.count, first.sum, first.min, first.max);
        printf("histograms checked: %ld/%ld bins exact, %ld/%ld samples counted: %s\n", bins - all[0], bins,
               all[1], samples, failed ? "FAILED" : "ok");
        fflush(stdout);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(want);
    free(s);
    free(buf);
    MPIX_Ifunc_free(&f);
    MPI_Win_free(&win);
    MPI_Finalize();
    return failed ? 1 : 0;
}
