#include "cluster.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace xrdma_test {

static std::string builddir()
{
    // Absolute: peers start in a directory of their own.
    const char *b = getenv("XRDMA_TEST_BUILDDIR");
    char *abs = realpath(b ? b : ".", nullptr);
    std::string s = abs ? abs : ".";
    free(abs);
    return s;
}

std::string Cluster::image_path(const std::string &name)
{
    return builddir() + "/tests/plugin/ifuncs/" + name + ".xfn";
}

std::vector<std::string> transports() { return {"shm", "tcp"}; }

void use_transport(const std::string &tls)
{
    setenv("UCX_TLS", tls.c_str(), 1);
    if (tls == "tcp")
        setenv("UCX_NET_DEVICES", "lo", 1);  // loopback only
    else
        unsetenv("UCX_NET_DEVICES");
}

static void complete_cb(const ucx_ifunc_result_t *r, void *user_data)
{
    auto *out = static_cast<Result *>(user_data);
    out->done = true;
    out->status = r->status;
    out->rank = r->rank;
    out->message = r->message ? r->message : "";
    out->reply.assign(static_cast<const uint8_t *>(r->reply),
                      static_cast<const uint8_t *>(r->reply) + r->reply_size);
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t)
{
    ucx_ifunc_peer_failed(static_cast<Cluster *>(arg)->ctx, ep);
}

Cluster::Cluster(int npeers)
{
    try {
        start(npeers);
    } catch (...) {
        // No destructor runs for a half-built object: reap what was started.
        for (Peer &p : peers) {
            kill(p.pid, SIGKILL);
            waitpid(p.pid, nullptr, 0);
            rmdir(p.dir.c_str());
        }
        if (ctx) ucx_ifunc_context_destroy(ctx);
        throw;
    }
}

void Cluster::start(int npeers)
{
    ucx_ifunc_context_params_t cp{};
    cp.worker = env.worker;
    cp.ucp_context = env.context;
    cp.rank = 0;
    cp.size = npeers + 1;
    cp.peers_by_rank = peers_by_rank(true);
    if (ucx_ifunc_context_create(&cp, &ctx) != UCX_IFUNC_OK) throw std::runtime_error("context");
    std::string exe = builddir() + "/tests/plugin/xrdma_test_peer";
    for (int r = 1; r <= npeers; ++r) {
        Peer p;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair");
        char tmpl[] = "/tmp/xrdma-peer-XXXXXX";
        if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
        p.dir = tmpl;
        p.pid = fork();
        if (p.pid == 0) {
            // The target knows nothing of the origin's files: an empty cwd,
            // no library directory.
            if (chdir(p.dir.c_str()) != 0) _exit(126);
            unsetenv("UCX_IFUNC_LIB_DIR");
            int fd = dup(sv[1]);  // without CLOEXEC
            std::string fds = std::to_string(fd), rs = std::to_string(r), ss = std::to_string(npeers + 1);
            // XRDMA_TEST_PEER: another peer command (words split at spaces),
            // e.g. an aarch64 build of the peer under qemu-aarch64-static.
            const char *cmd = getenv("XRDMA_TEST_PEER");
            std::vector<std::string> words;
            if (cmd && *cmd) {
                std::string w, c = cmd;
                for (size_t i = 0; i <= c.size(); ++i) {
                    if (i == c.size() || c[i] == ' ') {
                        if (!w.empty()) words.push_back(w);
                        w.clear();
                    } else {
                        w += c[i];
                    }
                }
            } else {
                words.push_back(exe);
            }
            words.insert(words.end(), {fds, rs, ss});
            std::vector<char *> argv;
            for (auto &w : words) argv.push_back(const_cast<char *>(w.c_str()));
            argv.push_back(nullptr);
            execvp(argv[0], argv.data());
            _exit(127);
        }
        close(sv[1]);
        p.fd = sv[0];
        peers.push_back(p);  // recorded at once, so a failure below still reaps it
        Peer &q = peers.back();
        std::vector<uint8_t> hello;
        if (!ctrl_recv(q.fd, &hello) || hello.empty() || hello[0] != 'H')
            throw std::runtime_error("peer " + std::to_string(r) + " did not start (" +
                                     (getenv("XRDMA_TEST_PEER") ? getenv("XRDMA_TEST_PEER") : exe) + ")");
        size_t alen = get_u64(&hello[1]);
        q.address.assign(hello.begin() + 9, hello.begin() + 9 + long(alen));
        q.buffer = get_u64(&hello[9 + alen]);
        std::vector<uint8_t> rkey(hello.begin() + 17 + long(alen), hello.end());
        q.ep = env.connect(q.address, ep_failed, this);
        if (ucp_ep_rkey_unpack(q.ep, rkey.data(), &q.rkey) != UCS_OK) throw std::runtime_error("rkey");
        q.packed_rkey = rkey;
        ucx_ifunc_peer_add(ctx, r, q.ep);
    }
    // Everyone knows everyone (rank 0 included) for forwarding.
    for (int r = 1; r <= npeers; ++r) {
        for (int other = 0; other <= npeers; ++other) {
            if (other == r) continue;
            std::vector<uint8_t> cmd{'C'};
            put_u64(cmd, uint64_t(other));
            const auto &a = other == 0 ? env.address : peer(other).address;
            cmd.insert(cmd.end(), a.begin(), a.end());
            ctrl(r, cmd);
        }
    }
}

Cluster::~Cluster()
{
    for (size_t i = 0; i < peers.size(); ++i) {
        Peer &p = peers[i];
        if (peer_alive(int(i) + 1)) {
            std::vector<uint8_t> q{'Q'}, ans;
            ctrl_send(p.fd, q);
            // Keep our side progressing while the peer closes its endpoints.
            progress_until([&] {
                struct pollfd pf{p.fd, POLLIN, 0};
                return poll(&pf, 1, 0) > 0;
            }, 20);
        }
        if (p.rkey) ucp_rkey_destroy(p.rkey);
        env.close(p.ep);
        close(p.fd);
        int status;
        if (waitpid(p.pid, &status, WNOHANG) == 0) {
            progress_until([&] { return waitpid(p.pid, &status, WNOHANG) != 0; }, 20);
            kill(p.pid, SIGKILL);
            waitpid(p.pid, &status, 0);
        }
        rmdir(p.dir.c_str());
    }
    ucx_ifunc_context_destroy(ctx);
}

bool Cluster::progress_until(const std::function<bool()> &cond, double seconds)
{
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    unsigned spins = 0;
    while (!cond()) {
        if (pass(ctx) == 0 && (++spins & 255) == 0) {
            sched_yield();
            if (std::chrono::steady_clock::now() > deadline) return false;
        }
    }
    return true;
}

void Cluster::invoke_async(ucx_ifunc_h f, int rank, const void *args, size_t len, Result *out, unsigned flags)
{
    *out = Result{};
    ucx_ifunc_status_t st = ucx_ifunc_invoke_nbx(f, peer(rank).ep, args, len, flags, complete_cb, out);
    if (st != UCX_IFUNC_INPROGRESS) {
        out->done = true;
        out->status = st;
        out->message = "invoke_nb refused";
    }
}

Result Cluster::invoke(ucx_ifunc_h f, int rank, const void *args, size_t len)
{
    Result r;
    invoke_async(f, rank, args, len, &r);
    if (!progress_until([&] { return r.done; })) r.message = "TIMEOUT waiting for the completion";
    return r;
}

std::vector<uint8_t> Cluster::ctrl(int rank, const std::vector<uint8_t> &cmd)
{
    Peer &p = peer(rank);
    if (!ctrl_send(p.fd, cmd)) throw std::runtime_error("peer control socket closed");
    bool ready = progress_until([&] {
        struct pollfd pf{p.fd, POLLIN, 0};
        return poll(&pf, 1, 0) > 0;
    });
    std::vector<uint8_t> ans;
    if (!ready || !ctrl_recv(p.fd, &ans) || ans.empty() || ans[0] != 'k')
        throw std::runtime_error("peer " + std::to_string(rank) + " did not answer");
    return ans;
}

ucx_ifunc_stats_t Cluster::stats() const
{
    ucx_ifunc_stats_t s;
    ucx_ifunc_stats(ctx, &s);
    return s;
}

ucx_ifunc_stats_t Cluster::peer_stats(int rank)
{
    auto ans = ctrl(rank, {'S'});
    ucx_ifunc_stats_t s;
    memcpy(&s, &ans[1], sizeof(s));
    return s;
}

uint64_t Cluster::peer_counter(int rank) { return get_u64(&ctrl(rank, {'G'})[1]); }

bool Cluster::peer_alive(int rank)
{
    int status;
    return waitpid(peer(rank).pid, &status, WNOHANG) == 0;
}

}  // namespace xrdma_test
