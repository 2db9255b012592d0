/* control.c — the degradation controller and the alert rules.
 *
 * Both look at the service every `degradation.interval_s` (a CONTROL event).
 * The controller (seed 004 §4) keeps a level: modes[0..level-1] are on. It
 * escalates one level when the frame p99 over its window exceeds the target
 * or the fullest bounded queue is above high_water; it de-escalates when the
 * fullest queue is below low_water and the p99 is below deescalate x target;
 * never twice within cooldown_s. The modes act on the running model:
 * reduce_fps drops frames at the source (reason `policy`) so that each
 * stream keeps `fps` per second, evenly spaced; reduce_quality multiplies
 * stages' service times by their quality_scale; drop_response drops
 * proactive triggers (reason `policy`).
 * The alert rules (seed 004 §1) are judged once the first alert window has
 * passed; each fires on a transition from not met to met and is recorded
 * with its time: frame p99 over the alert window above
 * 1.5 x the first frame SLA target; frame drop rate over the window above
 * 1 %; a GPU below 20 % utilization for 5 minutes; frame p99 above 1.5 x
 * frame p95. This file never prints; it reads the pipeline's state through
 * pipe_int.h and writes its record into rep_stats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/pipe_int.h"

static int slots_for(double window_s, double interval_s)
{
    int n = (int)ceil(window_s / interval_s - 1e-9);
    return n < 1 ? 1 : n;
}

int ctl_setup(pipe_t *p)
{
    const scenario_cfg *c = p->cfg;
    ctl_t *k = &p->ctl;
    double iv = c->degrade.interval_s;
    k->last_change = -INFINITY;
    k->aslots = slots_for(c->alerts.window_s, iv);
    k->nlook = slots_for(c->alerts.gpu_util_for_s, iv) + 1;
    if (whist_init(&k->frame_win, slots_for(c->degrade.window_s, iv)) != 0
        || whist_init(&k->alert_win, k->aslots) != 0)
        return -1;
    k->slot_arr = calloc((size_t)k->aslots, sizeof *k->slot_arr);
    k->slot_drop = calloc((size_t)k->aslots, sizeof *k->slot_drop);
    k->busy_ring = calloc((size_t)k->nlook * (size_t)(p->ngpus > 0 ? p->ngpus : 1), sizeof(double));
    k->gpu_firing = calloc((size_t)(p->ngpus > 0 ? p->ngpus : 1), 1);
    if (!k->slot_arr || !k->slot_drop || !k->busy_ring || !k->gpu_firing)
        return -1;
    k->look_n = 1;               /* row 0: every GPU's busy time at t = 0, which is 0 */
    k->look_cur = 1 % k->nlook;
    return ev_push(&p->evq, iv * 1000.0, EV_CONTROL, 0, 0);
}

void ctl_free(pipe_t *p)
{
    ctl_t *k = &p->ctl;
    whist_free(&k->frame_win);
    whist_free(&k->alert_win);
    free(k->slot_arr);
    free(k->slot_drop);
    free(k->busy_ring);
    free(k->gpu_firing);
}

/* ---- what the modes do to the running model ------------------------------ */

/* A frame or trigger dropped by the controller at stage s (its entry). */
void pipe_policy_drop(pipe_t *p, int s, uint32_t i)
{
    p->stn[s].st->arrivals++;
    p->stn[s].st->drop_policy++;
    pipe_drop(p, i);
}

static void set_level(pipe_t *p, int level, double now)
{
    ctl_t *k = &p->ctl;
    rep_stats *o = p->out;
    const degrade_cfg *d = &p->cfg->degrade;
    double from = k->level_since > p->t_reset ? k->level_since : p->t_reset;
    o->level_ms[k->level] += now - from;
    k->level = level;
    k->level_since = now;
    k->last_change = now;
    k->fps_on = k->quality_on = k->drop_resp_on = 0;
    for (int m = 0; m < level; m++) {
        k->fps_on |= d->modes[m] == MODE_REDUCE_FPS;
        k->quality_on |= d->modes[m] == MODE_REDUCE_QUALITY;
        k->drop_resp_on |= d->modes[m] == MODE_DROP_RESPONSE;
    }
    if (now >= p->t_reset)
        o->mode_changes++;
    if (o->ntimeline < PIPE_MAX_TIMELINE)
        o->timeline[o->ntimeline++] = (mode_change){ now / 1000.0, level };
}

/* The fullest bounded queue, as a fraction of its capacity. */
static double fullest_queue(const pipe_t *p)
{
    double fill = 0;
    for (int s = 0; s < p->cfg->nstages; s++) {
        const station_t *stn = &p->stn[s];
        long cap = stn->cfg->capacity;
        if (cap <= 0)
            continue;
        if (stn->gq) {
            for (int g = 0; g < p->ngpus; g++)
                if ((double)stn->gq[g].n / (double)cap > fill)
                    fill = (double)stn->gq[g].n / (double)cap;
        } else if ((double)stn->q.n / (double)cap > fill) {
            fill = (double)stn->q.n / (double)cap;
        }
    }
    return fill;
}

static void decide(pipe_t *p, double now)
{
    const degrade_cfg *d = &p->cfg->degrade;
    ctl_t *k = &p->ctl;
    if (d->nmodes == 0 || now - k->last_change < d->cooldown_s * 1000.0)
        return;
    double p99 = whist_quantile(&k->frame_win, 0.99), fill = fullest_queue(p);
    if (k->level < d->nmodes && (p99 > d->p99_target_ms || fill > d->high_water))
        set_level(p, k->level + 1, now);
    else if (k->level > 0 && fill < d->low_water && p99 < d->deescalate * d->p99_target_ms)
        set_level(p, k->level - 1, now);
}

/* ---- alerts ------------------------------------------------------------------ */

static void fire(pipe_t *p, int rule, int gpu, int met, uint8_t *state, double value, double now)
{
    rep_stats *o = p->out;
    if (met && !*state) {
        if (now >= p->t_reset)
            o->alert_count[rule]++;
        if (o->nalerts < PIPE_MAX_ALERTS)
            o->alerts[o->nalerts++] = (alert_event){ now / 1000.0, rule, gpu, value };
    }
    *state = (uint8_t)met;
}

static double frame_sla_ms(const scenario_cfg *c)
{
    for (int k = 0; k < c->nsla; k++)
        if (strcmp(c->sla[k].metric, "frame") == 0)
            return c->sla[k].ms;
    return 0;
}

static void check_alerts(pipe_t *p, double now)
{
    const alert_cfg *a = &p->cfg->alerts;
    ctl_t *k = &p->ctl;
    /* GPU idle: busy time over the last gpu_util_for_s, from a ring of each
     * GPU's cumulative busy time sampled at every tick (from the start, so
     * the rule can be judged as soon as both its spans have passed). */
    int ng = p->ngpus;
    double *row = &k->busy_ring[(size_t)k->look_cur * (size_t)ng];
    for (int g = 0; g < ng; g++) {
        const gpu_t *gp = &p->gpu[g];
        row[g] = gp->busy_total + (gp->busy ? now - gp->t_start : 0.0);
    }
    int oldest = (k->look_cur + 1) % k->nlook;
    k->look_cur = oldest;
    if (k->look_n < k->nlook)
        k->look_n++;
    if (now < a->window_s * 1000.0)
        return;                  /* rules judge a full window, never a few frames */
    if (k->look_n == k->nlook) {
        double span = (k->nlook - 1) * p->cfg->degrade.interval_s * 1000.0;
        for (int g = 0; g < ng; g++) {
            double util = (row[g] - k->busy_ring[(size_t)oldest * (size_t)ng + (size_t)g]) / span;
            fire(p, ALERT_GPU_IDLE, g, util < a->gpu_util_below, &k->gpu_firing[g], util, now);
        }
    }
    double p99 = whist_quantile(&k->alert_win, 0.99), p95 = whist_quantile(&k->alert_win, 0.95);
    double sla = frame_sla_ms(p->cfg);
    fire(p, ALERT_P99_SLA, -1, sla > 0 && k->alert_win.n > 0 && p99 > a->p99_sla_factor * sla,
         &k->firing[ALERT_P99_SLA], p99, now);
    double rate = k->win_arr ? (double)k->win_drop / (double)k->win_arr : 0.0;
    fire(p, ALERT_DROP_RATE, -1, rate > a->drop_rate, &k->firing[ALERT_DROP_RATE], rate, now);
    fire(p, ALERT_P99_P95, -1, k->alert_win.n > 0 && p99 > a->p99_p95_ratio * p95,
         &k->firing[ALERT_P99_P95], p99 / (p95 > 0 ? p95 : 1), now);
}

/* ---- the tick ------------------------------------------------------------------ */

void ctl_tick(pipe_t *p, double now)
{
    ctl_t *k = &p->ctl;
    if (ev_push(&p->evq, now + p->cfg->degrade.interval_s * 1000.0, EV_CONTROL, 0, 0) != 0) {
        pipe_fail(p, "out of memory growing the event list");
        return;
    }
    decide(p, now);
    check_alerts(p, now);
    if (p->asc)                           /* the fleet's tick: autoscaler, SLA windows */
        asc_tick(p, now);
    rep_stats *o = p->out;                /* the time series, before the windows move */
    if (o->series && o->nseries < PIPE_MAX_SERIES)
        o->series[o->nseries++] = (series_point){
            now / 1000.0, (double)k->tick_arr / p->cfg->degrade.interval_s, k->level,
            fullest_queue(p), whist_quantile(&k->frame_win, 0.99) };
    k->tick_arr = 0;
    /* the windows move on: a new slot for the next interval */
    whist_advance(&k->frame_win);
    whist_advance(&k->alert_win);
    k->acur = (k->acur + 1) % k->aslots;
    k->win_arr -= k->slot_arr[k->acur];
    k->win_drop -= k->slot_drop[k->acur];
    k->slot_arr[k->acur] = k->slot_drop[k->acur] = 0;
}

/* The measured window starts: the level's time and the counts restart (the
 * level itself, the windows and the GPU ring carry on: they describe the
 * service, not the measurement). The drop-rate rule counts every drop,
 * the controller's own `policy` drops included, as a dashboard would. */
void ctl_reset(pipe_t *p, double now)
{
    rep_stats *o = p->out;
    memset(o->level_ms, 0, sizeof o->level_ms);
    memset(o->alert_count, 0, sizeof o->alert_count);
    o->mode_changes = 0;
    p->ctl.level_since = now;
}

void ctl_close(pipe_t *p, double t_end)
{
    ctl_t *k = &p->ctl;
    double from = k->level_since > p->t_reset ? k->level_since : p->t_reset;
    p->out->level_ms[k->level] += t_end - from;
}
