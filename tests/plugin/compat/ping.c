/* Published-API ifunc that replies from inside its main: ping_main counts
 * the ping at the target and sends the pong message the target program
 * prepared (struct compat_reply in peer_state.h) back to the origin, with
 * the ping's payload. When another ping follows and the slot can be
 * watched, it returns only once that ping is in its slot: a poller that
 * cleared the slot after main returned would lose it. */
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
    /* A frame's ready word ("XRFRAME1" put, "XRFRAMES" stored through a
     * mapping) and nonce (third word): the next ping is a new frame in the
     * slot, whatever the slot holds now. */
    const uint64_t put = 0x31454d4152465258ull, stored = 0x53454d4152465258ull;
    const uint64_t before = r->slot ? r->slot[2] : 0;
    uint64_t v;
    memcpy(&v, payload, 8);
    *r->counter += 1;
    memcpy(out, payload, 8);
    if (ucp_ifunc_send_nbix(r->ep, r->msg, r->remote_addr, r->rkey) != UCS_OK || !(v & COMPAT_PING_MORE) || !r->slot)
        return;
    for (long spins = 0; !((r->slot[0] == put || r->slot[0] == stored) && r->slot[2] != before) && spins < 100000000;
         ++spins) {}
}
