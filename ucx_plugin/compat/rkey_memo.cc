// RkeyPtrMemo's asking side and the ucp_rkey_destroy() interposer that keeps
// it safe (rkey_memo.h).
#include "compat/rkey_memo.h"

#include "xrdma_common/log.h"

#include <dlfcn.h>

#include <cstdlib>

namespace xrdma {

std::atomic<uint64_t> g_rkey_epoch{1};

namespace {

// Whether @p fn lies in this library.
bool ours(void *fn)
{
    Dl_info found{}, mine{};
    return fn && dladdr(fn, &found) && dladdr(reinterpret_cast<void *>(&g_rkey_epoch), &mine) &&
           found.dli_fbase == mine.dli_fbase;
}

using DestroyFn = void (*)(ucp_rkey_h);

// The ucp_rkey_destroy() ours stands in front of: the next one in the lookup
// order; libucp's where there is none after this library (libucp loaded
// first: only this library's own calls come here).
DestroyFn next_destroy()
{
    static const DestroyFn fn = [] {
        void *f = dlsym(RTLD_NEXT, "ucp_rkey_destroy");
        if (!f || ours(f)) {
            void *ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
            f = ucp ? dlsym(ucp, "ucp_rkey_destroy") : nullptr;
        }
        if (!f || ours(f)) {
            XRDMA_ERROR("ucp_rkey_destroy: libucp's is not found");
            abort();
        }
        return reinterpret_cast<DestroyFn>(f);
    }();
    return fn;
}

}  // namespace

bool rkey_destroy_interposed()
{
    static const bool yes = ours(dlsym(RTLD_DEFAULT, "ucp_rkey_destroy"));
    return yes;
}

void *RkeyPtrMemo::ask(ucp_rkey_h rkey, uint64_t raddr)
{
    // The epoch before asking: a destroy meanwhile leaves the entry stale.
    const uint64_t epoch = g_rkey_epoch.load(std::memory_order_relaxed);
    void *p = nullptr;
    if (ucp_rkey_ptr(rkey, raddr, &p) != UCS_OK) p = nullptr;
    if (rkey_destroy_interposed()) entries_[slot(raddr)] = Entry{rkey, raddr, epoch, p};
    return p;
}

}  // namespace xrdma

// Every rkey destroyed makes every memoised answer stale (counted before the
// handle can be reused).
extern "C" void ucp_rkey_destroy(ucp_rkey_h rkey)
{
    xrdma::g_rkey_epoch.fetch_add(1);
    xrdma::next_destroy()(rkey);
}
