// The runtime API injected code may call by name: the one table of it. The
// plugin's own functions (xrdma_reply() ..., ucx_ifunc/runtime.h) are in it from
// the start; a layer above adds its own with ucx_ifunc_register_runtime()
// (e.g. window accessors). XRDMA_SYMBOLS=runtime allows every
// name in it, and the bitcode loader binds each to its address here.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace xrdma {

// Whether @p name is a runtime function (the plugin's or a registered one).
bool runtime_api_has(const std::string &name);

// Every runtime function with its address, the plugin's first.
std::vector<std::pair<std::string, void *>> runtime_api_symbols();

}  // namespace xrdma
