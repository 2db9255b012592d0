/* test_stallcal.c — vlrealpipe stallcal (calib/realpipe/rp_stall.h): the
 * host's spells of not running an idle core, summarised from the late
 * wakes, and its file through `vlrealpipe scenario --stall-calib` into the
 * simulator's cpu.stalls.
 *
 * Independent source: the summary of five wakes worked by hand (the spells'
 * lengths, their rate, quantiles by GSL's linear interpolation, which of
 * them overlap a spell of the other core by the threshold); the poll
 * window's split of several periods by the Poisson likelihood ratio worked
 * by hand, and the seconds each period gets by the 1-s slots taken in turn;
 * the files by what the scenario must then hold. */
#include <string.h>
#include <unistd.h>

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
    const rp_stall_wake w[] = {{0, 100, 6, 0}, {0, 500, 2, 0}, {1, 102, 10, 0}, {1, 2000, 20, 0},
                               {0, 2003, 30, 0}};
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
    /* one period: nothing to split, no window; all 4 spells in its 20 core-seconds */
    cr_expect_eq(r.nperiods, 1);
    cr_expect_eq(r.split, 0);
    cr_expect_eq(r.poll_ms, 0.0);
    cr_expect_eq(r.lr, 0.0);
    near("period_ms", r.period_ms, 1.0, EXACT);
    cr_expect_eq(r.period_spells[0], 4);
    near("period_core_s", r.period_core_s[0], 20.0, EXACT);
    rp_stall_free(&r);
}

/* No wake came late: no spell, a rate of 0, nothing to draw from. */
Test(stallcal, no_spell)
{
    const rp_stall_wake w[] = {{0, 100, 0.2, 0}, {1, 200, 4.99, 0}};
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

/* ---- the poll window: the split of the periods (rp_stall_poll_fit) ---------- */

/* A Poisson count N in T has log-likelihood N ln(N / T) - N at its own
 * rate; a split into lo and hi beats one rate for all by
 *   x = 2 (lo ln(lo / T_lo) + hi ln(hi / T_hi) - N ln(N / T))
 * (the -N terms cancel: lo + hi = N). Only splits whose longer side's rate
 * is the higher count, the largest x wins, and it must reach 3.84.
 *
 * Spells {1, 1, 20, 20} in 10 core-seconds each: N = 42, T = 40.
 *   split 1: 1 in 10 | 41 in 30: 2 (ln 0.1 + 41 ln(41/30) - 42 ln 1.05)
 *            = 2 (-2.302585 + 12.807384 - 2.049187) = 16.9112
 *   split 2: 2 in 20 | 40 in 20: 2 (2 ln 0.1 + 40 ln 2 - 42 ln 1.05)
 *            = 2 (-4.605170 + 27.725887 - 2.049187) = 42.1431
 *   split 3: 22 in 30 | 20 in 10: 2 (22 ln(22/30) + 20 ln 2 - 42 ln 1.05)
 *            = 2 (-6.823411 + 13.862944 - 2.049187) = 9.9807
 * so split 2 (the first longer period), lr 42.1431 >= 3.84.
 * Equal rates {10, 10, 10} in {10, 10, 10}: no split raises the rate
 * (1 = 1): split 0, lr 0. A falling rate {20, 1} in {10, 10}: 0.1 < 2, no
 * split counts: split 0, lr 0. A weak rise {0, 2} in {10, 10}: 0 in 10 |
 * 2 in 10 against 2 in 20: 2 (0 + 2 ln 0.2 - 2 ln 0.1) = 4 ln 2 = 2.7726
 * < 3.84: split 0, but the best statistic is still reported. */
Test(stallcal, poll_fit_by_hand)
{
    int split = -1;
    double lr = -1;
    rp_stall_poll_fit((const long[]){1, 1, 20, 20}, (const double[]){10, 10, 10, 10}, 4, &split, &lr);
    cr_expect_eq(split, 2);
    near("lr, split 2", lr, 2 * (2 * log(0.1) + 40 * log(2) - 42 * log(1.05)), 1e-12);
    near("lr by hand", lr, 42.14306, 1e-6);

    split = -1, lr = -1;
    rp_stall_poll_fit((const long[]){10, 10, 10}, (const double[]){10, 10, 10}, 3, &split, &lr);
    cr_expect_eq(split, 0, "equal rates");
    cr_expect_eq(lr, 0.0);

    split = -1, lr = -1;
    rp_stall_poll_fit((const long[]){20, 1}, (const double[]){10, 10}, 2, &split, &lr);
    cr_expect_eq(split, 0, "a falling rate is no window");
    cr_expect_eq(lr, 0.0);

    split = -1, lr = -1;
    rp_stall_poll_fit((const long[]){0, 2}, (const double[]){10, 10}, 2, &split, &lr);
    cr_expect_eq(split, 0, "a weak rise, under 3.84");
    near("lr of the weak rise", lr, 4 * log(2), 1e-12);
    cr_expect(lr < RP_STALL_LR_MIN);

    split = -1, lr = -1;
    rp_stall_poll_fit((const long[]){7}, (const double[]){10}, 1, &split, &lr);
    cr_expect_eq(split, 0, "one period: nothing to split");
    cr_expect_eq(lr, 0.0);
}

/* Two cores for 10.5 s, periods {0.1, 0.2, 0.3, 1} ms taken in turn a
 * second each (RP_STALL_CYCLE_MS): 10 whole 1-s slots, periods 0 and 1
 * three each (slots 0, 4, 8 and 1, 5, 9), 2 and 3 two each (2, 6 and 3, 7),
 * and the last half second in period 2 (slot 10): {3, 3, 2.5, 2} s a core,
 * {6, 6, 5, 4} core-seconds.
 * Wakes 5 ms late or more:
 *   core 0 due 100 late 6, period 0                  (1 spell in period 0)
 *   core 0 due 2000, 2100, ..., 2500 late 5.85, period 2: 6 spells of
 *     5.85 + 0.3 / 2 = 6.0 ms
 *   core 1 due 3000, 3100, 3200, 3300 late 9.5, period 3: 4 of 9.5 + 1 / 2
 *     = 10.0 ms
 * and core 1 due 1000 late 4.9 (period 1): under the threshold, no spell.
 * By period {1, 0, 6, 4} in {6, 6, 5, 4}; N = 11 in 21:
 *   split 1: 1 in 6 | 10 in 15:  2 (ln(1/6) + 10 ln(10/15) - 11 ln(11/21)) = 2.5330
 *   split 2: 1 in 12 | 10 in 9:  2 (ln(1/12) + 10 ln(10/9) - 11 ln(11/21))
 *            = 2 (-2.484907 + 1.053605 + 7.112899) = 11.3632
 *   split 3: 7 in 17 | 4 in 4:   2 (7 ln(7/17) + 0 - 11 ln(11/21)) = 1.8036
 * so split 2, the window between 0.2 and 0.3: poll_ms 0.25; from period 2
 * on: 10 spells in 9 core-seconds, per_s 1.1111; core 0 six, core 1 four
 * (the period-0 spell not counted); lengths 6 x 6.0 and 4 x 10.0: mean
 * (36 + 40) / 10 = 7.6, p50 at 0.5 x 9 = 4.5 between the 5th and 6th
 * (6.0, 6.0) = 6.0, p90 at 8.1: 10.0, max 10.0; no spell of core 0
 * (2000-2506) overlaps one of core 1 (3000-3310): joint 0; their time 76 ms
 * of 9 000. */
Test(stallcal, periods_by_hand)
{
    const double periods[] = {0.1, 0.2, 0.3, 1};
    rp_stall_wake w[12];
    int n = 0;
    w[n++] = (rp_stall_wake){0, 100, 6, 0};
    for (int i = 0; i < 6; i++)
        w[n++] = (rp_stall_wake){0, 2000 + 100 * i, 5.85, 2};
    for (int i = 0; i < 4; i++)
        w[n++] = (rp_stall_wake){1, 3000 + 100 * i, 9.5, 3};
    w[n++] = (rp_stall_wake){1, 1000, 4.9, 1};
    rp_stall_result r;
    char err[256] = "";
    cr_assert_eq(rp_stall_summarize_periods(w, n, 50000, 2, 10.5, periods, 4, 5, &r, err, sizeof err), 0,
                 "%s", err);
    cr_expect_eq(r.nperiods, 4);
    const double core_s[] = {6, 6, 5, 4};
    const long by_period[] = {1, 0, 6, 4};
    for (int i = 0; i < 4; i++) {
        near("periods_ms", r.periods_ms[i], periods[i], EXACT);
        near("period_core_s", r.period_core_s[i], core_s[i], EXACT);
        cr_expect_eq(r.period_spells[i], by_period[i], "period %d: %ld spells", i, r.period_spells[i]);
    }
    cr_expect_eq(r.split, 2);
    near("lr", r.lr, 2 * (log(1.0 / 12) + 10 * log(10.0 / 9) - 11 * log(11.0 / 21)), 1e-12);
    near("lr by hand", r.lr, 11.3632, 1e-5);
    near("poll_ms", r.poll_ms, 0.25, EXACT);
    near("period_ms: the first counted", r.period_ms, 0.3, EXACT);
    cr_expect_eq(r.wakes, 50000);
    cr_expect_eq(r.nspells, 10);
    cr_expect_eq(r.spells[0], 6);
    cr_expect_eq(r.spells[1], 4);
    cr_expect_eq(r.joint, 0);
    near("per_s", r.per_s, 10.0 / 9, EXACT);
    near("mean", r.mean_ms, 7.6, EXACT);
    near("p50", r.p50_ms, 6.0, EXACT);
    near("p90", r.p90_ms, 10.0, EXACT);
    near("max", r.max_ms, 10.0, EXACT);
    near("ms[0]", r.ms[0], 6.0, EXACT);
    near("busy", r.busy_share, 76.0 / 9000, EXACT);
    rp_stall_free(&r);

    /* decreasing periods are refused */
    const double down[] = {0.3, 0.1};
    cr_expect_eq(rp_stall_summarize_periods(w, n, 1, 2, 10, down, 2, 5, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "increasing"), "%s", err);
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

#define STALL_SCEN "./vlrealpipe scenario --calib " RP "tiny-fixture.yaml --decode-calib " RP \
                   "video-fixture.yaml --fps 10 --warmup 0.5 --sim-duration 3 --sim-reps 1 --cores 2"

/* A stallcal file in dir, on.yaml (its lengths beside it, len.samples),
 * whose stalls line ends in `tail` ("" or ", poll_ms: W"), goes into the
 * scenario dir/on-s.yaml: the line whole, followed by `after`; vlsim runs
 * it and its summary says `says`. */
static void stall_line_into_scenario(const char *dir, const char *tail, const char *after,
                                     const char *says)
{
    char path[256], body[512];
    snprintf(path, sizeof path, "%s/len.samples", dir);
    kit_write_file(path, "# lengths\n6\n12\n30\n");
    snprintf(path, sizeof path, "%s/on.yaml", dir);
    snprintf(body, sizeof body, "# spells: 3\nstalls: {per_s: 0.5, ms: {dist: empirical, file: \"%s/len.samples\"}"
             "%s}\n", dir, tail);
    kit_write_file(path, body);
    cr_assert_eq(kit_sh("%s --stall-calib %s/on.yaml --out %s/on-s.yaml > /dev/null", STALL_SCEN, dir, dir), 0);
    snprintf(path, sizeof path, "%s/on-s.yaml", dir);
    char *scen = kit_slurp(path);
    cr_assert_not_null(scen);
    snprintf(body, sizeof body, "stalls: {per_s: 0.5, ms: {dist: empirical, file: \"%s/len.samples\"}%s}%s", dir,
             tail, after);
    cr_expect(strstr(scen, body), "%s", scen);
    free(scen);
    cr_expect_eq(kit_sh("./vlsim run %s/on-s.yaml > %s/on.txt 2> /dev/null", dir, dir), 0);
    snprintf(path, sizeof path, "%s/on.txt", dir);
    char *out = kit_slurp(path);
    cr_expect(out && strstr(out, says), "%s", out ? out : "");
    free(out);
}

/* --stall-calib: a file's stalls line becomes the scenario's cpu.stalls
 * (and vlsim runs it), "stalls: none" leaves it out, a file with neither is
 * refused (exit 2, naming the file), with no scenario written. */
Test(stallcal, into_the_scenario)
{
    char dir[64];
    kit_tmpdir(dir, sizeof dir, "stallscen");
    char path[256];
    stall_line_into_scenario(dir, "", ", ", "waited for the host to run it (cpu.stalls)");
    snprintf(path, sizeof path, "%s/none.yaml", dir);
    kit_write_file(path, "# spells: 0\nstalls: none\n");
    snprintf(path, sizeof path, "%s/bad.yaml", dir);
    kit_write_file(path, "# not a stallcal file\n");
    cr_assert_eq(kit_sh("%s --stall-calib %s/none.yaml --out %s/none-s.yaml > /dev/null", STALL_SCEN, dir, dir), 0);
    snprintf(path, sizeof path, "%s/none-s.yaml", dir);
    char *scen = kit_slurp(path);
    cr_assert_not_null(scen);
    cr_expect_null(strstr(scen, "stalls"), "%s", scen);
    free(scen);
    cr_expect_eq(kit_sh("%s --stall-calib %s/bad.yaml --out %s/bad-s.yaml > /dev/null 2> %s/err", STALL_SCEN, dir,
                        dir, dir), 2);
    snprintf(path, sizeof path, "%s/err", dir);
    char *err = kit_slurp(path);
    cr_expect(err && strstr(err, "bad.yaml") && strstr(err, "stallcal"), "%s", err ? err : "");
    free(err);
    snprintf(path, sizeof path, "%s/bad-s.yaml", dir);
    cr_expect_not(kit_exists(path));
    kit_rm_rf(dir);
}

/* --periods and --poll-ms: refusals, exit 2, the message naming --periods
 * and no file written (--periods is read before anything runs; both
 * together are refused before measuring):
 *   --periods 0.3,0.1            decreasing
 *   --periods 0.1,0.3 --poll-ms 0.2   one measures the window, the other gives one
 *   --periods x                  not a number */
Test(stallcal, cli_periods_refused)
{
    char dir[64];
    kit_tmpdir(dir, sizeof dir, "stallper");
    const char *args[] = {"--periods 0.3,0.1", "--periods 0.1,0.3 --poll-ms 0.2", "--periods x"};
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(kit_sh("./vlrealpipe stallcal --seconds 0.2 %s --out %s/r.yaml > /dev/null 2> %s/err",
                            args[i], dir, dir), 2, "%s", args[i]);
        char path[128];
        snprintf(path, sizeof path, "%s/err", dir);
        char *err = kit_slurp(path);
        cr_expect(err && strstr(err, "--periods"), "%s: %s", args[i], err ? err : "");
        free(err);
        snprintf(path, sizeof path, "%s/r.yaml", dir);
        cr_expect_not(kit_exists(path), "%s: wrote %s", args[i], path);
        snprintf(path, sizeof path, "%s/r.samples", dir);
        cr_expect_not(kit_exists(path), "%s: wrote %s", args[i], path);
    }
    kit_rm_rf(dir);
}

/* A real stallcal with --poll-ms 0.25: the window measured before goes
 * into the stalls line as poll_ms: 0.25 when spells were seen; with none,
 * "stalls: none" (the file's last line either way). */
Test(stallcal, cli_poll_ms)
{
    char dir[64], yaml[128];
    kit_tmpdir(dir, sizeof dir, "stallpoll");
    snprintf(yaml, sizeof yaml, "%s/p.yaml", dir);
    cr_assert_eq(kit_sh("./vlrealpipe stallcal --seconds 0.5 --poll-ms 0.25 --out %s > /dev/null", yaml), 0);
    char *text = kit_slurp(yaml);
    cr_assert_not_null(text);
    long spells = -1;
    const char *s = strstr(text, "# spells: ");
    cr_assert_not_null(s, "%s", text);
    cr_assert_eq(sscanf(s, "# spells: %ld,", &spells), 1);
    size_t len = strlen(text);
    cr_assert(len > 1 && text[len - 1] == '\n', "%s", text);
    text[len - 1] = '\0';
    const char *last = strrchr(text, '\n');
    last = last ? last + 1 : text;
    if (spells == 0) {
        cr_expect_str_eq(last, "stalls: none");
    } else {
        cr_expect(!strncmp(last, "stalls: {per_s: ", 16), "%s", last);
        cr_expect(strstr(last, ", poll_ms: 0.25}"), "%s", last);
    }
    free(text);
    kit_rm_rf(dir);
}

/* --seconds 2 --periods 0.5,1: the sleeps a second each in turn, so each
 * period has 1 s on every one of the process's CPUs: core_s = CPUs x 1.0
 * (2.0 on 2). The file has the table, exactly two rows (0.5, then 1) and
 * per_s = spells / core_s to its 4 decimals; "# spells: N" counts the rows
 * from the split on: both rows with no window found, the second with one. */
Test(stallcal, cli_periods_table)
{
    char dir[64], yaml[128];
    kit_tmpdir(dir, sizeof dir, "stalltab");
    snprintf(yaml, sizeof yaml, "%s/q.yaml", dir);
    cr_assert_eq(kit_sh("./vlrealpipe stallcal --seconds 2 --periods 0.5,1 --out %s > /dev/null", yaml), 0);
    char *text = kit_slurp(yaml);
    cr_assert_not_null(text);
    int cpus = 0;
    const char *s = strstr(text, "each of ");
    cr_assert(s && sscanf(s, "each of %d CPUs", &cpus) == 1, "%s", text);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cr_expect(cpus >= 1 && (online < 1 || cpus <= online), "%d CPUs, %ld online", cpus, online);
    const char *t = strstr(text, "# sleep_ms  spells  core_s  per_s\n");
    cr_assert_not_null(t, "%s", text);
    t = strchr(t, '\n') + 1;
    const double want_ms[] = {0.5, 1};
    long row_spells[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        double ms = 0, cs = 0, per = -1;
        cr_assert_eq(sscanf(t, "# %lf %ld %lf %lf", &ms, &row_spells[i], &cs, &per), 4, "row %d: %.80s", i, t);
        near("sleep_ms", ms, want_ms[i], EXACT);
        near("core_s: CPUs x 1 s", cs, cpus * 1.0, EXACT);
        cr_expect(fabs(per - (double)row_spells[i] / cs) <= 5e-5 + 1e-12, "per_s %g: %ld in %g",
                  per, row_spells[i], cs);   /* printed to 4 decimals */
        t = strchr(t, '\n') + 1;
    }
    double x;
    long l;
    cr_expect_neq(sscanf(t, "# %lf %ld", &x, &l), 2, "a third row: %.80s", t);
    long spells = -1;
    s = strstr(text, "# spells: ");
    cr_assert(s && sscanf(s, "# spells: %ld,", &spells) == 1, "%s", text);
    if (strstr(text, "# the poll window: "))
        cr_expect_eq(spells, row_spells[1], "%s", text);
    else
        cr_expect(strstr(text, "# no poll window") && spells == row_spells[0] + row_spells[1], "%s", text);
    free(text);
    kit_rm_rf(dir);
}

/* A stalls line with poll_ms (stallcal --periods or --poll-ms) goes whole
 * into the scenario's cpu.stalls, poll_ms with it, and vlsim's summary then
 * reports the wake-ups within the window (cpu.stalls.poll_ms 0.25). */
Test(stallcal, into_the_scenario_with_poll_ms)
{
    char dir[64];
    kit_tmpdir(dir, sizeof dir, "stallpolls");
    stall_line_into_scenario(dir, ", poll_ms: 0.25", "",
                             "came while the host still polled the core (cpu.stalls.poll_ms 0.25)");
    kit_rm_rf(dir);
}
