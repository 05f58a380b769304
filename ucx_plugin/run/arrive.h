// A message that arrived (an active message, or a frame found in a ring):
// handled right where it is when nothing waits before it and progress may
// run it, else queued with its own copy (receive.cc runs the queue). Inline:
// it is on the path of every message, between the ring or the UCX handler
// and the handling.
#pragma once

#include "run/context.h"

#include <cstddef>
#include <cstring>

namespace xrdma {

// The worker whose pass ucx_ifunc_progress() runs on this thread, while no
// message is being handled and no ifunc runs on it: a message for any
// context of that worker is handled where it arrives, not only one for the
// context progress was called for (one pass serves every MPI window's
// context; the others' messages were copied and queued, a mutex and a copy
// per message of a program's second window).
extern __thread ucp_worker_h t_serving __attribute__((tls_model("initial-exec")));

// receive.cc: list @p ctx for the end of the pass (its queue, its batched
// acks: run_others()); queue a message with its own copy.
void mark_queued(ucx_ifunc_context *ctx);
void arrive_queued(ucx_ifunc_context *ctx, uint16_t am_id, const void *header, size_t header_length,
                   const void *data, size_t length, ucp_ep_h reply_ep);

inline void handle(ucx_ifunc_context *ctx, Incoming &in)
{
    if (in.am_id == kAmInvoke)
        target_handle_invoke(ctx, in);
    else
        origin_handle_reply(ctx, in);
}

// Whether an invocation asked to run from the queue (kQueued): its function
// progresses the worker, which UCX does not allow inside its handler. (Its
// flags are at the same place in the full and the short header.)
inline bool queued_only(uint16_t am_id, const void *header, size_t header_length)
{
    static_assert(offsetof(InvokeHdr, flags) == offsetof(InvokeShortHdr, flags), "wire layout");
    if (am_id != kAmInvoke || header_length < sizeof(InvokeShortHdr)) return false;
    uint8_t flags;
    memcpy(&flags, static_cast<const uint8_t *>(header) + offsetof(InvokeHdr, flags), 1);
    return flags & kQueued;
}

// Whether a message that arrived in @p ctx may be handled right where it
// is: nothing waits before it, and progress may run it. (No ifunc runs on
// this thread: t_dispatching. ctx->in_dispatch is not asked: a context is
// used by one thread at a time, ucx_ifunc.h, so an ifunc of this context
// would be running on this thread.)
inline bool arrive_here_ok(ucx_ifunc_context *ctx)
{
    return (ctx->in_progress || t_serving == ctx->params.worker) && !t_dispatching && ctx->incoming.empty();
}

// Handle a message where it arrived (arrive_here_ok()): @p f, with
// progress's state set aside meanwhile (@p in_ucx: inside UCX's
// active-message handler).
template <typename F>
inline __attribute__((always_inline)) void handle_here(ucx_ifunc_context *ctx, bool in_ucx, F f)
{
    const bool in_progress = ctx->in_progress;
    const ucp_worker_h serving = t_serving;
    ctx->in_progress = false;  // (a send inside may progress: queue what comes then)
    t_serving = nullptr;
    ctx->in_handler = in_ucx;  // inside UCX's handler: UCX progress must not recurse
    f();
    ctx->in_handler = false;
    t_serving = serving;
    ctx->in_progress = in_progress;
    // Another context of the worker: its batched acks go at the end of
    // this pass, with the queued messages of the others (run_others()).
    if (!in_progress && ctx->acks_waiting && !ctx->queued_listed) mark_queued(ctx);
}

// Message (@p header, @p data) of kind @p am_id from @p reply_ep arrived in
// @p ctx (@p in_ucx: inside UCX's active-message handler). Always inline:
// left to itself GCC makes a call of it (a weak copy outside the hot
// functions' pages), and the shm message rate fell by a quarter.
inline __attribute__((always_inline)) void arrive(ucx_ifunc_context *ctx, uint16_t am_id, const void *header,
                                                 size_t header_length, const void *data, size_t length,
                                                 ucp_ep_h reply_ep, bool in_ucx)
{
    if (!arrive_here_ok(ctx) || queued_only(am_id, header, header_length)) {
        arrive_queued(ctx, am_id, header, header_length, data, length, reply_ep);
        return;
    }
    handle_here(ctx, in_ucx, [&] {
        const auto *h = static_cast<const uint8_t *>(header), *d = static_cast<const uint8_t *>(data);
        if (am_id == kAmInvoke && header_length == sizeof(InvokeShortHdr)) {
            target_handle_short(ctx, h, d, length, reply_ep);  // (a warm invocation: no Incoming)
        } else {
            Incoming in{am_id, View{h, header_length}, View{d, length}, reply_ep, true, UCX_IFUNC_OK};
            handle(ctx, in);
        }
    });
}

}  // namespace xrdma
