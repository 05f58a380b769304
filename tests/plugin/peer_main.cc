// A target process for the plugin tests. It has no ifunc code of its own: it
// runs whatever arrives. Driven by the test over a control socket:
//   'H' (sent first, by the peer): address, buffer address, rkey
//   'C' rank + address: connect to that rank (peer table)
//   'F' flush the code cache        'S' stats      'G' state (counter)
//   'J' JIT counters (compiles, objects from the disk cache, shared loads)
//   'M' mappings of libLLVM and of the JIT module in /proc/self/maps
//   'P' mode: poll the buffer: 0 off, 1 ucx_ifunc_poll, 2 ucp_poll_ifunc,
//       3 ucp_poll_ifunc over a ring of slots (u64 slot size follows),
//       4 ucp_poll_ifunc with the reply set up by 'R' as target_args
//   'R' origin buffer (u64), rkey length (u64), rkey, library dir: register
//       the published-API ifunc "pong" from that dir and prepare a message
//   'E' ucp_poll_ifunc errors: count (u64), last status (u64)
//   'D' passes (u64): the dispatch hook progresses the worker that many
//       times (ucx_ifunc_ctx_progress()) before it calls each entry
//   'Y' n (u64): the dispatch hook defers the next n invocations
//       (ucx_ifunc_ctx_defer()); 0: none more, and those kept are resumed
//   'V' on (u64): the dispatch hook shows functions the job's ranks in
//       reverse order (ucx_ifunc_ctx_set_view(): rank r is peer size-1-r)
//   'Q' quit
// XRDMA_TEST_CACHE_1_AT=<rank>: that peer's code cache holds one image
// (XRDMA_CODE_CACHE_SIZE=1), the others' the default.
// XRDMA_TEST_ON_DEMAND=1: 'C' only keeps the address; the context connects
// to a rank when it first needs it (the connect hook).
#include "load/loader_jit.h"
#include "ucx_ifunc/ucp_compat.h"  // before peer_state.h: struct compat_reply
#include "peer_state.h"
#include "ucx_env.h"
#include "ucx_ifunc.h"

#include <poll.h>
#include <sched.h>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace xrdma_test;

namespace {
// What the peer's dispatch hook does besides calling the entry.
struct Hook {
    uint64_t passes = 0;  // 'D'
    uint64_t defer = 0;   // 'Y'
    bool reversed = false;  // 'V'
    ucx_ifunc_view_t view{};
    std::vector<int> peer_of;
};
int reversed_rank(const void *v, int peer)
{
    const int size = static_cast<const ucx_ifunc_view_t *>(v)->size;
    return peer >= 0 && peer < size ? size - 1 - peer : -1;
}
// The layer's dispatch hook of a peer: with passes, an entry finds the
// worker progressed under it before it runs (what the MPI layer's streams
// do), so messages arrive, and rings are polled, while it runs.
int peer_dispatch(void *arg, xrdma_ctx *x, int (*entry)(xrdma_ctx *, const void *, size_t), const void *args,
                  size_t len)
{
    Hook &h = *static_cast<Hook *>(arg);
    if (h.defer && ucx_ifunc_ctx_defer(x) == 0) {
        --h.defer;
        return -1;
    }
    if (h.reversed) ucx_ifunc_ctx_set_view(x, &h.view);
    for (uint64_t i = 0; i < h.passes; ++i)
        if (ucx_ifunc_ctx_progress(x) < 0) break;  // (inside UCX's handler: it may not)
    return entry(x, args, len);
}
// Peers connected on demand: their addresses, by rank ('C').
std::map<int, std::vector<uint8_t>> g_addresses;
UcxEnv *g_env;
ucx_ifunc_context_h g_ctx;
std::vector<ucp_ep_h> g_eps;
void failed(void *arg, ucp_ep_h failed_ep, ucs_status_t)
{
    ucx_ifunc_peer_failed(static_cast<ucx_ifunc_context_h>(arg), failed_ep);
}
ucp_ep_h connect_on_demand(void *, int rank)
{
    auto it = g_addresses.find(rank);
    if (it == g_addresses.end()) return nullptr;
    ucp_ep_h ep = g_env->connect(it->second, failed, g_ctx);
    g_eps.push_back(ep);
    return ep;
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s CTRL_FD RANK SIZE\n", argv[0]);
        return 2;
    }
    int fd = atoi(argv[1]);
    int rank = atoi(argv[2]);
    if (const char *r = getenv("XRDMA_TEST_CACHE_1_AT"); r && atoi(r) == rank) setenv("XRDMA_CODE_CACHE_SIZE", "1", 1);
    UcxEnv env;
    peer_state state{};
    ucx_ifunc_context_params_t cp{};
    cp.worker = env.worker;
    cp.ucp_context = env.context;
    cp.rank = rank;
    cp.size = atoi(argv[3]);
    cp.user_ptr = &state;
    cp.peers_by_rank = peers_by_rank();
    Hook hook;
    cp.dispatch = peer_dispatch;
    cp.dispatch_arg = &hook;
    const char *on_demand = getenv("XRDMA_TEST_ON_DEMAND");
    if (on_demand && atoi(on_demand)) cp.connect = connect_on_demand;
    ucx_ifunc_context_h ctx;
    if (ucx_ifunc_context_create(&cp, &ctx) != UCX_IFUNC_OK) return 3;
    g_env = &env;
    g_ctx = ctx;

    std::vector<uint8_t> hello{'H'};
    put_u64(hello, env.address.size());
    hello.insert(hello.end(), env.address.begin(), env.address.end());
    put_u64(hello, reinterpret_cast<uint64_t>(env.buffer));
    hello.insert(hello.end(), env.rkey.begin(), env.rkey.end());
    if (!ctrl_send(fd, hello)) return 4;

    std::vector<ucp_ep_h> &eps = g_eps;
    std::map<int, ucp_ep_h> rank_ep;
    int poll_mode = 0;
    size_t slot = env.buffer_size, ring_i = 0;
    uint64_t poll_errors = 0;
    int64_t last_error = 0;
    compat_reply reply{&state.counter, nullptr, 0, nullptr, {}, nullptr};
    ucp_ifunc_h pong = nullptr;
    // The published API's target loop: one slot, a ring of them, or one
    // slot whose ifunc replies.
    auto compat_poll = [&]() -> bool {
        void *args = poll_mode == 4 ? static_cast<void *>(&reply) : &state.counter;
        uint8_t *at = static_cast<uint8_t *>(env.buffer) + ring_i * slot;
        ucs_status_t st = ucp_poll_ifunc(env.context, at, slot, args, env.worker);
        if (st == UCS_ERR_NO_MESSAGE) return false;
        if (st != UCS_OK) ++poll_errors, last_error = st;
        if (poll_mode == 3) ring_i = (ring_i + 1) % (env.buffer_size / slot);
        return true;
    };
    unsigned idle = 0;
    for (;;) {
        unsigned n = ucx_ifunc_progress(ctx);
        if (poll_mode == 1 && ucx_ifunc_poll(ctx, env.buffer, env.buffer_size, &state) != UCX_IFUNC_INPROGRESS) ++n;
        if (poll_mode >= 2 && compat_poll()) ++n;
        if (n) {
            idle = 0;
            continue;
        }
        if (++idle < 256) continue;
        sched_yield();  // oversubscribed test machines: let the others run
        struct pollfd pf{fd, POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0) continue;
        std::vector<uint8_t> m;
        if (!ctrl_recv(fd, &m) || m.empty()) break;  // the test went away
        std::vector<uint8_t> ok{'k'};
        switch (m[0]) {
        case 'C': {
            int r = int(get_u64(&m[1]));
            if (cp.connect) {
                g_addresses[r] = std::vector<uint8_t>(m.begin() + 9, m.end());
                break;
            }
            ucp_ep_h ep = env.connect(std::vector<uint8_t>(m.begin() + 9, m.end()), failed, ctx);
            eps.push_back(ep);
            rank_ep[r] = ep;
            ucx_ifunc_peer_add(ctx, r, ep);
            break;
        }
        case 'F': ucx_ifunc_cache_flush(ctx); break;
        case 'S': {
            ucx_ifunc_stats_t s;
            ucx_ifunc_stats(ctx, &s);
            ok.insert(ok.end(), reinterpret_cast<uint8_t *>(&s), reinterpret_cast<uint8_t *>(&s) + sizeof(s));
            break;
        }
        case 'G': put_u64(ok, state.counter); break;
        case 'J': {
            xrdma::JitCounters j = xrdma::jit_counters();
            put_u64(ok, j.compiles);
            put_u64(ok, j.cache_loads);
            put_u64(ok, j.shared);
            break;
        }
        case 'P':
            poll_mode = m[1];
            slot = m.size() >= 10 ? size_t(get_u64(&m[2])) : env.buffer_size;
            ring_i = 0;
            break;
        case 'R': {
            reply.ep = rank_ep.at(0);
            reply.remote_addr = get_u64(&m[1]);
            const size_t rlen = size_t(get_u64(&m[9]));
            std::vector<uint8_t> rkey(m.begin() + 17, m.begin() + 17 + long(rlen));
            std::string dir(m.begin() + 17 + long(rlen), m.end());
            uint64_t zero = 0;
            setenv("UCX_IFUNC_LIB_DIR", dir.c_str(), 1);
            ucp_ifunc_reg_param_t p{};
            p.name = const_cast<char *>("pong");
            if (ucp_ep_rkey_unpack(reply.ep, rkey.data(), &reply.rkey) != UCS_OK ||
                ucp_register_ifunc(env.context, p, &pong) != UCS_OK ||
                ucp_ifunc_msg_create(pong, &zero, sizeof(zero), &reply.msg) != UCS_OK)
                ok[0] = '!';
            unsetenv("UCX_IFUNC_LIB_DIR");
            // Over shared memory a ping lands while ping_main runs, without
            // this process's progress: ping_main may wait for it.
            if (const char *tls = getenv("UCX_TLS"); tls && strcmp(tls, "shm") == 0)
                reply.slot = static_cast<const volatile uint64_t *>(env.buffer);
            break;
        }
        case 'D': hook.passes = get_u64(&m[1]); break;
        case 'Y':
            hook.defer = get_u64(&m[1]);
            if (!hook.defer) ucx_ifunc_resume(ctx);
            break;
        case 'V':
            hook.reversed = get_u64(&m[1]) != 0;
            hook.view.size = cp.size;
            hook.peer_of.resize(size_t(cp.size));
            for (int r = 0; r < cp.size; ++r) hook.peer_of[size_t(r)] = cp.size - 1 - r;
            hook.view.peer_of = hook.peer_of.data();
            hook.view.rank_of = reversed_rank;
            break;
        case 'E':
            put_u64(ok, poll_errors);
            put_u64(ok, uint64_t(last_error));
            break;
        case 'M': {
            uint64_t llvm = 0, module = 0;
            if (FILE *maps = fopen("/proc/self/maps", "r")) {
                char line[4096];
                while (fgets(line, sizeof(line), maps)) {
                    if (strstr(line, "/libLLVM")) ++llvm;
                    if (strstr(line, "/libxrdma_jit")) ++module;
                }
                fclose(maps);
            }
            put_u64(ok, llvm);
            put_u64(ok, module);
            break;
        }
        case 'Q':
            if (pong) {
                ucp_ifunc_msg_free(reply.msg);
                ucp_deregister_ifunc(env.context, pong);
                ucp_rkey_destroy(reply.rkey);
            }
            for (ucp_ep_h ep : eps) env.close(ep);
            ucx_ifunc_context_destroy(ctx);
            ctrl_send(fd, ok);
            return 0;
        default: ok[0] = '?';
        }
        ctrl_send(fd, ok);
    }
    ucx_ifunc_context_destroy(ctx);
    return 0;
}
