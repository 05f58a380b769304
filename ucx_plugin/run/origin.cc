// Origin side: registering images, invoking them, and handling replies
// (including "need code" answers, from targets and from forward hops).
// Also whether an image's invocations end where they run
// (ucx_ifunc_stays(): its native part imports nothing that travels on,
// policy.h), which lets a layer above batch them.
#include "run/context.h"
#include "load/loader_native.h"
#include "load/policy.h"

#include "xrdma_common/config.h"
#include "xrdma_common/hot.h"
#include "xrdma_common/log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace xrdma;

namespace {

ucx_ifunc_status_t read_image_file(const char *path, std::vector<uint8_t> *out)
{
    const unsigned long long max = config_get_ull("XRDMA_MAX_IMAGE_SIZE");
    ucx_ifunc_status_t st = read_file(path, out, size_t(max));
    if (st == UCX_IFUNC_ERR_IO) XRDMA_ERROR("cannot read image %s: %s", path, strerror(errno));
    if (st == UCX_IFUNC_ERR_DENIED) XRDMA_ERROR("image %s exceeds XRDMA_MAX_IMAGE_SIZE=%llu", path, max);
    return st;
}

// End invocation @p req_id: its callback gets @p r.
void complete(ucx_ifunc_context *ctx, uint64_t req_id, const ucx_ifunc_result_t &r)
{
    Pending p;
    if (!ctx->pending.take(req_id, &p)) {
        XRDMA_WARN("reply for unknown request %llu from rank %d dropped",
                   (unsigned long long)req_id, r.rank);
        return;
    }
    p.cb(&r, p.user_data);
}

void complete(ucx_ifunc_context *ctx, uint64_t req_id, ucx_ifunc_status_t status, int rank,
              const char *msg, const void *reply, size_t reply_len)
{
    complete(ctx, req_id, ucx_ifunc_result_t{status, reply, reply_len, rank, msg});
}

// The endpoint to resend an invocation a need-code or need-bind answer
// returned: the one it went out on if it is this rank's own (@p mine), else
// (a forward this rank made) the answering rank's.
ucp_ep_h resend_ep(ucx_ifunc_context *ctx, const Incoming &in, const ReplyHdr &rh, uint8_t flags, uint64_t req_id,
                   bool *mine)
{
    const Pending *p = (flags & kForwarded) ? nullptr : ctx->pending.find(req_id);
    *mine = p != nullptr;
    ucp_ep_h ep = *mine ? p->ep : in.reply_ep;
    if (!*mine) {
        if (ucp_ep_h peer = peer_ep(ctx, rh.rank)) ep = peer;
    }
    return ep;
}

// An invocation that cannot be resent ends with @p st at its origin: here,
// or (a forward) at the origin rank through the peer table; and the target
// that asked for it (on @p ep) stops holding this sender's later ones for
// it (compile_queue.h).
void resend_failed(ucx_ifunc_context *ctx, bool mine, ucp_ep_h ep, uint64_t req_id, int origin_rank,
                   ucx_ifunc_status_t st, const std::string &msg)
{
    send_withdraw(ctx, ep, origin_rank, req_id);
    if (mine) {
        complete(ctx, req_id, st, ctx->params.rank, msg.c_str(), nullptr, 0);
        return;
    }
    if (ucp_ep_h o = peer_ep(ctx, origin_rank))
        send_reply(ctx, o, req_id, st, msg, nullptr, 0);
    else
        XRDMA_ERROR("%s, and the origin rank %d is unreachable", msg.c_str(), origin_rank);
}

// A target (or a forward hop) lacked the code: resend the invocation with it.
void handle_need_code(ucx_ifunc_context *ctx, Incoming &in, const ReplyHdr &rh)
{
    ctx->stats.need_code_received++;
    const uint8_t *d = in.data.data();
    std::string why;
    if (need_code_check(d, in.data.size(), &why) != UCX_IFUNC_OK) {
        XRDMA_ERROR("malformed need-code answer from rank %d: %s", rh.rank, why.c_str());
        return;
    }
    InvokeHdr ih;
    memcpy(&ih, d, sizeof(ih));
    const char *entry = reinterpret_cast<const char *>(d + sizeof(ih));
    const uint8_t *args = d + sizeof(ih) + ih.entry_len;
    Hash h;
    memcpy(h.data(), ih.hash, h.size());

    bool mine;
    ucp_ep_h ep = resend_ep(ctx, in, rh, ih.flags, ih.req_id, &mine);
    auto bytes = find_image_bytes(ctx, h);
    if (!bytes || !ep) {
        resend_failed(ctx, mine, ep ? ep : in.reply_ep, ih.req_id, ih.origin_rank, UCX_IFUNC_ERR_NO_ENTRY,
                      "rank " + std::to_string(rh.rank) + " needs image " + hash_hex(h, 8) + " which rank " +
                          std::to_string(ctx->params.rank) + " no longer has");
        return;
    }
    ucx_ifunc_status_t st =
        send_invoke(ctx, ep, ih, std::string(entry, ih.entry_len), bytes, args, ih.args_len);
    if (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS)
        resend_failed(ctx, mine, ep, ih.req_id, ih.origin_rank, st,
                      "rank " + std::to_string(ctx->params.rank) + ": resending with code failed");
}

// A target (or a forward hop) did not know the index of a short invocation:
// resend it in full (binding the index again), from what this sender bound.
void handle_need_bind(ucx_ifunc_context *ctx, Incoming &in, const ReplyHdr &rh)
{
    const uint8_t *d = in.data.data();
    std::string why;
    if (need_bind_check(d, in.data.size(), &why) != UCX_IFUNC_OK) {
        XRDMA_ERROR("malformed need-bind answer from rank %d: %s", rh.rank, why.c_str());
        return;
    }
    InvokeShortHdr s;
    memcpy(&s, d, sizeof(s));
    bool mine;
    ucp_ep_h ep = resend_ep(ctx, in, rh, s.flags, s.req_id, &mine);
    const BoundSlot *slot = ep ? binding_reannounce(ctx, ep, s.index) : nullptr;
    if (!slot) {
        resend_failed(ctx, mine, ep ? ep : in.reply_ep, s.req_id, s.origin_rank, UCX_IFUNC_ERR_PROTOCOL,
                      "rank " + std::to_string(rh.rank) + " returned a short invocation with index " +
                          std::to_string(s.index) + ", which rank " + std::to_string(ctx->params.rank) +
                          " never bound");
        return;
    }
    const InvokeHdr ih = make_invoke_hdr(s, slot->hash.data());
    const std::string entry = slot->entry;  // (a copy: the send may add slots)
    ucx_ifunc_status_t st =
        send_invoke(ctx, ep, ih, entry, nullptr, d + sizeof(s), in.data.size() - sizeof(s));
    if (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS)
        resend_failed(ctx, mine, ep, s.req_id, s.origin_rank, st,
                      "rank " + std::to_string(ctx->params.rank) + ": resending in full failed");
}

}  // namespace

namespace xrdma {

void origin_handle_reply(ucx_ifunc_context *ctx, Incoming &in)
{
    std::string why;
    if (in.recv_status != UCX_IFUNC_OK) {
        XRDMA_ERROR("receiving a reply failed: %s", ucx_ifunc_status_string(in.recv_status));
        return;
    }
    if (reply_hdr_check(in.hdr.data(), in.hdr.size(), in.data.size(), &why) != UCX_IFUNC_OK) {
        XRDMA_ERROR("dropping malformed reply: %s", why.c_str());
        // A result that names its request still ends it, with the protocol
        // error, so that nothing waits for it forever.
        ReplyHdr rh;
        if (in.hdr.size() == sizeof(rh)) {
            memcpy(&rh, in.hdr.data(), sizeof(rh));
            if (rh.magic == kReplyMagic && rh.version == kWireVersion && rh.kind == kReplyResult)
                complete(ctx, rh.req_id, UCX_IFUNC_ERR_PROTOCOL, rh.rank, ("malformed reply: " + why).c_str(), nullptr,
                         0);
        }
        return;
    }
    ReplyHdr rh;
    memcpy(&rh, in.hdr.data(), sizeof(rh));
    if (rh.kind == kReplyNeedCode) {
        handle_need_code(ctx, in, rh);
        return;
    }
    if (rh.kind == kReplyNeedBind) {
        handle_need_bind(ctx, in, rh);
        return;
    }
    if (rh.kind == kReplyAcks) {
        origin_complete_acks(ctx, rh.rank, in.data.data(), rh.reply_len / sizeof(uint64_t));
        return;
    }
    // The message is not terminated on the wire: a copy, only when there is one.
    const std::string msg = rh.msg_len ? std::string(reinterpret_cast<const char *>(in.data.data()), rh.msg_len)
                                       : std::string();
    complete(ctx, rh.req_id, static_cast<ucx_ifunc_status_t>(rh.status), rh.rank, msg.c_str(),
             in.data.data() + rh.msg_len, rh.reply_len);
}

XRDMA_HOT void origin_complete_acks(ucx_ifunc_context *ctx, int rank, const uint8_t *ids, size_t n)
{
    const ucx_ifunc_result_t ok{UCX_IFUNC_OK, nullptr, 0, rank, ""};  // (the same for each)
    for (size_t i = 0; i < n; ++i) {
        uint64_t id;
        memcpy(&id, ids + i * sizeof(id), sizeof(id));
        complete(ctx, id, ok);
    }
}

void complete_local(ucx_ifunc_context *ctx, uint64_t req_id, ucx_ifunc_status_t status,
                    const std::string &msg, const void *reply, size_t reply_len)
{
    complete(ctx, req_id, status, ctx->params.rank, msg.c_str(), reply, reply_len);
}

}  // namespace xrdma

extern "C" {

ucx_ifunc_status_t ucx_ifunc_image_check(const void *image, size_t size, const char *entry,
                                         char *entry_out, size_t entry_out_size, char *why_out,
                                         size_t why_size)
{
    auto copy_out = [](char *dst, size_t cap, const std::string &s) {
        if (dst && cap) snprintf(dst, cap, "%s", s.c_str());
    };
    // (No early return: @p why_out is written on every path. image_parse
    // refuses a NULL image and an empty one.)
    ImageView view;
    std::string why;
    ucx_ifunc_status_t st = image_parse(static_cast<const uint8_t *>(image), size, &view, &why);
    if (st == UCX_IFUNC_OK) {
        // The entries a caller may name (XRDMA_STREAM's markers are not).
        std::vector<std::string> named;
        const std::string marker = "__xrdma_stream";
        for (const auto &e : view.entries) {
            const std::string s(e);
            if (s.size() <= marker.size() || s.compare(s.size() - marker.size(), marker.size(), marker) != 0)
                named.push_back(s);
        }
        if (!entry && named.size() != 1) {
            why = "image has " + std::to_string(named.size()) + " entries: name the one to use";
            st = UCX_IFUNC_ERR_NO_ENTRY;
        } else if (entry && !view.has_entry(entry)) {
            why = std::string("image has no entry '") + entry + "'";
            st = UCX_IFUNC_ERR_NO_ENTRY;
        } else {
            copy_out(entry_out, entry_out_size, entry ? std::string(entry) : named[0]);
        }
    }
    copy_out(why_out, why_size, why);
    return st;
}

ucx_ifunc_status_t ucx_ifunc_register_mem(ucx_ifunc_context_h ctx, const void *image, size_t size,
                                          const char *entry, unsigned flags, ucx_ifunc_h *ifunc_p)
{
    if (!ctx || !image || !ifunc_p || (flags & ~UCX_IFUNC_REGISTER_NO_VERIFY))
        return UCX_IFUNC_ERR_INVALID_PARAM;
    if (size > config_get_ull("XRDMA_MAX_IMAGE_SIZE")) return UCX_IFUNC_ERR_DENIED;
    auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t *>(image),
                                                        static_cast<const uint8_t *>(image) + size);
    Hash hash{};
    std::string name = entry ? entry : "";
    if (flags & UCX_IFUNC_REGISTER_NO_VERIFY) {
        if (name.empty() || name.size() > kMaxEntryLen) return UCX_IFUNC_ERR_NO_ENTRY;
        image_peek_hash(bytes->data(), bytes->size(), &hash);
    } else {
        char resolved[kMaxEntryLen + 1], why[512];
        ucx_ifunc_status_t st = ucx_ifunc_image_check(bytes->data(), bytes->size(), entry, resolved,
                                                      sizeof(resolved), why, sizeof(why));
        if (st != UCX_IFUNC_OK) {
            XRDMA_ERROR("image rejected: %s", why);
            return st;
        }
        name = resolved;
        image_peek_hash(bytes->data(), bytes->size(), &hash);
    }
    auto *f = new (std::nothrow) ucx_ifunc;
    if (!f) return UCX_IFUNC_ERR_NO_MEMORY;
    f->ctx = ctx;
    f->hash = hash;
    f->entry = name;
    f->image = bytes;
    // Verified images are shared by hash (one copy, and the bytes a need-code
    // answer resends). An unverified one only claims its hash: keep it apart.
    if (!(flags & UCX_IFUNC_REGISTER_NO_VERIFY)) {
        auto &slot = ctx->registered[hash];
        if (auto same = slot.lock())
            f->image = same;
        else
            slot = bytes;
    }
    *ifunc_p = f;
    return UCX_IFUNC_OK;
}

ucx_ifunc_status_t ucx_ifunc_register_file(ucx_ifunc_context_h ctx, const char *path,
                                           const char *entry, ucx_ifunc_h *ifunc_p)
{
    if (!ctx || !path || !ifunc_p) return UCX_IFUNC_ERR_INVALID_PARAM;
    std::vector<uint8_t> bytes;
    ucx_ifunc_status_t st = read_image_file(path, &bytes);
    if (st != UCX_IFUNC_OK) return st;
    return ucx_ifunc_register_mem(ctx, bytes.data(), bytes.size(), entry, 0, ifunc_p);
}

void ucx_ifunc_deregister(ucx_ifunc_h ifunc)
{
    if (!ifunc) return;
    ucx_ifunc_context *ctx = ifunc->ctx;
    Hash h = ifunc->hash;
    delete ifunc;
    auto it = ctx->registered.find(h);
    if (it != ctx->registered.end() && it->second.expired()) ctx->registered.erase(it);
}

const uint8_t *ucx_ifunc_hash(ucx_ifunc_h ifunc) { return ifunc ? ifunc->hash.data() : nullptr; }

ucx_ifunc_status_t ucx_ifunc_stays(ucx_ifunc_h ifunc)
{
    if (!ifunc) return UCX_IFUNC_ERR_INVALID_PARAM;
    if (ifunc->stays == UCX_IFUNC_INPROGRESS) {  // decided once per registered ifunc
        ImageView img;
        ElfInfo elf;
        std::string why;
        const PartView *part = nullptr;
        ifunc->stays = UCX_IFUNC_ERR_DENIED;
        if (image_parse(ifunc->image->data(), ifunc->image->size(), &img, &why, false) == UCX_IFUNC_OK &&
            (part = host_native_part(img)) && elf_inspect(part->data, part->size, &elf, &why) == UCX_IFUNC_OK) {
            const std::string travels = policy_travelling_import(native_imports(elf));
            if (travels.empty()) ifunc->stays = UCX_IFUNC_OK;
            why = travels.empty() ? "" : "it calls " + travels;
        }
        if (ifunc->stays != UCX_IFUNC_OK)
            XRDMA_DEBUG("ifunc '%s' may forward its invocations: %s", ifunc->entry.c_str(),
                        why.empty() ? "no native part here to tell" : why.c_str());
    }
    return ifunc->stays;
}

ucx_ifunc_status_t ucx_ifunc_invoke_nb(ucx_ifunc_h ifunc, ucp_ep_h ep, const void *args,
                                       size_t args_size, ucx_ifunc_complete_cb_t cb, void *user_data)
{
    return ucx_ifunc_invoke_nbx(ifunc, ep, args, args_size, 0, cb, user_data);
}

ucx_ifunc_status_t ucx_ifunc_invoke_nbx(ucx_ifunc_h ifunc, ucp_ep_h ep, const void *args, size_t args_size,
                                        unsigned flags, ucx_ifunc_complete_cb_t cb, void *user_data)
{
    if (!ifunc || !ep || !cb || (args_size && !args) || args_size > UINT32_MAX ||
        (flags & ~unsigned(UCX_IFUNC_INVOKE_QUEUED | UCX_IFUNC_INVOKE_LAZY_ACK)))
        return UCX_IFUNC_ERR_INVALID_PARAM;
    ucx_ifunc_context *ctx = ifunc->ctx;
    if (!ctx->am_enabled) return UCX_IFUNC_ERR_TRANSPORT;
    const uint8_t wire_flags = ((flags & UCX_IFUNC_INVOKE_QUEUED) ? kQueued : 0) |
                               ((flags & UCX_IFUNC_INVOKE_LAZY_ACK) ? kLazyAck : 0);
    const InvokeShortHdr id = invoke_id(wire_flags, ctx->params.rank, 0, ctx->next_req_id++);
    ucx_ifunc_status_t st;
    if (const LastSend *m = ifunc->out.to_ep(ep, ctx->bound_epoch)) {
        // Sent to this endpoint before, which has the code and the binding:
        // the short form, without any lookup.
        st = send_invoke_short(ctx, ep, id, m->index, args, args_size);
    } else {
        int index = -1;
        st = send_invoke_full(ctx, ep, id, ifunc->hash, ifunc->entry, ifunc->image, args, args_size, &index);
        ifunc->out.record_ep(ep, index, st, ctx->bound_epoch);
    }
    if (st != UCX_IFUNC_OK && st != UCX_IFUNC_INPROGRESS) return st;
    ctx->pending.put(id.req_id, Pending{cb, user_data, ep});
    return UCX_IFUNC_INPROGRESS;
}

ucx_ifunc_status_t ucx_ifunc_request_acks(ucx_ifunc_context_h ctx, ucp_ep_h ep)
{
    if (!ctx || !ep) return UCX_IFUNC_ERR_INVALID_PARAM;
    if (!ctx->am_enabled) return UCX_IFUNC_ERR_TRANSPORT;
    const ucx_ifunc_status_t st = send_ack_request(ctx, ep);
    return st == UCX_IFUNC_INPROGRESS ? UCX_IFUNC_OK : st;
}

size_t ucx_ifunc_invoke_overhead(size_t entry_len) { return sizeof(InvokeHdr) + entry_len; }

}  // extern "C"
