/* The DHT's input: uniform keys (each rank's n distinct keys, distinct
 * across ranks too) or Zipf(0.99) keys, and the lookups.
 *
 * Zipf: key ranks in [1, U] with P(k) proportional to 1 / k^0.99, drawn by
 * the method of Gray et al., "Quickly generating billion-record synthetic
 * databases" (SIGMOD 1994), the generator of the YCSB benchmark's Zipfian
 * keys, whose hot keys are spread over the key space by a hash there as
 * here (a key is a bijection of its rank, so the hot keys land on any
 * owner). U is the number of inserts of all ranks: with 4 ranks of 2^20
 * the most frequent key is about 6% of them, and about a fifth of the keys
 * drawn are distinct (expected values of the distribution). */
#include <math.h>
#include <stdlib.h>

#include "dht.h"

#define ZIPF_THETA 0.99

/* A bijection of [0, 2^63) that maps 0 to 0 (multiplications by odd
 * numbers and xor-shifts, modulo 2^63): distinct inputs, distinct keys. */
static uint64_t key_of(uint64_t x)
{
    const uint64_t m = (1ULL << 63) - 1;
    x = (x * 0x9e3779b97f4a7c15ULL) & m;
    x ^= x >> 29;
    x = (x * 0xbf58476d1ce4e5b9ULL) & m;
    x ^= x >> 32;
    x = (x * 0x94d049bb133111ebULL) & m;
    return x ^ (x >> 29);
}

struct zipf {
    double zetan, eta, alpha, half_pow;
    uint64_t n;
};

/* zeta(n) = sum of 1/i^theta for i in 1..n, computed once by rank 0. */
static void zipf_init(struct zipf *z, uint64_t n)
{
    double zetan = 0;
    if (app_rank == 0)
        for (uint64_t i = n; i >= 1; --i) zetan += pow((double)i, -ZIPF_THETA); /* (small terms first) */
    MPI_Bcast(&zetan, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double zeta2 = 1.0 + pow(2.0, -ZIPF_THETA);
    z->n = n;
    z->zetan = zetan;
    z->alpha = 1.0 / (1.0 - ZIPF_THETA);
    z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - ZIPF_THETA)) / (1.0 - zeta2 / zetan);
    z->half_pow = pow(0.5, ZIPF_THETA);
}

static uint64_t zipf_next(const struct zipf *z, uint64_t *st)
{
    const double u = app_unit(app_splitmix64(st)), uz = u * z->zetan;
    if (uz < 1.0) return 1;
    if (uz < 1.0 + z->half_pow) return 2;
    uint64_t k = 1 + (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
    return k > z->n ? z->n : k;
}

void dht_make_input(struct dht_input *in, enum dht_dist dist, uint64_t n, uint64_t seed)
{
    const uint64_t r = (uint64_t)app_rank, all = n * (uint64_t)app_size;
    in->n = n;
    in->kv = app_alloc(sizeof(uint64_t) * 2 * (size_t)n);
    in->look = app_alloc(sizeof(uint64_t) * (size_t)n);
    uint64_t st = app_mix64(seed ^ app_mix64(r + 1) ^ (uint64_t)dist << 56);
    struct zipf z;
    if (dist == DHT_ZIPF) zipf_init(&z, all);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t key = key_of(dist == DHT_ZIPF ? zipf_next(&z, &st) : r * n + i + 1);
        in->kv[2 * i] = key;
        in->kv[2 * i + 1] = dht_value(key);
    }
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t x = app_splitmix64(&st);
        in->look[i] = x & 1 ? in->kv[2 * ((x >> 1) % n)] : key_of(r * n + i + 1) | 1ULL << 63;
    }
}

void dht_free_input(struct dht_input *in)
{
    free(in->kv);
    free(in->look);
}
