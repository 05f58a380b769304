/* XRDMA DHT: requests aggregated per owner, as in the two-sided variant,
 * but each batch goes as one X-operation that runs the owner's table code
 * there (dht_ifunc.c): MPIX_Xput of the (key, value) pairs with the insert
 * function, MPIX_Xget of the keys (as its arguments) with the lookup
 * function, which replies their values and found bits. The tables are a
 * window (MPI_Win_allocate, one passive epoch for the whole run). A rank's
 * own keys take the same way (an X-operation to itself runs at once, under
 * the lock that keeps functions at one target one at a time). Up to
 * INFLIGHT lookup batches are in flight before an MPI_Win_flush_all
 * completes them; inserts need no answer and are completed at the end. */
#include <stdlib.h>
#include <string.h>

#include "dht.h"

#define IMAGE "dht_ifunc.xfn"
#define INFLIGHT 64

struct xr {
    MPI_Win win;
    struct dht_slot *t; /* the window */
    uint64_t slots;
    int batch;
    MPIX_Ifunc insert_fn, lookup_fn;
    uint64_t *buf, *pos; /* per owner: a batch being filled, and its keys' places */
    int *fill;
    uint64_t *answer, *where; /* lookups in flight: answers, places */
    int *count, inflight;
};

static void *create(const struct dht_options *o)
{
    const size_t P = (size_t)app_size, b = (size_t)o->batch;
    struct xr *s = app_calloc(1, sizeof(*s));
    s->slots = o->slots;
    s->batch = o->batch;
    int rc = MPI_Win_allocate((MPI_Aint)(sizeof(struct dht_slot) * o->slots), sizeof(uint64_t), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &s->t, &s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_allocate");
    memset(s->t, 0, sizeof(struct dht_slot) * o->slots);
    MPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->insert_fn = app_load_ifunc(o->image, IMAGE, "dht_insert_kv");
    s->lookup_fn = app_load_ifunc(o->image, IMAGE, "dht_lookup_keys");
    s->buf = app_alloc(sizeof(uint64_t) * 2 * P * b);
    s->pos = app_alloc(sizeof(uint64_t) * P * b);
    s->fill = app_calloc(P, sizeof(int));
    s->answer = app_alloc(sizeof(uint64_t) * INFLIGHT * dht_answer_words(b));
    s->where = app_alloc(sizeof(uint64_t) * INFLIGHT * b);
    s->count = app_calloc(INFLIGHT, sizeof(int));
    return s;
}

static void clear(void *state)
{
    struct xr *s = state;
    memset(s->t, 0, sizeof(struct dht_slot) * s->slots);
    MPI_Win_sync(s->win);
}

static void flush(struct xr *s, struct app_counts *c)
{
    int rc = MPI_Win_flush_all(s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPI_Win_flush_all (an insert or lookup failed)");
    c->syncs++;
}

static void ship_inserts(struct xr *s, int d, struct app_counts *c)
{
    const int n = s->fill[d];
    s->fill[d] = 0;
    int rc = MPIX_Xput(s->buf + 2 * (size_t)d * (size_t)s->batch, 2 * n, MPI_UINT64_T, d, 0, (int)(2 * s->slots),
                       MPI_UINT64_T, s->insert_fn, NULL, 0, s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPIX_Xput");
    app_count(c, d, 2 * sizeof(uint64_t) * (uint64_t)n);
}

static void insert(void *state, const uint64_t *kv, uint64_t n, struct app_counts *c)
{
    struct xr *s = state;
    const int P = app_size;
    for (uint64_t i = 0; i < n; ++i) {
        const int d = dht_owner(kv[2 * i], P);
        uint64_t *at = s->buf + 2 * ((size_t)d * (size_t)s->batch + (size_t)s->fill[d]++);
        at[0] = kv[2 * i], at[1] = kv[2 * i + 1];
        if (s->fill[d] == s->batch) ship_inserts(s, d, c);
    }
    for (int k = 1; k <= P; ++k)
        if (s->fill[(app_rank + k) % P]) ship_inserts(s, (app_rank + k) % P, c);
    flush(s, c);
}

/* Complete the lookups in flight and put their answers in place. */
static void complete(struct xr *s, uint64_t *values, unsigned char *found, struct app_counts *c)
{
    flush(s, c);
    const size_t aw = dht_answer_words((uint64_t)s->batch);
    for (int b = 0; b < s->inflight; ++b) {
        const uint64_t *a = s->answer + (size_t)b * aw, *w = s->where + (size_t)b * (size_t)s->batch;
        for (int i = 0; i < s->count[b]; ++i) {
            values[w[i]] = a[i];
            found[w[i]] = (unsigned char)dht_found(a, (uint64_t)s->count[b], (uint64_t)i);
        }
    }
    s->inflight = 0;
}

static void ship_lookups(struct xr *s, int d, uint64_t *values, unsigned char *found, struct app_counts *c)
{
    if (s->inflight == INFLIGHT) complete(s, values, found, c);
    const int n = s->fill[d], b = s->inflight++;
    s->fill[d] = 0;
    s->count[b] = n;
    memcpy(s->where + (size_t)b * (size_t)s->batch, s->pos + (size_t)d * (size_t)s->batch, sizeof(uint64_t) * (size_t)n);
    const uint64_t aw = dht_answer_words((uint64_t)n);
    int rc = MPIX_Xget(s->answer + (size_t)b * dht_answer_words((uint64_t)s->batch), (int)aw, MPI_UINT64_T, d, 0,
                       (int)(2 * s->slots), MPI_UINT64_T, s->lookup_fn, s->buf + (size_t)d * (size_t)s->batch,
                       (int)sizeof(uint64_t) * n, s->win);
    if (rc != MPI_SUCCESS) app_fail_mpi(rc, "MPIX_Xget");
    app_count(c, d, sizeof(uint64_t) * (uint64_t)n);
    app_count(c, d, sizeof(uint64_t) * aw);
}

static void lookup(void *state, const uint64_t *keys, uint64_t n, uint64_t *values, unsigned char *found,
                   struct app_counts *c)
{
    struct xr *s = state;
    const int P = app_size;
    for (uint64_t i = 0; i < n; ++i) {
        const int d = dht_owner(keys[i], P);
        const size_t at = (size_t)d * (size_t)s->batch + (size_t)s->fill[d]++;
        s->buf[at] = keys[i];
        s->pos[at] = i;
        if (s->fill[d] == s->batch) ship_lookups(s, d, values, found, c);
    }
    for (int k = 1; k <= P; ++k)
        if (s->fill[(app_rank + k) % P]) ship_lookups(s, (app_rank + k) % P, values, found, c);
    complete(s, values, found, c);
}

static const struct dht_slot *table(void *state)
{
    struct xr *s = state;
    MPI_Win_sync(s->win);
    return s->t;
}

static void destroy(void *state)
{
    struct xr *s = state;
    MPI_Win_unlock_all(s->win);
    MPIX_Ifunc_free(&s->insert_fn);
    MPIX_Ifunc_free(&s->lookup_fn);
    MPI_Win_free(&s->win);
    free(s->buf);
    free(s->pos);
    free(s->fill);
    free(s->answer);
    free(s->where);
    free(s->count);
    free(s);
}

const struct dht_variant dht_xrdma = {"xrdma", create, clear, insert, lookup, table, destroy};
