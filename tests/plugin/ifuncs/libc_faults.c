/* Ifuncs that hand bad pointers to the libc functions the default symbol
 * policy allows (the fault is in libc, called by the ifunc: contained) and to
 * the runtime API (which checks them: an error return, no fault). The
 * argument: the address, and a length the compiler cannot see (so the call
 * stays a call to libc). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xrdma_ifunc.h>

struct bad_ptr {
    uint64_t addr, len;
};

static struct bad_ptr bad_ptr_of(const void *args, size_t args_size)
{
    struct bad_ptr b = {0x1000, 64};
    if (args_size == sizeof(b)) memcpy(&b, args, sizeof(b));
    return b;
}

XRDMA_IFUNC(copy_from)
{
    struct bad_ptr b = bad_ptr_of(args, args_size);
    char buf[256];
    if (b.len > sizeof(buf)) return 1;
    memcpy(buf, (const void *)(uintptr_t)b.addr, b.len);
    return xrdma_reply(ctx, buf, b.len);
}

XRDMA_IFUNC(length_of)
{
    struct bad_ptr b = bad_ptr_of(args, args_size);
    uint64_t n = strlen((const char *)(uintptr_t)b.addr);
    return xrdma_reply(ctx, &n, sizeof(n));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

XRDMA_IFUNC(sort_at)
{
    struct bad_ptr b = bad_ptr_of(args, args_size);
    qsort((void *)(uintptr_t)b.addr, b.len, sizeof(uint64_t), cmp_u64);
    return 0;
}

/* The runtime checks what it is handed: -1, not a fault. */
XRDMA_IFUNC(reply_from)
{
    struct bad_ptr b = bad_ptr_of(args, args_size);
    int rc = xrdma_reply(ctx, (const void *)(uintptr_t)b.addr, b.len);
    uint64_t answer = (uint64_t)(int64_t)rc;
    return rc == -1 ? xrdma_reply(ctx, &answer, sizeof(answer)) : 2;
}
