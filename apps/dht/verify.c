/* Verification of a DHT variant after an insert and a lookup phase, with
 * plain MPI and independent of the variant: every rank sends the keys it
 * inserted to their owners (MPI_Alltoallv), and each owner checks its own
 * table against them: each distinct key is there with its value, and the
 * table holds exactly as many keys (so nothing else, no key twice). Each
 * rank checks its own lookups: an inserted key (bit 63 clear) found with
 * its value, an absent key (bit 63 set) not found. Not timed. */
#include <stdlib.h>
#include <string.h>

#include "dht.h"

#define REPORT 3 /* failures printed per rank and kind */

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The keys other ranks inserted that this rank owns, sorted, without
 * duplicates; their number in *n. */
static uint64_t *owned_keys(const struct dht_input *in, uint64_t *n)
{
    const int P = app_size;
    int *sc = app_calloc(4 * ((size_t)P + 1), sizeof(int)), *sd = sc + P + 1, *rc = sd + P + 1, *rd = rc + P + 1;
    for (uint64_t i = 0; i < in->n; ++i) sc[dht_owner(in->kv[2 * i], P)]++;
    for (int r = 0; r < P; ++r) sd[r + 1] = sd[r] + sc[r];
    uint64_t *send = app_alloc(sizeof(uint64_t) * (in->n + 1));
    int *fill = app_alloc(sizeof(int) * (size_t)P);
    memcpy(fill, sd, sizeof(int) * (size_t)P);
    for (uint64_t i = 0; i < in->n; ++i) send[fill[dht_owner(in->kv[2 * i], P)]++] = in->kv[2 * i];
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < P; ++r) rd[r + 1] = rd[r] + rc[r];
    uint64_t *keys = app_alloc(sizeof(uint64_t) * ((size_t)rd[P] + 1));
    MPI_Alltoallv(send, sc, sd, MPI_UINT64_T, keys, rc, rd, MPI_UINT64_T, MPI_COMM_WORLD);
    qsort(keys, (size_t)rd[P], sizeof(uint64_t), by_key);
    uint64_t k = 0;
    for (uint64_t i = 0; i < (uint64_t)rd[P]; ++i)
        if (!k || keys[i] != keys[k - 1]) keys[k++] = keys[i];
    *n = k;
    free(sc);
    free(send);
    free(fill);
    return keys;
}

int dht_verify(const struct dht_variant *v, void *state, const struct dht_options *o, const struct dht_input *in,
               const uint64_t *values, const unsigned char *found)
{
    const struct dht_slot *t = v->table(state);
    const uint64_t mask = o->slots - 1;
    int64_t bad[4] = {0}; /* missing or wrong value, table count, lookup of inserted key, lookup of absent key */
    uint64_t n;
    uint64_t *keys = owned_keys(in, &n);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t got[1 + 1];
        dht_lookup_batch(t, mask, &keys[i], 1, got);
        if ((!dht_found(got, 1, 0) || got[0] != dht_value(keys[i])) && bad[0]++ < REPORT)
            app_warn("%s: inserted key %#llx %s", v->name, (unsigned long long)keys[i],
                     dht_found(got, 1, 0) ? "has a wrong value" : "is not in its owner's table");
    }
    uint64_t held = 0;
    for (uint64_t s = 0; s <= mask; ++s) held += t[s].key != DHT_EMPTY;
    if (held != n && bad[1]++ < REPORT)
        app_warn("%s: the table holds %llu keys, %llu distinct keys were inserted here", v->name,
                 (unsigned long long)held, (unsigned long long)n);
    for (uint64_t i = 0; i < in->n; ++i) {
        const uint64_t key = in->look[i];
        if (dht_inserted(key)) {
            if ((!found[i] || values[i] != dht_value(key)) && bad[2]++ < REPORT)
                app_warn("%s: lookup %llu of inserted key %#llx: %s", v->name, (unsigned long long)i,
                         (unsigned long long)key, found[i] ? "wrong value" : "not found");
        } else if (found[i] && bad[3]++ < REPORT) {
            app_warn("%s: lookup %llu of absent key %#llx: found", v->name, (unsigned long long)i,
                     (unsigned long long)key);
        }
    }
    free(keys);
    int64_t all[4];
    MPI_Allreduce(bad, all, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    const int ok = !all[0] && !all[1] && !all[2] && !all[3];
    if (!ok && app_rank == 0)
        app_warn("%s: verification failed: %lld keys missing or wrong, %lld tables with other keys, %lld lookups of "
                 "inserted keys and %lld of absent keys wrong",
                 v->name, (long long)all[0], (long long)all[1], (long long)all[2], (long long)all[3]);
    return ok;
}
