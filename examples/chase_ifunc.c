/* The injected pointer chase of the X-RDMA demo (examples/xrdma_chase.c).
 *
 * Runs at the rank that owns args->node: follows "next" pointers through
 * that rank's slice in place, as long as they stay local. When a pointer
 * leaves the rank it forwards itself to the owner of the next node; when
 * the requested number of hops is done it replies the final node index
 * straight to the origin. The target never had this code: it arrives with
 * the first invocation and is cached by hash. */
#include <stdint.h>
#include <string.h>
#include <ucx_ifunc/runtime.h> /* the plugin's runtime API: this example runs without MPI */

#include "xrdma_chase.h"

XRDMA_IFUNC(chase)
{
    const struct chase_slice *s = xrdma_user_ptr(ctx);
    struct chase_msg m;
    if (!s || args_size != sizeof(m)) return 1;
    memcpy(&m, args, sizeof(m));

    const uint64_t npr = s->nodes_per_rank;
    const uint64_t lo = (uint64_t)s->rank * npr;
    if (m.node - lo >= npr) return 2; /* sent to the wrong rank */

    while (m.remaining > 0 && m.node - lo < npr) {
        m.node = s->base[m.node - lo];
        m.remaining--;
    }
    if (m.remaining == 0) return xrdma_reply(ctx, &m.node, sizeof(m.node));
    if (m.node >= npr * (uint64_t)s->nranks) return 3; /* corrupt list */
    return xrdma_forward(ctx, (int)(m.node / npr), &m, sizeof(m));
}
