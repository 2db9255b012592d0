/* test_scenario.c — the scenario loader: malformed input is rejected with
 * FILE:LINE:COL: KEYPATH: message, well-formed input loads every field.
 *
 * Malformed scenarios are YAML strings written here, with their line and
 * column worked out by hand from the text. Tests run from the repository
 * root; fixtures live in tests/data/scenario/. These tests must never write
 * files or depend on anything outside the repository. */
#include <criterion/criterion.h>

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scenario.h"
#include "tests/kit_scenario.h"

#define DATA "tests/data/scenario"

static int load(const char *yaml, scenario_cfg *c, char *err, size_t errlen)
{
    return scn_load_string(yaml, strlen(yaml), "s.yaml", DATA, c, err, errlen);
}

/* yaml must fail with a message starting "s.yaml:<where>" and holding gist;
 * the config must be left all zero. */
static void expect_error(const char *yaml, const char *where, const char *gist)
{
    kit_scn_error(yaml, strlen(yaml), "s.yaml", DATA, where, gist);
}

static void expect_ok(const char *yaml, scenario_cfg *c)
{
    char err[512];
    int rc = load(yaml, c, err, sizeof err);
    cr_assert_eq(rc, 0, "rejected: %s\n%s", err, yaml);
}

/* A scenario whose one stage's service is svc (a flow mapping); the service
 * value starts at line 6, column 14. */
#define WITH_SERVICE(svc)                         \
    "name: t\n"                                   \
    "duration_s: 10\n"                            \
    "workload: {arrival: poisson, rate_hz: 1}\n"  \
    "stages:\n"                                   \
    "  - name: a\n"                               \
    "    service: " svc "\n"

/* ---- YAML itself ------------------------------------------------------- */

Test(scenario, syntax_error)
{
    expect_error("name: t\n"
                 "duration_s: [10, 20\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n",
                 "3:9: (syntax): ", "did not find expected ',' or ']'");
}

Test(scenario, syntax_error_bad_indent)
{
    expect_error("name: t\n"
                 "  duration_s: 10\n",
                 "2:13: (syntax): ", "mapping values are not allowed");
}

Test(scenario, tab_in_indentation)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "workload:\n"
                 "\tarrival: poisson\n",
                 "4:1: (syntax): ", "tab character in indentation; YAML allows only spaces");
}

Test(scenario, tab_in_nested_indentation)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "  \tservers: 2\n",
                 "7:3: (syntax): ", "tab character in indentation");
}

Test(scenario, empty_file)
{
    expect_error("", "1:1: (root): ", "document is empty");
}

Test(scenario, comments_only_file)
{
    expect_error("# just a comment\n\n", "1:1: (root): ", "document is empty");
}

Test(scenario, document_is_a_list)
{
    expect_error("- name: t\n- duration_s: 10\n", "1:1: (root): ", "expected a mapping");
}

Test(scenario, document_is_a_scalar)
{
    expect_error("\n  hello\n", "2:3: (root): ", "expected a mapping");
}

Test(scenario, two_documents)
{
    expect_error("name: t\n---\nname: u\n", "3:1: (root): ", "only one YAML document");
}

Test(scenario, duplicate_key)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "seed: 3\n"
                 "duration_s: 20\n",
                 "4:1: duration_s: ", "duplicate key (first given at line 2)");
}

Test(scenario, too_large)
{
    size_t n = ((size_t)16 << 20) + 1;
    char *big = malloc(n);
    cr_assert_not_null(big);
    memset(big, ' ', n);
    scenario_cfg c;
    char err[256];
    int rc = scn_load_string(big, n, "s.yaml", NULL, &c, err, sizeof err);
    free(big);
    cr_assert_eq(rc, -1);
    cr_expect_str_eq(err, "s.yaml: file is larger than 16 MiB");
}

/* ---- keys -------------------------------------------------------------- */

Test(scenario, unknown_key_did_you_mean)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    servrs: 4\n",
                 "7:5: stages[0].servrs: ", "unknown key; did you mean 'servers'?");
}

Test(scenario, unknown_key_lists_valid_keys)
{
    expect_error("name: t\n"
                 "colour: blue\n",
                 "2:1: colour: ", "unknown key; valid keys: name, seed, duration_s,");
}

Test(scenario, unknown_key_in_service)
{
    expect_error(WITH_SERVICE("{dist: exponential, mean: 5}"),
                 "6:34: stages[0].service.mean: ", "did you mean 'mean_ms'?");
}

Test(scenario, key_of_another_distribution)
{
    expect_error(WITH_SERVICE("{dist: exponential, ms: 5}"),
                 "6:34: stages[0].service.ms: ", "does not apply to dist: exponential (it takes: mean_ms)");
}

Test(scenario, missing_duration)
{
    expect_error("name: t\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n",
                 "1:1: (root): ", "missing required key 'duration_s'");
}

Test(scenario, missing_workload)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n",
                 "1:1: (root): ", "missing required key 'workload'");
}

Test(scenario, missing_stages)
{
    expect_error("name: t\n"
                 "duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n",
                 "1:1: (root): ", "missing required key 'stages'");
}

Test(scenario, missing_arrival)
{
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  rate_hz: 1\n",
                 "3:3: workload: ", "missing required key 'arrival'");
}

Test(scenario, missing_rate)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson}\n",
                 "2:11: workload: ", "missing required key 'rate_hz'");
}

Test(scenario, missing_periodic_fps)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 4}\n",
                 "2:11: workload: ", "missing required key 'fps'");
}

Test(scenario, missing_periodic_streams)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, fps: 30}\n",
                 "2:11: workload: ", "missing required key 'streams'");
}

Test(scenario, missing_stage_name)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - servers: 2\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "4:5: stages[0]: ", "missing required key 'name'");
}

Test(scenario, missing_service)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service: {dist: constant, ms: 1}\n"
                 "  - name: b\n"
                 "    servers: 2\n",
                 "6:5: stages[1]: ", "missing required key 'service'");
}

Test(scenario, missing_dist)
{
    expect_error(WITH_SERVICE("{mean_ms: 5}"),
                 "6:14: stages[0].service: ", "missing required key 'dist'");
}

Test(scenario, missing_dist_parameter)
{
    expect_error(WITH_SERVICE("{dist: weibull, shape: 2}"),
                 "6:14: stages[0].service: ", "missing required key 'scale_ms'");
}

Test(scenario, missing_queue_capacity)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    queue: {on_full: drop_oldest}\n",
                 "7:12: stages[0].queue: ", "missing required key 'capacity'");
}

Test(scenario, both_warmup_and_warmup_s)
{
    expect_error("duration_s: 10\n"
                 "warmup_s: 5\n"
                 "warmup: auto\n",
                 "3:9: warmup: ", "either warmup or warmup_s, not both");
}

Test(scenario, periodic_key_under_poisson)
{
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  arrival: poisson\n"
                 "  rate_hz: 3\n"
                 "  fps: 30\n",
                 "5:3: workload.fps: ", "applies only to arrival: periodic");
}

Test(scenario, poisson_key_under_periodic)
{
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  arrival: periodic\n"
                 "  rate_hz: 3.2\n",
                 "4:3: workload.rate_hz: ", "applies only to arrival: poisson");
}

/* ---- types ------------------------------------------------------------- */

Test(scenario, seed_not_an_integer)
{
    expect_error("name: t\n"
                 "seed: abc\n",
                 "2:7: seed: ", "expected an integer, got \"abc\"");
}

Test(scenario, integer_given_as_fraction)
{
    expect_error("duration_s: 10\n"
                 "replications: 3.5\n",
                 "2:15: replications: ", "expected an integer, got 3.5");
}

Test(scenario, integer_overflow)
{
    expect_error("seed: 18446744073709551616\n", "1:7: seed: ", "out of range");
}

Test(scenario, servers_overflow)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    servers: 99999999999\n",
                 "7:14: stages[0].servers: ", "must be <= 2147483647, got 99999999999");
}

Test(scenario, number_given_as_word)
{
    expect_error("duration_s: ten\n", "1:13: duration_s: ", "expected a number, got \"ten\"");
}

Test(scenario, number_given_as_quoted_string)
{
    expect_error("duration_s: \"10\"\n", "1:13: duration_s: ", "quoted string \"10\"");
}

Test(scenario, number_given_as_boolean)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: true}\n",
                 "2:39: workload.rate_hz: ", "expected a number, got the boolean true");
}

Test(scenario, number_given_as_mapping)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    servers: {n: 2}\n",
                 "7:14: stages[0].servers: ", "expected an integer, got a mapping");
}

Test(scenario, number_left_empty)
{
    expect_error("duration_s:\n"
                 "seed: 1\n",
                 "1:12: duration_s: ", "expected a number, got an empty value");
}

Test(scenario, workload_is_a_scalar)
{
    expect_error("duration_s: 10\n"
                 "workload: poisson\n",
                 "2:11: workload: ", "expected a mapping such as {arrival: poisson");
}

Test(scenario, service_is_a_list)
{
    expect_error(WITH_SERVICE("[exponential, 5]"),
                 "6:14: stages[0].service: ", "expected a distribution mapping");
}

Test(scenario, stages_is_a_mapping)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  name: a\n",
                 "4:3: stages: ", "expected a list of stages, got a mapping");
}

/* ---- values ------------------------------------------------------------ */

Test(scenario, zero_duration)
{
    expect_error("duration_s: 0\n", "1:13: duration_s: ", "must be > 0, got 0");
}

Test(scenario, negative_mean)
{
    expect_error(WITH_SERVICE("{dist: exponential, mean_ms: -3}"),
                 "6:43: stages[0].service.mean_ms: ", "must be > 0, got -3");
}

Test(scenario, negative_mean_block_style)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service: {dist: constant, ms: 1}\n"
                 "  - name: b\n"
                 "    service:\n"
                 "      dist: exponential\n"
                 "      mean_ms: -3\n",
                 "9:16: stages[1].service.mean_ms: ", "must be > 0, got -3");
}

Test(scenario, rate_is_nan)
{
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  arrival: poisson\n"
                 "  rate_hz: .nan\n",
                 "4:12: workload.rate_hz: ", "must be finite, got .nan");
}

Test(scenario, nan_and_inf_spellings)
{
    static const char *const spellings[] = {
        ".nan", ".NaN", ".NAN", "nan", "NaN", ".inf", ".Inf", "-.inf", "+.INF", "inf",
        "-inf", "Infinity", "1e999"};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        char yaml[64];
        snprintf(yaml, sizeof yaml, "duration_s: %s\n", spellings[i]);
        expect_error(yaml, "1:13: duration_s: ", "must be finite");
    }
}

Test(scenario, fps_is_infinite)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: .inf}\n",
                 "2:48: workload.fps: ", "must be finite, got .inf");
}

Test(scenario, negative_jitter)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 30, jitter_ms: -1}\n",
                 "2:63: workload.jitter_ms: ", "must be >= 0, got -1");
}

Test(scenario, zero_servers)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    servers: 0\n",
                 "7:14: stages[0].servers: ", "must be >= 1, got 0");
}

Test(scenario, zero_replications)
{
    expect_error("duration_s: 10\n"
                 "replications: 0\n",
                 "2:15: replications: ", "must be >= 1, got 0");
}

Test(scenario, negative_seed)
{
    expect_error("seed: -1\n", "1:7: seed: ", "must be >= 0, got -1");
}

Test(scenario, zero_timeout)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    timeout_ms: 0\n",
                 "7:17: stages[0].timeout_ms: ", "must be > 0, got 0");
}

Test(scenario, negative_capacity)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    queue: {capacity: -1}\n",
                 "7:23: stages[0].queue.capacity: ", "must be >= 0, got -1");
}

Test(scenario, unknown_on_full_policy)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    queue: {capacity: 4, on_full: drop_random}\n",
                 "7:35: stages[0].queue.on_full: ", "valid values: drop_newest, drop_oldest");
}

Test(scenario, unknown_arrival_kind)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poison, rate_hz: 1}\n",
                 "2:21: workload.arrival: ", "did you mean 'poisson'? (valid: poisson, periodic)");
}

Test(scenario, unknown_phase)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 1, fps: 30, phase: staggered}\n",
                 "2:59: workload.phase: ", "valid values: random, aligned");
}

Test(scenario, buckets_not_ascending)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "metrics:\n"
                 "  buckets_ms: [5, 10, 10, 50]\n",
                 "4:23: metrics.buckets_ms[2]: ", "strictly ascending, got 10 after 10");
}

Test(scenario, bucket_not_finite)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "metrics:\n"
                 "  buckets_ms: [5, .inf]\n",
                 "4:19: metrics.buckets_ms[1]: ", "must be finite");
}

Test(scenario, too_many_buckets)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "metrics: {buckets_ms: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
                 "21,22,23,24,25,26,27,28,29,30,31,32,33]}\n",
                 "3:23: metrics.buckets_ms: ", "must hold 1 to 32 values, got 33");
}

Test(scenario, empty_stage_list)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: []\n",
                 "3:9: stages: ", "at least one stage");
}

Test(scenario, duplicate_stage_names)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - {name: enc, service: {dist: constant, ms: 1}}\n"
                 "  - {name: enc, service: {dist: constant, ms: 2}}\n",
                 "5:12: stages[1].name: ", "duplicate stage name \"enc\" (also stages[0])");
}

Test(scenario, bad_stage_name)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - name: en code\n",
                 "4:11: stages[0].name: ", "[A-Za-z0-9_-], got \"en code\"");
}

/* ---- distributions ----------------------------------------------------- */

Test(scenario, unknown_distribution_did_you_mean)
{
    expect_error(WITH_SERVICE("{dist: expnential, mean_ms: 5}"),
                 "6:21: stages[0].service.dist: ", "unknown distribution \"expnential\"; did you mean 'exponential'?");
}

Test(scenario, unknown_distribution_lists_valid)
{
    expect_error(WITH_SERVICE("{dist: banana}"),
                 "6:21: stages[0].service.dist: ", "valid: constant, exponential, uniform,");
}

Test(scenario, negative_constant)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: -1}"),
                 "6:35: stages[0].service.ms: ", "must be >= 0, got -1");
}

Test(scenario, uniform_min_not_below_max)
{
    expect_error(WITH_SERVICE("{dist: uniform, min_ms: 5, max_ms: 5}"),
                 "6:38: stages[0].service.min_ms: ", "must be < max_ms, got 5 >= 5");
}

Test(scenario, lognormal_mixed_pairs)
{
    expect_error(WITH_SERVICE("{dist: lognormal, mean_ms: 10, p99_ms: 40}"),
                 "6:45: stages[0].service.p99_ms: ", "either mean_ms and sd_ms, or p50_ms and p99_ms");
}

Test(scenario, lognormal_incomplete_pair)
{
    expect_error(WITH_SERVICE("{dist: lognormal, p50_ms: 10}"),
                 "6:14: stages[0].service: ", "missing required key 'p99_ms'");
}

Test(scenario, lognormal_p99_below_p50)
{
    expect_error(WITH_SERVICE("{dist: lognormal, p50_ms: 10, p99_ms: 8}"),
                 "6:52: stages[0].service.p99_ms: ", "must be > p50_ms");
}

Test(scenario, gamma_zero_sd)
{
    expect_error(WITH_SERVICE("{dist: gamma, mean_ms: 5, sd_ms: 0}"),
                 "6:47: stages[0].service.sd_ms: ", "must be > 0, got 0");
}

Test(scenario, pareto_nan_shape)
{
    expect_error(WITH_SERVICE("{dist: pareto, shape: nan, min_ms: 1}"),
                 "6:36: stages[0].service.shape: ", "must be finite, got nan");
}

Test(scenario, mixture_weights_do_not_sum_to_one)
{
    expect_error(WITH_SERVICE("{dist: mixture, parts: [{weight: 0.9, dist: constant, ms: 5},"
                              " {weight: 0.05, dist: exponential, mean_ms: 50}]}"),
                 "6:37: stages[0].service.parts: ", "weights must sum to 1, got 0.95");
}

Test(scenario, mixture_negative_weight)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service:\n"
                 "      dist: mixture\n"
                 "      parts:\n"
                 "        - {weight: 1.5, dist: constant, ms: 5}\n"
                 "        - {weight: -0.5, dist: constant, ms: 7}\n",
                 "9:20: stages[0].service.parts[1].weight: ", "must be > 0, got -0.5");
}

Test(scenario, mixture_part_missing_weight)
{
    expect_error(WITH_SERVICE("{dist: mixture, parts: [{dist: constant, ms: 5}]}"),
                 "6:38: stages[0].service.parts[0]: ", "missing required key 'weight'");
}

Test(scenario, mixture_part_error_has_nested_path)
{
    expect_error(WITH_SERVICE("{dist: mixture, parts: [{weight: 1, dist: uniform, min_ms: 3, max_ms: 1}]}"),
                 "6:73: stages[0].service.parts[0].min_ms: ", "must be < max_ms");
}

Test(scenario, mixture_nested_too_deep)
{
    expect_error(WITH_SERVICE(
                     "{dist: mixture, parts: [{weight: 1, dist: mixture, parts: ["
                     "{weight: 1, dist: mixture, parts: [{weight: 1, dist: mixture, parts: ["
                     "{weight: 1, dist: mixture, parts: [{weight: 1, dist: constant, ms: 1}]}]}]}]}]}"),
                 "6:", "stages[0].service.parts[0].parts[0].parts[0].parts[0]: mixtures may nest at most 4 deep");
}

Test(scenario, empirical_missing_file)
{
    expect_error(WITH_SERVICE("{dist: empirical, file: no_such_file.txt}"),
                 "6:38: stages[0].service.file: ",
                 "cannot open " DATA "/no_such_file.txt: No such file or directory");
}

Test(scenario, empirical_bad_line)
{
    expect_error(WITH_SERVICE("{dist: empirical, file: bad_samples.txt}"),
                 "6:38: stages[0].service.file: ", "bad_samples.txt:4: not a number: \"abc\"");
}

Test(scenario, empirical_negative_value)
{
    expect_error(WITH_SERVICE("{dist: empirical, file: negative_samples.txt}"),
                 "6:38: stages[0].service.file: ", "negative_samples.txt:2: must be >= 0, got -2.0");
}

Test(scenario, empirical_no_samples)
{
    expect_error(WITH_SERVICE("{dist: empirical, file: comments_only.txt}"),
                 "6:38: stages[0].service.file: ", "comments_only.txt: no samples");
}

/* ---- files ------------------------------------------------------------- */

Test(scenario, load_missing_file)
{
    scenario_cfg c;
    char err[512];
    cr_assert_eq(scn_load(DATA "/does_not_exist.yaml", &c, err, sizeof err), -1);
    cr_expect_str_eq(err, DATA "/does_not_exist.yaml: cannot open: No such file or directory");
    cr_expect_eq(c.stages, NULL);
    cfg_free(&c);
}

Test(scenario, load_file_reports_its_path)
{
    scenario_cfg c;
    char err[512];
    cr_assert_eq(scn_load(DATA "/bad_empirical.yaml", &c, err, sizeof err), -1);
    cr_expect_str_eq(err, DATA "/bad_empirical.yaml:8:13: stages[0].service.file: "
                          "bad_samples.txt:4: not a number: \"abc\"");
}

Test(scenario, load_file_resolves_relative_to_scenario)
{
    scenario_cfg c;
    char err[512];
    int rc = scn_load(DATA "/empirical.yaml", &c, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_str_eq(c.path, DATA "/empirical.yaml");
    cr_expect_str_eq(c.name, "empirical-fixture");
    cr_assert_eq(c.nstages, 1);
    const dist_t *d = &c.stages[0].service;
    cr_expect_eq(d->kind, DIST_EMPIRICAL);
    cr_expect_eq(d->nvalues, 5);
    cr_expect_float_eq(d->values[0], 1.0, 1e-12);     /* sorted */
    cr_expect_float_eq(d->values[4], 4.0, 1e-12);
    cr_expect_float_eq(dist_mean(d), 2.4, 1e-12);     /* (4+1.5+3+2.5+1)/5 */
    cfg_free(&c);
}

Test(scenario, shipped_scenarios_load)
{
    glob_t g;
    int rc = glob("scenarios/*.yaml", 0, NULL, &g);
    if (rc == GLOB_NOMATCH)
        return;
    cr_assert_eq(rc, 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        scenario_cfg c;
        char err[512];
        cr_expect_eq(scn_load(g.gl_pathv[i], &c, err, sizeof err), 0, "%s", err);
        cfg_free(&c);
    }
    globfree(&g);
}

/* ---- well-formed scenarios --------------------------------------------- */

Test(scenario, example_loads_every_field)
{
    static const char yaml[] =
        "name: mmc-example\n"
        "seed: 7                   # uint64, default 1\n"
        "duration_s: 2000          # > 0, required\n"
        "warmup_s: 100\n"
        "replications: 5\n"
        "workload:\n"
        "  arrival: poisson\n"
        "  rate_hz: 3.2\n"
        "metrics:\n"
        "  buckets_ms: [5, 10, 20, 33, 50, 100, 200, 500]\n"
        "stages:\n"
        "  - name: encode\n"
        "    servers: 4\n"
        "    service: {dist: exponential, mean_ms: 1000}\n"
        "    queue: {capacity: 64, on_full: drop_newest}\n"
        "    timeout_ms: 500\n";
    static const double buckets[] = {5, 10, 20, 33, 50, 100, 200, 500};
    scenario_cfg c;
    expect_ok(yaml, &c);
    cr_expect_str_eq(c.name, "mmc-example");
    cr_expect_str_eq(c.path, "s.yaml");
    cr_expect_eq(c.seed, 7);
    cr_expect_float_eq(c.duration_s, 2000, 1e-12);
    cr_expect_float_eq(c.warmup_s, 100, 1e-12);
    cr_expect(!c.warmup_auto);
    cr_expect_eq(c.replications, 5);
    cr_expect_eq(c.workload.arrival, ARRIVAL_POISSON);
    cr_expect_float_eq(c.workload.rate_hz, 3.2, 1e-12);
    cr_assert_eq(c.nbuckets, 8);
    for (int i = 0; i < 8; i++)
        cr_expect_float_eq(c.buckets_ms[i], buckets[i], 1e-12);
    cr_assert_eq(c.nstages, 1);
    const stage_cfg *s = &c.stages[0];
    cr_expect_str_eq(s->name, "encode");
    cr_expect_eq(s->servers, 4);
    cr_expect_eq(s->service.kind, DIST_EXPONENTIAL);
    cr_expect_float_eq(dist_mean(&s->service), 1000, 1e-9);
    cr_expect_eq(s->capacity, 64);
    cr_expect_eq(s->on_full, ONFULL_DROP_NEWEST);
    cr_expect_float_eq(s->timeout_ms, 500, 1e-12);
    cfg_free(&c);
    cr_expect_eq(c.stages, NULL);
    cr_expect_eq(c.nstages, 0);
}

Test(scenario, defaults)
{
    static const double buckets[] = {5, 10, 20, 33, 50, 100, 200, 500};
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "stages:\n"
              "  - name: only\n"
              "    service: {dist: constant, ms: 4}\n"
              "  - name: second-stage_2\n"
              "    service: {dist: constant, ms: 0}\n",
              &c);
    cr_expect_eq(c.seed, 1);
    cr_expect_float_eq(c.warmup_s, 0, 1e-12);
    cr_expect(!c.warmup_auto);
    cr_expect_eq(c.replications, 5);
    cr_assert_eq(c.nbuckets, 8);
    for (int i = 0; i < 8; i++)
        cr_expect_float_eq(c.buckets_ms[i], buckets[i], 1e-12);
    cr_assert_eq(c.nstages, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(c.stages[i].servers, 1);
        cr_expect_eq(c.stages[i].capacity, -1);
        cr_expect_eq(c.stages[i].on_full, ONFULL_DROP_OLDEST);   /* real time: the freshest frame */
        cr_expect_float_eq(c.stages[i].timeout_ms, 0, 1e-12);
    }
    cr_expect_str_eq(c.stages[1].name, "second-stage_2");
    cfg_free(&c);
}

Test(scenario, periodic_workload)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload:\n"
              "  arrival: periodic\n"
              "  streams: 8\n"
              "  fps: 30\n"
              "  jitter_ms: 1.5\n"
              "  phase: aligned\n"
              "metrics: {buckets_ms: [1, 2.5]}\n"
              "stages: [{name: a, service: {dist: constant, ms: 4}, queue: {capacity: 0, on_full: drop_oldest}}]\n",
              &c);
    cr_expect_eq(c.workload.arrival, ARRIVAL_PERIODIC);
    cr_expect_eq(c.workload.streams, 8);
    cr_expect_float_eq(c.workload.fps, 30, 1e-12);
    cr_expect_float_eq(c.workload.jitter_ms, 1.5, 1e-12);
    cr_expect_eq(c.workload.phase, PHASE_ALIGNED);
    cr_expect_eq(c.nbuckets, 2);
    cr_expect_float_eq(c.buckets_ms[1], 2.5, 1e-12);
    cr_expect_eq(c.stages[0].capacity, 0);
    cr_expect_eq(c.stages[0].on_full, ONFULL_DROP_OLDEST);
    cfg_free(&c);
}

Test(scenario, periodic_defaults)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: periodic, streams: 1, fps: 25}\n"
              "stages: [{name: a, service: {dist: constant, ms: 4}}]\n",
              &c);
    cr_expect_float_eq(c.workload.jitter_ms, 0, 1e-12);
    cr_expect_eq(c.workload.phase, PHASE_RANDOM);
    cfg_free(&c);
}

Test(scenario, warmup_auto)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "warmup: auto\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "stages: [{name: a, service: {dist: constant, ms: 4}}]\n",
              &c);
    cr_expect(c.warmup_auto);
    cfg_free(&c);
}

Test(scenario, warmup_seconds)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "warmup: 12.5\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "stages: [{name: a, service: {dist: constant, ms: 4}}]\n",
              &c);
    cr_expect(!c.warmup_auto);
    cr_expect_float_eq(c.warmup_s, 12.5, 1e-12);
    cfg_free(&c);
}

Test(scenario, warmup_bad_word)
{
    expect_error("duration_s: 60\n"
                 "warmup: automatic\n",
                 "2:9: warmup: ", "expected 'auto' or a number of seconds, got \"automatic\"");
}

Test(scenario, largest_seed)
{
    scenario_cfg c;
    expect_ok("seed: 18446744073709551615\n"
              "duration_s: 60\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "stages: [{name: a, service: {dist: constant, ms: 4}}]\n",
              &c);
    cr_expect_eq(c.seed, UINT64_MAX);
    cfg_free(&c);
}

/* Load a one-stage scenario with service svc; check kind and mean. */
static void expect_dist(const char *svc, dist_kind kind, double mean)
{
    char yaml[1024];
    scenario_cfg c;
    snprintf(yaml, sizeof yaml,
             "duration_s: 10\n"
             "workload: {arrival: poisson, rate_hz: 1}\n"
             "stages:\n"
             "  - name: a\n"
             "    service: %s\n", svc);
    expect_ok(yaml, &c);
    cr_expect_eq(c.stages[0].service.kind, kind, "%s", svc);
    cr_expect(fabs(dist_mean(&c.stages[0].service) - mean) <= 1e-9 * fabs(mean),
              "%s: mean %.12g, want %.12g", svc, dist_mean(&c.stages[0].service), mean);
    cfg_free(&c);
}

Test(scenario, every_distribution)
{
    expect_dist("{dist: constant, ms: 5}", DIST_CONSTANT, 5);
    expect_dist("{dist: exponential, mean_ms: 7}", DIST_EXPONENTIAL, 7);
    expect_dist("{dist: uniform, min_ms: 2, max_ms: 4}", DIST_UNIFORM, 3);
    expect_dist("{dist: lognormal, mean_ms: 10, sd_ms: 4}", DIST_LOGNORMAL, 10);
    /* mu = ln 10, sigma = ln(40/10) / z(0.99): mean = exp(mu + sigma^2 / 2) */
    double sigma = log(4.0) / 2.3263478740408408;
    expect_dist("{dist: lognormal, p50_ms: 10, p99_ms: 40}", DIST_LOGNORMAL,
                10 * exp(sigma * sigma / 2));
    expect_dist("{dist: gamma, mean_ms: 5, sd_ms: 2}", DIST_GAMMA, 5);
    expect_dist("{dist: weibull, shape: 2, scale_ms: 10}", DIST_WEIBULL, 8.862269254527580);
    expect_dist("{dist: pareto, shape: 3, min_ms: 2}", DIST_PARETO, 3);
    expect_dist("{dist: empirical, file: samples.txt}", DIST_EMPIRICAL, 2.4);
    expect_dist("{dist: mixture, parts: [{weight: 0.9, dist: constant, ms: 5},"
                " {weight: 0.1, dist: exponential, mean_ms: 50}]}", DIST_MIXTURE, 9.5);
}

Test(scenario, mixture_nested_four_deep)
{
    expect_dist("{dist: mixture, parts: [{weight: 0.5, dist: constant, ms: 2},"
                " {weight: 0.5, dist: mixture, parts: [{weight: 1, dist: mixture, parts: ["
                "{weight: 1, dist: mixture, parts: [{weight: 1, dist: constant, ms: 6}]}]}]}]}",
                DIST_MIXTURE, 4);
}

Test(scenario, string_without_names)
{
    static const char yaml[] = "duration_s: 10\n"
                               "workload: {arrival: poisson, rate_hz: 1}\n"
                               "stages: [{name: a, service: {dist: empirical, file: " DATA "/samples.txt}}]\n";
    scenario_cfg c;
    char err[256];
    cr_assert_eq(scn_load_string(yaml, strlen(yaml), NULL, NULL, &c, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(c.name, "unnamed");
    cfg_free(&c);
}

/* ---- GPU stages, cluster, sampling, SLA -------------------------------- */

/* A cluster of 2 GPUs and one stage "enc" on them; the stage's next key
 * goes on line 7 at column 5 ("    key: value": value at 5 + len(key) + 2). */
#define GPU_STAGE                                 \
    "duration_s: 10\n"                            \
    "workload: {arrival: poisson, rate_hz: 1}\n"  \
    "cluster: {gpus: 2}\n"                        \
    "stages:\n"                                   \
    "  - name: enc\n"                             \
    "    on: gpu\n"

/* One stage "encode" and an sla list whose first item is on line 5: "  - {"
 * puts the item's '{' at column 5 and its first value at column 14. */
#define SLA_HEAD                                                       \
    "duration_s: 10\n"                                                 \
    "workload: {arrival: poisson, rate_hz: 1}\n"                       \
    "stages: [{name: encode, service: {dist: constant, ms: 1}}]\n"     \
    "sla:\n"

Test(scenario, gpu_scenario_loads_every_new_key)
{
    static const char yaml[] =
        "name: full\n"
        "duration_s: 60\n"
        "workload: {arrival: periodic, streams: 4, fps: 15}\n"
        "frame_deadline_ms: 250\n"
        "sla:\n"
        "  - {metric: frame, percentile: 95, ms: 100}\n"
        "  - {metric: llm_prefill, percentile: 99.9, ms: 80}\n"
        "  - {metric: encode, percentile: 50, ms: 20.5}\n"
        "cluster:\n"                              /* before the stages it names */
        "  gpus: 4\n"
        "  gpu_type: h100\n"
        "  gpu_hour_usd: 2.5\n"
        "  placement: least_loaded\n"
        "  gpu_policy: fifo\n"
        "  pools:\n"
        "    vision: {gpus: 3, stages: [encode, reduce]}\n"
        "    llm: {gpus: 1, stages: [llm_decode, llm_prefill]}\n"
        "stages:\n"
        "  - name: decode\n"
        "    on: nvdec\n"
        "    workers: 3\n"
        "    service: {dist: constant, ms: 2}\n"
        "  - name: sample\n"
        "    on: workers\n"
        "    service: {dist: constant, ms: 0.5}\n"
        "    keep: {every: 3}\n"
        "  - name: encode\n"
        "    on: gpu\n"
        "    max_batch: 8\n"
        "    batch_timeout_ms: 4\n"
        "    service:\n"
        "      table: [{batch: 1, ms: 6.1}, {batch: 4, ms: 9}, {batch: 8, ms: 14.9}]\n"
        "      jitter: {dist: lognormal, cv: 0.05}\n"
        "    queue: {capacity: 16}\n"
        "  - name: reduce\n"
        "    on: gpu\n"
        "    priority: -3\n"
        "    keep: {ratio: 0.5}\n"
        "    service: {table: [{batch: 1, ms: 2}, {batch: 2, ms: 2}],"
        " jitter: {dist: uniform, min_ms: 0.9, max_ms: 1.1}}\n"
        "  - name: llm_prefill\n"
        "    on: gpu\n"
        "    max_batch: 64\n"
        "    service: {dist: gamma, mean_ms: 10, sd_ms: 2}\n"
        "  - name: llm_decode\n"
        "    on: gpu\n"
        "    priority: 9\n"
        "    service: {table: [{batch: 1, ms: 20}], jitter: {dist: gamma, cv: 0.1}}\n";
    scenario_cfg c;
    expect_ok(yaml, &c);
    cr_expect_float_eq(c.frame_deadline_ms, 250, 1e-12);

    cr_assert_eq(c.nsla, 3);
    cr_expect_str_eq(c.sla[0].metric, "frame");
    cr_expect_float_eq(c.sla[0].percentile, 95, 1e-12);
    cr_expect_float_eq(c.sla[0].ms, 100, 1e-12);
    cr_expect_str_eq(c.sla[1].metric, "llm_prefill");
    cr_expect_eq(c.sla[1].percentile, 99.9);
    cr_expect_float_eq(c.sla[1].ms, 80, 1e-12);
    cr_expect_str_eq(c.sla[2].metric, "encode");
    cr_expect_float_eq(c.sla[2].percentile, 50, 1e-12);
    cr_expect_float_eq(c.sla[2].ms, 20.5, 1e-12);

    const cluster_cfg *cl = &c.cluster;
    cr_expect_eq(cl->gpus, 4);
    cr_expect_str_eq(cl->gpu_type, "h100");
    cr_expect_float_eq(cl->gpu_hour_usd, 2.5, 1e-12);
    cr_expect_eq(cl->placement, PLACE_LEAST_LOADED);
    cr_expect_eq(cl->policy, GPU_FIFO);
    cr_assert_eq(cl->npools, 2);
    cr_expect_str_eq(cl->pools[0].name, "vision");
    cr_expect_eq(cl->pools[0].first, 0);
    cr_expect_eq(cl->pools[0].gpus, 3);
    cr_expect_eq(cl->pools[0].stage_mask, (1u << 2) | (1u << 3));   /* encode, reduce */
    cr_expect_str_eq(cl->pools[1].name, "llm");
    cr_expect_eq(cl->pools[1].first, 3);
    cr_expect_eq(cl->pools[1].gpus, 1);
    cr_expect_eq(cl->pools[1].stage_mask, (1u << 4) | (1u << 5));   /* llm_prefill, llm_decode */

    cr_assert_eq(c.nstages, 6);
    const stage_cfg *dec = &c.stages[0], *smp = &c.stages[1], *enc = &c.stages[2];
    const stage_cfg *red = &c.stages[3], *pre = &c.stages[4], *llm = &c.stages[5];

    cr_expect_eq(dec->on, RES_WORKERS);              /* nvdec: a pool of decoder engines */
    cr_expect_eq(dec->servers, 3);                   /* workers: a synonym of servers */
    cr_expect_eq(dec->keep, KEEP_ALL);
    cr_expect_eq(smp->on, RES_WORKERS);
    cr_expect_eq(smp->keep, KEEP_EVERY);
    cr_expect_eq(smp->keep_every, 3);

    cr_expect_eq(enc->on, RES_GPU);
    cr_expect_eq(enc->max_batch, 8);
    cr_expect_float_eq(enc->batch_timeout_ms, 4, 1e-12);
    cr_expect_eq(enc->priority, 1);                  /* canonical: encode */
    cr_expect_eq(enc->capacity, 16);
    cr_assert(enc->has_table);
    cr_assert_eq(enc->table.n, 3);
    static const double eb[] = {1, 4, 8}, ems[] = {6.1, 9, 14.9};
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(enc->table.batch[i], eb[i], 1e-12);
        cr_expect_float_eq(enc->table.ms[i], ems[i], 1e-12);
    }
    cr_assert(enc->has_jitter);
    cr_expect_eq(enc->jitter.kind, DIST_LOGNORMAL);
    cr_expect_float_eq(dist_mean(&enc->jitter), 1, 1e-9);
    cr_expect_float_eq(sqrt(dist_var(&enc->jitter)), 0.05, 1e-9);

    cr_expect_eq(red->on, RES_GPU);
    cr_expect_eq(red->priority, -3);                 /* given: beats the canonical 2 */
    cr_expect_eq(red->max_batch, 1);
    cr_expect_eq(red->keep, KEEP_RATIO);
    cr_expect_float_eq(red->keep_ratio, 0.5, 1e-12);
    cr_assert(red->has_table);
    cr_expect_eq(red->table.n, 2);
    cr_expect_float_eq(red->table.ms[1], 2, 1e-12); /* equal times are non-decreasing */
    cr_assert(red->has_jitter);
    cr_expect_eq(red->jitter.kind, DIST_UNIFORM);
    cr_expect_float_eq(dist_mean(&red->jitter), 1, 1e-12);

    cr_expect_eq(pre->on, RES_GPU);
    cr_expect_eq(pre->priority, 3);                  /* canonical: llm_prefill */
    cr_expect_eq(pre->max_batch, 64);                /* no table: any batch size */
    cr_expect(!pre->has_table);
    cr_expect(!pre->has_jitter);
    cr_expect_eq(pre->service.kind, DIST_GAMMA);
    cr_expect_float_eq(dist_mean(&pre->service), 10, 1e-9);

    cr_expect_eq(llm->priority, 9);
    cr_assert(llm->has_jitter);
    cr_expect_eq(llm->jitter.kind, DIST_GAMMA);
    cr_expect_float_eq(dist_mean(&llm->jitter), 1, 1e-9);
    cr_expect_float_eq(sqrt(dist_var(&llm->jitter)), 0.1, 1e-9);
    cfg_free(&c);
}

Test(scenario, gpu_defaults)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "cluster: {gpus: 1}\n"
              "stages:\n"
              "  - {name: capture, service: {dist: constant, ms: 1}}\n"
              "  - {name: encode, on: gpu, service: {dist: constant, ms: 1}}\n"
              "  - {name: reduce, on: gpu, service: {dist: constant, ms: 1}}\n"
              "  - {name: llm_prefill, on: gpu, service: {dist: constant, ms: 1}}\n"
              "  - {name: llm_decode, on: gpu, service: {dist: constant, ms: 1}}\n"
              "  - {name: vision2, on: gpu, service: {dist: constant, ms: 1}}\n",
              &c);
    static const int prio[] = {0, 1, 2, 3, 4, 0};
    cr_assert_eq(c.nstages, 6);
    for (int i = 0; i < 6; i++) {
        const stage_cfg *s = &c.stages[i];
        cr_expect_eq(s->on, i == 0 ? RES_WORKERS : RES_GPU, "%s", s->name);
        cr_expect_eq(s->servers, 1, "%s", s->name);
        cr_expect_eq(s->max_batch, 1, "%s", s->name);
        cr_expect_float_eq(s->batch_timeout_ms, 0, 1e-12, "%s", s->name);
        cr_expect_eq(s->priority, prio[i], "%s", s->name);
        cr_expect(!s->has_table && !s->has_jitter, "%s", s->name);
        cr_expect_eq(s->keep, KEEP_ALL, "%s", s->name);
        cr_expect_eq(s->capacity, -1, "%s", s->name);
    }
    cr_expect_eq(c.cluster.gpus, 1);
    cr_expect_str_eq(c.cluster.gpu_type, "gpu");
    cr_expect_float_eq(c.cluster.gpu_hour_usd, 0, 1e-12);
    cr_expect_eq(c.cluster.placement, PLACE_HASH);
    cr_expect_eq(c.cluster.policy, GPU_PRIORITY);
    cr_expect_eq(c.cluster.npools, 0);
    cr_expect_float_eq(c.frame_deadline_ms, 0, 1e-12);
    cr_expect_eq(c.nsla, 0);
    cfg_free(&c);
}

Test(scenario, workers_defaults_without_cluster)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: poisson, rate_hz: 2}\n"
              "stages: [{name: encode, servers: 2, service: {dist: constant, ms: 4}}]\n",
              &c);
    cr_expect_eq(c.stages[0].on, RES_WORKERS);
    cr_expect_eq(c.stages[0].servers, 2);
    cr_expect_eq(c.stages[0].max_batch, 1);
    cr_expect_eq(c.stages[0].priority, 1);   /* the name implies it, even on workers */
    cr_expect_eq(c.cluster.gpus, 0);
    cr_expect_eq(c.nsla, 0);
    cfg_free(&c);
}

/* n stages s0..s(n-1) on the GPU, all in one pool (n <= 64). */
static char *many_gpu_stages(int n)
{
    size_t cap = 256 + (size_t)n * 96;
    char *y = malloc(cap);
    cr_assert_not_null(y);
    size_t o = (size_t)snprintf(y, cap, "duration_s: 10\n"
                                        "workload: {arrival: poisson, rate_hz: 1}\n"
                                        "cluster: {gpus: 2, pools: {all: {gpus: 2, stages: [");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(y + o, cap - o, "%ss%d", i ? ", " : "", i);
    o += (size_t)snprintf(y + o, cap - o, "]}}}\nstages:\n");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(y + o, cap - o,
                              "  - {name: s%d, on: gpu, service: {dist: constant, ms: 1}}\n", i);
    return y;
}

Test(scenario, sixty_four_stages_fill_the_pool_mask)
{
    char *y = many_gpu_stages(64);
    scenario_cfg c;
    expect_ok(y, &c);
    free(y);
    cr_expect_eq(c.nstages, 64);
    cr_expect_eq(c.cluster.pools[0].stage_mask, UINT64_MAX);
    cfg_free(&c);
}

Test(scenario, too_many_stages)
{
    /* line 4 is "stages:", so the list starts at 5:3 */
    char *y = many_gpu_stages(65);
    expect_error(y, "5:3: stages: ", "must list at most 64 stages, got 65");
    free(y);
}

/* -- stage keys -- */

Test(scenario, unknown_resource)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    on: cpu\n",
                 "7:9: stages[0].on: ", "did you mean 'gpu'? (valid: workers, nvdec, gpu)");
}

Test(scenario, servers_and_workers)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    servers: 2\n"
                 "    workers: 3\n",
                 "8:14: stages[0].workers: ", "give either servers or workers, not both");
}

Test(scenario, zero_workers)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    on: nvdec\n"
                 "    workers: 0\n",
                 "8:14: stages[0].workers: ", "must be >= 1, got 0");
}

Test(scenario, max_batch_on_workers_stage)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    max_batch: 4\n",
                 "7:5: stages[0].max_batch: ", "applies only to on: gpu");
}

Test(scenario, priority_on_nvdec_stage)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    on: nvdec\n"
                 "    priority: 2\n",
                 "8:5: stages[0].priority: ", "applies only to on: gpu");
}

Test(scenario, batch_timeout_on_workers_stage)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, batch_timeout_ms: 2, service: {dist: constant, ms: 1}}]\n",
                 "3:20: stages[0].batch_timeout_ms: ", "applies only to on: gpu");
}

Test(scenario, servers_on_gpu_stage)
{
    expect_error(GPU_STAGE
                 "    servers: 2\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:5: stages[0].servers: ",
                 "a gpu stage runs on the cluster's GPUs; remove servers");
}

Test(scenario, workers_on_gpu_stage_written_first)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "cluster: {gpus: 2}\n"
                 "stages: [{name: enc, workers: 4, on: gpu, service: {dist: constant, ms: 1}}]\n",
                 "4:22: stages[0].workers: ", "remove workers");
}

Test(scenario, gpu_stage_without_cluster)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - name: a\n"
                 "    service: {dist: constant, ms: 1}\n"
                 "  - name: enc\n"
                 "    on: gpu\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:5: stages[1].on: ", "on: gpu needs cluster.gpus >= 1");
}

Test(scenario, gpu_stage_with_cluster_lacking_gpus)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "cluster: {gpu_type: h100}\n"
                 "stages: [{name: enc, service: {dist: constant, ms: 1}, on: gpu}]\n",
                 "4:56: stages[0].on: ", "on: gpu needs cluster.gpus >= 1");
}

Test(scenario, negative_batch_timeout)
{
    expect_error(GPU_STAGE
                 "    batch_timeout_ms: -1\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:23: stages[0].batch_timeout_ms: ", "must be >= 0, got -1");
}

Test(scenario, zero_max_batch)
{
    expect_error(GPU_STAGE
                 "    max_batch: 0\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:16: stages[0].max_batch: ", "must be >= 1, got 0");
}

Test(scenario, fractional_priority)
{
    expect_error(GPU_STAGE
                 "    priority: 1.5\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:15: stages[0].priority: ", "expected an integer, got 1.5");
}

/* -- service tables and jitter -- */

Test(scenario, table_on_workers_stage)
{
    expect_error(WITH_SERVICE("{table: [{batch: 1, ms: 2}]}"),
                 "6:15: stages[0].service.table: ", "applies only to on: gpu");
}

Test(scenario, table_first_batch_not_one)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 2, ms: 5}]}\n",
                 "7:31: stages[0].service.table[0].batch: ", "the first point must be batch 1, got 2");
}

Test(scenario, table_batches_not_ascending)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}, {batch: 1, ms: 6}]}\n",
                 "7:50: stages[0].service.table[1].batch: ", "strictly ascending, got 1 after 1");
}

Test(scenario, table_time_decreases)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}, {batch: 4, ms: 4.5}]}\n",
                 "7:57: stages[0].service.table[1].ms: ",
                 "must not decrease as the batch grows, got 4.5 after 5");
}

Test(scenario, table_time_zero)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 0}]}\n",
                 "7:38: stages[0].service.table[0].ms: ", "must be > 0, got 0");
}

Test(scenario, table_time_infinite)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: .inf}]}\n",
                 "7:38: stages[0].service.table[0].ms: ", "must be finite");
}

Test(scenario, table_point_missing_ms)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1}]}\n",
                 "7:23: stages[0].service.table[0]: ", "missing required key 'ms'");
}

Test(scenario, table_empty)
{
    expect_error(GPU_STAGE
                 "    service: {table: []}\n",
                 "7:22: stages[0].service.table: ", "must hold 1 to 32 points, got 0");
}

Test(scenario, table_too_long)
{
    char yaml[2048];
    size_t o = (size_t)snprintf(yaml, sizeof yaml, "%s    service: {table: [", GPU_STAGE);
    for (int b = 1; b <= 33; b++)
        o += (size_t)snprintf(yaml + o, sizeof yaml - o, "%s{batch: %d, ms: %d}",
                              b > 1 ? ", " : "", b, b);
    snprintf(yaml + o, sizeof yaml - o, "]}\n");
    expect_error(yaml, "7:22: stages[0].service.table: ", "must hold 1 to 32 points, got 33");
}

Test(scenario, max_batch_beyond_table)
{
    expect_error(GPU_STAGE
                 "    max_batch: 16\n"
                 "    service: {table: [{batch: 1, ms: 6.1}, {batch: 8, ms: 14.9}]}\n",
                 "7:16: stages[0].max_batch: ",
                 "max_batch 16 is beyond the service table (last batch 8)");
}

Test(scenario, table_mixed_with_distribution_keys)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}], dist: constant}\n",
                 "7:43: stages[0].service.dist: ", "does not apply with a service table");
}

Test(scenario, jitter_without_table)
{
    expect_error(GPU_STAGE
                 "    service: {dist: constant, ms: 5, jitter: {dist: gamma, cv: 0.1}}\n",
                 "7:38: stages[0].service.jitter: ", "jitter applies only with a service table");
}

Test(scenario, jitter_mean_not_one)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}], jitter: {dist: uniform, min_ms: 1, max_ms: 1.4}}\n",
                 "7:51: stages[0].service.jitter: ",
                 "jitter must have mean 1 (it multiplies the table time), got 1.2");
}

Test(scenario, jitter_zero_cv)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}], jitter: {dist: lognormal, cv: 0}}\n",
                 "7:73: stages[0].service.jitter.cv: ", "must be > 0, got 0");
}

Test(scenario, jitter_cv_on_other_distribution)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}], jitter: {dist: exponential, cv: 0.1}}\n",
                 "7:71: stages[0].service.jitter.cv: ", "applies only to dist: lognormal or gamma");
}

Test(scenario, jitter_cv_with_mean)
{
    expect_error(GPU_STAGE
                 "    service: {table: [{batch: 1, ms: 5}], jitter: {dist: gamma, cv: 0.1, mean_ms: 1}}\n",
                 "7:74: stages[0].service.jitter.mean_ms: ", "does not apply with cv");
}

/* -- keep -- */

Test(scenario, keep_ratio_and_every)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {ratio: 0.5, every: 2}\n",
                 "7:31: stages[0].keep.every: ", "give either ratio or every, not both");
}

Test(scenario, keep_ratio_above_one)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {ratio: 1.5}\n",
                 "7:19: stages[0].keep.ratio: ", "must be <= 1, got 1.5");
}

Test(scenario, keep_ratio_zero)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {ratio: 0}\n",
                 "7:19: stages[0].keep.ratio: ", "must be > 0, got 0");
}

Test(scenario, keep_every_zero)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {every: 0}\n",
                 "7:19: stages[0].keep.every: ", "must be >= 1, got 0");
}

Test(scenario, keep_empty)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {}\n",
                 "7:11: stages[0].keep: ", "give ratio");
}

Test(scenario, keep_typo)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep: {ration: 0.5}\n",
                 "7:12: stages[0].keep.ration: ", "did you mean 'ratio'?");
}

/* -- cluster and pools -- */

Test(scenario, cluster_missing_gpus)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpu_type: h100}\n",
                 "4:10: cluster: ", "missing required key 'gpus'");
}

Test(scenario, cluster_zero_gpus)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 0}\n",
                 "4:17: cluster.gpus: ", "must be >= 1, got 0");
}

Test(scenario, cluster_unknown_placement)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, placement: round_robin}\n",
                 "4:31: cluster.placement: ", "valid values: hash, least_loaded");
}

Test(scenario, cluster_unknown_policy)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, gpu_policy: fifi}\n",
                 "4:32: cluster.gpu_policy: ", "did you mean 'fifo'? (valid: priority, fifo)");
}

Test(scenario, cluster_gpu_type_too_long)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, gpu_type: abcdefghijklmnopqrstuvwxyz012345}\n",
                 "4:30: cluster.gpu_type: ", "must be 1 to 31 characters");
}

Test(scenario, cluster_negative_price)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, gpu_hour_usd: -2}\n",
                 "4:34: cluster.gpu_hour_usd: ", "must be >= 0, got -2");
}

Test(scenario, cluster_typo)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, gpu_polcy: fifo}\n",
                 "4:20: cluster.gpu_polcy: ", "did you mean 'gpu_policy'?");
}

/* Two GPU stages (enc, llm) and a workers stage (dec), written after a
 * cluster whose pools are given on lines 6 and 7 ("    NAME: {" ...). */
#define POOLS(vision, llm)                                             \
    "duration_s: 10\n"                                                 \
    "workload: {arrival: poisson, rate_hz: 1}\n"                       \
    "cluster:\n"                                                       \
    "  gpus: 4\n"                                                      \
    "  pools:\n"                                                       \
    "    vision: " vision "\n"                                         \
    "    llm: " llm "\n"                                               \
    "stages:\n"                                                        \
    "  - {name: dec, service: {dist: constant, ms: 1}}\n"              \
    "  - {name: encode, on: gpu, service: {dist: constant, ms: 1}}\n"  \
    "  - {name: llm, on: gpu, service: {dist: constant, ms: 1}}\n"

Test(scenario, pools_load)
{
    scenario_cfg c;
    expect_ok(POOLS("{gpus: 1, stages: [encode]}", "{gpus: 3, stages: [llm]}"), &c);
    cr_assert_eq(c.cluster.npools, 2);
    cr_expect_eq(c.cluster.pools[0].first, 0);
    cr_expect_eq(c.cluster.pools[0].stage_mask, 1u << 1);
    cr_expect_eq(c.cluster.pools[1].first, 1);
    cr_expect_eq(c.cluster.pools[1].gpus, 3);
    cr_expect_eq(c.cluster.pools[1].stage_mask, 1u << 2);
    cfg_free(&c);
}

Test(scenario, pools_do_not_sum_to_cluster)
{
    expect_error(POOLS("{gpus: 2, stages: [encode]}", "{gpus: 1, stages: [llm]}"),
                 "6:5: cluster.pools: ", "the pools hold 3 GPUs in all, but cluster.gpus is 4");
}

Test(scenario, pool_unknown_stage)
{
    expect_error(POOLS("{gpus: 2, stages: [encod]}", "{gpus: 2, stages: [llm]}"),
                 "6:32: cluster.pools.vision.stages[0]: ",
                 "unknown stage \"encod\"; did you mean 'encode'?");
}

Test(scenario, pool_holds_workers_stage)
{
    expect_error(POOLS("{gpus: 2, stages: [encode, dec]}", "{gpus: 2, stages: [llm]}"),
                 "6:40: cluster.pools.vision.stages[1]: ",
                 "stage \"dec\" runs on workers; only on: gpu stages go in pools");
}

Test(scenario, pool_lists_stage_twice)
{
    expect_error(POOLS("{gpus: 2, stages: [encode, encode]}", "{gpus: 2, stages: [llm]}"),
                 "6:40: cluster.pools.vision.stages[1]: ", "listed twice in this pool");
}

Test(scenario, gpu_stage_in_no_pool)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "cluster: {gpus: 4, pools: {vision: {gpus: 4, stages: [encode]}}}\n"
                 "stages:\n"
                 "  - {name: encode, on: gpu, service: {dist: constant, ms: 1}}\n"
                 "  - name: llm\n"
                 "    on: gpu\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "6:5: stages[1]: ", "is in no pool of cluster.pools");
}

Test(scenario, gpu_stage_in_two_pools)
{
    expect_error(POOLS("{gpus: 2, stages: [encode, llm]}", "{gpus: 2, stages: [llm]}"),
                 "11:5: stages[2]: ", "is in pools 'vision' and 'llm'; a gpu stage must be in "
                 "exactly one pool");
}

Test(scenario, pool_zero_gpus)
{
    expect_error(POOLS("{gpus: 0, stages: [encode]}", "{gpus: 4, stages: [llm]}"),
                 "6:20: cluster.pools.vision.gpus: ", "must be >= 1, got 0");
}

Test(scenario, pool_without_stages)
{
    expect_error(POOLS("{gpus: 2, stages: []}", "{gpus: 2, stages: [llm]}"),
                 "6:31: cluster.pools.vision.stages: ", "at least one stage");
}

Test(scenario, pool_bad_name)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: e, on: gpu, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, pools: {bad name: {gpus: 2, stages: [e]}}}\n",
                 "4:28: cluster.pools.bad name: ",
                 "must be 1 to 63 characters of [A-Za-z0-9_-], got \"bad name\"");
}

Test(scenario, duplicate_pool_name)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: e, on: gpu, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 2, pools: {p: {gpus: 1, stages: [e]}, p: {gpus: 1, stages: [e]}}}\n",
                 "4:55: cluster.pools.p: ", "duplicate pool name (first given at line 4)");
}

Test(scenario, too_many_pools)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: e, on: gpu, service: {dist: constant, ms: 1}}]\n"
                 "cluster: {gpus: 9, pools: {a: {}, b: {}, c: {}, d: {}, e: {}, f: {}, g: {},"
                 " h: {}, i: {}}}\n",
                 "4:27: cluster.pools: ", "at most 8 pools, got 9");
}

/* -- frame deadline and SLA -- */

Test(scenario, zero_frame_deadline)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "frame_deadline_ms: 0\n",
                 "4:20: frame_deadline_ms: ", "must be > 0, got 0");
}

Test(scenario, sla_unknown_stage)
{
    expect_error(SLA_HEAD
                 "  - {metric: encod, percentile: 95, ms: 100}\n",
                 "5:14: sla[0].metric: ", "did you mean 'encode'? (valid: frame, response, encode)");
}

Test(scenario, sla_unknown_metric_lists_valid)
{
    expect_error(SLA_HEAD
                 "  - {metric: frame, percentile: 95, ms: 100}\n"
                 "  - {metric: latency, percentile: 95, ms: 100}\n",
                 "6:14: sla[1].metric: ", "valid values: frame, response, encode");
}

Test(scenario, sla_bad_percentile)
{
    expect_error(SLA_HEAD
                 "  - {metric: frame, percentile: 97, ms: 100}\n",
                 "5:33: sla[0].percentile: ", "must be one of 50, 90, 95, 99, 99.9, got 97");
}

Test(scenario, sla_zero_ms)
{
    expect_error(SLA_HEAD
                 "  - {metric: frame, percentile: 99.9, ms: 0}\n",
                 "5:43: sla[0].ms: ", "must be > 0, got 0");
}

Test(scenario, sla_missing_percentile)
{
    expect_error(SLA_HEAD
                 "  - {metric: frame, ms: 100}\n",
                 "5:5: sla[0]: ", "missing required key 'percentile'");
}

Test(scenario, sla_not_a_list)
{
    expect_error(SLA_HEAD
                 "  metric: frame\n",
                 "5:3: sla: ", "expected a list of SLA lines");
}

Test(scenario, sla_too_many_lines)
{
    char yaml[2048];
    size_t o = (size_t)snprintf(yaml, sizeof yaml, SLA_HEAD);
    for (int i = 0; i < 17; i++)
        o += (size_t)snprintf(yaml + o, sizeof yaml - o, "  - {metric: frame, percentile: 99, ms: 100}\n");
    expect_error(yaml, "5:3: sla: ", "at most 16 SLA lines, got 17");
}

/* ---- jitter sources: retransmit, gop, cache_miss ------------------------ */

/* After WITH_SERVICE a stage key goes on line 7: "    retransmit: {" puts
 * its '{' at column 17 and the first value at 24; "    gop: {" puts the
 * '{' at 10 and the first value at 19; "    cache_miss: {" as retransmit. */

Test(scenario, retransmit_loss_zero)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0, rtt_ms: 40}\n",
                 "7:24: stages[0].retransmit.loss: ", "must be > 0, got 0");
}

Test(scenario, retransmit_loss_one)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 1, rtt_ms: 40}\n",
                 "7:24: stages[0].retransmit.loss: ", "must be < 1, got 1");
}

Test(scenario, retransmit_missing_rtt)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0.02}\n",
                 "7:17: stages[0].retransmit: ", "missing required key 'rtt_ms'");
}

Test(scenario, retransmit_missing_loss)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit:\n"
                 "      rtt_ms: 40\n",
                 "8:7: stages[0].retransmit: ", "missing required key 'loss'");
}

Test(scenario, retransmit_zero_rtt)
{
    /* "    retransmit: {loss: 0.02, rtt_ms: 0}": 0.02 at 24-27, ", " 28-29,
     * "rtt_ms:" 30-36, the value at 38 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0.02, rtt_ms: 0}\n",
                 "7:38: stages[0].retransmit.rtt_ms: ", "must be > 0, got 0");
}

Test(scenario, retransmit_zero_max_retries)
{
    /* ... "rtt_ms: 40" (40 at 38-39), ", " 40-41, "max_retries:" 42-53, value at 55 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0.02, rtt_ms: 40, max_retries: 0}\n",
                 "7:55: stages[0].retransmit.max_retries: ", "must be >= 1, got 0");
}

Test(scenario, retransmit_fractional_max_retries)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0.02, rtt_ms: 40, max_retries: 2.5}\n",
                 "7:55: stages[0].retransmit.max_retries: ", "expected an integer, got 2.5");
}

Test(scenario, retransmit_on_gpu_stage)
{
    expect_error(GPU_STAGE
                 "    retransmit: {loss: 0.02, rtt_ms: 40}\n"
                 "    service: {dist: constant, ms: 1}\n",
                 "7:5: stages[0].retransmit: ", "applies only to worker stages");
}

Test(scenario, retransmit_stage_key_typo)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmits: {loss: 0.02, rtt_ms: 40}\n",
                 "7:5: stages[0].retransmits: ", "unknown key; did you mean 'retransmit'?");
}

Test(scenario, retransmit_rtt_without_unit)
{
    /* "    retransmit: {loss: 0.1, rtt: 40}": 0.1 at 24-26, ", " 27-28, rtt at 29 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: {loss: 0.1, rtt: 40}\n",
                 "7:29: stages[0].retransmit.rtt: ", "unknown key; did you mean 'rtt_ms'?");
}

Test(scenario, retransmit_not_a_mapping)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 10}")
                 "    retransmit: 0.02\n",
                 "7:17: stages[0].retransmit: ", "expected a mapping such as {loss: 0.02");
}

Test(scenario, gop_missing_length)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {i_factor: 3}\n",
                 "7:10: stages[0].gop: ", "missing required key 'length'");
}

Test(scenario, gop_zero_length)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 0}\n",
                 "7:19: stages[0].gop.length: ", "must be >= 1, got 0");
}

Test(scenario, gop_fractional_length)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15.5}\n",
                 "7:19: stages[0].gop.length: ", "expected an integer, got 15.5");
}

Test(scenario, gop_i_factor_below_one)
{
    /* "    gop: {length: 15, i_factor: 0.5}": 15 at 19-20, ", " 21-22,
     * "i_factor:" 23-31, the value at 33 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, i_factor: 0.5}\n",
                 "7:33: stages[0].gop.i_factor: ", "must be >= 1");
}

Test(scenario, gop_i_service_or_i_factor_not_both)
{
    /* "    gop: {length: 15, i_factor: 2, i_service: {...}}": "i_factor:" 23-31,
     * 2 at 33, ", " 34-35, "i_service:" 36-45, its mapping at 47 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, i_factor: 2, i_service: {dist: constant, ms: 5}}\n",
                 "7:47: stages[0].gop.i_service: ", "not both");
    /* a bad distribution inside it is named by its own path */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, i_service: {dist: constant}}\n",
                 "7:34: stages[0].gop.i_service: ", "missing required key 'ms'");
}

Test(scenario, gop_i_service_loads)
{
    const char *yaml = WITH_SERVICE("{dist: constant, ms: 2}")
                       "    gop: {length: 15, i_service: {dist: uniform, min_ms: 4, max_ms: 8}}\n";
    scenario_cfg c;
    char err[512];
    cr_assert_eq(load(yaml, &c, err, sizeof err), 0, "%s", err);
    cr_expect(c.stages[0].gop.has_i_service);
    cr_expect_float_eq(dist_mean(&c.stages[0].gop.i_service), 6.0, 1e-12);   /* (4 + 8) / 2 */
    cfg_free(&c);
}

Test(scenario, gop_content_loads)
{
    /* inline, and from a file read in its order (1.25 before 0.75: not sorted) */
    const char *inl = WITH_SERVICE("{dist: constant, ms: 2}")
                      "    gop: {length: 15, content: [1.5, 0.5, 1]}\n";
    const char *file = WITH_SERVICE("{dist: constant, ms: 2}")
                       "    gop: {length: 15, content: {file: content.txt}}\n";
    scenario_cfg c;
    expect_ok(inl, &c);
    cr_assert_eq(c.stages[0].gop.ncontent, 3);
    cr_expect_eq(c.stages[0].gop.content[0], 1.5);
    cr_expect_eq(c.stages[0].gop.content[1], 0.5);
    cr_expect_eq(c.stages[0].gop.content[2], 1.0);
    cfg_free(&c);
    expect_ok(file, &c);
    cr_assert_eq(c.stages[0].gop.ncontent, 2);
    cr_expect_eq(c.stages[0].gop.content[0], 1.25);
    cr_expect_eq(c.stages[0].gop.content[1], 0.75);
    cfg_free(&c);
}

Test(scenario, gop_content_errors)
{
    /* "    gop: {length: 15, content: [1, 0]}": "content:" 23-30, "[" at 32,
     * 1 at 33, ", " 34-35, 0 at 36 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, content: [1, 0]}\n",
                 "7:36: stages[0].gop.content[1]: ", "must be > 0, got 0");
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, content: []}\n",
                 "7:32: stages[0].gop.content: ", "must list 1 to 1000000 factors, got 0");
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, content: 3}\n",
                 "7:32: stages[0].gop.content: ", "expected a list of factors");
    /* "{" at 32, "file:" 33-37, the name at 39 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, content: {file: content_zero.txt}}\n",
                 "7:39: stages[0].gop.content.file: ", "factor 2 (line order) must be > 0");
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, content: {name: x}}\n",
                 "7:33: stages[0].gop.content", "name");
}

Test(scenario, gop_b_frames_not_below_length)
{
    /* "    gop: {length: 3, b_frames: 3}": 3 at 19, ", " 20-21, "b_frames:" 22-30, value at 32 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 3, b_frames: 3}\n",
                 "7:32: stages[0].gop.b_frames: ", "must be < length (3), got 3");
}

Test(scenario, gop_negative_b_frames)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, b_frames: -1}\n",
                 "7:33: stages[0].gop.b_frames: ", "must be >= 0, got -1");
}

Test(scenario, gop_negative_reorder)
{
    /* ... "b_frames: 2" (2 at 33), ", " 34-35, "reorder_ms:" 36-46, value at 48 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, b_frames: 2, reorder_ms: -5}\n",
                 "7:48: stages[0].gop.reorder_ms: ", "must be >= 0, got -5");
}

Test(scenario, gop_key_typo)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    gop: {length: 15, bframes: 2}\n",
                 "7:23: stages[0].gop.bframes: ", "unknown key; did you mean 'b_frames'?");
}

Test(scenario, gop_on_gpu_stage_written_before_on)
{
    /* "stages: [{name: enc, gop: ...": '{' at 10, "name:" 11-15, enc 17-19, ", " 20-21, gop at 22 */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 1, fps: 30}\n"
                 "cluster: {gpus: 1}\n"
                 "stages: [{name: enc, gop: {length: 15}, on: gpu, service: {dist: constant, ms: 1}}]\n",
                 "4:22: stages[0].gop: ", "applies only to worker stages");
}

Test(scenario, gop_error_in_second_stage_block_style)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 30}\n"
                 "stages:\n"
                 "  - name: capture\n"
                 "    service: {dist: constant, ms: 10}\n"
                 "  - name: decode\n"
                 "    on: nvdec\n"
                 "    service: {dist: constant, ms: 2}\n"
                 "    gop:\n"
                 "      length: 12\n"
                 "      b_frames: 12\n",
                 "11:17: stages[1].gop.b_frames: ", "must be < length (12), got 12");
}

Test(scenario, cache_miss_prob_above_one)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache_miss: {prob: 1.5, ms_per_token: 0.01, context_tokens: 4096}\n",
                 "7:24: stages[0].cache_miss.prob: ", "must be <= 1, got 1.5");
}

Test(scenario, cache_miss_prob_zero)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache_miss: {prob: 0, ms_per_token: 0.01, context_tokens: 4096}\n",
                 "7:24: stages[0].cache_miss.prob: ", "must be > 0, got 0");
}

Test(scenario, cache_miss_zero_ms_per_token)
{
    /* 0.1 at 24-26, ", " 27-28, "ms_per_token:" 29-41, value at 43 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache_miss: {prob: 0.1, ms_per_token: 0, context_tokens: 4096}\n",
                 "7:43: stages[0].cache_miss.ms_per_token: ", "must be > 0, got 0");
}

Test(scenario, cache_miss_missing_context)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache_miss: {prob: 0.1, ms_per_token: 0.01}\n",
                 "7:17: stages[0].cache_miss: ", "missing required key 'context_tokens'");
}

Test(scenario, cache_miss_on_gpu_stage_checks_values)
{
    /* a gpu stage takes cache_miss, so the error is the value's */
    expect_error(GPU_STAGE
                 "    service: {dist: constant, ms: 1}\n"
                 "    cache_miss:\n"
                 "      prob: 0.1\n"
                 "      ms_per_token: 0.01\n"
                 "      context_tokens: -4096\n",
                 "11:23: stages[0].cache_miss.context_tokens: ", "must be > 0, got -4096");
}

Test(scenario, cache_miss_stage_key_typo)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache-miss: {prob: 0.1, ms_per_token: 0.01, context_tokens: 4096}\n",
                 "7:5: stages[0].cache-miss: ", "unknown key; did you mean 'cache_miss'?");
}

Test(scenario, cache_miss_tokens_as_quoted_string)
{
    /* 0.1 at 24-26, "ms_per_token: 0.01" 29-46, ", " 47-48,
     * "context_tokens:" 49-63, value at 65 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 2}")
                 "    cache_miss: {prob: 0.1, ms_per_token: 0.01, context_tokens: \"4k\"}\n",
                 "7:65: stages[0].cache_miss.context_tokens: ", "quoted string \"4k\"");
}

/* The workload comes after the stages: the reorder default (b_frames frame
 * intervals) is resolved once everything is loaded. */
Test(scenario, jitter_sources_load)
{
    static const char yaml[] =
        "duration_s: 60\n"
        "cluster: {gpus: 1}\n"
        "stages:\n"
        "  - name: capture\n"
        "    servers: 64\n"
        "    service: {dist: constant, ms: 12}\n"
        "    retransmit: {loss: 0.02, rtt_ms: 40}\n"
        "  - name: decode\n"
        "    on: nvdec\n"
        "    servers: 8\n"
        "    service: {dist: constant, ms: 2}\n"
        "    gop: {length: 15, i_factor: 3.5, b_frames: 2}\n"
        "  - name: decode2\n"
        "    service: {dist: constant, ms: 2}\n"
        "    gop: {length: 12, b_frames: 3, reorder_ms: 66}\n"
        "    retransmit: {loss: 0.5, rtt_ms: 7.5, max_retries: 6}\n"
        "    cache_miss: {prob: 1, ms_per_token: 0.5, context_tokens: 3}\n"
        "  - name: llm_prefill\n"
        "    on: gpu\n"
        "    service: {table: [{batch: 1, ms: 9}]}\n"
        "    cache_miss: {prob: 0.1, ms_per_token: 0.01, context_tokens: 4096}\n"
        "  - name: plain\n"
        "    service: {dist: constant, ms: 1}\n"
        "workload: {arrival: periodic, streams: 4, fps: 15}\n";
    scenario_cfg c;
    expect_ok(yaml, &c);
    cr_assert_eq(c.nstages, 5);
    const stage_cfg *cap = &c.stages[0], *dec = &c.stages[1], *d2 = &c.stages[2];
    const stage_cfg *pre = &c.stages[3], *pl = &c.stages[4];

    cr_expect_float_eq(cap->retransmit.loss, 0.02, 1e-15);
    cr_expect_float_eq(cap->retransmit.rtt_ms, 40, 1e-12);
    cr_expect_eq(cap->retransmit.max_retries, 3);            /* default */
    cr_expect_eq(cap->gop.length, 0);
    cr_expect_eq(cap->cache_miss.prob, 0);

    cr_expect_eq(dec->on, RES_WORKERS);
    cr_expect_eq(dec->gop.length, 15);
    cr_expect_float_eq(dec->gop.i_factor, 3.5, 1e-12);
    cr_expect_eq(dec->gop.b_frames, 2);
    cr_expect_float_eq(dec->gop.reorder_ms, 2 * 1000.0 / 15, 1e-9);   /* 133.33 ms */
    cr_expect_eq(dec->retransmit.loss, 0);

    cr_expect_eq(d2->gop.length, 12);
    cr_expect_float_eq(d2->gop.i_factor, 1, 1e-15);          /* default */
    cr_expect_eq(d2->gop.b_frames, 3);
    cr_expect_float_eq(d2->gop.reorder_ms, 66, 1e-12);       /* given: no default */
    cr_expect_float_eq(d2->retransmit.loss, 0.5, 1e-15);
    cr_expect_float_eq(d2->retransmit.rtt_ms, 7.5, 1e-12);
    cr_expect_eq(d2->retransmit.max_retries, 6);
    cr_expect_float_eq(d2->cache_miss.prob, 1, 1e-15);       /* prob 1 allowed */
    cr_expect_float_eq(d2->cache_miss.ms_per_token, 0.5, 1e-15);
    cr_expect_float_eq(d2->cache_miss.context_tokens, 3, 1e-15);

    cr_expect_eq(pre->on, RES_GPU);
    cr_expect_float_eq(pre->cache_miss.prob, 0.1, 1e-15);
    cr_expect_float_eq(pre->cache_miss.ms_per_token, 0.01, 1e-15);
    cr_expect_float_eq(pre->cache_miss.context_tokens, 4096, 1e-12);
    cr_expect_eq(pre->retransmit.loss, 0);
    cr_expect_eq(pre->gop.length, 0);

    cr_expect_eq(pl->retransmit.loss, 0);                    /* all off */
    cr_expect_eq(pl->gop.length, 0);
    cr_expect_eq(pl->gop.reorder_ms, 0);
    cr_expect_eq(pl->cache_miss.prob, 0);
    cfg_free(&c);
}

Test(scenario, gop_reorder_default_workload_first)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: periodic, streams: 1, fps: 30}\n"
              "stages:\n"
              "  - {name: a, service: {dist: constant, ms: 2}, gop: {length: 16, b_frames: 3}}\n"
              "  - {name: b, service: {dist: constant, ms: 2}, gop: {length: 1}}\n"
              "  - {name: c, service: {dist: constant, ms: 2}, gop: {length: 8, b_frames: 1,"
              " reorder_ms: 0}}\n",
              &c);
    cr_expect_float_eq(c.stages[0].gop.reorder_ms, 3 * 1000.0 / 30, 1e-9);   /* 100 ms */
    cr_expect_eq(c.stages[1].gop.length, 1);                 /* every frame an I-frame */
    cr_expect_float_eq(c.stages[1].gop.i_factor, 1, 1e-15);
    cr_expect_eq(c.stages[1].gop.b_frames, 0);
    cr_expect_eq(c.stages[1].gop.reorder_ms, 0);             /* no B-frames: 0 intervals */
    cr_expect_eq(c.stages[2].gop.reorder_ms, 0);             /* given 0: kept */
    cfg_free(&c);
}

Test(scenario, gop_reorder_default_poisson_is_zero)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: poisson, rate_hz: 30}\n"
              "stages: [{name: a, service: {dist: constant, ms: 2}, gop: {length: 15, b_frames: 2}}]\n",
              &c);
    cr_expect_eq(c.stages[0].gop.b_frames, 2);
    cr_expect_eq(c.stages[0].gop.reorder_ms, 0);             /* no frame interval */
    cfg_free(&c);
}

/* ---- response path, degradation controller, alert rules ----------------- */

/* Every new key. The degradation block comes before the stages it scales
 * and the workload comes last: the cross checks run once all is loaded. */
Test(scenario, response_degradation_alerts_load_every_new_key)
{
    static const char yaml[] =
        "name: degrade-full\n"
        "duration_s: 60\n"
        "degradation:\n"
        "  modes: [reduce_fps, reduce_quality, drop_response]\n"
        "  interval_s: 0.5\n"
        "  window_s: 5\n"
        "  p99_target_ms: 150\n"
        "  high_water: 0.8\n"
        "  low_water: 0.25\n"
        "  deescalate: 0.9\n"
        "  cooldown_s: 0\n"
        "  reduce_fps: {fps: 10}\n"
        "  reduce_quality: {scale: {encode: 0.5, llm_prefill: 0.6}}\n"
        "alerts: {window_s: 30, p99_sla_factor: 2, drop_rate: 0.05, gpu_util_below: 0.1,"
        " gpu_util_for_s: 120, p99_p95_ratio: 1.25}\n"
        "sla:\n"
        "  - {metric: response, percentile: 99, ms: 2000}\n"
        "  - {metric: frame, percentile: 95, ms: 100}\n"
        "cluster: {gpus: 2}\n"
        "stages:\n"
        "  - name: capture\n"
        "    service: {dist: constant, ms: 1}\n"
        "    budget_ms: 20\n"
        "  - name: encode\n"
        "    on: gpu\n"
        "    service: {dist: constant, ms: 5}\n"
        "    budget_ms: 30.5\n"
        "  - name: llm_prefill\n"
        "    on: gpu\n"
        "    service: {dist: constant, ms: 9}\n"
        "  - name: answer\n"                       /* response by path, not by name */
        "    path: response\n"
        "    on: gpu\n"
        "    response_tokens: 128\n"
        "    max_batch: 16\n"
        "    service: {table: [{batch: 1, ms: 20}, {batch: 16, ms: 30}]}\n"
        "    budget_ms: 900\n"
        "  - name: response\n"                     /* response by name */
        "    service: {dist: constant, ms: 1}\n"
        "  - name: llm_decode\n"                   /* by name response; path: frame wins */
        "    path: frame\n"
        "    service: {dist: constant, ms: 1}\n"
        "workload: {arrival: periodic, streams: 4, fps: 15, queries_per_min: 2,"
        " proactive_per_min: 0.5}\n";
    scenario_cfg c;
    expect_ok(yaml, &c);

    cr_expect_eq(c.workload.arrival, ARRIVAL_PERIODIC);
    cr_expect_float_eq(c.workload.queries_per_min, 2, 1e-12);
    cr_expect_float_eq(c.workload.proactive_per_min, 0.5, 1e-12);

    cr_assert_eq(c.nstages, 6);
    static const path_kind paths[] = {
        PATH_FRAME, PATH_FRAME, PATH_FRAME, PATH_RESPONSE, PATH_RESPONSE, PATH_FRAME};
    static const double budgets[] = {20, 30.5, 0, 900, 0, 0};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(c.stages[i].path, paths[i], "%s", c.stages[i].name);
        cr_expect_float_eq(c.stages[i].budget_ms, budgets[i], 1e-12, "%s", c.stages[i].name);
        cr_expect_eq(c.stages[i].response_tokens, i == 3 ? 128 : 0, "%s", c.stages[i].name);
    }
    cr_expect_eq(c.stages[3].on, RES_GPU);
    cr_expect_eq(c.stages[3].max_batch, 16);
    cr_expect_eq(c.stages[5].priority, 4);        /* the name's priority stays */

    cr_assert_eq(c.nsla, 2);
    cr_expect_str_eq(c.sla[0].metric, "response");
    cr_expect_float_eq(c.sla[0].ms, 2000, 1e-12);
    cr_expect_str_eq(c.sla[1].metric, "frame");

    const degrade_cfg *d = &c.degrade;
    cr_assert_eq(d->nmodes, 3);
    cr_expect_eq(d->modes[0], MODE_REDUCE_FPS);
    cr_expect_eq(d->modes[1], MODE_REDUCE_QUALITY);
    cr_expect_eq(d->modes[2], MODE_DROP_RESPONSE);
    cr_expect_float_eq(d->interval_s, 0.5, 1e-12);
    cr_expect_float_eq(d->window_s, 5, 1e-12);
    cr_expect_float_eq(d->p99_target_ms, 150, 1e-12);
    cr_expect_float_eq(d->high_water, 0.8, 1e-12);
    cr_expect_float_eq(d->low_water, 0.25, 1e-12);
    cr_expect_float_eq(d->deescalate, 0.9, 1e-12);
    cr_expect_eq(d->cooldown_s, 0);
    cr_expect_float_eq(d->fps, 10, 1e-12);
    static const double scale[] = {1, 0.5, 0.6, 1, 1, 1};
    for (int i = 0; i < 6; i++)
        cr_expect_float_eq(d->quality_scale[i], scale[i], 1e-12, "%s", c.stages[i].name);
    for (int i = 6; i < CFG_MAX_STAGES; i++)
        cr_expect_eq(d->quality_scale[i], 1.0);

    const alert_cfg *a = &c.alerts;
    cr_expect_float_eq(a->window_s, 30, 1e-12);
    cr_expect_float_eq(a->p99_sla_factor, 2, 1e-12);
    cr_expect_float_eq(a->drop_rate, 0.05, 1e-12);
    cr_expect_float_eq(a->gpu_util_below, 0.1, 1e-12);
    cr_expect_float_eq(a->gpu_util_for_s, 120, 1e-12);
    cr_expect_float_eq(a->p99_p95_ratio, 1.25, 1e-12);
    cfg_free(&c);
}

/* degradation with only its required keys: the rest are cfg_defaults'. */
Test(scenario, degradation_defaults)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: periodic, streams: 2, fps: 30}\n"
              "stages:\n"
              "  - {name: a, service: {dist: constant, ms: 1}}\n"
              "  - {name: b, service: {dist: constant, ms: 1}}\n"
              "degradation:\n"
              "  modes: [reduce_quality, reduce_fps]\n"
              "  p99_target_ms: 200\n"
              "  reduce_fps: {fps: 29.5}\n"
              "  reduce_quality: {scale: {b: 2}}\n",
              &c);
    const degrade_cfg *d = &c.degrade;
    cr_assert_eq(d->nmodes, 2);
    cr_expect_eq(d->modes[0], MODE_REDUCE_QUALITY);
    cr_expect_eq(d->modes[1], MODE_REDUCE_FPS);
    cr_expect_float_eq(d->p99_target_ms, 200, 1e-12);
    cr_expect_float_eq(d->fps, 29.5, 1e-12);
    cr_expect_float_eq(d->interval_s, 1, 1e-12);
    cr_expect_float_eq(d->window_s, 10, 1e-12);
    cr_expect_float_eq(d->high_water, 0.7, 1e-12);
    cr_expect_float_eq(d->low_water, 0.3, 1e-12);
    cr_expect_float_eq(d->deescalate, 0.8, 1e-12);
    cr_expect_float_eq(d->cooldown_s, 30, 1e-12);
    cr_expect_eq(d->quality_scale[0], 1.0);
    cr_expect_float_eq(d->quality_scale[1], 2, 1e-12);
    /* no alerts key: the defaults */
    cr_expect_float_eq(c.alerts.window_s, 60, 1e-12);
    cr_expect_float_eq(c.alerts.p99_sla_factor, 1.5, 1e-12);
    cr_expect_float_eq(c.alerts.drop_rate, 0.01, 1e-12);
    cr_expect_float_eq(c.alerts.gpu_util_below, 0.2, 1e-12);
    cr_expect_float_eq(c.alerts.gpu_util_for_s, 300, 1e-12);
    cr_expect_float_eq(c.alerts.p99_p95_ratio, 1.5, 1e-12);
    cfg_free(&c);
}

/* Without the new keys: no controller, no queries, paths by name. */
Test(scenario, response_path_defaults)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: periodic, streams: 1, fps: 10, queries_per_min: 0}\n"
              "alerts: {}\n"
              "stages:\n"
              "  - {name: encode, service: {dist: constant, ms: 1}}\n"
              "  - {name: llm_decode, service: {dist: constant, ms: 1}}\n"
              "  - {name: response, service: {dist: constant, ms: 1}}\n",
              &c);
    cr_expect_eq(c.degrade.nmodes, 0);
    cr_expect_eq(c.workload.queries_per_min, 0);
    cr_expect_eq(c.workload.proactive_per_min, 0);
    cr_expect_eq(c.stages[0].path, PATH_FRAME);
    cr_expect_eq(c.stages[1].path, PATH_RESPONSE);
    cr_expect_eq(c.stages[2].path, PATH_RESPONSE);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(c.stages[i].response_tokens, 0);
        cr_expect_eq(c.stages[i].budget_ms, 0);
    }
    cr_expect_float_eq(c.alerts.window_s, 60, 1e-12);   /* an empty alerts mapping */
    cfg_free(&c);
}

/* Queries with no response stage are fine while their rates are 0. */
Test(scenario, queries_at_zero_need_no_response_stage)
{
    scenario_cfg c;
    expect_ok("duration_s: 60\n"
              "workload: {arrival: periodic, streams: 1, fps: 10, queries_per_min: 0,"
              " proactive_per_min: 0}\n"
              "stages: [{name: a, service: {dist: constant, ms: 1}}]\n",
              &c);
    cr_expect_eq(c.stages[0].path, PATH_FRAME);
    cfg_free(&c);
}

/* -- workload -- */

Test(scenario, queries_under_poisson)
{
    /* '{' at 11, "arrival: poisson" 12-27, ", " 28-29, "rate_hz: 3" 30-39,
     * ", " 40-41, queries_per_min at 42 */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 3, queries_per_min: 2}\n",
                 "2:42: workload.queries_per_min: ", "applies only to arrival: periodic");
}

Test(scenario, negative_proactive_rate)
{
    /* "  proactive_per_min: -1": the key 3-19, ": " 20-21, the value at 22 */
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  arrival: periodic\n"
                 "  streams: 2\n"
                 "  fps: 15\n"
                 "  proactive_per_min: -1\n",
                 "6:22: workload.proactive_per_min: ", "must be >= 0, got -1");
}

Test(scenario, queries_without_response_stage)
{
    /* "  queries_per_min: 0.5": the key 3-17, ": " 18-19, the value at 20 */
    expect_error("duration_s: 10\n"
                 "workload:\n"
                 "  arrival: periodic\n"
                 "  streams: 2\n"
                 "  fps: 15\n"
                 "  proactive_per_min: 0\n"
                 "  queries_per_min: 0.5\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: llm_prefill, service: {dist: constant, ms: 1}}\n",
                 "7:20: workload.queries_per_min: ",
                 "queries need a stage on the response path (path: response, or a stage "
                 "named llm_decode or response)");
}

Test(scenario, proactive_without_response_stage_path_overridden)
{
    /* llm_decode moved to the frame path leaves no response stage. The
     * workload comes after the stages; proactive_per_min (the first rate > 0)
     * "workload: {arrival: periodic, streams: 1, fps: 30, proactive_per_min: 2":
     * '{' 11, "arrival: periodic" 12-28, ", " 29-30, "streams: 1" 31-40, ", " 41-42,
     * "fps: 30" 43-49, ", " 50-51, "proactive_per_min:" 52-69, the value at 71 */
    expect_error("duration_s: 10\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: llm_decode, path: frame, service: {dist: constant, ms: 1}}\n"
                 "workload: {arrival: periodic, streams: 1, fps: 30, proactive_per_min: 2,"
                 " queries_per_min: 1}\n",
                 "5:71: workload.proactive_per_min: ", "queries need a stage on the response path");
}

/* -- stages -- */

Test(scenario, no_stage_serves_frames)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages:\n"
                 "  - {name: llm_decode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: post, path: response, service: {dist: constant, ms: 1}}\n",
                 "4:3: stages: ", "no stage serves frames: every stage is on the response path");
}

Test(scenario, unknown_path)
{
    /* "    path: respons": the value at 11 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    path: respons\n",
                 "7:11: stages[0].path: ",
                 "unknown value \"respons\"; did you mean 'response'? (valid: frame, response)");
}

Test(scenario, response_tokens_on_workers_stage)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    response_tokens: 64\n",
                 "7:5: stages[0].response_tokens: ", "applies only to on: gpu stages");
}

Test(scenario, zero_response_tokens)
{
    /* "    response_tokens: 0": the key 5-19, ": " 20-21, the value at 22 */
    expect_error(GPU_STAGE
                 "    service: {dist: constant, ms: 1}\n"
                 "    response_tokens: 0\n",
                 "8:22: stages[0].response_tokens: ", "must be >= 1, got 0");
}

Test(scenario, fractional_response_tokens)
{
    expect_error(GPU_STAGE
                 "    service: {dist: constant, ms: 1}\n"
                 "    response_tokens: 2.5\n",
                 "8:22: stages[0].response_tokens: ", "expected an integer, got 2.5");
}

Test(scenario, zero_budget)
{
    /* "    budget_ms: 0": the key 5-13, ": " 14-15, the value at 16 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    budget_ms: 0\n",
                 "7:16: stages[0].budget_ms: ", "must be > 0, got 0");
}

Test(scenario, budget_without_unit)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    budget: 5\n",
                 "7:5: stages[0].budget: ", "unknown key; did you mean 'budget_ms'?");
}

Test(scenario, sla_response_typo)
{
    expect_error(SLA_HEAD
                 "  - {metric: respnse, percentile: 99, ms: 100}\n",
                 "5:14: sla[0].metric: ",
                 "did you mean 'response'? (valid: frame, response, encode)");
}

/* -- degradation -- */

/* A periodic workload at 15 FPS with proactive triggers, a frame stage
 * encode and the response stage llm_decode; the degradation mapping's keys
 * start on line 7 ("  key: value": the value at 3 + len(key) + 2). */
#define DEG_HEAD                                                                     \
    "duration_s: 10\n"                                                               \
    "workload: {arrival: periodic, streams: 2, fps: 15, proactive_per_min: 1}\n"     \
    "stages:\n"                                                                      \
    "  - {name: encode, service: {dist: constant, ms: 1}}\n"                         \
    "  - {name: llm_decode, service: {dist: constant, ms: 1}}\n"                     \
    "degradation:\n"

/* ... and its first two keys: a valid mode list and target; the next key
 * goes on line 9. */
#define DEG_OK DEG_HEAD "  modes: [drop_response]\n" "  p99_target_ms: 100\n"

Test(scenario, degradation_loads_with_head)
{
    scenario_cfg c;
    expect_ok(DEG_OK, &c);
    cr_assert_eq(c.degrade.nmodes, 1);
    cr_expect_eq(c.degrade.modes[0], MODE_DROP_RESPONSE);
    cfg_free(&c);
}

Test(scenario, degradation_missing_modes)
{
    expect_error(DEG_HEAD "  p99_target_ms: 100\n",
                 "7:3: degradation: ", "missing required key 'modes'");
}

Test(scenario, degradation_modes_empty)
{
    /* "  modes: []": '[' at 10 */
    expect_error(DEG_HEAD "  modes: []\n  p99_target_ms: 100\n",
                 "7:10: degradation.modes: ", "must list 1 to 3 modes, got 0");
}

Test(scenario, degradation_four_modes)
{
    expect_error(DEG_HEAD "  modes: [drop_response, reduce_fps, reduce_quality, drop_response]\n",
                 "7:10: degradation.modes: ", "must list 1 to 3 modes, got 4");
}

Test(scenario, degradation_modes_not_a_list)
{
    expect_error(DEG_HEAD "  modes: drop_response\n",
                 "7:10: degradation.modes: ", "expected a list of modes in escalation order");
}

Test(scenario, degradation_mode_twice)
{
    /* '[' 10, drop_response 11-23, ", " 24-25, the second at 26 */
    expect_error(DEG_HEAD "  modes: [drop_response, drop_response]\n",
                 "7:26: degradation.modes[1]: ",
                 "mode drop_response is listed twice (also degradation.modes[0])");
}

Test(scenario, degradation_mode_typo)
{
    expect_error(DEG_HEAD "  modes: [reduce_fsp]\n",
                 "7:11: degradation.modes[0]: ",
                 "unknown value \"reduce_fsp\"; did you mean 'reduce_fps'?");
}

Test(scenario, degradation_key_typo)
{
    expect_error(DEG_OK "  cooldown: 5\n",
                 "9:3: degradation.cooldown: ", "unknown key; did you mean 'cooldown_s'?");
}

Test(scenario, degradation_not_a_mapping)
{
    /* "degradation: reduce_fps" on line 7: the value at 14 */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 15}\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: llm_decode, service: {dist: constant, ms: 1}}\n"
                 "\n"
                 "degradation: reduce_fps\n",
                 "7:14: degradation: ", "expected a mapping such as {modes: [reduce_fps]");
}

Test(scenario, degradation_drop_response_without_proactive)
{
    /* '[' 10, reduce_quality 11-24, ", " 25-26, drop_response at 27 */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 15, queries_per_min: 3}\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: llm_decode, service: {dist: constant, ms: 1}}\n"
                 "degradation:\n"
                 "  modes: [reduce_quality, drop_response]\n"
                 "  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {encode: 0.5}}\n",
                 "7:27: degradation.modes[1]: ",
                 "drop_response has nothing to drop: workload.proactive_per_min is 0");
}

Test(scenario, degradation_drop_response_workload_written_later)
{
    /* "degradation: {modes: [drop_response], ...": '{' 14, "modes:" 15-20,
     * '[' 22, drop_response at 23 */
    expect_error("duration_s: 10\n"
                 "degradation: {modes: [drop_response], p99_target_ms: 100}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "workload: {arrival: poisson, rate_hz: 5}\n",
                 "2:23: degradation.modes[0]: ", "drop_response has nothing to drop");
}

Test(scenario, degradation_reduce_fps_with_poisson)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 5}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "degradation: {modes: [reduce_fps], p99_target_ms: 100, reduce_fps: {fps: 5}}\n",
                 "4:23: degradation.modes[0]: ",
                 "reduce_fps needs a periodic workload (arrival: periodic)");
}

Test(scenario, degradation_zero_interval)
{
    /* "  interval_s: 0": the value at 15 */
    expect_error(DEG_HEAD "  modes: [drop_response]\n  interval_s: 0\n",
                 "8:15: degradation.interval_s: ", "must be > 0, got 0");
}

Test(scenario, degradation_window_below_interval)
{
    /* "  window_s: 2": the value at 13 */
    expect_error(DEG_HEAD "  modes: [drop_response]\n  interval_s: 5\n  window_s: 2\n",
                 "9:13: degradation.window_s: ", "must be >= interval_s (5), got 2");
}

Test(scenario, degradation_interval_beyond_default_window)
{
    expect_error(DEG_HEAD "  modes: [drop_response]\n  interval_s: 20\n",
                 "8:15: degradation.interval_s: ", "must be <= window_s (10, the default), got 20");
}

Test(scenario, degradation_missing_target)
{
    expect_error(DEG_HEAD "  modes: [drop_response]\n",
                 "7:3: degradation: ", "missing required key 'p99_target_ms'");
}

Test(scenario, degradation_negative_target)
{
    /* "  p99_target_ms: -5": the key 3-15, ": " 16-17, the value at 18 */
    expect_error(DEG_HEAD "  modes: [drop_response]\n  p99_target_ms: -5\n",
                 "8:18: degradation.p99_target_ms: ", "must be > 0, got -5");
}

Test(scenario, degradation_high_water_above_one)
{
    expect_error(DEG_OK "  high_water: 1.5\n",
                 "9:15: degradation.high_water: ", "must be <= 1, got 1.5");
}

Test(scenario, degradation_negative_low_water)
{
    /* "  low_water: -0.1": the value at 14 */
    expect_error(DEG_OK "  low_water: -0.1\n",
                 "9:14: degradation.low_water: ", "must be >= 0, got -0.1");
}

Test(scenario, degradation_waters_equal)
{
    /* reported at the one written later */
    expect_error(DEG_OK "  high_water: 0.5\n  low_water: 0.5\n",
                 "10:14: degradation.low_water: ", "must be < high_water (0.5), got 0.5");
}

Test(scenario, degradation_waters_crossed_high_later)
{
    expect_error(DEG_OK "  low_water: 0.6\n  high_water: 0.4\n",
                 "10:15: degradation.high_water: ", "must be > low_water (0.6), got 0.4");
}

Test(scenario, degradation_high_water_below_default_low)
{
    expect_error(DEG_OK "  high_water: 0.2\n",
                 "9:15: degradation.high_water: ", "must be > low_water (0.3), got 0.2");
}

Test(scenario, degradation_zero_deescalate)
{
    expect_error(DEG_OK "  deescalate: 0\n",
                 "9:15: degradation.deescalate: ", "must be > 0, got 0");
}

Test(scenario, degradation_deescalate_above_one)
{
    expect_error(DEG_OK "  deescalate: 1.5\n",
                 "9:15: degradation.deescalate: ", "must be <= 1, got 1.5");
}

Test(scenario, degradation_negative_cooldown)
{
    expect_error(DEG_OK "  cooldown_s: -1\n",
                 "9:15: degradation.cooldown_s: ", "must be >= 0, got -1");
}

Test(scenario, degradation_reduce_fps_missing)
{
    expect_error(DEG_HEAD "  modes: [reduce_fps]\n  p99_target_ms: 100\n",
                 "7:3: degradation: ", "missing required key 'reduce_fps'");
}

Test(scenario, degradation_reduce_fps_without_mode)
{
    expect_error(DEG_OK "  reduce_fps: {fps: 5}\n",
                 "9:3: degradation.reduce_fps: ", "applies only when reduce_fps is among the modes");
}

Test(scenario, degradation_reduce_fps_not_below_workload)
{
    /* "  reduce_fps: {fps: 15}": '{' 15, "fps:" 16-19, the value at 21 */
    expect_error(DEG_HEAD "  modes: [reduce_fps]\n  p99_target_ms: 100\n  reduce_fps: {fps: 15}\n",
                 "9:21: degradation.reduce_fps.fps: ", "must be < workload.fps (15), got 15");
}

Test(scenario, degradation_reduce_fps_zero)
{
    expect_error(DEG_HEAD "  modes: [reduce_fps]\n  p99_target_ms: 100\n  reduce_fps: {fps: 0}\n",
                 "9:21: degradation.reduce_fps.fps: ", "must be > 0, got 0");
}

Test(scenario, degradation_reduce_fps_key_typo)
{
    expect_error(DEG_HEAD "  modes: [reduce_fps]\n  p99_target_ms: 100\n  reduce_fps: {fsp: 5}\n",
                 "9:16: degradation.reduce_fps.fsp: ", "unknown key; did you mean 'fps'?");
}

Test(scenario, degradation_reduce_fps_missing_fps)
{
    expect_error(DEG_HEAD "  modes: [reduce_fps]\n  p99_target_ms: 100\n  reduce_fps: {}\n",
                 "9:15: degradation.reduce_fps: ", "missing required key 'fps'");
}

Test(scenario, degradation_reduce_quality_missing)
{
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n",
                 "7:3: degradation: ", "missing required key 'reduce_quality'");
}

Test(scenario, degradation_reduce_quality_without_mode)
{
    expect_error(DEG_OK "  reduce_quality: {scale: {encode: 0.5}}\n",
                 "9:3: degradation.reduce_quality: ",
                 "applies only when reduce_quality is among the modes");
}

Test(scenario, degradation_scale_unknown_stage)
{
    /* "  reduce_quality: {scale: {encod: 0.5}}": '{' 19, "scale:" 20-25,
     * '{' 27, encod at 28 */
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {encod: 0.5}}\n",
                 "9:28: degradation.reduce_quality.scale.encod: ",
                 "unknown stage \"encod\"; did you mean 'encode'?");
}

Test(scenario, degradation_scale_unknown_stage_lists_stages)
{
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {vision: 0.5}}\n",
                 "9:28: degradation.reduce_quality.scale.vision: ",
                 "unknown stage \"vision\"; stages: encode, llm_decode");
}

Test(scenario, degradation_scale_zero)
{
    /* ... encode 28-33, ": " 34-35, the value at 36 */
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {encode: 0}}\n",
                 "9:36: degradation.reduce_quality.scale.encode: ", "must be > 0, got 0");
}

Test(scenario, degradation_scale_empty)
{
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {}}\n",
                 "9:27: degradation.reduce_quality.scale: ", "must name at least one stage");
}

Test(scenario, degradation_scale_stage_twice)
{
    /* ... "encode: 0.5" 28-38, ", " 39-40, the second encode at 41 */
    expect_error(DEG_HEAD "  modes: [reduce_quality]\n  p99_target_ms: 100\n"
                 "  reduce_quality: {scale: {encode: 0.5, encode: 0.7}}\n",
                 "9:41: degradation.reduce_quality.scale.encode: ",
                 "duplicate key (first given at line 9)");
}

Test(scenario, degradation_scale_stage_written_later)
{
    /* the stages come after the degradation block that names them */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 15}\n"
                 "degradation:\n"
                 "  modes: [reduce_quality]\n"
                 "  p99_target_ms: 100\n"
                 "  reduce_quality:\n"
                 "    scale:\n"
                 "      encode: 0.5\n"
                 "      llm_prefil: 0.5\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - {name: llm_prefill, service: {dist: constant, ms: 1}}\n",
                 "9:7: degradation.reduce_quality.scale.llm_prefil: ",
                 "did you mean 'llm_prefill'?");
}

/* -- alerts -- */

/* One stage, then alerts: its first key on line 5 ("  key: value"). */
#define ALERTS_HEAD                                                    \
    "duration_s: 10\n"                                                 \
    "workload: {arrival: poisson, rate_hz: 1}\n"                       \
    "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"          \
    "alerts:\n"

Test(scenario, alerts_zero_window)
{
    expect_error(ALERTS_HEAD "  window_s: 0\n",
                 "5:13: alerts.window_s: ", "must be > 0, got 0");
}

Test(scenario, alerts_negative_sla_factor)
{
    /* "  p99_sla_factor: -1": the key 3-16, ": " 17-18, the value at 19 */
    expect_error(ALERTS_HEAD "  p99_sla_factor: -1\n",
                 "5:19: alerts.p99_sla_factor: ", "must be > 0, got -1");
}

Test(scenario, alerts_drop_rate_above_one)
{
    expect_error(ALERTS_HEAD "  window_s: 60\n  drop_rate: 1.5\n",
                 "6:14: alerts.drop_rate: ", "must be <= 1, got 1.5");
}

Test(scenario, alerts_negative_gpu_util)
{
    expect_error(ALERTS_HEAD "  gpu_util_below: -0.2\n",
                 "5:19: alerts.gpu_util_below: ", "must be >= 0, got -0.2");
}

Test(scenario, alerts_zero_gpu_util_duration)
{
    expect_error(ALERTS_HEAD "  gpu_util_for_s: 0\n",
                 "5:19: alerts.gpu_util_for_s: ", "must be > 0, got 0");
}

Test(scenario, alerts_zero_ratio)
{
    /* "  p99_p95_ratio: 0": the key 3-15, ": " 16-17, the value at 18 */
    expect_error(ALERTS_HEAD "  p99_p95_ratio: 0\n",
                 "5:18: alerts.p99_p95_ratio: ", "must be > 0, got 0");
}

Test(scenario, alerts_key_typo)
{
    expect_error(ALERTS_HEAD "  drop_rat: 0.1\n",
                 "5:3: alerts.drop_rat: ", "unknown key; did you mean 'drop_rate'?");
}

Test(scenario, alerts_not_a_mapping)
{
    /* "alerts: on": the value at 9 */
    expect_error("duration_s: 10\n"
                 "workload: {arrival: poisson, rate_hz: 1}\n"
                 "stages: [{name: a, service: {dist: constant, ms: 1}}]\n"
                 "alerts: on\n",
                 "4:9: alerts: ", "expected a mapping such as {window_s: 60");
}

/* ---- workload.surge ------------------------------------------------------ */

#define SURGE(s)                                                        \
    "name: t\n"                                                         \
    "duration_s: 10\n"                                                  \
    "workload:\n"                                                       \
    "  arrival: periodic\n"                                             \
    "  streams: 2\n"                                                    \
    "  fps: 10\n"                                                       \
    "  surge: " s "\n"                                                  \
    "stages:\n"                                                         \
    "  - name: a\n"                                                     \
    "    service: {dist: constant, ms: 1}\n"

Test(scenario, surge_loads)
{
    scenario_cfg c;
    expect_ok(SURGE("{at_s: 300, for_s: 120, streams: 8}"), &c);
    cr_expect_eq(c.workload.surge_streams, 8);
    cr_expect_float_eq(c.workload.surge_at_s, 300, 1e-12);
    cr_expect_float_eq(c.workload.surge_for_s, 120, 1e-12);
    cfg_free(&c);
}

/* "  surge: " is 9 characters: the mapping opens at column 10; in the
 * poisson case the key "surge" stands at column 42. */
Test(scenario, surge_rejects_bad_values)
{
    expect_error(SURGE("{at_s: 3, for_s: 0, streams: 2}"), "7:27: workload.surge.for_s:", "> 0");
    expect_error(SURGE("{at_s: 3, for_s: 5, streams: 0}"), "7:39: workload.surge.streams:", ">= 1");
    expect_error(SURGE("{at_s: 3, for_s: 5, streamz: 2}"), "7:30: workload.surge.streamz:",
                 "did you mean 'streams'");
    expect_error(SURGE("{at_s: 3, streams: 2}"), "7:10: workload.surge:", "for_s");
    expect_error("name: t\nduration_s: 10\nworkload: {arrival: poisson, rate_hz: 1, surge: {at_s: 1, for_s: 1, streams: 1}}\n"
                 "stages:\n  - name: a\n    service: {dist: constant, ms: 1}\n",
                 "3:42: workload.surge:", "applies only to arrival: periodic");
}

/* ---- tokens and the scene-change sampler --------------------------------- */

/* Every new key, with the workload written after the stages (the scene
 * sampler's check and the token tables' need resolve once all is loaded):
 * tokens on workers (encode), GPU (reduce) and response (llm_decode)
 * stages, a token table that starts at 64 tokens, has a fractional point and
 * a max_batch beyond its last point, and one on the response path fed by the
 * decode stage's keep_tokens. */
Test(scenario, tokens_and_scene_change_load)
{
    static const char yaml[] =
        "name: tokens\n"
        "duration_s: 60\n"
        "cluster: {gpus: 2}\n"
        "stages:\n"
        "  - name: capture\n"
        "    service: {dist: constant, ms: 1}\n"
        "  - name: sample\n"
        "    service: {dist: constant, ms: 0.5}\n"
        "    keep: {ratio: 0.2, scene_change: {per_min: 2, burst: 15}}\n"
        "  - name: encode\n"
        "    servers: 4\n"
        "    tokens_per_frame: 729\n"
        "    service: {dist: constant, ms: 10}\n"
        "  - name: reduce\n"
        "    on: gpu\n"
        "    keep_tokens: 64\n"
        "    max_batch: 8\n"
        "    service: {table: [{batch: 1, ms: 2}, {batch: 8, ms: 5}]}\n"
        "  - name: llm_prefill\n"
        "    on: gpu\n"
        "    max_batch: 32\n"
        "    batch_timeout_ms: 2\n"
        "    service:\n"
        "      table: [{tokens: 64, ms: 7.0}, {tokens: 512, ms: 18.0}, {tokens: 1000.5, ms: 30}]\n"
        "      jitter: {dist: gamma, cv: 0.05}\n"
        "  - name: llm_decode\n"
        "    on: gpu\n"
        "    response_tokens: 12\n"
        "    keep_tokens: 16\n"
        "    service: {table: [{batch: 1, ms: 20}, {batch: 4, ms: 24}]}\n"
        "  - name: speak\n"
        "    path: response\n"
        "    on: gpu\n"
        "    service: {table: [{tokens: 8, ms: 1}, {tokens: 32, ms: 2}]}\n"
        "workload: {arrival: periodic, streams: 4, fps: 15, queries_per_min: 1}\n";
    scenario_cfg c;
    expect_ok(yaml, &c);
    cr_assert_eq(c.nstages, 7);
    const stage_cfg *cap = &c.stages[0], *smp = &c.stages[1], *enc = &c.stages[2];
    const stage_cfg *red = &c.stages[3], *pre = &c.stages[4], *dec = &c.stages[5];
    const stage_cfg *spk = &c.stages[6];

    cr_expect_eq(cap->tokens_out, 0);                /* default: tokens unchanged */
    cr_expect_eq(cap->keep, KEEP_ALL);
    cr_expect_float_eq(cap->scene_per_min, 0, 1e-12);

    cr_expect_eq(smp->keep, KEEP_RATIO);
    cr_expect_float_eq(smp->keep_ratio, 0.2, 1e-12);
    cr_expect_float_eq(smp->scene_per_min, 2, 1e-12);
    cr_expect_eq(smp->scene_burst, 15);
    cr_expect_eq(smp->tokens_out, 0);

    cr_expect_eq(enc->on, RES_WORKERS);
    cr_expect_eq(enc->tokens_out, 729);              /* tokens_per_frame */

    cr_expect_eq(red->on, RES_GPU);
    cr_expect_eq(red->tokens_out, 64);               /* keep_tokens */
    cr_assert(red->has_table);
    cr_expect(!red->table.by_tokens);
    cr_expect_eq(red->max_batch, 8);

    cr_expect_eq(pre->tokens_out, 0);
    cr_assert(pre->has_table);
    cr_expect(pre->table.by_tokens);
    cr_assert_eq(pre->table.n, 3);
    static const double px[] = {64, 512, 1000.5}, pms[] = {7, 18, 30};
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(pre->table.batch[i], px[i], 1e-12);
        cr_expect_float_eq(pre->table.ms[i], pms[i], 1e-12);
    }
    cr_expect_eq(pre->max_batch, 32);                /* beyond 1000.5 "batch": no rule */
    cr_expect_float_eq(pre->batch_timeout_ms, 2, 1e-12);
    cr_assert(pre->has_jitter);
    cr_expect_float_eq(dist_mean(&pre->jitter), 1, 1e-9);

    cr_expect_eq(dec->path, PATH_RESPONSE);
    cr_expect_eq(dec->response_tokens, 12);
    cr_expect_eq(dec->tokens_out, 16);
    cr_expect(dec->has_table && !dec->table.by_tokens);

    cr_expect_eq(spk->path, PATH_RESPONSE);
    cr_assert(spk->has_table);
    cr_expect(spk->table.by_tokens);
    cr_expect_float_eq(spk->table.batch[0], 8, 1e-12);
    cr_expect_float_eq(spk->table.ms[1], 2, 1e-12);

    cr_expect_eq(c.workload.arrival, ARRIVAL_PERIODIC);
    cfg_free(&c);
}

/* -- tokens_per_frame, keep_tokens -- */

Test(scenario, tokens_per_frame_and_keep_tokens)
{
    /* "    keep_tokens: 64": the key 5-15, ": " 16-17, the value at 18 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    tokens_per_frame: 729\n"
                 "    keep_tokens: 64\n",
                 "8:18: stages[0].keep_tokens: ",
                 "give either tokens_per_frame or keep_tokens, not both (they are synonyms)");
}

Test(scenario, keep_tokens_written_first_and_tokens_per_frame)
{
    /* the later of the two is named: "    tokens_per_frame: 729", value at 23 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep_tokens: 64\n"
                 "    tokens_per_frame: 729\n",
                 "8:23: stages[0].tokens_per_frame: ", "give either tokens_per_frame or keep_tokens");
}

Test(scenario, zero_tokens_per_frame)
{
    /* "    tokens_per_frame: 0": the key 5-20, ": " 21-22, the value at 23 */
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    tokens_per_frame: 0\n",
                 "7:23: stages[0].tokens_per_frame: ", "must be >= 1, got 0");
}

Test(scenario, fractional_keep_tokens)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep_tokens: 64.5\n",
                 "7:18: stages[0].keep_tokens: ", "expected an integer, got 64.5");
}

Test(scenario, keep_tokens_typo)
{
    expect_error(WITH_SERVICE("{dist: constant, ms: 1}")
                 "    keep_token: 64\n",
                 "7:5: stages[0].keep_token: ", "did you mean 'keep_tokens'?");
}

/* -- tables by tokens -- */

/* encode sets 729 tokens; llm_prefill (stages[1]) is on the GPU and its
 * service goes on line 8: "    service: {table: [" puts the list's '[' at
 * column 22 and the first point's '{' at 23. */
#define TOKEN_HEAD                                                                  \
    "duration_s: 10\n"                                                              \
    "workload: {arrival: periodic, streams: 2, fps: 10}\n"                          \
    "cluster: {gpus: 1}\n"                                                          \
    "stages:\n"                                                                     \
    "  - {name: encode, tokens_per_frame: 729, service: {dist: constant, ms: 1}}\n" \
    "  - name: llm_prefill\n"                                                       \
    "    on: gpu\n"

Test(scenario, token_table_loads_with_head)
{
    scenario_cfg c;
    expect_ok(TOKEN_HEAD "    max_batch: 64\n"
              "    service: {table: [{tokens: 64, ms: 7}, {tokens: 512, ms: 18}]}\n", &c);
    cr_expect(c.stages[1].table.by_tokens);
    cr_expect_eq(c.stages[1].max_batch, 64);
    /* the loaded table, read as config.c reads it: 640 tokens on the
     * extended line 7 + 11 x 576 / 448 */
    cr_expect_float_eq(cfg_table_ms(&c.stages[1].table, 640), 7 + 11.0 * 576 / 448, 1e-12);
    cr_expect_float_eq(cfg_table_ms(&c.stages[1].table, 32), 7, 1e-12);
    cfg_free(&c);
}

Test(scenario, token_table_batch_after_tokens)
{
    /* point 0 "{tokens: 64, ms: 7}" is 19 characters, 23-41; ", " 42-43 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 64, ms: 7}, {batch: 2, ms: 8}]}\n",
                 "8:44: stages[1].service.table[1]: ",
                 "gives batch, but the table's first point gives tokens; all points of a "
                 "table must use the same key");
}

Test(scenario, token_table_tokens_after_batch)
{
    /* point 0 "{batch: 1, ms: 7}" is 17 characters, 23-39; ", " 40-41 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{batch: 1, ms: 7}, {tokens: 64, ms: 8}]}\n",
                 "8:42: stages[1].service.table[1]: ",
                 "gives tokens, but the table's first point gives batch");
}

Test(scenario, token_table_point_with_batch_and_tokens)
{
    /* '{' 23, "tokens" 24-29, ": " 30-31, "64" 32-33, ", " 34-35, "batch" 36-40,
     * ": " 41-42, the value at 43 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 64, batch: 1, ms: 7}]}\n",
                 "8:43: stages[1].service.table[0].batch: ",
                 "give either batch or tokens, not both");
}

Test(scenario, token_table_point_without_x)
{
    expect_error(TOKEN_HEAD
                 "    service: {table: [{ms: 7}]}\n",
                 "8:23: stages[1].service.table[0]: ",
                 "missing required key 'batch' (or 'tokens'");
}

Test(scenario, token_table_key_typo)
{
    expect_error(TOKEN_HEAD
                 "    service: {table: [{token: 64, ms: 7}]}\n",
                 "8:24: stages[1].service.table[0].token: ", "did you mean 'tokens'?");
}

Test(scenario, token_table_not_ascending)
{
    /* point 0 "{tokens: 512, ms: 7}" is 20 characters, 23-42; ", " 43-44; point 1:
     * '{' 45, "tokens" 46-51, ": " 52-53, the value at 54 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 512, ms: 7}, {tokens: 64, ms: 18}]}\n",
                 "8:54: stages[1].service.table[1].tokens: ",
                 "token counts must be strictly ascending, got 64 after 512");
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 512, ms: 7}, {tokens: 512, ms: 18}]}\n",
                 "8:54: stages[1].service.table[1].tokens: ",
                 "strictly ascending, got 512 after 512");
}

Test(scenario, token_table_zero_tokens)
{
    /* '{' 23, "tokens" 24-29, ": " 30-31, the value at 32 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 0, ms: 7}]}\n",
                 "8:32: stages[1].service.table[0].tokens: ", "must be > 0, got 0");
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: -64, ms: 7}]}\n",
                 "8:32: stages[1].service.table[0].tokens: ", "must be > 0, got -64");
}

Test(scenario, token_table_time_decreases)
{
    /* point 1 '{' 44, "tokens" 45-50, ": " 51-52, "512" 53-55, ", " 56-57,
     * "ms" 58-59, ": " 60-61, the value at 62 */
    expect_error(TOKEN_HEAD
                 "    service: {table: [{tokens: 64, ms: 7}, {tokens: 512, ms: 6.5}]}\n",
                 "8:62: stages[1].service.table[1].ms: ",
                 "must not decrease as the tokens grow, got 6.5 after 7");
}

/* No earlier stage sets tokens: the table's own stage (tokens leave it, they
 * do not enter it) and a later stage do not count. */
Test(scenario, token_table_without_tokens)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 10}\n"
                 "cluster: {gpus: 1}\n"
                 "stages:\n"
                 "  - {name: encode, service: {dist: constant, ms: 1}}\n"
                 "  - name: llm_prefill\n"
                 "    on: gpu\n"
                 "    tokens_per_frame: 64\n"
                 "    service: {table: [{tokens: 64, ms: 7}]}\n"
                 "  - {name: post, keep_tokens: 32, service: {dist: constant, ms: 1}}\n",
                 "9:22: stages[1].service.table: ",
                 "a table by tokens needs tokens: set tokens_per_frame or keep_tokens on an "
                 "earlier stage");
}

/* Tokens set on the response path do not reach the frame path. */
Test(scenario, token_table_tokens_on_other_path)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 10}\n"
                 "cluster: {gpus: 1}\n"
                 "stages:\n"
                 "  - {name: ask, path: response, keep_tokens: 64, service: {dist: constant, ms: 1}}\n"
                 "  - name: llm_prefill\n"
                 "    on: gpu\n"
                 "    service: {table: [{tokens: 64, ms: 7}]}\n",
                 "8:22: stages[1].service.table: ", "a table by tokens needs tokens");
}

Test(scenario, token_table_on_decode_stage)
{
    expect_error("duration_s: 10\n"
                 "workload: {arrival: periodic, streams: 2, fps: 10}\n"
                 "cluster: {gpus: 1}\n"
                 "stages:\n"
                 "  - {name: encode, tokens_per_frame: 729, service: {dist: constant, ms: 1}}\n"
                 "  - name: llm_decode\n"
                 "    on: gpu\n"
                 "    service: {table: [{tokens: 64, ms: 7}]}\n"
                 "    response_tokens: 12\n",
                 "8:22: stages[1].service.table: ",
                 "a decode stage (response_tokens) takes a table by batch");
}

/* -- keep.scene_change -- */

/* A periodic workload and one stage "sample"; its keep goes on line 6:
 * "    keep: {" puts the mapping's '{' at column 11 and its first key at 12. */
#define SCENE_STAGE                                        \
    "duration_s: 10\n"                                     \
    "workload: {arrival: periodic, streams: 2, fps: 10}\n" \
    "stages:\n"                                            \
    "  - name: sample\n"                                   \
    "    service: {dist: constant, ms: 1}\n"

Test(scenario, scene_change_with_every)
{
    /* "every" 12-16, ": " 17-18, "2" 19, ", " 20-21, "scene_change" at 22 */
    expect_error(SCENE_STAGE
                 "    keep: {every: 2, scene_change: {per_min: 2, burst: 15}}\n",
                 "6:22: stages[0].keep.scene_change: ",
                 "applies only with ratio (frames kept at random), not with every");
}

Test(scenario, scene_change_without_ratio)
{
    expect_error(SCENE_STAGE
                 "    keep: {scene_change: {per_min: 2, burst: 15}}\n",
                 "6:12: stages[0].keep.scene_change: ", "needs ratio");
}

/* "    keep: {ratio: 0.2, scene_change: {": "ratio" 12-16, ": " 17-18, "0.2"
 * 19-21, ", " 22-23, "scene_change" 24-35, ": " 36-37, '{' 38, "per_min"
 * 39-45, ": " 46-47, its value at 48; then "2, " 48-50, "burst" 51-55, ": "
 * 56-57, its value at 58. */
Test(scenario, scene_change_zero_per_min)
{
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: {per_min: 0, burst: 15}}\n",
                 "6:48: stages[0].keep.scene_change.per_min: ", "must be > 0, got 0");
}

Test(scenario, scene_change_bad_burst)
{
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: {per_min: 2, burst: 0}}\n",
                 "6:58: stages[0].keep.scene_change.burst: ", "must be >= 1, got 0");
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: {per_min: 2, burst: 1.5}}\n",
                 "6:58: stages[0].keep.scene_change.burst: ", "expected an integer, got 1.5");
}

Test(scenario, scene_change_missing_burst)
{
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: {per_min: 2}}\n",
                 "6:38: stages[0].keep.scene_change: ", "missing required key 'burst'");
}

Test(scenario, scene_change_key_typo)
{
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: {per_minute: 2, burst: 15}}\n",
                 "6:39: stages[0].keep.scene_change.per_minute: ", "did you mean 'per_min'?");
}

Test(scenario, scene_change_not_a_mapping)
{
    expect_error(SCENE_STAGE
                 "    keep: {ratio: 0.2, scene_change: 2}\n",
                 "6:38: stages[0].keep.scene_change: ", "expected a mapping such as {per_min: 2");
}

/* The workload, written after the stages, is poisson: the error is on the
 * stage's scene_change key ("    keep: {ratio: 0.2, " puts it at 24). */
Test(scenario, scene_change_with_poisson_written_later)
{
    expect_error("duration_s: 10\n"
                 "stages:\n"
                 "  - name: sample\n"
                 "    service: {dist: constant, ms: 1}\n"
                 "    keep: {ratio: 0.2, scene_change: {per_min: 2, burst: 15}}\n"
                 "workload: {arrival: poisson, rate_hz: 10}\n",
                 "5:24: stages[0].keep.scene_change: ", "need a periodic workload");
}

/* ---- overrides (scn_load_ex) -------------------------------------------- */

/* scn_load_ex on yaml, through a pipe, since these tests write no files; a
 * message that names the file says /dev/fd/N. */
static int load_ex(const char *yaml, const scn_override *ov, size_t nov, scenario_cfg *c,
                   char *err, size_t errlen)
{
    int fd[2];
    size_t len = strlen(yaml);
    cr_assert_lt(len, (size_t)4096, "keep test scenarios within one pipe buffer");
    cr_assert_eq(pipe(fd), 0);
    cr_assert_eq(write(fd[1], yaml, len), (ssize_t)len);
    close(fd[1]);
    char path[32];
    snprintf(path, sizeof path, "/dev/fd/%d", fd[0]);
    int rc = scn_load_ex(path, ov, nov, c, err, errlen);
    close(fd[0]);
    return rc;
}

static void expect_ex_ok(const char *yaml, const scn_override *ov, size_t nov, scenario_cfg *c)
{
    char err[512];
    int rc = load_ex(yaml, ov, nov, c, err, sizeof err);
    cr_assert_eq(rc, 0, "rejected: %s\n%s", err, yaml);
}

/* yaml with the one override key=value must fail with exactly msg, leave
 * the config all zero and nothing allocated (ASan). */
static void expect_ex_error(const char *yaml, const char *key, const char *value, const char *msg)
{
    static const scenario_cfg zero;
    scn_override ov = {key, value};
    scenario_cfg c;
    char err[512];
    memset(&c, 0xab, sizeof c);
    int rc = load_ex(yaml, &ov, 1, &c, err, sizeof err);
    cr_assert_eq(rc, -1, "accepted %s=%s", key, value);
    cr_expect_str_eq(err, msg);
    cr_expect(memcmp(&c, &zero, sizeof c) == 0, "config not zeroed after an error");
}

/* text with the first occurrence of old (which must be there) replaced by
 * new; malloc'd. */
static char *edit(const char *text, const char *old, const char *new_text)
{
    const char *at = strstr(text, old);
    cr_assert_not_null(at, "'%s' not found in:\n%s", old, text);
    size_t pre = (size_t)(at - text), lo = strlen(old), ln = strlen(new_text);
    char *out = malloc(strlen(text) - lo + ln + 1);
    cr_assert_not_null(out);
    memcpy(out, text, pre);
    memcpy(out + pre, new_text, ln);
    strcpy(out + pre + ln, at + lo);
    return out;
}

static bool same_dist(const dist_t *a, const dist_t *b)
{
    if (a->kind != b->kind || a->p0 != b->p0 || a->p1 != b->p1 || a->nvalues != b->nvalues
        || a->nparts != b->nparts)
        return false;
    for (size_t i = 0; i < a->nvalues; i++)
        if (a->values[i] != b->values[i])
            return false;
    for (size_t i = 0; i < a->nparts; i++)
        if (a->weights[i] != b->weights[i] || !same_dist(&a->parts[i], &b->parts[i]))
            return false;
    return true;
}

/* Field by field (structs may differ in padding). */
#define SAME(f) cr_expect(a->f == b->f, "%s differs", #f)
#define SAME_MEM(f) cr_expect(memcmp(&a->f, &b->f, sizeof a->f) == 0, "%s differs", #f)
static void expect_same_stage(const stage_cfg *a, const stage_cfg *b)
{
    cr_expect_str_eq(a->name, b->name);
    SAME(path); SAME(on); SAME(servers); SAME(capacity); SAME(on_full); SAME(timeout_ms);
    SAME(max_batch); SAME(batch_timeout_ms); SAME(has_table); SAME(has_jitter);
    SAME(response_tokens); SAME(priority); SAME(budget_ms);
    SAME(table.n); SAME(table.by_tokens); SAME_MEM(table.batch); SAME_MEM(table.ms);
    SAME(retransmit.loss); SAME(retransmit.rtt_ms); SAME(retransmit.max_retries);
    SAME(gop.length); SAME(gop.i_factor); SAME(gop.b_frames); SAME(gop.reorder_ms);
    SAME(cache_miss.prob); SAME(cache_miss.ms_per_token); SAME(cache_miss.context_tokens);
    SAME(keep); SAME(keep_ratio); SAME(keep_every); SAME(scene_per_min); SAME(scene_burst);
    SAME(tokens_out);
    cr_expect(same_dist(&a->service, &b->service), "%s.service differs", a->name);
    cr_expect(same_dist(&a->jitter, &b->jitter), "%s.jitter differs", a->name);
}

static void expect_same_cfg(const scenario_cfg *a, const scenario_cfg *b)
{
    cr_expect_str_eq(a->name, b->name);
    SAME(seed); SAME(duration_s); SAME(warmup_s); SAME(warmup_auto); SAME(replications);
    SAME(workload.arrival); SAME(workload.queries_per_min); SAME(workload.proactive_per_min);
    SAME(workload.rate_hz); SAME(workload.streams); SAME(workload.fps);
    SAME(workload.jitter_ms); SAME(workload.phase); SAME(workload.surge_streams);
    SAME(workload.surge_at_s); SAME(workload.surge_for_s);
    SAME(nbuckets); SAME_MEM(buckets_ms);
    SAME(cluster.gpus); SAME(cluster.gpu_hour_usd); SAME(cluster.placement);
    SAME(cluster.policy); SAME(cluster.npools);
    cr_expect_str_eq(a->cluster.gpu_type, b->cluster.gpu_type);
    for (int i = 0; i < a->cluster.npools && i < b->cluster.npools; i++) {
        cr_expect_str_eq(a->cluster.pools[i].name, b->cluster.pools[i].name);
        SAME(cluster.pools[i].first); SAME(cluster.pools[i].gpus); SAME(cluster.pools[i].stage_mask);
    }
    SAME(frame_deadline_ms); SAME(nsla);
    for (int i = 0; i < a->nsla && i < b->nsla; i++) {
        cr_expect_str_eq(a->sla[i].metric, b->sla[i].metric);
        SAME(sla[i].percentile); SAME(sla[i].ms);
    }
    SAME(degrade.nmodes); SAME_MEM(degrade.modes); SAME(degrade.interval_s);
    SAME(degrade.window_s); SAME(degrade.p99_target_ms); SAME(degrade.high_water);
    SAME(degrade.low_water); SAME(degrade.deescalate); SAME(degrade.cooldown_s);
    SAME(degrade.fps); SAME_MEM(degrade.quality_scale);
    SAME(alerts.window_s); SAME(alerts.p99_sla_factor); SAME(alerts.drop_rate);
    SAME(alerts.gpu_util_below); SAME(alerts.gpu_util_for_s); SAME(alerts.p99_p95_ratio);
    SAME(naxes);
    for (int i = 0; i < a->naxes && i < b->naxes; i++) {
        cr_expect_str_eq(a->axes[i].key, b->axes[i].key);
        SAME(axes[i].nvalues);
        for (int j = 0; j < a->axes[i].nvalues && j < b->axes[i].nvalues; j++)
            cr_expect_str_eq(a->axes[i].values[j], b->axes[i].values[j]);
    }
    SAME(nstages);
    for (int s = 0; s < a->nstages && s < b->nstages; s++)
        expect_same_stage(&a->stages[s], &b->stages[s]);
}
#undef SAME
#undef SAME_MEM

/* Two stages: capture (stages[0]) and encode (stages[1], on the GPUs). */
#define OV_BASE                                                        \
    "name: ov\n"                                                       \
    "duration_s: 10\n"                                                 \
    "workload: {arrival: periodic, streams: 4, fps: 15}\n"             \
    "cluster: {gpus: 2}\n"                                             \
    "stages:\n"                                                        \
    "  - name: capture\n"                                              \
    "    servers: 2\n"                                                 \
    "    service: {dist: constant, ms: 1}\n"                           \
    "  - name: encode\n"                                               \
    "    on: gpu\n"                                                    \
    "    max_batch: 4\n"                                               \
    "    service: {table: [{batch: 1, ms: 5}, {batch: 8, ms: 12}]}\n"  \
    "degradation:\n"                                                   \
    "  modes: [reduce_fps]\n"                                          \
    "  p99_target_ms: 100\n"                                           \
    "  reduce_fps: {fps: 10}\n"

Test(scenario, override_existing_scalars)
{
    const scn_override ov[] = {
        {"workload.streams", "8"},
        {"cluster.gpus", "3"},
        {"stages.encode.max_batch", "8"},
        {"stages[0].servers", "5"},
        {"degradation.reduce_fps.fps", "5"},
        {"duration_s", "20"},
        {"name", "renamed"},
    };
    scenario_cfg c;
    expect_ex_ok(OV_BASE, ov, sizeof ov / sizeof ov[0], &c);
    cr_expect_eq(c.workload.streams, 8);
    cr_expect_eq(c.cluster.gpus, 3);
    cr_expect_eq(c.stages[1].max_batch, 8);
    cr_expect_eq(c.stages[0].servers, 5);
    cr_expect_eq(c.degrade.fps, 5);
    cr_expect_eq(c.duration_s, 20);
    cr_expect_str_eq(c.name, "renamed");
    cr_expect_eq(c.workload.fps, 15);            /* the rest as written */
    cr_expect_eq(c.stages[1].table.n, 2);
    cfg_free(&c);
}

Test(scenario, override_by_stage_index)
{
    const scn_override ov[] = {{"stages[1].max_batch", "2"}, {"stages[0].name", "grab"}};
    scenario_cfg c;
    expect_ex_ok(OV_BASE, ov, 2, &c);
    cr_expect_eq(c.stages[1].max_batch, 2);
    cr_expect_str_eq(c.stages[0].name, "grab");
    cfg_free(&c);
}

Test(scenario, override_short_names)
{
    const scn_override ov[] = {{"fps", "30"}, {"streams", "16"}, {"gpus", "4"}};
    const scn_override full[] = {
        {"workload.fps", "30"}, {"workload.streams", "16"}, {"cluster.gpus", "4"}};
    scenario_cfg c, d;
    expect_ex_ok(OV_BASE, ov, 3, &c);
    cr_expect_eq(c.workload.fps, 30);
    cr_expect_eq(c.workload.streams, 16);
    cr_expect_eq(c.cluster.gpus, 4);
    expect_ex_ok(OV_BASE, full, 3, &d);
    expect_same_cfg(&c, &d);
    cfg_free(&c);
    cfg_free(&d);
}

/* Missing keys are added: into a flow mapping (workload), a block mapping
 * (a stage), at the root, and with their parent mappings (alerts, queue). */
Test(scenario, override_adds_missing_keys)
{
    const scn_override ov[] = {
        {"workload.jitter_ms", "2.5"},
        {"stages.encode.batch_timeout_ms", "3"},
        {"seed", "42"},
        {"replications", "2"},
        {"alerts.window_s", "30"},
        {"stages.capture.queue.capacity", "8"},
    };
    scenario_cfg c;
    expect_ex_ok(OV_BASE, ov, sizeof ov / sizeof ov[0], &c);
    cr_expect_eq(c.workload.jitter_ms, 2.5);
    cr_expect_eq(c.stages[1].batch_timeout_ms, 3);
    cr_expect_eq(c.seed, 42);
    cr_expect_eq(c.replications, 2);
    cr_expect_eq(c.alerts.window_s, 30);
    cr_expect_eq(c.stages[0].capacity, 8);
    cr_expect_eq(c.alerts.drop_rate, 0.01);      /* the other alert defaults stay */
    cfg_free(&c);
}

Test(scenario, override_later_wins)
{
    const scn_override ov[] = {{"streams", "8"}, {"workload.streams", "16"}};
    scenario_cfg c;
    expect_ex_ok(OV_BASE, ov, 2, &c);
    cr_expect_eq(c.workload.streams, 16);
    cfg_free(&c);
}

/* A value written quoted in the file is a string there; its override is a
 * plain scalar, read as a number. */
Test(scenario, override_value_is_plain)
{
    const scn_override ov = {"workload.streams", "16"};
    scenario_cfg c;
    char *yaml = edit(OV_BASE, "streams: 4", "streams: \"4\"");
    expect_ex_ok(yaml, &ov, 1, &c);
    cr_expect_eq(c.workload.streams, 16);
    cfg_free(&c);
    free(yaml);
}

/* The scenario with an override equals the scenario written with that
 * value in the file. */
Test(scenario, override_equals_written)
{
    static const struct {
        const char *key, *value, *old, *new_text;
    } cases[] = {
        {"streams", "8", "streams: 4", "streams: 8"},
        {"workload.fps", "12.5", "fps: 15", "fps: 12.5"},
        {"gpus", "3", "gpus: 2", "gpus: 3"},
        {"stages.encode.max_batch", "8", "max_batch: 4", "max_batch: 8"},
        {"stages[0].servers", "7", "servers: 2", "servers: 7"},
        {"degradation.reduce_fps.fps", "7.5", "{fps: 10}", "{fps: 7.5}"},
        {"workload.jitter_ms", "2", "fps: 15}", "fps: 15, jitter_ms: 2}"},
        {"stages.encode.batch_timeout_ms", "3", "    max_batch: 4\n",
         "    max_batch: 4\n    batch_timeout_ms: 3\n"},
        {"alerts.window_s", "30", "name: ov\n", "name: ov\nalerts: {window_s: 30}\n"},
        {"seed", "99", "name: ov\n", "name: ov\nseed: 99\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scn_override ov = {cases[i].key, cases[i].value};
        char *yaml = edit(OV_BASE, cases[i].old, cases[i].new_text);
        scenario_cfg a, b;
        expect_ex_ok(OV_BASE, &ov, 1, &a);
        expect_ok(yaml, &b);
        expect_same_cfg(&a, &b);
        cfg_free(&a);
        cfg_free(&b);
        free(yaml);
    }
}

/* The same on the shipped default scenario, read from its file. */
Test(scenario, override_equals_written_default)
{
    static const struct {
        const char *key, *value, *anchor, *old, *new_text;
    } cases[] = {
        {"streams", "16", "workload:", "streams: 32", "streams: 16"},
        {"stages.encode.max_batch", "4", "- name: encode", "max_batch: 8", "max_batch: 4"},
        {"stages.reduce.batch_timeout_ms", "2", "- name: reduce", "    on: gpu\n",
         "    on: gpu\n    batch_timeout_ms: 2\n"},
    };
    FILE *f = fopen("scenarios/default.yaml", "rb");
    if (!f)
        return;
    char *text = calloc(1, 1 << 20);
    cr_assert_not_null(text);
    size_t len = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    cr_assert_gt(len, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* edit the first `old` after the anchor */
        char *at = strstr(text, cases[i].anchor);
        cr_assert_not_null(at, "default.yaml has no '%s'", cases[i].anchor);
        char *tail = edit(at, cases[i].old, cases[i].new_text);
        size_t pre = (size_t)(at - text);
        char *yaml = malloc(pre + strlen(tail) + 1);
        cr_assert_not_null(yaml);
        memcpy(yaml, text, pre);
        strcpy(yaml + pre, tail);

        scn_override ov = {cases[i].key, cases[i].value};
        scenario_cfg a, b;
        char err[512];
        cr_assert_eq(scn_load_ex("scenarios/default.yaml", &ov, 1, &a, err, sizeof err), 0,
                     "%s", err);
        cr_assert_eq(scn_load_string(yaml, strlen(yaml), "default.yaml", "scenarios", &b, err,
                                     sizeof err), 0, "%s", err);
        expect_same_cfg(&a, &b);
        cfg_free(&a);
        cfg_free(&b);
        free(yaml);
        free(tail);
    }
    free(text);
}

/* No overrides: scn_load_ex is scn_load. */
Test(scenario, override_none_is_load)
{
    scenario_cfg a, b;
    char err[512];
    cr_assert_eq(scn_load_ex(DATA "/empirical.yaml", NULL, 0, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scn_load(DATA "/empirical.yaml", &b, err, sizeof err), 0, "%s", err);
    expect_same_cfg(&a, &b);
    cfg_free(&a);
    cfg_free(&b);
}

/* Relative sample files still resolve against the scenario's directory. */
Test(scenario, override_file_keeps_basedir)
{
    const scn_override ov = {"workload.rate_hz", "20"};
    scenario_cfg c;
    char err[512];
    cr_assert_eq(scn_load_ex(DATA "/empirical.yaml", &ov, 1, &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.workload.rate_hz, 20);
    cr_expect_eq(c.stages[0].service.kind, DIST_EMPIRICAL);
    cfg_free(&c);
}

/* Root keys apply to any scenario: every shipped one loads with them. */
Test(scenario, override_shipped_scenarios)
{
    const scn_override ov[] = {{"seed", "123"}, {"replications", "2"}, {"duration_s", "5"}};
    glob_t g;
    int rc = glob("scenarios/*.yaml", 0, NULL, &g);
    if (rc == GLOB_NOMATCH)
        return;
    cr_assert_eq(rc, 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        scenario_cfg c;
        char err[512];
        cr_expect_eq(scn_load_ex(g.gl_pathv[i], ov, 3, &c, err, sizeof err), 0, "%s", err);
        cr_expect_eq(c.seed, 123);
        cr_expect_eq(c.replications, 2);
        cr_expect_eq(c.duration_s, 5);
        cfg_free(&c);
    }
    globfree(&g);
}

Test(scenario, override_value_errors)
{
    expect_ex_error(OV_BASE, "stages.encode.max_batch", "0",
                    "override stages.encode.max_batch=0: stages[1].max_batch: must be >= 1, got 0");
    expect_ex_error(OV_BASE, "stages[1].max_batch", "0",
                    "override stages[1].max_batch=0: stages[1].max_batch: must be >= 1, got 0");
    expect_ex_error(OV_BASE, "streams", "abc",
                    "override streams=abc: workload.streams: expected an integer, got \"abc\"");
    expect_ex_error(OV_BASE, "fps", "abc",
                    "override fps=abc: workload.fps: expected a number, got \"abc\"");
    expect_ex_error(OV_BASE, "fps", "yes",
                    "override fps=yes: workload.fps: expected a number, got the boolean yes");
    expect_ex_error(OV_BASE, "gpus", "",
                    "override gpus=: cluster.gpus: expected an integer, got an empty value (null)");
    expect_ex_error(OV_BASE, "stages.encode.max_batch", "16",
                    "override stages.encode.max_batch=16: stages[1].max_batch: max_batch 16 is "
                    "beyond the service table (last batch 8)");
    /* a check against another value names the override, which counts as
     * written last */
    expect_ex_error(OV_BASE, "degradation.reduce_fps.fps", "20",
                    "override degradation.reduce_fps.fps=20: degradation.reduce_fps.fps: must be "
                    "< workload.fps (15), got 20");
    /* an added key that needs another */
    expect_ex_error(OV_BASE, "stages.capture.queue.on_full", "drop_newest",
                    "override stages.capture.queue.on_full=drop_newest: stages[0].queue: missing "
                    "required key 'capacity'");
}

/* Keys the loader does not accept get the file's did-you-mean, named as
 * the override's. */
Test(scenario, override_unknown_keys)
{
    expect_ex_error(OV_BASE, "workload.stream", "8",
                    "override workload.stream=8: workload.stream: unknown key; did you mean "
                    "'streams'?");
    expect_ex_error(OV_BASE, "stages.encode.max_bach", "2",
                    "override stages.encode.max_bach=2: stages[1].max_bach: unknown key; did you "
                    "mean 'max_batch'?");
    expect_ex_error(OV_BASE, "duraton_s", "5",
                    "override duraton_s=5: duraton_s: unknown key; did you mean 'duration_s'?");
    expect_ex_error(OV_BASE, "stages.capture.max_batch", "2",
                    "override stages.capture.max_batch=2: stages[0].max_batch: applies only to "
                    "on: gpu stages");
    expect_ex_error(OV_BASE, "stages.capture.workers", "3",
                    "override stages.capture.workers=3: stages[0].workers: give either servers or "
                    "workers, not both (workers is a synonym)");
    expect_ex_error(OV_BASE, "workload.rate_hz", "3",
                    "override workload.rate_hz=3: workload.rate_hz: applies only to arrival: "
                    "poisson");
}

Test(scenario, override_stage_names)
{
    expect_ex_error(OV_BASE, "stages.encdoe.max_batch", "4",
                    "override stages.encdoe.max_batch=4: stages: no stage named \"encdoe\"; did "
                    "you mean 'encode'?");
    expect_ex_error(OV_BASE, "stages.llm_decode.max_batch", "4",
                    "override stages.llm_decode.max_batch=4: stages: no stage named "
                    "\"llm_decode\"; stages: capture, encode");
    expect_ex_error(OV_BASE, "stages[2].servers", "1",
                    "override stages[2].servers=1: stages: has 2 items; there is no [2]");
}

Test(scenario, override_path_errors)
{
    expect_ex_error(OV_BASE, "workload.fps.x", "1",
                    "override workload.fps.x=1: workload.fps: expected a mapping holding 'x', got "
                    "\"15\"");
    expect_ex_error(OV_BASE, "stages.encode.on.x", "1",
                    "override stages.encode.on.x=1: stages[1].on: expected a mapping holding "
                    "'x', got \"gpu\"");
    expect_ex_error(OV_BASE, "workload[0]", "1",
                    "override workload[0]=1: workload: expected a list to take item [0] of, got a "
                    "mapping");
    expect_ex_error(OV_BASE, "degradation.modes.x", "1",
                    "override degradation.modes.x=1: degradation.modes: is a list; select an item "
                    "by index, as in degradation.modes[0]");
    expect_ex_error(OV_BASE, "workload", "3",
                    "override workload=3: workload: holds a mapping, not a scalar; an override "
                    "sets one scalar value");
    expect_ex_error(OV_BASE, "stages.encode", "3",
                    "override stages.encode=3: stages[1]: holds a mapping, not a scalar; an "
                    "override sets one scalar value");
    expect_ex_error(OV_BASE, "sla[0].ms", "5",
                    "override sla[0].ms=5: sla: is not in the scenario, and an override cannot "
                    "add list items");
    expect_ex_error(OV_BASE, "stages..servers", "1",
                    "override stages..servers=1: stages..servers: malformed key: an empty part "
                    "(each part is a name, optionally followed by [N])");
    expect_ex_error(OV_BASE, "stages[x].servers", "1",
                    "override stages[x].servers=1: stages[x].servers: malformed key: an index must "
                    "be [N] with N a number, such as [0]");
    expect_ex_error(OV_BASE, "", "1", "override =1: (root): malformed key: the key is empty");
}

/* An item of a list that holds scalars may be overridden by index. */
Test(scenario, override_list_item)
{
    const scn_override ov = {"degradation.modes[0]", "reduce_fsp"};
    scenario_cfg c;
    char err[512];
    cr_assert_eq(load_ex(OV_BASE "metrics: {buckets_ms: [5, 10, 20]}\n",
                         &(scn_override){"metrics.buckets_ms[1]", "15"}, 1, &c, err, sizeof err),
                 0, "%s", err);
    cr_expect_eq(c.buckets_ms[1], 15);
    cfg_free(&c);
    expect_ex_error(OV_BASE, ov.key, ov.value,
                    "override degradation.modes[0]=reduce_fsp: degradation.modes[0]: unknown "
                    "value \"reduce_fsp\"; did you mean 'reduce_fps'? (valid: reduce_fps, "
                    "reduce_quality, drop_response)");
}

/* Errors in the file itself keep FILE:LINE:COL, overrides or not. */
Test(scenario, override_file_errors_keep_position)
{
    const scn_override ov = {"streams", "8"};
    scenario_cfg c;
    char err[512];
    char *yaml = edit(OV_BASE, "p99_target_ms: 100", "p99_target_ms: -1");
    cr_assert_eq(load_ex(yaml, &ov, 1, &c, err, sizeof err), -1);
    cr_expect(strncmp(err, "/dev/fd/", 8) == 0, "got '%s'", err);
    cr_expect(strstr(err, ":15:18: degradation.p99_target_ms: must be > 0, got -1") != NULL,
              "got '%s'", err);
    free(yaml);
}

Test(scenario, override_bad_arguments)
{
    scenario_cfg c;
    char err[512];
    const scn_override ov = {"streams", NULL};
    cr_assert_eq(load_ex(OV_BASE, &ov, 1, &c, err, sizeof err), -1);
    cr_expect(strstr(err, ": override 1 has no key or no value") != NULL, "got '%s'", err);
    cr_assert_eq(load_ex(OV_BASE, NULL, 2, &c, err, sizeof err), -1);
    cr_assert_eq(scn_load_ex(DATA "/no-such.yaml", &ov, 0, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "cannot open") != NULL, "got '%s'", err);
}

/* ---- sweep ------------------------------------------------------------- */

/* The sweep goes on line 12, after this. */
#define SWEEP_BASE                                                     \
    "name: sw\n"                                                       \
    "duration_s: 10\n"                                                 \
    "workload: {arrival: periodic, streams: 4, fps: 15}\n"             \
    "cluster: {gpus: 2}\n"                                             \
    "stages:\n"                                                        \
    "  - name: capture\n"                                              \
    "    service: {dist: constant, ms: 1}\n"                           \
    "  - name: encode\n"                                               \
    "    on: gpu\n"                                                    \
    "    max_batch: 8\n"                                               \
    "    service: {table: [{batch: 1, ms: 5}, {batch: 8, ms: 12}]}\n"

Test(scenario, sweep_loads_axes_in_order)
{
    scenario_cfg c;
    expect_ok(SWEEP_BASE
              "sweep: {fps: [10, 15, 30], streams: [8, 16, 32], stages.encode.max_batch: [1, 4, 8]}\n",
              &c);
    cr_assert_eq(c.naxes, 3);
    cr_expect_str_eq(c.axes[0].key, "fps");
    cr_expect_str_eq(c.axes[1].key, "streams");
    cr_expect_str_eq(c.axes[2].key, "stages.encode.max_batch");
    const char *want[3][3] = {{"10", "15", "30"}, {"8", "16", "32"}, {"1", "4", "8"}};
    for (int a = 0; a < 3; a++) {
        cr_expect_eq(c.axes[a].nvalues, 3);
        for (int v = 0; v < 3; v++)
            cr_expect_str_eq(c.axes[a].values[v], want[a][v]);
    }
    /* the axes change nothing else */
    cr_expect_eq(c.workload.fps, 15);
    cr_expect_eq(c.stages[1].max_batch, 8);
    cfg_free(&c);
}

/* Block style, keys by index and added keys, values kept as written. */
Test(scenario, sweep_block_style)
{
    scenario_cfg c;
    expect_ok(SWEEP_BASE
              "sweep:\n"
              "  stages[0].servers: [1, 2]\n"
              "  workload.jitter_ms: [0, 0.5, \"1.0\"]\n"
              "  stages.encode.batch_timeout_ms:\n"
              "    - 0\n"
              "    - 2.50\n",
              &c);
    cr_assert_eq(c.naxes, 3);
    cr_expect_str_eq(c.axes[0].key, "stages[0].servers");
    cr_expect_eq(c.axes[0].nvalues, 2);
    cr_expect_str_eq(c.axes[1].values[2], "1.0");
    cr_expect_str_eq(c.axes[2].key, "stages.encode.batch_timeout_ms");
    cr_expect_str_eq(c.axes[2].values[1], "2.50");
    cfg_free(&c);
}

/* Each point of a sweep loads as the scenario with one override per axis. */
Test(scenario, sweep_points_load)
{
    static const char yaml[] = SWEEP_BASE
        "sweep: {fps: [10, 30], stages.encode.max_batch: [1, 4, 8]}\n";
    scenario_cfg c;
    expect_ok(yaml, &c);
    for (int i = 0; i < c.axes[0].nvalues; i++)
        for (int j = 0; j < c.axes[1].nvalues; j++) {
            scn_override ov[2] = {{c.axes[0].key, c.axes[0].values[i]},
                                  {c.axes[1].key, c.axes[1].values[j]}};
            scenario_cfg p;
            expect_ex_ok(yaml, ov, 2, &p);
            cr_expect_eq(p.workload.fps, atof(c.axes[0].values[i]));
            cr_expect_eq(p.stages[1].max_batch, atoi(c.axes[1].values[j]));
            cfg_free(&p);
        }
    cfg_free(&c);
}

/* "sweep: " is 7 characters: a flow value starts at column 8, its first
 * key at 9. */
Test(scenario, sweep_not_a_mapping)
{
    expect_error(SWEEP_BASE "sweep: [fps]\n",
                 "12:8: sweep: ", "expected a mapping of override keys to lists of values");
    expect_error(SWEEP_BASE "sweep: {}\n", "12:8: sweep: ", "must name at least one axis");
}

/* "sweep: {fps: " puts the value at 14. */
Test(scenario, sweep_values_not_a_list)
{
    expect_error(SWEEP_BASE "sweep: {fps: 10}\n",
                 "12:14: sweep.fps: ", "expected a list of values such as [10, 15, 30], got \"10\"");
    expect_error(SWEEP_BASE "sweep: {fps: {a: 1}}\n",
                 "12:14: sweep.fps: ", "expected a list of values such as [10, 15, 30], got a mapping");
    expect_error(SWEEP_BASE "sweep: {fps: []}\n",
                 "12:14: sweep.fps: ", "must hold 1 to 64 values, got 0");
}

/* "sweep: {fps: [10, " puts the second value at 19. */
Test(scenario, sweep_value_not_a_scalar)
{
    expect_error(SWEEP_BASE "sweep: {fps: [10, [15]]}\n",
                 "12:19: sweep.fps[1]: ", "expected a scalar value, got a list");
    expect_error(SWEEP_BASE "sweep: {fps: [10, {a: 1}]}\n",
                 "12:19: sweep.fps[1]: ", "expected a scalar value, got a mapping");
    expect_error(SWEEP_BASE "sweep: {fps: [10, ~]}\n",
                 "12:19: sweep.fps[1]: ", "expected a scalar value, got an empty value (null)");
    expect_error(SWEEP_BASE "sweep: {fps: [10, 10]}\n",
                 "12:19: sweep.fps[1]: ", "value \"10\" is listed twice (also sweep.fps[0])");
    expect_error(SWEEP_BASE "sweep: {fps: [10, 123456789012345678901234567890123]}\n",
                 "12:19: sweep.fps[1]: ", "a value may be at most 31 characters");
}

Test(scenario, sweep_too_many_values)
{
    char yaml[2048];
    int n = snprintf(yaml, sizeof yaml, "%s", SWEEP_BASE "sweep: {fps: [");
    for (int i = 1; i <= 65; i++)
        n += snprintf(yaml + n, sizeof yaml - (size_t)n, "%s%d", i > 1 ? ", " : "", i);
    snprintf(yaml + n, sizeof yaml - (size_t)n, "]}\n");
    expect_error(yaml, "12:14: sweep.fps: ", "must hold 1 to 64 values, got 65");
}

/* A block mapping starts at its first key: line 13, column 3. */
Test(scenario, sweep_too_many_axes)
{
    expect_error(SWEEP_BASE
                 "sweep:\n"
                 "  fps: [10]\n"
                 "  streams: [8]\n"
                 "  gpus: [1]\n"
                 "  seed: [1]\n"
                 "  replications: [2]\n"
                 "  duration_s: [5]\n"
                 "  stages.capture.servers: [2]\n"
                 "  stages.encode.max_batch: [2]\n"
                 "  workload.jitter_ms: [1]\n",
                 "13:3: sweep: ", "at most 8 axes, got 9");
}

Test(scenario, sweep_unknown_stage)
{
    expect_error(SWEEP_BASE "sweep: {stages.encdoe.max_batch: [1, 2]}\n",
                 "12:9: sweep.stages.encdoe.max_batch: ",
                 "not an override key for this scenario: stages: no stage named \"encdoe\"; did "
                 "you mean 'encode'?");
    expect_error(SWEEP_BASE "sweep: {\"stages[2].servers\": [1, 2]}\n",
                 "12:9: sweep.stages[2].servers: ",
                 "not an override key for this scenario: stages: has 2 items; there is no [2]");
}

Test(scenario, sweep_key_does_not_resolve)
{
    expect_error(SWEEP_BASE "sweep: {workload.fps.x: [1]}\n",
                 "12:9: sweep.workload.fps.x: ",
                 "workload.fps: expected a mapping holding 'x', got \"15\"");
    expect_error(SWEEP_BASE "sweep: {stages.encode: [1]}\n",
                 "12:9: sweep.stages.encode: ", "stages[1]: holds a mapping, not a scalar");
    expect_error(SWEEP_BASE "sweep: {\"sla[0].ms\": [1]}\n",
                 "12:9: sweep.sla[0].ms: ", "sla: is not in the scenario, and an override cannot "
                 "add list items");
    expect_error(SWEEP_BASE "sweep: {\"alerts.x[0]\": [1]}\n",
                 "12:9: sweep.alerts.x[0]: ", "alerts.x: is not in the scenario");
    expect_error(SWEEP_BASE "sweep: {a..b: [1]}\n",
                 "12:9: sweep.a..b: ", "malformed key: an empty part");
}

/* "sweep: {fps: [10], " puts the second key at 20. In a flow mapping a key
 * with an index must be quoted ([ is a flow indicator). */
Test(scenario, sweep_same_setting_twice)
{
    expect_error(SWEEP_BASE "sweep: {fps: [10], workload.fps: [20]}\n",
                 "12:20: sweep.workload.fps: ", "sets workload.fps, as axis 'fps' does");
    expect_error(SWEEP_BASE "sweep: {stages.encode.max_batch: [1], \"stages[1].max_batch\": [2]}\n",
                 "12:39: sweep.stages[1].max_batch: ",
                 "sets stages[1].max_batch, as axis 'stages.encode.max_batch' does");
    expect_error(SWEEP_BASE "sweep: {fps: [10], fps: [20]}\n",
                 "12:20: sweep.fps: ", "duplicate key (first given at line 12)");
}

Test(scenario, sweep_key_typo)
{
    expect_error(SWEEP_BASE "swep: {fps: [10]}\n", "12:1: swep: ", "did you mean 'sweep'?");
}

/* -- service from a calibration file (calib: ...) -- */

/* GPU_STAGE fills lines 1-6, so the service is on line 7 (or 8 after one
 * more stage key): "    service: {calib: {file: " puts the calib key at
 * column 15 and the file name at 29. The file resolves against DATA. */
#define CALIB_FIXTURE "../../../calib/data/fixture-small.yaml"
#define CALIB_SVC(rest) "    service: {calib: {file: " CALIB_FIXTURE ", " rest "}\n"

Test(scenario, calib_encode_table)
{
    scenario_cfg c;
    expect_ok(GPU_STAGE "    max_batch: 16\n" CALIB_SVC("op: encode, model: tiny}"), &c);
    const stage_cfg *s = &c.stages[0];
    cr_assert(s->has_table);
    cr_expect(!s->table.by_tokens);
    cr_assert_eq(s->table.n, 3);
    const double b[] = { 1, 4, 16 }, ms[] = { 2, 5, 14 };   /* the fixture's p50s */
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(s->table.batch[i], b[i], 1e-12);
        cr_expect_float_eq(s->table.ms[i], ms[i], 1e-12);
    }
    cr_expect(!s->has_jitter);
    cr_expect_eq(s->max_batch, 16);
    cfg_free(&c);
}

Test(scenario, calib_sampling_fitted)
{
    scenario_cfg c;
    expect_ok(GPU_STAGE CALIB_SVC("op: encode, model: tiny, sampling: fitted}"), &c);
    const stage_cfg *s = &c.stages[0];
    cr_assert(s->has_table && s->table.n == 3);
    /* with sampling: fitted the table is the mean, so table x jitter keeps it */
    cr_expect_float_eq(s->table.ms[0], 2.1, 1e-12);
    cr_expect_float_eq(s->table.ms[2], 14.5, 1e-12);
    cr_assert(s->has_jitter);
    /* pooled sigma^2 = (0.01 + 0.04 + 0.04) / 3 = 0.03: cv = sqrt(e^0.03 - 1) */
    cr_expect_float_eq(dist_mean(&s->jitter), 1.0, 1e-9);
    cr_expect_float_eq(sqrt(dist_var(&s->jitter)), sqrt(expm1(0.03)), 1e-9);
    cfg_free(&c);
    /* the stage's own jitter wins; stat: p50 overrides the mean */
    expect_ok(GPU_STAGE "    service: {calib: {file: " CALIB_FIXTURE ", op: encode, model: tiny, "
              "sampling: fitted, stat: p50}, jitter: {dist: gamma, cv: 0.1}}\n", &c);
    s = &c.stages[0];
    cr_expect_float_eq(s->table.ms[0], 2, 1e-12);
    cr_assert(s->has_jitter);
    cr_expect_float_eq(sqrt(dist_var(&s->jitter)), 0.1, 1e-9);
    cfg_free(&c);
}

Test(scenario, calib_prefill_by_tokens_and_decode_by_cache)
{
    scenario_cfg c;
    expect_ok("duration_s: 10\n"
              "workload: {arrival: poisson, rate_hz: 1}\n"
              "cluster: {gpus: 1}\n"
              "stages:\n"
              "  - {name: encode, on: gpu, service: {dist: constant, ms: 1}, tokens_per_frame: 64}\n"
              "  - name: llm_prefill\n"
              "    on: gpu\n"
              "    max_batch: 8\n"
              "    service: {calib: {file: " CALIB_FIXTURE ", op: prefill, model: tiny}}\n"
              "  - name: llm_decode\n"
              "    on: gpu\n"
              "    max_batch: 8\n"
              "    response_tokens: 4\n"
              "    service: {calib: {file: " CALIB_FIXTURE ", op: decode, model: tiny, cache_len: 128}}\n",
              &c);
    const stage_cfg *p = &c.stages[1], *d = &c.stages[2];
    cr_assert(p->has_table && p->table.by_tokens && p->table.n == 3);
    cr_expect(p->table.batch[0] == 16 && p->table.batch[2] == 256);
    cr_expect(p->table.ms[0] == 4 && p->table.ms[1] == 9 && p->table.ms[2] == 9);   /* 8.5 raised */
    cr_assert(d->has_table && !d->table.by_tokens && d->table.n == 2);
    cr_expect(d->table.batch[1] == 8 && d->table.ms[0] == 1.5 && d->table.ms[1] == 3);
    cfg_free(&c);
}

Test(scenario, calib_shipped_cpu_tiny)
{
    scenario_cfg c;
    expect_ok(GPU_STAGE "    max_batch: 64\n"
              "    service: {calib: {file: ../../../calib/data/cpu-tiny.yaml, op: encode, model: tiny}}\n",
              &c);
    const batch_table *t = &c.stages[0].table;
    cr_assert_eq(t->n, 7);
    cr_expect(t->batch[0] == 1 && t->batch[6] == 64);
    for (int i = 1; i < t->n; i++)
        cr_expect(t->ms[i] >= t->ms[i - 1] && t->ms[i] > 0);
    cfg_free(&c);
}

Test(scenario, calib_missing_file)
{
    expect_error(GPU_STAGE "    service: {calib: {file: nope.yaml, op: encode, model: tiny}}\n",
                 "7:15: stages[0].service.calib: ",
                 "cannot open tests/data/scenario/nope.yaml: No such file or directory");
}

Test(scenario, calib_op_not_in_file)
{
    expect_error(GPU_STAGE CALIB_SVC("op: reduce, model: tiny}"),
                 "7:15: stages[0].service.calib: ",
                 "tests/data/scenario/" CALIB_FIXTURE " has no op reduce for model tiny (it has: "
                 "encode tiny, prefill tiny, decode tiny)");
}

Test(scenario, calib_unknown_op_name)
{
    expect_error(GPU_STAGE CALIB_SVC("op: encod, model: tiny}"),
                 "7:73: stages[0].service.calib.op: ", "did you mean 'encode'?");
}

Test(scenario, calib_unknown_model)
{
    expect_error(GPU_STAGE CALIB_SVC("op: encode, model: siglip-so400m-384}"),
                 "7:15: stages[0].service.calib: ",
                 "has no op encode for model siglip-so400m-384");
}

Test(scenario, calib_max_batch_beyond_grid)
{
    expect_error(GPU_STAGE "    max_batch: 64\n" CALIB_SVC("op: encode, model: tiny}"),
                 "8:15: stages[0].service.calib: ",
                 "max_batch 64 is beyond the calibration grid (largest batch 16) of "
                 "tests/data/scenario/" CALIB_FIXTURE);
}

Test(scenario, calib_ambiguous_cache_len)
{
    expect_error(GPU_STAGE CALIB_SVC("op: decode, model: tiny}"),
                 "7:15: stages[0].service.calib: ",
                 "the decode points have several cache_len (16, 128); choose one with cache_len: N");
}

Test(scenario, calib_missing_key_and_misuse)
{
    expect_error(GPU_STAGE "    service: {calib: {file: x.yaml, model: tiny}}\n",
                 "7:22: stages[0].service.calib: ", "missing required key 'op'");
    expect_error(WITH_SERVICE("{calib: {file: x.yaml, op: encode, model: tiny}}"),
                 "6:15: stages[0].service.calib: ", "applies only to on: gpu stages");
    expect_error(GPU_STAGE CALIB_SVC("op: encode, model: tiny}, dist: constant"),
                 "7:95: stages[0].service.dist: ", "does not apply with calib");
}

Test(scenario, calib_sampling_empirical)
{
    scenario_cfg c;
    expect_ok(GPU_STAGE CALIB_SVC("op: encode, model: tiny, sampling: empirical}"), &c);
    const stage_cfg *s = &c.stages[0];
    cr_assert(s->has_table && s->table.n == 3);
    cr_expect_float_eq(s->table.ms[0], 2.1, 1e-12);      /* the mean, as with fitted */
    cr_expect_float_eq(s->table.ms[2], 14.5, 1e-12);
    cr_assert(s->has_jitter);
    cr_assert_eq(s->jitter.kind, DIST_EMPIRICAL);
    /* fixture-small.samples.csv: {1,2,3}/2, {4,5,6}/5, {12,14,16}/14, sorted */
    double want[] = { 0.5, 0.8, 12.0 / 14.0, 1, 1, 1, 16.0 / 14.0, 1.2, 1.5 };
    cr_assert_eq(s->jitter.nvalues, 9);
    for (size_t i = 0; i < 9; i++)
        cr_expect(s->jitter.values[i] == want[i], "values[%zu] = %.17g, want %.17g", i,
                  s->jitter.values[i], want[i]);
    cr_expect_float_eq(dist_mean(&s->jitter), 1.0, 1e-12);
    cfg_free(&c);
    /* a stage's own jitter still wins */
    expect_ok(GPU_STAGE "    service: {calib: {file: " CALIB_FIXTURE ", op: encode, model: tiny, "
              "sampling: empirical}, jitter: {dist: gamma, cv: 0.1}}\n", &c);
    cr_expect_eq(c.stages[0].jitter.kind, DIST_GAMMA);
    cfg_free(&c);
}

Test(scenario, calib_sampling_empirical_errors)
{
    /* prefill has no samples in the fixture's CSV */
    expect_error(GPU_STAGE CALIB_SVC("op: prefill, model: tiny, sampling: empirical}"),
                 "7:15: stages[0].service.calib: ", "fixture-small.samples.csv: no samples for prefill");
    /* cpu-tiny.yaml's samples exist; a file without a CSV beside it */
    expect_error(GPU_STAGE "    service: {calib: {file: ../../../calib/data/fixture-video.yaml, op: encode, "
                 "model: tiny, sampling: empirical}}\n",
                 "7:15: stages[0].service.calib: ", "has no op encode");
}

#define VIDEO_FIXTURE "../../../calib/data/fixture-video.yaml"

Test(scenario, calib_decode_video_on_workers)
{
    scenario_cfg c;
    expect_ok(WITH_SERVICE("{calib: {file: " VIDEO_FIXTURE ", op: decode_video}}"), &c);
    const dist_t *d = &c.stages[0].service;
    cr_assert_eq(d->kind, DIST_MIXTURE);
    cr_assert_eq(d->nparts, 2);
    cr_expect_float_eq(d->weights[0], 0.25, 1e-15);     /* I: 2 of 8 frames */
    cr_expect_float_eq(d->weights[1], 0.75, 1e-15);     /* P: 6 of 8 */
    cr_assert_eq(d->parts[0].kind, DIST_EMPIRICAL);
    cr_assert_eq(d->parts[0].nvalues, 2);
    cr_expect(d->parts[0].values[0] == 8 && d->parts[0].values[1] == 12);
    cr_assert_eq(d->parts[1].nvalues, 6);
    const double p[] = { 1, 1.25, 1.5, 1.5, 1.75, 2 };
    for (int i = 0; i < 6; i++)
        cr_expect(d->parts[1].values[i] == p[i]);
    cr_expect_float_eq(dist_mean(d), 0.25 * 10 + 0.75 * 1.5, 1e-12);
    cfg_free(&c);
    /* model chooses explicitly; a wrong one is an error */
    expect_ok(WITH_SERVICE("{calib: {file: " VIDEO_FIXTURE ", op: decode_video, model: h264-64x64}}"), &c);
    cfg_free(&c);
    expect_error(WITH_SERVICE("{calib: {file: " VIDEO_FIXTURE ", op: decode_video, model: x}}"),
                 "6:15: stages[0].service.calib: ", "has no op decode_video for model x");
    /* the small fixture has no decode_video op */
    expect_error(WITH_SERVICE("{calib: {file: " CALIB_FIXTURE ", op: decode_video}}"),
                 "6:15: stages[0].service.calib: ", "has no op decode_video");
}

