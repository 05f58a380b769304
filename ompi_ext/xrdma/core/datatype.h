// Target datatypes as block lists (what a target needs to find the region
// and to scatter incoming data into), in typemap order, for every datatype
// MPI can build (each combiner, nested). Origin datatypes: MPI_Pack.
#pragma once

#include "op_wire.h"

#include <mpi.h>
#include <string>
#include <vector>

namespace xrdma::mpi {

constexpr size_t kMaxBlocks = 65536;

// Blocks of @p count elements of @p type, merged where adjacent. MPI_SUCCESS,
// or MPI_ERR_TYPE for an invalid type (or more than kMaxBlocks blocks),
// with @p why (if given) saying what is refused.
int flatten(MPI_Datatype type, int count, std::vector<Block> *out, std::string *why = nullptr);

// Total bytes of the blocks, and their span [lo, hi).
uint64_t blocks_bytes(const Block *b, size_t n);
void blocks_span(const Block *b, size_t n, int64_t *lo, int64_t *hi);

// Whether @p count elements of @p type at @p origin are one contiguous run
// of bytes; then @p ref names them.
bool contiguous(const void *origin, int count, MPI_Datatype type, IncomingRef *ref);

}  // namespace xrdma::mpi
