/* test_jitter.c — the jitter sources (network retransmits, GOP structure
 * with B-frame reordering, prefix-cache misses) against hand computation
 * and closed forms.
 *
 * Scenarios are built here in C. Most run one replication with pipe_run, so
 * counts are exact: periodic streams with aligned phases make frame numbers
 * (and so GOP positions) exact, and a frame interval longer than the
 * longest sojourn with a server per stream means no frame ever waits and
 * every frame that arrives in the window also completes in it. Random
 * effects (a loss, a miss) are then checked as binomial counts: within 5
 * standard deviations of n p, where p is worked out below from the model;
 * means within 5 standard errors of the closed form. Seeds are fixed, so
 * every run checks the same cases; the bounds are wide enough that another
 * seed passes too (JT_SEED_SHIFT=k adds k to the seed, for such studies;
 * JT_VERBOSE=1 prints each comparison). None of the expected values comes
 * from the simulator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/config.h"
#include "models/dist.h"
#include "models/pipeline.h"
#include "models/run.h"
#include "sim/hist.h"

#define ZSIG 5.0        /* binomial counts and means: within this many sd */

/* ---- building scenarios ------------------------------------------------- */

/* n stages named names[0..n-1], all defaults; one replication, no warm-up. */
static void scn_make(scenario_cfg *c, int n, const char *const *names, double duration_s)
{
    cfg_defaults(c);
    snprintf(c->name, sizeof c->name, "jitter-test");
    const char *shift = getenv("JT_SEED_SHIFT");   /* seed studies only */
    c->seed = 20240611 + (shift ? strtoull(shift, NULL, 10) : 0);
    c->duration_s = duration_s;
    c->warmup_s = 0;
    c->replications = 1;
    c->stages = calloc((size_t)n, sizeof *c->stages);
    cr_assert_not_null(c->stages);
    c->nstages = n;
    for (int s = 0; s < n; s++)
        cfg_stage_defaults(&c->stages[s], names[s]);
}

/* streams periodic sources at fps, all with their first frame at t = 0. */
static void aligned(scenario_cfg *c, int streams, double fps)
{
    c->workload.arrival = ARRIVAL_PERIODIC;
    c->workload.streams = streams;
    c->workload.fps = fps;
    c->workload.jitter_ms = 0;
    c->workload.phase = PHASE_ALIGNED;
}

static void poisson(scenario_cfg *c, double rate_hz)
{
    c->workload.arrival = ARRIVAL_POISSON;
    c->workload.rate_hz = rate_hz;
}

static void constant(stage_cfg *st, double ms)
{
    const char *e = dist_init_constant(&st->service, ms);
    cr_assert_null(e, "dist_init_constant: %s", e);
}

/* One replication (replication 0) into *rs, which the caller frees. */
static void one_rep(const scenario_cfg *c, rep_stats *rs)
{
    char err[256] = "";
    cr_assert_eq(pipe_stats_init(rs, c), 0);
    cr_assert_eq(pipe_run(c, 0, c->warmup_s * 1000.0, NULL, rs, err, sizeof err), 0,
                 "pipe_run: %s", err);
}

/* ---- reading histograms --------------------------------------------------- */

/* JT_VERBOSE=1 prints every statistical comparison to stdout. */
static int verbose(void)
{
    const char *v = getenv("JT_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* Values recorded in the bucket that holds v (1/1024 of a power of two
 * wide: here only values equal to v land there). */
static uint64_t count_at(const hist_t *h, double v)
{
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++)
        if (hist_bucket_lower(i) <= v && v < hist_bucket_upper(i))
            return h->counts[i];
    return 0;
}

/* A quantile from the log-linear histogram: within its 0.05 % bucket error. */
static void expect_quantile(const char *what, const hist_t *h, double q, double want)
{
    double got = hist_quantile(h, q);
    if (verbose())
        printf("  %-40s q%-7.4g %.6f  want %.6f\n", what, q, got, want);
    cr_expect(fabs(got - want) <= 1e-3 * want, "%s: q%.4g = %.6g, want %.6g", what, q, got, want);
}

/* count of n trials with probability p: within ZSIG binomial sd of n p. */
static void expect_binomial(const char *what, uint64_t count, uint64_t n, double p)
{
    double mu = (double)n * p, sd = sqrt((double)n * p * (1 - p));
    if (verbose())
        printf("  %-40s %8llu of %8llu = %.6f  want %.6f  z %+5.2f\n", what,
               (unsigned long long)count, (unsigned long long)n, (double)count / (double)n, p,
               ((double)count - mu) / sd);
    cr_expect(fabs((double)count - mu) <= ZSIG * sd,
              "%s: %llu of %llu (%.5f), want p = %.5f (n p = %.1f, sd %.1f)",
              what, (unsigned long long)count, (unsigned long long)n, (double)count / (double)n,
              p, mu, sd);
}

/* A sample mean of n values with standard deviation sd: within ZSIG se of want. */
static void expect_mean(const char *what, double mean, uint64_t n, double sd, double want)
{
    double se = sd / sqrt((double)n);
    if (verbose())
        printf("  %-40s mean %.6f  want %.6f  se %.4f  z %+5.2f\n", what, mean, want, se,
               (mean - want) / se);
    cr_expect(fabs(mean - want) <= ZSIG * se, "%s: mean %.6f, want %.6f (se %.4f)",
              what, mean, want, se);
}

static void expect_rel(const char *what, double got, double want, double rel)
{
    cr_expect(fabs(got - want) <= rel * fabs(want), "%s: %.12g, want %.12g", what, got, want);
}

/* ---- retransmit -------------------------------------------------------------- */

/* 1000 cameras at 5 FPS, aligned: 1000 frames every 200 ms; 1000 servers,
 * so no frame waits, and the longest service (10 + 3 x 40 = 130 ms) ends
 * before the next frame of its stream: every frame of the 40 s window
 * completes in it. n = 1000 x 200 = 200 000 frames. */
Test(jitter, retransmit_on_worker_stage)
{
    static const char *const names[] = {"capture"};
    const int streams = 1000;
    const double fps = 5, dur = 40, base = 10, loss = 0.1, rtt = 40;
    scenario_cfg c;
    scn_make(&c, 1, names, dur);
    aligned(&c, streams, fps);
    stage_cfg *st = &c.stages[0];
    st->servers = streams;
    constant(st, base);
    st->retransmit = (retransmit_cfg){.loss = loss, .rtt_ms = rtt, .max_retries = 3};

    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    const uint64_t n = (uint64_t)streams * (uint64_t)(dur * fps);     /* 200 000 */
    cr_assert_eq(s->arrivals, n);
    cr_assert_eq(s->completed, n);
    cr_expect_eq(s->waited, 0);
    cr_expect_eq(s->wait.max, 0);

    /* K retransmissions: P(K >= k) = loss^k for k <= 3, so
     * P(K = 0, 1, 2) = loss^k (1 - loss) and P(K = 3) = loss^3. */
    double pk[4], mean = base, m2 = 0;
    for (int k = 0; k < 4; k++)
        pk[k] = pow(loss, k) * (k < 3 ? 1 - loss : 1);
    for (int k = 1; k <= 3; k++)
        mean += rtt * pow(loss, k);                   /* 10 + 40 (0.1 + 0.01 + 0.001) */
    for (int k = 0; k < 4; k++)
        m2 += pk[k] * (base + k * rtt) * (base + k * rtt);
    double sd = sqrt(m2 - mean * mean);
    expect_rel("closed-form mean", mean, 14.44, 1e-12);

    uint64_t total = 0;
    for (int k = 0; k < 4; k++) {
        char what[64];
        uint64_t got = count_at(&s->service, base + k * rtt);
        snprintf(what, sizeof what, "frames with %d retransmissions", k);
        expect_binomial(what, got, n, pk[k]);
        total += got;
    }
    cr_expect_eq(total, n, "service times other than 10, 50, 90, 130 ms: %llu of %llu",
                 (unsigned long long)(n - total), (unsigned long long)n);
    expect_mean("service", hist_mean(&s->service), n, sd, mean);
    expect_rel("sojourn = service (no waiting)", hist_mean(&s->sojourn), hist_mean(&s->service), 1e-12);
    cr_expect_eq(s->service.min, base);
    cr_expect_eq(s->service.max, base + 3 * rtt);     /* 130: the cap of 3 retries */

    /* Nearest rank: P(S <= 10) = 0.9, <= 50: 0.99, <= 90: 0.999, <= 130: 1.
     * p90, p99 and p99.9 sit exactly on those steps (knife edges); these
     * quantiles are well inside one step each. */
    expect_quantile("service", &s->service, 0.50, 10);
    expect_quantile("service", &s->service, 0.95, 50);
    expect_quantile("service", &s->service, 0.995, 90);
    expect_quantile("service", &s->service, 0.9995, 130);
    double p999 = hist_quantile(&s->service, 0.999);
    cr_expect(p999 >= 90 * (1 - 1e-3) && p999 <= 130 * (1 + 1e-3),
              "service p99.9 = %.6g, want 90 or 130 (the step at 0.999)", p999);

    /* Busy time is the service times: utilization = sum / (servers x window),
     * and about rate x mean service / servers = 5000 Hz x 14.44 ms / 1000. */
    double window = dur * 1000;
    expect_rel("utilization = busy / (servers x window)", s->utilization,
               s->service.sum / (streams * window), 1e-9);
    double rate_hz = streams * fps;
    cr_expect(fabs(s->utilization - rate_hz * mean / 1000 / streams)
              <= ZSIG * rate_hz * sd / sqrt((double)n) / 1000 / streams,
              "utilization %.6f, want %.6f", s->utilization, rate_hz * mean / 1000 / streams);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* max_retries caps the tail: loss 0.5 with one retry gives 10 or 50 ms,
 * half each (a second loss is not resent). 200 streams x 200 frames. */
Test(jitter, retransmit_capped_by_max_retries)
{
    static const char *const names[] = {"capture"};
    const int streams = 200;
    const double fps = 5, dur = 40;
    scenario_cfg c;
    scn_make(&c, 1, names, dur);
    aligned(&c, streams, fps);
    stage_cfg *st = &c.stages[0];
    st->servers = streams;
    constant(st, 10);
    st->retransmit = (retransmit_cfg){.loss = 0.5, .rtt_ms = 40, .max_retries = 1};

    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    const uint64_t n = 200 * 200;
    cr_assert_eq(s->completed, n);
    uint64_t at10 = count_at(&s->service, 10), at50 = count_at(&s->service, 50);
    cr_expect_eq(at10 + at50, n);
    cr_expect_eq(s->service.max, 50);
    expect_binomial("frames resent once", at50, n, 0.5);
    expect_mean("service", hist_mean(&s->service), n, 20, 10 + 40 * 0.5);   /* sd = 40 x 0.5 */
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- GOP --------------------------------------------------------------------- */

/* 8 aligned streams at 10 FPS for 15 s: frames 0..149 of each stream, ten
 * whole GOPs of 15. Decode: constant 2 ms (its gop is the caller's); 16
 * servers, so nothing waits. A second stage (1 ms) follows. gop_run: the
 * I-frames x3 (6 ms). Everything is deterministic: the last frame (149, at
 * 14.9 s) leaves by 14.9 s + 33 ms. */
static stage_cfg *gop_scenario(scenario_cfg *c)
{
    static const char *const names[] = {"decode", "next"};
    scn_make(c, 2, names, 15);
    aligned(c, 8, 10);
    stage_cfg *dec = &c->stages[0], *nx = &c->stages[1];
    dec->servers = 16;
    constant(dec, 2);
    nx->servers = 16;
    constant(nx, 1);
    return dec;
}

static void gop_run(int b_frames, double reorder_ms, rep_stats *rs, scenario_cfg *c)
{
    stage_cfg *dec = gop_scenario(c);
    dec->gop = (gop_cfg){.length = 15, .i_factor = 3, .b_frames = b_frames, .reorder_ms = reorder_ms};
    one_rep(c, rs);
}

Test(jitter, gop_i_frames)
{
    scenario_cfg c;
    rep_stats rs;
    gop_run(0, 0, &rs, &c);
    const stage_stats *s = &rs.stage[0];
    const uint64_t n = 8 * 150, gops = 8 * 10;
    cr_assert_eq(s->arrivals, n);
    cr_assert_eq(s->completed, n);
    cr_assert_eq(rs.completed, n);
    cr_expect_eq(s->waited, 0);
    /* one I-frame (6 ms) and 14 P-frames (2 ms) per GOP */
    cr_expect_eq(count_at(&s->service, 6), gops);
    cr_expect_eq(count_at(&s->service, 2), 14 * gops);
    double mean_svc = 2.0 * (14 + 3) / 15;            /* 2.2667 ms */
    expect_rel("service mean", hist_mean(&s->service), mean_svc, 1e-12);
    expect_rel("sojourn mean (no B-frames: no hold)", hist_mean(&s->sojourn), mean_svc, 1e-12);
    cr_expect_eq(s->sojourn.max, 6);
    expect_rel("e2e mean", hist_mean(&rs.e2e), mean_svc + 1, 1e-12);
    /* 80 frames/s x 2.2667 ms over 16 servers */
    expect_rel("utilization", s->utilization, 8 * 10 * mean_svc / 1000 / 16, 1e-9);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The same run with the I-frames drawn from their own distribution (a
 * constant 7 ms) instead of 3 x the P-frame time: one 7 ms and 14 2 ms
 * frames per GOP, nothing waits. */
Test(jitter, gop_i_frames_own_distribution)
{
    scenario_cfg c;
    rep_stats rs;
    stage_cfg *dec = gop_scenario(&c);
    dec->gop = (gop_cfg){.length = 15, .i_factor = 3, .has_i_service = true};
    const char *e = dist_init_constant(&dec->gop.i_service, 7);
    cr_assert_null(e, "%s", e);
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    const uint64_t gops = 8 * 10;
    cr_assert_eq(s->completed, 8 * 150);
    cr_expect_eq(s->waited, 0);
    cr_expect_eq(count_at(&s->service, 7), gops);
    cr_expect_eq(count_at(&s->service, 6), 0, "i_factor is not used with i_service");
    cr_expect_eq(count_at(&s->service, 2), 14 * gops);
    expect_rel("service mean", hist_mean(&s->service), (14 * 2.0 + 7) / 15, 1e-12);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The clip's content: frame k costs content[k mod 3] = [1, 2, 0.5] times
 * its draw. GOP 15 (a multiple of 3), so every I-frame (k = 0, 15, ...) sits
 * at factor 1: 6 ms. Of each stream's 150 frames, the 50 with k mod 3 = 0
 * are its 10 I-frames and 40 P-frames at 2 ms; 50 at 2 x 2 = 4 ms; 50 at
 * 2 x 0.5 = 1 ms. 16 servers: nothing waits. */
Test(jitter, gop_content_by_frame)
{
    static const double content[] = {1, 2, 0.5};
    scenario_cfg c;
    rep_stats rs;
    stage_cfg *dec = gop_scenario(&c);
    dec->gop = (gop_cfg){.length = 15, .i_factor = 3, .ncontent = 3,
                         .content = malloc(sizeof content)};
    cr_assert_not_null(dec->gop.content);
    memcpy(dec->gop.content, content, sizeof content);
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    cr_assert_eq(s->completed, 8 * 150);
    cr_expect_eq(s->waited, 0);
    cr_expect_eq(count_at(&s->service, 6), 8 * 10);
    cr_expect_eq(count_at(&s->service, 2), 8 * 40);
    cr_expect_eq(count_at(&s->service, 4), 8 * 50);
    cr_expect_eq(count_at(&s->service, 1), 8 * 50);
    expect_rel("service mean", hist_mean(&s->service), (10 * 6 + 40 * 2 + 50 * 4 + 50 * 1) / 150.0,
               1e-12);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

Test(jitter, gop_b_frames_held_for_reordering)
{
    scenario_cfg c;
    rep_stats rs;
    const double hold = 30;
    gop_run(2, hold, &rs, &c);
    const stage_stats *s = &rs.stage[0], *nx = &rs.stage[1];
    const uint64_t n = 8 * 150, gops = 8 * 10;
    cr_assert_eq(s->completed, n);
    cr_assert_eq(nx->completed, n);
    cr_assert_eq(rs.completed, n);
    cr_expect_eq(s->waited, 0);
    cr_expect_eq(nx->waited, 0);
    /* Positions k = 1..14 with k % 3 != 0 are B-frames (1 2 4 5 7 8 10 11 13 14:
     * ten), k = 3 6 9 12 are P-frames, k = 0 the I-frame. */
    int nb = 0;
    for (int k = 1; k < 15; k++)
        nb += k % 3 != 0;
    cr_assert_eq(nb, 10);
    /* service excludes the hold: unchanged */
    double mean_svc = 2.0 * (14 + 3) / 15;
    cr_expect_eq(count_at(&s->service, 6), gops);
    cr_expect_eq(count_at(&s->service, 2), 14 * gops);
    expect_rel("service mean", hist_mean(&s->service), mean_svc, 1e-12);
    cr_expect_eq(s->service.max, 6);
    /* sojourn: I 6 ms, P 2 ms, B 2 + 30 ms */
    cr_expect_eq(count_at(&s->sojourn, 6), gops);
    cr_expect_eq(count_at(&s->sojourn, 2), 4 * gops);
    cr_expect_eq(count_at(&s->sojourn, 32), 10 * gops);
    double mean_soj = mean_svc + hold * nb / 15;       /* 2.2667 + 20 */
    expect_rel("sojourn mean", hist_mean(&s->sojourn), mean_soj, 1e-12);
    expect_quantile("sojourn", &s->sojourn, 0.5, 32);  /* P(<= 6) = 5/15 < 0.5 */
    cr_expect_eq(s->sojourn.max, 32);
    cr_expect_eq(s->wait.max, 0);
    /* the next stage sees every frame, B-frames 30 ms later */
    expect_rel("next stage sojourn", hist_mean(&nx->sojourn), 1, 1e-12);
    expect_rel("e2e mean", hist_mean(&rs.e2e), mean_soj + 1, 1e-12);
    /* the hold does not occupy a decoder: utilization = rate x mean service / servers */
    expect_rel("utilization", s->utilization, 8 * 10 * mean_svc / 1000 / 16, 1e-9);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A B-frame held at a single decoder frees it at once: with one server and
 * one stream at 10 FPS the decoder is never found busy. */
Test(jitter, gop_hold_frees_the_decoder)
{
    static const char *const names[] = {"decode"};
    scenario_cfg c;
    scn_make(&c, 1, names, 15);
    aligned(&c, 1, 10);
    stage_cfg *dec = &c.stages[0];
    constant(dec, 2);
    dec->gop = (gop_cfg){.length = 15, .i_factor = 3, .b_frames = 2, .reorder_ms = 250};
    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    /* Frames 0..149 arrive at 100 k ms. A B-frame leaves 2 + 250 ms after
     * arriving, so it is done in the 15 s window when 100 k + 252 < 15000,
     * k <= 147. The last B-frames, 148 and 149 (positions 13 and 14), are
     * still held at the end; 147 (position 12) is a P-frame. If the hold
     * kept the decoder, the frame 100 ms after a B-frame would wait. */
    cr_expect_eq(s->arrivals, 150);
    cr_expect_eq(s->completed, 148);
    cr_expect_eq(s->waited, 0);
    expect_rel("utilization", s->utilization, 10 * (2.0 * (14 + 3) / 15) / 1000, 1e-9);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- cache misses ------------------------------------------------------------ */

/* A miss adds ms_per_token x context_tokens = 0.01 x 1000 = 10 ms. */
static void miss(stage_cfg *st)
{
    st->cache_miss = (cache_miss_cfg){.prob = 0.2, .ms_per_token = 0.01, .context_tokens = 1000};
}

/* One GPU, batches of one, a table of one point {1: 10 ms}, no batch
 * timeout; Poisson at 20 Hz for 5000 s (load 0.24): service is 10 or
 * 20 ms, mean 10 + 0.2 x 10 = 12 ms, sd 10 x sqrt(0.2 x 0.8) = 4 ms. */
Test(jitter, cache_miss_on_gpu_stage)
{
    static const char *const names[] = {"llm_prefill"};
    const double rate = 20, dur = 5000;
    scenario_cfg c;
    scn_make(&c, 1, names, dur);
    poisson(&c, rate);
    c.cluster.gpus = 1;
    stage_cfg *st = &c.stages[0];
    st->on = RES_GPU;
    st->max_batch = 1;
    st->batch_timeout_ms = 0;
    st->has_table = true;
    st->table.n = 1;
    st->table.batch[0] = 1;
    st->table.ms[0] = 10;
    miss(st);

    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    uint64_t n = s->completed;
    cr_assert(n > 90000, "completed %llu", (unsigned long long)n);
    uint64_t at10 = count_at(&s->service, 10), at20 = count_at(&s->service, 20);
    cr_expect_eq(at10 + at20, n);
    cr_expect(s->batches == n || s->batches == n + 1,     /* + the one running at the end */
              "%llu batches for %llu frames", (unsigned long long)s->batches, (unsigned long long)n);
    expect_binomial("frames with a cache miss", at20, n, 0.2);
    expect_mean("service", hist_mean(&s->service), n, 4, 12);
    cr_expect_eq(s->service.max, 20);
    cr_expect_eq(s->service.min, 10);
    /* GPU busy = the completed service times plus the part of the batch
     * still running at the end (at most 20 ms); ~ 20 Hz x 12 ms */
    double extra = s->utilization * dur * 1000 - s->service.sum;
    cr_expect(extra >= -1e-6 && extra <= 20 + 1e-6, "busy time - completed service = %.6f ms", extra);
    expect_rel("utilization", s->utilization, rate * 12 / 1000, 0.03);
    expect_rel("gpu utilization", rs.gpu[0].utilization, s->utilization, 1e-9);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Every frame of a batch may miss: a batch of 4 (table {1: 10, 4: 16})
 * takes 16 + 10 M ms with M ~ Binomial(4, 0.2), so a frame's service has
 * mean 16 + 4 x 0.2 x 10 = 24 ms and P(16 ms) = 0.8^4. Four aligned streams
 * at 10 FPS and a 1 ms batch timeout make every batch exactly four frames. */
Test(jitter, cache_miss_per_frame_of_a_batch)
{
    static const char *const names[] = {"llm_prefill"};
    const double dur = 2000;
    scenario_cfg c;
    scn_make(&c, 1, names, dur);
    aligned(&c, 4, 10);
    c.cluster.gpus = 1;
    stage_cfg *st = &c.stages[0];
    st->on = RES_GPU;
    st->max_batch = 4;
    st->batch_timeout_ms = 1;
    st->has_table = true;
    st->table.n = 2;
    st->table.batch[0] = 1;
    st->table.ms[0] = 10;
    st->table.batch[1] = 4;
    st->table.ms[1] = 16;
    miss(st);

    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    const uint64_t batches = (uint64_t)(dur * 10), n = 4 * batches;   /* all done: <= 56 ms < 100 */
    cr_assert_eq(s->completed, n);
    cr_assert_eq(s->batches, batches);
    cr_expect_eq(s->batch_counts[4], batches);
    cr_expect_eq(s->waited, 0);
    uint64_t total = 0;
    for (int m = 0; m <= 4; m++) {
        /* frames in batches with m misses: 4 x Binomial(batches, P(M = m)) */
        double pm = gsl_ran_binomial_pdf((unsigned)m, 0.2, 4);
        uint64_t frames = count_at(&s->service, 16 + 10.0 * m);
        cr_expect_eq(frames % 4, 0);
        char what[64];
        snprintf(what, sizeof what, "batches with %d misses", m);
        expect_binomial(what, frames / 4, batches, pm);
        total += frames;
    }
    cr_expect_eq(total, n);
    /* per batch sd of 10 M = 10 sqrt(4 x 0.2 x 0.8) = 8 ms */
    expect_mean("service", hist_mean(&s->service), batches, 8, 16 + 4 * 0.2 * 10);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* On a worker stage: constant 5 ms + 10 ms on a miss, mean 7 ms; 1000
 * aligned streams at 5 FPS on 1000 servers, 200 000 frames. */
Test(jitter, cache_miss_on_worker_stage)
{
    static const char *const names[] = {"llm_prefill"};
    const int streams = 1000;
    scenario_cfg c;
    scn_make(&c, 1, names, 40);
    aligned(&c, streams, 5);
    stage_cfg *st = &c.stages[0];
    st->servers = streams;
    constant(st, 5);
    miss(st);

    rep_stats rs;
    one_rep(&c, &rs);
    const stage_stats *s = &rs.stage[0];
    const uint64_t n = 1000 * 200;
    cr_assert_eq(s->completed, n);
    cr_expect_eq(s->waited, 0);
    uint64_t at5 = count_at(&s->service, 5), at15 = count_at(&s->service, 15);
    cr_expect_eq(at5 + at15, n);
    expect_binomial("frames with a cache miss", at15, n, 0.2);
    expect_mean("service", hist_mean(&s->service), n, 4, 7);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* ---- common random numbers ------------------------------------------------- */

/* capture (10 ms, 64 servers) -> decode (exponential, mean 2 ms, one
 * server), four aligned streams at 4 FPS: every frame completes well within
 * its 250 ms interval, so both runs see the same frames. One decoder serves
 * in draw order, so its service times are the same draws, recorded in the
 * same order, whether or not capture loses frames. */
static void crn_run(bool retransmit, run_result *r, scenario_cfg *c)
{
    static const char *const names[] = {"capture", "decode"};
    scn_make(c, 2, names, 100);
    c->replications = 3;
    aligned(c, 4, 4);
    stage_cfg *cap = &c->stages[0], *dec = &c->stages[1];
    cap->servers = 64;
    constant(cap, 10);
    if (retransmit)
        cap->retransmit = (retransmit_cfg){.loss = 0.1, .rtt_ms = 40, .max_retries = 3};
    const char *e = dist_init_exponential(&dec->service, 2);
    cr_assert_null(e, "%s", e);
    run_opts o = {2, NULL, NULL, NULL};
    char err[256] = "";
    cr_assert_eq(run_scenario(c, &o, r, err, sizeof err), 0, "run_scenario: %s", err);
}

Test(jitter, retransmit_leaves_other_stages_draws_alone)
{
    scenario_cfg ca, cb;
    run_result a, b;
    crn_run(false, &a, &ca);
    crn_run(true, &b, &cb);
    cr_assert_eq(a.stage[0].arrivals, b.stage[0].arrivals);
    cr_assert_eq(a.stage[1].completed, b.stage[1].completed);
    cr_expect_eq(a.stage[1].completed, 3 * 4 * 400);
    /* capture did change: its mean service went from 10 to about 14.44 ms */
    cr_expect_eq(a.stage[0].service.mean.mean, 10);
    cr_expect(b.stage[0].service.mean.mean > 12, "capture mean %.4f", b.stage[0].service.mean.mean);
    /* decode's service estimates are bit-for-bit the same */
    cr_expect(memcmp(&a.stage[1].service, &b.stage[1].service, sizeof a.stage[1].service) == 0,
              "decode service changed: mean %.17g vs %.17g, p99 %.17g vs %.17g",
              a.stage[1].service.mean.mean, b.stage[1].service.mean.mean,
              a.stage[1].service.p99.mean, b.stage[1].service.p99.mean);
    run_result_free(&a);
    run_result_free(&b);
    cfg_free(&ca);
    cfg_free(&cb);
}
