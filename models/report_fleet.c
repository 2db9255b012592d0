/* report_fleet.c — the fleet section of a run's table and JSON. See
 * report_fleet.h. It formats; it never computes an estimate, never opens a
 * file. JSON keys are documented in README.md ("Traffic over time and
 * autoscaling"). */
#include "models/report_fleet.h"
#include <math.h>
#include "models/autoscale.h"

static void ci_text(FILE *f, const stats_ci *c, const char *fmt)
{
    fprintf(f, fmt, c->mean);
    if (isfinite(c->lo)) {
        fputs(" [", f);
        fprintf(f, fmt, c->lo);
        fputs(", ", f);
        fprintf(f, fmt, c->hi);
        fputs("]", f);
    }
}

void report_fleet_table(FILE *f, const run_result *r)
{
    const fleet_est *e = &r->fleet;
    const scenario_cfg *c = r->cfg;
    fputs("\n  fleet (means over replications, 95% CI)\n", f);
    fputs("  sessions       concurrent ", f);
    ci_text(f, &e->mean_sessions, "%.2f");
    fprintf(f, ", peak %d, %llu started\n", e->peak_sessions, (unsigned long long)e->sessions);
    fputs("  GPUs           billed ", f);
    ci_text(f, &e->billed_gpus, "%.3f");
    fputs(", serving ", f);
    ci_text(f, &e->serving_gpus, "%.3f");
    fputs("\n  cost           $", f);
    ci_text(f, &e->cost_usd, "%.2f");
    fprintf(f, " per replication (%.1f h)", c->duration_s / 3600.0);
    if (isfinite(r->cost_per_stream_hour))
        fprintf(f, ", $%.4f per stream-hour", r->cost_per_stream_hour);
    fputc('\n', f);
    if (e->windows > 0) {
        fprintf(f, "  SLA windows    %llu of %llu windows of %g s violated -> ",
                (unsigned long long)e->viol_windows, (unsigned long long)e->windows,
                c->autoscale.sla_window_s > 0 ? c->autoscale.sla_window_s : 60);
        ci_text(f, &e->viol_min_per_day, "%.1f");
        fputs(" violation-minutes per day\n", f);
    } else {
        fputs("  SLA windows    none (no frame SLA line)\n", f);
    }
    if (!e->scaling)
        return;
    fprintf(f, "  scaling        %llu up (%llu cold starts, %llu from the warm pool), %llu down; "
               "cold-start rate %.3f\n",
            (unsigned long long)e->ups, (unsigned long long)e->cold_starts,
            (unsigned long long)e->warm_joins, (unsigned long long)e->downs, e->cold_start_rate);
    fputs("  keep-alive     cold starts per hour ", f);
    ci_text(f, &e->cold_starts_per_h, "%.3f");
    fputs(", idle share of billed GPU-time ", f);
    ci_text(f, &e->idle_share, "%.3f");
    fprintf(f, ", warm-pool GPU-hours %.2f\n", e->warm_gpu_h);
    fputs("  spikes         frame p99 ", f);
    if (isfinite(e->spike_p99.mean)) {
        ci_text(f, &e->spike_p99, "%.2f");
        fputs(" ms (frames within a mean cold start of a scale-up)\n", f);
    } else {
        fputs("- (no scale-up)\n", f);
    }
    fputs("  timeline (replication 0): t_s event gpu -> serving/billed\n", f);
    for (int k = 0; k < e->nevents; k++) {
        const fleet_event *v = &e->events[k];
        fprintf(f, "    %10.1f %-13s %3d -> %d/%d\n", v->t_s, asc_event_name(v->kind), v->gpu,
                v->serving, v->billed);
    }
    if (e->nevents == FLEET_MAX_EVENTS)
        fprintf(f, "    (the first %d events)\n", FLEET_MAX_EVENTS);
}

static void json_ci(jw_t *w, const char *key, const stats_ci *c)
{
    jw_obj_begin(w, key);
    jw_num(w, "mean", c->mean);
    jw_pair(w, "ci95", c->lo, c->hi);
    jw_obj_end(w);
}

void report_fleet_json(jw_t *w, const run_result *r)
{
    const fleet_est *e = &r->fleet;
    jw_obj_begin(w, "fleet");
    jw_bool(w, "autoscale", e->scaling);
    json_ci(w, "mean_sessions", &e->mean_sessions);
    jw_int(w, "peak_sessions", e->peak_sessions);
    jw_int(w, "sessions_started", (long long)e->sessions);
    json_ci(w, "billed_gpus", &e->billed_gpus);
    json_ci(w, "serving_gpus", &e->serving_gpus);
    json_ci(w, "cost_usd", &e->cost_usd);
    jw_int(w, "sla_windows", (long long)e->windows);
    jw_int(w, "sla_violation_windows", (long long)e->viol_windows);
    json_ci(w, "sla_violation_min_per_day", &e->viol_min_per_day);
    jw_int(w, "scale_ups", (long long)e->ups);
    jw_int(w, "scale_downs", (long long)e->downs);
    jw_int(w, "cold_starts", (long long)e->cold_starts);
    jw_int(w, "warm_joins", (long long)e->warm_joins);
    jw_num(w, "cold_start_rate", e->cold_start_rate);
    json_ci(w, "cold_starts_per_hour", &e->cold_starts_per_h);
    json_ci(w, "idle_share", &e->idle_share);
    json_ci(w, "wasted_gpu_hours", &e->wasted_gpu_h);
    jw_num(w, "warm_pool_gpu_hours", e->warm_gpu_h);
    json_ci(w, "spike_p99_ms", &e->spike_p99);
    jw_arr_begin(w, "timeline");             /* replication 0, warm-up included */
    for (int k = 0; k < e->nevents; k++) {
        const fleet_event *v = &e->events[k];
        jw_obj_begin(w, NULL);
        jw_num(w, "t_s", v->t_s);
        jw_str(w, "event", asc_event_name(v->kind));
        jw_int(w, "gpu", v->gpu);
        jw_int(w, "serving", v->serving);
        jw_int(w, "billed", v->billed);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}
