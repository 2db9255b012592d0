/* test_import.c — `vlcalib import` (calib/import.h): trace CSVs and
 * Prometheus histogram scrapes against hand-built inputs in
 * tests/data/import/, their scenario fragments (loaded by the real scenario
 * loader), the calibration file they write (read back by the real reader),
 * and malformed inputs with their line numbers. Criterion suite `import`.
 * No GPU; files are written only under a fresh mkdtemp directory in /tmp. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/import.h"
#include "calib/vlcalib.h"
#include "models/calib_read.h"
#include "models/config.h"
#include "models/scenario.h"

#define DATA "tests/data/import/"

static FILE *open_data(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, DATA "%s", name);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "cannot open %s", p);
    return f;
}

static const import_stage *stage_of(const import_trace *t, const char *name)
{
    for (int i = 0; i < t->nstages; i++)
        if (!strcmp(t->stages[i].name, name))
            return &t->stages[i];
    cr_assert_fail("no stage %s", name);
    return NULL;
}

static double sorted_median(const double *x, size_t n)
{
    double *v = malloc(n * sizeof *v);
    memcpy(v, x, n * sizeof *v);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
        }
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

/* ---- traces ---- */

Test(import, trace_by_hand)
{
    import_trace t;
    char err[512];
    FILE *f = open_data("trace.csv");
    cr_assert_eq(import_trace_read(f, "trace.csv", &t, err, sizeof err), 0, "%s", err);
    fclose(f);
    cr_assert_eq(t.nstages, 2);
    cr_assert_str_eq(t.stages[0].name, "decode");   /* order of first appearance */
    const import_stage *d = stage_of(&t, "decode"), *e = stage_of(&t, "encode");
    /* decode: 4.0 2.5 3.0 10.0 1.5 -> sorted 1.5 2.5 3 4 10: n 5, p50 3, min 1.5, max 10 */
    static const double dv[] = { 4.0, 2.5, 3.0, 10.0, 1.5 };
    cr_assert_eq(d->n, 5);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(d->ms[i], dv[i]);
    cr_assert_eq(sorted_median(d->ms, d->n), 3.0);
    /* encode: 20.5 22 19.25 30 -> n 4, p50 (20.5 + 22) / 2 = 21.25, min 19.25, max 30 */
    cr_assert_eq(e->n, 4);
    cr_assert_eq(sorted_median(e->ms, e->n), 21.25);

    calf_file cal;
    cr_assert_eq(import_trace_calfile(&t, "prod", &cal, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(cal.backend, "import");
    cr_assert_eq(cal.nops, 2);
    const calf_op *od = calf_find(&cal, "decode", "prod"), *oe = calf_find(&cal, "encode", "prod");
    cr_assert(od && oe);
    cr_assert_eq(od->npoints, 1);
    cr_assert_eq(od->points[0].batch, 1);
    cr_assert_eq(od->points[0].n, 5);
    cr_assert_float_eq(od->points[0].p50_ms, 3.0, 1e-12);
    cr_assert_float_eq(od->points[0].min_ms, 1.5, 1e-12);
    cr_assert_float_eq(od->points[0].mean_ms, 4.2, 1e-9);       /* 21 / 5 */
    cr_assert_float_eq(oe->points[0].p50_ms, 21.25, 1e-12);
    cr_assert_float_eq(oe->points[0].min_ms, 19.25, 1e-12);
    cr_assert_float_eq(oe->points[0].mean_ms, 22.9375, 1e-9);   /* 91.75 / 4 */
    calf_free(&cal);
    import_trace_free(&t);
}

/* The command end to end: the samples files hold exactly each stage's
 * values, the fragment loads as a scenario, the calibration file reads back. */
Test(import, trace_command_end_to_end)
{
    char dir[64] = "/tmp/vl-import-XXXXXX", yaml[128], scen[128], sd[128], se[128], csv[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(yaml, sizeof yaml, "%s/prod.yaml", dir);
    snprintf(scen, sizeof scen, "%s/frag.yaml", dir);
    snprintf(sd, sizeof sd, "%s/frag.decode.ms.txt", dir);
    snprintf(se, sizeof se, "%s/frag.encode.ms.txt", dir);
    snprintf(csv, sizeof csv, "%s/prod.samples.csv", dir);
    char *argv[] = { "vlcalib", "import", "--trace", DATA "trace.csv", "--out", yaml, "--scenario-out", scen, NULL };
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert_eq(vlcalib_main(8, argv, out, err), 0);

    FILE *f = fopen(sd, "r");
    cr_assert_not_null(f);
    static const double dv[] = { 4.0, 2.5, 3.0, 10.0, 1.5 };
    double x;
    int n = 0;
    while (fscanf(f, "%lf", &x) == 1) {
        cr_assert_lt(n, 5);
        cr_assert_eq(x, dv[n], "decode sample %d: %g", n, x);
        n++;
    }
    fclose(f);
    cr_assert_eq(n, 5);

    /* the fragment, under a scenario head, loads with the real loader */
    char path[160], text[4096];
    snprintf(path, sizeof path, "%s/scenario.yaml", dir);
    f = fopen(scen, "r");
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    cr_assert_not_null(strstr(text, "file: \"frag.decode.ms.txt\""), "%s", text);
    FILE *s = fopen(path, "w");
    fprintf(s, "name: imported\nduration_s: 10\nworkload: {arrival: poisson, rate_hz: 10}\n%s", text);
    fclose(s);
    scenario_cfg c;
    char msg[512];
    cr_assert_eq(scn_load(path, &c, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(c.nstages, 2);
    cr_assert_float_eq(dist_mean(&c.stages[0].service), 4.2, 1e-9);
    cfg_free(&c);

    calf_file cal;
    cr_assert_eq(calf_read(yaml, &cal, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(cal.nops, 2);
    cr_assert_str_eq(cal.ops[1].op, "encode");
    cr_assert_eq(cal.ops[1].points[0].n, 4);
    calf_free(&cal);

    /* outputs exist now: a second run without --force refuses */
    cr_assert_eq(vlcalib_main(8, argv, out, err), 2);
    fclose(out);
    fclose(err);
    unlink(sd); unlink(se); unlink(csv); unlink(yaml); unlink(scen); unlink(path);
    cr_assert_eq(rmdir(dir), 0, "files left in %s", dir);
}

/* ---- Prometheus ---- */

static const import_prom_stage *prom_stage(const import_prom *p, const char *name)
{
    for (int i = 0; i < p->nstages; i++)
        if (!strcmp(p->stages[i].name, name))
            return &p->stages[i];
    cr_assert_fail("no stage %s", name);
    return NULL;
}

static bool has_warning(const import_prom_stage *s, const char *needle)
{
    for (int i = 0; i < s->nwarn; i++)
        if (strstr(s->warn[i], needle))
            return true;
    return false;
}

Test(import, prom_by_hand)
{
    import_prom p;
    char err[512];
    FILE *f = open_data("hist.prom");
    cr_assert_eq(import_prom_read(f, "hist.prom", &p, err, sizeof err), 0, "%s", err);
    fclose(f);
    cr_assert_eq(p.nstages, 2);
    /* encode: cumulative 5 15 95 95 100 at le 10 20 33 50 +Inf -> counts 5 10 80 0 5 of 100;
     * the empty 33-50 bucket is left out; +Inf -> uniform 50..100 */
    const import_prom_stage *e = prom_stage(&p, "encode");
    static const double ew[] = { 0.05, 0.10, 0.80, 0.05 }, elo[] = { 0, 10, 20, 50 }, ehi[] = { 10, 20, 33, 100 };
    cr_assert_eq(e->nparts, 4);
    cr_assert_eq(e->total, 100);
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(e->parts[i].weight, ew[i], 1e-15, "part %d", i);
        cr_assert_eq(e->parts[i].lo, elo[i], "part %d", i);
        cr_assert_eq(e->parts[i].hi, ehi[i], "part %d", i);
    }
    cr_assert(e->has_sum);
    cr_assert_eq(e->sum_ms, 2600);
    cr_assert(has_warning(e, "above the last finite bucket (50 ms)"));
    cr_assert(has_warning(e, "80 % of observations fall in one bucket (20-33 ms)"));
    /* median: 0.5 - 0.15 = 0.35 of the 0.8 in 20..33 -> 20 + 13 * 0.4375 */
    cr_assert_float_eq(import_prom_quantile(e, 0.5), 20 + 13 * 0.4375, 1e-12);

    /* decode: cumulative 10 30 40 40 at le 2 4 8 +Inf -> 0.25 0.5 0.25, no +Inf part */
    const import_prom_stage *d = prom_stage(&p, "decode");
    static const double dw[] = { 0.25, 0.5, 0.25 }, dlo[] = { 0, 2, 4 }, dhi[] = { 2, 4, 8 };
    cr_assert_eq(d->nparts, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_float_eq(d->parts[i].weight, dw[i], 1e-15);
        cr_assert_eq(d->parts[i].lo, dlo[i]);
        cr_assert_eq(d->parts[i].hi, dhi[i]);
    }
    cr_assert(!has_warning(d, "+Inf") && !has_warning(d, "above the last finite"));

    /* the fragment loads, and its mixture has the histogram's mean */
    char dir[64] = "/tmp/vl-import-XXXXXX", path[128], msg[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    FILE *s = fopen(path, "w");
    fprintf(s, "name: prom\nduration_s: 10\nworkload: {arrival: poisson, rate_hz: 10}\n");
    cr_assert_eq(import_prom_fragment(s, &p, "hist.prom"), 0);
    fclose(s);
    scenario_cfg c;
    cr_assert_eq(scn_load(path, &c, msg, sizeof msg), 0, "%s", msg);
    /* encode: 0.05*5 + 0.1*15 + 0.8*26.5 + 0.05*75 = 26.7 */
    cr_assert_float_eq(dist_mean(&c.stages[0].service), 26.7, 1e-9);
    cr_assert_float_eq(dist_mean(&c.stages[1].service), 0.25 * 1 + 0.5 * 3 + 0.25 * 6, 1e-9);
    cfg_free(&c);
    unlink(path);
    rmdir(dir);

    calf_file cal;
    cr_assert_eq(import_prom_calfile(&p, "prod", &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.ops[0].points[0].n, 100);
    cr_assert_float_eq(cal.ops[0].points[0].mean_ms, 26.0, 1e-9);   /* _sum / count */
    calf_free(&cal);
    import_prom_free(&p);
}

Test(import, prom_seconds_are_scaled)
{
    const char *text = "lat_seconds_bucket{stage=\"a\",le=\"0.01\"} 2\n"
                       "lat_seconds_bucket{stage=\"a\",le=\"0.02\"} 4\n"
                       "lat_seconds_bucket{stage=\"a\",le=\"+Inf\"} 4\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    import_prom p;
    char err[512];
    cr_assert_eq(import_prom_read(f, "mem", &p, err, sizeof err), 0, "%s", err);
    fclose(f);
    cr_assert_eq(p.stages[0].nparts, 2);
    cr_assert_float_eq(p.stages[0].parts[1].lo, 10, 1e-12);
    cr_assert_float_eq(p.stages[0].parts[1].hi, 20, 1e-12);
    import_prom_free(&p);
}

/* ---- malformed inputs ---- */

static void expect_trace_error(const char *file, const char *want)
{
    import_trace t;
    char err[512] = "";
    FILE *f = open_data(file);
    cr_assert_eq(import_trace_read(f, file, &t, err, sizeof err), -1, "%s read without error", file);
    fclose(f);
    cr_assert_not_null(strstr(err, want), "%s: got '%s', want '%s'", file, err, want);
}

static void expect_prom_error(const char *file, const char *want)
{
    import_prom p;
    char err[512] = "";
    FILE *f = open_data(file);
    cr_assert_eq(import_prom_read(f, file, &p, err, sizeof err), -1, "%s read without error", file);
    fclose(f);
    cr_assert_not_null(strstr(err, want), "%s: got '%s', want '%s'", file, err, want);
}

Test(import, malformed_traces)
{
    expect_trace_error("bad_header.csv", "bad_header.csv:1: expected the header frame_id,stage,ms");
    expect_trace_error("bad_fields.csv", "bad_fields.csv:3: expected 3 fields");
    expect_trace_error("bad_negative.csv", "bad_negative.csv:3: ms must be > 0");
}

Test(import, malformed_scrapes)
{
    expect_prom_error("bad_monotone.prom", "bad_monotone.prom:2: x_ms{stage=\"a\"}: cumulative count 3 at le=2 is below 5");
    expect_prom_error("bad_noinf.prom", "bad_noinf.prom:1: x_ms{stage=\"a\"}: no le=\"+Inf\" bucket");
    expect_prom_error("bad_noseries.prom", "bad_noseries.prom: no histogram series");
    expect_prom_error("bad_syntax.prom", "bad_syntax.prom:2: unterminated label value");
}

Test(import, bad_input_exits_2)
{
    char *argv[] = { "vlcalib", "import", "--prom", DATA "bad_noinf.prom", "--out", "/tmp/never-written.yaml", NULL };
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert_eq(vlcalib_main(6, argv, out, err), 2);
    char buf[512] = "";
    rewind(err);
    cr_assert_not_null(fgets(buf, sizeof buf, err));
    cr_assert_not_null(strstr(buf, "bad_noinf.prom:1:"), "%s", buf);
    cr_assert_neq(access("/tmp/never-written.yaml", F_OK), 0);
    fclose(out);
    fclose(err);
}
