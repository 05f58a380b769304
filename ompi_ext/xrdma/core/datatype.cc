#include "datatype.h"

#include <algorithm>

namespace xrdma::mpi {

namespace {

const char *combiner_name(int c)
{
    switch (c) {
    case MPI_COMBINER_NAMED: return "a predefined type";
    case MPI_COMBINER_DUP: return "MPI_COMBINER_DUP";
    case MPI_COMBINER_CONTIGUOUS: return "MPI_COMBINER_CONTIGUOUS";
    case MPI_COMBINER_VECTOR: return "MPI_COMBINER_VECTOR";
    case MPI_COMBINER_HVECTOR: return "MPI_COMBINER_HVECTOR";
    case MPI_COMBINER_INDEXED: return "MPI_COMBINER_INDEXED";
    case MPI_COMBINER_HINDEXED: return "MPI_COMBINER_HINDEXED";
    case MPI_COMBINER_INDEXED_BLOCK: return "MPI_COMBINER_INDEXED_BLOCK";
    case MPI_COMBINER_HINDEXED_BLOCK: return "MPI_COMBINER_HINDEXED_BLOCK";
    case MPI_COMBINER_STRUCT: return "MPI_COMBINER_STRUCT";
    case MPI_COMBINER_SUBARRAY: return "MPI_COMBINER_SUBARRAY";
    case MPI_COMBINER_DARRAY: return "MPI_COMBINER_DARRAY";
    case MPI_COMBINER_RESIZED: return "MPI_COMBINER_RESIZED";
    case MPI_COMBINER_F90_REAL: return "MPI_COMBINER_F90_REAL";
    case MPI_COMBINER_F90_COMPLEX: return "MPI_COMBINER_F90_COMPLEX";
    case MPI_COMBINER_F90_INTEGER: return "MPI_COMBINER_F90_INTEGER";
    }
    return "an unknown combiner";
}

// What a refusal says about what is supported.
constexpr const char *kSupported =
    "supported at the target: predefined types, MPI_Type_contiguous, MPI_Type_vector, MPI_Type_create_hvector "
    "and MPI_Type_dup of them, and any type without holes";

bool is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

// Append the blocks of one element of @p type, shifted by @p at.
int flatten_one(MPI_Datatype type, int64_t at, std::vector<Block> *out, int depth, std::string *why)
{
    if (depth > 16) {
        *why = "nested more than 16 levels deep";
        return MPI_ERR_TYPE;
    }
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
        *why = "not a valid datatype";
        return MPI_ERR_TYPE;
    }
    auto push = [&](int64_t off, uint64_t len) {
        if (len == 0) return MPI_SUCCESS;
        if (!out->empty() && out->back().offset + int64_t(out->back().len) == off) {
            out->back().len += len;
            return MPI_SUCCESS;
        }
        if (out->size() >= kMaxBlocks) {
            *why = "more than " + std::to_string(kMaxBlocks) + " separate blocks";
            return MPI_ERR_TYPE;
        }
        out->push_back(Block{off, len});
        return MPI_SUCCESS;
    };
    if (combiner == MPI_COMBINER_NAMED) {
        int size;
        MPI_Type_size(type, &size);
        return push(at, uint64_t(size));
    }
    if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_VECTOR &&
        combiner != MPI_COMBINER_HVECTOR && combiner != MPI_COMBINER_DUP) {
        *why = std::string(combiner_name(combiner)) + (depth ? " inside it" : "") + " with holes is not supported (" +
               kSupported + ")";
        return MPI_ERR_TYPE;
    }
    std::vector<int> ints(size_t(ni) + 1);
    std::vector<MPI_Aint> addrs(size_t(na) + 1);
    std::vector<MPI_Datatype> types(size_t(nd) + 1);
    MPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data());
    MPI_Datatype inner = types[0];
    int rc = MPI_SUCCESS;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(inner, &lb, &extent);
    // A run of n inner elements: one block when the inner type is predefined.
    int inner_named = is_named(inner);
    int inner_size;
    MPI_Type_size(inner, &inner_size);
    auto run = [&](int64_t off, int n) {
        if (inner_named && inner_size == extent) return push(off, uint64_t(n) * uint64_t(inner_size));
        int r = MPI_SUCCESS;
        for (int j = 0; j < n && r == MPI_SUCCESS; ++j) r = flatten_one(inner, off + int64_t(j) * extent, out, depth + 1, why);
        return r;
    };
    if (combiner == MPI_COMBINER_DUP) {
        rc = flatten_one(inner, at, out, depth + 1, why);
    } else if (combiner == MPI_COMBINER_CONTIGUOUS) {
        rc = run(at, ints[0]);
    } else {
        int count = ints[0], blocklen = ints[1];
        int64_t stride = combiner == MPI_COMBINER_VECTOR ? int64_t(ints[2]) * extent : int64_t(addrs[0]);
        for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) rc = run(at + i * stride, blocklen);
    }
    // Derived types from get_contents must be freed (named ones must not).
    for (int i = 0; i < nd; ++i) {
        int a, b, c, comb;
        MPI_Type_get_envelope(types[size_t(i)], &a, &b, &c, &comb);
        if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&types[size_t(i)]);
    }
    return rc;
}

}  // namespace

int flatten(MPI_Datatype type, int count, std::vector<Block> *out, std::string *why)
{
    std::string ignored;
    if (!why) why = &ignored;
    out->clear();
    if (type == MPI_DATATYPE_NULL || count < 0) {
        *why = type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "negative count";
        return MPI_ERR_TYPE;
    }
    MPI_Aint lb, extent;
    if (MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) {
        *why = "not a valid datatype";
        return MPI_ERR_TYPE;
    }
    int size;
    MPI_Type_size(type, &size);
    // A dense type (no holes, no gaps between elements) is one block, whatever
    // its constructor: no need to walk it element by element.
    MPI_Aint true_lb, true_extent;
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    bool dense = lb == 0 && true_lb == 0 && true_extent == extent && MPI_Aint(size) == extent;
    if ((is_named(type) || dense) && size == extent) {
        if (count && size) out->push_back(Block{0, uint64_t(count) * uint64_t(size)});
        return MPI_SUCCESS;
    }
    for (int i = 0; i < count; ++i) {
        int rc = flatten_one(type, int64_t(i) * extent, out, 0, why);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

uint64_t blocks_bytes(const std::vector<Block> &b)
{
    uint64_t n = 0;
    for (const Block &x : b) n += x.len;
    return n;
}

void blocks_span(const Block *b, size_t n, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i == 0 || b[i].offset < *lo) *lo = b[i].offset;
        if (i == 0 || b[i].offset + int64_t(b[i].len) > *hi) *hi = b[i].offset + int64_t(b[i].len);
    }
}

}  // namespace xrdma::mpi
