// Objects kept for reuse instead of freed, so a steady stream of operations
// allocates nothing. Not thread-safe: one per thread (thread_local) or one
// per lock. What is left is freed with the list.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace xrdma {

template <class T, size_t Max>
class FreeList {
public:
    FreeList() = default;
    FreeList(const FreeList &) = delete;
    FreeList &operator=(const FreeList &) = delete;
    ~FreeList()
    {
        for (T *p : free_) delete p;
    }
    T *get()
    {
        if (free_.empty()) return new T;
        T *p = free_.back();
        free_.pop_back();
        return p;
    }
    // Keep @p p for reuse if @p keep and there is room, else free it.
    void put(T *p, bool keep = true)
    {
        if (keep && free_.size() < Max)
            free_.push_back(p);
        else
            delete p;
    }

private:
    std::vector<T *> free_;
};

// Objects that own a byte buffer, kept by the buffer's size: up to NSmall
// holding at most kSmallBytes (a stream of small messages) and up to NLarge
// holding at most kLargeBytes, kLargeBudget bytes in all (a stream of large
// ones: a window of them in flight reuses its buffers, no mmap, page faults
// and munmap per message); larger ones are freed.
template <class T, size_t NSmall, size_t NLarge>
class SizedFreeList {
public:
    static constexpr size_t kSmallBytes = 64 * 1024, kLargeBytes = 8 << 20, kLargeBudget = 32 << 20;
    SizedFreeList() = default;
    SizedFreeList(const SizedFreeList &) = delete;
    SizedFreeList &operator=(const SizedFreeList &) = delete;
    ~SizedFreeList()
    {
        for (auto &e : large_) delete e.first;
    }
    // One whose buffer suits @p bytes (size class only; grow it as needed).
    T *get(size_t bytes)
    {
        if (bytes <= kSmallBytes) return small_.get();
        if (large_.empty()) return new T;
        T *p = large_.back().first;
        large_bytes_ -= large_.back().second;
        large_.pop_back();
        return p;
    }
    // Keep @p p, whose buffer holds @p capacity bytes, or free it.
    void put(T *p, size_t capacity)
    {
        if (capacity <= kSmallBytes) {
            small_.put(p);
        } else if (capacity <= kLargeBytes && large_.size() < NLarge && large_bytes_ + capacity <= kLargeBudget) {
            large_.emplace_back(p, capacity);
            large_bytes_ += capacity;
        } else {
            delete p;
        }
    }

private:
    FreeList<T, NSmall> small_;
    std::vector<std::pair<T *, size_t>> large_;
    size_t large_bytes_ = 0;
};

}  // namespace xrdma
