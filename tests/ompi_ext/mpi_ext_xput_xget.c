/* Built with the mpicc of an Open MPI that has the xrdma extension: the API
 * comes from <mpi-ext.h> alone, no XRDMA header or library on the command
 * line. Every rank r ships `accumulate` (Xput) and `sum` (Xget) to rank r+1
 * and checks that each completes at MPI_Win_flush, as MPI RMA does: that
 * needs XRDMA's MPI_Win_flush (PMPI interposer) ahead of libmpi's.
 * Usage: mpi_ext_xput_xget IMAGE   (IMAGE: tests/mpi/ifuncs/mpi_ops.c built
 * by xrdma-cc; only the origins read it, targets never see the file). */
#define _GNU_SOURCE
#include <mpi.h>
#include <mpi-ext.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef OMPI_HAVE_MPI_EXT_XRDMA
#error "this Open MPI has no xrdma extension (<mpi-ext.h> lacks OMPI_HAVE_MPI_EXT_XRDMA)"
#else

#define WORDS 8

static int rank;

static int check(int ok, const char *what)
{
    if (!ok) fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    return ok;
}

static int64_t initial(int r, int w) { return (int64_t)r * 100 + w; }

/* Which object provides @p name for this program (the first in search order). */
static const char *provider(const char *name)
{
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, name);
    if (sym && dladdr(sym, &info) && info.dli_fname) return info.dli_fname;
    return "?";
}

/* libmpi, libopen-rte and libopen-pal must come from one Open MPI: the one
 * built with the extension, not the system's (same sonames). */
static char ompi_dir[512];
static int ompi_mixed;
static int note_ompi_lib(struct dl_phdr_info *info, size_t sz, void *data)
{
    static const char *const libs[] = {"/libmpi.so", "/libopen-rte.so", "/libopen-pal.so"};
    (void)sz;
    (void)data;
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); ++i) {
        const char *at = strstr(info->dlpi_name, libs[i]);
        if (!at) continue;
        int len = (int)(at - info->dlpi_name);
        printf("loaded %s\n", info->dlpi_name);
        if (!ompi_dir[0])
            snprintf(ompi_dir, sizeof(ompi_dir), "%.*s", len, info->dlpi_name);
        else if ((int)strlen(ompi_dir) != len || strncmp(ompi_dir, info->dlpi_name, len) != 0)
            ompi_mixed = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int size, ok = 1, all_ok = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: %s IMAGE.xfn\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        const char *flush = provider("MPI_Win_flush");
        printf("MPI_Win_flush comes from %s\n", flush);
        ok &= check(strstr(flush, "libmpix_xrdma_core") != NULL,
                    "MPI_Win_flush is not XRDMA's (libmpix_xrdma_core must come before libmpi)");
        dl_iterate_phdr(note_ompi_lib, NULL);
        ok &= check(ompi_dir[0] && !ompi_mixed, "libmpi, libopen-rte and libopen-pal from one directory");
    }

    int64_t *base;
    MPI_Win win;
    MPI_Win_allocate(WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int w = 0; w < WORDS; ++w) base[w] = initial(rank, w);

    MPIX_Ifunc accumulate, sum;
    ok &= check(MPIX_Ifunc_load(argv[1], "accumulate", &accumulate) == MPI_SUCCESS, "load accumulate");
    ok &= check(MPIX_Ifunc_load(argv[1], "sum", &sum) == MPI_SUCCESS, "load sum");
    MPI_Barrier(MPI_COMM_WORLD);

    int target = (rank + 1) % size, origin = (rank + size - 1) % size;
    int64_t add[WORDS], total = -1, want = 0;
    for (int w = 0; w < WORDS; ++w) {
        add[w] = 1000 * (rank + 1) + w;
        want += initial(target, w) + add[w];
    }
    MPI_Win_lock_all(0, win);
    /* User-defined accumulate at the target, then the target's sum of the
     * result; each must be complete when MPI_Win_flush returns. */
    ok &= check(MPIX_Xput(add, WORDS, MPI_INT64_T, target, 0, WORDS, MPI_INT64_T, accumulate, NULL, 0,
                          win) == MPI_SUCCESS, "MPIX_Xput");
    ok &= check(MPI_Win_flush(target, win) == MPI_SUCCESS, "MPI_Win_flush after MPIX_Xput");
    ok &= check(MPIX_Xget(&total, 1, MPI_INT64_T, target, 0, WORDS, MPI_INT64_T, sum, NULL, 0,
                          win) == MPI_SUCCESS, "MPIX_Xget");
    ok &= check(MPI_Win_flush(target, win) == MPI_SUCCESS, "MPI_Win_flush after MPIX_Xget");
    if (!check(total == want, "MPIX_Xget(sum) result at MPI_Win_flush"))
        fprintf(stderr, "rank %d: sum at rank %d is %ld, want %ld\n", rank, target, (long)total, (long)want);
    else
        printf("rank %d: Xput(accumulate) + Xget(sum) at rank %d = %ld (ok)\n", rank, target, (long)total);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* What the neighbour's accumulate left in this rank's window. */
    for (int w = 0; w < WORDS; ++w) {
        int64_t expect = initial(rank, w) + 1000 * (origin + 1) + w;
        if (!check(base[w] == expect, "window content after the neighbour's MPIX_Xput")) {
            fprintf(stderr, "rank %d: word %d is %ld, want %ld\n", rank, w, (long)base[w], (long)expect);
            break;
        }
    }

    MPIX_Ifunc_free(&accumulate);
    MPIX_Ifunc_free(&sum);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Win_free(&win);
    if (rank == 0) printf("%s: %d ranks\n", all_ok ? "PASS" : "FAIL", size);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
#endif
