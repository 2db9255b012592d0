/* test_sleepers.c — threads that spend their service asleep (cpu.sleepers)
 * and the query thread that wakes late for each query (cpu.query_source):
 * each timed wait ends as late as any timed wait on the cores does. Every
 * time worked out by hand; the held sleepers' wake-ups checked to leave the
 * working stages' times alone (their thread has no work to hold a core). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/pipeline.h"
#include "models/scenario.h"
#include "tests/kit.h"

/* One stream at 1 FPS into a 5 ms stage "nap" of one worker, 10 s; 2
 * cores, a handed-over item wakes a thread wake_ms 0.2 late, a timed wait
 * wakes timer_ms 0.3 late. No stage's work is on the cores. */
static void nap_case(scenario_cfg *c, int sleeps)
{
    kit_base(c, "nap", 1, 1, 0, 0.0, 10.0, 1);
    periodic(c, 1, 1.0);
    on_workers(c, 0, "nap", 1, 5.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 0;
    c->cpu.sleeper_mask = sleeps ? 1 : 0;
    c->cpu.wake_ms = 0.2;
    c->cpu.has_timer = 1;
    c->cpu.timer_ms = 0.3;
}

/* Asleep: the thread is woken for the item (0.2), sleeps 5 ms and wakes 0.3
 * late: sojourn 5.5, wait 0.2, service (the sleep and its late end) 5.3.
 * Not a sleeper and off the cores: 5 ms flat, no wake-up. */
Test(sleepers, sleep_ends_late_by_hand)
{
    scenario_cfg c;
    rep_stats rs;
    nap_case(&c, 1);
    rep1(&c, &rs);
    hist_is("sleeper: sojourn", &rs.stage[0].sojourn, 10, 10 * 5.5, 5.5, 5.5);
    hist_is("sleeper: wait", &rs.stage[0].wait, 10, 10 * 0.2, 0.2, 0.2);
    hist_is("sleeper: service", &rs.stage[0].service, 10, 10 * 5.3, 5.3, 5.3);
    hist_is("sleeper: e2e", &rs.e2e, 10, 10 * 5.5, 5.5, 5.5);
    pipe_stats_free(&rs);
    cfg_free(&c);
    nap_case(&c, 0);
    rep1(&c, &rs);
    hist_is("plain: sojourn", &rs.stage[0].sojourn, 10, 10 * 5.0, 5.0, 5.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Queries at 1/s (Poisson) through llm_decode (1 ms) and response (2 ms),
 * both with room for every query (no queueing), off the cores; frames on
 * a stage of their own. With query_source timer a query enters llm_decode
 * timer_ms 0.4 after its time, its sojourn there and its response latency
 * counted from its time: 1.4 and 3.4 for every query. Ideal: 1 and 3. */
static void query_case(scenario_cfg *c, int qsource)
{
    kit_base(c, "queries", 3, 3, 0, 0.0, 60.0, 1);
    periodic(c, 1, 1.0);
    c->workload.queries_per_min = 60;
    on_workers(c, 0, "encode", 1, 1.0);
    on_workers(c, 1, "llm_decode", 1000, 1.0);
    on_workers(c, 2, "response", 1000, 2.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 0;
    c->cpu.has_timer = 1;
    c->cpu.timer_ms = 0.4;
    c->cpu.query_source = qsource;
}

Test(sleepers, query_thread_wakes_late_by_hand)
{
    scenario_cfg c;
    rep_stats rs;
    query_case(&c, CPU_QUERY_TIMER);
    cr_assert_eq(c.stages[1].path, PATH_RESPONSE);
    rep1(&c, &rs);
    uint64_t n = rs.response.n;
    cr_assert_gt(n, 30, "a minute of queries at 1/s answered %llu", (unsigned long long)n);
    hist_is("timer: llm_decode sojourn", &rs.stage[1].sojourn, n, n * 1.4, 1.4, 1.4);
    hist_is("timer: llm_decode wait", &rs.stage[1].wait, n, n * 0.4, 0.4, 0.4);
    hist_is("timer: response latency", &rs.response, n, n * 3.4, 3.4, 3.4);
    hist_is("timer: response sojourn", &rs.stage[2].sojourn, n, n * 2.0, 2.0, 2.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
    query_case(&c, CPU_QUERY_IDEAL);
    rep1(&c, &rs);
    n = rs.response.n;
    cr_assert_gt(n, 30);
    hist_is("ideal: llm_decode sojourn", &rs.stage[1].sojourn, n, n * 1.0, 1.0, 1.0);
    hist_is("ideal: response latency", &rs.response, n, n * 3.0, 3.0, 3.0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* Frames (Poisson, 700/s) through "decode" on the 2 cores (3 workers, 2 ms)
 * into "nap" (2 workers, 1 ms), every wake-up with a job running held
 * (shares 0 then 1: nothing left to chance). Whether nap's threads sleep
 * out their service (their wake-ups held too) or nap is a plain stage off
 * the cores, decode's times must be the same: a sleeper released at a job's
 * end runs for microseconds and leaves that core to the next held thread. */
static void held_nap(scenario_cfg *c, int sleeps)
{
    kit_base(c, "held-nap", 5, 2, 0, 0.0, 10.0, 1);
    poisson(c, 700.0);
    c->workload.streams = 1;
    on_workers(c, 0, "decode", 3, 2.0);
    on_workers(c, 1, "nap", 2, 1.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    c->cpu.sleeper_mask = sleeps ? 2 : 0;
    c->cpu.wake_ms = 0.05;
    c->cpu.nwake_held = 2;
    c->cpu.wake_held[0] = 0;
    c->cpu.wake_held[1] = 1;
    c->cpu.ntimer_held = 2;
    c->cpu.timer_held[0] = 0;
    c->cpu.timer_held[1] = 1;
}

Test(sleepers, held_sleepers_leave_the_cores_alone)
{
    scenario_cfg c;
    rep_stats with, without;
    held_nap(&c, 1);
    rep1(&c, &with);
    cfg_free(&c);
    held_nap(&c, 0);
    rep1(&c, &without);
    cfg_free(&c);
    const hist_t *a = &with.stage[0].sojourn, *b = &without.stage[0].sojourn;
    cr_assert_gt(b->n, 2000);
    count("decode sojourns", a->n, b->n);
    near("decode sojourn sum", a->sum, b->sum, EXACT);
    near("decode sojourn max", a->max, b->max, EXACT);
    near("decode wait sum", with.stage[0].wait.sum, without.stage[0].wait.sum, EXACT);
    /* and the sleepers did wait: nap's sojourn is over its 1 ms */
    cr_expect_gt(with.stage[1].sojourn.sum, 1.0 * (double)with.stage[1].sojourn.n * (1 + 1e-6),
                 "nap's threads slept late at least sometimes");
    pipe_stats_free(&with);
    pipe_stats_free(&without);
}

/* The keys from YAML, and their errors (file, line, column, key). */
static int load(const char *cpu, scenario_cfg *c, char *err, size_t n)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "name: s\nduration_s: 1\nworkload: {arrival: periodic, streams: 1, fps: 1}\n"
             "stages:\n  - {name: decode, service: {dist: constant, ms: 1}}\n"
             "  - {name: encode, on: gpu, service: {dist: constant, ms: 1}}\n"
             "  - {name: response, service: {dist: constant, ms: 5}}\n"
             "cluster: {gpus: 1}\n"
             "%s\n", cpu);
    return scn_load_string(yaml, strlen(yaml), "s.yaml", ".", c, err, n);
}

Test(sleepers, from_yaml)
{
    scenario_cfg c;
    char err[512] = "";
    cr_assert_eq(load("cpu: {cores: 2, query_source: timer, sleepers: [response]}", &c, err,
                      sizeof err), 0, "%s", err);
    cr_expect_eq(c.cpu.query_source, CPU_QUERY_TIMER);
    cr_expect_eq(c.cpu.sleeper_mask, (uint64_t)4);
    cr_expect_eq(c.cpu.stage_mask, (uint64_t)3, "without cpu.stages: every stage but the "
                 "sleepers, got %llx", (unsigned long long)c.cpu.stage_mask);
    cfg_free(&c);
    cr_assert_eq(load("cpu: {cores: 2, stages: [decode], sleepers: [response]}", &c, err,
                      sizeof err), 0, "%s", err);
    cr_expect_eq(c.cpu.stage_mask, (uint64_t)1);
    cr_expect_eq(c.cpu.query_source, CPU_QUERY_IDEAL, "ideal by default");
    cfg_free(&c);

    struct { const char *cpu, *key, *what; } bad[] = {
        {"cpu: {cores: 2, query_source: thread}", "cpu.query_source", "timer"},
        {"cpu: {cores: 2, sleepers: [respond]}", "cpu.sleepers[0]", "response"},
        {"cpu: {cores: 2, sleepers: [encode]}", "cpu.sleepers[0]", "GPU"},
        {"cpu: {cores: 2, sleepers: [response, response]}", "cpu.sleepers[1]", "twice"},
        {"cpu: {cores: 2, sleepers: response}", "cpu.sleepers", "list"},
        {"cpu: {cores: 2, stages: [decode, response], sleepers: [response]}", "cpu.stages[1]",
         "sleepers"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = 0;
        cr_expect_neq(load(bad[k].cpu, &c, err, sizeof err), 0, "%s loaded", bad[k].cpu);
        cr_expect(strstr(err, "s.yaml:9:") && strstr(err, bad[k].key) && strstr(err, bad[k].what),
                  "%s: the error names the file, line, key and %s: %s", bad[k].cpu, bad[k].what,
                  err);
    }
}
