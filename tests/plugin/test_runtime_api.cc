// ucx_ifunc_register_runtime(): a layer above adds functions to the runtime
// API, and the symbol policy (XRDMA_SYMBOLS=runtime, the default) then lets
// injected code call them, by that name only. And a fault inside a runtime
// call is the runtime's, never contained (RuntimeCall, fault.h).
#include "load/code_cache.h"
#include "run/context.h"
#include "run/fault.h"
#include "load/policy.h"
#include "run/runtime_api.h"
#include "ucx_ifunc.h"

#include <gtest/gtest.h>

#include <memory>
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

// What runs inside a runtime call (RuntimeCall) is the runtime's, not the
// ifunc's: a fault there is not contained, even where the guard would
// contain it otherwise. Here the image's code is every address (or none),
// so that only RuntimeCall (or the code's range) tells the two apart.
namespace {

struct Code final : xrdma::LoadedCode {
    explicit Code(bool every) : every(every) {}
    void *symbol(const std::string &) const override { return nullptr; }
    bool contains(uintptr_t) const override { return every; }
    bool every;
};

int write_null(xrdma_ctx *, const void *, size_t)
{
    volatile int *volatile p = nullptr;
    *p = 1;
    return 0;
}

int write_null_in_runtime_call(xrdma_ctx *x, const void *args, size_t len)
{
    xrdma::RuntimeCall runtime;
    return write_null(x, args, len);
}

// A guarded call of @p fn, as dispatch_entry() makes it, for an image whose
// code is every address or none.
struct GuardedCall {
    xrdma::CachedImage image;
    std::string entry = "write_null";
    xrdma_ctx x{};
    GuardedCall(xrdma_ifunc_entry_t fn, bool every)
    {
        image.code = std::make_unique<Code>(every);
        x.image = &image;
        x.entry = &entry;
        x.real_entry = fn;
    }
    int run() { return xrdma::guarded_entry(&x, nullptr, 0); }
};

}  // namespace

TEST(RuntimeApi, AFaultInsideARuntimeCallIsNotContained)
{
    GuardedCall ifunc(write_null, true);
    EXPECT_EQ(-1, ifunc.run());
    EXPECT_EQ(UCX_IFUNC_ERR_FAULT, ifunc.x.fail_status);
    EXPECT_NE(std::string::npos, ifunc.x.fail_message.find("SIGSEGV")) << ifunc.x.fail_message;
    GuardedCall again(write_null, true);  // (the guard is ready for the next)
    EXPECT_EQ(-1, again.run());
    EXPECT_EQ(UCX_IFUNC_ERR_FAULT, again.x.fail_status);

    GuardedCall runtime(write_null_in_runtime_call, true);
    EXPECT_DEATH(runtime.run(), "");
    GuardedCall outside(write_null, false);  // not in the image's code
    EXPECT_DEATH(outside.run(), "");
}
