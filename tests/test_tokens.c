/* test_tokens.c — tokens through the pipeline and the scene-change sampler
 * (models/pipeline.c, models/gpu.c, models/config.c), against hand
 * computation.
 *
 * 1. Tokens: an item leaving a stage with tokens_out carries that many
 *    tokens; a GPU stage whose table is by tokens times a batch at the
 *    tokens its frames carry (the table extended beyond its last point,
 *    held at its first value below its first point). Scenarios are built in
 *    C and deterministic (aligned periodic streams, constant times): every
 *    expected number is worked out in the comment next to it.
 * 2. The scene-change sampler: per stream, changes are a Poisson process of
 *    rate lambda; at each change the stream's next `burst` frames are kept
 *    (a change during a burst starts it afresh), the other frames with
 *    probability `ratio`. Frame k of a stream (period T) is kept by a burst
 *    exactly when a change fell in the B = burst frame intervals before it,
 *    (t_k - B T, t_k], so
 *        P(kept) = p_b + r (1 - p_b),   p_b = 1 - exp(-lambda B T)
 *    and for rare changes p_b ~ lambda B T = per_min burst / (60 fps), the
 *    expected frames kept per stream per minute over the frames per stream
 *    per minute. The tolerance is 4 standard deviations of the kept count,
 *    computed exactly from the covariance of the kept indicators (below).
 *
 * Conventions the hand computations rely on (pipeline.c, gpu.c):
 *   - aligned periodic streams emit at t = 0, P, 2P, ...; equal-time events
 *     run in the order they were scheduled; WARMUP / END come before
 *     arrivals at the same time;
 *   - a GPU queue is ready when it holds max_batch frames or its head has
 *     waited batch_timeout_ms; all frames of a batch get the batch's time as
 *     their service;
 *   - the sampler decides when the frame leaves the sampling stage. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/config.h"
#include "models/dist.h"
#include "models/pipeline.h"
#include "sim/hist.h"

#define KIT_VERBOSE_ENV "TOKENS_VERBOSE"
#include "tests/kit.h"

/* ---- 1. tokens ------------------------------------------------------------ */

/* The prefill table of the tests: {64 tokens: 7 ms, 512 tokens: 18 ms}. */
static void prefill_table(stage_cfg *st)
{
    table2(st, 64, 7, 512, 18);
    st->table.by_tokens = true;
}

/* The line through (64, 7) and (512, 18), written out independently of
 * config.c: 7 + 11 (x - 64) / 448. */
static double line_ms(double tokens)
{
    return 7.0 + 11.0 * (tokens - 64.0) / 448.0;
}

/* `streams` aligned streams at 10 fps (P = 100 ms), warm-up 50 ms, one
 * second measured (frames at 100, 200, ..., 1000: 10 per stream):
 *   encode  workers, one server per stream, 2 ms, tokens_out enc_tokens;
 *   reduce  workers, one server per stream, 1 ms, tokens_out red_tokens
 *           (0: the frame keeps encode's tokens);
 *   llm_prefill on the one GPU, max_batch, batch timeout 1 ms, the table
 *           above by tokens.
 * All frames of a period reach llm_prefill at t + 3 ms together; a batch
 * that is not full starts when its head has waited 1 ms (t + 4). */
static void flow_scenario(scenario_cfg *c, int streams, int max_batch, int enc_tokens,
                          int red_tokens)
{
    kit_base(c, "tokens-test", 5, 3, 1, 0.05, 1.0, 1);
    periodic(c, streams, 10.0);
    on_workers(c, 0, "encode", streams, 2.0)->tokens_out = enc_tokens;
    on_workers(c, 1, "reduce", streams, 1.0)->tokens_out = red_tokens;
    prefill_table(on_gpu(c, 2, "llm_prefill", max_batch, 1.0, 1.0));
}

/* One period's batches at llm_prefill are all of size k (k frames, one per
 * stream, each carrying `tokens`): 10 such batches in the window, each
 * taking svc, the frames waiting `wait`. */
static void expect_uniform_batches(const char *what, int k, double tokens, double svc,
                                   double wait, const rep_stats *rs)
{
    char b[96];                                  /* hist_is appends to it in 128 */
    const stage_stats *pre = &rs->stage[2];
    uint64_t frames = 10u * (uint64_t)k;
    snprintf(b, sizeof b, "%s: batches", what);
    count(b, pre->batches, 10);
    snprintf(b, sizeof b, "%s: batch_counts[k]", what);
    count(b, pre->batch_counts[k], 10);
    snprintf(b, sizeof b, "%s: service = line(%g tokens)", what, tokens);
    hist_is(b, &pre->service, frames, (double)frames * svc, svc, svc);
    snprintf(b, sizeof b, "%s: wait", what);
    hist_is(b, &pre->wait, frames, (double)frames * wait, wait, wait);
    snprintf(b, sizeof b, "%s: gpu busy_ms[llm_prefill] = 10 batches", what);
    near(b, rs->gpu[0].busy_ms[2], 10 * svc, EXACT);
    /* end to end: encode 2 + reduce 1 + wait + the batch */
    snprintf(b, sizeof b, "%s: e2e", what);
    hist_is(b, &rs->e2e, frames, (double)frames * (3 + wait + svc), 3 + wait + svc,
            3 + wait + svc);
    snprintf(b, sizeof b, "%s: completed", what);
    count(b, rs->completed, frames);
}

/* k = 1, 4, 8 frames of 64 tokens (reduce's keep_tokens, not encode's 729):
 *   k = 1:  64 tokens ->  7 ms; not full: waits the 1 ms timeout;
 *   k = 4: 256 tokens ->  7 + 11 x 192 / 448 = 11.714285... ms, waits 1 ms;
 *   k = 8: 512 tokens -> 18 ms; the eighth frame fills the batch: no wait. */
Test(tokens, prefill_time_by_tokens_k_1_4_8)
{
    static const struct { int k; double svc, wait; } cases[] = {
        { 1,  7.0,                   1.0 },
        { 4,  7.0 + 11.0 * 192 / 448, 1.0 },
        { 8, 18.0,                   0.0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int k = cases[i].k;
        char what[32];
        snprintf(what, sizeof what, "k=%d", k);
        near("hand value against the line", cases[i].svc, line_ms(64.0 * k), EXACT);
        scenario_cfg c;
        flow_scenario(&c, k, 8, 729, 64);
        rep_stats rs;
        rep1(&c, &rs);
        expect_uniform_batches(what, k, 64.0 * k, cases[i].svc, cases[i].wait, &rs);
        for (int j = 1; j <= 8; j++)
            if (j != k)
                count("no batch of another size", rs.stage[2].batch_counts[j], 0);
        pipe_stats_free(&rs);
        cfg_free(&c);
    }
}

/* Beyond the table: 10 frames x 64 = 640 tokens (max_batch 16) take the
 * last segment extended, 7 + 11 x 576 / 448 = 21.142857... ms. */
Test(tokens, prefill_time_beyond_last_point)
{
    double svc = 7.0 + 11.0 * 576 / 448;
    near("hand value", svc, 21.142857142857142, 1e-15);
    scenario_cfg c;
    flow_scenario(&c, 10, 16, 729, 64);
    rep_stats rs;
    rep1(&c, &rs);
    expect_uniform_batches("k=10 (640 tokens)", 10, 640, svc, 1.0, &rs);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* 10 streams, max_batch 8: at t+3 the eighth frame fills a batch of 8
 * (512 tokens, 18 ms, no wait); the other two wait for the GPU and start at
 * t+21 as a batch of 2 (128 tokens: 7 + 11 x 64 / 448 = 8.571428... ms),
 * having waited 18 ms. Per period: 8 frames e2e 3 + 18 = 21, 2 frames
 * e2e 3 + 18 + 8.5714 = 29.5714; the GPU busy 26.5714 ms. */
Test(tokens, prefill_batches_split_by_max_batch)
{
    double s2 = 7.0 + 11.0 * 64 / 448;
    scenario_cfg c;
    flow_scenario(&c, 10, 8, 729, 64);
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *pre = &rs.stage[2];
    count("batches", pre->batches, 20);
    count("batch_counts[8]", pre->batch_counts[8], 10);
    count("batch_counts[2]", pre->batch_counts[2], 10);
    hist_is("service", &pre->service, 100, 80 * 18.0 + 20 * s2, s2, 18.0);
    hist_is("wait", &pre->wait, 100, 20 * 18.0, 0.0, 18.0);
    near("gpu busy_ms", rs.gpu[0].busy_ms[2], 10 * (18.0 + s2), EXACT);
    hist_is("e2e", &rs.e2e, 100, 80 * 21.0 + 20 * (21.0 + s2), 21.0, 21.0 + s2);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A stage without tokens_out passes tokens on unchanged: reduce sets none,
 * so one frame carries encode's 729 tokens: 7 + 11 x 665 / 448 =
 * 23.328125 ms. Below the first point the table holds its first value:
 * keep_tokens 32 -> 7 ms. */
Test(tokens, tokens_pass_through_and_below_first_point)
{
    double s729 = 7.0 + 11.0 * 665 / 448;
    near("hand value 729", s729, 23.328125, 1e-15);
    scenario_cfg c;
    flow_scenario(&c, 1, 8, 729, 0);
    rep_stats rs;
    rep1(&c, &rs);
    expect_uniform_batches("729 tokens carried through reduce", 1, 729, s729, 1.0, &rs);
    pipe_stats_free(&rs);
    cfg_free(&c);

    flow_scenario(&c, 2, 8, 729, 32);   /* 2 frames x 32 = 64: exactly the first point */
    rep1(&c, &rs);
    expect_uniform_batches("2 x 32 tokens", 2, 64, 7.0, 1.0, &rs);
    pipe_stats_free(&rs);
    cfg_free(&c);

    flow_scenario(&c, 1, 8, 729, 32);   /* 32 tokens: below the table, 7 ms */
    rep1(&c, &rs);
    expect_uniform_batches("32 tokens (below the first point)", 1, 32, 7.0, 1.0, &rs);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The same streams with a batch table {1: 5, 8: 12} instead: it is read at
 * the batch size, 4 frames -> 5 + 7 x 3 / 7 = 8 ms (read at their 256
 * tokens it would give its last value, 12). */
Test(tokens, batch_table_ignores_tokens)
{
    scenario_cfg c;
    flow_scenario(&c, 4, 8, 729, 64);
    table2(&c.stages[2], 1, 5, 8, 12);
    c.stages[2].table.by_tokens = false;
    rep_stats rs;
    rep1(&c, &rs);
    expect_uniform_batches("batch table, k=4", 4, 4, 8.0, 1.0, &rs);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- 2. the scene-change sampler ------------------------------------------- */

/* Per frame: lam_t = lambda T (expected changes per frame interval). */
typedef struct {
    double lam_t;
    int burst;
    double ratio;
} scene_par;

static scene_par scene_of(double per_min, int burst, double fps, double ratio)
{
    scene_par s = { per_min / 60.0 / fps, burst, ratio };
    return s;
}

/* P(a frame is kept) = 1 - P(not kept); not kept = no change in the B
 * intervals before it (q) and not picked by the ratio. */
static double kept_prob(scene_par s)
{
    double q = exp(-s.lam_t * s.burst);
    return 1.0 - q * (1.0 - s.ratio);
}

/* Variance of the kept count of one stream over n consecutive frames.
 * With Z_k = 1 - kept_k: E Z_k = q (1 - r), and for 0 < d < B,
 * E Z_k Z_{k+d} = exp(-lambda (B + d) T) (1 - r)^2 (no change in the union of
 * the two windows, neither picked); for d >= B the windows are disjoint and
 * the two independent. Var = sum over pairs of the covariances. */
static double kept_var(scene_par s, double n)
{
    double z = exp(-s.lam_t * s.burst) * (1.0 - s.ratio);
    double v = n * z * (1.0 - z);
    for (int d = 1; d < s.burst && d < n; d++) {
        double both = exp(-s.lam_t * (s.burst + d)) * (1.0 - s.ratio) * (1.0 - s.ratio);
        v += 2.0 * (n - d) * (both - z * z);
    }
    return v;
}

/* One stage "sample" on workers (one server per stream, 1 ms: no queueing,
 * so each stream's frames leave it exactly T apart) with keep {ratio,
 * scene_change}; random phases; warm-up 5 s (longer than a burst). */
static void sampler_scenario(scenario_cfg *c, int streams, double fps, double per_min,
                             int burst, double ratio, double duration_s, uint64_t seed)
{
    kit_base(c, "scene-test", seed, 1, 0, 5.0, duration_s, 1);
    periodic(c, streams, fps);
    c->workload.phase = PHASE_RANDOM;
    stage_cfg *st = on_workers(c, 0, "sample", streams, 1.0);
    st->keep = KEEP_RATIO;
    st->keep_ratio = ratio;
    st->scene_per_min = per_min;
    st->scene_burst = burst;
}

/* Run it and check the kept fraction against kept_prob within 4 sd. */
static void expect_kept_fraction(const char *what, int streams, double fps, double per_min,
                                 int burst, double ratio, double duration_s, uint64_t seed)
{
    scenario_cfg c;
    sampler_scenario(&c, streams, fps, per_min, burst, ratio, duration_s, seed);
    rep_stats rs;
    rep1(&c, &rs);
    const stage_stats *st = &rs.stage[0];
    scene_par s = scene_of(per_min, burst, fps, ratio);
    double n = (double)st->completed;                  /* frames the sampler decided on */
    double per_stream = n / streams;
    double want = kept_prob(s);
    double sd = sqrt(streams * kept_var(s, per_stream)) / n;
    double kept = (double)(st->completed - st->sampled_out);
    double got = kept / n;
    char b[160];
    snprintf(b, sizeof b, "%s: frames decided (streams x fps x duration)", what);
    near(b, n, streams * fps * duration_s, 1e-3);
    count("kept frames leave the last stage", rs.completed, st->completed - st->sampled_out);
    count("sampled_out, system-wide", rs.sampled_out, st->sampled_out);
    if (verbose())
        printf("  %-52s want %.6f +- %.6f (4 sd) got %.6f (linear approx %.6f)\n", what, want,
               4 * sd, got, ratio + (1 - ratio) * per_min * burst / (60.0 * fps));
    cr_expect(fabs(got - want) <= 4 * sd, "%s: kept fraction %.6f, want %.6f +- %.6f (4 sd)",
              what, got, want, 4 * sd);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Rare changes: 100 streams at 10 fps, 2 changes a minute, bursts of 10,
 * ratio 1e-9 (effectively none). lambda B T = 2 x 10 / 600 = 1/30:
 * kept = 1 - e^(-1/30) = 0.032784 (the linear 1/30 = 0.0333 is within 2 %).
 * 600 000 frames; 4 sd ~ 9 % of the value. */
Test(tokens, scene_kept_fraction_rare_changes)
{
    expect_kept_fraction("rare: 2/min, burst 10, 10 fps", 100, 10.0, 2.0, 10, 1e-9, 600.0, 21);
}

/* Overlapping bursts: 30 changes a minute, bursts of 10 at 10 fps: lambda B
 * T = 0.5, so kept = 1 - e^-0.5 = 0.393469, far from the non-overlapping
 * 0.5 (a change inside a burst restarts it, it does not add a burst).
 * 50 streams x 300 s = 150 000 frames; 4 sd ~ 3 % of the value. */
Test(tokens, scene_kept_fraction_overlapping_bursts)
{
    expect_kept_fraction("overlapping: 30/min, burst 10, 10 fps", 50, 10.0, 30.0, 10, 1e-9,
                         300.0, 22);
}

/* Bursts and a ratio together: the other frames are kept with probability
 * 0.2: 0.393469 + 0.2 x 0.606531 = 0.514775. */
Test(tokens, scene_kept_fraction_with_ratio)
{
    expect_kept_fraction("burst + ratio 0.2: 30/min, burst 10, 10 fps", 50, 10.0, 30.0, 10, 0.2,
                         300.0, 23);
}

/* Streams are independent: with 15 fps, 6 changes a minute and bursts of
 * 25, lambda B T = 6 x 25 / 900 = 1/6 and kept = 1 - e^(-1/6) = 0.153518 per
 * stream, whatever the number of streams (a process shared by all streams
 * would keep about 1/streams of that). */
Test(tokens, scene_kept_fraction_per_stream)
{
    expect_kept_fraction("per stream: 6/min, burst 25, 15 fps", 40, 15.0, 6.0, 25, 1e-9, 200.0,
                         24);
}

/* Runs of consecutive kept frames, seen as batches. One stream at 10 fps
 * (T = 100 ms), one change a minute, bursts of B = 10, ratio 1e-9: kept
 * frames come in runs of exactly B unless a second change falls within a
 * run. A GPU stage after the sampler (max_batch 2B, batch timeout
 * (B - 1/2) T = 950 ms, 1 ms per batch) turns a run into batches: the run's
 * head waits 950 ms, by when exactly its first B frames (t0 .. t0 + 9T)
 * have arrived, so a run of exactly B is one batch of B, and a run of L
 * frames is floor(L/B) batches of B and one of L mod B (if not 0).
 *
 * The run length L: a run starts at a change (frame 0); each later frame
 * interval holds a change with probability s = 1 - f, f = e^(-lambda T);
 * the run ends at the first frame i >= B with no change in intervals
 * i-B+1 .. i, so L = W, the waiting time for B changeless intervals in a
 * row:  P(W = B) = f^B,  P(W = l) = s f^B P(W > l - B - 1)  for l > B.
 * A run starts at a frame with probability s f^B (a change before it, none
 * in the B intervals before that). Expected, per n frames:
 *   runs = n s f^B,  batches of B = runs E[floor(L/B)],
 *   other batches = runs P(L mod B != 0),  kept = n (1 - f^B).
 * (A remainder batch can absorb the next run if it starts within its
 * timeout: probability O((lambda B T)^2) per run, below the tolerance.) */
Test(tokens, scene_bursts_are_runs_of_burst_frames)
{
    const int B = 10;
    const double fps = 10.0, per_min = 1.0, T = 1000.0 / fps;
    scenario_cfg c;
    kit_base(&c, "scene-runs", 31, 2, 1, 5.0, 30000.0, 1);
    periodic(&c, 1, fps);
    stage_cfg *smp = on_workers(&c, 0, "sample", 1, 1.0);
    smp->keep = KEEP_RATIO;
    smp->keep_ratio = 1e-9;
    smp->scene_per_min = per_min;
    smp->scene_burst = B;
    on_gpu(&c, 1, "runs", 2 * B, (B - 0.5) * T, 1.0);
    rep_stats rs;
    rep1(&c, &rs);

    /* the run-length distribution, by the recursion above */
    double lam_t = per_min / 60.0 / fps, f = exp(-lam_t), s = 1.0 - f, fB = pow(f, B);
    enum { LMAX = 4000 };
    static double a[LMAX + 1];
    double cum = 0, e_full = 0, p_rem = 0, e_len = 0;
    for (int l = 0; l <= LMAX; l++) {
        a[l] = 0;
        if (l == B)
            a[l] = fB;
        else if (l > B) {
            double below = 0;                     /* P(W <= l - B - 1) */
            for (int m = B; m <= l - B - 1; m++)
                below += a[m];
            a[l] = s * fB * (1.0 - below);
        }
        cum += a[l];
        e_full += a[l] * (l / B);
        p_rem += l % B ? a[l] : 0;
        e_len += a[l] * l;
        if (l > 2 * B && 1.0 - cum < 1e-14)
            break;
    }
    cr_assert(1.0 - cum < 1e-12, "run-length distribution truncated: mass %.15g", cum);
    near("E[L] by the recursion = (1 - f^B) / (s f^B)", e_len, (1.0 - fB) / (s * fB), 1e-9);

    const stage_stats *sst = &rs.stage[0], *gst = &rs.stage[1];
    double n = (double)sst->completed;
    double kept = (double)(sst->completed - sst->sampled_out);
    double runs = n * s * fB;
    double want_full = runs * e_full, want_rem = runs * p_rem;
    double kept_sd = sqrt(kept_var(scene_of(per_min, B, fps, 1e-9), n));
    if (verbose())
        printf("  runs: frames %.0f kept %.0f (want %.1f +- %.1f), runs %.1f, batches of %d: "
               "%llu (want %.1f), other batches %llu (want %.2f), mean run %.4f\n",
               n, kept, n * (1 - fB), 4 * kept_sd, runs, B,
               (unsigned long long)gst->batch_counts[B], want_full,
               (unsigned long long)(gst->batches - gst->batch_counts[B]), want_rem, e_len);

    cr_expect(fabs(kept - n * (1 - fB)) <= 4 * kept_sd, "kept %.0f, want %.1f +- %.1f",
              kept, n * (1 - fB), 4 * kept_sd);
    /* every kept frame reaches the GPU stage in a batch (a run cut by the
     * ends of the window aside) */
    uint64_t batched = 0;
    for (int k = 1; k <= 2 * B; k++)
        batched += (uint64_t)k * gst->batch_counts[k];
    cr_expect(fabs((double)batched - kept) <= 2 * B, "batched frames %llu, kept %.0f",
              (unsigned long long)batched, kept);
    for (int k = B + 1; k <= 2 * B; k++)
        count("no batch beyond B (a run's head waits (B - 1/2) T)", gst->batch_counts[k], 0);
    /* runs of exactly B: the count is about Poisson(runs): 4 sd */
    double full = (double)gst->batch_counts[B];
    cr_expect(fabs(full - want_full) <= 4 * sqrt(want_full),
              "batches of %d: %.0f, want %.1f +- %.1f", B, full, want_full, 4 * sqrt(want_full));
    double rem = (double)(gst->batches - gst->batch_counts[B]);
    cr_expect(fabs(rem - want_rem) <= 4 * sqrt(want_rem) + 1,
              "batches of other sizes: %.0f, want %.2f", rem, want_rem);
    /* the share of batches that are whole bursts, binomial 4 sd */
    double share = full / (double)gst->batches, want_share = e_full / (e_full + p_rem);
    cr_expect(fabs(share - want_share)
              <= 4 * sqrt(want_share * (1 - want_share) / (double)gst->batches) + 1e-3,
              "share of whole-burst batches %.4f, want %.4f", share, want_share);
    /* the mean batch: kept / batches against E[L] / E[batches per run] */
    near("mean batch size", kept / (double)gst->batches, e_len / (e_full + p_rem), 0.02);
    pipe_stats_free(&rs);
    cfg_free(&c);
}
