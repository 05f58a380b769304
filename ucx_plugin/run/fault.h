// Fault containment: a SIGSEGV, SIGBUS, SIGFPE or SIGILL raised anywhere in
// the dynamic extent of a shipped call ends that ifunc (not the process):
// in its own instructions, and in the libc/libm functions it called when
// the symbol policy lets it call only lock-free ones (the runtime set:
// memcpy, strlen, qsort, snprintf, ... hold no lock a recovery would leave
// held). Not contained: a fault inside an XRDMA runtime call (those check
// what the ifunc hands them instead, see checked_copy, and must not be cut
// short while they update state), in a library function under a policy
// that allows others (malloc, stdio and pthread functions take locks), and
// anything outside a shipped call; those keep their usual behaviour (the
// previous handlers run). An ifunc that runs past XRDMA_IFUNC_TIMEOUT is
// stopped, but only while it executes its own instructions: a library
// function it called may hold a lock (malloc), so the timer waits for it.
#pragma once

#include "xrdma_common/bytes.h"
#include "ucx_ifunc.h"

#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <string>

namespace xrdma {

class LoadedCode;

struct FaultInfo {
    int signal = 0;          // 0: no fault
    uintptr_t address = 0;   // si_addr
    uintptr_t pc = 0;        // faulting instruction
    bool timeout = false;
    bool in_library = false; // pc in a library function the ifunc called
};

// This thread's depth of runtime calls (RuntimeCall), which the fault
// handler reads. Its own initial-exec variable, not a field of the guard:
// counted without a test whether the thread has one yet. Not volatile: the
// handler runs on this thread, and RuntimeCall's signal fences keep each
// change in memory where it stands (one add to memory; a volatile was
// loaded, changed and stored back).
extern __thread sig_atomic_t t_runtime_depth __attribute__((tls_model("initial-exec")));

// Marks an XRDMA runtime call (xrdma_reply, xrdma_forward, ...) on this
// thread: a fault inside it is not contained (see above). Inline: it
// brackets every runtime call on the hot path.
class RuntimeCall {
public:
    RuntimeCall()
    {
        ++t_runtime_depth;
        std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    ~RuntimeCall()
    {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        --t_runtime_depth;
    }
    RuntimeCall(const RuntimeCall &) = delete;
    RuntimeCall &operator=(const RuntimeCall &) = delete;
};

// Copy @p n bytes between memory an ifunc handed to a runtime call and the
// runtime's own (either side may be the ifunc's). False if a range is not
// accessible: the fault stops only this copy, which holds no lock.
bool checked_copy(void *dst, const void *src, size_t n);

// Top of this thread's stack once it ran injected code (0 before).
extern __thread uintptr_t t_stack_hi __attribute__((tls_model("initial-exec")));

// Whether [p, p+n) lies in this thread's stack above the frame of the
// runtime function this is inlined into: in the frames of the ifunc that
// called it, live and mapped (what an ifunc hands over is mostly there: its
// output variables, its argument structs).
__attribute__((always_inline)) inline bool in_callers_frames(const void *p, size_t n)
{
    const uintptr_t a = uintptr_t(p), here = uintptr_t(__builtin_frame_address(0)), hi = t_stack_hi;
    // (a <= hi also fails for an unknown top, 0; and n <= hi - a cannot wrap)
    return a >= here && a <= hi && n <= hi - a;
}

// checked_copy when one side is known: @p theirs is what the ifunc handed
// over, @p ours the runtime's own memory. Memory in the live frames of the
// ifunc (its locals, the usual case) needs no probe.
__attribute__((always_inline)) inline bool checked_read(void *ours, const void *theirs, size_t n)
{
    if (!in_callers_frames(theirs, n)) return checked_copy(ours, theirs, n);
    copy_bytes(ours, theirs, n);
    return true;
}
__attribute__((always_inline)) inline bool checked_write(void *theirs, const void *ours, size_t n)
{
    if (!in_callers_frames(theirs, n)) return checked_copy(theirs, ours, n);
    copy_bytes(theirs, ours, n);
    return true;
}

// Whether containment is on (XRDMA_CONTAIN_FAULTS, default 1).
bool faults_contained();

// What a dispatch hook calls as "the entry": the invocation's entry and the
// forwards that continue in this process (run_chain), with containment for
// the code of @p x's image, so a contained fault unwinds only the ifunc's
// own frames. On a contained fault or timeout, returns -1 and sets @p x's
// failure (fault_status()); otherwise the function's result.
int guarded_entry(struct xrdma_ctx *x, const void *args, size_t len);
// The same for the published-API entry void <name>_main(payload, size,
// target_args): 0, or -1 after a contained fault or timeout, which
// last_fault() then describes (nothing to fill on the way in: the call is
// on every put-and-poll frame's path).
// (@p code last: the other arguments stay in the registers they came in.)
int guarded_call_compat(void (*fn)(void *, size_t, void *), void *payload, size_t size, void *target_args,
                        const LoadedCode *code);
// The last fault or timeout contained on this thread.
const FaultInfo &last_fault();

// Readable description: "SIGSEGV at address 0x... (pc 0x...)", for a fault
// in a library function "SIGSEGV at address 0x... in memcpy (libc.so.6,
// pc 0x...) called by the ifunc".
std::string describe(const FaultInfo &info);
// What a contained fault or timeout @p info of entry @p entry ends its call
// with (UCX_IFUNC_ERR_FAULT or UCX_IFUNC_ERR_TIMEOUT), and why.
ucx_ifunc_status_t fault_status(const FaultInfo &info, const std::string &entry, std::string *why);

}  // namespace xrdma
