/* The injected function of examples/xrdma_batch.c: adds its argument (an
 * int64) to the counter the target owns (its user pointer) and succeeds
 * without reply bytes, so the origin's completion is an acknowledgement
 * only: the kind a target may hold until the origin asks for it
 * (UCX_IFUNC_INVOKE_LAZY_ACK). */
#include <stdint.h>
#include <string.h>
#include <ucx_ifunc/runtime.h> /* the plugin's runtime API: this example runs without MPI */

XRDMA_IFUNC(bump)
{
    int64_t *counter = xrdma_user_ptr(ctx);
    int64_t delta;
    if (!counter || args_size != sizeof(delta)) return 1;
    memcpy(&delta, args, sizeof(delta));
    *counter += delta;
    return 0;
}
