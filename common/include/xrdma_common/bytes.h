// Byte buffers that are not zeroed when they grow. Receive, send and scratch
// buffers are written over right after they are sized; a value-initialising
// std::vector would add a memset of every new byte (a whole 1 MiB message).
#pragma once

#include <cstddef>
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

// memcpy of non-overlapping ranges, inline for the few bytes of arguments
// and headers on the hot path (a libc call costs more than the copy).
inline void copy_bytes(void *dst, const void *src, size_t n)
{
    auto *d = static_cast<unsigned char *>(dst);
    auto *s = static_cast<const unsigned char *>(src);
    if (n >= 16 && n <= 32) {
        __builtin_memcpy(d, s, 16);
        __builtin_memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        __builtin_memcpy(d, s, 8);
        __builtin_memcpy(d + n - 8, s + n - 8, 8);
    } else {
        __builtin_memcpy(d, s, n);
    }
}

// memcmp(a, b, n) == 0, inline for a few words (a payload or a name compared
// on every message: 8-byte words, the last one overlapping); longer ranges go
// to memcmp.
inline bool same_bytes(const void *a, const void *b, size_t n)
{
    auto *x = static_cast<const unsigned char *>(a);
    auto *y = static_cast<const unsigned char *>(b);
    if (n > 64) return __builtin_memcmp(x, y, n) == 0;
    auto word = [](const unsigned char *p, size_t at) {
        uint64_t w;
        __builtin_memcpy(&w, p + at, 8);
        return w;
    };
    if (n >= 8) {
        uint64_t diff = word(x, n - 8) ^ word(y, n - 8);
        for (size_t i = 0; i + 8 < n; i += 8) diff |= word(x, i) ^ word(y, i);
        return diff == 0;
    }
    uint64_t diff = 0;
    for (size_t i = 0; i < n; ++i) diff |= uint64_t(x[i] ^ y[i]);
    return diff == 0;
}

// @p v rounded up to a multiple of @p a (a > 0).
constexpr size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace xrdma
