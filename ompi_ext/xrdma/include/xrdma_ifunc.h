/**
 * @file xrdma_ifunc.h
 * @brief The runtime API that injected functions (ifuncs) call at the target:
 * the header an ifunc includes.
 *
 * An ifunc is written as
 * @code
 *   #include <xrdma_ifunc.h>
 *   XRDMA_IFUNC(add) { ... uses ctx, args, args_size ... return 0; }
 * @endcode
 * and compiled into an image with `xrdma-cc`. The functions below are
 * resolved in the target process when the image is loaded there; the target
 * never had the ifunc's code installed.
 *
 * Two layers implement them, each declaring its own:
 * - <ucx_ifunc/runtime.h>, included here, is the plugin's (libucx_ifunc):
 *   XRDMA_IFUNC, xrdma_ctx_t, xrdma_reply(), xrdma_forward(),
 *   xrdma_origin(), xrdma_rank(), xrdma_size(), xrdma_user_ptr(),
 *   xrdma_target_args() and xrdma_log(); an ifunc for the plugin alone
 *   may include it instead of this header.
 * - This header is the MPI layer's (libmpix_xrdma): the window accessors
 *   xrdma_target(), xrdma_target_blocks(), xrdma_incoming() and
 *   xrdma_win_base(), and streaming functions (XRDMA_STREAM,
 *   xrdma_stream(), xrdma_stream_reply()), registered with the plugin
 *   through ucx_ifunc_register_runtime() (ucx_ifunc(3)); an image that
 *   calls them can only be loaded by a target that runs the MPI layer.
 */
#ifndef XRDMA_IFUNC_H
#define XRDMA_IFUNC_H

#include <ucx_ifunc/runtime.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The operation's window memory ---- */
/** Target region of this operation (at target_disp), its size in bytes. */
void *xrdma_target(xrdma_ctx_t *ctx, size_t *bytes);
/** Xput: the origin data that arrived with this operation. */
const void *xrdma_incoming(xrdma_ctx_t *ctx, size_t *bytes);
/** The whole local window memory of this rank. */
void *xrdma_win_base(xrdma_ctx_t *ctx, size_t *bytes);

/** One contiguous block of the target region. */
typedef struct {
    void *addr;
    size_t len;
} xrdma_block_t;
/**
 * The blocks of the target datatype at this operation's target, in datatype
 * (typemap) order, adjacent ones merged: an Xput's incoming data, packed
 * with the origin datatype, fills them in this order, as MPI_Put would.
 * Valid until the function returns; NULL and 0 for MPIX_Xinvoke.
 */
const xrdma_block_t *xrdma_target_blocks(xrdma_ctx_t *ctx, size_t *count);

/* ---- Streaming handlers (MPI layer, xrdma_stream(3)) ---- */
/**
 * Header handler: runs first, once per operation, with the operation's
 * arguments and the number of bytes the payload handler will be given (an
 * Xput's incoming data; an Xget's target region).
 */
typedef int (*xrdma_stream_header_t)(xrdma_ctx_t *ctx, void *state, const void *args,
                                     size_t args_size, size_t incoming_bytes);
/**
 * Payload handler: runs for each piece of the incoming data, in order, as it
 * arrives. A piece lies within one chunk (XRDMA_STREAM_CHUNK bytes at
 * offsets that are multiples of it) and within one block of the target
 * datatype: @p target is where MPI_Put would store these @p bytes (NULL for
 * data past the target datatype's blocks), @p offset their place in the
 * incoming data. For an MPIX_Xget the pieces are the target region's
 * blocks themselves (@p data == @p target), and the handler may produce the
 * reply piece by piece with xrdma_stream_reply().
 */
typedef int (*xrdma_stream_payload_t)(xrdma_ctx_t *ctx, void *state, void *target,
                                      const void *data, size_t bytes, size_t offset);
/** Completion handler: runs last, once, after every piece was handled. */
typedef int (*xrdma_stream_completion_t)(xrdma_ctx_t *ctx, void *state);

/** Largest per-operation state a streaming function may have. */
#define XRDMA_STREAM_STATE_MAX 65536

/**
 * Run the handlers over this operation (what XRDMA_STREAM expands to): the
 * header handler, the payload handler for each piece of the incoming data
 * (fetched from the origin chunk by chunk while the handlers run, when the
 * data was not sent along), then the completion handler. @p state
 * (@p state_size bytes, zeroed first) is passed to each. @p header and
 * @p completion may be NULL. The first non-zero handler return ends the
 * operation with it. @return 0, a handler's non-zero return, or -1 on an
 * error of XRDMA's (the operation fails with its class).
 */
int xrdma_stream(xrdma_ctx_t *ctx, const void *args, size_t args_size, void *state,
                 size_t state_size, xrdma_stream_header_t header,
                 xrdma_stream_payload_t payload, xrdma_stream_completion_t completion);

/**
 * Append @p bytes at @p data to the reply of a streaming function's
 * MPIX_Xget (from its handlers): the reply, the concatenation of these
 * pieces, goes to the origin after the completion handler, as with
 * xrdma_reply(). Without any, the Xget returns the target region.
 * @return 0, or -1 outside an Xget's streaming handlers or on bad memory.
 */
int xrdma_stream_reply(xrdma_ctx_t *ctx, const void *data, size_t bytes);

/**
 * Define a streaming ifunc entry @p name: per-operation state of type
 * @p state_type (at most XRDMA_STREAM_STATE_MAX bytes, zeroed), and the
 * header, payload and completion handlers (header and completion may be
 * NULL). The origin's MPI layer sees the marker entry
 * <name>__xrdma_stream and streams large MPIX_Xput data to it.
 */
#define XRDMA_STREAM(name, state_type, header, payload, completion)                \
    XRDMA_IFUNC_DEFINE_(name##__xrdma_stream)                                      \
    {                                                                              \
        (void)ctx, (void)args, (void)args_size;                                    \
        return -1; /* a marker: not meant to be invoked */                         \
    }                                                                              \
    XRDMA_IFUNC_DEFINE_(name)                                                      \
    {                                                                              \
        state_type xrdma_stream_state_;                                            \
        return xrdma_stream(ctx, args, args_size, &xrdma_stream_state_,            \
                            sizeof(xrdma_stream_state_), header, payload, completion); \
    }

#ifdef __cplusplus
}
#endif
#endif /* XRDMA_IFUNC_H */
