// Dispatch: an entry runs through the layer's dispatch hook, under fault
// containment (guarded_entry: only the ifunc's own frames unwind on a
// fault), one at a time per context; an image whose code faulted or ran
// past its time is quarantined.
#include "context.h"

#include "fault.h"
#include "xrdma_common/log.h"

using namespace xrdma;

namespace xrdma {

// (The model again here: without it, this definition made the accesses
// below calls of __tls_get_addr() for the compiler, which then kept the
// arguments in saved registers around them.)
__thread int t_dispatching __attribute__((tls_model("initial-exec"))) = 0;

namespace {

// After an entry that failed: a fault or timeout quarantines its image.
__attribute__((noinline, cold)) int after_failure(ucx_ifunc_context *ctx, const xrdma_ctx &x, int rc)
{
    if (x.fail_status == UCX_IFUNC_ERR_FAULT || x.fail_status == UCX_IFUNC_ERR_TIMEOUT)
        quarantine(ctx, x.image->view.hash, x.fail_message);
    return rc;
}

// The dispatch without a layer's hook: the entry itself. (One call site
// for both: the arguments stay in the registers they arrive in.)
int run_entry(void *, xrdma_ctx *x, int (*entry)(xrdma_ctx *, const void *, size_t), const void *args, size_t len)
{
    return entry(x, args, len);
}

}  // namespace

int dispatch_entry(ucx_ifunc_context *ctx, xrdma_ctx *x, void *entry, const void *args, size_t args_len)
{
    x->payload = static_cast<const uint8_t *>(args);
    x->real_entry = reinterpret_cast<xrdma_ifunc_entry_t>(entry);
    t_dispatching++;
    ctx->in_dispatch++;
    const auto hook = ctx->params.dispatch ? ctx->params.dispatch : run_entry;
    const int rc = hook(ctx->params.dispatch_arg, x, guarded_entry, args, args_len);
    t_dispatching--;
    ctx->in_dispatch--;
    ctx->stats.executed++;
    if (__builtin_expect(x->fail_status != UCX_IFUNC_OK, 0)) return after_failure(ctx, *x, rc);
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
