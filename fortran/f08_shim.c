/* The C side of the mpix_xrdma Fortran module (mpix_xrdma.f90).
 *
 * The module's procedures pass their buffers as assumed-rank descriptors
 * (ISO_Fortran_binding.h, Fortran 2018) and their MPI handles as the
 * integers inside mpi_f08's derived types (MPI_VAL); these functions turn
 * both into what the C API takes (an address and a byte count, MPI_Win_f2c
 * and friends) and return the C API's error code. A buffer that is not
 * contiguous is refused with MPI_ERR_BUFFER ("... must be contiguous"): the C
 * API takes an address and a datatype, and a strided array section has no
 * single address that means it (describe such data with a datatype over a
 * contiguous array instead). */
#include <ISO_Fortran_binding.h>
#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "mpix_xrdma.h"
#include "xrdma_mpi.h"

/* Address and byte size of @p d (NULL, 0 for an absent optional argument),
 * or an MPI_ERR_BUFFER code saying that @p call's @p what must be
 * contiguous. */
static int buffer_of(const CFI_cdesc_t *d, const char *call, const char *what, void **addr, size_t *bytes)
{
    *addr = NULL;
    *bytes = 0;
    if (!d) return MPI_SUCCESS;
    if (d->rank > 0 && !CFI_is_contiguous(d)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%s: %s must be contiguous (a strided array section has no single address)",
                 call, what);
        return xrdma_mpi_error_code(MPI_ERR_BUFFER, msg);
    }
    size_t n = d->elem_len;
    for (CFI_rank_t r = 0; r < d->rank; ++r) n *= (size_t)d->dim[r].extent;
    *addr = d->base_addr;
    *bytes = n;
    return MPI_SUCCESS;
}

/* The args of an X-operation: at most INT_MAX bytes (the C API's int). */
static int args_of(const CFI_cdesc_t *d, const char *call, void **addr, int *size)
{
    size_t bytes;
    int rc = buffer_of(d, call, "args", addr, &bytes);
    if (rc != MPI_SUCCESS) return rc;
    if (bytes > (size_t)INT_MAX) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: args is %zu bytes, past the limit of %d bytes (the C API's int args_size)",
                 call, bytes, INT_MAX);
        return xrdma_mpi_error_code(MPI_ERR_ARG, msg);
    }
    *size = (int)bytes;
    return MPI_SUCCESS;
}

/* A buffer the C API cannot take: reported like the C API's own errors,
 * through the window's error handler. */
static int refuse(MPI_Win w, int rc)
{
    MPI_Win_call_errhandler(w, rc);
    return rc;
}

/* MPIX_Xput / MPIX_Xget (request == NULL) or their Rx variants. */
static int xfer(int get, const CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_type, int target_rank,
                MPI_Aint target_disp, int target_count, MPI_Fint target_type, MPIX_Ifunc ifunc,
                const CFI_cdesc_t *args, MPI_Fint win, MPI_Fint *request)
{
    void *buf, *a;
    size_t bytes;
    int asize;
    MPI_Win w = MPI_Win_f2c(win);
    const char *call = get ? (request ? "MPIX_Rxget" : "MPIX_Xget") : (request ? "MPIX_Rxput" : "MPIX_Xput");
    int rc = buffer_of(origin, call, "origin_addr", &buf, &bytes);
    if (rc == MPI_SUCCESS) rc = args_of(args, call, &a, &asize);
    if (rc != MPI_SUCCESS) return refuse(w, rc);
    MPI_Datatype ot = MPI_Type_f2c(origin_type), tt = MPI_Type_f2c(target_type);
    if (!request)
        return get ? MPIX_Xget(buf, origin_count, ot, target_rank, target_disp, target_count, tt, ifunc, a, asize, w)
                   : MPIX_Xput(buf, origin_count, ot, target_rank, target_disp, target_count, tt, ifunc, a, asize, w);
    MPI_Request r = MPI_REQUEST_NULL;
    rc = get ? MPIX_Rxget(buf, origin_count, ot, target_rank, target_disp, target_count, tt, ifunc, a, asize, w, &r)
             : MPIX_Rxput(buf, origin_count, ot, target_rank, target_disp, target_count, tt, ifunc, a, asize, w, &r);
    *request = MPI_Request_c2f(r);
    return rc;
}

int xrdma_f08_xput(const CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_type, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Fint target_type, MPIX_Ifunc ifunc,
                   const CFI_cdesc_t *args, MPI_Fint win, MPI_Fint *request)
{
    return xfer(0, origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, ifunc,
                args, win, request);
}

int xrdma_f08_xget(const CFI_cdesc_t *origin, int origin_count, MPI_Fint origin_type, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Fint target_type, MPIX_Ifunc ifunc,
                   const CFI_cdesc_t *args, MPI_Fint win, MPI_Fint *request)
{
    return xfer(1, origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, ifunc,
                args, win, request);
}

int xrdma_f08_xinvoke(MPIX_Ifunc ifunc, const CFI_cdesc_t *args, int target_rank, MPI_Fint win,
                      MPI_Fint *request)
{
    void *a;
    int asize;
    MPI_Win w = MPI_Win_f2c(win);
    int rc = args_of(args, request ? "MPIX_Rxinvoke" : "MPIX_Xinvoke", &a, &asize);
    if (rc != MPI_SUCCESS) return refuse(w, rc);
    if (!request) return MPIX_Xinvoke(ifunc, a, asize, target_rank, w);
    MPI_Request r = MPI_REQUEST_NULL;
    rc = MPIX_Rxinvoke(ifunc, a, asize, target_rank, w, &r);
    *request = MPI_Request_c2f(r);
    return rc;
}

int xrdma_f08_ifunc_load_mem(const CFI_cdesc_t *image, const char *name, MPIX_Ifunc *ifunc)
{
    void *bytes_at;
    size_t bytes;
    int rc = buffer_of(image, "MPIX_Ifunc_load_mem", "image", &bytes_at, &bytes);
    if (rc != MPI_SUCCESS) return MPI_Comm_call_errhandler(MPI_COMM_WORLD, rc), rc;
    return MPIX_Ifunc_load_mem(bytes_at, bytes, name, ifunc);
}
