/* Calls a libc function the default symbol policy refuses (it runs
 * programs): the image must be refused before any of its code runs. */
#include <stdlib.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(forbidden) { return system((const char *)args); }
