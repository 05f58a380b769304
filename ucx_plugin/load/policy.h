// Which target symbols injected code may bind to (XRDMA_SYMBOLS):
//   all      anything the process exports;
//   runtime  the XRDMA runtime API and a safe libc subset (default);
//   <file>   exactly the symbols listed in the file (one per line, # comments).
// Checked against an image's imports before any of its code runs.
// The imports also tell where an image's code may run: an import of target
// state pins it to its target; one that travels on (a forward) means its
// invocations do not end where they run.
#pragma once

#include "ucx_ifunc.h"

#include <string>
#include <vector>

namespace xrdma {

// UCX_IFUNC_OK, UCX_IFUNC_ERR_LINK naming the first symbol no loaded object
// defines (it could not link under any policy), or UCX_IFUNC_ERR_DENIED
// with @p why naming the first symbol the policy refuses.
ucx_ifunc_status_t policy_check_imports(const std::vector<std::string> &imports, std::string *why);

// Whether injected code may make this process load library @p name (a
// native part's DT_NEEDED, a line of an image's library list). Loading a
// library runs its constructors and adds its symbols: with
// XRDMA_SYMBOLS=all anything goes; under the other policies only a library
// the process has already loaded (nothing new runs), else
// UCX_IFUNC_ERR_DENIED with @p why naming it.
ucx_ifunc_status_t policy_check_library(const std::string &name, std::string *why);

// The first of @p imports that ties code to the process it was sent to (the
// runtime calls that return target-only state: xrdma_user_ptr,
// xrdma_target_args), or "" if none does.
std::string policy_target_state_import(const std::vector<std::string> &imports);

// The first of @p imports through which an invocation travels on from
// where it runs (xrdma_forward), or "" if none does: code without one
// succeeds, fails or replies where it runs.
std::string policy_travelling_import(const std::vector<std::string> &imports);

// Whether every library function the policy lets injected code call holds
// no lock (the runtime set, or an allowlist within it; names the process
// does not define do not count): then a fault inside
// one of them can be contained (fault.cc). False for XRDMA_SYMBOLS=all.
bool policy_library_calls_lock_free();

// The library functions of the runtime set (XRDMA_SYMBOLS=runtime; the
// runtime API itself is runtime_api.h), to name a function by its address in
// a fault report.
const std::vector<std::string> &policy_runtime_symbols();

}  // namespace xrdma
