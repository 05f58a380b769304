/* Every target datatype MPI_Put and MPI_Get take works with MPIX_Xput and
 * MPIX_Xget, with the same result, on one kind of window
 * (argv[1]: create, allocate, shared or dynamic) with the images of
 * tests/mpi/ifuncs/datatypes.c (argv[2]) and datatypes_plain.c (argv[3]). For each datatype, each rank
 *   - MPI_Puts its data with the type into region A of the next rank and
 *     MPIX_Xputs the same data with dt_store into region B: A and B must
 *     end up alike, byte for byte;
 *   - MPI_Gets and MPIX_Xgets (dt_gather) the same typed region of the next
 *     rank, whose window holds a pattern: the two buffers must be alike.
 * Types: indexed with holes, hindexed, indexed_block, hindexed_block,
 * struct (with gaps, two base types), subarray (C and Fortran order),
 * darray (block x cyclic(2), C; cyclic x block, Fortran), resized, and
 * nested ones (a vector of structs, a contiguous run of subarrays). Each Xput
 * is also made with dt_stream_store (XRDMA_STREAM, in 64-byte chunks) into
 * region C, and with dt_plain_copy (a function written for a contiguous
 * region: it runs once per block) into region D, which must match region A
 * too, holes untouched; and each Xget with dt_plain_get (its replies, one
 * per block, together) must read what MPI_Get reads.
 * Under tests/mpi/target/ every X-op is a message; over shared memory with
 * shared windows the code runs at the origin on mapped memory. */
#include <mpix_xrdma.h>
#include <stdint.h>

#include "mpitest.h"

#define BYTES 16384
#define REGION_B 4096 /* region B starts this far after region A */
#define REGION_C 8192 /* and region C (the streaming function's) */
#define REGION_D 12288 /* and region D (the plain function's, run block by block) */
#define AT 16         /* region A's displacement (bytes) */

static int rank, size, dynamic;
static unsigned char *base;
static MPI_Win win;
static MPI_Aint *addr;
static MPIX_Ifunc f_store, f_gather, f_stream, f_plain_copy, f_plain_get;

static MPI_Aint disp(int r, MPI_Aint byte) { return dynamic ? addr[r] + byte : byte; }

struct named {
    const char *name;
    MPI_Datatype type;
    int count;
};

static int make_types(struct named *t)
{
    int n = 0;
    MPI_Datatype d;
    {
        int bl[3] = {2, 1, 3}, dp[3] = {0, 5, 9};
        MPI_Type_indexed(3, bl, dp, MPI_INT32_T, &d);
        t[n++] = (struct named){"indexed with holes", d, 2};
    }
    {
        int bl[3] = {1, 2, 1};
        MPI_Aint dp[3] = {40, 0, 100}; /* out of address order */
        MPI_Type_create_hindexed(3, bl, dp, MPI_DOUBLE, &d);
        t[n++] = (struct named){"hindexed, displacements out of order", d, 1};
    }
    {
        int dp[4] = {7, 1, 3, 12};
        MPI_Type_create_indexed_block(4, 2, dp, MPI_INT16_T, &d);
        t[n++] = (struct named){"indexed_block", d, 3};
    }
    {
        MPI_Aint dp[3] = {3, 30, 17};
        MPI_Type_create_hindexed_block(3, 5, dp, MPI_CHAR, &d);
        t[n++] = (struct named){"hindexed_block", d, 1};
    }
    {
        int bl[3] = {1, 3, 2};
        MPI_Aint dp[3] = {0, 8, 40};
        MPI_Datatype tt[3] = {MPI_INT32_T, MPI_CHAR, MPI_DOUBLE};
        MPI_Type_create_struct(3, bl, dp, tt, &d);
        t[n++] = (struct named){"struct with gaps", d, 4};
    }
    {
        int sizes[2] = {10, 12}, sub[2] = {4, 5}, start[2] = {3, 2};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT32_T, &d);
        t[n++] = (struct named){"subarray, C order", d, 1};
    }
    {
        int sizes[3] = {6, 5, 4}, sub[3] = {2, 3, 2}, start[3] = {1, 2, 1};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT16_T, &d);
        t[n++] = (struct named){"subarray 3-D, Fortran order", d, 1};
    }
    {
        int g[2] = {8, 10}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
        MPI_Type_create_darray(4, 1, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT32_T, &d);
        t[n++] = (struct named){"darray block x cyclic(2), C order", d, 1};
    }
    {
        int g[2] = {9, 7}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {3, 2};
        MPI_Type_create_darray(6, 4, 2, g, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT16_T, &d);
        t[n++] = (struct named){"darray cyclic x block, Fortran order", d, 1};
    }
    {
        MPI_Datatype v;
        MPI_Type_vector(3, 2, 5, MPI_INT32_T, &v);
        MPI_Type_create_resized(v, 0, 96, &d);
        MPI_Type_free(&v);
        t[n++] = (struct named){"resized vector, 3 of them", d, 3};
    }
    {
        int bl[2] = {1, 2};
        MPI_Aint dp[2] = {0, 12};
        MPI_Datatype tt[2] = {MPI_INT64_T, MPI_INT16_T}, s, v;
        MPI_Type_create_struct(2, bl, dp, tt, &s);
        MPI_Type_create_hvector(4, 2, 48, s, &v);
        MPI_Type_free(&s);
        d = v;
        t[n++] = (struct named){"hvector of structs", d, 1};
    }
    {
        int sizes[2] = {6, 6}, sub[2] = {2, 3}, start[2] = {1, 1};
        MPI_Datatype s;
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &s);
        MPI_Type_contiguous(2, s, &d);
        MPI_Type_free(&s);
        t[n++] = (struct named){"contiguous run of subarrays", d, 1};
    }
    for (int i = 0; i < n; ++i) MPI_Type_commit(&t[i].type);
    return n;
}

static void test_type(const struct named *t)
{
    mt_section(t->name);
    int tsize;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_size(t->type, &tsize);
    MPI_Type_get_extent(t->type, &lb, &extent);
    MPI_Type_get_true_extent(t->type, &tlb, &textent);
    const int bytes = tsize * t->count;
    const MPI_Aint span = tlb + (t->count - 1) * extent + textent;
    CHECK(tlb >= 0 && AT + span <= REGION_B && REGION_B + AT + span <= BYTES, "%s fits the test's regions", t->name);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char *data = malloc((size_t)bytes), *by_get = malloc((size_t)bytes), *by_xget = malloc((size_t)bytes),
                  *by_plain = malloc((size_t)bytes);

    /* Put: the same data into A with MPI_Put and into B with MPIX_Xput. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(base, 0, BYTES);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < bytes; ++i) data[i] = (unsigned char)(1 + (i * 7 + rank * 31) % 251);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    CHECK(MPI_Put(data, bytes, MPI_BYTE, next, disp(next, AT), t->count, t->type, win) == MPI_SUCCESS, "MPI_Put");
    int err = MPIX_Xput(data, bytes, MPI_BYTE, next, disp(next, REGION_B + AT), t->count, t->type, f_store, NULL, 0,
                        win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xput with %s: error %d", t->name, err);
    err = MPIX_Xput(data, bytes, MPI_BYTE, next, disp(next, REGION_C + AT), t->count, t->type, f_stream, NULL, 0,
                    win);
    CHECK(err == MPI_SUCCESS, "streaming MPIX_Xput with %s: error %d", t->name, err);
    err = MPIX_Xput(data, bytes, MPI_BYTE, next, disp(next, REGION_D + AT), t->count, t->type, f_plain_copy, NULL, 0,
                    win);
    CHECK(err == MPI_SUCCESS, "plain MPIX_Xput with %s: error %d", t->name, err);
    err = MPI_Win_unlock(next, win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xput with %s completes: error %d", t->name, err);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    int differ = 0, written = 0, differ_stream = 0, differ_plain = 0;
    for (int i = 0; i < REGION_B; ++i) {
        differ += base[i] != base[REGION_B + i];
        differ_stream += base[i] != base[REGION_C + i];
        differ_plain += base[i] != base[REGION_D + i];
        written += base[i] != 0;
    }
    MPI_Win_unlock(rank, win);
    CHECK(differ == 0, "%s: MPIX_Xput left %d bytes different from MPI_Put's (data from rank %d)", t->name, differ,
          prev);
    CHECK(differ_stream == 0, "%s: the streaming MPIX_Xput left %d bytes different from MPI_Put's (from rank %d)",
          t->name, differ_stream, prev);
    CHECK(differ_plain == 0,
          "%s: the plain function's MPIX_Xput left %d bytes different from MPI_Put's (holes are not its; from rank %d)",
          t->name, differ_plain, prev);
    CHECK(written == bytes, "%s: MPI_Put wrote %d bytes, the type holds %d", t->name, written, bytes);

    /* Get: a pattern at every rank, read back both ways. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < BYTES; ++i) base[i] = (unsigned char)((i * 13 + rank * 57) % 256);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(by_get, 0xEE, (size_t)bytes);
    memset(by_xget, 0xDD, (size_t)bytes);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    MPI_Get(by_get, bytes, MPI_BYTE, next, disp(next, AT), t->count, t->type, win);
    err = MPIX_Xget(by_xget, bytes, MPI_BYTE, next, disp(next, AT), t->count, t->type, f_gather, NULL, 0, win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xget with %s: error %d", t->name, err);
    memset(by_plain, 0xCC, (size_t)bytes);
    err = MPIX_Xget(by_plain, bytes, MPI_BYTE, next, disp(next, AT), t->count, t->type, f_plain_get, NULL, 0, win);
    CHECK(err == MPI_SUCCESS, "plain MPIX_Xget with %s: error %d", t->name, err);
    err = MPI_Win_unlock(next, win);
    CHECK(err == MPI_SUCCESS, "MPIX_Xget with %s completes: error %d", t->name, err);
    CHECK(memcmp(by_get, by_xget, (size_t)bytes) == 0, "%s: MPIX_Xget's bytes differ from MPI_Get's", t->name);
    CHECK(memcmp(by_get, by_plain, (size_t)bytes) == 0,
          "%s: the plain function's replies, block by block, differ from MPI_Get's bytes", t->name);
    MPI_Barrier(MPI_COMM_WORLD);
    free(data), free(by_get), free(by_xget), free(by_plain);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, &rank, &size);
    mt_require(argc == 4, "usage: test_datatypes create|allocate|shared|dynamic datatypes.xfn datatypes_plain.xfn");
    const char *kind = argv[1];
    dynamic = mt_window(kind, BYTES, 1, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    addr = mt_addresses(base);
    CHECK(MPIX_Ifunc_load(argv[2], "dt_store", &f_store) == MPI_SUCCESS, "load dt_store");
    CHECK(MPIX_Ifunc_load(argv[2], "dt_gather", &f_gather) == MPI_SUCCESS, "load dt_gather");
    CHECK(MPIX_Ifunc_load(argv[2], "dt_stream_store", &f_stream) == MPI_SUCCESS, "load dt_stream_store");
    CHECK(MPIX_Ifunc_load(argv[3], "dt_plain_copy", &f_plain_copy) == MPI_SUCCESS, "load dt_plain_copy");
    CHECK(MPIX_Ifunc_load(argv[3], "dt_plain_get", &f_plain_get) == MPI_SUCCESS, "load dt_plain_get");

    struct named types[16];
    int n = make_types(types);
    for (int i = 0; i < n; ++i) test_type(&types[i]);
    for (int i = 0; i < n; ++i) MPI_Type_free(&types[i].type);

    MPIX_Ifunc_free(&f_store);
    MPIX_Ifunc_free(&f_gather);
    MPIX_Ifunc_free(&f_stream);
    MPIX_Ifunc_free(&f_plain_copy);
    MPIX_Ifunc_free(&f_plain_get);
    mt_window_free(kind, base, &win);
    free(addr);
    return mt_finalize("target datatypes");
}
