/* report.c — table, JSON, CSV and Prometheus writers. See report.h.
 * Formats are fixed ("%.10g" in JSON and CSV) so that the same run always
 * produces the same bytes; wall-clock time appears only where asked for. */
#include "models/report.h"
#include "models/report_fleet.h"
#include <math.h>
#include <string.h>
#include "models/report_canary.h"
#include "sim/jsonw.h"

static const char *MODE_NAMES[] = { "reduce_fps", "reduce_quality", "drop_response" };
static const char *ALERT_NAMES[] = { "p99_above_sla", "drop_rate", "gpu_idle", "p99_above_p95" };

/* ---- table --------------------------------------------------------------- */

static void table_lat_row(FILE *f, const char *name, const char *what, const lat_est *e)
{
    char ci[64] = "";
    if (isfinite(e->p99.lo))
        snprintf(ci, sizeof ci, "[%.2f, %.2f]", e->p99.lo, e->p99.hi);
    fprintf(f, "  %-16s %-8s %10.3f %10.3f %10.3f %10.3f  %-24s %10.3f %10.3f\n",
            name, what, e->mean.mean, e->p50.mean, e->p95.mean, e->p99.mean, ci,
            e->p999.mean, e->max);
}

/* The budget table (seed 000 §3): per frame-path stage its budget against
 * the simulated p50/p95/p99, then the sum of the stage p99s beside the true
 * frame p99 — tails do not add, so the two differ. */
static void report_budget(FILE *f, const run_result *r)
{
    const scenario_cfg *c = r->cfg;
    double sum99 = 0;
    fprintf(f, "\n  %-16s %10s %10s %10s %10s  %s\n", "budget (ms)", "budget", "p50", "p95", "p99",
            "p99 vs budget");
    for (int s = 0; s < c->nstages; s++) {
        if (c->stages[s].path != PATH_FRAME)
            continue;
        const lat_est *e = &r->stage[s].sojourn;
        double b = c->stages[s].budget_ms;
        sum99 += e->p99.mean;
        char verdict[48] = "-";
        if (b > 0)
            snprintf(verdict, sizeof verdict, "%s (%+.0f%%)", e->p99.mean <= b ? "within" : "OVER",
                     100.0 * (e->p99.mean - b) / b);
        char bs[32] = "-";
        if (b > 0)
            snprintf(bs, sizeof bs, "%.2f", b);
        fprintf(f, "  %-16s %10s %10.3f %10.3f %10.3f  %s\n", c->stages[s].name, bs, e->p50.mean,
                e->p95.mean, e->p99.mean, verdict);
    }
    fprintf(f, "  %-16s %10s %10s %10s %10.3f\n", "sum of p99s", "", "", "", sum99);
    fprintf(f, "  %-16s %10s %10.3f %10.3f %10.3f  (the true end-to-end percentiles)\n",
            "frame", "", r->e2e.p50.mean, r->e2e.p95.mean, r->e2e.p99.mean);
}

void report_table(FILE *f, const run_result *r, double wall_s)
{
    const scenario_cfg *c = r->cfg;
    fprintf(f, "%s: %d replication%s x %g s measured after %.3g s warm-up%s, seed %llu\n",
            c->name, r->nrep, r->nrep == 1 ? "" : "s", c->duration_s, r->warmup_ms / 1000.0,
            r->warmup_auto ? " (auto, MSER-5)" : "", (unsigned long long)c->seed);
    fprintf(f, "%llu events in %.2f s (%.3g events/s)\n\n", (unsigned long long)r->events,
            wall_s, wall_s > 0 ? (double)r->events / wall_s : 0.0);
    if (!r->verdict.stable)
        fprintf(f, "  UNSTABLE: %s.\n  The figures below describe the growth up to the stop, "
                   "not a steady state; every SLA line fails.\n\n", r->verdict.reason);

    fprintf(f, "  %-16s %12s %12s %10s %10s %10s %8s %7s %9s\n", "stage", "arrivals", "completed",
            "drop:full", "drop:tmo", "drop:pol", "drop %", "util", "mean Lq");
    for (int s = 0; s < c->nstages; s++) {
        const stage_est *e = &r->stage[s];
        fprintf(f, "  %-16s %12llu %12llu %10llu %10llu %10llu %7.3f%% %7.3f %9.3f\n",
                c->stages[s].name, (unsigned long long)e->arrivals,
                (unsigned long long)e->completed, (unsigned long long)e->drop_queue_full,
                (unsigned long long)e->drop_timeout, (unsigned long long)e->drop_policy,
                100.0 * e->drop_rate.mean, e->utilization.mean, e->mean_queue_len.mean);
    }
    fprintf(f, "  %-16s %12llu %12llu %32llu %7.3f%%\n", "end-to-end",
            (unsigned long long)r->arrivals, (unsigned long long)r->completed,
            (unsigned long long)r->dropped, 100.0 * r->drop_rate.mean);
    for (int s = 0; s < c->nstages; s++)
        if (r->stage[s].sampled_out)
            fprintf(f, "  %-16s %llu frames sampled out here (not drops)\n", c->stages[s].name,
                    (unsigned long long)r->stage[s].sampled_out);
    if (c->cpu.cores > 0 && c->cpu.ncold > 0)
        fprintf(f, "  cores: cold cores (cpu.cold) added %.2f %% to the jobs' work\n",
                100.0 * r->cpu_cold.mean);
    if (c->cpu.cores > 0 && c->cpu.nduty > 0)
        fprintf(f, "  cores: cores idle lately (cpu.duty) added %.2f %% to the jobs' work\n",
                100.0 * r->cpu_duty.mean);
    if (c->cpu.cores > 0 && c->cpu.stall_per_s > 0)
        fprintf(f, "  cores: %.2f %% of the wake-ups onto an idle core waited for the host to run "
                "it (cpu.stalls), %.2f ms in mean\n", 100.0 * r->cpu_stalled.mean, r->cpu_stall_ms.mean);
    if (c->cpu.cores > 0 && c->cpu.stall_per_s > 0 && c->cpu.stall_poll_ms > 0)
        fprintf(f, "  cores: %.2f %% of them came while the host still polled the core (cpu.stalls.poll_ms "
                "%g): never held\n", 100.0 * r->cpu_polled.mean, c->cpu.stall_poll_ms);
    if (c->cpu.cores > 0 && c->cpu.has_stack)
        fprintf(f, "  cores: exactly two jobs %.1f %% of the busy time, %.1f %% of that on one core\n",
                100.0 * r->cpu_two.mean, 100.0 * r->cpu_two_same.mean);
    if (c->cpu.cores > 0 && c->cpu.has_stack)
        fprintf(f, "  cores: %.1f %% of the starts beside a job with a core free went beside it;"
                " with a core free and another shared: after a start %.1f /s of %.3f ms"
                " (%.1f %% moved), after a core emptied %.1f /s of %.3f ms (%.1f %% moved)\n",
                100.0 * r->cpu_stack[RUN_STACK_SHARE].mean, r->cpu_stack[RUN_START_SPELLS_S].mean,
                r->cpu_stack[RUN_START_SPELL_MS].mean, 100.0 * r->cpu_stack[RUN_START_MOVED].mean,
                r->cpu_stack[RUN_END_SPELLS_S].mean, r->cpu_stack[RUN_END_SPELL_MS].mean,
                100.0 * r->cpu_stack[RUN_END_MOVED].mean);
    fputc('\n', f);

    fprintf(f, "  %-16s %-8s %10s %10s %10s %10s  %-24s %10s %10s\n", "latency (ms)", "",
            "mean", "p50", "p95", "p99", "p99 95% CI", "p99.9", "max");
    for (int s = 0; s < c->nstages; s++) {
        const stage_est *e = &r->stage[s];
        table_lat_row(f, c->stages[s].name, "wait", &e->wait);
        table_lat_row(f, "", "service", &e->service);
        table_lat_row(f, "", "sojourn", &e->sojourn);
    }
    table_lat_row(f, "frame (e2e)", "", &r->e2e);
    if (r->queries + r->proactive > 0) {
        table_lat_row(f, "response", "", &r->response);
        fprintf(f, "  response path: %llu queries + %llu proactive, %llu answered, %llu dropped\n",
                (unsigned long long)r->queries, (unsigned long long)r->proactive,
                (unsigned long long)r->answered, (unsigned long long)r->unanswered);
    }

    report_budget(f, r);

    if (r->ngpus > 0) {
        fprintf(f, "\n  GPUs: %d x %s at $%.2f/GPU-hour", c->cluster.gpus, c->cluster.gpu_type,
                c->cluster.gpu_hour_usd);
        if (r->fleet.on)
            fputs(r->fleet.scaling ? " (slots: the autoscaler's max_gpus; cost under fleet)"
                                   : " (cost under fleet)", f);
        else if (isfinite(r->cost_per_stream_hour))
            fprintf(f, " -> $%.4f per stream-hour (%d streams)", r->cost_per_stream_hour,
                    c->workload.streams);
        fputc('\n', f);
        for (int s = 0; s < c->nstages; s++)
            if (c->stages[s].on == RES_GPU)
                fprintf(f, "  %-16s mean batch %6.2f of max %d, %llu batches\n", c->stages[s].name,
                        r->stage[s].batch_mean.mean, c->stages[s].max_batch,
                        (unsigned long long)r->stage[s].batches);
        for (int g = 0; g < r->ngpus; g++)
            fprintf(f, "  gpu %-12d utilization %.3f\n", g, r->gpu[g].utilization.mean);
    }
    if (r->fleet.on)
        report_fleet_table(f, r);
    if (c->degrade.nmodes > 0) {
        fputs("\n  degradation: time at each level:", f);
        for (int l = 0; l <= c->degrade.nmodes; l++)
            fprintf(f, " %s %.1f%%", l ? MODE_NAMES[c->degrade.modes[l - 1]] : "normal",
                    100.0 * r->level_share[l]);
        fprintf(f, "; %.1f changes per hour\n", r->mode_changes_per_hour);
    }
    int nalert = 0;
    for (int a = 0; a < ALERT_NRULES; a++)
        nalert += r->alert_count[a] > 0;
    if (nalert) {
        fputs("\n  alerts fired (all replications):", f);
        for (int a = 0; a < ALERT_NRULES; a++)
            if (r->alert_count[a])
                fprintf(f, " %s x%llu", ALERT_NAMES[a], (unsigned long long)r->alert_count[a]);
        fputc('\n', f);
    }
    if (r->canary)
        report_canary_table(f, &c->canary, r->canary, r->nrep);
    fprintf(f, "\n  stability: %s\n", r->verdict.stable
            ? "stable (no unbounded queue kept growing)" : "UNSTABLE (see the top of this report)");
    if (r->nsla > 0) {
        fputs("\n  SLA (pass when the 95% CI's upper end meets the target)\n", f);
        for (int k = 0; k < r->nsla; k++) {
            const sla_verdict *v = &r->sla[k];
            fprintf(f, "  %-16s p%-5g <= %8.2f ms: %8.2f ms [%.2f, %.2f]  %s\n", v->line->metric,
                    v->line->percentile, v->line->ms, v->value.mean, v->value.lo, v->value.hi,
                    v->pass ? "PASS" : "FAIL");
        }
    }
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_lat(jw_t *w, const char *key, const lat_est *e)
{
    jw_obj_begin(w, key);
    jw_num(w, "mean", e->mean.mean);
    jw_num(w, "p50", e->p50.mean);
    jw_num(w, "p90", e->p90.mean);
    jw_num(w, "p95", e->p95.mean);
    jw_num(w, "p99", e->p99.mean);
    jw_num(w, "p999", e->p999.mean);
    jw_num(w, "max", e->max);
    jw_obj_begin(w, "ci95");
    jw_pair(w, "mean", e->mean.lo, e->mean.hi);
    jw_pair(w, "p50", e->p50.lo, e->p50.hi);
    jw_pair(w, "p90", e->p90.lo, e->p90.hi);
    jw_pair(w, "p95", e->p95.lo, e->p95.hi);
    jw_pair(w, "p99", e->p99.lo, e->p99.hi);
    jw_pair(w, "p999", e->p999.lo, e->p999.hi);
    jw_obj_end(w);
    jw_obj_end(w);
}

static void json_ci(jw_t *w, const char *key, const stats_ci *c)
{
    char k[64];
    jw_num(w, key, c->mean);
    snprintf(k, sizeof k, "%s_ci95", key);
    jw_pair(w, k, c->lo, c->hi);
}

void report_json(FILE *f, const run_result *r, double wall_s)
{
    const scenario_cfg *c = r->cfg;
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "vlsim_version", VLSIM_VERSION);
    jw_str(&w, "scenario", c->name);
    jw_int(&w, "seed", (long long)c->seed);
    jw_int(&w, "replications", r->nrep);
    jw_num(&w, "duration_s", c->duration_s);
    jw_num(&w, "warmup_s", r->warmup_ms / 1000.0);
    jw_bool(&w, "warmup_auto", r->warmup_auto);
    if (r->warmup_auto) {
        jw_obj_begin(&w, "mser5");
        jw_int(&w, "batches", (long long)r->mser.k);
        jw_int(&w, "batch_size", (long long)r->mser.batch);
        jw_int(&w, "truncated_batches", (long long)r->mser.d);
        jw_bool(&w, "settled", r->mser.settled);
        jw_obj_end(&w);
    }
    jw_obj_begin(&w, "verdict");
    jw_bool(&w, "stable", r->verdict.stable);
    if (!r->verdict.stable) {
        jw_str(&w, "reason", r->verdict.reason);
        jw_str(&w, "stage", c->stages[r->verdict.stage].name);
        jw_num(&w, "offered_load", r->verdict.offered_load);
        jw_num(&w, "stopped_at_s", r->verdict.t_stop_s);
        jw_int(&w, "unstable_replications", r->verdict.unstable_reps);
    }
    jw_obj_end(&w);
    jw_obj_begin(&w, "stages");
    for (int s = 0; s < c->nstages; s++) {
        const stage_est *e = &r->stage[s];
        jw_obj_begin(&w, c->stages[s].name);
        const stage_cfg *sc = &c->stages[s];
        jw_str(&w, "on", sc->on == RES_GPU ? "gpu" : "workers");
        if (sc->on == RES_GPU)
            jw_int(&w, "max_batch", sc->max_batch);
        else
            jw_int(&w, "servers", sc->servers);
        jw_int(&w, "arrivals", (long long)e->arrivals);
        jw_int(&w, "completed", (long long)e->completed);
        jw_obj_begin(&w, "drops");
        jw_int(&w, "queue_full", (long long)e->drop_queue_full);
        jw_int(&w, "timeout", (long long)e->drop_timeout);
        jw_int(&w, "policy", (long long)e->drop_policy);
        jw_obj_end(&w);
        json_ci(&w, "drop_rate", &e->drop_rate);
        json_ci(&w, "utilization", &e->utilization);
        json_ci(&w, "mean_queue_len", &e->mean_queue_len);
        json_ci(&w, "p_wait", &e->p_wait);
        jw_int(&w, "sampled_out", (long long)e->sampled_out);
        if (sc->on == RES_GPU) {
            jw_obj_begin(&w, "batch_size");
            jw_int(&w, "batches", (long long)e->batches);
            json_ci(&w, "mean", &e->batch_mean);
            jw_arr_begin(&w, "counts");          /* counts[k-1]: batches of size k */
            for (int k = 1; k <= sc->max_batch; k++)
                jw_int(&w, NULL, (long long)e->batch_counts[k]);
            jw_arr_end(&w);
            jw_obj_end(&w);
        }
        json_lat(&w, "sojourn_ms", &e->sojourn);
        json_lat(&w, "wait_ms", &e->wait);
        json_lat(&w, "service_ms", &e->service);
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_obj_begin(&w, "e2e");
    jw_int(&w, "arrivals", (long long)r->arrivals);
    jw_int(&w, "completed", (long long)r->completed);
    jw_int(&w, "dropped", (long long)r->dropped);
    json_ci(&w, "drop_rate", &r->drop_rate);
    jw_int(&w, "sampled_out", (long long)r->sampled_out);
    jw_int(&w, "peak_in_flight", (long long)r->peak_in_flight);
    jw_obj_end(&w);
    if (c->cpu.cores > 0) {            /* the cores' sharing (cpu; cpu.stack) */
        jw_obj_begin(&w, "cpu");
        json_ci(&w, "two_jobs_share", &r->cpu_two);
        json_ci(&w, "two_on_one_core_share", &r->cpu_two_same);
        if (c->cpu.ncold > 0)
            json_ci(&w, "cold_extra_share", &r->cpu_cold);
        if (c->cpu.nduty > 0)
            json_ci(&w, "duty_extra_share", &r->cpu_duty);
        if (c->cpu.stall_per_s > 0) {
            json_ci(&w, "stalled_wake_share", &r->cpu_stalled);
            json_ci(&w, "stalled_wake_ms", &r->cpu_stall_ms);
            if (c->cpu.stall_poll_ms > 0)
                json_ci(&w, "polled_wake_share", &r->cpu_polled);
        }
        if (c->cpu.has_stack) {
            jw_obj_begin(&w, "stack");
            for (int k = 0; k < RUN_NSTACK; k++)
                json_ci(&w, run_stack_names[k], &r->cpu_stack[k]);
            jw_obj_end(&w);
        }
        jw_obj_end(&w);
    }
    json_lat(&w, "e2e_ms", &r->e2e);
    json_lat(&w, "frame_ms", &r->e2e);
    if (r->queries + r->proactive > 0) {
        json_lat(&w, "response_ms", &r->response);
        jw_obj_begin(&w, "response");
        jw_int(&w, "queries", (long long)r->queries);
        jw_int(&w, "proactive", (long long)r->proactive);
        jw_int(&w, "answered", (long long)r->answered);
        jw_int(&w, "unanswered", (long long)r->unanswered);
        jw_obj_end(&w);
    }
    if (r->ngpus > 0) {
        jw_arr_begin(&w, "gpus");
        for (int g = 0; g < r->ngpus; g++) {
            jw_obj_begin(&w, NULL);
            jw_int(&w, "id", g);
            json_ci(&w, "utilization", &r->gpu[g].utilization);
            jw_obj_begin(&w, "busy_ms_by_stage");
            for (int s = 0; s < c->nstages; s++)
                if (c->stages[s].on == RES_GPU)
                    jw_num(&w, c->stages[s].name, r->gpu[g].busy_ms[s]);
            jw_obj_end(&w);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj_begin(&w, "cost");
        jw_int(&w, "gpus", c->cluster.gpus);
        jw_str(&w, "gpu_type", c->cluster.gpu_type);
        jw_num(&w, "gpu_hour_usd", c->cluster.gpu_hour_usd);
        jw_num(&w, "per_stream_hour_usd", r->cost_per_stream_hour);
        jw_num(&w, "gpu_hours", r->gpu_hours);
        jw_obj_end(&w);
    }
    if (c->degrade.nmodes > 0) {
        jw_obj_begin(&w, "degradation");
        jw_arr_begin(&w, "modes");
        for (int m = 0; m < c->degrade.nmodes; m++)
            jw_str(&w, NULL, MODE_NAMES[c->degrade.modes[m]]);
        jw_arr_end(&w);
        jw_arr_begin(&w, "level_share");        /* [k]: share of time with modes[0..k-1] on */
        for (int l = 0; l <= c->degrade.nmodes; l++)
            jw_num(&w, NULL, r->level_share[l]);
        jw_arr_end(&w);
        jw_num(&w, "changes_per_hour", r->mode_changes_per_hour);
        jw_arr_begin(&w, "timeline");           /* replication 0, warm-up included */
        for (int k = 0; k < r->ntimeline; k++) {
            jw_obj_begin(&w, NULL);
            jw_num(&w, "t_s", r->timeline[k].t_s);
            jw_int(&w, "level", r->timeline[k].level);
            jw_str(&w, "mode", r->timeline[k].level ? MODE_NAMES[c->degrade.modes[r->timeline[k].level - 1]]
                                                    : "normal");
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj_end(&w);
    }
    jw_obj_begin(&w, "alert_counts");           /* firings, all replications' windows */
    for (int a = 0; a < ALERT_NRULES; a++)
        jw_int(&w, ALERT_NAMES[a], (long long)r->alert_count[a]);
    jw_obj_end(&w);
    jw_arr_begin(&w, "alerts");                 /* replication 0, warm-up included */
    for (int k = 0; k < r->nalerts; k++) {
        jw_obj_begin(&w, NULL);
        jw_num(&w, "t_s", r->alerts[k].t_s);
        jw_str(&w, "rule", ALERT_NAMES[r->alerts[k].rule]);
        if (r->alerts[k].gpu >= 0)
            jw_int(&w, "gpu", r->alerts[k].gpu);
        jw_num(&w, "value", r->alerts[k].value);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    if (r->canary)
        report_canary_json(&w, &c->canary, r->canary, r->nrep);
    jw_arr_begin(&w, "sla");
    for (int k = 0; k < r->nsla; k++) {
        const sla_verdict *v = &r->sla[k];
        jw_obj_begin(&w, NULL);
        jw_str(&w, "metric", v->line->metric);
        jw_num(&w, "percentile", v->line->percentile);
        jw_num(&w, "target_ms", v->line->ms);
        jw_num(&w, "value_ms", v->value.mean);
        jw_pair(&w, "ci95", v->value.lo, v->value.hi);
        jw_bool(&w, "pass", v->pass);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    if (r->fleet.on)
        report_fleet_json(&w, r);
    jw_arr_begin(&w, "warnings");
    for (int k = 0; k < r->nwarnings; k++)
        jw_str(&w, NULL, r->warnings[k]);
    jw_arr_end(&w);
    jw_int(&w, "sim_events", (long long)r->events);
    jw_num(&w, "wall_s", wall_s);
    jw_obj_end(&w);
    jw_done(&w);
}

/* ---- CSV ----------------------------------------------------------------- */

static void csv_lat_header(FILE *f, const char *p)
{
    fprintf(f, ",%s_mean,%s_mean_lo,%s_mean_hi,%s_p50,%s_p50_lo,%s_p50_hi,%s_p90,%s_p95,"
               "%s_p95_lo,%s_p95_hi,%s_p99,%s_p99_lo,%s_p99_hi,%s_p999,%s_max",
            p, p, p, p, p, p, p, p, p, p, p, p, p, p, p);
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.10g", v);
    else
        fputs(",", f);            /* an empty field: no interval with one replication */
}

static void csv_lat(FILE *f, const lat_est *e)
{
    const double v[] = { e->mean.mean, e->mean.lo, e->mean.hi, e->p50.mean, e->p50.lo,
                         e->p50.hi, e->p90.mean, e->p95.mean, e->p95.lo, e->p95.hi,
                         e->p99.mean, e->p99.lo, e->p99.hi, e->p999.mean, e->max };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        csv_num(f, v[k]);
}

void report_csv(FILE *f, const run_result *r)
{
    const scenario_cfg *c = r->cfg;
    fputs("kind,name,servers,arrivals,completed,drops_queue_full,drops_timeout,drop_rate,"
          "utilization,mean_queue_len,p_wait,sampled_out,batch_mean", f);
    csv_lat_header(f, "sojourn");
    csv_lat_header(f, "wait");
    csv_lat_header(f, "service");
    fputc('\n', f);
    for (int s = 0; s < c->nstages; s++) {
        const stage_est *e = &r->stage[s];
        fprintf(f, "stage,%s,%d,%llu,%llu,%llu,%llu", c->stages[s].name, c->stages[s].servers,
                (unsigned long long)e->arrivals, (unsigned long long)e->completed,
                (unsigned long long)e->drop_queue_full, (unsigned long long)e->drop_timeout);
        csv_num(f, e->drop_rate.mean);
        csv_num(f, e->utilization.mean);
        csv_num(f, e->mean_queue_len.mean);
        csv_num(f, e->p_wait.mean);
        fprintf(f, ",%llu", (unsigned long long)e->sampled_out);
        csv_num(f, c->stages[s].on == RES_GPU ? e->batch_mean.mean : NAN);
        csv_lat(f, &e->sojourn);
        csv_lat(f, &e->wait);
        csv_lat(f, &e->service);
        fputc('\n', f);
    }
    fprintf(f, "e2e,e2e,,%llu,%llu,%llu,", (unsigned long long)r->arrivals,
            (unsigned long long)r->completed, (unsigned long long)r->dropped);
    csv_num(f, r->drop_rate.mean);
    fprintf(f, ",,,,%llu,", (unsigned long long)r->sampled_out);
    csv_lat(f, &r->e2e);
    for (int k = 0; k < 2 * 15; k++)
        fputc(',', f);
    fputc('\n', f);
}

/* ---- Prometheus ---------------------------------------------------------- */

/* One Prometheus histogram. sel is the label selector without braces
 * ("stage=\"encode\"" or ""); le is appended to it on bucket lines. */
static void prom_hist(FILE *f, const char *metric, const char *sel, const uint64_t *le,
                      const scenario_cfg *c, double sum)
{
    const char *comma = *sel ? "," : "";
    uint64_t cum = 0;
    for (int k = 0; k <= c->nbuckets; k++) {
        cum += le[k];
        if (k < c->nbuckets)
            fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", metric, sel, comma, c->buckets_ms[k],
                    (unsigned long long)cum);
        else
            fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", metric, sel, comma,
                    (unsigned long long)cum);
    }
    if (*sel) {
        fprintf(f, "%s_sum{%s} %.10g\n", metric, sel, sum);
        fprintf(f, "%s_count{%s} %llu\n", metric, sel, (unsigned long long)cum);
    } else {
        fprintf(f, "%s_sum %.10g\n", metric, sum);
        fprintf(f, "%s_count %llu\n", metric, (unsigned long long)cum);
    }
}

void report_prom(FILE *f, const run_result *r)
{
    const scenario_cfg *c = r->cfg;
    char label[CFG_NAME_MAX + 16];
    fputs("# HELP vlsim_stage_latency_ms Sojourn time per stage (wait + service), ms, "
          "all replications after warm-up.\n# TYPE vlsim_stage_latency_ms histogram\n", f);
    for (int s = 0; s < c->nstages; s++) {
        snprintf(label, sizeof label, "stage=\"%s\"", c->stages[s].name);
        prom_hist(f, "vlsim_stage_latency_ms", label, r->stage[s].le, c, r->stage[s].sojourn_sum);
    }
    fputs("# HELP vlsim_e2e_latency_ms End-to-end latency, ms, all replications after "
          "warm-up.\n# TYPE vlsim_e2e_latency_ms histogram\n", f);
    prom_hist(f, "vlsim_e2e_latency_ms", "", r->e2e_le, c, r->e2e_sum);
    if (r->queries + r->proactive > 0) {
        fputs("# HELP vlsim_response_latency_ms Query or trigger to answer, ms, all replications "
              "after warm-up.\n# TYPE vlsim_response_latency_ms histogram\n", f);
        prom_hist(f, "vlsim_response_latency_ms", "", r->resp_le, c, r->resp_sum);
    }
    fputs("# HELP vlsim_stage_drops_total Items dropped per stage and reason.\n"
          "# TYPE vlsim_stage_drops_total counter\n", f);
    for (int s = 0; s < c->nstages; s++) {
        fprintf(f, "vlsim_stage_drops_total{stage=\"%s\",reason=\"queue_full\"} %llu\n",
                c->stages[s].name, (unsigned long long)r->stage[s].drop_queue_full);
        fprintf(f, "vlsim_stage_drops_total{stage=\"%s\",reason=\"timeout\"} %llu\n",
                c->stages[s].name, (unsigned long long)r->stage[s].drop_timeout);
        fprintf(f, "vlsim_stage_drops_total{stage=\"%s\",reason=\"policy\"} %llu\n",
                c->stages[s].name, (unsigned long long)r->stage[s].drop_policy);
    }
    fputs("# HELP vlsim_stage_utilization Mean fraction of a stage's servers busy.\n"
          "# TYPE vlsim_stage_utilization gauge\n", f);
    for (int s = 0; s < c->nstages; s++)
        fprintf(f, "vlsim_stage_utilization{stage=\"%s\"} %.10g\n", c->stages[s].name,
                r->stage[s].utilization.mean);
    if (r->ngpus > 0) {
        fputs("# HELP vlsim_gpu_utilization Mean fraction of time a GPU runs a batch.\n"
              "# TYPE vlsim_gpu_utilization gauge\n", f);
        for (int g = 0; g < r->ngpus; g++)
            fprintf(f, "vlsim_gpu_utilization{gpu=\"%d\"} %.10g\n", g, r->gpu[g].utilization.mean);
    }
}
