// Put-and-poll mode (the X-RDMA path of the published ifunc API): a frame is
// written into target memory with one ucp_put_nbx; the target finds it by
// polling. A checksum over the frame tells a complete frame from one still
// being written, so no fence or second put is needed: the target copies the
// frame, verifies the copy and runs the copy, never the live buffer.
#include "put_poll.h"

#include "xrdma_common/bytes.h"
#include "context.h"
#include "fault.h"
#include "xrdma_common/log.h"

#include <atomic>
#include <cstring>
#include <ctime>

using namespace xrdma;

namespace xrdma {

namespace {

uint64_t next_nonce()
{
    static std::atomic<uint64_t> counter{uint64_t(time(nullptr)) << 32};
    return ++counter;
}

}  // namespace

ucx_ifunc_status_t frame_build(const Hash &hash, const std::string &entry,
                               const std::vector<uint8_t> *image, bool compat, size_t args_len,
                               ucx_ifunc_frame_t *out)
{
    if (entry.empty() || entry.size() > kMaxEntryLen) return UCX_IFUNC_ERR_INVALID_PARAM;
    size_t image_len = image ? image->size() : 0;
    size_t args_off = align_up(sizeof(FrameHdr) + entry.size() + image_len, 16);
    size_t size = align_up(args_off + args_len, 8) + 8;
    if (size > UINT32_MAX) return UCX_IFUNC_ERR_INVALID_PARAM;
    auto *f = static_cast<uint8_t *>(calloc(1, size));
    if (!f) return UCX_IFUNC_ERR_NO_MEMORY;
    FrameHdr h{};
    h.ready = kFrameReady;
    h.frame_size = uint32_t(size);
    h.version = kWireVersion;
    h.flags = uint8_t((image ? kFrameHasCode : 0) | (compat ? kFrameCompat : 0));
    h.entry_len = uint16_t(entry.size());
    h.args_off = uint32_t(args_off);
    h.args_len = uint32_t(args_len);
    h.image_len = image_len;
    memcpy(h.hash, hash.data(), sizeof(h.hash));
    memcpy(f, &h, sizeof(h));
    memcpy(f + sizeof(h), entry.data(), entry.size());
    if (image) memcpy(f + sizeof(h) + entry.size(), image->data(), image_len);
    out->frame = f;
    out->frame_size = size;
    return UCX_IFUNC_OK;
}

void frame_seal(ucx_ifunc_frame_t *frame)
{
    auto *f = static_cast<uint8_t *>(frame->frame);
    FrameHdr h;
    memcpy(&h, f, sizeof(h));
    // Sealed and unchanged since: write nothing. A send may be reading the
    // frame (a resend loop without a flush in between), so an unchanged
    // frame is never rewritten; only a frame whose bytes the caller changed
    // gets a new nonce and checksum.
    if (h.nonce != 0 && frame_checksum(f, frame->frame_size) == h.checksum) return;
    uint64_t nonce = next_nonce();
    memcpy(f + offsetof(FrameHdr, nonce), &nonce, 8);
    memcpy(f + frame->frame_size - 8, &nonce, 8);
    uint64_t sum = frame_checksum(f, frame->frame_size);
    memcpy(f + offsetof(FrameHdr, checksum), &sum, 8);
}

namespace {

// A header that is all there: its sizes follow frame_build()'s layout
// exactly. A header still being written (the rest of it zero, as a consumed
// slot leaves it) does not, so an oversized frame can be told from one that
// is still arriving without reading past the buffer.
bool header_complete(const FrameHdr &h)
{
    if (h.version != kWireVersion || h.entry_len == 0 || h.entry_len > kMaxEntryLen) return false;
    if (bool(h.flags & kFrameHasCode) != (h.image_len != 0) || h.image_len > UINT32_MAX) return false;
    const uint64_t args_off = align_up(sizeof(FrameHdr) + h.entry_len + h.image_len, 16);
    return h.args_off == args_off && h.frame_size == align_up(args_off + h.args_len, 8) + 8;
}

// Clear a slot's header and trailer: the slot is free for the next frame.
void consume_slot(uint8_t *buf, size_t trailer_off)
{
    memset(buf, 0, sizeof(FrameHdr));
    if (trailer_off) memset(buf + trailer_off, 0, 8);
    std::atomic_thread_fence(std::memory_order_release);
}

ucx_ifunc_status_t frame_run(ucx_ifunc_context *ctx, uint8_t *frame, size_t size, void *target_args,
                             std::string *why);

}  // namespace

ucx_ifunc_status_t frame_poll(ucx_ifunc_context *ctx, void *buffer, size_t buffer_size,
                              void *target_args, std::string *why)
{
    // Injected functions run one at a time: a poll from inside one (which
    // could also change the code cache under it) finds nothing.
    if (ctx->in_dispatch) return UCX_IFUNC_INPROGRESS;
    auto *buf = static_cast<uint8_t *>(buffer);
    std::atomic_thread_fence(std::memory_order_acquire);
    uint64_t ready;
    memcpy(&ready, buf, 8);
    if (ready != kFrameReady) return UCX_IFUNC_INPROGRESS;
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    if (h.frame_size > buffer_size) {
        if (!header_complete(h)) return UCX_IFUNC_INPROGRESS;
        // An error once, not "still arriving" forever: the slot is consumed.
        consume_slot(buf, 0);
        *why = "frame of " + std::to_string(h.frame_size) + " bytes does not fit the " +
               std::to_string(buffer_size) + "-byte buffer";
        ctx->stats.rejected++;
        XRDMA_WARN("put-and-poll frame dropped: %s", why->c_str());
        return UCX_IFUNC_ERR_TRUNCATED;
    }
    if (h.frame_size < sizeof(FrameHdr) + 8) return UCX_IFUNC_INPROGRESS;
    uint64_t tail;
    memcpy(&tail, buf + h.frame_size - 8, 8);
    if (tail != h.nonce) return UCX_IFUNC_INPROGRESS;  // cheap test before copying
    // The checksum is verified over a private copy, and everything after
    // reads that copy: the origin may be writing the buffer meanwhile (a
    // put's bytes land in any order), so a test on the live buffer followed
    // by a second read could take a header or payload that changed between.
    // A nested poll (from inside an entry) takes an empty vector of its own.
    std::vector<uint8_t> copy = std::move(ctx->poll_copy);
    copy.assign(buf, buf + h.frame_size);
    memcpy(&h, copy.data(), sizeof(h));
    if (h.frame_size != copy.size() || frame_checksum(copy.data(), copy.size()) != h.checksum) {
        ctx->poll_copy = std::move(copy);
        return UCX_IFUNC_INPROGRESS;
    }
    // Consumed before the function runs, as the published API does: an
    // answer its reply provokes may land in this slot while it runs.
    consume_slot(buf, copy.size() - 8);
    ucx_ifunc_status_t st = frame_run(ctx, copy.data(), copy.size(), target_args, why);
    if (ctx->poll_copy.capacity() < copy.capacity()) ctx->poll_copy = std::move(copy);
    if (st != UCX_IFUNC_OK) {
        ctx->stats.rejected++;
        XRDMA_WARN("put-and-poll frame dropped: %s", why->c_str());
    }
    return st;
}

namespace {

// Run a verified private copy of a frame.
ucx_ifunc_status_t frame_run(ucx_ifunc_context *ctx, uint8_t *buf, size_t size, void *target_args,
                             std::string *why)
{
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    ucx_ifunc_status_t st = frame_check_hdr(h, buf, size, why);
    if (st != UCX_IFUNC_OK) return st;

    Hash hash;
    memcpy(hash.data(), h.hash, hash.size());
    std::string entry(reinterpret_cast<const char *>(buf + sizeof(h)), h.entry_len);
    if (refuse_quarantined(ctx, hash, why)) return UCX_IFUNC_ERR_FAULT;
    std::shared_ptr<CachedImage> img;
    void *fn = nullptr;
    st = find_entry(ctx, hash, (h.flags & kFrameHasCode) ? buf + sizeof(h) + h.entry_len : nullptr, h.image_len,
                    entry, &img, &fn, why);
    if (st != UCX_IFUNC_OK) return st;
    uint8_t *args = buf + h.args_off;
    if (h.flags & kFrameCompat) {
        auto main_fn = reinterpret_cast<void (*)(void *, size_t, void *)>(fn);
        FaultInfo fault;
        ctx->in_dispatch++;
        t_dispatching++;
        guarded_call_compat(img->code.get(), main_fn, args, h.args_len, target_args, &fault);
        t_dispatching--;
        ctx->in_dispatch--;
        ctx->stats.executed++;
        if (fault.signal || fault.timeout) {
            st = fault_status(fault, entry, why);
            quarantine(ctx, hash, *why);
            return st;
        }
    } else {
        xrdma_ctx x{};
        x.context = ctx;
        x.image = img.get();
        x.entry = &entry;
        x.target_args = target_args;
        x.next_call(ctx->params.rank);
        st = entry_outcome(x, dispatch_entry(ctx, &x, fn, args, h.args_len), why);
        if (st != UCX_IFUNC_OK) return st;
    }
    return UCX_IFUNC_OK;
}

}  // namespace

}  // namespace xrdma

extern "C" {

ucx_ifunc_status_t ucx_ifunc_frame_create(ucx_ifunc_h ifunc, const void *args, size_t args_size,
                                          int with_code, ucx_ifunc_frame_t *frame)
{
    if (!ifunc || !frame || (args_size && !args)) return UCX_IFUNC_ERR_INVALID_PARAM;
    ucx_ifunc_status_t st = frame_build(ifunc->hash, ifunc->entry, with_code ? ifunc->image.get() : nullptr,
                                        false, args_size, frame);
    if (st == UCX_IFUNC_OK && args_size) {
        size_t n;
        memcpy(ucx_ifunc_frame_args(frame, &n), args, args_size);
    }
    return st;
}

void ucx_ifunc_frame_free(ucx_ifunc_frame_t *frame)
{
    if (!frame) return;
    free(frame->frame);
    frame->frame = nullptr;
    frame->frame_size = 0;
}

void *ucx_ifunc_frame_args(ucx_ifunc_frame_t *frame, size_t *args_size)
{
    if (!frame || !frame->frame) return nullptr;
    FrameHdr h;
    memcpy(&h, frame->frame, sizeof(h));
    if (args_size) *args_size = h.args_len;
    return static_cast<uint8_t *>(frame->frame) + h.args_off;
}

ucx_ifunc_status_t ucx_ifunc_frame_put(ucp_ep_h ep, ucx_ifunc_frame_t *frame, uint64_t remote_addr,
                                       ucp_rkey_h rkey)
{
    if (!ep || !frame || !frame->frame || !rkey) return UCX_IFUNC_ERR_INVALID_PARAM;
    frame_seal(frame);
    return frame_put(ep, frame, remote_addr, rkey);
}

}  // extern "C"

namespace xrdma {

ucx_ifunc_status_t frame_put(ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr, ucp_rkey_h rkey)
{
    ucp_request_param_t p;
    p.op_attr_mask = 0;
    ucs_status_ptr_t r = ucp_put_nbx(ep, frame->frame, frame->frame_size, remote_addr, rkey, &p);
    if (r == nullptr) return UCX_IFUNC_OK;
    if (UCS_PTR_IS_ERR(r)) return from_ucs(UCS_PTR_STATUS(r));
    ucp_request_free(r);  // completes in the background; the caller flushes
    return UCX_IFUNC_INPROGRESS;
}

}  // namespace xrdma

extern "C" {

ucx_ifunc_status_t ucx_ifunc_poll(ucx_ifunc_context_h ctx, void *buffer, size_t buffer_size,
                                  void *target_args)
{
    if (!ctx || !buffer) return UCX_IFUNC_ERR_INVALID_PARAM;
    if (buffer_size < sizeof(FrameHdr) + 8) return UCX_IFUNC_ERR_INVALID_PARAM;
    std::string why;
    return frame_poll(ctx, buffer, buffer_size, target_args, &why);
}

}  // extern "C"
