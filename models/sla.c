/* sla.c — the SLA proposal: baseline, per-stage budget, GPU search per
 * stricter target, Markdown. See sla.h.
 *
 * It must never run a GPU count twice, never change the scenario beyond
 * cluster.gpus, and never write anywhere but the FILE sla_markdown is given. */
#include "models/sla.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const stats_ci *sla_lookup(const run_result *r, const char *metric, double q)
{
    const lat_est *e = NULL;
    if (strcmp(metric, "frame") == 0)
        e = &r->e2e;
    else if (strcmp(metric, "response") == 0)
        e = &r->response;
    else
        for (int s = 0; s < r->cfg->nstages; s++)
            if (strcmp(metric, r->cfg->stages[s].name) == 0)
                e = &r->stage[s].sojourn;
    if (!e)
        return NULL;
    return q == 50 ? &e->p50 : q == 90 ? &e->p90 : q == 95 ? &e->p95 : q == 99 ? &e->p99
         : q == 99.9 ? &e->p999 : NULL;
}

int sla_default_targets(const scenario_cfg *c, frontier_target *t, int max)
{
    frontier_target base[CFG_MAX_SLA];
    int nb = 0;
    for (int k = 0; k < c->nsla && nb < CFG_MAX_SLA; k++, nb++) {
        snprintf(base[nb].metric, sizeof base[nb].metric, "%s", c->sla[k].metric);
        base[nb].percentile = c->sla[k].percentile;
        base[nb].ms = c->sla[k].ms;
    }
    if (nb == 0)
        nb = frontier_default_targets(base, CFG_MAX_SLA);
    static const double ladder[] = { 1.0, 2.0 / 3.0, 0.5 };
    int n = 0;
    for (int k = 0; k < nb; k++)
        for (int j = 0; j < 3 && n < max; j++) {
            t[n] = base[k];
            if (j)
                t[n].ms = fmax(1.0, round(base[k].ms * ladder[j]));
            n++;
        }
    return n;
}

void sla_opts_default(sla_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_drop_rate = 0.01;
}

typedef struct {
    const char *path;
    const scn_override *ov;
    size_t nov;
    const sla_opts *o;
    const frontier_target *t;
    int nt, max;
    bool *done;                  /* [g] probed */
    double *val, *hi;            /* [g * nt + k] */
    double *cost, *drop;         /* [g] */
    double max_drop;
    int runs;
} search;

static void record(search *sr, int g, const run_result *r)
{
    sr->done[g] = true;
    sr->cost[g] = r->cost_per_stream_hour;
    sr->drop[g] = r->drop_rate.mean;
    for (int k = 0; k < sr->nt; k++) {
        const stats_ci *v = sla_lookup(r, sr->t[k].metric, sr->t[k].percentile);
        size_t i = (size_t)g * (size_t)sr->nt + (size_t)k;
        sr->val[i] = v->mean;
        sr->hi[i] = isfinite(v->hi) ? v->hi : v->mean;
    }
}

static int probe(search *sr, int g, char *err, size_t errlen)
{
    if (sr->done[g])
        return 0;
    scn_override ov[64 + 1];
    size_t n = sr->nov < 64 ? sr->nov : 64;
    if (n)
        memcpy(ov, sr->ov, n * sizeof *ov);
    char gs[32];
    snprintf(gs, sizeof gs, "%d", g);
    ov[n].key = "cluster.gpus";
    ov[n].value = gs;
    scenario_cfg c;
    char e[2048];
    if (scn_load_ex(sr->path, ov, n + 1, &c, e, sizeof e) != 0) {
        snprintf(err, errlen, "%d GPUs: %s", g, e);
        return -2;
    }
    run_opts ro = { sr->o ? sr->o->threads : 0, NULL, NULL, NULL };
    run_result r;
    if (run_scenario(&c, &ro, &r, e, sizeof e) != 0) {
        snprintf(err, errlen, "%d GPUs: %s", g, e);
        cfg_free(&c);
        return -1;
    }
    record(sr, g, &r);
    run_result_free(&r);
    cfg_free(&c);
    sr->runs++;
    if (sr->o && sr->o->probe)
        sr->o->probe(sr->o->pctx, g, sr->runs);
    return 0;
}

static bool met(const search *sr, int g, int k)
{
    return sr->hi[(size_t)g * (size_t)sr->nt + (size_t)k] <= sr->t[k].ms
        && !(sr->max_drop >= 0 && sr->drop[g] > sr->max_drop);
}

/* The fewest GPUs >= g0 meeting target k (0: none up to max). */
static int find(search *sr, int g0, int k, char *err, size_t errlen, int *rc)
{
    if (met(sr, g0, k))
        return g0;
    int lo = g0, hit = 0;
    for (int step = 1; !hit; step *= 2) {
        int g = g0 + step;
        if (g > sr->max) {
            if (lo >= sr->max)
                return 0;
            g = sr->max;
        }
        if ((*rc = probe(sr, g, err, errlen)) != 0)
            return 0;
        if (met(sr, g, k))
            hit = g;
        else if (g == sr->max)
            return 0;
        else
            lo = g;
    }
    while (hit - lo > 1) {
        int mid = lo + (hit - lo) / 2;
        if ((*rc = probe(sr, mid, err, errlen)) != 0)
            return 0;
        if (met(sr, mid, k))
            hit = mid;
        else
            lo = mid;
    }
    return hit;
}

int sla_search(const char *path, const scn_override *ov, size_t nov,
               const frontier_target *targets, int ntargets, const sla_opts *o,
               sla_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    char e[2048];
    if (nov > 64) {
        snprintf(err, errlen, "at most 64 overrides");
        return -2;
    }
    if (scn_load_ex(path, ov, nov, &res->cfg, e, sizeof e) != 0) {
        snprintf(err, errlen, "%s", e);
        return -2;
    }
    const scenario_cfg *c = &res->cfg;
    frontier_target t[SLA_MAX_TARGETS];
    int nt = targets ? (ntargets < SLA_MAX_TARGETS ? ntargets : SLA_MAX_TARGETS)
                     : sla_default_targets(c, t, SLA_MAX_TARGETS);
    if (targets)
        memcpy(t, targets, (size_t)nt * sizeof *t);
    int g0 = c->cluster.gpus;
    const char *why = g0 < 1 ? "has no GPU cluster (cluster.gpus)"
                    : c->cluster.npools > 0 ? "splits its GPUs into pools, which fix their "
                                              "GPU ranges; the GPU search needs one shared cluster"
                    : NULL;
    if (!why && nt < 1)
        why = "gives no target";
    for (int k = 0; !why && k < nt; k++) {
        double q = t[k].percentile;
        bool known = !strcmp(t[k].metric, "frame") || !strcmp(t[k].metric, "response");
        for (int s = 0; s < c->nstages && !known; s++)
            known = !strcmp(t[k].metric, c->stages[s].name);
        if (!known || !(q == 50 || q == 90 || q == 95 || q == 99 || q == 99.9)) {
            char ts[160];
            frontier_target_str(&t[k], ts, sizeof ts);
            snprintf(err, errlen, "%s: target \"%s\": the metric must be frame, response or a "
                                  "stage, the percentile 50, 90, 95, 99 or 99.9", path, ts);
            cfg_free(&res->cfg);
            return -2;
        }
    }
    if (why) {
        snprintf(err, errlen, "%s %s", path, why);
        cfg_free(&res->cfg);
        return -2;
    }
    int max = o && o->max_gpus > 0 ? o->max_gpus : (4 * g0 > g0 + 16 ? 4 * g0 : g0 + 16);
    if (max < g0)
        max = g0;
    res->max_gpus = max;
    sla_opts dflt;
    sla_opts_default(&dflt);
    res->max_drop_rate = (o ? o : &dflt)->max_drop_rate;
    search sr = { path, ov, nov, o, t, nt, max,
                  calloc((size_t)max + 1, sizeof(bool)),
                  calloc(((size_t)max + 1) * (size_t)nt, sizeof(double)),
                  calloc(((size_t)max + 1) * (size_t)nt, sizeof(double)),
                  calloc((size_t)max + 1, sizeof(double)),
                  calloc((size_t)max + 1, sizeof(double)), res->max_drop_rate, 0 };
    int rc = 0;
    if (!sr.done || !sr.val || !sr.hi || !sr.cost || !sr.drop) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    run_opts ro = { o ? o->threads : 0, NULL, NULL, NULL };
    if (rc == 0 && run_scenario(c, &ro, &res->base, e, sizeof e) != 0) {
        snprintf(err, errlen, "%s", e);
        rc = -1;
    }
    if (rc == 0) {
        sr.runs = 1;
        record(&sr, g0, &res->base);
        for (int k = 0; k < nt && rc == 0; k++) {
            sla_answer *a = &res->answer[k];
            a->target = t[k];
            a->gpus = find(&sr, g0, k, err, errlen, &rc);
            int at = a->gpus;
            if (!at) {                          /* the best count probed */
                at = g0;
                for (int g = g0; g <= max; g++)
                    if (sr.done[g] && sr.hi[(size_t)g * nt + k] < sr.hi[(size_t)at * nt + k])
                        at = g;
                a->best_gpus = at;
            }
            a->value = sr.val[(size_t)at * nt + k];
            a->hi = sr.hi[(size_t)at * nt + k];
            a->drop_rate = sr.drop[at];
            a->cost_per_stream_hour = a->gpus ? sr.cost[a->gpus] : NAN;
        }
        res->nanswer = nt;
        res->runs = sr.runs;
    }
    free(sr.done);
    free(sr.val);
    free(sr.hi);
    free(sr.cost);
    free(sr.drop);
    if (rc != 0) {
        if (res->base.cfg)
            run_result_free(&res->base);
        cfg_free(&res->cfg);
        memset(res, 0, sizeof *res);
    }
    return rc;
}

void sla_free(sla_result *res)
{
    if (res->base.cfg)
        run_result_free(&res->base);
    cfg_free(&res->cfg);
    memset(res, 0, sizeof *res);
}

/* ---- Markdown ------------------------------------------------------------------ */

static void ci_md(FILE *f, const stats_ci *v)
{
    if (isfinite(v->lo))
        fprintf(f, " %.1f [%.1f, %.1f] |", v->mean, v->lo, v->hi);
    else
        fprintf(f, " %.1f |", v->mean);
}

static void pct_label(char *b, size_t n, double q)
{
    snprintf(b, n, "p%g", q);
}

static void money(char *b, size_t n, double usd)
{
    if (isfinite(usd))
        snprintf(b, n, "$%.4f", usd);
    else
        snprintf(b, n, "-");
}

void sla_markdown(FILE *f, const sla_result *res)
{
    const scenario_cfg *c = &res->cfg;
    const run_result *r = &res->base;
    const workload_cfg *w = &c->workload;
    char cost[32];
    money(cost, sizeof cost, r->cost_per_stream_hour);
    fprintf(f, "# SLA proposal: %s\n\n", c->name);
    fprintf(f, "Scenario `%s`: ", c->path[0] ? c->path : c->name);
    if (w->arrival == ARRIVAL_PERIODIC)
        fprintf(f, "%d streams at %g FPS ", w->streams, w->fps);
    else
        fprintf(f, "Poisson arrivals at %g Hz ", w->rate_hz);
    fprintf(f, "on %d x %s GPU%s at $%.2f per GPU-hour: **%s per stream-hour**.\n",
            c->cluster.gpus, c->cluster.gpu_type[0] ? c->cluster.gpu_type : "", 
            c->cluster.gpus == 1 ? "" : "s", c->cluster.gpu_hour_usd, cost);
    fprintf(f, "Simulated %d replication%s x %g s after %.3g s warm-up, seed %llu; "
               "[lo, hi] is the 95 %% confidence interval. A target counts as met when the "
               "interval's upper end is within it",
            r->nrep, r->nrep == 1 ? "" : "s", c->duration_s, r->warmup_ms / 1000.0,
            (unsigned long long)c->seed);
    if (res->max_drop_rate >= 0)
        fprintf(f, " and no more than %g %% of the frames are dropped", 100.0 * res->max_drop_rate);
    fprintf(f, ".\n\n");

    fprintf(f, "## What this configuration achieves (ms)\n\n");
    fprintf(f, "| latency | p50 | p95 | p99 | p99.9 |\n|---|---|---|---|---|\n");
    fprintf(f, "| frame (end to end) |");
    ci_md(f, &r->e2e.p50);
    ci_md(f, &r->e2e.p95);
    ci_md(f, &r->e2e.p99);
    ci_md(f, &r->e2e.p999);
    fputc('\n', f);
    if (r->answered > 0) {
        fprintf(f, "| response (query to answer) |");
        ci_md(f, &r->response.p50);
        ci_md(f, &r->response.p95);
        ci_md(f, &r->response.p99);
        ci_md(f, &r->response.p999);
        fputc('\n', f);
    }
    fprintf(f, "\nFrames dropped: %.3f %%", 100.0 * r->drop_rate.mean);
    if (isfinite(r->drop_rate.hi))
        fprintf(f, " [%.3f, %.3f]", 100.0 * fmax(0.0, r->drop_rate.lo), 100.0 * r->drop_rate.hi);
    fprintf(f, ".\n");
    if (r->nsla > 0) {
        fprintf(f, "\n| SLA line | simulated | verdict |\n|---|---|---|\n");
        for (int k = 0; k < r->nsla; k++) {
            const sla_verdict *v = &r->sla[k];
            char p[16];
            pct_label(p, sizeof p, v->line->percentile);
            fprintf(f, "| %s %s <= %g ms |", v->line->metric, p, v->line->ms);
            ci_md(f, &v->value);
            fprintf(f, " %s |\n", v->pass ? "PASS" : "FAIL");
        }
    }

    fprintf(f, "\n## Where the frame budget goes (ms)\n\n");
    fprintf(f, "| stage | budget | p50 | p95 | p99 | p99 vs budget |\n"
               "|---|---|---|---|---|---|\n");
    double sum99 = 0;
    for (int s = 0; s < c->nstages; s++) {
        if (c->stages[s].path != PATH_FRAME)
            continue;
        const lat_est *e = &r->stage[s].sojourn;
        double b = c->stages[s].budget_ms;
        sum99 += e->p99.mean;
        fprintf(f, "| %s | ", c->stages[s].name);
        if (b > 0)
            fprintf(f, "%.2f", b);
        else
            fprintf(f, "-");
        fprintf(f, " | %.2f | %.2f | %.2f | ", e->p50.mean, e->p95.mean, e->p99.mean);
        if (b > 0)
            fprintf(f, "%s (%+.0f %%)", e->p99.mean <= b ? "within" : "**over**",
                    100.0 * (e->p99.mean - b) / b);
        else
            fprintf(f, "-");
        fprintf(f, " |\n");
    }
    fprintf(f, "| sum of stage p99s | | | | %.2f | |\n", sum99);
    fprintf(f, "| frame, end to end | | %.2f | %.2f | %.2f | |\n\n", r->e2e.p50.mean,
            r->e2e.p95.mean, r->e2e.p99.mean);
    fprintf(f, "Tails do not add: the stage p99s sum to %.1f ms while the frame p99 is %.1f ms.\n",
            sum99, r->e2e.p99.mean);

    fprintf(f, "\n## Stricter targets and what they cost\n\n");
    fprintf(f, "GPU counts searched upward from %d to at most %d (%d run%s in all).\n\n",
            c->cluster.gpus, res->max_gpus, res->runs, res->runs == 1 ? "" : "s");
    fprintf(f, "| target | needs | cost per stream-hour | vs now | simulated there (CI upper end) "
               "| frames dropped |\n|---|---|---|---|---|---|\n");
    for (int k = 0; k < res->nanswer; k++) {
        const sla_answer *a = &res->answer[k];
        char ts[160], p[16];
        pct_label(p, sizeof p, a->target.percentile);
        snprintf(ts, sizeof ts, "%s %s <= %g ms", a->target.metric, p, a->target.ms);
        if (a->gpus) {
            money(cost, sizeof cost, a->cost_per_stream_hour);
            char vs[32] = "-";
            if (a->gpus == c->cluster.gpus)
                snprintf(vs, sizeof vs, "as now");
            else if (isfinite(r->cost_per_stream_hour) && r->cost_per_stream_hour > 0)
                snprintf(vs, sizeof vs, "%+.0f %%",
                         100.0 * (a->cost_per_stream_hour / r->cost_per_stream_hour - 1));
            fprintf(f, "| %s | %d GPU%s | %s | %s | %.1f (%.1f) | %.2f %% |\n", ts, a->gpus,
                    a->gpus == 1 ? "" : "s", cost, vs, a->value, a->hi, 100.0 * a->drop_rate);
        } else {
            fprintf(f, "| %s | not met with up to %d GPUs | - | - | best %.1f (%.1f) at %d GPUs "
                       "| %.2f %% |\n", ts, res->max_gpus, a->value, a->hi, a->best_gpus,
                    100.0 * a->drop_rate);
        }
    }
    fprintf(f, "\nIn one line each:\n\n");
    for (int k = 0; k < res->nanswer; k++) {
        const sla_answer *a = &res->answer[k];
        char p[16];
        pct_label(p, sizeof p, a->target.percentile);
        money(cost, sizeof cost, a->cost_per_stream_hour);
        if (a->gpus == c->cluster.gpus)
            fprintf(f, "- %s %s < %g ms at %s/stream-hour (as configured)\n", a->target.metric,
                    p, a->target.ms, cost);
        else if (a->gpus)
            fprintf(f, "- %s %s < %g ms needs %d GPUs: %s/stream-hour\n", a->target.metric, p,
                    a->target.ms, a->gpus, cost);
        else
            fprintf(f, "- %s %s < %g ms: not reachable by adding GPUs (up to %d); look at "
                       "batching, degradation or faster stages (`vlsim whatif`)\n",
                    a->target.metric, p, a->target.ms, res->max_gpus);
    }
    fprintf(f, "\nAssumptions: the load stays as simulated; more GPUs never make a "
               "percentile worse (the search relies on it); cost is GPU-hours only.\n");
}
