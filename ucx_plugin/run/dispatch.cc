// Dispatch, the out-of-line parts: an entry runs through the layer's
// dispatch hook (dispatch_entry(), inline in context.h) under fault
// containment (guarded_entry, fault.cc: only the ifunc's own frames unwind
// on a fault), one at a time per thread; here, the dispatch without a hook,
// the quarantine of an image whose code faulted or ran past its time, and
// what came of a call.
#include "run/context.h"

#include "run/fault.h"
#include "xrdma_common/log.h"

using namespace xrdma;

namespace xrdma {

// (The model again here: without it, this definition made the accesses
// below calls of __tls_get_addr() for the compiler, which then kept the
// arguments in saved registers around them.)
__thread int t_dispatching __attribute__((tls_model("initial-exec"))) = 0;

int dispatch_failed(ucx_ifunc_context *ctx, const xrdma_ctx &x, int rc)
{
    if (x.fail_status == UCX_IFUNC_ERR_FAULT || x.fail_status == UCX_IFUNC_ERR_TIMEOUT)
        quarantine(ctx, x.image->view.hash, x.fail_message);
    if (x.fail_status == UCX_IFUNC_INPROGRESS) {  // deferred: nothing ran, kept for later (compile_queue_defer())
        ctx->stats.executed--;
        ctx->stats.deferred++;
    }
    return rc ? rc : -1;
}

// (One call site for the hook and its absence: the arguments stay in the
// registers they arrive in.)
int dispatch_direct(void *, xrdma_ctx *x, int (*entry)(xrdma_ctx *, const void *, size_t), const void *args,
                    size_t len)
{
    return entry(x, args, len);
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
