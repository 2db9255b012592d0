/* test_hostile.c — hostile inputs to the two loaders (the scenario,
 * models/scenario.c; the calibration file, models/calib_read.c) and to
 * vlsim run: each is a clear error (FILE:LINE:COL: KEY: message, exit 2)
 * or a correct result, in bounded memory and time (README "Hostile
 * inputs"), and the faults the fuzzers found stay fixed (README "Fuzzing";
 * their inputs are in tests/fuzz/corpus/).
 *
 * Positions are counted by hand from the texts below; bounds are the ones
 * the loader documents. Files are written only under a fresh /tmp
 * directory, removed afterwards. Runs from the repository root. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/calib_read.h"
#include "models/scenario.h"
#include "tests/kit_scenario.h"
#include "tests/kit_files.h"

#define DATA "tests/data/scenario"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static char tmp[64];

static void mk_tmp(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/vlsim-hostile-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(hostile, .init = mk_tmp, .fini = rm_tmp, .timeout = 60);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The largest resident set of this process so far, in MiB. */
static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int load_n(const char *text, size_t len, scenario_cfg *c, char *err, size_t errlen)
{
    return scn_load_string(text, len, "h.yaml", DATA, c, err, errlen);
}

/* text (len bytes) must fail with a message starting "h.yaml:<where>" and
 * holding gist, on one line, leaving the config all zero. */
static void expect_error_n(const char *text, size_t len, const char *where, const char *gist)
{
    kit_scn_error(text, len, "h.yaml", DATA, where, gist);
}

static void expect_error(const char *text, const char *where, const char *gist)
{
    expect_error_n(text, strlen(text), where, gist);
}

static void expect_loads(const char *text, scenario_cfg *c)
{
    char err[512];
    cr_assert_eq(load_n(text, strlen(text), c, err, sizeof err), 0, "%s", err);
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#define POISSON "duration_s: 10\nworkload: {arrival: poisson, rate_hz: 10}\n"
#define STAGE "stages:\n  - {name: a, service: {dist: constant, ms: 1}}\n"
#define PERIODIC(streams, fps) \
    "duration_s: 10\nworkload: {arrival: periodic, streams: " streams ", fps: " fps "}\n"

/* ---- faults the fuzzers found ------------------------------------------- */

/* fuzz_scenario: a prefill op from a calibration file makes a table by
 * tokens; with no stage before it setting tokens, the error was reported at
 * the service's "table" key, which a calibrated service does not have: a
 * NULL dereference. It is now reported at service.calib. */
Test(hostile, fuzz_calib_token_table_without_tokens)
{
    expect_error(POISSON "cluster: {gpus: 1}\n"
                 "stages:\n"
                 "  - name: p\n"
                 "    on: gpu\n"
                 "    service: {calib: {file: ../../../calib/data/cpu-tiny.yaml, op: prefill, "
                 "model: tiny, cache_len: 64}}\n",
                 "7:15: stages[0].service.calib: ", "a table by tokens needs tokens");
}

/* fuzz_scenario, the same fault on another path: a decode stage
 * (response_tokens) whose calibrated table is by tokens. */
Test(hostile, fuzz_calib_token_table_on_decode)
{
    expect_error(POISSON "cluster: {gpus: 1}\n"
                 "stages:\n"
                 "  - name: d\n"
                 "    on: gpu\n"
                 "    response_tokens: 4\n"
                 "    service: {calib: {file: ../../../calib/data/cpu-tiny.yaml, op: prefill, "
                 "model: tiny, cache_len: 64}}\n",
                 "8:15: stages[0].service.calib: ", "a decode stage (response_tokens) takes a "
                 "table by batch");
}

/* The corpus inputs that found them (the shipped cpu-tiny-calibrated.yaml,
 * mutated) now load to one-line errors. */
Test(hostile, fuzz_corpus_reproducer)
{
    scenario_cfg c;
    char err[512];
    const char *text = read_text("tests/fuzz/corpus/scenario/crash-calib-prefill-no-tokens.yaml");
    int rc = scn_load_string(text, strlen(text), "crash.yaml", "scenarios", &c, err, sizeof err);
    cr_assert_eq(rc, -1);
    cr_expect_str_eq(err, "crash.yaml:32:7: stages[0].service.calib: a table by tokens needs "
                     "tokens: set tokens_per_frame or keep_tokens on an earlier stage");
    /* the fuzzer's sandbox opened files by their last path component; the
     * mutated path is put back to the one it opened */
    text = read_text("tests/fuzz/corpus/scenario/crash-calib-prefill-response-tokens.yaml");
    static const char bad[] = "../calib/data/cpb/data/cpu-tiny.y./calib/data/cpu-tiny.yaml";
    char fixed[8192];
    const char *at = strstr(text, bad);
    cr_assert_not_null(at);
    snprintf(fixed, sizeof fixed, "%.*s../calib/data/cpu-tiny.yaml%s", (int)(at - text), text,
             at + strlen(bad));
    rc = scn_load_string(fixed, strlen(fixed), "crash.yaml", "scenarios", &c, err, sizeof err);
    cr_assert_eq(rc, -1);
    cr_expect_str_eq(err, "crash.yaml:44:7: stages[3].service.calib: a decode stage "
                     "(response_tokens) takes a table by batch (the active sequences), not by tokens");
}

/* ---- huge numbers --------------------------------------------------------- */

Test(hostile, huge_numbers)
{
    expect_error("duration_s: 1e308\nworkload: {arrival: poisson, rate_hz: 10}\n" STAGE,
                 "1:13: duration_s: ", "must be <= 1000000000");
    expect_error("duration_s: 1e309\nworkload: {arrival: poisson, rate_hz: 10}\n" STAGE,
                 "1:13: duration_s: ", "must be finite, got 1e309 (out of range)");
    expect_error("duration_s: 10\nwarmup_s: 1e300\nworkload: {arrival: poisson, rate_hz: 10}\n" STAGE,
                 "2:11: warmup_s: ", "must be <= 1000000000");
    /* beyond int, beyond long long, beyond uint64 */
    expect_error(PERIODIC("2147483648", "10") STAGE, "2:40: workload.streams: ",
                 "must be <= 2147483647, got 2147483648");
    expect_error(POISSON "stages:\n  - {name: a, queue: {capacity: 9223372036854775808}, "
                 "service: {dist: constant, ms: 1}}\n",
                 "4:33: stages[0].queue.capacity: ", "integer out of range");
    expect_error("seed: 18446744073709551616\n" POISSON STAGE, "1:7: seed: ",
                 "integer out of range (largest is 18446744073709551615)");
    expect_error(POISSON "stages:\n  - {name: a, service: {dist: constant, ms: 1e400}}\n",
                 "4:45: stages[0].service.ms: ", "must be finite");
    expect_error("duration_s: 10\nworkload: {arrival: poisson, rate_hz: 1e300}\n" STAGE,
                 "2:39: workload.rate_hz: ", "must be <= 1000000");
    expect_error(PERIODIC("2", "1e308") STAGE, "2:48: workload.fps: ", "must be <= 1000");
    /* the largest of each still loads */
    scenario_cfg c;
    expect_loads("duration_s: 1e9\nseed: 18446744073709551615\n"
                 "workload: {arrival: periodic, streams: 1000000, fps: 1000}\n" STAGE, &c);
    cr_expect_eq(c.seed, UINT64_MAX);
    cr_expect_eq(c.workload.streams, 1000000);
    cr_expect_eq(c.duration_s, 1e9);
    cfg_free(&c);
}

/* ---- NaN and infinity in every numeric kind ------------------------------ */

Test(hostile, nan_and_inf_everywhere)
{
    static const char *const spell[] = {".nan", ".NaN", "nan", ".inf", "-.Inf", "+.INF", "inf",
                                        "Infinity", "-infinity"};
    char yaml[1024], gist[64];
    for (size_t i = 0; i < sizeof spell / sizeof spell[0]; i++) {
        const char *x = spell[i];
        snprintf(gist, sizeof gist, "must be finite, got %s", x);
        /* a double */
        snprintf(yaml, sizeof yaml, "duration_s: %s\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE, x);
        expect_error(yaml, "1:13: duration_s: ", gist);
        /* an int */
        snprintf(yaml, sizeof yaml, "duration_s: 10\nreplications: %s\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n" STAGE, x);
        expect_error(yaml, "2:15: replications: ", gist);
        /* a long (queue capacity) */
        snprintf(yaml, sizeof yaml, POISSON "stages:\n  - {name: a, queue: {capacity: %s}, "
                 "service: {dist: constant, ms: 1}}\n", x);
        expect_error(yaml, "4:33: stages[0].queue.capacity: ", gist);
        /* the uint64 seed */
        snprintf(yaml, sizeof yaml, "seed: %s\n" POISSON STAGE, x);
        expect_error(yaml, "1:7: seed: ", gist);
        /* a distribution parameter, a table point, a bucket bound, an SLA percentile */
        snprintf(yaml, sizeof yaml, POISSON "stages:\n  - {name: a, service: {dist: exponential, "
                 "mean_ms: %s}}\n", x);
        expect_error(yaml, "4:53: stages[0].service.mean_ms: ", gist);
        snprintf(yaml, sizeof yaml, POISSON "cluster: {gpus: 1}\nstages:\n  - {name: g, on: gpu, "
                 "service: {table: [{batch: 1, ms: %s}]}}\n", x);
        expect_error(yaml, "5:57: stages[0].service.table[0].ms: ", gist);
        snprintf(yaml, sizeof yaml, POISSON "metrics: {buckets_ms: [5, %s]}\n" STAGE, x);
        expect_error(yaml, "3:27: metrics.buckets_ms[1]: ", gist);
        snprintf(yaml, sizeof yaml, POISSON STAGE "sla: [{metric: frame, percentile: %s, ms: 5}]\n", x);
        expect_error(yaml, "5:35: sla[0].percentile: ", gist);
    }
}

/* An empirical sample file, an override and a calibration file say the same. */
Test(hostile, nan_in_files_and_overrides)
{
    char path[128], yaml[512], err[512];
    scenario_cfg c;
    snprintf(path, sizeof path, "%s/s.txt", tmp);
    write_file(path, "1\n2\n.nan\n", 9);
    snprintf(yaml, sizeof yaml, POISSON "stages:\n  - {name: a, service: {dist: empirical, file: %s}}\n",
             path);
    expect_error(yaml, "4:48: stages[0].service.file: ", ":3: must be finite, got .nan");

    snprintf(path, sizeof path, "%s/o.yaml", tmp);
    write_file(path, POISSON STAGE, strlen(POISSON STAGE));
    scn_override ov = {"workload.rate_hz", "-.inf"};
    cr_assert_eq(scn_load_ex(path, &ov, 1, &c, err, sizeof err), -1);
    cr_expect_str_eq(err, "override workload.rate_hz=-.inf: workload.rate_hz: must be finite, got -.inf");

    static const char head[] =
        "vlcalib: 1\ndevice: {name: a, backend: b, driver: c, libraries: d, clocks: e}\n"
        "date: x\nbackend: cpu\nops:\n  - {op: encode, model: m, dtype: f, points: [\n"
        "    {batch: 1, tokens_in: 0, tokens_out: 0, new_tokens: 0, cache_len: 0, n: %s, p50_ms: 1,\n"
        "     p95_ms: 1, p99_ms: 1, mean_ms: %s, sd_ms: 0, min_ms: 1,\n"
        "     fit: {dist: lognormal, mu: 0, sigma: 0, ks: 0}}]}\n";
    calf_file f;
    char text[1024];
    snprintf(text, sizeof text, head, "5", ".nan");
    cr_assert_eq(calf_read_mem(text, strlen(text), "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml:8:37: ops[0].points[0].mean_ms: expected a finite number, got '.nan'");
    snprintf(text, sizeof text, head, ".inf", "1");
    cr_assert_eq(calf_read_mem(text, strlen(text), "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml:7:77: ops[0].points[0].n: expected an integer >= 1, got '.inf'");
}

/* ---- negative zero ------------------------------------------------------- */

Test(hostile, negative_zero)
{
    expect_error("duration_s: -0\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "1:13: duration_s: ", "must be > 0, got -0");
    expect_error("duration_s: -0.0e5\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "1:13: duration_s: ", "must be > 0, got -0.0e5");
    /* where 0 is allowed, -0 is 0: no "-0" can reach an output */
    scenario_cfg c;
    expect_loads("duration_s: 10\nwarmup_s: -0\nworkload: {arrival: periodic, streams: 1, fps: 1, "
                 "jitter_ms: -0}\n" STAGE, &c);
    cr_expect(c.warmup_s == 0 && !signbit(c.warmup_s), "warmup_s %g", c.warmup_s);
    cr_expect(c.workload.jitter_ms == 0 && !signbit(c.workload.jitter_ms));
    cfg_free(&c);
    expect_error("duration_s: 10\nreplications: -0\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "2:15: replications: ", "must be >= 1, got -0");
}

/* ---- enormous counts: refused before anything is allocated per item ---- */

Test(hostile, enormous_counts)
{
    double rss0 = peak_rss_mib();
    expect_error(PERIODIC("2000000000", "10") STAGE, "2:40: workload.streams: ",
                 "must be <= 1000000 (state is kept per stream), got 2000000000");
    expect_error("duration_s: 10\nworkload: {arrival: periodic, streams: 999999, fps: 1,\n"
                 "  surge: {at_s: 1, for_s: 1, streams: 2}}\n" STAGE,
                 "3:39: workload.surge.streams: ", "must be <= 1 (workload.streams + surge streams");
    expect_error(POISSON "cluster: {gpus: 2000000000}\n" STAGE, "3:17: cluster.gpus: ",
                 "must be <= 65536 (state is kept per GPU), got 2000000000");
    expect_error("duration_s: 10\nreplications: 2000000000\nworkload: {arrival: poisson, rate_hz: 1}\n"
                 STAGE, "2:15: replications: ", "must be <= 100000");
    expect_error(POISSON "cluster: {gpus: 1}\nstages:\n  - {name: g, on: gpu, max_batch: 2000000000, "
                 "service: {table: [{batch: 1, ms: 1}, {batch: 2000000000, ms: 2}]}}\n",
                 "5:35: stages[0].max_batch: ", "must be <= 65536 (arrays are kept per batch size)");
    /* control windows: each tick of a window holds a histogram */
    expect_error(POISSON STAGE "alerts: {window_s: 1e12}\n", "5:20: alerts.window_s: ",
                 "spans more than 100000 control intervals");
    expect_error(POISSON STAGE "alerts: {gpu_util_for_s: 200000}\n", "5:26: alerts.gpu_util_for_s: ",
                 "spans more than 100000 control intervals");
    expect_error(PERIODIC("2", "10") STAGE "degradation: {modes: [reduce_fps], interval_s: 1e-9, "
                 "p99_target_ms: 5, reduce_fps: {fps: 5}}\n",
                 "5:48: degradation.interval_s: ", "must be >= 0.001");
    expect_error(POISSON STAGE "alerts: {p99_sla_factor: 2}\nworkload_: 1\n", "6:1: workload_: ",
                 "unknown key");
    expect_error(POISSON "stages:\n  - {name: a, keep: {ratio: 0.5, scene_change: {per_min: 1e9, "
                 "burst: 1}}, service: {dist: constant, ms: 1}}\n",
                 "4:58: stages[0].keep.scene_change.per_min: ", "must be <= 60000");
    expect_error("duration_s: 10\nworkload: {arrival: periodic, streams: 1, fps: 1, "
                 "queries_per_min: 1e300}\n" STAGE, "2:68: workload.queries_per_min: ",
                 "must be <= 60000");
    /* none of that allocated anything to speak of */
    cr_expect(peak_rss_mib() - rss0 < 64, "peak RSS grew by %.0f MiB", peak_rss_mib() - rss0);
}

/* ---- zero and negative duration ------------------------------------------ */

Test(hostile, zero_and_negative_duration)
{
    expect_error("duration_s: 0\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "1:13: duration_s: ", "must be > 0, got 0");
    expect_error("duration_s: -5\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "1:13: duration_s: ", "must be > 0, got -5");
    expect_error("duration_s: 10\nwarmup_s: -1\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "2:11: warmup_s: ", "must be >= 0, got -1");
    expect_error("duration_s: 1e-400\nworkload: {arrival: poisson, rate_hz: 1}\n" STAGE,
                 "1:13: duration_s: ", "must be > 0, got 1e-400");
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration 0 >/dev/null 2>&1"), 2);
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration -1 >/dev/null 2>&1"), 2);
}

/* ---- YAML structure: nesting, aliases, size, bytes ----------------------- */

/* 100000 levels of nesting, flow ([[[...) and block (- - - ...), under an
 * unknown key and under one the loader reads: a clear error, quickly. In
 * the calibration file too. */
Test(hostile, deep_nesting)
{
    const size_t depth = 100000;
    for (int form = 0; form < 4; form++) {
        const char *head = form == 0 ? "x: " : form == 1 ? POISSON "stages: " : form == 2 ? "" : "x: ";
        size_t hl = strlen(head), len = hl + 2 * depth + 1;
        char *t = malloc(len + 1);
        cr_assert_not_null(t);
        memcpy(t, head, hl);
        if (form == 2) {
            for (size_t i = 0; i < depth; i++)
                memcpy(t + hl + 2 * i, "- ", 2);
        } else {
            memset(t + hl, form == 3 ? '{' : '[', depth);
            memset(t + hl + depth, form == 3 ? '}' : ']', depth);
        }
        t[len - 1] = '\n';
        t[len] = '\0';
        double t0 = now_s();
        /* the root is level 1, so level 257 is the 256th bracket (column
         * head + 256), or the 257th "- " (column 2 * 256 + 1) */
        if (form == 1)
            expect_error_n(t, len, "3:264: (syntax): ", "nested more than 256 levels deep");
        else if (form == 2)
            expect_error_n(t, len, "1:513: (syntax): ", "nested more than 256 levels deep");
        else
            expect_error_n(t, len, "1:259: (syntax): ", "nested more than 256 levels deep");
        calf_file f;
        char err[512];
        cr_expect_eq(calf_read_mem(t, len, "c.yaml", &f, err, sizeof err), -1);
        cr_expect(strstr(err, "(syntax): more than 256 levels of nesting") != NULL, "%s", err);
        cr_expect(now_s() - t0 < 5, "took %.1f s", now_s() - t0);
        free(t);
    }
    /* 200 levels are fine for the parser: the loader's own message */
    char t[1024] = "x: ";
    memset(t + 3, '[', 200);
    memset(t + 203, ']', 200);
    expect_error(t, "1:1: x: ", "unknown key");
}

/* Billion laughs: 9 aliases of 9 aliases, 9 deep (9^9 nodes if expanded):
 * libyaml's document keeps each anchor once, and the loader stops at the
 * first key it does not know. Where the loader does walk aliases, a
 * mixture of aliased mixtures 20 wide and 4 deep (168421 distributions if
 * expanded) stops at the 10000-distribution limit. */
Test(hostile, billion_laughs)
{
    char text[8192] = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (int i = 1; i < 9; i++) {
        char line[128];
        snprintf(line, sizeof line, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
                 i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        strcat(text, line);
    }
    double t0 = now_s();
    expect_error(text, "1:1: l0: ", "unknown key");

    /* part(L): the first part at level L defines anchor aL, 19 aliases follow */
    char mix[16384];
    size_t n = (size_t)snprintf(mix, sizeof mix, POISSON "stages:\n  - name: a\n    service: "
                                "{dist: mixture, parts: [");
    for (int lv = 1; lv <= 4; lv++)
        n += (size_t)snprintf(mix + n, sizeof mix - n, lv < 4
                              ? "&a%d {weight: 0.05, dist: mixture, parts: ["
                              : "&a%d {weight: 0.05, dist: constant, ms: 1}", lv);
    for (int lv = 4; lv >= 1; lv--) {
        for (int k = 0; k < 19; k++)
            n += (size_t)snprintf(mix + n, sizeof mix - n, ", *a%d", lv);
        n += (size_t)snprintf(mix + n, sizeof mix - n, lv > 1 ? "]}" : "]}\n");
    }
    cr_assert_lt(n, sizeof mix);
    expect_error(mix, "", "more than 10000 distributions in one scenario");
    cr_expect(now_s() - t0 < 10, "took %.1f s", now_s() - t0);
}

/* Aliases in a calibration file: a point with 300 keys, or one point
 * aliased a million times (4 bytes each), is refused before every copy is
 * read key by key (or libyaml looks every alias up). */
Test(hostile, calib_alias_amplification)
{
    static const char head[] =
        "vlcalib: 1\ndevice: {name: a, backend: b, driver: c, libraries: d, clocks: e}\n"
        "date: x\nbackend: cpu\nops:\n  - op: encode\n    model: m\n    dtype: f\n"
        "    points: [&p {batch: 1, tokens_in: 0, tokens_out: 0, new_tokens: 0, cache_len: 0, n: 5, "
        "p50_ms: 1, p95_ms: 1, p99_ms: 1, mean_ms: 1, sd_ms: 0, min_ms: 1, "
        "fit: {dist: lognormal, mu: 0, sigma: 0, ks: 0}";
    const size_t copies = 1000000;
    size_t cap = sizeof head + 300 * 16 + copies * 4 + 16, n = 0;
    char *t = malloc(cap), err[512];
    cr_assert_not_null(t);
    calf_file f;
    /* 300 keys in one point (285 besides the 15 it needs) */
    n = (size_t)snprintf(t, cap, "%s", head);
    for (int k = 0; k < 285; k++)
        n += (size_t)snprintf(t + n, cap - n, ", x%d: 0", k);
    n += (size_t)snprintf(t + n, cap - n, "}]\n");
    double t0 = now_s();
    cr_assert_eq(calf_read_mem(t, n, "c.yaml", &f, err, sizeof err), -1);
    cr_expect(strstr(err, "c.yaml:9:14: ops[0].points[0]: more than 256 keys in one mapping") != NULL,
              "%s", err);
    /* one point, then a million aliases of it: the 10001st alias is refused */
    n = (size_t)snprintf(t, cap, "%s}", head);
    size_t line9 = (size_t)(strrchr(head, '\n') + 1 - head), at = 0;
    for (size_t k = 0; k < copies; k++) {
        if (k == 10000)
            at = n + 2 - line9 + 1;                 /* the column of its '*' */
        memcpy(t + n, ", *p", 4);
        n += 4;
    }
    n += (size_t)snprintf(t + n, cap - n, "]\n");
    char want[128];
    snprintf(want, sizeof want, "c.yaml:9:%zu: (syntax): more than 10000 aliases (*name)", at);
    cr_assert_eq(calf_read_mem(t, n, "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, want);
    cr_expect(now_s() - t0 < 10, "took %.1f s", now_s() - t0);
    free(t);
}

/* The samples CSV beside a calibration file: 64 MiB at most, no NUL bytes
 * (they cut a row short). */
Test(hostile, samples_csv)
{
    calf_file f;
    char err[512], path[128];
    cr_assert_eq(calf_read("calib/data/fixture-small.yaml", &f, err, sizeof err), 0, "%s", err);
    const calf_op *o = &f.ops[0];
    double *vals[64] = {0};
    size_t counts[64] = {0};
    cr_assert_leq(o->npoints, 64);
    cr_assert_eq(calf_samples("/dev/zero", o, vals, counts, err, sizeof err), -1);
    cr_expect_str_eq(err, "/dev/zero: larger than 64 MiB");
    snprintf(path, sizeof path, "%s/s.csv", tmp);
    static const char csv[] = "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\n"
                              "encode,tiny,1,0,0,0,0,0,1.5\nencode,tiny,1,0,0,0,0,1,1.5\0junk\n";
    write_file(path, csv, sizeof csv - 1);
    cr_assert_eq(calf_samples(path, o, vals, counts, err, sizeof err), -1);
    char want[192];
    snprintf(want, sizeof want, "%s:3: holds a NUL byte", path);
    cr_expect_str_eq(err, want);
    for (int i = 0; i < o->npoints; i++)
        cr_expect(vals[i] == NULL && counts[i] == 0);
    calf_free(&f);
}

/* libyaml looks each alias up among all anchors: 50000 of each took a
 * minute. More than 1000 anchors or 10000 aliases are refused first. */
Test(hostile, many_anchors_and_aliases)
{
    const int na = 1001, nl = 10001;
    size_t cap = 64 + (size_t)na * 16 + (size_t)nl * 8, n = 0, at = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    n = (size_t)snprintf(t, cap, "x: [");
    for (int i = 0; i < na; i++) {
        if (i == na - 1)
            at = n + 2 + 1;                         /* the column of the last '&', after ", " */
        n += (size_t)snprintf(t + n, cap - n, "%s&a%d 1", i ? ", " : "", i);
    }
    n += (size_t)snprintf(t + n, cap - n, "]\n");
    char where[64];
    snprintf(where, sizeof where, "1:%zu: (syntax): ", at);
    double t0 = now_s();
    expect_error_n(t, n, where, "more than 1000 anchors (&name)");
    n = (size_t)snprintf(t, cap, "x: [&a 1");
    for (int i = 0; i < nl; i++) {
        if (i == nl - 1)
            at = n + 2 + 1;
        n += (size_t)snprintf(t + n, cap - n, ", *a");
    }
    n += (size_t)snprintf(t + n, cap - n, "]\n");
    snprintf(where, sizeof where, "1:%zu: (syntax): ", at);
    expect_error_n(t, n, where, "more than 10000 aliases (*name)");
    calf_file f;
    char err[512];
    cr_assert_eq(calf_read_mem(t, n, "c.yaml", &f, err, sizeof err), -1);
    cr_expect(strstr(err, "(syntax): more than 10000 aliases (*name)") != NULL, "%s", err);
    cr_expect(now_s() - t0 < 5, "took %.1f s", now_s() - t0);
    free(t);
}

/* A 100 MB scenario (a sparse file), /dev/zero and a 100 MB calibration
 * file are refused after reading at most 16 MiB + 1 byte. */
Test(hostile, huge_files)
{
    char path[128], cmd[256], err[512];
    scenario_cfg c;
    calf_file f;
    snprintf(path, sizeof path, "%s/big.yaml", tmp);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    cr_assert(fd >= 0);
    cr_assert_eq(ftruncate(fd, (off_t)100 << 20), 0);
    close(fd);
    double t0 = now_s(), rss0 = peak_rss_mib();
    cr_assert_eq(scn_load(path, &c, err, sizeof err), -1);
    snprintf(cmd, sizeof cmd, "%s: file is larger than 16 MiB", path);
    cr_expect_str_eq(err, cmd);
    cr_assert_eq(scn_load("/dev/zero", &c, err, sizeof err), -1);
    cr_expect_str_eq(err, "/dev/zero: file is larger than 16 MiB");
    cr_assert_eq(calf_read(path, &f, err, sizeof err), -1);
    snprintf(cmd, sizeof cmd, "%s: file is larger than 16 MiB", path);
    cr_expect_str_eq(err, cmd);
    cr_assert_eq(calf_read("/dev/zero", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "/dev/zero: file is larger than 16 MiB");
    cr_expect(now_s() - t0 < 10, "took %.1f s", now_s() - t0);
    /* 16 MiB + 1 read, then freed; ASan's quarantine keeps freed memory */
    cr_expect(peak_rss_mib() - rss0 < (SANITIZED ? 400 : 40), "peak RSS grew by %.0f MiB",
              peak_rss_mib() - rss0);
    /* an empirical sample file: 64 MiB at most */
    char yaml[256];
    snprintf(yaml, sizeof yaml, POISSON "stages:\n  - {name: a, service: {dist: empirical, file: /dev/zero}}\n");
    expect_error(yaml, "4:48: stages[0].service.file: ", "/dev/zero is larger than 64 MiB");
    /* vlsim run: exit 2, the message on stderr, nothing written */
    char out[128];
    snprintf(out, sizeof out, "%s/out.json", tmp);
    cr_expect_eq(kit_sh("./vlsim run %s --json %s 2>%s/err.txt", path, out, tmp), 2);
    snprintf(cmd, sizeof cmd, "%s/err.txt", tmp);
    cr_expect(strstr(read_text(cmd), "file is larger than 16 MiB") != NULL, "%s", read_text(cmd));
    cr_expect_neq(access(out, F_OK), 0, "an output was written");
}

Test(hostile, bytes_utf8_and_nul)
{
    /* not UTF-8: a syntax error at the byte */
    expect_error("duration_s: 10\nname: ab\xff\xfe\n", "2:9: (syntax): ", "invalid leading UTF-8 octet");
    expect_error("duration_s: 10\nname: \xc3\n", "2:8: (syntax): ", "invalid trailing UTF-8 octet");
    /* a raw NUL byte */
    static const char nul[] = "duration_s: 10\0\nworkload: x\n";
    expect_error_n(nul, sizeof nul - 1, "1:15: (syntax): ", "control characters are not allowed");
    /* an escaped NUL in a string, and in a key, would truncate silently */
    expect_error(POISSON "stages:\n  - {name: \"a\\0b\", service: {dist: constant, ms: 1}}\n",
                 "4:12: stages[0].name: ", "holds a NUL character");
    expect_error(POISSON "\"stages\\0x\": []\n", "3:1: stages: ", "the key holds a NUL character");
    char path[128], yaml[512];
    snprintf(path, sizeof path, "%s/s.txt", tmp);
    write_file(path, "1\n2\0\n3\n", 7);
    snprintf(yaml, sizeof yaml, POISSON "stages:\n  - {name: a, service: {dist: empirical, file: %s}}\n",
             path);
    expect_error(yaml, "4:48: stages[0].service.file: ", "s.txt:2: holds a NUL byte");
    /* calibration strings too */
    static const char cal[] = "vlcalib: 1\ndevice: {name: \"a\\0b\", backend: b, driver: c, "
                              "libraries: d, clocks: e}\n";
    calf_file f;
    char err[512];
    cr_assert_eq(calf_read_mem(cal, strlen(cal), "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml:2:16: device.name: holds a NUL character (\\0)");
}

Test(hostile, duplicate_keys_and_empty_files)
{
    expect_error("duration_s: 10\nworkload: {arrival: poisson, rate_hz: 1, rate_hz: 2}\n" STAGE,
                 "2:42: workload.rate_hz: ", "duplicate key (first given at line 2)");
    expect_error(POISSON "stages:\n  - {name: a, name: b, service: {dist: constant, ms: 1}}\n",
                 "4:15: stages[0].name: ", "duplicate key (first given at line 4)");
    expect_error("", "1:1: (root): ", "the document is empty");
    expect_error("\n\n# nothing\n", "1:1: (root): ", "the document is empty");
    calf_file f;
    char err[512];
    static const char dup[] = "vlcalib: 1\ndevice: {name: a, backend: b, name: c}\n";
    cr_assert_eq(calf_read_mem(dup, strlen(dup), "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml:2:31: device.name: duplicate key (first given at line 2)");
    static const char dup2[] = "vlcalib: 1\nvlcalib: 1\n";
    cr_assert_eq(calf_read_mem(dup2, strlen(dup2), "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml:2:1: vlcalib: duplicate key (first given at line 1)");
    cr_assert_eq(calf_read_mem("", 0, "c.yaml", &f, err, sizeof err), -1);
    cr_expect_str_eq(err, "c.yaml: not a calibration file (expected a mapping with vlcalib: 1)");
    cr_expect(f.ops == NULL && f.nops == 0);
}

/* The CLI on a hostile scenario: exit 2, FILE:LINE:COL and the key. */
Test(hostile, cli_exit_2)
{
    char path[128], cmd[256];
    snprintf(path, sizeof path, "%s/s.yaml", tmp);
    static const char s[] = PERIODIC("2000000000", "10") STAGE;
    write_file(path, s, strlen(s));
    cr_expect_eq(kit_sh("./vlsim run %s 2>%s/err.txt", path, tmp), 2);
    snprintf(cmd, sizeof cmd, "%s/err.txt", tmp);
    char want[256];
    snprintf(want, sizeof want, "%s:2:40: workload.streams: must be <= 1000000", path);
    cr_expect(strstr(read_text(cmd), want) != NULL, "%s", read_text(cmd));
}

/* ---- the fleet, rollout and command-line bounds ----------------------------
 * The traffic profile keeps state per session, the autoscaler per GPU, and
 * the trace file is read whole: the same limits as streams, GPUs and sample
 * files. The command line's --duration and --replications obey the limits
 * of duration_s and replications. Columns counted from the texts. */
#define PROFILE_HEAD "duration_s: 10\nworkload: {arrival: periodic, streams: 1, fps: 1,\n"
#define SESSION "session_s: {dist: exponential, mean: 600}"
#define FLEET_TAIL "cluster: {gpus: 1}\nstages:\n  - {name: a, on: gpu, service: {dist: constant, ms: 1}}\n"
#define FLEET PROFILE_HEAD "  profile: {kind: diurnal, peak_streams: 10, trough_streams: 1, " SESSION "}}\n" FLEET_TAIL

Test(hostile, fleet_and_rollout_bounds)
{
    double rss0 = peak_rss_mib();
    expect_error(PROFILE_HEAD "  profile: {kind: diurnal, peak_streams: 2000000000, trough_streams: 1,\n"
                 "            " SESSION "}}\n" STAGE,
                 "3:42: workload.profile.peak_streams: ", "must be <= 1000000 (state is kept per session)");
    expect_error(PROFILE_HEAD "  profile: {kind: steps, steps: [{at_s: 10, streams: 2e9}],\n"
                 "            " SESSION "}}\n" STAGE,
                 "3:54: workload.profile.steps[0].streams: ", "must be <= 1000000");
    expect_error(PROFILE_HEAD "  profile: {kind: diurnal, peak_streams: 10, trough_streams: 1,\n"
                 "            session_s: {dist: exponential, mean: 0.5}}}\n" STAGE,
                 "4:24: workload.profile.session_s: ", "sessions must last 1 s or more on average");
    /* a trace that never ends (/dev/zero) is refused at the sample-file limit */
    expect_error(PROFILE_HEAD "  profile: {kind: trace, trace: /dev/zero, " SESSION "}}\n" STAGE,
                 "3:33: workload.profile.trace: ", "is larger than 64 MiB");
    expect_error(FLEET "autoscale: {min_gpus: 1, max_gpus: 4, cold_start_s: {dist: constant, "
                 "value: 200}, sla_window_s: 0.5}\n",
                 "7:97: autoscale.sla_window_s: ", "must be >= 1");
    expect_error(FLEET "autoscale: {min_gpus: 1, max_gpus: 4, warm_pool: 100000, cold_start_s: "
                 "{dist: constant, value: 200}}\n",
                 "7:50: autoscale.warm_pool: ", "must be <= 4096 (state is kept per GPU)");
    expect_error(FLEET "canary: {variant: {stages: {a: {service_scale: 1.2}}}, "
                 "steps: [{pct: 1, hold_s: 1e12}]}\n",
                 "7:81: canary.steps[0].hold_s: ", "must be <= 1000000000");
    /* the trace is read whole up to its 64 MiB limit (ASan keeps freed blocks) */
    cr_expect(peak_rss_mib() - rss0 < (SANITIZED ? 400 : 160), "peak RSS grew by %.0f MiB",
              peak_rss_mib() - rss0);

    /* the same scenario within the limits loads */
    scenario_cfg c;
    expect_loads(FLEET "autoscale: {min_gpus: 1, max_gpus: 4, cold_start_s: {dist: constant, "
                 "value: 200}, sla_window_s: 60}\n", &c);
    cfg_free(&c);

    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 1e308 -q 2>%s/e1", tmp), 2);
    cr_expect_eq(kit_sh("grep -q 'expected seconds > 0 and <= 1e9' %s/e1", tmp), 0);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --replications 2000000000 -q 2>%s/e2",
                        tmp), 2);
    cr_expect_eq(kit_sh("grep -q 'an integer from 1 to 100000' %s/e2", tmp), 0);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --warmup 1e300 -q 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim sweep scenarios/mmc-example.yaml --out %s/sw --duration 1e300 "
                        "2>/dev/null", tmp), 2);
    cr_expect_eq(kit_sh("./vlsim canary scenarios/canary-encoder.yaml --seed ' -5' 2>/dev/null"), 2);
    char sw[128];
    snprintf(sw, sizeof sw, "%s/sw", tmp);
    cr_expect(!kit_exists(sw), "no sweep directory was made");
}
