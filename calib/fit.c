/* fit.c — lognormal maximum likelihood and the KS distance (see fit.h).
 * GSL does the statistics and the CDF; this file only wires them up. */
#include "calib/fit.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int fit_lognormal(const double *x, size_t n, fit_lognormal_t *f)
{
    if (n < 1)
        return -1;
    double *lx = malloc(n * sizeof *lx);
    if (!lx)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !isfinite(x[i])) {
            free(lx);
            return -1;
        }
        lx[i] = log(x[i]);
    }
    double mu = gsl_stats_mean(lx, 1, n);
    /* the MLE divisor n: GSL's _with_fixed_mean divides by n */
    double sigma = gsl_stats_sd_with_fixed_mean(lx, 1, n, mu);
    free(lx);
    f->mu = mu;
    f->sigma = sigma;
    f->ks = fit_ks_lognormal(x, n, mu, sigma);
    return isnan(f->ks) ? -1 : 0;
}

double fit_ks_lognormal(const double *x, size_t n, double mu, double sigma)
{
    if (n < 1)
        return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return NAN;
    memcpy(s, x, n * sizeof *s);
    gsl_sort(s, 1, n);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double F = sigma > 0 ? (s[i] > 0 ? gsl_cdf_lognormal_P(s[i], mu, sigma) : 0)
                             : (s[i] >= exp(mu) ? 1 : 0);
        double lo = F - (double)i / (double)n, hi = (double)(i + 1) / (double)n - F;
        if (lo > d)
            d = lo;
        if (hi > d)
            d = hi;
    }
    free(s);
    return d;
}

double fit_ks_critical(size_t n, double alpha)
{
    /* P(sqrt(n) D > c) ~ 2 sum_k (-1)^(k-1) exp(-2 k^2 c^2): solve for c by
     * bisection on [0.2, 4] (the series is monotone in c there) */
    double lo = 0.2, hi = 4;
    for (int it = 0; it < 100; it++) {
        double c = 0.5 * (lo + hi), p = 0;
        for (int k = 1; k <= 100; k++)
            p += (k % 2 ? 2 : -2) * exp(-2.0 * k * k * c * c);
        if (p > alpha)
            lo = c;
        else
            hi = c;
    }
    return 0.5 * (lo + hi) / sqrt((double)n);
}
