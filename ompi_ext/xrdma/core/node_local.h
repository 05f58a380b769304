// Node-local execution: which node peers' window memory this process can
// map, the mappings (attached on first use, detached at MPI_Win_free), and
// the per-target locks in node-shared memory that keep functions at one
// target running one at a time wherever they run (docs: xrdma_ifunc(3),
// "Where the code runs").
#pragma once

#include "target_lock.h"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xrdma::mpi {

struct Window;

// A node peer's window as this process sees it.
struct PeerWindow {
    enum State : uint8_t { none, offered, mapped, refused };
    State state = none;
    char *base = nullptr;  // mapped address of its window base
    uint64_t bytes = 0;
    int disp_unit = 1;
    int shmid = -1;        // System V segment holding it (MPI_Win_allocate)
    uint64_t offset = 0;   // of the window base in that segment
    void *attached = nullptr;  // our shmat() of it, detached at teardown
    NodeLock *lock = nullptr;  // its lock in the node's lock segment (none: no peer runs code on it)
};

class NodeLocal {
public:
    // Collective over the window's communicator, right after the window was
    // created: what each rank offers its node peers, and the node's locks.
    // Leaves everything off (messages only) where anything does not check
    // out, saying why at debug level.
    static NodeLocal *setup(Window *w, MPI_Comm comm);
    ~NodeLocal();

    // Window rank @p r's memory as mapped here (base, bytes, disp_unit,
    // lock), attaching on first use; nullptr if this process cannot run
    // code on it. (This rank's own entry has only its lock.)
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
    // The lock of rank @p r's window, or nullptr if no node peer runs code
    // on it (then none is needed).
    NodeLock *lock_of(int r) const { return peers_[size_t(r)].lock; }

private:
    NodeLocal() = default;
    char *attach(int r);

    std::vector<PeerWindow> peers_;  // by window rank
    void *locks_ = nullptr;          // the node's lock segment (shmat)
    size_t nlocks_ = 0;
};

}  // namespace xrdma::mpi
