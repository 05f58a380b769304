#include "node_local.h"

#include "window.h"

#include "xrdma_common/log.h"

#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>

namespace xrdma::mpi {

namespace {

// What a rank tells the others about its window at creation.
struct Offer {
    char host[64];
    uint64_t netns, ipcns, pidns;  // a "node": same host name and kernel namespaces (the
                                   // locks name their owner by process id: same PID namespace)
    int32_t mappable;       // its window memory can be mapped by node peers
    int32_t runs_code;      // XRDMA_EXEC=auto: it runs code for peers and takes its locks
    int32_t shmid;
    int32_t disp_unit;
    uint64_t offset, bytes;
};

uint64_t ns_inode(const char *path)
{
    struct stat st {};
    return stat(path, &st) == 0 ? uint64_t(st.st_ino) : 0;
}

bool same_node(const Offer &a, const Offer &b)
{
    return strncmp(a.host, b.host, sizeof(a.host)) == 0 && a.netns == b.netns && a.ipcns == b.ipcns &&
           a.pidns == b.pidns && a.netns && a.ipcns && a.pidns;
}

// Whether [base, base+bytes) of this process lies in memory other processes
// can map, read from /proc/self/maps: a System V segment (osc ucx places
// MPI_Win_allocate memory in one: the mapping is "/SYSV<key> (deleted)",
// shared, its inode is the shmid) or another shared mapping (osc sm's file;
// @p shmid -1: peers ask MPI_Win_shared_query).
bool find_shared(const void *base, uint64_t bytes, int *shmid, uint64_t *offset, std::string *why)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(base);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        uintptr_t lo, hi;
        char perms[8] = {0};
        unsigned long long off, inode;
        char dev[32];
        int pos = 0;
        if (sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %llu %n", &lo, &hi, perms, &off, dev,
                   &inode, &pos) < 6)
            continue;
        if (a < lo || a >= hi) continue;
        std::string path = line.substr(size_t(pos));
        if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 's') {
            *why = "window memory is not shared with other processes (" + std::string(perms) + " " +
                   (path.empty() ? "anonymous" : path) + ")";
            return false;
        }
        if (path.rfind("/SYSV", 0) != 0) {  // shared otherwise (osc sm): MPI_Win_shared_query maps it
            *shmid = -1;
            return true;
        }
        if (a + bytes > hi) {
            *why = "the window extends past its segment's mapping";
            return false;
        }
        struct shmid_ds ds {};
        if (shmctl(int(inode), IPC_STAT, &ds) != 0) {
            *why = "shmctl(" + std::to_string(inode) + "): " + strerror(errno);
            return false;
        }
        *shmid = int(inode);
        *offset = a - lo + off;
        if (*offset + bytes > ds.shm_segsz) {
            *why = "the segment is smaller than the window";
            return false;
        }
        return true;
    }
    *why = "window base not found in /proc/self/maps";
    return false;
}

// MPI_Win_shared_query without the window's error handler (a component
// may not offer it for MPI_Win_allocate windows).
bool shared_query(MPI_Win win, int r, MPI_Aint *size, int *unit, void *base)
{
    MPI_Errhandler eh;
    PMPI_Win_get_errhandler(win, &eh);
    PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = PMPI_Win_shared_query(win, r, size, unit, base);
    PMPI_Win_set_errhandler(win, eh);
    PMPI_Errhandler_free(&eh);
    return rc == MPI_SUCCESS;
}

}  // namespace

NodeLocal *NodeLocal::setup(Window *w, MPI_Comm comm)
{
    Offer me{};
    gethostname(me.host, sizeof(me.host) - 1);
    me.netns = ns_inode("/proc/self/ns/net");
    me.ipcns = ns_inode("/proc/self/ns/ipc");
    me.pidns = ns_inode("/proc/self/ns/pid");
    me.runs_code = w->exec_auto;
    me.disp_unit = w->disp_unit;
    me.bytes = uint64_t(w->bytes);
    me.shmid = -1;
    std::string why;
    if (!me.runs_code) {
        why = "XRDMA_EXEC=target (or the window's info key xrdma_exec)";
    } else if (w->bytes <= 0) {
        why = "the window is empty";
    } else if (w->kind == WinKind::shared) {
        me.mappable = 1;  // MPI_Win_shared_query maps it
    } else {
        me.mappable = find_shared(w->base, me.bytes, &me.shmid, &me.offset, &why);
    }
    if (!me.mappable) XRDMA_DEBUG("rank %d: node peers run no code on this window: %s", w->rank, why.c_str());

    std::vector<Offer> all(size_t(w->size));
    PMPI_Allgather(&me, sizeof(me), MPI_BYTE, all.data(), sizeof(me), MPI_BYTE, comm);

    // Every rank decides the same from the same offers: a node's lock
    // segment exists if two of its ranks run code and one of them offers
    // its window.
    std::vector<int> leader(size_t(w->size), -1);
    std::vector<int> index(size_t(w->size), -1);
    std::vector<int> members(size_t(w->size), 0), offering(size_t(w->size), 0);
    for (int r = 0; r < w->size; ++r) {
        for (int l = 0; l <= r; ++l)
            if (same_node(all[size_t(r)], all[size_t(l)])) {
                leader[size_t(r)] = l;
                break;
            }
        int l = leader[size_t(r)];
        if (l < 0 || !all[size_t(r)].runs_code) continue;
        index[size_t(r)] = members[size_t(l)]++;
        offering[size_t(l)] += all[size_t(r)].mappable;
    }
    auto needs_locks = [&](int l) { return l >= 0 && members[size_t(l)] >= 2 && offering[size_t(l)] >= 1; };
    bool any = false;
    for (int r = 0; r < w->size; ++r) any = any || needs_locks(leader[size_t(r)]);
    if (!any) return nullptr;  // nothing runs anywhere but at its target

    auto *n = new NodeLocal;
    n->peers_.resize(size_t(w->size));
    const int mine = leader[size_t(w->rank)];
    MPI_Comm node;
    PMPI_Comm_split(comm, needs_locks(mine) && me.runs_code ? mine : MPI_UNDEFINED, w->rank, &node);
    if (node == MPI_COMM_NULL) {  // no peer here runs code on this window, nor this rank on theirs
        delete n;
        return nullptr;
    }

    // The node's locks: one per code-running rank, in a segment the
    // leader makes and removes once all have attached it.
    int shmid = -1;
    n->nlocks_ = size_t(members[size_t(mine)]);
    const size_t seg = n->nlocks_ * sizeof(NodeLock);
    if (w->rank == mine) {
        shmid = shmget(IPC_PRIVATE, seg, IPC_CREAT | 0600);
        void *p = shmid >= 0 ? shmat(shmid, nullptr, 0) : reinterpret_cast<void *>(-1);
        if (p == reinterpret_cast<void *>(-1)) {
            XRDMA_DEBUG("rank %d: no lock segment for node-local execution: %s", w->rank, strerror(errno));
            if (shmid >= 0) shmctl(shmid, IPC_RMID, nullptr);
            shmid = -1;
        } else {
            for (size_t i = 0; i < n->nlocks_; ++i) new (static_cast<NodeLock *>(p) + i) NodeLock{{0}};
            n->locks_ = p;
        }
    }
    PMPI_Bcast(&shmid, 1, MPI_INT, 0, node);
    if (shmid >= 0 && w->rank != mine) {
        void *p = shmat(shmid, nullptr, 0);
        n->locks_ = p == reinterpret_cast<void *>(-1) ? nullptr : p;
    }
    // Everyone must have its locks before anyone runs code: agree.
    int ok = n->locks_ != nullptr, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, node);
    if (w->rank == mine && shmid >= 0) shmctl(shmid, IPC_RMID, nullptr);  // gone once all detach
    PMPI_Comm_free(&node);
    if (!all_ok) {
        XRDMA_DEBUG("rank %d: node-local execution off: the lock segment could not be attached everywhere", w->rank);
        if (n->locks_) shmdt(n->locks_);
        n->locks_ = nullptr;
        return n;
    }
    for (int r = 0; r < w->size; ++r) {
        const Offer &o = all[size_t(r)];
        PeerWindow &p = n->peers_[size_t(r)];
        if (leader[size_t(r)] != mine || !o.runs_code) continue;
        p.lock = static_cast<NodeLock *>(n->locks_) + index[size_t(r)];
        if (r == w->rank || !o.mappable) continue;
        p.bytes = o.bytes;
        p.disp_unit = o.disp_unit;
        p.shmid = o.shmid;
        p.offset = o.offset;
        p.state = PeerWindow::offered;
        if (o.shmid < 0) {  // MPI maps it: MPI_Win_allocate_shared, osc sm
            MPI_Aint size = 0;
            int unit = 1;
            void *base = nullptr;
            if (shared_query(w->win, r, &size, &unit, &base) && base && uint64_t(size) >= o.bytes) {
                p.base = static_cast<char *>(base);
                p.state = PeerWindow::mapped;
            } else {
                XRDMA_DEBUG("rank %d: MPI_Win_shared_query gives no memory of rank %d", w->rank, r);
                p.state = PeerWindow::refused;
            }
        }
    }
    std::string list;
    for (int r = 0; r < w->size; ++r)
        if (n->peers_[size_t(r)].state == PeerWindow::offered || n->peers_[size_t(r)].state == PeerWindow::mapped)
            list += (list.empty() ? "" : ",") + std::to_string(r);
    XRDMA_DEBUG("rank %d: node-local execution on the windows of ranks %s", w->rank, list.empty() ? "(none)" : list.c_str());
    return n;
}

char *NodeLocal::attach(int r)
{
    PeerWindow &p = peers_[size_t(r)];
    void *a = shmat(p.shmid, nullptr, 0);
    struct shmid_ds ds {};
    if (a == reinterpret_cast<void *>(-1) || shmctl(p.shmid, IPC_STAT, &ds) != 0 ||
        p.offset + p.bytes > ds.shm_segsz) {
        XRDMA_DEBUG("rank %d's window (System V segment %d) cannot be mapped here: %s; its X-ops travel as "
                    "messages",
                    r, p.shmid, a == reinterpret_cast<void *>(-1) ? strerror(errno) : "segment too small");
        if (a != reinterpret_cast<void *>(-1)) shmdt(a);
        p.state = PeerWindow::refused;
        return nullptr;
    }
    p.attached = a;
    p.base = static_cast<char *>(a) + p.offset;
    p.state = PeerWindow::mapped;
    return p.base;
}

NodeLocal::~NodeLocal()
{
    for (PeerWindow &p : peers_)
        if (p.attached) shmdt(p.attached);
    if (locks_) shmdt(locks_);
}

}  // namespace xrdma::mpi
