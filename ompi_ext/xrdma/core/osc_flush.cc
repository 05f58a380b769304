// MPI_Win_flush without Open MPI's component flush when the component has
// nothing of its own to complete (osc_flush.h).
#include "osc_flush.h"

#include "osc_table.h"
#include "core_api.h"

#include "xrdma_common/config.h"
#include "xrdma_common/log.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace xrdma::mpi {

// (No MPI call runs concurrently with another: plain fields.)
struct OscFlush {
    MPI_Win win;
    int size;
    void *orig[XRDMA_OSC_NSLOTS];  // the component's own functions
    // RMA calls issued to each target since a flush or unlock completed them.
    std::vector<uint64_t> issued;
    // A passive epoch the component confirmed, not ended since.
    bool epoch = false;
    unsigned long long skipped = 0, passed = 0;  // flushes (tests)

    // The component's function for slot S, called as the wrapper @p self is.
    template <int S, typename R, typename... A>
    R call(R (*self)(A...), A... a)
    {
        (void)self;
        return reinterpret_cast<R (*)(A...)>(orig[S])(a...);
    }
    bool in_range(int t) const { return t >= 0 && t < size; }
    void count(int t)
    {
        if (in_range(t)) issued[size_t(t)]++;
    }
    // The component completes what was issued to @p t (-1: every target);
    // on success nothing is left (no other MPI call ran meanwhile).
    template <typename Fn>
    int completing(int t, Fn &&real)
    {
        const int rc = real();
        if (rc == MPI_SUCCESS) {
            if (in_range(t))
                issued[size_t(t)] = 0;
            else if (t < 0)
                std::fill(issued.begin(), issued.end(), 0);
        }
        return rc;
    }
};

namespace {

// Wrapped windows, and the last one looked up (a flush or a stream of puts
// names one window; no MPI call runs concurrently with another, so one
// memo serves every thread).
std::mutex g_mu;
std::unordered_map<MPI_Win, OscFlush *> g_wrapped;
MPI_Win g_last_win = nullptr;
OscFlush *g_last = nullptr;

// Only the wrappers of a wrapped window call these: it is in the table.
__attribute__((noinline)) OscFlush *lookup(MPI_Win win)
{
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_wrapped.find(win);
    if (it == g_wrapped.end()) {
        // (A bug: the component's own function is not known here.)
        XRDMA_ERROR("window %p: its one-sided component's table is wrapped, but XRDMA does not know the window",
                    static_cast<void *>(win));
        abort();
    }
    g_last_win = win;
    return g_last = it->second;
}
inline OscFlush *of(MPI_Win win) { return g_last_win == win ? g_last : lookup(win); }

// The RMA calls: counted, then the component's function ends the wrapper
// (a jump; with the lookup of another window out of line, the wrapper is
// ~30 instructions, not ~45). An erroneous call is counted too,
// which at worst sends the next flush to the component.
template <int S, typename... A>
__attribute__((noinline)) int counted(int (*self)(A...), int t, MPI_Win win, A... a)
{
    OscFlush *f = lookup(win);
    f->count(t);
    return f->call<S>(self, a...);
}
#define XRDMA_OSC_COUNTED(name, SLOT, target, params, args)                \
    int name params                                                        \
    {                                                                      \
        if (__builtin_expect(g_last_win != win, 0))                        \
            return counted<SLOT>(name, target, win, args);                 \
        OscFlush *f = g_last;                                              \
        f->count(target);                                                  \
        return f->call<SLOT>(name, args);                                  \
    }
#define A(...) __VA_ARGS__
XRDMA_OSC_COUNTED(put, XRDMA_OSC_PUT, t,
                  (const void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Win win),
                  A(o, oc, od, t, d, tc, td, win))
XRDMA_OSC_COUNTED(get, XRDMA_OSC_GET, t,
                  (void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Win win),
                  A(o, oc, od, t, d, tc, td, win))
XRDMA_OSC_COUNTED(accumulate, XRDMA_OSC_ACCUMULATE, t,
                  (const void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Op op,
                   MPI_Win win),
                  A(o, oc, od, t, d, tc, td, op, win))
XRDMA_OSC_COUNTED(compare_and_swap, XRDMA_OSC_COMPARE_AND_SWAP, t,
                  (const void *o, const void *c, void *r, MPI_Datatype dt, int t, ptrdiff_t d, MPI_Win win),
                  A(o, c, r, dt, t, d, win))
XRDMA_OSC_COUNTED(fetch_and_op, XRDMA_OSC_FETCH_AND_OP, t,
                  (const void *o, void *r, MPI_Datatype dt, int t, ptrdiff_t d, MPI_Op op, MPI_Win win),
                  A(o, r, dt, t, d, op, win))
XRDMA_OSC_COUNTED(get_accumulate, XRDMA_OSC_GET_ACCUMULATE, t,
                  (const void *o, int oc, MPI_Datatype od, void *r, int rc_, MPI_Datatype rd, int t, ptrdiff_t d,
                   int tc, MPI_Datatype td, MPI_Op op, MPI_Win win),
                  A(o, oc, od, r, rc_, rd, t, d, tc, td, op, win))
XRDMA_OSC_COUNTED(rput, XRDMA_OSC_RPUT, t,
                  (const void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Win win,
                   MPI_Request *req),
                  A(o, oc, od, t, d, tc, td, win, req))
XRDMA_OSC_COUNTED(rget, XRDMA_OSC_RGET, t,
                  (void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Win win,
                   MPI_Request *req),
                  A(o, oc, od, t, d, tc, td, win, req))
XRDMA_OSC_COUNTED(raccumulate, XRDMA_OSC_RACCUMULATE, t,
                  (const void *o, int oc, MPI_Datatype od, int t, ptrdiff_t d, int tc, MPI_Datatype td, MPI_Op op,
                   MPI_Win win, MPI_Request *req),
                  A(o, oc, od, t, d, tc, td, op, win, req))
XRDMA_OSC_COUNTED(rget_accumulate, XRDMA_OSC_RGET_ACCUMULATE, t,
                  (const void *o, int oc, MPI_Datatype od, void *r, int rc_, MPI_Datatype rd, int t, ptrdiff_t d,
                   int tc, MPI_Datatype td, MPI_Op op, MPI_Win win, MPI_Request *req),
                  A(o, oc, od, r, rc_, rd, t, d, tc, td, op, win, req))
#undef A
#undef XRDMA_OSC_COUNTED

// Passive epochs: begun when the component's lock succeeds; an unlock may
// end the last one (the next flush asks the component again).
int lock(int type, int t, int assert_, MPI_Win win)
{
    OscFlush *f = of(win);
    const int rc = f->call<XRDMA_OSC_LOCK>(lock, type, t, assert_, win);
    f->epoch |= rc == MPI_SUCCESS;
    return rc;
}
int lock_all(int assert_, MPI_Win win)
{
    OscFlush *f = of(win);
    const int rc = f->call<XRDMA_OSC_LOCK_ALL>(lock_all, assert_, win);
    f->epoch |= rc == MPI_SUCCESS;
    return rc;
}
int unlock(int t, MPI_Win win)
{
    OscFlush *f = of(win);
    f->epoch = false;
    return f->completing(t, [&] { return f->call<XRDMA_OSC_UNLOCK>(unlock, t, win); });
}
int unlock_all(MPI_Win win)
{
    OscFlush *f = of(win);
    f->epoch = false;
    return f->completing(-1, [&] { return f->call<XRDMA_OSC_UNLOCK_ALL>(unlock_all, win); });
}

// The flushes: to one target at once when clean, else the component's (its
// success confirms the epoch). osc ucx's flush_local is its flush: it
// completes at the target too.
template <int S>
int flush_one(int t, MPI_Win win)
{
    OscFlush *f = of(win);
    if (f->epoch && f->in_range(t) && !f->issued[size_t(t)]) {
        f->skipped++;
        return MPI_SUCCESS;
    }
    f->passed++;
    const int rc = f->completing(t, [&] { return f->call<S>(flush_one<S>, t, win); });
    f->epoch |= rc == MPI_SUCCESS;
    return rc;
}
template <int S>
int flush_every(MPI_Win win)
{
    OscFlush *f = of(win);
    f->passed++;
    const int rc = f->completing(-1, [&] { return f->call<S>(flush_every<S>, win); });
    f->epoch |= rc == MPI_SUCCESS;
    return rc;
}

void *const kWrappers[XRDMA_OSC_NSLOTS] = {
    reinterpret_cast<void *>(put),          reinterpret_cast<void *>(get),
    reinterpret_cast<void *>(accumulate),   reinterpret_cast<void *>(compare_and_swap),
    reinterpret_cast<void *>(fetch_and_op), reinterpret_cast<void *>(get_accumulate),
    reinterpret_cast<void *>(rput),         reinterpret_cast<void *>(rget),
    reinterpret_cast<void *>(raccumulate),  reinterpret_cast<void *>(rget_accumulate),
    reinterpret_cast<void *>(lock),         reinterpret_cast<void *>(unlock),
    reinterpret_cast<void *>(lock_all),     reinterpret_cast<void *>(unlock_all),
    reinterpret_cast<void *>(flush_one<XRDMA_OSC_FLUSH>),
    reinterpret_cast<void *>(flush_every<XRDMA_OSC_FLUSH_ALL>),
    reinterpret_cast<void *>(flush_one<XRDMA_OSC_FLUSH_LOCAL>),
    reinterpret_cast<void *>(flush_every<XRDMA_OSC_FLUSH_LOCAL_ALL>),
};

// Each slot holds osc ucx's function of that name: the table is laid out as
// this build's headers say, and the component is the one measured.
bool is_osc_ucx(void **slots[XRDMA_OSC_NSLOTS])
{
    for (int s = 0; s < XRDMA_OSC_NSLOTS; ++s) {
        Dl_info info;
        if (!slots[s] || !*slots[s] || !dladdr(*slots[s], &info) || !info.dli_sname ||
            strcmp(info.dli_sname, xrdma_osc_ucx_name(s)) != 0)
            return false;
    }
    return true;
}

}  // namespace

OscFlushPtr osc_flush_wrap(MPI_Win win, int size)
{
    if (!config_get_ull("XRDMA_FLUSH_SKIP")) return nullptr;
    int level = MPI_THREAD_MULTIPLE;
    MPI_Query_thread(&level);
    // Not under MPI_THREAD_MULTIPLE: the counts hold only while no two MPI
    // calls run at once. A flush zeroes its target's count when the
    // component's flush returns, which would also discount a put another
    // thread issued meanwhile, one that flush need not have completed, and
    // the next flush would return before it completed. The counts, the
    // epoch and the memo of the last window (g_last_win, g_last) are plain
    // fields, used without a lock.
    if (level == MPI_THREAD_MULTIPLE) return nullptr;
    void **slots[XRDMA_OSC_NSLOTS];
    for (int s = 0; s < XRDMA_OSC_NSLOTS; ++s) slots[s] = xrdma_osc_slot(win, s);
    if (!is_osc_ucx(slots)) return nullptr;
    OscFlushPtr f(new OscFlush);
    f->win = win;
    f->size = size;
    f->issued.assign(size_t(size), 1);  // (what came before: unknown)
    {
        std::lock_guard<std::mutex> lock(g_mu);
        g_wrapped[win] = f.get();
    }
    for (int s = 0; s < XRDMA_OSC_NSLOTS; ++s) {
        f->orig[s] = *slots[s];
        *slots[s] = kWrappers[s];
    }
    return f;
}

void OscFlushRelease::operator()(OscFlush *f) const
{
    // (MPI_Win_free: no other call on the window runs now.)
    for (int s = 0; s < XRDMA_OSC_NSLOTS; ++s)
        if (void **slot = xrdma_osc_slot(f->win, s)) *slot = f->orig[s];
    {
        std::lock_guard<std::mutex> lock(g_mu);
        g_wrapped.erase(f->win);
        g_last_win = nullptr;
    }
    delete f;
}

}  // namespace xrdma::mpi

extern "C" int xrdma_mpi_osc_flush_counts(MPI_Win win, unsigned long long out[2])
{
    using namespace xrdma::mpi;
    out[0] = out[1] = 0;
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_wrapped.find(win);
    if (it == g_wrapped.end()) return 0;
    out[0] = it->second->skipped;
    out[1] = it->second->passed;
    return 1;
}
