/* test_stallcal.c — vlrealpipe stallcal (calib/realpipe/rp_stall.h): the
 * host's spells of not running an idle core, summarised from the late
 * wakes, and its file through `vlrealpipe scenario --stall-calib` into the
 * simulator's cpu.stalls.
 *
 * Independent source: the summary of five wakes worked by hand (the spells'
 * lengths, their rate, quantiles by GSL's linear interpolation, which of
 * them overlap a spell of the other core by the threshold); the files by
 * what the scenario must then hold. */
#include <string.h>

#include "tests/kit.h"
#include "tests/kit_files.h"
#include "calib/realpipe/rp_stall.h"

TestSuite(stallcal, .timeout = 120);

#define RP "tests/data/realpipe/"

/* Two cores, 10 s, a 1 ms period, spells from 5 ms:
 *   core 0 due 100 late 6   -> a spell of 6.5 ms, [100, 106)
 *   core 0 due 500 late 2   -> under the threshold: not a spell
 *   core 1 due 102 late 10  -> 10.5 ms, [102, 112): overlaps core 0's by 4 ms, under 5
 *   core 1 due 2000 late 20 -> 20.5 ms, [2000, 2020)
 *   core 0 due 2003 late 30 -> 30.5 ms, [2003, 2033): overlaps core 1's by 17: both joint
 * 4 spells over 2 cores x 10 s: 0.2 a second a core. Lengths 6.5, 10.5,
 * 20.5, 30.5: mean 17, p50 (10.5 + 20.5) / 2 = 15.5, p90 at 0.9 x 3 = 2.7:
 * 20.5 + 0.7 x 10 = 27.5, max 30.5; their time 68 ms of 20 000: 0.0034. */
Test(stallcal, summary_by_hand)
{
    const rp_stall_wake w[] = {{0, 100, 6}, {0, 500, 2}, {1, 102, 10}, {1, 2000, 20}, {0, 2003, 30}};
    rp_stall_result r;
    char err[256] = "";
    cr_assert_eq(rp_stall_summarize(w, 5, 20000, 2, 10, 1, 5, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.nspells, 4);
    cr_expect_eq(r.spells[0], 2);
    cr_expect_eq(r.spells[1], 2);
    cr_expect_eq(r.wakes, 20000);
    cr_expect_eq(r.joint, 2);
    near("per_s", r.per_s, 0.2, EXACT);
    near("mean", r.mean_ms, 17.0, EXACT);
    near("p50", r.p50_ms, 15.5, EXACT);
    near("p90", r.p90_ms, 27.5, EXACT);
    near("max", r.max_ms, 30.5, EXACT);
    near("busy", r.busy_share, 68.0 / 20000.0, EXACT);
    near("ms[0]", r.ms[0], 6.5, EXACT);
    near("ms[3]", r.ms[3], 30.5, EXACT);
    rp_stall_free(&r);
}

/* No wake came late: no spell, a rate of 0, nothing to draw from. */
Test(stallcal, no_spell)
{
    const rp_stall_wake w[] = {{0, 100, 0.2}, {1, 200, 4.99}};
    rp_stall_result r;
    char err[256] = "";
    cr_assert_eq(rp_stall_summarize(w, 2, 100, 2, 1, 1, 5, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.nspells, 0);
    cr_expect_eq(r.per_s, 0);
    cr_expect_eq(r.max_ms, 0);
    rp_stall_free(&r);
    cr_expect_eq(rp_stall_summarize(w, 2, 100, 0, 1, 1, 5, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "stallcal"), "%s", err);
    rp_stall_free(&r);
}

/* A short stallcal: the file and its samples beside it; its line is either
 * "stalls: none" or names those samples, as many lengths as spells counted
 * (each at least the threshold); a second run without --force is refused,
 * exit 2, the files left as they were. */
Test(stallcal, cli_files)
{
    char dir[64], yaml[128], samples[128];
    kit_tmpdir(dir, sizeof dir, "stallcal");
    snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
    snprintf(samples, sizeof samples, "%s/s.samples", dir);
    cr_assert_eq(kit_sh("./vlrealpipe stallcal --seconds 0.5 --out %s > /dev/null", yaml), 0);
    char *text = kit_slurp(yaml);
    cr_assert_not_null(text);
    long spells = -1;
    const char *s = strstr(text, "# spells: ");
    cr_assert_not_null(s, "%s", text);
    cr_assert_eq(sscanf(s, "# spells: %ld,", &spells), 1);
    if (spells == 0) {
        cr_expect(strstr(text, "\nstalls: none\n"), "%s", text);
    } else {
        cr_expect(strstr(text, "\nstalls: {per_s: ") && strstr(text, "/s.samples\"}}\n"), "%s", text);
        char *body = kit_slurp(samples);
        cr_assert_not_null(body);
        long n = 0;
        for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n"))
            if (line[0] != '#') {
                cr_expect_geq(strtod(line, NULL), RP_STALL_THR_MS);
                n++;
            }
        cr_expect_eq(n, spells);
        free(body);
    }
    cr_expect_eq(kit_sh("./vlrealpipe stallcal --seconds 0.2 --out %s > /dev/null 2> %s/err", yaml, dir), 2);
    char errp[128];
    snprintf(errp, sizeof errp, "%s/err", dir);
    char *err = kit_slurp(errp);
    cr_expect(err && strstr(err, "already exists"), "%s", err ? err : "");
    char *again = kit_slurp(yaml);
    cr_expect_str_eq(again, text);
    free(err);
    free(again);
    free(text);
    kit_rm_rf(dir);
}

/* --stall-calib: a file's stalls line becomes the scenario's cpu.stalls
 * (and vlsim runs it), "stalls: none" leaves it out, a file with neither is
 * refused (exit 2, naming the file), with no scenario written. */
Test(stallcal, into_the_scenario)
{
    char dir[64];
    kit_tmpdir(dir, sizeof dir, "stallscen");
    char path[256], body[512];
    snprintf(path, sizeof path, "%s/len.samples", dir);
    kit_write_file(path, "# lengths\n6\n12\n30\n");
    snprintf(path, sizeof path, "%s/on.yaml", dir);
    snprintf(body, sizeof body, "# spells: 3\nstalls: {per_s: 0.5, ms: {dist: empirical, file: \"%s/len.samples\"}}\n",
             dir);
    kit_write_file(path, body);
    snprintf(path, sizeof path, "%s/none.yaml", dir);
    kit_write_file(path, "# spells: 0\nstalls: none\n");
    snprintf(path, sizeof path, "%s/bad.yaml", dir);
    kit_write_file(path, "# not a stallcal file\n");
    const char *base = "./vlrealpipe scenario --calib " RP "tiny-fixture.yaml --decode-calib " RP
                       "video-fixture.yaml --fps 10 --warmup 0.5 --sim-duration 3 --sim-reps 1 --cores 2";
    cr_assert_eq(kit_sh("%s --stall-calib %s/on.yaml --out %s/on-s.yaml > /dev/null", base, dir, dir), 0);
    snprintf(path, sizeof path, "%s/on-s.yaml", dir);
    char *scen = kit_slurp(path);
    cr_assert_not_null(scen);
    snprintf(body, sizeof body, "stalls: {per_s: 0.5, ms: {dist: empirical, file: \"%s/len.samples\"}}, ", dir);
    cr_expect(strstr(scen, body), "%s", scen);
    free(scen);
    cr_expect_eq(kit_sh("./vlsim run %s/on-s.yaml > %s/on.txt 2> /dev/null", dir, dir), 0);
    snprintf(path, sizeof path, "%s/on.txt", dir);
    char *out = kit_slurp(path);
    cr_expect(out && strstr(out, "waited for the host to run it (cpu.stalls)"), "%s", out ? out : "");
    free(out);
    cr_assert_eq(kit_sh("%s --stall-calib %s/none.yaml --out %s/none-s.yaml > /dev/null", base, dir, dir), 0);
    snprintf(path, sizeof path, "%s/none-s.yaml", dir);
    scen = kit_slurp(path);
    cr_assert_not_null(scen);
    cr_expect_null(strstr(scen, "stalls"), "%s", scen);
    free(scen);
    cr_expect_eq(kit_sh("%s --stall-calib %s/bad.yaml --out %s/bad-s.yaml > /dev/null 2> %s/err", base, dir, dir,
                        dir), 2);
    snprintf(path, sizeof path, "%s/err", dir);
    char *err = kit_slurp(path);
    cr_expect(err && strstr(err, "bad.yaml") && strstr(err, "stallcal"), "%s", err ? err : "");
    free(err);
    snprintf(path, sizeof path, "%s/bad-s.yaml", dir);
    cr_expect_not(kit_exists(path));
    kit_rm_rf(dir);
}
