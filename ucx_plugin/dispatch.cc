// Dispatch: an entry runs through the layer's dispatch hook, under fault
// containment (guarded_entry: only the ifunc's own frames unwind on a
// fault), one at a time per context; an image whose code faulted or ran
// past its time is quarantined.
#include "context.h"

#include "fault.h"
#include "xrdma_common/log.h"

using namespace xrdma;

namespace xrdma {

__thread int t_dispatching = 0;

int dispatch_entry(ucx_ifunc_context *ctx, xrdma_ctx *x, void *entry, const void *args, size_t args_len)
{
    x->payload = static_cast<const uint8_t *>(args);
    x->real_entry = reinterpret_cast<xrdma_ifunc_entry_t>(entry);
    ctx->in_dispatch++;
    t_dispatching++;
    int rc = ctx->params.dispatch
                 ? ctx->params.dispatch(ctx->params.dispatch_arg, x, guarded_entry, args, args_len)
                 : guarded_entry(x, args, args_len);
    t_dispatching--;
    ctx->in_dispatch--;
    ctx->stats.executed++;
    if (x->fail_status == UCX_IFUNC_ERR_FAULT || x->fail_status == UCX_IFUNC_ERR_TIMEOUT)
        quarantine(ctx, x->image->view.hash, x->fail_message);
    return rc;
}

ucx_ifunc_status_t entry_failure(const xrdma_ctx &x, int rc, std::string *why)
{
    if (x.fail_status != UCX_IFUNC_OK) {
        *why = x.fail_message;
        return x.fail_status;
    }
    if (rc == 0) return UCX_IFUNC_OK;
    *why = "ifunc '" + *x.entry + "' returned " + std::to_string(rc);
    return UCX_IFUNC_ERR_RETURN;
}

}  // namespace xrdma
