/* canary.c — the canary rollout's steps and gates (see canary.h).
 *
 * It keeps the current step, the per-arm counts and histograms of the step,
 * and the record of the rollout (canary_rec, in the replication's
 * statistics). It must never print, never look inside the pipeline and
 * never allocate after canary_init: memory is two histograms whatever the
 * simulated time. */
#include "models/canary.h"
#include <stdio.h>
#include <string.h>
#include <gsl/gsl_cdf.h>

int canary_init(canary_run *c, const canary_cfg *cfg, int ngpus, uint64_t salt, canary_rec *rec)
{
    memset(c, 0, sizeof *c);
    memset(rec, 0, sizeof *rec);
    c->cfg = cfg;
    c->rec = rec;
    c->salt = salt;
    c->step = -1;
    c->ngpus = ngpus;
    c->state = cfg->nsteps > 0 ? CANARY_IDLE : CANARY_OVER;
    rec->nsteps = cfg->nsteps;
    rec->aborted_at = -1;
    for (int k = 0; k < cfg->nsteps; k++) {
        rec->step[k].pct = cfg->steps[k].pct;
        rec->step[k].start_s = rec->step[k].end_s = NAN;
        rec->step[k].gpu_util = NAN;
        for (int a = 0; a < 2; a++)
            rec->step[k].p50_ms[a] = rec->step[k].p99_ms[a] = rec->step[k].drop_rate[a] = NAN;
    }
    if (cfg->nsteps == 0)
        return 0;
    if (hist_init(&c->e2e[0]) != 0 || hist_init(&c->e2e[1]) != 0) {
        canary_free(c);
        return -1;
    }
    return 0;
}

void canary_free(canary_run *c)
{
    hist_free(&c->e2e[0]);
    hist_free(&c->e2e[1]);
}

static void event(canary_run *c, double now_ms, canary_event_kind what)
{
    canary_rec *r = c->rec;
    if (r->nevents < CANARY_MAX_EVENTS)
        r->timeline[r->nevents++] = (canary_event){ now_ms / 1000.0, c->step, what };
}

static double start_step(canary_run *c, int k, double now_ms, double busy_ms)
{
    c->step = k;
    c->state = CANARY_HOLD;
    c->frac = c->cfg->steps[k].pct / 100.0;
    c->t_step = now_ms;
    c->busy0 = busy_ms;
    for (int a = 0; a < 2; a++) {
        hist_reset(&c->e2e[a]);
        c->arrived[a] = c->completed[a] = c->dropped[a] = 0;
    }
    c->rec->step[k].start_s = now_ms / 1000.0;
    c->rec->reached = k + 1;
    event(c, now_ms, CANARY_EV_START);
    return now_ms + c->cfg->steps[k].hold_s * 1000.0;
}

double canary_begin(canary_run *c, double now_ms, double busy_ms)
{
    if (c->state != CANARY_IDLE)
        return INFINITY;
    return start_step(c, 0, now_ms, busy_ms);
}

static uint64_t frames(const canary_run *c, int arm)
{
    return c->completed[arm] + c->dropped[arm];
}

/* Write the step's measurements into its record. */
static void record_step(canary_run *c, double now_ms, double busy_ms)
{
    canary_step_rec *s = &c->rec->step[c->step];
    s->end_s = now_ms / 1000.0;
    for (int a = 0; a < 2; a++) {
        s->arrived[a] = c->arrived[a];
        s->completed[a] = c->completed[a];
        s->dropped[a] = c->dropped[a];
        s->p50_ms[a] = c->completed[a] ? hist_quantile(&c->e2e[a], 0.50) : NAN;
        s->p99_ms[a] = c->completed[a] ? hist_quantile(&c->e2e[a], 0.99) : NAN;
        s->drop_rate[a] = frames(c, a) ? (double)c->dropped[a] / (double)frames(c, a) : NAN;
    }
    double span = now_ms - c->t_step;
    s->gpu_util = c->ngpus > 0 && span > 0 ? (busy_ms - c->busy0) / (c->ngpus * span) : NAN;
}

/* The gates that trip on the recorded step (CANARY_R_* bits). */
static unsigned judge(const canary_cfg *g, const canary_step_rec *s)
{
    unsigned why = 0;
    int base_ok = (long)(s->completed[0] + s->dropped[0]) >= g->min_frames && s->completed[0] > 0;
    if (g->p99_ratio > 0 && base_ok && s->completed[1] > 0
        && s->p99_ms[1] > g->p99_ratio * s->p99_ms[0])
        why |= CANARY_R_P99;
    if (g->drop_rate > 0 && s->drop_rate[1] > g->drop_rate)
        why |= CANARY_R_DROP;
    /* a baseline without drops counts as one, so that it does not make a
     * single variant drop an abort */
    double base_drop = s->dropped[0] ? s->drop_rate[0]
                                     : 1.0 / (double)(s->completed[0] + s->dropped[0]);
    if (g->drop_ratio > 0 && base_ok && s->dropped[1] > 0
        && s->drop_rate[1] > g->drop_ratio * base_drop)
        why |= CANARY_R_DROP_RATIO;
    if (g->gpu_util > 0 && isfinite(s->gpu_util) && s->gpu_util > g->gpu_util)
        why |= CANARY_R_GPU;
    return why;
}

double canary_decide(canary_run *c, double now_ms, double busy_ms)
{
    if (!canary_measuring(c))
        return INFINITY;
    if ((long)frames(c, CANARY_VARIANT) < c->cfg->min_frames) {
        if (c->state == CANARY_HOLD)         /* the hold is over: wait for the sample */
            event(c, now_ms, CANARY_EV_WAIT);
        c->state = CANARY_WAIT;
        return INFINITY;
    }
    record_step(c, now_ms, busy_ms);
    canary_step_rec *s = &c->rec->step[c->step];
    unsigned why = judge(c->cfg, s);
    if (why) {
        s->verdict = CANARY_ABORTED;
        s->reasons = why;
        c->rec->aborted_at = c->step;
        c->rec->reasons = why;
        c->frac = 0;                         /* rollback: every session to the baseline */
        c->state = CANARY_OVER;
        event(c, now_ms, CANARY_EV_ABORT);
        return INFINITY;
    }
    s->verdict = CANARY_PASSED;
    event(c, now_ms, CANARY_EV_PASS);
    if (c->step + 1 < c->cfg->nsteps)
        return start_step(c, c->step + 1, now_ms, busy_ms);
    c->rec->completed = 1;                   /* the last step's split stays */
    c->state = CANARY_OVER;
    event(c, now_ms, CANARY_EV_COMPLETE);
    return INFINITY;
}

void canary_close(canary_run *c, double now_ms, double busy_ms)
{
    if (!canary_measuring(c))
        return;
    record_step(c, now_ms, busy_ms);
    c->rec->step[c->step].verdict = c->state == CANARY_WAIT ? CANARY_WAITING : CANARY_RUNNING;
    c->state = CANARY_OVER;
}

/* ---- names and summaries ------------------------------------------------------ */

const char *canary_verdict_name(canary_verdict v)
{
    switch (v) {
    case CANARY_RUNNING: return "running";
    case CANARY_WAITING: return "waiting";
    case CANARY_PASSED:  return "passed";
    case CANARY_ABORTED: return "aborted";
    default:             return "not_reached";
    }
}

const char *canary_event_name(canary_event_kind k)
{
    switch (k) {
    case CANARY_EV_START:    return "start";
    case CANARY_EV_WAIT:     return "wait";
    case CANARY_EV_PASS:     return "pass";
    case CANARY_EV_ABORT:    return "abort";
    default:                 return "complete";
    }
}

const char *canary_reason_name(int k)
{
    static const char *const names[CANARY_NREASONS] = { "p99", "drop_rate", "drop_ratio", "gpu_util" };
    return k >= 0 && k < CANARY_NREASONS ? names[k] : "?";
}

const char *canary_reasons(unsigned reasons, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int k = 0; k < CANARY_NREASONS; k++)
        if (reasons >> k & 1) {
            int n = snprintf(buf + o, size - o, "%s%s", o ? "+" : "", canary_reason_name(k));
            if (n < 0 || (size_t)n >= size - o)
                break;
            o += (size_t)n;
        }
    return buf;
}

void canary_summarize(const canary_rec *reps, int nrep, canary_summary *out)
{
    memset(out, 0, sizeof *out);
    out->nrep = nrep;
    out->nsteps = nrep > 0 ? reps[0].nsteps : 0;
    for (int r = 0; r < nrep; r++) {
        const canary_rec *c = &reps[r];
        if (c->aborted_at >= 0) {
            out->aborted++;
            out->aborted_at[c->aborted_at]++;
            for (int k = 0; k < CANARY_NREASONS; k++)
                out->by_reason[k] += (int)(c->reasons >> k & 1);
        } else if (c->completed) {
            out->completed++;
        } else {
            out->unfinished++;
        }
        for (int k = 0; k < c->nsteps; k++) {
            out->reached[k] += k < c->reached;
            out->waiting[k] += c->step[k].verdict == CANARY_WAITING;
        }
    }
}

void canary_wilson(uint64_t x, uint64_t n, double level, double *lo, double *hi)
{
    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    double z = gsl_cdf_ugaussian_Pinv(0.5 + level / 2.0), nn = (double)n, p = (double)x / nn;
    double z2 = z * z, den = 1.0 + z2 / nn;
    double centre = (p + z2 / (2.0 * nn)) / den;
    double half = z / den * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
    *lo = x == 0 ? 0.0 : centre - half;
    *hi = x == n ? 1.0 : centre + half;
}
