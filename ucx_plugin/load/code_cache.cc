#include "load/code_cache.h"

#include "xrdma_common/config.h"
#include "load/loader_jit.h"
#include "xrdma_common/log.h"

#include <cstring>

namespace xrdma {

namespace {

ucx_ifunc_status_t load_part(const ImageView &img, const std::string &label, std::unique_ptr<LoadedCode> *out,
                             std::string *why)
{
    std::string mode;
    const PartView *part = choose_part(img, &mode);
    if (part && part->kind == PartKind::native_elf) return load_native(img, label, out, why);
    if (part) return load_bitcode(img, *part, label, out, why);
    *why = "image has no part this target can run (XRDMA_CODE=" + mode + ", target " + host_triple() +
           "); the image has: " + describe_parts(img);
    return UCX_IFUNC_ERR_NO_PART;
}

}  // namespace

// XRDMA_CODE: auto takes the native part for this triple if there is one,
// else the bitcode part for it; native and bitcode take only that kind.
const PartView *choose_part(const ImageView &img, std::string *mode_out)
{
    std::string mode = config_get("XRDMA_CODE");
    if (mode != "auto" && mode != "native" && mode != "bitcode") {
        XRDMA_WARN("XRDMA_CODE=%s is not auto, native or bitcode; using auto", mode.c_str());
        mode = "auto";
    }
    const PartView *native = nullptr, *bitcode = nullptr;
    for (const PartView &p : img.parts) {
        if (!triple_is_host(p.triple)) continue;
        if (p.kind == PartKind::native_elf && !native) native = &p;
        if (p.kind == PartKind::llvm_bitcode && !bitcode) bitcode = &p;
    }
    if (mode_out) *mode_out = mode;
    if (native && mode != "bitcode") return native;
    return bitcode && mode != "native" ? bitcode : nullptr;
}

void *CachedImage::entry(const std::string &name)
{
    if (last_entry && *last_entry == name) return last_fn;  // a stream of calls to one entry
    auto it = entries.find(name);
    if (it != entries.end()) {
        last_entry = &it->first;  // stays valid: entries only grows, and its nodes never move
        last_fn = it->second;
        return it->second;
    }
    void *fn = view.has_entry(name) ? code->symbol(name) : nullptr;
    entries.emplace(name, fn);
    return fn;
}

std::shared_ptr<CachedImage> CodeCache::find(const Hash &h)
{
    return find_current(h) ? front_ : nullptr;
}

CachedImage *CodeCache::find_current(const Hash &h)
{
    // The most recent image again (a stream of calls): already at the front.
    if (front_ && HashKey::same(lru_.front(), h)) return front_.get();
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    front_ = it->second.img;
    return front_.get();
}

ucx_ifunc_status_t CodeCache::insert(const Hash &h, const uint8_t *bytes, size_t size,
                                     std::shared_ptr<CachedImage> *out, std::string *why)
{
    const unsigned long long max = config_get_ull("XRDMA_MAX_IMAGE_SIZE");
    if (size > max) {
        *why = "image of " + std::to_string(size) + " bytes exceeds XRDMA_MAX_IMAGE_SIZE=" +
               std::to_string(max);
        return UCX_IFUNC_ERR_DENIED;
    }
    auto img = std::make_shared<CachedImage>();
    img->bytes.assign(bytes, bytes + size);
    ucx_ifunc_status_t st = image_parse(img->bytes.data(), img->bytes.size(), &img->view, why);
    if (st != UCX_IFUNC_OK) return st;
    if (img->view.hash != h) {
        *why = "image hash " + hash_hex(img->view.hash, 8) + " differs from the hash " +
               hash_hex(h, 8) + " it was sent under";
        return UCX_IFUNC_ERR_HASH_MISMATCH;
    }
    st = load_part(img->view, hash_hex(h, 8), &img->code, why);
    if (st != UCX_IFUNC_OK) return st;

    while (map_.size() >= capacity_) {
        XRDMA_DEBUG("code cache full: dropping %s", hash_hex(lru_.back(), 8).c_str());
        map_.erase(lru_.back());
        lru_.pop_back();
    }
    img->serial = ++inserts_;
    ++changes_;
    lru_.push_front(h);
    map_.emplace(h, Slot{img, lru_.begin()});
    front_ = img;
    *out = std::move(img);
    return UCX_IFUNC_OK;
}

void CodeCache::clear()
{
    ++changes_;
    front_.reset();
    map_.clear();
    lru_.clear();
}

}  // namespace xrdma
