/* Prints at the target with xrdma_log(), under the default symbol policy. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Xinvoke: log the argument (an int) with the origin's rank. */
XRDMA_IFUNC(say)
{
    int n = -1;
    if (args_size == sizeof(n)) memcpy(&n, args, sizeof(n));
    int rc = xrdma_log(ctx, "hello %d from rank %d", n, xrdma_origin(ctx));
    return rc < 0 ? 1 : 0;
}
