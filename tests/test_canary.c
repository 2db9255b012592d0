/* test_canary.c — the canary rollout (models/canary.c, its hooks in the
 * pipeline, the scenario keys and `vlsim canary`).
 *
 * Independent sources: the routing rule recomputed here with a reference
 * splitmix64 (the hash of seed 004 §3's route_stream), binomial bounds on
 * the share of sessions in the variant, exact arrival counts of aligned
 * periodic streams, the M/M/∞ sojourn p99 = mean x ln(100) of exponential
 * service with no waiting (64 servers at 22 Erlangs: Erlang C ~ 1e-9), the
 * Gamma(n, rate) waiting time for n variant frames of a Poisson stream,
 * and published Wilson intervals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/canary.h"
#include "models/cli.h"
#include "models/report_canary.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/rng.h"

/* ---- helpers ------------------------------------------------------------- */

static void load(const char *yaml, scenario_cfg *c)
{
    char err[1024];
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", ".", c, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
}

static void run(const scenario_cfg *c, int threads, run_result *r)
{
    char err[1024];
    run_opts o = { threads, NULL, NULL, NULL };
    cr_assert_eq(run_scenario(c, &o, r, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(r->canary);
}

/* splitmix64's finaliser, written out from its published constants. */
static uint64_t ref_splitmix(uint64_t x)
{
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The routing rule by hand: variant when the top 53 bits of the hash, as a
 * fraction of 2^53, are below pct/100. */
static int ref_variant(uint64_t salt, uint64_t session, double pct)
{
    uint64_t top = ref_splitmix(session ^ salt) >> 11;
    return (long double)top < (long double)pct / 100.0L * 9007199254740992.0L;
}

/* The salt of replication rep (the pipeline's: rng_stream_seed of stream 0xca9a27). */
static uint64_t salt_of(const scenario_cfg *c, uint32_t rep)
{
    return rng_stream_seed(c->seed, rep, 0xca9a27u);
}

#define BASE "duration_s: 10\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: encode, service: {dist: exponential, mean_ms: 1}}\n"

/* ---- routing ------------------------------------------------------------- */

Test(canary, routing_is_sticky_nested_and_binomial)
{
    const double pcts[] = { 1, 5, 25, 50, 100 };
    const int n = 20000;
    uint64_t salt = 0x5eed1234abcdull;
    int count[5] = { 0 };
    for (int j = 0; j < n; j++) {
        int prev = 0;
        for (int k = 0; k < 5; k++) {
            int arm = canary_arm_at(salt, (uint64_t)j, pcts[k] / 100.0);
            cr_assert_eq(arm, ref_variant(salt, (uint64_t)j, pcts[k]),
                         "session %d at %g%%: the hash rule says otherwise", j, pcts[k]);
            cr_assert(arm >= prev, "session %d left the variant when pct grew to %g%%", j, pcts[k]);
            prev = arm;
            count[k] += arm;
        }
    }
    for (int k = 0; k < 5; k++) {
        double p = pcts[k] / 100.0, sd = sqrt(n * p * (1 - p));
        cr_expect(fabs(count[k] - n * p) <= 4 * sd + 1e-9,
                  "%g%%: %d of %d sessions in the variant; binomial 4 sd bound %.1f +- %.1f",
                  pcts[k], count[k], n, n * p, 4 * sd);
    }
    cr_expect_eq(count[4], n);
}

/* Aligned periodic streams at 1 FPS emit at t = 0, 1, 2, ... s; with a
 * 0.5 s warm-up step 0 is [0.5, 5.5) s and step 1 [5.5, 10.5) s: 5 frames
 * of each stream per step. The variant's arrivals are 5 x the sessions the
 * hash rule puts in it, exactly. */
Test(canary, pipeline_routes_whole_sessions_by_the_rule)
{
    scenario_cfg c;
    load("duration_s: 10.2\nwarmup_s: 0.5\nreplications: 2\nseed: 9\n"
         "workload: {arrival: periodic, streams: 3000, fps: 1, phase: aligned}\n"
         "stages:\n  - {name: work, servers: 64, service: {dist: constant, ms: 1}}\n"
         "canary:\n  steps: [{pct: 10, hold_s: 5}, {pct: 30, hold_s: 5}]\n"
         "  gates: {min_frames: 1}\n", &c);
    run_result r;
    run(&c, 2, &r);
    for (uint32_t rep = 0; rep < 2; rep++) {
        const canary_rec *cr = &r.canary[rep];
        for (int k = 0; k < 2; k++) {
            uint64_t in = 0;
            for (uint64_t j = 0; j < 3000; j++)
                in += (uint64_t)ref_variant(salt_of(&c, rep), j, c.canary.steps[k].pct);
            cr_expect_eq(cr->step[k].arrived[1], 5 * in, "rep %u step %d: %llu variant frames, "
                         "want 5 x %llu sessions", rep, k,
                         (unsigned long long)cr->step[k].arrived[1], (unsigned long long)in);
            cr_expect_eq(cr->step[k].arrived[0] + cr->step[k].arrived[1], 5 * 3000u);
            cr_expect_eq(cr->step[k].verdict, CANARY_PASSED);
        }
        cr_expect(cr->completed);
    }
    run_result_free(&r);
    cfg_free(&c);
}

/* ---- gates ---------------------------------------------------------------- */

/* Poisson 2000/s into 64 exponential servers of mean 10 ms: no waiting, so
 * each arm's sojourn is its service: p99 = mean x ln 100 — 46.05 ms for the
 * baseline and 138.2 ms for a variant 3 x slower. */
#define MMINF \
    "duration_s: 30\nwarmup_s: 2\nseed: 4\n" \
    "workload: {arrival: poisson, rate_hz: 2000}\n" \
    "stages:\n  - {name: encode, servers: 64, service: {dist: exponential, mean_ms: 10}}\n"

Test(canary, gates_trip_on_a_planted_regression_at_the_first_step)
{
    scenario_cfg c;
    load(MMINF "replications: 3\n"
         "canary:\n  variant: {stages: {encode: {service_scale: 3}}}\n"
         "  steps: [{pct: 5, hold_s: 10}, {pct: 25, hold_s: 10}]\n"
         "  gates: {p99_ratio: 1.3, min_frames: 500}\n", &c);
    run_result r;
    run(&c, 2, &r);
    double p99 = 10 * log(100.0);
    for (int rep = 0; rep < 3; rep++) {
        const canary_rec *cr = &r.canary[rep];
        cr_expect_eq(cr->aborted_at, 0, "rep %d aborted at %d", rep, cr->aborted_at);
        cr_expect(cr->reasons & CANARY_R_P99);
        const canary_step_rec *s = &cr->step[0];
        cr_expect(s->completed[1] >= 500);
        cr_expect(fabs(s->p99_ms[0] / p99 - 1) < 0.05, "baseline p99 %.2f, M/M/inf %.2f",
                  s->p99_ms[0], p99);
        cr_expect(fabs(s->p99_ms[1] / (3 * p99) - 1) < 0.2, "variant p99 %.2f, M/M/inf %.2f",
                  s->p99_ms[1], 3 * p99);
        cr_expect(fabs(s->end_s - 12.0) < 1e-9, "decided at %.3f s, want the hold's end 12 s", s->end_s);
        cr_expect_eq(cr->step[1].verdict, CANARY_NOT_REACHED);
        /* rollback: start, abort, nothing after */
        cr_expect_eq(cr->nevents, 2);
        cr_expect_eq(cr->timeline[1].what, CANARY_EV_ABORT);
    }
    run_result_free(&r);
    cfg_free(&c);
}

/* An identical variant: each step's variant p99 comes from >= 1000 frames of
 * the same Exp(10 ms) sojourn; its sd is mean x sqrt(.99 x .01 / n) / .01 =
 * 3.1 ms (6.8 % of 46 ms), so p99_ratio 1.3 sits > 4 sd out: a false abort
 * has probability < 1e-4 per step, and 20 rollouts x 3 steps give
 * P(any) < 0.006. Zero aborts is the bound. */
Test(canary, identical_variant_is_not_aborted)
{
    scenario_cfg c;
    load(MMINF "replications: 20\n"
         "canary:\n  steps: [{pct: 5, hold_s: 10}, {pct: 25, hold_s: 8}, {pct: 50, hold_s: 8}]\n"
         "  gates: {p99_ratio: 1.3, min_frames: 1000}\n", &c);
    run_result r;
    run(&c, 2, &r);
    canary_summary s;
    canary_summarize(r.canary, r.nrep, &s);
    cr_expect_eq(s.aborted, 0, "%d of 20 identical rollouts aborted", s.aborted);
    cr_expect_eq(s.completed, 20);
    run_result_free(&r);
    cfg_free(&c);
}

/* pct 5 of 2000/s: 100 variant frames/s. With min_frames 1500 a 5 s hold
 * must wait for the sample; the 1500th variant frame arrives after a
 * Gamma(1500, 100/s) time: 15 s +- 0.39 s (its 10 ms service added). */
Test(canary, min_frames_holds_back_the_decision)
{
    scenario_cfg c;
    load(MMINF "replications: 2\n"
         "canary:\n  variant: {stages: {encode: {service_scale: 3}}}\n"
         "  steps: [{pct: 5, hold_s: 5}, {pct: 25, hold_s: 5}]\n"
         "  gates: {min_frames: 1500}\n", &c);
    run_result r;
    run(&c, 1, &r);
    for (int rep = 0; rep < 2; rep++) {
        const canary_rec *cr = &r.canary[rep];
        const canary_step_rec *s = &cr->step[0];
        cr_expect_eq(cr->aborted_at, 0);
        cr_expect_eq(s->completed[1] + s->dropped[1], 1500u, "decided at the 1500th frame");
        double wait = s->end_s - s->start_s;
        cr_expect(wait > 15 - 5 * 0.39 && wait < 15 + 5 * 0.39, "decided after %.2f s", wait);
        cr_expect_eq(cr->timeline[1].what, CANARY_EV_WAIT);
        cr_expect(fabs(cr->timeline[1].t_s - 7.0) < 1e-9);   /* the hold's end: 2 + 5 s */
    }
    run_result_free(&r);
    cfg_free(&c);

    /* a sample that never comes: no decision, and no abort however bad */
    load(MMINF "replications: 1\n"
         "canary:\n  variant: {stages: {encode: {service_scale: 3}}}\n"
         "  steps: [{pct: 5, hold_s: 5}]\n  gates: {min_frames: 100000}\n", &c);
    run(&c, 1, &r);
    cr_expect_eq(r.canary[0].aborted_at, -1);
    cr_expect_eq(r.canary[0].step[0].verdict, CANARY_WAITING);
    run_result_free(&r);
    cfg_free(&c);
}

/* The drop gate, with a replacement distribution: a loss system (no
 * waiting room) of 64 servers; the variant's frames (25 % of 2000/s) take a
 * constant 400 ms, offering 200 Erlangs on their own — far beyond 64
 * servers, so most frames are lost and the variant's drop rate is far above
 * 2 %. The p99 gate is off, so the drop gate alone decides. */
Test(canary, drop_gate_trips_when_the_variant_loses_frames)
{
    scenario_cfg c;
    load("duration_s: 20\nwarmup_s: 1\nseed: 5\nreplications: 1\n"
         "workload: {arrival: poisson, rate_hz: 2000}\n"
         "stages:\n  - {name: encode, servers: 64, queue: {capacity: 0}, "
         "service: {dist: exponential, mean_ms: 10}}\n"
         "canary:\n  variant: {stages: {encode: {service: {dist: constant, ms: 400}}}}\n"
         "  steps: [{pct: 25, hold_s: 5}]\n  gates: {p99_ratio: 0, min_frames: 100}\n", &c);
    run_result r;
    run(&c, 1, &r);
    cr_expect_eq(r.canary[0].aborted_at, 0);
    cr_expect_eq(r.canary[0].reasons, (unsigned)CANARY_R_DROP, "reasons %u", r.canary[0].reasons);
    cr_expect(r.canary[0].step[0].drop_rate[1] > 0.02);
    run_result_free(&r);
    cfg_free(&c);
}

/* A GPU stage with a constant 5 ms batch, lightly loaded (20 frames/s on one
 * GPU): most frames find it idle, so each arm's median is its batch time —
 * 5 ms baseline, 10 ms for a variant scaled 2 (batches hold one arm only). */
Test(canary, gpu_stage_variant_batches_use_the_override)
{
    scenario_cfg c;
    load("duration_s: 200\nwarmup_s: 1\nseed: 3\nreplications: 1\n"
         "workload: {arrival: poisson, rate_hz: 20}\ncluster: {gpus: 1}\n"
         "stages:\n  - {name: encode, on: gpu, max_batch: 8, service: {dist: constant, ms: 5}}\n"
         "canary:\n  variant: {stages: {encode: {service_scale: 2}}}\n"
         "  steps: [{pct: 50, hold_s: 100}]\n  gates: {min_frames: 100}\n", &c);
    run_result r;
    run(&c, 1, &r);
    const canary_step_rec *s = &r.canary[0].step[0];
    cr_expect(fabs(s->p50_ms[0] - 5) < 5e-3, "baseline p50 %.4f", s->p50_ms[0]);
    cr_expect(fabs(s->p50_ms[1] - 10) < 1e-2, "variant p50 %.4f", s->p50_ms[1]);
    /* utilization ~ 20/s x ~7.5 ms = 0.15 < 0.9: the GPU gate stays quiet; p99 ratio trips */
    cr_expect(s->gpu_util > 0.1 && s->gpu_util < 0.25, "gpu util %.3f", s->gpu_util);
    cr_expect_eq(r.canary[0].reasons, (unsigned)CANARY_R_P99);
    run_result_free(&r);
    cfg_free(&c);
}

/* Common random numbers: 2000 aligned streams at 1 FPS into 4000 servers —
 * nobody waits, so each stage draws its service times in arrival order
 * whatever the variant does, and every frame of a burst is done long before
 * the step ends at x.5 s (P(an exponential of mean 20 ms > 500 ms) = e^-25).
 * The variant frames of a run with service_scale 2 then take exactly twice
 * what the same frames took with scale 1: their p50 and p99 double, up to
 * the histogram's 0.05 % buckets, and the baseline's do not move. With
 * independent draws the p99 ratio would scatter by about 7 %. */
Test(canary, variant_draws_share_the_baseline_stream)
{
    scenario_cfg c1, c2;
    const char *tail = "replications: 2\ncanary:\n  variant: {stages: {encode: {service_scale: %s}}}\n"
                       "  steps: [{pct: 5, hold_s: 10}]\n  gates: {p99_ratio: 0, min_frames: 1}\n";
    const char *head = "duration_s: 10.2\nwarmup_s: 0.5\nseed: 8\n"
                       "workload: {arrival: periodic, streams: 2000, fps: 1, phase: aligned}\n"
                       "stages:\n  - {name: encode, servers: 4000, "
                       "service: {dist: exponential, mean_ms: 10}}\n";
    char y1[1024], y2[1024], t[256];
    snprintf(t, sizeof t, tail, "1");
    snprintf(y1, sizeof y1, "%s%s", head, t);
    snprintf(t, sizeof t, tail, "2");
    snprintf(y2, sizeof y2, "%s%s", head, t);
    load(y1, &c1);
    load(y2, &c2);
    run_result a, b;
    run(&c1, 2, &a);
    run(&c2, 2, &b);
    for (int rep = 0; rep < 2; rep++) {
        const canary_step_rec *sa = &a.canary[rep].step[0], *sb = &b.canary[rep].step[0];
        cr_expect_eq(sa->completed[1], sb->completed[1]);
        cr_expect_eq(sa->completed[1], sa->arrived[1]);
        cr_expect(sa->completed[1] > 500, "%llu variant frames", (unsigned long long)sa->completed[1]);
        cr_expect(fabs(sb->p50_ms[1] / sa->p50_ms[1] - 2) < 2e-3, "p50 %g -> %g", sa->p50_ms[1], sb->p50_ms[1]);
        cr_expect(fabs(sb->p99_ms[1] / sa->p99_ms[1] - 2) < 2e-3, "p99 %g -> %g", sa->p99_ms[1], sb->p99_ms[1]);
        cr_expect_eq(sa->p99_ms[0], sb->p99_ms[0], "the baseline moved: %g -> %g", sa->p99_ms[0], sb->p99_ms[0]);
    }
    /* and a variant of scale 1 draws exactly what the baseline would: the
     * run is the run without a canary, to the last bit */
    scenario_cfg c0;
    char y0[1024];
    snprintf(y0, sizeof y0, "%sreplications: 2\n", head);
    load(y0, &c0);
    run_result z;
    char err[256];
    run_opts o = { 2, NULL, NULL, NULL };
    cr_assert_eq(run_scenario(&c0, &o, &z, err, sizeof err), 0, "%s", err);
    cr_expect_eq(z.stage[0].service.mean.mean, a.stage[0].service.mean.mean);
    cr_expect_eq(z.e2e.p99.mean, a.e2e.p99.mean);
    cr_expect_eq(z.e2e.max, a.e2e.max);
    run_result_free(&z);
    cfg_free(&c0);
    run_result_free(&a);
    run_result_free(&b);
    cfg_free(&c1);
    cfg_free(&c2);
}

/* The gates on counts fed by hand: each rule against its threshold. */
Test(canary, gates_by_hand)
{
    scenario_cfg c;
    load(BASE "canary:\n  steps: [{pct: 50, hold_s: 1}, {pct: 100, hold_s: 1}]\n"
         "  gates: {p99_ratio: 1.3, drop_rate: 0.02, drop_ratio: 2, gpu_util: 0.9, min_frames: 100}\n",
         &c);
    canary_rec rec;
    canary_run k;
    cr_assert_eq(canary_init(&k, &c.canary, 2, 1, &rec), 0);
    cr_expect_eq(canary_begin(&k, 0, 0), 1000);
    /* 200 baseline frames at 10 ms, 100 variant frames at 12.9 ms: p99 below 1.3 x */
    for (int j = 0; j < 200; j++)
        cr_expect_eq(canary_completed(&k, CANARY_BASE, 10), 0);
    for (int j = 0; j < 100; j++)
        canary_completed(&k, CANARY_VARIANT, 12.9);
    /* GPUs: 2 x 1000 ms of window, 1700 ms busy = 0.85 */
    double next = canary_decide(&k, 1000, 1700);
    cr_expect_eq(rec.step[0].verdict, CANARY_PASSED, "reasons %u", rec.step[0].reasons);
    cr_expect(fabs(rec.step[0].gpu_util - 0.85) < 1e-12);
    cr_expect_eq(rec.step[0].drop_rate[1], 0);
    cr_expect_eq(next, 2000);
    /* step 1 (100 %): no baseline, so neither ratio is judged; 3 of 100
     * dropped (3 % > 2 %) and the GPUs 95 % busy */
    for (int j = 0; j < 97; j++)
        canary_completed(&k, CANARY_VARIANT, 50);
    for (int j = 0; j < 3; j++)
        canary_dropped(&k, CANARY_VARIANT);
    cr_expect(isinf(canary_decide(&k, 2000, 1700 + 1900)));
    cr_expect_eq(rec.aborted_at, 1);
    cr_expect_eq(rec.reasons, (unsigned)(CANARY_R_DROP | CANARY_R_GPU), "reasons %u", rec.reasons);
    cr_expect_eq(canary_arm(&k, 42), CANARY_BASE, "rolled back");
    canary_free(&k);

    /* the ratios: p99 1.31 x, and a drop rate 2.5 x the baseline's */
    cr_assert_eq(canary_init(&k, &c.canary, 0, 1, &rec), 0);
    canary_begin(&k, 0, 0);
    for (int j = 0; j < 196; j++)
        canary_completed(&k, CANARY_BASE, 10);
    for (int j = 0; j < 4; j++)                  /* 2 % */
        canary_dropped(&k, CANARY_BASE);
    for (int j = 0; j < 95; j++)
        canary_completed(&k, CANARY_VARIANT, 13.1);
    for (int j = 0; j < 5; j++)                  /* 5 %: also above drop_rate */
        canary_dropped(&k, CANARY_VARIANT);
    canary_decide(&k, 1000, 0);
    cr_expect_eq(rec.reasons, (unsigned)(CANARY_R_P99 | CANARY_R_DROP | CANARY_R_DROP_RATIO),
                 "reasons %u", rec.reasons);
    cr_expect(isnan(rec.step[0].gpu_util));
    canary_free(&k);
    cfg_free(&c);
}

/* ---- determinism --------------------------------------------------------------- */

static char *canary_json(const run_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    report_canary_json(&w, &r->cfg->canary, r->canary, r->nrep);
    for (int k = 1; k < r->nrep; k++) {          /* every replication's steps, not just 0's */
        jw_arr_begin(&w, "steps");
        for (int s = 0; s < r->canary[k].nsteps; s++) {
            jw_num(&w, NULL, r->canary[k].step[s].end_s);
            jw_num(&w, NULL, r->canary[k].step[s].p99_ms[1]);
        }
        jw_arr_end(&w);
    }
    jw_obj_end(&w);
    jw_done(&w);
    fclose(f);
    return buf;
}

Test(canary, same_output_for_any_thread_count)
{
    scenario_cfg c;
    load(MMINF "replications: 5\n"
         "canary:\n  variant: {stages: {encode: {service_scale: 1.2}}}\n"
         "  steps: [{pct: 5, hold_s: 5}, {pct: 25, hold_s: 5}]\n  gates: {min_frames: 300}\n", &c);
    run_result a, b;
    run(&c, 1, &a);
    run(&c, 3, &b);
    char *ja = canary_json(&a), *jb = canary_json(&b);
    cr_expect_str_eq(ja, jb);
    free(ja);
    free(jb);
    run_result_free(&a);
    run_result_free(&b);
    cfg_free(&c);
}

/* ---- scenario errors --------------------------------------------------------------- */

static void load_fails(const char *yaml, const char *gist)
{
    scenario_cfg c;
    char err[1024];
    cr_assert_neq(scn_load_string(yaml, strlen(yaml), "s.yaml", ".", &c, err, sizeof err), 0,
                  "loaded: %s", yaml);
    cr_expect(strstr(err, gist) != NULL, "want '%s' in '%s'", gist, err);
}


Test(canary, bad_keys_name_file_line_column_and_key)
{
    load_fails(BASE "canary:\n  steps: [{pct: 1, hold_s: 60}]\n  gates: {p99_ratoi: 1.3}\n",
               "s.yaml:7:11: canary.gates.p99_ratoi: unknown key; did you mean 'p99_ratio'?");
    load_fails(BASE "canary:\n  steps: [{pct: 5, hold_s: 60}, {pct: 1, hold_s: 60}]\n",
               "s.yaml:6:39: canary.steps[1].pct: must be >= the previous step's pct (5)");
    load_fails(BASE "canary:\n  steps: [{pct: 150, hold_s: 60}]\n",
               "s.yaml:6:17: canary.steps[0].pct: must be <= 100");
    load_fails(BASE "canary:\n  steps: [{pct: 1}]\n",
               "s.yaml:6:11: canary.steps[0]: missing required key 'hold_s'");
    load_fails(BASE "canary:\n  variant: {stages: {encdoe: {service_scale: 2}}}\n"
               "  steps: [{pct: 1, hold_s: 1}]\n",
               "s.yaml:6:22: canary.variant.stages.encdoe: unknown key; did you mean 'encode'?");
    load_fails(BASE "canary:\n  variant: {stages: {encode: {service_scale: -2}}}\n"
               "  steps: [{pct: 1, hold_s: 1}]\n",
               "s.yaml:6:46: canary.variant.stages.encode.service_scale: must be > 0, got -2");
    load_fails(BASE "canary:\n  gates: {min_frames: 0}\n  steps: [{pct: 1, hold_s: 1}]\n",
               "s.yaml:6:23: canary.gates.min_frames: must be >= 1, got 0");
    load_fails(BASE "canary:\n  variant: {stages: {encode: {}}}\n  steps: [{pct: 1, hold_s: 1}]\n",
               "canary.variant.stages.encode: give service_scale, service or both");
    load_fails(BASE "canary: {gates: {}}\n", "s.yaml:5:9: canary: missing required key 'steps'");
}

Test(canary, scenario_keys_are_read)
{
    scenario_cfg c;
    load(BASE "canary:\n  variant: {stages: {encode: {service_scale: 1.2, "
         "service: {dist: constant, ms: 2}}}}\n"
         "  steps: [{pct: 1, hold_s: 60}, {pct: 100, hold_s: 30}]\n"
         "  gates: {p99_ratio: 1.5, drop_rate: 0.05, drop_ratio: 2, gpu_util: 0.8, min_frames: 7}\n",
         &c);
    cr_expect_eq(c.canary.nsteps, 2);
    cr_expect_eq(c.canary.steps[1].pct, 100);
    cr_expect_eq(c.canary.steps[0].hold_s, 60);
    cr_expect_eq(c.canary.scale[0], 1.2);
    cr_expect_eq(c.canary.dist_of[0], 0);
    cr_expect_eq(c.canary.dists[0].kind, DIST_CONSTANT);
    cr_expect_eq(c.canary.p99_ratio, 1.5);
    cr_expect_eq(c.canary.drop_rate, 0.05);
    cr_expect_eq(c.canary.drop_ratio, 2);
    cr_expect_eq(c.canary.gpu_util, 0.8);
    cr_expect_eq(c.canary.min_frames, 7);
    cfg_free(&c);
}

/* ---- Wilson, and the command ------------------------------------------------------- */

Test(canary, wilson_interval_matches_published_values)
{
    double lo, hi;
    canary_wilson(7, 10, 0.95, &lo, &hi);      /* 0.3968 .. 0.8922 */
    cr_expect(fabs(lo - 0.39678) < 1e-4 && fabs(hi - 0.89221) < 1e-4, "[%g, %g]", lo, hi);
    canary_wilson(0, 20, 0.95, &lo, &hi);      /* upper: z^2 / (n + z^2) = 0.16113 */
    cr_expect(lo == 0 && fabs(hi - 0.16113) < 1e-4, "[%g, %g]", lo, hi);
    canary_wilson(0, 0, 0.95, &lo, &hi);
    cr_expect(isnan(lo) && isnan(hi));
}

Test(canary, command_rejects_a_bad_regression_and_a_scenario_without_canary)
{
    char *argv1[] = { "vlsim", "canary", "scenarios/canary-encoder.yaml", "--regression",
                      "encdoe=1.2", "-q" };
    cr_expect_eq(cli_main(6, argv1), CLI_BAD_INPUT);
    char *argv2[] = { "vlsim", "canary", "scenarios/canary-encoder.yaml", "--regression",
                      "encode=zero", "-q" };
    cr_expect_eq(cli_main(6, argv2), CLI_BAD_INPUT);
    char *argv3[] = { "vlsim", "canary", "scenarios/mmc-example.yaml", "-q" };
    cr_expect_eq(cli_main(4, argv3), CLI_BAD_INPUT);
}

Test(canary, command_writes_json)
{
    char dir[] = "/tmp/vlcanaryXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char out[256];
    snprintf(out, sizeof out, "%s/c.json", dir);
    char *argv[] = { "vlsim", "canary", "scenarios/canary-encoder.yaml", "--regression",
                     "encode=3", "--replications", "2", "--duration", "40", "--threads", "2",
                     "--set", "canary.gates.min_frames=50", "--json", out, "-q" };
    cr_assert_eq(cli_main(16, argv), CLI_OK);
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_expect(strstr(buf, "\"regression\": {\n    \"encode\": 3\n  }") != NULL, "%s", buf);
    cr_expect(strstr(buf, "\"identical\"") != NULL);
    cr_expect(strstr(buf, "\"rollouts\": 2") != NULL);
    /* an existing file is not replaced without --force */
    cr_expect_eq(cli_main(16, argv), CLI_BAD_INPUT);
    remove(out);
    remove(dir);
}
