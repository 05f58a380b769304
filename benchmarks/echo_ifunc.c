/* Ifunc of benchmarks/plugin_invoke_latency: reply the argument bytes. */
#include <xrdma_ifunc.h>

XRDMA_IFUNC(echo) { return xrdma_reply(ctx, args, args_size); }
