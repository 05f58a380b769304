// xrdma-jit-helper LIBUCX_IFUNC MODULE: the compile helper process
// (jit_helper.h). Started by a target with the paths of the library and the
// JIT module it runs itself, so that both sides are the same build; serves
// compile requests on its standard input (a socket) until the target closes
// it. Not meant to be run by hand.
#include <cstdio>
#include <dlfcn.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBUCX_IFUNC JIT_MODULE (started by XRDMA targets)\n", argv[0]);
        return 2;
    }
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
