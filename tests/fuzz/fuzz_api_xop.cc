// libFuzzer entry points of the API harness (tests/fuzz/harness_api.cc),
// run in a one-process MPI job (make fuzz starts it with mpirun -n 1).
#include "harness.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    xrdma_fuzz::fuzz_api_init();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xrdma_fuzz::fuzz_api_xop(data, size);
    return 0;
}
