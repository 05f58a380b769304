// Which target symbols injected code may bind to (XRDMA_SYMBOLS):
//   all      anything the process exports;
//   runtime  the XRDMA runtime API and a safe libc subset (default);
//   <file>   exactly the symbols listed in the file (one per line, # comments).
// Checked against an image's imports before any of its code runs.
#pragma once

#include "ucx_ifunc.h"

#include <string>
#include <vector>

namespace xrdma {

// UCX_IFUNC_OK, or UCX_IFUNC_ERR_DENIED with @p why naming the first
// symbol the policy refuses.
ucx_ifunc_status_t policy_check_imports(const std::vector<std::string> &imports, std::string *why);

}  // namespace xrdma
