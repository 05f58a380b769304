// The MPI layer's header in front of every X-operation's plugin payload:
// [OpHdr][Block x nblocks][incoming data][user args] (OpHdr in its wire form). Only the user args are
// visible to the ifunc; header, blocks and incoming data travel with forwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xrdma::mpi {

constexpr uint8_t kOpMagic = 0x58;  // "X"

// The header as the layer uses it (one copy per dispatch, t_header). On the
// wire it travels compact (OpWire, below): 16 bytes, and 8 more only for an
// X-op with target blocks or incoming data, so that with the plugin's ring
// slot header and short invocation header a warm 8-byte MPIX_Xinvoke stays
// within one 64-byte cache line (ucx_plugin/wire/wire.h, RingSlotHdr).
struct OpHdr {
    // (Its first 16 bytes are OpWire's layout: op_hdr_read() copies them at once.)
    uint8_t  magic;
    uint8_t  op;        // xrdma_mpi_op
    uint8_t  flags;     // kIncomingByRef ...
    uint8_t  wire_len;  // bytes it took on the wire (op_hdr_read())
    uint32_t win;       // the window's id, the same in every process (group.h)
    int64_t  disp;      // target_disp (bytes = disp * disp_unit, or an address)
    uint32_t nblocks;   // target datatype layout: blocks relative to the region start
    uint32_t incoming_len;
};

// On the wire: OpWire, then OpWireExt when flags has kExtended.
struct __attribute__((packed)) OpWire {
    uint8_t  magic;
    uint8_t  op;
    uint8_t  flags;     // OpHdr's, and kExtended
    uint8_t  reserved;  // 0
    uint32_t win;
    int64_t  disp;
};
static_assert(sizeof(OpWire) == 16, "wire layout");
static_assert(offsetof(OpHdr, win) == offsetof(OpWire, win) && offsetof(OpHdr, disp) == offsetof(OpWire, disp) &&
                  offsetof(OpHdr, nblocks) == sizeof(OpWire),
              "OpHdr starts as OpWire");
struct __attribute__((packed)) OpWireExt {
    uint32_t nblocks;
    uint32_t incoming_len;
};
static_assert(sizeof(OpWireExt) == 8, "wire layout");
constexpr uint8_t kExtended = 0x80;
constexpr size_t kOpHdrMax = sizeof(OpWire) + sizeof(OpWireExt);

// The wire form of @p h at @p p: its length. With @p ext, its OpWireExt
// follows even if both its counts are 0 (a payload laid out before its
// incoming data's length was known).
inline size_t op_hdr_write(uint8_t *p, const OpHdr &h, bool ext)
{
    const OpWire w{h.magic, h.op, uint8_t(h.flags | (ext ? kExtended : 0)), 0, h.win, h.disp};
    memcpy(p, &w, sizeof(w));
    if (!ext) return sizeof(w);
    const OpWireExt e{h.nblocks, h.incoming_len};
    memcpy(p + sizeof(w), &e, sizeof(e));
    return sizeof(w) + sizeof(e);
}
inline size_t op_hdr_write(uint8_t *p, const OpHdr &h) { return op_hdr_write(p, h, h.nblocks || h.incoming_len); }
inline size_t op_hdr_size(bool ext) { return sizeof(OpWire) + (ext ? sizeof(OpWireExt) : 0); }
// Read the header at @p p (@p size bytes there) into @p h: its wire length,
// or 0 if it is shorter than its header. (Inline: every X-op's; its usual
// form, without OpWireExt, is one 16-byte copy and a store.)
inline size_t op_hdr_read(const uint8_t *p, size_t size, OpHdr *h)
{
    if (__builtin_expect(size < sizeof(OpWire), 0)) return 0;
    memcpy(h, p, sizeof(OpWire));
    if (__builtin_expect(!(h->flags & kExtended), 1)) {
        h->nblocks = 0;
        h->incoming_len = 0;
        return h->wire_len = sizeof(OpWire);
    }
    if (size < kOpHdrMax) return 0;
    memcpy(&h->nblocks, p + sizeof(OpWire), sizeof(OpWireExt));
    h->flags = uint8_t(h->flags & ~kExtended);
    return h->wire_len = kOpHdrMax;
}

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
// each [uint32 length][OpWire][args] of one Xinvoke (flags 0, no blocks, no
// incoming data, the bundle's window). The target runs them in order and stops at the first
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
