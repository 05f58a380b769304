/* The core's C interface: what the MPIX_* entry points (c/, through
 * c/xrdma_mpi.h) call, and the kinds of X-operation they name. C, because
 * the entry points are C and an Open MPI built with the extension compiles
 * them (with this header: the whole folder is copied) into its libmpi. It
 * includes nothing of c/: the core does not include from the layer above. */
#ifndef XRDMA_CORE_API_H
#define XRDMA_CORE_API_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An ifunc handle: MPIX_Ifunc of <mpiext_xrdma_c.h>, defined by the core
 * (core/window.h). */
struct MPIX_Ifunc_s;

enum xrdma_mpi_op { XRDMA_OP_PUT = 1, XRDMA_OP_GET = 2, XRDMA_OP_INVOKE = 3 };

/* One X-operation; request NULL: completed by synchronisation calls. */
int xrdma_mpi_xop(int op, void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                  int target_rank, MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, struct MPIX_Ifunc_s *ifunc, const void *args,
                  int args_size, MPI_Win win, MPI_Request *request);
int xrdma_mpi_ifunc_load(const char *path, const void *image, size_t size, const char *name,
                         struct MPIX_Ifunc_s **ifunc);
int xrdma_mpi_ifunc_free(struct MPIX_Ifunc_s **ifunc);
int xrdma_mpi_progress(void);
/* An MPI error code of class @p cls whose MPI_Error_string is @p message
 * (the core's error_code(), for the entry points and the Fortran module). */
int xrdma_mpi_error_code(int cls, const char *message);
/* Flushes of @p win that returned without Open MPI's component flush
 * (out[0]) and that went to it (out[1]); returns 0 when XRDMA does not wrap
 * the window's component (osc_flush.h), 1 when it does. For tests. */
int xrdma_mpi_osc_flush_counts(MPI_Win win, unsigned long long out[2]);

#ifdef __cplusplus
}
#endif
#endif
