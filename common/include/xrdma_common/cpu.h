// cpu_relax(): a spin-wait hint (x86 pause, arm64 yield) for loops that
// wait for memory another core or process writes. Where two processes
// share a physical core (hyperthreads, or a VM's vCPUs placed so), a
// waiting loop without it takes issue slots from the one doing the work.
#pragma once

namespace xrdma {

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

}  // namespace xrdma
