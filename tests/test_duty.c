/* test_duty.c — cpu.duty (issue 7): a job started while the cores have been
 * busy a share u of the time lately needs factor(u) times its work
 * (models/cores.h, "Busy lately"), pooled and on one core; the scenario
 * keys; and dutycal's summary (calib/realpipe/rp_duty.h).
 *
 * Independent source: the recent utilisation is an exponential average of
 * the busy share, so after a busy spell of t from u0 it is
 * b + (u0 - b) exp(-t / tau); every end below is worked from that closed
 * form and the factor table (linear between points, held at the ends). */
#include <math.h>

#include "tests/kit.h"
#include "models/cores.h"
#include "models/scenario.h"
#include "calib/realpipe/rp_duty.h"

TestSuite(duty, .timeout = 60);

#define TICK 99                        /* the cores' own event kind */
#define TAU 10.0                       /* ms: the half-life is TAU ln 2 */

/* Pop and handle events at or before `until` (all when until < 0),
 * recording each job's end by its payload a. */
static void run_to(cores_t *k, ev_queue *q, double until, double *done)
{
    ev_t e;
    while (ev_len(q) && (until < 0 || ev_peek(q)->t <= until)) {
        ev_pop(q, &e);
        if (e.kind == TICK)
            cr_assert_eq(cores_event(k, q, e.t, e.a, e.b), 0);
        else
            done[e.a] = e.t;
    }
}

/* One core, util [0, 1] -> factor [2, 1]. A (4) at 0: the machine idle
 * before (u 0), x 2, ends at 8. B (4) at 8, the instant A ended: u(8) =
 * 1 - e^-0.8, x (1 + e^-0.8). C (4) at 30 after the core idled from B's end:
 * u decays by e^-(30 - tB)/TAU from 1 - e^-tB/TAU. */
Test(duty, one_core_by_hand)
{
    static const double util[] = {0, 1}, factor[] = {2, 1};
    cores_t k;
    ev_queue q;
    double done[4] = {0};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_duty(&k, util, factor, 2, TAU * M_LN2), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 4.0), 0);
    run_to(&k, &q, 8.0, done);
    near("u at 8", cores_duty_util(&k, 8.0), 1 - exp(-0.8), 1e-12);
    cr_assert_eq(cores_start(&k, &q, 8.0, 7, 2, 0, 4.0), 0);
    run_to(&k, &q, 29.0, done);
    double tb = 8 + 4 * (1 + exp(-0.8));
    double u30 = (1 - exp(-tb / TAU)) * exp(-(30 - tb) / TAU);
    cr_assert_eq(cores_start(&k, &q, 30.0, 7, 3, 0, 4.0), 0);
    run_to(&k, &q, -1, done);
    near("A, u 0: x 2", done[1], 8.0, 1e-12);
    near("B, u 1 - e^-0.8", done[2], tb, 1e-12);
    near("C, after 30 - tB idle", done[3], 30 + 4 * (2 - u30), 1e-12);
    near("work as started", k.work_ms, 12.0, 1e-12);
    near("added", k.duty_extra_ms, (8 - 4) + (tb - 8 - 4) + 4 * (1 - u30), 1e-12);
    cores_free(&k);
    ev_free(&q);
}

/* Two pooled cores: one job busies half of them. util [0, 0.5, 1] ->
 * factor [1.5, 1.1, 1]. A (10) at 0: u 0, x 1.5, 15 ms at rate 1, ends at
 * 15. B (2) at 5: u(5) = 0.5 (1 - e^-0.5), factor 1.5 - 0.8 u (on the first
 * segment); B at rate 1 beside A (two jobs, two cores) ends at 5 + 2 f. */
Test(duty, pooled_half_busy_by_hand)
{
    static const double util[] = {0, 0.5, 1}, factor[] = {1.5, 1.1, 1};
    cores_t k;
    ev_queue q;
    double done[3] = {0};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_duty(&k, util, factor, 3, TAU * M_LN2), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 10.0), 0);
    run_to(&k, &q, 5.0, done);
    double u5 = 0.5 * (1 - exp(-0.5));
    cr_assert_eq(cores_start(&k, &q, 5.0, 7, 2, 0, 2.0), 0);
    run_to(&k, &q, -1, done);
    near("A, u 0: x 1.5", done[1], 15.0, 1e-12);
    near("B, u(5) on the first segment", done[2], 5 + 2 * (1.5 - 0.8 * u5), 1e-12);
    cores_free(&k);
    ev_free(&q);
}

Test(duty, bad_tables_refused)
{
    static const double up[] = {0, 1}, down[] = {1, 0.5}, over[] = {0, 1.5}, f[] = {1, 1},
                        zero[] = {1, 0};
    cores_t k;
    cr_assert_eq(cores_init(&k, 1, NULL, 0, TICK), 0);
    cr_expect_eq(cores_set_duty(&k, down, f, 2, 32), -1, "utilisations must increase");
    cr_expect_eq(cores_set_duty(&k, over, f, 2, 32), -1, "at most 1");
    cr_expect_eq(cores_set_duty(&k, up, zero, 2, 32), -1, "factors > 0");
    cr_expect_eq(cores_set_duty(&k, up, f, 2, 0), -1, "half-life > 0");
    cr_expect_eq(cores_set_duty(&k, up, f, 0, 32), -1, "at least one point");
    cr_expect_eq(k.nduty, 0);
    cores_free(&k);
}

static const char *load_err(const char *yaml, scenario_cfg *c, char *err, size_t n)
{
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", NULL, c, err, n);
    return rc ? err : NULL;
}

/* One stream at 10 FPS, one worker of 2 ms on one core, util [0, 1] ->
 * factor [2, 1], half-life 10 ln 2 ms: frame i starts at 100 i with u
 * decayed over the idle time since the last end, takes 2 (2 - u), and
 * leaves u = 1 - (1 - u) e^-d/TAU. The recurrence gives the sum. */
Test(duty, scenario_runs_it)
{
    scenario_cfg c;
    char err[512], y[1024];
    snprintf(y, sizeof y,
             "duration_s: 1\nwarmup_s: 0\nreplications: 1\nseed: 3\n"
             "workload: {arrival: periodic, streams: 1, fps: 10, jitter_ms: 0, phase_ms: [0]}\n"
             "stages:\n  - {name: decode, servers: 1, service: {dist: constant, ms: 2}}\n"
             "cpu: {cores: 1, duty: {util: [0, 1], factor: [2, 1], halflife_ms: %.17g}}\n",
             TAU * M_LN2);
    cr_assert_null(load_err(y, &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nduty, 2);
    double u = 0, end = 0, sum = 0, lo = INFINITY, hi = 0;
    for (int i = 0; i < 10; i++) {
        u *= exp(-(100.0 * i - end) / TAU);
        double d = 2 * (2 - u);
        u = 1 - (1 - u) * exp(-d / TAU);
        end = 100.0 * i + d;
        sum += d;
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode service", &rs.stage[0].service, 10, sum, lo, hi);
    near("work as started", rs.cpu_work_ms, 20.0, 1e-9);
    near("added by idle cores", rs.cpu_duty_extra_ms, sum - 20, 1e-9);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

#define BASE "duration_s: 1\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n"

Test(duty, scenario_keys)
{
    static const struct {
        const char *duty, *want;
    } bad[] = {
        {"{util: [0, 0.5, 0.5], factor: [1, 1, 1]}", "cpu.duty.util[2]"},
        {"{util: [0, 1.5], factor: [1, 1]}", "cpu.duty.util[1]"},
        {"{util: [0, 1], factor: [1]}", "one factor per utilisation"},
        {"{util: [0, 1], factor: [1, 0]}", "cpu.duty.factor[1]"},
        {"{util: [-0.1, 1], factor: [1, 1]}", "cpu.duty.util[0]"},
        {"{util: [0, 1], factor: [1, 1], halflife_ms: 0}", "cpu.duty.halflife_ms"},
        {"{util: [0, 1]}", "factor"},
        {"{utl: [0], factor: [1]}", "did you mean 'util'"},
    };
    scenario_cfg c;
    char err[512], y[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(y, sizeof y, BASE "cpu: {cores: 2, duty: %s}\n", bad[i].duty);
        cr_assert_not_null(load_err(y, &c, err, sizeof err), "%s loaded", bad[i].duty);
        cr_expect(strstr(err, bad[i].want) && strstr(err, "s.yaml:5:"), "%s: %s", bad[i].duty, err);
    }
    snprintf(y, sizeof y, BASE "cpu: {cores: 2, duty: {util: [0.1, 1], factor: [1.2, 1]}}\n");
    cr_assert_null(load_err(y, &c, err, sizeof err), "%s", err);
    near("half-life by default", c.cpu.duty_halflife_ms, 32, EXACT);
    cfg_free(&c);
}

/* dutycal's summary by hand: duties 1 and 0.5, two rounds. Duty 1: round
 * means 2.0 (4 ms / 2) and 2.2 (6.6 / 3): mean 2.1, SE |2.2 - 2.0| / 2 =
 * 0.1. Duty 0.5: 2.4 (2.4 / 1) and 2.2 (4.4 / 2): mean 2.3, SE 0.1. Factor
 * 2.3 / 2.1; the rounds' ratios 2.4 / 2.0 = 1.2 and 2.2 / 2.2 = 1. Busy:
 * CPU (2.4 + 4.4) over wall 13.6. */
Test(duty, dutycal_summary_by_hand)
{
    rp_duty_result r = {.nduty = 2, .rounds = 2, .duty = {1, 0.5}};
    double sum[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS] = {{4, 6.6}, {2.4, 4.4}};
    long cnt[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS] = {{2, 3}, {1, 2}};
    double wall[RP_DUTY_MAX] = {10.6, 13.6};
    char err[256];
    cr_assert_eq(rp_duty_summarize(&r, sum, cnt, wall, err, sizeof err), 0, "%s", err);
    near("duty 1 mean", r.cpu_ms[0], 2.1, 1e-12);
    near("duty 1 SE", r.se_ms[0], 0.1, 1e-12);
    near("duty 0.5 mean", r.cpu_ms[1], 2.3, 1e-12);
    near("duty 0.5 SE", r.se_ms[1], 0.1, 1e-12);
    near("factor", r.factor[1], 2.3 / 2.1, 1e-12);
    near("least round", r.lo[1], 1.0, 1e-12);
    near("greatest round", r.hi[1], 1.2, 1e-12);
    near("busy at 0.5", r.busy[1], 0.5, 1e-12);
    cr_expect_eq(r.n[0], 5);
    cnt[1][0] = cnt[1][1] = 0;
    cr_expect_eq(rp_duty_summarize(&r, sum, cnt, wall, err, sizeof err), -1);
    cr_expect(strstr(err, "duty 0.5"), "%s", err);
}
