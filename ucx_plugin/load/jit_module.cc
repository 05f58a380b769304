// The bitcode compiler on demand: LLVM (libLLVM, about 50 MB resident) is
// mapped only by a process that receives bitcode. loader_jit.cc is built as
// the module libxrdma_jit.so, installed in $(pkglibdir); the first call
// below that needs it loads it and keeps it for the life of the process
// (code it compiled may run at any time; RTLD_NODELETE).
//
// Where the module is looked for, first found wins:
//   1. XRDMA_JIT_MODULE, if set (a path; the build tree's tests, relocations);
//   2. beside this library: <dir>/xrdma/libxrdma_jit.so (installed layout:
//      $(libdir)/xrdma is $(pkglibdir)), then <dir>/libxrdma_jit.so (the
//      build tree's .libs);
//   3. $(pkglibdir)/libxrdma_jit.so as configured.
// A program that links loader_jit.cc itself (the aarch64 test peer, built
// without libtool) has the module's entry in its own image: the weak
// reference below finds it, and nothing is loaded.
#include "load/loader_jit.h"

#include "xrdma_common/config.h"
#include "xrdma_common/log.h"
#include "xrdma_config.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" const xrdma::JitModule *xrdma_jit_module_v1(void) __attribute__((weak));

namespace xrdma {

namespace {

struct Loaded {
    const JitModule *module = nullptr;
    std::string error;  // why it could not be loaded
};

std::string library_dir()
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&library_dir), &info) || !info.dli_fname) return "";
    std::string path = info.dli_fname;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

const JitModule *check(const JitModule *m, const std::string &path, std::string *why)
{
    if (!m) {
        *why = path + ": " XRDMA_JIT_MODULE_ENTRY "() returned nothing";
        return nullptr;
    }
    if (m->size != sizeof(JitModule) || m->version != kJitModuleVersion ||
        strcmp(m->package_version, PACKAGE_VERSION) != 0) {
        *why = path + " is from another build (xrdma " + m->package_version + ", module interface " +
               std::to_string(m->version) + "; this library is " PACKAGE_VERSION ", interface " +
               std::to_string(kJitModuleVersion) + ")";
        return nullptr;
    }
    return m;
}

Loaded load()
{
    Loaded r;
    if (xrdma_jit_module_v1) {  // linked in
        r.module = check(xrdma_jit_module_v1(), "the linked-in JIT", &r.error);
        return r;
    }
    std::vector<std::string> candidates;
    const char *env = getenv("XRDMA_JIT_MODULE");
    if (env && *env) {
        candidates.push_back(env);  // only this one: a wrong path should not fall back silently
    } else {
        std::string dir = library_dir();
        if (!dir.empty()) {
            candidates.push_back(dir + "/xrdma/" XRDMA_JIT_MODULE_FILE);
            candidates.push_back(dir + "/" XRDMA_JIT_MODULE_FILE);
        }
        candidates.push_back(XRDMA_PKGLIBDIR "/" XRDMA_JIT_MODULE_FILE);
    }
    std::string tried;
    for (const std::string &path : candidates) {
        if (candidates.size() > 1 && access(path.c_str(), F_OK) != 0) {
            tried += (tried.empty() ? "" : ", ") + path;
            continue;
        }
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h) {
            const char *e = dlerror();
            r.error = "cannot load the bitcode compiler module: " + std::string(e ? e : path);
            return r;
        }
        auto entry = reinterpret_cast<const JitModule *(*)()>(dlsym(h, XRDMA_JIT_MODULE_ENTRY));
        if (!entry) {
            r.error = path + " is not the bitcode compiler module (no " XRDMA_JIT_MODULE_ENTRY ")";
            return r;
        }
        r.module = check(entry(), path, &r.error);
        if (r.module) XRDMA_DEBUG("bitcode compiler module %s loaded", path.c_str());
        return r;
    }
    r.error = "the bitcode compiler module " XRDMA_JIT_MODULE_FILE " is not installed (looked for " + tried +
              "; XRDMA_JIT_MODULE names it)";
    return r;
}

std::mutex g_mu;
Loaded g_loaded;
std::atomic<bool> g_tried{false};

// The module, loaded on first call; nullptr with @p why set if it cannot be.
const JitModule *module(std::string *why)
{
    if (!g_tried.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> g(g_mu);
        if (!g_tried.load(std::memory_order_relaxed)) {
            g_loaded = load();
            if (!g_loaded.module) XRDMA_WARN("%s: bitcode images cannot run here", g_loaded.error.c_str());
            g_tried.store(true, std::memory_order_release);
        }
    }
    if (!g_loaded.module && why) *why = g_loaded.error;
    return g_loaded.module;
}

// The module if loaded already; never loads it.
const JitModule *module_if_loaded()
{
    return g_tried.load(std::memory_order_acquire) ? g_loaded.module : nullptr;
}

}  // namespace

ucx_ifunc_status_t load_bitcode(const ImageView &img, const PartView &part, const std::string &label,
                                std::unique_ptr<LoadedCode> *out, std::string *why, bool trusted)
{
    std::string err;
    const JitModule *m = module(&err);
    if (!m) {
        *why = "this target cannot compile bitcode: " + err;
        return UCX_IFUNC_ERR_LINK;
    }
    return m->load_bitcode(img, part, label, out, why, trusted);
}

JitCounters jit_counters()
{
    // Counting never loads LLVM.
    const JitModule *m = module_if_loaded();
    return m ? m->counters() : JitCounters{0, 0, 0};
}

ucx_ifunc_status_t bitcode_entries(const uint8_t *data, size_t size, std::vector<std::string> *entries,
                                   std::string *why)
{
    std::string err;
    const JitModule *m = module(&err);
    if (!m) {
        *why = "cannot read bitcode: " + err;
        return UCX_IFUNC_ERR_LINK;
    }
    return m->bitcode_entries(data, size, entries, why);
}

std::string jit_target_description()
{
    std::string err;
    const JitModule *m = module(&err);
    return m ? m->target_description() : "unavailable: " + err;
}

std::string jit_cache_key(const Hash &hash)
{
    const JitModule *m = module(nullptr);
    return m ? m->cache_key(hash) : std::string();
}

ucx_ifunc_status_t jit_compile_start(const ImageView &img, const PartView &part, const std::string &label,
                                     std::string *key)
{
    const JitModule *m = module(nullptr);
    return m ? m->compile_start(img, part, label, key) : UCX_IFUNC_OK;  // (load_bitcode() says why not)
}

unsigned jit_compile_poll()
{
    const JitModule *m = module_if_loaded();
    return m ? m->compile_poll() : 0;
}

bool jit_compile_done(const std::string &key)
{
    const JitModule *m = module_if_loaded();
    return !m || m->compile_done(key);
}

void jit_compile_release(const std::string &key)
{
    if (const JitModule *m = module_if_loaded()) m->compile_release(key);
}

bool jit_module_loaded() { return module_if_loaded() != nullptr; }

}  // namespace xrdma
