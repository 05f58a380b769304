// The one "which code runs" step of every path that runs an image here (an
// arrived invocation, a put-and-poll frame, a local run): refuse a
// quarantined image, find the code in the cache or load it from the bytes
// that came with the call, and resolve the entry.
#include "run/context.h"

#include "xrdma_common/log.h"

namespace xrdma {

bool refuse_quarantined(ucx_ifunc_context *ctx, const Hash &hash, std::string *why)
{
    if (ctx->quarantined.empty() || !ctx->quarantined.count(hash)) return false;
    *why = "image " + hash_hex(hash, 8) + " is quarantined here after a fault";
    return true;
}

void quarantine(ucx_ifunc_context *ctx, const Hash &hash, const std::string &why)
{
    ctx->quarantined.insert(hash);
    XRDMA_WARN("rank %d: %s; image %s quarantined", ctx->params.rank, why.c_str(), hash_hex(hash, 8).c_str());
}

ucx_ifunc_status_t find_entry(ucx_ifunc_context *ctx, const Hash &hash, const uint8_t *code, size_t code_len,
                              const std::string &entry, std::shared_ptr<CachedImage> *img, void **fn,
                              std::string *why)
{
    *img = ctx->cache.find(hash);
    if (!*img) {
        if (!code) {
            *why = "no code for image " + hash_hex(hash, 8) + ", which is not cached here";
            return UCX_IFUNC_ERR_NEED_CODE;
        }
        ucx_ifunc_status_t st = ctx->cache.insert(hash, code, code_len, img, why);
        if (st != UCX_IFUNC_OK) return st;
        ctx->stats.images_loaded++;
    }
    *fn = (*img)->entry(entry);
    if (*fn) return UCX_IFUNC_OK;
    *why = "image " + hash_hex(hash, 8) +
           ((*img)->view.has_entry(entry) ? " lists entry '" + entry + "' but its code does not define it"
                                          : " has no entry '" + entry + "'");
    return UCX_IFUNC_ERR_NO_ENTRY;
}

}  // namespace xrdma
