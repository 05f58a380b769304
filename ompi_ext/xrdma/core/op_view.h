// What an ifunc sees of its X-operation at the target: the window memory it
// runs on, the target region and its blocks, and the incoming data (arrived
// with the operation, in the origin's memory in this process, or still at
// the origin: streamed). window_dispatch() makes it and publishes it in a
// thread-local (Running) for the accessors injected code calls.
#pragma once

#include "op_wire.h"
#include "target_lock.h"
#include "ucx_ifunc.h"
#include "xrdma_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xrdma::mpi {

struct Window;

// The operation's target blocks (in the window's scratch: copied out of the
// payload, which a peer may still write while the function runs).
struct BlockSpan {
    const Block *data = nullptr;
    size_t n = 0;
    const Block *begin() const { return data; }
    const Block *end() const { return data + n; }
    size_t size() const { return n; }
    bool empty() const { return n == 0; }
    const Block &operator[](size_t i) const { return data[i]; }
};

struct OpView {
    // Only what every X-op reads is set here (a store each, on every X-op);
    // the rest is set where it becomes meaningful: base, bytes, region by
    // bind(), stream and rkey by stream_view(), at_region with the blocks.
    OpView(Window *win, uint8_t operation, int64_t target_disp)
        : w(win), op(operation), region_bytes(0), disp(target_disp), holes(false)
    {
    }
    OpView(const OpView &) = delete;
    OpView &operator=(const OpView &) = delete;

    Window *w;
    uint8_t op;           // xrdma_mpi_op
    char *base;           // the executing rank's window memory, where it is mapped here
    size_t bytes;
    char *region;
    size_t region_bytes;  // span of the target datatype
    const void *incoming;  // nullptr while streamed data is still at the origin
    size_t incoming_len;
    // The operation's target layout, to point the view at another rank's
    // window (a forward that continues in this process).
    int64_t disp;
    BlockSpan blocks;
    // Its blocks leave memory of the region out (several, or one not at its
    // start): a function written for a contiguous region runs once per block
    // (run_by_block(), op_target.cc).
    bool holes;
    HeldLock lock;  // of the window it runs on, while node peers may run code on it too
    // xrdma_target_blocks(): the blocks at their addresses (in the window's
    // dispatch_at), made on first call for the region they were made for.
    const char *at_region;
    // What stays at the origin: nothing; the incoming data (kIncomingStream:
    // fetched chunk by chunk); or the Xget's reply buffer (kReplyStream:
    // the reply is written into it).
    enum class AtOrigin : uint8_t { nothing, incoming, reply } at_origin = AtOrigin::nothing;
    bool streamed() const { return at_origin == AtOrigin::incoming; }
    bool push() const { return at_origin == AtOrigin::reply; }
    bool stream_used = false;  // xrdma_stream() or a fetch ran: stream_end() after the entry
    // Streamed data: where it is at the origin, and the memory key to reach
    // it with (both in the operation's payload; only read when streamed or
    // push(), which stream_view() sets together with them).
    StreamRef stream;
    const uint8_t *rkey;
    ucp_ep_h stream_ep;  // to the origin, whose memory that is
};

// The X-operation this thread runs an entry of (window_dispatch(), one at a
// time per thread): read by the accessors without a call into the plugin.
// The view lies in window_dispatch()'s frame, so it also bounds the stack
// frames of that entry (its callees' frames lie below it), where an
// accessor may store through the ifunc's pointer without a probe.
struct Running {
    struct xrdma_ctx *x;
    OpView *view;  // nullptr outside an entry
};
extern __thread Running t_running __attribute__((tls_model("initial-exec")));

// The view of the X-operation @p x runs (nullptr outside one).
inline OpView *view_of(struct xrdma_ctx *x) { return t_running.x == x ? t_running.view : nullptr; }

}  // namespace xrdma::mpi
