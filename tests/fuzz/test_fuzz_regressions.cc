// Replays every input kept in tests/fuzz/regressions/<target>/ through the
// fuzz harness of that target (tests/fuzz/harness.cc), built with the normal
// compiler: each input runs in a child process of its own, which must exit
// normally within the time limit (a crash, an abort from a broken invariant
// or a hang fails the test and names the file). An input named valid-*
// must moreover be accepted by the decoder (a false refusal, kept); a
// valid-* bitcode input must load. The API targets (api_load, api_xop) need
// an MPI job: one mpirun of tests/fuzz/replay_api replays all of a target's
// inputs, and names the one it was on when it failed.
#include "harness.h"

#include "image/elf_reader.h"
#include "image/image.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

std::string regressions_dir()
{
    const char *s = getenv("XRDMA_TEST_SRCDIR");
    return std::string(s ? s : ".") + "/tests/fuzz/regressions";
}

std::vector<std::string> files_in(const std::string &dir)
{
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (struct dirent *e = readdir(d))
        if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// Inputs named valid-* are ones a decoder once refused wrongly: they must
// be accepted, not only survive.
bool accepted(const std::string &target, const std::vector<uint8_t> &in)
{
    std::string why;
    if (target == "elf") return xrdma::elf_inspect(in.data(), in.size(), nullptr, &why) == UCX_IFUNC_OK;
    if (target == "image") return xrdma::image_parse(in.data(), in.size(), nullptr, &why) == UCX_IFUNC_OK;
    if (target == "bitcode") return xrdma_fuzz::bitcode_loads(in.data(), in.size());
    return true;
}

// "" if the harness ran the file cleanly, else what went wrong.
std::string replay(const std::string &target, const std::string &path, void (*harness)(const uint8_t *, size_t))
{
    fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        alarm(30);
        std::vector<uint8_t> in;
        if (xrdma::read_file(path, &in) != UCX_IFUNC_OK) _exit(4);
        harness(in.data(), in.size());
        const std::string base = path.substr(path.find_last_of('/') + 1);
        if (base.compare(0, 6, "valid-") == 0 && !accepted(target, in)) _exit(3);
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return "waitpid failed";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return "refused, but it is valid";
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? "hung (no result within 30 s)"
                                           : std::string("killed by signal ") + strsignal(WTERMSIG(status));
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

void replay_all(const std::string &target, void (*harness)(const uint8_t *, size_t))
{
    const std::vector<std::string> files = files_in(regressions_dir() + "/" + target);
    if (files.empty()) GTEST_SKIP() << "no inputs kept in " << regressions_dir() << "/" << target;
    for (const std::string &f : files) {
        std::string what = replay(target, f, harness);
        EXPECT_EQ("", what) << f;
    }
    printf("%zu %s inputs replayed\n", files.size(), target.c_str());
}

// A one-process MPI job runs every input of @p target in turn (each
// printed before it runs): a non-zero status, a hang (the timeout) or a
// missing last line fails, naming the input it was on.
void replay_api_all(const std::string &target)
{
    const std::vector<std::string> files = files_in(regressions_dir() + "/" + target);
    if (files.empty()) GTEST_SKIP() << "no inputs kept in " << regressions_dir() << "/" << target;
    const char *b = getenv("XRDMA_TEST_BUILDDIR"), *s = getenv("XRDMA_TEST_SRCDIR");
    std::ifstream flags_file(std::string(s ? s : ".") + "/scripts/mpirun-flags");
    std::string flags;
    std::getline(flags_file, flags);
    // (Open MPI leaks at exit: LeakSanitizer stays off in MPI ranks, as in
    // every MPI test of a sanitizer build: tests/sanitize/local.mk.)
    std::string cmd = "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" timeout -k 5 300 mpirun " +
                      flags + " -n 1 '" + (b ? b : ".") + "/tests/fuzz/replay_api' " + target;
    for (const std::string &f : files) cmd += " '" + f + "'";
    cmd += " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(nullptr, p) << cmd;
    std::string out, at;
    char line[4096];
    while (fgets(line, sizeof(line), p)) {
        out += line;
        if (strncmp(line, "replaying ", 10) == 0) at = line + 10;
    }
    const int status = pclose(p);
    const std::string done = std::to_string(files.size()) + " " + target + " inputs replayed";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.find(done) != std::string::npos)
        << "failed at " << at << out;
    printf("%zu %s inputs replayed\n", files.size(), target.c_str());
}

TEST(FuzzRegressions, Image) { replay_all("image", xrdma_fuzz::fuzz_image); }
TEST(FuzzRegressions, Elf) { replay_all("elf", xrdma_fuzz::fuzz_elf); }
TEST(FuzzRegressions, Wire) { replay_all("wire", xrdma_fuzz::fuzz_wire); }
// Through the compile helper: seeds (valid-*: they must load) and finds.
TEST(FuzzRegressions, Bitcode) { replay_all("bitcode", xrdma_fuzz::fuzz_bitcode); }
// The public MPI API, in an MPI job (tests/fuzz/replay_api.cc).
TEST(FuzzRegressions, ApiLoad) { replay_api_all("api_load"); }
TEST(FuzzRegressions, ApiXop) { replay_api_all("api_xop"); }

}  // namespace
