// What the MPICH side of the MPI layer shares (mpi_mpich.cc, pmpi_mpich.cc):
// waiting by testing while XRDMA serves, for MPICH's blocking calls whose
// own waits do not run XRDMA's progress (mpi_impl.h).
#pragma once

#include "runtime.h"

#include <mpi.h>
#include <sched.h>

#include <unordered_map>

namespace xrdma::mpi {

// Rx requests whose X-op failed, by handle, as their query functions saw
// them during the wait or test running on this thread
// (mpi_grequest_query_result()); that call's wrapper reports them.
extern thread_local std::unordered_map<MPI_Request, int> t_request_errors;

// Calls @p test (an MPI test: int(int *done)) until it reports done or
// fails, with a pass of XRDMA's progress between two calls; yields the
// processor as XRDMA's own waits do (Runtime::spin_before_yield()).
template <typename Test>
int serve_until(Test &&test)
{
    Runtime &rt = Runtime::get();
    unsigned idle = 0;
    for (;;) {
        int done = 0;
        const int rc = test(&done);
        if (rc != MPI_SUCCESS || done) return rc;
        if (rt.try_progress()) {
            idle = 0;
        } else if (++idle >= rt.spin_before_yield()) {
            sched_yield();
            idle = 0;
        }
    }
}

// Completes @p r as MPI_Wait does, serving X-ops while this process has a
// window (otherwise MPI_Wait itself).
inline int serve_wait(MPI_Request *r, MPI_Status *st)
{
    if (!Runtime::get().has_windows()) return PMPI_Wait(r, st);
    return serve_until([&](int *done) { return PMPI_Test(r, done, st); });
}

}  // namespace xrdma::mpi
