/* stats.c — Student-t confidence intervals over replications. See stats.h.
 * Uses GSL's running mean and sd so that the numerics (Welford-style
 * updates) are the well-kept library's, not ours. */
#include "sim/stats.h"
#include <math.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

stats_ci stats_t_interval_strided(const double *x, size_t n, size_t stride, double level)
{
    stats_ci r = { NAN, NAN, NAN, NAN, n };
    if (n == 0)
        return r;
    r.mean = gsl_stats_mean(x, stride, n);
    if (n < 2)
        return r;
    r.sd = gsl_stats_sd_m(x, stride, n, r.mean);
    double t = gsl_cdf_tdist_Pinv(0.5 + level / 2.0, (double)(n - 1));
    double half = t * r.sd / sqrt((double)n);
    r.lo = r.mean - half;
    r.hi = r.mean + half;
    return r;
}

stats_ci stats_t_interval(const double *x, size_t n, double level)
{
    return stats_t_interval_strided(x, n, 1, level);
}

stats_ci stats_welch_diff(const double *x, size_t nx, const double *y, size_t ny, double level)
{
    stats_ci r = { NAN, NAN, NAN, NAN, nx < ny ? nx : ny };
    if (nx == 0 || ny == 0)
        return r;
    double mx = gsl_stats_mean(x, 1, nx), my = gsl_stats_mean(y, 1, ny);
    r.mean = my - mx;
    if (nx < 2 || ny < 2)
        return r;
    double vx = gsl_stats_variance_m(x, 1, nx, mx) / (double)nx;
    double vy = gsl_stats_variance_m(y, 1, ny, my) / (double)ny;
    r.sd = sqrt(vx + vy);
    if (r.sd == 0) {
        r.lo = r.hi = r.mean;
        return r;
    }
    double df = (vx + vy) * (vx + vy)
              / (vx * vx / (double)(nx - 1) + vy * vy / (double)(ny - 1));
    double half = gsl_cdf_tdist_Pinv(0.5 + level / 2.0, df) * r.sd;
    r.lo = r.mean - half;
    r.hi = r.mean + half;
    return r;
}
