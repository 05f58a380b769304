/* Shared between the X-RDMA pointer-chase demo (xrdma_chase.c) and the
 * ifunc it ships (chase_ifunc.c): how a rank exposes its slice of the list
 * and what one chase message carries. */
#ifndef XRDMA_CHASE_H
#define XRDMA_CHASE_H

#include <stdint.h>

/* The list is block-distributed: global node g lives at rank
 * g / nodes_per_rank, index g % nodes_per_rank of that rank's slice. Each
 * entry holds the global index of the next node. The target hands this
 * struct to its ifunc context as user_ptr. */
struct chase_slice {
    const uint64_t *base;    /* this rank's nodes_per_rank "next" entries */
    uint64_t nodes_per_rank;
    int32_t rank;            /* owner of base[] */
    int32_t nranks;
};

/* Arguments of one chase message: where the chase stands. */
struct chase_msg {
    uint64_t node;       /* current global node index */
    uint64_t remaining;  /* hops still to follow from node */
};

#endif
