/* Random numbers every rank reproduces, for the programs and for their
 * ifuncs alike (no MPI, no C library): splitmix64 (a stream from a seed),
 * its finalizer on its own (a bijection of 64-bit words that maps 0 to 0
 * and spreads any other input over all bits), and a uniform double. */
#ifndef APPS_COMMON_MIX_H
#define APPS_COMMON_MIX_H
#include <stdint.h>

static inline uint64_t app_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t app_splitmix64(uint64_t *state)
{
    return app_mix64(*state += 0x9e3779b97f4a7c15ULL);
}

/* A uniform double in [0, 1) from the top 53 bits of @p r. */
static inline double app_unit(uint64_t r)
{
    return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

#endif
