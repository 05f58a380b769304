// A compile helper whose compile a test holds (X-ops during a
// compile, without sleeps). Started by a target as XRDMA_JIT_HELPER, with the
// real helper's arguments; before it compiles anything it writes 'r' to the
// FIFO $XRDMA_TEST_JIT_GATE/ready ("a compile is under way") and reads one
// byte from the FIFO $XRDMA_TEST_JIT_GATE/gate: 'g' runs the real helper
// ($XRDMA_TEST_JIT_REAL_HELPER) in its place, which compiles what the target
// sent meanwhile; anything else (or the test gone) aborts, as a compiler that
// crashed would.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the target, like the real one
    const char *dir = getenv("XRDMA_TEST_JIT_GATE");
    const char *real = getenv("XRDMA_TEST_JIT_REAL_HELPER");
    if (!dir || !real || argc < 1) {
        fprintf(stderr, "gated_jit_helper: XRDMA_TEST_JIT_GATE and XRDMA_TEST_JIT_REAL_HELPER must be set\n");
        return 2;
    }
    int ready = open((std::string(dir) + "/ready").c_str(), O_WRONLY | O_CLOEXEC);
    int gate = open((std::string(dir) + "/gate").c_str(), O_RDONLY | O_CLOEXEC);
    if (ready < 0 || gate < 0 || write(ready, "r", 1) != 1) {
        perror("gated_jit_helper");
        return 2;
    }
    char c = 0;
    ssize_t n;
    while ((n = read(gate, &c, 1)) < 0 && errno == EINTR) {
    }
    if (n == 1 && c == 'g') {
        argv[0] = const_cast<char *>(real);
        execv(real, argv);
        perror(real);
        return 2;
    }
    fprintf(stderr, "gated_jit_helper: told to crash\n");
    abort();
}
