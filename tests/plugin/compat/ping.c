/* Published-API ifunc that replies from inside its main: ping_main counts
 * the ping at the target and sends the pong message the target program
 * prepared (struct compat_reply in peer_state.h) back to the origin, with
 * the ping's payload. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "copy_payload.h"

#include "ucx_ifunc/ucp_compat.h"
#include "../peer_state.h"

COPY_PAYLOAD_FUNCTIONS(ping)

void ping_main(void *payload, size_t payload_size, void *target_args)
{
    struct compat_reply *r = (struct compat_reply *)target_args;
    void *out;
    size_t out_size;
    if (payload_size != 8 || ucp_ifunc_msg_get_payload_ptr(&r->msg, &out, &out_size) != UCS_OK || out_size != 8)
        return;
    *r->counter += 1;
    memcpy(out, payload, 8);
    ucp_ifunc_send_nbix(r->ep, r->msg, r->remote_addr, r->rkey);
}
