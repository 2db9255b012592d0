/* test_stack.c — cpu.stack (issue 7): jobs placed on cores, sometimes two on
 * one core while another is free, until a move (models/cores.h).
 *
 * Independent sources: every case is worked out by hand from the rule
 * "a job runs at 1 / (jobs on its core)"; the one random case (the wait for
 * a move, exponential of mean M; the wait for a turn, of mean W) is checked
 * against its closed form. */
#include "tests/kit.h"
#include "models/cores.h"
#include "models/scenario.h"
#include "sim/rng.h"

TestSuite(stack, .timeout = 120);

#define TICK 99
#define NEVER 1e12                     /* a migrate_ms no run reaches */

/* Run q to the end: TICK events go to the cores, anything else is a job's
 * end at done[a]. */
static void drain(cores_t *k, ev_queue *q, double *done)
{
    ev_t e;
    while (ev_pop(q, &e) == 0) {
        if (e.kind == TICK)
            cr_assert_eq(cores_event(k, q, e.t, e.a, e.b), 0);
        else
            done[e.a] = e.t;
    }
}

/* Two cores, placement on; jobs of work[j] ms all started at t = 0. */
static void two_cores_pull(double share, double migrate_ms, double pull_ms, const double *speedup,
                           int nspeedup, int n, const double *work, double *done, uint32_t rep)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, rep, 1);
    cr_assert_not_null(r);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, speedup, nspeedup, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, share, migrate_ms, pull_ms, r), 0);
    for (int j = 0; j < n; j++)
        cr_assert_eq(cores_start(&k, &q, 0.0, 7, (uint32_t)j, 0, work[j]), 0);
    drain(&k, &q, done);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

static void two_cores(double share, double migrate_ms, const double *speedup, int nspeedup,
                      int n, const double *work, double *done, uint32_t rep)
{
    two_cores_pull(share, migrate_ms, migrate_ms, speedup, nspeedup, n, work, done, rep);
}

/* share 0: two jobs of 10 on two cores, one each: both end at 10 (as the
 * pooled sharing). share 1, no move: the second goes beside the first,
 * both at 1/2: 20. share 1, migrate_ms 0: moved at once: 10. */
Test(stack, two_jobs_by_hand)
{
    const double w[] = {10, 10};
    double d[2];
    two_cores(0, NEVER, NULL, 0, 2, w, d, 0);
    near("share 0: first", d[0], 10, EXACT);
    near("share 0: second", d[1], 10, EXACT);
    two_cores(1, NEVER, NULL, 0, 2, w, d, 0);
    near("stacked: first", d[0], 20, EXACT);
    near("stacked: second", d[1], 20, EXACT);
    two_cores(1, 0, NULL, 0, 2, w, d, 0);
    near("moved at once: first", d[0], 10, EXACT);
    near("moved at once: second", d[1], 10, EXACT);
}

/* Three jobs of 10, 10, 10 with share 0: the first two take a core each,
 * the third (no core free) joins the least loaded, core 0, beside job 0.
 * Jobs 0 and 2 run at 1/2, job 1 at 1 and ends at 10. Without a move, 0
 * and 2 end at 20; with an instant move, job 2 (the last started on core 0)
 * goes to core 1 at t = 10 with 5 left, as has job 0: both end at 15. The
 * state was entered by job 1's end, so pull_ms is its wait, not
 * migrate_ms; and a pair stacked by a start waits migrate_ms, not pull_ms. */
Test(stack, third_job_joins_least_loaded)
{
    const double w[] = {10, 10, 10};
    double d[3];
    two_cores(0, NEVER, NULL, 0, 3, w, d, 0);
    near("job 1 alone on core 1", d[1], 10, EXACT);
    near("job 0 shares core 0", d[0], 20, EXACT);
    near("job 2 shares core 0", d[2], 20, EXACT);
    two_cores(0, 0, NULL, 0, 3, w, d, 0);
    near("job 1", d[1], 10, EXACT);
    near("job 0 after the move", d[0], 15, EXACT);
    near("job 2 after the move", d[2], 15, EXACT);
    two_cores_pull(0, NEVER, 0, NULL, 0, 3, w, d, 0);
    near("pulled at once: job 0", d[0], 15, EXACT);
    near("pulled at once: job 2", d[2], 15, EXACT);
    two_cores_pull(0, 0, NEVER, NULL, 0, 3, w, d, 0);
    near("no pull: job 0", d[0], 20, EXACT);
    near("no pull: job 2", d[2], 20, EXACT);
    const double w2[] = {10, 10};
    two_cores_pull(1, 0, NEVER, NULL, 0, 2, w2, d, 0);
    near("stacked by a start, moved at once", d[1], 10, EXACT);
    two_cores_pull(1, NEVER, 0, NULL, 0, 2, w2, d, 0);
    near("stacked by a start, pull_ms not its wait", d[1], 20, EXACT);
}

/* A thread going on at once stays on its core (cores_start_on with
 * cores_freed_core): share 0, jobs of 10 on core 0 and 4 on core 1 from
 * t = 0. At 4 the short one ends; a job of 6 started then on the core it
 * freed runs alone (ends at 10). With that job put on core 0 instead, it
 * shares with the first: both at 1/2 until a move that never comes, the
 * first has 6 left at 4 and ends at 16, the new one too. */
static void going_on(int stay_on_freed, double *d)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 10), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 4), 0);
    ev_t e;
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == TICK) {
            cr_assert_eq(cores_event(&k, &q, e.t, e.a, e.b), 0);
            continue;
        }
        d[e.a] = e.t;
        if (e.a == 1) {
            int core = cores_freed_core(&k, e.t);
            cr_assert_eq(core, 1, "job 1 left core %d", core);
            cr_assert_eq(cores_freed_core(&k, e.t + 1), -1);
            cr_assert_eq(cores_start_on(&k, &q, e.t, 7, 2, 0, 6, stay_on_freed ? core : 0), 0);
        }
    }
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

Test(stack, going_on_stays_on_its_core)
{
    double d[3];
    going_on(1, d);
    near("first job", d[0], 10, EXACT);
    near("the thread going on", d[2], 10, EXACT);
    going_on(0, d);
    near("first job, shared", d[0], 16, EXACT);
    near("put beside it", d[2], 16, EXACT);
}

/* With a speed-up table [1, 1.5] two busy jobs have efficiency 1.5 / 2: on
 * two cores each runs at 0.75 (work 3 ends at 4, as pooled); stacked on
 * one core each runs at 0.75 / 2 (ends at 8). Jobs of 3 and 6 stacked: both
 * at 0.375 until the short one ends at 8 (the long has 3 left), then alone
 * at speedup(1) = 1: ends at 11. */
Test(stack, speedup_efficiency_by_hand)
{
    const double s[] = {1, 1.5};
    double d[2];
    two_cores(0, NEVER, s, 2, 2, (const double[]){3, 3}, d, 0);
    near("two cores", d[0], 4, EXACT);
    near("two cores, second", d[1], 4, EXACT);
    two_cores(1, NEVER, s, 2, 2, (const double[]){3, 3}, d, 0);
    near("stacked", d[0], 8, EXACT);
    two_cores(1, NEVER, s, 2, 2, (const double[]){3, 6}, d, 0);
    near("stacked short", d[0], 8, EXACT);
    near("stacked long, then alone", d[1], 11, EXACT);
}

/* Two jobs of 100 stacked (share 1), the move after T ~ Exp(mean 4): until
 * T each does T/2, then both run alone and end at T + (100 - T/2) =
 * 100 + T/2. Over 4000 replications the mean end is 100 + 4/2 = 102 (the
 * sd of T/2 is 2, the standard error of the mean 0.032) and every end lies
 * in (100, 200). */
Test(stack, move_wait_is_exponential)
{
    const double w[] = {100, 100};
    double d[2], sum = 0, lo = 1e300, hi = 0;
    int n = 4000;
    for (int r = 0; r < n; r++) {
        two_cores(1, 4, NULL, 0, 2, w, d, (uint32_t)r);
        near("both end together", d[1], d[0], 1e-12);
        sum += d[0];
        lo = d[0] < lo ? d[0] : lo;
        hi = d[0] > hi ? d[0] : hi;
    }
    double mean = sum / n;
    cr_expect(fabs(mean - 102) < 4 * 2 / sqrt(n), "mean end %.4f, want 102 +- %.3f", mean,
              4 * 2 / sqrt(n));
    cr_expect(lo > 100 && hi < 200, "ends in [%g, %g]", lo, hi);
}

/* A pending move is void once the state is left: jobs of 10 and 2 stacked
 * with a move that never comes end at 4 (2 of work at 1/2) and 12 (8 left
 * at t = 4, alone). A third job started at 20 (one core free, one empty
 * too: nothing is running) takes a core of its own whatever the share: a
 * job of 5 ends at 25. */
Test(stack, alone_after_the_pair_ends)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    double d[3];
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 1, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 10), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 2), 0);
    drain(&k, &q, d);
    near("short of the pair", d[1], 4, EXACT);
    near("long of the pair", d[0], 12, EXACT);
    cr_assert_eq(k.move_due, 0);
    cr_assert_eq(k.on[0] + k.on[1], 0);
    cr_assert_eq(cores_start(&k, &q, 20.0, 7, 2, 0, 5), 0);
    drain(&k, &q, d);
    near("a lone job", d[2], 25, EXACT);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* Through a scenario: two aligned streams at 1 FPS, a decode stage of two
 * workers on two cores, 10 ms per frame. Both frames of a period start at
 * once. Pooled, or share 0: 10 ms each. share 1 and no move: the second
 * frame goes beside the first, both take 20 ms. */
static void pair_fixture(scenario_cfg *c, int replications, int has_stack, double share)
{
    kit_base(c, "stack", 3, 1, 0, 0.0, 10.0, replications);
    periodic(c, 2, 1.0);
    on_workers(c, 0, "decode", 2, 10.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    c->cpu.has_stack = has_stack;
    c->cpu.stack_share = share;
    c->cpu.stack_migrate_ms = NEVER;
    c->cpu.stack_pull_ms = NEVER;
}

static void aligned_pair(int has_stack, double share, double sum, double lo, double hi)
{
    scenario_cfg c;
    pair_fixture(&c, 1, has_stack, share);
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sojourn", &rs.stage[0].sojourn, 20, sum, lo, hi);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The run's cores figures, through run_scenario: in the aligned pair both
 * frames' jobs run together for their whole life, so exactly two jobs run
 * all the busy time (share 1); on one core all of it when stacked, none of
 * it with share 0 or the cores pooled. */
static void pair_figures(int has_stack, double share, double two_same)
{
    scenario_cfg c;
    pair_fixture(&c, 2, has_stack, share);
    run_result r;
    run(&c, 2, &r);
    near("two jobs' share of the busy time", r.cpu_two.mean, 1, EXACT);
    near("of that on one core", r.cpu_two_same.mean, two_same, EXACT);
    run_result_free(&r);
    cfg_free(&c);
}

Test(stack, run_figures)
{
    pair_figures(0, 0, 0);
    pair_figures(1, 0, 0);
    pair_figures(1, 1, 1);
}

Test(stack, pipeline_pooled) { aligned_pair(0, 0, 200, 10, 10); }
Test(stack, pipeline_share0) { aligned_pair(1, 0, 200, 10, 10); }
Test(stack, pipeline_stacked) { aligned_pair(1, 1, 400, 20, 20); }

/* A wake-up while a core is free beside crowded ones is not held. Frames at
 * 0, 1 and 2 ms (1 FPS), 3 decode workers on 2 cores, 5 ms, wake_ms 0.1,
 * wake_held [0, 0, 1], share 1, no move, even sharing. A: nothing running,
 * [0.1, ...] on core 0; B at 1: one job running (not held), woken at 1.1,
 * beside A (share 1); C at 2: two running, but core 1 is free and core 0
 * holds two, so it is woken at 2.1, not held, and goes onto core 1: [2.1,
 * 7.1]. A ran 1 alone, its last 4 at 1/2: ends at 9.1; B's last 1 alone:
 * 10.1. Sojourns 9.1, 9.1, 5.1. Held, C would wait for A's end at 9.1. */
Test(stack, crowded_wake_is_not_held)
{
    scenario_cfg c;
    held_trio(&c, "crowdheld", 3, 3, (const double[]){0, 0, 1});
    c.cpu.has_stack = 1;
    c.cpu.stack_share = 1;
    c.cpu.stack_migrate_ms = NEVER;
    c.cpu.stack_pull_ms = NEVER;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 30, 30 * 0.1, 0.1, 0.1);
    hist_is("decode sojourn", &rs.stage[0].sojourn, 30, 10 * (9.1 + 9.1 + 5.1), 5.1, 9.1);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The loader: cpu.stack's two keys, and its errors by key path. */
static const char *load_err(const char *yaml, scenario_cfg *c, char *err, size_t n)
{
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", NULL, c, err, n);
    return rc ? err : NULL;
}

#define BASE "duration_s: 1\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n"

Test(stack, keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5}}\n", &c, err,
                            sizeof err), "%s", err);
    cr_assert_eq(c.cpu.has_stack, 1);
    near("share", c.cpu.stack_share, 0.25, EXACT);
    near("migrate_ms", c.cpu.stack_migrate_ms, 3.5, EXACT);
    near("pull_ms defaults to migrate_ms", c.cpu.stack_pull_ms, 3.5, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, pull_ms: 0.5}}\n",
                            &c, err, sizeof err), "%s", err);
    near("pull_ms", c.cpu.stack_pull_ms, 0.5, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, pull_ms: -2}}\n",
                                &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.pull_ms"), "%s", err);
    cr_assert_null(load_err(BASE "cpu: {cores: 2}\n", &c, err, sizeof err), "%s", err);
    cr_assert_eq(c.cpu.has_stack, 0);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 1.5, migrate_ms: 1}}\n", &c,
                                err, sizeof err));
    cr_expect(strstr(err, ":5:") && strstr(err, "cpu.stack.share") && strstr(err, "0 to 1"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack") && strstr(err, "migrate_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: -1}}\n", &c,
                                err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.migrate_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate: 1}}\n", &c, err,
                                sizeof err));
    cr_expect(strstr(err, "cpu.stack") && strstr(err, "did you mean 'migrate_ms'"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: 0.3}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack"), "%s", err);
}

/* ---- turns (cpu.stack.switch_ms): the jobs on one core run one at a time */

#define START 98                       /* a test event: start job a now */

/* `cores` cores, placement with share and migrate_ms, turns of mean
 * switch_ms; job j of work[j] starts at t0[j]. done[j]: its end, freed[j]:
 * the core it left. */
static void turns_run(int cores, double share, double migrate_ms, double switch_ms, int n,
                      const double *t0, const double *work, double *done, int *freed, uint32_t rep)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(11, rep, 1);
    cr_assert_not_null(r);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, cores, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, share, migrate_ms, migrate_ms, r), 0);
    cr_assert_eq(cores_set_turns(&k, switch_ms), 0);
    for (int j = 0; j < n; j++)
        cr_assert_eq(ev_push(&q, t0[j], START, (uint32_t)j, 0), 0);
    ev_t e;
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == TICK) {
            cr_assert_eq(cores_event(&k, &q, e.t, e.a, e.b), 0);
        } else if (e.kind == START) {
            cr_assert_eq(cores_start(&k, &q, e.t, 7, e.a, 0, work[e.a]), 0);
        } else {
            done[e.a] = e.t;
            if (freed)
                freed[e.a] = cores_freed_core(&k, e.t);
        }
    }
    cr_expect_eq(k.n, 0);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* Turns need placement, and a mean wait > 0. */
Test(stack, turns_need_placement)
{
    cores_t k;
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_expect_eq(cores_set_turns(&k, 1.0), -1);
    gsl_rng *r = rng_stream(11, 0, 1);
    cr_assert_eq(cores_set_stack(&k, 0, 1, 1, r), 0);
    cr_expect_eq(cores_set_turns(&k, 0), -1);
    cr_expect_eq(cores_set_turns(&k, 2.0), 0);
    cores_free(&k);
    gsl_rng_free(r);
}

/* Job A of 10 from t = 0, job B of 2 put beside it at t = 1 (share 1, no
 * move, no turn). B takes the core at once and runs through: it ends at 3,
 * A (9 left at 1) at 12. Sharing the core instead, B would end at 5. */
Test(stack, turns_wakee_runs_first)
{
    double d[2];
    turns_run(2, 1, NEVER, NEVER, 2, (const double[]){0, 1}, (const double[]){10, 2}, d, NULL, 0);
    near("the newcomer runs through", d[1], 3, EXACT);
    near("then the first", d[0], 12, EXACT);
}

/* One core, no turn: A of 10 at 0, B of 4 at 1, C of 1 at 2. Each
 * newcomer preempts: B runs 1-2, C 2-3 (ends at 3). Then the job that has
 * waited longest, A (off since 1, B only since 2), runs its 9 left: 3-12.
 * B's 3 left: 12-15. */
Test(stack, turns_longest_waiting_next)
{
    double d[3];
    turns_run(1, 0, NEVER, NEVER, 3, (const double[]){0, 1, 2}, (const double[]){10, 4, 1}, d, NULL,
              0);
    near("C", d[2], 3, EXACT);
    near("A, the longest waiting", d[0], 12, EXACT);
    near("B last", d[1], 15, EXACT);
}

/* A move takes a waiting job, not the running one: A of 10 at 0 on core
 * 0, B of 4 stacked beside it at 1 and running, an instant move (migrate_ms
 * 0) takes A to core 1. B ends at 5 on core 0, A at 10 on core 1. */
Test(stack, turns_move_takes_the_waiting_job)
{
    double d[2];
    int f[2];
    turns_run(2, 1, 0, NEVER, 2, (const double[]){0, 1}, (const double[]){10, 4}, d, f, 0);
    near("B", d[1], 5, EXACT);
    near("A, moved at 1", d[0], 10, EXACT);
    cr_expect_eq(f[1], 0, "B ended on core %d", f[1]);
    cr_expect_eq(f[0], 1, "A ended on core %d", f[0]);
}

/* The turn's wait is exponential of mean W: B (work w) put beside A runs
 * through, ending at 1 + w, exactly when no turn comes within w:
 * P = exp(-w / W). w = 2, W = 2: e^-1 = 0.3679; over 4000 replications
 * its standard error is 0.0076. A turn that comes gives the core back to
 * A, so B ends later. Every replication A and B together finish at 12
 * (one core's work, 10 + 2, from 0). */
Test(stack, turns_wait_is_exponential)
{
    int n = 4000, through = 0;
    double d[2];
    for (int r = 0; r < n; r++) {
        turns_run(1, 0, NEVER, 2.0, 2, (const double[]){0, 1}, (const double[]){10, 2}, d, NULL,
                  (uint32_t)r);
        near("the core's work is done at 12", d[0] > d[1] ? d[0] : d[1], 12, 1e-9);
        if (fabs(d[1] - 3) < 1e-9)
            through++;
        else
            cr_expect(d[1] > 3, "B ended at %g", d[1]);
    }
    double p = (double)through / n, want = exp(-1.0), se = sqrt(want * (1 - want) / n);
    cr_expect(fabs(p - want) < 4 * se, "ran through %.4f, want %.4f +- %.4f", p, want, 4 * se);
}

/* The loader: switch_ms is optional (0: sharing), >= 0, named by path. */
Test(stack, turns_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5}}\n", &c, err,
                            sizeof err), "%s", err);
    near("switch_ms defaults to 0", c.cpu.stack_switch_ms, 0, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, "
                                 "switch_ms: 2.5}}\n", &c, err, sizeof err), "%s", err);
    near("switch_ms", c.cpu.stack_switch_ms, 2.5, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "switch_ms: -1}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.switch_ms") && strstr(err, ":5:"), "%s", err);
}

/* ---- ticks (cpu.stack.tick_ms, slice_ms): turns at the scheduler's tick */

/* Jobs running through (cores_set_through): the table, and the placement
 * stream's replication (so that runs draw apart). */
typedef struct {
    const double *work_ms, *share;
    int n;
    uint64_t rep;
} through_tab;

/* One core, ticks every `tick` ms with slice `slice` (and jobs running
 * through as `th` says, NULL: none); job j of work[j] starts at t0[j].
 * done[j]: its end. Stops once job `last` has ended (a job of endless work
 * never does). */
static void ticks_run_through(double tick, double slice, const through_tab *th, int n,
                              const double *t0, const double *work, double *done, int last)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(11, th ? th->rep : 0, 1);
    cr_assert_not_null(r);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_set_ticks(&k, tick, slice), 0);
    if (th)
        cr_assert_eq(cores_set_through(&k, th->work_ms, th->share, th->n), 0);
    for (int j = 0; j < n; j++) {
        done[j] = -1;
        cr_assert_eq(ev_push(&q, t0[j], START, (uint32_t)j, 0), 0);
    }
    ev_t e;
    long events = 0;
    while (done[last] < 0 && ev_pop(&q, &e) == 0) {
        cr_assert_lt(++events, 10000000, "the cores keep turning at %.17g without end", e.t);
        if (e.kind == TICK)
            cr_assert_eq(cores_event(&k, &q, e.t, e.a, e.b), 0);
        else if (e.kind == START)
            cr_assert_eq(cores_start(&k, &q, e.t, 7, e.a, 0, work[e.a]), 0);
        else
            done[e.a] = e.t;
    }
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

static void ticks_run(double tick, double slice, int n, const double *t0, const double *work,
                      double *done, int last)
{
    ticks_run_through(tick, slice, NULL, n, t0, work, done, last);
}

/* Ticks need placement, a tick > 0 and a slice >= 0. */
Test(stack, ticks_need_placement)
{
    cores_t k;
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_expect_eq(cores_set_ticks(&k, 4, 0.5), -1);
    gsl_rng *r = rng_stream(11, 0, 1);
    cr_assert_eq(cores_set_stack(&k, 0, 1, 1, r), 0);
    cr_expect_eq(cores_set_ticks(&k, 0, 0.5), -1);
    cr_expect_eq(cores_set_ticks(&k, 4, -0.1), -1);
    cr_expect_eq(cores_set_ticks(&k, 4, 0), 0);
    cores_free(&k);
    gsl_rng_free(r);
}

/* Ticks at 4, 8, 12, ...; slice 0.5. A of 10 at 0, B of 5 at 1. B takes
 * the core at 1 (A has 9 left) and keeps it to the first tick after 1.5:
 * 4, with 2 left. A (waiting since 1) runs 4-8 (the first tick after 4.5),
 * 5 left. B runs 8-10 and ends; A runs alone 10-15. With slice 3.5 B keeps
 * the core to the first tick after 4.5, 8, and ends at 6 first: A 6-15. */
Test(stack, ticks_turn_after_the_slice)
{
    double d[2];
    ticks_run(4, 0.5, 2, (const double[]){0, 1}, (const double[]){10, 5}, d, 0);
    near("B, cut at 4 and back at 8", d[1], 10, EXACT);
    near("A", d[0], 15, EXACT);
    ticks_run(4, 3.5, 2, (const double[]){0, 1}, (const double[]){10, 5}, d, 0);
    near("B, its slice past the tick at 4", d[1], 6, EXACT);
    near("A after it", d[0], 15, EXACT);
}

/* A short job is not cut: B of 0.4 put beside A at 3.8 has had the core
 * 0.2 ms at the tick at 4, under its slice of 0.5: it ends at 4.2, and A
 * (10 from 0) at 10.4. With slice 0 the tick at 4 cuts B: A runs 4-8
 * (6.2 left at 3.8, 2.2 at 8), B 8-8.2, A 8.2-10.4. */
Test(stack, ticks_short_job_keeps_its_core)
{
    double d[2];
    ticks_run(4, 0.5, 2, (const double[]){0, 3.8}, (const double[]){10, 0.4}, d, 0);
    near("B within its slice", d[1], 4.2, 1e-12);
    near("A", d[0], 10.4, 1e-12);
    ticks_run(4, 0, 2, (const double[]){0, 3.8}, (const double[]){10, 0.4}, d, 0);
    near("B cut at the tick", d[1], 8.2, 1e-12);
    near("A", d[0], 10.4, 1e-12);
}

/* A turn at a tick hands the core over exactly at that tick; with slice 0
 * the next turn is due at the tick after, which must lie after now even
 * where k T rounds so that floor(k T / T) is k - 1 (T = 3.9507: first at
 * k = 211, 833.5977). A and B of 1000 each at 0 share the core turn by
 * turn: work conserving, the later ends at 2000 and the earlier within a
 * tick of it. */
Test(stack, ticks_turn_at_a_rounded_tick)
{
    double d[2];
    ticks_run(3.9507, 0, 2, (const double[]){0, 0}, (const double[]){1000, 1000}, d, 0);
    if (d[1] < 0)
        ticks_run(3.9507, 0, 2, (const double[]){0, 0}, (const double[]){1000, 1000}, d, 1);
    double later = fmax(d[0], d[1]), earlier = fmin(d[0], d[1]);
    near("the later end", later, 2000, 1e-9);
    cr_expect(earlier >= 2000 - 3.9507 - 1e-9 && earlier < 2000, "the earlier end %.9g", earlier);
}

/* turncal's closed form (calib/realpipe/rp_turn.h), worked out here on its
 * own: an op of W put beside a job that never ends, at a uniform phase of
 * the tick T, is cut at its own times slice + U T + n T (n = 0, 1, ...)
 * while it has work left, each cut costing it T: its wall time over W is
 * 1 + T E[cuts] / W, E[cuts] = sum_n clamp((W - slice - n T) / T, 0, 1).
 * T = 4, slice 0.3: W = 1 -> 1.7; W = 6 -> 1 + 4 (1 + 0.425) / 6 = 1.95;
 * W = 0.25 -> 1. The simulated cores over 4000 phases evenly spread
 * (the midpoint rule; the wall time is a step function of the phase, so
 * the rule is within a few cuts in 4000 of the mean). */
Test(stack, ticks_match_the_closed_form)
{
    static const double W[] = {0.25, 1, 6}, want[] = {1, 1.7, 1.95};
    int n = 4000;
    for (int w = 0; w < 3; w++) {
        double sum = 0, d[2];
        for (int i = 0; i < n; i++) {
            double t0 = 40 + 4.0 * (i + 0.5) / n;
            ticks_run(4, 0.3, 2, (const double[]){0, t0}, (const double[]){1e12, W[w]}, d, 1);
            sum += d[1] - t0;
        }
        near("wall over work", sum / n / W[w], want[w], 0.003);
    }
}

/* ---- protected slices (cpu.stack.protect) */

/* One core, ticks every 4 ms, slice 0, protection `protect` with the shares
 * ps[] at works pw[] (np 0: none) and jobs running through as `th` says
 * (NULL: none), replication rep of the placement stream; job j of work[j]
 * starts at t0[j] (t0 < 0: it starts when job chain_of[j] ends, its thread
 * going on at once on that core). done[j]: its end. Returns the starts
 * held. */
static long chain_run_rep(double protect, const double *pw, const double *ps, int np,
                          const through_tab *th, uint64_t rep, int n, const double *t0,
                          const int *chain_of, const double *work, double *done)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(11, rep, 1);
    cr_assert_not_null(r);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_set_ticks(&k, 4, 0), 0);
    if (np > 0)
        cr_assert_eq(cores_set_protect(&k, protect, pw, ps, np), 0);
    if (th)
        cr_assert_eq(cores_set_through(&k, th->work_ms, th->share, th->n), 0);
    for (int j = 0; j < n; j++) {
        done[j] = -1;
        if (t0[j] >= 0)
            cr_assert_eq(ev_push(&q, t0[j], START, (uint32_t)j, 0), 0);
    }
    ev_t e;
    long events = 0;
    while (ev_pop(&q, &e) == 0) {
        cr_assert_lt(++events, 100000);
        if (e.kind == TICK) {
            cr_assert_eq(cores_event(&k, &q, e.t, e.a, e.b), 0);
        } else if (e.kind == START) {
            cr_assert_eq(cores_start(&k, &q, e.t, 7, e.a, 0, work[e.a]), 0);
        } else {
            done[e.a] = e.t;
            for (int j = 0; j < n; j++)
                if (t0[j] < 0 && chain_of[j] == (int)e.a)
                    cr_assert_eq(cores_start_on(&k, &q, e.t, 7, (uint32_t)j, 0, work[j],
                                                cores_freed_core(&k, e.t)), 0);
        }
    }
    long held = k.protected_starts;
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
    return held;
}

static long protect_run_rep(double protect, const double *pw, const double *ps, int np, uint64_t rep,
                            int n, const double *t0, const int *chain_of, const double *work,
                            double *done)
{
    return chain_run_rep(protect, pw, ps, np, NULL, rep, n, t0, chain_of, work, done);
}

static long protect_run(double protect, double share, int n, const double *t0, const int *chain_of,
                        const double *work, double *done)
{
    static const double w1[] = {1};
    double s1[] = {share};
    return protect_run_rep(protect, w1, s1, 1, 0, n, t0, chain_of, work, done);
}

/* A job whose work is done at a tick ends there: the turn due at that same
 * instant does not take its core first. One core, ticks at 4, slice 0: A
 * of 6 at 0, B of 10 at 2 (takes the core at once): A 0-2, B 2-4, A 4-8,
 * ending at the tick at 8; B 8-16. (Turning first at 8 voided A's end and
 * left it, its work done, waiting for the core till 12.) */
Test(stack, a_job_done_at_a_tick_ends_there)
{
    double d[2];
    chain_run_rep(0, NULL, NULL, 0, NULL, 0, 2, (const double[]){0, 2}, (const int[]){-1, -1},
                  (const double[]){6, 10}, d);
    near("A", d[0], 8, 1e-12);
    near("B", d[1], 16, 1e-12);
}

/* Protection needs ticks, a finite value >= 0 and a table of increasing
 * works > 0 with shares in [0, 1]. */
Test(stack, protect_needs_ticks)
{
    static const double w[] = {0.5, 2}, s[] = {0.3, 0.9}, bad[] = {0.3, 1.2}, down[] = {2, 0.5};
    cores_t k;
    gsl_rng *r = rng_stream(11, 0, 1);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, 1, 1, r), 0);
    cr_expect_eq(cores_set_protect(&k, 1.4, w, s, 2), -1, "without ticks");
    cr_assert_eq(cores_set_ticks(&k, 4, 0), 0);
    cr_expect_eq(cores_set_protect(&k, -0.1, w, s, 2), -1);
    cr_expect_eq(cores_set_protect(&k, INFINITY, w, s, 2), -1);
    cr_expect_eq(cores_set_protect(&k, 1.4, w, s, 0), -1, "an empty table");
    cr_expect_eq(cores_set_protect(&k, 1.4, w, bad, 2), -1, "a share over 1");
    cr_expect_eq(cores_set_protect(&k, 1.4, down, s, 2), -1, "works not increasing");
    cr_expect_eq(cores_set_protect(&k, 1.4, w, s, 2), 0);
    cores_free(&k);
    gsl_rng_free(r);
}

/* Ticks at 4, 8, ...; slice 0; A of 10 at 0, B of 1 at 0.5; protection
 * 1.4. Share 1: A has had the core 0.5 < 1.4, so B is held till A has had
 * 1.4 and runs 1.4-2.4 (its slice 0 cut at the tick at 4 only, after it
 * ended); A, 8.6 left, runs 2.4-11. Share 0, or no protection (the rule
 * before): B takes the core at 0.5 and ends at 1.5, A at 11. B at 1.5,
 * share 1: A is past its protection, B takes the core at once: 2.5. */
Test(stack, protect_woken_job_held_beside_a_young_run)
{
    double d[2];
    cr_expect_eq(protect_run(1.4, 1, 2, (const double[]){0, 0.5}, (const int[]){-1, -1},
                             (const double[]){10, 1}, d), 1);
    near("B held till A has had 1.4", d[1], 2.4, 1e-12);
    near("A", d[0], 11, 1e-12);
    cr_expect_eq(protect_run(1.4, 0, 2, (const double[]){0, 0.5}, (const int[]){-1, -1},
                             (const double[]){10, 1}, d), 0);
    near("share 0: B at once", d[1], 1.5, 1e-12);
    near("A", d[0], 11, 1e-12);
    cr_expect_eq(protect_run(0, 1, 2, (const double[]){0, 0.5}, (const int[]){-1, -1},
                             (const double[]){10, 1}, d), 0);
    near("protection 0: B at once", d[1], 1.5, 1e-12);
    cr_expect_eq(protect_run(1.4, 1, 2, (const double[]){0, 1.5}, (const int[]){-1, -1},
                             (const double[]){10, 1}, d), 0);
    near("B after A's protection: at once", d[1], 2.5, 1e-12);
    near("A", d[0], 11, 1e-12);
}

/* A thread going on keeps its turn. A of 0.5 at 0; its thread goes on at
 * 0.5 with A' of 10; B of 1 at 0.6, share 1, protection 1.4. A' counts
 * from 0, when A got the core: B is held till 1.4 and runs 1.4-2.4; A' did
 * 0.9 by 1.4 and ends at 2.4 + 9.1 = 11.5. B at 1.5: A' is past its
 * protection (1.5 from 0, though only 1.0 from its own start), B takes the
 * core at once and ends at 2.5; A' at 11.5. */
Test(stack, protect_going_on_keeps_its_turn)
{
    double d[3];
    cr_expect_eq(protect_run(1.4, 1, 3, (const double[]){0, -1, 0.6}, (const int[]){-1, 0, -1},
                             (const double[]){0.5, 10, 1}, d), 1);
    near("A", d[0], 0.5, 1e-12);
    near("B held", d[2], 2.4, 1e-12);
    near("A'", d[1], 11.5, 1e-12);
    cr_expect_eq(protect_run(1.4, 1, 3, (const double[]){0, -1, 1.5}, (const int[]){-1, 0, -1},
                             (const double[]){0.5, 10, 1}, d), 0);
    near("B at once", d[2], 2.5, 1e-12);
    near("A'", d[1], 11.5, 1e-12);
}

/* A held job stays held while the core changes hands: whoever takes it
 * next has a fresh protected slice. Works [1, 5] with shares [1, 0],
 * protection 1.4, ticks at 4, slice 0. A of 10 at 0; C of 5 at 0.1 (share
 * 0: takes the core at once); B of 1 at 0.5, held (C has had 0.4). At 1.5
 * C has had 1.4 and the core turns to the job that waited longest, A
 * (since 0.1); B, still held, waits out A's slice too: at 2.9 it takes the
 * core and ends at 3.9. C (3.6 left) takes it back, is cut at the tick at
 * 4 (3.5 left) for A (8.5 left), which runs 4-8; C runs 8-11.5, A
 * 11.5-16. */
Test(stack, protect_held_through_a_change_of_hands)
{
    static const double w[] = {1, 5}, sh[] = {1, 0};
    double d[3];
    cr_expect_eq(protect_run_rep(1.4, w, sh, 2, 0, 3, (const double[]){0, 0.1, 0.5},
                                 (const int[]){-1, -1, -1}, (const double[]){10, 5, 1}, d), 1);
    near("B", d[2], 3.9, 1e-12);
    near("C", d[1], 11.5, 1e-12);
    near("A", d[0], 16, 1e-12);
}

/* The share is interpolated at the woken job's work: on works [0.5, 1.5]
 * with shares [0, 1], B of 1 is held with probability 0.5. Over 4000
 * replications of the placement stream the held share is within 0.04 of
 * it (the binomial's standard error is 0.008); B of 0.25 and of 3 (held
 * at the ends) are held 0 and 4000 times. */
Test(stack, protect_share_by_work)
{
    static const double w[] = {0.5, 1.5}, s[] = {0, 1};
    int n = 4000;
    long held[3] = {0, 0, 0};
    static const double bw[] = {1, 0.25, 3};
    double d[2];
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < n; i++)
            held[c] += protect_run_rep(1.4, w, s, 2, (uint64_t)i, 2, (const double[]){0, 0.5},
                                       (const int[]){-1, -1}, (const double[]){10, bw[c]}, d);
    near("held share at work 1", (double)held[0] / n, 0.5, 0.04);
    cr_expect_eq(held[1], 0);
    cr_expect_eq(held[2], n);
}

/* The loader: protect: {ms, work_ms, share} with tick_ms; without it, an
 * error naming the key; a share over 1 or a missing ms, errors naming
 * theirs; left out, off. */
Test(stack, protect_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, tick_ms: 4, "
                                 "protect: {ms: 1.39, work_ms: [0.25, 1], share: [0.2, 0.7]}}}\n",
                            &c, err, sizeof err), "%s", err);
    near("protect.ms", c.cpu.stack_protect_ms, 1.39, EXACT);
    cr_expect_eq(c.cpu.nstack_protect, 2);
    near("protect.work_ms[1]", c.cpu.stack_protect_work_ms[1], 1, EXACT);
    near("protect.share[1]", c.cpu.stack_protect_share[1], 0.7, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, "
                                 "tick_ms: 4}}\n", &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nstack_protect, 0, "off when left out");
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "protect: {ms: 1.4, work_ms: [1], share: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.protect") && strstr(err, "goes with tick_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "protect: {ms: 1.4, work_ms: [1], share: [1.5]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.protect.share") && strstr(err, ":5:"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "protect: {work_ms: [1], share: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.protect") && strstr(err, "ms"), "%s", err);
}

/* ---- held wake-ups bounded by the protected slice (cpu.wake_held_until) */

/* Streams at 1 FPS with phases 0 and b ms into 2 decode workers of 10 ms on
 * one core, woken 0.1 ms late; every wake-up with a job running is held
 * (wake_held [0, 1]); placement on, turns at ticks of 4 ms (slice 0), the
 * protected slice 1.4 ms with share 0 (a placed job is never held by the
 * cores themselves: only the wake-up's hold is under test). */
static void held_slice_run(double b, int until, rep_stats *rs, scenario_cfg *c)
{
    kit_base(c, "heldslice", 3, 1, 0, 0.0, 10.0, 1);
    periodic(c, 2, 1.0);
    given_phases(c, 2, (const double[]){0.0, b});
    on_workers(c, 0, "decode", 2, 10.0);
    c->cpu.cores = 1;
    c->cpu.stage_mask = 1;
    c->cpu.wake_ms = 0.1;
    c->cpu.nwake_held = 2;
    c->cpu.wake_held[0] = 0;
    c->cpu.wake_held[1] = 1;
    c->cpu.has_stack = 1;
    c->cpu.stack_share = 0;
    c->cpu.stack_migrate_ms = NEVER;
    c->cpu.stack_pull_ms = NEVER;
    c->cpu.stack_tick_ms = 4;
    c->cpu.stack_slice_ms = 0;
    c->cpu.stack_protect_ms = 1.4;
    c->cpu.nstack_protect = 1;
    c->cpu.stack_protect_work_ms[0] = 1;
    c->cpu.stack_protect_share[0] = 0;
    c->cpu.held_until = until;
    rep1(c, rs);
}

/* held_slice_run's sojourns (every second alike) are A's and B's, sa and
 * sb, and its waits (to the start) wa and wb. */
static void held_slice_is(double b, int until, const char *what, double sa, double sb, double wa,
                          double wb)
{
    scenario_cfg c;
    rep_stats rs;
    char name[96];
    held_slice_run(b, until, &rs, &c);
    snprintf(name, sizeof name, "%s: sojourn", what);
    hist_is(name, &rs.stage[0].sojourn, 20, 10 * (sa + sb), fmin(sa, sb), fmax(sa, sb));
    snprintf(name, sizeof name, "%s: wait", what);
    hist_is(name, &rs.stage[0].wait, 20, 10 * (wa + wb), fmin(wa, wb), fmax(wa, wb));
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A at 0 runs 0.1-10.1 alone. B at 1 is held (A has had its core 0.9 ms).
 * Till an end: B runs 10.1-20.1; sojourns 10.1 and 19.1, waits 0.1 and
 * 9.1. Till the slice: B takes the core when A has had it 1.4 ms, at 1.5
 * (A 8.6 left; B's wait 0.5); turns at the ticks: B 1.5-4 (7.5 left), A
 * 4-8 (4.6), B 8-12 (3.5), A 12-16 (0.6), B 16-19.5, A 19.5-20.1;
 * sojourns 20.1 and 18.5. */
Test(stack, held_wake_waits_out_the_slice_not_the_job)
{
    held_slice_is(1.0, CPU_HELD_END, "till an end", 10.1, 19.1, 0.1, 9.1);
    held_slice_is(1.0, CPU_HELD_SLICE, "till the slice", 20.1, 18.5, 0.1, 0.5);
}

/* B at 2: A has had its core 1.9 ms, past its slice. Till an end B is
 * held all the same: 10.1-20.1, sojourns 10.1 and 18.1, waits 0.1 and
 * 8.1. Till the slice it is not held: woken at 2.1 it takes the core (A 8
 * left); B 2.1-4 (8.1 left), A 4-8 (4), B 8-12 (4.1), A 12-16 (ends), B
 * 16-20.1; sojourns 16 and 18.1, waits 0.1 and 0.1. */
Test(stack, wake_behind_an_old_run_is_not_held)
{
    held_slice_is(2.0, CPU_HELD_END, "till an end", 10.1, 18.1, 0.1, 8.1);
    held_slice_is(2.0, CPU_HELD_SLICE, "till the slice", 16, 18.1, 0.1, 0.1);
}

/* The loader: cpu.wake_held_until end | slice (end when left out); slice
 * without the protected slices, and an unknown value, are errors naming
 * the key and its line. */
Test(stack, wake_held_until_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_held: [0, 0.3], stack: {share: 0.25, "
                                 "migrate_ms: 3.5, tick_ms: 4, protect: {ms: 1.4, work_ms: [1], "
                                 "share: [0.5]}}, wake_held_until: slice}\n", &c, err, sizeof err),
                   "%s", err);
    cr_expect_eq(c.cpu.held_until, CPU_HELD_SLICE);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_held_until: end}\n", &c, err, sizeof err),
                   "%s", err);
    cr_expect_eq(c.cpu.held_until, CPU_HELD_END);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2}\n", &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.held_until, CPU_HELD_END, "end when left out");
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, "
                                     "tick_ms: 4}, wake_held_until: slice}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.wake_held_until") && strstr(err, "cpu.stack.protect")
              && strstr(err, ":5:"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, wake_held_until: tick}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.wake_held_until") && strstr(err, ":5:"), "%s", err);
}

/* ---- running through (cpu.stack.through) */

/* Running through needs ticks, and a table of increasing works > 0 with
 * shares in [0, 1]. */
Test(stack, through_needs_ticks)
{
    cores_t k;
    gsl_rng *r = rng_stream(11, 0, 1);
    static const double w[] = {1, 2}, p[] = {1, 0}, flat[] = {1, 1}, over[] = {1, 1.5};
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, 1, 1, r), 0);
    cr_expect_eq(cores_set_through(&k, w, p, 2), -1, "without ticks");
    cr_assert_eq(cores_set_ticks(&k, 4, 0), 0);
    cr_expect_eq(cores_set_through(&k, w, p, 0), -1, "an empty table");
    cr_expect_eq(cores_set_through(&k, flat, p, 2), -1, "works not increasing");
    cr_expect_eq(cores_set_through(&k, w, over, 2), -1, "a share over 1");
    cr_expect_eq(cores_set_through(&k, (const double[]){0}, p, 1), -1, "a work of 0");
    cr_expect_eq(cores_set_through(&k, w, p, 2), 0);
    cores_free(&k);
    gsl_rng_free(r);
}

/* Ticks at 4, 8, ...; slice 0. A never ends (from 0); B of 6 is put beside
 * it at 40.3 and takes the core. Share 1: B runs through, 40.3-46.3. Share
 * 0: the tick at 44 cuts B (3.7 done), A runs 44-48, B 48-50.3. */
Test(stack, through_is_never_cut)
{
    double d[2];
    static const double w[] = {1}, all[] = {1}, none[] = {0};
    ticks_run_through(4, 0, &(through_tab){w, all, 1, 0}, 2, (const double[]){0, 40.3},
                      (const double[]){1e12, 6}, d, 1);
    near("B through", d[1], 46.3, 1e-12);
    ticks_run_through(4, 0, &(through_tab){w, none, 1, 0}, 2, (const double[]){0, 40.3},
                      (const double[]){1e12, 6}, d, 1);
    near("B cut at 44", d[1], 50.3, 1e-12);
}

/* chain_run_rep without protection, replication 0. */
static void chain_run(const through_tab *th, int n, const double *t0, const int *chain_of,
                      const double *work, double *done)
{
    chain_run_rep(0, NULL, NULL, 0, th, 0, n, t0, chain_of, work, done);
}

/* Running through is a woken thread's: a thread going on at once with its
 * next op was never put beside the other, and turns at ticks. Every start
 * on a busy core runs through (share 1). A, endless, at 0; B of 0.5 at
 * 40.3 runs through to 40.8; its thread goes on with B' of 6, which keeps
 * the core but is cut at the tick at 44 for A (4 ms, to the tick at 48)
 * and ends at 48 + 2.8 = 50.8 (through, it would end at 46.8). */
Test(stack, through_not_for_a_thread_going_on)
{
    static const double w[] = {1}, all[] = {1};
    double d[3];
    chain_run(&(through_tab){w, all, 1, 0}, 3, (const double[]){0, 40.3, -1}, (const int[]){-1, -1, 1},
              (const double[]){1e9, 0.5, 6}, d);
    near("B through", d[1], 40.8, 1e-12);
    near("B' cut at the tick", d[2], 50.8, 1e-12);
}

/* Events at one instant are handled one at a time, in an order the threads
 * never saw: a job that gets the core as one ends and loses it at once to
 * that job's thread going on never ran, and keeps its place as the one
 * that waited longest. One core, ticks at 4, slice 0, no protection: A of
 * 100 at 0; B of 1 at 1 takes the core (A waits from 1); C of 3.5 at 1.5
 * takes it (B waits from 1.5); the tick at 4 turns to A (C waits from 4,
 * 1 left), the tick at 8 to B (A waits from 8), which ends at 8.5: the core
 * goes to C (waiting from 4) and back at once to B's thread, going on with
 * B' of 2, to 10.5. Then C, waiting from 4, not from 8.5, goes before A
 * (from 8) and ends at 11.5 (from 8.5 it would wait for A's turn to the
 * tick at 12, and end at 13). */
Test(stack, a_core_lost_at_once_keeps_the_wait)
{
    double d[4];
    chain_run(NULL, 4, (const double[]){0, 1, 1.5, -1}, (const int[]){-1, -1, -1, 1},
              (const double[]){100, 1, 3.5, 2}, d);
    near("B", d[1], 8.5, 1e-12);
    near("B'", d[3], 10.5, 1e-12);
    near("C before A", d[2], 11.5, 1e-12);
}

/* The closed form turncal fits (cores.h): with slice 0 an op of W put
 * beside a job that never ends runs through with probability p(W) (1 x its
 * time) and otherwise turns at ticks (ticks_match_the_closed_form: 2 x for
 * slice 0 at any W), so its wall time over W is 2 - p(W). The table [1, 4]
 * -> [0.75, 0.25]: p(0.5) = 0.75 (held), p(2) = 0.75 - 0.5 / 3 = 0.5833,
 * p(6) = 0.25 (held): 1.25, 1.4167, 1.75. Over 4000 phases (spread evenly)
 * and draws (a replication each): the wall over W is 1 or 1 + 4 / W
 * (one cut) at W <= 4, so at W = 0.5 its standard error is
 * 8 sqrt(q (1 - q)) / sqrt(4000) = 0.022 with q = 0.25 x 0.125, at W = 2
 * 0.0128 (q = 0.2083); at W = 6 1, 5/3 or 7/3, 0.0082. The (relative)
 * tolerances are four of them. */
Test(stack, through_matches_the_closed_form)
{
    static const double W[] = {0.5, 2, 6}, want[] = {1.25, 2 - (0.75 - 0.5 / 3), 1.75};
    static const double tol[] = {0.071, 0.037, 0.02};
    static const double tw[] = {1, 4}, tp[] = {0.75, 0.25};
    int n = 4000;
    for (int w = 0; w < 3; w++) {
        double sum = 0, d[2];
        for (int i = 0; i < n; i++) {
            double t0 = 40 + 4.0 * (i + 0.5) / n;
            ticks_run_through(4, 0, &(through_tab){tw, tp, 2, (uint64_t)(i + 1)}, 2,
                              (const double[]){0, t0}, (const double[]){1e12, W[w]}, d, 1);
            sum += d[1] - t0;
        }
        near("wall over work", sum / n / W[w], want[w], tol[w]);
    }
}

/* The loader: through: {work_ms, share} with tick_ms only; one share per
 * work, each from 0 to 1, the works increasing. */
Test(stack, through_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, tick_ms: 4, "
                                 "through: {work_ms: [0.5, 2], share: [0.9, 0.1]}}}\n",
                            &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nstack_through, 2);
    near("work 1", c.cpu.stack_through_work_ms[1], 2, EXACT);
    near("share 0", c.cpu.stack_through_share[0], 0.9, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, tick_ms: 4}}\n",
                            &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nstack_through, 0, "none unless asked");
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, switch_ms: 3, "
                                     "through: {work_ms: [1], share: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.through") && strstr(err, "goes with tick_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "through: {work_ms: [1, 2], share: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.through.share") && strstr(err, "one share per work"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "through: {work_ms: [1, 2], share: [1, 1.2]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.through.share[1]") && strstr(err, ":5:"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "through: {work_ms: [2, 1], share: [1, 0]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.through.work_ms[1]") && strstr(err, "must increase"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, tick_ms: 4, "
                                     "through: {work: [1], share: [1]}}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.through") && strstr(err, "work"), "%s", err);
}

/* The loader: tick_ms (> 0) with slice_ms (>= 0, 0 when left out), not
 * beside switch_ms; slice_ms without tick_ms is an error. */
Test(stack, ticks_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, "
                                 "tick_ms: 4, slice_ms: 0.3}}\n", &c, err, sizeof err), "%s", err);
    near("tick_ms", c.cpu.stack_tick_ms, 4, EXACT);
    near("slice_ms", c.cpu.stack_slice_ms, 0.3, EXACT);
    near("switch_ms stays 0", c.cpu.stack_switch_ms, 0, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.25, migrate_ms: 3.5, "
                                 "tick_ms: 4}}\n", &c, err, sizeof err), "%s", err);
    near("slice_ms defaults to 0", c.cpu.stack_slice_ms, 0, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "switch_ms: 3, tick_ms: 4}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.tick_ms") && strstr(err, "either switch_ms or tick_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "slice_ms: 0.5}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.slice_ms") && strstr(err, "goes with tick_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "tick_ms: 0}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.tick_ms") && strstr(err, ":5:"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.5, migrate_ms: 1, "
                                     "tick_ms: 4, slice_ms: -1}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.slice_ms"), "%s", err);
}

/* ---- share by load (cpu.stack.share as a list) */

/* The recent utilisation by hand: one of two cores busy from t = 0 (from
 * 0), so u(t) = 0.5 (1 - 2^(-t / H)). H = 32: u(32) = 0.25, u(64) =
 * 0.375, and near 0.5 after 50 half-lives. On the table [0, 0.5] -> [0, 1]
 * the share is 2u: 0.5, 0.75, 1 (held past the last load). Before any
 * time has passed, u = 0: the first share. */
Test(stack, share_follows_recent_utilisation)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(11, 0, 1);
    static const double load[] = {0, 0.5}, share[] = {0, 1};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0.3, NEVER, NEVER, r), 0);
    near("a single share without a table", cores_share_now(&k), 0.3, EXACT);
    cr_expect_eq(cores_set_share_load(&k, load, share, 2, 0), -1, "a half-life must be > 0");
    static const double down[] = {0.5, 0.2};
    cr_expect_eq(cores_set_share_load(&k, down, share, 2, 32), -1, "loads must increase");
    cr_assert_eq(cores_set_share_load(&k, load, share, 2, 32), 0);
    near("u = 0: the first share", cores_share_now(&k), 0, EXACT);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 1e6), 0);
    cores_reset_stats(&k, 32);
    near("one half-life", cores_share_now(&k), 0.5, 1e-12);
    cores_reset_stats(&k, 64);
    near("two half-lives", cores_share_now(&k), 0.75, 1e-12);
    cores_reset_stats(&k, 1600);
    near("held at the last load", cores_share_now(&k), 1, 1e-12);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* Three points: [0.2, 0.4, 0.8] -> [0.1, 0.3, 0.2]. With both cores busy
 * from 0 for one half-life, u = 0.5: between 0.4 and 0.8, a quarter of the
 * way: 0.3 - 0.1 / 4 = 0.275. */
Test(stack, share_interpolated_between_loads)
{
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(11, 0, 1);
    static const double load[] = {0.2, 0.4, 0.8}, share[] = {0.1, 0.3, 0.2};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(&k, 0, NEVER, NEVER, r), 0);
    cr_assert_eq(cores_set_share_load(&k, load, share, 3, 10), 0);
    near("below the first load", cores_share_now(&k), 0.1, EXACT);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 0, 0, 1e6), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 1e6), 0);
    cores_reset_stats(&k, 10);
    near("u = 0.5", cores_share_now(&k), 0.275, 1e-12);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* Through a scenario: the aligned pair (two frames at once, two cores)
 * with a share by load. At the first start the cores have been idle (u =
 * 0), so the share is the first: [0, 1] gives 10 ms each (apart), [1, 1]
 * gives 20 (stacked). */
static void aligned_pair_by_load(double s0, double s1, double sum, double each)
{
    scenario_cfg c;
    pair_fixture(&c, 1, 1, 0);
    c.cpu.nstack_share = 2;
    c.cpu.stack_shares[0] = s0;
    c.cpu.stack_shares[1] = s1;
    c.cpu.stack_share_load[0] = 0.5;
    c.cpu.stack_share_load[1] = 0.9;
    c.cpu.stack_util_halflife_ms = 32;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sojourn", &rs.stage[0].sojourn, 20, sum, each, each);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(stack, pipeline_share_by_load)
{
    aligned_pair_by_load(0, 1, 200, 10);
    aligned_pair_by_load(1, 1, 400, 20);
}

/* The loader: share as a list needs share_load, as many and increasing. */
Test(stack, share_by_load_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05, 0.2], share_load: [0.3, 0.9], "
                                 "migrate_ms: 3}}\n", &c, err, sizeof err), "%s", err);
    cr_assert_eq(c.cpu.nstack_share, 2);
    near("share[1]", c.cpu.stack_shares[1], 0.2, EXACT);
    near("share_load[0]", c.cpu.stack_share_load[0], 0.3, EXACT);
    near("half-life default", c.cpu.stack_util_halflife_ms, 32, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05], share_load: [0.3], "
                                 "util_halflife_ms: 8, migrate_ms: 3}}\n", &c, err, sizeof err), "%s", err);
    near("half-life", c.cpu.stack_util_halflife_ms, 8, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05, 0.2], migrate_ms: 3}}\n",
                                &c, err, sizeof err));
    cr_expect(strstr(err, "share_load"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05, 0.2], share_load: [0.3], "
                                     "migrate_ms: 3}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.share_load") && strstr(err, "one load per share"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05, 0.2], share_load: [0.9, 0.3], "
                                     "migrate_ms: 3}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.share_load[1]") && strstr(err, "increase"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: [0.05, 1.2], share_load: [0.3, 0.9], "
                                     "migrate_ms: 3}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stack.share[1]"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stack: {share: 0.1, share_load: [0.3], "
                                     "migrate_ms: 3}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "single share"), "%s", err);
}

/* ---- stackcal's figures (cores.h: chances, stacked, spells) ------------ */

/* Two cores, share 1, no move: jobs of work[0..n) started at t = 0, the
 * cores left for the caller to inspect, run (drain) and free. */
static void share1_at_zero(cores_t *k, ev_queue *q, gsl_rng *r, int n, const double *work)
{
    cr_assert_eq(ev_init(q, 16), 0);
    cr_assert_eq(cores_init(k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(k, 1, NEVER, NEVER, r), 0);
    for (int j = 0; j < n; j++)
        cr_assert_eq(cores_start(k, q, 0.0, 7, (uint32_t)j, 0, work[j]), 0);
}

/* share 1, no move: jobs of 10 and 2 from t = 0. The second start had a core
 * free beside a running job (a chance) and went beside it: a spell begun by a
 * start, from 0 until the short job's end at 4 (2 of work at 1/2). */
Test(stack, spell_begun_by_a_start)
{
    const double w[] = {10, 2};
    double d[2];
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    share1_at_zero(&k, &q, r, 2, w);
    drain(&k, &q, d);
    cores_close(&k, d[0]);
    cr_assert_eq(k.chances, 1);
    cr_assert_eq(k.stacked, 1);
    cr_assert_eq(k.spells[0], 1);
    cr_assert_eq(k.spells[1], 0);
    near("its length", k.spell_ms[0], 4, EXACT);
    cr_assert_eq(k.spell_moves[0] + k.spell_moves[1], 0);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* share 1, no move: A (10), B (10) and C (2) from t = 0. B goes beside A (a
 * chance, stacked); C comes while the busy core already holds two, so it
 * goes onto the free core (no chance): alone there, it ends at 2, and A and
 * B at 1/2 end at 20. Put beside them (the rule before 2026-12-03) C would
 * run at 1/3 and end at 6. */
Test(stack, crowded_core_sends_a_start_to_the_free_one)
{
    const double w[] = {10, 10, 2};
    double d[3];
    cores_t k;
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    share1_at_zero(&k, &q, r, 3, w);
    cr_assert_eq(k.on[0], 2);
    cr_assert_eq(k.on[1], 1);
    drain(&k, &q, d);
    near("C alone on the free core", d[2], 2, EXACT);
    near("A beside B", d[0], 20, EXACT);
    near("B beside A", d[1], 20, EXACT);
    cr_assert_eq(k.chances, 1);
    cr_assert_eq(k.stacked, 1);
    cores_free(&k);
    ev_free(&q);
    gsl_rng_free(r);
}

/* share 0: A (10) takes core 0, C (2) core 1 (a chance, not stacked), B (10),
 * with no core free, joins the least loaded, core 0 (no chance). C ends at 2
 * and, when its thread goes on at once with D (2) on the core C freed, core 1
 * never empties: no spell then; D ends at 4 and a spell begun by an end lasts
 * until A and B (8 left each at 4, at 1/2) end at 20: 16 ms. When C's thread
 * sleeps instead, the spell is 2 to 20: 18 ms. With an instant pull it is
 * one spell of no length, ended by a move. */
static void emptied(int go_on, double pull_ms, cores_t *k)
{
    ev_queue q;
    gsl_rng *r = rng_stream(7, 0, 1);
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(k, 2, NULL, 0, TICK), 0);
    cr_assert_eq(cores_set_stack(k, 0, NEVER, pull_ms, r), 0);
    cr_assert_eq(cores_start(k, &q, 0.0, 7, 0, 0, 10), 0);
    cr_assert_eq(cores_start(k, &q, 0.0, 7, 2, 0, 2), 0);
    cr_assert_eq(cores_start(k, &q, 0.0, 7, 1, 0, 10), 0);
    cr_assert_eq(k->on[0], 2);
    ev_t e;
    double t_end = 0;
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == TICK) {
            cr_assert_eq(cores_event(k, &q, e.t, e.a, e.b), 0);
            continue;
        }
        t_end = e.t;
        if (e.a == 2 && go_on)
            cr_assert_eq(cores_start_on(k, &q, e.t, 7, 3, 0, 2, cores_freed_core(k, e.t)), 0);
    }
    cores_close(k, t_end);
    ev_free(&q);
    gsl_rng_free(r);
}

Test(stack, spell_begun_by_an_end)
{
    cores_t k;
    emptied(1, NEVER, &k);
    cr_assert_eq(k.chances, 1);
    cr_assert_eq(k.stacked, 0);
    cr_assert_eq(k.spells[0], 0);
    cr_assert_eq(k.spells[1], 1, "going on at once begins no spell: %ld", k.spells[1]);
    near("after D's end", k.spell_ms[1], 16, EXACT);
    cores_free(&k);
    emptied(0, NEVER, &k);
    cr_assert_eq(k.spells[1], 1);
    near("after C's end", k.spell_ms[1], 18, EXACT);
    cores_free(&k);
    emptied(0, 0, &k);
    cr_assert_eq(k.spells[1], 1);
    cr_assert_eq(k.spell_moves[1], 1);
    near("pulled at once", k.spell_ms[1], 0, EXACT);
    cores_free(&k);
}

/* Through run_scenario: in the aligned pair (1 FPS, 10 s) the second frame of
 * each period is a chance; stacked (share 1) it begins a spell of 20 ms, one
 * a second, no move; with share 0 there is none. */
static void pair_spells(double share)
{
    scenario_cfg c;
    pair_fixture(&c, 2, 1, share);
    run_result r;
    run(&c, 2, &r);
    near("stacked share", r.cpu_stack[RUN_STACK_SHARE].mean, share, EXACT);
    near("start spells per s", r.cpu_stack[RUN_START_SPELLS_S].mean, share, EXACT);
    near("their length", r.cpu_stack[RUN_START_SPELL_MS].mean, 20 * share, EXACT);
    near("moved", r.cpu_stack[RUN_START_MOVED].mean, 0, EXACT);
    near("end spells per s", r.cpu_stack[RUN_END_SPELLS_S].mean, 0, EXACT);
    run_result_free(&r);
    cfg_free(&c);
}

Test(stack, run_spell_figures)
{
    pair_spells(1);
    pair_spells(0);
}
