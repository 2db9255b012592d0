/* test_cores.c — the cpu: key (issue 7): stages' threads sharing a few cores
 * by processor sharing, and the wake-up delay of a sleeping thread.
 *
 * Independent sources: with exponential service, c servers on k <= c cores
 * under processor sharing serve min(n, k) x mu in total whenever n items are
 * in the system (min(n, c) servers busy, each at min(1, k / min(n, c))), so
 * the number in system is exactly that of M/M/k: one core gives M/M/1
 * (mean sojourn 1/(mu - lambda), the M/M/1-PS result), two cores give
 * Erlang C for M/M/2. Deterministic cases are worked out by hand. */
#include "tests/kit.h"
#include "models/cores.h"
#include "models/scenario.h"

TestSuite(cores, .timeout = 120);

static void exp_svc(stage_cfg *st, double mean_ms)
{
    dist_free(&st->service);
    cr_assert_null(dist_init_exponential(&st->service, mean_ms));
}

/* 4 servers on 1 core, lambda 0.8/ms, mu 1/ms: M/M/1, mean sojourn 5 ms
 * (without the core limit, M/M/4 at a = 0.8 would give about 1.0 ms). */
Test(cores, four_servers_one_core_is_mm1)
{
    scenario_cfg c;
    kit_base(&c, "ps1", 11, 1, 0, 20.0, 400.0, 10);
    poisson(&c, 800.0);
    c.stages[0].servers = 4;
    exp_svc(&c.stages[0], 1.0);
    c.cpu.cores = 1;
    c.cpu.stage_mask = 1;
    run_result r;
    run(&c, 2, &r);
    near("mean sojourn 1/(mu - lambda)", r.stage[0].sojourn.mean.mean, 5.0, 0.04);
    near("e2e mean", r.e2e.mean.mean, 5.0, 0.04);
    run_result_free(&r);
    cfg_free(&c);
}

/* 4 servers on 2 cores, lambda 1.5/ms, mu 1/ms: M/M/2 with a = 1.5,
 * P0 = 1/(1 + a + a^2/(2(1 - rho))) = 1/7, C = (a^2/2)/(1 - rho) P0 = 4.5/7,
 * W = C/(2 mu - lambda) + 1/mu = 9/7 + 1 = 16/7 ms. */
Test(cores, four_servers_two_cores_is_mm2)
{
    scenario_cfg c;
    kit_base(&c, "ps2", 12, 1, 0, 20.0, 300.0, 10);
    poisson(&c, 1500.0);
    c.stages[0].servers = 4;
    exp_svc(&c.stages[0], 1.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 1;
    run_result r;
    run(&c, 2, &r);
    near("mean sojourn Erlang C (16/7)", r.stage[0].sojourn.mean.mean, 16.0 / 7.0, 0.04);
    run_result_free(&r);
    cfg_free(&c);
}

/* Two aligned streams, 2 servers, constant 10 ms, one core: both frames
 * start at 0 and share the core, so both end at 20 ms; the next pair comes
 * a second later. Service (wall) 20, wait 0. On two cores: 10. */
static void two_jobs(int cores, double want)
{
    scenario_cfg c;
    kit_base(&c, "pair", 1, 1, 0, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    on_workers(&c, 0, "decode", 2, 10.0);
    c.cpu.cores = cores;
    c.cpu.stage_mask = 1;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sojourn", &rs.stage[0].sojourn, 20, 20 * want, want, want);
    hist_is("service", &rs.stage[0].service, 20, 20 * want, want, want);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(cores, two_jobs_share_one_core) { two_jobs(1, 20.0); }
Test(cores, two_jobs_two_cores) { two_jobs(2, 10.0); }

/* Two GPUs (threads) each start a 10 ms batch at t = 0 on one core: both
 * end at 20 ms. */
Test(cores, gpus_share_the_core)
{
    scenario_cfg c;
    kit_base(&c, "gpus", 1, 1, 2, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    on_gpu(&c, 0, "encode", 1, 0.0, 10.0);
    c.cluster.placement = PLACE_LEAST_LOADED;     /* periodic: stream j on GPU j */
    c.cpu.cores = 1;
    c.cpu.stage_mask = 1;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sojourn", &rs.stage[0].sojourn, 20, 20 * 20.0, 20.0, 20.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Unequal work on cores.c directly: jobs of 10 and 30 ms start together on
 * one core; both run at 1/2 until the short one is done at 20 ms (10 of
 * work each); the long one has 20 left, alone at full speed: done at 40. */
Test(cores, unequal_jobs_closed_form)
{
    cores_t k;
    ev_queue q;
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, 99), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 10.0), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 2, 0, 30.0), 0);
    double done[3] = {0};
    ev_t e;
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == 99)
            cr_assert_eq(cores_tick(&k, &q, e.t, e.b), 0);
        else
            done[e.a] = e.t;
    }
    near("short job ends at 2 x 10", done[1], 20.0, EXACT);
    near("long job ends at 20 + 20", done[2], 40.0, EXACT);
    /* a job joining midway: 10 ms alone for 5 ms (5 left), then a 4 ms job:
     * both at 1/2, the 4 ms one ends after 8 more (t = 13, the first has 1
     * left), the first at 14. */
    cr_assert_eq(cores_start(&k, &q, 100.0, 7, 1, 0, 10.0), 0);
    while (ev_len(&q) && ev_peek(&q)->t < 105.0) {
        ev_pop(&q, &e);
        cores_tick(&k, &q, e.t, e.b);
    }
    cr_assert_eq(cores_start(&k, &q, 105.0, 7, 2, 0, 4.0), 0);
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == 99)
            cr_assert_eq(cores_tick(&k, &q, e.t, e.b), 0);
        else
            done[e.a] = e.t;
    }
    near("joining job", done[2], 113.0, EXACT);
    near("first job", done[1], 114.0, EXACT);
    cores_free(&k);
    ev_free(&q);
}

/* Wake-up: one stream at 1 FPS, decode constant 1 ms, wake 0.5 ms: every
 * frame waits 0.5 (its thread was asleep) and leaves decode at 1.5. At the
 * GPU stage (max_batch 4, batch timeout 2 ms, 1 ms batches) the thread wakes
 * at 2.0, finds no full batch, sleeps to the timeout at 3.5 and wakes 0.5
 * late, at 4.0: a wait of 2.5; the batch ends at 5.0, the frame's e2e.
 *
 * Timed waits: the same pipeline with cpu.timer_ms 1.25. The GPU thread,
 * woken by the handoff (wake_ms, 0.5) at 2.0, sleeps to the timeout at 3.5
 * and now wakes 1.25 late, at 4.75: a wait of 3.25, e2e 5.75. With source:
 * timer the camera thread's own sleep to each frame's time also wakes 1.25
 * late: the frame enters decode at +1.25 (its wait there is still the 0.5
 * wake-up), leaves at 2.75, reaches the timeout at 4.75 and starts at 6.0:
 * e2e 7.0, counted from the frame's time. timer_ms < 0: no timer_ms given. */
static void wake_case(double timer_ms, int source_timer, double encode_wait, double e2e)
{
    scenario_cfg c;
    kit_base(&c, "wake", 1, 2, 1, 0.0, 10.0, 1);
    periodic(&c, 1, 1.0);
    on_workers(&c, 0, "decode", 1, 1.0);
    on_gpu(&c, 1, "encode", 4, 2.0, 1.0);
    c.cpu.cores = 2;
    c.cpu.wake_ms = 0.5;
    c.cpu.has_timer = timer_ms >= 0;
    c.cpu.timer_ms = timer_ms >= 0 ? timer_ms : 0;
    c.cpu.source = source_timer;
    c.cpu.stage_mask = 3;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 10, 10 * 0.5, 0.5, 0.5);
    hist_is("decode sojourn", &rs.stage[0].sojourn, 10, 10 * 1.5, 1.5, 1.5);
    hist_is("encode wait", &rs.stage[1].wait, 10, 10 * encode_wait, encode_wait, encode_wait);
    hist_is("e2e", &rs.e2e, 10, 10 * e2e, e2e, e2e);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(cores, wake_delay) { wake_case(-1, 0, 2.5, 5.0); }
Test(cores, timer_delay) { wake_case(1.25, 0, 3.25, 5.75); }
Test(cores, timer_source) { wake_case(1.25, 1, 3.25, 7.0); }

/* A measured speed-up table: 4 servers, exponential mu = 1/ms, lambda 1.2/ms,
 * speedup [1, 1.5]: the total service rate is 1 with one item, 1.5 with more,
 * a birth-death chain with p_n = p0 1.2 (0.8)^(n-1) for n >= 1, so
 * p0 = 1/(1 + 1.2/0.2) = 1/7, N = p0 1.2 / 0.2^2 = 30/7 and W = N / lambda
 * = 25/7 ms (Little). */
Test(cores, speedup_table_birth_death)
{
    scenario_cfg c;
    kit_base(&c, "speedup", 13, 1, 0, 20.0, 400.0, 10);
    poisson(&c, 1200.0);
    c.stages[0].servers = 4;
    exp_svc(&c.stages[0], 1.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 1;
    c.cpu.nspeedup = 2;
    c.cpu.speedup[0] = 1.0;
    c.cpu.speedup[1] = 1.5;
    run_result r;
    run(&c, 2, &r);
    near("mean sojourn 25/7", r.stage[0].sojourn.mean.mean, 25.0 / 7.0, 0.04);
    run_result_free(&r);
    cfg_free(&c);
}

/* On cores.c directly: speedup [0.5, 1.2] — one job alone runs at half
 * speed: 10 ms of work takes 20; two together at 0.6 each: 6 ms of work
 * each end at 10. */
Test(cores, speedup_closed_form)
{
    static const double sp[] = {0.5, 1.2};
    cores_t k;
    ev_queue q;
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 2, sp, 2, 99), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 10.0), 0);
    double done[3] = {0};
    ev_t e;
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == 99)
            cr_assert_eq(cores_tick(&k, &q, e.t, e.b), 0);
        else
            done[e.a] = e.t;
    }
    near("alone at 0.5", done[1], 20.0, EXACT);
    cr_assert_eq(cores_start(&k, &q, 100.0, 7, 1, 0, 6.0), 0);
    cr_assert_eq(cores_start(&k, &q, 100.0, 7, 2, 0, 6.0), 0);
    while (ev_pop(&q, &e) == 0) {
        if (e.kind == 99)
            cr_assert_eq(cores_tick(&k, &q, e.t, e.b), 0);
        else
            done[e.a] = e.t;
    }
    near("pair at 0.6 each", done[1], 110.0, EXACT);
    near("pair at 0.6 each", done[2], 110.0, EXACT);
    cores_free(&k);
    ev_free(&q);
}

/* The loader: cpu: {cores, wake_ms, stages}. */
static const char *load_err(const char *yaml, scenario_cfg *c, char *err, size_t n)
{
    int rc = scn_load_string(yaml, strlen(yaml), "s.yaml", NULL, c, err, n);
    return rc ? err : NULL;
}

#define BASE "duration_s: 1\nworkload: {arrival: poisson, rate_hz: 10}\n" \
             "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n" \
             "  - {name: response, service: {dist: constant, ms: 1}}\n"

Test(cores, scenario_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_ms: 0.03}\n", &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.cores, 2);
    near("wake_ms", c.cpu.wake_ms, 0.03, EXACT);
    cr_expect_eq(c.cpu.stage_mask, 3u);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 1, stages: [response]}\n", &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.stage_mask, 2u);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 0}\n", &c, err, sizeof err));
    cr_expect(strstr(err, ":6:") && strstr(err, "cpu.cores"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, stages: [decod]}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.stages[0]") && strstr(err, "did you mean 'decode'"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, wake_ms: -1}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.wake_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {core: 2}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "did you mean 'cores'"), "%s", err);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, speedup: [0.98, 1.33, 1.73]}\n", &c, err,
                            sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nspeedup, 3);
    near("speedup[2]", c.cpu.speedup[2], 1.73, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speedup: [1, 2.5]}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speedup[1]") && strstr(err, "cannot run faster"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speedup: [1, 2, 2.3]}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speedup[2]") && strstr(err, "on 2 cores cannot run faster than 2")
              && strstr(err, ":6:33:"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speedup: 1.5}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speedup") && strstr(err, "expected a list"), "%s", err);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_ms: 0.01, timer_ms: 0.04, source: timer}\n",
                            &c, err, sizeof err), "%s", err);
    cr_expect(c.cpu.has_timer && c.cpu.source == CPU_SOURCE_TIMER, "timer_ms and source: timer read");
    near("timer_ms", cpu_timer_ms(&c.cpu), 0.04, EXACT);
    cfg_free(&c);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_ms: 0.01}\n", &c, err, sizeof err), "%s", err);
    cr_expect(!c.cpu.has_timer && c.cpu.source == CPU_SOURCE_IDEAL, "no timer, ideal source by default");
    near("timed waits wake wake_ms late without timer_ms", cpu_timer_ms(&c.cpu), 0.01, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, timer_ms: -0.5}\n", &c, err, sizeof err));
    cr_expect(strstr(err, ":6:") && strstr(err, "cpu.timer_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, source: timr}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.source") && strstr(err, "did you mean 'timer'"), "%s", err);
}

/* cpu.wake_busy or timer_busy: n constant classes of ms[k]. */
static void constants(dist_t *d, int *nd, int n, const double *ms)
{
    *nd = n;
    for (int k = 0; k < n; k++)
        cr_assert_null(dist_init_constant(&d[k], ms[k]));
}

/* cpu.wake_busy and cpu.timer_busy in the loader: lists of distributions,
 * their errors named by index. */
Test(cores, busy_lists_load)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_busy: [{dist: constant, ms: 0.05}, "
                            "{dist: exponential, mean_ms: 0.2}], timer_busy: [{dist: constant, "
                            "ms: 0.08}]}\n", &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nwake_busy, 2);
    cr_expect_eq(c.cpu.ntimer_busy, 1);
    near("wake_busy[1] mean", dist_mean(&c.cpu.wake_busy[1]), 0.2, EXACT);
    near("timer_busy[0]", dist_mean(&c.cpu.timer_busy[0]), 0.08, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, wake_busy: 0.1}\n", &c, err, sizeof err));
    cr_expect(strstr(err, ":6:") && strstr(err, "cpu.wake_busy") && strstr(err, "expected a list"),
              "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, timer_busy: []}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.timer_busy") && strstr(err, "1 to 9"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, wake_busy: [{dist: constant, ms: 0.1}, "
                                "{dist: exponential, mean_ms: -1}]}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.wake_busy[1]"), "%s", err);
    cr_assert_null(load_err(BASE "cpu: {cores: 2, wake_held: [0, 0.25], timer_held: [0.5]}\n", &c,
                            err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nwake_held, 2);
    cr_expect_eq(c.cpu.ntimer_held, 1);
    near("wake_held[1]", c.cpu.wake_held[1], 0.25, EXACT);
    near("timer_held[0]", c.cpu.timer_held[0], 0.5, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, wake_held: [0, 1.5]}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.wake_held[1]") && strstr(err, "from 0 to 1"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, timer_held: {a: 1}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.timer_held") && strstr(err, "expected a list"), "%s", err);
}

/* Frames of two streams at 0 and 2 ms (1 FPS), 2 decode servers on 2 cores,
 * constant 5 ms, every handoff costing 0.2 ms of the cores, wake_busy
 * [0.1, 0.5]: frame A at 0 finds no stage job on the cores (its own handoff
 * is not counted): woken 0.1 late, decode [0.1, 5.1]; frame B at 2 finds A's
 * decode running: 0.5, decode [2.5, 7.5]. Two jobs on two cores run at full
 * speed (the handoffs, 0.2 ms at 0 and at 2, end before B starts). Waits
 * 0.1 and 0.5, sojourns 5.1 and 5.5, ten of each. Counted with the
 * handoffs, A's wait would be 0.5 too. */
Test(cores, wake_by_jobs_running)
{
    scenario_cfg c;
    kit_base(&c, "wakebusy", 1, 1, 0, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    given_phases(&c, 2, (const double[]){0.0, 2.0});
    on_workers(&c, 0, "decode", 2, 5.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 1;
    c.cpu.handoff_ms = 0.2;
    constants(c.cpu.wake_busy, &c.cpu.nwake_busy, 2, (const double[]){0.1, 0.5});
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 20, 10 * (0.1 + 0.5), 0.1, 0.5);
    hist_is("decode sojourn", &rs.stage[0].sojourn, 20, 10 * (5.1 + 5.5), 5.1, 5.5);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The waker counted when it carries on: frames at 0 and 1 ms (1 FPS), decode
 * (1 server, 5 ms) then sample (1 server, 1 ms), both on 2 cores, wake_busy
 * [0.1, 0.5, 0.9]. A: woken 0.1 late, decode [0.1, 5.1]; B waits in the decode
 * queue. At 5.1 A goes to the sampler: no job is running, but decode goes on
 * with B at once: class 1, 0.5; sample [5.6, 6.6] beside B's decode [5.1,
 * 10.1]. At 10.1 B goes to the sampler with nothing left: 0.1, sample [10.2,
 * 11.2]. Sample waits 0.5 and 0.1; e2e 6.6 and 10.2 (B's from 1). */
Test(cores, wake_counts_the_waker_carrying_on)
{
    scenario_cfg c;
    kit_base(&c, "carry", 1, 2, 0, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    given_phases(&c, 2, (const double[]){0.0, 1.0});
    on_workers(&c, 0, "decode", 1, 5.0);
    on_workers(&c, 1, "sample", 1, 1.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 3;
    constants(c.cpu.wake_busy, &c.cpu.nwake_busy, 3, (const double[]){0.1, 0.5, 0.9});
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sample wait", &rs.stage[1].wait, 20, 10 * (0.5 + 0.1), 0.1, 0.5);
    hist_is("e2e", &rs.e2e, 20, 10 * (6.6 + 10.2), 6.6, 10.2);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* timer_busy: how late a timed wait wakes, by the jobs on the cores when it
 * is due. Streams at 0 and 5.5 ms (1 FPS); decode (1 server, 4 ms) then a GPU
 * stage (batches up to 4, 2 ms timeout, 1 ms a batch), all on 2 cores;
 * wake_busy [0.5], timer_busy [1.25, 3.0].
 *   A: woken 0.5 late, decode [0.5, 4.5]; the GPU thread woken at 5.0 finds
 *      one frame, sleeps to 4.5 + 2 = 6.5. B at 5.5: decode [6.0, 10.0], so
 *      at 6.5 one job runs: 3.0 late, A's batch [9.5, 10.5]: encode wait 5.0,
 *      e2e 10.5.
 *   B: at 10.0 the GPU is busy (no wake-up: its thread is running); at 10.5
 *      it sleeps to 12.0, due with nothing running: 1.25 late, batch [13.25,
 *      14.25]: encode wait 3.25, e2e 14.25 - 5.5 = 8.75. */
Test(cores, timer_by_jobs_running)
{
    scenario_cfg c;
    kit_base(&c, "timerbusy", 1, 2, 1, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    given_phases(&c, 2, (const double[]){0.0, 5.5});
    on_workers(&c, 0, "decode", 1, 4.0);
    on_gpu(&c, 1, "encode", 4, 2.0, 1.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 3;
    constants(c.cpu.wake_busy, &c.cpu.nwake_busy, 1, (const double[]){0.5});
    constants(c.cpu.timer_busy, &c.cpu.ntimer_busy, 2, (const double[]){1.25, 3.0});
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("encode wait", &rs.stage[1].wait, 20, 10 * (5.0 + 3.25), 3.25, 5.0);
    hist_is("e2e", &rs.e2e, 20, 10 * (10.5 + 8.75), 8.75, 10.5);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* wake_held: frames at 0 and 2 ms (1 FPS), 2 decode servers on 2 cores,
 * constant 5 ms, wake_ms 0.1, wake_held [0, 1]: every wake-up with a job
 * running is queued behind it. A: none running, 0.1 late, [0.1, 5.1]; B at
 * 2 finds A running: held until A's job ends at 5.1, then [5.1, 10.1].
 * Waits 0.1 and 3.1, sojourns 5.1 and 8.1. */
Test(cores, wake_held_behind_a_running_job)
{
    scenario_cfg c;
    kit_base(&c, "held", 1, 1, 0, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    given_phases(&c, 2, (const double[]){0.0, 2.0});
    on_workers(&c, 0, "decode", 2, 5.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 1;
    c.cpu.wake_ms = 0.1;
    c.cpu.nwake_held = 2;
    c.cpu.wake_held[0] = 0;
    c.cpu.wake_held[1] = 1;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 20, 10 * (0.1 + 3.1), 0.1, 3.1);
    hist_is("decode sojourn", &rs.stage[0].sojourn, 20, 10 * (5.1 + 8.1), 5.1, 8.1);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* timer_held: the timer_by_jobs_running pipeline with wake_ms 0.5, timer_ms
 * 1.25 and timer_held [0, 1]. A's batch timeout is due at 6.5 beside B's
 * decode [6.0, 10.0]: held till that job ends at 10.0. B reaches the GPU
 * queue at that instant, so the woken thread batches both: [10.0, 11.0].
 * Encode waits 5.5 (A) and 0 (B); e2e 11.0 and 11.0 - 5.5 = 5.5. */
Test(cores, timer_held_behind_a_running_job)
{
    scenario_cfg c;
    kit_base(&c, "timerheld", 1, 2, 1, 0.0, 10.0, 1);
    periodic(&c, 2, 1.0);
    given_phases(&c, 2, (const double[]){0.0, 5.5});
    on_workers(&c, 0, "decode", 1, 4.0);
    on_gpu(&c, 1, "encode", 4, 2.0, 1.0);
    c.cpu.cores = 2;
    c.cpu.stage_mask = 3;
    c.cpu.wake_ms = 0.5;
    c.cpu.has_timer = 1;
    c.cpu.timer_ms = 1.25;
    c.cpu.ntimer_held = 2;
    c.cpu.timer_held[0] = 0;
    c.cpu.timer_held[1] = 1;
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("encode wait", &rs.stage[1].wait, 20, 10 * 5.5, 0, 5.5);
    hist_is("e2e", &rs.e2e, 20, 10 * (11.0 + 5.5), 5.5, 11.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Held threads when the cores empty: frames at 0, 1 and 2 ms (1 FPS), 3
 * decode servers on 2 cores, constant 5 ms, wake_ms 0.1, wake_held [0, 1].
 * A runs [0.1, 5.1]; B (at 1) and C (at 2) are held behind it. When A's job
 * ends no stage job is left on the cores, so both run at once: [5.1, 10.1]
 * each, on a core each. (Released one per job end, C would wait for B's end
 * at 10.1 — and with nothing else to end, a held thread would wait for the
 * next frame's job.) Waits 0.1, 4.1, 3.1; sojourns 5.1, 9.1, 8.1. */
Test(cores, held_threads_run_when_the_cores_empty)
{
    scenario_cfg c;
    held_trio(&c, "heldall", 1, 2, (const double[]){0, 1});
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 30, 10 * (0.1 + 4.1 + 3.1), 0.1, 4.1);
    hist_is("decode sojourn", &rs.stage[0].sojourn, 30, 10 * (5.1 + 9.1 + 8.1), 5.1, 9.1);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Run q to the end: kind 99 is the cores' tick, kind 50 a speed change to
 * the speed in b (per mille), anything else a job's end at done[a]. */
static void run_with_speeds(cores_t *k, ev_queue *q, double *done)
{
    ev_t e;
    while (ev_pop(q, &e) == 0) {
        if (e.kind == 99)
            cr_assert_eq(cores_tick(k, q, e.t, e.b), 0);
        else if (e.kind == 50)
            cr_assert_eq(cores_set_speed(k, q, e.t, (double)e.b / 1000), 0);
        else
            done[e.a] = e.t;
    }
}

/* The cores' speed over time (cpu.speed). One job of 10 ms of work on one
 * core at speed 1 on [0, 4), 0.5 on [4, 8), 1 after: 4 + 2 done by t = 8,
 * the last 4 at full speed: t = 12. Two jobs of 6 and 10 ms on one core at
 * speed 2 (each at 2 x 1/2 = 1) until t = 4: 2 and 6 left; at speed 0.5
 * each runs at 1/4: the short one ends 8 later (t = 12), when the long one
 * has 4 left, alone at 0.5: t = 20. A speed set with no job running
 * applies to the next: 0.25 from t = 0, a 1 ms job started at t = 1 ends
 * at 5. */
Test(cores, speed_changes_closed_form)
{
    cores_t k;
    ev_queue q;
    double done[3] = {0};
    cr_assert_eq(ev_init(&q, 16), 0);
    cr_assert_eq(cores_init(&k, 1, NULL, 0, 99), 0);
    near("speed after init", k.speed, 1.0, EXACT);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 10.0), 0);
    cr_assert_eq(ev_push(&q, 4.0, 50, 0, 500), 0);
    cr_assert_eq(ev_push(&q, 8.0, 50, 0, 1000), 0);
    run_with_speeds(&k, &q, done);
    near("one job: 4 + 2 + 4 of work", done[1], 12.0, EXACT);
    cores_free(&k);

    cr_assert_eq(cores_init(&k, 1, NULL, 0, 99), 0);
    cr_assert_eq(cores_set_speed(&k, &q, 0.0, 2.0), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 1, 0, 6.0), 0);
    cr_assert_eq(cores_start(&k, &q, 0.0, 7, 2, 0, 10.0), 0);
    cr_assert_eq(ev_push(&q, 4.0, 50, 0, 500), 0);
    run_with_speeds(&k, &q, done);
    near("short job of two", done[1], 12.0, EXACT);
    near("long job of two", done[2], 20.0, EXACT);
    cores_free(&k);

    cr_assert_eq(cores_init(&k, 1, NULL, 0, 99), 0);
    cr_assert_eq(cores_set_speed(&k, &q, 0.0, 0.25), 0);
    near("rate with no job", cores_rate(&k), 0.25, EXACT);
    cr_assert_eq(cores_start(&k, &q, 1.0, 7, 1, 0, 1.0), 0);
    run_with_speeds(&k, &q, done);
    near("a job after the change", done[1], 5.0, EXACT);
    cores_free(&k);
    ev_free(&q);
}

/* cpu.speed in a run. One stream at 1 FPS (frames at 0, 1, ..., 9 s), one
 * worker on one core, 10 ms constant. At speed 0.5 throughout every frame
 * takes 20 ms. With factors [1, 0.25] in windows of 1 s each frame starts a
 * window and ends inside it, and the windows alternate whatever factor a
 * replication starts at: five frames of 10 ms and five of 40 ms, sum 250. */
/* One stream at 1 FPS for duration_s, one 10 ms worker on one core, the
 * cores' speed f[0..n) in windows of 1 s. */
static void speed_fixture(scenario_cfg *c, double duration_s, int n, const double *f)
{
    kit_base(c, "speed", 1, 1, 0, 0.0, duration_s, 1);
    periodic(c, 1, 1.0);
    on_workers(c, 0, "decode", 1, 10.0);
    c->cpu.cores = 1;
    c->cpu.stage_mask = 1;
    c->cpu.nspeed = n;
    c->cpu.speed_window_ms = 1000;
    c->cpu.speed = malloc((size_t)n * sizeof *c->cpu.speed);
    cr_assert_not_null(c->cpu.speed);
    memcpy(c->cpu.speed, f, (size_t)n * sizeof *f);
}

static void speed_case(int n, const double *f, double sum, double lo, double hi)
{
    scenario_cfg c;
    speed_fixture(&c, 10.0, n, f);
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("sojourn", &rs.stage[0].sojourn, 10, sum, lo, hi);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(cores, speed_half_doubles_every_job) { speed_case(1, (const double[]){0.5}, 200, 20, 20); }
Test(cores, speed_windows_alternate) { speed_case(2, (const double[]){1, 0.25}, 250, 10, 40); }

/* The loader: cpu.speed's mapping, its factors kept as given, and its errors
 * by key path. */
Test(cores, speed_keys)
{
    scenario_cfg c;
    char err[512];
    cr_assert_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 500, factors: [1.25, 0.75, 1]}}\n",
                            &c, err, sizeof err), "%s", err);
    cr_assert_eq(c.cpu.nspeed, 3);
    near("window", c.cpu.speed_window_ms, 500, EXACT);
    near("factor 0", c.cpu.speed[0], 1.25, EXACT);
    near("factor 1", c.cpu.speed[1], 0.75, EXACT);
    cfg_free(&c);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 500, factors: []}}\n", &c,
                                err, sizeof err));
    cr_expect(strstr(err, ":6:") && strstr(err, "cpu.speed.factors") && strstr(err, "1 to"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 500, factors: [1, 0]}}\n",
                                &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speed.factors[1]"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {factors: [1]}}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speed") && strstr(err, "window_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 0, factors: [1]}}\n", &c,
                                err, sizeof err));
    cr_expect(strstr(err, "cpu.speed.window_ms"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 5, factor: [1]}}\n", &c,
                                err, sizeof err));
    cr_expect(strstr(err, "cpu.speed") && strstr(err, "did you mean 'factors'"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: 1.1}\n", &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speed"), "%s", err);
}

/* cpu.speed from YAML to a run: the case of speed_case, 4 replications
 * through scn_load_string and run_scenario. Each replication has 10 frames
 * (at 0, 1, ..., 9 s; the one at 10 s is the run's end) in 10 windows that
 * alternate 1 and 0.25, so 5 frames of 10 ms and 5 of 40 whichever factor
 * it starts at: mean 25 ms in every replication. At [0.5]: 20 ms. */
#define SPEED_HEAD "name: s\nduration_s: 10\nwarmup_s: 0\nreplications: 4\n" \
                   "workload: {arrival: periodic, streams: 1, fps: 1, phase: aligned}\n" \
                   "stages:\n  - {name: decode, service: {dist: constant, ms: 10}}\n"

static double speed_yaml_mean(const char *yaml)
{
    scenario_cfg c;
    char err[512] = "";
    cr_assert_null(load_err(yaml, &c, err, sizeof err), "%s", err);
    run_result r;
    run(&c, 1, &r);
    double m = r.stage[0].sojourn.mean.mean;
    run_result_free(&r);
    cfg_free(&c);
    return m;
}

Test(cores, speed_from_yaml)
{
    near("alternating windows", speed_yaml_mean(SPEED_HEAD "cpu: {cores: 1, speed: {window_ms: 1000, "
                                                "factors: [1, 0.25]}}\n"), 25.0, EXACT);
    near("half speed", speed_yaml_mean(SPEED_HEAD "cpu: {cores: 1, speed: {window_ms: 250, "
                                       "factors: [0.5]}}\n"), 20.0, EXACT);
    near("no key", speed_yaml_mean(SPEED_HEAD "cpu: {cores: 1}\n"), 10.0, EXACT);
}

/* Each replication draws its own first factor: with [1, 0.25] in windows of
 * 1 s the frame at t = 0 takes 10 ms where k0 = 0 and 40 where k0 = 1, k0
 * uniform on {0, 1}. Over 16 replications both come up (all 16 alike has
 * probability 2^-15 for a uniform draw; the seed is fixed, so this is
 * deterministic). The trace's first row is that frame: end_ms - arrive_ms. */
Test(cores, speed_offset_per_replication)
{
    scenario_cfg c;
    speed_fixture(&c, 2.0, 2, (const double[]){1, 0.25});
    int seen10 = 0, seen40 = 0;
    for (uint32_t rep = 0; rep < 16; rep++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        rep_stats rs;
        cr_assert_eq(pipe_stats_init(&rs, &c), 0);
        char err[256] = "";
        cr_assert_eq(pipe_run_traced(&c, rep, 0.0, NULL, &rs, f, err, sizeof err), 0, "%s", err);
        fclose(f);
        double arrive, enq, start, end;
        cr_assert_eq(sscanf(buf, "frame,%*u,%*u,%*u,decode,done,%lf,%lf,%lf,%lf", &arrive, &enq,
                            &start, &end), 4, "trace: %s", buf);
        double d = end - arrive;
        cr_expect(fabs(d - 10) < 1e-9 || fabs(d - 40) < 1e-9, "rep %u: first frame %g ms", rep, d);
        seen10 += fabs(d - 10) < 1e-9;
        seen40 += fabs(d - 40) < 1e-9;
        pipe_stats_free(&rs);
        free(buf);
    }
    cr_expect(seen10 > 0 && seen40 > 0, "k0 = 0 in %d replications, 1 in %d", seen10, seen40);
    cfg_free(&c);
}

/* The speed's own stream moves no other draw: a Poisson run (3 servers,
 * exponential service, 2 cores) at factors [1] is the run without the key
 * exactly, and at [1, 1, 1] in windows of 7 ms, whose boundaries only
 * recompute the ticks (rounding), the same to 1e-9. */
static void speed_run(const double *f, int n, rep_stats *rs, scenario_cfg *c)
{
    kit_base(c, "same", 5, 1, 0, 1.0, 20.0, 1);
    poisson(c, 1200.0);
    c->stages[0].servers = 3;
    exp_svc(&c->stages[0], 1.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    if (n > 0) {
        c->cpu.nspeed = n;
        c->cpu.speed_window_ms = 7;
        c->cpu.speed = malloc((size_t)n * sizeof *c->cpu.speed);
        cr_assert_not_null(c->cpu.speed);
        memcpy(c->cpu.speed, f, (size_t)n * sizeof *f);
    }
    rep1(c, rs);
}

Test(cores, speed_one_changes_nothing)
{
    scenario_cfg c0, c1, c3;
    rep_stats r0, r1, r3;
    speed_run(NULL, 0, &r0, &c0);
    speed_run((const double[]){1}, 1, &r1, &c1);
    speed_run((const double[]){1, 1, 1}, 3, &r3, &c3);
    cr_assert_gt(r0.stage[0].sojourn.n, 10000);
    count("[1]: sojourns", r1.stage[0].sojourn.n, r0.stage[0].sojourn.n);
    cr_expect_eq(hist_mean(&r1.stage[0].sojourn), hist_mean(&r0.stage[0].sojourn), "[1]: mean");
    cr_expect_eq(r1.stage[0].sojourn.max, r0.stage[0].sojourn.max, "[1]: max");
    count("[1, 1, 1]: sojourns", r3.stage[0].sojourn.n, r0.stage[0].sojourn.n);
    near("[1, 1, 1]: mean", hist_mean(&r3.stage[0].sojourn), hist_mean(&r0.stage[0].sojourn), EXACT);
    near("[1, 1, 1]: max", r3.stage[0].sojourn.max, r0.stage[0].sojourn.max, EXACT);
    pipe_stats_free(&r0);
    pipe_stats_free(&r1);
    pipe_stats_free(&r3);
    cfg_free(&c0);
    cfg_free(&c1);
    cfg_free(&c3);
}

/* The loader's other errors: a negative factor, factors not a list, and one
 * factor more than CFG_MAX_SPEED (65537 of them). */
Test(cores, speed_keys_limits)
{
    scenario_cfg c;
    char err[512];
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 5, factors: [1, 1, -0.5]}}\n",
                                &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speed.factors[2]"), "%s", err);
    cr_assert_not_null(load_err(BASE "cpu: {cores: 2, speed: {window_ms: 5, factors: 1}}\n", &c, err,
                                sizeof err));
    cr_expect(strstr(err, "cpu.speed.factors") && strstr(err, "list"), "%s", err);
    const char *head = BASE "cpu: {cores: 2, speed: {window_ms: 5, factors: [";
    size_t n = CFG_MAX_SPEED + 1, hl = strlen(head);
    char *y = malloc(hl + 2 * n + 8);
    cr_assert_not_null(y);
    memcpy(y, head, hl);
    char *w = y + hl;
    for (size_t i = 0; i < n; i++) {
        *w++ = '1';
        *w++ = ',';
    }
    strcpy(w - 1, "]}}\n");
    cr_assert_not_null(load_err(y, &c, err, sizeof err));
    cr_expect(strstr(err, "cpu.speed.factors") && strstr(err, "65537"), "%s", err);
    y[hl + 2 * (n - 1) - 1] = ']';           /* the last one off: 65536 load */
    strcpy(y + hl + 2 * (n - 1), "}}\n");
    cr_assert_null(load_err(y, &c, err, sizeof err), "%s", err);
    cr_expect_eq(c.cpu.nspeed, CFG_MAX_SPEED);
    cfg_free(&c);
    free(y);
}
