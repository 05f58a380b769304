// Short invocations (wire.h, InvokeShortHdr): the per-endpoint index that
// names an image and entry after first contact. A sender binds an index with
// the first full invocation of an image and entry on an endpoint; the target
// resolves it once (code found, entry linked) and keeps the result per
// sender endpoint, so a warm invocation costs neither the 72-byte header and
// the name on the wire nor the hash lookup and the name compare at the
// target. Nothing depends on both sides agreeing: an index the target does
// not know (or whose image left its cache) is answered "need bind" and the
// sender resends in full.
#include "run/context.h"

#include <cstring>

namespace xrdma {

namespace {

// Whether @p a and @p b are the same name: entry names are mostly short,
// and two overlapping words compare up to 16 bytes without a call of memcmp
// on the path of every invocation.
bool same_name(const std::string &a, const std::string &b)
{
    const size_t n = a.size();
    if (n != b.size()) return false;
    if (n < 8 || n > 16) return memcmp(a.data(), b.data(), n) == 0;
    uint64_t x0, y0, x1, y1;
    memcpy(&x0, a.data(), 8);
    memcpy(&y0, b.data(), 8);
    memcpy(&x1, a.data() + n - 8, 8);
    memcpy(&y1, b.data() + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
}

}  // namespace

BoundEntry *binding_find_slow(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index)
{
    auto &m = ctx->bound_in_memo;
    if (m.last_ep != ep || !m.last) {
        std::vector<BoundEntry> *found = m.in_way(ep);
        if (!found) {
            auto it = ctx->bound_in.find(ep);
            if (it == ctx->bound_in.end()) return nullptr;
            found = &it->second;  // (elements of the map stay where they are)
        }
        m.use(ep, found);
    }
    std::vector<BoundEntry> &t = *m.last;
    if (index >= t.size() || !t[index].img) return nullptr;
    BoundEntry &b = t[index];
    // Still the cached image (the lookup also marks it recently used; the
    // serial tells it from a later image at the same address), read only
    // once the cache vouched for the address: a binding does not keep code
    // the cache dropped or a flush removed.
    const CachedImage *cur = ctx->cache.front();
    if (cur != b.img) cur = ctx->cache.find_current(b.hash);
    if (cur != b.img || cur->serial != b.serial) {
        b.img = nullptr;
        b.fn = nullptr;
        return nullptr;
    }
    return &b;
}

BoundEntry *binding_set(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index, const Hash &hash,
                        const std::string &entry, const std::shared_ptr<CachedImage> &img, void *fn)
{
    if (index >= kMaxBindings) return nullptr;
    std::vector<BoundEntry> &t = ctx->bound_in[ep];  // (elements of the map stay where they are)
    if (index >= t.size()) {
        if (!img) return nullptr;
        t.resize(index + 1);
    }
    BoundEntry &b = t[index];
    b.hash = hash;
    b.entry = entry;
    b.img = img.get();
    b.serial = img ? img->serial : 0;
    b.fn = img ? fn : nullptr;
    b.out.forget();
    return img ? &b : nullptr;
}

namespace {

inline std::vector<BoundSlot> &slots_of(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    if (ctx->bound_out_ep != ep || !ctx->bound_out_last) {
        ctx->bound_out_last = &ctx->bound_out[ep];
        ctx->bound_out_ep = ep;
        ctx->bound_out_index = 0;
    }
    return *ctx->bound_out_last;
}

}  // namespace

int binding_for_send(ucx_ifunc_context *ctx, ucp_ep_h ep, const Hash &hash, const std::string &entry, bool *full)
{
    std::vector<BoundSlot> &t = slots_of(ctx, ep);
    uint32_t i = ctx->bound_out_index;  // a stream of one image and entry: the same slot again
    if (i >= t.size() || !HashKey::same(t[i].hash, hash) || !same_name(t[i].entry, entry)) {
        for (i = 0; i < t.size(); ++i)
            if (HashKey::same(t[i].hash, hash) && same_name(t[i].entry, entry)) break;
        if (i == t.size()) {
            if (t.size() >= kMaxBindings) {  // (full headers from then on)
                *full = true;
                return -1;
            }
            t.push_back(BoundSlot{hash, entry, true});
        }
        ctx->bound_out_index = i;
    }
    *full = t[i].announce;
    return int(i);
}

void binding_sent(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index)
{
    std::vector<BoundSlot> &t = slots_of(ctx, ep);
    if (index < t.size()) t[index].announce = false;
}

const BoundSlot *binding_reannounce(ucx_ifunc_context *ctx, ucp_ep_h ep, uint32_t index)
{
    auto it = ctx->bound_out.find(ep);
    if (it == ctx->bound_out.end() || index >= it->second.size()) return nullptr;
    it->second[index].announce = true;
    ctx->bound_epoch++;  // forwards of it must go in full again
    return &it->second[index];
}

void bindings_forget(ucx_ifunc_context *ctx, ucp_ep_h ep)
{
    ctx->bound_in.erase(ep);
    ctx->bound_out.erase(ep);
    ctx->bound_in_memo.clear();  // (a table may be gone)
    ctx->bound_out_ep = nullptr;
    ctx->bound_out_last = nullptr;
    ctx->bound_epoch++;
}

void bindings_unload(ucx_ifunc_context *ctx)
{
    ctx->bound_in.clear();
    ctx->bound_in_memo.clear();
}

}  // namespace xrdma
