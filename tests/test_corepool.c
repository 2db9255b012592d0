/* test_corepool.c — corecal's rounds pooled over several calibrations
 * (calib/realpipe/rp_cores.h rp_cores_pool, rp_corefile.h, `vlrealpipe
 * corepool`): the medians over every round, the cut at k and at the CPUs,
 * the file written and read back, and the errors a user meets.
 *
 * Independent source: every expected median is worked out by hand in the
 * comments from the rounds' units, ratio = units(k) / units(1) of the same
 * round. Nothing here measures the machine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/realpipe/rp_corefile.h"
#include "calib/realpipe/rp_cores.h"
#include "tests/kit_files.h"

TestSuite(corepool, .timeout = 30);

static void near(const char *what, double got, double want)
{
    cr_expect(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12, "%s: got %.15g, want %.15g", what, got,
              want);
}

/* A calibration of `threads` threads on `cpus` CPUs, its rounds' units
 * given k by k (u[k][round]). */
static void make(rp_cores_result *r, int threads, int cpus, int rounds, double seconds,
                 const double u[][4])
{
    memset(r, 0, sizeof *r);
    r->threads = threads;
    r->cpus = cpus;
    r->rounds = rounds;
    r->seconds = seconds;
    for (int k = 0; k < threads; k++)
        for (int rd = 0; rd < rounds; rd++)
            r->round_units[k][rd] = u[k][rd];
    rp_cores_summarise(r);
}

/* A: rounds k1 [100, 100], k2 [200, 180]: ratios 2.0, 1.8, median 1.9.
 * B: one round k1 [50], k2 [95]: ratio 1.9.
 * Pooled: ratios {2.0, 1.8, 1.9}, median 1.9, lo 1.8, hi 2.0; units k1
 * {100, 100, 50} median 100, k2 {200, 180, 95} median 180; seconds the
 * rounds' mean (1 + 1 + 0.25) / 3 = 0.75. A's own median of two is the mean
 * of the middle pair: (1.8 + 2.0) / 2 = 1.9, units k2 (200 + 180) / 2 = 190. */
Test(corepool, pool_by_hand)
{
    const double ua[2][4] = {{100, 100}, {200, 180}}, ub[2][4] = {{50}, {95}};
    rp_cores_result in[2], out;
    make(&in[0], 2, 2, 2, 1, ua);
    make(&in[1], 2, 2, 1, 0.25, ub);
    near("A's own s(2)", in[0].speedup[1], 1.9);
    near("A's own units(2)", in[0].units[1], 190);
    char err[256] = "";
    cr_assert_eq(rp_cores_pool(in, 2, &out, err, sizeof err), 0, "%s", err);
    cr_expect_eq(out.threads, 2);
    cr_expect_eq(out.rounds, 3);
    near("s(1)", out.speedup[0], 1);
    near("s(2)", out.speedup[1], 1.9);
    near("lo(2)", out.lo[1], 1.8);
    near("hi(2)", out.hi[1], 2.0);
    near("units(1)", out.units[0], 100);
    near("units(2)", out.units[1], 180);
    near("seconds", out.seconds, 0.75);
    /* the rounds in order, A's then B's */
    near("round 3, k2", out.round_units[1][2], 95);
}

/* One spell moves one calibration's median a lot, the pooled one little:
 * A (3 rounds, k2/k1 = 1.86, 1.87, 2.02: median 1.87), B and C (3 rounds
 * each at 1.99, 2.00, 2.01). Pooled ratios, sorted: 1.86 1.87 1.99 1.99
 * 2.00 2.00 2.01 2.01 2.02: the fifth, 2.00. */
Test(corepool, a_spell_moves_the_pool_less)
{
    const double ua[2][4] = {{100, 100, 100}, {186, 187, 202}};
    const double ub[2][4] = {{100, 100, 100}, {199, 200, 201}};
    rp_cores_result in[3], out;
    make(&in[0], 2, 2, 3, 1, ua);
    make(&in[1], 2, 2, 3, 1, ub);
    make(&in[2], 2, 2, 3, 1, ub);
    near("A alone", in[0].speedup[1], 1.87);
    char err[256] = "";
    cr_assert_eq(rp_cores_pool(in, 3, &out, err, sizeof err), 0, "%s", err);
    near("pooled", out.speedup[1], 2.00);
}

/* At most k and at most the CPUs, the least of the pooled files': k3
 * ratios 2.5, 2.4 (median 2.45) on 4 CPUs stay 2.45 alone; pooled with a
 * file on 2 CPUs (k3 ratio 2.2: median of {2.5, 2.4, 2.2} 2.4) they are cut
 * to 2. k2 ratios 2.1, 2.05, 1.9: median 2.05, cut to 2 (k = 2). A round
 * whose one thread did nothing has no ratio (B's second round): k2 over
 * {2.1, 2.05, 1.9} only. */
Test(corepool, cut_at_k_and_the_cpus)
{
    const double ua[3][4] = {{100, 100}, {210, 205}, {250, 240}};
    const double ub[3][4] = {{100, 0}, {190, 50}, {220, 60}};
    rp_cores_result in[2], out;
    make(&in[0], 3, 4, 2, 1, ua);
    make(&in[1], 3, 2, 2, 1, ub);
    near("4 CPUs, k3", in[0].speedup[2], 2.45);
    near("k2 at most 2", in[0].speedup[1], 2);
    char err[256] = "";
    cr_assert_eq(rp_cores_pool(in, 2, &out, err, sizeof err), 0, "%s", err);
    cr_expect_eq(out.cpus, 2);
    near("pooled k3, cut to the CPUs", out.speedup[2], 2);
    near("pooled k2, cut to k", out.speedup[1], 2);
    near("lo(2)", out.lo[1], 1.9);
    near("hi(2): the zero round left out", out.hi[1], 2.1);
}

Test(corepool, pool_errors)
{
    const double u2[2][4] = {{100}, {200}}, u3[3][4] = {{100}, {200}, {280}};
    rp_cores_result in[2], out;
    make(&in[0], 2, 2, 1, 1, u2);
    make(&in[1], 3, 2, 1, 1, u3);
    char err[256] = "";
    cr_expect_eq(rp_cores_pool(in, 2, &out, err, sizeof err), -1);
    cr_expect(strstr(err, "calibration 2 has 3 threads") != NULL, "%s", err);
    cr_expect_eq(rp_cores_pool(in, 0, &out, err, sizeof err), -1);
    cr_expect(strstr(err, "no calibration") != NULL, "%s", err);
    /* more rounds than a result holds */
    rp_cores_result *many = calloc(RP_CORES_ROUNDS / 50 + 1, sizeof *many);
    cr_assert_not_null(many);
    for (int i = 0; i <= RP_CORES_ROUNDS / 50; i++) {
        many[i].threads = 1;
        many[i].cpus = 1;
        many[i].rounds = 50;
    }
    cr_expect_eq(rp_cores_pool(many, RP_CORES_ROUNDS / 50 + 1, &out, err, sizeof err), -1);
    cr_expect(strstr(err, "more than 100 rounds") != NULL, "%s", err);
    free(many);
}

/* Written and read back: the same rounds (to rp_flow's 6 digits), hence the
 * same summary. Ratios 677.93 / 359.86 = 1.88387, 720.125 / 361.5 =
 * 1.99205, 700 / 358.25 = 1.95394: the median 1.9539; units(1) the median
 * 359.86. */
Test(corepool, file_round_trip)
{
    const double u[2][4] = {{359.86, 361.5, 358.25}, {677.93, 720.125, 700}};
    rp_cores_result r, back;
    make(&r, 2, 2, 3, 1, u);
    char *text = rp_corefile_text(&r, "a test");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "# a test\n") != NULL, "%s", text);
    cr_expect(strstr(text, "speedup: [1.0000, 1.9539]\n") != NULL, "%s", text);
    cr_expect(strstr(text, "units_per_s: [359.86, 700.00]\n") != NULL, "%s", text);
    cr_expect(strstr(text, "cpus: 2\n") != NULL, "%s", text);
    char dir[64], path[128], err[256] = "";
    kit_tmpdir(dir, sizeof dir, "corepool");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    kit_write_file(path, text);
    free(text);
    cr_assert_eq(rp_corefile_read(path, &back, err, sizeof err), 0, "%s", err);
    cr_expect_eq(back.threads, 2);
    cr_expect_eq(back.rounds, 3);
    cr_expect_eq(back.cpus, 2);
    for (int k = 0; k < 2; k++)
        for (int rd = 0; rd < 3; rd++)
            cr_expect(fabs(back.round_units[k][rd] - u[k][rd]) <= 1e-6 * u[k][rd], "k%d round %d: %g",
                      k + 1, rd, back.round_units[k][rd]);
    near("s(2) read back", back.speedup[1], r.speedup[1]);
    kit_rm_rf(dir);
}

/* Each bad file is an error naming the file and, where there is one, the
 * line and the key. */
Test(corepool, file_errors)
{
    struct { const char *text, *want; } bad[] = {
        {"# before 2026-12-04\nunits_per_s: [360, 720]\nspeedup: [1, 2]\n", "no \"cpus: C\" line"},
        {"cpus: 2\nspeedup: [1, 2]\n", "no \"rounds_k1: [...]\" line"},
        {"cpus: 0\nrounds_k1: [1]\n", ":1: cpus: expected a whole number"},
        {"cpus: 2\nrounds_k2: [1]\n", ":2: rounds_k2: expected rounds_k1"},
        {"cpus: 2\nrounds_k1: [1, 2]\nrounds_k2: [3]\n", ":3: rounds_k2: expected a list of as many"},
        {"cpus: 2\nrounds_k1: [1, x]\n", ":2: rounds_k1: expected a list of 1 to 100"},
        {"cpus: 2\nrounds_k1: [-1]\n", ":2: rounds_k1: a count below 0"},
    };
    char dir[64], path[128], err[512];
    kit_tmpdir(dir, sizeof dir, "corepool");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    rp_cores_result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kit_write_file(path, bad[i].text);
        err[0] = 0;
        cr_expect_eq(rp_corefile_read(path, &r, err, sizeof err), -1, "case %zu", i);
        cr_expect(strstr(err, path) != NULL, "case %zu names no file: %s", i, err);
        cr_expect(strstr(err, bad[i].want) != NULL, "case %zu: %s", i, err);
    }
    cr_expect_eq(rp_corefile_read("/nonexistent/c.yaml", &r, err, sizeof err), -1);
    cr_expect(strstr(err, "cannot open /nonexistent/c.yaml") != NULL, "%s", err);
    kit_rm_rf(dir);
}

/* The command as a user runs it: two files pooled into a third (s(2) by
 * hand: ratios 2.0, 1.8, 1.9, median 1.9); a missing file and an existing
 * --out without --force are exit status 2 with the file named, and leave
 * the existing file as it was. */
Test(corepool, the_command)
{
    char dir[64];
    kit_tmpdir(dir, sizeof dir, "corepool");
    char a[128], b[128], out[128];
    snprintf(a, sizeof a, "%s/a.yaml", dir);
    snprintf(b, sizeof b, "%s/b.yaml", dir);
    snprintf(out, sizeof out, "%s/pooled.yaml", dir);
    kit_write_file(a, "cpus: 2\nrounds_k1: [100, 100]\nrounds_k2: [200, 180]\n");
    kit_write_file(b, "cpus: 2\nrounds_k1: [50]\nrounds_k2: [95]\n");
    cr_assert_eq(kit_sh("./vlrealpipe corepool %s %s --out %s > /dev/null", a, b, out), 0);
    char *text = kit_slurp(out);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "speedup: [1.0000, 1.9000]\n") != NULL, "%s", text);
    cr_expect(strstr(text, "rounds_k2: [200, 180, 95]\n") != NULL, "%s", text);
    cr_expect_eq(kit_sh("./vlrealpipe corepool %s %s --out %s > /dev/null 2> %s/err", a, b, out, dir), 2);
    char errpath[160];
    snprintf(errpath, sizeof errpath, "%s/err", dir);
    char *msg = kit_slurp(errpath);
    cr_expect(msg && strstr(msg, out) != NULL, "%s", msg ? msg : "(none)");
    free(msg);
    char *again = kit_slurp(out);
    cr_expect_str_eq(again, text, "the existing file changed");
    free(again);
    free(text);
    cr_expect_eq(kit_sh("./vlrealpipe corepool %s %s/none.yaml 2> %s/err", a, dir, dir), 2);
    msg = kit_slurp(errpath);
    cr_expect(msg && strstr(msg, "none.yaml") != NULL, "%s", msg ? msg : "(none)");
    free(msg);
    cr_expect_eq(kit_sh("./vlrealpipe corepool 2> /dev/null"), 2);
    kit_rm_rf(dir);
}
