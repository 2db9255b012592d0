/* autoscale.c — the fleet over time: autoscaling with cold starts and a
 * warm pool, billing, and the SLA-violation windows.
 *
 * GPU slots 0..cluster.gpus-1 (the loader sets cluster.gpus to max_gpus)
 * are each OFF, STARTING or SERVING; the first initial_gpus serve at t = 0
 * and the warm pool starts full. Warm-pool GPUs are started, idle and
 * interchangeable: a count, not slots.
 *
 * Every control tick (degradation.interval_s, the tick control.c runs) the
 * autoscaler measures the mean utilization of the serving GPUs over the
 * last interval. "util > up.util_above for up.for_s" holds when every
 * interval of the last for_s met it: the window starts at the beginning of
 * the first interval that met it, so a step at a tick boundary is acted on
 * exactly for_s later. Then (or at once when queue_up is given, the
 * fullest GPU queue of a serving GPU is above fill_above and no GPU is
 * already starting — the starting one is the answer) it adds `step`
 * GPUs, up to max_gpus counting those still starting; "util <
 * down.util_below for down.for_s" removes `step`, down to min_gpus, never
 * while a GPU is starting. No two decisions within cooldown_s; a decision
 * clears both windows.
 * Adding a GPU: from the warm pool when one is ready — it serves at once
 * and the pool refills with a cold start — else a cold start: the GPU
 * serves nothing until cold_start has passed. Removing one: the serving
 * GPU with the fewest sessions (ties: the highest slot) stops taking frames
 * (its queued batches finish); its sessions move to the remaining GPUs with
 * the fewest sessions; it stays started in the warm pool if the pool is
 * short, else it is released.
 * Placement: a new session goes to the serving GPU with the fewest sessions
 * (a new GPU has none, so new sessions go to new GPUs); a session keeps its
 * GPU until that GPU is removed.
 * Billing: a GPU is billed from the moment it is requested until it is
 * released — starting (cold start), serving, and every warm-pool GPU,
 * ready or refilling — as clouds bill an instance from launch.
 * SLA windows: consecutive windows of sla_window_s (60 s: minutes) from the
 * start of the measured window; a window violates the first frame SLA line
 * (percentile q, ms X) when its nearest-rank q-quantile exceeds X, counting
 * a dropped frame as one that missed: misses > n - ceil(q n). Two counters
 * per window, whatever its length. Spikes: frames completing within a mean
 * cold start after a scale-up decision (the time a cold start would leave
 * the fleet short) go to a histogram for "p99 during spikes".
 * Without autoscale (a profile alone) every GPU serves and only billing and
 * the SLA windows run. This file never prints; it works on the pipeline's
 * state through pipe_int.h and writes rep_stats.fleet. */
#include "models/autoscale.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/pipe_int.h"
#include "sim/rng.h"

#define STREAM_AUTOSCALE 0xa5c0u
#define EPS_MS 1e-6

enum { GPU_OFF, GPU_STARTING, GPU_SERVING };

struct asc_state {
    int n;                       /* GPU slots */
    uint8_t *state;
    int *sessions;               /* per GPU: sessions placed there */
    double *busy_prev;           /* per GPU: busy ms at the last tick */
    int serving, starting, warm, warm_starting;
    double up_since, down_since, last_action;   /* ms; < 0: not holding */
    gsl_rng *rng;                /* cold-start times */
    double cold_mean_ms, spike_until;
    tw_t billed, serving_tw, warm_tw;
    int has_sla;
    double sla_ms, sla_q, win_ms, win_start;
    uint64_t win_n, win_miss;
};

const char *asc_event_name(int kind)
{
    static const char *const names[FLEET_NKINDS] = {
        "start", "up_cold", "up_warm", "ready", "refilled", "down", "down_to_pool"};
    return kind >= 0 && kind < FLEET_NKINDS ? names[kind] : "?";
}

static int billed_now(const struct asc_state *s)
{
    return s->serving + s->starting + s->warm + s->warm_starting;
}

static void account(pipe_t *p, double now)
{
    struct asc_state *s = p->asc;
    tw_set(&s->billed, now, billed_now(s));
    tw_set(&s->serving_tw, now, s->serving);
    tw_set(&s->warm_tw, now, s->warm);
}

static void log_event(pipe_t *p, int kind, int g, double now)
{
    fleet_stats *f = &p->out->fleet;
    account(p, now);
    if (f->nevents < FLEET_MAX_EVENTS)
        f->events[f->nevents++] = (fleet_event){ now / 1000.0, kind, g, p->asc->serving,
                                                 billed_now(p->asc) };
}

int asc_setup(pipe_t *p, uint32_t rep)
{
    const scenario_cfg *c = p->cfg;
    const autoscale_cfg *a = &c->autoscale;
    if (a->on && c->profile.kind == PROFILE_NONE) {
        snprintf(p->err, p->errlen, "autoscale needs workload.profile (sessions that start "
                 "and end, so that new sessions can go to new GPUs)");
        return -2;
    }
    if (a->on && (c->cluster.npools > 0 || p->ngpus < a->max_gpus)) {
        snprintf(p->err, p->errlen, "autoscale needs one pool of cluster.gpus = max_gpus slots");
        return -2;
    }
    p->asc = calloc(1, sizeof *p->asc);
    if (!p->asc)
        return -1;
    struct asc_state *s = p->asc;
    int n = s->n = p->ngpus;
    size_t nn = (size_t)(n > 0 ? n : 1);
    s->state = calloc(nn, 1);
    s->sessions = calloc(nn, sizeof *s->sessions);
    s->busy_prev = calloc(nn, sizeof *s->busy_prev);
    if (!s->state || !s->sessions || !s->busy_prev)
        return -1;
    int initial = a->on ? a->initial_gpus : n;
    for (int g = 0; g < n; g++)
        s->state[g] = g < initial ? GPU_SERVING : GPU_OFF;
    s->serving = initial < n ? initial : n;
    s->warm = a->on ? a->warm_pool : 0;
    s->up_since = s->down_since = -1;
    s->last_action = -INFINITY;
    if (a->on) {
        s->rng = rng_stream(c->seed, rep, STREAM_AUTOSCALE);
        if (!s->rng)
            return -1;
        s->cold_mean_ms = dist_mean(&a->cold_start);
    }
    s->spike_until = -INFINITY;
    for (int k = 0; k < c->nsla; k++)
        if (strcmp(c->sla[k].metric, "frame") == 0) {
            s->has_sla = 1;
            s->sla_ms = c->sla[k].ms;
            s->sla_q = c->sla[k].percentile / 100.0;
            break;
        }
    s->win_ms = (a->sla_window_s > 0 ? a->sla_window_s : 60) * 1000.0;
    fleet_stats *f = &p->out->fleet;
    f->on = 1;
    f->scaling = a->on;
    f->nevents = 0;
    tw_reset(&s->billed, 0);
    tw_reset(&s->serving_tw, 0);
    tw_reset(&s->warm_tw, 0);
    log_event(p, FLEET_START, -1, 0.0);
    return 0;
}

void asc_free(pipe_t *p)
{
    struct asc_state *s = p->asc;
    if (!s)
        return;
    if (s->rng)
        gsl_rng_free(s->rng);
    free(s->state);
    free(s->sessions);
    free(s->busy_prev);
    free(s);
    p->asc = NULL;
}

void asc_reset(pipe_t *p, double now)
{
    struct asc_state *s = p->asc;
    fleet_stats *f = &p->out->fleet;
    account(p, now);
    tw_reset(&s->billed, now);
    tw_reset(&s->serving_tw, now);
    tw_reset(&s->warm_tw, now);
    f->ups = f->downs = f->cold_starts = f->warm_joins = 0;
    f->windows = f->viol_windows = 0;
    hist_reset(&f->spike);
    s->win_start = now;
    s->win_n = s->win_miss = 0;
}

/* ---- placement ----------------------------------------------------------- */

static int fewest_sessions(const struct asc_state *s)
{
    int best = -1;
    for (int g = 0; g < s->n; g++)
        if (s->state[g] == GPU_SERVING && (best < 0 || s->sessions[g] < s->sessions[best]))
            best = g;
    return best;
}

void asc_session_start(pipe_t *p, uint32_t j, double now)
{
    (void)now;
    struct asc_state *s = p->asc;
    if (!p->cfg->autoscale.on)
        return;
    int g = fewest_sessions(s);
    prof_gpu_map(p)[j] = g;
    if (g >= 0)
        s->sessions[g]++;
}

void asc_session_end(pipe_t *p, uint32_t j)
{
    int g = prof_gpu_map(p)[j];
    if (p->cfg->autoscale.on && g >= 0)
        p->asc->sessions[g]--;
}

int asc_place(const pipe_t *p, uint32_t j)
{
    if (!p->cfg->autoscale.on)
        return -1;
    return prof_gpu_map((pipe_t *)p)[j];
}

/* ---- scaling ---------------------------------------------------------------- */

static double cold_ms(struct asc_state *s, const autoscale_cfg *a)
{
    return dist_sample(&a->cold_start, s->rng);
}

static void scale_up(pipe_t *p, int k, double now)
{
    struct asc_state *s = p->asc;
    const autoscale_cfg *a = &p->cfg->autoscale;
    fleet_stats *f = &p->out->fleet;
    int counted = now >= p->t_reset;
    for (int i = 0; i < k; i++) {
        int g = 0;
        while (g < s->n && s->state[g] != GPU_OFF)
            g++;
        if (g == s->n)
            return;
        f->ups += counted;
        if (s->warm > 0) {               /* from the pool: serves at once, the pool refills */
            s->warm--;
            s->state[g] = GPU_SERVING;
            s->serving++;
            f->warm_joins += counted;
            s->warm_starting++;
            if (ev_push(&p->evq, now + cold_ms(s, a), EV_GPU_READY, (uint32_t)s->n, 0) != 0)
                pipe_fail(p, "out of memory growing the event list");
            log_event(p, FLEET_UP_WARM, g, now);
        } else {
            s->state[g] = GPU_STARTING;
            s->starting++;
            f->cold_starts += counted;
            if (ev_push(&p->evq, now + cold_ms(s, a), EV_GPU_READY, (uint32_t)g, 0) != 0)
                pipe_fail(p, "out of memory growing the event list");
            log_event(p, FLEET_UP_COLD, g, now);
        }
    }
    if (now + s->cold_mean_ms > s->spike_until)
        s->spike_until = now + s->cold_mean_ms;
}

void asc_ready(pipe_t *p, uint32_t what, double now)
{
    struct asc_state *s = p->asc;
    if ((int)what == s->n) {
        s->warm_starting--;
        s->warm++;
        log_event(p, FLEET_REFILLED, -1, now);
        return;
    }
    s->state[what] = GPU_SERVING;
    s->starting--;
    s->serving++;
    log_event(p, FLEET_READY, (int)what, now);
}

static void scale_down(pipe_t *p, int k, double now)
{
    struct asc_state *s = p->asc;
    const autoscale_cfg *a = &p->cfg->autoscale;
    int *map = prof_gpu_map(p);
    const uint8_t *live = prof_live_map(p);
    uint32_t slots = prof_slots(p);
    for (int i = 0; i < k && s->serving > 1; i++) {
        int g = -1;
        for (int h = 0; h < s->n; h++)
            if (s->state[h] == GPU_SERVING && (g < 0 || s->sessions[h] <= s->sessions[g]))
                g = h;
        s->state[g] = GPU_OFF;
        s->serving--;
        for (uint32_t j = 0; j < slots; j++)     /* its sessions move */
            if (live[j] && map[j] == g) {
                int to = fewest_sessions(s);
                map[j] = to;
                s->sessions[to]++;
            }
        s->sessions[g] = 0;
        p->out->fleet.downs += now >= p->t_reset;
        if (s->warm + s->warm_starting < a->warm_pool) {
            s->warm++;
            log_event(p, FLEET_DOWN_TO_POOL, g, now);
        } else {
            log_event(p, FLEET_DOWN, g, now);
        }
    }
}

/* The fullest bounded GPU queue of a serving GPU, as a fraction of capacity. */
static double fullest_gpu_queue(const pipe_t *p)
{
    double fill = 0;
    for (int st = 0; st < p->cfg->nstages; st++) {
        const station_t *stn = &p->stn[st];
        long cap = stn->cfg->capacity;
        if (!stn->gq || cap <= 0)
            continue;
        for (int g = 0; g < p->ngpus; g++)
            if (p->asc->state[g] == GPU_SERVING && (double)stn->gq[g].n / (double)cap > fill)
                fill = (double)stn->gq[g].n / (double)cap;
    }
    return fill;
}

static void decide(pipe_t *p, double now)
{
    struct asc_state *s = p->asc;
    const autoscale_cfg *a = &p->cfg->autoscale;
    double iv = p->cfg->degrade.interval_s * 1000.0, busy = 0;
    for (int g = 0; g < s->n; g++) {
        const gpu_t *gp = &p->gpu[g];
        double b = gp->busy_total + (gp->busy ? now - gp->t_start : 0.0);
        if (s->state[g] == GPU_SERVING)
            busy += b - s->busy_prev[g];
        s->busy_prev[g] = b;
    }
    double util = s->serving > 0 ? busy / (s->serving * iv) : 0.0;
    if (util > a->up_util) {
        if (s->up_since < 0)
            s->up_since = now - iv;      /* the start of the first interval that met it */
    } else {
        s->up_since = -1;
    }
    if (util < a->down_util) {
        if (s->down_since < 0)
            s->down_since = now - iv;
    } else {
        s->down_since = -1;
    }
    if (now - s->last_action < a->cooldown_s * 1000.0 - EPS_MS)
        return;
    int total = s->serving + s->starting;
    /* the queue is the leading signal; a GPU already starting is its answer */
    int queue = a->queue_fill > 0 && s->starting == 0 && fullest_gpu_queue(p) > a->queue_fill;
    int up = s->up_since >= 0 && now - s->up_since >= a->up_for_s * 1000.0 - EPS_MS;
    int down = s->down_since >= 0 && now - s->down_since >= a->down_for_s * 1000.0 - EPS_MS;
    if ((queue || up) && total < a->max_gpus) {
        scale_up(p, a->step < a->max_gpus - total ? a->step : a->max_gpus - total, now);
    } else if (down && s->starting == 0 && s->serving > a->min_gpus) {
        scale_down(p, a->step < s->serving - a->min_gpus ? a->step : s->serving - a->min_gpus, now);
    } else {
        return;
    }
    s->last_action = now;
    s->up_since = s->down_since = -1;
}

/* ---- SLA windows ---------------------------------------------------------------- */

void asc_frame(pipe_t *p, double e2e, double now)
{
    struct asc_state *s = p->asc;
    s->win_n++;
    if (e2e < 0 || (s->has_sla && e2e > s->sla_ms))
        s->win_miss++;
    if (e2e >= 0 && now < s->spike_until && now >= p->t_reset)
        hist_record(&p->out->fleet.spike, e2e);
}

static void close_windows(pipe_t *p, double now)
{
    struct asc_state *s = p->asc;
    fleet_stats *f = &p->out->fleet;
    if (!s->has_sla || now < s->win_start + s->win_ms - EPS_MS)
        return;
    uint64_t need = (uint64_t)ceil(s->sla_q * (double)s->win_n - 1e-9);   /* nearest rank */
    f->windows++;
    f->viol_windows += s->win_n > 0 && s->win_n - s->win_miss < need;
    s->win_start += s->win_ms;
    s->win_n = s->win_miss = 0;
}

void asc_tick(pipe_t *p, double now)
{
    close_windows(p, now);
    if (p->cfg->autoscale.on)
        decide(p, now);
}

void asc_close(pipe_t *p, double t_end)
{
    struct asc_state *s = p->asc;
    fleet_stats *f = &p->out->fleet;
    account(p, t_end);
    close_windows(p, t_end);             /* a window that ends with the run counts */
    double window = t_end - p->t_reset;
    f->billed_gpu_ms = tw_mean(&s->billed, t_end) * window;
    f->serving_gpu_ms = tw_mean(&s->serving_tw, t_end) * window;
    f->warm_gpu_ms = tw_mean(&s->warm_tw, t_end) * window;
    f->busy_gpu_ms = 0;
    for (int g = 0; g < p->ngpus; g++)
        for (int st = 0; st < p->cfg->nstages; st++)
            f->busy_gpu_ms += p->out->gpu[g].busy_ms[st];
}

/* ---- digests and estimates --------------------------------------------------------- */

void asc_digest(const scenario_cfg *cfg, const fleet_stats *f, double window_ms, fleet_digest *d)
{
    memset(d, 0, sizeof *d);
    double hours = window_ms / 3.6e6;
    d->billed_gpus = f->billed_gpu_ms / window_ms;
    d->serving_gpus = f->serving_gpu_ms / window_ms;
    d->cost_usd = f->billed_gpu_ms / 3.6e6 * cfg->cluster.gpu_hour_usd;
    d->viol_min_per_day = f->windows ? (double)f->viol_windows / (double)f->windows * 1440.0 : NAN;
    d->spike_p99 = f->spike.counts && f->spike.n ? hist_quantile(&f->spike, 0.99) : NAN;
    d->mean_sessions = f->mean_sessions;
    d->cold_starts_per_h = (double)f->cold_starts / hours;
    d->warm_joins_per_h = (double)f->warm_joins / hours;
    d->idle_share = f->billed_gpu_ms > 0 ? (f->billed_gpu_ms - f->busy_gpu_ms) / f->billed_gpu_ms : 0;
    d->warm_gpu_h = f->warm_gpu_ms / 3.6e6;
    d->wasted_gpu_h = (f->billed_gpu_ms - f->busy_gpu_ms) / 3.6e6;
    d->sessions = f->sessions;
    d->ups = f->ups;
    d->downs = f->downs;
    d->cold_starts = f->cold_starts;
    d->warm_joins = f->warm_joins;
    d->windows = f->windows;
    d->viol_windows = f->viol_windows;
    d->peak_sessions = f->peak_sessions;
}

#define FCOL(arr, n, field) \
    stats_t_interval_strided(&(arr)[0].field, (size_t)(n), sizeof((arr)[0]) / sizeof(double), 0.95)

void asc_reduce(const fleet_digest *d, int n, fleet_est *e)
{
    e->billed_gpus = FCOL(d, n, billed_gpus);
    e->serving_gpus = FCOL(d, n, serving_gpus);
    e->cost_usd = FCOL(d, n, cost_usd);
    e->viol_min_per_day = FCOL(d, n, viol_min_per_day);
    e->mean_sessions = FCOL(d, n, mean_sessions);
    e->cold_starts_per_h = FCOL(d, n, cold_starts_per_h);
    e->idle_share = FCOL(d, n, idle_share);
    e->wasted_gpu_h = FCOL(d, n, wasted_gpu_h);
    double *col = malloc((size_t)(n > 0 ? n : 1) * sizeof *col);
    int k = 0;
    e->warm_gpu_h = 0;
    e->peak_sessions = 0;
    e->sessions = e->ups = e->downs = e->cold_starts = e->warm_joins = 0;
    e->windows = e->viol_windows = 0;
    for (int r = 0; r < n; r++) {
        if (col && !isnan(d[r].spike_p99))
            col[k++] = d[r].spike_p99;
        e->warm_gpu_h += d[r].warm_gpu_h / n;
        e->sessions += d[r].sessions;
        e->ups += d[r].ups;
        e->downs += d[r].downs;
        e->cold_starts += d[r].cold_starts;
        e->warm_joins += d[r].warm_joins;
        e->windows += d[r].windows;
        e->viol_windows += d[r].viol_windows;
        if (d[r].peak_sessions > e->peak_sessions)
            e->peak_sessions = d[r].peak_sessions;
    }
    if (k > 0) {
        e->spike_p99 = stats_t_interval(col, (size_t)k, 0.95);
    } else {
        e->spike_p99.mean = e->spike_p99.lo = e->spike_p99.hi = NAN;
    }
    free(col);
    uint64_t added = e->cold_starts + e->warm_joins;
    e->cold_start_rate = added ? (double)e->cold_starts / (double)added : NAN;
}
