// Images a target has received, by hash, with their loaded code. Bounded
// (XRDMA_CODE_CACHE_SIZE images, least recently used dropped): a dropped
// image is asked for again with "need code".
// Inserting an image picks the part to load (native for this host, else
// bitcode) and loads it.
#pragma once

#include "image/image.h"
#include "load/loader_native.h"

#include <cstring>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace xrdma {

struct HashKey {
    size_t operator()(const Hash &h) const
    {
        size_t v;
        memcpy(&v, h.data(), sizeof(v));
        return v;
    }
    // a == b, in four word compares (no memcmp call on the per-frame path).
    static bool same(const Hash &a, const Hash &b)
    {
        uint64_t x[4], y[4];
        memcpy(x, a.data(), sizeof(x));
        memcpy(y, b.data(), sizeof(y));
        return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
    }
};

// One cached image: its bytes (kept to forward it) and its loaded code.
struct CachedImage {
    std::vector<uint8_t> bytes;
    ImageView view;  // points into bytes
    std::unique_ptr<LoadedCode> code;
    std::unordered_map<std::string, void *> entries;  // resolved entry points
    const std::string *last_entry = nullptr;  // the last one found (its key in entries)
    void *last_fn = nullptr;
    uint64_t serial = 0;  // which insert made it: tells it from a later image at the same address

    // Entry @p name, resolved once. nullptr if the code does not export it.
    void *entry(const std::string &name);
};

// The part of @p img this process runs (XRDMA_CODE decides between native
// and bitcode), or nullptr; @p mode: the XRDMA_CODE in effect.
const PartView *choose_part(const ImageView &img, std::string *mode = nullptr);

class CodeCache {
public:
    explicit CodeCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

    // The cached image with hash @p h (marks it recently used), or nullptr.
    std::shared_ptr<CachedImage> find(const Hash &h);
    // The same without taking a reference (no atomic operation): valid until
    // the cache next changes (insert, flush).
    CachedImage *find_current(const Hash &h);
    // The most recently used image (nullptr if none): one that is still
    // there needs no lookup to know it is cached and recent.
    const CachedImage *front() const { return front_.get(); }
    // The same, owned (a reference to the cache's own, valid until it changes).
    const std::shared_ptr<CachedImage> &front_shared() const { return front_; }

    // Validate @p bytes (an image that claims hash @p h), load its code and
    // cache it. On error nothing is cached and @p why says why.
    ucx_ifunc_status_t insert(const Hash &h, const uint8_t *bytes, size_t size,
                              std::shared_ptr<CachedImage> *out, std::string *why);

    void clear();
    size_t size() const { return map_.size(); }
    // Changes whenever an image is put in or dropped (an insert, which may
    // evict one, or a clear): while it has not, a cached image stays.
    uint64_t changes() const { return changes_; }

private:
    using Lru = std::list<Hash>;
    struct Slot {
        std::shared_ptr<CachedImage> img;
        Lru::iterator lru_pos;
    };
    size_t capacity_;
    Lru lru_;  // front = most recent
    std::unordered_map<Hash, Slot, HashKey> map_;
    std::shared_ptr<CachedImage> front_;  // the image at lru_.front()
    uint64_t inserts_ = 0;
    uint64_t changes_ = 0;
};

}  // namespace xrdma
