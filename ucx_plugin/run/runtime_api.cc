#include "run/runtime_api.h"

#include "ucx_ifunc.h"
#include "ucx_ifunc/runtime.h"

#include <mutex>

namespace xrdma {

namespace {

struct Table {
    std::mutex mu;
    std::vector<std::pair<std::string, void *>> symbols = {
        {"xrdma_reply", reinterpret_cast<void *>(&xrdma_reply)},
        {"xrdma_forward", reinterpret_cast<void *>(&xrdma_forward)},
        {"xrdma_origin", reinterpret_cast<void *>(&xrdma_origin)},
        {"xrdma_rank", reinterpret_cast<void *>(&xrdma_rank)},
        {"xrdma_size", reinterpret_cast<void *>(&xrdma_size)},
        {"xrdma_user_ptr", reinterpret_cast<void *>(&xrdma_user_ptr)},
        {"xrdma_target_args", reinterpret_cast<void *>(&xrdma_target_args)},
        {"xrdma_log", reinterpret_cast<void *>(&xrdma_log)},  // rate-limited (XRDMA_LOG_RATE)
    };
};

Table &table()
{
    static Table t;
    return t;
}

}  // namespace

bool runtime_api_has(const std::string &name)
{
    Table &t = table();
    std::lock_guard<std::mutex> guard(t.mu);
    for (const auto &s : t.symbols)
        if (s.first == name) return true;
    return false;
}

std::vector<std::pair<std::string, void *>> runtime_api_symbols()
{
    Table &t = table();
    std::lock_guard<std::mutex> guard(t.mu);
    return t.symbols;
}

}  // namespace xrdma

ucx_ifunc_status_t ucx_ifunc_register_runtime(const ucx_ifunc_runtime_symbol_t *symbols, size_t count)
{
    if (count && !symbols) return UCX_IFUNC_ERR_INVALID_PARAM;
    for (size_t i = 0; i < count; ++i)
        if (!symbols[i].name || !*symbols[i].name || !symbols[i].address) return UCX_IFUNC_ERR_INVALID_PARAM;
    xrdma::Table &t = xrdma::table();
    std::lock_guard<std::mutex> guard(t.mu);
    // All or nothing: a name already there with another address is refused.
    for (size_t i = 0; i < count; ++i)
        for (const auto &s : t.symbols)
            if (s.first == symbols[i].name && s.second != symbols[i].address) return UCX_IFUNC_ERR_INVALID_PARAM;
    for (size_t i = 0; i < count; ++i) {
        bool known = false;
        for (const auto &s : t.symbols) known = known || s.first == symbols[i].name;
        if (!known) t.symbols.emplace_back(symbols[i].name, symbols[i].address);
    }
    return UCX_IFUNC_OK;
}
