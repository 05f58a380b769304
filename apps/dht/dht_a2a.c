/* Two-sided DHT: requests aggregated per owner and exchanged in rounds of
 * MPI_Alltoallv, up to a batch of operations per owner and round (a2a), or
 * all of them in one round (bulk: the fewest synchronisations, the most
 * memory). An
 * insert round carries (key, value) pairs that the owners insert; a lookup
 * round carries keys, and the owners answer each source's keys with their
 * values and found bits (dht_table.h) in a second MPI_Alltoallv. A rank's
 * own keys go straight into its table. */
#include <stdlib.h>
#include <string.h>

#include "dht.h"

struct a2a {
    struct dht_slot *t;
    uint64_t mask;
    int batch;
    int *sc, *sd, *rc, *rd, *cnt, *first; /* per rank */
    uint64_t *sorted, *pos, *sbuf, *rbuf, *ans, *back;
    size_t cap, scap, rcap, acap, bcap;
};

/* @p buf holds at least @p n words. */
static uint64_t *reserve(uint64_t *buf, size_t *cap, size_t n)
{
    if (n <= *cap) return buf;
    free(buf);
    *cap = n + n / 4;
    return app_alloc(sizeof(uint64_t) * *cap);
}

static void *create(const struct dht_options *o)
{
    const int P = app_size;
    struct a2a *s = app_calloc(1, sizeof(*s));
    s->t = app_calloc((size_t)o->slots, sizeof(struct dht_slot));
    s->mask = o->slots - 1;
    s->batch = o->batch;
    s->sc = app_calloc(6 * ((size_t)P + 1), sizeof(int));
    s->sd = s->sc + P + 1, s->rc = s->sd + P + 1, s->rd = s->rc + P + 1, s->cnt = s->rd + P + 1;
    s->first = s->cnt + P + 1;
    return s;
}

static void *create_bulk(const struct dht_options *o)
{
    struct a2a *s = create(o);
    s->batch = 1 << 30; /* one round */
    return s;
}

static void clear(void *state)
{
    struct a2a *s = state;
    memset(s->t, 0, sizeof(struct dht_slot) * (size_t)(s->mask + 1));
}

/* Sort @p n items of @p width words by owner of their first word into
 * s->sorted (and their indices into s->pos): cnt[r] items for rank r from
 * first[r] on. Returns the number of rounds every rank must take part in. */
static int64_t by_owner(struct a2a *s, const uint64_t *items, uint64_t n, int width)
{
    const int P = app_size;
    if (n > s->cap) {
        free(s->sorted);
        free(s->pos);
        s->cap = n;
        s->sorted = app_alloc(sizeof(uint64_t) * 2 * n);
        s->pos = app_alloc(sizeof(uint64_t) * n);
    }
    memset(s->cnt, 0, sizeof(int) * (size_t)P);
    for (uint64_t i = 0; i < n; ++i) s->cnt[dht_owner(items[(size_t)width * i], P)]++;
    int64_t most = 0;
    for (int r = 0, at = 0; r < P; ++r) {
        s->first[r] = at;
        at += s->cnt[r];
        if (r != app_rank && s->cnt[r] > most) most = s->cnt[r];
        s->cnt[r] = 0;
    }
    for (uint64_t i = 0; i < n; ++i) {
        const int r = dht_owner(items[(size_t)width * i], P);
        const size_t at = (size_t)s->first[r] + (size_t)s->cnt[r]++;
        memcpy(&s->sorted[(size_t)width * at], &items[(size_t)width * i], sizeof(uint64_t) * (size_t)width);
        s->pos[at] = i;
    }
    int64_t rounds = (most + s->batch - 1) / s->batch, all;
    MPI_Allreduce(&rounds, &all, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

/* The counts and offsets of round @p k (in items) for every other rank;
 * exchanges the counts with them. */
static void round_counts(struct a2a *s, int64_t k, struct app_counts *c)
{
    const int P = app_size;
    for (int r = 0, at = 0; r < P; ++r) {
        int64_t left = r == app_rank ? 0 : s->cnt[r] - k * s->batch;
        s->sc[r] = left <= 0 ? 0 : (left < s->batch ? (int)left : s->batch);
        s->sd[r] = at;
        at += s->sc[r];
        app_count(c, r, sizeof(int));
    }
    MPI_Alltoall(s->sc, 1, MPI_INT, s->rc, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0, at = 0; r < P; ++r) s->rd[r] = at, at += s->rc[r];
    c->syncs++;
}

/* The counts and offsets of round @p k scaled to @p w words per item. */
static void scale_counts(int *cnt, int *displ, int w)
{
    for (int r = 0; r < app_size; ++r) cnt[r] *= w, displ[r] *= w;
}

static void insert(void *state, const uint64_t *kv, uint64_t n, struct app_counts *c)
{
    struct a2a *s = state;
    const int P = app_size, me = app_rank;
    const int64_t rounds = by_owner(s, kv, n, 2);
    if (dht_insert_batch(s->t, s->mask, &s->sorted[2 * (size_t)s->first[me]], (uint64_t)s->cnt[me]) < 0)
        app_die("dht a2a: the table is full");
    for (int64_t k = 0; k < rounds; ++k) {
        round_counts(s, k, c);
        s->sbuf = reserve(s->sbuf, &s->scap, 2 * ((size_t)s->sd[P - 1] + (size_t)s->sc[P - 1]));
        s->rbuf = reserve(s->rbuf, &s->rcap, 2 * ((size_t)s->rd[P - 1] + (size_t)s->rc[P - 1]));
        for (int r = 0; r < P; ++r)
            memcpy(&s->sbuf[2 * (size_t)s->sd[r]], &s->sorted[2 * ((size_t)s->first[r] + (size_t)(k * s->batch))],
                   sizeof(uint64_t) * 2 * (size_t)s->sc[r]);
        for (int r = 0; r < P; ++r)
            if (s->sc[r]) app_count(c, r, sizeof(uint64_t) * 2 * (uint64_t)s->sc[r]);
        const int items = s->rd[P - 1] + s->rc[P - 1];
        scale_counts(s->sc, s->sd, 2);
        scale_counts(s->rc, s->rd, 2);
        MPI_Alltoallv(s->sbuf, s->sc, s->sd, MPI_UINT64_T, s->rbuf, s->rc, s->rd, MPI_UINT64_T, MPI_COMM_WORLD);
        c->syncs++;
        if (dht_insert_batch(s->t, s->mask, s->rbuf, (uint64_t)items) < 0) app_die("dht a2a: the table is full");
    }
}

static void lookup(void *state, const uint64_t *keys, uint64_t n, uint64_t *values, unsigned char *found,
                   struct app_counts *c)
{
    struct a2a *s = state;
    const int P = app_size, me = app_rank;
    const int64_t rounds = by_owner(s, keys, n, 1);
    /* (A local answer goes where a remote one would: the same scatter.) */
    uint64_t *mine = app_alloc(sizeof(uint64_t) * (dht_answer_words((uint64_t)s->cnt[me]) + 1));
    dht_lookup_batch(s->t, s->mask, &s->sorted[s->first[me]], (uint64_t)s->cnt[me], mine);
    for (int i = 0; i < s->cnt[me]; ++i) {
        const uint64_t at = s->pos[s->first[me] + i];
        values[at] = mine[i];
        found[at] = (unsigned char)dht_found(mine, (uint64_t)s->cnt[me], (uint64_t)i);
    }
    free(mine);
    int *ac = app_alloc(sizeof(int) * 4 * (size_t)P), *ad = ac + P, *bc = ad + P, *bd = bc + P;
    for (int64_t k = 0; k < rounds; ++k) {
        round_counts(s, k, c);
        s->sbuf = reserve(s->sbuf, &s->scap, (size_t)s->sd[P - 1] + (size_t)s->sc[P - 1]);
        s->rbuf = reserve(s->rbuf, &s->rcap, (size_t)s->rd[P - 1] + (size_t)s->rc[P - 1]);
        for (int r = 0; r < P; ++r) {
            memcpy(&s->sbuf[s->sd[r]], &s->sorted[(size_t)s->first[r] + (size_t)(k * s->batch)],
                   sizeof(uint64_t) * (size_t)s->sc[r]);
            if (s->sc[r]) app_count(c, r, sizeof(uint64_t) * (uint64_t)s->sc[r]);
        }
        MPI_Alltoallv(s->sbuf, s->sc, s->sd, MPI_UINT64_T, s->rbuf, s->rc, s->rd, MPI_UINT64_T, MPI_COMM_WORLD);
        /* Answer each source's keys; answers travel back the same way. */
        for (int r = 0, at = 0, bt = 0; r < P; ++r) {
            ac[r] = (int)dht_answer_words((uint64_t)s->rc[r]) * (s->rc[r] > 0);
            ad[r] = at, at += ac[r];
            bc[r] = (int)dht_answer_words((uint64_t)s->sc[r]) * (s->sc[r] > 0);
            bd[r] = bt, bt += bc[r];
        }
        s->ans = reserve(s->ans, &s->acap, (size_t)ad[P - 1] + (size_t)ac[P - 1]);
        s->back = reserve(s->back, &s->bcap, (size_t)bd[P - 1] + (size_t)bc[P - 1]);
        for (int r = 0; r < P; ++r) {
            dht_lookup_batch(s->t, s->mask, &s->rbuf[s->rd[r]], (uint64_t)s->rc[r], &s->ans[ad[r]]);
            if (ac[r]) app_count(c, r, sizeof(uint64_t) * (uint64_t)ac[r]);
        }
        MPI_Alltoallv(s->ans, ac, ad, MPI_UINT64_T, s->back, bc, bd, MPI_UINT64_T, MPI_COMM_WORLD);
        c->syncs += 2;
        for (int r = 0; r < P; ++r)
            for (int i = 0; i < s->sc[r]; ++i) {
                const uint64_t at = s->pos[(size_t)s->first[r] + (size_t)(k * s->batch) + (size_t)i];
                values[at] = s->back[bd[r] + i];
                found[at] = (unsigned char)dht_found(&s->back[bd[r]], (uint64_t)s->sc[r], (uint64_t)i);
            }
    }
    free(ac);
}

static const struct dht_slot *table(void *state)
{
    return ((struct a2a *)state)->t;
}

static void destroy(void *state)
{
    struct a2a *s = state;
    free(s->t);
    free(s->sc);
    free(s->sorted);
    free(s->pos);
    free(s->sbuf);
    free(s->rbuf);
    free(s->ans);
    free(s->back);
    free(s);
}

const struct dht_variant dht_a2a = {"a2a", create, clear, insert, lookup, table, destroy};
const struct dht_variant dht_bulk = {"bulk", create_bulk, clear, insert, lookup, table, destroy};
