// The libraries an image's library list names (the published API's
// <name>.deps), found as the link editor finds them: a name is looked up in
// the C compiler's library directories and the system's, and a GNU ld script
// found there (Debian's libc.so, GCC's libgcc_s.so: "GROUP ( ... )") is
// followed to the shared objects it names. What nothing here finds is left to
// the caller: the published API only warns about it.
#pragma once

#include <string>
#include <vector>

namespace xrdma {

// What one entry of a library list comes to.
struct ResolvedLibrary {
    // Shared objects to load, in order: paths found in the directories, or
    // the entry itself when this process has loaded it by that name.
    std::vector<std::string> objects;
    // Static archives a linker script names (-lgcc: libgcc.a): linked into
    // programs, never loaded; nothing to do.
    std::vector<std::string> archives;
    // What could not be followed, and why: names found nowhere (neither
    // loaded nor in any directory; the dynamic loader's own search,
    // LD_LIBRARY_PATH and its cache, may still know them), files that are
    // neither shared objects nor linker scripts.
    struct Unfound {
        std::string name;
        std::string why;
    };
    std::vector<Unfound> unfound;
};

// Resolve library-list entry @p name: a path (with '/'), or a file name
// (libgcc_s.so, libc.so.6), searched in library_dirs().
ResolvedLibrary resolve_library(const std::string &name);
// The same, searching @p dirs.
ResolvedLibrary resolve_library(const std::string &name, const std::vector<std::string> &dirs);

// Where resolve_library() looks, in order: the directories of the C
// compiler XRDMA was built with (`cc -print-search-dirs`) that exist here,
// GCC's own directories for this machine (/usr/lib/gcc/<triple>/<version>,
// newest first), then the system's (/lib/<triple>, /usr/lib/<triple>,
// /lib64, /usr/lib64, /lib, /usr/lib, /usr/local/lib).
const std::vector<std::string> &library_dirs();

// The inputs a GNU ld script names (in GROUP, INPUT and AS_NEEDED, in
// order: file names, paths and -lNAME), or false if @p text is no such
// script.
bool linker_script_inputs(const std::string &text, std::vector<std::string> *inputs);

}  // namespace xrdma
