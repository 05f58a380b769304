// xrdma-cc: compile ifunc sources into an XRDMA image (man xrdma-cc(1)).
//
// A compiler driver in the spirit of mpicc: it runs clang with the flags an
// ifunc needs, reads the resulting shared object, lists its entries (the
// __xrdma_entry_<name> markers emitted by XRDMA_IFUNC) and wraps everything
// into an image (man xrdma-image(5)).
//
// The work is planned first (a list of commands and a list of parts), then
// executed: --showme prints the plan, later options (--target, --emit) add
// parts and commands to it without changing the rest.
#include "xrdma_common/config.h"
#include "image/elf_reader.h"
#include "image/image.h"
#include "load/loader_jit.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace {

using xrdma::PartKind;

const char *prog = "xrdma-cc";
const char kAarch64[] = "aarch64-linux-gnu";
// Triples whose code a target of this XRDMA can run (image.cc host_triple()).
const char *const kKnownTriples[] = {"x86_64-linux-gnu", "aarch64-linux-gnu"};
const char kEntryMarker[] = "__xrdma_entry_";

enum ExitCode { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s [options] file.c|file.cc|file.cpp... [-o out.xfn]\n"
            "Compile ifunc sources (entries defined with XRDMA_IFUNC from <xrdma_ifunc.h>)\n"
            "into one XRDMA image.\n"
            "\n"
            "Options:\n"
            "  -o FILE        write the image to FILE (default: first source's name with .xfn)\n"
            "  -I DIR, -D NAME[=VAL], -U NAME, -O*, -g*, -std=*, -W*, -f*, -m*\n"
            "                 passed to clang, after xrdma-cc's own flags\n"
            "  --emit=native|bitcode|all\n"
            "                 parts to emit: a native shared object for the host, LLVM\n"
            "                 bitcode for each target triple, or both (default: all)\n"
            "  --target=TRIPLE[,TRIPLE...]\n"
            "                 triples to emit bitcode for (default: %s,%s);\n"
            "                 a native part is built for the host triple if it is listed\n"
            "  --c-array=NAME write the image as C source instead: const unsigned char NAME[]\n"
            "                 and const size_t NAME_size, for MPIX_Ifunc_load_mem(NAME,\n"
            "                 NAME_size, ...) in a program that embeds its code\n"
            "                 (default output: NAME.c)\n"
            "  --showme       print the clang command(s) and exit without running them\n"
            "  -v             print the clang command(s), then run them\n"
            "  -h, --help     print this help\n"
            "\n"
            "Environment:\n"
            "  XRDMA_CLANG           clang to use (C++ sources use the clang++ beside it)\n"
            "  XRDMA_CC_INCLUDE_DIR  directory holding xrdma_ifunc.h\n"
            "\n"
            "Exit status: 0 on success, 1 if compiling or writing the image failed,\n"
            "2 on a usage error.\n",
            prog, xrdma::host_triple().c_str(), kAarch64);
}

// ---------------------------------------------------------------- options

enum class Lang { c, cxx };

struct Source {
    std::string path;
    Lang lang;
};

// One part to put into the image: the native shared object for the host,
// or the (linked) bitcode of all sources for one triple.
struct PartPlan {
    PartKind kind;
    std::string triple;
    std::string file;  // produced by the commands, read into the image
};

struct Options {
    std::vector<Source> sources;
    std::vector<std::string> user_flags;  // in command-line order
    std::string output;
    std::string c_array;  // --c-array=NAME: C source instead of an image file
    bool emit_native = true, emit_bitcode = true;
    std::vector<std::string> targets;  // bitcode triples; default: host, aarch64
    bool targets_given = false;        // --target chose them
    bool showme = false;
    bool verbose = false;
    bool help = false;
};

bool ends_with(const std::string &s, const char *suffix)
{
    size_t n = strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

bool source_lang(const std::string &path, Lang *lang)
{
    if (ends_with(path, ".c")) {
        *lang = Lang::c;
        return true;
    }
    for (const char *ext : {".cc", ".cpp", ".cxx", ".C"}) {
        if (ends_with(path, ext)) {
            *lang = Lang::cxx;
            return true;
        }
    }
    return false;
}

std::string basename_of(const std::string &path)
{
    size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string default_output(const std::string &source)
{
    std::string base = basename_of(source);
    size_t dot = base.find_last_of('.');
    if (dot != std::string::npos && dot > 0) base.erase(dot);
    return base + ".xfn";
}

// Parse argv; returns -1 to go on, else an exit code.
int parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char *flag, std::string *out) -> bool {
            // "-Xvalue" or "-X value"
            size_t n = strlen(flag);
            if (a.size() > n) {
                *out = a.substr(n);
                return true;
            }
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: %s needs an argument\n", prog, flag);
                return false;
            }
            *out = argv[++i];
            return true;
        };

        if (a == "-h" || a == "--help") {
            o->help = true;
        } else if (a == "--showme") {
            o->showme = true;
        } else if (a == "-v") {
            o->verbose = true;
        } else if (starts_with(a, "-o")) {
            std::string v;
            if (!value("-o", &v)) return EXIT_USAGE;
            if (!o->output.empty()) {
                fprintf(stderr, "%s: -o given more than once\n", prog);
                return EXIT_USAGE;
            }
            o->output = v;
        } else if (starts_with(a, "-I") || starts_with(a, "-D") || starts_with(a, "-U")) {
            std::string flag = a.substr(0, 2), v;
            if (!value(flag.c_str(), &v)) return EXIT_USAGE;
            o->user_flags.push_back(flag + v);
        } else if (starts_with(a, "--c-array")) {
            std::string v;
            if (starts_with(a, "--c-array=")) {
                v = a.substr(10);
            } else if (a == "--c-array" && i + 1 < argc) {
                v = argv[++i];
            }
            bool ident = !v.empty() && !isdigit(static_cast<unsigned char>(v[0]));
            for (char c : v) ident = ident && (isalnum(static_cast<unsigned char>(c)) || c == '_');
            if (!ident) {
                fprintf(stderr, "%s: --c-array needs a C identifier, got '%s'\n", prog, v.c_str());
                return EXIT_USAGE;
            }
            o->c_array = v;
        } else if (starts_with(a, "--emit=")) {
            std::string v = a.substr(7);
            if (v != "native" && v != "bitcode" && v != "all") {
                fprintf(stderr, "%s: --emit=%s: use native, bitcode or all\n", prog, v.c_str());
                return EXIT_USAGE;
            }
            o->emit_native = v != "bitcode";
            o->emit_bitcode = v != "native";
        } else if (starts_with(a, "--target=")) {
            std::string list = a.substr(9) + ",";
            for (size_t b = 0, e; (e = list.find(',', b)) != std::string::npos; b = e + 1) {
                std::string t = list.substr(b, e - b);
                if (std::find(std::begin(kKnownTriples), std::end(kKnownTriples), t) == std::end(kKnownTriples)) {
                    fprintf(stderr, "%s: --target=%s: unknown triple '%s' (known: %s, %s)\n", prog,
                            a.substr(9).c_str(), t.c_str(), kKnownTriples[0], kKnownTriples[1]);
                    return EXIT_USAGE;
                }
                if (std::find(o->targets.begin(), o->targets.end(), t) == o->targets.end()) o->targets.push_back(t);
            }
            o->targets_given = true;
        } else if (starts_with(a, "-O") || starts_with(a, "-g") || starts_with(a, "-std=") ||
                   (starts_with(a, "-W") && a.size() > 2) || (starts_with(a, "-f") && a.size() > 2) ||
                   (starts_with(a, "-m") && a.size() > 2)) {
            o->user_flags.push_back(a);
        } else if (!a.empty() && a[0] == '-') {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", prog, a.c_str(), prog);
            return EXIT_USAGE;
        } else {
            Lang lang;
            if (!source_lang(a, &lang)) {
                fprintf(stderr, "%s: '%s' is not a C or C++ source (.c, .cc, .cpp, .cxx, .C)\n", prog,
                        a.c_str());
                return EXIT_USAGE;
            }
            o->sources.push_back(Source{a, lang});
        }
    }
    if (o->help) return -1;
    if (o->targets.empty()) {
        o->targets = {xrdma::host_triple()};
        if (xrdma::host_triple() != kAarch64) o->targets.push_back(kAarch64);
    }
    if (o->emit_native && !o->emit_bitcode &&
        std::find(o->targets.begin(), o->targets.end(), xrdma::host_triple()) == o->targets.end()) {
        fprintf(stderr, "%s: --emit=native builds only for the host triple (%s), which --target does not list\n",
                prog, xrdma::host_triple().c_str());
        return EXIT_USAGE;
    }
    if (o->sources.empty() && !o->showme) {
        fprintf(stderr, "%s: no source files (see %s --help)\n", prog, prog);
        return EXIT_USAGE;
    }
    if (o->output.empty() && !o->c_array.empty()) o->output = o->c_array + ".c";
    if (o->output.empty() && !o->sources.empty()) o->output = default_output(o->sources[0].path);
    return -1;
}

// ---------------------------------------------------------------- planning

// The clang++ beside a clang: "/usr/bin/clang-14" -> "/usr/bin/clang++-14".
std::string cxx_driver(const std::string &clang)
{
    size_t slash = clang.find_last_of('/');
    size_t start = slash == std::string::npos ? 0 : slash + 1;
    std::string base = clang.substr(start);
    if (starts_with(base, "clang++")) return clang;
    if (starts_with(base, "clang"))
        base.insert(5, "++");
    else
        base += "++";
    return clang.substr(0, start) + base;
}

// The llvm-link beside a clang: "/usr/bin/clang-14" -> "/usr/bin/llvm-link-14".
std::string llvm_link(const std::string &clang)
{
    size_t slash = clang.find_last_of('/');
    size_t start = slash == std::string::npos ? 0 : slash + 1;
    std::string base = clang.substr(start);
    size_t dash = base.find('-');
    std::string version = dash == std::string::npos ? "" : base.substr(dash);
    return clang.substr(0, start) + "llvm-link" + version;
}

using Command = std::vector<std::string>;

struct Plan {
    std::vector<Command> commands;
    std::vector<PartPlan> parts;
};

Plan make_plan(const Options &o, const std::string &tmpdir)
{
    const std::string clang = xrdma::config_get("XRDMA_CLANG");
    const std::string include_dir = xrdma::config_get("XRDMA_CC_INCLUDE_DIR");
    bool any_c = false, any_cxx = false;
    for (const auto &s : o.sources) (s.lang == Lang::c ? any_c : any_cxx) = true;

    const Command common = {"-fPIC", "-fvisibility=hidden", "-O2", "-I" + include_dir};
    Plan plan;
    const std::string so = tmpdir + "/ifunc.so";
    const bool host_listed =
        std::find(o.targets.begin(), o.targets.end(), xrdma::host_triple()) != o.targets.end();

    if (!o.emit_native || !host_listed) {
        // no native part
    } else if (!(any_c && any_cxx)) {
        // One language: one command compiles and links everything.
        // -nostartfiles: no crti/crtbeginS, so no DT_INIT, DT_FINI and
        // .init_array/.fini_array entries of their own; targets refuse native
        // parts that would run code when loaded or unloaded.
        Command cmd = {any_cxx ? cxx_driver(clang) : clang, "-shared", "-nostartfiles"};
        cmd.insert(cmd.end(), common.begin(), common.end());
        cmd.insert(cmd.end(), o.user_flags.begin(), o.user_flags.end());
        for (const auto &s : o.sources) cmd.push_back(s.path);
        cmd.insert(cmd.end(), {"-o", so});
        plan.commands.push_back(cmd);
    } else {
        // C and C++ mixed: clang++ would compile the C files as C++, so
        // compile each with its own driver, then link with clang++.
        Command link = {cxx_driver(clang), "-shared", "-nostartfiles", "-fPIC"};
        for (const auto &f : o.user_flags)
            if (!starts_with(f, "-I") && !starts_with(f, "-D") && !starts_with(f, "-U") &&
                !starts_with(f, "-std="))
                link.push_back(f);
        for (size_t i = 0; i < o.sources.size(); ++i) {
            const Source &s = o.sources[i];
            std::string obj = tmpdir + "/" + std::to_string(i) + ".o";
            Command cmd = {s.lang == Lang::cxx ? cxx_driver(clang) : clang, "-c"};
            cmd.insert(cmd.end(), common.begin(), common.end());
            cmd.insert(cmd.end(), o.user_flags.begin(), o.user_flags.end());
            cmd.insert(cmd.end(), {s.path, "-o", obj});
            plan.commands.push_back(cmd);
            link.push_back(obj);
        }
        link.insert(link.end(), {"-o", so});
        plan.commands.push_back(link);
    }
    if (o.emit_native && host_listed) plan.parts.push_back(PartPlan{PartKind::native_elf, xrdma::host_triple(), so});

    // Bitcode: each source compiled for each triple with -emit-llvm, the
    // modules of several sources joined with llvm-link. -m flags select
    // machine features of one architecture, so only the host's compile gets them.
    for (const std::string &triple : o.emit_bitcode ? o.targets : std::vector<std::string>{}) {
        const bool host = triple == xrdma::host_triple();
        std::vector<std::string> bcs;
        for (size_t i = 0; i < o.sources.size(); ++i) {
            const Source &s = o.sources[i];
            std::string bc = tmpdir + "/" + triple + "." + std::to_string(i) + ".bc";
            Command cmd = {s.lang == Lang::cxx ? cxx_driver(clang) : clang, "-c", "-emit-llvm", "-target", triple};
            cmd.insert(cmd.end(), common.begin(), common.end());
            for (const auto &f : o.user_flags)
                if (host || !starts_with(f, "-m")) cmd.push_back(f);
            cmd.insert(cmd.end(), {s.path, "-o", bc});
            plan.commands.push_back(cmd);
            bcs.push_back(bc);
        }
        std::string bc = bcs.empty() ? tmpdir + "/" + triple + ".bc" : bcs[0];
        if (bcs.size() > 1) {
            bc = tmpdir + "/" + triple + ".bc";
            Command link = {llvm_link(clang)};
            link.insert(link.end(), bcs.begin(), bcs.end());
            link.insert(link.end(), {"-o", bc});
            plan.commands.push_back(link);
        }
        plan.parts.push_back(PartPlan{PartKind::llvm_bitcode, triple, bc});
    }
    return plan;
}

std::string shell_quote(const std::string &s)
{
    if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-+=./:,@%") == std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) {
        if (c == '\'')
            q += "'\\''";
        else
            q += c;
    }
    return q + "'";
}

void print_command(FILE *f, const Command &cmd)
{
    for (size_t i = 0; i < cmd.size(); ++i) fprintf(f, "%s%s", i ? " " : "", shell_quote(cmd[i]).c_str());
    fputc('\n', f);
}

// ---------------------------------------------------------------- temp files

// The temporary directory and what is in it, removed on every exit path
// (including SIGINT/SIGTERM/SIGHUP, hence fixed buffers).
char g_tmpdir[4096];
std::vector<std::string> g_tmpfiles;  // only modified with signals blocked
char g_partial_output[4096];          // output being written, removed if we die

void remove_temps()
{
    if (g_partial_output[0]) unlink(g_partial_output);
    if (!g_tmpdir[0]) return;
    for (const auto &f : g_tmpfiles) unlink(f.c_str());
    rmdir(g_tmpdir);
}

void on_signal(int sig)
{
    // Only async-signal-safe calls from here on; the vector is stable
    // because it is never modified while these signals are deliverable.
    if (g_partial_output[0]) unlink(g_partial_output);
    if (g_tmpdir[0]) {
        for (const auto &f : g_tmpfiles) unlink(f.c_str());
        rmdir(g_tmpdir);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

class TempDir {
public:
    bool create()
    {
        const char *t = getenv("TMPDIR");
        std::string tmpl = std::string(t && *t ? t : "/tmp") + "/xrdma-cc.XXXXXX";
        if (tmpl.size() >= sizeof(g_tmpdir)) return false;
        strcpy(g_tmpdir, tmpl.c_str());
        if (!mkdtemp(g_tmpdir)) {
            int e = errno;
            g_tmpdir[0] = '\0';
            errno = e;
            return false;
        }
        return true;
    }
    ~TempDir()
    {
        remove_temps();
        g_tmpdir[0] = '\0';
    }
    std::string path() const { return g_tmpdir; }
    // Register a file the commands will create, so it is removed.
    static void track(const std::string &file)
    {
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        sigprocmask(SIG_BLOCK, &block, &old);
        g_tmpfiles.push_back(file);
        sigprocmask(SIG_SETMASK, &old, nullptr);
    }
};

// ---------------------------------------------------------------- running

// Run @p cmd (its output to /dev/null when @p quiet); 0 and its wait status
// in @p status, or the errno of a spawn that failed.
int spawn(const Command &cmd, bool quiet, int *status)
{
    std::vector<char *> argv;
    for (const auto &a : cmd) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return rc;
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) return errno;
    }
    return 0;
}

bool run(const Command &cmd)
{
    int status;
    int rc = spawn(cmd, false, &status);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot run %s: %s (set XRDMA_CLANG to a clang 14)\n", prog, cmd[0].c_str(), strerror(rc));
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    if (WIFEXITED(status))
        fprintf(stderr, "%s: %s failed with exit status %d\n", prog, cmd[0].c_str(), WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        fprintf(stderr, "%s: %s was killed by signal %d\n", prog, cmd[0].c_str(), WTERMSIG(status));
    return false;
}

// ---------------------------------------------------------------- missing headers

// The Debian packages (12, GCC 12) that give clang a triple's C headers (with
// the GCC installation it looks for) and its C++ headers: the *-cross ones
// for another processor's triple, the plain ones for the host's own.
struct HeaderPackages {
    const char *triple, *c, *cxx;
};
const HeaderPackages kCrossHeaders[] = {
    {"aarch64-linux-gnu", "libc6-dev-arm64-cross libgcc-12-dev-arm64-cross", "libstdc++-12-dev-arm64-cross"},
    {"x86_64-linux-gnu", "libc6-dev-amd64-cross libgcc-12-dev-amd64-cross", "libstdc++-12-dev-amd64-cross"},
};
const HeaderPackages kHostHeaders = {"", "libc6-dev libgcc-12-dev", "libstdc++-12-dev"};

// Whether @p driver finds a header of @p lang for @p triple: a one-line
// source checked for syntax only, quietly.
bool headers_found(const std::string &driver, const std::string &triple, Lang lang, const std::string &tmpdir)
{
    const std::string src = tmpdir + (lang == Lang::cxx ? "/probe.cc" : "/probe.c");
    TempDir::track(src);
    FILE *f = fopen(src.c_str(), "w");
    if (!f) return true;  // (cannot tell)
    const bool written = fputs(lang == Lang::cxx ? "#include <cstddef>\n" : "#include <stdlib.h>\n", f) >= 0;
    if (fclose(f) != 0 || !written) return true;
    int status;
    return spawn({driver, "-fsyntax-only", "-target", triple, src}, true, &status) != 0 ||
           (WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// After @p cmd, a compile for one triple, failed: if clang finds no headers
// for that triple, say which Debian package adds them, and how to build
// without that triple.
void explain_missing_headers(const Options &o, const Command &cmd, const std::string &tmpdir)
{
    const std::string driver = basename_of(cmd[0]);
    if (!starts_with(driver, "clang")) return;
    std::string triple = xrdma::host_triple();
    for (size_t i = 0; i + 1 < cmd.size(); ++i)
        if (cmd[i] == "-target") triple = cmd[i + 1];
    const std::string clang = xrdma::config_get("XRDMA_CLANG");
    const char *kind = "";
    const HeaderPackages *pkgs = &kHostHeaders;
    for (const HeaderPackages &p : kCrossHeaders)
        if (triple == p.triple && triple != xrdma::host_triple()) pkgs = &p;
    const char *missing = nullptr;
    if (!headers_found(clang, triple, Lang::c, tmpdir)) {
        kind = "C";
        missing = pkgs->c;
    } else if (starts_with(driver, "clang++") && !headers_found(cxx_driver(clang), triple, Lang::cxx, tmpdir)) {
        kind = "C++";
        missing = pkgs->cxx;
    }
    if (!missing) return;
    fprintf(stderr, "%s: clang finds no %s headers for %s%s: install the Debian package%s %s (scripts/install-deps "
            "does)\n",
            prog, kind, triple.c_str(), o.targets_given ? "" : " (images carry bitcode for it by default)",
            strchr(missing, ' ') ? "s" : "", missing);
    std::string others;
    for (const std::string &t : o.targets)
        if (t != triple) others += (others.empty() ? "" : ",") + t;
    if (!others.empty())
        fprintf(stderr, "%s: or build without %s: --target=%s\n", prog, triple.c_str(), others.c_str());
}

bool read_part(const std::string &path, std::vector<uint8_t> *out)
{
    out->clear();
    if (xrdma::read_file(path, out) == UCX_IFUNC_OK) return true;
    fprintf(stderr, "%s: cannot read %s: %s\n", prog, path.c_str(), strerror(errno));
    return false;
}

// The image as C source: an array a program compiles in and hands to
// MPIX_Ifunc_load_mem(), so it needs no file at run time.
std::vector<uint8_t> c_array_source(const Options &o, const std::vector<uint8_t> &image)
{
    std::string srcs;
    for (const Source &s : o.sources) srcs += (srcs.empty() ? "" : " ") + basename_of(s.path);
    const std::string &n = o.c_array;
    std::string out = "/* XRDMA image of " + srcs + ", written by xrdma-cc --c-array=" + n +
                      " (" + std::to_string(image.size()) +
                      " bytes). Use it with\n"
                      " *   extern const unsigned char " + n + "[];\n"
                      " *   extern const size_t " + n + "_size;\n"
                      " *   MPIX_Ifunc_load_mem(" + n + ", " + n + "_size, \"entry\", &ifunc); */\n"
                      "#include <stddef.h>\n\n"
                      "const unsigned char " + n + "[] __attribute__((aligned(16))) = {";
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < image.size(); ++i) {
        out += i % 16 ? " " : "\n    ";
        out += "0x";
        out += hex[image[i] >> 4];
        out += hex[image[i] & 15];
        out += ",";
    }
    out += "\n};\nconst size_t " + n + "_size = sizeof(" + n + ");\n";
    return std::vector<uint8_t>(out.begin(), out.end());
}

// Write atomically: a temporary file beside @p path, renamed over it, so a
// failed run never leaves a partial image behind.
bool write_file(const std::string &path, const std::vector<uint8_t> &bytes)
{
    std::string tmp = path + ".XXXXXX";
    if (tmp.size() >= sizeof(g_partial_output)) {
        fprintf(stderr, "%s: output path too long: %s\n", prog, path.c_str());
        return false;
    }
    strcpy(g_partial_output, tmp.c_str());
    int fd = mkstemp(g_partial_output);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, path.c_str(), strerror(errno));
        g_partial_output[0] = '\0';
        return false;
    }
    mode_t mask = umask(0);
    umask(mask);
    bool ok = fchmod(fd, 0666 & ~mask) == 0;
    size_t done = 0;
    while (ok && done < bytes.size()) {
        ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = false;
            break;
        }
        done += size_t(n);
    }
    if (close(fd) != 0) ok = false;
    if (ok && rename(g_partial_output, path.c_str()) != 0) ok = false;
    if (!ok) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path.c_str(), strerror(errno));
        unlink(g_partial_output);
    }
    g_partial_output[0] = '\0';
    return ok;
}

bool no_entries(const Options &o)
{
    std::string srcs;
    for (const auto &s : o.sources) srcs += (srcs.empty() ? "" : ", ") + s.path;
    fprintf(stderr,
            "%s: no ifunc entry in %s: define at least one with XRDMA_IFUNC(name) { ... } "
            "(#include <xrdma_ifunc.h>)\n",
            prog, srcs.c_str());
    return false;
}


// Entries of a native part: defined dynamic symbols __xrdma_entry_<name>
// whose function <name> is exported too. Sorted, so images are reproducible.
bool native_entries(const std::vector<uint8_t> &so, const Options &o, std::vector<std::string> *entries)
{
    xrdma::ElfInfo info;
    std::string why;
    if (xrdma::elf_inspect(so.data(), so.size(), &info, &why) != UCX_IFUNC_OK) {
        fprintf(stderr, "%s: clang produced an unreadable shared object: %s\n", prog, why.c_str());
        return false;
    }
    if (info.machine != xrdma::elf_host_machine()) {
        fprintf(stderr, "%s: the shared object is for machine %u, not this host's (%u)\n", prog,
                info.machine, xrdma::elf_host_machine());
        return false;
    }
    std::vector<std::string> defined;
    for (const auto &s : info.dynsyms)
        if (s.defined) defined.push_back(s.name);
    std::sort(defined.begin(), defined.end());
    const size_t mlen = strlen(kEntryMarker);
    for (const auto &name : defined) {
        if (name.compare(0, mlen, kEntryMarker) != 0) continue;
        std::string entry = name.substr(mlen);
        if (entry.size() > xrdma::kMaxEntryLen || !xrdma::is_c_identifier(entry)) {
            fprintf(stderr, "%s: entry marker %s does not name a valid entry\n", prog, name.c_str());
            return false;
        }
        if (!std::binary_search(defined.begin(), defined.end(), entry)) {
            fprintf(stderr, "%s: entry %s has a marker but its function is not exported\n", prog, entry.c_str());
            return false;
        }
        entries->push_back(entry);
    }
    if (entries->empty()) return no_entries(o);
    if (entries->size() > 256) {
        fprintf(stderr, "%s: %zu entries, an image holds at most 256\n", prog, entries->size());
        return false;
    }
    return true;
}

int build(const Options &o)
{
    TempDir tmp;
    if (!tmp.create()) {
        fprintf(stderr, "%s: cannot create a temporary directory: %s\n", prog, strerror(errno));
        return EXIT_FAIL;
    }
    Plan plan = make_plan(o, tmp.path());
    for (const auto &cmd : plan.commands) {
        // Every command writes its output after "-o": track it for removal.
        for (size_t i = 0; i + 1 < cmd.size(); ++i)
            if (cmd[i] == "-o") TempDir::track(cmd[i + 1]);
        if (o.verbose) print_command(stderr, cmd);
        if (!run(cmd)) {
            explain_missing_headers(o, cmd, tmp.path());
            return EXIT_FAIL;
        }
    }

    std::vector<std::string> entries;
    std::vector<xrdma::PartSpec> parts;
    for (const auto &p : plan.parts) {
        xrdma::PartSpec spec{p.kind, p.triple, {}};
        if (!read_part(p.file, &spec.data)) return EXIT_FAIL;
        if (p.kind == PartKind::native_elf && !native_entries(spec.data, o, &entries)) return EXIT_FAIL;
        parts.push_back(std::move(spec));
    }
    // Every part must define the same entries (a target runs any of them).
    for (const auto &p : parts) {
        if (p.kind != PartKind::llvm_bitcode) continue;
        std::vector<std::string> bc_entries;
        std::string why;
        if (xrdma::bitcode_entries(p.data.data(), p.data.size(), &bc_entries, &why) != UCX_IFUNC_OK) {
            fprintf(stderr, "%s: bitcode for %s: %s\n", prog, p.triple.c_str(), why.c_str());
            return EXIT_FAIL;
        }
        if (bc_entries.empty()) {
            if (!no_entries(o)) return EXIT_FAIL;
        } else if (entries.empty()) {
            entries = bc_entries;
        } else if (bc_entries != entries) {
            fprintf(stderr, "%s: the bitcode for %s defines other entries than the %s part (check #if around XRDMA_IFUNC)\n",
                    prog, p.triple.c_str(), parts[0].kind == PartKind::native_elf ? "native" : "first bitcode");
            return EXIT_FAIL;
        }
    }
    if (entries.size() > 256) {
        fprintf(stderr, "%s: %zu entries, an image holds at most 256\n", prog, entries.size());
        return EXIT_FAIL;
    }

    std::vector<uint8_t> image = xrdma::image_build(entries, parts);
    // Check what we wrote with the same parser a target uses.
    std::string why;
    if (xrdma::image_parse(image.data(), image.size(), nullptr, &why) != UCX_IFUNC_OK) {
        fprintf(stderr, "%s: internal error: built an invalid image: %s\n", prog, why.c_str());
        return EXIT_FAIL;
    }
    if (!o.c_array.empty()) image = c_array_source(o, image);
    if (!write_file(o.output, image)) return EXIT_FAIL;
    if (o.verbose) {
        std::string list;
        for (const auto &e : entries) list += (list.empty() ? "" : " ") + e;
        xrdma::Hash h{};
        xrdma::image_peek_hash(image.data(), image.size(), &h);
        fprintf(stderr, "%s: wrote %s (%zu bytes, sha256 %s, entries: %s)\n", prog, o.output.c_str(),
                image.size(), xrdma::hash_hex(h).c_str(), list.c_str());
    }
    return EXIT_OK;
}

}  // namespace

int main(int argc, char **argv)
{
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (o.help) {
        usage(stdout);
        return EXIT_OK;
    }
    if (o.showme) {
        // Show the plan with a placeholder for the directory a run would create.
        const char *t = getenv("TMPDIR");
        Plan plan = make_plan(o, std::string(t && *t ? t : "/tmp") + "/xrdma-cc.XXXXXX");
        for (const auto &cmd : plan.commands) print_command(stdout, cmd);
        return EXIT_OK;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

    return build(o);
}
