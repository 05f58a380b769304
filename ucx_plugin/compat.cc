// The published ifunc API (ucx_ifunc/ucp_compat.h) on top of put-and-poll
// frames: the shipped code is the whole <name>.so, wrapped in an image.
#include "ucx_ifunc/ucp_compat.h"

#include "config.h"
#include "context.h"
#include "log.h"
#include "put_poll.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

using namespace xrdma;

struct ucp_ifunc {
    std::string name;
    void *dl;  // the library, loaded at the origin for its payload functions
    size_t (*payload_bound)(void *, size_t);
    int (*payload_init)(void *, size_t, void *, size_t *);
    Hash hash;
    std::vector<uint8_t> image;
};

namespace {

// Target-side state (code cache) per worker, created on first poll.
std::mutex g_lock;
std::map<ucp_worker_h, ucx_ifunc_context *> g_targets;

ucx_ifunc_context *target_ctx(ucp_worker_h worker)
{
    std::lock_guard<std::mutex> guard(g_lock);
    auto &ctx = g_targets[worker];
    if (!ctx) {
        ctx = new ucx_ifunc_context(config_get_ull("XRDMA_CODE_CACHE_SIZE"));
        ctx->params.worker = worker;
        ctx->params.size = 1;
        ctx->am_enabled = false;  // frames only: leave the worker's AM ids alone
    }
    return ctx;
}

ucs_status_t to_ucs(ucx_ifunc_status_t st)
{
    switch (st) {
    case UCX_IFUNC_OK: return UCS_OK;
    case UCX_IFUNC_INPROGRESS: return UCS_INPROGRESS;
    case UCX_IFUNC_ERR_NO_MEMORY: return UCS_ERR_NO_MEMORY;
    case UCX_IFUNC_ERR_IO: return UCS_ERR_IO_ERROR;
    case UCX_IFUNC_ERR_NO_PART:
    case UCX_IFUNC_ERR_LINK:
    case UCX_IFUNC_ERR_DENIED: return UCS_ERR_UNSUPPORTED;
    case UCX_IFUNC_ERR_PEER: return UCS_ERR_UNREACHABLE;
    default: return UCS_ERR_INVALID_PARAM;
    }
}

}  // namespace

extern "C" {

ucs_status_t ucp_register_ifunc(ucp_context_h context, const ucp_ifunc_reg_param_t param,
                                ucp_ifunc_h *ifunc_p)
{
    if (!context || !param.name || !*param.name || !ifunc_p) return UCS_ERR_INVALID_PARAM;
    if (param.llvm_bc) {
        XRDMA_ERROR("ifunc %s: LLVM bitcode ifuncs are not supported yet", param.name);
        return UCS_ERR_UNSUPPORTED;
    }
    const char *dir = getenv("UCX_IFUNC_LIB_DIR");
    std::string path = std::string(dir && *dir ? dir : ".") + "/" + param.name + ".so";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        XRDMA_ERROR("ifunc %s: cannot read %s: %s", param.name, path.c_str(), strerror(errno));
        return UCS_ERR_NO_ELEM;
    }
    std::vector<uint8_t> so((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    void *dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        XRDMA_ERROR("ifunc %s: %s", param.name, dlerror());
        return UCS_ERR_INVALID_PARAM;
    }
    std::string n = param.name;
    auto *f = new ucp_ifunc;
    f->name = n;
    f->dl = dl;
    f->payload_bound = reinterpret_cast<size_t (*)(void *, size_t)>(dlsym(dl, (n + "_payload_bound").c_str()));
    f->payload_init = reinterpret_cast<int (*)(void *, size_t, void *, size_t *)>(
        dlsym(dl, (n + "_payload_init").c_str()));
    if (!f->payload_bound || !f->payload_init || !dlsym(dl, (n + "_main").c_str())) {
        XRDMA_ERROR("ifunc %s: %s must export %s_main, %s_payload_bound and %s_payload_init",
                    n.c_str(), path.c_str(), n.c_str(), n.c_str(), n.c_str());
        dlclose(dl);
        delete f;
        return UCS_ERR_INVALID_PARAM;
    }
    f->image = image_build({n + "_main"}, {PartSpec{PartKind::native_elf, host_triple(), so}});
    image_peek_hash(f->image.data(), f->image.size(), &f->hash);
    *ifunc_p = f;
    return UCS_OK;
}

ucs_status_t ucp_deregister_ifunc(ucp_context_h, ucp_ifunc_h ifunc_h)
{
    if (!ifunc_h) return UCS_ERR_INVALID_PARAM;
    dlclose(ifunc_h->dl);
    delete ifunc_h;
    return UCS_OK;
}

ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h f, void *source_args, size_t source_args_size,
                                  ucp_ifunc_msg_t *msg_p)
{
    if (!f || !msg_p) return UCS_ERR_INVALID_PARAM;
    size_t bound = f->payload_bound(source_args, source_args_size);
    ucx_ifunc_frame_t fr;
    ucx_ifunc_status_t st = frame_build(f->hash, f->name + "_main", &f->image, true, bound, &fr);
    if (st != UCX_IFUNC_OK) return to_ucs(st);
    size_t used = bound;
    size_t n;
    void *payload = ucx_ifunc_frame_args(&fr, &n);
    if (f->payload_init(source_args, source_args_size, payload, &used) != 0 || used > bound) {
        XRDMA_ERROR("ifunc %s: %s_payload_init failed (or wrote %zu bytes of a %zu-byte bound)",
                    f->name.c_str(), f->name.c_str(), used, bound);
        ucx_ifunc_frame_free(&fr);
        return UCS_ERR_INVALID_PARAM;
    }
    *msg_p = ucp_ifunc_msg_t{f, fr.frame, fr.frame_size};
    return UCS_OK;
}

ucs_status_t ucp_ifunc_msg_free(ucp_ifunc_msg_t msg)
{
    free(msg.frame);
    return UCS_OK;
}

ucs_status_t ucp_ifunc_msg_get_payload_ptr(ucp_ifunc_msg_t *msg_p, void **payload, size_t *payload_size)
{
    if (!msg_p || !msg_p->frame || !payload) return UCS_ERR_INVALID_PARAM;
    ucx_ifunc_frame_t fr{msg_p->frame, msg_p->frame_size};
    *payload = ucx_ifunc_frame_args(&fr, payload_size);
    return UCS_OK;
}

ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg, uint64_t remote_addr, ucp_rkey_h rkey)
{
    ucx_ifunc_frame_t fr{msg.frame, msg.frame_size};
    return to_ucs(ucx_ifunc_frame_put(ep, &fr, remote_addr, rkey));
}

ucs_status_t ucp_poll_ifunc(ucp_context_h, void *buffer, size_t buffer_size, void *target_args,
                            ucp_worker_h worker)
{
    if (!buffer || !worker) return UCS_ERR_INVALID_PARAM;
    ucx_ifunc_context *ctx = target_ctx(worker);
    std::string why;
    ucx_ifunc_status_t st = frame_poll(ctx, buffer, buffer_size, target_args, &why);
    if (st == UCX_IFUNC_INPROGRESS) {
        ucp_worker_progress(worker);
        return UCS_ERR_NO_MESSAGE;
    }
    return to_ucs(st);
}

}  // extern "C"
