/* test_dist.c — service-time distributions against independent closed forms.
 *
 * Every expected number is written out here from the textbook formula, never
 * copied from the code's output. Sampling checks draw N values from a
 * Mersenne Twister with a fixed seed and require the sample mean within 5
 * standard errors of the closed-form mean (SE from the closed-form variance),
 * and the sample variance within a relative tolerance chosen, per case, to be
 * several standard errors of the sample variance wide. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_rng.h>

#include "models/dist.h"

#define N 200000
#define SEED 20240611UL

static gsl_rng *new_rng(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(r);
    gsl_rng_set(r, SEED);
    return r;
}

static double *dup_values(const double *v, size_t n)
{
    double *p = malloc(n * sizeof *p);
    cr_assert_not_null(p);
    memcpy(p, v, n * sizeof *p);
    return p;
}

static void assert_close(double got, double want, double rel, const char *what)
{
    cr_assert(fabs(got - want) <= rel * fabs(want),
              "%s: got %.17g, want %.17g (rel tol %g)", what, got, want, rel);
}

/* dist_mean / dist_var equal the closed forms (to rounding). */
static void assert_moments(const dist_t *d, double mean, double var)
{
    assert_close(dist_mean(d), mean, 1e-12, "dist_mean");
    if (isinf(var))
        cr_assert(isinf(dist_var(d)) && dist_var(d) > 0, "dist_var: got %g, want inf",
                  dist_var(d));
    else if (var == 0)
        cr_assert_eq(dist_var(d), 0.0, "dist_var: got %g, want 0", dist_var(d));
    else
        assert_close(dist_var(d), var, 1e-12, "dist_var");
}

/* N draws: none negative, sample mean within 5 SE of mean, sample variance
 * within var_rel of var (skipped when var_rel <= 0). */
static void assert_sampling(const dist_t *d, double mean, double var, double var_rel)
{
    gsl_rng *r = new_rng();
    double m = 0, m2 = 0;                       /* Welford */
    for (long i = 1; i <= N; i++) {
        double x = dist_sample(d, r);
        cr_assert(x >= 0, "draw %ld is %g < 0", i, x);
        double delta = x - m;
        m += delta / (double)i;
        m2 += delta * (x - m);
    }
    gsl_rng_free(r);
    double se = sqrt(var / N);
    cr_assert(fabs(m - mean) <= 5 * se,
              "sample mean %.10g vs %.10g: %.2f SE", m, mean, fabs(m - mean) / se);
    if (var_rel > 0)
        assert_close(m2 / (N - 1), var, var_rel, "sample variance");
}

/* Asserts that init failed with a message containing `part`, then frees. */
#define assert_rejected(d, msg, part) do {                                     \
        const char *msg_ = (msg);                                              \
        cr_assert_not_null(msg_, "accepted, expected \"%s\"", (part));         \
        cr_assert(strstr(msg_, (part)) != NULL,                                \
                  "message \"%s\" lacks \"%s\"", msg_, (part));                \
        dist_free(d);                                                          \
    } while (0)

/* ---- constant ---------------------------------------------------------- */

Test(dist, constant)
{
    dist_t d;
    cr_assert_null(dist_init_constant(&d, 4.5));
    cr_assert_eq(d.kind, DIST_CONSTANT);
    assert_moments(&d, 4.5, 0);
    gsl_rng *r = new_rng();
    for (int i = 0; i < N; i++)
        cr_assert_eq(dist_sample(&d, r), 4.5);
    gsl_rng_free(r);
    dist_free(&d);

    cr_assert_null(dist_init_constant(&d, 0));
    cr_assert_eq(dist_mean(&d), 0.0);
    dist_free(&d);
}

Test(dist, constant_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_constant(&d, -1), "ms must be >= 0, got -1");
    assert_rejected(&d, dist_init_constant(&d, NAN), "ms must be finite, got nan");
    assert_rejected(&d, dist_init_constant(&d, -NAN), "ms must be finite, got nan");
    assert_rejected(&d, dist_init_constant(&d, INFINITY), "ms must be finite, got inf");
}

/* ---- exponential ------------------------------------------------------- */

Test(dist, exponential)
{
    dist_t d;
    cr_assert_null(dist_init_exponential(&d, 7));
    assert_moments(&d, 7, 49);
    /* kurtosis 9: SE of the sample variance is sqrt(8/N) = 0.6% */
    assert_sampling(&d, 7, 49, 0.05);
    dist_free(&d);
}

Test(dist, exponential_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_exponential(&d, -3), "mean_ms must be > 0, got -3");
    assert_rejected(&d, dist_init_exponential(&d, 0), "mean_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_exponential(&d, NAN), "mean_ms must be finite, got nan");
    assert_rejected(&d, dist_init_exponential(&d, INFINITY), "mean_ms must be finite");
}

/* ---- uniform ----------------------------------------------------------- */

Test(dist, uniform)
{
    dist_t d;
    const double a = 2, b = 8;
    cr_assert_null(dist_init_uniform(&d, a, b));
    assert_moments(&d, (a + b) / 2, (b - a) * (b - a) / 12);
    assert_sampling(&d, 5, 3, 0.05);
    gsl_rng *r = new_rng();
    for (int i = 0; i < N; i++) {
        double x = dist_sample(&d, r);
        cr_assert(x >= a && x < b, "draw %g outside [2, 8)", x);
    }
    gsl_rng_free(r);
    dist_free(&d);

    cr_assert_null(dist_init_uniform(&d, 0, 1));   /* min 0 is allowed */
    dist_free(&d);
}

Test(dist, uniform_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_uniform(&d, -1, 5), "min_ms must be >= 0, got -1");
    assert_rejected(&d, dist_init_uniform(&d, 5, 5), "min_ms must be < max_ms");
    assert_rejected(&d, dist_init_uniform(&d, 6, 5), "min_ms must be < max_ms");
    assert_rejected(&d, dist_init_uniform(&d, NAN, 5), "min_ms must be finite, got nan");
    assert_rejected(&d, dist_init_uniform(&d, 1, INFINITY), "max_ms must be finite, got inf");
}

/* ---- lognormal --------------------------------------------------------- */

Test(dist, lognormal_mean_sd)
{
    dist_t d;
    const double mean = 20, sd = 8;
    cr_assert_null(dist_init_lognormal_mean_sd(&d, mean, sd));
    /* The parameterisation is by the moments themselves. */
    assert_moments(&d, mean, sd * sd);
    /* sigma^2 = ln(1 + sd^2/mean^2), mu = ln(mean) - sigma^2/2 */
    double s2 = log(1 + (sd * sd) / (mean * mean));
    assert_close(d.p0, log(mean) - s2 / 2, 1e-12, "mu");
    assert_close(d.p1, sqrt(s2), 1e-12, "sigma");
    /* cv 0.4: excess kurtosis about 3, SE of the sample variance about 0.5% */
    assert_sampling(&d, mean, sd * sd, 0.05);
    dist_free(&d);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

Test(dist, lognormal_p50_p99)
{
    dist_t d;
    const double p50 = 30, p99 = 90;
    const double z99 = 2.3263478740408408;      /* standard normal 0.99 quantile */
    cr_assert_null(dist_init_lognormal_p50_p99(&d, p50, p99));
    double sigma = log(p99 / p50) / z99;
    double mean = p50 * exp(sigma * sigma / 2);
    double var = (exp(sigma * sigma) - 1) * p50 * p50 * exp(sigma * sigma);
    assert_close(d.p0, log(p50), 1e-12, "mu");
    assert_close(d.p1, sigma, 1e-12, "sigma");
    assert_close(dist_mean(&d), mean, 1e-12, "dist_mean");
    assert_close(dist_var(&d), var, 1e-12, "dist_var");

    double *x = malloc(N * sizeof *x);
    cr_assert_not_null(x);
    gsl_rng *r = new_rng();
    for (int i = 0; i < N; i++)
        x[i] = dist_sample(&d, r);
    gsl_rng_free(r);
    qsort(x, N, sizeof *x, cmp_double);
    assert_close(x[N / 2], p50, 0.02, "empirical p50");
    assert_close(x[(size_t)(0.99 * N)], p99, 0.02, "empirical p99");
    free(x);
    dist_free(&d);
}

Test(dist, lognormal_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_lognormal_mean_sd(&d, 0, 1), "mean_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_lognormal_mean_sd(&d, 10, -1), "sd_ms must be > 0, got -1");
    assert_rejected(&d, dist_init_lognormal_mean_sd(&d, 10, 0), "sd_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_lognormal_mean_sd(&d, NAN, 1), "mean_ms must be finite");
    assert_rejected(&d, dist_init_lognormal_mean_sd(&d, 10, INFINITY), "sd_ms must be finite");

    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, 30, 30), "p99_ms must be > p50_ms");
    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, 30, 20), "p99_ms must be > p50_ms");
    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, 0, 20), "p50_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, -5, 20), "p50_ms must be > 0, got -5");
    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, 30, NAN), "p99_ms must be finite, got nan");
    assert_rejected(&d, dist_init_lognormal_p50_p99(&d, 30, INFINITY), "p99_ms must be finite");
}

/* ---- gamma ------------------------------------------------------------- */

Test(dist, gamma)
{
    dist_t d;
    const double mean = 10, sd = 5;
    cr_assert_null(dist_init_gamma(&d, mean, sd));
    cr_assert_eq(d.kind, DIST_GAMMA);
    assert_close(d.p0, mean * mean / (sd * sd), 1e-12, "shape k");
    assert_close(d.p1, sd * sd / mean, 1e-12, "scale theta");
    assert_moments(&d, mean, sd * sd);
    /* k = 4: excess kurtosis 6/k = 1.5, SE of the sample variance 0.4% */
    assert_sampling(&d, mean, sd * sd, 0.05);
    dist_free(&d);
}

Test(dist, gamma_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_gamma(&d, 0, 1), "mean_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_gamma(&d, -2, 1), "mean_ms must be > 0, got -2");
    assert_rejected(&d, dist_init_gamma(&d, 10, 0), "sd_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_gamma(&d, 10, NAN), "sd_ms must be finite, got nan");
    assert_rejected(&d, dist_init_gamma(&d, -INFINITY, 1), "mean_ms must be finite, got -inf");
}

/* ---- weibull ----------------------------------------------------------- */

Test(dist, weibull_shape2)
{
    dist_t d;
    /* shape 2, scale 10 (a Rayleigh): mean 10 sqrt(pi)/2, var 100 (1 - pi/4) */
    cr_assert_null(dist_init_weibull(&d, 2, 10));
    double mean = 10 * sqrt(M_PI) / 2, var = 100 * (1 - M_PI / 4);
    assert_moments(&d, mean, var);
    assert_sampling(&d, mean, var, 0.05);
    dist_free(&d);
}

Test(dist, weibull_shape1_is_exponential)
{
    dist_t d;
    cr_assert_null(dist_init_weibull(&d, 1, 4));
    assert_moments(&d, 4, 16);
    assert_sampling(&d, 4, 16, 0.05);
    dist_free(&d);
}

Test(dist, weibull_tiny_shape)
{
    dist_t d;
    /* shape 0.5: Gamma(3) = 2, Gamma(5) = 24: mean 2 s, var s^2 (24 - 4) */
    cr_assert_null(dist_init_weibull(&d, 0.5, 3));
    assert_moments(&d, 6, 9 * 20);
    dist_free(&d);
    /* shape 0.001: Gamma(1001) overflows a double; the moments are infinite
     * rather than a GSL error-handler abort. */
    cr_assert_null(dist_init_weibull(&d, 0.001, 3));
    cr_assert(isinf(dist_mean(&d)));
    cr_assert(isinf(dist_var(&d)));
    dist_free(&d);
}

Test(dist, weibull_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_weibull(&d, 0, 10), "shape must be > 0, got 0");
    assert_rejected(&d, dist_init_weibull(&d, 2, -1), "scale_ms must be > 0, got -1");
    assert_rejected(&d, dist_init_weibull(&d, NAN, 10), "shape must be finite, got nan");
    assert_rejected(&d, dist_init_weibull(&d, 2, INFINITY), "scale_ms must be finite, got inf");
}

/* ---- pareto ------------------------------------------------------------ */

Test(dist, pareto)
{
    dist_t d;
    const double a = 8, b = 2;
    cr_assert_null(dist_init_pareto(&d, a, b));
    double mean = a * b / (a - 1);                         /* 16/7 */
    double var = b * b * a / ((a - 1) * (a - 1) * (a - 2)); /* 32/294 */
    assert_close(mean, 16.0 / 7, 1e-15, "hand mean");
    assert_close(var, 32.0 / 294, 1e-15, "hand var");
    assert_moments(&d, mean, var);
    /* shape 8: excess kurtosis 19.7, SE of the sample variance 1% */
    assert_sampling(&d, mean, var, 0.05);
    gsl_rng *r = new_rng();
    for (int i = 0; i < 1000; i++)
        cr_assert(dist_sample(&d, r) >= b);
    gsl_rng_free(r);
    dist_free(&d);
}

Test(dist, pareto_infinite_moments)
{
    dist_t d;
    cr_assert_null(dist_init_pareto(&d, 1.5, 2));   /* mean 1.5*2/0.5 = 6, var infinite */
    assert_moments(&d, 6, INFINITY);
    dist_free(&d);
    cr_assert_null(dist_init_pareto(&d, 2, 2));     /* var needs shape > 2 */
    assert_moments(&d, 4, INFINITY);
    dist_free(&d);
    cr_assert_null(dist_init_pareto(&d, 1, 2));     /* mean needs shape > 1 */
    cr_assert(isinf(dist_mean(&d)) && dist_mean(&d) > 0);
    cr_assert(isinf(dist_var(&d)) && dist_var(&d) > 0);
    dist_free(&d);
}

Test(dist, pareto_rejects)
{
    dist_t d;
    assert_rejected(&d, dist_init_pareto(&d, 0, 2), "shape must be > 0, got 0");
    assert_rejected(&d, dist_init_pareto(&d, 3, 0), "min_ms must be > 0, got 0");
    assert_rejected(&d, dist_init_pareto(&d, 3, -1), "min_ms must be > 0, got -1");
    assert_rejected(&d, dist_init_pareto(&d, NAN, 2), "shape must be finite, got nan");
    assert_rejected(&d, dist_init_pareto(&d, 3, INFINITY), "min_ms must be finite");
}

/* ---- empirical --------------------------------------------------------- */

Test(dist, empirical)
{
    static const double v[] = {3, 1, 4, 1.5, 5, 9, 2, 6};
    enum { K = sizeof v / sizeof v[0] };
    static const double sorted[K] = {1, 1.5, 2, 3, 4, 5, 6, 9};
    dist_t d;
    cr_assert_null(dist_init_empirical(&d, dup_values(v, K), K));
    cr_assert_eq(d.nvalues, (size_t)K);
    for (int i = 0; i < K; i++)
        cr_assert_eq(d.values[i], sorted[i], "values[%d] = %g, want %g", i, d.values[i],
                     sorted[i]);

    /* by hand: sum 31.5, sum of squares 174.25 */
    double mean = 31.5 / 8, var = 174.25 / 8 - mean * mean;
    assert_moments(&d, mean, var);

    long count[K] = {0};
    gsl_rng *r = new_rng();
    for (int i = 0; i < N; i++) {
        double x = dist_sample(&d, r);
        int j = 0;
        while (j < K && sorted[j] != x)
            j++;
        cr_assert(j < K, "draw %g is not a stored value", x);
        count[j]++;
    }
    gsl_rng_free(r);
    double p = 1.0 / K, se = sqrt(p * (1 - p) / N);
    for (int j = 0; j < K; j++) {
        double f = (double)count[j] / N;
        cr_assert(fabs(f - p) <= 5 * se, "value %g drawn with frequency %g, want %g",
                  sorted[j], f, p);
    }
    dist_free(&d);
}

Test(dist, empirical_single)
{
    static const double v[] = {12.5};
    dist_t d;
    cr_assert_null(dist_init_empirical(&d, dup_values(v, 1), 1));
    assert_moments(&d, 12.5, 0);
    gsl_rng *r = new_rng();
    for (int i = 0; i < 100; i++)
        cr_assert_eq(dist_sample(&d, r), 12.5);
    gsl_rng_free(r);
    dist_free(&d);
}

Test(dist, empirical_rejects)
{
    static const double neg[] = {1, -2, 3}, nan_[] = {1, 2, NAN}, inf_[] = {INFINITY};
    dist_t d;
    /* The dist owns values even on failure: dist_free releases them
     * (the sanitizer run checks for leaks). */
    assert_rejected(&d, dist_init_empirical(&d, dup_values(neg, 3), 3),
                    "values[1] must be >= 0, got -2");
    assert_rejected(&d, dist_init_empirical(&d, dup_values(nan_, 3), 3),
                    "values[2] must be finite, got nan");
    assert_rejected(&d, dist_init_empirical(&d, dup_values(inf_, 1), 1),
                    "values[0] must be finite, got inf");
    assert_rejected(&d, dist_init_empirical(&d, malloc(sizeof(double)), 0),
                    "at least one");
    assert_rejected(&d, dist_init_empirical(&d, NULL, 0), "at least one");
}

/* ---- mixture ----------------------------------------------------------- */

/* 0.9 constant 5 + 0.1 exponential mean 50 */
static void make_mix(dist_t *d)
{
    dist_t *parts = malloc(2 * sizeof *parts);
    double *w = malloc(2 * sizeof *w);
    cr_assert(parts && w);
    cr_assert_null(dist_init_constant(&parts[0], 5));
    cr_assert_null(dist_init_exponential(&parts[1], 50));
    w[0] = 0.9;
    w[1] = 0.1;
    cr_assert_null(dist_init_mixture(d, parts, w, 2));
}

Test(dist, mixture)
{
    dist_t d;
    make_mix(&d);
    double mean = 0.9 * 5 + 0.1 * 50;                                  /* 9.5 */
    double var = 0.9 * (0 + 25) + 0.1 * (2500 + 2500) - mean * mean;  /* 432.25 */
    assert_close(mean, 9.5, 1e-15, "hand mean");
    assert_close(var, 432.25, 1e-12, "hand var");
    assert_moments(&d, mean, var);
    /* Heavy right tail: kurtosis about 66, SE of the sample variance 1.8%,
     * so the variance gets a 10% band (5.5 SE). */
    assert_sampling(&d, mean, var, 0.10);

    long fives = 0;
    gsl_rng *r = new_rng();
    for (int i = 0; i < N; i++)
        fives += dist_sample(&d, r) == 5.0;
    gsl_rng_free(r);
    double f = (double)fives / N, se = sqrt(0.9 * 0.1 / N);
    cr_assert(fabs(f - 0.9) <= 5 * se, "fraction of constant draws %g, want 0.9", f);
    dist_free(&d);
}

Test(dist, mixture_nested_and_infinite)
{
    /* outer = 0.5 inner + 0.5 pareto(shape 1.5, min 2): mean finite, var infinite */
    dist_t *parts = malloc(2 * sizeof *parts);
    double *w = malloc(2 * sizeof *w);
    cr_assert(parts && w);
    make_mix(&parts[0]);
    cr_assert_null(dist_init_pareto(&parts[1], 1.5, 2));
    w[0] = 0.5;
    w[1] = 0.5;
    dist_t d;
    cr_assert_null(dist_init_mixture(&d, parts, w, 2));
    assert_moments(&d, 0.5 * 9.5 + 0.5 * 6, INFINITY);
    gsl_rng *r = new_rng();
    for (int i = 0; i < 1000; i++)
        cr_assert(dist_sample(&d, r) >= 0);
    gsl_rng_free(r);
    dist_free(&d);

    /* a part with an infinite mean: both moments +inf, never nan */
    parts = malloc(2 * sizeof *parts);
    w = malloc(2 * sizeof *w);
    cr_assert(parts && w);
    cr_assert_null(dist_init_constant(&parts[0], 1));
    cr_assert_null(dist_init_pareto(&parts[1], 0.5, 2));
    w[0] = 0.25;
    w[1] = 0.75;
    cr_assert_null(dist_init_mixture(&d, parts, w, 2));
    cr_assert(isinf(dist_mean(&d)) && dist_mean(&d) > 0);
    cr_assert(isinf(dist_var(&d)) && dist_var(&d) > 0);
    dist_free(&d);
}

/* Builds a two-part mixture of constants with weights w0, w1 and returns the
 * message; d owns everything either way. */
static const char *try_mix(dist_t *d, double w0, double w1, size_t n)
{
    dist_t *parts = malloc(2 * sizeof *parts);
    double *w = malloc(2 * sizeof *w);
    cr_assert(parts && w);
    cr_assert_null(dist_init_constant(&parts[0], 1));
    cr_assert_null(dist_init_constant(&parts[1], 2));
    w[0] = w0;
    w[1] = w1;
    return dist_init_mixture(d, parts, w, n);
}

Test(dist, mixture_rejects)
{
    dist_t d;
    assert_rejected(&d, try_mix(&d, 0.5, 0.4, 2), "weights must sum to 1, got 0.9");
    assert_rejected(&d, try_mix(&d, 0.7, 0.7, 2), "got 1.4");
    assert_rejected(&d, try_mix(&d, 1, 0, 2), "weights[1] must be > 0, got 0");
    assert_rejected(&d, try_mix(&d, 1.5, -0.5, 2), "weights[1] must be > 0, got -0.5");
    assert_rejected(&d, try_mix(&d, NAN, 0.5, 2), "weights[0] must be finite, got nan");
    assert_rejected(&d, try_mix(&d, 0.5, INFINITY, 2), "weights[1] must be finite, got inf");
    assert_rejected(&d, try_mix(&d, 0.5, 0.5, 0), "at least one");
    /* within 1e-6 of 1 is accepted */
    cr_assert_null(try_mix(&d, 0.5, 0.5 + 5e-7, 2));
    dist_free(&d);
}

/* ---- housekeeping ------------------------------------------------------ */

Test(dist, free_zeroed_and_twice)
{
    dist_t d;
    memset(&d, 0, sizeof d);
    dist_free(&d);
    dist_free(&d);

    make_mix(&d);
    dist_free(&d);
    cr_assert_null(d.parts);
    cr_assert_null(d.weights);
    cr_assert_null(d.pick);
    dist_free(&d);

    static const double v[] = {1, 2};
    cr_assert_null(dist_init_empirical(&d, dup_values(v, 2), 2));
    dist_free(&d);
    cr_assert_null(d.values);
    cr_assert_eq(d.nvalues, (size_t)0);
    dist_free(&d);
}

Test(dist, kind_names)
{
    cr_assert_str_eq(dist_kind_name(DIST_CONSTANT), "constant");
    cr_assert_str_eq(dist_kind_name(DIST_EXPONENTIAL), "exponential");
    cr_assert_str_eq(dist_kind_name(DIST_UNIFORM), "uniform");
    cr_assert_str_eq(dist_kind_name(DIST_LOGNORMAL), "lognormal");
    cr_assert_str_eq(dist_kind_name(DIST_GAMMA), "gamma");
    cr_assert_str_eq(dist_kind_name(DIST_WEIBULL), "weibull");
    cr_assert_str_eq(dist_kind_name(DIST_PARETO), "pareto");
    cr_assert_str_eq(dist_kind_name(DIST_EMPIRICAL), "empirical");
    cr_assert_str_eq(dist_kind_name(DIST_MIXTURE), "mixture");
}
