/* rp_stats.h — what the validation compares (issue 7): from a set of span
 * files, the end-to-end frame latency (release -> leaving llm_prefill) and
 * each stage's sojourn (enqueue -> end) as p50 / p95 / p99, and the frame
 * drop rate; the same figures read from a `vlsim run --csv` file; and the
 * relative error between them. Percentiles interpolate linearly between
 * order statistics (GSL's gsl_stats_quantile_from_sorted_data). Nothing
 * here prints or keeps state; it never looks at the clock. */
#ifndef VL_RP_STATS_H
#define VL_RP_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "calib/realpipe/rp_span.h"

typedef struct {
    double p50, p95, p99;      /* ms; NaN when n = 0 */
    size_t n;
} rp_pct;

typedef struct {
    rp_pct frame;              /* end to end, completed frames */
    rp_pct stage[RP_NSTAGES];  /* sojourn at each stage (done or sampled out there) */
    uint64_t arrived, dropped, completed, sampled_out;
    double drop_rate;          /* dropped / arrived (a fraction); NaN when none arrived */
} rp_metrics;

/* Metrics of run `run` of s (-1: all runs pooled), over the frames and
 * queries that arrived at or after warmup_ms. With e2e non-NULL, the sorted
 * end-to-end latencies (malloc'ed, *ne2e of them) for a CDF. 0, or -1 when
 * out of memory. */
int rp_metrics_of(const rp_set *s, int run, double warmup_ms, rp_metrics *m, double **e2e,
                  size_t *ne2e);

/* The simulator's figures from a `vlsim run --csv` file: the e2e row's
 * sojourn_p50/p95/p99 and drop_rate, and each stage row whose name is a
 * realpipe stage. n is 1 for every figure present. 0, or -1 and
 * "PATH:LINE: message". */
int rp_sim_read(const char *path, rp_metrics *m, char *err, size_t errlen);

/* (sim - real) / real; NaN when real is 0 or either is NaN. */
double rp_rel_err(double real, double sim);

/* Percentile q (0..1) of sorted[0..n): NaN when n = 0. */
double rp_quantile(const double *sorted, size_t n, double q);

#endif
