// Fault containment: a SIGSEGV, SIGBUS, SIGFPE or SIGILL whose faulting
// instruction lies in injected code ends that ifunc (not the process), and an
// ifunc that runs past XRDMA_IFUNC_TIMEOUT is stopped. Faults elsewhere keep
// their usual behaviour (the previous handlers run).
#pragma once

#include "ucx_ifunc.h"

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
};

// Whether containment is on (XRDMA_CONTAIN_FAULTS, default 1).
bool faults_contained();

// Call @p fn(ctx, args, len) with containment for code in @p code. On a
// contained fault or timeout, returns -1 with @p info filled; otherwise the
// function's result.
int guarded_call(const LoadedCode *code, int (*fn)(struct xrdma_ctx *, const void *, size_t),
                 struct xrdma_ctx *ctx, const void *args, size_t len, FaultInfo *info);
// The same for the published-API entry void <name>_main(payload, size, target_args).
int guarded_call_compat(const LoadedCode *code, void (*fn)(void *, size_t, void *), void *payload,
                        size_t size, void *target_args, FaultInfo *info);

// Readable description: "SIGSEGV at address 0x... (pc 0x...)".
std::string describe(const FaultInfo &info);

}  // namespace xrdma
