// Tests of the xrdma-cc driver: runs the built tool on small sources.
#include "image/elf_reader.h"
#include "image/image.h"
#include "xrdma_common/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace xrdma;

namespace {

std::string env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

std::string builddir() { return env_or("XRDMA_TEST_BUILDDIR", "."); }
std::string srcdir() { return env_or("XRDMA_TEST_SRCDIR", "."); }
std::string xrdma_cc() { return builddir() + "/tools/xrdma-cc"; }
// The sources below call the plugin's runtime functions only: its header,
// <ucx_ifunc/runtime.h>, is all they include.
std::string include_flag() { return "-I" + srcdir() + "/ucx_plugin/include"; }

std::string slurp(const std::string &path)
{
    std::string s;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}

std::vector<std::string> list_dir(const std::string &dir)
{
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names.push_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

void remove_tree(const std::string &dir)
{
    for (const auto &n : list_dir(dir)) {
        std::string p = dir + "/" + n;
        struct stat st;
        if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p.c_str());
    }
    rmdir(dir.c_str());
}

struct Outcome {
    int status = -1;  // exit code, or -1 if it did not exit normally
    std::string out, err;
};

// Each test works in its own directory: sources and outputs in work/, and
// xrdma-cc's TMPDIR in tmp/ so that leftovers can be detected.
class XrdmaCc : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/test_xrdma_cc.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        work_ = root_ + "/work";
        tmp_ = root_ + "/tmp";
        ASSERT_EQ(mkdir(work_.c_str(), 0700), 0);
        ASSERT_EQ(mkdir(tmp_.c_str(), 0700), 0);
    }
    void TearDown() override
    {
        // Whatever happened, xrdma-cc must not leave temporary files.
        EXPECT_TRUE(list_dir(tmp_).empty()) << "xrdma-cc left files in its TMPDIR";
        remove_tree(root_);
    }

    void write(const std::string &name, const std::string &text)
    {
        FILE *f = fopen((work_ + "/" + name).c_str(), "w");
        ASSERT_NE(f, nullptr);
        fputs(text.c_str(), f);
        fclose(f);
    }

    // Run xrdma-cc with @p args in work/; capture stdout and stderr.
    Outcome xcc(const std::vector<std::string> &args)
    {
        Outcome r;
        std::string out = root_ + "/stdout", err = root_ + "/stderr";
        pid_t pid = fork();
        if (pid == 0) {
            if (chdir(work_.c_str()) != 0) _exit(126);
            int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (o < 0 || e < 0) _exit(126);
            dup2(o, 1);
            dup2(e, 2);
            setenv("TMPDIR", tmp_.c_str(), 1);
            std::vector<std::string> full = {xrdma_cc()};
            full.insert(full.end(), args.begin(), args.end());
            std::vector<char *> argv;
            for (auto &a : full) argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        unlink(out.c_str());
        unlink(err.c_str());
        return r;
    }

    bool exists(const std::string &name) { return access((work_ + "/" + name).c_str(), F_OK) == 0; }

    // Parse work/<name> as an image and return its entries.
    std::vector<std::string> entries_of(const std::string &name, ImageView *view_out = nullptr)
    {
        bytes_ = slurp(work_ + "/" + name);
        ImageView v;
        std::string why;
        EXPECT_EQ(image_parse(reinterpret_cast<const uint8_t *>(bytes_.data()), bytes_.size(), &v, &why),
                  UCX_IFUNC_OK)
            << why;
        if (view_out) *view_out = v;
        return std::vector<std::string>(v.entries.begin(), v.entries.end());
    }

    std::string root_, work_, tmp_;
    std::string bytes_;  // backing store of the last parsed image
};

const char kTwoEntries[] =
    "#include <ucx_ifunc/runtime.h>\n"
    "static int twice(int x) { return 2 * x; }\n"
    "XRDMA_IFUNC(first) { (void)ctx; (void)args; return twice((int)args_size) != 0; }\n"
    "XRDMA_IFUNC(second) { return xrdma_reply(ctx, args, args_size); }\n";

std::string errors_of(const Outcome &r) { return "stdout:\n" + r.out + "\nstderr:\n" + r.err; }

TEST_F(XrdmaCc, Help)
{
    Outcome r = xcc({"--help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("Usage"), std::string::npos);
    EXPECT_NE(r.out.find("--showme"), std::string::npos);
}

TEST_F(XrdmaCc, ShowmePrintsCommandAndCreatesNothing)
{
    write("two.c", kTwoEntries);
    Outcome r = xcc({"--showme", include_flag(), "-O3", "-DX=1", "two.c", "-o", "out.xfn"});
    EXPECT_EQ(r.status, 0) << errors_of(r);
    EXPECT_NE(r.out.find(" -shared"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" -fPIC"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" -fvisibility=hidden"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" two.c"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" -DX=1"), std::string::npos) << r.out;
    // User flags come after the driver's, so they override -O2.
    EXPECT_LT(r.out.find(" -O2"), r.out.find(" -O3")) << r.out;
    EXPECT_EQ(list_dir(work_), std::vector<std::string>{"two.c"});
}

TEST_F(XrdmaCc, ShowmeUsesClangxxForCxx)
{
    write("v.cc", "");
    Outcome r = xcc({"--showme", "v.cc"});
    EXPECT_EQ(r.status, 0) << errors_of(r);
    EXPECT_NE(r.out.find("clang++"), std::string::npos) << r.out;
}

TEST_F(XrdmaCc, TwoEntries)
{
    write("two.c", kTwoEntries);
    Outcome r = xcc({include_flag(), "two.c", "-o", "two.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    ImageView v;
    EXPECT_EQ(entries_of("two.xfn", &v), (std::vector<std::string>{"first", "second"}));
    // Default: native for the host, bitcode for the host and for aarch64.
    ASSERT_EQ(v.parts.size(), host_triple() == "aarch64-linux-gnu" ? 2u : 3u);
    EXPECT_EQ(v.parts[0].kind, PartKind::native_elf);
    EXPECT_EQ(v.parts[0].triple, host_triple());
    EXPECT_EQ(v.parts[1].kind, PartKind::llvm_bitcode);
    EXPECT_EQ(v.parts[1].triple, host_triple());
    EXPECT_EQ(v.parts.back().kind, PartKind::llvm_bitcode);
    EXPECT_EQ(v.parts.back().triple, "aarch64-linux-gnu");
    for (size_t i = 1; i < v.parts.size(); ++i)
        EXPECT_EQ(0, memcmp(v.parts[i].data, "BC\xc0\xde", 4)) << "part " << i << " is LLVM bitcode";
    ElfInfo info;
    std::string why;
    ASSERT_EQ(elf_inspect(v.parts[0].data, v.parts[0].size, &info, &why), UCX_IFUNC_OK) << why;
    EXPECT_EQ(info.machine, elf_host_machine());
    for (const auto &s : info.dynsyms) EXPECT_NE(s.name, "twice") << "helpers stay hidden";
}

TEST_F(XrdmaCc, DefaultOutputName)
{
    write("my_func.c", kTwoEntries);
    Outcome r = xcc({"-v", include_flag(), "my_func.c"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    EXPECT_TRUE(exists("my_func.xfn"));
    EXPECT_NE(r.err.find("-shared"), std::string::npos) << "-v prints the command: " << r.err;
    EXPECT_EQ(entries_of("my_func.xfn").size(), 2u);
}

// A C++ function for every default target. This test runs before any other
// test could install anything (tests/hetero/local.mk orders the one that
// does after it): the headers it needs come from scripts/install-deps.
TEST_F(XrdmaCc, CxxAndMixedSources)
{
    write("v.cc",
          "#include <ucx_ifunc/runtime.h>\n#include <vector>\n"
          "XRDMA_IFUNC(vec) { std::vector<char> b((const char *)args, (const char *)args + args_size);\n"
          "  return xrdma_reply(ctx, b.data(), b.size()); }\n");
    write("c.c", "#include <ucx_ifunc/runtime.h>\nXRDMA_IFUNC(plain) { (void)ctx; (void)args; return (int)args_size; }\n");
    Outcome r = xcc({include_flag(), "v.cc", "-o", "v.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    EXPECT_EQ(entries_of("v.xfn"), std::vector<std::string>{"vec"});
    // C and C++ together: each compiled by its own driver, linked by clang++.
    r = xcc({include_flag(), "c.c", "v.cc", "-o", "mixed.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    EXPECT_EQ(entries_of("mixed.xfn"), (std::vector<std::string>{"plain", "vec"}));
}

// A default target whose headers clang cannot find: xrdma-cc names the
// Debian package that adds them (one scripts/install-deps installs) and the
// --target that builds without that triple, which then works. The headers
// are hidden by wrappers of clang: -nostdinc++ (no C++ library headers) or
// -nostdlibinc (no C library headers, clang's own stay), for the other
// triple only.
TEST_F(XrdmaCc, MissingTargetHeadersNamed)
{
    const std::string other = host_triple() == "aarch64-linux-gnu" ? "x86_64-linux-gnu" : "aarch64-linux-gnu";
    const std::string arch = other == "aarch64-linux-gnu" ? "arm64" : "amd64";
    const std::string clang = xrdma::config_get("XRDMA_CLANG"), bin = root_ + "/bin";
    ASSERT_EQ(mkdir(bin.c_str(), 0700), 0);
    auto wrap = [&](const std::string &driver, const std::string &real, const std::string &hide) {
        FILE *f = fopen((bin + "/" + driver).c_str(), "w");
        ASSERT_NE(f, nullptr);
        fprintf(f, "#!/bin/sh\ncase \" $* \" in *\" %s \"*) exec %s %s \"$@\";; esac\nexec %s \"$@\"\n", other.c_str(),
                real.c_str(), hide.c_str(), real.c_str());
        fclose(f);
        ASSERT_EQ(chmod((bin + "/" + driver).c_str(), 0755), 0);
    };
    const size_t slash = clang.find_last_of('/');
    const std::string dir = clang.substr(0, slash + 1), base = clang.substr(slash + 1);
    // clang-14 -> clang++-14 and llvm-link-14 beside it, as xrdma-cc finds them.
    const std::string version = base.substr(std::min(base.find('-'), base.size()));
    const std::string base_cxx = "clang++" + version, link = "llvm-link" + version;
    ASSERT_EQ(symlink((dir + link).c_str(), (bin + "/" + link).c_str()), 0);
    std::string install_deps = slurp(srcdir() + "/scripts/install-deps");
    write("v.cc",
          "#include <ucx_ifunc/runtime.h>\n#include <vector>\n"
          "XRDMA_IFUNC(vec) { std::vector<char> b((const char *)args, (const char *)args + args_size);\n"
          "  return xrdma_reply(ctx, b.data(), b.size()); }\n");
    write("c.c", "#include <stdlib.h>\n#include <ucx_ifunc/runtime.h>\nXRDMA_IFUNC(plain) { return abs((int)args_size); }\n");
    struct Case {
        const char *source, *kind, *hide_c, *hide_cxx;
        std::vector<std::string> packages;
    } cases[] = {
        {"v.cc", "C++", "", "-nostdinc++", {"libstdc++-12-dev-" + arch + "-cross"}},
        {"c.c", "C", "-nostdlibinc", "-nostdlibinc",
         {"libc6-dev-" + arch + "-cross", "libgcc-12-dev-" + arch + "-cross"}},
    };
    for (const Case &c : cases) {
        wrap(base, clang, c.hide_c);
        wrap(base_cxx, dir + base_cxx, c.hide_cxx);
        setenv("XRDMA_CLANG", (bin + "/" + base).c_str(), 1);
        Outcome r = xcc({include_flag(), c.source, "-o", "out.xfn"});
        Outcome only_host = xcc({include_flag(), "--target=" + host_triple(), c.source, "-o", "host.xfn"});
        unsetenv("XRDMA_CLANG");
        EXPECT_EQ(r.status, 1) << errors_of(r);
        EXPECT_FALSE(exists("out.xfn"));
        EXPECT_NE(r.err.find(std::string("clang finds no ") + c.kind + " headers for " + other), std::string::npos)
            << r.err;
        for (const std::string &p : c.packages) {
            EXPECT_NE(r.err.find(p), std::string::npos) << p << " not named: " << r.err;
            EXPECT_NE(install_deps.find(" " + p), std::string::npos) << "scripts/install-deps does not install " << p;
        }
        EXPECT_NE(r.err.find("or build without " + other + ": --target=" + host_triple()), std::string::npos)
            << r.err;
        // What it proposes builds the other parts.
        ASSERT_EQ(only_host.status, 0) << errors_of(only_host);
        ImageView v;
        entries_of("host.xfn", &v);
        ASSERT_EQ(v.parts.size(), 2u);
        EXPECT_EQ(v.parts[0].kind, PartKind::native_elf);
        EXPECT_EQ(v.parts[1].triple, host_triple());
        unlink((work_ + "/host.xfn").c_str());
    }
}

TEST_F(XrdmaCc, UserDefinesReachClang)
{
    write("d.c",
          "#include <ucx_ifunc/runtime.h>\n#ifndef WANT\n#error WANT not defined\n#endif\n"
          "#if WANT == 2\nXRDMA_IFUNC(two) { (void)ctx; (void)args; (void)args_size; return 0; }\n#endif\n"
          "#ifdef ALSO\nXRDMA_IFUNC(also) { (void)ctx; (void)args; (void)args_size; return 0; }\n#endif\n");
    Outcome r = xcc({include_flag(), "-D", "WANT=2", "-DALSO", "d.c"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    EXPECT_EQ(entries_of("d.xfn"), (std::vector<std::string>{"also", "two"}));
    r = xcc({include_flag(), "-DWANT=2", "-DALSO", "-U", "ALSO", "d.c", "-o", "d2.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    EXPECT_EQ(entries_of("d2.xfn"), std::vector<std::string>{"two"});
}

TEST_F(XrdmaCc, MarkerWithoutFunctionFails)
{
    // A hand-made marker whose function does not exist is caught.
    write("ghost.c",
          "__attribute__((visibility(\"default\"), used)) const char __xrdma_entry_ghost[] = \"ghost\";\n");
    Outcome r = xcc({"ghost.c"});
    EXPECT_EQ(r.status, 1) << errors_of(r);
    EXPECT_NE(r.err.find("ghost"), std::string::npos) << r.err;
    EXPECT_FALSE(exists("ghost.xfn"));
}

TEST_F(XrdmaCc, NoEntryFailsClearly)
{
    write("none.c", "int helper(int x) { return x + 1; }\n");
    Outcome r = xcc({include_flag(), "none.c", "-o", "none.xfn"});
    EXPECT_EQ(r.status, 1) << errors_of(r);
    EXPECT_NE(r.err.find("no ifunc entry"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("XRDMA_IFUNC"), std::string::npos) << r.err;
    EXPECT_FALSE(exists("none.xfn"));
}

TEST_F(XrdmaCc, SyntaxErrorFails)
{
    write("bad.c", "#include <ucx_ifunc/runtime.h>\nXRDMA_IFUNC(f) { return ; \n");
    Outcome r = xcc({include_flag(), "bad.c"});
    EXPECT_EQ(r.status, 1) << errors_of(r);
    EXPECT_NE(r.err.find("error"), std::string::npos) << "clang's diagnostics are visible: " << r.err;
    EXPECT_FALSE(exists("bad.xfn"));
    EXPECT_EQ(list_dir(work_), std::vector<std::string>{"bad.c"});
}

TEST_F(XrdmaCc, MissingClangFails)
{
    write("two.c", kTwoEntries);
    setenv("XRDMA_CLANG", "/nonexistent/clang-14", 1);
    Outcome r = xcc({include_flag(), "two.c"});
    unsetenv("XRDMA_CLANG");
    EXPECT_EQ(r.status, 1) << errors_of(r);
    EXPECT_NE(r.err.find("/nonexistent/clang-14"), std::string::npos) << r.err;
    EXPECT_FALSE(exists("two.xfn"));
}

TEST_F(XrdmaCc, UsageErrors)
{
    write("two.c", kTwoEntries);
    EXPECT_EQ(xcc({}).status, 2);
    EXPECT_EQ(xcc({"-c", "two.c"}).status, 2);
    EXPECT_EQ(xcc({"notes.txt"}).status, 2);
    EXPECT_EQ(xcc({"two.c", "-o"}).status, 2);
    Outcome r = xcc({"--emit=wasm", "two.c"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("native, bitcode or all"), std::string::npos) << r.err;
    r = xcc({"--target=x86_64-linux-gnu,riscv64-linux-gnu", "two.c"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("riscv64-linux-gnu"), std::string::npos) << r.err;
    const std::string other = host_triple() == "aarch64-linux-gnu" ? "x86_64-linux-gnu" : "aarch64-linux-gnu";
    r = xcc({"--emit=native", "--target=" + other, "two.c"});
    EXPECT_EQ(r.status, 2) << "no native part for another machine";
    EXPECT_NE(r.err.find("host triple"), std::string::npos) << r.err;
    EXPECT_EQ(list_dir(work_), std::vector<std::string>{"two.c"});
}

TEST_F(XrdmaCc, EmitChoosesParts)
{
    write("two.c", kTwoEntries);
    const std::string other = host_triple() == "aarch64-linux-gnu" ? "x86_64-linux-gnu" : "aarch64-linux-gnu";
    // Bitcode only, for one foreign triple: entries come from the bitcode.
    Outcome r = xcc({include_flag(), "--emit=bitcode", "--target=" + other, "two.c", "-o", "bc.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    ImageView v;
    EXPECT_EQ(entries_of("bc.xfn", &v), (std::vector<std::string>{"first", "second"}));
    ASSERT_EQ(v.parts.size(), 1u);
    EXPECT_EQ(v.parts[0].kind, PartKind::llvm_bitcode);
    EXPECT_EQ(v.parts[0].triple, other);
    // Native only.
    r = xcc({include_flag(), "--emit=native", "two.c", "-o", "n.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    entries_of("n.xfn", &v);
    ASSERT_EQ(v.parts.size(), 1u);
    EXPECT_EQ(v.parts[0].kind, PartKind::native_elf);
    // A list of triples (repeated ones once), native and bitcode.
    r = xcc({include_flag(), "--target=" + host_triple() + "," + other, "--target=" + host_triple(), "two.c",
             "-o", "all.xfn"});
    ASSERT_EQ(r.status, 0) << errors_of(r);
    entries_of("all.xfn", &v);
    ASSERT_EQ(v.parts.size(), 3u);
    EXPECT_EQ(v.parts[2].triple, other);
}

TEST_F(XrdmaCc, ShowmeBitcodeCommands)
{
    write("a.c", kTwoEntries);
    write("b.cc", "");
    Outcome r = xcc({"--showme", "--emit=bitcode", "--target=aarch64-linux-gnu", "-march=native", "a.c", "b.cc"});
    EXPECT_EQ(r.status, 0) << errors_of(r);
    EXPECT_NE(r.out.find("-c -emit-llvm -target aarch64-linux-gnu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("llvm-link"), std::string::npos) << "two sources are linked: " << r.out;
    EXPECT_EQ(r.out.find("-shared"), std::string::npos) << "no native part: " << r.out;
    if (host_triple() != "aarch64-linux-gnu")
        EXPECT_EQ(r.out.find("-march=native"), std::string::npos) << "-m flags are the host's: " << r.out;
}

TEST_F(XrdmaCc, PartsMustAgreeOnEntries)
{
    write("arch.c",
          "#include <ucx_ifunc/runtime.h>\n"
          "XRDMA_IFUNC(common) { (void)ctx; (void)args; return (int)args_size; }\n"
          "#ifdef __aarch64__\nXRDMA_IFUNC(arm_only) { (void)ctx; (void)args; return 0; }\n#endif\n");
    Outcome r = xcc({include_flag(), "arch.c", "-o", "arch.xfn"});
    EXPECT_EQ(r.status, 1) << errors_of(r);
    EXPECT_NE(r.err.find("other entries"), std::string::npos) << r.err;
    EXPECT_FALSE(exists("arch.xfn"));
}

// The image make check built from tests/plugin/ifuncs/unit_two.c.
TEST(XrdmaCcBuild, MakeCheckImage)
{
    std::string bytes = slurp(builddir() + "/tests/plugin/ifuncs/unit_two.xfn");
    ASSERT_FALSE(bytes.empty());
    ImageView v;
    std::string why;
    ASSERT_EQ(image_parse(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), &v, &why), UCX_IFUNC_OK)
        << why;
    EXPECT_EQ(std::vector<std::string>(v.entries.begin(), v.entries.end()),
              (std::vector<std::string>{"add", "echo"}));
}

}  // namespace
