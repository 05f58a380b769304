/* What every application of apps/ shares: the start (rank, size, the ifunc
 * image read once and loaded everywhere), the variant list and its
 * interleaving, the counters of messages and bytes each variant sends to
 * other ranks, statistics (median, quartiles, harmonic mean), the
 * generators every rank can reproduce (splitmix64, a 64-bit mixer), and the
 * CSV rows apps/README.md defines. Plain MPI and the public XRDMA API only. */
#ifndef APPS_COMMON_APP_H
#define APPS_COMMON_APP_H
#include <mpi.h>
#include <mpix_xrdma.h>
#include <stdint.h>
#include <stdio.h>

#include "mix.h"

/* The exit status of a run whose verification failed (anything else that
 * goes wrong exits 1, bad arguments 2): tests tell the two apart. */
#define APP_EXIT_VERIFY 3

extern int app_rank, app_size;

/* MPI_Init, rank, size; @p name prefixes every message. */
void app_init(int *argc, char ***argv, const char *name);
/* Print on standard error with the program's name and rank. */
void app_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed MPI call: its message, then MPI_Abort. */
void app_fail_mpi(int rc, const char *what) __attribute__((noreturn));
/* An unrecoverable error (out of memory, bad input): MPI_Abort. */
void app_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* malloc / calloc that never return NULL (they die instead). */
void *app_alloc(size_t bytes);
void *app_calloc(size_t n, size_t size);

/* The image @p file next to this program (or @p path when given): rank 0
 * reads it and broadcasts the bytes, every rank loads entry @p entry. */
MPIX_Ifunc app_load_ifunc(const char *path, const char *file, const char *entry);

/* The end of a run whose command line asked for help (@p status 0: the
 * text on standard output) or was wrong (2: on standard error). */
void app_exit_usage(void (*usage)(FILE *), int status) __attribute__((noreturn));
/* A number argument in [lo, hi] (0x, k/m/g suffixes), or exit 2. */
long long app_number(const char *what, const char *s, long long lo, long long hi);

/* The variants a run measures, in order: parsed from a comma list of names
 * among @p known (n_known of them). Returns a bit mask over known. */
unsigned app_variants(const char *list, const char *const *known, int n_known);
/* The order of the variants of round @p round: rotated by one each round,
 * so that none is always first after the barrier (A B C, B C A, ...).
 * Writes the variant indices into @p order, returns how many. */
int app_round_order(unsigned mask, int n_known, int round, int *order);

/* What a variant sent to other ranks, counted by the variant itself
 * (apps/README.md says what counts as a message): messages and their
 * payload bytes (operations addressed to oneself are not counted), and the
 * collective operations and whole-window flushes it waited in. Where its
 * time went, in seconds of this rank: its own work (walking, probing,
 * packing, issuing), completing its operations (an exchange, a flush,
 * receiving), and synchronising with the others (barrier, reduction). */
enum app_phase { APP_WORK, APP_COMPLETE, APP_SYNC, APP_PHASES };
struct app_counts {
    uint64_t msgs, bytes, syncs;
    double time[APP_PHASES];
};
/* Charge the time since *since to @p phase; *since becomes now. */
static inline void app_phase(struct app_counts *c, enum app_phase phase, double *since)
{
    const double now = MPI_Wtime();
    c->time[phase] += now - *since;
    *since = now;
}
static inline void app_count(struct app_counts *c, int target, uint64_t bytes)
{
    if (target != app_rank) c->msgs++, c->bytes += bytes;
}
/* The sums over all ranks (collective; times summed too). */
struct app_counts app_counts_sum(const struct app_counts *mine);

/* Statistics of n values (sorted in place): the median, the first and
 * third quartiles, and the harmonic mean (of rates, as Graph500 asks). */
double app_median(double *v, int n);
double app_quartile(double *v, int n, int q);
double app_hmean(const double *v, int n);

/* CSV (apps/README.md): the header, and one row from rank 0. */
void app_csv_header(FILE *f);
void app_csv_row(FILE *f, const char *app, const char *variant, const char *transport, long long size,
                 const char *metric, double value, const char *unit, int verified);

#endif
