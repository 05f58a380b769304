// Test harness: this (gtest) process is rank 0, the origin; it starts peer
// processes (tests/plugin/xrdma_test_peer) with ranks 1..n, each in an empty
// directory of its own, and connects everyone to everyone.
#pragma once

#include "ucx_env.h"
#include "ucx_ifunc.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace xrdma_test {

struct Result {
    bool done = false;
    ucx_ifunc_status_t status = UCX_IFUNC_INPROGRESS;
    std::vector<uint8_t> reply;
    int rank = -2;
    std::string message;
};

struct Peer {
    pid_t pid = -1;
    int fd = -1;
    std::string dir;
    ucp_ep_h ep = nullptr;
    std::vector<uint8_t> address;
    uint64_t buffer = 0;
    ucp_rkey_h rkey = nullptr;
    std::vector<uint8_t> packed_rkey;  // what rkey was unpacked from
};

class Cluster {
public:
    explicit Cluster(int npeers);
    ~Cluster();

    UcxEnv env;
    ucx_ifunc_context_h ctx = nullptr;
    std::vector<Peer> peers;  // peers[i] has rank i+1

    Peer &peer(int rank) { return peers.at(size_t(rank - 1)); }
    // Invoke and progress until the completion arrived (or the deadline).
    Result invoke(ucx_ifunc_h f, int rank, const void *args, size_t len);
    void invoke_async(ucx_ifunc_h f, int rank, const void *args, size_t len, Result *out, unsigned flags = 0);
    // Progress until @p cond holds; false at the deadline.
    bool progress_until(const std::function<bool()> &cond, double seconds = 60);
    // The progress call progress_until() (and so invoke()) makes.
    unsigned (*pass)(ucx_ifunc_context_h) = ucx_ifunc_progress;
    std::vector<uint8_t> ctrl(int rank, const std::vector<uint8_t> &cmd);
    // This process's counters (rank 0, the origin); peer_stats() asks a peer.
    ucx_ifunc_stats_t stats() const;
    ucx_ifunc_stats_t peer_stats(int rank);
    uint64_t peer_counter(int rank);
    bool peer_alive(int rank);

    static std::string image_path(const std::string &name);

private:
    void start(int npeers);
};

// UCX_TLS values the multi-process tests run over.
std::vector<std::string> transports();
// Set UCX_TLS (and UCX_NET_DEVICES=lo for tcp) for this process and peers.
void use_transport(const std::string &tls);

}  // namespace xrdma_test
