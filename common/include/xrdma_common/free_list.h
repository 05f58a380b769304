// Objects kept for reuse instead of freed, so a steady stream of operations
// allocates nothing. Not thread-safe: one per thread (thread_local) or one
// per lock. What is left is freed with the list.
#pragma once

#include <cstddef>
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
// holding at most kSmallBytes (a stream of small messages) and NLarge holding
// at most kLargeBytes (a stream of large ones: no mmap, page faults and munmap
// per message); larger ones are freed.
template <class T, size_t NSmall, size_t NLarge>
class SizedFreeList {
public:
    static constexpr size_t kSmallBytes = 64 * 1024, kLargeBytes = 8 << 20;
    // One whose buffer suits @p bytes (size class only; grow it as needed).
    T *get(size_t bytes) { return bytes > kSmallBytes ? large_.get() : small_.get(); }
    // Keep @p p, whose buffer holds @p capacity bytes, or free it.
    void put(T *p, size_t capacity)
    {
        if (capacity <= kSmallBytes)
            small_.put(p);
        else
            large_.put(p, capacity <= kLargeBytes);
    }

private:
    FreeList<T, NSmall> small_;
    FreeList<T, NLarge> large_;
};

}  // namespace xrdma
