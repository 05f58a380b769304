/* What examples/mpi_filter.c and its injected filter (mpi_filter_ifunc.c)
 * share: the records in every rank's window, the predicate the origin sends
 * as arguments, and the header of each reply. Declared once, so that the
 * program and the function it ships cannot disagree on a layout. */
#ifndef XRDMA_EXAMPLE_MPI_FILTER_H
#define XRDMA_EXAMPLE_MPI_FILTER_H
#include <stdint.h>

#define FILTER_PAGE 1024 /* matches per reply at most */

struct record {
    int64_t key;
    double value;
    uint32_t owner, seq;
    char label[16];
};
struct filter_args {
    int64_t key_lo, key_hi; /* key_lo <= key < key_hi */
    double min_value;       /* and value >= min_value */
    uint64_t start;         /* first record to scan */
    uint64_t max;           /* matches per reply (capped at FILTER_PAGE) */
};
struct filter_reply {
    uint64_t matched; /* records that follow */
    uint64_t next;    /* where to resume; == scanned when the scan is complete */
    uint64_t scanned; /* records in the region */
};

#endif
