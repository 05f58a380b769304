/**
 * @file ucx_ifunc/ucp_compat.h
 * @brief Source compatibility with the published UCX ifunc API.
 *
 * Programs written for the published API compile and run with this one
 * include added. Each ifunc `<name>` is a library `<name>.so` in the
 * directory `UCX_IFUNC_LIB_DIR` (default: the current directory) exporting
 *   void   <name>_main(void *payload, size_t payload_size, void *target_args);
 *   size_t <name>_payload_bound(void *source_args, size_t source_args_size);
 *   int    <name>_payload_init(void *source_args, size_t source_args_size,
 *                              void *payload, size_t *payload_size);
 * The whole library travels in the first message to each endpoint (no GOT
 * patching); later messages carry its hash. The target loads it from memory:
 * it never needs the library file, and caches loaded code by content hash.
 * Build the library as usual (`cc -shared -fPIC`, -Wl,-rpath allowed): the
 * toolchain's start files and a search path are recognised and left out of
 * the loaded copy. Code of your own that would run when the library is
 * loaded or unloaded (constructors, destructors, -Wl,-init, IFUNC resolvers)
 * is refused by name. See ucx_ifunc(3), "The published ifunc API".
 */
#ifndef UCX_IFUNC_UCP_COMPAT_H
#define UCX_IFUNC_UCP_COMPAT_H

#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A registered ifunc library (origin side). */
typedef struct ucp_ifunc *ucp_ifunc_h;

/** Registration parameters, passed by value. */
typedef struct ucp_ifunc_reg_param {
    char *name;   /**< ifunc name: the library is UCX_IFUNC_LIB_DIR/<name>.so */
    int   pure;   /**< Accepted for compatibility; no effect. */
    /**
     * 1: ship LLVM bitcode instead: the files UCX_IFUNC_LIB_DIR/<name>.<triple>.bc
     * (one per target triple, e.g. counter.aarch64-linux-gnu.bc), each target
     * compiling the one for its own triple; an optional <name>.deps lists
     * libraries (one per line, # comments) the target loads first, each found
     * as the link editor finds it (linker scripts such as libgcc_s.so
     * followed, in the compiler's library directories too); one found
     * nowhere is a warning, and only code that needs a symbol of it fails.
     * The origin takes the payload functions from <name>.so if present, else
     * from the bitcode for its own triple.
     */
    int   llvm_bc;
} ucp_ifunc_reg_param_t;

/** A message ready to be sent; frame bytes are owned by the message. */
typedef struct ucp_ifunc_msg {
    ucp_ifunc_h ifunc_h;  /**< The ifunc it invokes. */
    void       *frame;    /**< Frame bytes (header, code, payload, trailer). */
    size_t      frame_size; /**< Their size: the target buffer must hold it. */
} ucp_ifunc_msg_t;

/** Load `<name>.so` at the origin and build its image. */
ucs_status_t ucp_register_ifunc(ucp_context_h context, const ucp_ifunc_reg_param_t param,
                                ucp_ifunc_h *ifunc_p);
/** Release a registered ifunc. Messages created from it must be freed first. */
ucs_status_t ucp_deregister_ifunc(ucp_context_h context, ucp_ifunc_h ifunc_h);
/**
 * Build a message: calls `<name>_payload_bound` and `<name>_payload_init`
 * with @p source_args to fill the payload; the message carries the size
 * `<name>_payload_init` reports (at most the bound).
 */
ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h ifunc_h, void *source_args, size_t source_args_size,
                                  ucp_ifunc_msg_t *msg_p);
/** Free a message's frame. */
ucs_status_t ucp_ifunc_msg_free(ucp_ifunc_msg_t msg);
/** Payload inside a message, to change it between sends. @p payload_size may be NULL. */
ucs_status_t ucp_ifunc_msg_get_payload_ptr(ucp_ifunc_msg_t *msg_p, void **payload,
                                           size_t *payload_size);
/**
 * Put the message into the target's buffer at @p remote_addr: with the code
 * on the ifunc's first send to @p ep, with its hash after that. The message
 * is not modified (resending it unchanged without a flush is fine). UCS_OK:
 * done; UCS_INPROGRESS: flush the endpoint before changing the payload or
 * reusing the target buffer.
 */
ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg, uint64_t remote_addr,
                                 ucp_rkey_h rkey);
/**
 * Target side: if @p buffer holds a complete message, clear the buffer, run
 * its `<name>_main` with @p target_args and return UCS_OK; otherwise progress
 * @p worker and return UCS_ERR_NO_MESSAGE. A message consumed without
 * running to its end (malformed, larger than @p buffer_size, its code
 * unknown here, refused by the symbol policy or failing to load or link, or
 * its `<name>_main` faulting) returns UCS_ERR_CANCELED once, as the
 * published implementation does for a discarded message, and is logged with
 * the reason; the next one still runs. A message refused before it ran
 * leaves a refusal record in @p buffer (not a message: later calls return
 * UCS_ERR_NO_MESSAGE) for its origin.
 *
 * Origin side: a call that finds nothing to run also looks, now and then
 * (after 65536 such calls in a row on a thread, and after each 65536 more),
 * at where this program's messages of ifuncs
 * registered with @p context went: for each message (ucp_ifunc_msg_t), the
 * buffer its last ucp_ifunc_send_nbix() wrote, as long as the message and its
 * ifunc exist (keep the endpoint and the rkey valid until then). Finding its
 * target's refusal record there, the call returns UCS_ERR_REJECTED, once per
 * refused message, and logs the target's reason. A program that waits for an
 * answer by calling this until UCS_OK should stop on an error: the answer to
 * a refused message never comes.
 */
ucs_status_t ucp_poll_ifunc(ucp_context_h context, void *buffer, size_t buffer_size,
                            void *target_args, ucp_worker_h worker);

#ifdef __cplusplus
}
#endif
#endif /* UCX_IFUNC_UCP_COMPAT_H */
