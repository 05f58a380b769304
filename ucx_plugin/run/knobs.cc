// The plugin's XRDMA_* knobs, with their defaults and meanings (printed by
// xrdma_info -c, documented in xrdma_info(1)). A layer above registers its
// own table the same way, and documents its knobs itself.
#include "xrdma_common/config.h"

#include "xrdma_config.h"

namespace xrdma {

namespace {

const Knob knobs[] = {
    {"XRDMA_MAX_IMAGE_SIZE", "67108864",
     "Largest image (bytes) a target accepts or an origin registers."},
    {"XRDMA_CODE_CACHE_SIZE", "256", "Images a target keeps loaded (least recently used are dropped)."},
    {"XRDMA_CONTAIN_FAULTS", "1",
     "1: a SIGSEGV/SIGBUS/SIGFPE/SIGILL in injected code, or in a lock-free libc function it called "
     "(XRDMA_SYMBOLS=runtime), fails that operation (UCX_IFUNC_ERR_FAULT) and quarantines the image "
     "instead of killing the target; 0: usual signal behaviour."},
    {"XRDMA_IFUNC_TIMEOUT", "0",
     "Seconds an injected function may run before it is stopped (its operation fails with a timeout "
     "error); 0: no limit."},
    {"XRDMA_SYMBOLS", "runtime",
     "Target symbols injected code may bind to: all, runtime (the XRDMA API and a safe libc subset) or "
     "the path of an allowlist file (one symbol per line); anything else is refused before the code runs."},
    {"XRDMA_RING", "auto",
     "auto: small messages (up to 1000 bytes with their header) to a peer whose memory UCX maps into this "
     "process (shared memory) are written into a ring in the peer's memory that its progress polls; elsewhere, "
     "and for larger messages, active messages. off: active messages only."},
    {"XRDMA_RING_MEMORY", "8388608",
     "Bytes of shared memory a process reserves for the rings its peers write into (one segment, made when "
     "the first peer asks; pages cost memory once used). The first 8 senders get rings of 128 slots (132 KiB), "
     "later ones of 16 (16 KiB): the default holds the rings of 255 senders, a node of 256 ranks. A sender "
     "beyond it sends active messages (said at XRDMA_LOG_LEVEL=debug)."},
    {"XRDMA_RING_LINGER", "32",
     "After a progress pass that ran invocations taken from rings (and took no reply or acknowledgement), "
     "this many more empty looks at the rings before progress returns (no UCX pass, no system call; each "
     "after a spin-wait hint, ~15-50 ns): a target waiting in an MPI call finds the next small X-op as it "
     "arrives instead of after the rest of the MPI library's progress turn. A reply or acknowledgement "
     "taken ends it, and so do 8 times as many looks in all; 0: off (at most 4096)."},
    {"XRDMA_RING_WAIT", "8",
     "Looks at the rings (each after a spin-wait hint, ~15-50 ns) that an empty pass of "
     "ucx_ifunc_progress_wait() takes before it returns, the first frame ending them: an origin waiting for "
     "answers (MPI_Win_flush and the other synchronisation calls, in the first 8 idle passes of a wait) sees "
     "them as they arrive and leaves a shared core to the target meanwhile. 0: a plain progress pass "
     "(at most 4096)."},
    {"XRDMA_MAX_PARKED", "65536",
     "X-ops one sender may have waiting at a target, behind a bitcode compile or behind an X-op the target "
     "asked it to resend (need code, need bind); one more is refused (UCX_IFUNC_ERR_NO_MEMORY). At least 1."},
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
     "(UCX_IFUNC_ERR_BAD_CODE); 0: no limit."},
    {"XRDMA_JIT_MEMORY_LIMIT", "4096",
     "Address space (MiB) of the compile helper; a compile that needs more fails that image; 0: no limit."},
    {"XRDMA_LOG_RATE", "10",
     "Lines a second injected code may print with xrdma_log() in one process (bursts of as many); lines past it "
     "are dropped and counted. 0: xrdma_log() prints nothing."},
    {"XRDMA_CLANG", XRDMA_CLANG, "clang used by xrdma-cc (C++ sources use the clang++ beside it)."},
    {"XRDMA_CC_INCLUDE_DIR", XRDMA_INCLUDEDIR, "Where xrdma-cc finds xrdma_ifunc.h."},
    {nullptr, nullptr, nullptr},
};

// After the common utilities' table (common/knobs.cc), before any static
// initialiser of the library could read a knob.
__attribute__((constructor(102))) void register_knobs() { config_register(knobs); }

}  // namespace

}  // namespace xrdma
