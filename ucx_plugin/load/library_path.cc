// Library-list entries found as the link editor finds them (library_path.h).
// The published API's makefile writes a bitcode ifunc's <name>.deps from
// `gcc -Wl,--trace`: every file the link editor opened, by base name, among
// them linker scripts that only the link editor's directories hold (GCC's
// libgcc_s.so in /usr/lib/gcc/<triple>/<version>). The dynamic loader knows
// neither those directories nor scripts; this does.
#include "load/library_path.h"

#include "image/image.h"
#include "xrdma_common/file.h"
#include "xrdma_config.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

namespace xrdma {

namespace {

// A linker script is a small text file; anything larger is not one.
constexpr size_t kMaxScript = 64 * 1024;
// Scripts naming scripts: deeper than this is a loop.
constexpr int kMaxDepth = 4;

enum class FileKind { none, elf, archive, other };

FileKind kind_of(const std::string &path)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return FileKind::none;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return FileKind::none;
    char head[8] = {0};
    const size_t n = fread(head, 1, sizeof(head), f);
    fclose(f);
    if (n >= 4 && memcmp(head, "\x7f" "ELF", 4) == 0) return FileKind::elf;
    if (n == 8 && memcmp(head, "!<arch>\n", 8) == 0) return FileKind::archive;
    return FileKind::other;
}

// The first of @p dirs that holds a file named @p name, or "".
std::string find_in(const std::vector<std::string> &dirs, const std::string &name)
{
    for (const std::string &d : dirs) {
        std::string p = d + "/" + name;
        if (kind_of(p) != FileKind::none) return p;
    }
    return "";
}

// Whether this process has loaded @p name (RTLD_NOLOAD loads and runs
// nothing; it finds an object by name, or as the same file).
bool loaded(const std::string &name)
{
    void *h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) {
        dlerror();  // (a script the loader tried to read leaves an error behind)
        return false;
    }
    dlclose(h);
    return true;
}

void resolve(const std::string &name, const std::vector<std::string> &dirs, int depth, ResolvedLibrary *out)
{
    auto unfound = [&](const std::string &why) { out->unfound.push_back({name, why}); };
    std::string path = name;
    if (name.find('/') == std::string::npos) {
        if (loaded(name)) {
            out->objects.push_back(name);
            return;
        }
        if ((path = find_in(dirs, name)).empty()) return unfound("found in no library directory");
    }
    switch (kind_of(path)) {
    case FileKind::none: return unfound("no such file");
    case FileKind::elf: out->objects.push_back(path); return;
    case FileKind::archive: out->archives.push_back(path); return;
    case FileKind::other: break;
    }
    std::vector<uint8_t> text;
    std::vector<std::string> inputs;
    if (read_whole_file(path, &text, kMaxScript) != 0 ||
        !linker_script_inputs(std::string(text.begin(), text.end()), &inputs))
        return unfound(path + " is neither a shared object nor a linker script");
    if (depth >= kMaxDepth) return unfound(path + ": linker scripts nested too deep");
    for (const std::string &in : inputs) {
        if (in.compare(0, 2, "-l") == 0 && in.size() > 2) {
            // -lNAME: libNAME.so, else libNAME.a, in each directory in turn.
            std::string found;
            for (const std::string &d : dirs) {
                for (const char *ext : {".so", ".a"}) {
                    const std::string p = d + "/lib" + in.substr(2) + ext;
                    if (kind_of(p) != FileKind::none) {
                        found = p;
                        break;
                    }
                }
                if (!found.empty()) break;
            }
            if (found.empty())
                out->unfound.push_back({in, "named by " + path + ", found in no library directory"});
            else
                resolve(found, dirs, depth + 1, out);
        } else {
            resolve(in, dirs, depth + 1, out);
        }
    }
}

// @p dir, as its real path, at the end of @p dirs unless it is there or does
// not exist.
void add_dir(std::vector<std::string> *dirs, const std::string &dir)
{
    char real[PATH_MAX];
    struct stat st;
    if (dir.empty() || !realpath(dir.c_str(), real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if (std::find(dirs->begin(), dirs->end(), real) == dirs->end()) dirs->push_back(real);
}

// Subdirectories of @p dir, by name.
std::vector<std::string> subdirs(const std::string &dir)
{
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent *e = readdir(d))
        if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
    return out;
}

}  // namespace

bool linker_script_inputs(const std::string &text, std::vector<std::string> *inputs)
{
    // Comments out, then tokens: words (or "quoted" names) and ( ) , alone.
    std::string s;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 2, "/*") == 0) {
            const size_t end = text.find("*/", i + 2);
            if (end == std::string::npos) return false;
            i = end + 1;
            s += ' ';
        } else {
            s += text[i];
        }
    }
    std::vector<std::string> tok;
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (c == '(' || c == ')' || c == ',') {
            tok.emplace_back(1, c);
            ++i;
        } else if (c == '"') {
            const size_t end = s.find('"', i + 1);
            if (end == std::string::npos) return false;
            tok.push_back(s.substr(i + 1, end - i - 1));
            i = end + 1;
        } else {
            size_t j = i;
            while (j < s.size() && !isspace(static_cast<unsigned char>(s[j])) && s[j] != '(' && s[j] != ')' &&
                   s[j] != ',')
                ++j;
            tok.push_back(s.substr(i, j - i));
            i = j;
        }
    }
    // Every top-level word opens a command's parentheses; the words inside
    // GROUP, INPUT and AS_NEEDED (within them) are inputs, those inside any
    // other command (OUTPUT_FORMAT, SEARCH_DIR ...) are its arguments.
    std::vector<bool> collecting;  // one per open parenthesis
    bool any = false;
    for (size_t i = 0; i < tok.size(); ++i) {
        const std::string &t = tok[i];
        if (t == ",") continue;
        if (t == ")") {
            if (collecting.empty()) return false;
            collecting.pop_back();
            continue;
        }
        if (t == "(") return false;  // a parenthesis no command opened
        const bool opens = i + 1 < tok.size() && tok[i + 1] == "(";
        if (opens) {
            const bool inputs_cmd = t == "GROUP" || t == "INPUT" || (t == "AS_NEEDED" && !collecting.empty() &&
                                                                     collecting.back());
            collecting.push_back(inputs_cmd);
            any = any || inputs_cmd;
            ++i;
        } else if (!collecting.empty() && collecting.back()) {
            inputs->push_back(t);
        } else if (collecting.empty()) {
            return false;  // a word outside any command: not a script
        }
    }
    return any && collecting.empty();
}

const std::vector<std::string> &library_dirs()
{
    static const std::vector<std::string> dirs = [] {
        std::vector<std::string> d;
        const std::string cc = XRDMA_CC_LIBRARY_DIRS;
        for (size_t b = 0, e; b <= cc.size(); b = e + 1) {
            e = cc.find(':', b);
            if (e == std::string::npos) e = cc.size();
            add_dir(&d, cc.substr(b, e - b));
        }
        for (const char *base : {"/usr/lib/gcc", "/usr/lib64/gcc"}) {
            for (const std::string &triple : subdirs(base)) {
                if (!triple_is_host(triple)) continue;
                std::vector<std::string> versions = subdirs(std::string(base) + "/" + triple);
                std::sort(versions.begin(), versions.end(),
                          [](const std::string &a, const std::string &b) { return strverscmp(a.c_str(), b.c_str()) > 0; });
                for (const std::string &v : versions) add_dir(&d, std::string(base) + "/" + triple + "/" + v);
            }
        }
        for (const std::string &s : {"/lib/" + host_triple(), "/usr/lib/" + host_triple(), std::string("/lib64"),
                                     std::string("/usr/lib64"), std::string("/lib"), std::string("/usr/lib"),
                                     std::string("/usr/local/lib")})
            add_dir(&d, s);
        return d;
    }();
    return dirs;
}

ResolvedLibrary resolve_library(const std::string &name, const std::vector<std::string> &dirs)
{
    ResolvedLibrary out;
    if (!name.empty()) resolve(name, dirs, 0, &out);
    return out;
}

ResolvedLibrary resolve_library(const std::string &name) { return resolve_library(name, library_dirs()); }

}  // namespace xrdma
