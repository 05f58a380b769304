// Library-list entries found as the link editor finds them (library_path.h):
// GNU ld scripts followed to the shared objects they name, static archives
// left out, -lNAME searched as libNAME.so then libNAME.a, and what is found
// nowhere reported; in directories of the test's own, and in this machine's.
#include "load/library_path.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using xrdma::ResolvedLibrary;

namespace {

bool ends_with(const std::string &s, const std::string &tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(LinkerScript, InputsOfGroupInputAndAsNeeded)
{
    std::vector<std::string> in;
    ASSERT_TRUE(xrdma::linker_script_inputs("/* GNU ld script\n   Use the shared library. */\n"
                                            "OUTPUT_FORMAT(elf64-x86-64)\n"
                                            "GROUP ( /lib/libc.so.6 /usr/lib/libc_nonshared.a "
                                            "AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n",
                                            &in));
    EXPECT_EQ((std::vector<std::string>{"/lib/libc.so.6", "/usr/lib/libc_nonshared.a", "/lib64/ld-linux-x86-64.so.2"}),
              in);
    in.clear();
    ASSERT_TRUE(xrdma::linker_script_inputs("INPUT(libm.so.6, \"odd name.so\") GROUP(libgcc_s.so.1 -lgcc)", &in));
    EXPECT_EQ((std::vector<std::string>{"libm.so.6", "odd name.so", "libgcc_s.so.1", "-lgcc"}), in);
    // Not scripts: text without a command, unbalanced parentheses, an
    // unterminated comment, only commands that name no input.
    for (const char *text : {"hello world\n", "GROUP ( libc.so.6", "GROUP ( a ) )", "/* GROUP ( a )",
                             "OUTPUT_FORMAT(elf64-x86-64)", ""}) {
        in.clear();
        EXPECT_FALSE(xrdma::linker_script_inputs(text, &in)) << text;
    }
}

class LibraryPath : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/xrdma-libpath-XXXXXX";
        ASSERT_NE(nullptr, mkdtemp(tmpl));
        dir = tmpl;
        ASSERT_EQ(0, mkdir((dir + "/a").c_str(), 0700));
        ASSERT_EQ(0, mkdir((dir + "/b").c_str(), 0700));
    }
    void TearDown() override
    {
        std::string cmd = "rm -rf '" + dir + "'";
        EXPECT_EQ(0, system(cmd.c_str()));
    }
    void write(const std::string &rel, const std::string &bytes)
    {
        std::ofstream f(dir + "/" + rel, std::ios::binary);
        f << bytes;
    }
    std::string dir;
};

// A script in the first directory names a shared object of the second, a
// static archive by -l (libNAME.a where no libNAME.so is), a script that
// names another object by path, and a name found nowhere.
TEST_F(LibraryPath, ScriptsFollowedAcrossDirectories)
{
    const std::string elf = std::string("\x7f" "ELF", 4) + std::string(60, '\0');
    write("a/libfoo.so", "/* GNU ld script */\nGROUP ( libfoo.so.1 -lfoo_extra AS_NEEDED ( libbar.so ) libnone.so.3 )\n");
    write("b/libfoo.so.1", elf);
    write("b/libfoo_extra.a", "!<arch>\n");
    write("b/libbar.so", "INPUT ( " + dir + "/b/libbar.so.2 )");
    write("b/libbar.so.2", elf);
    const ResolvedLibrary r = xrdma::resolve_library("libfoo.so", {dir + "/a", dir + "/b"});
    EXPECT_EQ((std::vector<std::string>{dir + "/b/libfoo.so.1", dir + "/b/libbar.so.2"}), r.objects);
    EXPECT_EQ((std::vector<std::string>{dir + "/b/libfoo_extra.a"}), r.archives);
    ASSERT_EQ(1u, r.unfound.size());
    EXPECT_EQ("libnone.so.3", r.unfound[0].name);
    EXPECT_NE(std::string::npos, r.unfound[0].why.find("no library directory")) << r.unfound[0].why;
}

TEST_F(LibraryPath, NothingToFollow)
{
    write("a/libloop.so", "GROUP ( libloop.so )");  // a script naming itself
    write("a/notes.so", "just some text\n");
    for (const char *name : {"libloop.so", "notes.so", "libxrdma-absent.so.8", "/nonexistent/libx.so"}) {
        SCOPED_TRACE(name);
        const ResolvedLibrary r = xrdma::resolve_library(name, {dir + "/a"});
        EXPECT_TRUE(r.objects.empty());
        EXPECT_EQ(1u, r.unfound.size());
    }
}

// This machine's toolchain: GCC's libgcc_s.so is a linker script in GCC's
// own directory, which the dynamic loader does not search; it comes to
// libgcc_s.so.1 (loaded here: this test is C++) and the static libgcc.a.
// libc.so, a script in the system's directory, comes to libc.so.6.
TEST(LibraryPathHere, ToolchainScripts)
{
    ResolvedLibrary r = xrdma::resolve_library("libgcc_s.so");
    ASSERT_TRUE(r.unfound.empty()) << r.unfound[0].name << ": " << r.unfound[0].why;
    ASSERT_EQ(1u, r.objects.size());
    EXPECT_TRUE(ends_with(r.objects[0], "libgcc_s.so.1")) << r.objects[0];
    for (const std::string &a : r.archives) EXPECT_TRUE(ends_with(a, ".a")) << a;
    r = xrdma::resolve_library("libc.so");
    ASSERT_TRUE(r.unfound.empty()) << r.unfound[0].name << ": " << r.unfound[0].why;
    ASSERT_FALSE(r.objects.empty());
    EXPECT_TRUE(ends_with(r.objects[0], "libc.so.6")) << r.objects[0];
    // A library the process has loaded, by the name it was loaded under.
    r = xrdma::resolve_library("libc.so.6");
    EXPECT_EQ((std::vector<std::string>{"libc.so.6"}), r.objects);
}

}  // namespace
