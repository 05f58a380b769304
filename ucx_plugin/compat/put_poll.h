// Frames of the put-and-poll mode, shared by the native API and the
// published-API compatibility layer.
// The origin writes a frame with one put, or where UCX maps the target
// buffer with its own stores, the ready word last; the target runs a frame
// laid out and named like the last one it looked up (PollWarm,
// poll_warm.h) without header checks or a lookup, and a frame refused
// before it ran leaves a refusal record in its slot (FrameRefusal, wire.h)
// for the origin to read back (frame_watch.h).
#pragma once

#include "image/image.h"
#include "wire/wire.h"
#include "ucx_ifunc.h"

#include <cstring>
#include <string>
#include <vector>

namespace xrdma {

// Allocate a frame for @p entry with room for @p args_len argument bytes
// (left zero). @p image nullptr: hash only. @p compat: <name>_main ABI.
ucx_ifunc_status_t frame_build(const Hash &hash, const std::string &entry,
                               const std::vector<uint8_t> *image, bool compat, size_t args_len,
                               ucx_ifunc_frame_t *out);
// Stamp a fresh nonce and the checksum, unless the frame is already sealed
// and unchanged since (then it writes nothing): call before each put.
void frame_seal(ucx_ifunc_frame_t *frame);
// What frame_put() returns for a put that did not complete at once (@p r:
// ucp_put_nbx's request or error).
ucx_ifunc_status_t frame_put_pending(ucs_status_ptr_t r);
// Put a sealed frame as it is (ucx_ifunc_frame_put() without the seal).
// Inline: a send loop's one call besides UCX's.
inline ucx_ifunc_status_t frame_put(ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr,
                                    ucp_rkey_h rkey)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_put_nbx(ep, frame->frame, frame->frame_size, remote_addr, rkey, &p);
    return r == nullptr ? UCX_IFUNC_OK : frame_put_pending(r);
}
// Write a sealed frame into the target buffer at @p remote_addr: where UCX
// maps that memory here at @p mapped (ucp_rkey_ptr(): shared memory), with
// this process's own stores, everything but the ready word, then a release
// fence and the ready word kFrameStored (the target verifies no checksum:
// what a put costs UCX, and more, saved on both sides); else (nullptr)
// frame_put(). Inline: a send loop's one call besides UCX's.
inline ucx_ifunc_status_t frame_send_to(ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr,
                                        ucp_rkey_h rkey, void *mapped)
{
    if (mapped) {
        auto *d = static_cast<uint8_t *>(mapped);
        memcpy(d + 8, static_cast<const uint8_t *>(frame->frame) + 8, frame->frame_size - 8);
        __atomic_store_n(reinterpret_cast<uint64_t *>(d), kFrameStored, __ATOMIC_RELEASE);
        return UCX_IFUNC_OK;
    }
    return frame_put(ep, frame, remote_addr, rkey);
}
// Whether a frame at @p remote_addr may be written with stores where it is
// mapped (its ready word is stored as one aligned word); else it is put.
inline bool frame_storable(uint64_t remote_addr) { return remote_addr % 8 == 0; }
// frame_send_to() where ucp_rkey_ptr() says (a storable slot only).
inline ucx_ifunc_status_t frame_send(ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr,
                                     ucp_rkey_h rkey)
{
    void *dst;
    const bool mapped = frame_storable(remote_addr) && ucp_rkey_ptr(rkey, remote_addr, &dst) == UCS_OK;
    return frame_send_to(ep, frame, remote_addr, rkey, mapped ? dst : nullptr);
}
// Run the frame in @p buffer if it is complete (see ucx_ifunc_poll();
// @p buffer_size at least sizeof(FrameHdr) + 8). A frame that is refused or
// fails is logged with the reason.
ucx_ifunc_status_t frame_poll(struct ucx_ifunc_context *ctx, void *buffer, size_t buffer_size,
                              void *target_args);

}  // namespace xrdma
