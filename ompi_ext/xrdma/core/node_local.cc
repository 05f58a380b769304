#include "node_local.h"

#include "group.h"
#include "mpi_impl.h"
#include "op_view.h"
#include "runtime.h"
#include "window.h"

#include "xrdma_common/log.h"

#include <sys/ipc.h>
#include <sys/shm.h>
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <unordered_map>

namespace xrdma::mpi {

// What an origin asks a node peer about a window, and its answer: active
// messages of kAmControl, all in the header.
struct NodeQuery {
    uint32_t magic;  // kQueryMagic
    uint32_t win;    // the window's id
    int32_t origin;  // the origin's world rank
    uint32_t reserved;
};
struct NodeOffer {
    uint32_t magic;  // kOfferMagic
    uint32_t win;
    int32_t target;     // the answering process's world rank
    int32_t ok;         // 1: it offers its window memory and its lock; 0: not (messages only)
    int32_t shmid;      // segment of the memory (mpi_window_memory_offer()); -1: MPI_Win_shared_query maps it
    int32_t disp_unit;
    uint64_t offset;    // of the window base in that segment
    uint64_t bytes;
    int32_t lock_shmid;  // its lock segment
    int32_t reserved;
};
static_assert(sizeof(NodeQuery) == 16 && sizeof(NodeOffer) == 48, "wire layout");
constexpr uint32_t kQueryMagic = 0x514e5258;  // "XRNQ"
constexpr uint32_t kOfferMagic = 0x4f4e5258;  // "XRNO"

NodeLock *g_own_lock = nullptr;
unsigned g_node_waiting = 0;

namespace {

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

// This process's lock segment (one lock; made at its first offer, marked
// for removal at once: it goes with the last process that maps it).
int g_own_shmid = -1;
bool own_lock()
{
    if (g_own_lock) return true;
    const int id = shmget(IPC_PRIVATE, sizeof(NodeLock), IPC_CREAT | 0600);
    void *p = id >= 0 ? shmat(id, nullptr, 0) : reinterpret_cast<void *>(-1);
    if (id >= 0) shmctl(id, IPC_RMID, nullptr);  // (Linux maps a segment marked for removal while one maps it)
    if (p == reinterpret_cast<void *>(-1)) {
        XRDMA_DEBUG("no lock segment for node-local execution: %s", strerror(errno));
        return false;
    }
    g_own_lock = new (p) NodeLock{{0}};
    g_own_shmid = id;
    return true;
}

// Node peers' locks, mapped once per process (by lock segment).
std::unordered_map<int, NodeLock *> g_peer_locks;
NodeLock *peer_lock(int shmid)
{
    auto it = g_peer_locks.find(shmid);
    if (it != g_peer_locks.end()) return it->second;
    void *p = shmat(shmid, nullptr, 0);
    NodeLock *l = p == reinterpret_cast<void *>(-1) ? nullptr : static_cast<NodeLock *>(p);
    g_peer_locks.emplace(shmid, l);
    return l;
}

void send_done(void *request, ucs_status_t, void *user_data)
{
    delete static_cast<NodeOffer *>(user_data);
    ucp_request_free(request);
}

// Send @p m (a query or an offer, copied) to world rank @p world.
template <typename Msg>
void send_ctl(int world, const Msg &m)
{
    ucp_ep_h ep = Runtime::get().peer_ep(world);
    if (!ep) return;
    auto *copy = new NodeOffer{};
    static_assert(sizeof(Msg) <= sizeof(NodeOffer), "room");
    memcpy(copy, &m, sizeof(m));
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = send_done;
    p.user_data = copy;
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, kAmControl, copy, sizeof(m), nullptr, 0, &p);
    if (UCS_PTR_IS_PTR(r)) return;  // (send_done frees it)
    if (UCS_PTR_IS_ERR(r)) XRDMA_DEBUG("node-local message to world rank %d: %s", world,
                                       ucs_status_string(UCS_PTR_STATUS(r)));
    delete copy;
}

// What this process offers its node peers of window @p w.
NodeOffer offer_of(const Window *w)
{
    NodeOffer o{kOfferMagic, w->id, Runtime::get().world_rank, 0, -1, w->disp_unit, 0, uint64_t(w->bytes), -1, 0};
    std::string why;
    if (!w->exec_auto)
        why = "XRDMA_EXEC=target (or the window's info key xrdma_exec)";
    else if (w->bytes <= 0)
        why = "the window is empty";
    else if (w->kind == WinKind::shared)
        o.ok = 1;  // MPI_Win_shared_query maps it (shmid -1)
    else if (w->kind == WinKind::allocated)
        o.ok = mpi_window_memory_offer(w->win, w->base, o.bytes, &o.shmid, &o.offset, &why);
    else
        why = "MPI_Win_create and dynamic window memory is the process's own";
    if (o.ok && !own_lock()) {
        o.ok = 0;
        why = "no lock segment";
    }
    if (o.ok) {
        o.lock_shmid = g_own_shmid;
    } else {
        XRDMA_DEBUG("world rank %d: node peers run no code on window %#x: %s", o.target, w->id, why.c_str());
    }
    return o;
}

// Queries that wait: for a window not created here yet (by id), or that
// came while a function ran here (waiting: answered after it).
std::unordered_map<uint32_t, std::vector<NodeQuery>> g_early;
std::vector<NodeQuery> g_waiting;
std::vector<uint32_t> g_wanted;  // windows whose node peers this process asks next (node_local_want())

void answer(const NodeQuery &q)
{
    Runtime &rt = Runtime::get();
    if (Window *w = window_by_id(q.win)) {
        send_ctl(q.origin, offer_of(w));
        return;
    }
    const Group *g = group_by_id(id_group(q.win));
    if (!g || g->ahead(id_seq(q.win))) {  // being created here: answered once it is (node_local_window_ready())
        g_early[q.win].push_back(q);
        return;
    }
    const NodeOffer no{kOfferMagic, q.win, rt.world_rank, 0, -1, 1, 0, 0, -1, 0};
    send_ctl(q.origin, no);
}

ucs_status_t control_cb(void *, const void *header, size_t header_length, void *, size_t,
                        const ucp_am_recv_param_t *)
{
    Runtime &rt = Runtime::get();
    uint32_t magic = 0;
    if (header_length >= sizeof(magic)) memcpy(&magic, header, sizeof(magic));
    if (magic == kQueryMagic && header_length == sizeof(NodeQuery)) {
        NodeQuery q;
        memcpy(&q, header, sizeof(q));
        if (t_running.view) {  // a function runs here: its lock is not to be handed out under it
            g_waiting.push_back(q);
            g_node_waiting++;
        } else {
            answer(q);
        }
    } else if (magic == kOfferMagic && header_length == sizeof(NodeOffer)) {
        NodeOffer o;
        memcpy(&o, header, sizeof(o));
        Window *w = window_by_id(o.win);
        const int r = w && w->node ? w->group->rank_of_world(o.target) : -1;
        if (r >= 0) w->node->offered(r, o);
    } else {
        XRDMA_WARN("world rank %d: dropping a malformed node-local message (%zu bytes)", rt.world_rank,
                   header_length);
    }
    return UCS_OK;
}

}  // namespace

void node_local_serve()
{
    if (t_running.view) return;
    std::vector<NodeQuery> qs;
    std::vector<uint32_t> ws;
    qs.swap(g_waiting);
    ws.swap(g_wanted);
    g_node_waiting = 0;
    for (const NodeQuery &q : qs) answer(q);
    for (uint32_t id : ws)
        if (Window *w = window_by_id(id); w && !w->node_checked) {
            w->node_checked = true;
            w->node.reset(NodeLocal::ask(w));
        }
}

void node_local_window_ready(Window *w)
{
    auto it = g_early.find(w->id);
    if (it == g_early.end()) return;
    std::vector<NodeQuery> qs;
    qs.swap(it->second);
    g_early.erase(it);
    for (const NodeQuery &q : qs) answer(q);
}

ucs_status_t node_local_start(ucp_worker_h worker)
{
    ucp_am_handler_param_t p;
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = kAmControl;
    p.cb = control_cb;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    return ucp_worker_set_am_recv_handler(worker, &p);
}

void node_local_stop()
{
    for (auto &kv : g_peer_locks)
        if (kv.second) shmdt(kv.second);
    g_peer_locks.clear();
    if (g_own_lock) shmdt(g_own_lock);
    g_own_lock = nullptr;
    g_early.clear();
    g_waiting.clear();
    g_wanted.clear();
    g_node_waiting = 0;
}

NodeLocal *NodeLocal::ask(Window *w)
{
    Runtime &rt = Runtime::get();
    const Group &g = *w->group;
    if (!w->exec_auto || (w->kind != WinKind::allocated && w->kind != WinKind::shared) || g.local.empty())
        return nullptr;
    auto n = std::unique_ptr<NodeLocal>(new NodeLocal);
    n->w_ = w;
    n->peers_.resize(size_t(w->size));
    for (int r = 0; r < w->size; ++r) {
        if (r == w->rank || !g.local[size_t(r)]) continue;
        n->peers_[size_t(r)].state = PeerWindow::asked;
        send_ctl(g.world[size_t(r)], NodeQuery{kQueryMagic, w->id, rt.world_rank, 0});
        ++n->asked_;
    }
    return n->asked_ ? n.release() : nullptr;
}

void NodeLocal::wait()
{
    // (The peers' progress answers; ours meanwhile answers peers that ask
    // the same of us.)
    Runtime &rt = Runtime::get();
    const Group &g = *w_->group;
    unsigned idle = 0;
    while (asked_) {
        for (int r = 0; r < w_->size; ++r)  // (a peer that failed never answers)
            if (peers_[size_t(r)].state == PeerWindow::asked && rt.peers[size_t(g.world[size_t(r)])].failed) {
                peers_[size_t(r)].state = PeerWindow::refused;
                --asked_;
            }
        if (!asked_) break;
        if (rt.progress()) {
            idle = 0;
        } else if (++idle >= rt.spin_before_yield()) {
            sched_yield();
            idle = 0;
        }
    }
}

void node_local_want(Window *w)
{
    if (w->node_checked || w->node_wanted) return;
    w->node_wanted = true;
    g_wanted.push_back(w->id);
    g_node_waiting++;
}

void NodeLocal::offered(int r, const NodeOffer &o)
{
    PeerWindow &p = peers_[size_t(r)];
    if (p.state != PeerWindow::asked) return;
    --asked_;
    if (!o.ok) {
        p.state = PeerWindow::refused;
    } else {
        p.bytes = o.bytes;
        p.disp_unit = o.disp_unit;
        p.shmid = o.shmid;
        p.offset = o.offset;
        p.lock_shmid = o.lock_shmid;
        p.state = PeerWindow::offered;  // (mapped at first use: attach())
        // Where a forward to that peer goes changed: the plugin forgets
        // where its forwards went (ucx_ifunc_context_params_t.runs_here).
        Runtime &rt = Runtime::get();
        const int world = w_->group->world[size_t(r)];
        if (ucp_ep_h ep = rt.peer_ep(world)) ucx_ifunc_peer_add(rt.ctx, world, ep);
    }
    if (asked_) return;
    std::string list;
    for (int k = 0; k < w_->size; ++k)
        if (peers_[size_t(k)].state == PeerWindow::offered || peers_[size_t(k)].state == PeerWindow::mapped)
            list += (list.empty() ? "" : ",") + std::to_string(k);
    XRDMA_DEBUG("rank %d: node-local execution on the windows of ranks %s", w_->rank,
                list.empty() ? "(none)" : list.c_str());
}

char *NodeLocal::attach(int r)
{
    PeerWindow &p = peers_[size_t(r)];
    p.lock = peer_lock(p.lock_shmid);
    if (!p.lock) {
        XRDMA_DEBUG("rank %d's lock (System V segment %d) cannot be mapped here: %s; its X-ops travel as messages",
                    r, p.lock_shmid, strerror(errno));
        p.state = PeerWindow::refused;
        return nullptr;
    }
    if (p.shmid < 0) {  // MPI maps it: MPI_Win_allocate_shared, osc sm
        MPI_Aint size = 0;
        int unit = 1;
        void *base = nullptr;
        if (shared_query(w_->win, r, &size, &unit, &base) && base && uint64_t(size) >= p.bytes) {
            p.base = static_cast<char *>(base);
            p.state = PeerWindow::mapped;
            return p.base;
        }
        XRDMA_DEBUG("rank %d: MPI_Win_shared_query gives no memory of rank %d", w_->rank, r);
        p.state = PeerWindow::refused;
        return nullptr;
    }
    std::string why;
    p.base = mpi_window_memory_map(p.shmid, p.offset, p.bytes, &p.attached, &why);
    if (!p.base) {
        XRDMA_DEBUG("rank %d's window cannot be mapped here: %s; its X-ops travel as messages", r, why.c_str());
        p.state = PeerWindow::refused;
        return nullptr;
    }
    p.state = PeerWindow::mapped;
    return p.base;
}

NodeLocal::~NodeLocal()
{
    for (PeerWindow &p : peers_) mpi_window_memory_release(p.attached);
}

}  // namespace xrdma::mpi
