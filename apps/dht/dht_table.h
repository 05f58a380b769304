/* The distributed hash table's layout and the work an owner does, shared by
 * every variant and by the XRDMA functions (dht_ifunc.c), so that the
 * variants differ only in how requests reach the table. No MPI, no C
 * library.
 *
 * Each rank owns an open-addressing table (linear probing) of 2^k slots of
 * {key, value}, 8 bytes each; key 0 marks an empty slot. A key's owner and
 * its first slot come from one 64-bit hash of the key. Inserting a key that
 * is there replaces its value. Lookups answer a batch with its values, then
 * a bit per key (found or not), in 64-bit words. */
#ifndef APPS_DHT_TABLE_H
#define APPS_DHT_TABLE_H
#include <stdint.h>

#include "mix.h"

#define DHT_EMPTY 0
/* The largest batch of operations in one message (the XRDMA lookup
 * function builds its answer on the stack). */
#define DHT_MAX_BATCH 4096

struct dht_slot {
    uint64_t key, value;
};

static inline uint64_t dht_hash(uint64_t key)
{
    return app_mix64(key ^ 0x5851f42d4c957f2dULL);
}
/* The owner takes the high 32 bits of the hash, the first slot the low. */
static inline int dht_owner(uint64_t key, int nranks)
{
    return (int)((dht_hash(key) >> 32) % (uint64_t)nranks);
}
static inline uint64_t dht_first_slot(uint64_t key, uint64_t mask)
{
    return dht_hash(key) & mask;
}

/* Insert or replace; returns 1 for a new key, 0 for a replaced value, -1
 * if the table is full (or the key is DHT_EMPTY). */
static inline int dht_insert(struct dht_slot *t, uint64_t mask, uint64_t key, uint64_t value)
{
    if (key == DHT_EMPTY) return -1;
    uint64_t s = dht_first_slot(key, mask);
    for (uint64_t probes = 0; probes <= mask; ++probes, s = (s + 1) & mask) {
        if (t[s].key == key) {
            t[s].value = value;
            return 0;
        }
        if (t[s].key == DHT_EMPTY) {
            t[s].key = key;
            t[s].value = value;
            return 1;
        }
    }
    return -1;
}

/* Word @p i of @p p, which need not be aligned (data that arrived with an
 * X-operation, arguments): a plain load where the machine allows it. */
static inline uint64_t dht_word(const void *p, uint64_t i)
{
    uint64_t w;
    __builtin_memcpy(&w, (const char *)p + 8 * i, sizeof(w));
    return w;
}

/* Insert @p n (key, value) pairs; returns -1 if one could not be. */
static inline int dht_insert_batch(struct dht_slot *t, uint64_t mask, const void *kv, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        if (dht_insert(t, mask, dht_word(kv, 2 * i), dht_word(kv, 2 * i + 1)) < 0) return -1;
    return 0;
}

/* Words of the answer to a batch of @p n lookups: the values, then the
 * found bits. */
static inline uint64_t dht_answer_words(uint64_t n)
{
    return n + (n + 63) / 64;
}

/* Look up @p n keys: out[i] is key i's value (0 if absent), and bit i of
 * out[n ...] says whether it was found. */
static inline void dht_lookup_batch(const struct dht_slot *t, uint64_t mask, const void *keys, uint64_t n,
                                    uint64_t *out)
{
    uint64_t *found = out + n;
    for (uint64_t w = 0; w < (n + 63) / 64; ++w) found[w] = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t key = dht_word(keys, i);
        uint64_t s = dht_first_slot(key, mask);
        out[i] = 0;
        for (uint64_t probes = 0; key != DHT_EMPTY && probes <= mask; ++probes, s = (s + 1) & mask) {
            if (t[s].key == key) {
                out[i] = t[s].value;
                found[i / 64] |= 1ULL << (i % 64);
                break;
            }
            if (t[s].key == DHT_EMPTY) break;
        }
    }
}

static inline int dht_found(const uint64_t *answer, uint64_t n, uint64_t i)
{
    return (int)(answer[n + i / 64] >> (i % 64) & 1);
}

#endif
