// What of a native part would run at load or unload, told apart: the C
// start files every toolchain links into a shared object (crti/crtn's _init
// and _fini, crtbeginS's frame_dummy and __do_global_dtors_aux) from code
// the library's author wrote to run then (constructors, destructors).
#pragma once

#include "ucx_ifunc.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma {

struct LoadPlan {
    // File offsets of the dynamic entries the loaded copy goes without: the
    // start files' DT_INIT, DT_FINI, DT_INIT_ARRAY(SZ), DT_FINI_ARRAY(SZ),
    // and any DT_RUNPATH/DT_RPATH (a search path is never used).
    std::vector<uint64_t> drop;
    // The author's own load-time code, named ("constructor 'setup'").
    std::vector<std::string> user;
};

// Plan the loading of a shared object elf_inspect() accepted.
ucx_ifunc_status_t start_files_plan(const uint8_t *data, size_t size, LoadPlan *plan, std::string *why);

// A copy of the object without the dynamic entries plan.drop names (the
// entries after them move up; the section ends in DT_NULL as before).
std::vector<uint8_t> start_files_strip(const uint8_t *data, size_t size, const LoadPlan &plan);

}  // namespace xrdma
