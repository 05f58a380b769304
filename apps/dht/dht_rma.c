/* MPI-3 RMA DHT: the tables are a window (MPI_Win_allocate, one passive
 * epoch for the whole run) and the origin does the probing itself. An
 * insert claims a slot with MPI_Compare_and_swap of its key into an empty
 * slot (or finds its key there) and then stores the value with MPI_Put; a
 * lookup reads 4 slots (64 bytes) with MPI_Get and goes on to the next 4
 * while it finds neither its key nor an empty slot. Operations
 * go in batches: a batch of keys each issues its next step, one
 * MPI_Win_flush_all completes them all, and the keys still probing go
 * round again. A rank's own keys use the same steps on its memory (atomic
 * compare-and-swap, loads). */
#include <stdlib.h>
#include <string.h>

#include "dht.h"

#define LINE 4 /* slots per MPI_Get */

struct rma {
    MPI_Win win;
    struct dht_slot *t; /* the window */
    uint64_t mask;
    int batch;
    uint64_t *slot, *result, *got; /* per key of a batch: next slot, compare-and-swap result, slots read */
    uint64_t *idx;                   /* the batch's keys still probing */
    struct dht_slot *line;           /* a batch of lines read */
};

static void *create(const struct dht_options *o)
{
    struct rma *s = app_calloc(1, sizeof(*s));
    s->mask = o->slots - 1;
    s->batch = o->batch;
    int rc = MPI_Win_allocate((MPI_Aint)(sizeof(struct dht_slot) * o->slots), sizeof(uint64_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &s->t, &s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_allocate");
    memset(s->t, 0, sizeof(struct dht_slot) * o->slots);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    const size_t b = (size_t)o->batch;
    s->slot = app_alloc(sizeof(uint64_t) * b);
    s->result = app_alloc(sizeof(uint64_t) * b);
    s->got = app_alloc(sizeof(uint64_t) * b);
    s->idx = app_alloc(sizeof(uint64_t) * b);
    s->line = app_alloc(sizeof(struct dht_slot) * LINE * b);
    return s;
}

static void clear(void *state)
{
    struct rma *s = state;
    memset(s->t, 0, sizeof(struct dht_slot) * (size_t)(s->mask + 1));
    MPI_Win_sync(s->win);
}

static void flush(struct rma *s, struct app_counts *c)
{
    int rc = MPI_Win_flush_all(s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_flush_all");
    c->syncs++;
}

static void insert(void *state, const uint64_t *kv, uint64_t n, struct app_counts *c)
{
    struct rma *s = state;
    const int P = app_size, me = app_rank;
    const uint64_t empty = DHT_EMPTY;
    for (uint64_t lo = 0; lo < n; lo += (uint64_t)s->batch) {
        uint64_t k = n - lo < (uint64_t)s->batch ? n - lo : (uint64_t)s->batch, left = 0;
        for (uint64_t i = 0; i < k; ++i) s->idx[left++] = i, s->slot[i] = dht_first_slot(kv[2 * (lo + i)], s->mask);
        for (uint64_t probes = 0; left; ++probes) {
            if (probes > s->mask) app_die("dht rma: the table is full");
            /* One step of every key still probing: claim its slot. */
            for (uint64_t j = 0; j < left; ++j) {
                const uint64_t i = s->idx[j], key = kv[2 * (lo + i)];
                const int o = dht_owner(key, P);
                if (o == me) {
                    uint64_t seen = DHT_EMPTY;
                    __atomic_compare_exchange_n(&s->t[s->slot[i]].key, &seen, key, 0, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED);
                    s->result[i] = seen;
                    continue;
                }
                int rc = MPI_Compare_and_swap(&kv[2 * (lo + i)], &empty, &s->result[i], MPI_UINT64_T, o,
                                              (MPI_Aint)(2 * s->slot[i]), s->win);
                if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Compare_and_swap");
                app_count(c, o, 2 * sizeof(uint64_t));
                app_count(c, o, sizeof(uint64_t));
            }
            flush(s, c);
            /* Claimed or found: store the value; taken: the next slot. */
            uint64_t still = 0;
            for (uint64_t j = 0; j < left; ++j) {
                const uint64_t i = s->idx[j], key = kv[2 * (lo + i)];
                const int o = dht_owner(key, P);
                if (s->result[i] != DHT_EMPTY && s->result[i] != key) {
                    s->slot[i] = (s->slot[i] + 1) & s->mask;
                    s->idx[still++] = i;
                } else if (o == me) {
                    s->t[s->slot[i]].value = kv[2 * (lo + i) + 1];
                } else {
                    int rc = MPI_Put(&kv[2 * (lo + i) + 1], 1, MPI_UINT64_T, o, (MPI_Aint)(2 * s->slot[i] + 1), 1,
                                     MPI_UINT64_T, s->win);
                    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Put");
                    app_count(c, o, sizeof(uint64_t));
                }
            }
            left = still;
        }
    }
    flush(s, c); /* the last values */
}

static void lookup(void *state, const uint64_t *keys, uint64_t n, uint64_t *values, unsigned char *found,
                   struct app_counts *c)
{
    struct rma *s = state;
    const int P = app_size, me = app_rank;
    for (uint64_t lo = 0; lo < n; lo += (uint64_t)s->batch) {
        uint64_t k = n - lo < (uint64_t)s->batch ? n - lo : (uint64_t)s->batch, left = 0;
        for (uint64_t i = 0; i < k; ++i) {
            const uint64_t key = keys[lo + i];
            if (dht_owner(key, P) == me) { /* our own table: no need to go round */
                uint64_t ans[2];
                dht_lookup_batch(s->t, s->mask, &keys[lo + i], 1, ans);
                values[lo + i] = ans[0], found[lo + i] = (unsigned char)dht_found(ans, 1, 0);
                continue;
            }
            s->idx[left++] = i, s->slot[i] = dht_first_slot(key, s->mask);
        }
        for (uint64_t probes = 0; left; probes += LINE) {
            if (probes > s->mask) app_die("dht rma: a lookup probed the whole table");
            for (uint64_t j = 0; j < left; ++j) {
                const uint64_t i = s->idx[j];
                const int o = dht_owner(keys[lo + i], P);
                /* A line, or what is left of the table before it wraps. */
                const uint64_t m = s->mask + 1 - s->slot[i] < LINE ? s->mask + 1 - s->slot[i] : LINE;
                int rc = MPI_Get(&s->line[LINE * i], (int)(2 * m), MPI_UINT64_T, o, (MPI_Aint)(2 * s->slot[i]),
                                 (int)(2 * m), MPI_UINT64_T, s->win);
                if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Get");
                s->got[i] = m;
                app_count(c, o, 0);
                app_count(c, o, sizeof(struct dht_slot) * m);
            }
            flush(s, c);
            uint64_t still = 0;
            for (uint64_t j = 0; j < left; ++j) {
                const uint64_t i = s->idx[j], key = keys[lo + i];
                int done = 0;
                for (uint64_t x = 0; x < s->got[i] && !done; ++x) {
                    const struct dht_slot *e = &s->line[LINE * i + x];
                    if (e->key == key || e->key == DHT_EMPTY) {
                        done = 1;
                        found[lo + i] = e->key == key;
                        values[lo + i] = e->key == key ? e->value : 0;
                    }
                }
                if (!done) {
                    s->slot[i] = (s->slot[i] + s->got[i]) & s->mask;
                    s->idx[still++] = i;
                }
            }
            left = still;
        }
    }
}

static const struct dht_slot *table(void *state)
{
    struct rma *s = state;
    MPI_Win_sync(s->win);
    return s->t;
}

static void destroy(void *state)
{
    struct rma *s = state;
    MPI_Win_unlock_all(s->win);
    MPI_Win_free(&s->win);
    free(s->slot);
    free(s->result);
    free(s->got);
    free(s->idx);
    free(s->line);
    free(s);
}

const struct dht_variant dht_rma = {"rma", create, clear, insert, lookup, table, destroy};
