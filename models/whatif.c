/* whatif.c — speedups of stages: Amdahl's prediction against re-simulation.
 * See whatif.h.
 *
 * It must never change the baseline it predicts from: each variant is a
 * fresh load of the scenario, sped up, run and freed. It never prints
 * except through its writers, which write only to the FILE they are given. */
#include "models/whatif.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/jsonw.h"

int whatif_parse(const char *spec, whatif_speedup *out, char *err, size_t errlen)
{
    const char *eq = spec ? strchr(spec, '=') : NULL;
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof out->stage) {
        snprintf(err, errlen, "--speedup: expected STAGE=FACTOR (e.g. encode=4), got \"%s\"",
                 spec ? spec : "");
        return -1;
    }
    char *end;
    errno = 0;
    double f = strtod(eq + 1, &end);
    if (errno || end == eq + 1 || *end || !isfinite(f) || f <= 0) {
        snprintf(err, errlen, "--speedup %s: the factor must be a number > 0, got \"%s\"", spec,
                 eq + 1);
        return -1;
    }
    memcpy(out->stage, spec, (size_t)(eq - spec));
    out->stage[eq - spec] = 0;
    out->factor = f;
    return 0;
}

void whatif_apply(stage_cfg *st, double factor)
{
    double k = 1.0 / factor;
    dist_scale(&st->service, k);
    if (st->gop.has_i_service)
        dist_scale(&st->gop.i_service, k);
    if (st->has_table)
        for (int i = 0; i < st->table.n; i++)
            st->table.ms[i] *= k;
    st->retransmit.rtt_ms *= k;
    st->cache_miss.ms_per_token *= k;
}

static int stage_index(const scenario_cfg *c, const char *name)
{
    for (int s = 0; s < c->nstages; s++)
        if (strcmp(c->stages[s].name, name) == 0)
            return s;
    return -1;
}

typedef struct {
    const char *path;
    const scn_override *ov;
    size_t nov;
    const whatif_opts *o;
    int done, total;
} runner;

/* Load, speed up row's stages, run; fill row's simulated numbers. */
static int run_variant(runner *rn, whatif_row *row, char *err, size_t errlen)
{
    scenario_cfg c;
    char e[2048];
    if (scn_load_ex(rn->path, rn->ov, rn->nov, &c, e, sizeof e) != 0) {
        snprintf(err, errlen, "%s", e);
        return -2;
    }
    for (int k = 0; k < row->nstages; k++)
        whatif_apply(&c.stages[row->stage[k]], row->factor[k]);
    run_opts ro = { rn->o ? rn->o->threads : 0, NULL, NULL, NULL };
    run_result r;
    int rc = run_scenario(&c, &ro, &r, e, sizeof e);
    if (rc != 0) {
        snprintf(err, errlen, "%s", e);
        cfg_free(&c);
        return -1;
    }
    row->m[0].sim_p99 = r.e2e.p99;
    row->m[0].sim_mean = r.e2e.mean;
    row->m[1].sim_p99 = r.response.p99;
    row->m[1].sim_mean = r.response.mean;
    run_result_free(&r);
    cfg_free(&c);
    rn->done++;
    if (rn->o && rn->o->progress)
        rn->o->progress(rn->o->pctx, rn->done, rn->total);
    return 0;
}

/* Amdahl's prediction for row from the baseline's stage shares. */
static void predict(const whatif_result *res, const run_result *base, whatif_row *row)
{
    const scenario_cfg *c = &res->cfg;
    for (int p = 0; p < 2; p++) {
        double sum99 = 0, summ = 0;
        for (int s = 0; s < c->nstages; s++)
            if ((int)c->stages[s].path == (p ? PATH_RESPONSE : PATH_FRAME)) {
                sum99 += base->stage[s].sojourn.p99.mean;
                summ += base->stage[s].sojourn.mean.mean;
            }
        whatif_metric *m = &row->m[p];
        double keep99 = 1, keepm = 1;
        m->share_p99 = m->share_mean = 0;
        m->touched = false;
        for (int k = 0; k < row->nstages; k++) {
            int s = row->stage[k];
            if ((int)c->stages[s].path != (p ? PATH_RESPONSE : PATH_FRAME))
                continue;
            m->touched = true;
            double f99 = sum99 > 0 ? base->stage[s].sojourn.p99.mean / sum99 : 0;
            double fm = summ > 0 ? base->stage[s].sojourn.mean.mean / summ : 0;
            m->share_p99 += f99;
            m->share_mean += fm;
            keep99 += -f99 + f99 / row->factor[k];
            keepm += -fm + fm / row->factor[k];
        }
        m->amdahl_p99 = res->base_p99[p].mean * keep99;
        m->amdahl_mean = res->base_mean[p].mean * keepm;
    }
}

/* Rank order: the path's p99 gain (base - simulated), frame path first. */
static double gain_of(const whatif_result *res, const whatif_row *r)
{
    int p = res->cfg.stages[r->stage[0]].path == PATH_RESPONSE;
    return res->base_p99[p].mean - r->m[p].sim_p99.mean;
}

static void rank_sort(const whatif_result *res, whatif_row *rows, int n)
{
    for (int i = 1; i < n; i++) {          /* insertion sort: stable, n = stages */
        whatif_row x = rows[i];
        int px = res->cfg.stages[x.stage[0]].path == PATH_RESPONSE;
        double gx = gain_of(res, &x);
        int j = i - 1;
        while (j >= 0) {
            int pj = res->cfg.stages[rows[j].stage[0]].path == PATH_RESPONSE;
            double gj = gain_of(res, &rows[j]);
            if (pj < px || (pj == px && gj >= gx))
                break;
            rows[j + 1] = rows[j];
            j--;
        }
        rows[j + 1] = x;
    }
}

int whatif_run(const char *path, const scn_override *ov, size_t nov, const whatif_speedup *sp,
               int nsp, const whatif_opts *o, whatif_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    char e[2048];
    if (nsp < 1 || nsp > WHATIF_MAX) {
        snprintf(err, errlen, "give 1 to %d --speedup STAGE=FACTOR", WHATIF_MAX);
        return -2;
    }
    if (scn_load_ex(path, ov, nov, &res->cfg, e, sizeof e) != 0) {
        snprintf(err, errlen, "%s", e);
        return -2;
    }
    const scenario_cfg *c = &res->cfg;
    int idx[WHATIF_MAX];
    for (int k = 0; k < nsp; k++) {
        idx[k] = stage_index(c, sp[k].stage);
        if (idx[k] < 0) {
            snprintf(err, errlen, "--speedup %s=%g: %s has no stage named \"%s\"", sp[k].stage,
                     sp[k].factor, path, sp[k].stage);
            goto bad;
        }
        for (int j = 0; j < k; j++)
            if (idx[j] == idx[k]) {
                snprintf(err, errlen, "--speedup: stage %s given twice", sp[k].stage);
                goto bad;
            }
    }
    double rf = o ? o->rank_factor : 0;
    res->nrows = nsp + (nsp > 1);
    res->rank_factor = rf;
    res->nrank = rf > 0 ? c->nstages : 0;
    res->rows = calloc((size_t)res->nrows, sizeof *res->rows);
    res->rank = res->nrank ? calloc((size_t)res->nrank, sizeof *res->rank) : NULL;
    if (!res->rows || (res->nrank && !res->rank)) {
        snprintf(err, errlen, "out of memory");
        whatif_free(res);
        return -1;
    }
    for (int k = 0; k < nsp; k++) {
        res->rows[k].nstages = 1;
        res->rows[k].stage[0] = idx[k];
        res->rows[k].factor[0] = sp[k].factor;
    }
    if (nsp > 1) {
        whatif_row *all = &res->rows[nsp];
        all->nstages = nsp;
        for (int k = 0; k < nsp; k++) {
            all->stage[k] = idx[k];
            all->factor[k] = sp[k].factor;
        }
    }
    for (int s = 0; s < res->nrank; s++) {
        res->rank[s].nstages = 1;
        res->rank[s].stage[0] = s;
        res->rank[s].factor[0] = rf;
    }

    runner rn = { path, ov, nov, o, 0, 1 + res->nrows + res->nrank };
    run_opts ro = { o ? o->threads : 0, NULL, NULL, NULL };
    run_result base;
    if (run_scenario(c, &ro, &base, e, sizeof e) != 0) {
        snprintf(err, errlen, "%s", e);
        whatif_free(res);
        return -1;
    }
    rn.done = 1;
    if (o && o->progress)
        o->progress(o->pctx, rn.done, rn.total);
    res->base_p99[0] = base.e2e.p99;
    res->base_mean[0] = base.e2e.mean;
    res->base_p99[1] = base.response.p99;
    res->base_mean[1] = base.response.mean;
    res->has_response = base.answered > 0;
    for (int k = 0; k < res->nrows; k++)
        predict(res, &base, &res->rows[k]);
    for (int k = 0; k < res->nrank; k++)
        predict(res, &base, &res->rank[k]);
    run_result_free(&base);
    int rc = 0;
    for (int k = 0; k < res->nrows && rc == 0; k++)
        rc = run_variant(&rn, &res->rows[k], err, errlen);
    for (int k = 0; k < res->nrank && rc == 0; k++) {
        const whatif_row *same = NULL;       /* a speedup already run: the same run */
        for (int j = 0; j < nsp && !same; j++)
            if (res->rows[j].stage[0] == k && res->rows[j].factor[0] == rf)
                same = &res->rows[j];
        if (same) {
            for (int p = 0; p < 2; p++) {
                res->rank[k].m[p].sim_p99 = same->m[p].sim_p99;
                res->rank[k].m[p].sim_mean = same->m[p].sim_mean;
            }
            rn.total--;
        } else {
            rc = run_variant(&rn, &res->rank[k], err, errlen);
        }
    }
    res->runs = rn.done;
    if (rc != 0) {
        whatif_free(res);
        return rc;
    }
    rank_sort(res, res->rank, res->nrank);
    return 0;
bad:
    cfg_free(&res->cfg);
    memset(res, 0, sizeof *res);
    return -2;
}

void whatif_free(whatif_result *res)
{
    free(res->rows);
    free(res->rank);
    cfg_free(&res->cfg);
    memset(res, 0, sizeof *res);
}

/* ---- writers ------------------------------------------------------------------ */

static const char *path_name(int p)
{
    return p ? "response" : "frame";
}

static void row_label(const whatif_result *res, const whatif_row *r, char *b, size_t n)
{
    size_t len = 0;
    b[0] = 0;
    for (int k = 0; k < r->nstages && len < n; k++)
        len += (size_t)snprintf(b + len, n - len, "%s%s x%g", k ? " + " : "",
                                res->cfg.stages[r->stage[k]].name, r->factor[k]);
}

static double pct_diff(double sim, double pred)
{
    return pred > 0 ? 100.0 * (sim - pred) / pred : NAN;
}

static void table_row(FILE *f, const whatif_result *res, const whatif_row *r, int p)
{
    const whatif_metric *m = &r->m[p];
    char label[256], ci[64];
    row_label(res, r, label, sizeof label);
    double base = res->base_p99[p].mean;
    if (isfinite(m->sim_p99.lo))
        snprintf(ci, sizeof ci, "[%.2f, %.2f]", m->sim_p99.lo, m->sim_p99.hi);
    else
        snprintf(ci, sizeof ci, "-");
    fprintf(f, "  %-26s %-8s %6.3f %10.3f %6.3fx %10.3f %-20s %6.3fx %+8.1f%%\n", label,
            path_name(p), m->share_p99, m->amdahl_p99, base / m->amdahl_p99, m->sim_p99.mean, ci,
            base / m->sim_p99.mean, pct_diff(m->sim_p99.mean, m->amdahl_p99));
}

static void table_head(FILE *f)
{
    fprintf(f, "  %-26s %-8s %6s %10s %7s %10s %-20s %7s %9s\n", "speedup", "path", "f(p99)",
            "Amdahl p99", "gain", "sim p99", "sim p99 95% CI", "gain", "sim-Amd");
}

void whatif_table(FILE *f, const whatif_result *res)
{
    const scenario_cfg *c = &res->cfg;
    fprintf(f, "%s: what if stages were faster? %d replications x %g s, seed %llu, %d runs\n",
            c->name, c->replications, c->duration_s, (unsigned long long)c->seed, res->runs);
    fprintf(f, "baseline: frame p99 %.3f ms (mean %.3f)", res->base_p99[0].mean,
            res->base_mean[0].mean);
    if (res->has_response)
        fprintf(f, ", response p99 %.3f ms (mean %.3f)", res->base_p99[1].mean,
                res->base_mean[1].mean);
    fprintf(f, "\nAmdahl: p99' = p99 x ((1 - f) + f / s), f = the stage's sojourn p99 over the "
               "sum of its path's stage p99s\n\n");
    table_head(f);
    for (int k = 0; k < res->nrows; k++)
        for (int p = 0; p < 2; p++)
            if (res->rows[k].m[p].touched && (p == 0 || res->has_response))
                table_row(f, res, &res->rows[k], p);
    fprintf(f, "  sim-Amd: the re-simulated p99 against Amdahl's; < 0: a better gain (the "
               "queues shrink too), > 0: a worse one (time that is not service stays)\n");
    if (res->nrank) {
        fprintf(f, "\nstages ranked by return at x%g (p99 gain on their path, best first):\n\n",
                res->rank_factor);
        fprintf(f, "  %-4s %-16s %-8s %12s %10s %9s %12s\n", "rank", "stage", "path", "p99 gain ms",
                "sim p99", "gain", "Amdahl p99");
        int shown = 0;
        for (int k = 0; k < res->nrank; k++) {
            const whatif_row *r = &res->rank[k];
            int p = c->stages[r->stage[0]].path == PATH_RESPONSE;
            if (p && !res->has_response)
                continue;
            const whatif_metric *m = &r->m[p];
            fprintf(f, "  %-4d %-16s %-8s %12.3f %10.3f %8.3fx %12.3f\n", ++shown,
                    c->stages[r->stage[0]].name, path_name(p),
                    res->base_p99[p].mean - m->sim_p99.mean, m->sim_p99.mean,
                    res->base_p99[p].mean / m->sim_p99.mean, m->amdahl_p99);
        }
    }
}

static void json_row(jw_t *w, const whatif_result *res, const whatif_row *r)
{
    jw_obj_begin(w, NULL);
    jw_obj_begin(w, "speedup");
    for (int k = 0; k < r->nstages; k++)
        jw_num(w, res->cfg.stages[r->stage[k]].name, r->factor[k]);
    jw_obj_end(w);
    for (int p = 0; p < 2; p++) {
        const whatif_metric *m = &r->m[p];
        if (!m->touched || (p && !res->has_response))
            continue;
        jw_obj_begin(w, path_name(p));
        jw_num(w, "share_p99", m->share_p99);
        jw_num(w, "share_mean", m->share_mean);
        jw_num(w, "amdahl_p99_ms", m->amdahl_p99);
        jw_num(w, "amdahl_mean_ms", m->amdahl_mean);
        jw_num(w, "sim_p99_ms", m->sim_p99.mean);
        jw_pair(w, "sim_p99_ci95", m->sim_p99.lo, m->sim_p99.hi);
        jw_num(w, "sim_mean_ms", m->sim_mean.mean);
        jw_pair(w, "sim_mean_ci95", m->sim_mean.lo, m->sim_mean.hi);
        jw_num(w, "amdahl_speedup_p99", res->base_p99[p].mean / m->amdahl_p99);
        jw_num(w, "sim_speedup_p99", res->base_p99[p].mean / m->sim_p99.mean);
        jw_obj_end(w);
    }
    jw_obj_end(w);
}

void whatif_json(FILE *f, const whatif_result *res)
{
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "scenario", res->cfg.name);
    jw_int(&w, "replications", res->cfg.replications);
    jw_int(&w, "seed", (long long)res->cfg.seed);
    jw_str(&w, "share", "stage sojourn percentile / sum over the path's stages");
    jw_obj_begin(&w, "baseline");
    for (int p = 0; p < 2; p++) {
        if (p && !res->has_response)
            continue;
        jw_obj_begin(&w, path_name(p));
        jw_num(&w, "p99_ms", res->base_p99[p].mean);
        jw_pair(&w, "p99_ci95", res->base_p99[p].lo, res->base_p99[p].hi);
        jw_num(&w, "mean_ms", res->base_mean[p].mean);
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_arr_begin(&w, "speedups");
    for (int k = 0; k < res->nrows; k++)
        json_row(&w, res, &res->rows[k]);
    jw_arr_end(&w);
    jw_num(&w, "rank_factor", res->nrank ? res->rank_factor : NAN);
    jw_arr_begin(&w, "ranked");
    for (int k = 0; k < res->nrank; k++)
        json_row(&w, res, &res->rank[k]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_done(&w);
}
