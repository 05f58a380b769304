#include "code_cache.h"

#include "config.h"
#include "log.h"

#include <cstring>

namespace xrdma {

void *CachedImage::entry(const std::string &name)
{
    auto it = entries.find(name);
    if (it != entries.end()) return it->second;
    void *fn = view.has_entry(name) ? code->symbol(name) : nullptr;
    entries.emplace(name, fn);
    return fn;
}

std::shared_ptr<CachedImage> CodeCache::find(const Hash &h)
{
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    return it->second.img;
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
    st = load_native(img->view, hash_hex(h, 8), &img->code, why);
    if (st != UCX_IFUNC_OK) return st;

    while (map_.size() >= capacity_) {
        XRDMA_DEBUG("code cache full: dropping %s", hash_hex(lru_.back(), 8).c_str());
        map_.erase(lru_.back());
        lru_.pop_back();
    }
    lru_.push_front(h);
    map_.emplace(h, Slot{img, lru_.begin()});
    *out = std::move(img);
    return UCX_IFUNC_OK;
}

void CodeCache::clear()
{
    map_.clear();
    lru_.clear();
}

}  // namespace xrdma
