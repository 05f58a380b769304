// Seed corpus of the fuzz targets, written at build time (make fuzz):
//   make_seeds OUTDIR IMAGE.xfn...
// OUTDIR/image: the images (built by xrdma-cc) and small synthetic ones;
// OUTDIR/elf:   the native part of each image;
// OUTDIR/bitcode: each image's bitcode part for this host, after its entry
//               names ("a,b" NUL bitcode: harness_bitcode.cc);
// OUTDIR/wire:  valid invocations (with and without code), replies, a
//               need-code answer and put-and-poll frames, each prefixed with
//               the harness's selector byte (tests/fuzz/harness.h).
#include "harness.h"
#include "image/image.h"
#include "compat/put_poll.h"
#include "wire/wire.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace xrdma;
using Buf = std::vector<uint8_t>;

namespace {

bool write_file(const std::string &path, const Buf &b)
{
    FILE *f = fopen(path.c_str(), "wb");
    if (!f) {
        perror(path.c_str());
        return false;
    }
    bool ok = fwrite(b.data(), 1, b.size(), f) == b.size();
    return fclose(f) == 0 && ok;
}

std::string base_name(const std::string &path)
{
    std::string b = path.substr(path.find_last_of('/') + 1);
    return b.substr(0, b.find('.'));
}

void append(Buf *b, const void *p, size_t n)
{
    auto q = static_cast<const uint8_t *>(p);
    b->insert(b->end(), q, q + n);
}

Buf invoke_msg(const std::string &entry, const Buf *image, const Buf &args, uint8_t flags = 0)
{
    InvokeHdr h = make_invoke_hdr(uint8_t(flags | (image ? kHasCode : 0)), 0, 0, 7, nullptr, uint32_t(args.size()));
    h.entry_len = uint16_t(entry.size());
    h.image_len = image ? image->size() : 0;
    ImageView v;
    if (image && image_parse(image->data(), image->size(), &v, nullptr) == UCX_IFUNC_OK)
        memcpy(h.hash, v.hash.data(), 32);
    Buf b;
    append(&b, &h, sizeof(h));
    append(&b, entry.data(), entry.size());
    if (image) append(&b, image->data(), image->size());
    append(&b, args.data(), args.size());
    return b;
}

// A warm invocation: the index its sender bound, then the args.
Buf short_invoke_msg(uint16_t index, const Buf &args, uint8_t flags = 0)
{
    const InvokeShortHdr h{kInvokeShortMagic, kWireVersion, flags, index, 0, 1, 7};
    Buf b;
    append(&b, &h, sizeof(h));
    append(&b, args.data(), args.size());
    return b;
}

Buf reply_msg(ucx_ifunc_status_t st, const std::string &msg, const Buf &reply)
{
    ReplyHdr h = make_reply_hdr(kReplyResult, st, 1, 7, uint32_t(reply.size()), uint16_t(msg.size()));
    Buf b;
    append(&b, &h, sizeof(h));
    append(&b, msg.data(), msg.size());
    append(&b, reply.data(), reply.size());
    return b;
}

Buf need_code_msg(const Buf &invocation, ReplyKind kind = kReplyNeedCode)
{
    ReplyHdr h = make_reply_hdr(kind, UCX_IFUNC_ERR_NEED_CODE, 1, 7);
    Buf b;
    append(&b, &h, sizeof(h));
    append(&b, invocation.data(), invocation.size());
    return b;
}

Buf acks_msg(const std::vector<uint64_t> &ids)
{
    ReplyHdr h = make_reply_hdr(kReplyAcks, UCX_IFUNC_OK, 1, 0, uint32_t(ids.size() * sizeof(uint64_t)));
    Buf b;
    append(&b, &h, sizeof(h));
    append(&b, ids.data(), h.reply_len);
    return b;
}

Buf frame(const std::string &entry, const Buf *image, const Buf &args, bool compat, size_t slack)
{
    Hash hash{};
    ImageView v;
    if (image && image_parse(image->data(), image->size(), &v, nullptr) == UCX_IFUNC_OK) hash = v.hash;
    ucx_ifunc_frame_t f{};
    if (frame_build(hash, entry, image, compat, args.size(), &f) != UCX_IFUNC_OK) return {};
    size_t n = 0;
    void *a = ucx_ifunc_frame_args(&f, &n);
    if (n) memcpy(a, args.data(), n);
    frame_seal(&f);
    Buf b(static_cast<uint8_t *>(f.frame), static_cast<uint8_t *>(f.frame) + f.frame_size);
    b.resize(b.size() + slack, 0);  // the poll buffer is usually larger
    free(f.frame);
    return b;
}

// @p hdr_len_byte: 0 for the selector's usual header length, 0x80 | n for n bytes.
Buf with_selector(uint8_t sel, const Buf &msg, bool hdr_len_byte, uint8_t hdr_len = 0)
{
    Buf b{sel};
    if (hdr_len_byte) b.push_back(hdr_len);
    b.insert(b.end(), msg.begin(), msg.end());
    return b;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUTDIR IMAGE.xfn...\n", argv[0]);
        return 2;
    }
    const std::string out = argv[1];
    for (const char *d : {"", "/image", "/elf", "/wire", "/bitcode"}) mkdir((out + d).c_str(), 0777);
    bool ok = true;
    auto put = [&](const std::string &rel, const Buf &b) { ok = write_file(out + "/" + rel, b) && ok; };

    // Synthetic images: small, so mutations reach every field quickly.
    const Buf small = image_build({"f"}, {{PartKind::native_elf, host_triple(), Buf(16, 0xcc)}});
    const Buf multi = image_build({"a", "b_2", "_c"}, {{PartKind::native_elf, "x86_64-linux-gnu", Buf(40, 1)},
                                                       {PartKind::llvm_bitcode, "aarch64-linux-gnu", Buf{'B', 'C', 0xc0, 0xde}},
                                                       {PartKind::library_list, "any", Buf{'l', 'i', 'b', 'm', '.', 's', 'o', '.', '6', '\n'}},
                                                       {PartKind(9), "other", Buf()}});
    put("image/small.xfn", small);
    put("image/multi.xfn", multi);

    Buf basic;
    for (int i = 2; i < argc; ++i) {
        const std::string name = base_name(argv[i]);
        Buf img;
        if (xrdma::read_file(argv[i], &img) != UCX_IFUNC_OK) img.clear();  // (refused below)
        ImageView v;
        std::string why;
        if (image_parse(img.data(), img.size(), &v, &why) != UCX_IFUNC_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], why.c_str());
            return 1;
        }
        put("image/" + name + ".xfn", img);
        for (const PartView &p : v.parts)
            if (p.kind == PartKind::native_elf) put("elf/" + name + ".so", Buf(p.data, p.data + p.size));
        for (const PartView &p : v.parts) {
            if (p.kind != PartKind::llvm_bitcode || !triple_is_host(p.triple)) continue;
            std::string names;
            for (std::string_view e : v.entries) names += (names.empty() ? "" : ",") + std::string(e);
            Buf seed(names.begin(), names.end());
            seed.push_back(0);
            seed.insert(seed.end(), p.data, p.data + p.size);
            put("bitcode/" + name + ".bc", seed);
        }
        if (name == "basic") basic = img;
    }

    const Buf args{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    using namespace xrdma_fuzz;
    put("wire/invoke-code-small", with_selector(kWireInvoke, invoke_msg("f", &small, args), true));
    put("wire/invoke-code-multi", with_selector(kWireInvoke, invoke_msg("b_2", &multi, {}), true));
    if (!basic.empty())
        put("wire/invoke-code-basic", with_selector(kWireInvoke, invoke_msg("add_u64", &basic, args), true));
    const Buf plain = invoke_msg("add_u64", nullptr, args);
    put("wire/invoke-hash-only", with_selector(kWireInvoke, plain, true));
    put("wire/invoke-forwarded", with_selector(kWireInvoke, invoke_msg("chase", nullptr, args, kForwarded), true));
    put("wire/reply-ok", with_selector(kWireReply, reply_msg(UCX_IFUNC_OK, "", Buf(8, 42)), true));
    put("wire/reply-error", with_selector(kWireReply, reply_msg(UCX_IFUNC_ERR_BAD_CODE, "rank 1: not an ELF file", {}), true));
    put("wire/reply-need-code", with_selector(kWireReply, need_code_msg(plain), true));
    put("wire/reply-acks", with_selector(kWireReply, acks_msg({7, 8, 9}), true));
    const uint8_t short_len = uint8_t(0x80 | sizeof(InvokeShortHdr));
    put("wire/invoke-short", with_selector(kWireInvoke, short_invoke_msg(2, args), true, short_len));
    put("wire/invoke-short-forwarded", with_selector(kWireInvoke, short_invoke_msg(0, args, kForwarded), true, short_len));
    const InvokeWithdrawHdr w{kInvokeWithdrawMagic, kWireVersion, 0, 0, 0, 0, 7};
    Buf withdrawal;
    append(&withdrawal, &w, sizeof(w));
    put("wire/invoke-withdrawal", with_selector(kWireInvoke, withdrawal, true, short_len));
    const AckRequestHdr ask{kAckRequestMagic, kWireVersion, 0, 0, 0, 0, 7};
    Buf ack_request;
    append(&ack_request, &ask, sizeof(ask));
    put("wire/invoke-ack-request", with_selector(kWireInvoke, ack_request, true, short_len));
    put("wire/invoke-short-lazy", with_selector(kWireInvoke, short_invoke_msg(2, args, kLazyAck), true, short_len));
    put("wire/reply-need-bind", with_selector(kWireReply, need_code_msg(short_invoke_msg(2, args), kReplyNeedBind), true));
    put("wire/frame-code", with_selector(kWireFrame, frame("f", &small, args, false, 64), false));
    put("wire/frame-hash-only", with_selector(kWireFrame, frame("add_u64", nullptr, args, false, 0), false));
    put("wire/frame-compat", with_selector(kWireFrame, frame("counter_main", nullptr, Buf(24, 3), true, 32), false));
    put("wire/frame-sealed-code", with_selector(kWireFrameSealed, frame("f", &small, args, false, 0), false));
    put("wire/frame-sealed-empty", with_selector(kWireFrameSealed, frame("f", nullptr, {}, false, 16), false));
    return ok ? 0 : 1;
}
