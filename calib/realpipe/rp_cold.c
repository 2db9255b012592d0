/* rp_cold.c — the ops after an idle gap, on one thread. See rp_cold.h.
 * It must never time the sleep itself, nor pin the thread. */
#include "calib/realpipe/rp_cold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_rng.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_ops.h"

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* Sleep ms (nothing for 0): the core idles meanwhile, the thread off it. */
static void idle_for(double ms)
{
    if (!(ms > 0))
        return;
    struct timespec t = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Running sums of one op kind at one gap: n, sum, sum of squares. */
typedef struct {
    long n;
    double s, ss;
} sums;

static void add(sums *a, double x)
{
    a->n++;
    a->s += x;
    a->ss += x * x;
}

static void mean_se(const sums *a, long *n, double *mean, double *se)
{
    *n = a->n;
    *mean = a->n > 0 ? a->s / (double)a->n : 0;
    double var = a->n > 1 ? (a->ss - a->s * *mean) / (double)(a->n - 1) : 0;
    *se = a->n > 1 && var > 0 ? sqrt(var / (double)a->n) : 0;
}

/* Decode P at each gap from the sums by gap and clip frame d[g * nf + f]:
 * its time over what the same frames take at every gap together (their
 * means), times the overall mean: the gap's mean with each frame's content
 * taken out. The standard error from the spread within each frame's cell. */
static void decode_by_gap(const sums *d, int ngaps, int nf, rp_cold_result *r)
{
    double all_s = 0;
    long all_n = 0;
    for (int i = 0; i < ngaps * nf; i++) {
        all_s += d[i].s;
        all_n += d[i].n;
    }
    double all_mean = all_n > 0 ? all_s / (double)all_n : 0;
    for (int g = 0; g < ngaps; g++) {
        double got = 0, want = 0, ssw = 0;
        long n = 0;
        int cells = 0;
        for (int f = 0; f < nf; f++) {
            long fn = 0;
            double fs = 0;
            for (int h = 0; h < ngaps; h++) {
                fn += d[h * nf + f].n;
                fs += d[h * nf + f].s;
            }
            const sums *x = &d[g * nf + f];
            if (x->n == 0 || fn == 0)
                continue;
            got += x->s;
            want += (double)x->n * fs / (double)fn;
            ssw += x->ss - x->s * x->s / (double)x->n;
            n += x->n;
            cells++;
        }
        r->dec_n[g] = n;
        r->dec_ms[g] = want > 0 ? all_mean * got / want : 0;
        double var = n > cells ? ssw / (double)(n - cells) : 0;
        r->dec_se[g] = n > 0 && var > 0 ? sqrt(var / (double)n) : 0;
    }
}

int rp_cold_factors(rp_cold_result *r, int keep_every)
{
    double w = 1.0 / (keep_every > 0 ? keep_every : 1);
    for (int g = 0; g < r->ngaps; g++)
        if (r->dec_n[g] < 1 || r->chain_n[g] < 1)
            return -1;
    double base = r->dec_ms[0] + w * r->chain_ms[0];
    if (!(base > 0))
        return -1;
    for (int g = 0; g < r->ngaps; g++)
        r->factor[g] = (r->dec_ms[g] + w * r->chain_ms[g]) / base;
    return 0;
}

int rp_cold_run(const rp_params *p, const double *gap_ms, int ngaps, double seconds, uint64_t seed,
                rp_cold_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (ngaps < 1 || ngaps > RP_COLD_MAX_GAPS || gap_ms[0] != 0 || !(seconds > 0) || p->gop < 1
        || p->keep_every < 1 || p->streams < 1) {
        snprintf(err, errlen, "coldcal: 1 to %d gaps starting at 0, seconds > 0, streams, gop and "
                 "keep_every >= 1", RP_COLD_MAX_GAPS);
        return -1;
    }
    for (int g = 1; g < ngaps; g++)
        if (!(gap_ms[g] > gap_ms[g - 1])) {
            snprintf(err, errlen, "coldcal: the gaps must increase, got %g after %g", gap_ms[g],
                     gap_ms[g - 1]);
            return -1;
        }
    r->ngaps = ngaps;
    memcpy(r->gap_ms, gap_ms, (size_t)ngaps * sizeof *gap_ms);
    cpu_set_threads(1);                /* as the pipeline runs its kernels */
    dect_clip *clip = NULL;
    rp_ops o;
    memset(&o, 0, sizeof o);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    /* decode P by gap and clip frame (a P-frame's time is mostly its content:
     * compared frame by frame, the gaps' differences stand out of it), the
     * chain by gap */
    int nf = p->clip_frames > 0 ? p->clip_frames : p->gop;
    sums *d = calloc((size_t)ngaps * (size_t)nf, sizeof *d), c[RP_COLD_MAX_GAPS];
    memset(c, 0, sizeof c);
    float pix[RP_PIX_FLOATS], tok[RP_TOK_FLOATS], red[RP_TOK_FLOATS];
    float *pp[1] = {pix}, *tp[1] = {tok}, *rp[1] = {red};
    int rc = -1;
    if (!rng || !d) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    gsl_rng_set(rng, seed);
    if (rp_ops_clip(p, &clip, err, errlen) || rp_ops_init(&o, p, clip, err, errlen))
        goto out;
    double t0 = clock_ms(CLOCK_MONOTONIC), end = 0;
    int warm = 1;
    for (long seq = 0;; seq++) {
        if (warm && seq >= p->gop) {   /* one GOP of every stream untimed: warm decoders */
            warm = 0;
            t0 = clock_ms(CLOCK_MONOTONIC);
            end = t0 + 1e3 * seconds;
        }
        if (!warm && clock_ms(CLOCK_MONOTONIC) >= end)
            break;
        for (int s = 0; s < p->streams; s++) {
            int timed = !warm && seq % p->gop != 0;
            int g = (int)gsl_rng_uniform_int(rng, (unsigned long)ngaps);
            if (timed)
                idle_for(gap_ms[g]);
            double c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
            rp_ops_decode(&o, s, seq, pix);
            if (timed)
                add(&d[g * nf + seq % nf], clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0);
            if (seq % p->keep_every != 0)
                continue;
            g = (int)gsl_rng_uniform_int(rng, (unsigned long)ngaps);
            if (!warm)
                idle_for(gap_ms[g]);
            c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
            rp_ops_encode(&o, 1, pp, tp);
            rp_ops_reduce(&o, 1, tp, rp);
            rp_ops_prefill(&o, 1, rp);
            if (!warm)
                add(&c[g], clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0);
        }
    }
    r->seconds = (clock_ms(CLOCK_MONOTONIC) - t0) / 1e3;
    for (int g = 0; g < ngaps; g++)
        mean_se(&c[g], &r->chain_n[g], &r->chain_ms[g], &r->chain_se[g]);
    decode_by_gap(d, ngaps, nf, r);
    if (rp_cold_factors(r, p->keep_every)) {
        snprintf(err, errlen, "coldcal: a gap had no op in %g s (run longer)", seconds);
        goto out;
    }
    rc = 0;
out:
    rp_ops_free(&o);
    dect_clip_free(clip);
    gsl_rng_free(rng);
    free(d);
    return rc;
}
