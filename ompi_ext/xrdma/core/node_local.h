// Node-local execution: which node peers' window memory this process can
// map, the mappings (attached on first use, detached when the window goes),
// and the per-process locks in node-shared memory that keep functions at one
// target running one at a time wherever they run (docs: xrdma_ifunc(3),
// "Where the code runs").
//
// Nothing is exchanged when a window is created. At an origin's first X-op
// on a window that could run here (XRDMA_EXEC=auto, MPI_Win_allocate or
// MPI_Win_allocate_shared memory, node peers in its group) the origin asks
// each node peer of the window, in one round (NodeQuery, on the MPI layer's
// own active-message id), and waits for the answers; each answers with what
// it offers (NodeOffer: its window's segment and offset, mpi_impl.h; its lock),
// once the window exists there. A target asks too, without waiting, when a
// function running there first forwards to a node peer: that forward
// travels as a message, later ones continue where the data is mapped. A
// target that offers its memory hands out its lock: from then on its own
// dispatches take it too (g_own_lock).
#pragma once

#include "target_lock.h"

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma::mpi {

struct Window;

// A node peer's window as this process sees it.
struct PeerWindow {
    enum State : uint8_t { none, asked, offered, mapped, refused };
    State state = none;
    char *base = nullptr;  // mapped address of its window base
    uint64_t bytes = 0;
    int disp_unit = 1;
    int shmid = -1;        // segment holding it (MPI_Win_allocate, mpi_impl.h); -1: MPI_Win_shared_query
    uint64_t offset = 0;   // of the window base in that segment
    void *attached = nullptr;  // our mapping of it (mpi_window_memory_map()), released with the window
    int lock_shmid = -1;   // its process's lock segment
    NodeLock *lock = nullptr;  // that lock, mapped here
};

class NodeLocal {
public:
    // Ask the node peers of @p w what they offer (their answers arrive in
    // progress, offered()); nullptr if no peer could offer (no node peer,
    // XRDMA_EXEC=target, memory MPI does not share).
    static NodeLocal *ask(Window *w);
    // Wait until every peer asked has answered.
    void wait();
    ~NodeLocal();

    // Window rank @p r's memory as mapped here (base, bytes, disp_unit,
    // lock), attaching on first use; nullptr if this process cannot run
    // code on it.
    const PeerWindow *mapped(int r)
    {
        PeerWindow &p = peers_[size_t(r)];
        return p.state == PeerWindow::mapped ? &p : p.state == PeerWindow::offered && attach(r) ? &p : nullptr;
    }
    char *base_of(int r)
    {
        const PeerWindow *p = mapped(r);
        return p ? p->base : nullptr;
    }
    // A peer's answer (node_local.cc).
    void offered(int r, const struct NodeOffer &o);

private:
    NodeLocal() = default;
    char *attach(int r);

    Window *w_ = nullptr;
    std::vector<PeerWindow> peers_;  // by window rank
    unsigned asked_ = 0;             // answers still to come
};

// The function running here forwards on window @p w to a node peer, and
// this process has not asked the peers of @p w yet: it does so from the
// next progress pass (a target's side of node-local execution).
void node_local_want(Window *w);

// This process's lock, once it offered a node peer its memory: every
// function that runs on its windows takes it (nullptr: no peer runs code on
// them, none needed).
extern NodeLock *g_own_lock;

// The MPI layer's active-message handler for queries and offers (at
// start), and the end of it all (MPI_Finalize).
ucs_status_t node_local_start(ucp_worker_h worker);
void node_local_stop();
// Window @p w now exists here: the queries that came before it are answered.
void node_local_window_ready(Window *w);
// Queries that came while a function ran here, answered after it, and
// windows whose node peers are to be asked (progress: inline, one load when
// there are none).
extern unsigned g_node_waiting;
void node_local_serve();
inline void node_local_progress()
{
    if (__builtin_expect(g_node_waiting != 0, 0)) node_local_serve();
}

}  // namespace xrdma::mpi
