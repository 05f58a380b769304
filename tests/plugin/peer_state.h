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
#endif
