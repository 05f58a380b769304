#include "ucx_env.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>

namespace xrdma_test {

static void check(ucs_status_t st, const char *what)
{
    if (st != UCS_OK) {
        fprintf(stderr, "%s: %s\n", what, ucs_status_string(st));
        abort();
    }
}

UcxEnv::UcxEnv(size_t size) : buffer_size(size)
{
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    check(ucp_init(&p, nullptr, &context), "ucp_init");
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    check(ucp_worker_create(context, &wp, &worker), "ucp_worker_create");
    ucp_address_t *addr;
    size_t len;
    check(ucp_worker_get_address(worker, &addr, &len), "ucp_worker_get_address");
    address.assign(reinterpret_cast<uint8_t *>(addr), reinterpret_cast<uint8_t *>(addr) + len);
    ucp_worker_release_address(worker, addr);

    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = buffer_size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    check(ucp_mem_map(context, &mp, &buffer_mem), "ucp_mem_map");
    ucp_mem_attr_t ma{};
    ma.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    check(ucp_mem_query(buffer_mem, &ma), "ucp_mem_query");
    buffer = ma.address;
    memset(buffer, 0, buffer_size);
    void *rk;
    size_t rk_len;
    check(ucp_rkey_pack(context, buffer_mem, &rk, &rk_len), "ucp_rkey_pack");
    rkey.assign(static_cast<uint8_t *>(rk), static_cast<uint8_t *>(rk) + rk_len);
    ucp_rkey_buffer_release(rk);
}

UcxEnv::~UcxEnv()
{
    ucp_mem_unmap(context, buffer_mem);
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
}

ucp_ep_h UcxEnv::connect(const std::vector<uint8_t> &remote, ucp_err_handler_cb_t on_error, void *arg)
{
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.address = reinterpret_cast<const ucp_address_t *>(remote.data());
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    if (on_error) {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_handler.cb = on_error;
        ep.err_handler.arg = arg;
    }
    // Shared-memory transports have no peer failure detection in UCX 1.13:
    // asking for it there makes the peer unreachable.
    const char *tls = getenv("UCX_TLS");
    if (!tls || !strstr(tls, "tcp"))
        ep.field_mask &= ~(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER);
    ucp_ep_h h;
    check(ucp_ep_create(worker, &ep, &h), "ucp_ep_create");
    return h;
}

static void wait_request(ucp_worker_h worker, ucs_status_ptr_t r)
{
    if (r == nullptr || UCS_PTR_IS_ERR(r)) return;
    while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker);
    ucp_request_free(r);
}

void UcxEnv::close(ucp_ep_h ep)
{
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    wait_request(worker, ucp_ep_close_nbx(ep, &p));
}

void UcxEnv::flush(ucp_ep_h ep)
{
    ucp_request_param_t p{};
    wait_request(worker, ucp_ep_flush_nbx(ep, &p));
}

bool ctrl_send(int fd, const std::vector<uint8_t> &msg)
{
    return send(fd, msg.data(), msg.size(), MSG_NOSIGNAL) == ssize_t(msg.size());
}

bool ctrl_recv(int fd, std::vector<uint8_t> *msg)
{
    msg->resize(1 << 16);
    ssize_t n = recv(fd, msg->data(), msg->size(), 0);
    if (n <= 0) return false;
    msg->resize(size_t(n));
    return true;
}

void put_u64(std::vector<uint8_t> &v, uint64_t x)
{
    uint8_t b[8];
    memcpy(b, &x, 8);
    v.insert(v.end(), b, b + 8);
}

uint64_t get_u64(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

}  // namespace xrdma_test
