// Compile the LLVM bitcode part of an image for this process with LLVM ORC
// (LLJIT) and load it: the path for targets whose processor differs from
// the origin's. Compiled code is shared process-wide by (image hash, triple,
// CPU, LLVM version, optimisation level); XRDMA_JIT_CACHE_DIR keeps the
// compiled objects on disk so that a restarted process skips compilation.
//
// The compiler is a module of its own (libxrdma_jit.so, loader_jit.cc, the
// only code that links LLVM), loaded by jit_module.cc when bitcode is first
// needed: a process that only ever runs native code never maps libLLVM (50 MB
// of resident memory per rank). The functions below are jit_module.cc's:
// they load the module and call into it through struct JitModule.
#pragma once

#include "image/image.h"
#include "load/loader_native.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xrdma {

// Compile (or reuse) bitcode part @p part of @p img and load it. The image's
// entries are compiled and linked before this returns, so every error shows
// here: BAD_CODE (not bitcode, truncated, a module for another triple,
// invalid IR), LINK (unresolved symbol, JIT unavailable), DENIED (an import
// XRDMA_SYMBOLS refuses; not checked if @p trusted: code of this process's
// own, like the published API's payload functions at the origin).
ucx_ifunc_status_t load_bitcode(const ImageView &img, const PartView &part, const std::string &label,
                                std::unique_ptr<LoadedCode> *out, std::string *why, bool trusted = false);

// Process-wide counters, for tests and benchmarks.
struct JitCounters {
    uint64_t compiles;      // bitcode modules compiled to machine code
    uint64_t cache_loads;   // objects taken from XRDMA_JIT_CACHE_DIR instead
    uint64_t shared;        // loads that reused code already compiled in this process
};
JitCounters jit_counters();

// Entries a bitcode module defines: the names of the __xrdma_entry_<name>
// markers whose function <name> is defined too, sorted (used by xrdma-cc).
ucx_ifunc_status_t bitcode_entries(const uint8_t *data, size_t size, std::vector<std::string> *entries,
                                   std::string *why);

// What the JIT compiles for in this process: "<triple> <cpu>", and the key
// its code is cached under for image @p hash.
std::string jit_target_description();
std::string jit_cache_key(const Hash &hash);

// Compiles the target's progress does not wait for (compile_queue.h), in
// the compile helper. jit_compile_start(): UCX_IFUNC_INPROGRESS if the
// compile of bitcode part @p part of @p img started (or was under way), with
// the @p key to ask about it; UCX_IFUNC_OK if load_bitcode() should be called
// now (nothing to compile, no helper, or an error it reports at once).
// jit_compile_poll() moves compiles along without blocking (the number that
// finished); once jit_compile_done(key), load_bitcode() links the result (or
// fails with its error) without waiting. jit_compile_release(): one
// jit_compile_start() of @p key is done with its result.
ucx_ifunc_status_t jit_compile_start(const ImageView &img, const PartView &part, const std::string &label,
                                     std::string *key);
unsigned jit_compile_poll();
bool jit_compile_done(const std::string &key);
void jit_compile_release(const std::string &key);

// Whether the JIT module is loaded in this process (tests).
bool jit_module_loaded();

// What the module exports: one C function, XRDMA_JIT_MODULE_ENTRY, returns
// this table. Module and library come from the same build (the table carries
// its size, layout version and the package version, all checked on load).
struct JitModule {
    uint32_t size;      // sizeof(JitModule)
    uint32_t version;   // kJitModuleVersion
    const char *package_version;
    ucx_ifunc_status_t (*load_bitcode)(const ImageView &img, const PartView &part, const std::string &label,
                                       std::unique_ptr<LoadedCode> *out, std::string *why, bool trusted);
    JitCounters (*counters)();
    ucx_ifunc_status_t (*bitcode_entries)(const uint8_t *data, size_t size, std::vector<std::string> *entries,
                                          std::string *why);
    std::string (*target_description)();
    std::string (*cache_key)(const Hash &hash);
    ucx_ifunc_status_t (*compile_start)(const ImageView &img, const PartView &part, const std::string &label,
                                        std::string *key);
    unsigned (*compile_poll)();
    bool (*compile_done)(const std::string &key);
    void (*compile_release)(const std::string &key);
};
constexpr uint32_t kJitModuleVersion = 2;
#define XRDMA_JIT_MODULE_ENTRY "xrdma_jit_module_v1"
#define XRDMA_JIT_MODULE_FILE "libxrdma_jit.so"

}  // namespace xrdma

extern "C" const xrdma::JitModule *xrdma_jit_module_v1(void);
