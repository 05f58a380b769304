// What an ifunc sees of its X-operation at the target (the layer data of
// its plugin context): the window memory it runs on, the target region and
// its blocks, and the incoming data (arrived with the operation, in the
// origin's memory in this process, or still at the origin: streamed).
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

struct OpView {
    // Every member set by name: value-initialising the whole view zeroed
    // its 128 bytes with `rep stos` (slow to start) on every X-op first.
    OpView(Window *win, uint8_t operation, int64_t target_disp, const std::vector<Block> *op_blocks,
           std::vector<xrdma_block_t> *blocks_at)
        : w(win), op(operation), base(nullptr), bytes(0), region(nullptr), region_bytes(0), incoming(nullptr),
          incoming_len(0), disp(target_disp), blocks(op_blocks), at(blocks_at), at_region(nullptr)
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
    const std::vector<Block> *blocks;
    HeldLock lock;  // of the window it runs on, while node peers may run code on it too
    // xrdma_target_blocks(): the blocks at their addresses, made on first
    // call (for the region it was made for).
    std::vector<xrdma_block_t> *at;
    const char *at_region;
    // What stays at the origin: nothing; the incoming data (kIncomingStream:
    // fetched chunk by chunk); or the Xget's reply buffer (kReplyStream:
    // the reply is written into it).
    enum class AtOrigin : uint8_t { nothing, incoming, reply } at_origin = AtOrigin::nothing;
    bool streamed() const { return at_origin == AtOrigin::incoming; }
    bool push() const { return at_origin == AtOrigin::reply; }
    bool stream_used = false;  // xrdma_stream() or a fetch ran: stream_end() after the entry
    // Streamed data: where it is at the origin, and the memory key to reach
    // it with (both in the operation's payload).
    StreamRef stream{};  // (only read when streamed; stream_view() sets it)
    const uint8_t *rkey = nullptr;
};

// The view of the X-operation @p x runs (nullptr outside one).
inline OpView *view_of(struct xrdma_ctx *x) { return static_cast<OpView *>(ucx_ifunc_ctx_layer(x)); }

}  // namespace xrdma::mpi
