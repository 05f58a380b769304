/* The twins of node_local_movable.c that always run at their target: the
 * image has writable data of its own (a call counter), so what it means
 * depends on the process it runs in. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

static volatile int64_t calls;

XRDMA_IFUNC(acc_pinned)
{
    (void)args, (void)args_size;
    size_t n, room;
    const int64_t *in = xrdma_incoming(ctx, &n);
    volatile int64_t *t = xrdma_target(ctx, &room);
    if (n > room || !t) return 1;
    for (size_t i = 0; i < n / 8; ++i) t[i] = t[i] + in[i];
    calls++;
    return 0;
}

XRDMA_IFUNC(append_pinned)
{
    size_t room;
    int64_t *t = xrdma_target(ctx, &room);
    int64_t v;
    if (args_size != sizeof(v) || !t) return 1;
    memcpy(&v, args, sizeof(v));
    if ((size_t)(t[0] + 2) * 8 > room) return 2;
    t[1 + t[0]] = v;
    t[0]++;
    calls++;
    return 0;
}
