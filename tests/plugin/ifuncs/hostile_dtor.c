/* Injected code with a destructor: it would run when the target drops the
 * image from its cache or exits, outside any containment. Refused too. */
#include <xrdma_ifunc.h>

__attribute__((destructor)) static void at_unload(void) { __builtin_trap(); }

XRDMA_IFUNC(dtor_victim)
{
    (void)ctx, (void)args, (void)args_size;
    return 0;
}
