// The published ifunc API (ucx_ifunc/ucp_compat.h) on top of put-and-poll
// frames: the shipped code is the whole <name>.so, wrapped in an image, or
// with llvm_bc = 1 the bitcode files <name>.<triple>.bc (and the library
// list <name>.deps), which each target compiles for itself.
#include "ucx_ifunc/ucp_compat.h"

#include "xrdma_common/bytes.h"
#include "xrdma_common/config.h"
#include "run/context.h"
#include "compat/frame_watch.h"
#include "load/loader_jit.h"
#include "xrdma_common/hot.h"
#include "xrdma_common/log.h"
#include "compat/poll_warm.h"
#include "compat/put_poll.h"
#include "compat/rkey_memo.h"
#include "wire/wire.h"

#include <ucs/config/parser.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <mutex>
#include <unistd.h>

using namespace xrdma;

struct ucp_ifunc {
    ucp_context_h context = nullptr;  // registered with
    std::string name;
    void *dl;  // the library, loaded at the origin for its payload functions
    std::unique_ptr<LoadedCode> jit;  // or, without <name>.so, its bitcode compiled here
    size_t (*payload_bound)(void *, size_t);
    int (*payload_init)(void *, size_t, void *, size_t *);
    Hash hash;
    std::vector<uint8_t> image;
    // The code travels once per endpoint (the published API's semantics):
    // the endpoints a message with code was put to.
    std::unordered_set<ucp_ep_h> eps_with_code;
    // Per message (by its frame): the same frame without code, sent to
    // endpoints in eps_with_code. The payload the caller edits is the one in
    // msg.frame; it is copied here only when it differs.
    struct Bare {
        ucx_ifunc_frame_t frame;
        uint32_t msg_args_off;  // the payload in msg.frame
        uint32_t args_off;      // ... and in frame
        uint32_t args_len;
        uint64_t word_mask;     // payload_word_mask(args_len)
        FrameWatch watch;       // the message's last send, for a refusal
    };
    std::unordered_map<const void *, Bare> bare;
    // The last endpoint known to have the code, and the last message sent
    // without it (a send loop looks nothing up).
    ucp_ep_h last_ep = nullptr;
    const void *last_frame = nullptr;
    Bare *last_bare = nullptr;
    // Where the slots its messages go to are mapped here (shared memory).
    RkeyPtrMemo mapped;
};

namespace {

// UCX warns about every UCX_* variable that no configuration table of its
// read ("unused env variable: UCX_IFUNC_LIB_DIR"). The variable is read
// through a table of ours, parsed when the library is loaded (before the
// program's ucp_init), so that UCX counts it as used. Its value is still
// taken from the environment at registration: programs set it late.
struct LibDirConfig {
    char *dir;
};
ucs_config_field_t g_lib_dir_table[] = {
    {"IFUNC_LIB_DIR", ".", "Directory of the published ifunc API's <name>.so libraries",
     offsetof(LibDirConfig, dir), UCS_CONFIG_TYPE_STRING},
    {nullptr, nullptr, nullptr, 0, {}},
};
[[maybe_unused]] const bool g_lib_dir_read = [] {
    LibDirConfig c{};
    if (ucs_config_parser_fill_opts(&c, g_lib_dir_table, "UCX_", nullptr, 1) != UCS_OK) return false;
    ucs_config_parser_release_opts(&c, g_lib_dir_table);
    return true;
}();

// Target-side state (code cache) per worker, created on first poll.
std::mutex g_lock;
std::map<ucp_worker_h, ucx_ifunc_context *> g_targets;
// The registered ifuncs per context (under g_lock): whose messages a poll
// with nothing to do watches for refusals.
std::map<ucp_context_h, std::set<ucp_ifunc *>> g_registered;

// ucp_poll_ifunc() with nothing to run looks for refusals of the program's
// messages after kWatchEvery such calls in a row on this thread, and again
// after each kWatchEvery more: a program waiting for an answer that will not
// come hears within some milliseconds (shared memory) to a tenth of a second
// (TCP); one waiting for the answers that come (a ping-pong waits some
// hundred calls) never looks, and puts no get on the wire.
constexpr uint64_t kWatchEvery = 65536;
// (Initial-exec: one %fs-relative access per poll, not a __tls_get_addr() call.)
__thread uint64_t t_idle_polls __attribute__((tls_model("initial-exec"))) = 0;

// The refusal (frame_watch.h) of a message registered under @p context that
// its target refused, logged with the target's reason: UCS_ERR_REJECTED,
// one refused message a call; else UCS_ERR_NO_MESSAGE.
__attribute__((noinline, cold)) ucs_status_t watch_refusals(ucp_context_h context)
{
    std::lock_guard<std::mutex> guard(g_lock);
    auto it = g_registered.find(context);
    if (it == g_registered.end()) return UCS_ERR_NO_MESSAGE;
    for (ucp_ifunc *f : it->second) {
        for (auto &m : f->bare) {
            const uint64_t addr = m.second.watch.remote_addr;
            ucx_ifunc_status_t st;
            std::string why;
            if (!frame_watch_refused(&m.second.watch, &st, &why)) continue;
            XRDMA_WARN("ifunc %s: the target refused the message put to %#llx (%s): %s", f->name.c_str(),
                       static_cast<unsigned long long>(addr), ucx_ifunc_status_string(st), why.c_str());
            return UCS_ERR_REJECTED;
        }
    }
    return UCS_ERR_NO_MESSAGE;
}

// A program polls one worker over and over: the last worker's context
// without the lock (a pair published once, never freed, like the contexts
// themselves).
struct LastTarget {
    ucp_worker_h worker;
    ucx_ifunc_context *ctx;
};
std::atomic<const LastTarget *> g_last_target{nullptr};

// target_ctx() for another worker than the last one (noinline: its lock and
// map would weigh on every poll's frame).
__attribute__((noinline)) ucx_ifunc_context *target_ctx_slow(ucp_worker_h worker)
{
    std::lock_guard<std::mutex> guard(g_lock);
    static std::map<ucp_worker_h, LastTarget> pairs;
    auto &ctx = g_targets[worker];
    if (!ctx) {
        ctx = new ucx_ifunc_context(config_get_ull("XRDMA_CODE_CACHE_SIZE"));
        ctx->params.worker = worker;
        ctx->params.size = 1;
        ctx->am_enabled = false;  // frames only: leave the worker's AM ids alone
    }
    auto it = pairs.emplace(worker, LastTarget{worker, ctx}).first;
    g_last_target.store(&it->second, std::memory_order_release);
    return ctx;
}

inline ucx_ifunc_context *target_ctx(ucp_worker_h worker)
{
    const LastTarget *l = g_last_target.load(std::memory_order_acquire);
    return l && l->worker == worker ? l->ctx : target_ctx_slow(worker);
}

// ucp_poll_ifunc() with nothing to run (the common case of a polling loop):
// no more work than a progress call, but now and then a look for refusals
// of this program's own messages.
inline ucs_status_t poll_idle(ucp_context_h context, ucp_worker_h worker)
{
    ucp_worker_progress(worker);
    if (__builtin_expect(++t_idle_polls % kWatchEvery == 0, 0)) return watch_refusals(context);
    return UCS_ERR_NO_MESSAGE;
}

// ucp_poll_ifunc() with a frame in @p buf (its ready word @p ready): the
// warm one (compat/poll_warm.h) runs here, any other in frame_poll(). A
// message consumed without running to its end (refused, or its main
// faulted) is discarded, as the published implementation says it.
__attribute__((noinline)) XRDMA_HOT ucs_status_t poll_frame(ucp_context_h context, uint8_t *buf, size_t buffer_size,
                                                            void *target_args, ucp_worker_h worker, uint64_t ready)
{
    ucx_ifunc_context *ctx = target_ctx(worker);
    ucx_ifunc_status_t st;
    if (ready != kFrameStored || ctx->in_dispatch || !frame_run_warm(ctx, buf, buffer_size, target_args, &st))
        st = frame_poll(ctx, buf, buffer_size, target_args);
    if (st == UCX_IFUNC_INPROGRESS) return poll_idle(context, worker);
    t_idle_polls = 0;
    return st == UCX_IFUNC_OK ? UCS_OK : UCS_ERR_CANCELED;
}

// The bits of a payload of @p n bytes in its first word, for one word
// compare of a payload of up to 8 bytes (a frame pads its payload to 8
// bytes: the whole word is there to read; wire.h: little-endian hosts);
// 0 for a longer one.
inline uint64_t payload_word_mask(size_t n)
{
    return n > 8 ? 0 : n == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * n)) - 1;
}

// Whether the @p n payload bytes at @p a and @p b are the same (@p mask:
// payload_word_mask(n)).
inline bool same_payload(const uint8_t *a, const uint8_t *b, size_t n, uint64_t mask)
{
    if (!mask) return same_bytes(a, b, n);
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return ((x ^ y) & mask) == 0;
}

// What building and sending a message return (ucp_poll_ifunc() says
// UCS_ERR_CANCELED for every message it discards).
ucs_status_t to_ucs(ucx_ifunc_status_t st)
{
    switch (st) {
    case UCX_IFUNC_OK: return UCS_OK;
    case UCX_IFUNC_INPROGRESS: return UCS_INPROGRESS;
    case UCX_IFUNC_ERR_NO_MEMORY: return UCS_ERR_NO_MEMORY;
    case UCX_IFUNC_ERR_PEER: return UCS_ERR_UNREACHABLE;
    case UCX_IFUNC_ERR_TRANSPORT: return UCS_ERR_IO_ERROR;
    default: return UCS_ERR_INVALID_PARAM;
    }
}

bool triple_ok(const std::string &t)
{
    if (t.empty() || t.size() > 64) return false;
    for (unsigned char c : t)
        if (!isalnum(c) && c != '_' && c != '.' && c != '-') return false;
    return true;
}

// llvm_bc = 1: an image of the bitcode files <dir>/<name>.<triple>.bc, plus
// <name>.deps as a library list. Empty on error (logged).
std::vector<uint8_t> bitcode_image(const std::string &dir, const std::string &n)
{
    std::vector<PartSpec> parts;
    DIR *d = opendir(dir.c_str());
    if (!d) {
        XRDMA_ERROR("ifunc %s: cannot list %s: %s", n.c_str(), dir.c_str(), strerror(errno));
        return {};
    }
    std::vector<std::string> files;
    while (dirent *e = readdir(d)) files.push_back(e->d_name);
    closedir(d);
    std::sort(files.begin(), files.end());  // reproducible images
    const std::string prefix = n + ".", suffix = ".bc";
    for (const std::string &f : files) {
        if (f.size() <= prefix.size() + suffix.size() || f.compare(0, prefix.size(), prefix) != 0 ||
            f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string triple = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
        if (!triple_ok(triple)) continue;
        PartSpec p{PartKind::llvm_bitcode, triple, {}};
        if (read_file(dir + "/" + f, &p.data) != UCX_IFUNC_OK) {
            XRDMA_ERROR("ifunc %s: cannot read %s/%s", n.c_str(), dir.c_str(), f.c_str());
            return {};
        }
        parts.push_back(std::move(p));
    }
    if (parts.empty()) {
        XRDMA_ERROR("ifunc %s: llvm_bc = 1 but %s has no %s.<triple>.bc", n.c_str(), dir.c_str(), n.c_str());
        return {};
    }
    PartSpec deps{PartKind::library_list, "any", {}};
    if (read_file(dir + "/" + n + ".deps", &deps.data) == UCX_IFUNC_OK) parts.push_back(std::move(deps));
    return image_build({n + "_main"}, parts);
}

// llvm_bc = 1. The origin needs <name>_payload_bound/_init itself: from
// <name>.so when there is one, else from the bitcode for this machine,
// compiled here.
ucs_status_t register_bitcode(const std::string &dir, const std::string &n, const std::string &so_path,
                              ucp_ifunc_h *ifunc_p)
{
    auto f = std::make_unique<ucp_ifunc>();
    f->name = n;
    f->dl = nullptr;
    f->image = bitcode_image(dir, n);
    if (f->image.empty()) return UCS_ERR_NO_ELEM;
    image_peek_hash(f->image.data(), f->image.size(), &f->hash);
    void *bound = nullptr, *init = nullptr;
    if (access(so_path.c_str(), F_OK) == 0) {
        f->dl = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!f->dl) {
            XRDMA_ERROR("ifunc %s: %s", n.c_str(), dlerror());
            return UCS_ERR_INVALID_PARAM;
        }
        bound = dlsym(f->dl, (n + "_payload_bound").c_str());
        init = dlsym(f->dl, (n + "_payload_init").c_str());
    } else {
        ImageView v;
        std::string why;
        const PartView *mine = nullptr;
        if (image_parse(f->image.data(), f->image.size(), &v, &why) == UCX_IFUNC_OK)
            for (const PartView &p : v.parts)
                if (p.kind == PartKind::llvm_bitcode && triple_is_host(p.triple)) mine = &p;
        if (!mine) {
            XRDMA_ERROR("ifunc %s: neither %s nor %s/%s.%s.bc for this machine's payload functions", n.c_str(),
                        so_path.c_str(), dir.c_str(), n.c_str(), host_triple().c_str());
            return UCS_ERR_NO_ELEM;
        }
        if (load_bitcode(v, *mine, n, &f->jit, &why, /*trusted=*/true) != UCX_IFUNC_OK) {
            XRDMA_ERROR("ifunc %s: %s", n.c_str(), why.c_str());
            return UCS_ERR_INVALID_PARAM;
        }
        bound = f->jit->symbol(n + "_payload_bound");
        init = f->jit->symbol(n + "_payload_init");
    }
    if (!bound || !init) {
        XRDMA_ERROR("ifunc %s: the payload functions %s_payload_bound and %s_payload_init are missing", n.c_str(),
                    n.c_str(), n.c_str());
        if (f->dl) dlclose(f->dl);
        return UCS_ERR_INVALID_PARAM;
    }
    f->payload_bound = reinterpret_cast<size_t (*)(void *, size_t)>(bound);
    f->payload_init = reinterpret_cast<int (*)(void *, size_t, void *, size_t *)>(init);
    *ifunc_p = f.release();
    return UCS_OK;
}

// ucp_register_ifunc() of <name>.so.
ucs_status_t register_library(const char *name, const std::string &path, ucp_ifunc_h *ifunc_p)
{
    std::vector<uint8_t> so;
    if (read_file(path, &so) != UCX_IFUNC_OK) {
        XRDMA_ERROR("ifunc %s: cannot read %s: %s", name, path.c_str(), strerror(errno));
        return UCS_ERR_NO_ELEM;
    }
    void *dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        XRDMA_ERROR("ifunc %s: %s", name, dlerror());
        return UCS_ERR_INVALID_PARAM;
    }
    std::string n = name;
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

// Send message @p msg as its frame without code, @p b (its endpoint has
// the code), with the payload of msg.frame. Unchanged (a resend), nothing
// is written into b at all.
__attribute__((always_inline)) inline ucs_status_t send_bare(ucp_ep_h ep, const ucp_ifunc_msg_t &msg, ucp_ifunc::Bare &b, uint64_t remote_addr,
                                                              ucp_rkey_h rkey)
{
    const uint8_t *src = static_cast<const uint8_t *>(msg.frame) + b.msg_args_off;
    uint8_t *dst = static_cast<uint8_t *>(b.frame.frame) + b.args_off;
    if (!same_payload(dst, src, b.args_len, b.word_mask)) {
        memcpy(dst, src, b.args_len);
        frame_seal(&b.frame);
    }
    void *slot = frame_storable(remote_addr) ? msg.ifunc_h->mapped.find(rkey, remote_addr) : nullptr;
    const ucs_status_t st = to_ucs(frame_send_to(ep, &b.frame, remote_addr, rkey, slot));
    if (!UCS_STATUS_IS_ERR(st)) frame_watch_sent(&b.watch, ep, &b.frame, remote_addr, rkey);
    return st;
}

// ucp_ifunc_send_nbix() for another message or endpoint than the last.
__attribute__((noinline)) ucs_status_t send_other(ucp_ep_h ep, const ucp_ifunc_msg_t &msg, uint64_t remote_addr,
                                                  ucp_rkey_h rkey)
{
    ucp_ifunc *f = msg.ifunc_h;
    if (ep != f->last_ep && !f->eps_with_code.count(ep)) {
        // First message to this endpoint: with the code, sealed again only
        // if the caller changed the payload.
        ucx_ifunc_frame_t fr{msg.frame, msg.frame_size};
        frame_seal(&fr);
        ucs_status_t st = to_ucs(frame_send(ep, &fr, remote_addr, rkey));
        if (UCS_STATUS_IS_ERR(st)) return st;
        f->eps_with_code.insert(ep);
        auto it = f->bare.find(msg.frame);
        if (it != f->bare.end()) frame_watch_sent(&it->second.watch, ep, &fr, remote_addr, rkey);
        return st;
    }
    f->last_ep = ep;
    if (msg.frame != f->last_frame) {
        auto it = f->bare.find(msg.frame);
        if (it == f->bare.end()) return UCS_ERR_INVALID_PARAM;
        f->last_frame = msg.frame;
        f->last_bare = &it->second;
    }
    return send_bare(ep, msg, *f->last_bare, remote_addr, rkey);
}

}  // namespace

extern "C" {

ucs_status_t ucp_register_ifunc(ucp_context_h context, const ucp_ifunc_reg_param_t param,
                                ucp_ifunc_h *ifunc_p)
{
    if (!context || !param.name || !*param.name || !ifunc_p) return UCS_ERR_INVALID_PARAM;
    const char *dir = getenv("UCX_IFUNC_LIB_DIR");
    std::string path = std::string(dir && *dir ? dir : ".") + "/" + param.name + ".so";
    const ucs_status_t st = param.llvm_bc ? register_bitcode(dir && *dir ? dir : ".", param.name, path, ifunc_p)
                                          : register_library(param.name, path, ifunc_p);
    if (st == UCS_OK) {
        (*ifunc_p)->context = context;
        std::lock_guard<std::mutex> guard(g_lock);
        g_registered[context].insert(*ifunc_p);
    }
    return st;
}

ucs_status_t ucp_deregister_ifunc(ucp_context_h, ucp_ifunc_h ifunc_h)
{
    if (!ifunc_h) return UCS_ERR_INVALID_PARAM;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        auto it = g_registered.find(ifunc_h->context);
        if (it != g_registered.end() && it->second.erase(ifunc_h) && it->second.empty()) g_registered.erase(it);
    }
    for (auto &m : ifunc_h->bare) frame_watch_end(&m.second.watch);
    if (ifunc_h->dl) dlclose(ifunc_h->dl);
    delete ifunc_h;
    return UCS_OK;
}

ucs_status_t ucp_ifunc_msg_create(ucp_ifunc_h f, void *source_args, size_t source_args_size,
                                  ucp_ifunc_msg_t *msg_p)
{
    if (!f || !msg_p) return UCS_ERR_INVALID_PARAM;
    // The payload is built first, so that the frames carry the size
    // <name>_payload_init reports, not the bound.
    std::vector<uint8_t> payload(f->payload_bound(source_args, source_args_size));
    size_t used = payload.size();
    if (f->payload_init(source_args, source_args_size, payload.data(), &used) != 0 || used > payload.size()) {
        XRDMA_ERROR("ifunc %s: %s_payload_init failed (or wrote %zu bytes of a %zu-byte bound)",
                    f->name.c_str(), f->name.c_str(), used, payload.size());
        return UCS_ERR_INVALID_PARAM;
    }
    ucx_ifunc_frame_t full, bare;
    ucx_ifunc_status_t st = frame_build(f->hash, f->name + "_main", &f->image, true, used, &full);
    if (st != UCX_IFUNC_OK) return to_ucs(st);
    st = frame_build(f->hash, f->name + "_main", nullptr, true, used, &bare);
    if (st != UCX_IFUNC_OK) {
        ucx_ifunc_frame_free(&full);
        return to_ucs(st);
    }
    for (ucx_ifunc_frame_t *fr : {&full, &bare}) {
        if (used) memcpy(ucx_ifunc_frame_args(fr, nullptr), payload.data(), used);
        frame_seal(fr);  // sealed here; a send writes nothing unless the payload changed
    }
    auto offset = [](ucx_ifunc_frame_t *fr) {
        return uint32_t(static_cast<uint8_t *>(ucx_ifunc_frame_args(fr, nullptr)) - static_cast<uint8_t *>(fr->frame));
    };
    f->bare[full.frame] = ucp_ifunc::Bare{bare, offset(&full), offset(&bare), uint32_t(used), payload_word_mask(used), {}};
    *msg_p = ucp_ifunc_msg_t{f, full.frame, full.frame_size};
    return UCS_OK;
}

ucs_status_t ucp_ifunc_msg_free(ucp_ifunc_msg_t msg)
{
    if (msg.ifunc_h) {
        auto it = msg.ifunc_h->bare.find(msg.frame);
        if (it != msg.ifunc_h->bare.end()) {
            if (msg.ifunc_h->last_frame == msg.frame) msg.ifunc_h->last_frame = nullptr;
            frame_watch_end(&it->second.watch);
            ucx_ifunc_frame_free(&it->second.frame);
            msg.ifunc_h->bare.erase(it);
        }
    }
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

XRDMA_HOT ucs_status_t ucp_ifunc_send_nbix(ucp_ep_h ep, ucp_ifunc_msg_t msg, uint64_t remote_addr, ucp_rkey_h rkey)
{
    if (!ep || !msg.ifunc_h || !msg.frame || !rkey) return UCS_ERR_INVALID_PARAM;
    ucp_ifunc *f = msg.ifunc_h;
    // The send loop's case: the message sent last, to the endpoint sent to
    // last (which has the code).
    if (__builtin_expect(ep == f->last_ep && msg.frame == f->last_frame, 1))
        return send_bare(ep, msg, *f->last_bare, remote_addr, rkey);
    return send_other(ep, msg, remote_addr, rkey);
}

XRDMA_HOT ucs_status_t ucp_poll_ifunc(ucp_context_h context, void *buffer, size_t buffer_size, void *target_args,
                                      ucp_worker_h worker)
{
    if (!buffer || !worker) return UCS_ERR_INVALID_PARAM;
    // (A buffer smaller than any frame never holds one.)
    if (buffer_size >= sizeof(FrameHdr) + 8) {
        const uint64_t ready = __atomic_load_n(static_cast<const uint64_t *>(buffer), __ATOMIC_ACQUIRE);
        if (ready == kFrameStored || ready == kFrameReady)
            return poll_frame(context, static_cast<uint8_t *>(buffer), buffer_size, target_args, worker, ready);
    }
    return poll_idle(context, worker);
}

}  // extern "C"
