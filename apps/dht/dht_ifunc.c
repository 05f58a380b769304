/* The XRDMA variant's functions, run at the owner of the keys: an insert
 * of a batch of (key, value) pairs that arrived with MPIX_Xput, and a
 * lookup of a batch of keys (the arguments of an MPIX_Xget) that replies
 * their values and found bits. Both run the owner's table code
 * (dht_table.h) on the target region, the owner's whole table. Functions
 * run one at a time at a target: a batch is atomic with respect to every
 * other rank's. DHT_MUTANT_DROP builds a broken insert for the test that
 * shows verification catches it: it loses the last pair of every batch. */
#include <stdint.h>
#include <xrdma_ifunc.h>

#include "dht_table.h"

/* The table's slot mask from the region, or 0 if it is not a table. */
static uint64_t table_mask(size_t bytes)
{
    const uint64_t slots = bytes / sizeof(struct dht_slot);
    return slots && !(slots & (slots - 1)) && bytes % sizeof(struct dht_slot) == 0 ? slots - 1 : 0;
}

XRDMA_IFUNC(dht_insert_kv)
{
    size_t bytes, in_bytes;
    struct dht_slot *t = xrdma_target(ctx, &bytes);
    const void *in = xrdma_incoming(ctx, &in_bytes);
    const uint64_t mask = table_mask(bytes);
    (void)args;
    if (!t || !mask || args_size || in_bytes % (2 * sizeof(uint64_t))) return 1;
    uint64_t n = in_bytes / (2 * sizeof(uint64_t));
#if defined(DHT_MUTANT_DROP)
    if (n) n--;
#endif
    return dht_insert_batch(t, mask, in, n) < 0 ? 2 : 0;
}

XRDMA_IFUNC(dht_lookup_keys)
{
    size_t bytes;
    const struct dht_slot *t = xrdma_target(ctx, &bytes);
    const uint64_t mask = table_mask(bytes), n = args_size / sizeof(uint64_t);
    if (!t || !mask || args_size % sizeof(uint64_t) || n > DHT_MAX_BATCH) return 1;
    uint64_t answer[DHT_MAX_BATCH + DHT_MAX_BATCH / 64];
    dht_lookup_batch(t, mask, args, n, answer);
    return xrdma_reply(ctx, answer, sizeof(uint64_t) * dht_answer_words(n)) ? 3 : 0;
}
