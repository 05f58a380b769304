#include "config.h"

#include "xrdma_config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xrdma {

static const Knob knobs[] = {
    {"XRDMA_LOG_LEVEL", "warn", "Logging threshold: error, warn, info or debug."},
    {"XRDMA_MAX_IMAGE_SIZE", "67108864",
     "Largest image (bytes) a target accepts or an origin registers."},
    {"XRDMA_CODE_CACHE_SIZE", "256", "Images a target keeps loaded (least recently used are dropped)."},
    {"XRDMA_CONTAIN_FAULTS", "1",
     "1: a SIGSEGV/SIGBUS/SIGFPE/SIGILL in injected code, or in a lock-free libc function it called "
     "(XRDMA_SYMBOLS=runtime), fails that operation (MPIX_ERR_IFUNC_FAULT) and quarantines the image "
     "instead of killing the target; 0: usual signal behaviour."},
    {"XRDMA_IFUNC_TIMEOUT", "0",
     "Seconds an injected function may run before it is stopped (its operation fails with a timeout "
     "error); 0: no limit."},
    {"XRDMA_SYMBOLS", "runtime",
     "Target symbols injected code may bind to: all, runtime (the XRDMA API and a safe libc subset) or "
     "the path of an allowlist file (one symbol per line); anything else is refused before the code runs."},
    {"XRDMA_CODE", "auto", "Which part a target runs: auto, native or bitcode."},
    {"XRDMA_JIT_CACHE_DIR", "",
     "Directory where a target keeps the code it compiled from bitcode, so that a restarted target "
     "skips compiling; empty: no on-disk cache."},
    {"XRDMA_JIT_OPT_LEVEL", "2", "Optimisation level (0-3) of the code a target compiles from bitcode."},
    {"XRDMA_JIT_MODULE", "",
     "Path of the bitcode compiler module (libxrdma_jit.so, which links LLVM), loaded when bitcode is first "
     "needed; empty: beside libucx_ifunc (<libdir>/xrdma/), else " XRDMA_PKGLIBDIR "."},
    {"XRDMA_JIT_HELPER", "",
     "Path of the compile helper program (xrdma-jit-helper) that compiles bitcode out of process, or "
     "none to compile inside the target; empty: beside the JIT module, else " XRDMA_PKGLIBDIR "."},
    {"XRDMA_JIT_TIMEOUT", "60",
     "Seconds one bitcode compile may take; a longer one is stopped and fails that image "
     "(MPIX_ERR_IFUNC_IMAGE); 0: no limit."},
    {"XRDMA_JIT_MEMORY_LIMIT", "4096",
     "Address space (MiB) of the compile helper; a compile that needs more fails that image; 0: no limit."},
    {"XRDMA_PROGRESS_THREAD", "0",
     "1: a progress thread (pinned with hwloc) runs arriving code while the application computes."},
    {"XRDMA_PEER_FAILURE", "auto",
     "Peer failure detection on MPI-layer endpoints: on, off, or auto (only to ranks on other hosts; "
     "UCX detects failures over TCP, not shared memory). Operations to a failed peer end with MPIX_ERR_PEER."},
    {"XRDMA_EXEC", "auto",
     "Where X-operations run: auto (in the origin process when it can map the target's window memory: "
     "node peers' MPI_Win_allocate/MPI_Win_allocate_shared windows, and the origin's own rank; movable "
     "code only, see xrdma_ifunc(3)) or target (always as a message to the target process)."},
    {"XRDMA_LOG_RATE", "10",
     "Lines a second injected code may print with xrdma_log() in one process (bursts of as many); lines past it "
     "are dropped and counted. 0: xrdma_log() prints nothing."},
    {"XRDMA_MAX_WINDOWS", "32736",
     "Windows with X-operations alive at once per process (at most 32736: two 16-bit UCP AM ids each). A window "
     "past the limit is an ordinary MPI window; X-operations on it fail with MPI_ERR_WIN."},
    {"XRDMA_DEBUG_WINDOW_FAIL", "0",
     "Debugging aid for tests: N > 0 makes the set-up of the N-th window of each process fail once it holds its "
     "slot and context (all is released; the window stays an ordinary MPI window, its X-operations fail with "
     "MPI_ERR_WIN); 0: no injected failure."},
    {"XRDMA_CLANG", XRDMA_CLANG, "clang used by xrdma-cc (C++ sources use the clang++ beside it)."},
    {"XRDMA_CC_INCLUDE_DIR", XRDMA_INCLUDEDIR, "Where xrdma-cc finds xrdma_ifunc.h."},
    {nullptr, nullptr, nullptr},
};

const Knob *config_knobs() { return knobs; }

const char *config_get(const char *name)
{
    for (const Knob *k = knobs; k->name; ++k) {
        if (strcmp(k->name, name) == 0) {
            const char *v = getenv(name);
            return (v && *v) ? v : k->default_value;
        }
    }
    fprintf(stderr, "xrdma: internal error: unknown knob %s\n", name);
    abort();
}

unsigned long long config_get_ull(const char *name)
{
    const char *v = config_get(name);
    char *end = nullptr;
    unsigned long long x = strtoull(v, &end, 0);
    if (end == v || *end != '\0') {
        const Knob *k = config_knobs();
        while (strcmp(k->name, name) != 0) ++k;
        fprintf(stderr, "xrdma: %s=%s is not a number; using %s\n", name, v, k->default_value);
        return strtoull(k->default_value, nullptr, 0);
    }
    return x;
}

}  // namespace xrdma
