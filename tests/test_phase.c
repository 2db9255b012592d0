/* test_phase.c — workload.phase_ms: the streams' phases given, one list for
 * every replication or one list per replication in turn (issue 7: the real
 * pipeline's recorded phases replayed), and the loader's errors for it.
 * The latencies are worked out by hand from the phases. */
#include <criterion/criterion.h>
#include <string.h>

#include "models/run.h"
#include "models/scenario.h"
#include "tests/kit_scenario.h"

/* Two streams at 10 fps (100 ms apart) into one server of 40 ms. */
#define HEAD "name: t\nduration_s: 10\nwarmup_s: 1\nreplications: %d\n" \
             "workload:\n  arrival: periodic\n  streams: 2\n  fps: 10\n  %s\n"
#define TAIL "stages:\n  - name: s\n    service: {dist: constant, ms: 40}\n"

static void load_ok(const char *phase_line, int reps, scenario_cfg *c)
{
    char yaml[1024], err[512];
    snprintf(yaml, sizeof yaml, HEAD TAIL, reps, phase_line);
    cr_assert_eq(scn_load_string(yaml, strlen(yaml), "t.yaml", ".", c, err, sizeof err), 0,
                 "%s", err);
}

static void run_it(const scenario_cfg *c, run_result *r)
{
    run_opts o = {2, NULL, NULL, NULL};
    char err[256] = "";
    cr_assert_eq(run_scenario(c, &o, r, err, sizeof err), 0, "run_scenario: %s", err);
}

/* Phases 0 and 10 ms: stream 0's frame at 100k runs to 100k+40; stream 1's,
 * released at 100k+10, waits 30 and leaves at 100k+80 (sojourn 70). Phases
 * 0 and 50: nobody waits (40 each). Random phases would give neither. */
Test(phase, one_list_for_every_replication)
{
    scenario_cfg c;
    load_ok("phase_ms: [0, 10]", 3, &c);
    cr_assert_eq(c.workload.phase, PHASE_GIVEN);
    cr_assert_eq(c.workload.nphase_sets, 1);
    run_result r;
    run_it(&c, &r);
    for (int k = 0; k < 3; k++)
        cr_expect_float_eq(r.rep_e2e[k].mean, 55.0, 1e-9, "rep %d mean %g", k, r.rep_e2e[k].mean);
    cr_expect_float_eq(r.e2e.max, 70.0, 1e-9, "max %g", r.e2e.max);
    cr_expect_eq(r.completed, 3u * 200u, "completed %llu", (unsigned long long)r.completed);
    run_result_free(&r);
    cfg_free(&c);
}

Test(phase, lists_taken_in_turn)
{
    scenario_cfg c;
    load_ok("phase_ms: [[0, 10], [0, 50]]", 4, &c);
    cr_assert_eq(c.workload.nphase_sets, 2);
    cr_expect_float_eq(c.workload.phase_ms[3], 50.0, 0);
    run_result r;
    run_it(&c, &r);
    const double want[4] = {55, 40, 55, 40};
    for (int k = 0; k < 4; k++)
        cr_expect_float_eq(r.rep_e2e[k].mean, want[k], 1e-9, "rep %d mean %g, want %g", k,
                           r.rep_e2e[k].mean, want[k]);
    cr_expect_float_eq(r.e2e.mean.mean, 47.5, 1e-9);
    run_result_free(&r);
    cfg_free(&c);
}

static void bad(const char *phase_line, const char *where, const char *gist)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml, HEAD TAIL, 1, phase_line);
    kit_scn_error(yaml, strlen(yaml), "t.yaml", ".", where, gist);
}

Test(phase, loader_errors)
{
    bad("phase_ms: [0]", "9:13: workload.phase_ms: ", "one phase per stream (workload.streams = 2), got 1");
    bad("phase_ms: []", "9:13: workload.phase_ms: ", "got 0");
    bad("phase_ms: [0, 100]", "9:17: workload.phase_ms[1]: ", "below one frame interval (1000 / fps = 100 ms)");
    bad("phase_ms: [-1, 0]", "9:14: workload.phase_ms[0]: ", "must be >= 0");
    bad("phase_ms: [0, x]", "9:17: workload.phase_ms[1]: ", "expected a number");
    bad("phase_ms: [[0, 1], [0]]", "9:22: workload.phase_ms[1]: ", "one phase per stream");
    bad("phase_ms: [[0, 1], 5]", "9:22: workload.phase_ms[1]: ", "expected a list of phases");
    bad("phase_ms: [[0, 1], [0, [1]]]", "9:26: workload.phase_ms[1][1]: ", "expected a phase in ms");
    bad("phase_ms: 3", "9:13: workload.phase_ms: ", "expected a list of phases in ms");
    bad("phase: random\n  phase_ms: [0, 1]", "10:3: workload.phase_ms: ", "cannot be combined with workload.phase");
}

Test(phase, only_periodic_and_not_with_a_profile)
{
    const char *poisson = "name: t\nduration_s: 10\nworkload: {arrival: poisson, rate_hz: 5, phase_ms: [0]}\n" TAIL;
    kit_scn_error(poisson, strlen(poisson), "t.yaml", ".", "3:42: workload.phase_ms: ",
                  "applies only to arrival: periodic");
    const char *prof = "name: t\nduration_s: 3600\nworkload:\n  arrival: periodic\n  streams: 2\n  fps: 1\n"
                       "  phase_ms: [0, 1]\n"
                       "  profile: {kind: diurnal, peak_streams: 6, trough_streams: 2, period_s: 3600,\n"
                       "            peak_at_s: 0, session_s: {dist: exponential, mean: 60}}\n" TAIL;
    kit_scn_error(prof, strlen(prof), "t.yaml", ".", "7:3: workload.phase_ms: ",
                  "cannot be combined with workload.profile");
}
