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
// The target never blocks on the helper's socket unless it asks for a
// result synchronously (jit_helper_compile()).
#pragma once

#include "ucx_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace xrdma {

// Whether compiles go to the helper (XRDMA_JIT_HELPER is not "none").
bool jit_helper_enabled();

// Compiles are requests queued for the one helper and answered in order;
// each is known by its @p key (the JIT's cache key: one compile per key).
//
// The target's progress (compile_queue.h) does not wait: it submits a
// compile, polls, and takes the result when it is done. Submitting takes
// a reference on the key's result, which stays until released.
void jit_helper_submit(const std::string &key, const uint8_t *bitcode, size_t size, unsigned opt_level,
                       const std::string &what);
// Move the queued compiles along without blocking (start the helper, write
// requests, read answers, stop a compile past XRDMA_JIT_TIMEOUT); the number
// of compiles that finished. Returns at once if another thread is waiting
// for a compile.
unsigned jit_helper_poll();
// Whether the compile for @p key finished (its result waits to be taken).
bool jit_helper_done(const std::string &key);
// Drop a reference taken by jit_helper_submit().
void jit_helper_release(const std::string &key);

// The result of the compile for @p key: the finished one if there is one,
// else compiled now (queued behind the others, waited for). @p size bytes of
// bitcode at optimisation level @p opt_level: UCX_IFUNC_OK with the object
// file in @p object and what the module imports in @p meta (loader_jit.cc's
// encoding), or the compile's own error (BAD_CODE: not bitcode,
// invalid IR, wrong triple ...), or BAD_CODE when the helper died, timed out
// or hit its memory limit, or LINK when it cannot be started. @p what names
// the part in messages.
ucx_ifunc_status_t jit_helper_compile(const std::string &key, const uint8_t *bitcode, size_t size,
                                      unsigned opt_level, const std::string &what, std::string *object,
                                      std::string *meta, std::string *why);

// The helper's side: what compiles one request.
using JitCompileFn = ucx_ifunc_status_t (*)(const uint8_t *bitcode, size_t size, unsigned opt_level,
                                            const std::string &what, std::string *object, std::string *meta,
                                            std::string *why);
// Serve requests on socket @p fd until the target closes it; the exit status.
int jit_helper_serve(int fd, JitCompileFn compile);

}  // namespace xrdma
