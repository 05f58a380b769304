/* State shared by the test peer and the test ifuncs. */
#ifndef XRDMA_TEST_PEER_STATE_H
#define XRDMA_TEST_PEER_STATE_H
#include <stdint.h>

struct peer_state {
    uint64_t counter;
};

#define CHASE_MAX 32
struct chase_args {
    int32_t hops;              /* ranks to visit in total */
    int32_t n;                 /* visited so far */
    int32_t origin;            /* xrdma_origin() as seen by the last hop */
    int32_t route[CHASE_MAX];  /* route[i]: rank of the i-th visit */
    int32_t path[CHASE_MAX];   /* path[i]: rank that actually ran it */
};

/* The published-API reply test (compat/ping.c): what the target program
 * hands ping_main as target_args. Declared only where ucp_compat.h is. */
#ifdef UCX_IFUNC_UCP_COMPAT_H
struct compat_reply {
    uint64_t *counter;        /* pings run here */
    ucp_ep_h ep;              /* to the origin */
    uint64_t remote_addr;     /* the origin's buffer */
    ucp_rkey_h rkey;
    ucp_ifunc_msg_t msg;      /* a pong message, payload overwritten per ping */
    /* Non-NULL (shared memory, where a put lands without the target's
     * progress): ping_main waits, after replying, until the next ping is in
     * this slot, the one it was polled from. */
    const volatile uint64_t *slot;
};
#define COMPAT_PING_MORE (1ull << 63) /* in a ping's payload: another ping follows */
#endif
#endif
