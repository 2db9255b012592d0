/* report_canary.c — table and JSON of a canary rollout. See report_canary.h.
 * Fixed formats, so the same run writes the same bytes. It never computes:
 * the numbers come from canary.c (the records and canary_summarize). */
#include "models/report_canary.h"
#include <math.h>

static const char *arm_name(int a)
{
    return a == CANARY_VARIANT ? "variant" : "baseline";
}

static void table_num(FILE *f, double v, const char *fmt, int width)
{
    if (isfinite(v))
        fprintf(f, fmt, width, v);
    else
        fprintf(f, "%*s", width, "-");
}

void report_canary_table(FILE *f, const canary_cfg *c, const canary_rec *reps, int nrep)
{
    if (c->nsteps == 0 || nrep < 1)
        return;
    const canary_rec *r = &reps[0];
    char why[64];
    fputs("\n  canary rollout (replication 0; times in simulated s, warm-up included)\n", f);
    fprintf(f, "  gates: variant p99 > %g x baseline, drop rate > %g%s, GPU utilization > %g; "
               "judged once the variant has %ld frames in the step\n",
            c->p99_ratio, c->drop_rate, c->drop_ratio > 0 ? " (or > drop_ratio x baseline)" : "",
            c->gpu_util, c->min_frames);
    fputs("  step     pct    start      end  verdict       frames base   variant"
          "    p99 base   variant   drop% base  variant  gpu util  aborted by\n", f);
    for (int k = 0; k < r->nsteps; k++) {
        const canary_step_rec *s = &r->step[k];
        fprintf(f, "  %4d %6.2f%% ", k, s->pct);
        table_num(f, s->start_s, "%*.1f", 8);
        table_num(f, s->end_s, " %*.1f", 8);
        fprintf(f, "  %-12s %11llu %9llu", canary_verdict_name(s->verdict),
                (unsigned long long)(s->completed[0] + s->dropped[0]),
                (unsigned long long)(s->completed[1] + s->dropped[1]));
        table_num(f, s->p99_ms[0], " %*.2f", 11);
        table_num(f, s->p99_ms[1], " %*.2f", 9);
        table_num(f, 100.0 * s->drop_rate[0], " %*.3f", 12);
        table_num(f, 100.0 * s->drop_rate[1], " %*.3f", 8);
        table_num(f, s->gpu_util, " %*.3f", 9);
        fprintf(f, "  %s\n", s->verdict == CANARY_ABORTED ? canary_reasons(s->reasons, why, sizeof why) : "");
    }
    fputs("  timeline:", f);
    for (int e = 0; e < r->nevents; e++)
        fprintf(f, "%s %.1f s %s step %d", e ? "," : "", r->timeline[e].t_s,
                canary_event_name(r->timeline[e].what), r->timeline[e].step);
    fputc('\n', f);
    if (r->aborted_at >= 0)
        fprintf(f, "  aborted at step %d (%g%%): %s; every session rolled back to the baseline\n",
                r->aborted_at, r->step[r->aborted_at].pct, canary_reasons(r->reasons, why, sizeof why));
    else if (r->completed)
        fputs("  every step passed: the rollout is complete\n", f);
    else
        fputs("  the run ended before the rollout did\n", f);
    if (nrep > 1) {
        canary_summary sum;
        canary_summarize(reps, nrep, &sum);
        fprintf(f, "  over %d replications: aborted %d (", nrep, sum.aborted);
        for (int k = 0; k < sum.nsteps; k++)
            fprintf(f, "%sstep %d: %d", k ? ", " : "", k, sum.aborted_at[k]);
        fprintf(f, "), complete %d, unfinished %d\n", sum.completed, sum.unfinished);
    }
}

static void json_arm(jw_t *w, const canary_step_rec *s, int a)
{
    jw_obj_begin(w, arm_name(a));
    jw_int(w, "arrived", (long long)s->arrived[a]);
    jw_int(w, "completed", (long long)s->completed[a]);
    jw_int(w, "dropped", (long long)s->dropped[a]);
    jw_num(w, "p50_ms", s->p50_ms[a]);
    jw_num(w, "p99_ms", s->p99_ms[a]);
    jw_num(w, "drop_rate", s->drop_rate[a]);
    jw_obj_end(w);
}

static void json_reasons(jw_t *w, const char *key, unsigned reasons)
{
    jw_arr_begin(w, key);
    for (int k = 0; k < CANARY_NREASONS; k++)
        if (reasons >> k & 1)
            jw_str(w, NULL, canary_reason_name(k));
    jw_arr_end(w);
}

void report_canary_json(jw_t *w, const canary_cfg *c, const canary_rec *reps, int nrep)
{
    if (c->nsteps == 0 || nrep < 1)
        return;
    const canary_rec *r = &reps[0];
    char why[64];
    jw_obj_begin(w, "canary");                   /* replication 0's rollout */
    jw_obj_begin(w, "gates");
    jw_num(w, "p99_ratio", c->p99_ratio);
    jw_num(w, "drop_rate", c->drop_rate);
    jw_num(w, "drop_ratio", c->drop_ratio);
    jw_num(w, "gpu_util", c->gpu_util);
    jw_int(w, "min_frames", c->min_frames);
    jw_obj_end(w);
    jw_arr_begin(w, "steps");
    for (int k = 0; k < r->nsteps; k++) {
        const canary_step_rec *s = &r->step[k];
        jw_obj_begin(w, NULL);
        jw_num(w, "pct", s->pct);
        jw_num(w, "hold_s", c->steps[k].hold_s);
        jw_num(w, "start_s", s->start_s);
        jw_num(w, "end_s", s->end_s);
        jw_str(w, "verdict", canary_verdict_name(s->verdict));
        json_reasons(w, "reasons", s->reasons);
        json_arm(w, s, CANARY_BASE);
        json_arm(w, s, CANARY_VARIANT);
        jw_num(w, "gpu_util", s->gpu_util);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_num(w, "aborted_at_step", r->aborted_at >= 0 ? r->aborted_at : NAN);
    if (r->aborted_at >= 0)
        jw_str(w, "reason", canary_reasons(r->reasons, why, sizeof why));
    else
        jw_num(w, "reason", NAN);
    jw_bool(w, "completed", r->completed);
    jw_arr_begin(w, "timeline");
    for (int e = 0; e < r->nevents; e++) {
        jw_obj_begin(w, NULL);
        jw_num(w, "t_s", r->timeline[e].t_s);
        jw_int(w, "step", r->timeline[e].step);
        jw_str(w, "event", canary_event_name(r->timeline[e].what));
        jw_obj_end(w);
    }
    jw_arr_end(w);
    canary_summary sum;
    canary_summarize(reps, nrep, &sum);
    jw_obj_begin(w, "replications");             /* every replication's rollout, counted */
    jw_int(w, "n", sum.nrep);
    jw_int(w, "aborted", sum.aborted);
    jw_int(w, "completed", sum.completed);
    jw_int(w, "unfinished", sum.unfinished);
    jw_arr_begin(w, "aborted_at_step");
    for (int k = 0; k < sum.nsteps; k++)
        jw_int(w, NULL, sum.aborted_at[k]);
    jw_arr_end(w);
    jw_obj_end(w);
    jw_obj_end(w);
}
