// xrdma-jit-helper LIBUCX_IFUNC MODULE MEMORY_LIMIT_MIB PARENT_PID: the
// compile helper process (jit_helper.h). Started by a target with the paths
// of the library and the JIT module it runs itself, so that both sides are
// the same build; serves compile requests on its standard input (a socket)
// until the target closes it. Not meant to be run by hand.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s LIBUCX_IFUNC JIT_MODULE MEMORY_LIMIT_MIB PARENT_PID (started by XRDMA targets)\n",
                argv[0]);
        return 2;
    }
    // Die with the target (checked after: it may have died already).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != pid_t(atol(argv[4]))) return 3;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // not the spawning thread's mask
    // A compile is background work: where cores are short, the target's
    // ranks (serving X-ops meanwhile) go first.
    setpriority(PRIO_PROCESS, 0, 10);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    // (Sanitizer runtimes reserve terabytes of address space.)
    unsigned long long mib = strtoull(argv[3], nullptr, 10);
    if (mib > 0) {
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = rlim_t(mib) << 20;
        setrlimit(RLIMIT_AS, &rl);
    }
#endif
    // The library first and global: the module needs it (its DT_NEEDED is
    // then satisfied by the loaded copy, wherever it lives).
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "xrdma-jit-helper: %s\n", dlerror());
        return 2;
    }
    void *module = dlopen(argv[2], RTLD_NOW);
    if (!module) {
        fprintf(stderr, "xrdma-jit-helper: %s\n", dlerror());
        return 2;
    }
    auto serve = reinterpret_cast<int (*)(int)>(dlsym(module, "xrdma_jit_helper_main"));
    if (!serve) {
        fprintf(stderr, "xrdma-jit-helper: %s has no xrdma_jit_helper_main\n", argv[2]);
        return 2;
    }
    return serve(0);
}
