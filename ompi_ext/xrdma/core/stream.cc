// Streaming X-operations: xrdma_stream() and the fetching of streamed data
// at the target, and the exposure of an Xput's data at the origin (see
// stream.h).
#include "stream.h"

#include "datatype.h"
#include "errors.h"
#include "runtime.h"
#include "window.h"

#include "core_api.h"

#include "xrdma_common/config.h"
#include "xrdma_common/log.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace xrdma::mpi {

namespace {

// Chunks fetched ahead of the payload handler: one being handled while the
// next ones travel. The target holds at most this many chunks of a message.
constexpr unsigned kDepth = 3;
// Fetch buffers up to this size are kept for the next stream.
constexpr size_t kKeep = 256 << 10;

struct Fetch {
    xrdma::Bytes buf;
    size_t len = 0;
    bool busy = false;  // a get into buf in flight
    ucs_status_t status = UCS_OK;
};

// The fetches of the stream running in this process: outside any frame, as
// a handler that faults unwinds the runtime's frames without destructors
// (stream_end() cleans up). One at a time: dispatches are serialised under
// Runtime::mu, and arrivals during a stream are queued by the plugin.
struct Fetcher {
    bool streaming = false;  // inside xrdma_stream(): no nested one
    ucp_rkey_h rkey = nullptr;  // set: transfers with the origin's memory started
    Fetch slot[kDepth];
    xrdma::Bytes stage;  // stream_stage_all()'s copy
    xrdma::Bytes reply;  // an Xget's reply, as xrdma_stream_reply() makes it
    // An Xget's reply pushed into the origin's buffer (kReplyStream): bytes
    // gather in slot[push_slot], a chunk at a time, once rkey is set.
    bool push_done = false;  // push_finish() replied the count
    size_t pushed = 0;       // bytes written (or being written) at the origin
    unsigned push_slot = 0;
    // The memory key of the running stream, then zeros: UCX reads a packed
    // key's memory-domain map (8 bytes), then per domain (at most 64) a
    // length byte and up to 255 bytes.
    uint8_t key[4096 + 8 + 64 * 256];
} g;
constexpr uint32_t kMaxKey = 4096;

int fail(xrdma_ctx *x, ucx_ifunc_status_t st, const std::string &msg)
{
    ucx_ifunc_ctx_fail(x, st, msg.c_str());
    return -1;
}

void fetch_done(void *request, ucs_status_t status, void *user_data)
{
    auto *f = static_cast<Fetch *>(user_data);
    f->status = status;
    f->busy = false;
    ucp_request_free(request);
}

// Start fetching chunk @p i of @p v's streamed data into @p f.
void fetch_start(ucp_ep_h ep, const StreamRef &ref, size_t chunk, size_t i, Fetch &f)
{
    const size_t off = i * chunk;
    f.len = std::min(chunk, size_t(ref.len) - off);
    if (f.buf.size() < f.len) f.buf.resize(f.len);
    f.status = UCS_OK;
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = fetch_done;
    p.user_data = &f;
    ucs_status_ptr_t r = ucp_get_nbx(ep, f.buf.data(), f.len, ref.addr + off, g.rkey, &p);
    if (UCS_PTR_IS_PTR(r)) {
        f.busy = true;
    } else {
        f.busy = false;
        f.status = UCS_PTR_STATUS(r);
    }
}

// Start transfers with the origin's memory the StreamRef of @p v names:
// progress must be allowed here (not inside UCX's handler) and its key must
// unpack. 0, or -1 after ucx_ifunc_ctx_fail() (@p what names the transfer).
int begin_remote(xrdma_ctx *x, OpView &v, const std::string &what)
{
    // Transfers need progress, which UCX does not allow inside its handler.
    if (ucx_ifunc_ctx_progress(x) < 0)
        return fail(x, UCX_IFUNC_ERR_PROTOCOL, what + ": the operation runs inside UCX's handler (not sent queued)");
    if (g.rkey) return 0;  // (already unpacked for this operation)
    ucs_status_t st = ucp_ep_rkey_unpack(v.stream_ep, v.rkey, &g.rkey);
    if (st != UCS_OK) {
        g.rkey = nullptr;
        return fail(x, UCX_IFUNC_ERR_PROTOCOL, what + ": its memory key: " + ucs_status_string(st));
    }
    return 0;
}

// Wait until @p f's transfer finished: 0, or -1 after ucx_ifunc_ctx_fail().
int wait_slot(xrdma_ctx *x, Fetch &f, const std::string &what)
{
    while (f.busy)
        if (ucx_ifunc_ctx_progress(x) < 0) return fail(x, UCX_IFUNC_ERR_PROTOCOL, what + ": no progress");
    if (f.status != UCS_OK) return fail(x, UCX_IFUNC_ERR_PEER, what + ": " + ucs_status_string(f.status));
    return 0;
}

// Fetch @p v's streamed data chunk by chunk, kDepth chunks ahead, handing
// each to @p sink(data, len, offset) in order. 0, the sink's non-zero
// return, or -1 after ucx_ifunc_ctx_fail().
template <class Sink>
int fetch_all(xrdma_ctx *x, OpView &v, Sink &&sink)
{
    const StreamRef &ref = v.stream;
    ucp_ep_h ep = v.stream_ep;
    const std::string from = "fetching the incoming data from rank " + std::to_string(ref.rank);
    if (begin_remote(x, v, from) != 0) return -1;
    const size_t chunk = stream_chunk();
    const size_t n = (size_t(ref.len) + chunk - 1) / chunk;
    XRDMA_DEBUG("fetching %zu bytes from rank %d in %zu chunks", size_t(ref.len), int(ref.rank), n);
    for (size_t i = 0; i < n && i < kDepth; ++i) fetch_start(ep, ref, chunk, i, g.slot[i]);
    for (size_t i = 0; i < n; ++i) {
        Fetch &f = g.slot[i % kDepth];
        if (wait_slot(x, f, from) != 0) return -1;
        const int rc = sink(f.buf.data(), f.len, i * chunk);
        if (rc) return rc;
        if (i + kDepth < n) fetch_start(ep, ref, chunk, i + kDepth, f);
    }
    return 0;
}

// The reply of an Xget whose origin exposed its buffer (kReplyStream) is
// written there with ucp_put_nbx, a chunk at a time while the next fills
// (kDepth slots); push_finish() makes it visible at the origin, then
// replies the byte count. Returns 0, -1 after ucx_ifunc_ctx_fail(), or -2
// (nothing failed) when @p data could not be read.
std::string push_what(const OpView &v) { return "writing the reply to rank " + std::to_string(v.stream.rank); }

int push_slot_out(xrdma_ctx *x, OpView &v)
{
    Fetch &f = g.slot[g.push_slot];
    if (f.len == 0) return 0;
    if (g.pushed + f.len > v.stream.len)
        return fail(x, UCX_IFUNC_ERR_INVALID_PARAM,
                    "the reply is larger than the origin buffer (" + std::to_string(v.stream.len) + " bytes)");
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = fetch_done;
    p.user_data = &f;
    ucs_status_ptr_t r =
        ucp_put_nbx(v.stream_ep, f.buf.data(), f.len, v.stream.addr + g.pushed, g.rkey, &p);
    f.busy = UCS_PTR_IS_PTR(r);
    f.status = f.busy ? UCS_OK : UCS_PTR_STATUS(r);
    g.pushed += f.len;
    g.push_slot = (g.push_slot + 1) % kDepth;
    Fetch &next = g.slot[g.push_slot];
    if (wait_slot(x, next, push_what(v)) != 0) return -1;  // (its last put)
    next.len = 0;
    return 0;
}

int push_bytes(xrdma_ctx *x, OpView &v, const void *data, size_t n)
{
    const size_t chunk = stream_chunk();
    if (!g.rkey) {
        if (begin_remote(x, v, push_what(v)) != 0) return -1;
        for (Fetch &f : g.slot) f.len = 0;
    }
    const auto *d = static_cast<const uint8_t *>(data);
    while (n) {
        Fetch &f = g.slot[g.push_slot];
        if (f.buf.size() < chunk) f.buf.resize(chunk);
        const size_t k = std::min(n, chunk - f.len);
        if (ucx_ifunc_copy_checked(f.buf.data() + f.len, d, k) != 0) return -2;
        f.len += k;
        d += k;
        n -= k;
        if (f.len == chunk && push_slot_out(x, v) != 0) return -1;
    }
    return 0;
}

int push_finish(xrdma_ctx *x, OpView &v)
{
    if (g.rkey) {
        if (push_slot_out(x, v) != 0) return -1;
        for (Fetch &f : g.slot)
            if (wait_slot(x, f, push_what(v)) != 0) return -1;
        // At the origin before the reply: an active message is not ordered
        // after puts on the same endpoint.
        ucp_request_param_t p;
        p.op_attr_mask = 0;
        ucs_status_ptr_t r = ucp_ep_flush_nbx(v.stream_ep, &p);
        ucs_status_t st = UCS_PTR_STATUS(r);
        if (UCS_PTR_IS_PTR(r)) {
            while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS)
                if (ucx_ifunc_ctx_progress(x) < 0) break;
            ucp_request_free(r);
        }
        if (st != UCS_OK) return fail(x, UCX_IFUNC_ERR_PEER, push_what(v) + ": " + ucs_status_string(st));
    }
    const uint64_t n = g.pushed;
    g.push_done = true;
    if (xrdma_reply(x, &n, sizeof(n)) != 0)
        return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "a streamed Xget replies with xrdma_stream_reply(), not xrdma_reply()");
    return 0;
}

// Where incoming data goes under MPI_Put: the target blocks in datatype
// order. Hands each piece within one block to the payload handler.
struct Walk {
    xrdma_ctx *x;
    const OpView &v;
    void *state;
    xrdma_stream_payload_t payload;
    size_t block = 0;  // the block the next byte goes to
    size_t in = 0;     // bytes of it already passed

    int operator()(const uint8_t *data, size_t len, size_t offset)
    {
        const BlockSpan &b = v.blocks;
        while (len) {
            while (block < b.size() && in == b[block].len) {
                ++block;
                in = 0;
            }
            size_t n = len;
            void *target = nullptr;
            if (block < b.size()) {
                n = std::min(n, size_t(b[block].len) - in);
                target = v.region + b[block].offset + int64_t(in);
                in += n;
            }
            const int rc = payload(x, state, target, data, n, offset);
            if (rc) return rc;
            data += n;
            offset += n;
            len -= n;
        }
        return 0;
    }
};

// Zero the function's state (its memory: a bad pointer must not crash us).
bool zero_state(void *state, size_t size)
{
    static const uint8_t zeros[4096] = {};
    auto *p = static_cast<uint8_t *>(state);
    for (size_t done = 0; done < size; done += sizeof(zeros))
        if (ucx_ifunc_copy_checked(p + done, zeros, std::min(sizeof(zeros), size - done)) != 0) return false;
    return true;
}

}  // namespace

size_t stream_chunk()
{
    static const size_t chunk = [] {
        unsigned long long c = xrdma::config_get_ull("XRDMA_STREAM_CHUNK");
        if (c < 64) {
            XRDMA_WARN("XRDMA_STREAM_CHUNK=%llu is below 64 bytes: using 64", c);
            c = 64;
        }
        return size_t(c);
    }();
    return chunk;
}

int stream_expose(const char *what, int rank, const void *origin, int count, MPI_Datatype type, MPI_Comm comm, StreamOut *out)
{
    Runtime &rt = Runtime::get();
    IncomingRef ref{};
    if (!contiguous(origin, count, type, &ref)) {
        int size = 0, pos = 0;
        MPI_Pack_size(count, type, comm, &size);
        out->staged = malloc(size_t(size) ? size_t(size) : 1);
        if (!out->staged) return error_code(MPI_ERR_NO_MEM, std::string(what) + ": cannot pack the origin data for streaming");
        MPI_Pack(origin, count, type, out->staged, size, &pos, comm);
        ref.addr = reinterpret_cast<uintptr_t>(out->staged);
        ref.len = uint64_t(pos);
    }
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = reinterpret_cast<void *>(uintptr_t(ref.addr));
    mp.length = size_t(ref.len);
    ucs_status_t st = ucp_mem_map(rt.ucp, &mp, &out->memh);
    void *key = nullptr;
    size_t key_len = 0;
    if (st == UCS_OK) {
        st = ucp_rkey_pack(rt.ucp, out->memh, &key, &key_len);
        if (st != UCS_OK) ucp_mem_unmap(rt.ucp, out->memh);
    }
    if (st != UCS_OK) {
        out->memh = nullptr;
        free(out->staged);
        out->staged = nullptr;
        return error_code(MPI_ERR_OTHER, std::string(what) + ": cannot expose the origin buffer for streaming: " +
                                             ucs_status_string(st));
    }
    StreamRef sr{ref.addr, ref.len, rank, uint32_t(key_len)};
    out->wire.resize(sizeof(sr) + key_len);
    memcpy(out->wire.data(), &sr, sizeof(sr));
    memcpy(out->wire.data() + sizeof(sr), key, key_len);
    ucp_rkey_buffer_release(key);
    return MPI_SUCCESS;
}

void stream_release(ucp_mem_h memh, void *staged)
{
    if (memh) ucp_mem_unmap(Runtime::get().ucp, memh);
    free(staged);
}

int stream_push_reply(xrdma_ctx *x, OpView &v)
{
    if (ucx_ifunc_ctx_answered(x))  // by xrdma_stream_reply(), or by the function itself
        return g.push_done ? 0 : fail(x, UCX_IFUNC_ERR_INVALID_PARAM,
                                      "a streamed Xget replies with xrdma_stream_reply(), not xrdma_reply()");
    // No reply of its own: the target region, as MPI_Get.
    for (const Block &b : v.blocks)
        if (push_bytes(x, v, v.region + b.offset, size_t(b.len)) != 0) return -1;
    return push_finish(x, v);
}

bool stream_view(OpView &v, int origin, const uint8_t *field, size_t len, bool reply, std::string *why)
{
    StreamRef ref;
    if (len < sizeof(ref)) return *why = "streamed data without its reference", false;
    memcpy(&ref, field, sizeof(ref));
    if (sizeof(ref) + uint64_t(ref.rkey_len) != len || ref.rkey_len > kMaxKey)
        return *why = "streamed data with a malformed memory key", false;
    // Only the origin's own memory: a peer cannot make this rank read
    // another rank's.
    if (ref.rank != origin || ref.rank < 0 || ref.rank >= v.w->size)
        return *why = "streamed data from a rank other than the origin", false;
    v.stream_ep = Runtime::get().peer_ep(v.w->group->world[size_t(ref.rank)]);
    if (!v.stream_ep) return *why = "no endpoint to the origin", false;
    // UCX unpacks a key without knowing its length: a key from a peer is
    // read from a copy with zeros after it, as far as UCX could ever read.
    memcpy(g.key, field + sizeof(ref), ref.rkey_len);
    memset(g.key + ref.rkey_len, 0, sizeof(g.key) - ref.rkey_len);
    v.stream = ref;
    v.rkey = g.key;
    v.stream_used = true;  // (stream_end() forgets the key)
    if (reply) {
        v.at_origin = OpView::AtOrigin::reply;
        return true;
    }
    v.at_origin = OpView::AtOrigin::incoming;
    v.incoming = nullptr;
    v.incoming_len = size_t(ref.len);
    return true;
}

const void *stream_stage_all(xrdma_ctx *x, OpView &v)
{
    v.stream_used = true;
    if (g.stage.size() < v.incoming_len) g.stage.resize(v.incoming_len);
    int rc = fetch_all(x, v, [](const uint8_t *data, size_t len, size_t offset) {
        memcpy(g.stage.data() + offset, data, len);
        return 0;
    });
    if (rc) return nullptr;
    v.incoming = g.stage.data();
    return v.incoming;
}

void stream_end(xrdma_ctx *x)
{
    g.streaming = false;
    g.push_done = false;
    g.pushed = 0;
    g.push_slot = 0;
    if (g.reply.capacity() > kKeep) xrdma::Bytes().swap(g.reply);
    g.reply.clear();
    xrdma::Bytes().swap(g.stage);
    if (!g.rkey) return;  // (no transfer started)
    for (Fetch &f : g.slot) {
        while (f.busy)
            if (ucx_ifunc_ctx_progress(x) < 0) break;  // (cannot be: fetching started only where it works)
        if (f.buf.capacity() > kKeep) xrdma::Bytes().swap(f.buf);
    }
    ucp_rkey_destroy(g.rkey);
    g.rkey = nullptr;
}

}  // namespace xrdma::mpi

using namespace xrdma::mpi;

extern "C" int xrdma_stream(xrdma_ctx_t *x, const void *args, size_t args_size, void *state, size_t state_size,
                            xrdma_stream_header_t header, xrdma_stream_payload_t payload,
                            xrdma_stream_completion_t completion)
{
    OpView *v = view_of(x);
    if (!v) return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "xrdma_stream outside an X-operation");
    if (!payload) return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "xrdma_stream without a payload handler");
    if (state_size > XRDMA_STREAM_STATE_MAX || (state_size && !state) || !zero_state(state, state_size))
        return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "xrdma_stream: bad state (at most XRDMA_STREAM_STATE_MAX bytes)");
    if (g.streaming) return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "xrdma_stream called from a streaming handler");
    g.streaming = true;
    v->stream_used = true;
    const size_t total = v->op == XRDMA_OP_GET ? size_t(blocks_bytes(v->blocks.data, v->blocks.n)) : v->incoming_len;
    int rc = header ? header(x, state, args, args_size, total) : 0;
    if (rc) return rc;
    Walk walk{x, *v, state, payload};
    if (v->op == XRDMA_OP_GET) {
        // The target region streams through the handler (data and target
        // are the same bytes); its xrdma_stream_reply() calls make the reply.
        const size_t chunk = stream_chunk();
        size_t off = 0;
        for (const Block &b : v->blocks) {
            char *at = v->region + b.offset;
            for (size_t done = 0; done < b.len && rc == 0;) {
                const size_t n = std::min(size_t(b.len) - done, chunk - off % chunk);
                rc = payload(x, state, at + done, at + done, n, off);
                done += n;
                off += n;
            }
            if (rc) return rc;
        }
    } else if (v->streamed() && !v->incoming) {
        rc = fetch_all(x, *v, walk);
    } else {
        // Here already (sent along, or the origin's memory in this process):
        // the same pieces as if it had been fetched.
        const size_t chunk = stream_chunk();
        const auto *in = static_cast<const uint8_t *>(v->incoming);
        for (size_t off = 0; off < v->incoming_len && rc == 0; off += chunk)
            rc = walk(in + off, std::min(chunk, v->incoming_len - off), off);
    }
    if (rc) return rc;
    rc = completion ? completion(x, state) : 0;
    if (rc != 0 || v->op != XRDMA_OP_GET) return rc;
    if (v->push()) return g.rkey ? push_finish(x, *v) : 0;  // (nothing appended: the dispatch pushes the region)
    if (!g.reply.empty() && xrdma_reply(x, g.reply.data(), g.reply.size()) != 0)
        return fail(x, UCX_IFUNC_ERR_INVALID_PARAM, "xrdma_stream_reply: the function also replied itself");
    return 0;
}

extern "C" int xrdma_stream_reply(xrdma_ctx_t *x, const void *data, size_t bytes)
{
    OpView *v = view_of(x);
    if (!v || !g.streaming || v->op != XRDMA_OP_GET || (bytes && !data)) return -1;
    if (v->push()) return push_bytes(x, *v, data, bytes) == 0 ? 0 : -1;
    const size_t at = g.reply.size();
    g.reply.resize(at + bytes);
    if (bytes && ucx_ifunc_copy_checked(g.reply.data() + at, data, bytes) != 0) {
        g.reply.resize(at);
        return -1;
    }
    return 0;
}
