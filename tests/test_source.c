/* test_source.c — how frames reach the first stage on the cores (cpu.source)
 * and which item a woken worker takes: every case worked out by hand, and
 * the order the real pipeline keeps (its one camera thread releases frames
 * in time order; a woken worker pops the queue's head) checked on random
 * wake-ups, against the per-stream source that does not keep it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/pipeline.h"
#include "models/scenario.h"
#include "tests/kit.h"

/* Streams at 1 FPS with the given phases into one stage of 2 decode workers
 * (1 ms) on 2 cores, no wake-up delay, a timed wait timer_ms late. */
static void source_case(scenario_cfg *c, int source, int n, const double *phase, double timer_ms)
{
    kit_base(c, "source", 1, 1, 0, 0.0, 10.0, 1);
    periodic(c, n, 1.0);
    given_phases(c, n, phase);
    on_workers(c, 0, "decode", 2, 1.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    c->cpu.has_timer = 1;
    c->cpu.timer_ms = timer_ms;
    c->cpu.source = source;
}

/* Frames of three streams due at 0, 0.5 and 2.0 ms each second, timers 1.25
 * late. One thread: it wakes for the first at 1.25 and hands over the second
 * (due 0.5) with it; the third is not due yet, so it sleeps again and wakes
 * at 3.25. Frame latencies 2.25, 1.75 and 2.25 (1 ms decode, a worker free
 * each time). A thread per stream: each frame 1.25 late, all 2.25. */
Test(source, one_thread_by_hand)
{
    const double ph[] = {0.0, 0.5, 2.0};
    scenario_cfg c;
    rep_stats rs;
    source_case(&c, CPU_SOURCE_ONE_THREAD, 3, ph, 1.25);
    rep1(&c, &rs);
    hist_is("one thread: e2e", &rs.e2e, 30, 10 * (2.25 + 1.75 + 2.25), 1.75, 2.25);
    hist_is("one thread: decode wait", &rs.stage[0].wait, 30, 0.0, 0.0, 0.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
    source_case(&c, CPU_SOURCE_TIMER, 3, ph, 1.25);
    rep1(&c, &rs);
    hist_is("a thread per stream: e2e", &rs.e2e, 30, 30 * 2.25, 2.25, 2.25);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A worker going on takes the item a sleeping worker is being woken for, as
 * a real one pops the queue's head: 2 decode workers (1 ms) on 2 cores,
 * wake_ms 0.5, frames due at 0 and 1.2 each second, on time (source ideal).
 * The first wakes a worker: it starts at 0.5, ends at 1.5 (latency 1.5). The
 * second, at 1.2, wakes the other, due at 1.7; the first worker, free at
 * 1.5, takes it (wait 0.3, latency 1.3) and the woken one finds nothing.
 * Bound to the frame it was woken for, the second would wait 0.5. */
Test(source, going_on_takes_the_woken_item)
{
    scenario_cfg c;
    rep_stats rs;
    source_case(&c, CPU_SOURCE_IDEAL, 2, (const double[]){0.0, 1.2}, 0.0);
    c.cpu.wake_ms = 0.5;
    rep1(&c, &rs);
    hist_is("decode wait", &rs.stage[0].wait, 20, 10 * (0.5 + 0.3), 0.3, 0.5);
    hist_is("e2e", &rs.e2e, 20, 10 * (1.5 + 1.3), 1.3, 1.5);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

static int by_arrival(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Replication 0's decode rows (trace) of a run, by frame: arrive, enqueue,
 * start. Counts the adjacent pairs (in arrival order) whose enqueue or start
 * is out of that order. */
static void order_of(const scenario_cfg *c, int *enq_out, int *start_out, int *pairs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    rep_stats rs;
    cr_assert_eq(pipe_stats_init(&rs, c), 0);
    char err[256] = "";
    cr_assert_eq(pipe_run_traced(c, 0, 0.0, NULL, &rs, f, err, sizeof err), 0, "%s", err);
    fclose(f);
    size_t cap = 1024, n = 0;
    double (*row)[3] = malloc(cap * sizeof *row);
    cr_assert_not_null(row);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        double a, q, s;
        if (sscanf(line, "frame,%*u,%*u,%*u,decode,done,%lf,%lf,%lf", &a, &q, &s) != 3)
            continue;
        if (n == cap) {
            cap *= 2;
            row = realloc(row, cap * sizeof *row);
            cr_assert_not_null(row);
        }
        row[n][0] = a;
        row[n][1] = q;
        row[n][2] = s;
        n++;
    }
    qsort(row, n, sizeof *row, by_arrival);   /* rows come in the order frames end */
    *enq_out = *start_out = 0;
    for (size_t i = 1; i < n; i++) {
        *enq_out += row[i][1] < row[i - 1][1];
        *start_out += row[i][2] < row[i - 1][2];
    }
    *pairs = (int)n - 1;
    free(row);
    free(buf);
    pipe_stats_free(&rs);
}

/* Eight streams due in pairs 0.01 ms apart, timers and wake-ups late by
 * exponential draws (mean 0.3 ms, so a pair's two draws cross often),
 * 2 decode workers of 0.4 ms: with one source thread every frame enters in
 * time order and starts in that order; a thread per stream lets a later
 * frame of a pair in first. */
static void order_case(scenario_cfg *c, int source)
{
    const double ph[] = {0.0, 0.01, 2.0, 2.01, 4.0, 4.01, 6.0, 6.01};
    kit_base(c, "order", 3, 1, 0, 0.0, 20.0, 1);
    periodic(c, 8, 100.0);
    given_phases(c, 8, ph);
    on_workers(c, 0, "decode", 2, 0.4);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    c->cpu.source = source;
    c->cpu.ntimer_busy = 1;
    cr_assert_null(dist_init_exponential(&c->cpu.timer_busy[0], 0.3));
    c->cpu.nwake_busy = 1;
    cr_assert_null(dist_init_exponential(&c->cpu.wake_busy[0], 0.3));
}

Test(source, one_thread_keeps_time_order)
{
    scenario_cfg c;
    int enq, start, pairs;
    order_case(&c, CPU_SOURCE_ONE_THREAD);
    order_of(&c, &enq, &start, &pairs);
    cr_assert_gt(pairs, 10000);
    count("one thread: frames entering out of time order", (uint64_t)enq, 0);
    count("one thread: frames starting out of time order", (uint64_t)start, 0);
    cfg_free(&c);
    order_case(&c, CPU_SOURCE_TIMER);
    order_of(&c, &enq, &start, &pairs);
    /* a pair's later frame enters first when its draw beats the other's by
     * more than 0.01 ms: for two exponentials of mean 0.3 about half the
     * time, so thousands of the 8000 pairs */
    cr_expect_gt(enq, pairs / 10, "a thread per stream: %d of %d out of order", enq, pairs);
    cfg_free(&c);
}

Test(source, from_yaml)
{
    const char *base = "name: s\nduration_s: 1\nworkload: {arrival: periodic, streams: 1, fps: 1}\n"
                       "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n";
    const char *want[] = {"ideal", "timer", "one_thread"};
    for (int k = 0; k < 3; k++) {
        char yaml[512], err[512] = "";
        snprintf(yaml, sizeof yaml, "%scpu: {cores: 2, timer_ms: 0.1, source: %s}\n", base, want[k]);
        scenario_cfg c;
        cr_assert_eq(scn_load_string(yaml, strlen(yaml), "s.yaml", ".", &c, err, sizeof err), 0,
                     "%s: %s", want[k], err);
        cr_expect_eq(c.cpu.source, k, "source: %s read as %d", want[k], c.cpu.source);
        cfg_free(&c);
    }
    char yaml[512], err[512] = "";
    snprintf(yaml, sizeof yaml, "%scpu: {cores: 2, source: one-thread}\n", base);
    scenario_cfg c;
    cr_assert_neq(scn_load_string(yaml, strlen(yaml), "s.yaml", ".", &c, err, sizeof err), 0);
    cr_expect(strstr(err, "s.yaml:6:") && strstr(err, "cpu.source") && strstr(err, "one_thread"),
              "the error names the file, line, key and the choices: %s", err);
}
