/* test_handoff.c — cpu.handoff_ms (issue 7): every handoff of an item to a
 * thread on the cores costs that much CPU, as a job of its own sharing the
 * cores, except between two GPU stages (one executor thread runs both).
 * Every latency below is worked out by hand from processor sharing. */
#include <criterion/criterion.h>
#include <string.h>

#include "models/run.h"
#include "models/scenario.h"

/* One stream at 10 fps: a frame every 100 ms, far apart, so each frame is
 * alone on the machine. */
#define HEAD "name: t\nduration_s: 10\nwarmup_s: 1\nreplications: 1\n" \
             "workload: {arrival: periodic, streams: 1, fps: 10, phase: aligned}\n"

/* The scenario of the last run: a run_result points at its scenario, which
 * must outlive it (run_result_free reads its stage count), so it is freed
 * with the result, by done(). */
static scenario_cfg ran_cfg;

static void run_yaml(const char *yaml, run_result *r)
{
    char err[512] = "";
    cr_assert_eq(scn_load_string(yaml, strlen(yaml), "t.yaml", ".", &ran_cfg, err, sizeof err), 0,
                 "%s", err);
    run_opts o = {1, NULL, NULL, NULL};
    cr_assert_eq(run_scenario(&ran_cfg, &o, r, err, sizeof err), 0, "run_scenario: %s", err);
}

static void done(run_result *r)
{
    run_result_free(r);
    cfg_free(&ran_cfg);
}

/* One core. A frame arrives: its handoff (2 ms of CPU) and its service
 * (10 ms) start together, each at half speed; the handoff ends at 4 ms, the
 * service, 8 ms of work left, at 12. At the second stage the same again:
 * it leaves at 24. Without handoff_ms: 10 + 10. */
Test(handoff, two_worker_stages_one_core)
{
    run_result r;
    run_yaml(HEAD "cpu: {cores: 1, handoff_ms: 2}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 24.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    cr_expect_float_eq(r.stage[0].sojourn.mean.mean, 12.0, 1e-9, "a %g", r.stage[0].sojourn.mean.mean);
    cr_expect_float_eq(r.stage[1].sojourn.mean.mean, 12.0, 1e-9, "b %g", r.stage[1].sojourn.mean.mean);
    done(&r);
    run_yaml(HEAD "cpu: {cores: 1}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 20.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
}

/* The worker hands over before it takes its next item. Two streams, two
 * frames at 0, four cores (no one waits for a core). Frame 1 at a: 0-10; at
 * 10 a's thread pushes it to b (b runs it 10-20) and does its handoff, 2 ms,
 * till 12, then frame 2 at a: 12-22, its handoff 22-24 beside b's 22-32. So
 * a's sojourns 10 and 22, e2e 20 and 32. A worker that took frame 2 at once
 * (the handoff beside it) would give 10 and 20, 20 and 30. The cameras'
 * handoffs at 0 (by no worker) delay nobody. */
Test(handoff, the_worker_hands_over_before_its_next_item)
{
    run_result r;
    run_yaml("name: t\nduration_s: 10\nwarmup_s: 1\nreplications: 1\n"
             "workload: {arrival: periodic, streams: 2, fps: 10, phase: aligned}\n"
             "cpu: {cores: 4, handoff_ms: 2}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.stage[0].sojourn.mean.mean, (10 + 22) / 2.0, 1e-9, "a %g",
                       r.stage[0].sojourn.mean.mean);
    cr_expect_float_eq(r.stage[1].sojourn.mean.mean, 10.0, 1e-9, "b %g", r.stage[1].sojourn.mean.mean);
    cr_expect_float_eq(r.e2e.mean.mean, (20 + 32) / 2.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
}

/* Two cores: the handoff runs beside the service on the other core, so it
 * costs no time (10 + 10); with a speed-up of 1.5 for two busy threads each
 * runs at 0.75 while both are busy: the handoff ends at 2 / 0.75 = 8/3 ms,
 * by when the service has done 2 ms of its 10, the other 8 at full speed:
 * 10 + 2/3 per stage. */
Test(handoff, two_cores_and_a_speedup)
{
    run_result r;
    run_yaml(HEAD "cpu: {cores: 2, handoff_ms: 2}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 20.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
    run_yaml(HEAD "cpu: {cores: 2, handoff_ms: 2, speedup: [1, 1.5]}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 2 * (10 + 2.0 / 3), 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
}

/* GPU stages on the cores (an executor thread): the handoff into the first
 * costs 2 ms of CPU as above (12), from it to the second nothing (10): 22. */
Test(handoff, none_between_gpu_stages)
{
    run_result r;
    run_yaml(HEAD "cluster: {gpus: 1, gpu_type: cpu-executor-thread}\n"
             "cpu: {cores: 1, handoff_ms: 2}\n"
             "stages:\n  - {name: encode, on: gpu, service: {dist: constant, ms: 10}}\n"
             "  - {name: reduce, on: gpu, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 22.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
}

/* Only the stages on the cores: b is not, so its entry costs nothing. */
Test(handoff, only_stages_on_the_cores)
{
    run_result r;
    run_yaml(HEAD "cpu: {cores: 1, handoff_ms: 2, stages: [a]}\n"
             "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n"
             "  - {name: b, service: {dist: constant, ms: 10}}\n", &r);
    cr_expect_float_eq(r.e2e.mean.mean, 22.0, 1e-9, "e2e %g", r.e2e.mean.mean);
    done(&r);
}

Test(handoff, loader)
{
    scenario_cfg c;
    char err[512] = "";
    const char *bad = HEAD "cpu: {cores: 1, handoff_ms: -1}\n"
                      "stages:\n  - {name: a, service: {dist: constant, ms: 10}}\n";
    cr_expect_eq(scn_load_string(bad, strlen(bad), "t.yaml", ".", &c, err, sizeof err), -1);
    cr_expect(strstr(err, "t.yaml:6:") && strstr(err, "cpu.handoff_ms") && strstr(err, ">= 0"),
              "%s", err);
}
