/**
 * @file ucx_ifunc/runtime.h
 * @brief The plugin's runtime API: what an injected function (ifunc) may
 * call at the target wherever libucx_ifunc runs it.
 *
 * An ifunc is written as
 * @code
 *   #include <xrdma_ifunc.h>          // or, against the plugin alone:
 *   #include <ucx_ifunc/runtime.h>
 *   XRDMA_IFUNC(add) { ... uses ctx, args, args_size ... return 0; }
 * @endcode
 * and compiled into an image with `xrdma-cc`. The functions below are
 * resolved in the target process when the image is loaded there; the target
 * never had the ifunc's code installed.
 *
 * libucx_ifunc implements every function declared here. A layer above adds
 * its own with ucx_ifunc_register_runtime() (ucx_ifunc(3)) and declares
 * them in a header of its own that includes this one: the MPI layer's is
 * <xrdma_ifunc.h> (xrdma_ifunc(3)).
 */
#ifndef UCX_IFUNC_RUNTIME_H
#define UCX_IFUNC_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#define XRDMA_IFUNC_LINKAGE extern "C"
#else
#define XRDMA_IFUNC_LINKAGE
#endif

/** Opaque per-invocation context handed to every ifunc entry. */
typedef struct xrdma_ctx xrdma_ctx_t;

/** Signature of an ifunc entry point. Non-zero return = failure at origin. */
typedef int (*xrdma_ifunc_entry_t)(xrdma_ctx_t *ctx, const void *args,
                                   size_t args_size);

/**
 * Define an ifunc entry named @p name. The definition that follows has
 * `ctx`, `args` and `args_size` in scope. The marker symbol lets xrdma-cc
 * list the entries of an image without running any of its code.
 */
#define XRDMA_IFUNC(name) XRDMA_IFUNC_DEFINE_(name)
/* Indirection: a name that is itself a macro expands before it is pasted. */
#define XRDMA_IFUNC_DEFINE_(name)                                             \
    XRDMA_IFUNC_LINKAGE __attribute__((visibility("default"), used))          \
    const char __xrdma_entry_##name[] = #name;                                 \
    XRDMA_IFUNC_LINKAGE __attribute__((visibility("default")))                \
    int name(xrdma_ctx_t *ctx, const void *args, size_t args_size)

/**
 * Send @p bytes of @p buf to the origin as the reply of this invocation.
 * At most one reply per invocation, and not together with xrdma_forward().
 * @return 0 on success, a negative value on error (already replied, ...).
 */
int xrdma_reply(xrdma_ctx_t *ctx, const void *buf, size_t bytes);

/**
 * Run the same ifunc again at peer @p rank with new arguments; the rank that
 * finally does not forward replies straight to the original origin.
 * At most one forward per invocation, and not together with xrdma_reply().
 * @return 0 on success, a negative value on error (unknown rank, ...).
 */
int xrdma_forward(xrdma_ctx_t *ctx, int rank, const void *args,
                  size_t args_size);

/** Rank of the process where this invocation started (the origin). */
int xrdma_origin(xrdma_ctx_t *ctx);
/** Rank of this (the executing) process. */
int xrdma_rank(xrdma_ctx_t *ctx);
/** Number of ranks known to this process (MPI: the window's group size). */
int xrdma_size(xrdma_ctx_t *ctx);
/** The user pointer the target gave its ifunc context (plugin layer). */
void *xrdma_user_ptr(xrdma_ctx_t *ctx);
/** Put-and-poll mode: the target_args the target passed to ucx_ifunc_poll(). */
void *xrdma_target_args(xrdma_ctx_t *ctx);

/**
 * Print one line (printf format) on the target's standard error, prefixed
 * with the target's rank and the entry's name:
 * "[xrdma rank R ifunc 'entry'] text". Allowed under the default symbol
 * policy. At most XRDMA_LOG_RATE lines a second per process (bursts of as
 * many); lines past it are dropped and the next printed line says how many.
 * @return 0 if printed, 1 if dropped by the rate limit, -1 on bad arguments.
 */
int xrdma_log(xrdma_ctx_t *ctx, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* UCX_IFUNC_RUNTIME_H */
