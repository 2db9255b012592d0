/* test_realpipe.c — the non-timing parts of the real-pipeline experiment
 * (issue 7, calib/realpipe): the span file (write, read back, errors), the
 * percentiles, drop rate and relative error computed from a hand-made span
 * set, the simulator CSV reader, and the capacity and scenario generated
 * from a hand-written calibration fixture.
 *
 * Independent sources: every expected value is worked out by hand in the
 * comments from tests/data/realpipe/ (spans.csv, sim.csv, tiny-fixture.yaml)
 * and calib/data/fixture-video.yaml; percentiles by linear interpolation
 * between order statistics at (n - 1) q. Timing itself (the pipeline's
 * threads) is `make validate`'s, never a unit test's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/harness.h"
#include "calib/wakeup.h"
#include "calib/realpipe/rp_cores.h"
#include "calib/realpipe/rp_cold.h"
#include "calib/realpipe/rp_drift.h"
#include "calib/realpipe/rp_oplog.h"
#include "calib/realpipe/rp_mix.h"
#include "calib/realpipe/rp_overlap.h"
#include "calib/realpipe/rp_stack.h"
#include "calib/realpipe/rp_stages.h"
#include "calib/realpipe/rp_wake.h"
#include "calib/realpipe/rp_params.h"
#include "calib/realpipe/rp_scen.h"
#include "calib/realpipe/rp_span.h"
#include "calib/realpipe/rp_stats.h"
#include "models/scenario.h"
#include "tests/kit_files.h"

#define D "tests/data/realpipe/"
#define TOL 1e-9

TestSuite(realpipe, .timeout = 30);

static void close_to(const char *what, double got, double want)
{
    cr_expect(fabs(got - want) <= TOL * (fabs(want) > 1 ? fabs(want) : 1),
              "%s: got %.12g, want %.12g", what, got, want);
}

/* The hand-made set: 7 frames after the 500 ms warm-up (frame 0 is before
 * it); end to end 1..5 ms for the five completed: p50 = 3, p95 at 3.8 ->
 * 4.8, p99 at 3.96 -> 4.96; one drop (encode) in 7 arrivals; decode
 * sojourns 0.1..0.7: p50 0.4, p95 at 5.7 -> 0.67, p99 at 5.94 -> 0.694;
 * prefill sojourns 0.5, 1, 1, 1, 2: p50 1. */
Test(realpipe, metrics_of_hand_made_spans)
{
    rp_set s = {0};
    char err[512] = "";
    cr_assert_eq(rp_set_read(&s, D "spans.csv", err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.n, 18);
    cr_expect_eq(s.runs, 1);
    rp_metrics m;
    double *e2e = NULL;
    size_t ne = 0;
    cr_assert_eq(rp_metrics_of(&s, -1, 500.0, &m, &e2e, &ne), 0);
    cr_expect_eq(m.arrived, 7);
    cr_expect_eq(m.dropped, 1);
    cr_expect_eq(m.sampled_out, 1);
    cr_expect_eq(m.completed, 5);
    close_to("drop rate 1/7", m.drop_rate, 1.0 / 7.0);
    cr_assert_eq(ne, 5);
    for (size_t i = 0; i < ne; i++)
        close_to("sorted e2e", e2e[i], (double)(i + 1));
    close_to("frame p50", m.frame.p50, 3.0);
    close_to("frame p95", m.frame.p95, 4.8);
    close_to("frame p99", m.frame.p99, 4.96);
    close_to("decode p50", m.stage[RP_DECODE].p50, 0.4);
    close_to("decode p95", m.stage[RP_DECODE].p95, 0.67);
    close_to("decode p99", m.stage[RP_DECODE].p99, 0.694);
    close_to("prefill p50", m.stage[RP_PREFILL].p50, 1.0);
    cr_expect_eq(m.stage[RP_SAMPLE].n, 1);                  /* sampled out counts there */
    close_to("sample sojourn", m.stage[RP_SAMPLE].p50, 0.1);
    cr_expect_eq(m.stage[RP_ENCODE].n, 0);                  /* a drop has no sojourn */
    cr_expect(isnan(m.stage[RP_ENCODE].p50));
    close_to("llm_decode sojourn", m.stage[RP_LLM_DECODE].p50, 2.0);
    close_to("response sojourn", m.stage[RP_RESPONSE].p50, 5.0);
    free(e2e);
    /* without the warm-up, frame 0 counts: e2e 90 ms is the largest */
    cr_assert_eq(rp_metrics_of(&s, -1, 0.0, &m, NULL, NULL), 0);
    cr_expect_eq(m.arrived, 8);
    close_to("frame p50 of 1,2,3,4,5,90", m.frame.p50, 3.5);
    /* two runs of the same file: pooled percentiles unchanged, counts doubled,
     * and each run alone is the file */
    cr_assert_eq(rp_set_read(&s, D "spans.csv", err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.runs, 2);
    cr_assert_eq(rp_metrics_of(&s, -1, 500.0, &m, NULL, NULL), 0);
    cr_expect_eq(m.arrived, 14);
    close_to("pooled p50", m.frame.p50, 3.0);
    cr_assert_eq(rp_metrics_of(&s, 1, 500.0, &m, NULL, NULL), 0);
    cr_expect_eq(m.arrived, 7);
    close_to("run 1 p99", m.frame.p99, 4.96);
    rp_set_free(&s);
}

Test(realpipe, rel_err)
{
    close_to("10 -> 11", rp_rel_err(10, 11), 0.1);
    close_to("4 -> 3", rp_rel_err(4, 3), -0.25);
    cr_expect(isnan(rp_rel_err(0, 1)));
    cr_expect(isnan(rp_rel_err(NAN, 1)));
    cr_expect(isnan(rp_quantile(NULL, 0, 0.5)));
}

static char *tmp_with(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/vl-rp-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Make tmpl ("...XXXXXX") the name of a file that does not exist yet. */
static void fresh_name(char *tmpl)
{
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0);
    close(fd);
    unlink(tmpl);
}

static void read_fails(const char *text, const char *want)
{
    char *path = tmp_with(text), err[512] = "";
    rp_set s = {0};
    cr_expect_eq(rp_set_read(&s, path, err, sizeof err), -1, "accepted: %s", text);
    cr_expect(strstr(err, path) && strstr(err, want), "got '%s', want '%s'", err, want);
    cr_expect_eq(s.n, 0);
    cr_expect_eq(s.runs, 0);
    unlink(path);
    rp_set_free(&s);
}

#define HDR "kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"

Test(realpipe, span_file_errors)
{
    read_fails("# c\nkind,id\n", ":2: expected the header");
    read_fails(HDR "frame,0,0,0,encoder,done,1,1,1,1\n", ":2: unknown stage 'encoder'");
    read_fails(HDR "frame,0,0,0,encode,done,1,2,1,3\n", ":2: times must satisfy");
    read_fails(HDR "frame,0,0,0,response,done,1,1,1,1\n", ":2: stage response is not on the frame path");
    read_fails(HDR "frame,0,0,0,encode,lost,1,1,1,1\n", ":2: unknown outcome 'lost'");
    read_fails(HDR "frame,-1,0,0,encode,done,1,1,1,1\n", ":2: id must be");
    read_fails(HDR "frame,0,0,0,encode,done,1,1,1,x\n", ":2: end_ms must be a finite number");
    read_fails(HDR "frame,0,0,0,encode,done,1,1,1\n", ":2: expected 10 fields, got 9");
    read_fails("", "no header");
}

/* The record's file reads back as what was put in (times to the ns). */
Test(realpipe, record_round_trip)
{
    rp_record r;
    cr_assert_eq(rp_record_init(&r, 2, 1, 2), 0);
    r.f_arrive[0] = 1000000;            /* 1 ms */
    r.f_stream[0] = 3;
    r.f_seq[0] = 7;
    *rp_fspan(&r, 0, RP_DECODE) = (rp_span){1000000, 1500000, 2250001, RP_DONE};
    *rp_fspan(&r, 0, RP_SAMPLE) = (rp_span){2250001, 2300000, 2300000, RP_SAMPLED_OUT};
    r.f_arrive[1] = 5000000;
    *rp_fspan(&r, 1, RP_DECODE) = (rp_span){5000000, 5000000, 5000000, RP_DROP_FULL};
    r.q_arrive[0] = 9000000;
    *rp_qspan(&r, 0, RP_RESPONSE) = (rp_span){9000000, 9100000, 14100000, RP_DONE};
    char path[] = "/tmp/vl-rp-rt-XXXXXX", err[512] = "";
    fresh_name(path);
    cr_assert_eq(rp_record_write(&r, 2, 1, "a comment\nover two lines", path, err, sizeof err), 0,
                 "%s", err);
    rp_record_free(&r);
    rp_set s = {0};
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    unlink(path);
    cr_assert_eq(s.n, 4);
    cr_expect_eq(s.rows[0].stage, RP_DECODE);
    cr_expect_eq(s.rows[0].stream, 3);
    cr_expect_eq(s.rows[0].seq, 7);
    close_to("arrive", s.rows[0].arrive, 1.0);
    close_to("start", s.rows[0].start, 1.5);
    close_to("end (ns kept)", s.rows[0].end, 2.250001);
    cr_expect_eq(s.rows[1].outcome, RP_SAMPLED_OUT);
    cr_expect_eq(s.rows[2].outcome, RP_DROP_FULL);
    cr_expect_eq(s.rows[3].kind, RP_QUERY);
    cr_expect_eq(s.rows[3].stage, RP_RESPONSE);
    close_to("query end", s.rows[3].end, 14.1);
    rp_set_free(&s);
}

/* sim.csv: the e2e row and the decode row; a stage that is not the real
 * pipeline's is ignored. */
Test(realpipe, sim_csv)
{
    rp_metrics m;
    char err[512] = "";
    cr_assert_eq(rp_sim_read(D "sim.csv", &m, err, sizeof err), 0, "%s", err);
    close_to("e2e p50", m.frame.p50, 3.3);
    close_to("e2e p95", m.frame.p95, 4.4);
    close_to("e2e p99", m.frame.p99, 5.5);
    close_to("drop rate", m.drop_rate, 0.02);
    close_to("decode p99", m.stage[RP_DECODE].p99, 1.5);
    cr_expect(isnan(m.stage[RP_ENCODE].p50));
    char *path = tmp_with("kind,name\nstage,decode\n");
    cr_expect_eq(rp_sim_read(path, &m, err, sizeof err), -1);
    cr_expect(strstr(err, ":1: not a vlsim run --csv header"), "%s", err);
    unlink(path);
}

/* Capacity from the fixtures, by hand (defaults: 8 streams, 6 queries per
 * stream-minute of 8 tokens, 2 decode workers, 2 cores, keep every 2nd,
 * 16 tokens kept, prefill at cache 64, decode at cache 128):
 *   decode mean (fixture-video: 2 I of 10 ms, 6 P of 1.5 ms) = 29/8 = 3.625 ms;
 *   per kept frame encode(1) 1 + reduce(1) 0.1 + prefill(16 tokens) 0.5 = 1.6 ms;
 *   queries 0.8/s x 8 tokens x decode(1) 0.2 ms = 1.28 ms/s = 0.00128;
 *   decode workers 2000 / 3.625 = 551.72 frames/s;
 *   executor 1000 (1 - 0.00128) / 0.8 = 1248.4;
 *   cores 1000 (2 - 0.00128) / (3.625 + 0.8) = 451.688... -> the bottleneck. */
Test(realpipe, capacity_from_calibration)
{
    rp_params p;
    rp_params_default(&p);
    rp_capacity c;
    char err[512] = "";
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("decode mean", c.decode_ms, 3.625);
    close_to("encode", c.encode_ms, 1.0);
    close_to("reduce", c.reduce_ms, 0.1);
    close_to("prefill", c.prefill_ms, 0.5);
    close_to("query share", c.query_share, 0.00128);
    close_to("decode pool", c.rate[RP_RES_DECODE], 2000.0 / 3.625);
    close_to("executor", c.rate[RP_RES_EXECUTOR], 1000.0 * (1 - 0.00128) / 0.8);
    close_to("cores", c.rate[RP_RES_CORES], 1000.0 * (2 - 0.00128) / 4.425);
    close_to("the cores' work per frame: 3.625 + (1 + 0.1 + 0.5) / 2", c.cpu_ms, 4.425);
    cr_expect_eq(c.bottleneck, RP_RES_CORES);
    /* with 8 cores the three threads with work use 3 of them, and the decode
     * pool binds */
    p.cores = 8;
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores, 8 of them", c.rate[RP_RES_CORES], 1000.0 * (3 - 0.00128) / 4.425);
    cr_expect_eq(c.bottleneck, RP_RES_DECODE);
    /* each frame's handoffs (to a worker, to the sampler, half of them to the
     * executor: keep every 2) cost 2.5 x 0.05 ms more of the cores */
    p.cores = 2;
    p.handoff_ms = 0.05;
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores, with handoffs", c.rate[RP_RES_CORES], 1000.0 * (2 - 0.00128) / (4.425 + 0.125));
    close_to("work per frame, with handoffs", c.cpu_ms, 4.55);
    p.handoff_ms = 0;
    cr_expect_neq(rp_capacity_of(&p, D "missing.yaml", "calib/data/fixture-video.yaml", &c,
                                 err, sizeof err), 0);
    cr_expect(strstr(err, "missing.yaml"), "%s", err);
}

/* The streams' phases go into the spans' header and read back (to the ns);
 * a file without them, or with another number of them, is refused. */
Test(realpipe, phases_round_trip)
{
    rp_record r;
    cr_assert_eq(rp_record_init(&r, 1, 1, 3), 0);
    r.phase_ms[0] = 0.25;
    r.phase_ms[1] = 12.000001;
    r.phase_ms[2] = 0;
    char path[] = "/tmp/vl-rp-ph-XXXXXX", err[512] = "";
    fresh_name(path);
    cr_assert_eq(rp_record_write(&r, 0, 0, "vlrealpipe spans: streams 3, fps 29.97, duration 1 s",
                                 path, err, sizeof err), 0, "%s", err);
    rp_record_free(&r);
    double ph[4] = {-1, -1, -1, -1}, fps = 0;
    cr_assert_eq(rp_phases_read(path, 3, ph, &fps, err, sizeof err), 0, "%s", err);
    close_to("phase 0", ph[0], 0.25);
    close_to("phase 1", ph[1], 12.000001);
    close_to("phase 2", ph[2], 0);
    close_to("fps", fps, 29.97);
    cr_expect_eq(rp_phases_read(path, 4, ph, &fps, err, sizeof err), -1);
    cr_expect(strstr(err, "must list 4 phases") != NULL, "%s", err);
    cr_expect_eq(rp_phases_read(path, 2, ph, &fps, err, sizeof err), -1);
    cr_expect(strstr(err, "must list 2 phases") != NULL, "%s", err);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("# vlrealpipe spans: streams 3, fps 30\nkind,id\n", f);
    fclose(f);
    cr_expect_eq(rp_phases_read(path, 3, ph, &fps, err, sizeof err), -1);
    cr_expect(strstr(err, "no \"# phases_ms") != NULL, "%s", err);
    unlink(path);
}

/* The scenario vlrealpipe writes for p from the two fixtures (30 s x reps;
 * phases ph of nsets runs, or NULL), loaded into c; the capacity into *cap. */
static void fixture_scenario(const rp_params *p, int reps, const double *ph, int nsets,
                             rp_capacity *cap, scenario_cfg *c)
{
    char path[] = "/tmp/vl-rp-scen-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    char here[4096], tiny[4200], vid[4200], err[1024] = "";
    cr_assert_not_null(getcwd(here, sizeof here));
    snprintf(tiny, sizeof tiny, "%s/" D "tiny-fixture.yaml", here);
    snprintf(vid, sizeof vid, "%s/" D "video-fixture.yaml", here);
    cr_assert_eq(rp_capacity_of(p, tiny, vid, cap, err, sizeof err), 0, "%s", err);
    rp_scenario_write(f, p, tiny, vid, cap, 30, reps, ph, nsets);
    fclose(f);
    int rc = scn_load(path, c, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
}

/* Given phases, the scenario replays them: one list per run, in order, each
 * rounded down to the ns so that it stays below one frame interval. */
Test(realpipe, scenario_with_phases)
{
    rp_params p;
    rp_params_default(&p);
    p.streams = 2;
    p.fps = 10;                         /* 100 ms apart */
    p.handoff_ms = 0.0213;
    p.timer_ms = 0.0311;
    const double ph[4] = {1.5, 99.9999999, 0, 42};
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 4, ph, 2, &cap, &c);
    cr_expect_eq(c.workload.phase, PHASE_GIVEN);
    cr_assert_eq(c.workload.nphase_sets, 2);
    close_to("run 1, stream 0", c.workload.phase_ms[0], 1.5);
    close_to("run 1, stream 1 (down to the ns)", c.workload.phase_ms[1], 99.999999);
    close_to("run 2, stream 0", c.workload.phase_ms[2], 0);
    close_to("run 2, stream 1", c.workload.phase_ms[3], 42);
    close_to("handoff_ms", c.cpu.handoff_ms, 0.0213);
    cr_expect(c.cpu.has_timer && c.cpu.source == CPU_SOURCE_ONE_THREAD,
              "a timer gives timer_ms and source: one_thread (the one release thread)");
    cr_expect_eq(c.cpu.query_source, CPU_QUERY_TIMER, "the query thread sleeps till each query");
    int resp = -1;
    for (int s = 0; s < c.nstages; s++)
        if (!strcmp(c.stages[s].name, "response"))
            resp = s;
    cr_assert_geq(resp, 0);
    cr_expect_eq(c.cpu.sleeper_mask, (uint64_t)1 << resp,
                 "the response thread sleeps out its %g ms", p.response_ms);
    cr_expect_eq(c.cpu.stage_mask >> resp & 1, 0, "and is not on the cores");
    close_to("timer_ms", c.cpu.timer_ms, 0.0311);
    cfg_free(&c);
}

/* The generated scenario loads, and says what the parameters say. */
Test(realpipe, scenario_from_calibration)
{
    rp_params p;
    rp_params_default(&p);
    p.fps = 12.5;
    p.wake_ms = 0.004;
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    close_to("I mean", cap.decode_i_ms, 10);
    close_to("P mean", cap.decode_p_ms, 1.5);
    cr_expect_eq(c.workload.streams, 8);
    close_to("fps", c.workload.fps, 12.5);
    close_to("queries", c.workload.queries_per_min, 6);
    close_to("duration", c.duration_s, 30);
    cr_expect_eq(c.replications, 3);
    cr_expect_eq(c.cpu.cores, 2);
    close_to("wake", c.cpu.wake_ms, 0.004);
    close_to("no handoff cost given: none", c.cpu.handoff_ms, 0);
    cr_expect(!c.cpu.has_timer && c.cpu.source == CPU_SOURCE_IDEAL, "no timer given: none, frames on time");
    cr_assert_eq(c.nstages, 7);
    const char *names[] = {"decode", "sample", "encode", "reduce", "llm_prefill", "llm_decode", "response"};
    for (int s = 0; s < 7; s++)
        cr_expect_str_eq(c.stages[s].name, names[s]);
    cr_expect_eq(c.cpu.stage_mask, 0x3fu);                 /* all but response */
    cr_expect_eq(c.stages[0].servers, 2);
    cr_expect_eq(c.stages[0].capacity, 64);
    cr_expect_eq(c.stages[0].on_full, ONFULL_DROP_OLDEST);
    /* decode: the P samples (mean 9/6 = 1.5) and a GOP of 30 whose I-frames
     * are drawn from the I samples (8 and 12: mean 10) */
    close_to("decode P-sample mean", dist_mean(&c.stages[0].service), 1.5);
    cr_expect_eq(c.stages[0].gop.length, 30);
    cr_expect(c.stages[0].gop.has_i_service);
    close_to("I-sample mean", dist_mean(&c.stages[0].gop.i_service), 10.0);
    cr_expect_eq(c.stages[1].keep, KEEP_EVERY);
    cr_expect_eq(c.stages[1].keep_every, 2);
    const stage_cfg *e = &c.stages[2];
    cr_expect_eq(e->on, RES_GPU);
    cr_expect_eq(e->max_batch, 8);
    close_to("batch timeout", e->batch_timeout_ms, 2);
    cr_expect_eq(e->capacity, 32);
    close_to("encode timeout", e->timeout_ms, 50);
    cr_expect(e->has_table && e->has_jitter);
    close_to("encode table(1)", cfg_table_ms(&e->table, 1), 1.0);
    close_to("encode table(8)", cfg_table_ms(&e->table, 8), 4.0);
    close_to("reduce table(8)", cfg_table_ms(&c.stages[3].table, 8), 0.4);
    cr_expect(c.stages[4].table.by_tokens);
    close_to("prefill table(16 tokens)", cfg_table_ms(&c.stages[4].table, 16), 0.5);
    close_to("prefill table(128 tokens)", cfg_table_ms(&c.stages[4].table, 128), 2.5);
    cr_expect_eq(c.stages[5].response_tokens, 8);
    cr_expect_eq(c.stages[5].max_batch, 4);
    close_to("decode table(4)", cfg_table_ms(&c.stages[5].table, 4), 0.5);
    cr_expect_eq(c.stages[6].servers, 1);
    cr_expect_eq(c.cpu.nspeedup, 0);
    cfg_free(&c);
    /* a measured speed-up goes into the scenario as written */
    p.nspeedup = 3;
    p.speedup[0] = 0.98;
    p.speedup[1] = 1.33;
    p.speedup[2] = 1.73;
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    cr_expect_eq(c.cpu.nspeedup, 3);
    close_to("speedup[1]", c.cpu.speedup[1], 1.33);
    cfg_free(&c);
    /* more than the cores (a faster spell while corecal counted) is written
     * as the cores, so that the scenario loads */
    p.speedup[2] = 2.3;
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    close_to("speedup[2] at most 2 cores", c.cpu.speedup[2], 2);
    cfg_free(&c);
    /* --speed-scale: without a drift, one factor of it; with one, each of its
     * factors times it (1.2 x 0.95 = 1.14, 1.2 x 1.05 = 1.26), its window kept */
    p.speed_scale = 1.2;
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    cr_assert_eq(c.cpu.nspeed, 1);
    close_to("a lone factor", c.cpu.speed[0], 1.2);
    cfg_free(&c);
    p.speed = "{window_ms: 250, factors: [0.95, 1.05]}";
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    cr_assert_eq(c.cpu.nspeed, 2);
    close_to("window", c.cpu.speed_window_ms, 250);
    close_to("factor 0 scaled", c.cpu.speed[0], 1.14);
    close_to("factor 1 scaled", c.cpu.speed[1], 1.26);
    cfg_free(&c);
    p.speed_scale = 0;                 /* unset: the drift as written */
    fixture_scenario(&p, 3, NULL, 0, &cap, &c);
    close_to("factor 0 as written", c.cpu.speed[0], 0.95);
    cfg_free(&c);
}

/* With a speed-up table the cores saturate at its value for 3 threads (2
 * decode workers and the executor) instead of `cores`: 1000 (1.73 - 0.00128)
 * / 4.425 (see capacity_from_calibration); a 4th value (the sampler busy
 * too) does not count, and with 3 workers it does. */
Test(realpipe, capacity_with_speedup)
{
    rp_params p;
    rp_params_default(&p);
    p.nspeedup = 3;
    p.speedup[0] = 0.98;
    p.speedup[1] = 1.33;
    p.speedup[2] = 1.73;
    rp_capacity c;
    char err[512] = "";
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores", c.rate[RP_RES_CORES], 1000.0 * (1.73 - 0.00128) / 4.425);
    p.nspeedup = 4;
    p.speedup[3] = 1.9;
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores, 4 measured", c.rate[RP_RES_CORES], 1000.0 * (1.73 - 0.00128) / 4.425);
    p.decode_workers = 3;
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores, 3 workers", c.rate[RP_RES_CORES], 1000.0 * (1.9 - 0.00128) / 4.425);
    /* a measured 2.3 with 3 threads on 2 cores (a faster spell of the
     * machine) counts as 2: 1000 (2 - 0.00128) / 4.425 */
    p.decode_workers = 2;
    p.speedup[1] = 2;
    p.speedup[2] = 2.3;
    cr_assert_eq(rp_capacity_of(&p, D "tiny-fixture.yaml", "calib/data/fixture-video.yaml", &c,
                                err, sizeof err), 0, "%s", err);
    close_to("cores, 2.3 on 2 cores", c.rate[RP_RES_CORES], 1000.0 * (2 - 0.00128) / 4.425);
    close_to("speedup at 1", rp_speedup_at(&p, 1), 0.98);
    close_to("speedup at 3", rp_speedup_at(&p, 3), 2);
}

/* vlcalib wakeup's library: as many latencies as rounds asked, none
 * negative, ordered statistics, a CPU cost that is positive; bad counts are
 * refused. (Its values are timings: make validate's, not a test's.) */
Test(realpipe, wakeup_counts)
{
    harness_result r;
    double cpu = -1;
    char err[256] = "";
    cr_assert_eq(wake_measure(200, 10, &r, &cpu, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.n, 200);
    cr_expect(r.min >= 0 && r.min <= r.p50 && r.p50 <= r.p99 && r.p99 <= r.max);
    cr_expect(cpu > 0, "cpu per handoff %g", cpu);
    harness_result_free(&r);
    cr_assert_eq(wake_measure_busy(100, 0, 1, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.n, 100);
    harness_result_free(&r);
    cr_expect_eq(wake_measure(0, 10, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "rounds"), "%s", err);
    cr_expect_eq(wake_measure_busy(10, 0, 999, &r, err, sizeof err), -1);
    /* a sleep to an absolute deadline never ends before it: no lateness below 0 */
    cr_assert_eq(wake_measure_timer(50, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.n, 50);
    cr_expect(r.min >= 0 && r.min <= r.p50 && r.p50 <= r.p99 && r.p99 <= r.max, "min %g", r.min);
    harness_result_free(&r);
    cr_expect_eq(wake_measure_timer(0, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "timer rounds"), "%s", err);
}

/* vlcalib wakeup's timer line: as many timed sleeps as --timer-rounds asks,
 * none with 0, and a bad count refused with exit status 2. */
static char *wakeup_out(int argc, char **argv, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    *rc = vlcalib_wakeup_main(argc, argv, out, out);
    fclose(out);
    return buf;
}

Test(realpipe, wakeup_timer_line)
{
    int rc;
    char *a[] = {"wakeup", "--rounds", "100", "--timer-rounds", "20"};
    char *buf = wakeup_out(5, a, &rc);
    cr_expect_eq(rc, 0, "%s", buf);
    cr_expect(strstr(buf, "\ntimer: {n: 20, mean_ms: "), "%s", buf);
    free(buf);
    char *b[] = {"wakeup", "--rounds", "100", "--timer-rounds", "0"};
    buf = wakeup_out(5, b, &rc);
    cr_expect_eq(rc, 0, "%s", buf);
    cr_expect(!strstr(buf, "timer:"), "%s", buf);
    free(buf);
    char *c[] = {"wakeup", "--timer-rounds", "-3"};
    buf = wakeup_out(3, c, &rc);
    cr_expect_eq(rc, 2);
    cr_expect(strstr(buf, "--timer-rounds must be an integer"), "%s", buf);
    free(buf);
}

/* The mix calibration's bookkeeping (rp_mix.h), counted by hand for
 * 2 streams, keep every 2nd frame, GOP 4, batches 1..3, LLM decode batches
 * 1..2, 3 timed rounds after 2 untimed:
 *  - a round runs one cycle per batch size, so each encode/reduce/prefill
 *    batch size gets one sample per timed round: 3;
 *  - frame n is stream n mod 2, its frame seq = n / 2, kept when seq is even:
 *    the kept frames are n = 0, 1, 4, 5, 8, 9, ..., the k-th (from 0) at
 *    n = 4 (k / 2) + k mod 2. A cycle of batch b decodes until b more are
 *    kept. The 2 untimed rounds keep 2 (1 + 2 + 3) = 12 frames, the last at
 *    n = 4 * 5 + 1 = 21, so frames 0..21 are untimed; all 5 rounds keep 30,
 *    the last at n = 4 * 14 + 1 = 57: frames 22..57 are timed, 36 of them;
 *  - an I-frame is seq mod 4 = 0: seq 12, 16, 20, 24, 28 (n = 2 seq and
 *    2 seq + 1, all within 22..57): 10 I-frames, 26 P-frames;
 *  - the LLM decode batch runs 1, 2, 1, 2, ... over all 15 cycles; the timed
 *    ones are cycles 6..14: batch 1 at the even ones (6, 8, 10, 12, 14): 5,
 *    batch 2: 4.
 *  - the back-to-back reference runs batches 1, 2, 3 every round, each op
 *    twice (the second timed): 3 samples per batch size; its LLM decode
 *    batch is 1 + (b - 1) mod 2: 1 for b = 1 and 3, 2 for b = 2, so 6 and 3;
 *    its own decoder decodes 2b frames per batch size, all but the first
 *    timed: 1 + 3 + 5 = 9 per round, 27 in all; round r covers seq 12 r ..
 *    12 r + 11 and times 12 r + 1, 12 r + 3..5, 12 r + 7..11, of which
 *    12 r + 4 and 12 r + 8 are I-frames (seq mod 4 = 0): 6 I, 21 P.
 * Then both files read back as calibration files with those points and
 * shapes, and the scenario written from them loads. */
/* corecal: every thread works its turn, the speed-up is relative to one
 * thread (the median of the rounds' ratios, cut to k: a faster spell of
 * the machine cannot make k threads do more than k). No bound by the CPUs:
 * on a shared box one thread's second can be slowed by others, so a ratio
 * above the CPU count is possible and not a fault of the code. */
Test(realpipe, corecal_threads_and_bounds, .timeout = 120)
{
    rp_params p;
    rp_params_default(&p);
    p.gop = 4;
    rp_cores_result r;
    char err[1024] = "";
    cr_assert_eq(rp_cores_run(&p, 3, 2, 0.2, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.threads, 3);
    for (int k = 0; k < 3; k++) {
        cr_expect_gt(r.done[k], 0, "thread %d finished no unit", k);
        cr_expect_gt(r.units[k], 0, "k = %d", k + 1);
        cr_expect((r.lo[k] <= r.speedup[k] || r.speedup[k] == k + 1) && r.speedup[k] <= r.hi[k] + 1e-12,
                  "median within the rounds (or cut to k)");
        cr_expect(r.speedup[k] <= k + 1, "s(%d) = %g: at most %d", k + 1, r.speedup[k], k + 1);
    }
    cr_expect_float_eq(r.speedup[0], 1.0, 1e-12);
    cr_expect_eq(rp_cores_run(&p, 0, 1, 1, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "threads 1..16") != NULL, "%s", err);
}

/* dir/name, opened for writing (its path into path). */
static FILE *fixture_file(const char *dir, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    return f;
}

/* The ops by the others beside them, on a hand-made run (ms):
 *   A decode [0, 1]            alone                      -> decode_P, 0
 *   B decode [2, 5], C [4, 5]  B: count 1 for 2 ms, 2 for 1: average 4/3, others 1/3 -> 0
 *                              C: count 2 throughout: others 1 -> 1
 *   an encode batch of 2 [10, 12] and decode D [10.5, 11.5]:
 *                              D: others 1 -> 1; the batch: (0.5 + 2 + 0.5) / 2 = 1.5,
 *                              others 0.5 -> 1 (encode_b2)
 *   E decode [20, 21], an I-frame (seq 30), alone -> decode_I, 0
 * so decode_P: 0 holds A and B (1, 3 ms: mean 2), 1 holds C and D (1, 1). A
 * second run's decode F [0, 2] overlaps nothing of run 1 (runs apart). */
Test(realpipe, overlap_classes)
{
    char dir[64], path[128], err[512] = "";
    kit_tmpdir(dir, sizeof dir, "overlap");
    FILE *f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,1,decode,done,0,0,0,1\n"
          "frame,1,0,2,decode,done,2,2,2,5\n"
          "frame,2,1,3,decode,done,4,4,4,5\n"
          "frame,3,1,4,decode,done,10.5,10.5,10.5,11.5\n"
          "frame,4,0,6,encode,done,9,9,10,12\n"
          "frame,5,1,8,encode,done,9,9,10,12\n"
          "frame,6,0,30,decode,done,20,20,20,21\n", f);
    fclose(f);
    char path2[128];
    f = fixture_file(dir, "spans2.csv", path2, sizeof path2);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,1,decode,done,0,0,0,2\n", f);
    fclose(f);
    rp_set s = {0};
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rp_set_read(&s, path2, err, sizeof err), 0, "%s", err);
    rp_overlap o;
    cr_assert_eq(rp_overlap_of(&s, 30, 0, &o), 0);
    const rp_ovl_cell *p0 = &o.cell[RP_OVL_DECODE_P][0], *p1 = &o.cell[RP_OVL_DECODE_P][1];
    cr_expect_eq(p0->n, 3, "A, B and run 2's F alone: %d", p0->n);
    close_to("alone: mean of 1, 3, 2", p0->mean, 2.0);
    close_to("alone: median", p0->p50, 2.0);
    cr_expect_eq(p1->n, 2);
    close_to("one other: C and D", p1->mean, 1.0);
    cr_expect_eq(o.cell[RP_OVL_DECODE_P][2].n, 0);
    cr_expect_eq(o.cell[RP_OVL_ENCODE_2][1].n, 1);
    close_to("the batch", o.cell[RP_OVL_ENCODE_2][1].mean, 2.0);
    cr_expect_eq(o.cell[RP_OVL_ENCODE_1][0].n + o.cell[RP_OVL_ENCODE_1][1].n, 0);
    cr_expect_eq(o.cell[RP_OVL_DECODE_I][0].n, 1);
    close_to("the I-frame", o.cell[RP_OVL_DECODE_I][0].mean, 1.0);
    /* from 4 ms on: A and B are out, and so is F */
    cr_assert_eq(rp_overlap_of(&s, 30, 4, &o), 0);
    cr_expect_eq(o.cell[RP_OVL_DECODE_P][0].n, 0);
    cr_expect_eq(o.cell[RP_OVL_DECODE_P][1].n, 2);
    rp_set_free(&s);
    unlink(path);
    unlink(path2);
    rmdir(dir);
}

/* Where a kept frame's time goes, on hand-made runs (ms). Run 1:
 *   frame 0: its time 10, enqueued at 10.2 (the camera thread woke late),
 *            decode [10.5, 11.5], sample ends 11.7, encode [13, 15]
 *            (with frame 1), reduce ends 15.1, prefill ends 15.5:
 *            0.2, 0.3, 1.0, 0.2, 1.3, 2.0, 0.1, 0.4; 5.5 in all
 *   frame 1: its time 11, decode [11.2, 12], sample ends 12.1, the same batch:
 *            0, 0.2, 0.8, 0.1, 0.9, 2.0, 0.1, 0.4; 4.5
 *   frame 2: sampled out; frame 3: released at 1, before the cut at 5 (its
 *   batch at 3 too); frame 4: its prefill dropped, but its batch of 1 at 32 counts.
 * Run 2 (its ids start at 0 again; an encode that also starts at 13 is its own
 * batch, not run 1's):
 *   frame 0: released 10, decode [10, 11], sample ends 11, encode [13, 14],
 *            reduce ends 14, prefill ends 15: 0, 0, 1, 0, 2, 1, 0, 1; 5
 *   frames 10..18: one batch of 9 at 40 (none kept), counted as "8 or more".
 * Run 1: means 0.1, 0.25, 0.9, 0.15, 1.1, 2.0, 0.1, 0.4; 5.0 (the segments add
 * up), batches {2 at 13, 1 at 32}: half and half. Both runs: 3 frames (frame
 * 5.0, release 0.2 / 3, decode_wait 0.5 / 3), batches 1, 2, 1, 9+: shares 2/4,
 * 1/4, 0, ..., 1/4. The wait with a worker free, run 1: frame 0 waits [10.2,
 * 10.5] with no decode running, frame 1 [11, 11.2] beside frame 0's decode.
 * With 2 workers both are free throughout: 0.25, all of decode_wait; with 1,
 * frame 1's is not: 0.15. Both runs, 1 worker: run 2's decode [10, 11] must not
 * count against run 1's frame 0: (0.3 + 0 + 0) / 3; counted with it, 0. */
Test(realpipe, stages_by_hand)
{
    char dir[64], path[128], path2[128], err[512] = "";
    kit_tmpdir(dir, sizeof dir, "stages");
    FILE *f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,2,decode,done,10,10.2,10.5,11.5\n"
          "frame,0,0,2,sample,done,10,11.5,11.6,11.7\n"
          "frame,0,0,2,encode,done,10,11.7,13,15\n"
          "frame,0,0,2,reduce,done,10,15,15,15.1\n"
          "frame,0,0,2,llm_prefill,done,10,15.1,15.1,15.5\n"
          "frame,1,1,2,decode,done,11,11,11.2,12\n"
          "frame,1,1,2,sample,done,11,12,12.05,12.1\n"
          "frame,1,1,2,encode,done,11,12.1,13,15\n"
          "frame,1,1,2,reduce,done,11,15,15,15.1\n"
          "frame,1,1,2,llm_prefill,done,11,15.1,15.1,15.5\n"
          "frame,2,0,3,decode,done,20,20,20,21\n"
          "frame,2,0,3,sample,sampled_out,20,21,21,21.1\n"
          "frame,3,1,0,decode,done,1,1,1,2\n"
          "frame,3,1,0,sample,done,1,2,2,2.1\n"
          "frame,3,1,0,encode,done,1,2.1,3,4\n"
          "frame,3,1,0,reduce,done,1,4,4,4.1\n"
          "frame,3,1,0,llm_prefill,done,1,4.1,4.1,4.3\n"
          "frame,4,0,4,decode,done,30,30,30,31\n"
          "frame,4,0,4,sample,done,30,31,31,31.1\n"
          "frame,4,0,4,encode,done,30,31.1,32,33\n"
          "frame,4,0,4,reduce,done,30,33,33,33.05\n"
          "frame,4,0,4,llm_prefill,drop_timeout,30,33.05,33.2,33.2\n", f);
    fclose(f);
    f = fixture_file(dir, "spans2.csv", path2, sizeof path2);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,2,decode,done,10,10,10,11\n"
          "frame,0,0,2,sample,done,10,11,11,11\n"
          "frame,0,0,2,encode,done,10,11,13,14\n"
          "frame,0,0,2,reduce,done,10,14,14,14\n"
          "frame,0,0,2,llm_prefill,done,10,14,14,15\n", f);
    for (int k = 10; k <= 18; k++)
        fprintf(f, "frame,%d,0,%d,encode,done,39,39,40,41\n", k, k);
    fclose(f);
    rp_set s = {0};
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rp_set_read(&s, path2, err, sizeof err), 0, "%s", err);
    rp_stages o;
    cr_assert_eq(rp_stages_of(&s, 0, 5, 2, &o), 0);
    cr_expect_eq(o.frames, 2);
    close_to("a worker free, 2 workers", o.decode_wait_free, 0.25);
    const double want[RP_NSEGS] = {0.1, 0.25, 0.9, 0.15, 1.1, 2.0, 0.1, 0.4, 5.0};
    for (int k = 0; k < RP_NSEGS; k++)
        close_to(rp_seg_name(k), o.mean[k], want[k]);
    cr_expect_eq(o.batches, 2);
    close_to("batches of 1", o.share[0], 0.5);
    close_to("batches of 2", o.share[1], 0.5);
    cr_assert_eq(rp_stages_of(&s, 0, 5, 1, &o), 0);
    close_to("a worker free, 1 worker", o.decode_wait_free, 0.15);
    cr_assert_eq(rp_stages_of(&s, -1, 5, 1, &o), 0);
    close_to("both runs, 1 worker: each run's own decodes", o.decode_wait_free, 0.3 / 3);
    cr_assert_eq(rp_stages_of(&s, -1, 5, 2, &o), 0);
    cr_expect_eq(o.frames, 3);
    close_to("both runs: release", o.mean[RP_SEG_RELEASE], 0.2 / 3);
    close_to("both runs: decode_wait", o.mean[RP_SEG_DECODE_WAIT], 0.5 / 3);
    close_to("both runs: encode_wait", o.mean[RP_SEG_ENCODE_WAIT], 4.2 / 3);
    close_to("both runs: frame", o.mean[RP_SEG_FRAME], 5.0);
    cr_expect_eq(o.batches, 4);
    close_to("of 1", o.share[0], 0.5);
    close_to("of 2", o.share[1], 0.25);
    close_to("of 3", o.share[2], 0);
    close_to("of 8 or more", o.share[RP_BATCH_MAX - 1], 0.25);
    /* from 0: frame 3 is kept too (0, 1, 0.1, 0.9, 1, 0.1, 0.2: 3.3) */
    cr_assert_eq(rp_stages_of(&s, 0, 0, 2, &o), 0);
    cr_expect_eq(o.frames, 3);
    close_to("with frame 3", o.mean[RP_SEG_FRAME], (5.5 + 4.5 + 3.3) / 3);
    cr_expect_eq(o.batches, 3);
    cr_expect_str_eq(rp_seg_name(RP_SEG_SAMPLE), "sample");
    cr_expect_str_eq(rp_seg_name(RP_NSEGS), "?");
    rp_set_free(&s);
    unlink(path);
    unlink(path2);
    rmdir(dir);
}

/* By GOP position (GOP 30), on hand-made spans (ms, 1000 added to every time
 * so that compare's cut at 300 ms leaves them in):
 *   seq 0, stream 0, the I-frame: released 0, decode [1, 8], sample ends 8.1,
 *     encode [9, 11], reduce ends 11.1, prefill ends 11.5: decode_wait 1,
 *     decode 7, sample 0.1, encode_wait 0.9, encode 2; frame 11.5
 *   seq 30, stream 0, the next I-frame: released 300, decode [300, 307],
 *     sample ends 307.2, encode [308, 310], reduce 310.1, prefill 310.5:
 *     0, 7, 0.2, 0.8, 2; frame 10.5
 *   seq 2: released 20, decode [20.5, 21.5], sample 21.6, encode [22, 23],
 *     reduce 23.1, prefill 23.3: frame 3.3
 *   seq 31, stream 1: released 310, decode [310, 311], sample 311, encode
 *     [311.5, 312], reduce 312, prefill 312: frame 2.0
 *   seq 32: its prefill timed out (not kept); seq 60: sampled out (not kept).
 * Position 0: 2 frames, frame mean 11.0, decode_wait 0.5, decode 7, sample
 * 0.15, encode_wait 0.85; p95 of {10.5, 11.5} = 10.5 + 0.95 x 1 = 11.45
 * (linear between order statistics, (n - 1) q = 0.95). Position 2: seq 2 only
 * (3.3). Position 3: none. Every position (gop 1): 4 frames, mean 6.825, p95 of
 * {2.0, 3.3, 10.5, 11.5} at 2.85: 10.5 + 0.85 = 11.35. */
static const char gop_spans[] =
    "kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
    "frame,0,0,0,decode,done,1000,1000,1001,1008\n"
    "frame,0,0,0,sample,done,1000,1008,1008,1008.1\n"
    "frame,0,0,0,encode,done,1000,1008.1,1009,1011\n"
    "frame,0,0,0,reduce,done,1000,1011,1011,1011.1\n"
    "frame,0,0,0,llm_prefill,done,1000,1011.1,1011.1,1011.5\n"
    "frame,1,0,30,decode,done,1300,1300,1300,1307\n"
    "frame,1,0,30,sample,done,1300,1307,1307.1,1307.2\n"
    "frame,1,0,30,encode,done,1300,1307.2,1308,1310\n"
    "frame,1,0,30,reduce,done,1300,1310,1310,1310.1\n"
    "frame,1,0,30,llm_prefill,done,1300,1310.1,1310.1,1310.5\n"
    "frame,2,0,2,decode,done,1020,1020,1020.5,1021.5\n"
    "frame,2,0,2,sample,done,1020,1021.5,1021.5,1021.6\n"
    "frame,2,0,2,encode,done,1020,1021.6,1022,1023\n"
    "frame,2,0,2,reduce,done,1020,1023,1023,1023.1\n"
    "frame,2,0,2,llm_prefill,done,1020,1023.1,1023.1,1023.3\n"
    "frame,3,1,31,decode,done,1310,1310,1310,1311\n"
    "frame,3,1,31,sample,done,1310,1311,1311,1311\n"
    "frame,3,1,31,encode,done,1310,1311,1311.5,1312\n"
    "frame,3,1,31,reduce,done,1310,1312,1312,1312\n"
    "frame,3,1,31,llm_prefill,done,1310,1312,1312,1312\n"
    "frame,4,0,32,decode,done,1320,1320,1320,1321\n"
    "frame,4,0,32,sample,done,1320,1321,1321,1321\n"
    "frame,4,0,32,encode,done,1320,1321,1322,1323\n"
    "frame,4,0,32,reduce,done,1320,1323,1323,1323\n"
    "frame,4,0,32,llm_prefill,drop_timeout,1320,1323,1323,1323\n"
    "frame,5,1,60,decode,done,1600,1600,1600,1607\n"
    "frame,5,1,60,sample,sampled_out,1600,1607,1607,1607\n";

Test(realpipe, stages_by_gop_position_by_hand)
{
    char dir[64], path[128], err[512] = "";
    kit_tmpdir(dir, sizeof dir, "gopst");
    FILE *f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs(gop_spans, f);
    fclose(f);
    rp_set s = {0};
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    rp_stages by[30], o;
    cr_assert_eq(rp_stages_by_place(&s, 0, 0, 2, 30, by), 0);
    o = by[0];
    cr_expect_eq(o.frames, 2);
    close_to("pos 0: frame", o.mean[RP_SEG_FRAME], 11.0);
    close_to("pos 0: decode_wait", o.mean[RP_SEG_DECODE_WAIT], 0.5);
    close_to("pos 0: decode", o.mean[RP_SEG_DECODE], 7.0);
    close_to("pos 0: sample", o.mean[RP_SEG_SAMPLE], 0.15);
    close_to("pos 0: encode_wait", o.mean[RP_SEG_ENCODE_WAIT], 0.85);
    close_to("pos 0: encode", o.mean[RP_SEG_ENCODE], 2.0);
    close_to("pos 0: frame p95", o.frame_p95, 11.45);
    cr_expect_eq(o.batches, 5, "the batches stay the run's: %ld", o.batches);
    o = by[2];
    cr_expect_eq(o.frames, 1, "seq 2 only (32 timed out): %ld", o.frames);
    close_to("pos 2: frame", o.mean[RP_SEG_FRAME], 3.3);
    close_to("pos 2: frame p95", o.frame_p95, 3.3);
    o = by[3];
    cr_expect_eq(o.frames, 0);
    cr_expect_eq(o.frame_p95, 0);
    cr_assert_eq(rp_stages_by_place(&s, 0, 0, 2, 1, &o), 0);
    cr_expect_eq(o.frames, 4);
    close_to("every position: frame", o.mean[RP_SEG_FRAME], 6.825);
    close_to("every position: p95", o.frame_p95, 11.35);
    rp_stages all;
    cr_assert_eq(rp_stages_of(&s, 0, 0, 2, &all), 0);
    cr_expect_eq(all.frames, o.frames);
    close_to("rp_stages_of is every position", all.frame_p95, o.frame_p95);
    /* from 1100 ms: the first GOP's frames are out */
    cr_assert_eq(rp_stages_by_place(&s, 0, 1100, 2, 30, by), 0);
    o = by[0];
    cr_expect_eq(o.frames, 1);
    close_to("pos 0 after 1100: the second I-frame", o.mean[RP_SEG_FRAME], 10.5);
    rp_set_free(&s);
    unlink(path);
    rmdir(dir);
}

/* vlrealpipe compare --gop-stages: the real spans against themselves as the
 * simulator's (diff 0), the rows above for positions 0 and 2, none for the
 * positions without a kept frame, and the flag refused without --sim-spans. */
Test(realpipe, compare_gop_stages_cli, .timeout = 60)
{
    char dir[64], path[128], out[160], rows[160];
    kit_tmpdir(dir, sizeof dir, "gopcli");
    FILE *f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs(gop_spans, f);
    fclose(f);
    snprintf(out, sizeof out, "%s/gop.csv", dir);
    snprintf(rows, sizeof rows, "%s/rows.csv", dir);
    cr_assert_eq(kit_sh("./vlrealpipe compare --load 0.5 --sim " D "sim.csv --warmup 0 --out %s "
                        "--sim-spans %s --gop-stages %s %s > /dev/null", rows, path, out, path), 0);
    char *got = kit_slurp(out);
    cr_assert(got);
    cr_expect(!strncmp(got, "load,pos,segment,real_frames,sim_frames,real_ms,sim_ms,diff_ms\n", 63), "%s", got);
    cr_expect(strstr(got, "\n0.50,0,frame,2,2,11.000000,11.000000,0.000000\n"), "%s", got);
    cr_expect(strstr(got, "\n0.50,0,frame_p95,2,2,11.450000,11.450000,0.000000\n"), "%s", got);
    cr_expect(strstr(got, "\n0.50,0,sample,2,2,0.150000,0.150000,0.000000\n"), "%s", got);
    cr_expect(strstr(got, "\n0.50,2,frame,1,1,3.300000,3.300000,0.000000\n"), "%s", got);
    cr_expect(!strstr(got, "\n0.50,3,"), "no row for a position without kept frames");
    int lines = 0;
    for (const char *c = got; *c; c++)
        lines += *c == '\n';
    cr_expect_eq(lines, 1 + 3 * (RP_NSEGS + 1), "positions 0, 1, 2 with %d rows each", RP_NSEGS + 1);
    free(got);
    unlink(out);
    cr_expect_neq(kit_sh("./vlrealpipe compare --load 0.5 --sim " D "sim.csv --warmup 0 --out %s --force "
                         "--gop-stages %s %s 2> /dev/null", rows, out, path), 0);
    cr_expect(!kit_exists(out), "nothing written when refused");
    unlink(rows);
    unlink(path);
    rmdir(dir);
}

/* A worker going on: run 1's decodes A [0, 1] (enqueued 0), B [1.2, 2] (0.5),
 * C [2, 3] (1.5), E [3.4, 4] (2.5), D [5.1, 6] (5). At A's end B waits: 0.2
 * to the next start; at B's end C waits: 0; at C's end E waits: 0.4; at E's
 * and D's ends nothing waits. From 0: 3 gaps, mean 0.2; from 2.5: C's alone,
 * 0.4. Run 2's decode (enqueued 0, [10, 11]) belongs to run 2: counted with
 * run 1's, it would wait at E's end and add a gap of 5.1 - 4. */
Test(realpipe, stages_decode_gap_by_hand)
{
    char dir[64], path[128], err[512] = "";
    kit_tmpdir(dir, sizeof dir, "gaps");
    FILE *f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,0,decode,done,0,0,0,1\n"
          "frame,1,1,0,decode,done,0.5,0.5,1.2,2\n"
          "frame,2,2,0,decode,done,1.5,1.5,2,3\n"
          "frame,3,3,0,decode,done,5,5,5.1,6\n"
          "frame,4,4,0,decode,done,2.5,2.5,3.4,4\n", f);
    fclose(f);
    rp_set s = {0};
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    f = fixture_file(dir, "spans.csv", path, sizeof path);
    fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n"
          "frame,0,0,0,decode,done,0,0,10,11\n", f);
    fclose(f);
    cr_assert_eq(rp_set_read(&s, path, err, sizeof err), 0, "%s", err);
    rp_stages o;
    cr_assert_eq(rp_stages_of(&s, 0, 0, 2, &o), 0);
    cr_expect_eq(o.decode_gaps, 3);
    close_to("gap from 0", o.decode_gap, 0.2);
    cr_assert_eq(rp_stages_of(&s, 0, 2.5, 2, &o), 0);
    cr_expect_eq(o.decode_gaps, 1);
    close_to("gap from 2.5", o.decode_gap, 0.4);
    cr_assert_eq(rp_stages_of(&s, -1, 0, 2, &o), 0);
    cr_expect_eq(o.decode_gaps, 3);
    close_to("both runs: each run's own", o.decode_gap, 0.2);
    rp_set_free(&s);
    unlink(path);
    rmdir(dir);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

Test(realpipe, mixcal_counts_and_files, .timeout = 120)
{
    rp_params p;
    rp_params_default(&p);
    p.streams = 2;
    p.gop = 4;
    p.max_batch = 3;
    p.decode_max_batch = 2;
    rp_mix_result r;
    char err[1024] = "";
    cr_assert_eq(rp_mix_run(&p, 3, &r, err, sizeof err), 0, "%s", err);
    for (int b = 0; b < 3; b++) {
        cr_expect_eq(r.encode[b].n, 3, "encode batch %d", b + 1);
        cr_expect_eq(r.reduce[b].n, 3, "reduce batch %d", b + 1);
        cr_expect_eq(r.prefill[b].n, 3, "prefill batch %d", b + 1);
    }
    cr_expect_eq(r.encode[3].n, 0);
    cr_expect_eq(r.llm_decode[0].n, 5);
    cr_expect_eq(r.llm_decode[1].n, 4);
    cr_expect_eq(r.decode_i.n, 10);
    cr_expect_eq(r.decode_p.n, 26);
    cr_expect(r.decode_i.mean > r.decode_p.mean, "an I-frame decodes slower than a P-frame");
    for (int b = 0; b < 3; b++)
        cr_expect(r.b2b_encode[b].n == 3 && r.b2b_reduce[b].n == 3 && r.b2b_prefill[b].n == 3,
                  "reference batch %d", b + 1);
    cr_expect_eq(r.b2b_llm_decode[0].n, 6);
    cr_expect_eq(r.b2b_llm_decode[1].n, 3);
    cr_expect_eq(r.b2b_decode_i.n, 6);
    cr_expect_eq(r.b2b_decode_p.n, 21);

    char dir[64], tiny[128], dec[128];
    kit_tmpdir(dir, sizeof dir, "mixcal");
    snprintf(tiny, sizeof tiny, "%s/mix-tiny.yaml", dir);
    snprintf(dec, sizeof dec, "%s/mix-dec.yaml", dir);
    cr_assert_eq(rp_mix_check(tiny, dec, false, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rp_mix_save(&p, &r, 3, tiny, dec, err, sizeof err), 0, "%s", err);
    cr_expect_neq(rp_mix_check(tiny, dec, false, err, sizeof err), 0, "existing files need force");
    calf_file ft, fd;
    cr_assert_eq(calf_read(tiny, &ft, err, sizeof err), 0, "%s", err);
    const char *ops[] = {"encode", "reduce", "prefill", "decode"};
    int npts[] = {3, 3, 3, 2};
    for (int k = 0; k < 4; k++) {
        const calf_op *o = calf_find(&ft, ops[k], "tiny");
        cr_assert_not_null(o, "op %s", ops[k]);
        cr_expect_eq(o->npoints, npts[k], "op %s", ops[k]);
    }
    const calf_op *pre = calf_find(&ft, "prefill", "tiny");
    for (int j = 0; j < pre->npoints; j++) {
        cr_expect_eq(pre->points[j].new_tokens, (j + 1) * p.keep_tokens);
        cr_expect_eq(pre->points[j].cache_len, p.prefill_cache);
    }
    const calf_op *red = calf_find(&ft, "reduce", "tiny");
    cr_expect_eq(red->points[2].tokens_out, p.keep_tokens);
    cr_expect_eq(red->points[2].batch, 3);
    const calf_op *enc = calf_find(&ft, "encode", "tiny");
    cr_expect(fabs(enc->points[1].mean_ms - r.encode[1].mean) < 1e-5, "the file holds the mix's mean");
    cr_expect_eq(calf_find(&ft, "decode", "tiny")->points[1].cache_len, p.decode_cache);
    calf_free(&ft);
    cr_assert_eq(calf_read(dec, &fd, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fd.nops, 1);
    cr_expect_str_eq(fd.ops[0].op, "decode_video");
    cr_assert_eq(fd.ops[0].npoints, 2);
    cr_expect_eq(fd.ops[0].points[0].n + fd.ops[0].points[1].n, 36);
    calf_free(&fd);
    /* each decode sample knows its frame in the clip: the I-frames at GOP starts */
    for (int i = 0; i < r.decode_i.n; i++)
        cr_expect(r.decode_i_at[i] % p.gop == 0 && r.decode_i_at[i] < p.clip_frames, "%d", r.decode_i_at[i]);
    for (int i = 0; i < r.decode_p.n; i++)
        cr_expect(r.decode_p_at[i] % p.gop != 0 && r.decode_p_at[i] < p.clip_frames, "%d", r.decode_p_at[i]);

    /* the scenario from the two files loads, its encode table the mix's means */
    rp_capacity cap;
    cr_assert_eq(rp_capacity_of(&p, tiny, dec, &cap, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(cap.encode_ms - r.encode[0].mean) < 1e-5);
    char scen[160];
    snprintf(scen, sizeof scen, "%s/s.yaml", dir);
    FILE *f = fopen(scen, "w");
    cr_assert_not_null(f);
    rp_scenario_write(f, &p, tiny, dec, &cap, 10, 1, NULL, 0);
    fclose(f);
    scenario_cfg c;
    int rc = scn_load(scen, &c, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    /* (a table never falls: a batch of 2 timed below the batch of 1 — 3 samples
     * each, on a busy machine — is raised to it, calf_table) */
    double want2 = r.encode[1].mean > r.encode[0].mean ? r.encode[1].mean : r.encode[0].mean;
    cr_expect(fabs(cfg_table_ms(&c.stages[2].table, 2) - want2) < 1e-5, "table(2) %g, want %g",
              cfg_table_ms(&c.stages[2].table, 2), want2);
    /* the clip's content beside the decode file (mix-dec.content): one factor
     * per clip frame, and the draws are the samples over their frames' factors,
     * whose mean is the type's mean (each frame's samples sum to its count
     * times the type's mean once divided by mean(frame) / mean(type)) */
    cr_assert_eq(c.stages[0].gop.ncontent, p.clip_frames);
    cr_expect(fabs(dist_mean(&c.stages[0].service) - r.decode_p.mean) < 1e-5 * r.decode_p.mean,
              "P draws' mean %g, P samples' mean %g", dist_mean(&c.stages[0].service), r.decode_p.mean);
    cr_expect(fabs(dist_mean(&c.stages[0].gop.i_service) - r.decode_i.mean) < 1e-5 * r.decode_i.mean);
    double wsum = 0;                     /* the factors weighted by the samples: 1 */
    for (int i = 0; i < r.decode_p.n; i++)
        wsum += c.stages[0].gop.content[r.decode_p_at[i]];
    cr_expect(fabs(wsum / r.decode_p.n - 1) < 1e-5, "mean factor over the P samples %g", wsum / r.decode_p.n);
    /* the P draws, worked out here: each sample over (its frame's mean / the P mean) */
    double fsum[64] = {0}, want[64];
    int fn[64] = {0};
    cr_assert_leq(p.clip_frames, 64);
    cr_assert_leq(r.decode_p.n, 64);
    cr_assert_eq(c.stages[0].service.nvalues, (size_t)r.decode_p.n);
    for (int i = 0; i < r.decode_p.n; i++) {
        fsum[r.decode_p_at[i]] += r.decode_p.samples[i];
        fn[r.decode_p_at[i]]++;
    }
    for (int i = 0; i < r.decode_p.n; i++) {
        int k = r.decode_p_at[i];
        want[i] = r.decode_p.samples[i] / (fsum[k] / fn[k] / r.decode_p.mean);
    }
    qsort(want, (size_t)r.decode_p.n, sizeof *want, cmp_dbl);
    for (int i = 0; i < r.decode_p.n; i++)
        cr_expect(fabs(c.stages[0].service.values[i] - want[i]) < 2e-6, "P draw %d: %g, want %g", i,
                  c.stages[0].service.values[i], want[i]);
    cfg_free(&c);
    rp_mix_result_free(&r);
    kit_rm_rf(dir);
}

/* vlcalib wakeup --ring: the speed-up list is the ring's busy medians over
 * the first one's, so speedup[0] is 1 and speedup[1] = b2 / b1, recomputed
 * here from the printed ring_busy (4 decimals each, so to 1e-3); a bad
 * --ring-reps is refused with exit status 2. */
Test(realpipe, wakeup_ring_speedup_is_net_of_the_handoff, .timeout = 60)
{
    char *argv[] = {"wakeup", "--rounds", "200", "--ring", "2", "--ring-reps", "1"};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_not_null(out);
    int rc = vlcalib_wakeup_main((int)(sizeof argv / sizeof argv[0]), argv, out, stderr);
    fclose(out);
    cr_assert_eq(rc, 0);
    double b1 = 0, b2 = 0, s1 = 0, s2 = 0;
    const char *rb = strstr(buf, "\nring_busy: ["), *sp = strstr(buf, "\nspeedup: [");
    cr_assert(rb && sp, "%s", buf);
    cr_assert_eq(sscanf(rb, "\nring_busy: [%lf, %lf]", &b1, &b2), 2, "%s", buf);
    cr_assert_eq(sscanf(sp, "\nspeedup: [%lf, %lf]", &s1, &s2), 2, "%s", buf);
    /* (only bounds that hold on a loaded machine: other tests run beside this one) */
    cr_expect(b1 > 0 && b1 <= 1.0001, "one token keeps at most one core busy: %g", b1);
    cr_expect(b2 > 0 && b2 <= 2.0001, "two tokens keep at most two cores busy: %g", b2);
    cr_expect_float_eq(s1, 1.0, 1e-9);
    double want = b2 / b1 > 2 ? 2 : b2 / b1;
    cr_expect(fabs(s2 - want) < 1e-3, "speedup[1] %g, ring_busy %g / %g = %g", s2, b2, b1, want);
    free(buf);
    char *bad[] = {"wakeup", "--ring", "2", "--ring-reps", "0"};
    char *ebuf = NULL;
    size_t elen = 0;
    FILE *err = open_memstream(&ebuf, &elen);
    cr_assert_not_null(err);
    rc = vlcalib_wakeup_main(5, bad, stdout, err);
    fclose(err);
    cr_expect_eq(rc, 2);
    cr_expect(strstr(ebuf, "--ring-reps"), "%s", ebuf);
    free(ebuf);
}

/* rp_wake_classify on hand-made jobs with `classes` classes; it must succeed. */
static void classify_by_hand(rp_wake_result *r, const rp_wake_job *jobs, long n, int classes)
{
    char err[512] = "";
    memset(r, 0, sizeof *r);
    r->classes = classes;
    cr_assert_eq(rp_wake_classify(r, jobs, n, err, sizeof err), 0, "%s", err);
}

/* wakecal's classes on hand-made jobs (ms), 2 cores (classes 0, 1, 2+), in
 * release order (one release thread: each handed over after the one before):
 *   J0 due 0,    handed over 0.1,  runs [0.2, 1.2), a worker asleep
 *   J1 due 0.5,  handed over 0.5,  runs [0.7, 2.0), asleep
 *   J4 due 0.9,  handed over 0.95, runs [1.1, 1.5), asleep
 *   J2 due 0.96, handed over 1.25, runs [2.0, 3.0), no worker asleep
 *   J3 due 2.5,  handed over 2.6,  runs [3.0, 3.05), asleep
 *   J5 due 2.55, handed over 2.62, runs [3.05, 3.1), no worker asleep
 * Wake samples (start - handoff), by the jobs running at the handoff: J0 at
 * 0.1 (none) 0.1; J1 at 0.5 (J0, ending 1.2) 0.2, quick; J3 at 2.6 (J2,
 * ending 3.0) 0.4, held to J2's end; J4 at 0.95 (J0, J1: the first ends
 * 1.2) 0.15, quick (0.25 would be held, and 0.2 is within the 0.05
 * tolerance). J2 and J5 give none. So n 1 / 2 / 1, held 0 / 0.5 / 0, the
 * quick ones' means 0.1 / 0.2 / 0.15, the held one's 0.4.
 * Timer samples (handoff - due), by the jobs running when due: J0 at 0
 * (none) 0.1; J1 at 0.5 (J0) 0; J4 at 0.9 (J0, J1) 0.05; J2 at 0.96 (J0,
 * J1: the first ends 1.2) 0.29, held; J3 at 2.5 (J2) 0.1. J5 was due at
 * 2.55, before J3 was handed over (2.6): the thread was still late for J3
 * and handed J5 over without a timed wait, so it gives none (caught up: 1).
 * So n 1 / 2 / 2, held 0 / 0 / 0.5, quick means 0.1 / 0.05 / 0.05.
 * Without J4 no wake-up happened with two running: an error naming the class. */
Test(realpipe, wakecal_classes_by_hand)
{
    const rp_wake_job jobs[] = {
        {0.0, 0.1, 0.2, 1.2, 0, 0, 1},     {0.5, 0.5, 0.7, 2.0, 0, 0, 1},
        {0.9, 0.95, 1.1, 1.5, 1, 3, 1},    {0.96, 1.25, 2.0, 3.0, 0, 1, 0},
        {2.5, 2.6, 3.0, 3.05, 1, 3, 1},    {2.55, 2.62, 3.05, 3.1, 0, 3, 0},
    };
    rp_wake_result r;
    classify_by_hand(&r, jobs, 6, 3);
    const size_t wall[3] = {1, 2, 1}, tall[3] = {1, 2, 2};
    const double wheld[3] = {0, 0.5, 0}, theld[3] = {0, 0, 0.5};
    const double wmean[3] = {0.1, 0.2, 0.15}, tmean[3] = {0.1, 0.05, 0.05};
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(r.wake.all[k], wall[k], "wake class %d", k);
        cr_expect_eq(r.timer.all[k], tall[k], "timer class %d", k);
        close_to("wake held share", r.wake.held[k], wheld[k]);
        close_to("timer held share", r.timer.held[k], theld[k]);
        close_to("wake quick mean", r.wake.mean[k], wmean[k]);
        close_to("timer quick mean", r.timer.mean[k], tmean[k]);
        cr_expect_eq(r.wake.n[k], wall[k] - (wheld[k] > 0), "quick wake samples, class %d", k);
    }
    cr_expect_eq(r.timer_caught_up, 1, "J5 caught up");
    close_to("the held wake-up's mean", r.wake.held_ms[1], 0.4);
    close_to("the held timer's mean", r.timer.held_ms[2], 0.29);
    close_to("every wait by load: load 3, timer class 1 (J3)", r.timer.mean_at[3][1], 0.1);
    close_to("every wait by load: load 1, timer class 2 (J2, held)", r.timer.mean_at[1][2], 0.29);
    rp_wake_free(&r);
    memset(&r, 0, sizeof r);
    r.classes = 3;
    char err[512] = "";
    const rp_wake_job no_j4[] = {jobs[0], jobs[1], jobs[3], jobs[4]};
    cr_expect_eq(rp_wake_classify(&r, no_j4, 4, err, sizeof err), -1);
    cr_expect(strstr(err, "2 other jobs running or more") != NULL, "%s", err);
    cr_expect_null(r.wake.samples[0], "nothing kept on an error");
    char sp[256];
    cr_assert_eq(rp_wake_samples_path("d/w.yaml", 1, 2, sp, sizeof sp), 0);
    cr_expect_str_eq(sp, "d/w.timer2.samples");
    cr_assert_eq(rp_wake_samples_path("w", 0, 0, sp, sizeof sp), 0);
    cr_expect_str_eq(sp, "w.busy0.samples");
    cr_expect_eq(rp_wake_samples_path("a-long-name.yaml", 0, 0, sp, 8), -1);
}

/* A machine stall by hand (classes 0 and 1+; ms; {due, handed over, started,
 * ended, chain, load, asleep}): J2 is handed over at 2.06 with nothing
 * running and starts 120 ms later; the release thread, due at 3.0 for J3,
 * hands it over only at 121.0 (118 ms late, nothing running either). The
 * two waits overlap by 121.0 - 3.0 = 118 ms: the machine, not a wake-up;
 * both are left out. J7's 10 ms oversleep overlaps no wait: one thread's,
 * kept. So wake class 0: J0 0.10, J1 0.10, J5 0.08 (n 3); class 1: J6
 * 0.07; timer class 0: J0 0.05, J1 0.04, J2 0.06, J4 0.05, J5 0.02, J7 10
 * (n 6); class 1: J6 0.03 (J5 running at its due time). */
Test(realpipe, wakecal_machine_stall_by_hand)
{
    const rp_wake_job jobs[] = {
        {0.0, 0.05, 0.15, 0.6, 0, 0, 1},       {1.0, 1.04, 1.14, 1.5, 0, 0, 1},
        {2.0, 2.06, 122.06, 122.5, 0, 0, 1},   {3.0, 121.0, 122.5, 123.0, 0, 0, 0},
        {122.0, 122.05, 123.0, 123.4, 0, 0, 0}, {130.0, 130.02, 130.1, 131.0, 0, 1, 1},
        {130.5, 130.53, 130.6, 130.9, 0, 1, 1}, {140.0, 150.0, 150.1, 150.5, 0, 2, 0},
    };
    rp_wake_result r;
    classify_by_hand(&r, jobs, 8, 2);
    cr_expect_eq(r.stalls, 2, "J2's wait and J3's lateness");
    close_to("the stall's overlap", r.stall_ms, 118.0);
    cr_expect_eq(r.wake.n[0], 3, "J2's 120 ms wait left out");
    cr_expect_eq(r.wake.all[0], 3);
    close_to("the wake class-0 mean", r.wake.mean[0], (0.10 + 0.10 + 0.08) / 3);
    cr_expect_eq(r.wake.n[1], 1);
    close_to("the wake class-1 sample", r.wake.samples[1][0], 0.07);
    cr_expect_eq(r.timer.n[0], 6, "J3's 118 ms lateness left out, J7's 10 ms kept");
    close_to("the longest timer sample kept: J7's", r.timer.samples[0][5], 10.0);
    close_to("the timer class-1 sample", r.timer.samples[1][0], 0.03);
    cr_expect_eq(r.timer_caught_up, 0);
    rp_wake_free(&r);
}

/* The wake index by hand: two jobs with the cores idle (one class), waits
 * 0.10 and 0.40 ms, the release thread 0.04 and 0.16 ms late; the p90s
 * (linear between order statistics) 0.10 + 0.9 * 0.30 = 0.37 and
 * 0.04 + 0.9 * 0.12 = 0.148, their geometric mean sqrt(0.05476). */
Test(realpipe, wake_index_by_hand)
{
    const rp_wake_job jobs[] = {{0.0, 0.04, 0.14, 0.5, 0, 0, 1}, {1.0, 1.16, 1.56, 2.0, 0, 2, 1}};
    rp_wake_result r;
    classify_by_hand(&r, jobs, 2, 1);
    close_to("wake p90, class 0", r.wake.p90[0], 0.37);
    close_to("timer p90, class 0", r.timer.p90[0], 0.148);
    close_to("the wake index", r.index_ms, sqrt(0.05476));
    rp_wake_free(&r);
}

/* A short wakecal on the real ops (1 core: classes 0 and 1+): every release
 * but the caught-up ones is classed for the timer, the wake samples are those of jobs a worker
 * slept for, and each class's summary is its samples'. */
Test(realpipe, wakecal_run, .timeout = 120)
{
    rp_params p;
    rp_params_default(&p);
    p.cores = 1;
    p.gop = 4;
    rp_wake_result r;
    char err[1024] = "";
    cr_assert_eq(rp_wake_run(&p, 0.5, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.classes, 2);
    cr_expect_eq(r.workers, 2);
    cr_expect_gt(r.job_ms, 0);
    size_t nw = 0, nt = 0;
    for (int k = 0; k < 2; k++) {
        const rp_wake_classes *f[2] = {&r.wake, &r.timer};
        for (int m = 0; m < 2; m++) {
            double sum = 0;
            for (size_t i = 0; i < f[m]->n[k]; i++) {
                sum += f[m]->samples[k][i];
                if (i)
                    cr_expect_leq(f[m]->samples[k][i - 1], f[m]->samples[k][i], "sorted");
            }
            cr_assert_gt(f[m]->n[k], 0);
            close_to("mean of the samples", f[m]->mean[k], sum / (double)f[m]->n[k]);
            cr_expect(f[m]->p50[k] <= f[m]->p90[k] && f[m]->p90[k] <= f[m]->p99[k], "quantiles in order");
        }
        nw += r.wake.all[k];
        nt += r.timer.all[k];
        cr_expect_eq(r.wake.n[k], (size_t)llround((1 - r.wake.held[k]) * (double)r.wake.all[k]),
                     "the quick samples are the ones not held");
    }
    /* a machine stall during the run (rp_wake_classify) leaves a timer sample
     * out too: r.stalls counts those and their wake samples together */
    cr_expect_leq((long)nt + r.timer_caught_up, r.jobs, "a timer sample per release at most");
    cr_expect_geq((long)nt + r.timer_caught_up + r.stalls, r.jobs,
                  "every release has a timer sample but the caught-up and the stalled ones");
    cr_expect_lt(r.timer_caught_up, r.jobs);
    cr_expect_leq((long)nw, r.jobs);
    close_to("nothing held with no job running", r.wake.held[0] + r.timer.held[0], 0);
    rp_wake_free(&r);
    p.cores = 9;
    cr_expect_eq(rp_wake_run(&p, 0.5, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "cores 1..8") != NULL, "%s", err);
}

/* A wakecal file's samples become the scenario's cpu.wake_busy and
 * cpu.timer_busy, class by class (empirical: the mean is the samples'). */
Test(realpipe, scenario_with_wakecal)
{
    char dir[64], path[128];
    kit_tmpdir(dir, sizeof dir, "wakecal");
    const char *names[4] = {"w.busy0.samples", "w.busy1.samples", "w.timer0.samples",
                            "w.timer1.samples"};
    const char *vals[4] = {"0.01\n0.03\n", "0.2\n", "0.05\n0.07\n0.09\n", "0.4\n0.6\n"};
    const double means[4] = {0.02, 0.2, 0.07, 0.5};
    for (int i = 0; i < 4; i++) {
        FILE *f = fixture_file(dir, names[i], path, sizeof path);
        fputs(vals[i], f);
        fclose(f);
    }
    rp_params p;
    rp_params_default(&p);
    p.nwake_busy = 2;
    snprintf(p.wake_calib, sizeof p.wake_calib, "%s/w.yaml", dir);
    p.wake_held[1] = 0.3;
    p.timer_held[1] = 0.125;
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_assert_eq(c.cpu.nwake_busy, 2);
    cr_assert_eq(c.cpu.ntimer_busy, 2);
    cr_assert_eq(c.cpu.nwake_held, 2);
    cr_assert_eq(c.cpu.ntimer_held, 2);
    close_to("wake_held", c.cpu.wake_held[0] + c.cpu.wake_held[1], 0.3);
    close_to("timer_held", c.cpu.timer_held[1], 0.125);
    for (int k = 0; k < 2; k++) {
        close_to("wake_busy mean", dist_mean(&c.cpu.wake_busy[k]), means[k]);
        close_to("timer_busy mean", dist_mean(&c.cpu.timer_busy[k]), means[2 + k]);
    }
    cfg_free(&c);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* driftcal's credit: a unit is split over the windows it overlaps in
 * proportion to its time in each. Windows of 1 s, three of them: a unit
 * from 0.5 to 1.5 s gives half to each of windows 0 and 1; one from -0.5
 * to 0.5 gives half to window 0 (the rest is before the windows); one from
 * 2.5 to 3.5, half to window 2 (the rest after); one from 1.2 to 1.4, all
 * to window 1: [1, 1.5, 0.5]. */
Test(realpipe, drift_credit_by_overlap)
{
    double win[3] = {0, 0, 0};
    rp_drift_credit(win, 3, 1.0, 0.5, 1.5);
    rp_drift_credit(win, 3, 1.0, -0.5, 0.5);
    rp_drift_credit(win, 3, 1.0, 2.5, 3.5);
    rp_drift_credit(win, 3, 1.0, 1.2, 1.4);
    rp_drift_credit(win, 3, 1.0, 1.0, 1.0);    /* no time: nothing */
    close_to("window 0", win[0], 1.0);
    close_to("window 1", win[1], 1.5);
    close_to("window 2", win[2], 0.5);
}

/* driftcal's summary by hand. Two threads, four windows of 500 ms, units
 * [1, 3, 1, 3] and [2, 4, 0, 2]: together [3, 7, 1, 5], mean 4 per window
 * (8 per s); factors [0.75, 1.75, 0.25, 1.25], deviations [-0.25, 0.75,
 * -0.75, 0.25], their squares' sum 1.25: sd sqrt(1.25 / 3); lag 1
 * (-0.1875 - 0.5625 - 0.1875) / 1.25 = -0.75; lag 5 past the series: NAN.
 * The threads' correlation: deviations [-1, 1, -1, 1] and [0, 2, -2, 0],
 * 4 / sqrt(4 * 8). */
Test(realpipe, drift_summary_by_hand)
{
    double a[4] = {1, 3, 1, 3}, b[4] = {2, 4, 0, 2};
    double *win[2] = {a, b};
    rp_drift_result r;
    char err[256] = "";
    memset(&r, 0, sizeof r);
    cr_assert_eq(rp_drift_summarize(win, 2, 4, 500, &r, err, sizeof err), 0, "%s", err);
    close_to("units per s", r.units_per_s, 8);
    const double want[4] = {0.75, 1.75, 0.25, 1.25};
    for (int k = 0; k < 4; k++)
        close_to("factor", r.factors[k], want[k]);
    close_to("sd", r.sd, sqrt(1.25 / 3));
    close_to("lo", r.lo, 0.25);
    close_to("hi", r.hi, 1.75);
    close_to("lag 1", r.lag1, -0.75);
    cr_expect(isnan(r.lag5), "lag 5 of 4 windows: %g", r.lag5);
    close_to("cross", r.cross, 4 / sqrt(32));
    close_to("seconds", r.seconds, 2);
    rp_drift_free(&r);
    double z[4] = {0, 0, 0, 0};
    double *none[1] = {z};
    memset(&r, 0, sizeof r);
    cr_expect_eq(rp_drift_summarize(none, 1, 4, 500, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "no unit finished") != NULL, "%s", err);
    rp_drift_free(&r);
}

/* A short driftcal on the real ops: its factors average 1, every unit a
 * thread finished counts (what lies in the windows: all but the warm-up's
 * and the last one's parts, so at least the credited sum less one per
 * thread), and too few windows are refused. */
Test(realpipe, driftcal_run, .timeout = 60)
{
    rp_params p;
    rp_params_default(&p);
    p.gop = 4;
    rp_drift_result r;
    char err[512] = "";
    cr_assert_eq(rp_drift_run(&p, 2, 0.8, 200, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.windows, 4);
    double sum = 0;
    for (int k = 0; k < r.windows; k++)
        sum += r.factors[k];
    close_to("the factors' mean", sum / r.windows, 1);
    double credited = r.units_per_s * 0.8;
    cr_expect_gt(r.done[0] + r.done[1], credited - 1e-9, "done %ld + %ld, credited %g",
                 r.done[0], r.done[1], credited);
    rp_drift_free(&r);
    cr_expect_eq(rp_drift_run(&p, 2, 0.5, 200, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "windows") != NULL, "%s", err);
    rp_drift_free(&r);
}

/* A driftcal's speed line goes into the scenario's cpu block as it is, and
 * the simulator reads it back: window and factors. */
Test(realpipe, scenario_with_speed)
{
    rp_params p;
    rp_params_default(&p);
    p.speed = "{window_ms: 500, factors: [1.5, 0.5, 1]}";
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_assert_eq(c.cpu.nspeed, 3);
    close_to("window", c.cpu.speed_window_ms, 500);
    close_to("factor 0", c.cpu.speed[0], 1.5);
    close_to("factor 2", c.cpu.speed[2], 1);
    cfg_free(&c);
    p.speed = NULL;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_expect_eq(c.cpu.nspeed, 0);
    cfg_free(&c);
}

/* stackcal's figures by hand (ms, 2 CPUs; every op woken for, but D). A on
 * CPU 0 over 0-10. B starts at 2 on CPU 0 beside A with CPU 1 free (a
 * chance, stacked: a spell of the first kind) and moves to CPU 1 at 5 (a
 * move out of it), ends at 8. C on CPU 1 over 12-14 (nothing running: no
 * chance). D on CPU 0 over 13-15 beside C with CPU 0 free, but its thread
 * went on from an earlier op (no chance). E on CPU 0 over 20-30; F on CPU 0
 * over 21-23 beside it (a chance, stacked; it ends unmoved); E moves to
 * CPU 1 at 25 while alone (another move). H on CPU 0 and I on CPU 1 over
 * 40-50 and 40-44 (I a chance, not stacked); J on CPU 0 over 41-47 (both
 * CPUs busy: no chance) until I's end at 44 leaves CPU 1 free beside CPU
 * 0's two (a spell of the second kind), J moves to CPU 1 at 45. G on CPU
 * 5 is left out. So 3 chances, 2 stacked; shared spells 2-5 and 21-23 of
 * the first kind (5 ms, 1 move) and 44-45 of the second (1 ms, 1 move):
 * migrate_ms 6 / 2 = 3; two ops over 2-8, 13-14, 21-23, 40-41, 44-47:
 * 13 ms, 6 of them on one CPU. E and F are load step 1, the rest step 0:
 * step 1 alone has 1 chance, stacked; 2 ms shared, no move (-1); 2 ms of
 * two ops, all on one CPU. */
static rp_stack_op stack_op(double t0, double t1, int load, int cpu, double t_move, int cpu2)
{
    rp_stack_op o;
    memset(&o, 0, sizeof o);
    o.woken = 1;
    o.t0 = t0;
    o.t1 = t1;
    o.load = load;
    o.nseg = t_move > 0 ? 2 : 1;
    o.seg[0].t = t0;
    o.seg[0].cpu = cpu;
    o.seg[1].t = t_move;
    o.seg[1].cpu = cpu2;
    return o;
}

Test(realpipe, stack_summary_by_hand)
{
    rp_stack_op op[10] = {stack_op(0, 10, 0, 0, 0, 0), stack_op(2, 8, 0, 0, 5, 1),
                          stack_op(12, 14, 0, 1, 0, 0), stack_op(13, 15, 0, 0, 0, 0),
                          stack_op(20, 30, 1, 0, 25, 1), stack_op(21, 23, 1, 0, 0, 0),
                          stack_op(0, 100, 0, 5, 0, 0), stack_op(40, 50, 0, 0, 0, 0),
                          stack_op(40, 44, 0, 1, 0, 0), stack_op(41, 47, 0, 0, 45, 1)};
    op[3].woken = 0;
    rp_stack_sum s;
    cr_assert_eq(rp_stack_summarize(op, 10, 2, -1, &s), 0);
    cr_expect_eq(s.ops, 9);
    cr_expect_eq(s.chances, 3);
    cr_expect_eq(s.stacked, 2);
    close_to("share", s.share, 2.0 / 3.0);
    close_to("exposure", s.exposure_ms, 6);
    close_to("spells after a stacked start", s.spell_ms[0], 5);
    close_to("spells after a CPU emptied", s.spell_ms[1], 1);
    cr_expect_eq(s.moves, 2);
    cr_expect_eq(s.spell_moves[0], 1);
    cr_expect_eq(s.spell_moves[1], 1);
    cr_expect_eq(s.spells[0], 2);      /* 2-5 and 21-23 */
    cr_expect_eq(s.spells[1], 1);      /* 44-45 */
    cr_expect_eq(s.spells[2], 0);
    cr_expect_eq(s.spell_ended[0][0], 1);   /* 21-23: F's end */
    cr_expect_eq(s.spell_ended[0][2], 1);   /* 2-5: B's move */
    cr_expect_eq(s.spell_ended[1][2], 1);   /* 44-45: J's move */
    cr_expect_eq(s.spell_ended[0][1] + s.spell_ended[1][0] + s.spell_ended[1][1], 0);
    cr_expect_eq(s.other_moves, 1);
    close_to("migrate_ms", s.migrate_ms, 3);
    close_to("wait after a stacked start", s.spell_wait_ms[0], 5);
    close_to("wait after a CPU emptied", s.spell_wait_ms[1], 1);
    close_to("two ops", s.two_ms, 13);
    close_to("two on one CPU", s.two_same_ms, 6);
    /* by age (bins to 0.25, 0.5, 1, 2, 4, 8, more): 2-5 spends ages 0-3 and
     * moves at 3 (the bin to 4), 21-23 ages 0-2 unmoved; 44-45 ages 0-1,
     * moved at 1 (the bin to 1: a bin holds its upper end) */
    const double age0[RP_STACK_NAGE] = {0.5, 0.5, 1, 2, 1, 0, 0};
    const double age1[RP_STACK_NAGE] = {0.25, 0.25, 0.5, 0, 0, 0, 0};
    const long mv0[RP_STACK_NAGE] = {0, 0, 0, 0, 1, 0, 0}, mv1[RP_STACK_NAGE] = {0, 0, 1, 0, 0, 0, 0};
    for (int b = 0; b < RP_STACK_NAGE; b++) {
        close_to("time by age after a start", s.age_ms[0][b], age0[b]);
        close_to("time by age after a CPU emptied", s.age_ms[1][b], age1[b]);
        cr_expect_eq(s.age_moves[0][b], mv0[b], "bin %d", b);
        cr_expect_eq(s.age_moves[1][b], mv1[b], "bin %d", b);
    }
    cr_assert_eq(rp_stack_summarize(op, 10, 2, 1, &s), 0);
    cr_expect_eq(s.ops, 2);
    cr_expect_eq(s.chances, 1);
    cr_expect_eq(s.stacked, 1);
    close_to("step 1 exposure", s.exposure_ms, 2);
    cr_expect_eq(s.moves, 0);
    cr_expect_eq(s.other_moves, 1);
    close_to("step 1: no move", s.migrate_ms, -1);
    close_to("step 1 two ops", s.two_ms, 2);
    close_to("step 1 on one CPU", s.two_same_ms, 2);
}

/* The share's chances are starts beside exactly one op (ms, 2 CPUs, every op
 * woken for): A on CPU 0 over 0-10, B on CPU 0 over 1-9 beside it with CPU 1
 * free (a chance, stacked). C starts on CPU 1 at 2 while CPU 0 runs two (a
 * crowded chance, not stacked) and ends at 4; D starts on CPU 0 at 5 while
 * it still runs two and CPU 1 none (crowded, stacked), ends at 6. So 1
 * chance, 1 stacked, share 1; 2 crowded, 1 of them stacked. Spells: 1-2 (a
 * start began it, C's start ended it) and 4-9 (C's end began it, B's end
 * ended it). */
Test(realpipe, stack_crowded_starts_apart)
{
    rp_stack_op op[4] = {stack_op(0, 10, 0, 0, 0, 0), stack_op(1, 9, 0, 0, 0, 0),
                         stack_op(2, 4, 0, 1, 0, 0), stack_op(5, 6, 0, 0, 0, 0)};
    rp_stack_sum s;
    cr_assert_eq(rp_stack_summarize(op, 4, 2, -1, &s), 0);
    cr_expect_eq(s.chances, 1);
    cr_expect_eq(s.stacked, 1);
    close_to("share", s.share, 1);
    cr_expect_eq(s.chances2, 2);
    cr_expect_eq(s.stacked2, 1);
    cr_expect_eq(s.spells[0], 1);
    cr_expect_eq(s.spells[1], 1);
    cr_expect_eq(s.spell_ended[0][1], 1);
    cr_expect_eq(s.spell_ended[1][0], 1);
    close_to("after the start", s.spell_ms[0], 1);
    close_to("after C's end", s.spell_ms[1], 5);
}

/* A CPU emptied between two ops of a thread that goes on is not a CPU
 * gone idle (ms): A (thread 0) on CPU 0 over 0-10, D (thread 2) stacked
 * beside it over 2-6, B (thread 1) on CPU 1 over 0-4 and the same
 * thread's C on CPU 1 over 4.5-8. From B's end to C's start CPU 1 runs no
 * op while CPU 0 holds two: 0.5 ms, counted apart when C's thread went on
 * (C not woken), and as a CPU emptied when it slept for C. */
Test(realpipe, stack_going_on_by_hand)
{
    for (int slept = 0; slept < 2; slept++) {
        rp_stack_op op[4] = {stack_op(0, 10, 0, 0, 0, 0), stack_op(2, 6, 0, 0, 0, 0),
                             stack_op(0, 4, 0, 1, 0, 0), stack_op(4.5, 8, 0, 1, 0, 0)};
        op[1].thread = 2;
        op[2].thread = op[3].thread = 1;
        op[3].woken = slept;
        rp_stack_sum s;
        cr_assert_eq(rp_stack_summarize(op, 4, 2, -1, &s), 0);
        close_to("between a going-on thread's ops", s.spell_ms[2], slept ? 0 : 0.5);
        close_to("after a CPU emptied", s.spell_ms[1], slept ? 0.5 : 0);
        close_to("exposure", s.exposure_ms, slept ? 0.5 : 0);
        close_to("after a stacked start", s.spell_ms[0], 0);
        cr_expect_eq(s.spells[0], 0);
        cr_expect_eq(s.spells[1], slept);
        cr_expect_eq(s.spells[2], !slept);
        cr_expect_eq(s.spell_ended[slept ? 1 : 2][1], 1);   /* C's start on CPU 1 */
    }
}

/* Who runs when two ops share a CPU, by hand (ms). A on CPU 0 over 0-10,
 * off it over 2-5; B on CPU 0 over 2-4: beside A, which is off until 5,
 * after B's end: B ran through (2 ms). C on CPU 1 over 0-20, moved to CPU 0
 * at 13.5, off its CPU over 6-7 and 12-13.5. D on CPU 1 over 6-9: C back
 * at 7 on CPU 1, before D's end: cut after 1 ms. E on CPU 1 over 12-14: C
 * back at 13.5, but on CPU 0: lost to another CPU. F on CPU 0 over 15-16,
 * beside C (there since 13.5), which shows no gap then. The turns' wait:
 * (2 + 1 + 1.5) ms of first runs over the 1 turn seen, 4.5 ms. Of the
 * gaps (5.5 ms), B had A's CPU over 2-4, D had C's over 6-7 and E over
 * 12-13.5: only 4-5 was off with no op beside, 1 ms. The ops took 38 ms,
 * 32.5 of them on a CPU. A is the executor's: it yielded its CPU 2 ms of
 * its 10 (to B), the decodes 2.5 ms (C to D and E) of their 28. */
Test(realpipe, stack_turns_by_hand)
{
    rp_stack_op op[6] = {stack_op(0, 10, 0, 0, 0, 0), stack_op(2, 4, 0, 0, 0, 0),
                         stack_op(0, 20, 0, 1, 13.5, 0), stack_op(6, 9, 0, 1, 0, 0),
                         stack_op(12, 14, 0, 1, 0, 0), stack_op(15, 16, 0, 0, 0, 0)};
    op[0].ngap = 1;
    op[0].gap[0].t0 = 2;
    op[0].gap[0].t1 = 5;
    op[0].chain = 1;
    op[2].ngap = 2;
    op[2].gap[0].t0 = 6;
    op[2].gap[0].t1 = 7;
    op[2].gap[1].t0 = 12;
    op[2].gap[1].t1 = 13.5;
    rp_stack_sum s;
    cr_assert_eq(rp_stack_summarize(op, 6, 2, -1, &s), 0);
    cr_expect_eq(s.shared_starts, 4);
    cr_expect_eq(s.through, 1);
    close_to("ran through", s.through_ms, 2);
    cr_expect_eq(s.cut, 1);
    close_to("first run when cut", s.slice_ms, 1);
    cr_expect_eq(s.moved_back, 1);
    cr_expect_eq(s.no_gap, 1);
    close_to("turns' exposure", s.turn_exposure_ms, 4.5);
    close_to("switch_ms", s.switch_ms, 4.5);
    close_to("op time", s.op_ms, 38);
    close_to("on a CPU", s.on_cpu_ms, 32.5);
    close_to("off with none beside", s.lone_gap_ms, 1);
    close_to("first start to last end", s.span_ms, 20);
    /* CPU 0 ran an op over 0-10 and 13.5-20 (C there from 13.5), CPU 1 over
     * 0-14 (C, then E to 14): 30.5 of 2 x 20 ms */
    close_to("CPUs busy", s.busy_cpu_ms, 30.5);
    close_to("utilisation", s.util, 30.5 / 40);
    cr_expect_eq(s.chain_ops, 1);
    close_to("the executor's time", s.kind_ms[1], 10);
    close_to("the decodes' time", s.kind_ms[0], 28);
    close_to("the executor yielded", s.kind_yield_ms[1], 2);
    close_to("the decodes yielded", s.kind_yield_ms[0], 2.5);
}

/* stackcal on this machine, short: the figures are consistent (every
 * stacked start was a chance, the share is their ratio, the wait is the
 * exposure over the moves, no more time on one CPU than with two ops) and
 * the file's stack line reaches the scenario's cpu.stack. The figures
 * themselves are the machine's, not asserted. */
Test(realpipe, stackcal_run_and_scenario, .timeout = 120)
{
    rp_params p;
    rp_params_default(&p);
    rp_stack_result r;
    char err[512] = "";
    /* Whether the host moves a thread within a second is its scheduler's
     * choice (a quiet machine may not): a run that saw none is retried
     * longer, as stackcal's own message tells a user to. */
    int rc = -1;
    for (double s = 1.0; rc != 0 && s <= 4.0; s *= 2) {
        rc = rp_stack_run(&p, s, 1, &r, err, sizeof err);
        if (rc != 0 && !strstr(err, "moves seen"))
            break;
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(r.decode_ms > 0 && r.chain_ms > 0 && r.units_per_ms > 0);
    cr_expect(r.all.stacked <= r.all.chances && r.all.chances > 0);
    close_to("share", r.all.share, (double)r.all.stacked / (double)r.all.chances);
    close_to("wait", r.all.migrate_ms, r.all.exposure_ms / (double)r.all.moves);
    cr_expect(r.all.two_same_ms <= r.all.two_ms + 1e-9);
    long ops = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        ops += r.at[l].ops;
    cr_expect_eq(ops, r.all.ops);
    p.has_stack = 1;
    p.stack_share = 0.125;
    p.stack_migrate_ms = 3.5;
    p.stack_pull_ms = 0.75;
    p.nstack_load = 2;
    p.stack_load_util[0] = 0.3;
    p.stack_load_util[1] = 0.9;
    p.stack_load_share[0] = 0.05;
    p.stack_load_share[1] = 0.2;
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_expect_eq(c.cpu.has_stack, 1);
    close_to("scenario share: the list's first", c.cpu.stack_share, 0.05);
    close_to("scenario migrate_ms", c.cpu.stack_migrate_ms, 3.5);
    close_to("scenario pull_ms", c.cpu.stack_pull_ms, 0.75);
    cr_expect_eq(c.cpu.nstack_share, 2);
    close_to("scenario share at 0.9", c.cpu.stack_shares[1], 0.2);
    close_to("scenario share_load", c.cpu.stack_share_load[0], 0.3);
    cfg_free(&c);
    p.stack_switch_ms = 2.5;           /* turns after exponential waits (stackcal's) */
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    close_to("scenario switch_ms", c.cpu.stack_switch_ms, 2.5);
    close_to("no tick without turncal", c.cpu.stack_tick_ms, 0);
    cfg_free(&c);
    p.turns.tick_ms = 3.98;            /* turncal's: turns at ticks instead */
    p.turns.slice_ms = 0.625;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    close_to("scenario tick_ms", c.cpu.stack_tick_ms, 3.98);
    close_to("scenario slice_ms", c.cpu.stack_slice_ms, 0.625);
    close_to("no exponential turns beside the ticks", c.cpu.stack_switch_ms, 0);
    cr_expect_eq(c.cpu.nstack_through, 0, "no op through unless turncal says");
    cfg_free(&c);
    p.turns.slice_ms = 0;              /* turncal's through shares */
    p.turns.nthrough = 3;
    memcpy(p.turns.work_ms, (const double[]){0.5, 1, 2}, 3 * sizeof(double));
    memcpy(p.turns.share, (const double[]){0.99, 0.79, 0.03}, 3 * sizeof(double));
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_expect_eq(c.cpu.nstack_through, 3);
    close_to("scenario through work", c.cpu.stack_through_work_ms[1], 1);
    close_to("scenario through share", c.cpu.stack_through_share[2], 0.03);
    close_to("scenario slice_ms 0", c.cpu.stack_slice_ms, 0);
    cr_expect_eq(c.cpu.nstack_protect, 0, "no protection unless turncal says");
    cfg_free(&c);
    p.turns.nprotect = 2;              /* turncal's protect part */
    p.turns.protect_ms = 1.39;
    memcpy(p.turns.pwork_ms, (const double[]){0.25, 2}, 2 * sizeof(double));
    memcpy(p.turns.pshare, (const double[]){0.23, 0.98}, 2 * sizeof(double));
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_expect_eq(c.cpu.nstack_protect, 2);
    close_to("scenario protect.ms", c.cpu.stack_protect_ms, 1.39);
    close_to("scenario protect work", c.cpu.stack_protect_work_ms[1], 2);
    close_to("scenario protect share", c.cpu.stack_protect_share[0], 0.23);
    cr_expect_eq(c.cpu.nstack_through, 3, "the through part beside it");
    cfg_free(&c);
}

/* The op log's summary by hand (ms): A decode on CPU 0 over 0-10 (8 of
 * CPU), B encode on CPU 0 over 5-15 (10), C prefill on CPU 1 over 12-20
 * (4), D a decode that moved from CPU 0 to 1 over 30-31 (1), E one before
 * the warm-up's end (start -5: left out). Ops ran over 0-20 (D moved, so it
 * is not in the overlap): exactly two over 5-10 (A and B, both on CPU 0)
 * and 12-15 (B and C, one each): 8 ms, 5 of them on one CPU. The log keeps
 * its capacity's first records and counts the rest. */
Test(realpipe, oplog_summary_by_hand)
{
    rp_oplog l;
    cr_assert_eq(rp_oplog_init(&l, 5), 0);
    const int64_t ms = 1000000;
    rp_oplog_add(&l, RP_OP_DECODE, 1, -1, 0, 0, 0, 10 * ms, 8 * ms);
    rp_oplog_add(&l, RP_OP_ENCODE, 2, -1, 0, 0, 5 * ms, 15 * ms, 10 * ms);
    rp_oplog_add(&l, RP_OP_PREFILL, 2, -1, 1, 1, 12 * ms, 20 * ms, 4 * ms);
    rp_oplog_add(&l, RP_OP_DECODE, 1, -1, 0, 1, 30 * ms, 31 * ms, 1 * ms);
    rp_oplog_add(&l, RP_OP_DECODE, 1, -1, 1, 1, -5 * ms, -1 * ms, 4 * ms);
    rp_oplog_add(&l, RP_OP_DECODE, 1, -1, 1, 1, 40 * ms, 41 * ms, 1 * ms);   /* past the capacity */
    cr_assert_eq(rp_oplog_len(&l), 5);
    cr_expect_eq(atomic_load(&l.n), 6);
    rp_opsum s;
    cr_assert_eq(rp_oplog_summarize(l.op, rp_oplog_len(&l), 0, &s), 0);
    cr_expect_eq(s.n[RP_OP_DECODE], 2);
    close_to("decode wall", s.wall_ms[RP_OP_DECODE], 11);
    close_to("decode cpu", s.cpu_ms[RP_OP_DECODE], 9);
    close_to("encode wall", s.wall_ms[RP_OP_ENCODE], 10);
    close_to("prefill cpu", s.cpu_ms[RP_OP_PREFILL], 4);
    cr_expect_eq(s.n[RP_OP_REDUCE], 0);
    cr_expect_eq(s.moved, 1);
    close_to("busy", s.busy_ms, 20);
    close_to("two", s.two_ms, 8);
    close_to("two on one CPU", s.two_same_ms, 5);
    rp_oplog_free(&l);
}

/* Alone or beside an op on another CPU, by hand (ms; CPU time in
 * brackets). Decodes of clip frame 5: A 0-2 on CPU 0 (2.0), alone; B 10-13
 * on CPU 0 (2.4), covered by C, an encode of 2 on CPU 1 over 9-14: beside
 * (C itself is covered 3 of 5: neither). Frame 7: D 20-21 (1.0) and R 80-81
 * (1.2) alone; E 30-31 on CPU 1 (1.3) beside F (frame 9, CPU 0, 29.95-31.5;
 * F covered 1 of 1.55: neither). Frame 11: S 90-91 on CPU 1 (1.0) beside T
 * (encode of 1, CPU 0, 89-92): beside, but frame 11 was never alone. Encodes
 * of 2: G 40-45 alone (5.0); H 50-55 on CPU 1 (5.5), covered only by two
 * decodes on CPU 0 together (I 49-52.5, J 52.4-56: neither covers 90 %,
 * and they share CPU 0, so are neither): beside. K (60-61, CPU 0) is covered
 * by L, which moved CPU; M and N share CPU 1; P is before from_ns: none
 * counts (L started on CPU 1, but may have run on CPU 0).
 * decode: alone 3, beside 3 (B, E, S), paired 2 (B, E): ratio (2.4 + 1.3)
 * / (2.0 + (1.0 + 1.2) / 2) = 3.7 / 3.1; naive ((2.4 + 1.3 + 1.0) / 3) /
 * ((2.0 + 1.0 + 1.2) / 3) = 4.7 / 4.2. encode: 1 and 1, 5.5 / 5.0. */
Test(realpipe, oplog_beside_by_hand)
{
    rp_oplog l;
    cr_assert_eq(rp_oplog_init(&l, 32), 0);
    const double ms = 1e6;
#define OP(kind, b, f, c0, c1, s, e, u) \
    rp_oplog_add(&l, RP_OP_##kind, b, f, c0, c1, (int64_t)((s) * ms), (int64_t)((e) * ms), (int64_t)((u) * ms))
    OP(DECODE, 1, 5, 0, 0, 0, 2, 2.0);          /* A */
    OP(DECODE, 1, 5, 0, 0, 10, 13, 2.4);        /* B */
    OP(ENCODE, 2, -1, 1, 1, 9, 14, 4);          /* C */
    OP(DECODE, 1, 7, 1, 1, 20, 21, 1.0);        /* D */
    OP(DECODE, 1, 7, 1, 1, 30, 31, 1.3);        /* E */
    OP(DECODE, 1, 9, 0, 0, 29.95, 31.5, 1.5);   /* F */
    OP(ENCODE, 2, -1, 0, 0, 40, 45, 5.0);       /* G */
    OP(ENCODE, 2, -1, 1, 1, 50, 55, 5.5);       /* H */
    OP(DECODE, 1, 5, 0, 0, 49, 52.5, 3);        /* I */
    OP(DECODE, 1, 5, 0, 0, 52.4, 56, 3);        /* J */
    OP(DECODE, 1, 5, 0, 0, 60, 61, 9);          /* K */
    OP(DECODE, 1, 5, 1, 0, 59.9, 62, 1);        /* L */
    OP(DECODE, 1, 5, 1, 1, 70, 71, 9);          /* M */
    OP(PREFILL, 1, -1, 1, 1, 70.5, 71.5, 1);    /* N */
    OP(DECODE, 1, 7, 0, 0, 80, 81, 1.2);        /* R */
    OP(DECODE, 1, 11, 1, 1, 90, 91, 1.0);       /* S */
    OP(ENCODE, 1, -1, 0, 0, 89, 92, 3);         /* T */
    OP(DECODE, 1, 5, 1, 1, -3, -1, 9);          /* P */
#undef OP
    rp_opbeside b;
    cr_assert_eq(rp_oplog_beside(l.op, rp_oplog_len(&l), 0, &b), 0);
    cr_expect_eq(b.alone[RP_OP_DECODE], 3);
    cr_expect_eq(b.beside[RP_OP_DECODE], 3);
    cr_expect_eq(b.paired[RP_OP_DECODE], 2);
    close_to("decode ratio", b.ratio[RP_OP_DECODE], 3.7 / 3.1);
    close_to("decode naive", b.naive[RP_OP_DECODE], 4.7 / 4.2);
    cr_expect_eq(b.alone[RP_OP_ENCODE], 1);
    cr_expect_eq(b.beside[RP_OP_ENCODE], 1);
    close_to("encode ratio", b.ratio[RP_OP_ENCODE], 1.1);
    close_to("encode naive", b.naive[RP_OP_ENCODE], 1.1);
    cr_expect_eq(b.alone[RP_OP_PREFILL] + b.beside[RP_OP_PREFILL], 0, "N shares its CPU");
    cr_expect_eq(b.ratio[RP_OP_PREFILL], 0);
    rp_oplog_free(&l);
}

/* coldcal's factors by hand: keep_every 2 weighs a chain half a decode.
 * Gap 0: 1.0 + 2.0 / 2 = 2.0; gap 3: 1.1 + 2.4 / 2 = 2.3, x 1.15; a gap
 * without samples is refused. */
Test(realpipe, cold_factors_by_hand)
{
    rp_cold_result r;
    memset(&r, 0, sizeof r);
    r.ngaps = 2;
    r.gap_ms[1] = 3;
    r.dec_n[0] = r.dec_n[1] = r.chain_n[0] = r.chain_n[1] = 10;
    r.dec_ms[0] = 1.0;
    r.dec_ms[1] = 1.1;
    r.chain_ms[0] = 2.0;
    r.chain_ms[1] = 2.4;
    cr_assert_eq(rp_cold_factors(&r, 2), 0);
    close_to("factor at 0", r.factor[0], 1);
    close_to("factor at 3 ms", r.factor[1], 1.15);
    r.chain_n[1] = 0;
    cr_expect_eq(rp_cold_factors(&r, 2), -1);
}

/* A short coldcal on the real ops: every gap gets decodes and chains, the
 * first gap's factor is 1; gaps not starting at 0 or not increasing are
 * refused. */
Test(realpipe, coldcal_run, .timeout = 60)
{
    rp_params p;
    rp_params_default(&p);
    p.streams = 2;
    rp_cold_result r;
    char err[512] = "";
    const double gaps[] = {0, 1, 5};
    cr_assert_eq(rp_cold_run(&p, gaps, 3, 1.0, 7, &r, err, sizeof err), 0, "%s", err);
    for (int g = 0; g < 3; g++)
        cr_expect(r.dec_n[g] > 0 && r.chain_n[g] > 0 && r.dec_ms[g] > 0 && r.chain_ms[g] > 0,
                  "gap %d: %ld decodes, %ld chains", g, r.dec_n[g], r.chain_n[g]);
    close_to("factor at 0", r.factor[0], 1);
    const double late[] = {1, 2}, down[] = {0, 5, 5};
    cr_expect_eq(rp_cold_run(&p, late, 2, 1.0, 7, &r, err, sizeof err), -1);
    cr_expect_eq(rp_cold_run(&p, down, 3, 1.0, 7, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "increase") != NULL, "%s", err);
}

/* coldcal's mapping goes into the scenario as cpu.cold. */
Test(realpipe, scenario_with_cold)
{
    rp_params p;
    rp_params_default(&p);
    p.fps = 12.5;
    p.cold = "{idle_ms: [0, 3, 30], factor: [1, 1.05, 1.08]}";
    rp_capacity cap;
    scenario_cfg c;
    fixture_scenario(&p, 1, NULL, 0, &cap, &c);
    cr_assert_eq(c.cpu.ncold, 3);
    close_to("idle_ms[1]", c.cpu.cold_idle_ms[1], 3);
    close_to("factor[2]", c.cpu.cold_factor[2], 1.08);
    cfg_free(&c);
}
