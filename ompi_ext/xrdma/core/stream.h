// Streaming X-operations. At the target, xrdma_stream() runs an image's
// sPIN-style handlers (header, payload per piece, completion) over the
// operation's incoming data, in datatype order; data the origin did not send
// along is fetched from its memory chunk by chunk, a few chunks ahead of the
// payload handler. At the origin, the data of such an Xput is exposed for
// the target to fetch instead of being sent.
#pragma once

#include "op_view.h"

#include "xrdma_common/bytes.h"

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <string>

namespace xrdma::mpi {

// XRDMA_STREAM_CHUNK: bytes per chunk (the payload handler's pieces never
// cross a multiple of it; an Xput larger than it is streamed).
size_t stream_chunk();

// Origin: an Xput's incoming data, left in the origin's memory (mapped for
// UCX; non-contiguous data is packed first) for the target to fetch; or an
// Xget's contiguous origin buffer, for the target to write its reply into.
struct StreamOut {
    ucp_mem_h memh = nullptr;
    void *staged = nullptr;  // the packed copy, if one was needed
    xrdma::Bytes wire;       // the incoming field: StreamRef, then the memory key
};
// MPI_SUCCESS, or an MPI error code naming @p what (nothing is held then).
int stream_expose(const char *what, int rank, const void *origin, int count, MPI_Datatype type, MPI_Comm comm, StreamOut *out);
// Once the operation completed: unmap and free what stream_expose() took.
void stream_release(ucp_mem_h memh, void *staged);

// Target: point @p v at the streamed data a StreamRef field describes
// (with @p reply: the origin buffer an Xget's reply is written to), which
// must be in the memory of @p origin (the operation's origin rank). False
// (with @p why) if the field is malformed.
bool stream_view(OpView &v, int origin, const uint8_t *field, size_t len, bool reply, std::string *why);
// An Xget with kReplyStream, after its function returned 0: write the
// target region to the origin unless the function replied (with
// xrdma_stream_reply()), then reply the byte count. 0, or -1 after
// ucx_ifunc_ctx_fail().
int stream_push_reply(struct xrdma_ctx *x, OpView &v);
// xrdma_incoming() of a streamed operation (a function that does not
// stream): fetch all of it into a buffer, kept until stream_end().
const void *stream_stage_all(struct xrdma_ctx *x, OpView &v);
// After the entry returned (also after a contained fault in a handler,
// whose frames unwound without destructors): wait for fetches still in
// flight, then release the memory key and the buffers.
void stream_end(struct xrdma_ctx *x);

}  // namespace xrdma::mpi
