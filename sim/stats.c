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
