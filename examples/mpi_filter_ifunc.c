/* The injected filter of examples/mpi_filter.c.
 *
 * Runs at the rank that holds the records, on the target region of an
 * MPIX_Xget (an array of struct record in the window), and replies only the
 * records that match the predicate in the arguments, after a small header.
 * Only the matches cross the network.
 *
 * A reply holds at most one page of matches (args.max, at most FILTER_PAGE):
 * the scan stops when the page is full and the header says where to resume,
 * so the origin's buffer and each message stay bounded however many records
 * match. The page is static: injected functions run one at a time at a
 * target, and xrdma_reply() copies it. (No malloc: under the default
 * XRDMA_SYMBOLS=runtime policy injected code may only call the XRDMA API and
 * libc functions that touch memory they are handed.) */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

#include "mpi_filter.h" /* the records, the predicate, the reply */

static struct {
    struct filter_reply h;
    struct record rec[FILTER_PAGE];
} page;

XRDMA_IFUNC(filter)
{
    struct filter_args a;
    size_t bytes;
    const struct record *rec = xrdma_target(ctx, &bytes);
    if (args_size != sizeof(a) || !rec) return 1;
    memcpy(&a, args, sizeof(a));
    const uint64_t n = bytes / sizeof(struct record);
    const uint64_t max = a.max < FILTER_PAGE ? a.max : FILTER_PAGE;
    if (max == 0 || a.start > n) return 2;

    uint64_t k = 0, i = a.start;
    for (; i < n && k < max; ++i)
        if (rec[i].key >= a.key_lo && rec[i].key < a.key_hi && rec[i].value >= a.min_value)
            page.rec[k++] = rec[i];
    page.h = (struct filter_reply){k, i, n};
    return xrdma_reply(ctx, &page, sizeof(page.h) + k * sizeof(struct record)) != 0;
}
