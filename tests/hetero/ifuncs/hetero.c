/* Ifuncs of the heterogeneous test: which machine's code answers. Built on
 * x86-64 into one image (native x86-64, bitcode for x86-64 and aarch64); an
 * aarch64 target can only run it by compiling the aarch64 bitcode. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

/* Reply the architecture this code was compiled for, and the sum of the
 * uint64 arguments (so the data path is checked as well). */
XRDMA_IFUNC(machine)
{
#if defined(__aarch64__)
    static const char arch[16] = "aarch64";
#elif defined(__x86_64__)
    static const char arch[16] = "x86_64";
#else
    static const char arch[16] = "unknown";
#endif
    uint8_t out[24];
    uint64_t sum = 0;
    for (size_t i = 0; i + 8 <= args_size; i += 8) {
        uint64_t v;
        memcpy(&v, (const char *)args + i, 8);
        sum += v;
    }
    memcpy(out, arch, 16);
    memcpy(out + 16, &sum, 8);
    return xrdma_reply(ctx, out, sizeof(out));
}
