/* test_sla.c — the SLA proposal (models/sla.c): the GPU search against a
 * scenario whose answer is known by hand, the default target ladder, the
 * refusals, and `vlsim sla` writing its Markdown atomically and never over
 * a file without --force (their --help against the man page is in
 * test_cli.c). Runs from the repository root. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "models/sla.h"
#include "tests/kit_files.h"

static char dir[64];

static void mk(void)
{
    kit_tmpdir(dir, sizeof dir, "sla");
}

static void rm(void)
{
    kit_rm_rf(dir);
}

TestSuite(sla, .init = mk, .fini = rm, .timeout = 120);

static const char *write_yaml(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kit_write_file(path, text);
    return path;
}

/* 35 aligned periodic streams at 10 FPS (all frames at t = 0, 100, 200 ms,
 * ...) on G GPUs with least_loaded placement (stream k on GPU k mod G), one
 * GPU stage without batching and a constant 10 ms per frame. A GPU with m
 * streams serves its m frames back to back: latencies 10, 20, ..., 10m ms,
 * done before the next frames while 10m <= 100; with m = 11 or more it
 * falls further behind every period. The busiest GPU has m = ceil(35 / G),
 * so the frame p99 (nearest rank) is 10 ceil(35/G) once that is <= 100:
 *   G = 3: m = 12, overloaded;  G = 4: 9,9,9,8 -> 90 ms (3 of 35 frames);
 *   G = 5: 7 each -> 70 ms;     G = 6: 6,6,6,6,6,5 -> 60 ms;
 *   G = 7: 5 each -> 50 ms;     G = 11: 4,4,3,... -> 40 ms (2 of 35 frames);
 *   G = 12: 3,...,3,2 -> 30 ms.
 * Starting from 3 GPUs: "p99 <= 95" needs 4 GPUs, "p99 <= 65" needs 6,
 * "p99 <= 5" can never be met (a frame takes 10 ms). */
static const char *CAP =
    "name: cap35\n"
    "seed: 3\n"
    "duration_s: 5\n"
    "replications: 2\n"
    "workload: {arrival: periodic, streams: 35, fps: 10, phase: aligned}\n"
    "cluster: {gpus: 3, gpu_hour_usd: 2.0, placement: least_loaded}\n"
    "sla:\n"
    "  - {metric: frame, percentile: 99, ms: 95}\n"
    "stages:\n"
    "  - name: encode\n"
    "    on: gpu\n"
    "    max_batch: 1\n"
    "    service: {dist: constant, ms: 10}\n"
    "    budget_ms: 50\n";

typedef struct {
    int n;
    int gpus[32];
} probes;

static void on_probe(void *pctx, int gpus, int runs)
{
    probes *p = pctx;
    cr_expect_eq(runs, p->n + 2);        /* the baseline is run 1 */
    if (p->n < 32)
        p->gpus[p->n++] = gpus;
}

static frontier_target tg(const char *s)
{
    frontier_target t;
    char err[256];
    cr_assert_eq(frontier_target_parse(s, &t, err, sizeof err), 0, "%s", err);
    return t;
}

Test(sla, gpu_search_against_hand)
{
    const char *path = write_yaml("cap.yaml", CAP);
    frontier_target t[3] = { tg("frame p99 <= 95"), tg("frame p99 <= 65"), tg("frame p99 <= 5") };
    probes pr = { 0, { 0 } };
    sla_opts o;
    sla_opts_default(&o);
    o.threads = 1;
    o.max_gpus = 12;
    o.probe = on_probe;
    o.pctx = &pr;
    sla_result r;
    char err[2048] = "";
    cr_assert_eq(sla_search(path, NULL, 0, t, 3, &o, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.nanswer, 3);
    cr_expect_eq(r.answer[0].gpus, 4);
    cr_expect(fabs(r.answer[0].value - 90) < 0.05, "p99 at 4 GPUs %g, want 90", r.answer[0].value);
    cr_expect(fabs(r.answer[0].cost_per_stream_hour - 2.0 * 4 / 35) < 1e-12);
    cr_expect_eq(r.answer[1].gpus, 6);
    cr_expect(fabs(r.answer[1].value - 60) < 0.05, "p99 at 6 GPUs %g, want 60", r.answer[1].value);
    cr_expect(fabs(r.answer[1].cost_per_stream_hour - 2.0 * 6 / 35) < 1e-12);
    cr_expect_eq(r.answer[2].gpus, 0);
    cr_expect_eq(r.answer[2].best_gpus, 12);
    cr_expect(fabs(r.answer[2].value - 30) < 0.05, "p99 at 12 GPUs %g, want 30", r.answer[2].value);
    cr_expect(isnan(r.answer[2].cost_per_stream_hour));
    /* by hand: target 1: 4 hits. Target 2: 4 (known) misses, 5 misses, 7 hits,
     * bisect: 6 hits. Target 3: 11 misses, 19 > 12 so 12, misses. */
    static const int want[] = { 4, 5, 7, 6, 11, 12 };
    cr_expect_eq(pr.n, 6);
    for (int i = 0; i < 6 && i < pr.n; i++)
        cr_expect_eq(pr.gpus[i], want[i], "probe %d: %d GPUs, want %d", i, pr.gpus[i], want[i]);
    cr_expect_eq(r.runs, 7);
    /* the baseline (3 GPUs, overloaded) fails its SLA line */
    cr_expect_eq(r.base.nsla, 1);
    cr_expect(!r.base.sla[0].pass);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sla_markdown(f, &r);
    fclose(f);
    cr_expect(strstr(buf, "# SLA proposal: cap35") != NULL, "%s", buf);
    cr_expect(strstr(buf, "| frame p99 <= 95 ms | 4 GPUs | $0.2286 |") != NULL, "%s", buf);
    cr_expect(strstr(buf, "frame p99 < 65 ms needs 6 GPUs: $0.3429/stream-hour") != NULL, "%s", buf);
    cr_expect(strstr(buf, "not met with up to 12 GPUs") != NULL, "%s", buf);
    cr_expect(strstr(buf, "| encode | 50.00 |") != NULL, "%s", buf);
    free(buf);
    sla_free(&r);
}

/* The same with a waiting room of 8 frames per GPU: a GPU with m streams
 * serves 1 + 8 of the m frames that arrive together and drops the rest, so
 * on 3 GPUs (m = 12, 12, 11) the frames that get through all finish within
 * 90 ms — p99 <= 95 "met" — while 8 of 35 frames (23 %) are dropped. From
 * 4 GPUs (m <= 9) nothing is dropped. */
Test(sla, drops_do_not_buy_latency)
{
    char *text = malloc(strlen(CAP) + 64);
    snprintf(text, strlen(CAP) + 64, "%s    queue: {capacity: 8}\n", CAP);
    const char *path = write_yaml("cap8.yaml", text);
    free(text);
    frontier_target t = tg("frame p99 <= 95");
    sla_opts o;
    sla_opts_default(&o);
    o.threads = 1;
    o.max_gpus = 8;
    sla_result r;
    char err[2048] = "";
    cr_assert_eq(sla_search(path, NULL, 0, &t, 1, &o, &r, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(r.base.drop_rate.mean - 8.0 / 35) < 1e-9, "drop rate on 3 GPUs %g, want 8/35",
              r.base.drop_rate.mean);
    cr_expect(r.base.e2e.p99.mean <= 90 + 1e-9, "p99 of what gets through %g",
              r.base.e2e.p99.mean);
    cr_expect_eq(r.answer[0].gpus, 4);
    cr_expect_eq(r.answer[0].drop_rate, 0);
    sla_free(&r);
    o.max_drop_rate = -1;                /* no limit: the drops "meet" it on 3 GPUs */
    cr_assert_eq(sla_search(path, NULL, 0, &t, 1, &o, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.answer[0].gpus, 3);
    sla_free(&r);
}

Test(sla, default_targets_and_refusals)
{
    const char *path = write_yaml("cap.yaml", CAP);
    scenario_cfg c;
    char err[2048] = "";
    cr_assert_eq(scn_load(path, &c, err, sizeof err), 0, "%s", err);
    frontier_target t[8];
    int n = sla_default_targets(&c, t, 8);
    cr_assert_eq(n, 3);                  /* 95, 95 x 2/3 = 63.3 -> 63, 95 / 2 = 47.5 -> 48 */
    cr_expect_eq(t[0].ms, 95);
    cr_expect_eq(t[1].ms, 63);
    cr_expect_eq(t[2].ms, 48);
    cr_expect_eq(t[2].percentile, 99);
    cr_expect_str_eq(t[2].metric, "frame");
    c.nsla = 0;                          /* none: frame p95 <= 100, p99 <= 200 and their ladders */
    n = sla_default_targets(&c, t, 8);
    cr_assert_eq(n, 6);
    cr_expect(t[0].percentile == 95 && t[0].ms == 100 && t[1].ms == 67 && t[2].ms == 50);
    cr_expect(t[3].percentile == 99 && t[3].ms == 200 && t[4].ms == 133 && t[5].ms == 100);
    cfg_free(&c);

    sla_result r;
    frontier_target bad = tg("decoder p99 <= 10");
    cr_expect_eq(sla_search(path, NULL, 0, &bad, 1, NULL, &r, err, sizeof err), -2);
    cr_expect(strstr(err, "decoder") != NULL, "%s", err);
    const char *nogpu = write_yaml("nogpu.yaml",
                                   "name: w\nduration_s: 5\n"
                                   "workload: {arrival: poisson, rate_hz: 10}\n"
                                   "stages:\n  - {name: a, service: {dist: constant, ms: 1}}\n");
    cr_expect_eq(sla_search(nogpu, NULL, 0, NULL, 0, NULL, &r, err, sizeof err), -2);
    cr_expect(strstr(err, "no GPU cluster") != NULL, "%s", err);
}

Test(sla, cli_markdown_atomic_and_no_overwrite)
{
    const char *path = write_yaml("cap.yaml", CAP);
    const char *args = "--max-gpus 8 --target 'frame p99 <= 95' --threads 1";
    cr_expect_eq(kit_sh("./vlsim sla %s %s --out %s/p.md -q", path, args, dir), 0);
    cr_expect_eq(kit_sh("grep -q '| frame p99 <= 95 ms | 4 GPUs |' %s/p.md", dir), 0);
    /* refused without --force: exit 2, the file as it was, nothing left beside it */
    cr_expect_eq(kit_sh("cp %s/p.md %s/keep && ./vlsim sla %s %s --out %s/p.md -q 2>%s/err; "
                    "test $? = 2", dir, dir, path, args, dir, dir), 0);
    cr_expect_eq(kit_sh("grep -q 'force' %s/err && cmp -s %s/p.md %s/keep", dir, dir, dir), 0);
    cr_expect_eq(kit_sh("echo mine > %s/p.md && ./vlsim sla %s %s --out %s/p.md -q --force && "
                    "grep -q 'SLA proposal' %s/p.md", dir, path, args, dir, dir), 0);
    cr_expect_eq(kit_sh("ls %s | grep -q tmp", dir), 1);
    /* stdout by default */
    cr_expect_eq(kit_sh("./vlsim sla %s %s -q | grep -q '^# SLA proposal: cap35'", path, args), 0);
    /* bad input: exit 2 and no file */
    cr_expect_eq(kit_sh("./vlsim sla %s --target 'frame p77 <= 5' --out %s/n.md 2>/dev/null; "
                    "test $? = 2 && ! test -e %s/n.md", path, dir, dir), 0);
    cr_expect_eq(kit_sh("printf 'name: x\\nduration_s: 5\\nworkload: {arrival: poisson, "
                    "rate_hz: 1}\\nstages: 3\\n' > %s/bad.yaml && "
                    "./vlsim sla %s/bad.yaml --out %s/n.md 2>%s/err; test $? = 2 && "
                    "grep -q 'bad.yaml:4:' %s/err && ! test -e %s/n.md", dir, dir, dir, dir, dir,
                    dir), 0);
}

