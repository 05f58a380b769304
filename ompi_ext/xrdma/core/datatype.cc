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

bool is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

// One process's indices along one dimension of an MPI_Type_create_darray
// type, in increasing order (MPI-4.0 section 5.1.4).
bool darray_indices(int gsize, int distrib, int darg, int psize, int coord, std::vector<int64_t> *out,
                    std::string *why)
{
    out->clear();
    if (distrib == MPI_DISTRIBUTE_NONE) {
        for (int64_t i = 0; i < gsize; ++i) out->push_back(i);
        return true;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (int64_t(gsize) + psize - 1) / psize : darg;
        for (int64_t i = coord * b; i < std::min<int64_t>((coord + 1) * b, gsize); ++i) out->push_back(i);
        return true;
    }
    if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        int64_t k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (int64_t start = coord * k; start < gsize; start += k * psize)
            for (int64_t i = start; i < std::min<int64_t>(start + k, gsize); ++i) out->push_back(i);
        return true;
    }
    *why = "MPI_COMBINER_DARRAY with an unknown distribution";
    return false;
}

// Append the block [@p off, @p off + @p len) to @p out, merged with the last
// one where adjacent.
int push_block(std::vector<Block> *out, int64_t off, uint64_t len, std::string *why)
{
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
}

// What a derived datatype was built from (MPI_Type_get_contents): its
// combiner's integers, addresses and types. The derived types among these
// are freed with it (named ones must not be).
struct Contents {
    int combiner;
    std::vector<int> ints;
    std::vector<MPI_Aint> addrs;
    std::vector<MPI_Datatype> types;
    int nd;

    Contents(MPI_Datatype type, int combiner_, int ni, int na, int nd_)
        : combiner(combiner_), ints(size_t(ni) + 1), addrs(size_t(na) + 1), types(size_t(nd_) + 1), nd(nd_)
    {
        MPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data());
    }
    ~Contents()
    {
        for (int i = 0; i < nd; ++i)
            if (!is_named(types[size_t(i)])) MPI_Type_free(&types[size_t(i)]);
    }
    Contents(const Contents &) = delete;
    Contents &operator=(const Contents &) = delete;

    int64_t extent_of(size_t t) const
    {
        MPI_Aint lb, extent;
        MPI_Type_get_extent(types[t], &lb, &extent);
        return int64_t(extent);
    }
};

int flatten_one(MPI_Datatype type, int64_t at, std::vector<Block> *out, int depth, std::string *why);

// @p n elements of the constructor's type @p t from byte offset @p off: one
// block when that type is predefined and dense.
int flatten_run(const Contents &c, size_t t, int64_t off, int64_t n, std::vector<Block> *out, int depth,
                std::string *why)
{
    MPI_Datatype inner = c.types[t];
    MPI_Aint lb, extent;
    int size;
    MPI_Type_get_extent(inner, &lb, &extent);
    MPI_Type_size(inner, &size);
    if (is_named(inner) && size == extent) return push_block(out, off, uint64_t(n) * uint64_t(size), why);
    int r = MPI_SUCCESS;
    for (int64_t j = 0; j < n && r == MPI_SUCCESS; ++j) r = flatten_one(inner, off + j * extent, out, depth + 1, why);
    return r;
}

// A subarray's or darray's chosen indices along each dimension of its global
// array, in increasing order, into @p idx (already one list per dimension).
// Subarray: ndims, sizes, subsizes, starts, order. Darray: size, rank,
// ndims, gsizes, distribs, dargs, psizes, order.
int array_indices(const Contents &c, std::vector<std::vector<int64_t>> *idx, std::string *why)
{
    const std::vector<int> &ints = c.ints;
    const int nd_ = int(idx->size());
    if (c.combiner == MPI_COMBINER_SUBARRAY) {
        for (int d = 0; d < nd_; ++d)
            for (int64_t i = 0; i < ints[size_t(1 + nd_ + d)]; ++i) (*idx)[size_t(d)].push_back(ints[size_t(1 + 2 * nd_ + d)] + i);
        return MPI_SUCCESS;
    }
    // This process's coordinates in the process grid (row-major).
    int rank = ints[1], rest = rank;
    std::vector<int> coord(static_cast<size_t>(nd_));
    for (int d = nd_ - 1; d >= 0; --d) {
        int p = ints[size_t(3 + 3 * nd_ + d)];
        coord[size_t(d)] = p > 0 ? rest % p : 0;
        rest = p > 0 ? rest / p : 0;
    }
    for (int d = 0; d < nd_; ++d)
        if (!darray_indices(ints[size_t(3 + d)], ints[size_t(3 + nd_ + d)], ints[size_t(3 + 2 * nd_ + d)],
                            ints[size_t(3 + 3 * nd_ + d)], coord[size_t(d)], &(*idx)[size_t(d)], why))
            return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

// The elements of a subarray or darray type (@p c): the chosen elements of
// a global array, in array order, runs of consecutive ones along its
// fastest dimension as one run each.
int flatten_array(const Contents &c, int64_t at, std::vector<Block> *out, int depth, std::string *why)
{
    const std::vector<int> &ints = c.ints;
    const bool sub = c.combiner == MPI_COMBINER_SUBARRAY;
    const int nd_ = sub ? ints[0] : ints[2];
    const int *sizes = sub ? &ints[1] : &ints[3];
    const int order = sub ? ints[size_t(1 + 3 * nd_)] : ints[size_t(3 + 4 * nd_)];
    std::vector<std::vector<int64_t>> idx(static_cast<size_t>(nd_));
    int rc = array_indices(c, &idx, why);
    if (rc != MPI_SUCCESS || nd_ <= 0) return rc;
    // Element strides of the global array; the fastest dimension last
    // (C order) or first (Fortran order) varies fastest.
    std::vector<int64_t> stride(static_cast<size_t>(nd_));
    std::vector<int> dims(static_cast<size_t>(nd_));  // slowest .. fastest
    for (int k = 0; k < nd_; ++k) dims[size_t(k)] = order == MPI_ORDER_C ? k : nd_ - 1 - k;
    int64_t st = c.extent_of(0);
    for (int k = nd_ - 1; k >= 0; --k) {
        stride[size_t(dims[size_t(k)])] = st;
        st *= sizes[dims[size_t(k)]];
    }
    for (const auto &v : idx)
        if (v.empty()) return MPI_SUCCESS;
    std::vector<size_t> pos(static_cast<size_t>(nd_), 0);
    const int fast = dims[size_t(nd_ - 1)];
    for (;;) {
        int64_t off = at;
        for (int d = 0; d < nd_; ++d)
            if (d != fast) off += idx[size_t(d)][pos[size_t(d)]] * stride[size_t(d)];
        // Runs of consecutive indices along the fastest dimension.
        const auto &f = idx[size_t(fast)];
        for (size_t i = 0; i < f.size() && rc == MPI_SUCCESS;) {
            size_t j = i + 1;
            while (j < f.size() && f[j] == f[j - 1] + 1) ++j;
            rc = flatten_run(c, 0, off + f[i] * stride[size_t(fast)], int64_t(j - i), out, depth, why);
            i = j;
        }
        if (rc != MPI_SUCCESS) return rc;
        int k = nd_ - 2;  // next index tuple, fastest-but-one first
        for (; k >= 0; --k) {
            size_t d = size_t(dims[size_t(k)]);
            if (++pos[d] < idx[d].size()) break;
            pos[d] = 0;
        }
        if (k < 0) return MPI_SUCCESS;
    }
}

// The elements a derived type's constructor (@p c) lists, each with its
// displacement from @p at.
int flatten_contents(const Contents &c, int64_t at, std::vector<Block> *out, int depth, std::string *why)
{
    const std::vector<int> &ints = c.ints;
    const std::vector<MPI_Aint> &addrs = c.addrs;
    auto run = [&](size_t t, int64_t off, int64_t n) { return flatten_run(c, t, off, n, out, depth, why); };
    int rc = MPI_SUCCESS;
    switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // (its bounds only space out repetitions)
        return flatten_one(c.types[0], at, out, depth + 1, why);
    case MPI_COMBINER_CONTIGUOUS:
        return run(0, at, ints[0]);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t stride = c.combiner == MPI_COMBINER_VECTOR ? int64_t(ints[2]) * c.extent_of(0) : int64_t(addrs[0]);
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i) rc = run(0, at + i * stride, ints[1]);
        return rc;
    }
    case MPI_COMBINER_INDEXED:  // count, blocklengths[count], displacements[count] (in extents)
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i)
            rc = run(0, at + int64_t(ints[size_t(1 + ints[0] + i)]) * c.extent_of(0), ints[size_t(1 + i)]);
        return rc;
    case MPI_COMBINER_HINDEXED:  // count, blocklengths[count]; displacements in bytes
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i) rc = run(0, at + int64_t(addrs[size_t(i)]), ints[size_t(1 + i)]);
        return rc;
    case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements[count]
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i)
            rc = run(0, at + int64_t(ints[size_t(2 + i)]) * c.extent_of(0), ints[1]);
        return rc;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i) rc = run(0, at + int64_t(addrs[size_t(i)]), ints[1]);
        return rc;
    case MPI_COMBINER_STRUCT:  // count, blocklengths[count]; displacements; types[count]
        for (int i = 0; i < ints[0] && rc == MPI_SUCCESS; ++i)
            rc = run(size_t(i), at + int64_t(addrs[size_t(i)]), ints[size_t(1 + i)]);
        return rc;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
        return flatten_array(c, at, out, depth, why);
    }
    *why = std::string(combiner_name(c.combiner)) + (depth ? " inside it" : "") + " is not supported";
    return MPI_ERR_TYPE;
}

// Append the blocks of one element of @p type, shifted by @p at, in
// typemap order (MPI_Type_get_envelope / MPI_Type_get_contents, every
// combiner of MPI-4.0).
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
    if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
        combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER) {
        int size;
        MPI_Type_size(type, &size);
        return push_block(out, at, uint64_t(size), why);
    }
    const Contents c(type, combiner, ni, na, nd);
    return flatten_contents(c, at, out, depth, why);
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

uint64_t blocks_bytes(const Block *b, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) total += b[i].len;
    return total;
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

// Whether @p count elements of @p type at @p origin are one contiguous run
// of bytes; then @p ref names them.
bool contiguous(const void *origin, int count, MPI_Datatype type, IncomingRef *ref)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    if (MPI_Type_size(type, &size) != MPI_SUCCESS || MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
        return false;
    if (size != textent || (count > 1 && extent != size)) return false;
    ref->addr = reinterpret_cast<uintptr_t>(origin) + uint64_t(tlb);
    ref->len = uint64_t(size) * uint64_t(count);
    return true;
}

}  // namespace xrdma::mpi
