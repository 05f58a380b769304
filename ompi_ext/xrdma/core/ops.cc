// Origin side of MPIX_Xput / MPIX_Xget / MPIX_Xinvoke (and the MPIX_Rx*
// request variants): validate, pack, send through the window's ifunc
// context, and on completion unpack the reply and record errors for the
// synchronisation call (or the request) that reports them.
#include "bundle.h"
#include "datatype.h"
#include "errors.h"
#include "mpi_impl.h"
#include "op_wire.h"
#include "runtime.h"
#include "stream.h"
#include "window.h"
#include "core_api.h"

#include "xrdma_common/bytes.h"
#include "xrdma_common/config.h"
#include "xrdma_common/free_list.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

namespace xrdma::mpi {

namespace {

// The call that made an X-op of kind @p op (@p request: a request variant).
const char *op_name(int op, bool request)
{
    if (request) return op == XRDMA_OP_PUT ? "MPIX_Rxput" : op == XRDMA_OP_GET ? "MPIX_Rxget" : "MPIX_Rxinvoke";
    return op == XRDMA_OP_PUT ? "MPIX_Xput" : op == XRDMA_OP_GET ? "MPIX_Xget" : "MPIX_Xinvoke";
}

// One X-operation in flight.
struct OpRecord {
    Window *w;
    int target;
    int op;
    void *origin;
    int origin_count;
    MPI_Datatype origin_type;  // a dup for derived types (the caller may free theirs)
    bool type_owned;
    MPI_Request request;       // MPI_REQUEST_NULL: reported by synchronisation
    int error = MPI_SUCCESS;
    size_t reply_len = 0;      // bytes the reply had (MPI_Get_count on the request's status)
    ucp_mem_h memh = nullptr;  // a streamed Xput's data (or Xget's buffer), exposed until the op completes
    void *staged = nullptr;
    bool pushed = false;       // the target writes the Xget's reply into the origin buffer (kReplyStream)
    unsigned count = 1;        // X-ops it stands for: more for a bundle (bundle.h)
};

// The call that made X-op @p r.
const char *op_name(const OpRecord *r) { return op_name(r->op, r->request != MPI_REQUEST_NULL); }

// Records of finished operations, reused (all under Runtime::mu): a stream
// of X-operations allocates nothing. Request-backed records are freed by
// MPI (greq_free), outside that lock, and are not pooled.
xrdma::FreeList<OpRecord, 1024> op_pool;

OpRecord *op_get() { return op_pool.get(); }
void op_put(OpRecord *r) { op_pool.put(r); }

// Scratch space for building an operation's payload and its target layout
// (under Runtime::mu; the plugin copies the payload before returning).
xrdma::Bytes payload_scratch;
constexpr size_t kScratchKeep = 4 << 20;  // a larger one is freed after use
constexpr unsigned kProgressEvery = 8;
constexpr size_t kSmallArgs = 64;  // an Xinvoke's arguments up to this size: its payload built on the stack
std::vector<Block> blocks_scratch;

// What the record holds for the op in flight: a dup of the origin
// datatype, a streamed Xput's exposed data.
void release_type(OpRecord *r)
{
    if (r->type_owned) MPI_Type_free(&r->origin_type);
    r->type_owned = false;
    if (r->memh || r->staged) stream_release(r->memh, r->staged);
    r->memh = nullptr;
    r->staged = nullptr;
}

// Put the reply into the origin buffer, as far as whole elements go.
int unpack_reply(OpRecord *r, const void *reply, size_t len)
{
    int tsize;
    MPI_Type_size(r->origin_type, &tsize);
    if (tsize > 0 && len > size_t(tsize) * size_t(r->origin_count))
        return error_code(MPI_ERR_TRUNCATE, "MPIX_Xget from rank " + std::to_string(r->target) + ": the reply (" +
                                                std::to_string(len) + " bytes) is larger than the origin buffer");
    if (len == 0 || tsize == 0) return MPI_SUCCESS;
    int n = int(len / size_t(tsize));
    int pos = 0;
    MPI_Unpack(reply, int(len), &pos, r->origin, n, r->origin_type, MPI_COMM_SELF);
    return MPI_SUCCESS;
}

// A reply the target wrote into the origin buffer: the answer is its length.
int pushed_reply(OpRecord *r, const void *reply, size_t len)
{
    uint64_t n = 0;
    int tsize;
    MPI_Type_size(r->origin_type, &tsize);
    if (len == sizeof(n)) memcpy(&n, reply, sizeof(n));
    if (len != sizeof(n) || n > uint64_t(tsize) * uint64_t(r->origin_count))
        return error_code(MPI_ERR_INTERN, "MPIX_Xget from rank " + std::to_string(r->target) +
                                              ": malformed answer to a reply written into the origin buffer");
    r->reply_len = size_t(n);
    return MPI_SUCCESS;
}

// op_done() of an X-op with more to do than count itself done: a failure,
// an Xget's reply, streamed data to release, a request to complete.
__attribute__((noinline)) void op_done_full(const ucx_ifunc_result_t *res, OpRecord *r)
{
    int err = MPI_SUCCESS;
    if (res->status != UCX_IFUNC_OK)
        err = error_code(error_class_of(res->status),
                         std::string(op_name(r)) + " to rank " + std::to_string(r->target) + ": " +
                             ucx_ifunc_status_string(res->status) + " (" + res->message + ")" +
                             (r->count > 1 ? "; it was one of a bundle of " + std::to_string(r->count) +
                                                 " (XRDMA_BUNDLE): those behind it did not run"
                                           : ""));
    else if (r->op == XRDMA_OP_GET && r->pushed)
        err = pushed_reply(r, res->reply, res->reply_size);
    else if (r->op == XRDMA_OP_GET) {
        err = unpack_reply(r, res->reply, res->reply_size);
        if (err == MPI_SUCCESS) r->reply_len = res->reply_size;
    }
    r->w->pending[size_t(r->target)] -= r->count;
    release_type(r);
    if (r->request != MPI_REQUEST_NULL) {
        r->error = err;
        MPI_Grequest_complete(r->request);  // the request's free function deletes r
        return;
    }
    if (err != MPI_SUCCESS && r->w->error[size_t(r->target)] == MPI_SUCCESS)
        r->w->error[size_t(r->target)] = err;
    op_put(r);
}

// An X-op's completion. Most (a stream's Xput and Xinvoke, completed by a
// synchronisation call, in batches of acknowledgements) succeed with nothing
// to unpack, release or report: counted done here, without the frame of
// op_done_full().
void op_done(const ucx_ifunc_result_t *res, void *user_data)
{
    auto *r = static_cast<OpRecord *>(user_data);
    // (Only an Xget owns a duplicated type or has its reply pushed.)
    if (__builtin_expect(res->status == UCX_IFUNC_OK && r->op != XRDMA_OP_GET && !r->memh && !r->staged &&
                             r->request == MPI_REQUEST_NULL,
                         1)) {
        r->w->pending[size_t(r->target)] -= r->count;
        op_put(r);
        return;
    }
    op_done_full(res, r);
}

int greq_query(void *extra, MPI_Status *status)
{
    auto *r = static_cast<OpRecord *>(extra);
    // The reply's length: MPI_Get_count(status, MPI_BYTE) is its bytes,
    // with the origin datatype the whole elements it filled.
    MPI_Status_set_elements_x(status, MPI_BYTE, MPI_Count(r->reply_len));
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = r->target;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = r->error;
    return mpi_grequest_query_result(r->request, r->error);
}
int greq_free(void *extra)
{
    delete static_cast<OpRecord *>(extra);
    return MPI_SUCCESS;
}
int greq_cancel(void *, int) { return MPI_SUCCESS; }  // X-operations cannot be cancelled

// Whether @p h may run in this process on @p target's window: its memory
// is mapped here (or it is this rank), and the code may run outside its
// target (or the target is this process anyway).
bool runs_here(Window *w, ucx_ifunc_h h, int target)
{
    if (!w->runs_here(target)) return false;
    ucx_ifunc_status_t st = ucx_ifunc_movable(h, nullptr, 0);
    return st == UCX_IFUNC_OK || (st == UCX_IFUNC_ERR_DENIED && target == w->rank);
}

// [OpHdr][blocks][incoming data][args] of an X-op (@p hdr, its incoming
// data by reference @p ref, streamed @p so, or @p packed bytes to pack
// from the origin buffer) into @p payload: its length.
size_t build_payload(xrdma::Bytes *payload, OpHdr hdr, const std::vector<Block> &blocks, void *origin, int ocount,
                     MPI_Datatype otype, MPI_Comm comm, const StreamOut &so, const IncomingRef &ref, int packed,
                     const void *args, int args_size)
{
    // (The header's length is decided before the incoming data is packed.)
    const bool ext = !blocks.empty() || packed > 0;
    const size_t hl = op_hdr_size(ext);
    payload->resize(hl + blocks.size() * sizeof(Block) + size_t(packed) + size_t(args_size));
    uint8_t *p = payload->data() + hl;
    if (!blocks.empty()) memcpy(p, blocks.data(), blocks.size() * sizeof(Block));
    p += blocks.size() * sizeof(Block);
    int pos = 0;
    if (hdr.flags & kIncomingByRef) {
        memcpy(p, &ref, sizeof(ref));
        pos = int(sizeof(ref));
    } else if (hdr.flags & (kIncomingStream | kReplyStream)) {
        memcpy(p, so.wire.data(), so.wire.size());
        pos = int(so.wire.size());
    } else if (hdr.op == XRDMA_OP_PUT && packed) {
        MPI_Pack(origin, ocount, otype, p, packed, &pos, comm);
    }
    hdr.incoming_len = uint32_t(pos);
    op_hdr_write(payload->data(), hdr, ext);
    if (args_size) memcpy(p + pos, args, size_t(args_size));
    payload->resize(hl + blocks.size() * sizeof(Block) + size_t(pos) + size_t(args_size));
    return payload->size();
}

// [OpHdr][args] of an Xinvoke with up to kSmallArgs bytes of arguments, on
// the stack.
struct SmallInvoke {
    alignas(8) uint8_t bytes[sizeof(OpWire) + kSmallArgs];
    // Its length.
    size_t build(const OpHdr &hdr, const void *args, int args_size)
    {
        const size_t hl = op_hdr_write(bytes, hdr);  // (an Xinvoke's: never extended)
        xrdma::copy_bytes(bytes + hl, args, size_t(args_size));
        return hl + size_t(args_size);
    }
};

// One X-op call's arguments.
struct Xop {
    int op;
    void *origin;
    int ocount;
    MPI_Datatype otype;
    int trank;
    MPI_Aint tdisp;
    int tcount;
    MPI_Datatype ttype;
    MPIX_Ifunc ifunc;
    const void *args;
    int args_size;
    MPI_Win win;
    MPI_Request *request;
};

// X-op @p x, to whose target's process this one has no endpoint (its address
// was never learnt, or it failed): the error the call reports.
__attribute__((noinline, cold)) int unreachable(Window *w, const Xop &x)
{
    const int t = x.trank;
    return error_code(MPIX_ERR_PEER, std::string(op_name(x.op, x.request)) + " to rank " + std::to_string(t) +
                                         ": no endpoint to its process (world rank " +
                                         std::to_string(w->group->world[size_t(t)]) + "): it failed, or UCX cannot "
                                         "reach it");
}

// X-op @p r, which the plugin refused with @p st: undone, its record
// released. Its error code; MPI_SUCCESS when it has a request (@p req, then
// in *@p request), which reports the error to MPI_Wait / MPI_Test.
int refused(OpRecord *r, ucx_ifunc_status_t st, MPI_Request *request, MPI_Request req)
{
    r->w->pending[size_t(r->target)] -= r->count;
    const int err = error_code(error_class_of(st), std::string(op_name(r)) + " to rank " +
                                                       std::to_string(r->target) + ": " + ucx_ifunc_status_string(st));
    release_type(r);
    if (request) {
        r->error = err;
        MPI_Grequest_complete(req);
        *request = req;
        return MPI_SUCCESS;
    }
    op_put(r);
    return err;
}

// An X-op to @p t without a request, sent to its target, which a
// synchronisation call completes behind others: the target may hold its
// acknowledgement until that call asks (window_complete()), one message per
// batch of X-ops instead of one per X-op.
inline unsigned lazy_ack(Window *w, int t)
{
    return ++w->unsynced[size_t(t)] > kLazyAckAfter ? unsigned(UCX_IFUNC_INVOKE_LAZY_ACK) : 0u;
}

constexpr size_t kRecordHdr = 4 + sizeof(OpWire);  // a record's length word and X-op header
// A bundle stays a small message: 8 Xinvokes of the most arguments
// (kSmallArgs) fit; a record that would not fit sends the bundle first.
constexpr size_t kBundleBytes = 768;
static_assert(sizeof(OpWire) + 8 * (kRecordHdr + kSmallArgs) <= kBundleBytes, "8 records of the most arguments fit");

// The bundle (bundle.h): [OpHdr kBundle][records], built in place.
struct Bundle {
    Window *w = nullptr;
    int target = -1;
    ucx_ifunc_h h = nullptr;
    // The X-op that went alone last since the last synchronisation call
    // (its window: g_bundle_alone): the next one with the same window,
    // target and function starts a bundle. (An Xinvoke and its flush, one
    // after the other, pay nothing for bundles: a lone one goes as it
    // would without them.)
    int alone_target = -1;
    ucx_ifunc_h alone_h = nullptr;
    size_t len = 0;  // bytes so far, its header's included
    alignas(8) uint8_t bytes[kBundleBytes];
};
Bundle bundle;

// XRDMA_BUNDLE: X-ops per bundle at most (1: none bundled); read once.
unsigned g_bundle_max = 0;
__attribute__((noinline, cold)) unsigned bundle_max_read()
{
    return g_bundle_max = unsigned(std::min<unsigned long long>(
               std::max<unsigned long long>(xrdma::config_get_ull("XRDMA_BUNDLE"), 1), kBundleMaxOps));
}
inline unsigned bundle_max() { return __builtin_expect(g_bundle_max != 0, 1) ? g_bundle_max : bundle_max_read(); }

// Whether the Xinvoke about to go to @p t on @p w with @p h joins the
// bundle (flushed first if it cannot: X-ops to a target stay in order).
inline bool bundled(Window *w, int t, ucx_ifunc_h h)
{
    if (!w->last_stays || bundle_max() < 2 || w->peer_failed[size_t(t)]) {
        bundle_flush_if_any();
        return false;
    }
    Bundle &b = bundle;
    if (g_bundled) {
        if (b.w == w && b.target == t && b.h == h) return true;
        bundle_flush();
    }
    if (g_bundle_alone == w && b.alone_target == t && b.alone_h == h) return true;  // (the second of a stream)
    g_bundle_alone = w;
    b.alone_target = t;
    b.alone_h = h;
    return false;
}

// Append the Xinvoke (@p hdr, @p args) to the bundle; sent when full.
void bundle_add(Window *w, int t, ucx_ifunc_h h, const OpHdr &hdr, const void *args, int args_size)
{
    Bundle &b = bundle;
    if (g_bundled && b.len + kRecordHdr + size_t(args_size) > kBundleBytes) bundle_flush();
    if (!g_bundled) {
        b.w = w;
        b.target = t;
        b.h = h;
        b.len = sizeof(OpWire);
    }
    const uint32_t rec = uint32_t(sizeof(OpWire) + size_t(args_size));
    uint8_t *p = b.bytes + b.len;
    memcpy(p, &rec, 4);
    op_hdr_write(p + 4, hdr);
    xrdma::copy_bytes(p + kRecordHdr, args, size_t(args_size));
    b.len += 4 + rec;
    w->pending[size_t(t)]++;
    if (++g_bundled >= bundle_max()) bundle_flush();
}

// An X-op went out. Inside MPIX calls this rank serves arrived code too (and
// a stream of X-ops between two busy ranks cannot starve either side): every
// kProgressEvery-th call, as a progress pass costs a system call on some
// transports (TCP polls its sockets) and would halve the rate.
inline void issued(Runtime &rt)
{
    static unsigned calls;
    if (++calls % kProgressEvery == 0) rt.progress();
}

bool type_ok(MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL) return false;
    int size;
    return MPI_Type_size(t, &size) == MPI_SUCCESS;
}

}  // namespace

unsigned g_bundled = 0;
const void *g_bundle_alone = nullptr;

void bundle_flush()
{
    Bundle &b = bundle;
    const unsigned n = g_bundled;
    if (!n) return;
    g_bundled = 0;
    Window *w = b.w;
    const int t = b.target;
    // One X-op goes as it is (its record without the length word); more
    // under the bundle's header.
    const uint8_t *msg = b.bytes;
    size_t len = b.len;
    if (n == 1) {
        msg += sizeof(OpWire) + 4;
        len -= sizeof(OpWire) + 4;
    } else {
        op_hdr_write(b.bytes, OpHdr{kOpMagic, uint8_t(XRDMA_OP_INVOKE), kBundle, 0, w->id, int64_t(n), 0, 0});
    }
    OpRecord *r = op_get();
    *r = OpRecord{w, t, XRDMA_OP_INVOKE, nullptr, 0, MPI_BYTE, false, MPI_REQUEST_NULL};
    r->count = n;
    const ucx_ifunc_status_t st = ucx_ifunc_invoke_nbx(b.h, w->eps[size_t(t)], msg, len, lazy_ack(w, t), op_done, r);  // (bundled: its endpoint exists)
    if (st == UCX_IFUNC_INPROGRESS) return;
    // (Reported by the synchronisation call that completes them.)
    const int err = refused(r, st, nullptr, MPI_REQUEST_NULL);
    if (w->error[size_t(t)] == MPI_SUCCESS) w->error[size_t(t)] = err;
}

namespace {

// xrdma_mpi_xop() in steps, each returning MPI_SUCCESS or the error the
// call reports; one call's arguments: Xop (above).

// No code: exactly MPI_Put / MPI_Get (MPI_Rput / MPI_Rget), with MPI's own
// argument checks and datatype support (called without the runtime lock).
int plain_rma(const Xop &x)
{
    if (x.request)
        return x.op == XRDMA_OP_PUT ? MPI_Rput(x.origin, x.ocount, x.otype, x.trank, x.tdisp, x.tcount, x.ttype, x.win,
                                               x.request)
                                    : MPI_Rget(x.origin, x.ocount, x.otype, x.trank, x.tdisp, x.tcount, x.ttype, x.win,
                                               x.request);
    return x.op == XRDMA_OP_PUT ? MPI_Put(x.origin, x.ocount, x.otype, x.trank, x.tdisp, x.tcount, x.ttype, x.win)
                                : MPI_Get(x.origin, x.ocount, x.otype, x.trank, x.tdisp, x.tcount, x.ttype, x.win);
}

// An Xput's or Xget's datatypes checked, the target datatype as @p blocks
// (none for an Xinvoke).
int target_blocks(const Xop &x, std::vector<Block> *blocks)
{
    blocks->clear();
    for (MPI_Datatype t : {x.otype, x.ttype})
        if (!type_ok(t))
            return error_code(MPI_ERR_TYPE, std::string(op_name(x.op, x.request)) + (t == x.otype ? ": origin" : ": target") +
                                                " datatype: " +
                                                (t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype"));
    std::string why;
    if (flatten(x.ttype, x.tcount, blocks, &why) != MPI_SUCCESS)
        return error_code(MPI_ERR_TYPE, std::string(op_name(x.op, x.request)) + ": target datatype: " + why);
    // Sizes need not match: the ifunc decides what the data means (an
    // Xget may reply 8 bytes about a whole region).
    int osize;
    MPI_Type_size(x.otype, &osize);
    if (x.ocount && !x.origin && osize)
        return error_code(MPI_ERR_BUFFER, std::string(op_name(x.op, x.request)) + ": origin_addr is NULL but the origin " +
                                              "data is " + std::to_string(int64_t(x.ocount) * osize) + " bytes");
    return MPI_SUCCESS;
}

// @p r as the record of X-op @p x on @p w, its request not started.
inline OpRecord *record_of(const Xop &x, Window *w, OpRecord *r)
{
    *r = OpRecord{w, x.trank, x.op, x.origin, x.ocount, x.otype, false, MPI_REQUEST_NULL};
    return r;
}

// The header of a small Xinvoke @p x on @p w (no extension).
inline OpHdr small_hdr(const Xop &x, const Window *w) { return OpHdr{kOpMagic, uint8_t(x.op), 0, 0, w->id, x.tdisp, 0, 0}; }

// The common X-op, an Xinvoke of a few bytes of arguments that its target
// runs and a synchronisation call completes, goes straight to the plugin
// without the choices the general path (send_xop()) makes for the other
// X-ops (~50 instructions per op at the origin); from the second of a
// stream, into the bundle.
int send_small_invoke(Runtime &rt, const Xop &x, Window *w, ucx_ifunc_h h)
{
    const ucp_ep_h ep = w->ep(x.trank);
    if (__builtin_expect(!ep, 0)) return unreachable(w, x);
    const OpHdr hdr = small_hdr(x, w);
    if (bundled(w, x.trank, h)) {
        bundle_add(w, x.trank, h, hdr, x.args, x.args_size);
        issued(rt);
        return MPI_SUCCESS;
    }
    SmallInvoke msg;
    const size_t len = msg.build(hdr, x.args, x.args_size);
    OpRecord *r = record_of(x, w, op_get());
    w->pending[size_t(x.trank)]++;
    ucx_ifunc_status_t st = ucx_ifunc_invoke_nbx(h, ep, msg.bytes, len, lazy_ack(w, x.trank), op_done, r);
    if (st != UCX_IFUNC_INPROGRESS) return refused(r, st, nullptr, MPI_REQUEST_NULL);
    issued(rt);
    return MPI_SUCCESS;
}

// The same Xinvoke run here (node-local execution: the target's window is
// mapped in this process): the message built on the stack and run before
// the call returns, without send_xop()'s choices of data and reply
// (~40 instructions per op at the origin).
int run_small_invoke_here(Runtime &rt, const Xop &x, Window *w, ucx_ifunc_h h)
{
    const OpHdr hdr = small_hdr(x, w);
    SmallInvoke msg;
    const size_t len = msg.build(hdr, x.args, x.args_size);
    OpRecord *r = record_of(x, w, op_get());
    w->pending[size_t(x.trank)]++;  // before: the run completes inside the call
    const ucx_ifunc_status_t st =
        ucx_ifunc_invoke_local(h, w->group->world[size_t(x.trank)], msg.bytes, len, op_done, r);
    if (st != UCX_IFUNC_INPROGRESS) return refused(r, st, nullptr, MPI_REQUEST_NULL);
    issued(rt);
    return MPI_SUCCESS;
}

// What of an X-op's origin data travels (@p hdr's flags): a reference for
// a function run here (@p here) on contiguous data, which reads it in place
// (*@p ref); for a streaming function in another process, larger data stays
// here and the target fetches it chunk by chunk while its handlers run, and
// a large reply is written straight into a contiguous origin buffer
// (exposed: *@p so); else an Xput's data, packed. *@p packed: its bytes in
// the message.
int incoming_data(const Xop &x, Window *w, bool here, OpHdr *hdr, IncomingRef *ref, StreamOut *so, int *packed)
{
    if (here && x.op == XRDMA_OP_PUT && contiguous(x.origin, x.ocount, x.otype, ref)) hdr->flags |= kIncomingByRef;
    if (hdr->flags & kIncomingByRef)
        *packed = int(sizeof(*ref));
    else if (x.op == XRDMA_OP_PUT)
        MPI_Pack_size(x.ocount, x.otype, MPI_COMM_WORLD, packed);
    uint8_t streamed = 0;
    if (!here && x.ifunc->streams) {
        IncomingRef buf{};
        if (x.op == XRDMA_OP_PUT && size_t(*packed) > stream_chunk())
            streamed = kIncomingStream;
        else if (x.op == XRDMA_OP_GET && contiguous(x.origin, x.ocount, x.otype, &buf) && buf.len > stream_chunk())
            streamed = kReplyStream;
    }
    if (streamed) {
        const int err = stream_expose(op_name(x.op, x.request), w->rank, x.origin, x.ocount, x.otype, MPI_COMM_WORLD, so);
        if (err != MPI_SUCCESS) return err;
        hdr->flags |= streamed;
        *packed = int(so->wire.size());
    }
    return MPI_SUCCESS;
}

// The record of X-op @p x in flight (its streamed data @p so, its reply
// written into the origin buffer: @p pushed): its request started, if it
// has one.
OpRecord *op_record(const Xop &x, Window *w, const StreamOut &so, bool pushed)
{
    OpRecord *r = record_of(x, w, x.request ? new OpRecord : op_get());
    r->memh = so.memh;
    r->staged = so.staged;
    r->pushed = pushed;
    if (x.op == XRDMA_OP_GET) {
        int combiner, a, b, c;
        MPI_Type_get_envelope(x.otype, &a, &b, &c, &combiner);
        if (combiner != MPI_COMBINER_NAMED) {
            MPI_Type_dup(x.otype, &r->origin_type);
            r->type_owned = true;
        }
    }
    if (x.request) MPI_Grequest_start(greq_query, greq_free, greq_cancel, r, &r->request);
    return r;
}

// Every X-op but send_small_invoke()'s: its message, [OpHdr][blocks]
// [incoming data][args], built and handed to the plugin, to run here
// (node-local execution) or at its target. (A refused X-op with a request
// reports its error there: MPI_SUCCESS.)
int send_xop(Runtime &rt, const Xop &x, Window *w, ucx_ifunc_h h, const std::vector<Block> &blocks, bool here)
{
    const ucp_ep_h ep = here ? nullptr : w->ep(x.trank);
    if (!here && !ep) return unreachable(w, x);
    OpHdr hdr{};
    hdr.magic = kOpMagic;
    hdr.op = uint8_t(x.op);
    hdr.win = w->id;
    hdr.disp = x.tdisp;
    hdr.nblocks = uint32_t(blocks.size());
    IncomingRef ref{};
    StreamOut so;
    int packed = 0;
    int err = incoming_data(x, w, here, &hdr, &ref, &so, &packed);
    if (err != MPI_SUCCESS) return err;
    // An Xinvoke with a few bytes of arguments is built on the stack; the
    // rest in the scratch buffer.
    SmallInvoke small;
    const uint8_t *msg = small.bytes;
    size_t msg_len;
    xrdma::Bytes &payload = payload_scratch;
    if (x.op == XRDMA_OP_INVOKE && size_t(x.args_size) <= kSmallArgs) {
        msg_len = small.build(hdr, x.args, x.args_size);
    } else {
        msg_len = build_payload(&payload, hdr, blocks, x.origin, x.ocount, x.otype, MPI_COMM_WORLD, so, ref, packed,
                                x.args, x.args_size);
        msg = payload.data();
    }
    OpRecord *r = op_record(x, w, so, hdr.flags & kReplyStream);
    const MPI_Request req = r->request;  // r may be back in the pool once op_done ran
    w->pending[size_t(x.trank)]++;  // before: a local run completes inside the call
    const unsigned flags = ((hdr.flags & (kIncomingStream | kReplyStream)) ? unsigned(UCX_IFUNC_INVOKE_QUEUED) : 0u) |
                           (!here && !x.request ? lazy_ack(w, x.trank) : 0u);
    ucx_ifunc_status_t st = here ? ucx_ifunc_invoke_local(h, w->group->world[size_t(x.trank)], msg, msg_len, op_done, r)
                                 : ucx_ifunc_invoke_nbx(h, ep, msg, msg_len, flags, op_done, r);
    if (st != UCX_IFUNC_INPROGRESS) return refused(r, st, x.request, req);
    if (payload.capacity() > kScratchKeep) xrdma::Bytes().swap(payload);
    if (x.request) *x.request = req;
    issued(rt);
    return MPI_SUCCESS;
}

}  // namespace

}  // namespace xrdma::mpi

using namespace xrdma::mpi;

extern "C" int xrdma_mpi_xop(int op, void *origin, int ocount, MPI_Datatype otype, int trank,
                             MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPIX_Ifunc ifunc,
                             const void *args, int args_size, MPI_Win win, MPI_Request *request)
{
    Runtime &rt = Runtime::get();
    RuntimeLock m(rt);
    std::unique_lock<RuntimeLock> lock(m);
    if (request) *request = MPI_REQUEST_NULL;
    const Xop x{op, origin, ocount, otype, trank, tdisp, tcount, ttype, ifunc, args, args_size, win, request};
    Window *w = window_find(win);
    // The call fails with @p err: the lock released, then the window's error
    // handler called (MPI_COMM_WORLD's without a window).
    auto bad = [&](int err) {
        lock.unlock();
        if (win == MPI_WIN_NULL) return MPI_Comm_call_errhandler(MPI_COMM_WORLD, err), err;
        MPI_Win_call_errhandler(win, err);
        return err;
    };
    if (!w) {
        // A window XRDMA never saw created: its MPI_Win_* were not the ones
        // called (libmpi ahead of the core in the program's search order).
        if (win == MPI_WIN_NULL) return bad(MPI_ERR_WIN);
        return bad(error_code(MPI_ERR_WIN, std::string(op_name(op, request)) +
                                               ": XRDMA is not interposed on this window: libmpix_xrdma_core "
                                               "must come before libmpi (see xrdma(7))"));
    }
    if (ifunc == nullptr && op != XRDMA_OP_INVOKE) {
        lock.unlock();
        return plain_rma(x);
    }
    if (op != XRDMA_OP_INVOKE && (ocount < 0 || tcount < 0))
        return bad(error_code(MPI_ERR_COUNT, std::string(op_name(op, request)) +
                                                 (ocount < 0 ? ": origin_count is " + std::to_string(ocount)
                                                             : ": target_count is " + std::to_string(tcount))));
    if (args_size < 0)
        return bad(error_code(MPI_ERR_ARG, std::string(op_name(op, request)) + ": args_size is " + std::to_string(args_size) +
                                               ": args are 0 to " + std::to_string(INT_MAX) +
                                               " bytes (INT_MAX, the limit of the int args_size)"));
    if (args_size > 0 && !args)
        return bad(error_code(MPI_ERR_ARG, std::string(op_name(op, request)) + ": args is NULL but args_size is " +
                                               std::to_string(args_size)));
    if (trank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (trank < 0 || trank >= w->size)
        return bad(error_code(MPI_ERR_RANK, std::string(op_name(op, request)) + ": target_rank " + std::to_string(trank) +
                                                " is not a rank of the window's group (0 to " +
                                                std::to_string(w->size - 1) + ") nor MPI_PROC_NULL"));
    if (op == XRDMA_OP_INVOKE && ifunc == nullptr)
        return bad(error_code(MPI_ERR_ARG, std::string(op_name(op, request)) + ": ifunc is MPIX_IFUNC_NULL: an Xinvoke has "
                                                                       "no data, it needs a function"));
    std::vector<Block> &blocks = blocks_scratch;
    int err = MPI_SUCCESS;
    if (op == XRDMA_OP_INVOKE)
        blocks.clear();  // (an Xinvoke names no target data)
    else if ((err = target_blocks(x, &blocks)) != MPI_SUCCESS)
        return bad(err);
    if (__builtin_expect(!w->origin(), 0) && !origin_ready(w, &err))
        return bad(error_code(MPI_ERR_WIN, std::string(op_name(op, request)) + ": this window has no X-operations: " +
                                               w->unusable));
    ucx_ifunc_h h = window_ifunc(w, ifunc, &err);
    if (!h) return bad(err);

    // Execution follows the data: when this process can map the target's
    // window, the function runs here (op_done before the call returns,
    // unless it forwarded off the node). Only with nothing of ours in flight
    // to that target, so that X-ops to it still run in issue order.
    const bool here = w->pending[size_t(trank)] == 0 && runs_here(w, h, trank);
    const bool small = op == XRDMA_OP_INVOKE && !request && size_t(args_size) <= kSmallArgs;
    if (small && !here) {
        err = send_small_invoke(rt, x, w, h);  // (bundles a stream of them)
        return err == MPI_SUCCESS ? err : bad(err);
    }
    bundle_flush_if_any();  // (X-ops to a target stay in order)
    err = small ? run_small_invoke_here(rt, x, w, h) : send_xop(rt, x, w, h, blocks, here);
    return err == MPI_SUCCESS ? err : bad(err);
}

extern "C" int xrdma_mpi_progress(void)
{
    Runtime::get().app_progress();
    return MPI_SUCCESS;
}
