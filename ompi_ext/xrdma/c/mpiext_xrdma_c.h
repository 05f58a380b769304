/*
 * XRDMA MPI extension: one-sided operations that carry code.
 *
 * Included by <mpi-ext.h> in an Open MPI built with --enable-mpi-ext=xrdma,
 * and by <mpix_xrdma.h> for the stand-alone library (libmpix_xrdma).
 * Man pages: MPIX_Xput(3), MPIX_Xget(3), MPIX_Xinvoke(3), MPIX_Ifunc_load(3).
 */
#ifndef MPIEXT_XRDMA_C_H
#define MPIEXT_XRDMA_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one definition of the version: configure.ac reads it from here. */
#define MPIX_XRDMA_VERSION "0.1.0"

/** A loaded ifunc image entry (origin side). */
typedef struct MPIX_Ifunc_s *MPIX_Ifunc;
/** No code: MPIX_Xput is MPI_Put, MPIX_Xget is MPI_Get. */
#define MPIX_IFUNC_NULL ((MPIX_Ifunc)0)

/* Error classes, created with MPI_Add_error_class during MPI_Init (valid
 * after it). Compare with the class MPI_Error_class() gives for an error. */
extern int MPIX_ERR_IFUNC_IMAGE;  /* malformed or tampered image, missing entry */
extern int MPIX_ERR_IFUNC_LINK;   /* code could not be loaded at the target */
extern int MPIX_ERR_IFUNC_DENIED; /* refused by the target's policy */
extern int MPIX_ERR_IFUNC_FAULT;  /* the code faulted at the target */
extern int MPIX_ERR_IFUNC_RETURN; /* the ifunc returned non-zero */
extern int MPIX_ERR_IFUNC_TIMEOUT; /* the ifunc ran past XRDMA_IFUNC_TIMEOUT and was stopped */
extern int MPIX_ERR_PEER;         /* target unreachable or failed */

int MPIX_Ifunc_load(const char *path, const char *name, MPIX_Ifunc *ifunc);
int MPIX_Ifunc_load_mem(const void *image, size_t size, const char *name, MPIX_Ifunc *ifunc);
int MPIX_Ifunc_free(MPIX_Ifunc *ifunc);

int MPIX_Xput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
              MPI_Win win);
int MPIX_Xget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
              MPI_Win win);
int MPIX_Xinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win);

int MPIX_Rxput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request);
int MPIX_Rxget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request);
int MPIX_Rxinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win,
                  MPI_Request *request);

/** Run arrived code and complete operations; never needed for correctness. */
int MPIX_Xprogress(void);

/* The profiling interface: every MPIX_ function is a weak alias of its
 * PMPIX_ twin, so a tool can define MPIX_Xput and call PMPIX_Xput. */
int PMPIX_Ifunc_load(const char *path, const char *name, MPIX_Ifunc *ifunc);
int PMPIX_Ifunc_load_mem(const void *image, size_t size, const char *name, MPIX_Ifunc *ifunc);
int PMPIX_Ifunc_free(MPIX_Ifunc *ifunc);

int PMPIX_Xput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
              MPI_Win win);
int PMPIX_Xget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count,
              MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
              MPI_Win win);
int PMPIX_Xinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win);

int PMPIX_Rxput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request);
int PMPIX_Rxget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, int target_count,
               MPI_Datatype target_datatype, MPIX_Ifunc ifunc, const void *args, int args_size,
               MPI_Win win, MPI_Request *request);
int PMPIX_Rxinvoke(MPIX_Ifunc ifunc, const void *args, int args_size, int target_rank, MPI_Win win,
                  MPI_Request *request);

int PMPIX_Xprogress(void);

#ifdef __cplusplus
}
#endif
#endif /* MPIEXT_XRDMA_C_H */
