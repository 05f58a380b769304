// Fuzz harnesses of the decoders that see bytes from other processes: the
// image parser, the ELF reader and the wire-message checks. Each one runs
// the decoder the way its caller in the plugin does, then checks what the
// caller relies on; a broken promise aborts (a crash for libFuzzer, a
// failure for the regression test, which replays tests/fuzz/regressions/).
#pragma once

#include <cstddef>
#include <cstdint>

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

// The first byte of a wire input.
enum WireSelector : uint8_t { kWireInvoke = 0, kWireReply = 1, kWireFrame = 2, kWireFrameSealed = 3 };

}  // namespace xrdma_fuzz
