/* Injected code with a constructor. A target must refuse the image before
 * any of its code runs: the constructor would kill the target. */
#include <xrdma_ifunc.h>

__attribute__((constructor)) static void at_load(void) { __builtin_trap(); }

XRDMA_IFUNC(ctor_victim)
{
    (void)ctx, (void)args, (void)args_size;
    return 0;
}
