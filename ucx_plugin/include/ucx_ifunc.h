/**
 * @file ucx_ifunc.h
 * @brief Injected functions over UCX: send code to a peer and run it there.
 *
 * A context is bound to one ucp_worker_h. The origin registers an image
 * (built by `xrdma-cc`) and invokes one of its entries on a ucp_ep_h; the
 * first invocation to a peer carries the image, later ones only its hash.
 * The target loads the code from memory, caches it by hash, runs it, and the
 * reply comes back to the origin's completion callback. Nothing here is
 * thread-safe unless stated: use one context from one thread at a time.
 */
#ifndef UCX_IFUNC_H
#define UCX_IFUNC_H

#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this library, "MAJOR.MINOR.PATCH". */
const char *ucx_ifunc_version(void);

/**
 * Status of every call and completion. Values are stable (part of the wire
 * protocol: a target sends them back to the origin).
 */
typedef enum {
    UCX_IFUNC_OK                 = 0,  /**< Success. */
    UCX_IFUNC_INPROGRESS         = 1,  /**< Accepted, completes later. */
    UCX_IFUNC_ERR_INVALID_PARAM  = -1, /**< Bad argument from the caller. */
    UCX_IFUNC_ERR_NO_MEMORY      = -2, /**< Out of memory. */
    UCX_IFUNC_ERR_IO             = -3, /**< File could not be read. */
    UCX_IFUNC_ERR_TRUNCATED      = -10, /**< Image shorter than it says; frame larger than the poll buffer. */
    UCX_IFUNC_ERR_BAD_MAGIC      = -11, /**< Not an XRDMA image. */
    UCX_IFUNC_ERR_BAD_VERSION    = -12, /**< Unsupported format version. */
    UCX_IFUNC_ERR_BAD_LENGTH     = -13, /**< A length/offset/count lies outside the image. */
    UCX_IFUNC_ERR_HASH_MISMATCH  = -14, /**< Content does not match its hash. */
    UCX_IFUNC_ERR_NO_ENTRY       = -15, /**< The named entry does not exist. */
    UCX_IFUNC_ERR_NO_PART        = -16, /**< No part this target can run. */
    UCX_IFUNC_ERR_BAD_CODE       = -17, /**< A part is not valid code (bad ELF/bitcode). */
    UCX_IFUNC_ERR_LINK           = -18, /**< Loading failed (unresolved symbol, ...). */
    UCX_IFUNC_ERR_DENIED         = -19, /**< Refused by the target's policy. */
    UCX_IFUNC_ERR_FAULT          = -20, /**< The ifunc faulted at the target. */
    UCX_IFUNC_ERR_RETURN         = -21, /**< The ifunc returned non-zero. */
    UCX_IFUNC_ERR_PEER           = -22, /**< Peer unreachable or failed. */
    UCX_IFUNC_ERR_NO_ROUTE       = -23, /**< Forward/reply to an unknown rank. */
    UCX_IFUNC_ERR_PROTOCOL       = -24, /**< Malformed wire message. */
    UCX_IFUNC_ERR_TRANSPORT      = -25, /**< UCX reported an error. */
    UCX_IFUNC_ERR_TIMEOUT        = -26, /**< The ifunc ran too long. */
    UCX_IFUNC_ERR_NEED_CODE      = -27  /**< Internal: target lacks the code. */
} ucx_ifunc_status_t;

/** Short human-readable name of a status, never NULL. */
const char *ucx_ifunc_status_string(ucx_ifunc_status_t status);

/** A context: the ifunc state of one ucp_worker_h. */
typedef struct ucx_ifunc_context *ucx_ifunc_context_h;
/** A registered image entry at the origin. */
typedef struct ucx_ifunc *ucx_ifunc_h;

struct xrdma_ctx;

/** Runs an ifunc entry at the target; the MPI layer installs its own. */
typedef int (*ucx_ifunc_dispatch_fn_t)(void *dispatch_arg, struct xrdma_ctx *ctx,
                                       int (*entry)(struct xrdma_ctx *, const void *, size_t),
                                       const void *payload, size_t payload_size);

/** Context parameters; zero-initialise, then set what you need. */
typedef struct {
    ucp_worker_h worker;   /**< Required. The worker whose AM ids we use. */
    int          rank;     /**< This process's rank for forwarding (default 0). */
    int          size;     /**< Number of ranks (xrdma_size()); default 1. */
    void        *user_ptr; /**< Returned by xrdma_user_ptr() in ifuncs. */
    /** Optional: called to run each entry (default: entry(ctx,payload,size)). */
    ucx_ifunc_dispatch_fn_t dispatch;
    void        *dispatch_arg; /**< Passed to @ref dispatch. */
    /**
     * First of the two UCP AM ids this context uses (it also uses id+1).
     * 0: the default (0xA1). Several contexts can share a worker with
     * distinct ids; all peers of a context must use the same ids.
     */
    uint16_t     am_id;
    /**
     * Nonzero: every context that sends to this one is in its peer table
     * under its rank, and this one in theirs (ucx_ifunc_peer_add(), before
     * the first message between them), as an MPI communicator's ranks are;
     * set it in all of them or none. A warm invocation sent as an active
     * message then names its sender by rank (4 bytes after the arguments),
     * and an answer by the rank in its header, instead of asking UCX for a
     * reply endpoint (UCP_AM_SEND_FLAG_REPLY), which saves UCX's
     * endpoint-id lookup and a gathered piece per message. An invocation
     * from a rank that is not in the table is dropped with an error; one
     * named by rank that reaches a context without the setting is refused
     * with UCX_IFUNC_ERR_PROTOCOL (where its table knows the rank).
     * (Beside am_id, in what was padding: the later members keep their
     * offsets.)
     */
    int          peers_by_rank;
    /**
     * Optional: whether this process may run code on behalf of peer @p rank
     * (its memory is mapped here, see ucx_ifunc_invoke_local()). A forward
     * of movable code to such a rank continues in this process instead of
     * travelling as a message. Called with @ref dispatch_arg. Its answer for
     * a rank must not change while the context's peers do not
     * (ucx_ifunc_peer_add()): the plugin remembers where a stream of
     * forwards went.
     */
    int        (*runs_here)(void *dispatch_arg, int rank);
    /**
     * Optional: the layer's side of a forward that continues in this
     * process. Called inside the dispatch hook's call of the entry, after
     * the function forwarded to @p rank (this rank, or a peer's for movable
     * code): if the layer maps @p rank's memory here, it points what it
     * showed the function (its layer data) at that memory and returns 0,
     * and the function runs again there, in the same dispatch and guarded
     * call (a whole local chain of hops costs one of each). It returns a
     * positive value if @p rank's memory is not here (the forward travels
     * as a message), or calls ucx_ifunc_ctx_fail() and returns a negative
     * value (that ends the invocation with the error). Without it, each
     * local hop is a dispatch of its own (see @ref runs_here).
     */
    int        (*continue_at)(void *dispatch_arg, struct xrdma_ctx *ctx, int rank);
    /**
     * Optional: the UCP context of @ref worker. With it, small messages to a
     * peer whose memory UCX maps into this process (shared memory) are
     * written into a ring in the peer's memory that its progress polls,
     * instead of travelling as active messages (XRDMA_RING=off: never).
     * NULL: active messages only.
     */
    ucp_context_h ucp_context;
    /**
     * Optional: an endpoint to peer @p rank, made when the context first
     * needs it (the layer connects now; UCX wires it up in the background).
     * Called with @ref dispatch_arg where the context needs a peer its
     * table has none for: a forward to that rank, an answer to it as an
     * origin, or a message that names it as its sender (@ref peers_by_rank).
     * The endpoint joins the peer table as ucx_ifunc_peer_add() would add
     * it. NULL, or a NULL return: the rank is not a peer (a forward to it
     * fails with UCX_IFUNC_ERR_NO_ROUTE, a message naming it is dropped).
     * With it, a job of many ranks connects only the pairs that talk
     * (ucx_ifunc(3), "Peers on demand"). It may be called from inside
     * ucx_ifunc_progress(), UCX's message handler included.
     */
    ucp_ep_h   (*connect)(void *dispatch_arg, int rank);
} ucx_ifunc_context_params_t;

/**
 * Create a context on a worker. The worker's context must have been created
 * with UCP_FEATURE_AM (and UCP_FEATURE_RMA for put-and-poll).
 */
ucx_ifunc_status_t ucx_ifunc_context_create(const ucx_ifunc_context_params_t *params,
                                            ucx_ifunc_context_h *ctx_p);

/**
 * Destroy a context. Pending invocations complete with UCX_IFUNC_ERR_PEER.
 * Registered ifuncs must be deregistered first.
 */
void ucx_ifunc_context_destroy(ucx_ifunc_context_h ctx);

/**
 * Make peer @p rank reachable through @p ep for forwarding and for replies
 * to forwarded calls. Replaces an earlier mapping of that rank.
 */
ucx_ifunc_status_t ucx_ifunc_peer_add(ucx_ifunc_context_h ctx, int rank,
                                      ucp_ep_h ep);

/**
 * Tell the context that @p ep failed (e.g. from the ep's error handler):
 * every invocation pending on it completes with UCX_IFUNC_ERR_PEER, and
 * later invocations on it fail at once with UCX_IFUNC_ERR_PEER.
 */
void ucx_ifunc_peer_failed(ucx_ifunc_context_h ctx, ucp_ep_h ep);

/**
 * Register entry @p entry of the image in file @p path. The file is read
 * once; the origin keeps the bytes. @p entry NULL: the image's only entry.
 */
ucx_ifunc_status_t ucx_ifunc_register_file(ucx_ifunc_context_h ctx,
                                           const char *path, const char *entry,
                                           ucx_ifunc_h *ifunc_p);

/** Flags for ucx_ifunc_register_mem(). */
enum {
    /** Skip the origin-side validation (tests and tools that probe targets). */
    UCX_IFUNC_REGISTER_NO_VERIFY = 1u << 0
};

/** Register entry @p entry of an image in memory (copied). */
ucx_ifunc_status_t ucx_ifunc_register_mem(ucx_ifunc_context_h ctx,
                                          const void *image, size_t size,
                                          const char *entry, unsigned flags,
                                          ucx_ifunc_h *ifunc_p);

/** Deregister; invocations already issued still complete. */
void ucx_ifunc_deregister(ucx_ifunc_h ifunc);

/** Hash of the registered image (32 bytes, SHA-256). */
const uint8_t *ucx_ifunc_hash(ucx_ifunc_h ifunc);

/** What an invocation's completion receives. Valid only during the callback. */
typedef struct {
    ucx_ifunc_status_t status;     /**< Outcome. */
    const void        *reply;      /**< Reply bytes from the final target. */
    size_t             reply_size; /**< Their size. */
    int                rank;       /**< Rank that completed (or failed) it; -1 if unknown. */
    const char        *message;    /**< Readable cause on error, "" on success. */
} ucx_ifunc_result_t;

/** Completion callback of an invocation. */
typedef void (*ucx_ifunc_complete_cb_t)(const ucx_ifunc_result_t *result,
                                        void *user_data);

/**
 * Invoke @p ifunc at the peer behind @p ep with @p args (copied before return).
 * On UCX_IFUNC_INPROGRESS, @p cb is called exactly once, from
 * ucx_ifunc_progress(), when the reply (or an error) arrived. Any other
 * return is an immediate failure and @p cb is not called.
 */
ucx_ifunc_status_t ucx_ifunc_invoke_nb(ucx_ifunc_h ifunc, ucp_ep_h ep,
                                       const void *args, size_t args_size,
                                       ucx_ifunc_complete_cb_t cb,
                                       void *user_data);

/** Flags of ucx_ifunc_invoke_nbx(). */
enum {
    /** The target runs the invocation from its ucx_ifunc_progress() call,
     *  never inside UCX's message handler, so the function may progress the
     *  worker (ucx_ifunc_ctx_progress()); forwards keep the flag. */
    UCX_IFUNC_INVOKE_QUEUED = 1u << 0,
    /** A success without reply bytes may be answered late: the target holds
     *  such answers for this origin, batched, until the origin asks for them
     *  (ucx_ifunc_request_acks()) or 64 are held; @p cb waits for them.
     *  Failures, replies with bytes and the answers of forwarded invocations
     *  come at once. For a caller that waits for completions in batches
     *  (as MPI_Win_flush does), so that a stream of invocations costs one
     *  acknowledgement per batch, not one per invocation. */
    UCX_IFUNC_INVOKE_LAZY_ACK = 1u << 1
};

/** ucx_ifunc_invoke_nb() with @p flags (UCX_IFUNC_INVOKE_*). */
ucx_ifunc_status_t ucx_ifunc_invoke_nbx(ucx_ifunc_h ifunc, ucp_ep_h ep,
                                        const void *args, size_t args_size, unsigned flags,
                                        ucx_ifunc_complete_cb_t cb, void *user_data);

/**
 * Ask the target behind @p ep for the answers it holds for invocations sent
 * with UCX_IFUNC_INVOKE_LAZY_ACK, and for those of every invocation issued
 * so far as soon as they finish; their callbacks follow from
 * ucx_ifunc_progress(). One small message, sent behind the invocations it
 * asks about. UCX_IFUNC_OK (sent or in flight), UCX_IFUNC_ERR_PEER (the
 * endpoint failed: its invocations fail anyway), UCX_IFUNC_ERR_INVALID_PARAM,
 * UCX_IFUNC_ERR_TRANSPORT (no active messages in this context).
 */
ucx_ifunc_status_t ucx_ifunc_request_acks(ucx_ifunc_context_h ctx, ucp_ep_h ep);

/**
 * Whether @p ifunc may run outside the process it is sent to: its code has no
 * writable data of its own and asks for no target-only state
 * (xrdma_user_ptr(), xrdma_target_args()). The first call loads the code into
 * this context's code cache (the symbol policy applies as at a target) and
 * decides; later calls return the same. UCX_IFUNC_OK: movable;
 * UCX_IFUNC_ERR_DENIED: loaded, but it may run here only on this process's
 * own rank; another error: the code cannot be loaded here. @p why (may be
 * NULL) says why not.
 */
ucx_ifunc_status_t ucx_ifunc_movable(ucx_ifunc_h ifunc, char *why, size_t why_size);

/**
 * Whether @p ifunc's invocations end where they run: its code does not call
 * xrdma_forward(), so an invocation never travels on; it succeeds, fails or
 * replies where it runs. A
 * layer above may then run several calls of it under one invocation
 * (ucx_ifunc_ctx_next_call(); the MPI layer bundles a stream of MPIX_Xinvoke
 * calls). Read from the dynamic symbols of the image's native part for this
 * machine, without loading it (no code is mapped or run); decided once per
 * registered ifunc, for the whole image (one entry's imports are not told
 * apart from another's). UCX_IFUNC_OK: it stays; UCX_IFUNC_ERR_DENIED: it
 * may travel on, or the image has no native part for this machine to tell
 * (bitcode only, another architecture); UCX_IFUNC_ERR_INVALID_PARAM:
 * @p ifunc is NULL.
 */
ucx_ifunc_status_t ucx_ifunc_stays(ucx_ifunc_h ifunc);

/**
 * Run @p ifunc in this process on behalf of peer @p rank, as if
 * ucx_ifunc_invoke_nb() had sent it there: inside it xrdma_rank() is @p rank,
 * the context's dispatch hook runs it (the layer above maps @p rank's memory),
 * with the same fault containment, quarantine and errors as at a target.
 * Forwards continue here while runs_here() says so, else travel as messages
 * and answer this process. On UCX_IFUNC_INPROGRESS @p cb is called exactly
 * once: before this returns if nothing left the process, else from
 * ucx_ifunc_progress(). Needs ucx_ifunc_movable() called first: UCX_IFUNC_OK
 * for any @p rank, UCX_IFUNC_ERR_DENIED for this context's own rank only.
 * Any other return: nothing ran, @p cb is not called.
 */
ucx_ifunc_status_t ucx_ifunc_invoke_local(ucx_ifunc_h ifunc, int rank, const void *args,
                                          size_t args_size, ucx_ifunc_complete_cb_t cb,
                                          void *user_data);

/**
 * Progress the worker and the context: run arrived ifuncs, deliver replies;
 * also for the other contexts on the same worker, what arrived for them in
 * this pass (one call serves every context of a worker).
 * @return number of events handled (0 = nothing happened).
 */
unsigned ucx_ifunc_progress(ucx_ifunc_context_h ctx);

/**
 * ucx_ifunc_progress() for a caller that waits for the answers to its
 * invocations (a loop until they completed): a pass that handled nothing
 * then watches the context's rings (shared memory) for a moment, up to
 * XRDMA_RING_WAIT looks (default 8), each after a spin-wait hint (x86
 * pause), and returns as soon as a frame came. The hint leaves the core to
 * a hyperthread that shares it, possibly the target's. Without rings it is
 * ucx_ifunc_progress().
 * @return number of events handled (0 = nothing happened).
 */
unsigned ucx_ifunc_progress_wait(ucx_ifunc_context_h ctx);

/**
 * Whether progress through @p ctx may spin on the rings (default 1): linger
 * after a pass that served invocations from them (XRDMA_RING_LINGER), and
 * look at them between the passes of ucx_ifunc_progress_wait()
 * (XRDMA_RING_WAIT). 0 for a process that shares its cores with more
 * processes than there are cores: spinning there keeps the core from the
 * process it waits for (with 4 ranks on 2 cores a chase over rings took
 * ~1.4x as long). Both then behave as with those knobs at 0.
 */
void ucx_ifunc_set_spin(ucx_ifunc_context_h ctx, int spin);

/** Number of invocations this origin has issued and not yet completed. */
size_t ucx_ifunc_pending(ucx_ifunc_context_h ctx);

/**
 * Bytes an invocation adds on the wire to its arguments: its header and an
 * entry name of @p entry_len bytes (the first one to a peer carries the
 * image as well). For a layer that sizes its transport so that warm
 * invocations fit one short message.
 */
size_t ucx_ifunc_invoke_overhead(size_t entry_len);

/**
 * Target side: drop every cached image (loaded code is unloaded). Later
 * invocations carrying only a hash get "need code" and are resent with it.
 */
void ucx_ifunc_cache_flush(ucx_ifunc_context_h ctx);

/* ---- For the layer above (the MPI layer), inside its dispatch hook ---- */

/** Attach layer data to an invocation (read back with ucx_ifunc_ctx_layer()). */
void ucx_ifunc_ctx_set_layer(struct xrdma_ctx *x, void *layer_data);
/** Layer data of an invocation, or NULL. */
void *ucx_ifunc_ctx_layer(struct xrdma_ctx *x);
/**
 * Keep the first @p prefix_len bytes of the payload the dispatch hook got in
 * front of the arguments of a forward: a layer's own header travels along
 * while xrdma_forward() callers only see their arguments.
 */
void ucx_ifunc_ctx_set_forward_prefix(struct xrdma_ctx *x, size_t prefix_len);
/** Whether the invocation has replied or forwarded already. */
int ucx_ifunc_ctx_answered(struct xrdma_ctx *x);
/** Whether the invocation has forwarded itself (xrdma_forward()). */
int ucx_ifunc_ctx_forwarded(struct xrdma_ctx *x);
/**
 * For a layer whose dispatch hook calls the entry several times under one
 * invocation (calls of an ifunc that stays, ucx_ifunc_stays()): after one
 * call, before the next. What that call replied is dropped (the invocation
 * answers for all its calls, without reply bytes). @return 0, or -1 if it
 * forwarded (the invocation cannot go on: fail it, ucx_ifunc_ctx_fail()) or
 * @p x is NULL.
 */
int ucx_ifunc_ctx_next_call(struct xrdma_ctx *x);
/**
 * The ranks an invocation's function sees, for a layer whose units of work
 * name a group of the context's peers (an MPI window names the processes of
 * its communicator by their rank in it): xrdma_rank(), xrdma_size() and
 * xrdma_origin() answer in the group's ranks, and xrdma_forward() takes
 * one. The context's own ranks (the peer table, the wire) stay the peers'.
 */
typedef struct {
    int        size;     /**< What xrdma_size() returns. */
    /** Peer of each rank of the group (size entries); NULL: rank r is peer r. */
    const int *peer_of;
    /**
     * The group rank of peer @p peer, or -1 if it is not in the group; NULL:
     * peer r is rank r. Called with the view itself.
     */
    int      (*rank_of)(const void *view, int peer);
} ucx_ifunc_view_t;

/**
 * From the dispatch hook, before it calls the entry: the ranks this call's
 * function sees (@p view, which must stay valid until the entry returns;
 * NULL: the context's own). Each dispatch starts without a view; forwards
 * that continue in this process (continue_at) keep the one set.
 */
void ucx_ifunc_ctx_set_view(struct xrdma_ctx *x, const ucx_ifunc_view_t *view);
/**
 * From the dispatch hook, instead of calling the entry: the layer cannot
 * run this invocation yet (what it names is not there yet: an MPI window
 * still being created). The plugin keeps it, and the later invocations of
 * the same sender behind it, in order, until ucx_ifunc_resume(); then it
 * is dispatched again as if it had just arrived. Other senders are served
 * meanwhile. The hook returns non-zero after calling it. Only for an
 * invocation that arrived from another process (not ucx_ifunc_ctx_local()),
 * before its entry ran; XRDMA_MAX_PARKED bounds what one sender may have
 * kept. @return 0, or -1 where it cannot be kept (a local invocation, or
 * the entry already ran): fail it instead.
 */
int ucx_ifunc_ctx_defer(struct xrdma_ctx *x);
/**
 * The layer may be ready for invocations it deferred (ucx_ifunc_ctx_defer()):
 * they are dispatched again, in order per sender, from the next
 * ucx_ifunc_progress() of the worker.
 */
void ucx_ifunc_resume(ucx_ifunc_context_h ctx);

/**
 * Whether the code of invocation @p x imports @p name (a runtime function it
 * calls, as its loader read them: the native part's dynamic symbols or the
 * bitcode's declarations): 1 yes, 0 no, -1 unknown (@p x or @p name NULL).
 * For a dispatch hook that shows a function what it asks for (the MPI layer
 * runs a function that does not call xrdma_target_blocks() once per block of
 * a target datatype with holes).
 */
int ucx_ifunc_ctx_imports(struct xrdma_ctx *x, const char *name);
/**
 * The reply the running call of @p x has made so far (xrdma_reply()):
 * 1 and its bytes in *@p data, *@p size (valid until the next call or the
 * end of the dispatch), or 0 if it has not replied. For a layer that calls
 * the entry several times under one invocation (ucx_ifunc_ctx_next_call())
 * and answers with what the calls replied, together.
 */
int ucx_ifunc_ctx_reply(struct xrdma_ctx *x, const void **data, size_t *size);
/** Whether the invocation was started in this process by ucx_ifunc_invoke_local()
 *  (or continues one here): its payload never crossed a process boundary. */
int ucx_ifunc_ctx_local(struct xrdma_ctx *x);
/**
 * From inside an entry (the layer's dispatch, or a runtime function the
 * ifunc called): progress the worker, for transfers the layer started
 * (ucp_get_nbx ...). Invocations and replies that arrive meanwhile are
 * queued and run after the entry returned. @return events progressed, or
 * -1 where UCX progress may not recurse: the invocation runs inside UCX's
 * message handler (send it with UCX_IFUNC_INVOKE_QUEUED).
 */
int ucx_ifunc_ctx_progress(struct xrdma_ctx *x);
/**
 * Replace the layer prefix (ucx_ifunc_ctx_set_forward_prefix()) of the forward
 * this invocation made with @p len bytes at @p prefix (copied); for a layer
 * whose prefix refers to this process's memory and must travel by value.
 */
void ucx_ifunc_ctx_replace_forward_prefix(struct xrdma_ctx *x, const void *prefix, size_t len);
/**
 * Fail the invocation with @p status and readable @p message (copied) instead
 * of running or answering it; the dispatch hook then returns non-zero.
 */
void ucx_ifunc_ctx_fail(struct xrdma_ctx *x, ucx_ifunc_status_t status, const char *message);
/**
 * For runtime functions of the layer above (xrdma_target() ...): copy @p n
 * bytes of the layer's own at @p src to @p dst, memory the injected function
 * handed over (e.g. store through an output pointer). Returns 0, or -1 if
 * @p dst is not accessible: the fault stops only this copy. A runtime
 * function checks what it is handed this way, since a fault inside it is not
 * contained (xrdma_ifunc(3)). Memory in the live frames of the injected
 * function (its local variables) is written without a probe.
 */
int ucx_ifunc_copy_checked(void *dst, const void *src, size_t n);

/** A function of the layer above that injected code may call by name. */
typedef struct {
    const char *name;  /**< As injected code calls it, e.g. "xrdma_target". */
    void *address;     /**< The function (cast to void *). */
} ucx_ifunc_runtime_symbol_t;

/**
 * Add functions of the layer above to the runtime API injected code calls
 * (the MPI layer adds its window accessors xrdma_target() ... this way):
 * XRDMA_SYMBOLS=runtime allows them, and the bitcode loader binds them to
 * @p address even when the layer was loaded RTLD_LOCAL. Names are copied.
 * Call it before images that use them are loaded (at initialisation); the
 * plugin's own functions (xrdma_reply() ...) are always there. Registering a
 * name again with the same address does nothing; with another address, or
 * a NULL name or address, nothing is registered and
 * UCX_IFUNC_ERR_INVALID_PARAM is returned.
 */
ucx_ifunc_status_t ucx_ifunc_register_runtime(const ucx_ifunc_runtime_symbol_t *symbols, size_t count);

/**
 * Validate an image without a context: the status image_parse gives, plus
 * NO_ENTRY if @p entry (or, when NULL, a single entry) is not listed. The
 * resolved entry name goes to @p entry_out, a readable cause to @p why
 * (always written when @p why_size is not 0; empty on success).
 */
ucx_ifunc_status_t ucx_ifunc_image_check(const void *image, size_t size, const char *entry,
                                         char *entry_out, size_t entry_out_size,
                                         char *why, size_t why_size);

/** Counters of a context, for tests, tools and benchmarks. */
typedef struct {
    uint64_t invocations_sent;   /**< Invocation messages sent (incl. resends, forwards). */
    uint64_t code_sends;         /**< Of those, how many carried the image. */
    uint64_t bytes_sent;         /**< Bytes of all messages sent (header+payload). */
    uint64_t need_code_received; /**< "need code" answers received. */
    uint64_t executed;           /**< Ifuncs run at this target. */
    uint64_t forwarded;          /**< Invocations this target forwarded. */
    uint64_t rejected;           /**< Invocations this target refused (error replies). */
    uint64_t images_loaded;      /**< Images loaded into the code cache. */
    uint64_t cache_entries;      /**< Images cached right now. */
    uint64_t ring_frames;        /**< Messages received through rings (see ucp_context). */
    uint64_t rings_in;           /**< Rings peers write into here, now. */
    uint64_t ring_bytes;         /**< Bytes of ring memory reserved for them (XRDMA_RING_MEMORY bounds it). */
    uint64_t peers;              /**< Peers in the table (added, or connected on demand). */
    uint64_t deferred;           /**< Invocations the layer deferred (ucx_ifunc_ctx_defer()). */
    uint64_t contexts;           /**< Contexts alive in this process (of every worker). */
} ucx_ifunc_stats_t;

/** Read the counters. */
void ucx_ifunc_stats(ucx_ifunc_context_h ctx, ucx_ifunc_stats_t *stats);

/* ------------------------------------------------------------------ */
/* Put-and-poll mode (X-RDMA path): the origin writes a frame with
 * ucp_put_nbx into a buffer the target exposes; the target finds it by
 * polling that buffer. No AM, no reply: the ifunc may reply on its own. */

/** A frame built for one invocation. */
typedef struct {
    void  *frame;      /**< Frame bytes (owned). */
    size_t frame_size; /**< Its size; the target buffer must be at least this. */
} ucx_ifunc_frame_t;

/**
 * Build a frame for @p ifunc with @p args. With @p with_code 0 the frame
 * carries only the hash: the target must already have the image cached.
 */
ucx_ifunc_status_t ucx_ifunc_frame_create(ucx_ifunc_h ifunc, const void *args,
                                          size_t args_size, int with_code,
                                          ucx_ifunc_frame_t *frame);
/** Free a frame's bytes. */
void ucx_ifunc_frame_free(ucx_ifunc_frame_t *frame);
/** Pointer to the argument bytes inside a frame (to update them in place). */
void *ucx_ifunc_frame_args(ucx_ifunc_frame_t *frame, size_t *args_size);

/**
 * Write @p frame into the target buffer at @p remote_addr with one put. A
 * fresh nonce and checksum are stamped first, so the target never runs a
 * frame that is only partly written. Where UCX maps the target buffer here
 * (ucp_rkey_ptr(): shared memory) this process's own stores write it, its
 * first word last after a release fence, and the call completes at once.
 * The frame must stay untouched until the put completes. Returns
 * UCX_IFUNC_OK or UCX_IFUNC_INPROGRESS (flush the ep).
 */
ucx_ifunc_status_t ucx_ifunc_frame_put(ucp_ep_h ep, ucx_ifunc_frame_t *frame,
                                       uint64_t remote_addr, ucp_rkey_h rkey);

/**
 * Target side: if @p buffer holds a complete frame, validate it, load the
 * code (cached by hash), run it and clear the buffer for the next frame.
 * @return UCX_IFUNC_OK if a frame ran, UCX_IFUNC_INPROGRESS if none is
 * there yet, or an error (the frame was consumed and dropped).
 */
ucx_ifunc_status_t ucx_ifunc_poll(ucx_ifunc_context_h ctx, void *buffer,
                                  size_t buffer_size, void *target_args);

#ifdef __cplusplus
}
#endif
#endif /* UCX_IFUNC_H */
