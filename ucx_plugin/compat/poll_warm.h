// The put-and-poll target's short path: a stored frame laid out and named
// like the last one the target looked up (PollWarm, run/context.h) runs
// after one compare of its words with that frame's, without the header
// checks and the lookup those words passed then. Inline, so that a poller
// (frame_poll(), ucp_poll_ifunc()) runs a stream of messages to one ifunc
// in one function of its own and the fault guard's frame.
#pragma once

#include "run/context.h"
#include "run/fault.h"
#include "wire/wire.h"
#include "xrdma_common/bytes.h"

#include <atomic>
#include <cstring>
#include <string>

namespace xrdma {

// A stored frame's payload of up to this size is copied onto the poller's
// stack by the short paths; a warm frame has one no larger.
constexpr size_t kWarmArgs = 64;

// Clear a slot's header and trailer (at @p trailer_off, 0: none): the slot
// is free for the next frame. (Whole vectors, not a libc call: every frame
// clears its slot.)
inline void consume_slot(uint8_t *buf, size_t trailer_off)
{
    using Lane = uint64_t __attribute__((vector_size(16)));
    const Lane zero = {0, 0};
    static_assert(sizeof(FrameHdr) % sizeof(zero) == 0, "whole vectors");
    for (size_t i = 0; i < sizeof(FrameHdr); i += sizeof(zero)) memcpy(buf + i, &zero, sizeof(zero));
    if (trailer_off) memset(buf + trailer_off, 0, 8);
    std::atomic_thread_fence(std::memory_order_release);
}

// Whether the frame at @p f, of the warm one's size, is the warm one: its
// words but the ready word, nonce and checksum are the warm frame's (sizes,
// flags, offsets, image hash, the entry name and its padding up to the
// payload), nothing was put into the code cache or dropped from it since
// (its image is still there) and nothing is quarantined. Its trailer is the
// caller's to check.
inline bool warm_match(const ucx_ifunc_context *ctx, const uint8_t *f)
{
    using Lane = PollWarm::Lane;
    const PollWarm &w = ctx->poll_warm;
    auto lane = [f](size_t i) {
        Lane v;
        memcpy(&v, f + 16 * i, sizeof(v));
        return v;
    };
    // Lane 0: the ready word (the caller's) and word 1; lane 1: nonce and
    // checksum (every frame's own).
    Lane d = (lane(0) ^ w.want[0]) & Lane{0, ~uint64_t(0)};
    d |= (lane(2) ^ w.want[2]) | (lane(3) ^ w.want[3]) | (lane(4) ^ w.want[4]);
    for (unsigned i = 0; i < w.name_lanes; ++i) d |= lane(5 + i) ^ w.want[5 + i];
    return (d[0] | d[1]) == 0 && w.name_lanes != 0 && w.cache_changes == ctx->cache.changes() &&
           ctx->quarantined.empty();
}

// <name>_main at @p fn, of @p img, on @p args_len bytes at @p args: 0, or
// -1 after a contained fault or timeout. Nothing changes this context's
// cache while it runs (the published API's ifunc cannot poll it:
// in_dispatch), so the image needs no reference of its own here.
inline int compat_call(ucx_ifunc_context *ctx, const CachedImage *img, void *fn, uint8_t *args, uint32_t args_len,
                       void *target_args)
{
    auto main_fn = reinterpret_cast<void (*)(void *, size_t, void *)>(fn);
    ctx->in_dispatch++;
    t_dispatching++;
    const int rc = guarded_call_compat(main_fn, args, args_len, target_args, img->code.get());
    t_dispatching--;
    ctx->in_dispatch--;
    ctx->stats.executed++;
    return rc;
}

// frame_run_warm() for what is not a published-API entry that ran to its
// end: a native frame's entry (on @p args), or a published-API entry's
// contained fault (put_poll.cc).
ucx_ifunc_status_t warm_other(ucx_ifunc_context *ctx, uint8_t *args, void *target_args);

// The warm frame stored into @p buf (its ready word kFrameStored) again, the
// steady state of a stream of messages to one ifunc: its payload copied, its
// slot consumed, its entry run, with @p *st (a failure logged). False for
// any other frame (nothing done). Not from inside an entry (in_dispatch).
__attribute__((always_inline)) inline bool frame_run_warm(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                                         void *target_args, ucx_ifunc_status_t *st)
{
    const PollWarm &w = ctx->poll_warm;
    if (w.frame_size > buffer_size || !warm_match(ctx, buf)) return false;
    uint64_t tail, nonce;
    memcpy(&tail, buf + w.frame_size - 8, 8);
    memcpy(&nonce, buf + offsetof(FrameHdr, nonce), 8);
    if (tail != nonce) return false;
    alignas(16) uint8_t args[kWarmArgs];
    if (w.args_len - 1u < 8u)  // one word of payload: with its trailer, one 16-byte copy
        memcpy(args, buf + w.args_off, 16);
    else
        copy_bytes(args, buf + w.args_off, align_up(w.args_len, 8));
    // Consumed before the function runs, as the published API does: an
    // answer its reply provokes may land in this slot while it runs.
    consume_slot(buf, w.frame_size - 8);
    // (Nothing the entry may do changes w: no poll of this context runs
    // inside it.)
    if ((w.flags & kFrameCompat) && compat_call(ctx, w.img, w.fn, args, w.args_len, target_args) == 0)
        *st = UCX_IFUNC_OK;
    else
        *st = warm_other(ctx, args, target_args);
    return true;
}

}  // namespace xrdma
