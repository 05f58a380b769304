/* A published-API ifunc shipped as bitcode (llvm_bc = 1) whose main calls a
 * function no process defines, from a library its .deps names and no
 * machine has: the target cannot link it. The origin takes the payload
 * functions from absent.so, built with -DABSENT_PAYLOAD_ONLY. */
#include <stdint.h>

#include "copy_payload.h"

COPY_PAYLOAD_FUNCTIONS(absent)

#ifndef ABSENT_PAYLOAD_ONLY
void xrdma_test_absent_function(void *target_args);

void absent_main(void *payload, size_t payload_size, void *target_args)
{
    (void)payload;
    (void)payload_size;
    xrdma_test_absent_function(target_args);
}
#endif
