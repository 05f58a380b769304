/* What the three pointer-chase programs share (examples/mpi_pointer_chase.c,
 * examples/xrdma_chase.c, benchmarks/xrdma_pointer_chase.c): the list and
 * its sequential walk, the command line, and the start every rank makes.
 * Compiled into each of them from examples/chase_common.c. */
#ifndef XRDMA_CHASE_COMMON_H
#define XRDMA_CHASE_COMMON_H

#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the list ------------------------------------------------------------- */

/* next[] of one cycle through all npr * size nodes, block-distributed (node g
 * lives at rank g / npr, entry g % npr), in which the owner of the next node
 * is the current one with probability loc, else one of the other ranks with
 * nodes left, uniformly (loc = 1/size: random placement). The same on every
 * rank (fixed seed). *measured (if not NULL): the fraction of same-owner
 * steps. NULL if out of memory. */
uint64_t *chase_build_list(uint64_t npr, int size, double loc, double *measured);

/* The start node of chase i of a list of n nodes (the same in every mode). */
uint64_t chase_start_node(int i, uint64_t n);

/* The sequential answer of a chase, and what each mode sends on its path. */
struct chase_walk {
    uint64_t answer;
    uint64_t remote_hops; /* nodes not on rank 0: MPI_Get round trips */
    uint64_t messages;    /* X-RDMA and AM: the first message, forwards, the reply */
};
struct chase_walk chase_walk(const uint64_t *next, uint64_t npr, uint64_t start, uint64_t depth);

/* The MPI_Get chain, the baseline (rank 0, inside an access epoch on @p win):
 * one MPI_Get + MPI_Win_flush per node that is not rank 0's (@p requests:
 * MPI_Rget + MPI_Wait instead); rank 0's own nodes are read from @p base.
 * MPI_SUCCESS with the final node in *out, or the error (reported). */
int chase_get(const char *prog, MPI_Win win, const uint64_t *base, uint64_t npr, uint64_t start, uint64_t depth,
              int requests, uint64_t *out);

/* A window of @p bytes for this rank's slice of the list (and whatever
 * follows it): MPI_Win_create on malloc'ed memory, returned for the caller
 * to free after MPI_Win_free, when @p create; else MPI_Win_allocate (NULL
 * returned). Its errors come back as return codes (MPI_ERRORS_RETURN). */
void *chase_list_window(int create, MPI_Aint bytes, MPI_Info info, uint64_t **base, MPI_Win *win);

/* Say on standard error that the chase from @p start failed in @p what
 * with MPI error code @p rc; returns rc. */
int chase_report(const char *prog, int rc, const char *what, uint64_t start);

/* ---- the command line -------------------------------------------------------- */

/* The options every chase program has; set the defaults before parsing. */
struct chase_options {
    uint64_t nodes_per_rank; /* -n, --nodes (> 0) */
    uint64_t depth;          /* -d, --depth */
    int reps;                /* -r, --reps (> 0) */
    int warmup;              /* --warmup (and a short option of the program's) */
    int csv;                 /* --csv */
    const char *image;       /* --image, if the program has it */
};

/* One program's command line: the options above plus its own. */
struct chase_cli {
    const char *prog;            /* for messages */
    void (*usage)(FILE *f);
    char warmup_short;           /* --warmup's short option ('w' or 'x') */
    int has_image;               /* whether --image is one of its options */
    const struct option *extra;  /* its own options ({0}-terminated), or NULL */
    const char *extra_short;     /* their short letters, getopt style ("L:w:"), or "" */
    /* Its option @c with @arg (NULL for a flag): 0 if the value is bad. */
    int (*handle)(int c, const char *arg, void *data);
    void *data;
};

/* *out = @p arg as a whole number (strtoll, any base) in [lo, hi]; 0 if it
 * is not one. */
int chase_number(const char *arg, long long lo, long long hi, long long *out);

/* ---- the start --------------------------------------------------------------- */

/* MPI_Init, this rank in *rank and the number of ranks in *size, then the
 * command line (@p o holds the defaults). --help: the usage on standard
 * output, exit 0. A bad option, value or stray argument, fewer than two
 * ranks, or more nodes than a window holds: a message or the usage on
 * standard error (rank 0 only), exit 2 (after MPI_Finalize). */
void chase_start(int *argc, char ***argv, const struct chase_cli *cli, struct chase_options *o, int *rank, int *size);

/* MPI_Finalize, then exit with @p code. */
__attribute__((noreturn)) void chase_quit(int code);

double chase_now_us(void);

#ifdef MPIX_IFUNC_NULL
/* Programs on the MPIX API: only rank 0 loads the image (entry "chase"); the
 * other ranks get the code over the network. Exit 2 everywhere if it fails. */
static inline MPIX_Ifunc chase_load_ifunc(const char *prog, int rank, const char *path, const char *hint)
{
    MPIX_Ifunc f = MPIX_IFUNC_NULL;
    int ok = 1;
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPIX_Ifunc_load(path, "chase", &f);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "%s: %s%s\n", prog, msg, hint);
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) chase_quit(2);
    return f;
}
#endif

#endif
