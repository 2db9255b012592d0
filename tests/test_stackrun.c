/* test_stackrun.c — the share of a woken job put beside a running one, by
 * how long that core has been running jobs (cpu.stack.run, models/cores.h;
 * stackcal's counts and fit, calib/realpipe/rp_stack.h).
 *
 * Independent sources: the placements are decided by hand (a factor of 0
 * never stacks, a product of 1 or more always does), one random case is
 * checked against its binomial closed form, the counts are made by hand
 * from a few ops, and the fit is given counts that a product of two
 * factors gives exactly, so the factors are known before it runs. */
#include "tests/kit.h"
#include "tests/kit_files.h"
#include "calib/realpipe/rp_stack.h"
#include "models/cores.h"
#include "models/scenario.h"
#include "sim/rng.h"

TestSuite(stackrun, .timeout = 120);

#define TICK 99
#define NEVER 1e12                     /* a migrate_ms no run reaches */

/* Run q to time t: TICK events go to the cores, a job's end is dropped. */
static void run_to(cores_t *k, ev_queue *q, double t)
{
    const ev_t *e;
    ev_t x;
    while ((e = ev_peek(q)) && e->t <= t) {
        cr_assert_eq(ev_pop(q, &x), 0);
        if (x.kind == TICK)
            cr_assert_eq(cores_event(k, q, x.t, x.a, x.b), 0);
    }
}

/* Two cores, share `share`, the run table age [1, 3] -> factor [0, 2]
 * (held at the ends), bridge 0.05: a long job on core 0 from 0, then a
 * job at time t; the core it went to. */
static const double AGE[] = {1, 3}, FACTOR[] = {0, 2};

static int second_core(double share, double t, gsl_rng *r)
{
    cores_t k;
    ev_queue q;
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, share, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_set_share_run(&k, AGE, FACTOR, 2, 0.05), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 1e6), 0);
    run_to(&k, &q, t);
    cr_assert_eq(cores_start(&k, &q, t, 7, 1, 0, 1e6), 0);
    int core = k.job[1].core;
    cores_free(&k);
    ev_free(&q);
    return core;
}

/* share 0.5: at run age 0.5 the factor is 0 (held below age 1): never
 * beside; at age 3 and past it 2, 0.5 x 2 = 1: always beside. */
Test(stackrun, the_factor_decides)
{
    gsl_rng *r = rng_stream(5, 0, 1);
    for (int i = 0; i < 50; i++) {
        cr_expect_eq(second_core(0.5, 0.5, r), 1, "age 0.5: factor 0, the free core");
        cr_expect_eq(second_core(0.5, 3, r), 0, "age 3: share 1, beside");
        cr_expect_eq(second_core(0.5, 40, r), 0, "age 40: held at 2, beside");
    }
    gsl_rng_free(r);
}

/* At age 2 the factor is 1 (halfway from 0 to 2): the share itself, 0.3.
 * Of n = 4000 placements the stacked count is binomial: mean 0.3 n, sd
 * sqrt(n 0.3 0.7) = 29.0; within 4 sd. */
Test(stackrun, the_share_times_the_factor)
{
    gsl_rng *r = rng_stream(6, 0, 1);
    int n = 4000, stacked = 0;
    for (int i = 0; i < n; i++)
        stacked += second_core(0.3, 2, r) == 0;
    double sd = sqrt(n * 0.3 * 0.7);
    cr_expect(fabs(stacked - 0.3 * n) < 4 * sd, "stacked %d of %d, expected %.0f +- %.0f", stacked,
              n, 0.3 * n, 4 * sd);
    gsl_rng_free(r);
}

/* A job going on within the bridge keeps the core's run: job A of 5 on
 * core 0 from 0, its thread's next job on core 0 at 5.03 (0.03 after A's
 * end), a woken job at 6: the run is 6 old, factor 2, share 0.5: beside.
 * With the next job at 5.2 (0.2 after) the run begins again at 5.2, is
 * 0.8 old at 6, factor 0: the free core. */
static int after_going_on(double next_at)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0.5, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_set_share_run(&k, AGE, FACTOR, 2, 0.05), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 5), 0);
    run_to(&k, &q, next_at);
    cr_assert_eq(k.n, 0, "A ended at 5");
    cr_assert_eq(cores_start_on(&k, &q, next_at, 7, 1, 0, 1e6, 0), 0);
    run_to(&k, &q, 6);
    cr_assert_eq(cores_start(&k, &q, 6, 7, 2, 0, 1e6), 0);
    int core = k.job[1].core;
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
    return core;
}

Test(stackrun, going_on_keeps_the_run)
{
    cr_expect_eq(after_going_on(5.03), 0, "bridged: the run from 0, beside");
    cr_expect_eq(after_going_on(5.2), 1, "a new run at 5.2: the free core");
}

Test(stackrun, bad_arguments)
{
    cores_t k;
    gsl_rng *r = rng_stream(8, 0, 1);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_expect_eq(cores_set_share_run(&k, AGE, FACTOR, 2, 0.05), -1, "placement must be on first");
    cr_assert_eq(cores_set_stack(&k, 0.5, NEVER, NEVER, r), 0);
    static const double down[] = {3, 1}, neg[] = {0, -1};
    cr_expect_eq(cores_set_share_run(&k, down, FACTOR, 2, 0.05), -1, "ages must increase");
    cr_expect_eq(cores_set_share_run(&k, AGE, neg, 2, 0.05), -1, "factors must be >= 0");
    cr_expect_eq(cores_set_share_run(&k, AGE, FACTOR, 0, 0.05), -1, "one age at least");
    cr_expect_eq(cores_set_share_run(&k, AGE, FACTOR, 2, -1), -1, "bridge >= 0");
    cr_expect_eq(cores_set_share_run(&k, AGE, FACTOR, 2, 0), 0);
    cores_free(&k);
    gsl_rng_free(r);
}

/* ---- the scenario key ---------------------------------------------------- */

#define BASE "name: t\nduration_s: 1\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: decode, workers: 1, service: {dist: constant, ms: 1}}\n"

static char *load_err(const char *text, scenario_cfg *c, char *err, size_t n)
{
    if (scn_load_string(text, strlen(text), "run.yaml", NULL, c, err, n) == 0)
        return NULL;
    return err;
}

Test(stackrun, keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                 "run: {age_ms: [0.5, 2], factor: [0.25, 1.5]}}}\n", &c, err, sizeof err),
                   "%s", err);
    cr_expect_eq(c.cpu.nstack_run, 2);
    cr_expect_eq(c.cpu.stack_run_age_ms[1], 2);
    cr_expect_eq(c.cpu.stack_run_factor[0], 0.25);
    cr_expect_eq(c.cpu.stack_run_bridge_ms, 0.05, "bridge_ms defaults to 0.05");
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                 "run: {age_ms: [1], factor: [2], bridge_ms: 0}}}\n", &c, err, sizeof err),
                   "%s", err);
    cr_expect_eq(c.cpu.stack_run_bridge_ms, 0);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                     "run: {age_ms: [2, 1], factor: [1, 1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "run.yaml:6:") && strstr(err, "cpu.stack.run.age_ms[1]"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                     "run: {age_ms: [1, 2], factor: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.run.factor"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                     "run: {age_ms: [1], factor: [-1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.run.factor"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                     "run: {age_ms: [1], factor: [1], bridge: 1}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "bridge"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, migrate_ms: 3, "
                                     "run: {age_ms: [1], factor: [1], bridge_ms: -1}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.run.bridge_ms"), "%s", err);
}

/* ---- stackcal's counts --------------------------------------------------- */

static rp_stack_op op_at(double t0, double t1, int cpu, int thread, int woken)
{
    rp_stack_op o;
    memset(&o, 0, sizeof o);
    o.t0 = t0;
    o.t1 = t1;
    o.thread = thread;
    o.woken = woken;
    o.nseg = 1;
    o.seg[0].t = t0;
    o.seg[0].cpu = cpu;
    return o;
}

/* A (CPU 0, 0-1) and its thread going on with A2 (CPU 0, 1.03-5: 0.03 after,
 * within the bridge, so CPU 0's run is from 0); B woken at 2.5 on CPU 1 (a
 * chance, not stacked, run age 2.5: the bin (2, 4]); C woken at 3 on CPU 0
 * beside A2 (CPU 1 free since 2.8: stacked, age 3, the same bin); D woken
 * at 5.5 on CPU 1 with nothing running (no chance); E woken at 5.7 beside
 * D on CPU 1 (CPU 0 free: stacked, age 0.2, the bin [0, 0.25]). Without
 * the bridge, B's age would be 1.47 (the bin (1, 2]). */
Test(stackrun, counts_by_hand)
{
    rp_stack_op op[6] = {op_at(0, 1, 0, 0, 1),     op_at(1.03, 5, 0, 0, 0), op_at(2.5, 2.8, 1, 1, 1),
                         op_at(3, 3.5, 0, 2, 1),   op_at(5.5, 6, 1, 1, 1),  op_at(5.7, 5.9, 1, 2, 1)};
    rp_stack_sum s;
    cr_assert_eq(rp_stack_summarize(op, 6, 2, -1, &s), 0);
    const long ch[RP_STACK_NAGE] = {1, 0, 0, 0, 2, 0, 0}, st[RP_STACK_NAGE] = {1, 0, 0, 0, 1, 0, 0};
    for (int b = 0; b < RP_STACK_NAGE; b++) {
        cr_expect_eq(s.run_chances[b], ch[b], "chances, bin %d", b);
        cr_expect_eq(s.run_stacked[b], st[b], "stacked, bin %d", b);
    }
    cr_expect_eq(s.chances, 3);
    cr_expect_eq(s.stacked, 2);
}

/* ---- the fit ------------------------------------------------------------- */

/* Counts of 100 chances in each of the first three bins at every load, the
 * stacked 100 a[l] g[b] with a = [0.1, 0.2, 0.2, 0.4], g = [0.5, 1, 2]: a
 * product exactly. The factors' mean over the chances (equal: 100 each)
 * must be 1, so g / (7/6) = [3/7, 6/7, 12/7] and a x 7/6; the bins with no
 * chance take the nearest younger bin's factor, 12/7. */
static void product_counts(rp_stack_result *r)
{
    memset(r, 0, sizeof *r);
    const double a[RP_STACK_NLOADS] = {0.1, 0.2, 0.2, 0.4}, g[3] = {0.5, 1, 2};
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        for (int b = 0; b < 3; b++) {
            r->at[l].run_chances[b] = 100;
            r->at[l].run_stacked[b] = lround(100 * a[l] * g[b]);
            r->all.run_chances[b] += 100;
            r->all.run_stacked[b] += r->at[l].run_stacked[b];
        }
}

Test(stackrun, fit_of_an_exact_product)
{
    rp_stack_result r;
    product_counts(&r);
    double share[RP_STACK_NLOADS], factor[RP_STACK_NAGE], age[RP_STACK_NAGE];
    cr_assert_eq(rp_stack_runfit(&r, 1, share, factor, age), RP_STACK_NLOADS);
    const double g[RP_STACK_NAGE] = {3.0 / 7, 6.0 / 7, 12.0 / 7, 12.0 / 7, 12.0 / 7, 12.0 / 7, 12.0 / 7};
    const double a[RP_STACK_NLOADS] = {0.7 / 6, 1.4 / 6, 1.4 / 6, 2.8 / 6};
    const double mid[RP_STACK_NAGE] = {0.125, 0.375, 0.75, 1.5, 3, 6, 16};
    for (int b = 0; b < RP_STACK_NAGE; b++) {
        cr_expect(fabs(factor[b] - g[b]) < 1e-9, "factor %d: %g, expected %g", b, factor[b], g[b]);
        cr_expect(fabs(age[b] - mid[b]) < 1e-12, "age %d: %g", b, age[b]);
    }
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        cr_expect(fabs(share[l] - a[l]) < 1e-9, "share %d: %g, expected %g", l, share[l], a[l]);
    /* one pooled row: the stacked 45, 90, 180 of 400 each; the same factors,
     * and the share 45 / (400 x 3/7) = 0.2625 */
    cr_assert_eq(rp_stack_runfit(&r, 0, share, factor, age), 1);
    for (int b = 0; b < RP_STACK_NAGE; b++)
        cr_expect(fabs(factor[b] - g[b]) < 1e-9, "pooled factor %d: %g", b, factor[b]);
    cr_expect(fabs(share[0] - 0.2625) < 1e-9, "pooled share %g", share[0]);
}

/* Only the bin (1, 2] seen (40 chances, 10 stacked): it has factor 1 (the
 * mean over the chances), the younger bins take it from the older one,
 * the share is 10 / 40. Nothing seen at all: every factor 1, share 0. */
Test(stackrun, fit_fills_unseen_bins)
{
    rp_stack_result r;
    memset(&r, 0, sizeof r);
    r.all.run_chances[3] = 40;
    r.all.run_stacked[3] = 10;
    double share[RP_STACK_NLOADS], factor[RP_STACK_NAGE], age[RP_STACK_NAGE];
    cr_assert_eq(rp_stack_runfit(&r, 0, share, factor, age), 1);
    for (int b = 0; b < RP_STACK_NAGE; b++)
        cr_expect(fabs(factor[b] - 1) < 1e-12, "factor %d: %g", b, factor[b]);
    cr_expect(fabs(share[0] - 0.25) < 1e-12, "share %g", share[0]);
    memset(&r, 0, sizeof r);
    cr_assert_eq(rp_stack_runfit(&r, 0, share, factor, age), 1);
    cr_expect_eq(share[0], 0);
    for (int b = 0; b < RP_STACK_NAGE; b++)
        cr_expect_eq(factor[b], 1, "factor %d", b);
}

/* ---- the stackcal file, through vlrealpipe scenario ---------------------- */

#define STACK_LINES "stack: {share: 0.13, migrate_ms: 9, pull_ms: 0.08, switch_ms: 4}\n" \
                    "stack_load: {util: [0.2, 0.8], share: [0.04, 0.2]}\n"

static int scenario_from(const char *dir, const char *stackfile, const char *extra)
{
    return kit_sh("./vlrealpipe scenario --calib tests/data/realpipe/tiny-fixture.yaml "
                  "--decode-calib tests/data/realpipe/video-fixture.yaml --stack-calib %s %s "
                  "--force --out %s/scen.yaml > /dev/null 2> %s/err",
                  stackfile, extra, dir, dir);
}

Test(stackrun, the_file_reaches_the_scenario)
{
    char dir[64], f[128], scen[128], errp[128];
    kit_tmpdir(dir, sizeof dir, "stackrun");
    snprintf(f, sizeof f, "%s/stack.yaml", dir);
    snprintf(scen, sizeof scen, "%s/scen.yaml", dir);
    snprintf(errp, sizeof errp, "%s/err", dir);
    kit_write_file(f, STACK_LINES "stack_run: {age_ms: [0.125, 3], factor: [0.5, 2], share: [0.03, 0.1]}\n");
    cr_assert_eq(scenario_from(dir, f, ""), 0);
    scenario_cfg c;
    char err[512];
    cr_assert_eq(scn_load(scen, &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.cpu.nstack_run, 2);
    cr_expect_eq(c.cpu.stack_run_factor[1], 2);
    cr_expect_eq(c.cpu.stack_run_age_ms[0], 0.125);
    cr_expect_eq(c.cpu.nstack_share, 2);
    cr_expect_eq(c.cpu.stack_shares[1], 0.1, "the run line's shares, not stack_load's");
    cfg_free(&c);
    cr_assert_eq(scenario_from(dir, f, "--no-stack-run"), 0);
    cr_assert_eq(scn_load(scen, &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.cpu.nstack_run, 0);
    cr_expect_eq(c.cpu.stack_shares[1], 0.2, "without it, stack_load's shares");
    cfg_free(&c);
    /* one share per load of stack_load */
    kit_write_file(f, STACK_LINES "stack_run: {age_ms: [0.125, 3], factor: [0.5, 2], share: [0.03]}\n");
    cr_expect_eq(scenario_from(dir, f, ""), 2);
    char *msg = kit_slurp(errp);
    cr_expect(msg && strstr(msg, "stack.yaml") && strstr(msg, "one per load"), "%s", msg ? msg : "");
    free(msg);
    /* a malformed line: the ages must increase */
    kit_write_file(f, STACK_LINES "stack_run: {age_ms: [3, 1], factor: [0.5, 2], share: [0.03, 0.1]}\n");
    cr_expect_eq(scenario_from(dir, f, ""), 2);
    msg = kit_slurp(errp);
    cr_expect(msg && strstr(msg, "stack.yaml") && strstr(msg, "stack_run"), "%s", msg ? msg : "");
    free(msg);
    kit_rm_rf(dir);
}
