// Byte buffers that are not zeroed when they grow. Receive, send and scratch
// buffers are written over right after they are sized; a value-initialising
// std::vector would add a memset of every new byte (a whole 1 MiB message).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace xrdma {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    using std::allocator<T>::allocator;
    template <class U>
    void construct(U *p) noexcept
    {
        ::new (static_cast<void *>(p)) U;
    }
    template <class U, class... Args>
    void construct(U *p, Args &&...args)
    {
        ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
    }
};

using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

}  // namespace xrdma
