/* Linked with -Wl,-init=at_init (tests/plugin/hostile.mk): DT_INIT names a
 * function the loader would call before anything else. */
#include <xrdma_ifunc.h>

void at_init(void) { __builtin_trap(); }

XRDMA_IFUNC(init_victim)
{
    (void)ctx, (void)args, (void)args_size;
    return 0;
}
