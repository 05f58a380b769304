// libFuzzer entry point of the image harness (tests/fuzz/harness.cc).
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xrdma_fuzz::fuzz_image(data, size);
    return 0;
}
