/* The distributed hash table benchmark: its input (keys.c), the interface
 * of a variant (two-sided in rounds or in bulk, MPI-3 RMA, XRDMA) and the verification
 * (verify.c). The table itself is dht_table.h. */
#ifndef APPS_DHT_DHT_H
#define APPS_DHT_DHT_H
#include <stdint.h>

#include "../common/app.h"
#include "dht_table.h"

struct dht_options {
    int batch;          /* operations per message (per flush for RMA) */
    uint64_t slots;     /* table slots per rank, a power of two */
    const char *image;  /* the ifunc image (NULL: beside the program) */
};

/* A variant: create its table (empty) once; clear it between rounds
 * (collective); insert @p n (key, value) pairs and look up @p n keys from
 * this rank, each returning once this rank's operations are complete at
 * their owners (collective; the caller synchronises the ranks after);
 * this rank's table, for the verification. */
struct dht_variant {
    const char *name;
    void *(*create)(const struct dht_options *o);
    void (*clear)(void *state);
    void (*insert)(void *state, const uint64_t *kv, uint64_t n, struct app_counts *c);
    void (*lookup)(void *state, const uint64_t *keys, uint64_t n, uint64_t *values, unsigned char *found,
                   struct app_counts *c);
    const struct dht_slot *(*table)(void *state);
    void (*destroy)(void *state);
};

extern const struct dht_variant dht_a2a, dht_bulk, dht_rma, dht_xrdma;

/* The input of one rank (keys.c): n inserts as (key, value) pairs, keys
 * uniform over distinct keys or Zipf(0.99) over a universe of ranks * n
 * keys, and n lookups, about half of them keys this rank inserted (drawn
 * from its inserts, so they follow the same distribution) and half keys
 * nobody inserts. Every key is non-zero; inserted keys have bit 63 clear,
 * absent ones set. A key's value is dht_value(key). */
enum dht_dist { DHT_UNIFORM, DHT_ZIPF };
struct dht_input {
    uint64_t n;
    uint64_t *kv;   /* 2 * n */
    uint64_t *look; /* n */
};
void dht_make_input(struct dht_input *in, enum dht_dist dist, uint64_t n, uint64_t seed);
void dht_free_input(struct dht_input *in);
static inline uint64_t dht_value(uint64_t key)
{
    return app_mix64(key ^ 0x76616c7565000000ULL);
}
static inline int dht_inserted(uint64_t key)
{
    return !(key >> 63);
}

/* Verification (verify.c), collective: every inserted key is in its
 * owner's table with its value, the tables hold nothing else, each lookup
 * of an inserted key found it with its value and each lookup of an absent
 * key found nothing. Returns 1 if all holds; prints what failed. */
int dht_verify(const struct dht_variant *v, void *state, const struct dht_options *o, const struct dht_input *in,
               const uint64_t *values, const unsigned char *found);

#endif
