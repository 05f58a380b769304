// UCX objects of one test process (origin or peer), released in reverse.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace xrdma_test {

struct UcxEnv {
    ucp_context_h context = nullptr;
    ucp_worker_h worker = nullptr;
    ucp_mem_h buffer_mem = nullptr;
    void *buffer = nullptr;  // exposed for put-and-poll
    size_t buffer_size = 0;
    std::vector<uint8_t> address;  // worker address
    std::vector<uint8_t> rkey;     // packed rkey of buffer

    // Create context (AM + RMA), worker and an exposed buffer. Aborts on error.
    explicit UcxEnv(size_t buffer_size = 1 << 20);
    ~UcxEnv();
    UcxEnv(const UcxEnv &) = delete;
    UcxEnv &operator=(const UcxEnv &) = delete;

    // Connect to a remote worker address; @p on_error is called if the peer fails.
    ucp_ep_h connect(const std::vector<uint8_t> &remote_address,
                     ucp_err_handler_cb_t on_error = nullptr, void *arg = nullptr);
    // Close an endpoint, progressing until done.
    void close(ucp_ep_h ep);
    // Flush an endpoint (all puts complete remotely).
    void flush(ucp_ep_h ep);
};

// Length-prefixed control messages over a SOCK_SEQPACKET socket.
bool ctrl_send(int fd, const std::vector<uint8_t> &msg);
bool ctrl_recv(int fd, std::vector<uint8_t> *msg);  // blocking
void put_u64(std::vector<uint8_t> &v, uint64_t x);
uint64_t get_u64(const uint8_t *p);

// Whether the test asked for contexts with peers_by_rank (every process
// of a cluster knows every other by rank before anything is sent):
// XRDMA_TEST_PEERS_BY_RANK=1 in the environment when the cluster starts;
// =peers: the peers' contexts only, not the test's own (@p own), a job that
// mixes the setting.
inline int peers_by_rank(bool own = false)
{
    const char *v = getenv("XRDMA_TEST_PEERS_BY_RANK");
    return v && (strcmp(v, "1") == 0 || (!own && strcmp(v, "peers") == 0));
}

}  // namespace xrdma_test
