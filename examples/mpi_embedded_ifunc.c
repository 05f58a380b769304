/* The ifunc of examples/mpi_embedded.c, compiled into the program itself
 * (xrdma-cc --c-array=add_image writes it as a C array). */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* MPIX_Xput: add the incoming int64 values to the target region. */
XRDMA_IFUNC(add_to)
{
    size_t n, m;
    int64_t *t = xrdma_target(ctx, &n);
    const int64_t *in = xrdma_incoming(ctx, &m);
    if (!t || n != m) return 1;
    for (size_t i = 0; i < n / sizeof(*t); i++) t[i] += in[i];
    return 0;
}
