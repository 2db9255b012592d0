/* test_cold.c — cpu.cold (issue 7): a core that has had nothing to run for
 * g ms runs its next job factor(g) times slower (models/cores.h, "Cold
 * cores"), pooled and with jobs placed on cores, and the scenario keys.
 *
 * Independent source: every case is a handful of jobs whose ends are worked
 * out by hand from the factor table (linear between points, held at the
 * ends) and processor sharing. */
#include "tests/kit.h"
#include "models/cores.h"
#include "models/scenario.h"

TestSuite(cold, .timeout = 60);

#define TICK 99                        /* the cores' own event kind */

/* Pop and handle events before `until` (all of them when until < 0),
 * recording each job's end by its payload a. */
static void run_to(cores_t *k, ev_queue *q, double until, double *done)
{
    ev_t e;
    while (ev_len(q) && (until < 0 || ev_peek(q)->t < until)) {
        ev_pop(q, &e);
        if (e.kind == TICK)
            cr_assert_eq(cores_event(k, q, e.t, e.a, e.b), 0);
        else
            done[e.a] = e.t;
    }
}

/* One core, idle [0, 10] ms -> factor [1, 2]:
 *  A (4 ms) at 0: the core idle since 0, for 0 ms: factor 1, ends at 4;
 *  B (4) at 9: idle 5 ms, factor 1.5, 6 ms of work, ends at 15;
 *  C (4) at 15, the instant B ended: idle 0, ends at 19;
 *  D (4) at 39: idle 20, held at 2, 8 ms of work;
 *  E (4) at 41, beside D: the core is running, factor 1; D has 6 left;
 *  both at 1/2: E ends after 8 (t = 49), D has 2 left, ends at 51. */
Test(cold, one_core_by_hand)
{
    static const double idle[] = {0, 10}, factor[] = {1, 2};
    cores_t k;
    ev_queue q;
    double done[6] = {0};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_cold(&k, idle, factor, 2), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 4.0), 0);
    run_to(&k, &q, 9.0, done);
    cr_assert_eq(cores_start(&k, &q, 9.0, 7, 2, 0, 4.0), 0);
    run_to(&k, &q, 15.0, done);
    ev_t e;                            /* B's end at 15, then C at that instant */
    while (ev_len(&q) && ev_peek(&q)->t <= 15.0) {
        ev_pop(&q, &e);
        if (e.kind == TICK)
            cr_assert_eq(cores_event(&k, &q, e.t, e.a, e.b), 0);
        else
            done[e.a] = e.t;
    }
    cr_assert_eq(cores_start(&k, &q, 15.0, 7, 3, 0, 4.0), 0);
    run_to(&k, &q, 39.0, done);
    cr_assert_eq(cores_start(&k, &q, 39.0, 7, 4, 0, 4.0), 0);
    run_to(&k, &q, 41.0, done);
    cr_assert_eq(cores_start(&k, &q, 41.0, 7, 5, 0, 4.0), 0);
    run_to(&k, &q, -1, done);
    near("A, idle 0", done[1], 4.0, EXACT);
    near("B, idle 5: x 1.5", done[2], 15.0, EXACT);
    near("C, at once", done[3], 19.0, EXACT);
    near("D, idle 20: held at x 2", done[4], 51.0, EXACT);
    near("E, beside D: x 1", done[5], 49.0, EXACT);
    cores_free(&k);
    ev_free(&q);
}

/* Two pooled cores, idle [0, 8] -> [1, 1.8]. A and B (10 ms) at 0 take
 * cores 0 and 1 (idle 0: x 1) and end together at 10: both cores empty
 * at 10. C at 14 (none running: core 0, idle 4, x 1.4: 14 ms, ends at 28);
 * D at 16 (one running: core 1, idle 6, x 1.6: 16 ms, ends at 32); E at 30
 * (one running: core 1 emptied when C ended at 28, idle 2, x 1.2: 12 ms,
 * with D on the other core: ends at 42). */
Test(cold, pooled_cores_by_hand)
{
    static const double idle[] = {0, 8}, factor[] = {1, 1.8};
    cores_t k;
    ev_queue q;
    double done[6] = {0};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_cold(&k, idle, factor, 2), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 10.0), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 2, 0, 10.0), 0);
    run_to(&k, &q, 14.0, done);
    cr_assert_eq(cores_start(&k, &q, 14.0, 7, 3, 0, 10.0), 0);
    run_to(&k, &q, 16.0, done);
    cr_assert_eq(cores_start(&k, &q, 16.0, 7, 4, 0, 10.0), 0);
    run_to(&k, &q, 30.0, done);
    cr_assert_eq(cores_start(&k, &q, 30.0, 7, 5, 0, 10.0), 0);
    run_to(&k, &q, -1, done);
    near("A", done[1], 10.0, EXACT);
    near("B", done[2], 10.0, EXACT);
    near("C, idle 4: x 1.4", done[3], 28.0, EXACT);
    near("D, idle 6: x 1.6", done[4], 32.0, EXACT);
    near("E, idle 2: x 1.2", done[5], 42.0, EXACT);
    cores_free(&k);
    ev_free(&q);
}

/* Placed on cores (share 0: a start with a core free takes it), two cores,
 * idle [0, 10] -> [1, 2]. A (5) at 0 on core 0 (idle 0), ends at 5.
 * B (10) at 1 on core 1 (idle 1: x 1.1, 11), ends at 12. C (5) at 9 on core
 * 0 (emptied at 5: idle 4, x 1.4, 7), ends at 16. D (10) at 13 on core 1
 * (emptied at 12: idle 1, x 1.1), ends at 24. Then with share 1 (a start
 * goes beside a running job): E (4) at 30 on an empty machine (core 0
 * emptied at 16: idle 14, held at x 2: 8); F (4) at 31 beside it, on a
 * running core: x 1. From 31 they share core 0 (the move's wait 1e9 ms,
 * never due): E has 7 left, F 4; F ends after 8 (t = 39), E has 3 left,
 * ends at 42. */
Test(cold, placed_cores_by_hand)
{
    static const double idle[] = {0, 10}, factor[] = {1, 2};
    cores_t k;
    ev_queue q;
    double done[7] = {0};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(r);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0.0, 1e9, 1e9, r), 0);
    cr_assert_eq(cores_set_cold(&k, idle, factor, 2), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 5.0), 0);
    run_to(&k, &q, 1.0, done);
    cr_assert_eq(cores_start(&k, &q, 1.0, 7, 2, 0, 10.0), 0);
    run_to(&k, &q, 9.0, done);
    cr_assert_eq(cores_start(&k, &q, 9.0, 7, 3, 0, 5.0), 0);
    cr_expect_eq(k.job[k.n - 1].core, 0, "C on the core A left");
    run_to(&k, &q, 13.0, done);
    cr_assert_eq(cores_start(&k, &q, 13.0, 7, 4, 0, 10.0), 0);
    cr_expect_eq(k.job[k.n - 1].core, 1, "D on the core B left");
    run_to(&k, &q, 30.0, done);
    k.share = 1.0;
    cr_assert_eq(cores_start(&k, &q, 30.0, 7, 5, 0, 4.0), 0);
    run_to(&k, &q, 31.0, done);
    cr_assert_eq(cores_start(&k, &q, 31.0, 7, 6, 0, 4.0), 0);
    cr_expect_eq(k.job[k.n - 1].core, k.job[0].core, "F beside E");
    run_to(&k, &q, 50.0, done);
    near("A", done[1], 5.0, EXACT);
    near("B, idle 1: x 1.1", done[2], 12.0, EXACT);
    near("C, idle 4 on core 0: x 1.4", done[3], 16.0, EXACT);
    near("D, idle 1 on core 1: x 1.1", done[4], 24.0, EXACT);
    near("F, beside E: x 1", done[6], 39.0, EXACT);
    near("E, idle 14: x 2", done[5], 42.0, EXACT);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

static const char *load_err(const char *yaml, scenario_cfg *c, char *err, size_t n)
{
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", NULL, c, err, n);
    return rc ? err : NULL;
}

/* One stream at 10 FPS, one worker of 2 ms on one core, idle [0, 50] ->
 * [1, 1.25]: the first frame (t = 0, the core idle 0 ms) takes 2 ms, each
 * later one finds the core idle 98 ms (held at x 1.25): 2.5 ms. 10 frames
 * in 1 s: sum 2 + 9 x 2.5. */
Test(cold, scenario_runs_it)
{
    scenario_cfg c;
    char err[512];
    const char *y = "duration_s: 1\nwarmup_s: 0\nreplications: 1\nseed: 3\n"
                    "workload: {arrival: periodic, streams: 1, fps: 10, jitter_ms: 0, phase_ms: [0]}\n"
                    "stages:\n  - {name: decode, servers: 1, service: {dist: constant, ms: 2}}\n"
                    "cpu: {cores: 1, cold: {idle_ms: [0, 50], factor: [1, 1.25]}}\n";
    cr_assert_null(load_err(y, &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.ncold, 2);
    near("factor[1]", c.cpu.cold_factor[1], 1.25, EXACT);
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode service", &rs.stage[0].service, 10, 2 + 9 * 2.5, 2.0, 2.5);
    near("work as started", rs.cpu_work_ms, 10 * 2.0, EXACT);
    near("added by cold cores", rs.cpu_cold_extra_ms, 9 * 0.5, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

#define BASE "duration_s: 1\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n"

Test(cold, scenario_keys)
{
    static const struct {
        const char *cold, *want;
    } bad[] = {
        {"{idle_ms: [0, 5, 5], factor: [1, 1, 1]}", "cpu.cold.idle_ms[2]"},
        {"{idle_ms: [0, 5], factor: [1]}", "one factor per idle time"},
        {"{idle_ms: [0, 5], factor: [1, 0]}", "cpu.cold.factor[1]"},
        {"{idle_ms: [-1, 5], factor: [1, 1]}", "cpu.cold.idle_ms[0]"},
        {"{idle_ms: [0, 5]}", "factor"},
        {"{idle: [0], factor: [1]}", "did you mean 'idle_ms'"},
        {"{idle_ms: 3, factor: [1]}", "expected a list"},
    };
    scenario_cfg c;
    char err[512], y[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(y, sizeof y, BASE "cpu: {cores: 2, cold: %s}\n", bad[i].cold);
        cr_assert_not_null(load_err(y, &c, err, sizeof err), "%s loaded", bad[i].cold);
        cr_expect(strstr(err, bad[i].want) && strstr(err, "s.yaml:5:"), "%s: %s", bad[i].cold, err);
    }
}
