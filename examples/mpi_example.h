/* What the MPI examples share besides the MPI and MPIX calls they show:
 * the start, saying which MPI call failed on which rank and why, leaving
 * on a usage error, and the random stream their data comes from. (Their
 * images are found beside the program: benchmarks/beside_exe.h.)
 * Header-only: each example is one .c file plus this. */
#ifndef XRDMA_MPI_EXAMPLE_H
#define XRDMA_MPI_EXAMPLE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The program's name in its messages (example_init). */
static const char *example_name = "example";

/* The start of an example: MPI_Init, then @p name for its messages, this
 * rank in *rank and the number of ranks in *size. */
__attribute__((unused)) static void example_init(int *argc, char ***argv, const char *name, int *rank, int *size)
{
    MPI_Init(argc, argv);
    example_name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* Say on standard error that @p what failed on this rank with MPI error
 * code @p rc, and why; returns rc. */
__attribute__((unused)) static int example_report(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "%s[rank %d]: %s: %s\n", example_name, rank, what, msg);
    return rc;
}

/* @p rc, what the MPI call @p what returned: on an error, say so and end
 * the job with exit status 1. */
__attribute__((unused)) static void example_check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return;
    example_report(rc, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Finalize, then exit with @p code (every rank calls it). */
__attribute__((unused, noreturn)) static void example_quit(int code)
{
    MPI_Finalize();
    exit(code);
}

/* The end of a command line that asked for help (@p code 0: @p usage on
 * standard output) or was wrong (2: on standard error); rank 0 prints. */
__attribute__((unused, noreturn)) static void example_usage_quit(void (*usage)(FILE *f), int code)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) usage(code == 0 ? stdout : stderr);
    example_quit(code);
}

/* splitmix64: the next number of a small random stream from *state. The
 * same seed gives the same numbers on every rank, so a rank can regenerate
 * the data another one holds to check an answer. */
__attribute__((unused)) static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
