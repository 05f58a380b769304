/* Minimal checking for MPI tests: failures are counted per rank, printed
 * with the rank, and summed at the end; the exit status says pass/fail. */
#ifndef XRDMA_MPITEST_H
#define XRDMA_MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_failures, mt_checks, mt_rank;

/* The start of a test: MPI_Init, this rank in *rank and mt_rank, the number
 * of ranks in *size. */
static inline void mt_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    mt_rank = *rank;
}

/* Unless @p ok (the ranks, arguments or environment the test needs): rank 0
 * says @p need on standard error and the job ends with exit status 2, a
 * test run wrongly rather than a failed check. */
static inline void mt_require(int ok, const char *need)
{
    if (ok) return;
    if (mt_rank == 0) fprintf(stderr, "%s\n", need);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

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

/* The end of main: mt_finish(@p what), MPI_Finalize, and the exit status. */
static inline int mt_finalize(const char *what)
{
    int rc = mt_finish(what);
    MPI_Finalize();
    return rc;
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

/* mt_error_is, and the error string is exactly @p text: nothing after it. */
static inline int mt_error_string_is(int err, int cls, const char *text)
{
    int len = 0;
    char s[MPI_MAX_ERROR_STRING];
    if (!mt_error_is(err, cls, text)) return 0;
    MPI_Error_string(err, s, &len);
    if (len != (int)strlen(text) || strcmp(s, text) != 0) {
        fprintf(stderr, "[rank %d] error string \"%s\" (%d bytes), want exactly \"%s\"\n", mt_rank, s, len, text);
        return 0;
    }
    return 1;
}

/* A window of @p bytes of kind @p kind: "create" (malloc'ed memory),
 * "allocate", "shared" (MPI_Win_allocate_shared) or "dynamic" (malloc'ed
 * memory attached); its memory in *base. Returns 1 for a dynamic window
 * (target_disp is an address), 0 otherwise; aborts on an unknown kind. */
static inline int mt_window(const char *kind, MPI_Aint bytes, int disp_unit, void *base, MPI_Win *win)
{
    void **b = (void **)base;
    if (!strcmp(kind, "create")) {
        *b = malloc((size_t)bytes);
        MPI_Win_create(*b, bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    } else if (!strcmp(kind, "allocate")) {
        MPI_Win_allocate(bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, b, win);
    } else if (!strcmp(kind, "shared")) {
        MPI_Win_allocate_shared(bytes, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, b, win);
    } else if (!strcmp(kind, "dynamic")) {
        *b = malloc((size_t)bytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
        MPI_Win_attach(*win, *b, bytes);
        return 1;
    } else {
        fprintf(stderr, "unknown window kind %s\n", kind);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return 0;
}

/* Every rank's address of its window memory @p base, in rank order
 * (collective): a dynamic window's target_disp is such an address plus the
 * offset. free() the array. */
static inline MPI_Aint *mt_addresses(const void *base)
{
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Aint mine, *all = (MPI_Aint *)malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Get_address(base, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    return all;
}

/* Free a window mt_window() made, and its memory if it was malloc'ed. */
static inline void mt_window_free(const char *kind, void *base, MPI_Win *win)
{
    MPI_Win_free(win);
    if (!strcmp(kind, "create") || !strcmp(kind, "dynamic")) free(base);
}
#endif
