/* The twins of node_local_movable.c that always run at their target: the
 * image has writable data of its own (a call counter), so what it means
 * depends on the process it runs in. */
#include <stdint.h>
#include <xrdma_ifunc.h>

#include "node_local_ops.h"

static volatile int64_t calls;

XRDMA_IFUNC(acc_pinned)
{
    (void)args, (void)args_size;
    calls++;
    return op_accumulate(ctx);
}

XRDMA_IFUNC(append_pinned)
{
    calls++;
    return op_append(ctx, args, args_size);
}
