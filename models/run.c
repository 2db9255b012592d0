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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/pipeline.h"
#include "sim/rep.h"

/* The numbers kept from one latency histogram of one replication. */
typedef struct {
    double mean, p50, p90, p95, p99, p999, max, sum;
} lat_digest;

typedef struct {
    lat_digest wait, service, sojourn;
    uint64_t arrivals, completed, drop_queue_full, drop_timeout;
    double drop_rate, utilization, mean_queue_len, p_wait;
    uint64_t le[CFG_MAX_BUCKETS + 1];
} stage_digest;

typedef struct {
    stage_digest *stage;
    lat_digest e2e;
    uint64_t arrivals, completed, dropped, events, peak_in_flight;
    uint64_t e2e_le[CFG_MAX_BUCKETS + 1];
    double drop_rate;
} rep_digest;

typedef struct {
    const scenario_cfg *cfg;
    double warmup_ms;
    rep_digest *dig;
    char (*errs)[256];           /* per replication */
} run_ctx;

static lat_digest digest_hist(const hist_t *h)
{
    lat_digest d = { hist_mean(h), hist_quantile(h, 0.50), hist_quantile(h, 0.90),
                     hist_quantile(h, 0.95), hist_quantile(h, 0.99), hist_quantile(h, 0.999),
                     h->n ? h->max : 0.0, h->sum };
    return d;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static int run_one(void *vctx, int r)
{
    run_ctx *c = vctx;
    rep_stats rs;
    if (pipe_stats_init(&rs, c->cfg) != 0) {
        snprintf(c->errs[r], sizeof c->errs[r], "out of memory for replication %d", r);
        return -1;
    }
    int rc = pipe_run(c->cfg, (uint32_t)r, c->warmup_ms, NULL, &rs, c->errs[r], sizeof c->errs[r]);
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
            sd->drop_rate = ratio(st->drop_queue_full + st->drop_timeout, st->arrivals);
            sd->utilization = st->utilization;
            sd->mean_queue_len = st->mean_queue_len;
            sd->p_wait = ratio(st->waited, st->completed);
            memcpy(sd->le, st->le, sizeof sd->le);
        }
        d->e2e = digest_hist(&rs.e2e);
        d->arrivals = rs.arrivals;
        d->completed = rs.completed;
        d->dropped = rs.dropped;
        d->drop_rate = ratio(rs.dropped, rs.arrivals);
        d->events = rs.events;
        d->peak_in_flight = rs.peak_in_flight;
        memcpy(d->e2e_le, rs.e2e_le, sizeof d->e2e_le);
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

static void reduce(const scenario_cfg *cfg, const rep_digest *dig, int n, run_result *res)
{
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
            for (int k = 0; k <= CFG_MAX_BUCKETS; k++)
                se->le[k] += sd->le[k];
            col[4 * r] = sd->drop_rate;
            col[4 * r + 1] = sd->utilization;
            col[4 * r + 2] = sd->mean_queue_len;
            col[4 * r + 3] = sd->p_wait;
        }
        se->drop_rate = stats_t_interval_strided(col, (size_t)n, 4, 0.95);
        se->utilization = stats_t_interval_strided(col + 1, (size_t)n, 4, 0.95);
        se->mean_queue_len = stats_t_interval_strided(col + 2, (size_t)n, 4, 0.95);
        se->p_wait = stats_t_interval_strided(col + 3, (size_t)n, 4, 0.95);
    }
    res->e2e_sum = 0.0;
    for (int r = 0; r < n; r++) {
        tmp[r] = dig[r].e2e;
        res->e2e_sum += tmp[r].sum;
        res->arrivals += dig[r].arrivals;
        res->completed += dig[r].completed;
        res->dropped += dig[r].dropped;
        res->events += dig[r].events;
        if (dig[r].peak_in_flight > res->peak_in_flight)
            res->peak_in_flight = dig[r].peak_in_flight;
        for (int k = 0; k <= CFG_MAX_BUCKETS; k++)
            res->e2e_le[k] += dig[r].e2e_le[k];
        col[r] = dig[r].drop_rate;
    }
    res->e2e = estimate(tmp, n);
    res->drop_rate = stats_t_interval(col, (size_t)n, 0.95);
    free(tmp);
    free(col);
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
    const workload_cfg *w = &cfg->workload;
    double rate_hz = w->arrival == ARRIVAL_POISSON ? w->rate_hz : w->streams * w->fps;
    const stage_cfg *st = &cfg->stages[s];
    return rate_hz * dist_mean(&st->service) / 1000.0 / st->servers;
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
        if (!res->mser.settled)
            warn(res, "warmup: auto: MSER-5 found no steady state in the %.0f s pilot run "
                      "(the best truncation is batch %zu of %zu, the most MSER may cut); "
                      "lengthen duration_s or set warmup_s",
                 cfg->duration_s, res->mser.d, res->mser.k);
    }
    pipe_stats_free(&rs);
    mser_free(&m);
    return rc;
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
    res->stage = calloc((size_t)cfg->nstages, sizeof *res->stage);
    run_ctx c = { cfg, 0.0, calloc((size_t)n, sizeof(rep_digest)), calloc((size_t)n, 256) };
    int rc = (!res->stage || !c.dig || !c.errs) ? -1 : 0;
    for (int r = 0; r < n && rc == 0; r++)
        if (!(c.dig[r].stage = calloc((size_t)cfg->nstages, sizeof(stage_digest))))
            rc = -1;
    if (rc != 0)
        snprintf(err, errlen, "out of memory for %d replications", n);

    for (int s = 0; rc == 0 && s < cfg->nstages; s++) {
        double rho = run_offered_load(cfg, s);
        if (rho >= 1.0 && cfg->stages[s].capacity < 0 && cfg->stages[s].timeout_ms <= 0)
            warn(res, "stage %s: offered load is %.3g x its capacity (%.0f servers) with an "
                      "unbounded queue: the queue grows without limit and the results "
                      "describe a transient, not a steady state",
                 cfg->stages[s].name, rho, (double)cfg->stages[s].servers);
    }
    if (rc == 0 && cfg->warmup_auto)
        rc = pick_warmup(cfg, res, err, errlen);
    if (rc == 0) {
        c.warmup_ms = res->warmup_ms;
        int threads = opts && opts->threads > 0 ? opts->threads : rep_default_threads();
        rc = rep_run_all(n, threads, run_one, &c, opts ? opts->progress : NULL,
                         opts ? opts->pctx : NULL);
        if (rc != 0) {
            int bad = 0;
            while (bad < n - 1 && !c.errs[bad][0])
                bad++;
            snprintf(err, errlen, "replication %d: %s", bad,
                     c.errs[bad][0] ? c.errs[bad] : "could not start worker threads");
        } else {
            reduce(cfg, c.dig, n, res);
        }
    }
    if (c.dig)
        for (int r = 0; r < n; r++)
            free(c.dig[r].stage);
    free(c.dig);
    free(c.errs);
    if (rc != 0)
        run_result_free(res);
    return rc;
}

void run_result_free(run_result *res)
{
    free(res->stage);
    res->stage = NULL;
}
