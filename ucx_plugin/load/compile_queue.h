// A bitcode image's compile does not stall the target: it takes far longer
// than any X-op, and the X-ops of other senders have no reason to wait for
// it. An X-op whose image must be compiled from bitcode is parked here with
// its payload while the compile helper works (jit_helper.h); the target's
// progress polls the helper without blocking and serves everything else
// meanwhile. Order is kept per sender (the endpoint an X-op arrived on, which
// delivers in issue order): a sender's later X-ops are parked behind its
// waiting one, other senders are not held. When the compile ends, the parked
// X-op runs as if it had just arrived (target_handle_invoke): it links the
// compiled code, or fails with the compile's error like an in-process compile
// would; then the X-ops parked behind it run, in order.
//
// The same queue keeps the X-ops the layer above deferred (a window still
// being created: ucx_ifunc_ctx_defer()) until it resumes them, in order.
//
// The same queue keeps order across a resend (ucx_ifunc(3), issue order):
// a target that answers an X-op "need code" or "need bind" opens a hole at
// the front of its sender's queue, which that X-op's resend (same origin
// and request id, from the same sender) fills, or the sender's withdrawal
// (wire.h, InvokeWithdrawHdr) closes; the sender's later X-ops wait behind
// it meanwhile. A sender has at most XRDMA_MAX_PARKED X-ops parked; one
// more is refused with an error answer. A failed sender's queue is dropped.
#pragma once

#include "wire/wire.h"

#include <atomic>
#include <cstddef>

struct ucx_ifunc_context;

namespace xrdma {

struct Incoming;

// X-ops (and holes) parked in all contexts of the process (the fast paths' check).
extern std::atomic<size_t> g_compile_parked;

// Park invocation @p in (full header @p h; nullptr: a short invocation,
// which never starts a compile) if it must wait; true if parked (a copy was
// taken; the caller is done with it, and it is handled again as it arrived
// when released).
bool compile_queue_park(ucx_ifunc_context *ctx, const Incoming &in, const InvokeHdr *h);
// Answer invocation @p in "need code" or "need bind" (@p kind, send_need())
// and hold its sender's (in.reply_ep's) later X-ops until the resend
// arrives or the sender withdraws it.
void compile_queue_need(ucx_ifunc_context *ctx, const Incoming &in, ReplyKind kind);
// Whether @p in, refused as a short invocation, is a withdrawal (wire.h);
// if so it is handled: a well-formed one closes its sender's hole (or
// changes nothing if there is none), a malformed one is dropped with a
// warning.
bool compile_queue_withdrawal(ucx_ifunc_context *ctx, const Incoming &in);
// Keep invocation @p in, which the layer deferred (ucx_ifunc_ctx_defer()),
// until compile_queue_resume(); its sender's later X-ops wait behind it. One
// that was released from the front of its sender's queue goes back there.
void compile_queue_defer(ucx_ifunc_context *ctx, const Incoming &in);
// The layer may now take what it deferred: tried again from the next pass.
void compile_queue_resume();
// Poll the compiles and run the parked X-ops that may run now, of every
// context on @p ctx's worker; the number run.
unsigned compile_queue_release(ucx_ifunc_context *ctx);
// Forget what @p ctx parked (it is being destroyed).
void compile_queue_drop(ucx_ifunc_context *ctx);

// target_handle_invoke(): whether @p in waits (parked: return). Only an
// X-op that carries an image can start a compile; others wait only while
// something is parked.
inline bool compile_queue_hold(ucx_ifunc_context *ctx, const Incoming &in, const InvokeHdr &h)
{
    if (!(h.flags & kHasCode) && g_compile_parked.load(std::memory_order_relaxed) == 0) return false;
    return compile_queue_park(ctx, in, &h);
}

// Whether anything is parked, in any context: a short invocation waits
// (compile_queue_park(), before its binding is looked up: the full
// invocation that binds its index may be the one parked) only then.
inline bool compile_queue_any() { return g_compile_parked.load(std::memory_order_relaxed) != 0; }

// ucx_ifunc_progress(): run what may run now.
inline unsigned compile_queue_progress(ucx_ifunc_context *ctx)
{
    return g_compile_parked.load(std::memory_order_relaxed) ? compile_queue_release(ctx) : 0;
}

}  // namespace xrdma
