// ucx_ifunc_register_runtime(): a layer above adds functions to the runtime
// API, and the symbol policy (XRDMA_SYMBOLS=runtime, the default) then lets
// injected code call them, by that name only.
#include "policy.h"
#include "runtime_api.h"
#include "ucx_ifunc.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

extern "C" int test_layer_fn(void) { return 1; }
extern "C" int test_layer_other(void) { return 2; }

void *addr_of(const std::string &name)
{
    for (const auto &s : xrdma::runtime_api_symbols())
        if (s.first == name) return s.second;
    return nullptr;
}

}  // namespace

TEST(RuntimeApi, PluginFunctionsAreThereFromTheStart)
{
    EXPECT_TRUE(xrdma::runtime_api_has("xrdma_reply"));
    EXPECT_TRUE(xrdma::runtime_api_has("xrdma_log"));
    EXPECT_NE(addr_of("xrdma_forward"), nullptr);
    // The MPI layer's accessors are not the plugin's: this program has none.
    EXPECT_FALSE(xrdma::runtime_api_has("xrdma_target"));
}

TEST(RuntimeApi, RegisterChecksArguments)
{
    const ucx_ifunc_runtime_symbol_t no_name[] = {{nullptr, reinterpret_cast<void *>(&test_layer_fn)}};
    const ucx_ifunc_runtime_symbol_t empty_name[] = {{"", reinterpret_cast<void *>(&test_layer_fn)}};
    const ucx_ifunc_runtime_symbol_t no_addr[] = {{"test_layer_fn", nullptr}};
    EXPECT_EQ(ucx_ifunc_register_runtime(nullptr, 1), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_EQ(ucx_ifunc_register_runtime(no_name, 1), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_EQ(ucx_ifunc_register_runtime(empty_name, 1), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_EQ(ucx_ifunc_register_runtime(no_addr, 1), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_FALSE(xrdma::runtime_api_has("test_layer_fn"));
    // A plugin function cannot be replaced.
    const ucx_ifunc_runtime_symbol_t hijack[] = {{"xrdma_reply", reinterpret_cast<void *>(&test_layer_fn)}};
    EXPECT_EQ(ucx_ifunc_register_runtime(hijack, 1), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_NE(addr_of("xrdma_reply"), reinterpret_cast<void *>(&test_layer_fn));
}

TEST(RuntimeApi, RegisteredFunctionsAreAllowedAndBoundToTheirAddress)
{
    std::string why;
    // Defined in this process but not part of the runtime API: refused.
    EXPECT_EQ(xrdma::policy_check_imports({"test_layer_fn"}, &why), UCX_IFUNC_ERR_DENIED) << why;

    const ucx_ifunc_runtime_symbol_t mine[] = {{"test_layer_fn", reinterpret_cast<void *>(&test_layer_fn)}};
    ASSERT_EQ(ucx_ifunc_register_runtime(mine, 1), UCX_IFUNC_OK);
    EXPECT_EQ(ucx_ifunc_register_runtime(mine, 1), UCX_IFUNC_OK);  // again: nothing changes
    EXPECT_EQ(addr_of("test_layer_fn"), reinterpret_cast<void *>(&test_layer_fn));
    EXPECT_EQ(xrdma::policy_check_imports({"test_layer_fn", "xrdma_reply", "memcpy"}, &why), UCX_IFUNC_OK) << why;

    // All or nothing: one clash registers none of the batch.
    const ucx_ifunc_runtime_symbol_t clash[] = {
        {"test_layer_other", reinterpret_cast<void *>(&test_layer_other)},
        {"test_layer_fn", reinterpret_cast<void *>(&test_layer_other)},
    };
    EXPECT_EQ(ucx_ifunc_register_runtime(clash, 2), UCX_IFUNC_ERR_INVALID_PARAM);
    EXPECT_FALSE(xrdma::runtime_api_has("test_layer_other"));
    EXPECT_EQ(addr_of("test_layer_fn"), reinterpret_cast<void *>(&test_layer_fn));
    EXPECT_EQ(xrdma::policy_check_imports({"test_layer_other"}, &why), UCX_IFUNC_ERR_DENIED) << why;
}
