/* test_cli.c — vlsim as a user runs it: exit codes, safe outputs,
 * byte-identical results for any thread count, common random numbers, and
 * the agreement of the JSON, CSV and Prometheus outputs with one another.
 * Runs the ./vlsim binary built by `make` from the repository root. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "models/run.h"
#include "models/scenario.h"
#include "tests/kit_files.h"

static char dir[64];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof dir, "/tmp/vlsim-cli-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Remove the "wall_s" line, the only one allowed to differ between runs. */
static void drop_wall(char *s)
{
    char *p = strstr(s, "\"wall_s\"");
    if (p) {
        char *e = strchr(p, '\n');
        memmove(p, e ? e : p + strlen(p), strlen(e ? e : p + strlen(p)) + 1);
    }
}

TestSuite(cli, .init = mkdir_tmp, .fini = rm_tmp, .timeout = 60);

Test(cli, version_and_help)
{
    cr_expect_eq(kit_sh("./vlsim --version | grep -q '^vlsim [0-9]'"), 0);
    cr_expect_eq(kit_sh("./vlsim --help | grep -q 'usage: vlsim'"), 0);
    cr_expect_eq(kit_sh("./vlsim run --help | grep -q -- '--replications'"), 0);
    cr_expect_eq(kit_sh("./vlsim 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim frobnicate 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim run 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --bogus 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --replications 0 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration -5 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim run %s/missing.yaml 2>/dev/null", dir), 2);
}

Test(cli, identical_output_for_any_thread_count)
{
    const char *s = "scenarios/tandem-mm1.yaml";
    cr_assert_eq(kit_sh("./vlsim run %s --duration 100 --json %s/t1.json --threads 1 -q", s, dir), 0);
    cr_assert_eq(kit_sh("./vlsim run %s --duration 100 --json %s/t2.json --threads 2 -q", s, dir), 0);
    cr_assert_eq(kit_sh("./vlsim run %s --duration 100 --json %s/t7.json --threads 7 -q", s, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/t1.json", dir);
    char *a = kit_slurp(p);
    snprintf(p, sizeof p, "%s/t2.json", dir);
    char *b = kit_slurp(p);
    snprintf(p, sizeof p, "%s/t7.json", dir);
    char *c = kit_slurp(p);
    cr_assert(a && b && c);
    cr_expect(strstr(a, "\"wall_s\"") != NULL);
    drop_wall(a);
    drop_wall(b);
    drop_wall(c);
    cr_expect_str_eq(a, b);
    cr_expect_str_eq(a, c);
    free(a);
    free(b);
    free(c);
}

Test(cli, seed_changes_results)
{
    cr_assert_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 200 --seed 1 --csv %s/a.csv -q", dir), 0);
    cr_assert_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 200 --seed 1 --csv %s/b.csv -q", dir), 0);
    cr_assert_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 200 --seed 2 --csv %s/c.csv -q", dir), 0);
    cr_expect_eq(kit_sh("cmp -s %s/a.csv %s/b.csv", dir, dir), 0);
    cr_expect_neq(kit_sh("cmp -s %s/a.csv %s/c.csv", dir, dir), 0);
}

Test(cli, bad_scenario_writes_nothing_and_exits_2)
{
    char scn[256], out[256], errf[256];
    snprintf(scn, sizeof scn, "%s/bad.yaml", dir);
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(errf, sizeof errf, "%s/err.txt", dir);
    kit_write_file(scn, "name: bad\nduration_s: 10\nworkload: {arrival: poisson, rate_hz: 1}\n"
                    "stages:\n  - name: a\n    service: {dist: exponential, mean_ms: -3}\n");
    cr_expect_eq(kit_sh("./vlsim run %s --json %s 2>%s", scn, out, errf), 2);
    cr_expect(!kit_exists(out), "no output may be written on bad input");
    char *e = kit_slurp(errf);
    cr_assert_not_null(e);
    /* line 6, column 43 is where -3 stands: 4 spaces, "service:" (5-12),
     * " {" (13-14), "dist:" (15-19), " exponential," (20-32),
     * " mean_ms:" (33-41), " " (42) */
    char want[300];
    snprintf(want, sizeof want, "%s:6:43: stages[0].service.mean_ms:", scn);
    cr_expect(strstr(e, want) != NULL, "stderr was: %s", e);
    free(e);
    /* no temporaries left behind either */
    cr_expect_eq(kit_sh("ls %s | grep -q tmp", dir), 1);
}

Test(cli, existing_output_needs_force)
{
    char out[256];
    snprintf(out, sizeof out, "%s/keep.json", dir);
    kit_write_file(out, "precious\n");
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 50 --json %s -q 2>/dev/null", out), 2);
    char *s = kit_slurp(out);
    cr_expect_str_eq(s, "precious\n");
    free(s);
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --duration 50 --json %s -q --force", out), 0);
    s = kit_slurp(out);
    cr_expect(strstr(s, "\"e2e_ms\"") != NULL);
    free(s);
    /* an output in a missing directory is refused before any work */
    cr_expect_eq(kit_sh("./vlsim run scenarios/mmc-example.yaml --csv %s/no/such/dir.csv -q 2>/dev/null", dir), 2);
}

/* --trace: the spans of replication 0, never over a file without --force,
 * the same file for any thread count, and not the name of another output. */
Test(cli, trace_output)
{
    char out[256], out1[256];
    snprintf(out, sizeof out, "%s/spans.csv", dir);
    snprintf(out1, sizeof out1, "%s/spans1.csv", dir);
    kit_write_file(out, "precious\n");
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration 5 --replications 3 --trace %s -q "
                        "2>/dev/null", out), 2);
    char *s = kit_slurp(out);
    cr_expect_str_eq(s, "precious\n");
    free(s);
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration 5 --replications 3 --trace %s -q "
                        "--force --threads 2", out), 0);
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration 5 --replications 3 --trace %s -q "
                        "--threads 1", out1), 0);
    cr_expect_eq(kit_sh("cmp -s %s %s", out, out1), 0, "the trace depends on --threads");
    s = kit_slurp(out);
    cr_expect(strncmp(s, "kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\nframe,0,",
                      78) == 0, "%.120s", s);
    free(s);
    cr_expect_eq(kit_sh("./vlsim run scenarios/tandem-mm1.yaml --duration 5 --trace %s --csv %s -q --force "
                        "2>/dev/null", out, out), 2);
}

Test(cli, overload_warns)
{
    char scn[256], errf[256];
    snprintf(scn, sizeof scn, "%s/over.yaml", dir);
    snprintf(errf, sizeof errf, "%s/err.txt", dir);
    kit_write_file(scn, "name: over\nduration_s: 5\nreplications: 2\n"
                    "workload: {arrival: poisson, rate_hz: 1200}\n"
                    "stages:\n  - name: slow\n    service: {dist: constant, ms: 1}\n");
    cr_expect_eq(kit_sh("./vlsim run %s -q 2>%s", scn, errf), 0);
    char *e = kit_slurp(errf);
    cr_expect(strstr(e, "slow: offered load is 1.2 x its capacity") != NULL, "stderr: %s", e);
    free(e);
}

/* The Prometheus buckets are cumulative, +Inf equals _count, and _count
 * equals the completions in the JSON and the CSV. */
Test(cli, outputs_agree)
{
    cr_assert_eq(kit_sh("./vlsim run scenarios/workers-only.yaml --duration 20 --replications 3 "
                    "--json %s/o.json --csv %s/o.csv --prom %s/o.prom -q", dir, dir, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/o.prom", dir);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    char line[512];
    unsigned long long prev = 0, inf = 0, count = 0;
    int nb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        static const char bucket[] = "vlsim_stage_latency_ms_bucket{stage=\"encode\"";
        static const char cnt[] = "vlsim_stage_latency_ms_count{stage=\"encode\"}";
        if (strncmp(line, bucket, sizeof bucket - 1) == 0) {
            v = strtoull(strrchr(line, ' ') + 1, NULL, 10);
            cr_expect_geq(v, prev, "buckets must be cumulative");
            prev = v;
            nb++;
            if (strstr(line, "le=\"+Inf\""))
                inf = v;
        } else if (strncmp(line, cnt, sizeof cnt - 1) == 0) {
            count = strtoull(strrchr(line, ' ') + 1, NULL, 10);
        }
    }
    fclose(f);
    cr_expect_eq(nb, 9, "8 default buckets and +Inf");
    cr_expect_eq(inf, count);
    snprintf(p, sizeof p, "%s/o.json", dir);
    char *j = kit_slurp(p);
    char *enc = strstr(j, "\"encode\": {");
    cr_assert_not_null(enc);
    char *comp = strstr(enc, "\"completed\": ");
    cr_expect_eq(strtoull(comp + 13, NULL, 10), count);
    free(j);
    /* CSV: every row has as many fields as the header */
    cr_expect_eq(kit_sh("awk -F, 'NR==1{n=NF} NF!=n{exit 1}' %s/o.csv", dir), 0);
    cr_expect_eq(kit_sh("test $(wc -l < %s/o.csv) -eq 8", dir), 0);   /* header + 6 stages + e2e */
}

/* In process: results are identical for 1 and 3 threads, and changing one
 * stage's distribution leaves another stage's service draws untouched. */
static const char *CRN =
    "name: crn\nseed: 5\nduration_s: 50\nreplications: 4\n"
    "workload: {arrival: poisson, rate_hz: 50}\n"
    "stages:\n"
    "  - name: first\n    service: {dist: exponential, mean_ms: 10}\n"
    "  - name: second\n    servers: 2\n    service: {dist: %s}\n";

static void run_text(const char *text, int threads, run_result *r, scenario_cfg *c)
{
    char err[512];
    cr_assert_eq(scn_load_string(text, strlen(text), "crn.yaml", ".", c, err, sizeof err), 0, "%s", err);
    run_opts o = { threads, NULL, NULL, NULL };
    cr_assert_eq(run_scenario(c, &o, r, err, sizeof err), 0, "%s", err);
}

Test(cli, common_random_numbers_and_threads)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, CRN, "exponential, mean_ms: 15");
    snprintf(b, sizeof b, CRN, "gamma, mean_ms: 18, sd_ms: 4");
    scenario_cfg ca, cb, cc;
    run_result ra, rb, rc;
    run_text(a, 1, &ra, &ca);
    run_text(b, 3, &rb, &cb);
    run_text(a, 3, &rc, &cc);
    /* the first stage sees the same arrivals and the same service draws */
    cr_expect_eq(ra.stage[0].service.mean.mean, rb.stage[0].service.mean.mean);
    cr_expect_eq(ra.stage[0].sojourn.p99.mean, rb.stage[0].sojourn.p99.mean);
    cr_expect_eq(ra.stage[0].completed, rb.stage[0].completed);
    /* while the second differs */
    cr_expect_neq(ra.stage[1].service.mean.mean, rb.stage[1].service.mean.mean);
    /* and the thread count changes nothing */
    cr_expect_eq(memcmp(ra.stage, rc.stage, 2 * sizeof *ra.stage), 0);
    cr_expect_eq(memcmp(&ra.e2e, &rc.e2e, sizeof ra.e2e), 0);
    run_result_free(&ra);
    run_result_free(&rb);
    run_result_free(&rc);
    cfg_free(&ca);
    cfg_free(&cb);
    cfg_free(&cc);
}

/* --set overrides a scalar: the result equals the scenario written with
 * that value; a bad override is bad input naming the override. */
Test(cli, set_overrides_a_scalar)
{
    char scn[256], errf[256];
    snprintf(scn, sizeof scn, "%s/s4.yaml", dir);
    snprintf(errf, sizeof errf, "%s/err.txt", dir);
    kit_write_file(scn, "name: s\nduration_s: 50\nreplications: 2\n"
                    "workload: {arrival: poisson, rate_hz: 40}\n"
                    "stages:\n  - name: a\n    servers: 4\n    service: {dist: exponential, mean_ms: 50}\n");
    cr_assert_eq(kit_sh("./vlsim run %s --set stages.a.servers=3 --csv %s/set.csv -q", scn, dir), 0);
    kit_write_file(scn, "name: s\nduration_s: 50\nreplications: 2\n"
                    "workload: {arrival: poisson, rate_hz: 40}\n"
                    "stages:\n  - name: a\n    servers: 3\n    service: {dist: exponential, mean_ms: 50}\n");
    cr_assert_eq(kit_sh("./vlsim run %s --csv %s/file.csv -q", scn, dir), 0);
    cr_expect_eq(kit_sh("cmp -s %s/set.csv %s/file.csv", dir, dir), 0);
    cr_expect_eq(kit_sh("./vlsim run %s --set stages.b.servers=3 -q 2>%s", scn, errf), 2);
    char *e = kit_slurp(errf);
    cr_expect(strstr(e, "override stages.b.servers=3: stages: no stage named \"b\"") != NULL,
              "stderr: %s", e);
    free(e);
    cr_expect_eq(kit_sh("./vlsim run %s --set nokey -q 2>/dev/null", scn), 2);
}

/* The sweep commands as a user runs them: help, a sweep, its frontier,
 * byte-identical results for --jobs 1 and 2, a bad axis as bad input. */
Test(cli, sweep_frontier_capacity)
{
    cr_expect_eq(kit_sh("./vlsim sweep --help | grep -q -- '--axis'"), 0);
    cr_expect_eq(kit_sh("./vlsim capacity --help | grep -q -- '--gpus'"), 0);
    cr_expect_eq(kit_sh("./vlsim frontier --help | grep -q -- '--target'"), 0);
    cr_assert_eq(kit_sh("./vlsim sweep scenarios/sweep-example.yaml --out %s/s1 --jobs 1 -q "
                    "--duration 5 --replications 2", dir), 0);
    cr_assert_eq(kit_sh("./vlsim sweep scenarios/sweep-example.yaml --out %s/s2 --jobs 2 -q "
                    "--duration 5 --replications 2", dir), 0);
    cr_expect_eq(kit_sh("cmp -s %s/s1/results.csv %s/s2/results.csv", dir, dir), 0);
    cr_expect_eq(kit_sh("test $(wc -l < %s/s1/results.csv) -eq 7", dir), 0);   /* header + 6 points */
    cr_expect_eq(kit_sh("./vlsim frontier %s/s1/results.csv | grep -q 'Pareto set'", dir), 0);
    cr_expect_eq(kit_sh("./vlsim frontier %s/s1/results.csv --target 'frame p95 <= 100' "
                    "| grep -q 'frame p95 <= 100 ms:'", dir), 0);
    cr_expect_eq(kit_sh("./vlsim frontier %s/missing.csv 2>/dev/null", dir), 2);
    cr_expect_eq(kit_sh("./vlsim sweep scenarios/sweep-example.yaml --out %s/s3 -q "
                    "--axis stages.nope.max_batch=1,2 2>/dev/null", dir), 2);
    cr_expect_eq(kit_sh("./vlsim sweep scenarios/sweep-example.yaml 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim capacity scenarios/sweep-example.yaml --gpus 1 --duration 5 "
                    "--replications 3 -q | grep -q 'streams/GPU'"), 0);
}

/* Every option that a command's --help lists appears in the manual page,
 * and `make install` puts the programs, scenarios and manual in place. */
Test(cli, help_matches_man_page_and_install)
{
    /* each command, and the fewest options its --help must list */
    static const struct { const char *name; int min_options; } cmds[] = {
        {"run", 2}, {"sweep", 2}, {"capacity", 2}, {"frontier", 2}, {"plot", 2}, {"canary", 2},
        {"compare", 5}, {"sla", 5}, {"whatif", 5}, {"warmpool", 10},
    };
    char *man = kit_slurp("models/vlsim.1");
    cr_assert_not_null(man);
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        char cmd[64], line[512];
        snprintf(cmd, sizeof cmd, "./vlsim %s --help", cmds[k].name);
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        int options = 0;
        while (fgets(line, sizeof line, f)) {
            for (char *q = strstr(line, "--"); q; q = strstr(q + 2, "--")) {
                char opt[64], esc[160];
                size_t n = 0, e = 0;
                while (n + 1 < sizeof opt && (q[n] == '-' || (q[n] >= 'a' && q[n] <= 'z')))
                    opt[n] = q[n], n++;
                opt[n] = 0;
                if (n < 3)
                    continue;
                for (size_t j = 0; j < n && e + 3 < sizeof esc; j++) {   /* man writes '-' as '\-' */
                    if (opt[j] == '-')
                        esc[e++] = '\\';
                    esc[e++] = opt[j];
                }
                esc[e] = 0;
                options++;
                cr_expect(strstr(man, esc) != NULL, "vlsim %s --help lists %s; the man page does not",
                          cmds[k].name, opt);
            }
        }
        pclose(f);
        cr_expect_geq(options, cmds[k].min_options, "too few options found in vlsim %s --help",
                      cmds[k].name);
        char sect[64];                   /* its own section: .SH OPTIONS FOR RUN */
        int len = snprintf(sect, sizeof sect, ".SH OPTIONS FOR ");
        for (const char *c = cmds[k].name; *c && len + 1 < (int)sizeof sect; c++)
            sect[len++] = (char)(*c - 'a' + 'A');
        sect[len] = 0;
        cr_expect(strstr(man, sect) != NULL, "the man page has no section %s", sect);
        cr_expect_eq(kit_sh("./vlsim --help | grep -q '^  %s '", cmds[k].name), 0,
                     "vlsim --help lacks %s", cmds[k].name);
    }
    free(man);
    cr_expect_eq(kit_sh("make -s install DESTDIR=%s/root PREFIX=/usr >/dev/null 2>&1", dir), 0);
    cr_expect_eq(kit_sh("test -x %s/root/usr/bin/vlsim && test -x %s/root/usr/bin/vlcalib", dir, dir), 0);
    cr_expect_eq(kit_sh("test -f %s/root/usr/share/vlsim/scenarios/default.yaml", dir), 0);
    cr_expect_eq(kit_sh("test -f %s/root/usr/share/man/man1/vlsim.1", dir), 0);
    cr_expect_eq(kit_sh("%s/root/usr/bin/vlsim --version | grep -q '^vlsim'", dir), 0);
}

/* vlsim run --plot DIR draws the three one-run pictures; drawing again into
 * the same DIR needs --force. */
Test(cli, run_plot)
{
    cr_assert_eq(kit_sh("./vlsim run scenarios/flash-crowd.yaml --duration 20 --replications 2 -q "
                    "--plot %s/pics", dir), 0);
    static const char *names[] = { "cdf", "budget", "series" };
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(kit_sh("test -s %s/pics/%s.png && test -s %s/pics/%s.svg", dir, names[k], dir,
                        names[k]), 0, "%s pictures missing", names[k]);
        cr_expect_eq(kit_sh("head -c 8 %s/pics/%s.png | od -An -tx1 | tr -d ' \\n' | grep -q '^89504e470d0a1a0a$'",
                        dir, names[k]), 0, "%s.png is not a PNG", names[k]);
    }
    cr_expect_eq(kit_sh("./vlsim run scenarios/flash-crowd.yaml --duration 5 --replications 2 -q "
                    "--plot %s/pics 2>/dev/null", dir), 2);
    cr_expect_eq(kit_sh("./vlsim run scenarios/flash-crowd.yaml --duration 5 --replications 2 -q "
                    "--plot %s/pics --force", dir), 0);
}
