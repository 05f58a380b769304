// Fuzz harnesses of the decoders that see bytes from other processes: the
// image parser, the ELF reader and the wire-message checks; and of the
// public MPI API, with the values an application may pass. Each one runs
// the decoder the way its caller in the plugin does, then checks what the
// caller relies on; a broken promise aborts (a crash for libFuzzer, a
// failure for the regression test, which replays tests/fuzz/regressions/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// A promise of the code under test: when broken, say which and abort.
#define FUZZ_CHECK(cond, ...)                                                              \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: invariant broken: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

namespace xrdma_fuzz {

// An XRDMA image (image_parse), as the code cache receives it.
void fuzz_image(const uint8_t *data, size_t size);
// A native part (elf_inspect and the loader's checks before dlopen).
void fuzz_elf(const uint8_t *data, size_t size);
// A wire message: the first byte picks the decoder (see harness.cc), the
// rest is header and data of an invocation or a reply, or a poll buffer.
void fuzz_wire(const uint8_t *data, size_t size);

// Bitcode (harness_bitcode.cc): "entry,names" NUL bitcode, compiled and
// linked as a target does with a cold bitcode image (needs libucx_ifunc).
void fuzz_bitcode(const uint8_t *data, size_t size);
// Whether such an input loads (its code compiled and linked).
bool bitcode_loads(const uint8_t *data, size_t size);

// The public MPI API (harness_api.cc; needs MPI, which the first call
// initialises, and XRDMA's libraries): MPIX_Ifunc_load_mem of the input's
// bytes, and a series of X-operations whose argument values the input
// picks, on a window of a one-process job. Every call returns success or an
// error code of a valid class whose string is text.
void fuzz_api_load(const uint8_t *data, size_t size);
void fuzz_api_xop(const uint8_t *data, size_t size);
// MPI, the window and the functions, once (libFuzzer: before the first
// input, so that what they keep is not taken for a leak of that input).
void fuzz_api_init();

// The first byte of a wire input.
enum WireSelector : uint8_t { kWireInvoke = 0, kWireReply = 1, kWireFrame = 2, kWireFrameSealed = 3 };

}  // namespace xrdma_fuzz
