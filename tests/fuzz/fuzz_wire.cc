// libFuzzer entry point of the wire harness (tests/fuzz/harness.cc).
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xrdma_fuzz::fuzz_wire(data, size);
    return 0;
}
