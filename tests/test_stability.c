/* test_stability.c — unstable configurations: the growth test
 * (models/stability.c) on series whose window means are computed by hand,
 * then whole runs whose answer queueing theory gives: M/M/1 at
 * rho = lambda/mu = 1.05 and 1.3 is flagged quickly, with the offered load
 * in the reason equal to lambda/mu; at rho = 0.9 and 0.95 it is never
 * flagged over 30 seeds of long runs; a bounded queue (M/M/1/K) at rho = 2
 * is stable and loses the share Erlang's loss formula for M/M/1/K gives; a
 * GPU stage near saturation is not flagged, and above it is; a flash crowd
 * that overloads an unbounded queue for two minutes and then recovers is not
 * flagged; the shipped flash-crowd scenario is stable; the cap on items in
 * flight ends a replication with an unstable verdict at cap / lambda; and
 * the frontier leaves unstable rows out. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "models/frontier.h"
#include "models/report.h"
#include "models/scenario.h"
#include "models/stability.h"
#include "models/sweep.h"
#include "tests/kit.h"

/* ---- the test itself, on synthetic series ------------------------------- */

/* level(t) = t at ticks t = 0, 1, ...: eight windows of four ticks at tick
 * 32, window w holding t = 4(w-1) .. 4w-1, mean 4w - 2.5, so window 4 has
 * mean 13.5 and window 8 mean 29.5; the sd within a window is that of four
 * consecutive integers, sqrt(1.25), far below the rise of 16. */
Test(stability, ramp_is_flagged_at_tick_32_with_hand_computed_windows)
{
    stab_t d;
    cr_assert_eq(stab_init(&d, 2, 1000.0), 0);
    stab_watch(&d, 1, 0);                      /* series 0 is not watched */
    stab_growth g;
    int flagged_at = -1;
    for (int t = 0; t < 200 && flagged_at < 0; t++) {
        double lv[2] = { 1000.0 * t, t };
        if (stab_tick(&d, (t + 1) * 1000.0, lv, &g))
            flagged_at = t + 1;
    }
    cr_expect_eq(flagged_at, 32, "flagged after %d ticks", flagged_at);
    cr_expect_eq(g.series, 1);
    cr_expect_float_eq(g.q_from, 13.5, 1e-12);
    cr_expect_float_eq(g.q_to, 29.5, 1e-12);
    cr_expect_float_eq(g.t_from, 3.5 * 4 * 1000.0, 1e-9);   /* the middle of window 4 */
    cr_expect_float_eq(g.t_to, 7.5 * 4 * 1000.0, 1e-9);
    stab_free(&d);
}

/* With min_window 8 the windows must be 8 ticks long: the blocks merge at
 * tick 64 (32 blocks of 2), the first time 8 windows of 8 ticks exist. */
Test(stability, min_window_delays_the_judgement)
{
    stab_t d;
    cr_assert_eq(stab_init(&d, 1, 1000.0), 0);
    stab_watch(&d, 0, 8);
    stab_growth g;
    int flagged_at = -1;
    for (int t = 0; t < 500 && flagged_at < 0; t++) {
        double lv = t;
        if (stab_tick(&d, (t + 1) * 1000.0, &lv, &g))
            flagged_at = t + 1;
    }
    cr_expect_eq(flagged_at, 64);
    /* windows of 8 ticks at tick 64: window 4 holds t = 24..31, window 8 t = 56..63 */
    cr_expect_float_eq(g.q_from, 27.5, 1e-12);
    cr_expect_float_eq(g.q_to, 59.5, 1e-12);
    stab_free(&d);
}

/* A stationary series (i.i.d. normal) is never flagged over 100 000 ticks,
 * and a ramp that stops (a burst) is not flagged once it is in the past. */
Test(stability, stationary_and_finished_bursts_are_not_flagged)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    stab_t d;
    cr_assert_eq(stab_init(&d, 2, 1000.0), 0);
    stab_watch(&d, 0, 0);
    stab_watch(&d, 1, 0);
    stab_growth g;
    int flagged = 0;
    for (int t = 0; t < 100000; t++) {
        double burst = t >= 20 && t < 28 ? 50.0 * (t - 20) : 0.0;   /* up for 8 ticks, then gone */
        double lv[2] = { 50 + gsl_ran_gaussian(r, 10), burst + gsl_ran_gaussian(r, 1) };
        if (t >= 40)
            lv[1] = gsl_ran_gaussian(r, 1);
        flagged += stab_tick(&d, (t + 1) * 1000.0, lv, &g);
    }
    cr_expect_eq(flagged, 0);
    stab_restart(&d, 0);
    cr_expect_eq(d.nblk, 0);
    stab_free(&d);
    gsl_rng_free(r);
}

/* ---- whole runs ------------------------------------------------------------ */

/* M/M/1: Poisson arrivals at lambda, one exponential server of mean 1/mu. */
static void mm1(scenario_cfg *c, uint64_t seed, double lambda_hz, double mean_ms, double duration_s,
                int reps)
{
    kit_base(c, "mm1", seed, 1, 0, 0, duration_s, reps);
    poisson(c, lambda_hz);
    dist_free(&c->stages[0].service);
    cr_assert_null(dist_init_exponential(&c->stages[0].service, mean_ms));
}

/* The number after "offered load " in the reason. */
static double reason_load(const char *reason)
{
    const char *p = strstr(reason, "offered load ");
    cr_assert_not_null(p, "%s", reason);
    return strtod(p + strlen("offered load "), NULL);
}

static void expect_unstable(double rho)
{
    double mean_ms = 10, lambda = rho * 1000.0 / mean_ms;      /* rho = lambda / mu */
    scenario_cfg c;
    mm1(&c, 3, lambda, mean_ms, 3600, 3);
    run_result r;
    run(&c, 2, &r);
    cr_expect(!r.verdict.stable, "rho %g not flagged", rho);
    cr_expect_eq(r.verdict.stage, 0);
    cr_expect_eq(r.verdict.unstable_reps, 3, "%d of 3 replications flagged", r.verdict.unstable_reps);
    cr_expect(r.verdict.t_stop_s <= 360, "stopped at %g s of 3600", r.verdict.t_stop_s);
    double shown = reason_load(r.verdict.reason), want = lambda * mean_ms / 1000.0;
    cr_expect(fabs(shown - want) <= 0.005 * want, "reason says %g, lambda/mu = %g: %s", shown, want,
              r.verdict.reason);
    cr_expect(strstr(r.verdict.reason, "stage0 queue grew") == r.verdict.reason, "%s",
              r.verdict.reason);
    cr_expect_eq(r.nsla, 0);
    /* the JSON says it */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_json(f, &r, 0.0);
    fclose(f);
    cr_expect(strstr(buf, "\"verdict\": {\n    \"stable\": false,\n    \"reason\": \"stage0 queue grew")
              != NULL, "%.300s", buf);
    free(buf);
    run_result_free(&r);
    cfg_free(&c);
}

Test(stability, mm1_rho_1_05_is_flagged_quickly, .timeout = 60)
{
    expect_unstable(1.05);
}

Test(stability, mm1_rho_1_3_is_flagged_quickly, .timeout = 60)
{
    expect_unstable(1.3);
}

/* 30 seeds of 2000 s (about 190 000 customers each, thousands of the
 * queue's relaxation times): the count of false positives must be 0. */
static void expect_stable_over_seeds(double rho, double mean_ms)
{
    int flagged = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        scenario_cfg c;
        mm1(&c, seed, rho * 1000.0 / mean_ms, mean_ms, 2000, 1);
        run_result r;
        run(&c, 1, &r);
        if (!r.verdict.stable) {
            flagged++;
            cr_log_error("rho %g seed %llu: %s", rho, (unsigned long long)seed, r.verdict.reason);
        }
        run_result_free(&r);
        cfg_free(&c);
    }
    cr_expect_eq(flagged, 0, "rho %g: %d false positives in 30 seeds", rho, flagged);
}

Test(stability, mm1_rho_0_9_never_flagged_in_30_seeds, .timeout = 120)
{
    expect_stable_over_seeds(0.9, 10);
}

Test(stability, mm1_rho_0_95_never_flagged_in_30_seeds, .timeout = 120)
{
    expect_stable_over_seeds(0.95, 10);
}

/* M/M/1/K with K = 10 waiting places (N = 11 in the system) at rho = 2: a
 * loss system, stable. Blocking probability (1 - rho) rho^N / (1 - rho^(N+1))
 * = 2048 / 4095. */
Test(stability, bounded_queue_at_rho_2_is_stable_with_losses, .timeout = 60)
{
    scenario_cfg c;
    mm1(&c, 5, 200, 10, 2000, 2);
    c.stages[0].capacity = 10;
    run_result r;
    run(&c, 2, &r);
    cr_expect(r.verdict.stable, "%s", r.verdict.reason);
    double rho = 2, n = 11, block = (1 - rho) * pow(rho, n) / (1 - pow(rho, n + 1));
    near("drop rate = M/M/1/K blocking", r.stage[0].drop_rate.mean, block, 0.01);
    run_result_free(&r);
    cfg_free(&c);
}

/* One GPU, batches of up to 8 taking 16 ms (2 ms per frame at a full
 * batch): capacity 500 frames/s. At 475/s (0.95) it is stable, at 650/s
 * (1.3) it is not. */
static run_result gpu_run(uint64_t seed, double rate_hz, double duration_s)
{
    scenario_cfg c;
    kit_base(&c, "gpu", seed, 1, 1, 0, duration_s, 1);
    poisson(&c, rate_hz);
    stage_cfg *st = on_gpu(&c, 0, "encode", 8, 5, 16);
    table2(st, 1, 6, 8, 16);
    run_result r;
    run(&c, 1, &r);
    cfg_free(&c);
    r.cfg = NULL;                          /* the caller reads only the verdict */
    return r;
}

Test(stability, gpu_batching_near_saturation, .timeout = 120)
{
    int flagged = 0;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        run_result r = gpu_run(seed, 475, 600);
        flagged += !r.verdict.stable;
        if (!r.verdict.stable)
            cr_log_error("seed %llu: %s", (unsigned long long)seed, r.verdict.reason);
        run_result_free(&r);
    }
    cr_expect_eq(flagged, 0, "%d of 10 seeds flagged at 0.95 of a GPU's full-batch capacity",
                 flagged);
    run_result r = gpu_run(1, 650, 600);
    cr_expect(!r.verdict.stable, "1.3 x a GPU's capacity not flagged");
    cr_expect(fabs(r.verdict.offered_load - 1.3) < 1e-9, "offered load %g", r.verdict.offered_load);
    cr_expect(r.verdict.t_stop_s <= 120, "stopped at %g s", r.verdict.t_stop_s);
    run_result_free(&r);
}

/* 10 streams at 10 fps into one unbounded exponential server of 6 ms
 * (load 0.6); 10 more streams join at 300 s for 120 s (load 1.2). The queue
 * grows by about (200 - 166.7)/s x 120 s = 4000 during the crowd and drains
 * afterwards: a flash crowd that recovers, never flagged. */
Test(stability, flash_crowd_that_recovers_is_not_flagged, .timeout = 120)
{
    int flagged = 0;
    uint64_t peak = UINT64_MAX;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        scenario_cfg c;
        kit_base(&c, "crowd", seed, 1, 0, 0, 1200, 1);
        periodic(&c, 10, 10);
        c.workload.phase = PHASE_RANDOM;
        c.workload.surge_streams = 10;
        c.workload.surge_at_s = 300;
        c.workload.surge_for_s = 120;
        dist_free(&c.stages[0].service);
        cr_assert_null(dist_init_exponential(&c.stages[0].service, 6));
        run_result r;
        run(&c, 1, &r);
        flagged += !r.verdict.stable;
        if (!r.verdict.stable)
            cr_log_error("seed %llu: %s", (unsigned long long)seed, r.verdict.reason);
        if (r.peak_in_flight < peak)
            peak = r.peak_in_flight;
        run_result_free(&r);
        cfg_free(&c);
    }
    cr_expect_eq(flagged, 0, "%d of 10 flash crowds flagged", flagged);
    cr_expect(peak > 2000, "the crowd did pile up (least peak %llu in flight)",
              (unsigned long long)peak);
}

Test(stability, shipped_flash_crowd_is_stable, .timeout = 120)
{
    scenario_cfg c;
    char err[1024];
    cr_assert_eq(scn_load("scenarios/flash-crowd.yaml", &c, err, sizeof err), 0, "%s", err);
    c.replications = 2;
    run_result r;
    run(&c, 2, &r);
    cr_expect(r.verdict.stable, "%s", r.verdict.reason);
    run_result_free(&r);
    cfg_free(&c);
}

/* Arrivals at 50 000/s into a server of mean 1 s with control ticks every
 * 100 s (the growth test would first judge at 3200 s): the cap on items in
 * flight stops the replication when 2^22 items have arrived, at
 * 2^22 / 50 000 = 83.9 s, with an unstable verdict that names the stage. */
Test(stability, cap_on_items_in_flight_is_an_unstable_verdict, .timeout = 120)
{
    scenario_cfg c;
    mm1(&c, 1, 50000, 1000, 1000, 1);
    c.degrade.interval_s = 100;
    c.degrade.window_s = 100;
    c.alerts.window_s = 100;
    run_result r;
    run(&c, 1, &r);
    cr_expect(!r.verdict.stable);
    double want = (double)PIPE_MAX_IN_FLIGHT / 50000.0;
    cr_expect(fabs(r.verdict.t_stop_s - want) < 1.0, "stopped at %g s, want %g", r.verdict.t_stop_s,
              want);
    cr_expect(strstr(r.verdict.reason, "stage0 queue reached") == r.verdict.reason, "%s",
              r.verdict.reason);
    cr_expect(r.peak_in_flight == PIPE_MAX_IN_FLIGHT, "peak %llu",
              (unsigned long long)r.peak_in_flight);
    run_result_free(&r);
    cfg_free(&c);
}

/* The frontier leaves rows with stable = 0 out, whatever their cost. */
Test(stability, frontier_leaves_unstable_rows_out)
{
    const char *csv =
        "point,streams,gpus,fps,frame_p50,frame_p99,drop_rate,cost_per_stream_hour,sla_pass,stable\n"
        "0,8,1,10,20,50,0,0.25,1,1\n"
        "1,16,1,10,15,40,0,0.125,0,0\n";
    frontier_table t;
    char err[256];
    cr_assert_eq(frontier_parse(csv, strlen(csv), "t.csv", &t, err, sizeof err), 0, "%s", err);
    frontier_opts o;
    frontier_opts_default(&o);
    cr_expect(frontier_row_eligible(&t, 0, &o));
    cr_expect(!frontier_row_eligible(&t, 1, &o), "an unstable row is eligible");
    frontier_pareto_set ps;
    cr_assert_eq(frontier_pareto(&t, &o, &ps, err, sizeof err), 0);
    cr_expect_eq(ps.left_out_unstable, 1);
    cr_expect_eq(ps.ngroups, 1);
    cr_expect_eq(ps.g[0].n, 1);
    cr_expect_eq(ps.g[0].rows[0], 0);
    frontier_pareto_free(&ps);
    frontier_free(&t);
}

/* A sweep over lambda with mu = 100/s: the point at rho 1.3 is kept,
 * marked stable = 0 in results.csv and "stable": false in its point file,
 * and the sweep goes on to the point after it. */
Test(stability, sweep_marks_unstable_points_and_goes_on, .timeout = 60)
{
    char d[64], scn[128], path[160];
    snprintf(d, sizeof d, "/tmp/vlsim-stab-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    snprintf(scn, sizeof scn, "%s/mm1.yaml", d);
    FILE *f = fopen(scn, "w");
    cr_assert_not_null(f);
    fputs("name: mm1\nseed: 1\nduration_s: 600\nreplications: 2\n"
          "workload: {arrival: poisson, rate_hz: 50}\n"
          "stages:\n  - name: server\n    service: {dist: exponential, mean_ms: 10}\n", f);
    fclose(f);
    char out[128];
    snprintf(out, sizeof out, "%s/out", d);
    const char *axes[] = { "workload.rate_hz=50,130,90" };
    sweep_opts o = { .out_dir = out, .jobs = 2, .axes = axes, .naxes = 1 };
    char err[1024] = "";
    cr_assert_eq(sweep_run(scn, &o, err, sizeof err), SWEEP_OK, "%s", err);
    snprintf(path, sizeof path, "%s/results.csv", out);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect(strstr(line, ",sla_pass,stable\n") != NULL, "header: %s", line);
    const char want[3] = { '1', '0', '1' };          /* rho 0.5, 1.3, 0.9 */
    for (int p = 0; p < 3; p++) {
        cr_assert_not_null(fgets(line, sizeof line, f));
        size_t n = strlen(line);
        cr_expect(n >= 2 && line[n - 2] == want[p], "point %d: %s", p, line);
    }
    fclose(f);
    for (int p = 0; p < 3; p++) {
        snprintf(path, sizeof path, "%s/points/%05d.json", out, p);
        f = fopen(path, "r");
        cr_assert_not_null(f, "%s", path);
        char head[256] = "";
        size_t got = fread(head, 1, sizeof head - 1, f);
        head[got] = 0;
        fclose(f);
        cr_expect(strstr(head, p == 1 ? "\"stable\": false" : "\"stable\": true") != NULL,
                  "point %d: %s", p, head);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_expect_eq(system(cmd), 0);
}

/* No SLA holds for an unstable system: a line its transient would meet
 * (p99 <= 10^9 ms) fails, so the capacity search and the frontier's
 * sla_pass see an infeasible point; the same line passes at rho 0.5. */
Test(stability, unstable_fails_every_sla_line, .timeout = 60)
{
    for (int k = 0; k < 2; k++) {
        scenario_cfg c;
        mm1(&c, 2, k == 0 ? 130 : 50, 10, 600, 2);
        snprintf(c.sla[0].metric, sizeof c.sla[0].metric, "frame");
        c.sla[0].percentile = 99;
        c.sla[0].ms = 1e9;
        c.nsla = 1;
        run_result r;
        run(&c, 2, &r);
        cr_expect_eq(r.verdict.stable, k == 1);
        cr_expect(r.sla[0].value.mean < 1e9);
        cr_expect_eq(r.sla[0].pass, k == 1, "rho %s: pass %d", k ? "0.5" : "1.3", r.sla[0].pass);
        run_result_free(&r);
        cfg_free(&c);
    }
}

/* The verdict, like every figure, does not depend on the thread count. */
Test(stability, unstable_output_is_the_same_for_any_thread_count, .timeout = 60)
{
    char *json[2];
    for (int k = 0; k < 2; k++) {
        scenario_cfg c;
        mm1(&c, 9, 130, 10, 600, 4);
        run_result r;
        run(&c, k + 1, &r);
        cr_expect(!r.verdict.stable);
        size_t len = 0;
        FILE *f = open_memstream(&json[k], &len);
        report_json(f, &r, 0.0);
        fclose(f);
        run_result_free(&r);
        cfg_free(&c);
    }
    cr_expect(strcmp(json[0], json[1]) == 0, "1 and 2 threads differ");
    free(json[0]);
    free(json[1]);
}

/* M/G/1 with a heavy-tailed service (lognormal, mean 10 ms, sd 40 ms:
 * cs^2 = 16) at rho = 0.95: its queue wanders much more slowly than an
 * M/M/1's, and is still never flagged; at rho = 1.05 it is. */
Test(stability, mg1_heavy_tailed_service, .timeout = 120)
{
    int flagged = 0;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        scenario_cfg c;
        mm1(&c, seed, 95, 10, 2000, 1);
        dist_free(&c.stages[0].service);
        cr_assert_null(dist_init_lognormal_mean_sd(&c.stages[0].service, 10, 40));
        run_result r;
        run(&c, 1, &r);
        flagged += !r.verdict.stable;
        run_result_free(&r);
        cfg_free(&c);
    }
    cr_expect_eq(flagged, 0, "%d of 10 seeds flagged at rho 0.95", flagged);
    scenario_cfg c;
    mm1(&c, 1, 105, 10, 3600, 1);
    dist_free(&c.stages[0].service);
    cr_assert_null(dist_init_lognormal_mean_sd(&c.stages[0].service, 10, 40));
    run_result r;
    run(&c, 1, &r);
    cr_expect(!r.verdict.stable, "rho 1.05 with cs^2 = 16 not flagged");
    run_result_free(&r);
    cfg_free(&c);
}
