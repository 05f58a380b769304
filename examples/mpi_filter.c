/* mpi_filter: a remote filter with MPIX_Xget.
 *
 * Every rank holds an array of records {key, value, ...} in its window
 * (MPI_Win_allocate). Rank 0 wants the records of all ranks that match a
 * predicate (key in [lo, hi) and value >= min). Two ways:
 *
 *   MPI_Get + filter  fetch every record of every other rank with MPI_Get,
 *                     filter at rank 0;
 *   MPIX_Xget filter  an MPIX_Xget per rank with the predicate as argument:
 *                     the ifunc (mpi_filter_ifunc.c) scans the records where
 *                     they are and replies only the matches, a page (up to
 *                     --page records) per reply; rank 0 asks again from where
 *                     the scan stopped until every rank's scan is complete
 *                     (one Xget per rank when the matches fit one page).
 *
 * Rank 0 filters its own records locally in both. It reports the bytes each
 * way moves and the time per query, and checks that both give the same
 * records as a recomputation from the generator; exit status 1 if not.
 * Only rank 0 reads the image; the others get the code over the network.
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

#include "beside_exe.h"  /* the image beside the program */
#include "mpi_example.h" /* the start, error messages, splitmix64() */
#include "mpi_filter.h"  /* the records, the predicate, the reply */

#define IMAGE_NAME "mpi_filter_ifunc.xfn"
#define KEY_RANGE 1000 /* keys in [0, KEY_RANGE) */

struct options {
    int records, reps, page;
    struct filter_args pred;
    const char *image;
};

/* ---- the records: reproducible anywhere -------------------------------- */

static struct record make_record(int rank, int i)
{
    uint64_t st = ((uint64_t)rank << 32) ^ (uint64_t)i ^ 0xf11e7ULL;
    st = splitmix64(&st);
    struct record r;
    memset(&r, 0, sizeof(r));
    r.key = (int64_t)(splitmix64(&st) % KEY_RANGE);
    r.value = (double)(splitmix64(&st) % 10000) / 100.0; /* 0.00 .. 99.99 */
    r.owner = (uint32_t)rank;
    r.seq = (uint32_t)i;
    snprintf(r.label, sizeof(r.label), "r%d-%d", rank, i);
    return r;
}

static int match(const struct record *r, const struct filter_args *a)
{
    return r->key >= a->key_lo && r->key < a->key_hi && r->value >= a->min_value;
}

/* Copies the matches of rec[0..n) to out; returns how many. */
static size_t filter_local(const struct record *rec, size_t n, const struct filter_args *a, struct record *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (match(&rec[i], a)) out[k++] = rec[i];
    return k;
}

/* ---- options, image ---------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -n N mpi_filter [options]      (N >= 2)\n"
            "Rank 0 fetches the records of all ranks that match a predicate: MPIX_Xget\n"
            "with a filtering ifunc (only matches move) against MPI_Get of everything.\n\n"
            "  -n, --records N     records per rank (default 10000)\n"
            "  -r, --reps R        queries per method (default 20)\n"
            "  -p, --page P        matches per Xget reply, 1..%d (default %d)\n"
            "      --key-lo K      predicate: key >= K (default 100)      keys: 0..%d\n"
            "      --key-hi K      predicate: key < K (default 150)\n"
            "      --min-value V   predicate: value >= V (default 50)     values: 0..99.99\n"
            "      --image P       the ifunc image (default: " IMAGE_NAME " next to this program)\n"
            "  -h, --help          this text\n",
            FILTER_PAGE, FILTER_PAGE, KEY_RANGE - 1);
}

static void parse(int argc, char **argv, int rank, struct options *o)
{
    static const struct option lo[] = {
        {"records", required_argument, 0, 'n'}, {"reps", required_argument, 0, 'r'},
        {"page", required_argument, 0, 'p'},
        {"key-lo", required_argument, 0, 'L'},  {"key-hi", required_argument, 0, 'H'},
        {"min-value", required_argument, 0, 'V'}, {"image", required_argument, 0, 'I'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    *o = (struct options){10000, 20, FILTER_PAGE, {100, 150, 50.0, 0, 0}, NULL};
    int c;
    while ((c = getopt_long(argc, argv, "n:r:p:h", lo, NULL)) != -1) {
        char *end = NULL;
        double v = 0;
        if (optarg && c != 'I') {
            errno = 0;
            v = strtod(optarg, &end);
            int count = c == 'n' || c == 'r' || c == 'p';
            if (errno || *end || (count && (v <= 0 || v > (1 << 24) || v != (int)v)) ||
                (c == 'p' && v > FILTER_PAGE)) {
                if (rank == 0) fprintf(stderr, "mpi_filter: bad number '%s'\n", optarg);
                example_quit(2);
            }
        }
        switch (c) {
        case 'n': o->records = (int)v; break;
        case 'r': o->reps = (int)v; break;
        case 'p': o->page = (int)v; break;
        case 'L': o->pred.key_lo = (int64_t)v; break;
        case 'H': o->pred.key_hi = (int64_t)v; break;
        case 'V': o->pred.min_value = v; break;
        case 'I': o->image = optarg; break;
        case 'h': example_usage_quit(usage, 0);
        default: example_usage_quit(usage, 2);
        }
    }
    if (optind < argc) example_usage_quit(usage, 2);
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int rank, size;
    example_init(&argc, &argv, "mpi_filter", &rank, &size);
    struct options o;
    parse(argc, argv, rank, &o);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "mpi_filter: needs at least 2 ranks\n");
        example_quit(2);
    }
    const size_t n = (size_t)o.records, rsz = sizeof(struct record);
    if (n * rsz + sizeof(struct filter_reply) > INT_MAX) {
        if (rank == 0) fprintf(stderr, "mpi_filter: -n too large\n");
        example_quit(2);
    }

    /* The application's window: this rank's records. */
    struct record *mine;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(n * rsz), (int)rsz, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    for (size_t i = 0; i < n; ++i) mine[i] = make_record(rank, (int)i);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* Both methods name a rank's whole array as n * sizeof(record) bytes at
     * displacement 0: one contiguous block, the cheapest datatype to ship. */
    const int region = (int)(n * rsz);

    /* Only rank 0 reads the image and sends operations. */
    MPIX_Ifunc f = MPIX_IFUNC_NULL;
    int ok = 1;
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPIX_Ifunc_load(o.image ? o.image : beside_exe(IMAGE_NAME), "filter", &f);
        if (rc != MPI_SUCCESS) {
            example_report(rc, "MPIX_Ifunc_load (build the image with make, or give --image)");
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Win_free(&win);
        example_quit(2);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int failed = 0;
    if (rank == 0) {
        const struct filter_args *pred = &o.pred;
        const size_t page = (size_t)o.page;
        const size_t xbytes = sizeof(struct filter_reply) + page * rsz; /* one reply page */
        struct record *full = malloc(n * rsz * (size_t)size);  /* MPI_Get: everything */
        char *xbuf = malloc(xbytes * (size_t)size);            /* Xget: the last page */
        struct record *xres = malloc(n * rsz * (size_t)size);  /* Xget: the matches */
        size_t *xgot = calloc((size_t)size, sizeof(size_t));
        uint64_t *xnext = calloc((size_t)size, sizeof(uint64_t));
        struct record *want = malloc(n * rsz), *got = malloc(n * rsz);
        size_t *nwant = calloc((size_t)size, sizeof(size_t));
        if (!full || !xbuf || !xres || !xgot || !xnext || !want || !got || !nwant) MPI_Abort(MPI_COMM_WORLD, 2);

        /* The expected matches of every rank, from the generator. */
        size_t total_match = 0;
        for (int t = 0; t < size; ++t) {
            for (size_t i = 0; i < n; ++i) {
                struct record r = make_record(t, (int)i);
                nwant[t] += match(&r, pred);
            }
            total_match += nwant[t];
        }

        double t_get = 0, t_x = 0;
        uint64_t bytes_get = 0, bytes_x = 0, xgets = 0;
        int good = 0;
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int rep = 0; rep < o.reps && !failed; ++rep) {
            size_t count_get = 0, count_x = 0;
            for (int k = 0; k < 2 && !failed; ++k) {
                int x = (rep + k) % 2 == 0; /* alternate which goes first */
                double t0 = MPI_Wtime();
                int rc = MPI_SUCCESS;
                if (x) {
                    /* Every rank at once, a page each, until every scan is complete. */
                    for (int t = 1; t < size; ++t) xgot[t] = 0, xnext[t] = 0;
                    for (int pending = size - 1; pending > 0 && rc == MPI_SUCCESS;) {
                        for (int t = 1; t < size && rc == MPI_SUCCESS; ++t) {
                            if (xnext[t] == n && n > 0) continue;
                            struct filter_args a = *pred;
                            a.start = xnext[t];
                            a.max = page;
                            rc = MPIX_Xget(xbuf + (size_t)t * xbytes, (int)xbytes, MPI_BYTE, t, 0, region,
                                           MPI_BYTE, f, &a, (int)sizeof(a), win);
                            xgets++;
                            bytes_x += sizeof(a);
                        }
                        if (rc == MPI_SUCCESS) rc = MPI_Win_flush_all(win);
                        if (rc != MPI_SUCCESS) break;
                        pending = 0;
                        for (int t = 1; t < size; ++t) {
                            if (xnext[t] == n && n > 0) continue;
                            struct filter_reply h;
                            memcpy(&h, xbuf + (size_t)t * xbytes, sizeof(h));
                            if (h.scanned != n || h.matched > page || h.next <= xnext[t] || h.next > n ||
                                xgot[t] + h.matched > n) {
                                fprintf(stderr, "mpi_filter: rank %d replied a bad page (%" PRIu64 " matches, next %"
                                                PRIu64 " of %" PRIu64 ")\n",
                                        t, h.matched, h.next, h.scanned);
                                failed = 1;
                                break;
                            }
                            memcpy(xres + (size_t)t * n + xgot[t], xbuf + (size_t)t * xbytes + sizeof(h),
                                   h.matched * rsz);
                            xgot[t] += h.matched;
                            xnext[t] = h.next;
                            bytes_x += sizeof(h) + h.matched * rsz;
                            pending += xnext[t] < n;
                        }
                        if (failed || n == 0) break;
                    }
                } else {
                    for (int t = 1; t < size && rc == MPI_SUCCESS; ++t) {
                        rc = MPI_Get(full + (size_t)t * n, region, MPI_BYTE, t, 0, region, MPI_BYTE, win);
                        bytes_get += n * rsz;
                    }
                    if (rc == MPI_SUCCESS) rc = MPI_Win_flush_all(win);
                }
                if (rc != MPI_SUCCESS) {
                    example_report(rc, x ? "MPIX_Xget" : "MPI_Get");
                    failed = 1;
                }
                if (failed) break;
                /* Rank 0's own records, and (MPI_Get) everybody's: filtered here. */
                size_t c = filter_local(mine, n, pred, got);
                if (x) {
                    for (int t = 1; t < size; ++t) c += xgot[t];
                    t_x += MPI_Wtime() - t0;
                    count_x = c;
                } else {
                    for (int t = 1; t < size; ++t) c += filter_local(full + (size_t)t * n, n, pred, got);
                    t_get += MPI_Wtime() - t0;
                    count_get = c;
                }
            }
            if (failed) break;
            /* Check: per rank, the Xget matches == MPI_Get data filtered here ==
             * the generator's records, in order. */
            int rep_ok = count_get == total_match && count_x == total_match;
            for (int t = 1; t < size; ++t) {
                size_t k = filter_local(full + (size_t)t * n, n, pred, got), w = 0;
                for (size_t i = 0; i < n; ++i) {
                    struct record r = make_record(t, (int)i);
                    if (match(&r, pred)) want[w++] = r;
                }
                int same = xgot[t] == nwant[t] && k == nwant[t] && w == k && memcmp(got, want, k * rsz) == 0 &&
                           memcmp(xres + (size_t)t * n, want, k * rsz) == 0;
                if (!same)
                    fprintf(stderr, "mpi_filter: rank %d: Xget %zu matches, MPI_Get %zu, want %zu%s\n", t, xgot[t], k,
                            nwant[t], k == nwant[t] && xgot[t] == k ? " (records differ)" : "");
                rep_ok &= same;
            }
            good += rep_ok;
            failed |= !rep_ok;
        }
        MPI_Win_unlock_all(win);

        int done = good > 0 ? good : 1;
        double sel = 100.0 * (double)total_match / (double)(n * (size_t)size);
        printf("# mpi_filter: %d ranks x %d records of %zu bytes; predicate %" PRId64 " <= key < %" PRId64
               " and value >= %.2f\n",
               size, o.records, rsz, pred->key_lo, pred->key_hi, pred->min_value);
        printf("# rank 0 asks ranks 1-%d, %d queries each way; %zu of %zu records match (%.2f%%)", size - 1,
               o.reps, total_match, n * (size_t)size, sel);
        for (int t = 0; t < size; ++t) printf("%s rank %d: %zu", t ? "," : ":", t, nwant[t]);
        printf("\n# %.1f MPIX_Xget per query (pages of up to %zu matches)\n", (double)xgets / done, page);
        printf("# %-18s %20s %16s\n", "Method", "Bytes moved/query", "Time/query(us)");
        printf("  %-18s %20.0f %16.1f\n", "MPI_Get + filter", (double)bytes_get / done, t_get / done * 1e6);
        printf("  %-18s %20.0f %16.1f\n", "MPIX_Xget filter", (double)bytes_x / done, t_x / done * 1e6);
        printf("# bytes: records moved from ranks 1-%d (Xget: arguments + reply headers + matches;\n"
               "# protocol headers not counted); rank 0's own records are filtered locally by both\n",
               size - 1);
        if (bytes_x && t_x > 0)
            printf("# MPIX_Xget moves %.1fx fewer bytes, time ratio MPI_Get/Xget %.2f\n",
                   (double)bytes_get / (double)bytes_x, t_get / t_x);
        printf("answers checked: %d/%d queries %s (MPIX_Xget matches == MPI_Get + filter == generator)\n", good,
               o.reps, good == o.reps && !failed ? "ok" : "FAILED");
        fflush(stdout);
        failed |= good != o.reps;
        free(full);
        free(xbuf);
        free(xres);
        free(xgot);
        free(xnext);
        free(want);
        free(got);
        free(nwant);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* other ranks serve the Xgets in here */
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPIX_Ifunc_free(&f);
    MPI_Win_free(&win);
    MPI_Finalize();
    return failed ? 1 : 0;
}
