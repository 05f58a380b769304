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

