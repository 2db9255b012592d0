/* fit.h — the service-time model fitted to one grid point's samples: a
 * lognormal by maximum likelihood, and its Kolmogorov–Smirnov distance.
 *
 * mu = mean of ln x, sigma = standard deviation of ln x with the MLE divisor
 * n (GSL's statistics functions), KS = sup |F_n(x) - F(x)| against the fitted
 * CDF (gsl_cdf_lognormal_P). Pure functions: no state, no printing. */
#ifndef VL_CALIB_FIT_H
#define VL_CALIB_FIT_H

#include <stddef.h>

typedef struct {
    double mu, sigma;     /* of ln x; sigma with divisor n */
    double ks;            /* KS distance of the samples to the fitted CDF */
} fit_lognormal_t;

/* Fit x[0..n) (all > 0 and finite): 0, or -1 when n < 1, a value is not
 * positive and finite, or memory runs out. */
int fit_lognormal(const double *x, size_t n, fit_lognormal_t *f);

/* KS distance sup_x |F_n(x) - F(x)| of x[0..n) to the lognormal (mu, sigma);
 * sigma 0 means a point mass at exp(mu). NaN when n < 1 or out of memory. */
double fit_ks_lognormal(const double *x, size_t n, double mu, double sigma);

/* The asymptotic critical value of the one-sample KS distance at level
 * alpha (0.01 -> 1.6276 / sqrt(n)), from the Kolmogorov distribution. */
double fit_ks_critical(size_t n, double alpha);

#endif
