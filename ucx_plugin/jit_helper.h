// Bitcode is compiled out of process: LLVM can abort the process on some
// code generation failures, a hostile or merely large module can take
// seconds and gigabytes, and a compile in the target would take the target
// down or stall it for every origin. A compile helper process
// (xrdma-jit-helper: the JIT module, loaded by a small program) receives the
// bitcode over a socket and returns an object file, which the target links
// (loader_jit.cc). It is started on first need, reused, and started again
// after it died; a compile that runs past XRDMA_JIT_TIMEOUT is killed, and
// XRDMA_JIT_MEMORY_LIMIT caps its address space. Either way, and on an LLVM
// abort or crash, only that image fails (UCX_IFUNC_ERR_BAD_CODE, with what
// the helper printed last). XRDMA_JIT_HELPER=none compiles in the process.
#pragma once

#include "ucx_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace xrdma {

// Whether compiles go to the helper (XRDMA_JIT_HELPER is not "none").
bool jit_helper_enabled();

// Compile @p size bytes of bitcode at optimisation level @p opt_level in the
// helper: UCX_IFUNC_OK with the object file in @p object, or the compile's
// own error (BAD_CODE: not bitcode, invalid IR, wrong triple ...), or
// BAD_CODE when the helper died, timed out or hit its memory limit, or LINK
// when it cannot be started. @p what names the part in messages.
ucx_ifunc_status_t jit_helper_compile(const uint8_t *bitcode, size_t size, unsigned opt_level,
                                      const std::string &what, std::string *object, std::string *why);

// The helper's side: what compiles one request.
using JitCompileFn = ucx_ifunc_status_t (*)(const uint8_t *bitcode, size_t size, unsigned opt_level,
                                            const std::string &what, std::string *object, std::string *why);
// Serve requests on socket @p fd until the target closes it; the exit status.
int jit_helper_serve(int fd, JitCompileFn compile);

}  // namespace xrdma
