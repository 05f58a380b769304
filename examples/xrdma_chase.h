/* Shared between the pointer-chase programs and the ifuncs they ship: how a
 * rank exposes its slice of the list and what one chase message carries
 * (xrdma_chase.c and chase_ifunc.c: struct chase_slice and chase_msg;
 * mpi_pointer_chase.c, benchmarks/xrdma_pointer_chase.c and
 * mpi_chase_ifunc.c: struct chase_args). */
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

/* The argument of the MPIX chase (mpi_chase_ifunc.c): where the chase
 * stands, and the block size of the list. */
struct chase_args {
    uint64_t node;           /* current global node, owned by the rank it is sent to */
    uint64_t remaining;      /* hops still to follow from node */
    uint64_t nodes_per_rank;
};

#endif
