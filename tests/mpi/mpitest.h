/* Minimal checking for MPI tests: failures are counted per rank, printed
 * with the rank, and summed at the end; the exit status says pass/fail. */
#ifndef XRDMA_MPITEST_H
#define XRDMA_MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_failures, mt_checks, mt_rank;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        mt_checks++;                                                            \
        if (!(cond)) {                                                          \
            mt_failures++;                                                      \
            fprintf(stderr, "[rank %d] %s:%d: CHECK(%s) failed: ", mt_rank,     \
                    __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
        }                                                                       \
    } while (0)

/* Name a section; rank 0 prints it so a hang shows where it happened. */
static inline void mt_section(const char *name)
{
    if (mt_rank == 0) {
        printf("# %s\n", name);
        fflush(stdout);
    }
}

/* Collective: total failures; rank 0 prints the verdict. Returns exit code. */
static inline int mt_finish(const char *what)
{
    int total = 0, checks = 0;
    MPI_Allreduce(&mt_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mt_checks, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mt_rank == 0) printf("%s: %d checks, %d failed\n", what, checks, total);
    return total ? 1 : 0;
}

/* The class of an error code and whether its string contains @p needle. */
static inline int mt_error_is(int err, int cls, const char *needle)
{
    int c = -1, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Error_class(err, &c);
    MPI_Error_string(err, s, &len);
    if (c != cls || (needle && !strstr(s, needle))) {
        fprintf(stderr, "[rank %d] error %d: class %d (want %d), \"%s\" (want \"%s\")\n", mt_rank, err, c,
                cls, s, needle ? needle : "");
        return 0;
    }
    return 1;
}
#endif
