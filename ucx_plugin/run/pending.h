// Invocations in flight at their origin, by request id (ctx->pending).
// Request ids come from one counter per context and mostly complete in
// about the order they were issued, so a slot array indexed by an id's low
// bits holds nearly all of them: putting, finding and taking one is a slot
// access and an id compare, and a steady stream allocates nothing (an
// unordered_map, even with pooled nodes, cost about 240 instructions per
// invocation). An id whose slot an older one still holds (one that waits
// long, or more in flight than slots) goes to a small overflow map; the
// array doubles when such a collision finds it half full.
#pragma once

#include "ucx_ifunc.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace xrdma {

struct Pending {
    ucx_ifunc_complete_cb_t cb;
    void *user_data;
    ucp_ep_h ep;
};

class PendingTable {
public:
    // Record @p p under @p id (replacing one already there).
    void put(uint64_t id, const Pending &p)
    {
        if (!slots_.empty()) {
            Slot &s = slots_[id & mask_];
            if (!s.used) {
                if (!overflow_.empty() && overflow_.erase(id)) --n_;
                s = Slot{id, p, true};
                ++n_;
                return;
            }
            if (s.id == id) {
                s.p = p;
                return;
            }
        }
        put_slow(id, p);
    }
    // The invocation @p id, or nullptr.
    Pending *find(uint64_t id)
    {
        if (n_ == 0) return nullptr;
        Slot &s = slots_[id & mask_];
        if (s.used && s.id == id) return &s.p;
        if (overflow_.empty()) return nullptr;
        auto it = overflow_.find(id);
        return it == overflow_.end() ? nullptr : &it->second;
    }
    // Remove invocation @p id into @p out; false if there is none.
    bool take(uint64_t id, Pending *out)
    {
        if (n_ == 0) return false;
        Slot &s = slots_[id & mask_];
        if (s.used && s.id == id) {
            *out = s.p;
            s.used = false;
            --n_;
            return true;
        }
        if (overflow_.empty()) return false;
        auto it = overflow_.find(id);
        if (it == overflow_.end()) return false;
        *out = it->second;
        overflow_.erase(it);
        --n_;
        return true;
    }
    size_t size() const { return n_; }
    // Remove those sent on @p ep (every one if @p ep is nullptr) into
    // @p out, in issue order.
    void take_all(ucp_ep_h ep, std::vector<std::pair<uint64_t, Pending>> *out)
    {
        out->clear();
        for (Slot &s : slots_)
            if (s.used && (!ep || s.p.ep == ep)) {
                out->emplace_back(s.id, s.p);
                s.used = false;
            }
        for (auto it = overflow_.begin(); it != overflow_.end();)
            if (!ep || it->second.ep == ep) {
                out->emplace_back(*it);
                it = overflow_.erase(it);
            } else {
                ++it;
            }
        n_ -= out->size();
        std::sort(out->begin(), out->end(),
                  [](const std::pair<uint64_t, Pending> &a, const std::pair<uint64_t, Pending> &b) {
                      return a.first < b.first;
                  });
    }
    // Slots in the array (for tests: it grows only when half full).
    size_t capacity() const { return slots_.size(); }

private:
    struct Slot {
        uint64_t id;
        Pending p;
        bool used;
    };
    static constexpr size_t kFirstSlots = 64;

    void put_slow(uint64_t id, const Pending &p)
    {
        if (slots_.empty() || n_ >= slots_.size() / 2) {
            grow();
            put(id, p);
            return;
        }
        auto r = overflow_.insert_or_assign(id, p);
        if (r.second) ++n_;
    }
    void grow()
    {
        std::vector<Slot> old(slots_.empty() ? kFirstSlots : slots_.size() * 2, Slot{0, Pending{}, false});
        old.swap(slots_);
        mask_ = slots_.size() - 1;
        std::unordered_map<uint64_t, Pending> spilled;
        spilled.swap(overflow_);
        n_ = 0;
        for (const Slot &s : old)
            if (s.used) put(s.id, s.p);
        for (const auto &kv : spilled) put(kv.first, kv.second);
    }

    std::vector<Slot> slots_;  // a power of two of them, or none yet
    size_t mask_ = 0;
    std::unordered_map<uint64_t, Pending> overflow_;
    size_t n_ = 0;  // in slots_ and overflow_
};

}  // namespace xrdma
