/* compare.c — paired (common random numbers) against unpaired comparison of
 * two runs. See compare.h.
 *
 * It only reads run results and writes to the FILE it is given: it must
 * never change a run's configuration beyond what cmp_align documents, and
 * never pair replications with different numbers. */
#include "models/compare.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/jsonw.h"

const char *const cmp_stat_name[CMP_NSTAT] = { "mean", "p50", "p90", "p95", "p99", "p99.9" };

static double stat_of(const rep_lat *v, int k)
{
    switch (k) {
    case 0: return v->mean;
    case 1: return v->p50;
    case 2: return v->p90;
    case 3: return v->p95;
    case 4: return v->p99;
    default: return v->p999;
    }
}

int cmp_align(const scenario_cfg *a, scenario_cfg *b, bool shadow)
{
    int changed = 0;
    if (b->seed != a->seed)
        changed |= CMP_SEED;
    if (b->replications != a->replications)
        changed |= CMP_REPS;
    if (b->duration_s != a->duration_s)
        changed |= CMP_DURATION;
    if (b->warmup_auto != a->warmup_auto || (!a->warmup_auto && b->warmup_s != a->warmup_s))
        changed |= CMP_WARMUP;
    b->seed = a->seed;
    b->replications = a->replications;
    b->duration_s = a->duration_s;
    b->warmup_s = a->warmup_s;
    b->warmup_auto = a->warmup_auto;
    if (shadow) {
        if (memcmp(&b->workload, &a->workload, sizeof a->workload) != 0)
            changed |= CMP_WORKLOAD;
        b->workload = a->workload;
    }
    return changed;
}

int cmp_run(const scenario_cfg *a, scenario_cfg *b, bool shadow, const run_opts *opts,
            run_result *ra, run_result *rb, char *err, size_t errlen)
{
    cmp_align(a, b, shadow);
    char e[1024];
    if (run_scenario(a, opts, ra, e, sizeof e) != 0) {
        snprintf(err, errlen, "A: %s", e);
        return -1;
    }
    b->warmup_auto = false;                 /* the warm-up A used, auto or not */
    b->warmup_s = ra->warmup_ms / 1000.0;
    if (run_scenario(b, opts, rb, e, sizeof e) != 0) {
        snprintf(err, errlen, "B: %s", e);
        run_result_free(ra);
        return -1;
    }
    return 0;
}

/* Fill m from the per-replication values va[r * sa] and vb[r * sb]. */
static int metric(cmp_metric *m, const char *name, const rep_lat *va, size_t sa,
                  const rep_lat *vb, size_t sb, int n)
{
    snprintf(m->name, sizeof m->name, "%s", name);
    m->present = true;
    double *x = malloc((size_t)n * 3 * sizeof *x);
    if (!x)
        return -1;
    double *y = x + n, *d = y + n;
    for (int k = 0; k < CMP_NSTAT; k++) {
        for (int r = 0; r < n; r++) {
            x[r] = stat_of(&va[(size_t)r * sa], k);
            y[r] = stat_of(&vb[(size_t)r * sb], k);
            d[r] = y[r] - x[r];
        }
        cmp_stat *s = &m->st[k];
        s->a = stats_t_interval(x, (size_t)n, 0.95).mean;
        s->b = stats_t_interval(y, (size_t)n, 0.95).mean;
        s->paired = stats_t_interval(d, (size_t)n, 0.95);
        s->unpaired = stats_welch_diff(x, (size_t)n, y, (size_t)n, 0.95);
    }
    free(x);
    return 0;
}

int cmp_compute(const run_result *a, const run_result *b, bool shadow, cmp_result *out,
                char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (a->nrep != b->nrep) {
        snprintf(err, errlen, "A has %d replications and B %d: pairs need the same", a->nrep,
                 b->nrep);
        return -1;
    }
    int n = a->nrep;
    const scenario_cfg *ca = a->cfg, *cb = b->cfg;
    out->nrep = n;
    out->seed = ca->seed;
    out->shadow = shadow;
    out->stage = calloc((size_t)ca->nstages, sizeof *out->stage);
    if (!out->stage || metric(&out->frame, "frame_ms", a->rep_e2e, 1, b->rep_e2e, 1, n) != 0
        || metric(&out->response, "response_ms", a->rep_response, 1, b->rep_response, 1, n) != 0)
        goto oom;
    out->response.present = a->answered > 0 && b->answered > 0;
    for (int s = 0; s < ca->nstages; s++)
        for (int t = 0; t < cb->nstages; t++)
            if (strcmp(ca->stages[s].name, cb->stages[t].name) == 0) {
                if (metric(&out->stage[out->nstage++], ca->stages[s].name, a->rep_stage + s,
                           (size_t)ca->nstages, b->rep_stage + t, (size_t)cb->nstages, n) != 0)
                    goto oom;
                break;
            }
    out->cost_a = a->cost_per_stream_hour;
    out->cost_b = b->cost_per_stream_hour;
    out->cost_shadow = NAN;
    if (shadow && ca->workload.arrival == ARRIVAL_PERIODIC && ca->workload.streams > 0)
        out->cost_shadow = (ca->cluster.gpu_hour_usd * ca->cluster.gpus
                            + cb->cluster.gpu_hour_usd * cb->cluster.gpus)
                         / ca->workload.streams;
    return 0;
oom:
    cmp_free(out);
    snprintf(err, errlen, "out of memory comparing %d replications", n);
    return -1;
}

void cmp_free(cmp_result *c)
{
    free(c->stage);
    c->stage = NULL;
    c->nstage = 0;
}

double cmp_width_ratio(const cmp_stat *s)
{
    double wp = s->paired.hi - s->paired.lo, wu = s->unpaired.hi - s->unpaired.lo;
    if (!isfinite(wp) || !isfinite(wu))
        return NAN;
    if (wp == 0)
        return wu == 0 ? NAN : INFINITY;
    return wu / wp;
}

/* ---- writers ---------------------------------------------------------------- */

static void ratio_str(char *b, size_t n, double r)
{
    if (isnan(r))
        snprintf(b, n, "-");
    else if (isinf(r))
        snprintf(b, n, "exact");
    else
        snprintf(b, n, "%.1fx", r);
}

static void ci_str(char *b, size_t n, const stats_ci *c)
{
    if (isfinite(c->lo))
        snprintf(b, n, "[%+.3f, %+.3f]", c->lo, c->hi);
    else
        snprintf(b, n, "-");
}

static void table_rows(FILE *f, const cmp_metric *m, const int *stats, int nstats)
{
    for (int j = 0; j < nstats; j++) {
        const cmp_stat *s = &m->st[stats[j]];
        char pc[64], uc[64], r[32];
        ci_str(pc, sizeof pc, &s->paired);
        ci_str(uc, sizeof uc, &s->unpaired);
        ratio_str(r, sizeof r, cmp_width_ratio(s));
        fprintf(f, "  %-14s %-6s %10.3f %10.3f %+9.3f  %-24s %-24s %8s\n", j ? "" : m->name,
                cmp_stat_name[stats[j]], s->a, s->b, s->paired.mean, pc, uc, r);
    }
}

static void cost_str(char *b, size_t n, double c)
{
    if (isfinite(c))
        snprintf(b, n, "$%.4f", c);
    else
        snprintf(b, n, "-");
}

void cmp_table(FILE *f, const cmp_result *c, const char *name_a, const char *name_b)
{
    fprintf(f, "A: %s\nB: %s\n", name_a, name_b);
    fprintf(f, "same-frame replay: %d replication%s of each, seed %llu, common random numbers%s\n\n",
            c->nrep, c->nrep == 1 ? "" : "s", (unsigned long long)c->seed,
            c->shadow ? "; shadow: B receives a copy of A's traffic" : "");
    fprintf(f, "  %-14s %-6s %10s %10s %9s  %-24s %-24s %8s\n", "latency (ms)", "stat", "A", "B",
            "B - A", "paired 95% CI", "unpaired (Welch) 95% CI", "tighter");
    static const int all[] = { 0, 1, 2, 3, 4, 5 }, few[] = { 0, 3, 4 };
    table_rows(f, &c->frame, all, CMP_NSTAT);
    if (c->response.present)
        table_rows(f, &c->response, all, CMP_NSTAT);
    for (int s = 0; s < c->nstage; s++)
        table_rows(f, &c->stage[s], few, 3);
    fprintf(f, "  (stages: sojourn; every statistic of every stage is in --json)\n");
    fprintf(f, "  tighter: the unpaired interval's width over the paired one's\n\n");
    char a[32], b[32], sh[32];
    cost_str(a, sizeof a, c->cost_a);
    cost_str(b, sizeof b, c->cost_b);
    fprintf(f, "  cost per stream-hour: A %s, B %s", a, b);
    if (c->shadow) {
        cost_str(sh, sizeof sh, c->cost_shadow);
        fprintf(f, "; while shadowing (A serves, B mirrors): %s", sh);
        if (isfinite(c->cost_a) && c->cost_a > 0 && isfinite(c->cost_shadow))
            fprintf(f, " (%.2f x A)", c->cost_shadow / c->cost_a);
    }
    fputc('\n', f);
}

static void json_metric(jw_t *w, const cmp_metric *m, bool paired)
{
    if (!m->present) {
        jw_num(w, m->name, NAN);
        return;
    }
    jw_obj_begin(w, m->name);
    for (int k = 0; k < CMP_NSTAT; k++) {
        const cmp_stat *s = &m->st[k];
        const stats_ci *ci = paired ? &s->paired : &s->unpaired;
        jw_obj_begin(w, cmp_stat_name[k]);
        jw_num(w, "diff", ci->mean);
        jw_pair(w, "ci95", ci->lo, ci->hi);
        jw_num(w, "a", s->a);
        jw_num(w, "b", s->b);
        jw_obj_end(w);
    }
    jw_obj_end(w);
}

static void json_ratios(jw_t *w, const cmp_metric *m)
{
    if (!m->present) {
        jw_num(w, m->name, NAN);
        return;
    }
    jw_obj_begin(w, m->name);
    for (int k = 0; k < CMP_NSTAT; k++) {
        double r = cmp_width_ratio(&m->st[k]);
        jw_num(w, cmp_stat_name[k], isinf(r) ? NAN : r);
    }
    jw_obj_end(w);
}

void cmp_json(FILE *f, const cmp_result *c, const char *name_a, const char *name_b)
{
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "a", name_a);
    jw_str(&w, "b", name_b);
    jw_int(&w, "replications", c->nrep);
    jw_int(&w, "seed", (long long)c->seed);
    jw_bool(&w, "shadow", c->shadow);
    for (int p = 1; p >= 0; p--) {
        jw_obj_begin(&w, p ? "paired" : "unpaired");
        json_metric(&w, &c->frame, p);
        json_metric(&w, &c->response, p);
        jw_obj_end(&w);
    }
    jw_obj_begin(&w, "width_ratio");
    json_ratios(&w, &c->frame);
    json_ratios(&w, &c->response);
    jw_obj_end(&w);
    jw_obj_begin(&w, "stages");
    for (int s = 0; s < c->nstage; s++) {
        jw_obj_begin(&w, c->stage[s].name);
        cmp_metric m = c->stage[s];
        snprintf(m.name, sizeof m.name, "sojourn_ms");
        jw_obj_begin(&w, "paired");
        json_metric(&w, &m, true);
        jw_obj_end(&w);
        jw_obj_begin(&w, "unpaired");
        json_metric(&w, &m, false);
        jw_obj_end(&w);
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_obj_begin(&w, "cost_per_stream_hour");
    jw_num(&w, "a", c->cost_a);
    jw_num(&w, "b", c->cost_b);
    jw_num(&w, "shadow", c->cost_shadow);
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_done(&w);
}
