/* rp_drift.c — the machine's speed per window of wall time. See rp_drift.h.
 * It must never pin its threads nor time anything but whole units: the
 * point is the speed the pipeline's own work gets where the OS runs it. */
#include "calib/realpipe/rp_drift.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_statistics_double.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_ops.h"

void rp_drift_credit(double *win, int nwin, double window_s, double a, double b)
{
    if (!(b > a))
        return;
    double lo = a > 0 ? a : 0, hi = b < nwin * window_s ? b : nwin * window_s;
    for (int k = (int)(lo / window_s); k < nwin && k * window_s < hi; k++) {
        double s = k * window_s > lo ? k * window_s : lo;
        double e = (k + 1) * window_s < hi ? (k + 1) * window_s : hi;
        if (e > s)
            win[k] += (e - s) / (b - a);
    }
}

/* The autocorrelation of x[0..n) (mean m, sum of squares about it ss) at lag k. */
static double autocorr(const double *x, int n, double m, double ss, int k)
{
    if (k >= n || !(ss > 0))
        return NAN;
    double s = 0;
    for (int i = 0; i + k < n; i++)
        s += (x[i] - m) * (x[i + k] - m);
    return s / ss;
}

int rp_drift_summarize(double *const *win, int threads, int nwin, double window_ms,
                       rp_drift_result *r, char *err, size_t errlen)
{
    r->threads = threads;
    r->windows = nwin;
    r->window_ms = window_ms;
    r->seconds = nwin * window_ms / 1000;
    r->factors = calloc((size_t)nwin, sizeof *r->factors);
    if (!r->factors) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double sum = 0;
    for (int k = 0; k < nwin; k++) {
        for (int t = 0; t < threads; t++)
            r->factors[k] += win[t][k];
        sum += r->factors[k];
    }
    if (!(sum > 0)) {
        snprintf(err, errlen, "driftcal: no unit finished in %g s", r->seconds);
        return -1;
    }
    double mean = sum / nwin, ss = 0;
    r->units_per_s = mean / (window_ms / 1000);
    r->lo = INFINITY;
    r->hi = -INFINITY;
    for (int k = 0; k < nwin; k++) {
        double f = r->factors[k] /= mean;
        ss += (f - 1) * (f - 1);
        r->lo = f < r->lo ? f : r->lo;
        r->hi = f > r->hi ? f : r->hi;
    }
    r->sd = sqrt(ss / (nwin - 1));
    r->lag1 = autocorr(r->factors, nwin, 1, ss, 1);
    r->lag5 = autocorr(r->factors, nwin, 1, ss, 5);
    r->cross = threads >= 2 ? gsl_stats_correlation(win[0], 1, win[1], 1, (size_t)nwin) : NAN;
    return 0;
}

void rp_drift_free(rp_drift_result *r)
{
    free(r->factors);
    r->factors = NULL;
}

typedef struct {
    rp_solo solo;                      /* its stream and kernels */
    int keep_every, nwin;
    double t0, window_s;               /* the windows start at t0 (CLOCK_MONOTONIC s) */
    double *win;                       /* its credit per window */
    long done;                         /* read after the join */
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* corecal's unit, back to back until the last window's end; the units
 * before t0 warm the decoder and the caches. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    double end = w->t0 + w->nwin * w->window_s;
    for (double a = now_s(); a < end;) {
        for (int k = 0; k < w->keep_every; k++)
            rp_solo_decode(&w->solo, k == 0);
        rp_solo_chain(&w->solo);
        double b = now_s();
        rp_drift_credit(w->win, w->nwin, w->window_s, a - w->t0, b - w->t0);
        w->done++;
        a = b;
    }
    return NULL;
}

int rp_drift_run(const rp_params *p, int threads, double seconds, double window_ms,
                 rp_drift_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    double nw = window_ms > 0 ? floor(seconds * 1000 / window_ms + 1e-9) : 0;
    if (threads < 1 || threads > RP_DRIFT_MAX_THREADS || !(nw >= 4) || nw > RP_DRIFT_MAX_WINDOWS
        || p->keep_every < 1) {
        snprintf(err, errlen, "driftcal: threads 1..%d and 4..%d windows (--seconds over "
                 "--window-ms), got %d threads and %.0f windows", RP_DRIFT_MAX_THREADS,
                 RP_DRIFT_MAX_WINDOWS, threads, nw);
        return -1;
    }
    int nwin = (int)nw;
    cpu_set_threads(1);                /* as the pipeline runs its kernels */
    dect_clip *clip = NULL;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    double **win = calloc((size_t)threads, sizeof *win);
    int started = 0, rc = -1;
    if (!w || !th || !win) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (rp_ops_clip(p, &clip, err, errlen))
        goto out;
    for (int t = 0; t < threads; t++) {
        if (!(win[t] = w[t].win = calloc((size_t)nwin, sizeof *win[t]))) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        if (rp_solo_init(&w[t].solo, p, clip, err, errlen))   /* a stream of its own */
            goto out;
    }
    double t0 = now_s() + 0.3;         /* every thread warms up first */
    for (int t = 0; t < threads; t++) {
        w[t].keep_every = p->keep_every;
        w[t].nwin = nwin;
        w[t].window_s = window_ms / 1000;
        w[t].t0 = t0;
    }
    for (; started < threads; started++)
        if (pthread_create(&th[started], NULL, worker_main, &w[started])) {
            snprintf(err, errlen, "cannot start driftcal's threads");
            goto out;
        }
    rc = 0;
out:
    for (int t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
        if (t < RP_DRIFT_MAX_THREADS)
            r->done[t] = w[t].done;
    }
    if (rc == 0 && started == threads)
        rc = rp_drift_summarize(win, threads, nwin, window_ms, r, err, errlen);
    for (int t = 0; w && t < threads; t++)
        rp_solo_free(&w[t].solo);
    for (int t = 0; win && t < threads; t++)
        free(win[t]);
    dect_clip_free(clip);
    free(w);
    free(th);
    free(win);
    return rc;
}
