/* test_gpu.c — the GPU part of the pipeline model (models/gpu.c): dynamic
 * batching with a timeout, GPU stages sharing a GPU under the priority and
 * fifo policies, batching stability, placement and pools, sampling, the
 * frame deadline, cost and SLA verdicts, and thread-count determinism.
 *
 * Scenarios are built in C. Most are deterministic (aligned periodic
 * streams, constant times), so every expected value below is worked out by
 * hand in the comment next to it; the stochastic ones are checked against a
 * closed form derived in the test. Nothing is copied from the simulator's
 * output.
 *
 * Conventions the hand computations rely on (pipeline.c, gpu.c):
 *   - aligned periodic streams emit at t = 0, P, 2P, ... (P = 1000/fps ms);
 *     equal-time events run in the order they were scheduled (stream 0
 *     before stream 1), and WARMUP / END come before arrivals at that time;
 *   - a GPU queue is ready when it holds max_batch frames or its head has
 *     waited batch_timeout_ms; a batch of k takes table(k) (linear between
 *     points) or one draw of `service`, times the jitter draw;
 *   - a frame is stale (dropped as timeout) when a server reaches it and
 *     now - t_arrival > frame_deadline_ms (strictly);
 *   - counts, waits and sojourns are recorded at completion, batches at
 *     their start, GPU busy time over the window only.
 * Tolerances: means of identical values, sums of exactly representable
 * times and time averages are checked to 1e-9 relative; a percentile that is
 * neither the minimum nor the maximum comes from the log-linear histogram
 * (bucket midpoint, within 0.05 %). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>

#include "models/config.h"
#include "models/dist.h"
#include "models/pipeline.h"
#include "models/run.h"
#include "sim/hist.h"
#include "sim/stats.h"

#define HREL 5e-4       /* relative: histogram percentiles (bucket midpoint) */

#define KIT_VERBOSE_ENV "GPU_VERBOSE"
#include "tests/kit.h"

static void base(scenario_cfg *c, int nstages, int gpus, double warmup_s, double duration_s,
                 int replications)
{
    kit_base(c, "gpu-test", 11, nstages, gpus, warmup_s, duration_s, replications);
}

/* (scenario builders and comparisons: tests/kit.h) */

/* ---- 1. batching with a timeout, exact ------------------------------------ */

/* 1 GPU, one GPU stage "encode": max_batch 4, batch_timeout 25 ms, table
 * {1: 10, 4: 16} (so 2 -> 12, 3 -> 14), aligned streams at 10 fps. */
static void batch_scenario(scenario_cfg *c, int streams, double warmup_s, int reps)
{
    base(c, 1, 1, warmup_s, 1.0, reps);
    periodic(c, streams, 10.0);
    stage_cfg *st = on_gpu(c, 0, "encode", 4, 25.0, 1.0);
    table2(st, 1, 10, 4, 16);
}

Test(gpu, table_interpolation)
{
    batch_table t = { 2, { 1, 4 }, { 10, 16 }, false };
    near("table(1)", cfg_table_ms(&t, 1), 10, EXACT);
    near("table(2)", cfg_table_ms(&t, 2), 12, EXACT);
    near("table(3)", cfg_table_ms(&t, 3), 14, EXACT);
    near("table(4)", cfg_table_ms(&t, 4), 16, EXACT);
    batch_table u = { 3, { 1, 8, 64 }, { 3, 10, 66 }, false };    /* slope 1 then 1 */
    near("table3(5)", cfg_table_ms(&u, 5), 7, EXACT);
    near("table3(8)", cfg_table_ms(&u, 8), 10, EXACT);
    near("table3(40)", cfg_table_ms(&u, 40), 42, EXACT);
}

/* 3 streams: every 100 ms three frames arrive at once; the queue never
 * fills (3 < 4), so the batch starts when its head has waited 25 ms: a batch
 * of 3 at t+25 taking 14 ms. Each frame: wait 25, service 14, sojourn 39.
 * The warm-up is 531.25 ms, so the window [531.25, 1531.25) cuts two
 * batches: the one of t=500 runs [525, 539) (7.75 ms inside, its 3 frames
 * complete inside), the one of t=1500 runs [1525, 1539) (6.25 ms inside,
 * started inside, frames not complete). Inside: arrivals at 600..1500 (30
 * frames), batches started at 625..1525 (10 of 3), completions at 539 and
 * 639..1439 (30 frames), busy 7.75 + 9 x 14 + 6.25 = 140 ms -> 0.14.
 * Queue: 3 frames waiting 25 ms per 100 ms -> mean length 0.75. */
Test(gpu, batch_timeout_three_streams)
{
    scenario_cfg c;
    batch_scenario(&c, 3, 0.53125, 1);
    near("offered load (30/s x 16/4 ms)", run_offered_load(&c, 0), 30 * 4.0 / 1000, EXACT);
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *st = &rs.stage[0];
    count("arrivals", st->arrivals, 30);
    count("completed", st->completed, 30);
    count("batches", st->batches, 10);
    for (int k = 1; k <= 4; k++)
        count("batch_counts[k]", st->batch_counts[k], k == 3 ? 10 : 0);
    hist_is("wait", &st->wait, 30, 30 * 25.0, 25, 25);
    hist_is("service", &st->service, 30, 30 * 14.0, 14, 14);
    hist_is("sojourn", &st->sojourn, 30, 30 * 39.0, 39, 39);
    near("sojourn p50 (all 39)", hist_quantile(&st->sojourn, 0.5), 39, EXACT);
    count("waited", st->waited, 30);
    hist_is("e2e", &rs.e2e, 30, 30 * 39.0, 39, 39);
    near("gpu utilization", rs.gpu[0].utilization, 0.14, EXACT);
    near("busy_ms[encode]", rs.gpu[0].busy_ms[0], 140, EXACT);
    near("stage utilization", st->utilization, 0.14, EXACT);
    near("mean queue length", st->mean_queue_len, 0.75, EXACT);
    count("system arrivals", rs.arrivals, 30);
    count("system completed", rs.completed, 30);
    count("dropped", rs.dropped, 0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* 4 streams: the fourth frame fills the batch, which starts at once: wait
 * 0, service 16, sojourn 16; 10 batches of 4 in [0, 1000); busy 160 ms. */
Test(gpu, full_batch_starts_at_once)
{
    scenario_cfg c;
    batch_scenario(&c, 4, 0, 1);
    near("offered load (40/s x 4 ms)", run_offered_load(&c, 0), 0.16, EXACT);
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *st = &rs.stage[0];
    count("arrivals", st->arrivals, 40);
    count("completed", st->completed, 40);
    count("batches", st->batches, 10);
    for (int k = 1; k <= 4; k++)
        count("batch_counts[k]", st->batch_counts[k], k == 4 ? 10 : 0);
    hist_is("wait", &st->wait, 40, 0, 0, 0);
    count("waited", st->waited, 0);
    hist_is("service", &st->service, 40, 40 * 16.0, 16, 16);
    hist_is("sojourn", &st->sojourn, 40, 40 * 16.0, 16, 16);
    near("gpu utilization", rs.gpu[0].utilization, 0.16, EXACT);
    near("busy_ms[encode]", rs.gpu[0].busy_ms[0], 160, EXACT);
    near("mean queue length", st->mean_queue_len, 0, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Jitter multiplies each batch time by its draw: a constant 1.5 turns the
 * batch of 4 into 24 ms. */
Test(gpu, jitter_scales_batch_time)
{
    scenario_cfg c;
    batch_scenario(&c, 4, 0, 1);
    c.stages[0].has_jitter = true;
    cr_assert_null(dist_init_constant(&c.stages[0].jitter, 1.5));
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("service", &rs.stage[0].service, 40, 40 * 24.0, 24, 24);
    near("gpu utilization", rs.gpu[0].utilization, 0.24, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* 5 streams: frames 0-3 fill a batch at t (16 ms). Frame 4 arrives while the
 * GPU is busy; at t+16 the GPU is free but frame 4 has waited only 16 < 25,
 * so it starts at t+25 as a batch of 1 (10 ms): wait 25, sojourn 35.
 * Per period: 4 x (wait 0, sojourn 16) + 1 x (wait 25, sojourn 35), busy 26.
 * Over 10 periods: mean wait 5, max 25; mean sojourn (64+35)/5 = 19.8,
 * max 35; p50 sojourn 16 (histogram), p90 = 35 (the max); utilization 0.26;
 * batch mean (4+1)/2 = 2.5; mean queue length 25/100 = 0.25.
 * Run through run_scenario with 3 identical replications, then on one. */
Test(gpu, fifth_frame_waits_for_timeout)
{
    scenario_cfg c;
    batch_scenario(&c, 5, 0, 3);
    run_result r;
    run(&c, 2, &r);
    const stage_est *se = &r.stage[0];
    count("arrivals", se->arrivals, 150);
    count("completed", se->completed, 150);
    count("batches", se->batches, 60);
    for (int k = 1; k <= 4; k++)
        count("batch_counts[k]", se->batch_counts[k], k == 4 || k == 1 ? 30 : 0);
    near("batch_mean", se->batch_mean.mean, 2.5, EXACT);
    near("batch_mean sd", se->batch_mean.sd, 0, EXACT);
    near("wait mean", se->wait.mean.mean, 5, EXACT);
    near("wait max", se->wait.max, 25, EXACT);
    near("wait p50 (the min, 0)", se->wait.p50.mean, 0, EXACT);
    near("p_wait", se->p_wait.mean, 0.2, EXACT);
    near("service mean", se->service.mean.mean, (40 * 16 + 10 * 10) / 50.0, EXACT);
    near("sojourn mean", se->sojourn.mean.mean, 19.8, EXACT);
    near("sojourn max", se->sojourn.max, 35, EXACT);
    near("sojourn p50", se->sojourn.p50.mean, 16, HREL);
    near("sojourn p90 (the max)", se->sojourn.p90.mean, 35, EXACT);
    near("sojourn_sum (pooled)", se->sojourn_sum, 3 * 990.0, EXACT);
    near("stage utilization", se->utilization.mean, 0.26, EXACT);
    near("mean queue length", se->mean_queue_len.mean, 0.25, EXACT);
    near("gpu utilization", r.gpu[0].utilization.mean, 0.26, EXACT);
    near("busy_ms[encode]", r.gpu[0].busy_ms[0], 260, EXACT);
    near("e2e mean", r.e2e.mean.mean, 19.8, EXACT);
    near("e2e max", r.e2e.max, 35, EXACT);
    count("system completed", r.completed, 150);
    count("dropped", r.dropped, 0);
    cr_expect_eq(r.nwarnings, 0, "unexpected warning: %s", r.warnings[0]);
    run_result_free(&r);
    cfg_free(&c);
}

/* ---- 2. two GPU stages sharing one GPU: priority vs fifo ------------------ */

/* One stream at 100 fps (P = 10 ms), encode (6 ms, batch 1) then reduce
 * (5.5 ms, batch 1), both on the one GPU, window [0, 62.5). The GPU needs
 * 11.5 ms per frame, so a backlog builds and at t = 40.5 (encode of f3
 * ends) the reduce queue holds f3 (arrived 30) and the encode queue f4
 * (arrived 40); at t = 52 again (reduce f4 / encode f5 under fifo, reduce f3
 * done / encode f5 under "encode first").
 *
 * "reduce first" (fifo, or priority with the default reduce 2 > encode 1 —
 * on one GPU the reduce head is never younger than the encode head, so the
 * two coincide):
 *   E f0 [0,6) R f0 [6,11.5) E f1 [11.5,17.5) R f1 [17.5,23) E f2 [23,29)
 *   R f2 [29,34.5) E f3 [34.5,40.5) R f3 [40.5,46) E f4 [46,52)
 *   R f4 [52,57.5) E f5 [57.5,63.5)
 *   e2e 11.5 13 14.5 16 17.5; encode waits 0 1.5 3 4.5 6 (f5 unfinished);
 *   reduce: 5 completions, no waits; busy E 30 + 5 = 35, R 27.5.
 * "encode first" (priority with encode 3 > reduce 1):
 *   ... E f3 [34.5,40.5) E f4 [40.5,46.5) R f3 [46.5,52) E f5 [52,58)
 *   R f4 [58,63.5)
 *   e2e 11.5 13 14.5 22; encode waits 0 1.5 3 4.5 0.5 2 (6 done);
 *   reduce waits 0 0 0 6 (4 done, f4 running); busy E 36, R 22 + 4.5.
 * Arrivals: f0..f6 (f6 at 60 < 62.5). The GPU is never idle. */
typedef struct {
    uint64_t e_done, r_arr, r_done, r_batches;
    double e_wait_sum, e_wait_max, r_wait_sum, r_wait_max;
    uint64_t n_e2e;
    double e2e_sum, e2e_max, busy_e, busy_r;
} share_want;

static void share_case(gpu_policy_kind policy, int prio_encode, int prio_reduce,
                       const share_want *w)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 0.0625, 1);
    periodic(&c, 1, 100.0);
    stage_cfg *e = on_gpu(&c, 0, "encode", 1, 0, 6.0);
    stage_cfg *r = on_gpu(&c, 1, "reduce", 1, 0, 5.5);
    cr_assert_eq(e->priority, 1, "default priority of encode");
    cr_assert_eq(r->priority, 2, "default priority of reduce");
    if (prio_encode >= 0) {
        e->priority = prio_encode;
        r->priority = prio_reduce;
    }
    c.cluster.policy = policy;
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *se = &rs.stage[0], *sr = &rs.stage[1];
    count("encode arrivals", se->arrivals, 7);
    count("encode completed", se->completed, w->e_done);
    count("encode batches", se->batches, 6);
    near("encode wait sum", se->wait.sum, w->e_wait_sum, EXACT);
    near("encode wait max", se->wait.max, w->e_wait_max, EXACT);
    near("encode sojourn sum", se->sojourn.sum, w->e_wait_sum + 6.0 * (double)w->e_done, EXACT);
    count("reduce arrivals", sr->arrivals, w->r_arr);
    count("reduce completed", sr->completed, w->r_done);
    count("reduce batches", sr->batches, w->r_batches);
    near("reduce wait sum", sr->wait.sum, w->r_wait_sum, EXACT);
    near("reduce wait max", sr->wait.max, w->r_wait_max, EXACT);
    hist_is("e2e", &rs.e2e, w->n_e2e, w->e2e_sum, 11.5, w->e2e_max);
    near("busy_ms[encode]", rs.gpu[0].busy_ms[0], w->busy_e, EXACT);
    near("busy_ms[reduce]", rs.gpu[0].busy_ms[1], w->busy_r, EXACT);
    near("gpu utilization", rs.gpu[0].utilization, 1.0, EXACT);
    near("encode share", se->utilization, w->busy_e / 62.5, EXACT);
    near("reduce share", sr->utilization, w->busy_r / 62.5, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

static const share_want reduce_first = {
    5, 5, 5, 5, 0 + 1.5 + 3 + 4.5 + 6, 6, 0, 0,
    5, 11.5 + 13 + 14.5 + 16 + 17.5, 17.5, 35, 27.5
};
static const share_want encode_first = {
    6, 6, 4, 5, 0 + 1.5 + 3 + 4.5 + 0.5 + 2, 4.5, 6, 6,
    4, 11.5 + 13 + 14.5 + 22, 22, 36, 26.5
};

Test(gpu, shared_gpu_priority_default_reduce_first)
{
    share_case(GPU_PRIORITY, -1, -1, &reduce_first);
}

Test(gpu, shared_gpu_fifo_default)
{
    share_case(GPU_FIFO, -1, -1, &reduce_first);
}

Test(gpu, shared_gpu_priority_encode_first)
{
    share_case(GPU_PRIORITY, 3, 1, &encode_first);
}

Test(gpu, shared_gpu_fifo_ignores_priority)
{
    share_case(GPU_FIFO, 3, 1, &reduce_first);
}

/* Equal priorities: the later stage goes first (it finishes work already in
 * the system), so reduce first again. */
Test(gpu, shared_gpu_priority_tie_later_stage_first)
{
    share_case(GPU_PRIORITY, 0, 0, &reduce_first);
}

/* A queue that is not ready does not block the others: reduce (priority 2,
 * max_batch 2, batch_timeout 30, 5 ms) and encode (priority 1, batch 1,
 * 10 ms) on one GPU, 2 aligned streams at 10 fps. t=0: encode s0 [0,10),
 * s1 waits. t=10: s0 enters reduce (1 of 2, ready only at 40); the GPU
 * passes over reduce and runs encode s1 [10,20). t=20: s1 fills the reduce
 * batch: [20,25). e2e 25 for both; encode waits 0 and 10; reduce waits 10
 * and 0. Per period busy: encode 20, reduce 5. */
Test(gpu, unready_queue_does_not_block)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 1.0, 1);
    periodic(&c, 2, 10.0);
    on_gpu(&c, 0, "encode", 1, 0, 10.0);
    on_gpu(&c, 1, "reduce", 2, 30, 5.0);
    rep_stats rs;
    rep1(&c, &rs);
    hist_is("e2e", &rs.e2e, 20, 20 * 25.0, 25, 25);
    hist_is("encode wait", &rs.stage[0].wait, 20, 10 * 10.0, 0, 10);
    hist_is("reduce wait", &rs.stage[1].wait, 20, 10 * 10.0, 0, 10);
    count("reduce batches of 2", rs.stage[1].batch_counts[2], 10);
    count("reduce batches of 1", rs.stage[1].batch_counts[1], 0);
    near("busy_ms[encode]", rs.gpu[0].busy_ms[0], 200, EXACT);
    near("busy_ms[reduce]", rs.gpu[0].busy_ms[1], 50, EXACT);
    near("gpu utilization", rs.gpu[0].utilization, 0.25, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* capacity on a GPU stage is per GPU. 1 GPU, batch 1, 10 ms, capacity 1,
 * 3 aligned streams: s0 runs [0,10), s1 waits, s2 finds the room full.
 * drop_newest: s2 dropped; e2e 10 (s0), 20 (s1).
 * drop_oldest: s1 dropped, s2 kept; e2e 10 (s0), 20 (s2).
 * Either way 10 queue-full drops in 10 periods, 20 done, queue length 0.1.
 * With 2 GPUs, 6 streams, least_loaded (3 per GPU): the same on each GPU. */
Test(gpu, capacity_per_gpu)
{
    for (int k = 0; k < 3; k++) {
        int gpus = k == 2 ? 2 : 1;
        scenario_cfg c;
        base(&c, 1, gpus, 0, 1.0, 1);
        periodic(&c, 3 * gpus, 10.0);
        c.cluster.placement = PLACE_LEAST_LOADED;
        stage_cfg *st = on_gpu(&c, 0, "encode", 1, 0, 10.0);
        st->capacity = 1;
        st->on_full = k == 1 ? ONFULL_DROP_OLDEST : ONFULL_DROP_NEWEST;
        rep_stats rs;
        rep1(&c, &rs);
        uint64_t m = (uint64_t)gpus;
        count("arrivals", rs.stage[0].arrivals, 30 * m);
        count("drop_queue_full", rs.stage[0].drop_queue_full, 10 * m);
        count("dropped", rs.dropped, 10 * m);
        count("completed", rs.stage[0].completed, 20 * m);
        hist_is("e2e", &rs.e2e, 20 * m, 10 * m * (10.0 + 20.0), 10, 20);
        near("mean queue length", rs.stage[0].mean_queue_len, 0.1 * gpus, EXACT);
        for (int g = 0; g < gpus; g++)
            near("busy_ms", rs.gpu[g].busy_ms[0], 200, EXACT);
        pipe_stats_free(&rs);
        cfg_free(&c);
    }
}

/* A stage's own timeout_ms on the GPU: 3 aligned streams, batch 1, 10 ms,
 * timeout 5. At t=10 the GPU reaches s1 (waited 10 > 5): dropped, then s2
 * (also 10 > 5): dropped. Per period 1 done, 2 timeouts. */
Test(gpu, stage_timeout_on_gpu)
{
    scenario_cfg c;
    base(&c, 1, 1, 0, 1.0, 1);
    periodic(&c, 3, 10.0);
    on_gpu(&c, 0, "encode", 1, 0, 10.0)->timeout_ms = 5;
    rep_stats rs;
    rep1(&c, &rs);
    count("completed", rs.stage[0].completed, 10);
    count("drop_timeout", rs.stage[0].drop_timeout, 20);
    count("batches", rs.stage[0].batches, 10);
    hist_is("e2e", &rs.e2e, 10, 10 * 10.0, 10, 10);
    near("mean queue length (2 frames for 10 ms per 100)", rs.stage[0].mean_queue_len, 0.2, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- 3. batching stability (closed form) ---------------------------------- */

/* Poisson arrivals at rate λ (per ms), one GPU stage with batch time a + b k
 * (table {1: a+b, 64: a+64b}), batch_timeout 0, max_batch 64, one GPU: the
 * free GPU takes everything waiting. A batch of size k_{n+1} is the number
 * of arrivals during batch n, so k_{n+1} | k_n ~ Poisson(λ(a + b k_n)):
 *   E[k] = λa / (1 - λb),  Var k = E[k] / (1 - (λb)²)
 * (ignoring the cap of 64 and idle periods, both negligible at λa = 2). The
 * GPU is then busy all the time (λa/E[k] + λb = 1) and yet the queue is
 * stable whenever λb < 1 (and λ(b + a/64) < 1, the cap). A frame arriving
 * during a batch of length T waits its residual: mean wait
 * E[T²] / (2 E[T]) with T = a + b k; its own batch has the frame-weighted
 * mean length a + b E[k²]/E[k].
 * λ = 1/ms, a = 2, b = 0.8: E[k] = 10, Var k = 27.78, E[T] = 10,
 * Var T = 17.78, mean wait 5.889, mean service 12.22; Little: the mean
 * number waiting = λ × mean wait. */
#define STAB_A 2.0
#define STAB_B 0.8

static void stab_scenario(scenario_cfg *c, double lambda_per_ms, double warmup_s,
                          double duration_s, int reps)
{
    base(c, 1, 1, warmup_s, duration_s, reps);
    poisson(c, lambda_per_ms * 1000.0);
    stage_cfg *st = on_gpu(c, 0, "encode", 64, 0, 1.0);
    table2(st, 1, STAB_A + STAB_B, 64, STAB_A + 64 * STAB_B);
}

Test(gpu, batching_stable_below_one)
{
    const double lam = 1.0, lb = lam * STAB_B;
    const double ek = lam * STAB_A / (1 - lb), vk = ek / (1 - lb * lb);
    const double et = STAB_A + STAB_B * ek, vt = STAB_B * STAB_B * vk;
    const double wait = (vt + et * et) / (2 * et);
    const double svc = STAB_A + STAB_B * (vk + ek * ek) / ek;

    scenario_cfg c;
    stab_scenario(&c, lam, 1.0, 40.0, 12);
    double rho = run_offered_load(&c, 0);
    near("offered load at full batches", rho, lam * (STAB_B + STAB_A / 64), EXACT);
    run_result r;
    run(&c, 2, &r);
    cr_expect_eq(r.nwarnings, 0, "a stable scenario warned: %s", r.warnings[0]);
    const stage_est *se = &r.stage[0];
    cr_expect(fabs(se->batch_mean.mean - ek) <= 0.05 * ek, "batch mean %g, closed form %g",
              se->batch_mean.mean, ek);
    cr_expect(fabs(se->wait.mean.mean - wait) <= 0.05 * wait, "mean wait %g, closed form %g",
              se->wait.mean.mean, wait);
    cr_expect(fabs(se->service.mean.mean - svc) <= 0.05 * svc, "mean service %g, closed form %g",
              se->service.mean.mean, svc);
    cr_expect(fabs(se->mean_queue_len.mean - lam * wait) <= 0.05 * lam * wait,
              "mean queue length %g, Little λW = %g", se->mean_queue_len.mean, lam * wait);
    cr_expect(r.gpu[0].utilization.mean > 0.99 && r.gpu[0].utilization.mean <= 1.0,
              "GPU utilization %g: a batch-everything GPU is (almost) never idle",
              r.gpu[0].utilization.mean);
    /* Exact identity: busy time = a x batches + b x frames batched (up to the
     * two batches cut by the window's ends). */
    uint64_t items = 0;
    for (int k = 1; k <= 64; k++)
        items += (uint64_t)k * se->batch_counts[k];
    double busy = STAB_A * (double)se->batches + STAB_B * (double)items;
    double busy_sim = r.gpu[0].busy_ms[0] * r.nrep;   /* busy_ms is a mean over replications */
    cr_expect(fabs(busy_sim - busy) <= 2 * r.nrep * (STAB_A + 64 * STAB_B),
              "busy %g ms vs a x batches + b x items = %g ms", busy_sim, busy);
    if (verbose())
        printf("  stable: batch mean %.4f (cf %.4f), wait %.4f (cf %.4f), service %.4f (cf %.4f), "
               "queue %.4f (λW %.4f), util %.5f, busy %.1f vs %.1f, peak %llu\n",
               se->batch_mean.mean, ek, se->wait.mean.mean, wait, se->service.mean.mean, svc,
               se->mean_queue_len.mean, lam * wait, r.gpu[0].utilization.mean, busy_sim, busy,
               (unsigned long long)r.peak_in_flight);
    cr_expect(r.peak_in_flight < 200, "peak in flight %llu in a stable system",
              (unsigned long long)r.peak_in_flight);
    run_result_free(&r);

    /* Bounded: the time-average queue does not grow with the run length. */
    double q[2];
    const double dur[2] = { 10.0, 40.0 };
    for (int k = 0; k < 2; k++) {
        scenario_cfg d;
        stab_scenario(&d, lam, 1.0, dur[k], 1);
        rep_stats rs;
        rep1(&d, &rs);
        q[k] = rs.stage[0].mean_queue_len;
        cr_expect(rs.peak_in_flight < 200, "peak in flight %llu",
                  (unsigned long long)rs.peak_in_flight);
        pipe_stats_free(&rs);
        cfg_free(&d);
    }
    if (verbose())
        printf("  stable: mean queue length %.4f (10 s), %.4f (40 s)\n", q[0], q[1]);
    cr_expect(q[1] / q[0] > 0.85 && q[1] / q[0] < 1.15,
              "mean queue length %g over 10 s, %g over 40 s: should not grow", q[0], q[1]);
    cfg_free(&c);
}

/* λb = 1.2 (λ = 1.5/ms): batches fill to 64 and take a + 64 b = 53.2 ms, so
 * the GPU serves at most 64/53.2 = 1.203 frames/ms and the queue grows at
 * g = λ - 64/(a + 64 b) = 0.297 per ms. From an empty start, the number
 * waiting at time t is about g t, so over a window of D ms (no warm-up) its
 * time average is about g D / 2 and the peak in flight about g D + 64: twice as
 * much for twice the duration. run_scenario warns (offered load >= 1). */
Test(gpu, batching_unstable_above_one)
{
    const double lam = 1.5;
    const double g = lam - 64 / (STAB_A + 64 * STAB_B);
    const double dur[2] = { 5.0, 10.0 };
    double q[2];
    for (int k = 0; k < 2; k++) {
        scenario_cfg c;
        stab_scenario(&c, lam, 0, dur[k], 1);
        rep_stats rs;
        rep1(&c, &rs);
        double d_ms = dur[k] * 1000;
        q[k] = rs.stage[0].mean_queue_len;
        if (verbose())
            printf("  unstable D=%g s: queue %.1f (gD/2 %.1f), peak %llu (gD %.1f), "
                   "%llu/%llu batches full, util %.6f\n", dur[k], q[k], g * d_ms / 2,
                   (unsigned long long)rs.peak_in_flight, g * d_ms,
                   (unsigned long long)rs.stage[0].batch_counts[64],
                   (unsigned long long)rs.stage[0].batches, rs.gpu[0].utilization);
        cr_expect(fabs(q[k] - g * d_ms / 2) <= 0.1 * g * d_ms / 2,
                  "D = %g s: mean queue length %g, growth g D / 2 = %g", dur[k], q[k], g * d_ms / 2);
        /* in flight at the end: g D waiting plus a full batch in service */
        cr_expect(fabs((double)rs.peak_in_flight - (g * d_ms + 64)) <= 0.1 * g * d_ms,
                  "D = %g s: peak in flight %llu, g D + 64 = %g", dur[k],
                  (unsigned long long)rs.peak_in_flight, g * d_ms + 64);
        /* Only the ramp from an empty queue is not full: k_{n+1} = λ(a + b k_n)
         * = 3 + 1.2 k_n from 1 reaches 64 after 9 batches, whatever D is. */
        uint64_t partial = rs.stage[0].batches - rs.stage[0].batch_counts[64];
        cr_expect(partial <= 15 && rs.stage[0].batches > 90,
                  "saturated: %llu of %llu batches not full (the ramp has ~9)",
                  (unsigned long long)partial, (unsigned long long)rs.stage[0].batches);
        near("gpu utilization (saturated)", rs.gpu[0].utilization, 1.0, 1e-3);
        pipe_stats_free(&rs);
        cfg_free(&c);
    }
    cr_expect(q[1] / q[0] > 1.8 && q[1] / q[0] < 2.2,
              "mean queue length %g (5 s) and %g (10 s): should double", q[0], q[1]);

    scenario_cfg c;
    stab_scenario(&c, lam, 0, 1.0, 1);
    near("offered load at full batches", run_offered_load(&c, 0),
         lam * (STAB_B + STAB_A / 64), EXACT);
    run_result r;
    run(&c, 1, &r);
    int found = 0;
    for (int k = 0; k < r.nwarnings; k++)
        found |= strstr(r.warnings[k], "encode") && strstr(r.warnings[k], "offered load");
    cr_expect(found, "no offered-load warning for the unstable GPU stage (%d warnings)",
              r.nwarnings);
    run_result_free(&r);
    cfg_free(&c);
}

/* ---- 4. placement and pools ------------------------------------------------ */

/* Hash placement is sticky per stream: one stream on 4 GPUs uses exactly one
 * GPU, with all its 10 frames x 5 ms = 50 ms in 1 s. */
Test(gpu, hash_one_stream_one_gpu)
{
    scenario_cfg c;
    base(&c, 1, 4, 0, 1.0, 1);
    periodic(&c, 1, 10.0);
    on_gpu(&c, 0, "encode", 1, 0, 5.0);
    rep_stats rs;
    rep1(&c, &rs);
    int used = 0;
    for (int g = 0; g < 4; g++)
        if (rs.gpu[g].utilization > 0) {
            used++;
            near("busy GPU utilization", rs.gpu[g].utilization, 0.05, EXACT);
            near("busy GPU busy_ms", rs.gpu[g].busy_ms[0], 50, EXACT);
        } else {
            near("idle GPU busy_ms", rs.gpu[g].busy_ms[0], 0, EXACT);
        }
    cr_expect_eq(used, 1, "%d GPUs used by one stream", used);
    near("stage utilization (pool of 4)", rs.stage[0].utilization, 50 / 4000.0, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* 8 streams on 4 GPUs, hash placement, max_batch 8 with a 50 ms timeout and
 * table {1: 5, 8: 12} (k -> 4 + k ms). If every frame of a stream goes to the
 * stream's GPU, a GPU holding n_g streams runs one batch of exactly n_g per
 * period (after the timeout, or at once when n_g = 8): busy 10 (4 + n_g) ms,
 * batch_counts[k] = 10 x #{g : n_g = k}, sum n_g = 8, and each frame's
 * sojourn is 50 + 4 + n_g (or 12 for a full batch). */
Test(gpu, hash_sticky_batches)
{
    scenario_cfg c;
    base(&c, 1, 4, 0, 1.0, 1);
    periodic(&c, 8, 10.0);
    stage_cfg *st = on_gpu(&c, 0, "encode", 8, 50, 1.0);
    table2(st, 1, 5, 8, 12);
    rep_stats rs;
    rep1(&c, &rs);
    int n[4], total = 0, gpus_used = 0;
    uint64_t want_counts[9] = { 0 };
    double sojourn_sum = 0;
    for (int g = 0; g < 4; g++) {
        double b = rs.gpu[g].busy_ms[0];
        n[g] = b > 0 ? (int)lround(b / 10 - 4) : 0;
        cr_expect(n[g] >= 0 && n[g] <= 8, "GPU %d busy %g ms", g, b);
        if (n[g] > 0) {
            near("busy = 10 x (4 + n_g)", b, 10.0 * (4 + n[g]), EXACT);
            gpus_used++;
            want_counts[n[g]] += 10;
            sojourn_sum += 10.0 * n[g] * ((n[g] < 8 ? 50 : 0) + 4 + n[g]);
        }
        total += n[g];
    }
    cr_expect_eq(total, 8, "streams over GPUs: %d %d %d %d", n[0], n[1], n[2], n[3]);
    count("batches", rs.stage[0].batches, 10 * (uint64_t)gpus_used);
    for (int k = 1; k <= 8; k++)
        count("batch_counts[k]", rs.stage[0].batch_counts[k], want_counts[k]);
    near("sojourn sum", rs.stage[0].sojourn.sum, sojourn_sum, EXACT);
    count("completed", rs.stage[0].completed, 80);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* least_loaded: periodic streams go round robin, so 4 streams on 4 GPUs
 * load every GPU equally (10 x 5 ms = 50 ms), and 8 streams give 2 each. */
Test(gpu, least_loaded_round_robin)
{
    for (int streams = 4; streams <= 8; streams += 4) {
        scenario_cfg c;
        base(&c, 1, 4, 0, 1.0, 1);
        periodic(&c, streams, 10.0);
        c.cluster.placement = PLACE_LEAST_LOADED;
        on_gpu(&c, 0, "encode", 1, 0, 5.0);
        rep_stats rs;
        rep1(&c, &rs);
        double per = 10 * 5.0 * streams / 4;
        for (int g = 0; g < 4; g++) {
            near("GPU busy_ms", rs.gpu[g].busy_ms[0], per, EXACT);
            near("GPU utilization", rs.gpu[g].utilization, per / 1000, EXACT);
        }
        count("batches", rs.stage[0].batches, 10 * (uint64_t)streams);
        /* 2 streams per GPU: the second frame waits 5 ms behind the first */
        near("wait sum", rs.stage[0].wait.sum, streams == 4 ? 0 : 40 * 5.0, EXACT);
        pipe_stats_free(&rs);
        cfg_free(&c);
    }
}

/* Two pools: vision = GPUs 0-1 (encode, 5 ms), llm = GPUs 2-3 (llm_prefill,
 * 7 ms); least_loaded, 4 streams: encode on GPUs 0,1,0,1 and prefill on
 * 2,3,2,3. Per period on GPU 0: encode [0,5) [5,10); on GPU 2: prefill
 * [5,12) [12,19). busy: GPUs 0-1 100 ms of encode, GPUs 2-3 140 ms of
 * prefill, none across pools; stage shares 200/2000 and 280/2000; e2e 12
 * and 19 (mean 15.5). With hash placement the cross-pool busy is zero too. */
static void pools_scenario(scenario_cfg *c, int streams, placement_kind pl)
{
    base(c, 2, 4, 0, 1.0, 1);
    periodic(c, streams, 10.0);
    c->cluster.placement = pl;
    on_gpu(c, 0, "encode", 1, 0, 5.0);
    on_gpu(c, 1, "llm_prefill", 1, 0, 7.0);
    c->cluster.npools = 2;
    snprintf(c->cluster.pools[0].name, CFG_NAME_MAX, "vision");
    c->cluster.pools[0].first = 0;
    c->cluster.pools[0].gpus = 2;
    c->cluster.pools[0].stage_mask = 1u << 0;
    snprintf(c->cluster.pools[1].name, CFG_NAME_MAX, "llm");
    c->cluster.pools[1].first = 2;
    c->cluster.pools[1].gpus = 2;
    c->cluster.pools[1].stage_mask = 1u << 1;
}

Test(gpu, pools_least_loaded)
{
    scenario_cfg c;
    pools_scenario(&c, 4, PLACE_LEAST_LOADED);
    rep_stats rs;
    rep1(&c, &rs);
    for (int g = 0; g < 4; g++) {
        near("busy_ms[encode]", rs.gpu[g].busy_ms[0], g < 2 ? 100 : 0, EXACT);
        near("busy_ms[llm_prefill]", rs.gpu[g].busy_ms[1], g < 2 ? 0 : 140, EXACT);
        near("gpu utilization", rs.gpu[g].utilization, g < 2 ? 0.10 : 0.14, EXACT);
    }
    near("encode share of its pool", rs.stage[0].utilization, 0.10, EXACT);
    near("prefill share of its pool", rs.stage[1].utilization, 0.14, EXACT);
    hist_is("e2e", &rs.e2e, 40, 20 * 12.0 + 20 * 19.0, 12, 19);
    near("offered load encode (40/s x 5 ms / 2)", run_offered_load(&c, 0), 0.1, EXACT);
    near("offered load prefill (40/s x 7 ms / 2)", run_offered_load(&c, 1), 0.14, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(gpu, pools_hash)
{
    scenario_cfg c;
    pools_scenario(&c, 8, PLACE_HASH);
    rep_stats rs;
    rep1(&c, &rs);
    double enc = 0, pre = 0;
    for (int g = 0; g < 4; g++) {
        if (g < 2)
            near("busy_ms[llm_prefill] in vision", rs.gpu[g].busy_ms[1], 0, EXACT);
        else
            near("busy_ms[encode] in llm", rs.gpu[g].busy_ms[0], 0, EXACT);
        enc += rs.gpu[g].busy_ms[0];
        pre += rs.gpu[g].busy_ms[1];
    }
    near("encode busy total (80 x 5)", enc, 400, EXACT);
    near("prefill busy total (80 x 7)", pre, 560, EXACT);
    count("completed", rs.completed, 80);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A batch that ends on one GPU and moves on to a GPU stage in another pool
 * arrives there as one: all its frames finish at the same instant, so the
 * next stage (max_batch 4, batch_timeout 0) should see 4 frames waiting,
 * exactly as it would on the same GPU. encode pool GPU 0 (batch of 4 at t,
 * 16 ms), prefill pool GPU 1: expected one batch of 4 at t+16 (16 ms),
 * e2e 32 for every frame. */
Test(gpu, batch_moves_on_whole_across_pools)
{
    scenario_cfg c;
    base(&c, 2, 2, 0, 1.0, 1);
    periodic(&c, 4, 10.0);
    table2(on_gpu(&c, 0, "encode", 4, 25, 1.0), 1, 10, 4, 16);
    table2(on_gpu(&c, 1, "llm_prefill", 4, 0, 1.0), 1, 10, 4, 16);
    c.cluster.npools = 2;
    c.cluster.pools[0] = (pool_cfg){ "vision", 0, 1, 1u << 0 };
    c.cluster.pools[1] = (pool_cfg){ "llm", 1, 1, 1u << 1 };
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *sp = &rs.stage[1];
    count("encode batches of 4", rs.stage[0].batch_counts[4], 10);
    count("prefill batches of 4", sp->batch_counts[4], 10);
    count("prefill batches of 1", sp->batch_counts[1], 0);
    count("prefill batches of 3", sp->batch_counts[3], 0);
    hist_is("e2e", &rs.e2e, 40, 40 * 32.0, 32, 32);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Poisson arrivals are each their own session; hash spreads them over the
 * GPUs (each GPU about a quarter of the frames). */
Test(gpu, hash_poisson_spreads)
{
    scenario_cfg c;
    base(&c, 1, 4, 0, 10.0, 1);
    poisson(&c, 400.0);
    on_gpu(&c, 0, "encode", 1, 0, 1.0);
    rep_stats rs;
    rep1(&c, &rs);
    double total = 0;
    for (int g = 0; g < 4; g++)
        total += rs.gpu[g].busy_ms[0];
    /* frames x 1 ms, give or take the batch cut by the end of the window */
    cr_expect(fabs(total - (double)rs.stage[0].completed) <= 1.0,
              "total busy %g ms for %llu frames of 1 ms", total,
              (unsigned long long)rs.stage[0].completed);
    for (int g = 0; g < 4; g++)
        cr_expect(fabs(rs.gpu[g].busy_ms[0] / total - 0.25) < 0.03,
                  "GPU %d has %.3f of the frames", g, rs.gpu[g].busy_ms[0] / total);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- 5. sampling ------------------------------------------------------------- */

/* 2 aligned streams at 100 fps for 3 s: 600 frames, frame numbers 0..299 in
 * each stream. decode (1 worker, 1 ms) keeps every 3rd frame (numbers
 * divisible by 3: 100 per stream), encode on the GPU (batch 1, 2 ms).
 * decode: 600 completions, 400 sampled out; encode sees 200. Per kept
 * period: s0 decode [0,1) encode [1,3) -> e2e 3; s1 decode [1,2), GPU busy
 * until 3 -> encode [3,5) -> e2e 5. No drops; e2e holds only the kept. */
Test(gpu, keep_every_third)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 3.0, 1);
    periodic(&c, 2, 100.0);
    stage_cfg *d = on_workers(&c, 0, "decode", 1, 1.0);
    d->keep = KEEP_EVERY;
    d->keep_every = 3;
    on_gpu(&c, 1, "encode", 1, 0, 2.0);
    near("offered load encode (200/3 per s x 2 ms)", run_offered_load(&c, 1),
         200.0 / 3 * 2 / 1000, EXACT);
    rep_stats rs;
    rep1(&c, &rs);
    count("decode completed", rs.stage[0].completed, 600);
    count("decode sampled_out", rs.stage[0].sampled_out, 400);
    count("encode arrivals", rs.stage[1].arrivals, 200);
    count("encode completed", rs.stage[1].completed, 200);
    count("encode sampled_out", rs.stage[1].sampled_out, 0);
    count("system arrivals", rs.arrivals, 600);
    count("system sampled_out", rs.sampled_out, 400);
    count("system completed", rs.completed, 200);
    count("dropped", rs.dropped, 0);
    count("drop_timeout", rs.stage[0].drop_timeout + rs.stage[1].drop_timeout, 0);
    hist_is("e2e", &rs.e2e, 200, 100 * 3.0 + 100 * 5.0, 3, 5);
    near("encode busy", rs.gpu[0].busy_ms[1], 400, EXACT);
    pipe_stats_free(&rs);

    run_result r;
    c.replications = 2;
    run(&c, 2, &r);
    count("run sampled_out", r.sampled_out, 800);
    count("run stage sampled_out", r.stage[0].sampled_out, 800);
    count("run completed", r.completed, 400);
    count("run dropped", r.dropped, 0);
    near("run drop rate", r.drop_rate.mean, 0, EXACT);
    run_result_free(&r);
    cfg_free(&c);
}

/* A sampler on a GPU stage decides per frame, after the batch: 4 streams,
 * encode max_batch 4 (full batch at once, 16 ms), keep every 2nd: frames
 * 0, 2, 4, ... of every stream go on to reduce (workers, 1 ms, 4 servers).
 * 10 periods: encode 40 completions, 20 sampled out, 10 batches of 4;
 * reduce 20 frames; e2e 17 each. */
Test(gpu, keep_every_on_gpu_stage)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 1.0, 1);
    periodic(&c, 4, 10.0);
    stage_cfg *e = on_gpu(&c, 0, "encode", 4, 25, 1.0);
    table2(e, 1, 10, 4, 16);
    e->keep = KEEP_EVERY;
    e->keep_every = 2;
    on_workers(&c, 1, "reduce", 4, 1.0);
    rep_stats rs;
    rep1(&c, &rs);
    count("encode completed", rs.stage[0].completed, 40);
    count("encode sampled_out", rs.stage[0].sampled_out, 20);
    count("encode batches of 4", rs.stage[0].batch_counts[4], 10);
    count("reduce arrivals", rs.stage[1].arrivals, 20);
    hist_is("e2e", &rs.e2e, 20, 20 * 17.0, 17, 17);
    count("sampled_out", rs.sampled_out, 20);
    count("dropped", rs.dropped, 0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* keep ratio 0.25 on Poisson traffic: the kept fraction is binomial. */
Test(gpu, keep_ratio_quarter)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 5.0, 1);
    poisson(&c, 2000.0);
    stage_cfg *d = on_workers(&c, 0, "decode", 1, 0.1);
    d->keep = KEEP_RATIO;
    d->keep_ratio = 0.25;
    on_gpu(&c, 1, "encode", 8, 0, 0.5);
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *s0 = &rs.stage[0];
    double n = (double)s0->completed;
    double kept = n - (double)s0->sampled_out;
    double sd = sqrt(n * 0.25 * 0.75);
    cr_expect(n > 9000, "decode completed %g", n);
    if (verbose())
        printf("  keep ratio: kept %.0f of %.0f = %.4f (sd of fraction %.4f)\n", kept, n, kept / n,
               sd / n);
    cr_expect(fabs(kept - 0.25 * n) <= 4 * sd, "kept %g of %g, want 0.25 +- 4 sd (%g)", kept, n, sd);
    count("encode arrivals = kept", rs.stage[1].arrivals, (uint64_t)kept);
    count("system sampled_out", rs.sampled_out, s0->sampled_out);
    count("dropped", rs.dropped, 0);
    count("e2e = completed", rs.e2e.n, rs.completed);
    count("completed = encode completed", rs.completed, rs.stage[1].completed);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- 6. frame deadline --------------------------------------------------------- */

/* 3 aligned streams at 10 fps, encode batch 1, 10 ms, deadline D:
 *   D = 15: s0 [0,10); s1 reached at 10 (age 10 <= 15) [10,20); s2 reached at
 *           20 (age 20 > 15): dropped. 10 periods: 20 done, 10 timeouts;
 *           e2e 10 and 20; busy 200 ms.
 *   D = 20: s2's age at 20 is not > 20: served [20,30), e2e 30 (the deadline
 *           is checked when a server reaches the frame, not at completion). */
Test(gpu, frame_deadline_drops)
{
    for (int k = 0; k < 2; k++) {
        double dl = k == 0 ? 15 : 20;
        scenario_cfg c;
        base(&c, 1, 1, 0, 1.0, 1);
        periodic(&c, 3, 10.0);
        on_gpu(&c, 0, "encode", 1, 0, 10.0);
        c.frame_deadline_ms = dl;
        rep_stats rs;
        rep1(&c, &rs);
        const stage_stats *st = &rs.stage[0];
        count("arrivals", st->arrivals, 30);
        count("completed", st->completed, k == 0 ? 20 : 30);
        count("drop_timeout", st->drop_timeout, k == 0 ? 10 : 0);
        count("dropped", rs.dropped, k == 0 ? 10 : 0);
        count("drop_queue_full", st->drop_queue_full, 0);
        if (k == 0)
            hist_is("e2e", &rs.e2e, 20, 10 * 10.0 + 10 * 20.0, 10, 20);
        else
            hist_is("e2e", &rs.e2e, 30, 10 * (10.0 + 20 + 30), 10, 30);
        near("busy", rs.gpu[0].busy_ms[0], k == 0 ? 200 : 300, EXACT);
        near("mean queue length", st->mean_queue_len, k == 0 ? (10 + 20) / 100.0
                                                             : (10 + 20) / 100.0, EXACT);
        pipe_stats_free(&rs);
        cfg_free(&c);
    }
}

/* A partial batch waits batch_timeout_ms (25) for company; with a deadline
 * of 20 ms its frames are stale by the time the GPU reaches them: 1 stream,
 * max_batch 4 -> every frame is dropped at t+25, nothing runs. */
Test(gpu, deadline_shorter_than_batch_timeout)
{
    scenario_cfg c;
    batch_scenario(&c, 1, 0, 1);
    c.frame_deadline_ms = 20;
    rep_stats rs;
    rep1(&c, &rs);
    count("arrivals", rs.stage[0].arrivals, 10);
    count("completed", rs.stage[0].completed, 0);
    count("drop_timeout", rs.stage[0].drop_timeout, 10);
    count("batches", rs.stage[0].batches, 0);
    near("busy", rs.gpu[0].busy_ms[0], 0, EXACT);
    near("mean queue length (1 frame for 25 ms per 100)", rs.stage[0].mean_queue_len, 0.25, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The deadline is measured from arrival in the system: decode (1 worker,
 * 8 ms) then encode (GPU, batch 1, 4 ms), 2 aligned streams, deadline 14.
 * s0: decode [0,8), encode [8,12), e2e 12. s1: decode reached at 8 (age 8)
 * [8,16); at 16 it enters encode, the free GPU reaches it at age 16 > 14:
 * dropped at encode. 10 periods: encode 20 arrivals, 10 done, 10 timeouts. */
Test(gpu, deadline_counts_from_system_arrival)
{
    scenario_cfg c;
    base(&c, 2, 1, 0, 1.0, 1);
    periodic(&c, 2, 10.0);
    on_workers(&c, 0, "decode", 1, 8.0);
    on_gpu(&c, 1, "encode", 1, 0, 4.0);
    c.frame_deadline_ms = 14;
    rep_stats rs;
    rep1(&c, &rs);
    count("decode completed", rs.stage[0].completed, 20);
    count("decode timeouts", rs.stage[0].drop_timeout, 0);
    count("encode arrivals", rs.stage[1].arrivals, 20);
    count("encode completed", rs.stage[1].completed, 10);
    count("encode timeouts", rs.stage[1].drop_timeout, 10);
    count("dropped", rs.dropped, 10);
    hist_is("e2e", &rs.e2e, 10, 10 * 12.0, 12, 12);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Every frame a batch takes must pass the staleness check, not only the
 * head: the queue is in order of arrival at the stage, which is not the
 * order of arrival in the system when an upstream stage reorders frames.
 * encode: pool of 2 GPUs (least_loaded: stream s on GPU s), max_batch 2,
 * batch_timeout 150, 10 ms; 2 aligned streams at 10 fps: each encode GPU
 * runs [frame 200m, frame 200m+100] at 200m+100, done at 200m+110 (ages
 * 100 and 0 at the start, within the deadline of 105). GPU 0's batch ends
 * first (scheduled first), so reduce (pool: GPU 2, max_batch 4,
 * batch_timeout 1, 5 ms) receives, at 200m+110, s0(200m) s0(200m+100)
 * s1(200m) s1(200m+100). s0(200m) enters the free GPU at age 110 > 105:
 * dropped. At 200m+111 the head s0(200m+100) has waited 1 ms: the batch
 * takes the queue, in which s1(200m) is 111 ms old: it must be dropped too,
 * leaving a batch of 2 [111, 116): e2e 16. Five cycles in [0, 1000). */
Test(gpu, deadline_checked_for_every_frame_of_a_batch)
{
    scenario_cfg c;
    base(&c, 2, 3, 0, 1.0, 1);
    periodic(&c, 2, 10.0);
    c.cluster.placement = PLACE_LEAST_LOADED;
    on_gpu(&c, 0, "encode", 2, 150, 10.0);
    on_gpu(&c, 1, "reduce", 4, 1, 5.0);
    c.cluster.npools = 2;
    c.cluster.pools[0] = (pool_cfg){ "vision", 0, 2, 1u << 0 };
    c.cluster.pools[1] = (pool_cfg){ "agg", 2, 1, 1u << 1 };
    c.frame_deadline_ms = 105;
    rep_stats rs;
    rep1(&c, &rs);
    count("encode batches of 2", rs.stage[0].batch_counts[2], 10);
    count("encode completed", rs.stage[0].completed, 20);
    count("encode timeouts", rs.stage[0].drop_timeout, 0);
    count("reduce arrivals", rs.stage[1].arrivals, 20);
    count("reduce timeouts", rs.stage[1].drop_timeout, 10);
    count("reduce batches of 2", rs.stage[1].batch_counts[2], 5);
    count("reduce batches of 3", rs.stage[1].batch_counts[3], 0);
    count("reduce completed", rs.stage[1].completed, 10);
    hist_is("e2e", &rs.e2e, 10, 10 * 16.0, 16, 16);
    cr_expect(rs.e2e.max <= c.frame_deadline_ms + 5.0,
              "a frame finished %g ms after arrival: it started past the %g ms deadline",
              rs.e2e.max, c.frame_deadline_ms);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- 7. cost and SLA ------------------------------------------------------------ */

/* 16 aligned streams on 4 GPUs (least_loaded: 4 per GPU), encode max_batch 4
 * {1: 10, 4: 16}: every frame is in a full batch at once, e2e 16 exactly, in
 * every replication. Cost $2 x 4 / 16 = $0.5 per stream-hour; GPU-hours
 * 4 x 2 s / 3600 x 3 replications. SLA frame p50 <= 16 passes (the CI is
 * degenerate: hi = 16), <= 15.99 fails; encode p99 <= 16 passes. */
Test(gpu, cost_and_deterministic_sla)
{
    scenario_cfg c;
    base(&c, 1, 4, 0.5, 2.0, 3);
    periodic(&c, 16, 10.0);
    c.cluster.placement = PLACE_LEAST_LOADED;
    c.cluster.gpu_hour_usd = 2.0;
    table2(on_gpu(&c, 0, "encode", 4, 25, 1.0), 1, 10, 4, 16);
    c.nsla = 3;
    c.sla[0] = (sla_cfg){ "frame", 50, 16 };
    c.sla[1] = (sla_cfg){ "frame", 50, 15.99 };
    c.sla[2] = (sla_cfg){ "encode", 99, 16 };
    run_result r;
    run(&c, 2, &r);
    near("cost_per_stream_hour", r.cost_per_stream_hour, 0.5, EXACT);
    near("gpu_hours", r.gpu_hours, 4 * 2.0 / 3600 * 3, EXACT);
    cr_assert_eq(r.nsla, 3);
    for (int k = 0; k < 3; k++) {
        near("sla value", r.sla[k].value.mean, 16, EXACT);
        near("sla hi (degenerate CI)", r.sla[k].value.hi, 16, EXACT);
        cr_expect_eq(r.sla[k].line, &c.sla[k]);
    }
    cr_expect(r.sla[0].pass, "frame p50 16 <= 16 must pass");
    cr_expect(!r.sla[1].pass, "frame p50 16 <= 15.99 must fail");
    cr_expect(r.sla[2].pass, "encode p99 16 <= 16 must pass");
    for (int g = 0; g < 4; g++)
        near("gpu utilization", r.gpu[g].utilization.mean, 0.16, EXACT);
    run_result_free(&r);

    /* Poisson traffic has no streams: no cost per stream-hour. */
    scenario_cfg p;
    base(&p, 1, 2, 0, 0.2, 1);
    poisson(&p, 100);
    on_gpu(&p, 0, "encode", 1, 0, 1.0);
    p.cluster.gpu_hour_usd = 3.0;
    run(&p, 1, &r);
    cr_expect(isnan(r.cost_per_stream_hour), "cost per stream-hour %g with Poisson arrivals",
              r.cost_per_stream_hour);
    near("gpu_hours (Poisson)", r.gpu_hours, 2 * 0.2 / 3600, EXACT);
    run_result_free(&r);
    cfg_free(&p);
    cfg_free(&c);
}

/* A stochastic case: the frame p50 of each replication, computed here from
 * pipe_run, gives mean m and the 95 % Student-t upper end hi = m +
 * t(0.975, n-1) sd / sqrt(n). The verdict must be pass iff hi <= target:
 * a target between m and hi fails although the estimate is below it. */
Test(gpu, sla_verdict_uses_upper_ci)
{
    enum { N = 4 };
    scenario_cfg c;
    base(&c, 1, 1, 0.1, 0.5, N);
    poisson(&c, 300);
    stage_cfg *st = on_gpu(&c, 0, "encode", 4, 2, 1.0);
    dist_free(&st->service);
    cr_assert_null(dist_init_exponential(&st->service, 2.0));
    double p50[N], m = 0;
    for (int k = 0; k < N; k++) {
        rep_stats rs;
        cr_assert_eq(pipe_stats_init(&rs, &c), 0);
        char err[256] = "";
        cr_assert_eq(pipe_run(&c, (uint32_t)k, c.warmup_s * 1000, NULL, &rs, err, sizeof err), 0,
                     "%s", err);
        p50[k] = hist_quantile(&rs.e2e, 0.5);
        m += p50[k] / N;
        pipe_stats_free(&rs);
    }
    double ss = 0;
    for (int k = 0; k < N; k++)
        ss += (p50[k] - m) * (p50[k] - m);
    double sd = sqrt(ss / (N - 1));
    double hi = m + gsl_cdf_tdist_Pinv(0.975, N - 1) * sd / sqrt((double)N);
    cr_assert(sd > 0.01 * m, "the p50s should differ across replications (sd %g)", sd);

    if (verbose())
        printf("  sla: p50s %.4f %.4f %.4f %.4f -> mean %.4f, hi %.4f\n", p50[0], p50[1], p50[2],
               p50[3], m, hi);
    c.nsla = 4;
    c.sla[0] = (sla_cfg){ "frame", 50, (m + hi) / 2 };   /* above the estimate, below hi */
    c.sla[1] = (sla_cfg){ "frame", 50, hi * (1 + 1e-9) };
    c.sla[2] = (sla_cfg){ "encode", 50, (m + hi) / 2 };  /* one stage = e2e here */
    c.sla[3] = (sla_cfg){ "frame", 50, m * 0.9 };
    run_result r;
    run(&c, 3, &r);
    for (int k = 0; k < 4; k++) {
        near("sla value = mean of the p50s", r.sla[k].value.mean, m, 1e-12);
        near("sla hi", r.sla[k].value.hi, hi, 1e-9);
    }
    cr_expect(!r.sla[0].pass, "value %g < target %g < hi %g must fail", m, (m + hi) / 2, hi);
    cr_expect(r.sla[1].pass, "hi %g <= target must pass", hi);
    cr_expect(!r.sla[2].pass, "stage line: value below target, hi above: must fail");
    cr_expect(!r.sla[3].pass, "value above target must fail");
    run_result_free(&r);

    /* One replication: no interval, the estimate itself decides. */
    c.replications = 1;
    c.nsla = 2;
    c.sla[0] = (sla_cfg){ "frame", 50, p50[0] * (1 + 1e-9) };
    c.sla[1] = (sla_cfg){ "frame", 50, p50[0] * (1 - 1e-9) };
    run(&c, 1, &r);
    near("single-replication value", r.sla[0].value.mean, p50[0], 1e-12);
    cr_expect(r.sla[0].pass, "one replication: estimate <= target passes");
    cr_expect(!r.sla[1].pass, "one replication: estimate > target fails");
    run_result_free(&r);
    cfg_free(&c);
}

/* ---- 8. determinism ------------------------------------------------------------- */

static void same_lat(const char *what, const lat_est *a, const lat_est *b)
{
    cr_expect(memcmp(a, b, sizeof *a) == 0, "%s differs between thread counts", what);
}

Test(gpu, identical_for_any_thread_count)
{
    scenario_cfg c;
    base(&c, 4, 3, 0.2, 1.0, 6);
    poisson(&c, 900);
    stage_cfg *d = on_workers(&c, 0, "decode", 2, 1.0);
    dist_free(&d->service);
    cr_assert_null(dist_init_lognormal_mean_sd(&d->service, 1.5, 0.8));
    stage_cfg *e = on_gpu(&c, 1, "encode", 8, 4, 1.0);
    table2(e, 1, 3, 8, 10);
    e->has_jitter = true;
    cr_assert_null(dist_init_lognormal_mean_sd(&e->jitter, 1.0, 0.2));
    e->keep = KEEP_RATIO;
    e->keep_ratio = 0.6;
    stage_cfg *p = on_gpu(&c, 2, "llm_prefill", 4, 2, 1.0);
    dist_free(&p->service);
    cr_assert_null(dist_init_gamma(&p->service, 6.0, 2.0));
    on_gpu(&c, 3, "detect", 2, 0, 1.5);   /* a frame-path stage (llm_decode is the response path) */
    c.frame_deadline_ms = 80;
    c.nsla = 1;
    c.sla[0] = (sla_cfg){ "frame", 99, 50 };

    run_result r1, r3;
    run(&c, 1, &r1);
    run(&c, 3, &r3);
    for (int s = 0; s < c.nstages; s++) {
        stage_est a = r1.stage[s], b = r3.stage[s];
        if (a.batch_counts) {
            cr_expect(memcmp(a.batch_counts, b.batch_counts,
                             ((size_t)c.stages[s].max_batch + 1) * sizeof(uint64_t)) == 0,
                      "stage %d batch_counts differ", s);
        }
        a.batch_counts = b.batch_counts = NULL;
        cr_expect(memcmp(&a, &b, sizeof a) == 0, "stage %d estimates differ", s);
    }
    same_lat("e2e", &r1.e2e, &r3.e2e);
    for (int g = 0; g < 3; g++) {
        cr_expect(memcmp(&r1.gpu[g].utilization, &r3.gpu[g].utilization, sizeof(stats_ci)) == 0,
                  "GPU %d utilization differs", g);
        cr_expect(memcmp(r1.gpu[g].busy_ms, r3.gpu[g].busy_ms, (size_t)c.nstages * sizeof(double))
                      == 0, "GPU %d busy_ms differs", g);
    }
    cr_expect(memcmp(&r1.sla[0].value, &r3.sla[0].value, sizeof(stats_ci)) == 0, "SLA differs");
    cr_expect_eq(r1.completed, r3.completed);
    cr_expect_eq(r1.dropped, r3.dropped);
    cr_expect_eq(r1.sampled_out, r3.sampled_out);
    cr_expect_eq(r1.events, r3.events);
    cr_expect(r1.completed > 0 && r1.sampled_out > 0 && r1.stage[2].batches > 0,
              "the scenario should exercise sampling and batching");
    run_result_free(&r1);
    run_result_free(&r3);
    cfg_free(&c);
}

/* A token table (prefill by tokens appended): linear between points, the
 * last segment extended beyond the last point, the first value below the
 * first point — computed by hand from the points. */
Test(gpu, token_table_interpolation)
{
    batch_table t = { 2, { 64, 512 }, { 7, 18 }, true };
    near("tokens 64", cfg_table_ms(&t, 64), 7, EXACT);
    near("tokens 288", cfg_table_ms(&t, 288), 7 + 11.0 * (288 - 64) / 448, EXACT);
    near("tokens 512", cfg_table_ms(&t, 512), 18, EXACT);
    near("tokens 960 (extended)", cfg_table_ms(&t, 960), 18 + 11.0 * (960 - 512) / 448, EXACT);
    near("tokens 10 (held)", cfg_table_ms(&t, 10), 7, EXACT);
    batch_table b = { 2, { 1, 8 }, { 6.1, 14.9 }, false };
    near("batch table never extends", cfg_table_ms(&b, 16), 14.9, EXACT);
}
