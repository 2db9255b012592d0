/* test_rng.c — the xoshiro256++ stream type and the ziggurat exponential,
 * against independent sources: the xoshiro reference algorithm worked by
 * hand on a known state, the ziggurat tables recomputed from Marsaglia &
 * Tsang's recurrence, and the exponential law (moments, tail, KS). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_randist.h>
#include "sim/rng.h"

/* With state {1, 2, 3, 4}: out = rotl(s0 + s3, 23) + s0 = rotl(5, 23) + 1
 * = 5 * 2^23 + 1 = 41943041 (computed by hand from the reference code). */
Test(rng, xoshiro_reference_first_output)
{
    gsl_rng *r = gsl_rng_alloc(rng_xoshiro256pp);
    rng_state *st = r->state;
    st->s[0] = 1; st->s[1] = 2; st->s[2] = 3; st->s[3] = 4;
    cr_expect_eq(rng_next64(r), 41943041ULL);
    /* State after one step, by hand: t = 2<<17 = 262144; s2 = 3^1 = 2;
     * s3 = 4^2 = 6; s1 = 2^2 = 0; s0 = 1^6 = 7; s2 ^= t -> 262146;
     * s3 = rotl(6, 45). Second output = rotl(7 + rotl(6,45), 23) + 7. */
    uint64_t s3 = (6ULL << 45) | (6ULL >> 19);
    uint64_t x = 7 + s3;
    uint64_t expect = ((x << 23) | (x >> 41)) + 7;
    cr_expect_eq(rng_next64(r), expect);
    gsl_rng_free(r);
}

Test(rng, streams_reproducible_and_distinct)
{
    gsl_rng *a = rng_stream(42, 3, 7), *b = rng_stream(42, 3, 7), *c = rng_stream(42, 4, 7);
    int same_ab = 1, same_ac = 1;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_next64(a), y = rng_next64(b), z = rng_next64(c);
        same_ab &= x == y;
        same_ac &= x == z;
    }
    cr_expect(same_ab, "same (seed, rep, stream) must give the same sequence");
    cr_expect(!same_ac, "different replications must differ");
    /* GSL's generic interface works on our type. */
    double u = gsl_rng_uniform(a);
    cr_expect(u >= 0.0 && u < 1.0);
    cr_expect(gsl_rng_get(a) <= gsl_rng_max(a));
    gsl_rng_free(a);
    gsl_rng_free(b);
    gsl_rng_free(c);
}

/* Recompute the 256-strip tables (Marsaglia & Tsang 2000, section on the
 * exponential) and compare with the shipped constants. */
Test(rng, ziggurat_tables_match_the_recurrence)
{
    const double m2 = 4294967296.0, ve = 3.949659822581572e-3;
    double de = 7.697117470131487, te = de;
    double q = ve / exp(-de);
    uint32_t k[256];
    double w[256], f[256];
    k[0] = (uint32_t)((de / q) * m2);
    k[1] = 0;
    w[0] = q / m2;
    w[255] = de / m2;
    f[0] = 1.0;
    f[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ve / de + exp(-de));
        k[i + 1] = (uint32_t)((de / te) * m2);
        te = de;
        f[i] = exp(-de);
        w[i] = de / m2;
    }
    for (int i = 0; i < 256; i++) {
        cr_expect(k[i] == zig_exp_k[i] || k[i] + 1 == zig_exp_k[i] || k[i] == zig_exp_k[i] + 1,
                  "k[%d]: %u vs %u", i, k[i], zig_exp_k[i]);
        cr_expect(fabs(w[i] - zig_exp_w[i]) <= 1e-12 * w[i], "w[%d]", i);
        cr_expect(fabs(f[i] - zig_exp_f[i]) <= 1e-12 * f[i], "f[%d]", i);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean 1, variance 1, P(X > 8) = e^-8, and the Kolmogorov-Smirnov distance
 * to 1 - e^-x below the 1 % critical value 1.628 / sqrt(n). */
Test(rng, ziggurat_exponential_law)
{
    const size_t n = 1000000;
    double *x = malloc(n * sizeof *x);
    gsl_rng *r = rng_stream(2024, 0, 1);
    double s = 0, s2 = 0;
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = rng_exp(r);
        cr_assert(x[i] >= 0.0 && isfinite(x[i]));
        s += x[i];
        s2 += x[i] * x[i];
        tail += x[i] > 8.0;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    cr_expect(fabs(mean - 1.0) < 5.0 / sqrt((double)n), "mean %g", mean);
    /* Var of the sample variance of Exp(1) is (mu4 - 1)/n = 8/n. */
    cr_expect(fabs(var - 1.0) < 5.0 * sqrt(8.0 / n), "variance %g", var);
    double p = exp(-8.0), se = sqrt(p * (1 - p) / n);
    cr_expect(fabs((double)tail / n - p) < 5.0 * se, "P(X>8) %g vs %g", (double)tail / n, p);
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double F = 1.0 - exp(-x[i]);
        double lo = F - (double)i / n, hi = (double)(i + 1) / n - F;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    cr_expect(d < 1.628 / sqrt((double)n), "KS distance %g", d);
    /* The tail beyond R = 7.6971 (base strip) is reached and is exponential too. */
    cr_expect(x[n - 1] > 7.6971, "max %g never reached the ziggurat's tail", x[n - 1]);
    free(x);
    gsl_rng_free(r);
}

/* rng_uniform_pos never returns 0 or 1 and is uniform in mean. */
Test(rng, uniform_pos_range)
{
    gsl_rng *r = rng_stream(1, 0, 0);
    double s = 0;
    for (int i = 0; i < 200000; i++) {
        double u = rng_uniform_pos(r);
        cr_assert(u > 0.0 && u < 1.0);
        s += u;
    }
    cr_expect(fabs(s / 200000 - 0.5) < 5 * sqrt(1.0 / 12 / 200000));
    gsl_rng_free(r);
}
