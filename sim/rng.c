/* rng.c — stream seeding, the xoshiro256++ GSL type, the ziggurat's slow
 * path. See rng.h.
 * splitmix64's finaliser is a bijection with full avalanche, so nearby
 * triples (rep 0 vs rep 1) give unrelated seeds; splitmix64 also expands a
 * seed into the 256-bit state, as the xoshiro authors recommend. */
#include "sim/rng.h"
#include <math.h>

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- the GSL generator type ------------------------------------------- */

static void xo_set(void *vstate, unsigned long seed)
{
    rng_state *st = vstate;
    uint64_t z = (uint64_t)seed;
    for (int k = 0; k < 4; k++) {
        st->s[k] = mix64(z);
        z += 0x9e3779b97f4a7c15ULL;
    }
}

/* GSL's integer interface is 32 bits wide here (max below): the high half. */
static unsigned long xo_get(void *vstate)
{
    gsl_rng r = { NULL, vstate };
    return (unsigned long)(rng_next64(&r) >> 32);
}

static double xo_get_double(void *vstate)
{
    gsl_rng r = { NULL, vstate };
    return (double)(rng_next64(&r) >> 11) * 0x1.0p-53;   /* [0, 1) */
}

static const gsl_rng_type xoshiro_type = {
    "xoshiro256++", 0xffffffffUL, 0, sizeof(rng_state), xo_set, xo_get, xo_get_double
};
const gsl_rng_type *rng_xoshiro256pp = &xoshiro_type;

/* ---- streams ------------------------------------------------------------ */

uint64_t rng_stream_seed(uint64_t seed, uint32_t replication, uint32_t stream)
{
    return mix64(mix64(mix64(seed) ^ replication) ^ ((uint64_t)stream << 32 | 0x5eedU));
}

gsl_rng *rng_stream(uint64_t seed, uint32_t replication, uint32_t stream)
{
    gsl_rng *r = gsl_rng_alloc(rng_xoshiro256pp);
    if (r)
        gsl_rng_set(r, (unsigned long)rng_stream_seed(seed, replication, stream));
    return r;
}

/* ---- the ziggurat's slow path ------------------------------------------- */

/* The draw fell outside strip iz's rectangle: the base strip's tail (the
 * exponential is memoryless, so the tail beyond R is R plus a fresh
 * exponential), or the wedge under the curve (accept by comparing a uniform
 * point with exp(-x)); on rejection, draw afresh. */
double rng_exp_slow(gsl_rng *r, uint32_t iz, uint32_t jz)
{
    for (;;) {
        if (iz == 0)
            return ZIG_EXP_R - log(rng_uniform_pos(r));
        double x = (double)jz * zig_exp_w[iz];
        double y = zig_exp_f[iz] + rng_uniform_pos(r) * (zig_exp_f[iz - 1] - zig_exp_f[iz]);
        if (y < exp(-x))
            return x;
        uint64_t u = rng_next64(r);
        iz = (uint32_t)(u & 255);
        jz = (uint32_t)(u >> 32);
        if (jz < zig_exp_k[iz])
            return (double)jz * zig_exp_w[iz];
    }
}
