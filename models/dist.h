/* dist.h — service-time distributions drawn with GSL.
 *
 * A dist_t is built once (at scenario load) by one of the dist_init_* calls,
 * which check every parameter and return NULL on success or a short message
 * ("must be > 0, got -3") that the caller prefixes with file:line:col and key.
 * Sampling never allocates and never fails. Times are in milliseconds.
 * This module must never read files other than an empirical sample list and
 * never print: errors travel back as strings. */
#ifndef VL_DIST_H
#define VL_DIST_H

#include <stddef.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include "sim/rng.h"

typedef enum {
    DIST_CONSTANT,
    DIST_EXPONENTIAL,
    DIST_UNIFORM,
    DIST_LOGNORMAL,
    DIST_GAMMA,
    DIST_WEIBULL,
    DIST_PARETO,
    DIST_EMPIRICAL,
    DIST_MIXTURE
} dist_kind;

typedef struct dist {
    dist_kind kind;
    /* Native parameters, per kind:
     *   constant    p0 = ms
     *   exponential p0 = mean_ms
     *   uniform     p0 = min_ms, p1 = max_ms
     *   lognormal   p0 = mu, p1 = sigma   (of ln(ms))
     *   gamma       p0 = shape k, p1 = scale theta (ms)
     *   weibull     p0 = shape, p1 = scale_ms
     *   pareto      p0 = shape, p1 = min_ms                          */
    double p0, p1;
    double *values;          /* empirical: the samples, sorted ascending */
    size_t nvalues;
    struct dist *parts;      /* mixture: the components */
    double *weights;         /* mixture: their weights (sum to 1) */
    size_t nparts;
    gsl_ran_discrete_t *pick;/* mixture: Walker alias table over weights */
} dist_t;

/* Constructors. Each checks its parameters (finite, in range) and returns NULL
 * on success or a static/out-of-band message on error; on error *d is left
 * in a state dist_free accepts. */
const char *dist_init_constant(dist_t *d, double ms);
const char *dist_init_exponential(dist_t *d, double mean_ms);
const char *dist_init_uniform(dist_t *d, double min_ms, double max_ms);
const char *dist_init_lognormal_mean_sd(dist_t *d, double mean_ms, double sd_ms);
const char *dist_init_lognormal_p50_p99(dist_t *d, double p50_ms, double p99_ms);
const char *dist_init_gamma(dist_t *d, double mean_ms, double sd_ms);
const char *dist_init_weibull(dist_t *d, double shape, double scale_ms);
const char *dist_init_pareto(dist_t *d, double shape, double min_ms);
/* Takes ownership of values (malloc'd, n >= 1, all finite and >= 0). */
const char *dist_init_empirical(dist_t *d, double *values, size_t n);
/* Takes ownership of parts and weights (malloc'd); weights must be > 0 and
 * sum to 1 within 1e-6. */
const char *dist_init_mixture(dist_t *d, dist_t *parts, double *weights, size_t n);

/* An exponential draw with the given mean. On a stream made by rng_stream
 * it uses the ziggurat (sim/rng.h): same law as gsl_ran_exponential, whose
 * log() is otherwise the slowest call in an M/M/1 run; any other GSL
 * generator gets gsl_ran_exponential. */
static inline double dist_exp_draw(gsl_rng *r, double mean)
{
    if (r->type == rng_xoshiro256pp)
        return mean * rng_exp(r);
    return gsl_ran_exponential(r, mean);
}

/* Draw one value in ms (>= 0). */
double dist_sample(const dist_t *d, gsl_rng *r);
/* Closed-form moments; INFINITY where they do not exist (pareto shape <= 1 / <= 2). */
double dist_mean(const dist_t *d);
double dist_var(const dist_t *d);
/* Multiply every value the dist draws by k (> 0, finite): each family's
 * scale parameter (lognormal: mu + ln k; empirical: each sample; mixture:
 * each component), so that on the same random stream every draw is k times
 * the draw before (common random numbers; what-if speedups). */
void dist_scale(dist_t *d, double k);
/* Release what the dist owns (recursively for mixtures); safe on a zeroed dist. */
void dist_free(dist_t *d);
/* Human name of a kind, as written in scenarios ("exponential"). */
const char *dist_kind_name(dist_kind k);

#endif
