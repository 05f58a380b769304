/* Defines a libc function the runtime symbol policy refuses, weak and with
 * default visibility, and calls it: the loader binds that call to the
 * target's own getpid(), not to this definition. A target must count it as
 * an import and refuse it. */
#include <sys/types.h>
#include <unistd.h>
#include <xrdma_ifunc.h>

__attribute__((weak, visibility("default"))) pid_t getpid(void) { return -1; }

XRDMA_IFUNC(whoami)
{
    int p = (int)getpid();
    (void)args, (void)args_size;
    return xrdma_reply(ctx, &p, sizeof p);
}
