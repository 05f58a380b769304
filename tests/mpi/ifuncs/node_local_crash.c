/* A movable function with a bug: it dereferences a null pointer. With
 * XRDMA_EXEC=auto it faults in the origin process when the origin maps the
 * target's window; either way the operation ends with MPIX_ERR_IFUNC_FAULT
 * and the process that ran it survives (and quarantines the image). */
#include <stdint.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(crash)
{
    (void)ctx, (void)args_size;
    volatile int64_t *p = (volatile int64_t *)(uintptr_t)(args_size > 1000000 ? 1 : 0);
    return (int)*p;
}
