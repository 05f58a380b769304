#include "group.h"

#include "runtime.h"

#include "xrdma_common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

namespace xrdma::mpi {

namespace {

// What a process tells the others at a group's first window.
struct Member {
    char host[64];
    uint64_t netns, ipcns, pidns;  // a "node": same host name and kernel namespaces (node-local
                                   // execution's locks name their owner by process id: same PID namespace)
    int32_t started;    // its UCX worker runs (else the group has no X-operations)
    uint32_t next_gid;  // the lowest group id it has not given
    int32_t addr_len;   // its worker address follows (Allgatherv)
    int32_t reserved;
};

uint64_t ns_inode(const char *path)
{
    struct stat st {};
    return stat(path, &st) == 0 ? uint64_t(st.st_ino) : 0;
}

bool same_node(const Member &a, const Member &b)
{
    return strncmp(a.host, b.host, sizeof(a.host)) == 0 && a.netns == b.netns && a.ipcns == b.ipcns &&
           a.pidns == b.pidns && a.netns && a.ipcns && a.pidns;
}

int g_keyval = MPI_KEYVAL_INVALID;  // a communicator's Group, cached on it
std::map<std::vector<int>, std::unique_ptr<Group>> g_groups;  // by members' world ranks
std::vector<Group *> g_by_id;
uint32_t g_next_gid = 0;

int rank_of(const void *v, int peer) { return static_cast<const GroupView *>(v)->group->rank_of_world(peer); }

// The first window on a new group: its members tell each other who they
// are (collective over @p comm; every member decides the same from the same
// answers).
void introduce(Group *g, MPI_Comm comm)
{
    Runtime &rt = Runtime::get();
    const bool started = rt.start() == MPI_SUCCESS;
    Member me{};
    gethostname(me.host, sizeof(me.host) - 1);
    me.netns = ns_inode("/proc/self/ns/net");
    me.ipcns = ns_inode("/proc/self/ns/ipc");
    me.pidns = ns_inode("/proc/self/ns/pid");
    me.started = started;
    me.next_gid = g_next_gid;
    me.addr_len = started ? int32_t(rt.address.size()) : 0;
    const size_t n = g->world.size();
    std::vector<Member> all(n);
    PMPI_Allgather(&me, sizeof(me), MPI_BYTE, all.data(), sizeof(me), MPI_BYTE, comm);
    std::vector<int> lens(n), displs(n);
    int total = 0;
    for (size_t i = 0; i < n; ++i) {
        lens[i] = all[i].addr_len;
        displs[i] = total;
        total += lens[i];
    }
    std::vector<uint8_t> addrs(size_t(std::max(total, 1)));
    PMPI_Allgatherv(rt.address.data(), me.addr_len, MPI_BYTE, addrs.data(), lens.data(), displs.data(), MPI_BYTE,
                    comm);
    uint32_t gid = 0;
    int not_started = -1;
    for (size_t i = 0; i < n; ++i) {
        gid = std::max(gid, all[i].next_gid);
        if (!all[i].started && not_started < 0) not_started = int(i);
    }
    g_next_gid = gid + 1;
    g->gid = gid;
    if (not_started >= 0) {
        g->unusable = "XRDMA could not start UCX in rank " + std::to_string(not_started) + " of the window";
        return;
    }
    if (gid >= kMaxGroups - 1) {  // (the last id is no window's: kNoWindow, window.h)
        g->unusable = "windows of more than " + std::to_string(kMaxGroups - 1) + " process groups in one job";
        return;
    }
    int local = 0;
    g->local.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
        g->local[i] = same_node(me, all[i]);
        local += g->local[i];
        rt.learn_peer(g->world[i], addrs.data() + displs[i], size_t(lens[i]),
                      strncmp(me.host, all[i].host, sizeof(me.host)) != 0, g->local[i]);
    }
    // More ranks on this node than processing units: waiting loops yield
    // at once and nothing spins on the rings (a spinning origin takes its
    // target's core).
    const long pus = sysconf(_SC_NPROCESSORS_ONLN);
    if (pus > 0 && local > pus && !rt.oversubscribed) {
        rt.oversubscribed = true;
        ucx_ifunc_set_spin(rt.ctx, 0);
    }
}

}  // namespace

int Group::rank_of_world(int w) const
{
    if (identity) return w >= 0 && w < size() ? w : -1;
    auto it = std::lower_bound(by_world.begin(), by_world.end(), std::make_pair(w, -1));
    return it != by_world.end() && it->first == w ? it->second : -1;
}

Group *group_of(MPI_Comm comm)
{
    if (g_keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &g_keyval, nullptr);
    void *cached = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, g_keyval, &cached, &found);
    if (found) return static_cast<Group *>(cached);

    // Who the members are, by world rank (the same list in every member).
    MPI_Group cg, wg;
    PMPI_Comm_group(comm, &cg);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    int n = 0;
    PMPI_Group_size(cg, &n);
    std::vector<int> ranks(static_cast<size_t>(n)), world(static_cast<size_t>(n));
    std::iota(ranks.begin(), ranks.end(), 0);
    PMPI_Group_translate_ranks(cg, n, ranks.data(), wg, world.data());
    PMPI_Group_free(&cg);
    PMPI_Group_free(&wg);

    // Every member has seen the same windows on this group (their creation
    // is collective), so all of them find it here, or none: the exchange
    // below runs in every member or in none.
    std::unique_ptr<Group> &slot = g_groups[world];
    if (!slot) {
        auto g = std::make_unique<Group>();
        g->world = world;
        PMPI_Comm_rank(comm, &g->rank);
        Runtime &rt = Runtime::get();
        const bool foreign = std::count(world.begin(), world.end(), MPI_UNDEFINED) > 0;
        if (foreign) {
            // (Every member sees a process outside its own MPI_COMM_WORLD:
            // no member exchanges.)
            g->unusable = "its communicator has processes outside MPI_COMM_WORLD (MPI_Comm_spawn, "
                          "MPI_Comm_connect): X-operations reach the processes of one MPI_COMM_WORLD";
        } else {
            introduce(g.get(), comm);
            g->identity = n == rt.world_size;
            for (int r = 0; r < n && g->identity; ++r) g->identity = world[size_t(r)] == r;
            for (int r = 0; r < n; ++r) g->by_world.emplace_back(world[size_t(r)], r);
            std::sort(g->by_world.begin(), g->by_world.end());
            g->gview.view.size = n;
            g->gview.view.peer_of = g->world.data();
            g->gview.view.rank_of = rank_of;
            g->gview.group = g.get();
            if (g->unusable.empty()) {
                if (g_by_id.size() <= g->gid) g_by_id.resize(size_t(g->gid) + 1, nullptr);
                g_by_id[g->gid] = g.get();
            }
        }
        if (!g->unusable.empty()) XRDMA_DEBUG("rank %d: no X-operations on windows of this group: %s", g->rank,
                                              g->unusable.c_str());
        slot = std::move(g);
    }
    PMPI_Comm_set_attr(comm, g_keyval, slot.get());
    return slot.get();
}

Group *group_by_id(uint32_t gid) { return gid < g_by_id.size() ? g_by_id[gid] : nullptr; }

void groups_release()
{
    if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
}

}  // namespace xrdma::mpi
