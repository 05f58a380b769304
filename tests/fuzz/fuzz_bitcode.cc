// libFuzzer entry point of the bitcode harness (tests/fuzz/harness_bitcode.cc).
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xrdma_fuzz::fuzz_bitcode(data, size);
    return 0;
}
