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

}  // namespace xrdma
