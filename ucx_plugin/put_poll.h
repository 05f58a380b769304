// Frames of the put-and-poll mode, shared by the native API and the
// published-API compatibility layer.
#pragma once

#include "image.h"
#include "ucx_ifunc.h"

#include <string>
#include <vector>

namespace xrdma {

// Allocate a frame for @p entry with room for @p args_len argument bytes
// (left zero). @p image nullptr: hash only. @p compat: <name>_main ABI.
ucx_ifunc_status_t frame_build(const Hash &hash, const std::string &entry,
                               const std::vector<uint8_t> *image, bool compat, size_t args_len,
                               ucx_ifunc_frame_t *out);
// Stamp a fresh nonce and the checksum, unless the frame is already sealed
// and unchanged since (then it writes nothing): call before each put.
void frame_seal(ucx_ifunc_frame_t *frame);
// Put a sealed frame as it is (ucx_ifunc_frame_put() without the seal).
ucx_ifunc_status_t frame_put(ucp_ep_h ep, const ucx_ifunc_frame_t *frame, uint64_t remote_addr, ucp_rkey_h rkey);
// Run the frame in @p buffer if it is complete (see ucx_ifunc_poll()).
ucx_ifunc_status_t frame_poll(struct ucx_ifunc_context *ctx, void *buffer, size_t buffer_size,
                              void *target_args, std::string *why);

}  // namespace xrdma
