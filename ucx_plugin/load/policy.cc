#include "load/policy.h"

#include "image/image.h"
#include "xrdma_common/config.h"
#include "xrdma_common/file.h"
#include "xrdma_common/log.h"
#include "run/runtime_api.h"

#include <algorithm>
#include <dlfcn.h>
#include <mutex>
#include <unordered_set>

namespace xrdma {

namespace {

// Beside the runtime API (runtime_api.h): libc functions that touch only
// memory the caller hands them (no files, processes, sockets, environment or
// signals) and take no lock: fault.cc contains a fault inside them.
const char *const kRuntime[] = {
    // string/memory
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp",
    "strchr", "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat", "snprintf", "vsnprintf",
    "__memcpy_chk", "__memmove_chk", "__memset_chk", "__strcpy_chk", "__strncpy_chk", "__strcat_chk",
    "__snprintf_chk", "__vsnprintf_chk", "__stack_chk_fail",
    // arithmetic and sorting
    "abs", "labs", "llabs", "div", "ldiv", "qsort", "bsearch",
    "sqrt", "sqrtf", "cbrt", "exp", "expf", "exp2", "log", "logf", "log2", "log10", "pow", "powf",
    "sin", "sinf", "cos", "cosf", "tan", "atan", "atan2", "floor", "floorf", "ceil", "ceilf",
    "fabs", "fabsf", "fmod", "fmodf", "round", "trunc", "fmin", "fmax", "fma",
    // the published API (ucx_ifunc/ucp_compat.h) from inside <name>_main:
    // build, fill, send and free a reply message (they touch only the
    // message and put into memory the program registered)
    "ucp_ifunc_msg_create", "ucp_ifunc_msg_free", "ucp_ifunc_msg_get_payload_ptr", "ucp_ifunc_send_nbix",
    // what every shared object's start files reference (weak, harmless)
    "__cxa_finalize", "__gmon_start__", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable",
};

struct Policy {
    bool all = false;
    std::string name;
    std::unordered_set<std::string> allowed;
    bool broken = false;  // an allowlist file that cannot be read denies all
};

const Policy &policy()
{
    static Policy p;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string v = config_get("XRDMA_SYMBOLS");
        p.name = v;
        if (v == "all") {
            p.all = true;
        } else if (v == "runtime") {
            p.allowed.insert(std::begin(kRuntime), std::end(kRuntime));
        } else {
            std::vector<uint8_t> text;  // one name a line, '#' comments (name_lines)
            std::vector<std::string> names;
            if (read_whole_file(v, &text) != 0) {
                XRDMA_ERROR("XRDMA_SYMBOLS=%s: cannot read the allowlist: every import is denied", v.c_str());
                p.broken = true;
            }
            name_lines(reinterpret_cast<const char *>(text.data()), text.size(), &names);
            p.allowed.insert(names.begin(), names.end());
        }
    });
    return p;
}

// Whether the runtime set (XRDMA_SYMBOLS=runtime) has @p s.
bool in_runtime_set(const std::string &s)
{
    return std::find(std::begin(kRuntime), std::end(kRuntime), s) != std::end(kRuntime) || runtime_api_has(s);
}

// Whether the policy lets injected code bind to @p s.
bool allowed(const Policy &p, const std::string &s)
{
    return p.allowed.count(s) || (p.name == "runtime" && runtime_api_has(s));
}

}  // namespace

bool policy_library_calls_lock_free()
{
    const Policy &p = policy();
    if (p.all) return false;
    if (p.name == "runtime" || p.broken) return true;
    // A name outside the runtime set counts only if the process defines it
    // (an allowlist may name symbols that bind to nothing).
    for (const std::string &s : p.allowed)
        if (!in_runtime_set(s) && dlsym(RTLD_DEFAULT, s.c_str())) return false;
    return true;
}

const std::vector<std::string> &policy_runtime_symbols()
{
    static const std::vector<std::string> names(std::begin(kRuntime), std::end(kRuntime));
    return names;
}

ucx_ifunc_status_t policy_check_imports(const std::vector<std::string> &imports, std::string *why)
{
    const Policy &p = policy();
    if (p.all) return UCX_IFUNC_OK;
    for (const std::string &s : imports) {
        // What no loaded object defines cannot link under any policy: say so
        // (a link error) rather than blame the policy.
        if (!allowed(p, s) && !dlsym(RTLD_DEFAULT, s.c_str())) {
            *why = "symbol '" + printable(s, s.size()) + "' is defined by no object loaded in this process";
            return UCX_IFUNC_ERR_LINK;
        }
        if (p.broken || !allowed(p, s)) {
            *why = "symbol '" + printable(s, s.size()) + "' is not allowed by XRDMA_SYMBOLS=" + p.name +
                   (p.broken ? " (allowlist unreadable)" : " (set XRDMA_SYMBOLS=all or list it in an allowlist file)");
            return UCX_IFUNC_ERR_DENIED;
        }
    }
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t policy_check_library(const std::string &name, std::string *why)
{
    const Policy &p = policy();
    if (p.all) return UCX_IFUNC_OK;
    // RTLD_NOLOAD only finds an object already there (by name, or as the
    // same file); it loads and runs nothing.
    if (!name.empty()) {
        if (void *h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
            dlclose(h);
            return UCX_IFUNC_OK;
        }
    }
    *why = "library '" + name + "' is not loaded in this process, and XRDMA_SYMBOLS=" + p.name +
           " lets injected code use only what the process has (XRDMA_SYMBOLS=all allows loading it)";
    return UCX_IFUNC_ERR_DENIED;
}

std::string policy_target_state_import(const std::vector<std::string> &imports)
{
    for (const std::string &s : imports)
        if (s == "xrdma_user_ptr" || s == "xrdma_target_args") return s;
    return "";
}

std::string policy_travelling_import(const std::vector<std::string> &imports)
{
    for (const std::string &s : imports)
        if (s == "xrdma_forward") return s;
    return "";
}

}  // namespace xrdma
