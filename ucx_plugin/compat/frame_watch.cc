// An origin reads back the slot of a frame it sent (frame_watch.h).
#include "compat/frame_watch.h"

#include "wire/wire.h"

#include <atomic>
#include <cstring>

namespace xrdma {

// A get of the slot's refusal record, in two steps: the record's header
// (within the frame the origin put there), then its reason (within what the
// target wrote). Freed by whoever sees it last: the watch, or the get's
// completion once the watch has ended (orphan).
struct FrameProbe {
    uint8_t data[sizeof(FrameRefusal) + kMaxRefusalReason];
    bool reason_asked = false;
    bool done = false;
    ucs_status_t status = UCS_OK;
    bool orphan = false;
};

namespace {

void probe_done(void *request, ucs_status_t status, void *user)
{
    auto *p = static_cast<FrameProbe *>(user);
    ucp_request_free(request);
    if (p->orphan) {
        delete p;
        return;
    }
    p->status = status;
    p->done = true;
}

// Get @p len bytes at @p offset of the watched slot into the probe.
void probe_get(const FrameWatch &w, FrameProbe *p, size_t offset, size_t len)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = probe_done;
    prm.user_data = p;
    p->done = false;
    ucs_status_ptr_t r = ucp_get_nbx(w.ep, p->data + offset, len, w.remote_addr + offset, w.rkey, &prm);
    if (UCS_PTR_IS_PTR(r)) return;
    p->status = UCS_PTR_STATUS(r);  // UCS_OK: done at once
    p->done = true;
}

// Whether @p r is a refusal of the watched frame.
bool of_watched(const FrameWatch &w, const FrameRefusal &r)
{
    return r.magic == kFrameRefused && r.nonce == w.nonce && r.checksum == w.checksum &&
           r.reason_len <= kMaxRefusalReason;
}

void drop_probe(FrameWatch *w)
{
    if (!w->probe) return;
    if (w->probe->done)
        delete w->probe;
    else
        w->probe->orphan = true;
    w->probe = nullptr;
}

}  // namespace

bool frame_watch_refused(FrameWatch *w, ucx_ifunc_status_t *status, std::string *why)
{
    if (!w->ep) return false;
    FrameRefusal r;
    std::string reason;
    void *mapped;
    if (ucp_rkey_ptr(w->rkey, w->remote_addr, &mapped) == UCS_OK) {
        // The slot is mapped here: read it, its magic word first (written
        // last by the target).
        const auto *slot = static_cast<const volatile uint8_t *>(mapped);
        uint64_t magic;
        memcpy(&magic, const_cast<const uint8_t *>(slot), 8);
        if (magic != kFrameRefused) return false;
        std::atomic_thread_fence(std::memory_order_acquire);
        memcpy(&r, const_cast<const uint8_t *>(slot), sizeof(r));
        if (!of_watched(*w, r)) return false;
        reason.assign(reinterpret_cast<const char *>(const_cast<const uint8_t *>(slot)) + sizeof(r), r.reason_len);
    } else {
        FrameProbe *p = w->probe;
        if (!p) {
            w->probe = p = new FrameProbe;
            probe_get(*w, p, 0, sizeof(FrameRefusal));
        }
        if (!p->done) return false;
        memcpy(&r, p->data, sizeof(r));
        if (p->status != UCS_OK || !of_watched(*w, r)) {
            drop_probe(w);  // nothing (yet): the next look reads again
            return false;
        }
        if (r.reason_len && !p->reason_asked) {
            p->reason_asked = true;
            probe_get(*w, p, sizeof(FrameRefusal), r.reason_len);
            if (!p->done) return false;
        }
        if (p->status != UCS_OK) {
            drop_probe(w);
            return false;
        }
        reason.assign(reinterpret_cast<const char *>(p->data) + sizeof(r), r.reason_len);
        drop_probe(w);
    }
    if (refusal_sum(r, reinterpret_cast<const uint8_t *>(reason.data())) != r.sum) return false;
    *status = ucx_ifunc_status_t(r.status);
    *why = reason;
    frame_watch_end(w);
    return true;
}

void frame_watch_end(FrameWatch *w)
{
    drop_probe(w);
    w->ep = nullptr;
}

}  // namespace xrdma
