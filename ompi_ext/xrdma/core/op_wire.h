// The MPI layer's header in front of every X-operation's plugin payload:
// [OpHdr][Block x nblocks][incoming data][user args]. Only the user args are
// visible to the ifunc; header, blocks and incoming data travel with forwards.
#pragma once

#include <cstdint>

namespace xrdma::mpi {

constexpr uint32_t kOpMagic = 0x504f5258;  // "XROP"

struct OpHdr {
    uint32_t magic;
    uint8_t  op;        // xrdma_mpi_op
    uint8_t  reserved[3];
    int64_t  disp;      // target_disp (bytes = disp * disp_unit, or an address)
    uint32_t nblocks;   // target datatype layout: blocks relative to the region start
    uint32_t incoming_len;
};
static_assert(sizeof(OpHdr) == 24, "wire layout");

struct Block {
    int64_t offset;
    uint64_t len;
};

}  // namespace xrdma::mpi
