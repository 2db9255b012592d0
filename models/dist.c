/* dist.c — service-time distributions (ms) on top of GSL: checked
 * constructors, allocation-free sampling, closed-form moments.
 *
 * It must never print, never read files, never keep state between runs, and
 * never allocate while sampling. Errors travel back as short strings: a
 * constant string when there is no number to show, otherwise text written
 * into a thread-local buffer that stays valid until the next dist_init_* call
 * in the same thread. That buffer is the module's only static storage. */
#include "models/dist.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>

/* ---- error messages ---------------------------------------------------- */

static _Thread_local char msg_buf[160];

static const char *msgf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg_buf, sizeof msg_buf, fmt, ap);
    va_end(ap);
    return msg_buf;
}

/* A NaN prints as "nan" whatever its sign bit. */
static double shown(double x)
{
    return isnan(x) ? fabs(x) : x;
}

static const char *need_finite(const char *name, double x)
{
    if (isfinite(x))
        return NULL;
    return msgf("%s must be finite, got %.10g", name, shown(x));
}

static const char *need_positive(const char *name, double x)
{
    const char *e = need_finite(name, x);
    if (e)
        return e;
    if (x > 0)
        return NULL;
    return msgf("%s must be > 0, got %.10g", name, x);
}

/* Both positive: the message for the first that is not, or NULL. */
static const char *need_two_positive(const char *n0, double v0, const char *n1, double v1)
{
    const char *e = need_positive(n0, v0);
    return e ? e : need_positive(n1, v1);
}

static const char *need_nonnegative(const char *name, double x)
{
    const char *e = need_finite(name, x);
    if (e)
        return e;
    if (x >= 0)
        return NULL;
    return msgf("%s must be >= 0, got %.10g", name, x);
}

/* Every constructor starts from a zeroed struct of its kind, so that on
 * error dist_free has nothing (or only what the caller handed over) to do. */
static void reset(dist_t *d, dist_kind kind)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
}

/* ---- constructors ------------------------------------------------------ */

const char *dist_init_constant(dist_t *d, double ms)
{
    reset(d, DIST_CONSTANT);
    const char *e = need_nonnegative("ms", ms);
    if (e)
        return e;
    d->p0 = ms;
    return NULL;
}

const char *dist_init_exponential(dist_t *d, double mean_ms)
{
    reset(d, DIST_EXPONENTIAL);
    const char *e = need_positive("mean_ms", mean_ms);
    if (e)
        return e;
    d->p0 = mean_ms;
    return NULL;
}

const char *dist_init_uniform(dist_t *d, double min_ms, double max_ms)
{
    reset(d, DIST_UNIFORM);
    const char *e = need_nonnegative("min_ms", min_ms);
    if (!e)
        e = need_finite("max_ms", max_ms);
    if (e)
        return e;
    if (!(min_ms < max_ms))
        return msgf("min_ms must be < max_ms, got %.10g >= %.10g", min_ms, max_ms);
    d->p0 = min_ms;
    d->p1 = max_ms;
    return NULL;
}

/* mu and sigma are those of ln(ms). */
static const char *set_lognormal(dist_t *d, double mu, double sigma)
{
    if (!isfinite(mu) || !isfinite(sigma) || !(sigma > 0))
        return "parameters are out of range for a lognormal";
    d->p0 = mu;
    d->p1 = sigma;
    return NULL;
}

const char *dist_init_lognormal_mean_sd(dist_t *d, double mean_ms, double sd_ms)
{
    reset(d, DIST_LOGNORMAL);
    const char *e = need_two_positive("mean_ms", mean_ms, "sd_ms", sd_ms);
    if (e)
        return e;
    double cv = sd_ms / mean_ms;
    double s2 = log1p(cv * cv);                 /* sigma^2 = ln(1 + sd^2/mean^2) */
    return set_lognormal(d, log(mean_ms) - s2 / 2, sqrt(s2));
}

const char *dist_init_lognormal_p50_p99(dist_t *d, double p50_ms, double p99_ms)
{
    reset(d, DIST_LOGNORMAL);
    const char *e = need_positive("p50_ms", p50_ms);
    if (!e)
        e = need_finite("p99_ms", p99_ms);
    if (e)
        return e;
    if (!(p99_ms > p50_ms))
        return msgf("p99_ms must be > p50_ms, got %.10g <= %.10g", p99_ms, p50_ms);
    double z = gsl_cdf_ugaussian_Pinv(0.99);
    return set_lognormal(d, log(p50_ms), (log(p99_ms) - log(p50_ms)) / z);
}

const char *dist_init_gamma(dist_t *d, double mean_ms, double sd_ms)
{
    reset(d, DIST_GAMMA);
    const char *e = need_two_positive("mean_ms", mean_ms, "sd_ms", sd_ms);
    if (e)
        return e;
    double cv = sd_ms / mean_ms;
    double k = 1 / (cv * cv);                   /* mean^2 / sd^2 */
    double theta = sd_ms * cv;                  /* sd^2 / mean */
    if (!isfinite(k) || !(k > 0) || !isfinite(theta) || !(theta > 0))
        return "mean_ms and sd_ms are out of range for a gamma";
    d->p0 = k;
    d->p1 = theta;
    return NULL;
}

const char *dist_init_weibull(dist_t *d, double shape, double scale_ms)
{
    reset(d, DIST_WEIBULL);
    const char *e = need_two_positive("shape", shape, "scale_ms", scale_ms);
    if (e)
        return e;
    d->p0 = shape;
    d->p1 = scale_ms;
    return NULL;
}

const char *dist_init_pareto(dist_t *d, double shape, double min_ms)
{
    reset(d, DIST_PARETO);
    const char *e = need_two_positive("shape", shape, "min_ms", min_ms);
    if (e)
        return e;
    d->p0 = shape;
    d->p1 = min_ms;
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* values is owned by *d from here on, even when the check fails. */
const char *dist_init_empirical(dist_t *d, double *values, size_t n)
{
    reset(d, DIST_EMPIRICAL);
    d->values = values;
    d->nvalues = values ? n : 0;
    if (n < 1 || !values)
        return "values must hold at least one sample";
    for (size_t i = 0; i < n; i++) {
        double x = values[i];
        if (!isfinite(x))
            return msgf("values[%zu] must be finite, got %.10g", i, shown(x));
        if (!(x >= 0))
            return msgf("values[%zu] must be >= 0, got %.10g", i, x);
    }
    qsort(values, n, sizeof *values, cmp_double);
    return NULL;
}

/* parts and weights are owned by *d from here on, even when the check fails. */
const char *dist_init_mixture(dist_t *d, dist_t *parts, double *weights, size_t n)
{
    reset(d, DIST_MIXTURE);
    d->parts = parts;
    d->weights = weights;
    d->nparts = parts ? n : 0;
    if (n < 1 || !parts || !weights)
        return "a mixture needs at least one part";
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weights[i];
        if (!isfinite(w))
            return msgf("weights[%zu] must be finite, got %.10g", i, shown(w));
        if (!(w > 0))
            return msgf("weights[%zu] must be > 0, got %.10g", i, w);
        sum += w;
    }
    if (!(fabs(sum - 1) <= 1e-6))
        return msgf("weights must sum to 1, got %.10g", sum);
    d->pick = gsl_ran_discrete_preproc(n, weights);
    if (!d->pick)
        return "out of memory building the mixture";
    return NULL;
}

/* ---- sampling ---------------------------------------------------------- */

double dist_sample(const dist_t *d, gsl_rng *r)
{
    switch (d->kind) {
    case DIST_CONSTANT:    return d->p0;
    case DIST_EXPONENTIAL: return dist_exp_draw(r, d->p0);
    case DIST_UNIFORM:     return gsl_ran_flat(r, d->p0, d->p1);
    case DIST_LOGNORMAL:   /* GSL's ziggurat normal: the same law as gsl_ran_lognormal, one log fewer */
                           return exp(d->p0 + d->p1 * gsl_ran_gaussian_ziggurat(r, 1.0));
    case DIST_GAMMA:       return gsl_ran_gamma(r, d->p0, d->p1);
    case DIST_WEIBULL:     return gsl_ran_weibull(r, d->p1, d->p0);  /* (scale, shape) */
    case DIST_PARETO:      return gsl_ran_pareto(r, d->p0, d->p1);   /* (shape, min) */
    case DIST_EMPIRICAL:
        return d->values[gsl_rng_uniform_int(r, d->nvalues)];
    case DIST_MIXTURE:
        return dist_sample(&d->parts[gsl_ran_discrete(r, d->pick)], r);
    }
    return 0;
}

void dist_scale(dist_t *d, double k)
{
    switch (d->kind) {
    case DIST_CONSTANT:
    case DIST_EXPONENTIAL: d->p0 *= k; break;
    case DIST_UNIFORM:     d->p0 *= k; d->p1 *= k; break;
    case DIST_LOGNORMAL:   d->p0 += log(k); break;
    case DIST_GAMMA:
    case DIST_WEIBULL:
    case DIST_PARETO:      d->p1 *= k; break;
    case DIST_EMPIRICAL:
        for (size_t i = 0; i < d->nvalues; i++)
            d->values[i] *= k;
        break;
    case DIST_MIXTURE:
        for (size_t i = 0; i < d->nparts; i++)
            dist_scale(&d->parts[i], k);
        break;
    }
}

/* ---- moments ----------------------------------------------------------- */

/* Gamma function for x >= 1; beyond GSL's range the value overflows a
 * double anyway, and gsl_sf_gamma would call the GSL error handler. */
static double gamma_fn(double x)
{
    return x <= GSL_SF_GAMMA_XMAX ? gsl_sf_gamma(x) : INFINITY;
}

double dist_mean(const dist_t *d)
{
    switch (d->kind) {
    case DIST_CONSTANT:    return d->p0;
    case DIST_EXPONENTIAL: return d->p0;
    case DIST_UNIFORM:     return (d->p0 + d->p1) / 2;
    case DIST_LOGNORMAL:   return exp(d->p0 + d->p1 * d->p1 / 2);
    case DIST_GAMMA:       return d->p0 * d->p1;
    case DIST_WEIBULL:     return d->p1 * gamma_fn(1 + 1 / d->p0);
    case DIST_PARETO:
        return d->p0 > 1 ? d->p0 * d->p1 / (d->p0 - 1) : INFINITY;
    case DIST_EMPIRICAL: {
        double s = 0;
        for (size_t i = 0; i < d->nvalues; i++)
            s += d->values[i];
        return d->nvalues ? s / (double)d->nvalues : NAN;
    }
    case DIST_MIXTURE: {
        double s = 0;
        for (size_t i = 0; i < d->nparts; i++)
            s += d->weights[i] * dist_mean(&d->parts[i]);
        return s;
    }
    }
    return NAN;
}

double dist_var(const dist_t *d)
{
    switch (d->kind) {
    case DIST_CONSTANT:    return 0;
    case DIST_EXPONENTIAL: return d->p0 * d->p0;
    case DIST_UNIFORM: {
        double w = d->p1 - d->p0;
        return w * w / 12;
    }
    case DIST_LOGNORMAL: {
        double s2 = d->p1 * d->p1;
        return expm1(s2) * exp(2 * d->p0 + s2);
    }
    case DIST_GAMMA:       return d->p0 * d->p1 * d->p1;
    case DIST_WEIBULL: {
        double g1 = gamma_fn(1 + 1 / d->p0), g2 = gamma_fn(1 + 2 / d->p0);
        if (isinf(g2))
            return INFINITY;
        return d->p1 * d->p1 * (g2 - g1 * g1);
    }
    case DIST_PARETO: {
        double a = d->p0, b = d->p1;
        return a > 2 ? b * b * a / ((a - 1) * (a - 1) * (a - 2)) : INFINITY;
    }
    case DIST_EMPIRICAL: {
        if (!d->nvalues)
            return NAN;
        double m = dist_mean(d), s = 0;
        for (size_t i = 0; i < d->nvalues; i++)
            s += (d->values[i] - m) * (d->values[i] - m);
        return s / (double)d->nvalues;
    }
    case DIST_MIXTURE: {
        /* Var = E[X^2] - E[X]^2, with E[X^2] = sum w (v + m^2). */
        double m = dist_mean(d), second = 0;
        for (size_t i = 0; i < d->nparts; i++) {
            double mi = dist_mean(&d->parts[i]);
            second += d->weights[i] * (dist_var(&d->parts[i]) + mi * mi);
        }
        if (isinf(m) || isinf(second))
            return INFINITY;
        double v = second - m * m;
        return v < 0 ? 0 : v;               /* rounding can dip below zero */
    }
    }
    return NAN;
}

/* ---- housekeeping ------------------------------------------------------ */

void dist_free(dist_t *d)
{
    if (!d)
        return;
    free(d->values);
    if (d->parts)
        for (size_t i = 0; i < d->nparts; i++)
            dist_free(&d->parts[i]);
    free(d->parts);
    free(d->weights);
    if (d->pick)
        gsl_ran_discrete_free(d->pick);
    memset(d, 0, sizeof *d);
}

const char *dist_kind_name(dist_kind k)
{
    switch (k) {
    case DIST_CONSTANT:    return "constant";
    case DIST_EXPONENTIAL: return "exponential";
    case DIST_UNIFORM:     return "uniform";
    case DIST_LOGNORMAL:   return "lognormal";
    case DIST_GAMMA:       return "gamma";
    case DIST_WEIBULL:     return "weibull";
    case DIST_PARETO:      return "pareto";
    case DIST_EMPIRICAL:   return "empirical";
    case DIST_MIXTURE:     return "mixture";
    }
    return "unknown";
}
