/* rng.c — stream seeding by hashing. See rng.h.
 * splitmix64's finaliser is a bijection with full avalanche, so nearby
 * triples (rep 0 vs rep 1) give unrelated seeds. MT19937 in GSL takes a
 * 32-bit seed; we fold the 64-bit hash into it. */
#include "sim/rng.h"

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_stream_seed(uint64_t seed, uint32_t replication, uint32_t stream)
{
    return mix64(mix64(mix64(seed) ^ replication) ^ ((uint64_t)stream << 32 | 0x5eedU));
}

gsl_rng *rng_stream(uint64_t seed, uint32_t replication, uint32_t stream)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        return NULL;
    uint64_t s = rng_stream_seed(seed, replication, stream);
    unsigned long s32 = (unsigned long)((s ^ (s >> 32)) & 0xffffffffUL);
    gsl_rng_set(r, s32 ? s32 : 4357UL);   /* 0 means "default seed" to GSL */
    return r;
}
