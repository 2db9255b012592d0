/* test_trace.c — replication 0's spans (run_opts.trace, `vlsim run --trace`):
 * every row of a deterministic pipeline worked out by hand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "models/run.h"
#include "models/scenario.h"

/* One stream at 10 fps from t = 0 (a frame every 100 ms) for 0.5 s of warm-up
 * and 1 s measured: frames 0..14 arrive, at 0, 100, ..., 1400. Stage a
 * (10 ms) keeps every 2nd frame; stage b (10 ms) gets the even ones. So
 * frame k has the row a: enqueue = start = 100 k, end 100 k + 10 (outcome
 * sampled_out when k is odd), and for even k the row b: 100 k + 10 .. + 20. */
Test(trace, rows_by_hand)
{
    const char *yaml = "name: t\nduration_s: 1\nwarmup_s: 0.5\nreplications: 2\n"
                       "workload: {arrival: periodic, streams: 1, fps: 10, phase: aligned}\n"
                       "stages:\n  - {name: a, keep: {every: 2}, service: {dist: constant, ms: 10}}\n"
                       "  - {name: b, service: {dist: constant, ms: 10}}\n";
    scenario_cfg c;
    char err[512] = "";
    cr_assert_eq(scn_load_string(yaml, strlen(yaml), "t.yaml", ".", &c, err, sizeof err), 0, "%s", err);
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    run_opts o = {2, NULL, NULL, f};
    run_result r;
    cr_assert_eq(run_scenario(&c, &o, &r, err, sizeof err), 0, "%s", err);
    run_result_free(&r);
    cfg_free(&c);
    rewind(f);
    char line[256], stage[16], outcome[16], kind[16];
    int n = 0, na = 0, nb = 0, nout = 0;
    unsigned long long id, seq;
    unsigned stream;
    double arrive, enq, start, end;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%15[^,],%llu,%u,%llu,%15[^,],%15[^,],%lf,%lf,%lf,%lf", kind, &id, &stream,
                   &seq, stage, outcome, &arrive, &enq, &start, &end) != 10)
            cr_assert_fail("not a span row: %s", line);
        n++;
        cr_expect_str_eq(kind, "frame");
        cr_expect_eq(id, seq, "ids are arrival numbers: %llu for frame %llu", id, seq);
        cr_expect_eq(stream, 0u);
        double t = 100.0 * (double)seq;
        cr_expect_float_eq(arrive, t, 1e-9, "%s", line);
        if (!strcmp(stage, "a")) {
            na++;
            cr_expect_float_eq(enq, t, 1e-9, "%s", line);
            cr_expect_float_eq(start, t, 1e-9, "%s", line);
            cr_expect_float_eq(end, t + 10, 1e-9, "%s", line);
            cr_expect_str_eq(outcome, seq % 2 ? "sampled_out" : "done", "%s", line);
            nout += seq % 2 == 1;
        } else {
            nb++;
            cr_expect_str_eq(stage, "b");
            cr_expect_eq(seq % 2, 0u, "%s", line);
            cr_expect_float_eq(enq, t + 10, 1e-9, "%s", line);
            cr_expect_float_eq(end, t + 20, 1e-9, "%s", line);
            cr_expect_str_eq(outcome, "done");
        }
    }
    fclose(f);
    cr_expect_eq(na, 15, "stage a rows: %d (replication 0 only)", na);
    cr_expect_eq(nb, 8, "stage b rows: %d", nb);
    cr_expect_eq(nout, 7);
    cr_expect_eq(n, 23);
}
