/* Two entries, for the image/ELF unit tests: "add" returns 0 when args hold
 * two ints that sum to zero, "echo" replies with its arguments (so the
 * shared object imports xrdma_reply from the target). */
#include <xrdma_ifunc.h>
#include <string.h>

static int sum(const int *v) { return v[0] + v[1]; }

XRDMA_IFUNC(add)
{
    int v[2];
    (void)ctx;
    if (args_size != sizeof v) return 1;
    memcpy(v, args, sizeof v);
    return sum(v) != 0;
}

XRDMA_IFUNC(echo)
{
    return xrdma_reply(ctx, args, args_size);
}
