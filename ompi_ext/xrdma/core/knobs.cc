// The MPI layer's XRDMA_* knobs, with their defaults and meanings (printed by
// xrdma_info -c, documented in xrdma_info(1) and xrdma(7)); the plugin's are
// in ucx_plugin/run/knobs.cc. No MPI here: xrdma_info compiles this file too.
#include "xrdma_common/config.h"

namespace xrdma::mpi {

namespace {

const Knob knobs[] = {
    {"XRDMA_PROGRESS_THREAD", "0",
     "1: a progress thread (pinned with hwloc) runs arriving code while the application computes."},
    {"XRDMA_PEER_FAILURE", "auto",
     "Peer failure detection on MPI-layer endpoints: on, off, or auto (only to ranks on other hosts; "
     "UCX detects failures over TCP, not shared memory). Operations to a failed peer end with MPIX_ERR_PEER."},
    {"XRDMA_EXEC", "auto",
     "Where X-operations run: auto (in the origin process when it can map the target's window memory: "
     "node peers' MPI_Win_allocate/MPI_Win_allocate_shared windows, and the origin's own rank; movable "
     "code only, see xrdma_ifunc(3)) or target (always as a message to the target process)."},
    {"XRDMA_STREAM_CHUNK", "1048576",
     "Bytes per chunk of a streaming function (XRDMA_STREAM, xrdma_stream(3)): its payload handler gets the incoming "
     "data in pieces that never cross a multiple of it, and an MPIX_Xput larger than it to another process is "
     "fetched by the target chunk by chunk (at most 3 chunks held there) instead of being sent. At least 64."},
    {"XRDMA_FLUSH_SKIP", "1",
     "1: from a window's first X-operation, MPI_Win_flush and MPI_Win_flush_local return without the flush of osc ucx "
     "(Open MPI's UCX one-sided component) when no MPI RMA call went to that target through it since a flush or unlock "
     "completed the last, in a passive epoch it confirmed: a window whose traffic is X-operations pays only for them. "
     "The calls are counted in the component's table, so every language binding's count. In a program initialised with "
     "MPI_THREAD_MULTIPLE every flush goes to the component. 0: every flush goes to the component."},
    {"XRDMA_BUNDLE", "8",
     "MPIX_Xinvoke calls sent as one message at most (1 to 64; 1: each alone). A stream of Xinvokes without a request, "
     "with up to 64 bytes of arguments, to one target, with one function whose invocations end where they run (its "
     "image does not call xrdma_forward: ucx_ifunc_stays in ucx_ifunc(3)), goes in bundles (from the second after a "
     "synchronisation call on): the target runs them in order under one invocation (their replies dropped, as the "
     "origin drops an Xinvoke's reply) and one acknowledgement answers them all. A bundle goes when it is full or 768 "
     "bytes, at the next X-operation of another kind, target, window or function, and at "
     "any progress pass or synchronisation call. When one X-op of a bundle fails, those behind it in the bundle do "
     "not run; the synchronisation call reports the error."},
    {"XRDMA_STATS", "0",
     "1: at MPI_Finalize each process prints one line of XRDMA's counters to stderr (contexts, windows, endpoints "
     "made, peers, invocations and images sent, bytes sent, functions run, rings and their memory, X-ops that "
     "waited for their window)."},
    {"XRDMA_DEBUG_WINDOW_FAIL", "0",
     "Debugging aid for tests: N > 0 makes the set-up of the N-th window of each process where it is set fail "
     "(the window stays an ordinary MPI window; its X-operations from that process fail with MPI_ERR_WIN, those "
     "of other processes to it with MPIX_ERR_PEER, each saying why); 0: no injected failure."},
    {nullptr, nullptr, nullptr},
};

// Before any static initialiser of the MPI layer could read a knob (the
// plugin's library, where the registry is, is initialised first).
__attribute__((constructor(101))) void register_knobs() { config_register(knobs); }

}  // namespace

}  // namespace xrdma::mpi
