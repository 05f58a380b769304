/* MPICH's Fortran bindings, routed through XRDMA's calls.
 *
 * XRDMA sets up inside MPI_Win_allocate & co., completes X-operations inside
 * MPI_Win_flush & co., serves them inside MPICH's waiting calls and gives its
 * own error texts by defining those C functions ahead of libmpich
 * (ompi_ext/xrdma/core/pmpi.cc, pmpi_mpich.cc, mpi_mpich.cc). MPICH 4's
 * mpi_f08 bindings do not call them: mpi_win_allocate_f08_ (libmpichfort)
 * calls PMPI_Win_allocate, so a Fortran window would never be set up. This
 * file defines those PMPI_ functions ahead of MPICH and sends a call made
 * from MPICH's Fortran library to XRDMA's MPI_ function; every other call
 * (XRDMA's own calls of MPICH, MPICH's internal ones, a program's deliberate
 * PMPI_ call) goes on to MPICH's own, found with dlsym(RTLD_NEXT).
 *
 * The list is every call XRDMA interposes that libmpichfort 4.0 calls as
 * PMPI_ (objdump -d libmpichfort.so.12); its routines with choice buffers
 * (MPI_Send, MPI_Win_create, ...) call the MPI_ functions already. None of
 * its calls of these is a tail call (the caller's address is its own). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The executable code of MPICH's Fortran library: [lo, hi), empty when the
 * program has none. */
static uintptr_t g_fortran_lo, g_fortran_hi;
static pthread_once_t g_fortran_once = PTHREAD_ONCE_INIT;

static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const uintptr_t in = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        const uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (in >= lo && in < lo + ph->p_memsz) {
            g_fortran_lo = lo;
            g_fortran_hi = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

static void find_fortran(void)
{
    /* (mpi_init_f08_: an entry point of MPICH's Fortran library alone.) */
    void *f = dlsym(RTLD_DEFAULT, "mpi_init_f08_");
    if (f) dl_iterate_phdr(find_segment, f);
}

static int from_fortran(const void *caller)
{
    pthread_once(&g_fortran_once, find_fortran);
    return (uintptr_t)caller >= g_fortran_lo && (uintptr_t)caller < g_fortran_hi;
}

static void *mpich_own(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "xrdma: %s not found after libmpix_xrdma_f08 (%s)\n", name, dlerror());
        abort();
    }
    return f;
}

/* Set while XRDMA's MPI_ function runs for a Fortran call: what it calls is
 * MPICH's own, even as a tail call (whose return address is the Fortran
 * library's). */
static __thread int t_routed;

/* PMPI_<name>: XRDMA's MPI_<name> for MPICH's Fortran library, MPICH's own
 * for every other caller. */
#define ROUTE(name, params, args)                                                 \
    int P##name params                                                            \
    {                                                                             \
        static int(*own) params;                                                  \
        if (!t_routed && from_fortran(__builtin_return_address(0))) {             \
            t_routed = 1;                                                         \
            const int rc = name args;                                             \
            t_routed = 0;                                                         \
            return rc;                                                            \
        }                                                                         \
        int(*f) params = __atomic_load_n(&own, __ATOMIC_ACQUIRE);                 \
        if (!f) {                                                                 \
            f = (int(*) params)mpich_own("P" #name);                              \
            __atomic_store_n(&own, f, __ATOMIC_RELEASE);                          \
        }                                                                         \
        return f args;                                                            \
    }

/* Start and end, errors. */
ROUTE(MPI_Init, (int *argc, char ***argv), (argc, argv))
ROUTE(MPI_Init_thread, (int *argc, char ***argv, int required, int *provided), (argc, argv, required, provided))
ROUTE(MPI_Finalize, (void), ())
ROUTE(MPI_Error_string, (int code, char *string, int *len), (code, string, len))

/* Windows and their synchronisation. */
ROUTE(MPI_Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
      (size, disp_unit, info, comm, baseptr, win))
ROUTE(MPI_Win_allocate_shared,
      (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
      (size, disp_unit, info, comm, baseptr, win))
/* (Its large-count forms, with an INTEGER(MPI_ADDRESS_KIND) disp_unit.) */
ROUTE(MPI_Win_allocate_c,
      (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
      (size, disp_unit, info, comm, baseptr, win))
ROUTE(MPI_Win_allocate_shared_c,
      (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
      (size, disp_unit, info, comm, baseptr, win))
ROUTE(MPI_Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win), (info, comm, win))
ROUTE(MPI_Win_free, (MPI_Win * win), (win))
ROUTE(MPI_Win_fence, (int assert_, MPI_Win win), (assert_, win))
ROUTE(MPI_Win_flush, (int rank, MPI_Win win), (rank, win))
ROUTE(MPI_Win_flush_all, (MPI_Win win), (win))
ROUTE(MPI_Win_flush_local, (int rank, MPI_Win win), (rank, win))
ROUTE(MPI_Win_flush_local_all, (MPI_Win win), (win))
ROUTE(MPI_Win_unlock, (int rank, MPI_Win win), (rank, win))
ROUTE(MPI_Win_unlock_all, (MPI_Win win), (win))
ROUTE(MPI_Win_wait, (MPI_Win win), (win))
ROUTE(MPI_Win_complete, (MPI_Win win), (win))

/* Waiting calls (XRDMA serves X-ops in them: pmpi_mpich.cc). */
ROUTE(MPI_Wait, (MPI_Request * request, MPI_Status *status), (request, status))
ROUTE(MPI_Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]), (count, requests, statuses))
ROUTE(MPI_Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status),
      (count, requests, index, status))
ROUTE(MPI_Waitsome, (int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]),
      (incount, requests, outcount, indices, statuses))
ROUTE(MPI_Test, (MPI_Request * request, int *flag, MPI_Status *status), (request, flag, status))
ROUTE(MPI_Testall, (int count, MPI_Request requests[], int *flag, MPI_Status statuses[]),
      (count, requests, flag, statuses))
ROUTE(MPI_Testany, (int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status),
      (count, requests, index, flag, status))
ROUTE(MPI_Testsome, (int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]),
      (incount, requests, outcount, indices, statuses))
ROUTE(MPI_Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status), (source, tag, comm, status))
ROUTE(MPI_Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
      (source, tag, comm, flag, status))
ROUTE(MPI_Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status),
      (source, tag, comm, flag, message, status))
ROUTE(MPI_Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status),
      (source, tag, comm, message, status))
ROUTE(MPI_Barrier, (MPI_Comm comm), (comm))
ROUTE(MPI_Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm))
ROUTE(MPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm), (comm, color, key, newcomm))
ROUTE(MPI_Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm),
      (comm, split_type, key, info, newcomm))
