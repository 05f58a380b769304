/* Ifuncs that fault or run away: the target must contain them. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Store through the pointer given as argument (0: a NULL write). */
XRDMA_IFUNC(crash_segv)
{
    uintptr_t p = 0;
    if (args_size == sizeof(p)) memcpy(&p, args, sizeof(p));
    *(volatile int *)p = 42;
    return 0;
}

/* Integer division by the argument (0: SIGFPE). */
XRDMA_IFUNC(crash_fpe)
{
    volatile int d = 0;
    if (args_size == sizeof(int)) memcpy((void *)&d, args, sizeof(int));
    volatile int x = 1000 / d;
    return x == -1;
}

/* An illegal instruction. */
XRDMA_IFUNC(crash_ill)
{
    (void)ctx; (void)args; (void)args_size;
    __builtin_trap();
}


/* Forward to rank a[0] (where it counts: increments the target's counter,
 * its user pointer, and replies the new value), then end with a[1]: 0 (the
 * forward goes), a return value, or -1: a NULL write. A forward goes only
 * if the ifunc that made it ends well. */
struct forward_then_args {
    int32_t to, then;
};
XRDMA_IFUNC(forward_then)
{
    struct forward_then_args a;
    if (args_size != sizeof(a)) return 100;
    memcpy(&a, args, sizeof(a));
    if (xrdma_rank(ctx) == a.to) {
        uint64_t *counter = xrdma_user_ptr(ctx); /* (struct peer_state's first member) */
        uint64_t v = ++*counter;
        return xrdma_reply(ctx, &v, sizeof(v));
    }
    if (xrdma_forward(ctx, a.to, &a, sizeof(a)) != 0) return 101;
    if (a.then == -1) *(volatile int *)(uintptr_t)0 = 1;
    return a.then;
}
