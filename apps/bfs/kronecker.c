/* The Kronecker (R-MAT) edge generator of the Graph500 specification
 * ("Generating the Edge List"), written from its description: each edge
 * picks, at each of SCALE bit levels, one quadrant of the adjacency matrix
 * with probabilities A = 0.57, B = 0.19, C = 0.19, D = 0.05 (a row bit that
 * is 1 with probability C + D, then a column bit that is 1 with probability
 * D / (C + D) after a 1 row bit, B / (A + B) after a 0), and the vertex
 * numbers are then randomly permuted.
 *
 * Edge e's random numbers come from a generator seeded by e alone, so any
 * rank produces any slice of the list, and the list is the same for every
 * number of ranks. Each edge is drawn independently of the others: the
 * order of the list carries no locality, which is what the specification's
 * final shuffle of the tuples provides. The permutation is a bijection of
 * SCALE-bit numbers built from steps that are each one (multiplication by
 * an odd number and addition modulo 2^SCALE, xor with a right shift). */
#include "bfs.h"

#define KRON_A 0.57
#define KRON_B 0.19
#define KRON_C 0.19

/* The random relabelling of vertices: a bijection of [0, 2^scale). */
static uint64_t permute(uint64_t x, int scale, uint64_t seed)
{
    const uint64_t mask = scale >= 64 ? ~0ULL : (1ULL << scale) - 1;
    const int shift = (scale + 1) / 2;
    for (int round = 0; round < 4; ++round) {
        uint64_t k = app_mix64(seed + (uint64_t)round + 1);
        x = (x * (k | 1)) & mask;
        x = (x + (k >> 17)) & mask;
        x ^= x >> shift;
    }
    return x;
}

void kronecker_edges(int scale, uint64_t seed, int64_t first, int64_t count, int64_t *out)
{
    /* A 32-bit uniform number above these thresholds sets a bit: the row
     * bit above A + B, the column bit above C/(C+D) after a 1 row bit and
     * above A/(A+B) after a 0 (the specification's generator). */
    const double ab = KRON_A + KRON_B, c_norm = KRON_C / (1.0 - ab), a_norm = KRON_A / ab;
    const uint64_t t_row = (uint64_t)(ab * 4294967296.0);
    const uint64_t t_col1 = (uint64_t)(c_norm * 4294967296.0), t_col0 = (uint64_t)(a_norm * 4294967296.0);
    const uint64_t perm_seed = app_mix64(seed ^ 0x7065726d75746521ULL);
    for (int64_t i = 0; i < count; ++i) {
        uint64_t st = app_mix64(seed ^ app_mix64((uint64_t)(first + i) + 1));
        uint64_t u = 0, v = 0;
        for (int b = 0; b < scale; ++b) {
            uint64_t r = app_splitmix64(&st);
            uint64_t row = (r >> 32) > t_row;
            uint64_t col = (r & 0xffffffffULL) > (row ? t_col1 : t_col0);
            u |= row << b;
            v |= col << b;
        }
        out[2 * i] = (int64_t)permute(u, scale, perm_seed);
        out[2 * i + 1] = (int64_t)permute(v, scale, perm_seed);
    }
}
