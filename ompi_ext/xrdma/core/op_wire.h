// The MPI layer's header in front of every X-operation's plugin payload:
// [OpHdr][Block x nblocks][incoming data][user args]. Only the user args are
// visible to the ifunc; header, blocks and incoming data travel with forwards.
#pragma once

#include <cstdint>

namespace xrdma::mpi {

constexpr uint16_t kOpMagic = 0x4f58;  // "XO"

// 20 bytes, packed (read and written with memcpy): with the plugin's ring
// slot header and short invocation header a warm 8-byte MPIX_Xinvoke is one
// 64-byte cache line (ucx_plugin/wire.h, RingSlotHdr).
struct __attribute__((packed)) OpHdr {
    uint16_t magic;
    uint8_t  op;        // xrdma_mpi_op
    uint8_t  flags;     // kIncomingByRef
    uint32_t nblocks;   // target datatype layout: blocks relative to the region start
    uint32_t incoming_len;
    int64_t  disp;      // target_disp (bytes = disp * disp_unit, or an address)
};
static_assert(sizeof(OpHdr) == 20, "wire layout");

// Node-local execution only (the payload never leaves the process): the
// incoming data is an IncomingRef to the origin's buffer, not the bytes. A
// target refuses it from a message; a forward that may leave the process
// carries the bytes again (window_dispatch).
constexpr uint8_t kIncomingByRef = 1;
struct IncomingRef {
    uint64_t addr;
    uint64_t len;
};

// Streamed (an Xput of a streaming function, larger than a chunk, to a
// process that cannot map the origin's memory): the incoming data stays at
// the origin; the field holds a StreamRef and the memory key to fetch it
// with (rkey_len bytes, ucp_rkey_pack), and the target fetches it chunk by
// chunk while the payload handler runs (stream.cc).
constexpr uint8_t kIncomingStream = 2;
// An Xget of a streaming function with a large contiguous origin buffer: the
// field holds a StreamRef of that buffer (and its key), the target writes
// the reply there chunk by chunk (ucp_put_nbx) and answers with its length
// (8 bytes) instead of the bytes.
constexpr uint8_t kReplyStream = 4;

// A bundle of MPIX_Xinvoke calls (bundle.h): its header has only this flag,
// no blocks, no incoming data, and disp the count of records that follow,
// each [uint32 length][OpHdr][args] of one Xinvoke (flags 0, no blocks, no
// incoming data). The target runs them in order and stops at the first
// that fails.
constexpr uint8_t kBundle = 8;
constexpr unsigned kBundleMaxOps = 64;  // (XRDMA_BUNDLE's ceiling)
struct StreamRef {
    uint64_t addr;      // the data in the origin's memory
    uint64_t len;
    int32_t rank;       // the origin's rank in the window
    uint32_t rkey_len;
};
static_assert(sizeof(StreamRef) == 24, "wire layout");

struct Block {
    int64_t offset;
    uint64_t len;
};

}  // namespace xrdma::mpi
