// Put-and-poll mode (the X-RDMA path of the published ifunc API): a frame is
// written into target memory with one ucp_put_nbx; the target finds it by
// polling. A checksum over the frame tells a complete frame from one still
// being written, so no fence or second put is needed: the target copies the
// frame, verifies the copy and runs the copy, never the live buffer. Where
// the origin maps the target's memory it writes the frame with its own
// stores, the ready word last (kFrameStored): the target then sees a whole
// frame and copies only its header and payload.
#include "compat/put_poll.h"

#include "compat/poll_warm.h"
#include "xrdma_common/bytes.h"
#include "run/context.h"
#include "run/fault.h"
#include "xrdma_common/hot.h"
#include "xrdma_common/log.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <string_view>

using namespace xrdma;

namespace xrdma {

ucx_ifunc_status_t frame_put_pending(ucs_status_ptr_t r)
{
    if (UCS_PTR_IS_ERR(r)) return from_ucs(UCS_PTR_STATUS(r));
    ucp_request_free(r);  // completes in the background; the caller flushes
    return UCX_IFUNC_INPROGRESS;
}

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

// Frames up to this size are copied onto the poller's stack (one without
// code and with a payload of up to some 900 bytes).
constexpr size_t kStackFrame = 1024;

// The code a frame names (frame_resolve()).
struct Resolved {
    const CachedImage *img = nullptr;
    std::shared_ptr<CachedImage> held;  // when it was looked up
    void *fn = nullptr;
    const std::string *entry = nullptr;  // its name, kept by the image
};

// The code the warm frame resolved to.
inline Resolved warm_resolved(const PollWarm &w)
{
    Resolved r;
    r.img = w.img;
    r.fn = w.fn;
    r.entry = w.entry;
    return r;
}

// Keep frame @p f (its header @p h, checked; its code resolved as @p r) as
// the warm one (PollWarm), if it has no code, a short name and a payload the
// short path copies.
inline void warm_keep(ucx_ifunc_context *ctx, const FrameHdr &h, const uint8_t *f, const Resolved &r)
{
    if ((h.flags & kFrameHasCode) || h.args_off > sizeof(FrameHdr) + PollWarm::kMaxName ||
        align_up(h.args_len, 8) > kWarmArgs)
        return;
    PollWarm &w = ctx->poll_warm;
    // (args_off is 16-aligned and past the name: frame_hdr_ok())
    w.name_lanes = unsigned(h.args_off - sizeof(FrameHdr)) / sizeof(PollWarm::Lane);
    memcpy(w.want, &h, sizeof(h));
    memcpy(reinterpret_cast<uint8_t *>(w.want) + sizeof(h), f + sizeof(h), h.args_off - sizeof(h));
    w.frame_size = h.frame_size;
    w.args_off = h.args_off;
    w.args_len = h.args_len;
    w.flags = h.flags;
    w.cache_changes = ctx->cache.changes();
    w.img = r.img;
    w.fn = r.fn;
    w.entry = r.entry;
}

// The code of a frame without code that names the image run last and its
// last entry (a stream of frames to one ifunc): the cache's most recent
// image, no lookup. False otherwise, or while any image is quarantined.
inline bool last_run(ucx_ifunc_context *ctx, const FrameHdr &h, const uint8_t *entry, Resolved *r)
{
    const CachedImage *cur = ctx->cache.front();
    if (!cur || (h.flags & kFrameHasCode) || !cur->last_fn || !ctx->quarantined.empty()) return false;
    Hash hash;
    memcpy(hash.data(), h.hash, hash.size());
    if (!HashKey::same(hash, cur->view.hash) || cur->last_entry->size() != h.entry_len ||
        !same_bytes(cur->last_entry->data(), entry, h.entry_len))
        return false;
    r->img = cur;
    r->fn = cur->last_fn;
    r->entry = cur->last_entry;
    return true;
}

// frame_resolve() when the frame does not name the code run last.
__attribute__((noinline)) ucx_ifunc_status_t find_frame_code(ucx_ifunc_context *ctx, const FrameHdr &h,
                                                             const uint8_t *entry, Resolved *r, std::string *why)
{
    Hash hash;
    memcpy(hash.data(), h.hash, hash.size());
    if (refuse_quarantined(ctx, hash, why)) return UCX_IFUNC_ERR_FAULT;
    const std::string name(reinterpret_cast<const char *>(entry), h.entry_len);
    ucx_ifunc_status_t st = find_entry(ctx, hash, (h.flags & kFrameHasCode) ? entry + h.entry_len : nullptr,
                                       h.image_len, name, &r->held, &r->fn, why);
    if (st != UCX_IFUNC_OK) return st;
    r->img = r->held.get();
    r->entry = &r->held->entries.find(name)->first;  // (find_entry() resolved it: it is there)
    return UCX_IFUNC_OK;
}

// Find (or load) the code and entry frame @p frame names (@p h: its header,
// checked; the frame's bytes after it, a private copy or a stored frame in
// its slot: read here, before the slot is consumed), and keep the frame as
// the warm one.
inline ucx_ifunc_status_t frame_resolve(ucx_ifunc_context *ctx, const FrameHdr &h, const uint8_t *frame,
                                        Resolved *r, std::string *why)
{
    const uint8_t *entry = frame + sizeof(FrameHdr);
    const ucx_ifunc_status_t st = last_run(ctx, h, entry, r) ? UCX_IFUNC_OK : find_frame_code(ctx, h, entry, r, why);
    if (st == UCX_IFUNC_OK) warm_keep(ctx, h, frame, *r);
    return st;
}

// A published-API entry (@p entry of @p img) that faulted or ran out of
// time: its image is quarantined.
__attribute__((noinline, cold)) ucx_ifunc_status_t contained(ucx_ifunc_context *ctx, const CachedImage *img,
                                                             const std::string &entry, std::string *why)
{
    ucx_ifunc_status_t st = fault_status(last_fault(), entry, why);
    quarantine(ctx, img->view.hash, *why);
    return st;
}

// A native frame's entry (ucx_ifunc_frame_create()), through the layer's
// dispatch hook, which may progress this context while the entry runs (and
// so change the cache): the image is held.
__attribute__((noinline)) ucx_ifunc_status_t native_call(ucx_ifunc_context *ctx, uint32_t args_len, Resolved &r,
                                                         uint8_t *args, void *target_args, std::string *why)
{
    if (!r.held) r.held = ctx->cache.front_shared();
    xrdma_ctx x{};
    x.context = ctx;
    x.image = r.held.get();
    x.entry = r.entry;
    x.target_args = target_args;
    x.next_call(ctx->params.rank);
    return entry_outcome(x, dispatch_entry(ctx, &x, r.fn, args, args_len), why);
}

// Run a resolved frame's entry (its header's @p flags) on @p args_len bytes
// at @p args (private: its slot is consumed).
inline __attribute__((always_inline)) ucx_ifunc_status_t frame_call(ucx_ifunc_context *ctx, uint8_t flags,
                                                                  uint32_t args_len, Resolved &r, uint8_t *args,
                                                                  void *target_args, std::string *why)
{
    if (flags & kFrameCompat) {
        const int rc = compat_call(ctx, r.img, r.fn, args, args_len, target_args);
        return __builtin_expect(rc == 0, 1) ? UCX_IFUNC_OK : contained(ctx, r.img, *r.entry, why);
    }
    return native_call(ctx, args_len, r, args, target_args, why);
}

// A frame that cannot run: counted and logged (the slot is consumed).
__attribute__((noinline, cold)) ucx_ifunc_status_t dropped(ucx_ifunc_context *ctx, ucx_ifunc_status_t st,
                                                           const std::string &why)
{
    ctx->stats.rejected++;
    XRDMA_WARN("put-and-poll frame dropped: %s", why.c_str());
    return st;
}

// A frame refused before it ran (header @p h; its trailer at @p trailer_off,
// 0 for one that does not fit the buffer): its slot consumed, and a refusal
// record left there (FrameRefusal) where the buffer can hold one, for the
// frame's origin to read back. (A frame whose entry ran and failed leaves
// none: its slot may hold the next frame by then.)
__attribute__((noinline, cold)) ucx_ifunc_status_t refused(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                                           size_t trailer_off, const FrameHdr &h,
                                                           ucx_ifunc_status_t st, const std::string &why)
{
    consume_slot(buf, trailer_off);
    if (buffer_size >= sizeof(FrameRefusal)) {
        FrameRefusal r{};
        r.nonce = h.nonce;
        r.checksum = h.checksum;
        r.status = int32_t(st);
        r.reason_len = uint32_t(std::min({why.size(), kMaxRefusalReason, buffer_size - sizeof(r)}));
        r.sum = refusal_sum(r, reinterpret_cast<const uint8_t *>(why.data()));
        memcpy(buf + sizeof(r), why.data(), r.reason_len);
        memcpy(buf + 8, reinterpret_cast<const uint8_t *>(&r) + 8, sizeof(r) - 8);
        std::atomic_thread_fence(std::memory_order_release);
        const uint64_t magic = kFrameRefused;
        memcpy(buf, &magic, 8);  // (last: a reader that sees it sees the rest)
    }
    return dropped(ctx, st, why);
}

// A frame whose ready word says kFrameStored: its writer's stores put it
// there, the ready word last after a release fence, so that all of it is
// visible once that word is (no checksum to verify). Only the header and
// the payload are copied; the entry name and code are read where they are,
// before the slot is consumed. (The common case, the warm frame again, takes
// frame_run_warm() instead; a small payload for the code run last,
// stored_warm().)
__attribute__((noinline)) ucx_ifunc_status_t stored_frame(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                                          void *target_args, std::string *why)
{
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    uint64_t tail = 0;
    if (h.frame_size >= sizeof(FrameHdr) + 8 && h.frame_size <= buffer_size)
        memcpy(&tail, buf + h.frame_size - 8, 8);
    if (!frame_hdr_ok(h, tail, buffer_size)) {
        ucx_ifunc_status_t st = h.frame_size > buffer_size ? UCX_IFUNC_ERR_TRUNCATED : UCX_IFUNC_ERR_PROTOCOL;
        if (st == UCX_IFUNC_ERR_TRUNCATED)
            *why = "frame of " + std::to_string(h.frame_size) + " bytes does not fit the " +
                   std::to_string(buffer_size) + "-byte buffer";
        else
            frame_check_hdr(h, buf, buffer_size, why);
        return refused(ctx, buf, buffer_size, 0, h, st, *why);
    }
    Resolved r;
    ucx_ifunc_status_t st = frame_resolve(ctx, h, buf, &r, why);
    if (st != UCX_IFUNC_OK) return refused(ctx, buf, buffer_size, h.frame_size - 8, h, st, *why);
    alignas(16) uint8_t small[kStackFrame];
    std::vector<uint8_t> big;
    uint8_t *args = small;
    if (align_up(h.args_len, 8) > sizeof(small)) {
        big = std::move(ctx->poll_copy);
        big.resize(align_up(h.args_len, 8));
        args = big.data();
    }
    // The payload's padding to 8 bytes lies inside the frame: whole words
    // (inline for a small payload).
    copy_bytes(args, buf + h.args_off, align_up(h.args_len, 8));
    // Consumed before the function runs, as the published API does: an
    // answer its reply provokes may land in this slot while it runs.
    consume_slot(buf, h.frame_size - 8);
    st = frame_call(ctx, h.flags, h.args_len, r, args, target_args, why);
    if (!big.empty() && ctx->poll_copy.capacity() < big.capacity()) ctx->poll_copy = std::move(big);
    return st == UCX_IFUNC_OK ? st : dropped(ctx, st, *why);
}

// stored_frame() for a well-formed frame without code, with a payload of up
// to kWarmArgs bytes, for the entry run last (last_run()): everything on the
// stack of a short function.
inline ucx_ifunc_status_t stored_warm(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                      void *target_args, std::string *why)
{
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    const size_t args_len = align_up(h.args_len, 8);
    Resolved r;
    if (args_len <= kWarmArgs && h.frame_size >= sizeof(FrameHdr) + 8 && h.frame_size <= buffer_size) {
        uint64_t tail;
        memcpy(&tail, buf + h.frame_size - 8, 8);
        if (frame_hdr_ok(h, tail, buffer_size) && last_run(ctx, h, buf + sizeof(FrameHdr), &r)) {
            warm_keep(ctx, h, buf, r);
            alignas(16) uint8_t args[kWarmArgs];
            copy_bytes(args, buf + h.args_off, args_len);
            consume_slot(buf, h.frame_size - 8);
            const ucx_ifunc_status_t st = frame_call(ctx, h.flags, h.args_len, r, args, target_args, why);
            return st == UCX_IFUNC_OK ? st : dropped(ctx, st, *why);
        }
    }
    return stored_frame(ctx, buf, buffer_size, target_args, why);
}

// The frame of a put (ready word kFrameReady), once it is all there: the
// checksum is verified over a private copy, and everything after reads
// that copy: the origin may be writing the buffer meanwhile (a put's bytes
// land in any order), so a test on the live buffer followed by a second
// read could take a header or payload that changed between.
__attribute__((noinline)) ucx_ifunc_status_t put_frame(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                                       void *target_args, std::string *why)
{
    FrameHdr h;
    memcpy(&h, buf, sizeof(h));
    if (h.frame_size > buffer_size) {
        if (!header_complete(h)) return UCX_IFUNC_INPROGRESS;
        // An error once, not "still arriving" forever: the slot is consumed.
        *why = "frame of " + std::to_string(h.frame_size) + " bytes does not fit the " +
               std::to_string(buffer_size) + "-byte buffer";
        return refused(ctx, buf, buffer_size, 0, h, UCX_IFUNC_ERR_TRUNCATED, *why);
    }
    if (h.frame_size < sizeof(FrameHdr) + 8) return UCX_IFUNC_INPROGRESS;
    uint64_t tail;
    memcpy(&tail, buf + h.frame_size - 8, 8);
    if (tail != h.nonce) return UCX_IFUNC_INPROGRESS;  // cheap test before copying
    // A small frame (the common one: no code) is copied onto the stack, a
    // larger one into the context's reused vector (a nested poll, from inside
    // an entry, takes an empty vector of its own).
    const size_t size = h.frame_size;
    alignas(16) uint8_t small[kStackFrame];
    std::vector<uint8_t> big;
    uint8_t *copy = small;
    if (size > sizeof(small)) {
        big = std::move(ctx->poll_copy);
        big.resize(size);
        copy = big.data();
    }
    memcpy(copy, buf, size);
    memcpy(&h, copy, sizeof(h));
    ucx_ifunc_status_t st = UCX_IFUNC_INPROGRESS;
    if (h.frame_size == size && frame_checksum(copy, size) == h.checksum) {
        memcpy(&tail, copy + size - 8, 8);
        Resolved r;
        if (tail == h.nonce && size == ctx->poll_warm.frame_size && warm_match(ctx, copy)) {
            r = warm_resolved(ctx->poll_warm);
            st = UCX_IFUNC_OK;
        } else {
            st = frame_hdr_ok(h, tail, size) ? UCX_IFUNC_OK : frame_check_hdr(h, copy, size, why);
            if (st == UCX_IFUNC_OK) st = frame_resolve(ctx, h, copy, &r, why);
        }
        if (st != UCX_IFUNC_OK) {
            refused(ctx, buf, buffer_size, size - 8, h, st, *why);
        } else {
            // Consumed before the function runs, as the published API does:
            // an answer its reply provokes may land in this slot while it runs.
            consume_slot(buf, size - 8);
            st = frame_call(ctx, h.flags, h.args_len, r, copy + h.args_off, target_args, why);
            if (st != UCX_IFUNC_OK) dropped(ctx, st, *why);
        }
    }
    if (!big.empty() && ctx->poll_copy.capacity() < big.capacity()) ctx->poll_copy = std::move(big);
    return st;
}

// frame_poll() for every frame but the warm one stored again: with a
// message for the reason a frame is refused.
__attribute__((noinline)) ucx_ifunc_status_t poll_other(ucx_ifunc_context *ctx, uint8_t *buf, size_t buffer_size,
                                                        void *target_args, uint64_t ready)
{
    std::string why;
    return ready == kFrameStored ? stored_warm(ctx, buf, buffer_size, target_args, &why)
                                 : put_frame(ctx, buf, buffer_size, target_args, &why);
}

}  // namespace

ucx_ifunc_status_t warm_other(ucx_ifunc_context *ctx, uint8_t *args, void *target_args)
{
    const PollWarm &w = ctx->poll_warm;
    std::string why;
    ucx_ifunc_status_t st;
    if (w.flags & kFrameCompat) {
        st = contained(ctx, w.img, *w.entry, &why);
    } else {
        Resolved r = warm_resolved(w);
        st = native_call(ctx, w.args_len, r, args, target_args, &why);
    }
    return st == UCX_IFUNC_OK ? st : dropped(ctx, st, why);
}

XRDMA_HOT ucx_ifunc_status_t frame_poll(ucx_ifunc_context *ctx, void *buffer, size_t buffer_size, void *target_args)
{
    // Injected functions run one at a time: a poll from inside one (which
    // could also change the code cache under it) finds nothing.
    if (ctx->in_dispatch) return UCX_IFUNC_INPROGRESS;
    auto *buf = static_cast<uint8_t *>(buffer);
    const uint64_t ready = __atomic_load_n(reinterpret_cast<const uint64_t *>(buf), __ATOMIC_ACQUIRE);
    ucx_ifunc_status_t st;
    if (ready == kFrameStored && frame_run_warm(ctx, buf, buffer_size, target_args, &st)) return st;
    if (ready != kFrameStored && ready != kFrameReady) return UCX_IFUNC_INPROGRESS;
    return poll_other(ctx, buf, buffer_size, target_args, ready);
}

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
    return frame_send(ep, frame, remote_addr, rkey);
}

ucx_ifunc_status_t ucx_ifunc_poll(ucx_ifunc_context_h ctx, void *buffer, size_t buffer_size,
                                  void *target_args)
{
    if (!ctx || !buffer) return UCX_IFUNC_ERR_INVALID_PARAM;
    if (buffer_size < sizeof(FrameHdr) + 8) return UCX_IFUNC_ERR_INVALID_PARAM;
    return frame_poll(ctx, buffer, buffer_size, target_args);
}

}  // extern "C"
