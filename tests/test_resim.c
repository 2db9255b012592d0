/* test_resim.c — calib/realpipe/resim.sh, as a user runs it: on a folder laid
 * out as `make validate` leaves one, its rows are those of running vlsim and
 * `vlrealpipe compare` by hand on the runs validate.sh compared (probe.csv's
 * passed runs, every run when none passed); an edit reaches the scenario;
 * it refuses an output folder that exists, leaving it as it was. The real
 * runs are two short `vlrealpipe run`s (their figures are not asserted, only
 * that both paths read the same ones). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "kit_files.h"

#define RP "tests/data/realpipe/"

/* A load point's folder: the scenario from the test calibration, and the
 * given real runs' span files copied in as spans-1.csv, spans-2.csv. */
static void load_point(const char *dir, const char *load, const char *const *spans, int n)
{
    cr_assert_eq(kit_sh("mkdir -p %s/runs/%s", dir, load), 0);
    cr_assert_eq(kit_sh("./vlrealpipe scenario --calib " RP "tiny-fixture.yaml --decode-calib " RP
                        "video-fixture.yaml --fps 10 --warmup 0.5 --sim-duration 5 --sim-reps 1"
                        " --out %s/runs/%s/scenario.yaml > /dev/null", dir, load), 0);
    for (int r = 0; r < n; r++)
        cr_assert_eq(kit_sh("cp %s %s/runs/%s/spans-%d.csv", spans[r], dir, load, r + 1), 0);
}

/* A short real run (2 s of frames, 0.5 s warm-up) into path. */
static void real_run(const char *path, int fps, int seed)
{
    cr_assert_eq(kit_sh("./vlrealpipe run --fps %d --duration 2 --warmup 0.5 --seed %d --out %s 2> /dev/null", fps,
                        seed, path), 0);
}

/* The rows of the hand-run path: vlsim on the scenario, compare on the runs
 * (its files named by tag). */
static char *by_hand(const char *dir, const char *load, const char *runs, const char *tag)
{
    char sim[512], rows[512];
    snprintf(sim, sizeof sim, "%s/hand-%s-%s-sim.csv", dir, load, tag);
    snprintf(rows, sizeof rows, "%s/hand-%s-%s-rows.csv", dir, load, tag);
    cr_assert_eq(kit_sh("./vlsim run %s/runs/%s/scenario.yaml --csv %s -q 2> /dev/null", dir, load, sim),
                 0);
    cr_assert_eq(kit_sh("./vlrealpipe compare --load %s --sim %s --warmup 0.5 --out %s %s > /dev/null",
                        load, sim, rows, runs), 0);
    char *t = kit_slurp(rows);
    cr_assert_not_null(t);
    return t;
}

Test(resim, rows_as_by_hand_on_the_compared_runs, .timeout = 120)
{
    char dir[256], a[300], b[300];
    kit_tmpdir(dir, sizeof dir, "resim");
    snprintf(a, sizeof a, "%s/real-a.csv", dir);
    snprintf(b, sizeof b, "%s/real-b.csv", dir);
    /* two different real runs: 20 and 40 FPS per stream, 2 s of frames each */
    real_run(a, 20, 1);
    real_run(b, 40, 2);
    const char *both[2] = {a, b};
    load_point(dir, "0.30", both, 1);  /* one run, passed */
    load_point(dir, "0.50", both, 2);  /* run 1 passed, run 2 failed the machine check */
    load_point(dir, "0.70", both, 2);  /* neither passed: both compared */
    char probe[300];
    snprintf(probe, sizeof probe, "%s/probe.csv", dir);
    kit_write_file(probe, "0.30,1,150,1.0,1,1.6,0.07,1.0,1,0.00\n"
                          "0.50,1,150,1.0,1,1.6,0.07,1.0,1,0.00\n"
                          "0.50,2,170,1.13,3,1.6,0.07,1.0,0,0.00\n"
                          "0.70,1,170,1.12,3,1.6,0.07,1.0,0,0.00\n"
                          "0.70,2,170,1.11,3,1.6,0.07,1.0,0,0.00\n");
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -d %s %s/out > %s/summary 2> %s/err", dir, dir,
                        dir, dir), 0);

    char runs[1024], path[512];
    const char *load[3] = {"0.30", "0.50", "0.70"};
    for (int k = 0; k < 3; k++) {
        if (k == 2)
            snprintf(runs, sizeof runs, "%s/runs/%s/spans-1.csv %s/runs/%s/spans-2.csv", dir, load[k], dir,
                     load[k]);
        else
            snprintf(runs, sizeof runs, "%s/runs/%s/spans-1.csv", dir, load[k]);
        char *want = by_hand(dir, load[k], runs, "used");
        snprintf(path, sizeof path, "%s/out/%s-rows.csv", dir, load[k]);
        char *got = kit_slurp(path);
        cr_assert_not_null(got, "%s not written", path);
        cr_expect_str_eq(got, want, "load %s: resim.sh's rows differ from vlsim + compare by hand", load[k]);
        free(got);
        free(want);
    }
    /* and the run left out at 0.50 would have changed them: the check can fail */
    snprintf(runs, sizeof runs, "%s/runs/0.50/spans-1.csv %s/runs/0.50/spans-2.csv", dir, dir);
    char *pooled = by_hand(dir, "0.50", runs, "all");
    snprintf(path, sizeof path, "%s/out/0.50-rows.csv", dir);
    char *got = kit_slurp(path);
    cr_expect_str_neq(got, pooled, "both runs pooled give other rows than run 1 alone");
    free(got);
    free(pooled);

    char *sum = kit_slurp(strcat(strcpy(path, dir), "/summary"));
    cr_assert_not_null(sum);
    cr_expect_not_null(strstr(sum, "0.50 frame p50"), "the frame rows are printed:\n%s", sum);
    cr_expect_not_null(strstr(sum, "mean |rel err| of the 9 frame percentiles"), "%s", sum);
    free(sum);
    kit_rm_rf(dir);
}

/* -r: each compared run alone against the scenario on that run's phases,
 * as validate.sh makes it (vlrealpipe scenario --phases-from that run
 * alone): resim.sh's rows are those of that scenario by hand. */
Test(resim, each_run_alone_as_by_hand, .timeout = 120)
{
    char dir[256], spans[2][300];
    kit_tmpdir(dir, sizeof dir, "resim");
    cr_assert_eq(kit_sh("mkdir -p %s/runs/0.30", dir), 0);
    for (int r = 0; r < 2; r++) {
        snprintf(spans[r], sizeof spans[r], "%s/runs/0.30/spans-%d.csv", dir, r + 1);
        real_run(spans[r], 20, r + 1);
    }
    const char *scen = "./vlrealpipe scenario --calib " RP "tiny-fixture.yaml --decode-calib " RP
                       "video-fixture.yaml --fps 20 --warmup 0.5 --sim-duration 5 --sim-reps 2";
    cr_assert_eq(kit_sh("%s --phases-from %s --phases-from %s --out %s/runs/0.30/scenario.yaml > /dev/null", scen,
                        spans[0], spans[1], dir), 0);
    char probe[300];
    snprintf(probe, sizeof probe, "%s/probe.csv", dir);
    kit_write_file(probe, "0.30,1,150,1.0,1,1.6,0.07,1.0,1,0.00\n"
                          "0.30,2,150,1.0,1,1.6,0.07,1.0,1,0.00\n");
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -r -d %s %s/out > %s/summary 2> %s/err", dir, dir,
                        dir, dir), 0);

    char path[512], sim[512], rows[512];
    char *got[2];
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof path, "%s/hand-%d.yaml", dir, r + 1);
        snprintf(sim, sizeof sim, "%s/hand-%d-sim.csv", dir, r + 1);
        snprintf(rows, sizeof rows, "%s/hand-%d-rows.csv", dir, r + 1);
        cr_assert_eq(kit_sh("%s --phases-from %s --out %s > /dev/null", scen, spans[r], path), 0);
        cr_assert_eq(kit_sh("./vlsim run %s --csv %s -q 2> /dev/null", path, sim), 0);
        cr_assert_eq(kit_sh("./vlrealpipe compare --load 0.30 --sim %s --warmup 0.5 --out %s %s > /dev/null", sim,
                            rows, spans[r]), 0);
        char *want = kit_slurp(rows);
        snprintf(path, sizeof path, "%s/out/0.30-run%d-rows.csv", dir, r + 1);
        got[r] = kit_slurp(path);
        cr_assert_not_null(got[r], "%s not written", path);
        cr_expect_str_eq(got[r], want, "run %d: resim.sh -r's rows differ from its own scenario by hand", r + 1);
        free(want);
    }
    cr_expect_str_neq(got[0], got[1], "the two runs' rows differ: the check can fail");
    free(got[0]);
    free(got[1]);

    snprintf(path, sizeof path, "%s/out/perrun.csv", dir);
    char *all = kit_slurp(path);
    cr_assert_not_null(all);
    cr_expect_eq(strncmp(all, "load,run,stage,metric,real_ms,sim_ms,rel_err\n", 45), 0, "header: %s", all);
    cr_expect_not_null(strstr(all, "\n0.30,1,frame,p50,"), "%s", all);
    cr_expect_not_null(strstr(all, "\n0.30,2,frame,p99,"), "%s", all);
    free(all);
    char *sum = kit_slurp(strcat(strcpy(path, dir), "/summary"));
    cr_expect_not_null(strstr(sum, "0.30 run 2 frame p95"), "the runs' rows are printed:\n%s", sum);
    free(sum);
    kit_rm_rf(dir);
}

/* -g: the real run 1 against replication 0 by the frame's place in the GOP,
 * as validate.sh writes gop-stages.csv: resim.sh's OUT/L-gop.csv is what
 * vlsim run --trace and vlrealpipe compare --gop-stages give by hand on the
 * compared runs, the trace is not left behind, and the I-frame's place is in it. */
Test(resim, gop_places_as_by_hand, .timeout = 120)
{
    char dir[256], a[300], b[300];
    kit_tmpdir(dir, sizeof dir, "resim");
    snprintf(a, sizeof a, "%s/real-a.csv", dir);
    snprintf(b, sizeof b, "%s/real-b.csv", dir);
    real_run(a, 20, 1);
    real_run(b, 20, 2);
    const char *both[2] = {a, b};
    load_point(dir, "0.30", both, 2);
    char probe[300];
    snprintf(probe, sizeof probe, "%s/probe.csv", dir);
    kit_write_file(probe, "0.30,1,150,1.0,1,1.6,0.07,1.0,1,0.00\n"
                          "0.30,2,150,1.0,1,1.6,0.07,1.0,1,0.00\n");
    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -g -d %s %s/out > /dev/null 2> %s/err", dir, dir, dir),
                 0);
    char sim[512], trace[512], rows[512], gop[512], path[512];
    snprintf(sim, sizeof sim, "%s/hand-sim.csv", dir);
    snprintf(trace, sizeof trace, "%s/hand-trace.csv", dir);
    snprintf(rows, sizeof rows, "%s/hand-rows.csv", dir);
    snprintf(gop, sizeof gop, "%s/hand-gop.csv", dir);
    cr_assert_eq(kit_sh("./vlsim run %s/runs/0.30/scenario.yaml --csv %s --trace %s -q 2> /dev/null", dir, sim,
                        trace), 0);
    cr_assert_eq(kit_sh("./vlrealpipe compare --load 0.30 --sim %s --warmup 0.5 --out %s --sim-spans %s "
                        "--gop-stages %s %s/runs/0.30/spans-1.csv %s/runs/0.30/spans-2.csv > /dev/null",
                        sim, rows, trace, gop, dir, dir), 0);
    char *want = kit_slurp(gop);
    snprintf(path, sizeof path, "%s/out/0.30-gop.csv", dir);
    char *got = kit_slurp(path);
    cr_assert_not_null(got, "%s not written", path);
    cr_expect_str_eq(got, want, "resim.sh -g's places differ from vlsim --trace + compare by hand");
    cr_expect_not_null(strstr(got, "\n0.30,0,frame,"), "the I-frame's place is there:\n%s", got);
    free(got);
    free(want);
    snprintf(path, sizeof path, "%s/out/0.30-trace.csv", dir);
    cr_expect(!kit_exists(path), "the trace is not kept");
    kit_rm_rf(dir);
}

Test(resim, an_edit_reaches_the_scenario_and_nothing_is_overwritten, .timeout = 120)
{
    char dir[256], a[300];
    kit_tmpdir(dir, sizeof dir, "resim");
    snprintf(a, sizeof a, "%s/real-a.csv", dir);
    real_run(a, 20, 1);
    const char *one[1] = {a};
    load_point(dir, "0.30", one, 1);
    char probe[300];
    snprintf(probe, sizeof probe, "%s/probe.csv", dir);
    kit_write_file(probe, "0.30,1,150,1.0,1,1.6,0.07,1.0,1,0.00\n");

    cr_assert_eq(kit_sh("WARMUP=0.5 calib/realpipe/resim.sh -d %s -e 's/^seed: 1$/seed: 7/' %s/out > /dev/null",
                        dir, dir), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/out/0.30.yaml", dir);
    char *scen = kit_slurp(path);
    cr_assert_not_null(scen);
    cr_expect_not_null(strstr(scen, "\nseed: 7\n"), "the edit is in the scenario simulated");
    free(scen);
    snprintf(path, sizeof path, "%s/runs/0.30/scenario.yaml", dir);
    scen = kit_slurp(path);
    cr_expect_not_null(strstr(scen, "\nseed: 1\n"), "the experiment's own scenario is untouched");
    free(scen);

    /* the output folder exists now: refused, exit 2, its files as they were */
    snprintf(path, sizeof path, "%s/out/0.30-rows.csv", dir);
    char *before = kit_slurp(path);
    cr_expect_eq(kit_sh("calib/realpipe/resim.sh -d %s %s/out > /dev/null 2> %s/err", dir, dir, dir), 2);
    char *after = kit_slurp(path);
    cr_expect_str_eq(after, before, "an existing output folder is left as it was");
    free(before);
    free(after);
    snprintf(path, sizeof path, "%s/err", dir);
    char *err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "exists"), "the refusal says why: %s", err);
    free(err);

    /* no experiment there: exit 2 and a message naming the folder */
    cr_expect_eq(kit_sh("calib/realpipe/resim.sh -d %s/none %s/out2 2> %s/err", dir, dir, dir), 2);
    err = kit_slurp(path);
    cr_expect_not_null(strstr(err, "none/runs: not found"), "%s", err);
    free(err);
    cr_expect(!kit_exists(strcat(strcpy(path, dir), "/out2")), "nothing written on an error");
    kit_rm_rf(dir);
}
