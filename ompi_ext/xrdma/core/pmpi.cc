// PMPI interposition: XRDMA sets up inside the window calls the application
// already makes, and every synchronisation call also completes outstanding
// X-operations (remote completion: the function ran, the reply landed) and
// reports their first error through the window's error handler.
#include "errors.h"
#include "mpi_impl.h"
#include "runtime.h"
#include "window.h"

#include <sched.h>

using namespace xrdma::mpi;

namespace {

// What a synchronisation call returns: the real call's failure first, then
// the first error of the X-ops it completed (through the window's handler).
int sync_result(MPI_Win win, int rc, int err)
{
    if (rc != MPI_SUCCESS) return rc;
    if (err != MPI_SUCCESS) {
        MPI_Win_call_errhandler(win, err);
        return err;
    }
    return MPI_SUCCESS;
}

// Complete X-ops to @p target (-1: all), then run the real call (which may
// end an epoch or synchronise with the target: the X-ops are done by then).
template <typename Fn>
int sync_call(MPI_Win win, int target, Fn real)
{
    int err = window_complete(win, target);
    return sync_result(win, real(), err);
}

// A flush: the real call first, then the X-ops. A flush completes the
// caller's operations and synchronises with nobody, so the two may finish
// in either order; this way the component's own flush runs while the
// X-ops' answers are on their way instead of after they came, and its
// progress (Open MPI's engine) already serves them. (With no RMA call of
// its own to complete it returns at once: osc_flush.h.)
template <typename Fn>
int flush_call(MPI_Win win, int target, Fn real)
{
    int rc = real();
    return sync_result(win, rc, window_complete(win, target));
}

// A window's creation: creation synchronises (mpi_impl.h), then MPI's call
// @p real, then XRDMA's set-up; the window's memory is *@p base once
// @p real returned (nullptr: a dynamic window).
template <typename Fn>
int create_call(MPI_Comm comm, MPI_Win *win, WinKind kind, void *const *base, MPI_Aint size, MPI_Aint disp_unit,
                MPI_Info info, Fn real)
{
    int rc = mpi_meet(comm);
    if (rc == MPI_SUCCESS) rc = real();
    if (rc != MPI_SUCCESS) return rc;
    errors_init();
    mpi_window_created(*win, comm);
    return window_setup(*win, comm, kind, base ? *base : nullptr, size, disp_unit, info);
}

}  // namespace

extern "C" {

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) errors_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        Runtime::get().thread_level = *provided;
        errors_init();
    }
    return rc;
}

int MPI_Finalize(void)
{
    Runtime::get().stop();
    return PMPI_Finalize();
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create_call(comm, win, WinKind::created, &base, size, disp_unit, info,
                       [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); });
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return create_call(comm, win, WinKind::allocated, static_cast<void **>(baseptr), size, disp_unit, info,
                       [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win); });
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                            MPI_Win *win)
{
    return create_call(comm, win, WinKind::shared, static_cast<void **>(baseptr), size, disp_unit, info,
                       [&] { return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win); });
}

#if MPI_VERSION >= 4
// MPI-4's large-count forms make the same windows (disp_unit an MPI_Aint).
int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create_call(comm, win, WinKind::created, &base, size, disp_unit, info,
                       [&] { return PMPI_Win_create_c(base, size, disp_unit, info, comm, win); });
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return create_call(comm, win, WinKind::allocated, static_cast<void **>(baseptr), size, disp_unit, info,
                       [&] { return PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win); });
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win)
{
    return create_call(comm, win, WinKind::shared, static_cast<void **>(baseptr), size, disp_unit, info,
                       [&] { return PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win); });
}
#endif

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create_call(comm, win, WinKind::dynamic, nullptr, 0, 1, info,
                       [&] { return PMPI_Win_create_dynamic(info, comm, win); });
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = PMPI_Win_attach(win, base, size);
    if (rc != MPI_SUCCESS) return rc;
    std::lock_guard<std::recursive_mutex> guard(Runtime::get().mu);
    if (Window *w = window_find(win)) w->attached.emplace_back(reinterpret_cast<uintptr_t>(base), size_t(size));
    return rc;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    {
        std::lock_guard<std::recursive_mutex> guard(Runtime::get().mu);
        if (Window *w = window_find(win))
            for (auto it = w->attached.begin(); it != w->attached.end(); ++it)
                if (it->first == reinterpret_cast<uintptr_t>(base)) {
                    w->attached.erase(it);
                    break;
                }
    }
    return PMPI_Win_detach(win, base);
}

int MPI_Win_free(MPI_Win *win)
{
    if (!win) return PMPI_Win_free(win);
    MPI_Win w = *win;
    // This process's X-ops on it complete first; the window stays known
    // until every process has entered MPI_Win_free (which synchronises them,
    // Open MPI's and MPICH's alike: their osc components end with a barrier),
    // so that X-ops others made before they entered still find it here.
    int err = window_release(w);
    int rc = mpi_window_meet(w);
    if (rc == MPI_SUCCESS) rc = PMPI_Win_free(win);
    if (rc == MPI_SUCCESS) {
        window_forget(w);
        mpi_window_freed(w);
    }
    if (rc == MPI_SUCCESS && err != MPI_SUCCESS) {
        // The window is gone: report through the communicator's handler.
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, err);
        return err;
    }
    return rc;
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    return flush_call(win, rank, [&] { return PMPI_Win_flush(rank, win); });
}
int MPI_Win_flush_all(MPI_Win win)
{
    return flush_call(win, -1, [&] { return PMPI_Win_flush_all(win); });
}
int MPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush_call(win, rank, [&] { return PMPI_Win_flush_local(rank, win); });
}
int MPI_Win_flush_local_all(MPI_Win win)
{
    return flush_call(win, -1, [&] { return PMPI_Win_flush_local_all(win); });
}
int MPI_Win_unlock(int rank, MPI_Win win)
{
    return sync_call(win, rank, [&] { return PMPI_Win_unlock(rank, win); });
}
int MPI_Win_unlock_all(MPI_Win win)
{
    return sync_call(win, -1, [&] { return PMPI_Win_unlock_all(win); });
}
int MPI_Win_fence(int assert_, MPI_Win win)
{
    return sync_call(win, -1, [&] {
        const int rc = mpi_window_meet(win);
        return rc != MPI_SUCCESS ? rc : PMPI_Win_fence(assert_, win);
    });
}
// A PSCW target waits here while its origins complete their X-ops on it.
// osc ucx's MPI_Win_wait spins on its own worker without Open MPI's progress
// engine, so it would never run their code: wait by testing, and serve. The
// origins may X-op without telling the target first, so a window XRDMA
// serves cannot skip this; instead the loop costs about what osc ucx's own
// spin costs: no yield per idle test (with mpi_yield_when_idle, opal_progress
// in MPI_Win_test gave the core away on every idle call, which made plain
// PSCW 1.3-1.9x slower) unless ranks outnumber cores, where a spinning target
// must yield to its origins.
int MPI_Win_wait(MPI_Win win)
{
    Runtime &rt = Runtime::get();
    {
        std::lock_guard<std::recursive_mutex> guard(rt.mu);
        if (!window_find(win)) return PMPI_Win_wait(win);
    }
    bool before = progress_yield_when_idle(rt.oversubscribed);
    int flag = 0, rc;
    unsigned spins = 0;
    while ((rc = PMPI_Win_test(win, &flag)) == MPI_SUCCESS && !flag) {
        // osc sm's MPI_Win_test (osc ucx,sm: MPI_Win_allocate on one node)
        // does not run opal_progress: serve X-ops here too, every 8th test
        // (osc ucx's test already ran our hook; a pass each time was 5-10%).
        if (rt.oversubscribed) {
            if (!rt.try_progress()) sched_yield();
        } else if ((++spins & 7) == 0) {
            rt.try_progress();
        }
    }
    progress_yield_when_idle(before);
    return rc;
}

int MPI_Win_complete(MPI_Win win)
{
    return sync_call(win, -1, [&] { return PMPI_Win_complete(win); });
}

}  // extern "C"
