// The processes of a window's communicator as XRDMA names them. The plugin
// has one context per process, whose ranks are MPI_COMM_WORLD's; a window
// names its processes by their rank in its communicator. A Group holds the
// translation (and the view injected code sees: xrdma_rank() in the
// window's ranks), the id every member gives it, and counts the windows made
// on it, so that a window's id (group id, sequence) is the same in every
// process without a message. What a process learns of the others (worker
// address, node) is exchanged once, at the first window of a group: the only
// collective XRDMA adds to window creation.
#pragma once

#include "ucx_ifunc.h"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xrdma::mpi {

// Window ids: the group's id (agreed by its members at its first window)
// above the window's sequence number in its group.
constexpr unsigned kSeqBits = 20;
constexpr uint32_t kSeqMask = (1u << kSeqBits) - 1;
constexpr uint32_t kMaxGroups = 1u << (32 - kSeqBits);
inline uint32_t window_id(uint32_t gid, uint32_t seq) { return gid << kSeqBits | (seq & kSeqMask); }
inline uint32_t id_group(uint32_t id) { return id >> kSeqBits; }
inline uint32_t id_seq(uint32_t id) { return id & kSeqMask; }

struct Group;
// What injected code sees of ranks on a group's windows, with its group (the
// plugin hands the view back to rank_of; the view is first, so its address
// is its GroupView's).
struct GroupView {
    ucx_ifunc_view_t view;
    const Group *group;
};

struct Group {
    uint32_t gid = 0;
    int rank = -1;              // this process's rank in it
    std::vector<int> world;     // each member's MPI_COMM_WORLD rank, by group rank
    std::vector<std::pair<int, int>> by_world;  // (world rank, group rank), sorted: the view's rank_of
    std::vector<uint8_t> local;  // by group rank: on this process's node (same host and kernel namespaces)
    // What injected code sees of ranks on its windows (none needed where
    // the group is MPI_COMM_WORLD's: its ranks are the peers').
    GroupView gview{};
    bool identity = false;
    uint32_t next_seq = 0;      // windows created on it so far (consistent: creation is collective)
    std::string unusable;       // why its windows have no X-operations ("" if they have)

    int size() const { return int(world.size()); }
    const ucx_ifunc_view_t *view() const { return identity ? nullptr : &gview.view; }
    // The group rank of world rank @p w, or -1.
    int rank_of_world(int w) const;
    // Whether @p seq (of a window id) names a window not created here yet.
    bool ahead(uint32_t seq) const { return ((seq - next_seq) & kSeqMask) < (kSeqMask >> 1); }
};

// The group of @p comm's processes (made at the first window on it, which
// is collective over @p comm; after that, a lookup). Never nullptr; a group
// whose windows cannot have X-operations says why in Group::unusable.
Group *group_of(MPI_Comm comm);
// The group with id @p gid in this process, or nullptr.
Group *group_by_id(uint32_t gid);
// MPI_Finalize: the attribute key groups were cached under goes.
void groups_release();

}  // namespace xrdma::mpi
