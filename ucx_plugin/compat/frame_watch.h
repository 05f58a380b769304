// An origin's watch over a put-and-poll frame it sent. Put-and-poll has no
// answer: a target that refuses a frame (malformed, too large, code unknown,
// refused by its symbol policy, not loading or linking) can only leave a
// refusal record in the frame's slot (FrameRefusal, wire.h). The origin
// reads the slot back, through the mapping where UCX maps it here
// (ucp_rkey_ptr: shared memory) or with small gets, and so hears the
// target's reason. The published API's ucp_poll_ifunc() looks while its
// program waits (compat.cc).
#pragma once

#include "ucx_ifunc.h"
#include "wire/wire.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace xrdma {

struct FrameProbe;  // a get in flight (frame_watch.cc)

struct FrameWatch {
    ucp_ep_h ep = nullptr;  // where the frame went; nullptr: nothing to watch
    uint64_t remote_addr = 0;
    ucp_rkey_h rkey = nullptr;
    uint64_t nonce = 0, checksum = 0;  // which frame (its header's)
    FrameProbe *probe = nullptr;
};

// Stop watching (a get in flight frees itself when it completes).
void frame_watch_end(FrameWatch *w);

// Note that @p frame (sealed) was sent to @p remote_addr through @p ep:
// the watch now looks for its refusal (an earlier frame's is not looked for
// any more). Inline: every send notes its frame.
inline void frame_watch_sent(FrameWatch *w, ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr,
                             ucp_rkey_h rkey)
{
    if (w->probe) frame_watch_end(w);
    const auto *f = static_cast<const uint8_t *>(frame->frame);
    w->ep = ep;
    w->remote_addr = remote_addr;
    w->rkey = rkey;
    memcpy(&w->nonce, f + offsetof(FrameHdr, nonce), 8);
    memcpy(&w->checksum, f + offsetof(FrameHdr, checksum), 8);
}

// Look at the slot once (a get started here completes in the worker's
// progress and is looked at the next time). True, with the target's status
// and @p why, if the target left a refusal of the frame there; the watch
// then ends. The endpoint and rkey must still be valid.
bool frame_watch_refused(FrameWatch *w, ucx_ifunc_status_t *status, std::string *why);

}  // namespace xrdma
