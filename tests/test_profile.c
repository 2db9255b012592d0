/* test_profile.c — traffic over time: the target curve (diurnal, steps,
 * trace), the session process that follows it (mean concurrency against
 * the curve's time average, sessions started against the integral of the
 * arrival rate), and the loader's errors for bad profile and autoscale keys
 * (FILE:LINE:COL: KEYPATH: message, lines and columns counted by hand).
 *
 * Independent sources: the curve's closed form and hand-computed linear
 * interpolation of tests/data/profile/trace.csv; Little's law for the
 * session process — with exponential sessions of mean m and arrivals at
 * rate n'(t) + n(t)/m, E N(t) = n(t), so the time-average concurrency over
 * [0, T] is (1/T) int n, and the expected sessions started is
 * n(T) - n(0) + (1/m) int n. */
#include "tests/kit.h"
#include "models/profile.h"
#include "models/scenario.h"
#include "tests/kit_scenario.h"

#define DATA "tests/data/profile"

/* ---- the curve ------------------------------------------------------------ */

Test(profile, diurnal_curve_closed_form)
{
    profile_cfg p = { .kind = PROFILE_DIURNAL, .peak = 60, .trough = 20, .period_s = 3600,
                      .peak_at_s = 900 };
    prof_curve c;
    cr_assert_eq(prof_curve_init(&c, &p, 1), 0);
    near("at the peak", prof_target(&c, 900), 60, EXACT);
    near("half a period later: the trough", prof_target(&c, 900 + 1800), 20, EXACT);
    near("a quarter period before: the middle", prof_target(&c, 0), 40, 1e-12);
    /* slope at t = 0 (a quarter period before the peak): (peak - trough)/2 x 2 pi / period */
    near("slope", prof_slope(&c, 0), 20 * 2 * M_PI / 3600, 1e-12);
    near("peak", prof_peak(&c), 60, EXACT);
    /* rate = slope + n/m: at the peak the slope is 0 */
    near("rate at the peak, m = 60 s", prof_rate(&c, 900, 60), 60.0 / 60, 1e-12);
    prof_curve_free(&c);
}

Test(profile, steps_curve)
{
    profile_cfg p = { .kind = PROFILE_STEPS, .nsteps = 2 };
    p.steps[0] = (profile_step){ 100, 30, 50 };   /* 10 -> 30 over [100, 150] */
    p.steps[1] = (profile_step){ 200, 5, 0 };     /* a jump down to 5 at 200 */
    prof_curve c;
    cr_assert_eq(prof_curve_init(&c, &p, 10), 0);
    near("before", prof_target(&c, 50), 10, EXACT);
    near("mid-ramp", prof_target(&c, 125), 20, EXACT);
    near("ramp slope", prof_slope(&c, 125), 20.0 / 50, EXACT);
    near("after the ramp", prof_target(&c, 175), 30, EXACT);
    near("at the jump: the later value", prof_target(&c, 200), 5, EXACT);
    near("after", prof_target(&c, 1e6), 5, EXACT);
    near("peak", prof_peak(&c), 30, EXACT);
    near("rate on the ramp, m = 60 s", prof_rate(&c, 125, 60), 20.0 / 50 + 20.0 / 60, EXACT);
    prof_curve_free(&c);
    /* falling 30 -> 10 over [100, 200]: slope -0.2/s; with m = 1000 s the
     * departures (n/m <= 0.03/s) cannot keep up: the rate is clipped at 0 */
    profile_cfg q = { .kind = PROFILE_STEPS, .nsteps = 1 };
    q.steps[0] = (profile_step){ 100, 10, 100 };
    cr_assert_eq(prof_curve_init(&c, &q, 30), 0);
    near("falling slope", prof_slope(&c, 150), -0.2, EXACT);
    near("rate clipped", prof_rate(&c, 150, 1000), 0, EXACT);
    near("rate after the fall: n/m", prof_rate(&c, 300, 1000), 10.0 / 1000, EXACT);
    prof_curve_free(&c);
}

static void load_ok(const char *yaml, scenario_cfg *c)
{
    char err[512];
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", DATA, c, err, sizeof err);
    cr_assert_eq(rc, 0, "rejected: %s\n%s", err, yaml);
}

#define WITH_PROFILE(lines)                           \
    "name: t\n"                                       \
    "duration_s: 1800\n"                              \
    "replications: 10\n"                              \
    "workload:\n"                                     \
    "  arrival: periodic\n"                           \
    "  streams: 4\n"                                  \
    "  fps: 1\n"                                      \
    "  profile:\n"                                    \
    lines                                             \
    "stages:\n"                                       \
    "  - name: a\n"                                   \
    "    servers: 1000\n"                             \
    "    service: {dist: constant, ms: 1}\n"

/* trace.csv: (0, 10) (900, 10) (1500, 40) (1800, 40), linear in between. */
Test(profile, trace_reproduces_the_csv)
{
    scenario_cfg c;
    load_ok(WITH_PROFILE("    trace: trace.csv\n"
                         "    session_s: {dist: exponential, mean: 60}\n"), &c);
    cr_assert_eq(c.profile.kind, PROFILE_TRACE);
    cr_assert_eq(c.profile.ntrace, 4, "the header line is not a point");
    prof_curve pc;
    cr_assert_eq(prof_curve_init(&pc, &c.profile, 4), 0);
    const double t[] = { 0, 450, 900, 1200, 1500, 1650, 1800, 5000 };
    const double want[] = { 10, 10, 10, 10 + 30 * 300.0 / 600, 40, 40, 40, 40 };
    for (int k = 0; k < 8; k++) {
        char what[64];
        snprintf(what, sizeof what, "trace at %g s", t[k]);
        near(what, prof_target(&pc, t[k]), want[k], EXACT);
    }
    prof_curve_free(&pc);
    /* simulated: the mean concurrency over [0, 1800] is the trace's time
     * average (10 x 900 + 25 x 600 + 40 x 300) / 1800 = 20 */
    run_result r;
    run(&c, 2, &r);
    cr_assert(r.fleet.on);
    const stats_ci *m = &r.fleet.mean_sessions;
    cr_expect(m->lo <= 20 && 20 <= m->hi, "mean concurrency %g [%g, %g], want 20", m->mean,
              m->lo, m->hi);
    near("mean concurrency (6 %: 3 sd of 10 replications)", m->mean, 20, 0.06);
    run_result_free(&r);
    cfg_free(&c);
}

/* Little's law on a diurnal day compressed to an hour: peak 60, trough 20,
 * exponential sessions of 60 s: the mean over a full period is 40 and
 * 40 x 3600 / 60 = 2400 sessions start per replication. */
Test(profile, diurnal_concurrency_follows_littles_law)
{
    scenario_cfg c;
    load_ok("name: t\n"
            "duration_s: 3600\n"
            "replications: 10\n"
            "workload:\n"
            "  arrival: periodic\n"
            "  streams: 4\n"
            "  fps: 1\n"
            "  profile: {kind: diurnal, peak_streams: 60, trough_streams: 20, period_s: 3600,\n"
            "            peak_at_s: 0, session_s: {dist: exponential, mean: 60}}\n"
            "stages:\n"
            "  - name: a\n"
            "    servers: 1000\n"
            "    service: {dist: constant, ms: 1}\n", &c);
    run_result r;
    run(&c, 2, &r);
    const stats_ci *m = &r.fleet.mean_sessions;
    cr_expect(m->lo <= 40 && 40 <= m->hi, "mean concurrency %g [%g, %g], want 40", m->mean,
              m->lo, m->hi);
    near("mean concurrency (3 %: 3 sd of 10 replications)", m->mean, 40, 0.03);
    /* 10 replications of a Poisson count of mean 2400: within 4 sd */
    double want = 10 * 2400.0;
    cr_expect(fabs((double)r.fleet.sessions - want) < 4 * sqrt(want), "sessions %llu, want %g",
              (unsigned long long)r.fleet.sessions, want);
    cr_expect_lt(r.fleet.peak_sessions, 100, "peak %d: concurrency, not sessions, is held",
                 r.fleet.peak_sessions);
    /* frames: one per session-second at 1 FPS */
    near("frames per replication", (double)r.arrivals / 10, 40 * 3600, 0.03);
    run_result_free(&r);
    cfg_free(&c);
}

/* Steps with a ramp: 4 until 600 s, up to 40 over 600 s, then held: the
 * mean over 1800 s is (4 x 600 + 22 x 600 + 40 x 600) / 1800 = 22, and
 * 36 + 22 x 1800 / 60 = 696 sessions start per replication. */
Test(profile, ramp_concurrency_and_arrivals)
{
    scenario_cfg c;
    load_ok(WITH_PROFILE("    steps: [{at_s: 600, streams: 40, ramp_s: 600}]\n"
                         "    session_s: {dist: exponential, mean: 60}\n"), &c);
    run_result r;
    run(&c, 2, &r);
    const stats_ci *m = &r.fleet.mean_sessions;
    cr_expect(m->lo <= 22 && 22 <= m->hi, "mean concurrency %g [%g, %g], want 22", m->mean,
              m->lo, m->hi);
    double want = 10 * 696.0;
    cr_expect(fabs((double)r.fleet.sessions - want) < 4 * sqrt(want), "sessions %llu, want %g",
              (unsigned long long)r.fleet.sessions, want);
    run_result_free(&r);
    cfg_free(&c);
}

/* A jump starts its sessions at once: 0 -> 25 at 100 s, sessions of
 * 10^6 s (so none end and almost none arrive: rate 25 / 10^6 per s). */
Test(profile, jump_starts_sessions_at_once)
{
    scenario_cfg c;
    kit_base(&c, "jump", 3, 1, 0, 0.0, 200, 1);
    periodic(&c, 1, 10);
    c.workload.streams = 0;
    c.profile.kind = PROFILE_STEPS;
    c.profile.nsteps = 1;
    c.profile.steps[0] = (profile_step){ 100, 25, 0 };
    cr_assert_null(dist_init_constant(&c.profile.session, 1e9));
    rep_stats rs;
    rep1(&c, &rs);
    count("sessions", rs.fleet.sessions, 25);
    near("mean concurrency: 25 over the last half", rs.fleet.mean_sessions, 12.5, 1e-9);
    /* aligned phases: frames at 100 s + k x 100 ms, k = 0..999 */
    count("frames", rs.arrivals, 25 * 1000);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- loader errors ------------------------------------------------------------ */

static void expect_error(const char *yaml, const char *where, const char *gist)
{
    kit_scn_error(yaml, strlen(yaml), "s.yaml", DATA, where, gist);
}

/* Profile lines start at line 9, column 5. */
Test(profile, error_unknown_profile_key)
{
    expect_error(WITH_PROFILE("    kind: diurnal\n"
                              "    peak_stream: 10\n"),
                 "10:5: workload.profile.peak_stream: ", "did you mean 'peak_streams'?");
}

Test(profile, error_key_of_another_kind)
{
    expect_error(WITH_PROFILE("    kind: diurnal\n"
                              "    peak_streams: 10\n"
                              "    trough_streams: 2\n"
                              "    steps: [{at_s: 1, streams: 3}]\n"),
                 "12:5: workload.profile.steps: ", "applies only to kind: steps");
}

Test(profile, error_trough_above_peak)
{
    expect_error(WITH_PROFILE("    peak_streams: 10\n"
                              "    trough_streams: 20\n"),
                 "10:21: workload.profile.trough_streams: ", "must be <= peak_streams");
}

Test(profile, error_session_missing)
{
    expect_error(WITH_PROFILE("    steps: [{at_s: 1, streams: 3}]\n"),
                 "9:5: workload.profile: ", "missing required key 'session_s'");
}

Test(profile, error_session_param_in_ms)
{
    expect_error(WITH_PROFILE("    steps: [{at_s: 1, streams: 3}]\n"
                              "    session_s: {dist: exponential, mean_ms: 600}\n"),
                 "10:36: workload.profile.session_s.mean_ms: ", "unknown key; valid keys: dist, value, mean");
}

Test(profile, error_session_key_of_another_dist)
{
    expect_error(WITH_PROFILE("    steps: [{at_s: 1, streams: 3}]\n"
                              "    session_s: {dist: exponential, max: 600}\n"),
                 "10:36: workload.profile.session_s.max: ",
                 "does not apply to dist: exponential (it takes: mean)");
}

Test(profile, error_steps_overlap)
{
    expect_error(WITH_PROFILE("    steps: [{at_s: 10, streams: 3, ramp_s: 20}, {at_s: 20, streams: 5}]\n"
                              "    session_s: {dist: exponential, mean: 600}\n"),
                 "9:56: workload.profile.steps[1].at_s: ", "before step 0's ramp ends");
}

Test(profile, error_trace_bad_line)
{
    expect_error(WITH_PROFILE("    trace: trace_bad.csv\n"
                              "    session_s: {dist: exponential, mean: 600}\n"),
                 "9:12: workload.profile.trace: ", "trace_bad.csv:3: expected \"t_s,streams\"");
}

Test(profile, error_trace_unordered)
{
    expect_error(WITH_PROFILE("    trace: trace_unordered.csv\n"
                              "    session_s: {dist: exponential, mean: 600}\n"),
                 "9:12: workload.profile.trace: ", "trace_unordered.csv:3: times must be strictly");
}

Test(profile, error_trace_missing_file)
{
    expect_error(WITH_PROFILE("    trace: nothere.csv\n"
                              "    session_s: {dist: exponential, mean: 600}\n"),
                 "9:12: workload.profile.trace: ", "cannot open");
}

Test(profile, error_profile_on_poisson)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "workload:\n"
                 "  arrival: poisson\n"
                 "  rate_hz: 1\n"
                 "  profile: {peak_streams: 1, trough_streams: 1}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "6:3: workload.profile: ", "applies only to arrival: periodic");
}

Test(profile, error_profile_with_surge)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "workload:\n"
                 "  arrival: periodic\n"
                 "  streams: 4\n"
                 "  fps: 1\n"
                 "  surge: {at_s: 1, for_s: 1, streams: 1}\n"
                 "  profile: {steps: [{at_s: 1, streams: 3}], session_s: {dist: constant, value: 9}}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:3: workload.surge: ", "cannot be combined with workload.profile");
}

/* A scenario with a profile, a GPU stage, cluster (line 12) and autoscale
 * (line 17; its keys from line 18, column 3). */
#define WITH_AUTOSCALE(gpus, lines)                                        \
    "name: t\n"                                                            \
    "duration_s: 10\n"                                                     \
    "workload:\n"                                                          \
    "  arrival: periodic\n"                                                \
    "  streams: 4\n"                                                       \
    "  fps: 1\n"                                                           \
    "  profile: {steps: [{at_s: 1, streams: 3}], session_s: {dist: constant, value: 9}}\n" \
    "stages:\n"                                                            \
    "  - name: a\n"                                                        \
    "    on: gpu\n"                                                        \
    "    service: {dist: constant, ms: 1}\n"                               \
    "cluster:\n"                                                           \
    "  gpus: " gpus "\n"                                                   \
    "  gpu_hour_usd: 2\n"                                                  \
    "sla:\n"                                                               \
    "  - {metric: frame, percentile: 99, ms: 100}\n"                       \
    "autoscale:\n"                                                         \
    lines

Test(profile, autoscale_loads)
{
    scenario_cfg c;
    load_ok(WITH_AUTOSCALE("2", "  min_gpus: 1\n"
                                "  max_gpus: 5\n"
                                "  up: {util_above: 0.7, for_s: 120}\n"
                                "  queue_up: {fill_above: 0.5}\n"
                                "  cold_start_s: {dist: uniform, min: 180, max: 300}\n"
                                "  warm_pool: 2\n"), &c);
    cr_expect(c.autoscale.on);
    cr_expect_eq(c.autoscale.initial_gpus, 2);
    cr_expect_eq(c.cluster.gpus, 5, "the cluster holds max_gpus slots");
    cr_expect_eq(c.autoscale.warm_pool, 2);
    near("up", c.autoscale.up_util, 0.7, EXACT);
    near("up for", c.autoscale.up_for_s, 120, EXACT);
    near("down (default)", c.autoscale.down_util, 0.3, EXACT);
    near("cold start mean (ms)", dist_mean(&c.autoscale.cold_start), 240e3, EXACT);
    near("session (ms)", dist_mean(&c.profile.session), 9e3, EXACT);
    cfg_free(&c);
}

Test(profile, error_autoscale_unknown_key)
{
    expect_error(WITH_AUTOSCALE("2", "  min_gpus: 1\n"
                                     "  max_gpus: 5\n"
                                     "  warm_pools: 2\n"),
                 "20:3: autoscale.warm_pools: ", "did you mean 'warm_pool'?");
}

Test(profile, error_autoscale_nested_key)
{
    expect_error(WITH_AUTOSCALE("2", "  min_gpus: 1\n"
                                     "  max_gpus: 5\n"
                                     "  up: {util_abov: 0.8}\n"),
                 "20:8: autoscale.up.util_abov: ", "did you mean 'util_above'?");
}

Test(profile, error_autoscale_max_below_min)
{
    expect_error(WITH_AUTOSCALE("2", "  min_gpus: 3\n"
                                     "  max_gpus: 2\n"),
                 "19:13: autoscale.max_gpus: ", "must be >= min_gpus (3)");
}

Test(profile, error_autoscale_gpus_outside_range)
{
    expect_error(WITH_AUTOSCALE("9", "  min_gpus: 1\n"
                                     "  max_gpus: 5\n"
                                     "  cold_start_s: {dist: constant, value: 200}\n"),
                 "13:9: cluster.gpus: ", "within [min_gpus, max_gpus] = [1, 5], got 9");
}

Test(profile, error_autoscale_cold_start_missing)
{
    expect_error(WITH_AUTOSCALE("2", "  min_gpus: 1\n"
                                     "  max_gpus: 5\n"),
                 "18:3: autoscale: ", "missing required key 'cold_start_s'");
}

Test(profile, error_autoscale_util_range)
{
    expect_error(WITH_AUTOSCALE("2", "  min_gpus: 1\n"
                                     "  max_gpus: 5\n"
                                     "  up: {util_above: 1.5}\n"),
                 "20:20: autoscale.up.util_above: ", "must be <= 1");
}

Test(profile, error_autoscale_without_profile)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 1}\n"
                 "stages:\n"
                 "  - {name: a, on: gpu, service: {dist: constant, ms: 1}}\n"
                 "cluster: {gpus: 1}\n"
                 "autoscale: {min_gpus: 1, max_gpus: 2, cold_start_s: {dist: constant, value: 1}}\n",
                 "7:12: autoscale: ", "needs workload.profile");
}

/* Queries follow the sessions in progress: 20 sessions (exponential, mean
 * 60 s) held for 1800 s at 6 queries per session-minute is 6 x 20 x 30 =
 * 3600 queries per replication (Poisson: within 4 sd over 4 replications). */
Test(profile, queries_follow_the_sessions)
{
    scenario_cfg c;
    load_ok("name: t\n"
            "duration_s: 1800\n"
            "replications: 4\n"
            "workload:\n"
            "  arrival: periodic\n"
            "  streams: 20\n"
            "  fps: 1\n"
            "  queries_per_min: 6\n"
            "  profile:\n"
            "    steps: [{at_s: 5000, streams: 20}]\n"
            "    session_s: {dist: exponential, mean: 60}\n"
            "stages:\n"
            "  - name: a\n"
            "    servers: 1000\n"
            "    service: {dist: constant, ms: 1}\n"
            "  - name: response\n"
            "    servers: 1000\n"
            "    service: {dist: constant, ms: 1}\n", &c);
    run_result r;
    run(&c, 2, &r);
    double want = 4 * 3600.0;
    cr_expect(fabs((double)r.queries - want) < 4 * sqrt(want), "queries %llu, want %g",
              (unsigned long long)r.queries, want);
    cr_expect_eq(r.answered, r.queries);
    run_result_free(&r);
    cfg_free(&c);
}
