/* An ifunc that runs away (its own image: quarantining it must not affect
 * the other test images). */
#include <stdint.h>
#include <xrdma_ifunc.h>

/* Never returns on its own. */
XRDMA_IFUNC(spin_forever)
{
    volatile uint64_t n = 0;
    (void)ctx; (void)args; (void)args_size;
    for (;;) n++;
    return 0;
}
