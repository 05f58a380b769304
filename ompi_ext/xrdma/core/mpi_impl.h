// What differs between the MPI libraries XRDMA serves: everything the MPI
// layer knows of one implementation beyond the MPI standard is behind these
// functions, one file per implementation, chosen by configure --with-mpi
// (mpi_openmpi.cc with progress_hook.cc, osc_flush.cc and osc_table.c;
// mpi_mpich.cc with pmpi_mpich.cc). The rest of the layer is plain MPI.
//
// - Progress: a target serves X-ops while it sits in any MPI call. Open MPI's
//   progress engine calls a hook (opal_progress_register); MPICH has none a
//   library can reach, and calls a generalized request's poll function only
//   while that request is tested or waited for, not in MPI_Barrier or
//   MPI_Recv. Under MPICH, XRDMA's PMPI wrappers of the calls that wait
//   (pmpi_mpich.cc) wait by testing and serve meanwhile.
// - Node-local execution: where a node peer's MPI_Win_allocate memory lies,
//   so that this process may run code on it (node_local.h).
// - XRDMA_FLUSH_SKIP: wrapping Open MPI's one-sided component table
//   (osc_flush.h); MPICH's has no table to wrap: every flush goes to MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace xrdma::mpi {

// The MPI this build serves and its version ("MPICH 4.0.2").
const char *mpi_impl_name();
// An MPI handle as a number, for messages (Open MPI's handles are
// pointers, MPICH's integers).
template <typename Handle>
unsigned long long mpi_handle(Handle h)
{
    if constexpr (std::is_pointer_v<Handle>)
        return reinterpret_cast<uintptr_t>(h);
    else
        return static_cast<unsigned long long>(h);
}

// MPI's progress runs XRDMA's (Runtime::try_progress()) from start() to
// stop(): a hook in Open MPI's engine; under MPICH what the wrappers of its
// waiting calls need (they serve only while the runtime is started).
void mpi_progress_start();
void mpi_progress_stop();
// Whether MPI's own idle waits yield the processor (Open MPI's
// mpi_yield_when_idle); returns the setting it replaces. MPICH: no such
// setting (false).
bool progress_yield_when_idle(bool yield);
// An XRDMA wait found nothing to do (Runtime::progress()): MPI's own
// progress gets a turn now and then where MPI makes no progress of its own
// while XRDMA waits (MPICH: a node peer's MPI_Win_lock waits for this
// process to answer it). Open MPI: nothing.
void mpi_progress_idle();
// Every process of @p comm (of @p win) is entering a call that synchronises
// them all (window creation; MPI_Win_fence, MPI_Win_free): returns once all
// have entered, serving X-ops meanwhile, where MPI's blocking wait inside
// that call would not (MPICH); at once where it would (Open MPI). Then no
// process of them waits for another's X-ops while it is in the call. MPI
// error code.
int mpi_meet(MPI_Comm comm);
int mpi_window_meet(MPI_Win win);
// Window @p win was created over @p comm (mpi_window_meet() needs its
// processes after the application freed @p comm), and is freed.
void mpi_window_created(MPI_Win win, MPI_Comm comm);
void mpi_window_freed(MPI_Win win);

// Node-local execution. At the target: whether this process's window
// memory [base, base+bytes) of MPI_Win_allocate lies where node peers can
// map it, and how they find it (@p segment, @p offset: what the offer
// carries; segment -1: MPI_Win_shared_query maps it), or why not.
bool mpi_window_memory_offer(MPI_Win win, const void *base, uint64_t bytes, int *segment, uint64_t *offset,
                             std::string *why);
// At the origin: a node peer's offered memory mapped here (its base), or
// nullptr with the reason; @p attached is what mpi_window_memory_release()
// undoes (nullptr: nothing, MPI keeps the mapping).
char *mpi_window_memory_map(int segment, uint64_t offset, uint64_t bytes, void **attached, std::string *why);
void mpi_window_memory_release(void *attached);

// Errors. A code of class @p cls whose MPI_Error_string is @p text
// (MPI_Add_error_code, MPI_Add_error_string), or @p cls when MPI makes
// none. MPICH 4.0 keeps no string for a code added to a predefined class:
// there MPICH's own error stack carries the text (MPI_Error_string, which
// XRDMA interposes, gives the text alone, as under Open MPI).
int mpi_error_code(int cls, const std::string &text);
// What the query function of generalized request @p request returns when
// its X-op failed with @p err (the status carries @p err either way): Open
// MPI takes the returned value as the request's error. MPICH takes a
// returned error for a failure of the query function itself (MPI_ERR_OTHER):
// there the error is kept for XRDMA's wrapper of the wait or test that
// completes the request, which reports it (pmpi_mpich.cc).
int mpi_grequest_query_result(MPI_Request request, int err);

// Whether XRDMA_FLUSH_SKIP can take effect in this build (osc_flush.h).
bool mpi_flush_skip_available();

}  // namespace xrdma::mpi
