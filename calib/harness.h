/* harness.h — timing one op: warm-ups, repetitions, statistics.
 *
 * The op is a callback run on input slot (i mod nbuf), so successive
 * repetitions read different buffers and caches do not flatter the result.
 * On the CPU each repetition is timed with CLOCK_MONOTONIC; the CUDA path
 * (cuda_ops.h, cuda_time) times with CUDA events and shares the statistics
 * here. This module never runs an op itself beyond the callback, and keeps
 * no state. */
#ifndef VL_CALIB_HARNESS_H
#define VL_CALIB_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HARNESS_MIN_WARMUPS 5
#define HARNESS_DEFAULT_REPS 50

typedef struct {
    int reps;             /* timed repetitions (>= 1; vlcalib's default 50) */
    int warmups;          /* untimed runs first (>= HARNESS_MIN_WARMUPS) */
    int nbuf;             /* input slots to rotate through (>= 1) */
    double max_seconds;   /* > 0: skip the point when the first warm-up says
                             warmups + reps runs would take longer */
} harness_opts;

typedef struct {
    int n;                /* samples */
    double *samples;      /* ms, in the order run; malloc'ed, the caller frees
                             (harness_result_free) */
    double p50, p95, p99, mean, sd, min, max;   /* ms; sd with n - 1 */
    bool skipped;         /* max_seconds would be exceeded: no samples */
    double est_seconds;   /* when skipped: the estimate that said so */
} harness_result;

/* Run op(ctx, slot): 0 on success, -1 on error (the op keeps its message). */
typedef int (*harness_op)(void *ctx, int slot);

/* 0 and r filled (or r->skipped), or -1 when the op failed or the options
 * are invalid (message in err). */
int harness_time_cpu(harness_op op, void *ctx, const harness_opts *o, harness_result *r,
                     char *err, size_t errlen);

/* Fill r's statistics from n samples (ms), taking ownership of `samples`
 * (malloc'ed). Percentiles interpolate linearly between order statistics
 * (p = (n - 1) q). 0, or -1 when n < 1. */
int harness_stats(double *samples, int n, harness_result *r);

void harness_result_free(harness_result *r);

/* Percentile q in [0, 1] of sorted[0..n). */
double harness_quantile(const double *sorted, int n, double q);

#ifdef __cplusplus
}
#endif

#endif
