/* stats.h — estimates across independent replications.
 *
 * Given one value of a statistic per replication (a mean, a p99, ...), the
 * point estimate is their average and the 95 % confidence interval is
 * Student's t over the replications (quantile from GSL). With a single
 * replication there is no interval: lo and hi are NaN, which the writers
 * print as null. Pure functions; nothing here allocates. */
#ifndef VL_STATS_H
#define VL_STATS_H

#include <stddef.h>

typedef struct {
    double mean;       /* average over replications */
    double sd;         /* sample standard deviation (n-1); NaN when n < 2 */
    double lo, hi;     /* 95 % CI for the mean; NaN when n < 2 */
    size_t n;
} stats_ci;

/* Estimate and interval at confidence level (e.g. 0.95) from x[0..n-1], stride 1. */
stats_ci stats_t_interval(const double *x, size_t n, double level);
/* Same for values spaced stride doubles apart (columns of a row-major table). */
stats_ci stats_t_interval_strided(const double *x, size_t n, size_t stride, double level);

/* The difference mean(y) - mean(x) of two independent samples with its
 * interval by Welch's t (unequal variances, Welch-Satterthwaite degrees of
 * freedom): the unpaired comparison. mean is the difference, sd its
 * standard error, n the smaller sample size; lo and hi are NaN when either
 * sample has fewer than 2 values. When both variances are 0 the interval is
 * [diff, diff]. */
stats_ci stats_welch_diff(const double *x, size_t nx, const double *y, size_t ny, double level);

#endif
