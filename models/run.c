/* run.c — replications to estimates. See run.h.
 *
 * Each replication is reduced, on its own thread, to a rep_digest: the
 * statistics that get confidence intervals plus the integer counts that are
 * pooled. Pooled floating-point sums are added in replication order at the
 * end, never in completion order, so the output is byte-identical for any
 * number of threads. */
#include "models/run.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/load.h"
#include "models/pipeline.h"
#include "models/autoscale.h"
#include <pthread.h>
#include "sim/rep.h"
#include "sim/stop.h"

/* The numbers kept from one latency histogram of one replication. */
typedef struct {
    double mean, p50, p90, p95, p99, p999, max, sum;
} lat_digest;

typedef struct {
    lat_digest wait, service, sojourn;
    uint64_t arrivals, completed, drop_queue_full, drop_timeout, drop_policy;
    double drop_rate, utilization, mean_queue_len, p_wait, batch_mean;
    uint64_t sampled_out, batches;
    uint64_t *batch_counts;      /* GPU stages, max_batch + 1 */
    uint64_t le[CFG_MAX_BUCKETS + 1];
} stage_digest;

typedef struct {
    double utilization;
    double *busy_ms;             /* per stage */
} gpu_digest;

typedef struct {
    stage_digest *stage;
    gpu_digest *gpu;
    lat_digest e2e, response;
    uint64_t queries, proactive, answered, unanswered;
    uint64_t resp_le[CFG_MAX_BUCKETS + 1];
    uint64_t arrivals, completed, dropped, sampled_out, events, peak_in_flight;
    double level_ms[CFG_MAX_MODES + 1];
    uint64_t mode_changes, alert_count[ALERT_NRULES];
    uint64_t e2e_le[CFG_MAX_BUCKETS + 1];
    double drop_rate;
    double cpu_two, cpu_two_same;  /* cpu: two jobs' share of the busy time; on one core, of that */
    double cpu_cold;               /* cpu.cold: the work cold cores added, over the work */
    double cpu_duty;               /* cpu.duty: the same for cores idle lately */
    double cpu_stalled;            /* cpu.stalls: the share of wake-ups onto an idle core held by
                                      the host's spell */
    double cpu_stall_ms;           /* cpu.stalls: their mean wait (0: none) */
    double cpu_polled;             /* cpu.stalls: the share within the host's poll window */
    double cpu_stack[RUN_NSTACK];  /* cpu.stack: run.h's figures */
    canary_rec canary;
    double window_ms;            /* measured: shorter when the replication stopped early */
    pipe_growth growth;
    fleet_digest fleet;          /* profile and autoscaling (autoscale.h) */
} rep_digest;

typedef struct {
    const scenario_cfg *cfg;
    double warmup_ms;
    run_result *res;             /* replication 0 writes its timeline here */
    pthread_mutex_t *pool_lock;  /* guards res->cdf_* while a replication merges in */
    rep_digest *dig;
    char (*errs)[256];           /* per replication */
    FILE *trace;                 /* replication 0's spans, or NULL */
} run_ctx;

static lat_digest digest_hist(const hist_t *h)
{
    lat_digest d = { hist_mean(h), hist_quantile(h, 0.50), hist_quantile(h, 0.90),
                     hist_quantile(h, 0.95), hist_quantile(h, 0.99), hist_quantile(h, 0.999),
                     h->n ? h->max : 0.0, h->sum };
    return d;
}

const char *const run_stack_names[RUN_NSTACK] = {
    "stacked_share", "start_spells_per_s", "start_spell_ms", "start_spells_moved",
    "end_spells_per_s", "end_spell_ms", "end_spells_moved",
};

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* cpu.stack: one replication's run.h figures (0 where nothing was seen). */
static void stack_figures(const rep_stats *rs, double *f)
{
    double s = rs->window_ms / 1000.0;
    f[RUN_STACK_SHARE] = ratio(rs->cpu_stacked, rs->cpu_chances);
    for (int k = 0; k < 2; k++) {
        double *g = f + (k == 0 ? RUN_START_SPELLS_S : RUN_END_SPELLS_S);
        g[0] = s > 0 ? (double)rs->cpu_spells[k] / s : 0;
        g[1] = rs->cpu_spells[k] ? rs->cpu_spell_ms[k] / (double)rs->cpu_spells[k] : 0;
        g[2] = ratio(rs->cpu_spell_moves[k], rs->cpu_spells[k]);
    }
}

/* ---- the digests' and results' arrays --------------------------------------- */

static int digest_alloc(const scenario_cfg *cfg, rep_digest *d)
{
    int ng = cfg->cluster.gpus;
    d->stage = calloc((size_t)cfg->nstages, sizeof *d->stage);
    d->gpu = calloc((size_t)(ng > 0 ? ng : 1), sizeof *d->gpu);
    if (!d->stage || !d->gpu)
        return -1;
    for (int s = 0; s < cfg->nstages; s++)
        if (cfg->stages[s].on == RES_GPU
            && !(d->stage[s].batch_counts = calloc((size_t)cfg->stages[s].max_batch + 1,
                                                   sizeof(uint64_t))))
            return -1;
    for (int g = 0; g < ng; g++)
        if (!(d->gpu[g].busy_ms = calloc((size_t)cfg->nstages, sizeof(double))))
            return -1;
    return 0;
}

static void digest_free(const scenario_cfg *cfg, rep_digest *d)
{
    if (d->stage)
        for (int s = 0; s < cfg->nstages; s++)
            free(d->stage[s].batch_counts);
    if (d->gpu)
        for (int g = 0; g < cfg->cluster.gpus; g++)
            free(d->gpu[g].busy_ms);
    free(d->stage);
    free(d->gpu);
}

static int result_alloc(const scenario_cfg *cfg, run_result *res)
{
    int ng = cfg->cluster.gpus;
    res->ngpus = ng;
    res->nstages = cfg->nstages;
    res->stage = calloc((size_t)cfg->nstages, sizeof *res->stage);
    res->gpu = calloc((size_t)(ng > 0 ? ng : 1), sizeof *res->gpu);
    res->series = malloc(PIPE_MAX_SERIES * sizeof *res->series);
    res->cdf_stage = calloc((size_t)cfg->nstages, sizeof *res->cdf_stage);
    res->rep_e2e = calloc((size_t)cfg->replications, sizeof *res->rep_e2e);
    res->rep_response = calloc((size_t)cfg->replications, sizeof *res->rep_response);
    res->rep_stage = calloc((size_t)cfg->replications * (size_t)cfg->nstages,
                            sizeof *res->rep_stage);
    if (!res->stage || !res->gpu || !res->series || !res->cdf_stage || !res->rep_e2e
        || !res->rep_response || !res->rep_stage || hist_init(&res->cdf_e2e))
        return -1;
    for (int s = 0; s < cfg->nstages; s++)
        if (hist_init(&res->cdf_stage[s]))
            return -1;
    for (int s = 0; s < cfg->nstages; s++)
        if (cfg->stages[s].on == RES_GPU
            && !(res->stage[s].batch_counts = calloc((size_t)cfg->stages[s].max_batch + 1,
                                                     sizeof(uint64_t))))
            return -1;
    for (int g = 0; g < ng; g++)
        if (!(res->gpu[g].busy_ms = calloc((size_t)cfg->nstages, sizeof(double))))
            return -1;
    return 0;
}

static int run_one(void *vctx, int r)
{
    run_ctx *c = vctx;
    rep_stats rs;
    if (pipe_stats_init(&rs, c->cfg) != 0) {
        snprintf(c->errs[r], sizeof c->errs[r], "out of memory for replication %d", r);
        return -1;
    }
    int rc = pipe_run_traced(c->cfg, (uint32_t)r, c->warmup_ms, NULL, &rs, r == 0 ? c->trace : NULL,
                             c->errs[r], sizeof c->errs[r]);
    if (rc == 0) {
        rep_digest *d = &c->dig[r];
        for (int s = 0; s < c->cfg->nstages; s++) {
            const stage_stats *st = &rs.stage[s];
            stage_digest *sd = &d->stage[s];
            sd->wait = digest_hist(&st->wait);
            sd->service = digest_hist(&st->service);
            sd->sojourn = digest_hist(&st->sojourn);
            sd->arrivals = st->arrivals;
            sd->completed = st->completed;
            sd->drop_queue_full = st->drop_queue_full;
            sd->drop_timeout = st->drop_timeout;
            sd->drop_policy = st->drop_policy;
            sd->drop_rate = ratio(st->drop_queue_full + st->drop_timeout + st->drop_policy,
                                  st->arrivals);
            sd->utilization = st->utilization;
            sd->mean_queue_len = st->mean_queue_len;
            sd->p_wait = ratio(st->waited, st->completed);
            sd->sampled_out = st->sampled_out;
            sd->batches = st->batches;
            if (st->batch_counts) {
                uint64_t items = 0;
                for (int k = 1; k <= c->cfg->stages[s].max_batch; k++) {
                    sd->batch_counts[k] = st->batch_counts[k];
                    items += (uint64_t)k * st->batch_counts[k];
                }
                sd->batch_mean = ratio(items, st->batches);
            }
            memcpy(sd->le, st->le, sizeof sd->le);
        }
        memcpy(d->level_ms, rs.level_ms, sizeof d->level_ms);
        d->mode_changes = rs.mode_changes;
        memcpy(d->alert_count, rs.alert_count, sizeof d->alert_count);
        pthread_mutex_lock(c->pool_lock);
        for (int s = 0; s < c->cfg->nstages; s++)
            hist_merge(&c->res->cdf_stage[s], &rs.stage[s].sojourn);
        hist_merge(&c->res->cdf_e2e, &rs.e2e);
        pthread_mutex_unlock(c->pool_lock);
        if (r == 0) {                    /* replication 0's timeline stands for the run */
            c->res->nseries = rs.nseries;
            memcpy(c->res->series, rs.series, (size_t)rs.nseries * sizeof *rs.series);
            c->res->ntimeline = rs.ntimeline;
            memcpy(c->res->timeline, rs.timeline, sizeof rs.timeline);
            c->res->nalerts = rs.nalerts;
            memcpy(c->res->alerts, rs.alerts, sizeof rs.alerts);
            c->res->fleet.nevents = rs.fleet.nevents;
            memcpy(c->res->fleet.events, rs.fleet.events, sizeof rs.fleet.events);
        }
        if (rs.fleet.on)
            asc_digest(c->cfg, &rs.fleet, rs.window_ms, &d->fleet);
        d->e2e = digest_hist(&rs.e2e);
        d->response = digest_hist(&rs.response);
        d->queries = rs.queries;
        d->proactive = rs.proactive;
        d->answered = rs.answered;
        d->unanswered = rs.unanswered;
        memcpy(d->resp_le, rs.resp_le, sizeof d->resp_le);
        d->arrivals = rs.arrivals;
        d->completed = rs.completed;
        d->dropped = rs.dropped;
        d->sampled_out = rs.sampled_out;
        for (int g = 0; g < rs.ngpus; g++) {
            d->gpu[g].utilization = rs.gpu[g].utilization;
            memcpy(d->gpu[g].busy_ms, rs.gpu[g].busy_ms, (size_t)c->cfg->nstages * sizeof(double));
        }
        d->drop_rate = ratio(rs.dropped, rs.arrivals);
        d->cpu_two = rs.cpu_busy_ms > 0 ? rs.cpu_two_ms / rs.cpu_busy_ms : 0;
        d->cpu_two_same = rs.cpu_two_ms > 0 ? rs.cpu_two_same_ms / rs.cpu_two_ms : 0;
        d->cpu_cold = rs.cpu_work_ms > 0 ? rs.cpu_cold_extra_ms / rs.cpu_work_ms : 0;
        d->cpu_duty = rs.cpu_work_ms > 0 ? rs.cpu_duty_extra_ms / rs.cpu_work_ms : 0;
        d->cpu_stalled = rs.cpu_stall_wakes > 0 ? (double)rs.cpu_stalled / (double)rs.cpu_stall_wakes : 0;
        d->cpu_stall_ms = rs.cpu_stalled > 0 ? rs.cpu_stall_wait_ms / (double)rs.cpu_stalled : 0;
        d->cpu_polled = rs.cpu_stall_wakes > 0 ? (double)rs.cpu_stall_polled / (double)rs.cpu_stall_wakes : 0;
        stack_figures(&rs, d->cpu_stack);
        d->events = rs.events;
        d->peak_in_flight = rs.peak_in_flight;
        memcpy(d->e2e_le, rs.e2e_le, sizeof d->e2e_le);
        d->canary = rs.canary;
        d->window_ms = rs.window_ms;
        d->growth = rs.growth;
    }
    pipe_stats_free(&rs);
    return rc;
}

/* ---- reduction across replications ------------------------------------ */

#define COLUMN(arr, n, field) \
    stats_t_interval_strided(&(arr)[0].field, (n), sizeof((arr)[0]) / sizeof(double), 0.95)

static lat_est estimate(const lat_digest *v, int n)
{
    lat_est e;
    e.mean = COLUMN(v, (size_t)n, mean);
    e.p50 = COLUMN(v, (size_t)n, p50);
    e.p90 = COLUMN(v, (size_t)n, p90);
    e.p95 = COLUMN(v, (size_t)n, p95);
    e.p99 = COLUMN(v, (size_t)n, p99);
    e.p999 = COLUMN(v, (size_t)n, p999);
    e.max = 0.0;
    for (int r = 0; r < n; r++)
        if (v[r].max > e.max)
            e.max = v[r].max;
    return e;
}

static rep_lat rep_value(const lat_digest *d)
{
    rep_lat v = { d->mean, d->p50, d->p90, d->p95, d->p99, d->p999 };
    return v;
}

/* The 95 % interval over the n replications of the digests' double at byte
 * offset off (col: n doubles of scratch). */
static stats_ci ci_over(const rep_digest *dig, int n, size_t off, double *col)
{
    for (int r = 0; r < n; r++)
        memcpy(&col[r], (const char *)&dig[r] + off, sizeof col[r]);
    return stats_t_interval(col, (size_t)n, 0.95);
}

static void reduce(const scenario_cfg *cfg, const rep_digest *dig, int n, run_result *res)
{
    for (int r = 0; r < n; r++) {
        res->rep_e2e[r] = rep_value(&dig[r].e2e);
        res->rep_response[r] = rep_value(&dig[r].response);
        for (int s = 0; s < cfg->nstages; s++)
            res->rep_stage[(size_t)r * (size_t)cfg->nstages + (size_t)s]
                = rep_value(&dig[r].stage[s].sojourn);
    }
    lat_digest *tmp = malloc((size_t)n * sizeof *tmp);
    double *col = malloc((size_t)n * 4 * sizeof *col);
    if (!tmp || !col) {           /* tiny; treat as impossible but stay safe */
        free(tmp);
        free(col);
        return;
    }
    for (int s = 0; s < cfg->nstages; s++) {
        stage_est *se = &res->stage[s];
        for (int r = 0; r < n; r++) tmp[r] = dig[r].stage[s].wait;
        se->wait = estimate(tmp, n);
        for (int r = 0; r < n; r++) tmp[r] = dig[r].stage[s].service;
        se->service = estimate(tmp, n);
        se->sojourn_sum = 0.0;
        for (int r = 0; r < n; r++) {
            tmp[r] = dig[r].stage[s].sojourn;
            se->sojourn_sum += tmp[r].sum;
        }
        se->sojourn = estimate(tmp, n);
        for (int r = 0; r < n; r++) {
            const stage_digest *sd = &dig[r].stage[s];
            se->arrivals += sd->arrivals;
            se->completed += sd->completed;
            se->drop_queue_full += sd->drop_queue_full;
            se->drop_timeout += sd->drop_timeout;
            se->drop_policy += sd->drop_policy;
            for (int k = 0; k <= CFG_MAX_BUCKETS; k++)
                se->le[k] += sd->le[k];
            se->sampled_out += sd->sampled_out;
            se->batches += sd->batches;
            if (se->batch_counts)
                for (int k = 1; k <= cfg->stages[s].max_batch; k++)
                    se->batch_counts[k] += sd->batch_counts[k];
            col[4 * r] = sd->drop_rate;
            col[4 * r + 1] = sd->utilization;
            col[4 * r + 2] = sd->mean_queue_len;
            col[4 * r + 3] = sd->p_wait;
        }
        se->drop_rate = stats_t_interval_strided(col, (size_t)n, 4, 0.95);
        se->utilization = stats_t_interval_strided(col + 1, (size_t)n, 4, 0.95);
        se->mean_queue_len = stats_t_interval_strided(col + 2, (size_t)n, 4, 0.95);
        se->p_wait = stats_t_interval_strided(col + 3, (size_t)n, 4, 0.95);
        for (int r = 0; r < n; r++)
            col[r] = dig[r].stage[s].batch_mean;
        se->batch_mean = stats_t_interval(col, (size_t)n, 0.95);
    }
    res->e2e_sum = 0.0;
    for (int r = 0; r < n; r++) {
        tmp[r] = dig[r].e2e;
        res->e2e_sum += tmp[r].sum;
        res->arrivals += dig[r].arrivals;
        res->completed += dig[r].completed;
        res->dropped += dig[r].dropped;
        res->sampled_out += dig[r].sampled_out;
        res->events += dig[r].events;
        if (dig[r].peak_in_flight > res->peak_in_flight)
            res->peak_in_flight = dig[r].peak_in_flight;
        for (int k = 0; k <= CFG_MAX_BUCKETS; k++)
            res->e2e_le[k] += dig[r].e2e_le[k];
        col[r] = dig[r].drop_rate;
    }
    res->e2e = estimate(tmp, n);
    res->drop_rate = stats_t_interval(col, (size_t)n, 0.95);
    res->cpu_two = ci_over(dig, n, offsetof(rep_digest, cpu_two), col);
    res->cpu_two_same = ci_over(dig, n, offsetof(rep_digest, cpu_two_same), col);
    res->cpu_cold = ci_over(dig, n, offsetof(rep_digest, cpu_cold), col);
    res->cpu_duty = ci_over(dig, n, offsetof(rep_digest, cpu_duty), col);
    res->cpu_stalled = ci_over(dig, n, offsetof(rep_digest, cpu_stalled), col);
    res->cpu_stall_ms = ci_over(dig, n, offsetof(rep_digest, cpu_stall_ms), col);
    res->cpu_polled = ci_over(dig, n, offsetof(rep_digest, cpu_polled), col);
    for (int k = 0; k < RUN_NSTACK; k++) {
        for (int r = 0; r < n; r++)
            col[r] = dig[r].cpu_stack[k];
        res->cpu_stack[k] = stats_t_interval(col, (size_t)n, 0.95);
    }
    res->resp_sum = 0.0;
    for (int r = 0; r < n; r++) {
        tmp[r] = dig[r].response;
        res->resp_sum += tmp[r].sum;
        res->queries += dig[r].queries;
        res->proactive += dig[r].proactive;
        res->answered += dig[r].answered;
        res->unanswered += dig[r].unanswered;
        for (int k = 0; k <= CFG_MAX_BUCKETS; k++)
            res->resp_le[k] += dig[r].resp_le[k];
    }
    res->response = estimate(tmp, n);
    /* The pooled CDF histograms were merged in completion order: their
     * counts, min and max do not depend on it, but a floating-point sum
     * would; use the sums added in replication order instead. */
    res->cdf_e2e.sum = res->e2e_sum;
    for (int s = 0; s < cfg->nstages; s++)
        res->cdf_stage[s].sum = res->stage[s].sojourn_sum;
    for (int r = 0; r < n; r++) {
        double window_ms = dig[r].window_ms, hours = window_ms / 3.6e6;
        if (dig[r].growth.kind == PIPE_STABLE) {         /* the full window, as configured */
            window_ms = cfg->duration_s * 1000.0;
            hours = cfg->duration_s / 3600.0;
        }
        for (int l = 0; l <= CFG_MAX_MODES; l++)
            res->level_share[l] += window_ms > 0 ? dig[r].level_ms[l] / window_ms / n : 0.0;
        res->mode_changes_per_hour += hours > 0 ? (double)dig[r].mode_changes / hours / n : 0.0;
        for (int a = 0; a < ALERT_NRULES; a++)
            res->alert_count[a] += dig[r].alert_count[a];
    }
    for (int g = 0; g < res->ngpus; g++) {
        for (int r = 0; r < n; r++)
            col[r] = dig[r].gpu[g].utilization;
        res->gpu[g].utilization = stats_t_interval(col, (size_t)n, 0.95);
        for (int s = 0; s < cfg->nstages; s++) {
            double sum = 0;
            for (int r = 0; r < n; r++)
                sum += dig[r].gpu[g].busy_ms[s];
            res->gpu[g].busy_ms[s] = sum / n;
        }
    }
    free(tmp);
    free(col);
    if (cfg->profile.kind != PROFILE_NONE || cfg->autoscale.on) {
        fleet_digest *fd = malloc((size_t)n * sizeof *fd);
        if (fd) {
            for (int r = 0; r < n; r++)
                fd[r] = dig[r].fleet;
            asc_reduce(fd, n, &res->fleet);
            res->fleet.on = 1;
            res->fleet.scaling = cfg->autoscale.on;
        }
        free(fd);
    }
}

/* ---- warm-up and warnings --------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static void warn(run_result *res, const char *fmt, ...)
{
    if (res->nwarnings >= RUN_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->warnings[res->nwarnings++], sizeof res->warnings[0], fmt, ap);
    va_end(ap);
}

double run_offered_load(const scenario_cfg *cfg, int s)
{
    return load_offered(cfg, s);
}

/* A pilot replication (its own random streams) feeds MSER-5. */
static int pick_warmup(const scenario_cfg *cfg, run_result *res, char *err, size_t errlen)
{
    mser_t m;
    rep_stats rs;
    if (mser_init(&m, 4096) != 0 || pipe_stats_init(&rs, cfg) != 0) {
        mser_free(&m);
        snprintf(err, errlen, "out of memory for the warm-up pilot run");
        return -1;
    }
    int rc = pipe_run(cfg, UINT32_MAX, 0.0, &m, &rs, err, errlen);
    if (rc == 0) {
        res->mser = mser_compute(&m);
        res->warmup_ms = res->mser.t_trunc;
        res->events += rs.events;
        if (!res->mser.settled && rs.growth.kind == PIPE_STABLE)   /* else: the verdict says why */
            warn(res, "warmup: auto: MSER-5 found no steady state in the %.0f s pilot run "
                      "(the best truncation is batch %zu of %zu, the most MSER may cut); "
                      "lengthen duration_s or set warmup_s",
                 cfg->duration_s, res->mser.d, res->mser.k);
    }
    pipe_stats_free(&rs);
    mser_free(&m);
    return rc;
}

/* The estimate of a latency percentile named in an SLA line. */
static stats_ci sla_value(const scenario_cfg *cfg, const run_result *res, const sla_cfg *l)
{
    const lat_est *e = &res->e2e;                   /* "frame": end to end */
    if (strcmp(l->metric, "response") == 0)
        e = &res->response;
    for (int s = 0; s < cfg->nstages && strcmp(l->metric, "frame") != 0
                    && strcmp(l->metric, "response") != 0; s++)
        if (strcmp(l->metric, cfg->stages[s].name) == 0)
            e = &res->stage[s].sojourn;
    double q = l->percentile;
    return q == 50 ? e->p50 : q == 90 ? e->p90 : q == 95 ? e->p95 : q == 99 ? e->p99 : e->p999;
}

/* The stability verdict, from the first replication that stopped early. */
static void verdict(const scenario_cfg *cfg, const rep_digest *dig, int n, run_result *res)
{
    run_verdict *v = &res->verdict;
    memset(v, 0, sizeof *v);
    v->stable = true;
    v->stage = v->rep = -1;
    for (int r = n - 1; r >= 0; r--)
        if (dig[r].growth.kind != PIPE_STABLE) {
            v->unstable_reps++;
            v->rep = r;
        }
    if (v->rep < 0)
        return;
    const pipe_growth *g = &dig[v->rep].growth;
    v->stable = false;
    v->stage = g->stage;
    v->t_stop_s = g->t_stop_s;
    v->offered_load = run_offered_load(cfg, g->stage);
    const char *name = cfg->stages[g->stage].name;
    char stop[96];
    snprintf(stop, sizeof stop, "stopped at t=%.4g s (%d of %d replication%s)", g->t_stop_s,
             v->unstable_reps, n, n == 1 ? "" : "s");
    if (g->kind == PIPE_GREW)
        snprintf(v->reason, sizeof v->reason,
                 "%s queue grew from %.4g to %.4g waiting items between t=%.4g s and t=%.4g s "
                 "(%+.3g items/s), rising in each of 4 successive windows; %s; "
                 "offered load %.3g x capacity",
                 name, g->q_from, g->q_to, g->t_from_s, g->t_to_s,
                 (g->q_to - g->q_from) / (g->t_to_s - g->t_from_s), stop, v->offered_load);
    else
        snprintf(v->reason, sizeof v->reason,
                 "%s queue reached %.0f waiting items, the limit on items in flight (%u); %s; "
                 "offered load %.3g x capacity",
                 name, g->q_to, PIPE_MAX_IN_FLIGHT, stop, v->offered_load);
}

/* SLA verdicts and cost. */
static void judge(const scenario_cfg *cfg, run_result *res)
{
    const cluster_cfg *cl = &cfg->cluster;
    res->gpu_hours = cl->gpus * cfg->duration_s / 3600.0 * res->nrep;
    res->cost_per_stream_hour = cfg->workload.arrival == ARRIVAL_PERIODIC && cl->gpus > 0
        ? cl->gpu_hour_usd * cl->gpus / cfg->workload.streams : NAN;
    if (res->fleet.on) {         /* the fleet varies: billed GPUs over concurrent sessions */
        res->gpu_hours = res->fleet.billed_gpus.mean * cfg->duration_s / 3600.0 * res->nrep;
        res->cost_per_stream_hour = res->fleet.mean_sessions.mean > 0
            ? cl->gpu_hour_usd * res->fleet.billed_gpus.mean / res->fleet.mean_sessions.mean : NAN;
    }
    res->nsla = cfg->nsla;
    for (int k = 0; k < cfg->nsla; k++) {
        sla_verdict *v = &res->sla[k];
        v->line = &cfg->sla[k];
        v->value = sla_value(cfg, res, v->line);
        double upper = isfinite(v->value.hi) ? v->value.hi : v->value.mean;
        v->pass = upper <= v->line->ms && res->verdict.stable;   /* no SLA without a steady state */
    }
}

int run_scenario(const scenario_cfg *cfg, const run_opts *opts, run_result *res,
                 char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    int n = cfg->replications;
    res->cfg = cfg;
    res->nrep = n;
    res->warmup_auto = cfg->warmup_auto;
    res->warmup_ms = cfg->warmup_s * 1000.0;
    pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
    run_ctx c = { cfg, 0.0, res, &pool_lock, calloc((size_t)n, sizeof(rep_digest)),
                  calloc((size_t)n, 256), opts ? opts->trace : NULL };
    int rc = (result_alloc(cfg, res) != 0 || !c.dig || !c.errs) ? -1 : 0;
    for (int r = 0; r < n && rc == 0; r++)
        rc = digest_alloc(cfg, &c.dig[r]);
    if (rc != 0)
        snprintf(err, errlen, "out of memory for %d replications", n);

    for (int s = 0; rc == 0 && s < cfg->nstages; s++) {
        double rho = run_offered_load(cfg, s);
        if (rho >= 1.0 && cfg->stages[s].capacity < 0 && cfg->stages[s].timeout_ms <= 0)
            warn(res, "stage %s: offered load is %.3g x its capacity (%s) with an "
                      "unbounded queue: the queue grows without limit and the results "
                      "describe a transient, not a steady state",
                 cfg->stages[s].name, rho,
                 cfg->stages[s].on == RES_GPU ? "its GPUs at full batches" : "its servers");
    }
    double holds = 0;
    for (int k = 0; k < cfg->canary.nsteps; k++)
        holds += cfg->canary.steps[k].hold_s;
    if (holds > cfg->duration_s)
        warn(res, "canary: the steps' holds add up to %.10g s but duration_s is %.10g s: "
                  "the rollout cannot finish", holds, cfg->duration_s);
    if (rc == 0 && cfg->warmup_auto)
        rc = pick_warmup(cfg, res, err, errlen);
    if (rc == 0) {
        c.warmup_ms = res->warmup_ms;
        int threads = opts && opts->threads > 0 ? opts->threads : rep_default_threads();
        rc = rep_run_all(n, threads, run_one, &c, opts ? opts->progress : NULL,
                         opts ? opts->pctx : NULL);
        if (rc != 0 && stop_requested()) {
            rc = RUN_INTERRUPTED;
        } else if (rc != 0) {
            int bad = 0;
            while (bad < n - 1 && !c.errs[bad][0])
                bad++;
            snprintf(err, errlen, "replication %d: %s", bad,
                     c.errs[bad][0] ? c.errs[bad] : "could not start worker threads");
        } else {
            reduce(cfg, c.dig, n, res);
            verdict(cfg, c.dig, n, res);
            judge(cfg, res);
            if (cfg->canary.nsteps > 0 && !(res->canary = malloc((size_t)n * sizeof *res->canary))) {
                snprintf(err, errlen, "out of memory for %d canary records", n);
                rc = -1;
            }
            for (int r = 0; res->canary && r < n; r++)
                res->canary[r] = c.dig[r].canary;
        }
    }
    if (rc != 0 && stop_requested()) {
        rc = RUN_INTERRUPTED;
        snprintf(err, errlen, "interrupted");
    }
    if (c.dig)
        for (int r = 0; r < n; r++)
            digest_free(cfg, &c.dig[r]);
    free(c.dig);
    free(c.errs);
    if (rc != 0)
        run_result_free(res);
    return rc;
}

void run_result_free(run_result *res)
{
    if (res->stage)
        for (int s = 0; s < res->nstages; s++)
            free(res->stage[s].batch_counts);
    if (res->gpu)
        for (int g = 0; g < res->ngpus; g++)
            free(res->gpu[g].busy_ms);
    if (res->cdf_stage)
        for (int s = 0; s < res->nstages; s++)
            hist_free(&res->cdf_stage[s]);
    hist_free(&res->cdf_e2e);
    free(res->cdf_stage);
    free(res->rep_e2e);
    free(res->rep_response);
    free(res->rep_stage);
    free(res->canary);
    res->canary = NULL;
    free(res->series);
    free(res->stage);
    free(res->gpu);
    res->stage = NULL;
    res->gpu = NULL;
    res->cdf_stage = NULL;
    res->rep_e2e = res->rep_response = res->rep_stage = NULL;
    res->series = NULL;
}
