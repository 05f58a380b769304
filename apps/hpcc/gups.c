/* hpcc_gups: HPC Challenge RandomAccess (GUPS), HPCC's own harness and
 * verification, with every update variant measured in one job on the same
 * table and update stream, interleaved round by round:
 *
 *   hpcc         HPCC's MPIRandomAccess: two-sided, bucketed look-ahead
 *                (Power2Nodes/AnyNodesMPIRandomAccessUpdate, unchanged)
 *   rma          MPI_Accumulate(MPI_BXOR) per update (rma.patch)
 *   rma_batched  one MPI_Accumulate per bucket, indexed target (rma.patch)
 *   xrdma        one MPIX_Xput per bucket with a function that applies
 *                the XORs at the owner (xrdma.patch)
 *
 * HPCC_MPIRandomAccess() sizes the table (2^s words per process for a
 * power-of-two count), initialises it, times the update phase, computes
 * GUP/s and runs HPCC's verification; this file supplies the hooks of
 * ra_variant.h. Rank 0 writes CSV rows (apps/hpcc/README.md) on standard
 * output and HPCC's own report to the log (-l). Besides the rate each run
 * reports what it sent per update: messages and bytes at the API (each
 * MPI_Isend, MPI_Accumulate, MPIX_Xput to another rank, counted through
 * the profiling interface) and, with -n DEV, packets and bytes that left
 * the network interface DEV (one reader per node, in a network namespace
 * of the job's own). Under valgrind --tool=callgrind --collect-atstart=no
 * each update phase is collected and dumped on its own, named after the
 * variant and the round; -p runs the profile shape, where only rank 0
 * makes updates (one origin, the others only targets: apps/hpcc/profile).
 *
 * A run verifies when HPCC's verification finds no wrong word, or, for
 * HPCC's own code, at most HPCC's 1%. Exit status: 0, 3 when a run did
 * not verify, 2 for bad arguments, 1 for anything else. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hpcc.h>
#include <mpix_xrdma.h>

#include "RandomAccess.h"
#include "ra_variant.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s)
#endif

#define EXIT_VERIFY 3

MPI_Win HPCC_TableWin = MPI_WIN_NULL;
const char *HPCC_XorImage = RA_XOR_IMAGE;

typedef void (*update_fn)(HPCC_RandomAccess_tabparams_t);
static int power_of_two; /* HPCC_MPIRandomAccess()'s PowerofTwo */

static void
hpcc_update(HPCC_RandomAccess_tabparams_t t) {
  /* what HPCC_MPIRandomAccess() calls without the patch */
  if (power_of_two) Power2NodesMPIRandomAccessUpdate(t);
  else AnyNodesMPIRandomAccessUpdate(t);
}

static const struct variant {
  const char *name;
  update_fn update;
  int window; /* the table in a window (else HPCC's own malloc) */
  /* Every update applied atomically: no word may be wrong. HPCC's own
   * code may lose some (with more than 4 processes it polls 4 receives,
   * and an update that arrived in one of them before the sender's last
   * "finished" message was handled is cancelled unread), and HPCC passes
   * up to 1% of the table's words wrong. */
  int exact;
} variants[] = {
  {"hpcc", hpcc_update, 0, 0},
  {"rma", RMAAccumulateUpdate, 1, 1},
  {"rma_batched", RMABatchedUpdate, 1, 1},
  {"xrdma", XrdmaRandomAccessUpdate, 1, 1},
};
enum { N_VARIANTS = sizeof(variants) / sizeof(variants[0]) };

static struct {
  int log2_words;         /* -s: table words per process, log2 */
  int rounds;             /* -r */
  unsigned mask;          /* -v: variants to run */
  const char *transport;  /* -t */
  const char *log;        /* -l: HPCC's report */
  const char *netdev;     /* -n: interface whose counters to read */
  double seconds;         /* -T: time bound of an update phase */
  int profile;            /* -p */
} opt = {22, 3, (1u << N_VARIANTS) - 1, NULL, "/dev/stderr", NULL, 10, 0};

static int rank, nprocs;
static const struct variant *current;
static long long limit; /* updates per process, 0: HPCC's 4 per word */
static int limited;     /* the last run made fewer than HPCC's */
static char phase[96];  /* the run's name, e.g. "xrdma round 2" */
static MPI_Comm node_comm; /* the processes of this node (this host) */

/* What the current update phase sent to other ranks. */
static struct counts {
  double msgs, bytes, wire_pkts, wire_bytes;
} sent;
static int counting;
static double *updates_to; /* profile: updates sent to each rank */

static void
count(int target, int count, MPI_Datatype type) {
  int size;
  if (!counting) return;
  MPI_Type_size(type, &size);
  if (updates_to) updates_to[target] += count;
  if (target == rank) return;
  sent.msgs += 1;
  sent.bytes += (double)count * size;
}

int
MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          MPI_Request *req) {
  count(dest, n, type);
  return PMPI_Isend(buf, n, type, dest, tag, comm, req);
}

int
MPI_Accumulate(const void *buf, int n, MPI_Datatype type, int target, MPI_Aint disp, int tn,
               MPI_Datatype ttype, MPI_Op op, MPI_Win win) {
  count(target, n, type);
  return PMPI_Accumulate(buf, n, type, target, disp, tn, ttype, op, win);
}

int
MPIX_Xput(const void *buf, int n, MPI_Datatype type, int target, MPI_Aint disp, int tn,
          MPI_Datatype ttype, MPIX_Ifunc f, const void *args, int args_size, MPI_Win win) {
  count(target, n, type);
  return PMPIX_Xput(buf, n, type, target, disp, tn, ttype, f, args, args_size, win);
}

/* Packets and bytes this node's interface opt.netdev has sent so far
 * (/proc/net/dev shows the reader's network namespace; /sys/class/net
 * would show the one sysfs was mounted in). */
static void
wire_read(double *pkts, double *bytes) {
  char line[512], name[64];
  unsigned long long f[10];
  int local, found = 0;
  FILE *dev;
  *pkts = *bytes = 0;
  MPI_Comm_rank(node_comm, &local);
  if (!opt.netdev || local != 0) return;
  if ((dev = fopen("/proc/net/dev", "r"))) {
    while (!found && fgets(line, sizeof(line), dev)) {
      char *colon = strchr(line, ':');
      if (!colon || sscanf(line, " %63[^:]", name) != 1 || strcmp(name, opt.netdev) != 0) continue;
      /* receive: bytes packets errs drop fifo frame compressed multicast,
       * then transmit: bytes packets ... */
      found = sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
                     &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]) == 10;
    }
    fclose(dev);
  }
  if (!found) {
    fprintf(stderr, "hpcc_gups: no interface %s in /proc/net/dev\n", opt.netdev);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  *bytes = (double)f[8];
  *pkts = (double)f[9];
}

u64Int *
HPCC_RA_TableAlloc(s64Int words) {
  u64Int *base;
  if (!current->window) return HPCC_XMALLOC(u64Int, words);
  MPI_Win_allocate((MPI_Aint)words * sizeof(u64Int), sizeof(u64Int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &HPCC_TableWin);
  return base;
}

void
HPCC_RA_TableFree(u64Int *table) {
  if (!current->window) HPCC_free(table);
  else MPI_Win_free(&HPCC_TableWin); /* and with it the table */
}

void
HPCC_RA_Bound(HPCC_RandomAccess_tabparams_t *t, u64Int *NumUpdates) {
  s64Int mine = t->ProcNumUpdates, fewest;
  limited = limit > 0 && limit < mine;
  if (limited) mine = limit;
  /* every process makes the same number, as under RA_TIME_BOUND */
  MPI_Allreduce(&mine, &fewest, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  t->ProcNumUpdates = fewest;
  *NumUpdates = (u64Int)fewest * t->NumProcs;
  if (opt.profile) {
    /* one origin (rank 0) and NumProcs-1 targets (with one update each:
     * HPCC's verification expects every process to make some) */
    if (rank != 0) t->ProcNumUpdates = 1;
    *NumUpdates = (u64Int)fewest + t->NumProcs - 1;
  }
}

void
HPCC_RA_Update(HPCC_RandomAccess_tabparams_t t, int PowerofTwo) {
  double p0, b0, p1, b1;
  power_of_two = PowerofTwo;
  memset(&sent, 0, sizeof(sent));
  MPI_Barrier(MPI_COMM_WORLD); /* every node's counters before anyone sends */
  wire_read(&p0, &b0);
  counting = 1;
  /* (no-ops unless under valgrind --tool=callgrind --collect-atstart=no) */
  CALLGRIND_ZERO_STATS;
  CALLGRIND_TOGGLE_COLLECT;
  current->update(t);
  /* until every update has been applied everywhere (an origin leaves its
   * update phase once its own updates are complete at their targets) */
  MPI_Barrier(MPI_COMM_WORLD);
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS_AT(phase);
  counting = 0;
  wire_read(&p1, &b1);
  sent.wire_pkts = p1 - p0;
  sent.wire_bytes = b1 - b0;
}

static int
cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median(double *v, int n) {
  qsort(v, n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
row(const char *variant, const char *metric, double value, const char *unit, int verified) {
  if (rank != 0) return;
  printf("hpcc,%s,%s,%d,%d,%s,%.6g,%s,%s\n", variant, opt.transport, nprocs, opt.log2_words,
         metric, value, unit, verified ? "1" : "0");
  fflush(stdout);
}

static void
usage(const char *prog) {
  fprintf(stderr,
          "usage: %s [-s LOG2] [-r ROUNDS] [-v LIST] [-t NAME] [-l FILE] [-i IMAGE]\n"
          "          [-n DEV] [-T SECONDS] [-p]\n"
          "  -s LOG2     table words per process, log2 (default 22; HPCC rounds the\n"
          "              total down to a power of two)\n"
          "  -r ROUNDS   rounds, each runs every variant once (default 3)\n"
          "  -v LIST     variants, comma-separated (default hpcc,rma,rma_batched,xrdma)\n"
          "  -t NAME     transport name for the CSV (default from UCX_TLS)\n"
          "  -l FILE     where HPCC writes its report (default /dev/stderr)\n"
          "  -i IMAGE    the XOR function's image (default the build's)\n"
          "  -n DEV      count packets and bytes that leave interface DEV\n"
          "  -T SECONDS  time bound of an update phase (default 10; 0: none): a variant\n"
          "              that would take longer runs a prefix of the update stream,\n"
          "              sized by short runs first, as HPCC's RA_TIME_BOUND does\n"
          "  -p          profile shape: only rank 0 makes updates\n",
          prog);
}

static long long
number(const char *what, const char *s, long long lo, long long hi) {
  char *end;
  long long v = strtoll(s, &end, 0);
  if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
    if (rank == 0) fprintf(stderr, "hpcc_gups: %s must be a number in [%lld, %lld]: '%s'\n", what, lo, hi, s);
    MPI_Finalize();
    exit(2);
  }
  return v;
}

static unsigned
parse_variants(const char *list) {
  unsigned mask = 0;
  char *copy = strdup(list), *save = NULL, *name;
  int i;
  for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    for (i = 0; i < N_VARIANTS && strcmp(name, variants[i].name) != 0; i++) {}
    if (i == N_VARIANTS) {
      if (rank == 0) fprintf(stderr, "hpcc_gups: unknown variant '%s'\n", name);
      MPI_Finalize();
      exit(2);
    }
    mask |= 1u << i;
  }
  free(copy);
  return mask;
}

static const char *
transport_of_env(void) {
  const char *tls = getenv("UCX_TLS");
  if (!tls) return "default";
  if (strcmp(tls, "sm,self") == 0 || strcmp(tls, "sm") == 0 || strcmp(tls, "shm") == 0) return "shm";
  return tls;
}

/* One run of HPCC_MPIRandomAccess with variant v; what rank 0 knows of
 * it is made known to all. */
struct result {
  double gups, seconds, updates, errors, words;
  int ok; /* verified: no wrong word, or for HPCC's own HPCC's 1% */
};

static struct result
run(int v, const char *what) {
  static HPCC_Params params;
  struct result res;
  current = &variants[v];
  snprintf(phase, sizeof(phase), "%s %s", current->name, what);
  memset(&params, 0, sizeof(params));
  strcpy(params.outFname, opt.log);
  params.HPLMaxProcMem = sizeof(u64Int) << opt.log2_words;
  if (updates_to) memset(updates_to, 0, nprocs * sizeof(*updates_to));
  if (rank == 0) {
    FILE *log = fopen(opt.log, "a");
    if (log) fprintf(log, "\n# hpcc_gups: %s\n", phase), fclose(log);
  }
  HPCC_MPIRandomAccess(&params);
  res.gups = params.MPIRandomAccess_GUPs;
  res.seconds = params.MPIRandomAccess_time;
  res.updates = (double)params.MPIRandomAccess_ExeUpdates;
  res.errors = (double)params.MPIRandomAccess_Errors;
  res.words = (double)params.MPIRandomAccess_N;
  MPI_Bcast(&res, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  res.ok = res.errors == 0 || (!current->exact && res.errors <= 0.01 * res.words);
  return res;
}

/* The updates per process variant v may make within opt.seconds (0: all
 * of HPCC's), from runs of 256, 1024, ... updates per process until one
 * lasts half a second, as RA_TIME_BOUND samples 1% of the updates. The
 * runs are verified like the others. */
static long long
time_bound(int v, int *failed) {
  long long n;
  struct result res = {0, 0, 0, 0, 0, 0};
  char what[64];
  for (n = 256;; n *= 4) {
    limit = n;
    snprintf(what, sizeof(what), "time bound sample %lld", n);
    res = run(v, what);
    if (!res.ok) *failed = 1;
    if (!limited) return limit = 0; /* HPCC's count is smaller */
    if (res.seconds >= 0.5) break;
  }
  limit = 0;
  if (res.seconds <= 0 || n * opt.seconds / res.seconds >= (double)(4LL << opt.log2_words)) return 0;
  return (long long)(n * opt.seconds / res.seconds);
}

int
main(int argc, char **argv) {
  long long bound[N_VARIANTS] = {0};
  double gups[N_VARIANTS][64];
  int failed = 0, c, r, k, v;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  while ((c = getopt(argc, argv, "s:r:v:t:l:i:n:T:ph")) != -1) {
    switch (c) {
    case 's': opt.log2_words = (int)number("-s", optarg, 4, 30); break;
    case 'r': opt.rounds = (int)number("-r", optarg, 1, 64); break;
    case 'v': opt.mask = parse_variants(optarg); break;
    case 't': opt.transport = optarg; break;
    case 'l': opt.log = optarg; break;
    case 'i': HPCC_XorImage = optarg; break;
    case 'n': opt.netdev = optarg; break;
    case 'T': opt.seconds = (double)number("-T", optarg, 0, 1 << 20); break;
    case 'p': opt.profile = 1; break;
    default:
      if (rank == 0) usage(argv[0]);
      MPI_Finalize();
      return c == 'h' ? 0 : 2;
    }
  }
  if (optind != argc || strlen(opt.log) > 256) {
    if (rank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (!opt.transport) opt.transport = transport_of_env();
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  if (opt.profile) updates_to = calloc(nprocs, sizeof(*updates_to));

  /* A short run of each variant first: connections made, code loaded,
   * so that no measured run pays for them. */
  for (v = 0; v < N_VARIANTS; v++) {
    if (!(opt.mask & (1u << v))) continue;
    limit = 256;
    if (!run(v, "warm-up").ok) failed = 1;
    if (opt.seconds > 0) bound[v] = time_bound(v, &failed);
  }

  for (r = 0; r < opt.rounds; r++) {
    /* A B C, B C A, ...: none is always the first after a barrier */
    for (k = 0; k < N_VARIANTS; k++) {
      struct result res;
      double total[4], received = 0;
      char what[32];
      int ok;
      v = (r + k) % N_VARIANTS;
      if (!(opt.mask & (1u << v))) continue;
      limit = bound[v];
      snprintf(what, sizeof(what), "round %d", r + 1);
      res = run(v, what);
      MPI_Allreduce(&sent, total, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (updates_to) MPI_Reduce(&updates_to[nprocs > 1], &received, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      ok = res.ok;
      if (!ok) failed = 1;
      gups[v][r] = res.gups;
      row(current->name, "gups", res.gups, "GUP/s", ok);
      row(current->name, "errors", res.errors, "words", ok);
      row(current->name, "updates", res.updates, "updates", ok);
      row(current->name, "msgs_per_update", total[0] / res.updates, "msgs", ok);
      row(current->name, "bytes_per_update", total[1] / res.updates, "B", ok);
      if (opt.netdev) {
        row(current->name, "wire_pkts_per_update", total[2] / res.updates, "pkts", ok);
        row(current->name, "wire_bytes_per_update", total[3] / res.updates, "B", ok);
      }
      if (opt.profile) row(current->name, "target_updates", received, "updates", ok);
    }
  }

  /* the medians of the rounds, and XRDMA's ratios to the others */
  if (rank == 0) {
    double med[N_VARIANTS] = {0};
    for (v = 0; v < N_VARIANTS; v++) {
      if (!(opt.mask & (1u << v))) continue;
      med[v] = median(gups[v], opt.rounds);
      row(variants[v].name, "gups_median", med[v], "GUP/s", !failed);
    }
    for (v = 0; v < N_VARIANTS - 1; v++) {
      char metric[64];
      if (!(opt.mask & (1u << v)) || !(opt.mask & (1u << (N_VARIANTS - 1))) || med[v] <= 0) continue;
      snprintf(metric, sizeof(metric), "speedup_vs_%s", variants[v].name);
      row("xrdma", metric, med[N_VARIANTS - 1] / med[v], "x", !failed);
    }
  }
  MPI_Comm_free(&node_comm);
  free(updates_to);
  MPI_Finalize();
  return failed ? EXIT_VERIFY : 0;
}
