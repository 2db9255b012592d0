/* test_history.c — calib/realpipe/history.sh, as a user runs it: on a folder
 * of kept experiments laid out as validate.sh keeps them, its CSV holds each
 * one's rows exactly as resim.sh gives them (one of them moved after its
 * scenario was written: its calibration files are read where it lies now),
 * and its table's mean, SD and within-target count are those of the rows'
 * errors computed here by hand, and so is -s's stage row; -n takes the latest; bad use is refused
 * with exit 2 and nothing overwritten. The real runs are short
 * `vlrealpipe run`s (their figures are not asserted). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_files.h"

#define RP "tests/data/realpipe/"

/* A kept experiment at dir/name: one load point (0.30) whose scenario reads
 * calibration files copied into its own folder, and one real run. */
static void kept(const char *dir, const char *name, int fps, int seed)
{
    char d[512];
    snprintf(d, sizeof d, "%s/%s/runs/0.30", dir, name);
    cr_assert_eq(kit_sh("mkdir -p %s && cp " RP "tiny-fixture.* " RP "video-fixture.* %s/", d, d), 0);
    cr_assert_eq(kit_sh("./vlrealpipe scenario --calib %s/tiny-fixture.yaml --decode-calib %s/video-fixture.yaml"
                        " --fps %d --warmup 0.5 --sim-duration 5 --sim-reps 1 --out %s/scenario.yaml > /dev/null",
                        d, d, fps, d), 0);
    cr_assert_eq(kit_sh("./vlrealpipe run --fps %d --duration 2 --warmup 0.5 --seed %d --out %s/spans-1.csv"
                        " 2> /dev/null", fps, seed, d), 0);
    cr_assert_eq(kit_sh("echo 0.30,1,150,1.0,1,1.6,0.07,1.0,1,0.00 > %s/%s/probe.csv", dir, name), 0);
}

/* the rel_err of (load, stage, metric) in a rows CSV's text, or NAN */
static double rel_err(const char *csv, const char *key)
{
    const char *p = strstr(csv, key);
    if (!p)
        return NAN;
    p = strchr(p + 1, '\n');   /* the row's end */
    if (!p)
        return NAN;
    const char *q = p;
    while (q > csv && q[-1] != ',')
        q--;
    return strtod(q, NULL);
}

Test(history, rows_are_resims_and_the_table_their_mean, .timeout = 180)
{
    char dir[256], hist[300], path[600];
    kit_tmpdir(dir, sizeof dir, "history");
    snprintf(hist, sizeof hist, "%s/hist", dir);
    kept(hist, "2026-01-01T000000Z", 20, 1);
    /* the first one's compared runs' own figures (validate.sh's spread-used.csv;
     * invented here): p50 10 and 12 ms, p95 and p99 alike in both */
    snprintf(path, sizeof path, "%s/2026-01-01T000000Z/runs/0.30/spread-used.csv", hist);
    kit_write_file(path, "load,run,frames,p50,p95,p99,drop_rate_pct\n0.30,0,150,10,20,30,0\n0.30,1,150,12,20,30,0\n");
    /* the second one is written elsewhere and moved in, as a copy would be */
    kept(dir, "elsewhere", 40, 2);
    cr_assert_eq(kit_sh("mv %s/elsewhere %s/2026-01-02T000000Z", dir, hist), 0);
    /* a copy validate.sh was still writing is not a kept experiment */
    cr_assert_eq(kit_sh("mkdir -p %s/2026-01-03T000000Z.partial/runs", hist), 0);

    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/history.sh -s -H %s -o %s/h.csv > %s/table 2> %s/err", hist, dir,
                        dir, dir), 0, "history.sh failed");
    snprintf(path, sizeof path, "%s/h.csv", dir);
    char *csv = kit_slurp(path);
    cr_assert_not_null(csv);
    cr_expect_eq(strncmp(csv, "validation,load,stage,metric,real_ms,sim_ms,rel_err\n", 52), 0, "%s", csv);
    cr_expect_null(strstr(csv, ".partial"), "the .partial folder is skipped");

    /* each validation's rows: those resim.sh gives on it alone, by hand */
    const char *name[2] = {"2026-01-01T000000Z", "2026-01-02T000000Z"};
    double e50[2], d50[2];
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -d %s/%s %s/by-hand-%d > /dev/null 2>&1", hist,
                            name[k], dir, k), 0, "resim.sh on %s alone failed", name[k]);
        snprintf(path, sizeof path, "%s/by-hand-%d/0.30-rows.csv", dir, k);
        char *rows = kit_slurp(path);
        cr_assert_not_null(rows);
        /* every row after the header, prefixed with the validation's name */
        for (char *line = strchr(rows, '\n') + 1; *line; ) {
            char *end = strchr(line, '\n');
            cr_assert_not_null(end);
            char want[1024];
            snprintf(want, sizeof want, "\n%s,%.*s\n", name[k], (int)(end - line), line);
            cr_expect_not_null(strstr(csv, want), "row missing from history.sh's CSV: %s", want + 1);
            line = end + 1;
        }
        e50[k] = rel_err(rows, "\n0.30,frame,p50,");
        d50[k] = rel_err(rows, "\n0.30,decode,p50,");
        cr_assert(!isnan(e50[k]) && !isnan(d50[k]));
        free(rows);
    }
    cr_expect_neq(e50[0], e50[1], "two different experiments: the mean can differ from either");

    /* the frame p50 row of the table: both errors, their mean, SD (n - 1), within 5 % */
    double mu = (e50[0] + e50[1]) / 2, sd = fabs(e50[0] - e50[1]) / sqrt(2.0);
    int within = (fabs(e50[0]) <= 0.05) + (fabs(e50[1]) <= 0.05);
    char want[256];
    snprintf(want, sizeof want, "| 0.30 | p50 | %+.1f %% | %+.1f %% | %+.1f %% | %.1f %% | %d of 2 |", 100 * e50[0],
             100 * e50[1], 100 * mu, 100 * sd, within);
    snprintf(path, sizeof path, "%s/table", dir);
    char *table = kit_slurp(path);
    cr_assert_not_null(table);
    cr_expect_not_null(strstr(table, want), "want %s in:\n%s", want, table);
    /* a right model's chance at the first one's p50, by hand: SE = sd / sqrt(2)
     * / mean = 1 / 11 (the second one kept no spread: no chance) */
    double c50 = erf(0.05 / (sqrt(2.0) * (1.0 / 11)));
    snprintf(want + strlen(want), sizeof want - strlen(want), " %.1f of 1 |", c50);
    cr_expect_not_null(strstr(table, want), "want %s in:\n%s", want, table);
    snprintf(want, sizeof want, "would be within target in %.1f of the 3 frame percentiles on average;", c50 + 2);
    cr_expect_not_null(strstr(table, want), "want %s in:\n%s", want, table);
    cr_expect_not_null(strstr(table, "| load | metric | 2026-01-01T000000Z | 2026-01-02T000000Z | mean | SD |"),
                       "%s", table);
    /* -s: the decode stage's p50, mean +- SD of its two errors */
    snprintf(want, sizeof want, "| 0.30 | decode | %+.1f +- %.1f %% |", 100 * (d50[0] + d50[1]) / 2,
             100 * fabs(d50[0] - d50[1]) / sqrt(2.0));
    cr_expect_not_null(strstr(table, want), "want %s in:\n%s", want, table);
    free(table);
    free(csv);

    /* -n 1: the latest alone */
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/history.sh -H %s -n 1 -o %s/one.csv > /dev/null 2>&1", hist,
                        dir), 0);
    snprintf(path, sizeof path, "%s/one.csv", dir);
    csv = kit_slurp(path);
    cr_assert_not_null(csv);
    cr_expect_null(strstr(csv, name[0]), "-n 1 leaves the older one out");
    cr_expect_not_null(strstr(csv, name[1]), "-n 1 takes the latest");
    free(csv);
    kit_rm_rf(dir);
}

/* -g PLACE: each validation's load points at that place of the GOP, real run
 * 1 / replication 0, from resim.sh -g's place rows (the executor the sum of
 * the batch wait, encode, reduce and prefill), worked out here from them;
 * a place that is not a number is refused. */
Test(history, place_table_from_resim_g, .timeout = 180)
{
    char dir[256], hist[300], path[600];
    kit_tmpdir(dir, sizeof dir, "history");
    snprintf(hist, sizeof hist, "%s/hist", dir);
    kept(hist, "2026-01-01T000000Z", 20, 1);
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/history.sh -g 0 -H %s > %s/table 2> %s/err", hist, dir, dir), 0);
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -g -d %s/2026-01-01T000000Z %s/by-hand > /dev/null 2>&1",
                        hist, dir), 0);
    snprintf(path, sizeof path, "%s/by-hand/0.30-gop.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[512], seg[64];
    double r[16] = {0}, m[16] = {0};
    long frames = -1;
    const char *names[] = {"frame", "frame_p95", "decode_wait", "decode", "sample",
                           "encode_wait", "encode", "reduce", "prefill"};
    while (fgets(line, sizeof line, f)) {
        double load, rv, mv, d;
        int pos;
        long rf, sf;
        if (sscanf(line, "%lf,%d,%63[^,],%ld,%ld,%lf,%lf,%lf", &load, &pos, seg, &rf, &sf, &rv, &mv, &d) != 8
            || pos != 0)
            continue;
        for (int k = 0; k < 9; k++)
            if (!strcmp(seg, names[k])) {
                r[k] = rv;
                m[k] = mv;
                frames = rf;
            }
    }
    fclose(f);
    cr_assert_gt(frames, 0, "the I-frame's place has kept frames");
    char want[512];
    snprintf(want, sizeof want,
             "| 2026-01-01T000000Z | 0.30 | %ld | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |"
             " %.2f / %.2f | %.2f / %.2f |", frames, r[0], m[0], r[1], m[1], r[2], m[2], r[3], m[3], r[4], m[4],
             r[5] + r[6] + r[7] + r[8], m[5] + m[6] + m[7] + m[8]);
    snprintf(path, sizeof path, "%s/table", dir);
    char *table = kit_slurp(path);
    cr_assert_not_null(table);
    cr_expect_not_null(strstr(table, want), "want %s in:\n%s", want, table);
    cr_expect_not_null(strstr(table, "At place 0 of the GOP"), "%s", table);
    free(table);
    cr_expect_eq(kit_sh("calib/realpipe/history.sh -g I -H %s > /dev/null 2> %s/err", hist, dir), 2);
    snprintf(path, sizeof path, "%s/err", dir);
    char *err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "-g I: a place in the GOP expected"), "%s", err);
    free(err);
    kit_rm_rf(dir);
}

Test(history, bad_use_is_refused_and_nothing_overwritten, .timeout = 60)
{
    char dir[256], path[512];
    kit_tmpdir(dir, sizeof dir, "history");
    snprintf(path, sizeof path, "%s/err", dir);

    cr_expect_eq(kit_sh("calib/realpipe/history.sh -H %s/none > /dev/null 2> %s", dir, path), 2);
    char *err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "none: not found"), "%s", err);
    free(err);

    cr_assert_eq(kit_sh("mkdir -p %s/empty/stray", dir), 0);
    cr_expect_eq(kit_sh("calib/realpipe/history.sh -H %s/empty > /dev/null 2> %s", dir, path), 2);
    err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "no kept validations"), "%s", err);
    free(err);

    cr_expect_eq(kit_sh("calib/realpipe/history.sh -H %s/empty -n two > /dev/null 2> %s", dir, path), 2);

    /* an existing CSV: refused without -f, left as it was */
    char csv[300];
    snprintf(csv, sizeof csv, "%s/mine.csv", dir);
    kit_write_file(csv, "the user's own file\n");
    cr_expect_eq(kit_sh("calib/realpipe/history.sh -H %s/empty -o %s > /dev/null 2> %s", dir, csv, path), 2);
    err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "exists"), "%s", err);
    free(err);
    char *kept = kit_slurp(csv);
    cr_expect_str_eq(kept, "the user's own file\n");
    free(kept);
    kit_rm_rf(dir);
}
