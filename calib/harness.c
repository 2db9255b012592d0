/* harness.c — CPU timing and the statistics of a sample. See harness.h.
 * Never keeps state; never times anything but the callback. */
#include "calib/harness.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double harness_quantile(const double *sorted, int n, double q)
{
    double p = (n - 1) * q;
    int i = (int)floor(p);
    if (i >= n - 1)
        return sorted[n - 1];
    return sorted[i] + (p - i) * (sorted[i + 1] - sorted[i]);
}

int harness_stats(double *samples, int n, harness_result *r)
{
    memset(r, 0, sizeof *r);
    if (n < 1 || !samples)
        return -1;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -1;   /* samples stay the caller's */
    r->n = n;
    r->samples = samples;
    memcpy(s, samples, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    r->mean = sum / n;
    for (int i = 0; i < n; i++)
        ss += (s[i] - r->mean) * (s[i] - r->mean);
    r->sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    r->min = s[0];
    r->max = s[n - 1];
    r->p50 = harness_quantile(s, n, 0.50);
    r->p95 = harness_quantile(s, n, 0.95);
    r->p99 = harness_quantile(s, n, 0.99);
    free(s);
    return 0;
}

void harness_result_free(harness_result *r)
{
    free(r->samples);
    r->samples = NULL;
    r->n = 0;
}

int harness_time_cpu(harness_op op, void *ctx, const harness_opts *o, harness_result *r,
                     char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (o->reps < 1 || o->warmups < HARNESS_MIN_WARMUPS || o->nbuf < 1) {
        snprintf(err, errlen, "harness: need reps >= 1, warmups >= %d, nbuf >= 1 (got %d, %d, %d)",
                 HARNESS_MIN_WARMUPS, o->reps, o->warmups, o->nbuf);
        return -1;
    }
    for (int i = 0; i < o->warmups; i++) {
        double t0 = now_s();
        if (op(ctx, i % o->nbuf)) {
            snprintf(err, errlen, "harness: the op failed during warm-up");
            return -1;
        }
        double first = now_s() - t0;
        if (i == 0 && o->max_seconds > 0 && first * (o->warmups + o->reps) > o->max_seconds) {
            r->skipped = true;
            r->est_seconds = first * (o->warmups + o->reps);
            return 0;
        }
    }
    double *samples = malloc((size_t)o->reps * sizeof *samples);
    if (!samples) {
        snprintf(err, errlen, "harness: out of memory");
        return -1;
    }
    for (int i = 0; i < o->reps; i++) {
        int slot = (o->warmups + i) % o->nbuf;
        double t0 = now_s();
        int rc = op(ctx, slot);
        double t1 = now_s();
        if (rc) {
            free(samples);
            snprintf(err, errlen, "harness: the op failed in repetition %d", i);
            return -1;
        }
        samples[i] = (t1 - t0) * 1e3;
    }
    if (harness_stats(samples, o->reps, r)) {
        free(samples);
        snprintf(err, errlen, "harness: out of memory");
        return -1;
    }
    return 0;
}
