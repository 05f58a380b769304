/* Calls a function no target defines: loading must fail with a link error. */
#include <xrdma_ifunc.h>

extern int xrdma_test_no_such_symbol(int);

XRDMA_IFUNC(unresolved) { return xrdma_test_no_such_symbol((int)args_size); }
