/* test_calfile.c — the calibration file (issue 4): the lognormal fit and its
 * KS distance (calib/fit.h), the writer (calib/calfile.h) and the reader
 * (models/calib_read.h) round-tripping every field, the batch table built
 * from an op and its interpolation (cfg_table_ms), and vlcalib writing a
 * calibration file end to end. Criterion suite `calfile`.
 *
 * Files are written only under a fresh mkdtemp directory in /tmp, removed at
 * the end of each test; the shipped calibration files are only read. */
#include <criterion/criterion.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/calfile.h"
#include "calib/fit.h"
#include "calib/vlcalib.h"
#include "models/calib_read.h"
#include "models/config.h"

#define FIXTURE "calib/data/fixture-small.yaml"
#define CPU_TINY "calib/data/cpu-tiny.yaml"

/* ---- a scratch directory ---- */

typedef struct {
    char dir[64];
} scratch;

static void scratch_new(scratch *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/vl-calfile-XXXXXX");
    cr_assert_not_null(mkdtemp(s->dir));
}

static void scratch_path(const scratch *s, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", s->dir, name);
}

static void scratch_free(scratch *s, const char *const *names)
{
    char p[256];
    for (int i = 0; names[i]; i++) {
        scratch_path(s, names[i], p, sizeof p);
        unlink(p);
    }
    rmdir(s->dir);
}

static double *draw_lognormal(size_t n, double mu, double sigma, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(r);
    gsl_rng_set(r, seed);
    double *x = malloc(n * sizeof *x);
    cr_assert_not_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = gsl_ran_lognormal(r, mu, sigma);
    gsl_rng_free(r);
    return x;
}

/* ---- the fit ---- */

Test(calfile, fit_recovers_lognormal_parameters)
{
    const size_t n = 20000;
    const double cases[][2] = { { 1.3, 0.4 }, { -2.0, 0.05 }, { 3.5, 1.2 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double mu = cases[c][0], sigma = cases[c][1];
        double *x = draw_lognormal(n, mu, sigma, 42 + c);
        fit_lognormal_t f;
        cr_assert_eq(fit_lognormal(x, n, &f), 0);
        /* standard errors of the MLE: sigma / sqrt(n) for mu, sigma / sqrt(2n) for sigma */
        double se_mu = sigma / sqrt((double)n), se_sigma = sigma / sqrt(2.0 * n);
        cr_expect(fabs(f.mu - mu) < 4 * se_mu, "mu %g vs %g (4 se = %g)", f.mu, mu, 4 * se_mu);
        cr_expect(fabs(f.sigma - sigma) < 4 * se_sigma, "sigma %g vs %g (4 se = %g)", f.sigma, sigma,
                  4 * se_sigma);
        /* the 1 % critical value of the one-sample KS distance: 1.6276 / sqrt(n) */
        double crit = 1.6276 / sqrt((double)n);
        cr_expect_float_eq(fit_ks_critical(n, 0.01), crit, 1e-4 / sqrt((double)n));
        cr_expect(f.ks > 0 && f.ks < crit, "ks %g, critical %g", f.ks, crit);
        free(x);
    }
}

Test(calfile, fit_small_sample_by_hand)
{
    /* ln x = 0, 1, 2: mu = 1, sigma = sqrt(2/3) (divisor n); the largest gap
     * is at x = 1 and x = e^2: 1/3 - Phi(-1 / sigma) */
    const double x[] = { exp(2.0), 1.0, exp(1.0) };
    fit_lognormal_t f;
    cr_assert_eq(fit_lognormal(x, 3, &f), 0);
    cr_expect_float_eq(f.mu, 1.0, 1e-12);
    cr_expect_float_eq(f.sigma, sqrt(2.0 / 3.0), 1e-12);
    cr_expect_float_eq(f.ks, 1.0 / 3.0 - gsl_cdf_ugaussian_P(-1.0 / sqrt(2.0 / 3.0)), 1e-12);
}

Test(calfile, fit_rejects_bad_input)
{
    fit_lognormal_t f;
    const double bad[] = { 1.0, 0.0, 2.0 }, neg[] = { -1.0 }, inf[] = { INFINITY };
    cr_expect_eq(fit_lognormal(bad, 0, &f), -1);
    cr_expect_eq(fit_lognormal(bad, 3, &f), -1);
    cr_expect_eq(fit_lognormal(neg, 1, &f), -1);
    cr_expect_eq(fit_lognormal(inf, 1, &f), -1);
    cr_expect(isnan(fit_ks_lognormal(bad, 0, 0, 1)));
}

Test(calfile, ks_of_a_mismatched_sample_is_large)
{
    const size_t n = 20000;
    double crit = fit_ks_critical(n, 0.01);
    /* a lognormal tested against the wrong law */
    double *x = draw_lognormal(n, 1.0, 0.3, 7);
    double d = fit_ks_lognormal(x, n, 1.3, 0.3);
    cr_expect(d > 0.3 && d > 10 * crit, "ks %g against a shifted law", d);
    /* a two-mode mixture (half at 1 ms, half at 3 ms) fitted with one lognormal */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8);
    for (size_t i = 0; i < n; i++)
        x[i] = (i % 2 ? 1.0 : 3.0) * gsl_ran_lognormal(r, 0, 0.05);
    gsl_rng_free(r);
    fit_lognormal_t f;
    cr_assert_eq(fit_lognormal(x, n, &f), 0);
    cr_expect(f.ks > 0.2 && f.ks > 10 * crit, "ks %g of a bimodal sample", f.ks);
    free(x);
}

/* ---- write, then read ---- */

static void expect_same_file(const calf_file *a, const calf_file *b)
{
    cr_expect_eq(a->version, b->version);
    cr_expect_str_eq(a->device.name, b->device.name);
    cr_expect_str_eq(a->device.backend, b->device.backend);
    cr_expect_str_eq(a->device.driver, b->device.driver);
    cr_expect_str_eq(a->device.libraries, b->device.libraries);
    cr_expect_str_eq(a->device.clocks, b->device.clocks);
    cr_expect_str_eq(a->date, b->date);
    cr_expect_str_eq(a->backend, b->backend);
    cr_assert_eq(a->nops, b->nops);
    for (int i = 0; i < a->nops; i++) {
        const calf_op *x = &a->ops[i], *y = &b->ops[i];
        cr_expect_str_eq(x->op, y->op);
        cr_expect_str_eq(x->model, y->model);
        cr_expect_str_eq(x->dtype, y->dtype);
        cr_assert_eq(x->npoints, y->npoints);
        for (int j = 0; j < x->npoints; j++) {
            const calf_point *p = &x->points[j], *q = &y->points[j];
            cr_expect(p->batch == q->batch && p->tokens_in == q->tokens_in &&
                      p->tokens_out == q->tokens_out && p->new_tokens == q->new_tokens &&
                      p->cache_len == q->cache_len && p->n == q->n, "op %d point %d: shape", i, j);
            const double u[] = { p->p50_ms, p->p95_ms, p->p99_ms, p->mean_ms, p->sd_ms, p->min_ms,
                                 p->mu, p->sigma, p->ks };
            const double v[] = { q->p50_ms, q->p95_ms, q->p99_ms, q->mean_ms, q->sd_ms, q->min_ms,
                                 q->mu, q->sigma, q->ks };
            for (int k = 0; k < 9; k++)
                cr_expect(u[k] == v[k], "op %d point %d field %d: %.17g written, %.17g read", i, j, k,
                          u[k], v[k]);
        }
    }
}

Test(calfile, round_trip_every_field)
{
    scratch s;
    scratch_new(&s);
    char path[256], err[512];
    scratch_path(&s, "rt.yaml", path, sizeof path);

    calf_file f = { .version = CALF_VERSION };
    snprintf(f.device.name, sizeof f.device.name, "NVIDIA H200: \"SXM\" \\ 141 GB");
    snprintf(f.device.backend, sizeof f.device.backend, "yes");            /* a YAML boolean */
    snprintf(f.device.driver, sizeof f.device.driver, "550.54.15");         /* a number-like string */
    snprintf(f.device.libraries, sizeof f.device.libraries, "CUDA 12.4, cuBLAS 12.4.5 # not a comment");
    snprintf(f.device.clocks, sizeof f.device.clocks, "unknown");
    snprintf(f.date, sizeof f.date, "2024-06-11T09:30:00Z");
    snprintf(f.backend, sizeof f.backend, "cuda");
    calf_op *enc = calfile_add_op(&f, "encode", "siglip-so400m-384", "bf16");
    cr_assert_not_null(enc);
    for (int b = 1; b <= 64; b *= 2) {
        double *x = draw_lognormal(57, log(3.0 * b), 0.05 + 0.01 * b, (unsigned long)b);
        calf_point p = { .batch = b, .tokens_in = 729, .tokens_out = 729 };
        /* arbitrary doubles go through the same rounding vlcalib uses */
        cr_assert_eq(calfile_point_from(&p, x, 57, x[0] * 1.0000001, x[1] / 3, M_PI * b, x[2], x[3] / 7,
                                        x[4]), 0);
        cr_assert_eq(calfile_add_point(enc, &p), 0);
        free(x);
    }
    calf_op *pre = calfile_add_op(&f, "prefill", "llama-3-8b", "bf16");
    cr_assert_not_null(pre);
    calf_point q = { .batch = 1, .new_tokens = 1024, .cache_len = 16384, .n = 1, .p50_ms = 0.1 + 0.2,
                     .p95_ms = 1e-7, .p99_ms = 123456.789, .mean_ms = 1.0 / 3.0, .sd_ms = 0,
                     .min_ms = 2.5e-300, .mu = -1.0 / 7.0, .sigma = 0, .ks = 1 };
    cr_assert_eq(calfile_add_point(pre, &q), 0);   /* unrounded: written in 17 digits when needed */

    cr_assert_eq(calfile_save(path, &f, "a comment\nover two lines", false, err, sizeof err), 0, "%s", err);
    cr_expect_eq(calfile_save(path, &f, NULL, false, err, sizeof err), -1, "replaced without force");
    cr_assert_eq(calfile_save(path, &f, NULL, true, err, sizeof err), 0, "%s", err);
    calf_file g;
    cr_assert_eq(calf_read(path, &g, err, sizeof err), 0, "%s", err);
    expect_same_file(&f, &g);
    calf_free(&g);
    calf_free(&f);
    cr_expect_eq(f.nops, 0);
    scratch_free(&s, (const char *const[]){ "rt.yaml", NULL });
}

Test(calfile, samples_path)
{
    char b[64];
    cr_assert_eq(calfile_samples_path("calib/data/h200.yaml", b, sizeof b), 0);
    cr_expect_str_eq(b, "calib/data/h200.samples.csv");
    calfile_samples_path("x.yml", b, sizeof b);
    cr_expect_str_eq(b, "x.samples.csv");
    calfile_samples_path("dir.v2/name", b, sizeof b);
    cr_expect_str_eq(b, "dir.v2/name.samples.csv");
    calfile_samples_path("dir/.yaml", b, sizeof b);
    cr_expect_str_eq(b, "dir/.yaml.samples.csv");
    cr_expect_eq(calfile_samples_path("a-rather-long-name.yaml", b, 8), -1);
}

/* ---- the reader's errors ---- */

static void expect_read_error(const char *text, const char *where, const char *gist)
{
    scratch s;
    scratch_new(&s);
    char path[256], err[512], want[320];
    scratch_path(&s, "bad.yaml", path, sizeof path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    calf_file g;
    memset(&g, 0xab, sizeof g);
    cr_expect_eq(calf_read(path, &g, err, sizeof err), -1, "accepted:\n%s", text);
    snprintf(want, sizeof want, "%s:%s", path, where);
    cr_expect(strncmp(err, want, strlen(want)) == 0, "want prefix '%s', got '%s'", want, err);
    cr_expect(strstr(err, gist) != NULL, "want '%s' in '%s'", gist, err);
    cr_expect(g.ops == NULL && g.nops == 0, "not zeroed after an error");
    scratch_free(&s, (const char *const[]){ "bad.yaml", NULL });
}

#define HEAD                                                                          \
    "vlcalib: 1\n"                                                                    \
    "device: {name: a, backend: b, driver: c, libraries: d, clocks: e}\n"             \
    "date: \"2024-01-01T00:00:00Z\"\n"                                                \
    "backend: cpu\n"

Test(calfile, read_errors)
{
    expect_read_error("vlcalib: 2\n", "1:10: vlcalib: ", "version 2 is not known");
    expect_read_error("name: t\n", "", "not a calibration file");
    expect_read_error("vlcalib: 1\ndate: x\n", "1:1: (root): ", "missing required key 'device'");
    expect_read_error(HEAD "ops:\n  - {op: encode, model: m, dtype: f, points: []}\n",
                      "6:46: ops[0].points: ", "at least one point");
    expect_read_error(HEAD "ops:\n  - {op: fly, model: m, dtype: f, points: []}\n",
                      "6:10: ops[0].op: ", "unknown op 'fly'");
    expect_read_error(HEAD "ops:\n  - {op: encode, model: m, dtype: f, points: [{batch: 1}]}\n",
                      "6:47: ops[0].points[0]: ", "missing required key 'tokens_in'");
    expect_read_error(HEAD "ops:\n  - op: encode\n    model: m\n    dtype: f\n    points:\n"
                      "      - {batch: 1, tokens_in: 0, tokens_out: 0, new_tokens: 0, cache_len: 0, n: 5,\n"
                      "         p50_ms: fast, p95_ms: 1, p99_ms: 1, mean_ms: 1, sd_ms: 0, min_ms: 1}\n",
                      "11:18: ops[0].points[0].p50_ms: ", "expected a finite number, got 'fast'");
    expect_read_error("vlcalib: [1\n", "2:1: (syntax): ", "");
    char err[512];
    calf_file g;
    cr_expect_eq(calf_read("/nonexistent/x.yaml", &g, err, sizeof err), -1);
    cr_expect(strstr(err, "cannot open /nonexistent/x.yaml") != NULL, "%s", err);
}

/* ---- tables from ops ---- */

Test(calfile, table_from_fixture)
{
    calf_file f;
    char err[512];
    cr_assert_eq(calf_read(FIXTURE, &f, err, sizeof err), 0, "%s", err);
    calf_select any = { -1, -1, -1, false };
    batch_table t;
    int raised = -1;
    double srms = 0;

    const calf_op *enc = calf_find(&f, "encode", "tiny");
    cr_assert_not_null(enc);
    cr_assert_eq(calf_table(enc, &any, &t, &raised, &srms, err, sizeof err), 0, "%s", err);
    cr_expect(!t.by_tokens);
    cr_assert_eq(t.n, 3);
    const double eb[] = { 1, 4, 16 }, ems[] = { 2, 5, 14 };
    for (int i = 0; i < 3; i++)
        cr_expect(t.batch[i] == eb[i] && t.ms[i] == ems[i], "point %d: %g %g", i, t.batch[i], t.ms[i]);
    cr_expect_eq(raised, 0);
    cr_expect_float_eq(srms, sqrt(0.03), 1e-12);   /* sigmas 0.1, 0.2, 0.2 */
    calf_select mean = any;
    mean.use_mean = true;
    cr_assert_eq(calf_table(enc, &mean, &t, NULL, NULL, err, sizeof err), 0);
    cr_expect(t.ms[0] == 2.1 && t.ms[1] == 5.2 && t.ms[2] == 14.5);

    /* prefill: by tokens; the 256-token p50 (8.5 < 9) is raised to 9 */
    cr_assert_eq(calf_table(calf_find(&f, "prefill", "tiny"), &any, &t, &raised, NULL, err, sizeof err), 0);
    cr_expect(t.by_tokens);
    cr_assert_eq(t.n, 3);
    cr_expect(t.batch[0] == 16 && t.batch[1] == 64 && t.batch[2] == 256);
    cr_expect(t.ms[0] == 4 && t.ms[1] == 9 && t.ms[2] == 9);
    cr_expect_eq(raised, 1);

    /* decode: two cache lengths, so one must be chosen */
    const calf_op *dec = calf_find(&f, "decode", "tiny");
    cr_assert_not_null(dec);
    cr_expect_eq(calf_table(dec, &any, &t, NULL, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "several cache_len (16, 128); choose one with cache_len") != NULL, "%s", err);
    calf_select c128 = { -1, -1, 128, false };
    cr_assert_eq(calf_table(dec, &c128, &t, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_expect(t.n == 2 && t.batch[1] == 8 && t.ms[0] == 1.5 && t.ms[1] == 3);
    calf_select c99 = { -1, -1, 99, false };
    cr_expect_eq(calf_table(dec, &c99, &t, NULL, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "no decode point matches") != NULL, "%s", err);

    cr_expect_null(calf_find(&f, "encode", "big"));
    cr_expect_null(calf_find(&f, "reduce", "tiny"));
    calf_free(&f);
}

/* Exact at the grid points, non-decreasing and between its neighbours
 * everywhere in between. */
static void expect_interpolation(const batch_table *t)
{
    for (int i = 0; i < t->n; i++)
        cr_expect(cfg_table_ms(t, t->batch[i]) == t->ms[i], "grid point %g: %.17g vs %.17g", t->batch[i],
                  cfg_table_ms(t, t->batch[i]), t->ms[i]);
    double prev = cfg_table_ms(t, t->batch[0]);
    for (int i = 0; i + 1 < t->n; i++)
        for (int k = 1; k <= 200; k++) {
            double x = t->batch[i] + (t->batch[i + 1] - t->batch[i]) * k / 200.0;
            double y = cfg_table_ms(t, x);
            cr_expect(y >= prev - 1e-12 * prev, "not monotone at %g: %g after %g", x, y, prev);
            cr_expect(y >= t->ms[i] - 1e-12 && y <= t->ms[i + 1] + 1e-12, "%g outside [%g, %g] at %g", y,
                      t->ms[i], t->ms[i + 1], x);
            prev = y;
        }
}

Test(calfile, interpolation_of_the_shipped_file)
{
    calf_file f;
    char err[512];
    cr_assert_eq(calf_read(CPU_TINY, &f, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(f.backend, "cpu");
    batch_table t;
    calf_select any = { -1, -1, -1, false }, c0 = { -1, -1, 0, false }, c128 = { -1, -1, 128, false };
    const calf_op *enc = calf_find(&f, "encode", "tiny");
    cr_assert_not_null(enc);
    cr_assert_eq(calf_table(enc, &any, &t, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.n, 7);
    cr_expect(t.batch[0] == 1 && t.batch[6] == 64);
    expect_interpolation(&t);
    const calf_op *pre = calf_find(&f, "prefill", "tiny");
    cr_assert_not_null(pre);
    cr_assert_eq(calf_table(pre, &c0, &t, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_expect(t.by_tokens && t.n == 4);
    expect_interpolation(&t);
    const calf_op *dec = calf_find(&f, "decode", "tiny");
    cr_assert_not_null(dec);
    cr_assert_eq(calf_table(dec, &c128, &t, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.n, 7);
    expect_interpolation(&t);
    /* every point of the shipped file: a fit to its own samples */
    for (int i = 0; i < f.nops; i++)
        for (int j = 0; j < f.ops[i].npoints; j++) {
            const calf_point *p = &f.ops[i].points[j];
            cr_expect(p->n >= 50 && p->min_ms > 0 && p->min_ms <= p->p50_ms && p->p50_ms <= p->p95_ms &&
                      p->p95_ms <= p->p99_ms && p->sigma >= 0 && p->ks > 0 && p->ks < 1,
                      "%s point %d", f.ops[i].op, j);
        }
    calf_free(&f);
}

/* ---- vlcalib writes a calibration file ---- */

Test(calfile, vlcalib_writes_yaml_and_samples)
{
    scratch s;
    scratch_new(&s);
    char path[256], csv[256], err[512];
    scratch_path(&s, "t.yaml", path, sizeof path);
    scratch_path(&s, "t.samples.csv", csv, sizeof csv);
    char *argv[] = { "vlcalib", "--backend", "cpu", "--model", "tiny", "--ops", "reduce", "--reps", "3",
                     "--threads", "1", "--out", path, "--note", "test run" };
    FILE *out = tmpfile(), *errf = tmpfile();
    cr_assert(out && errf);
    int rc = vlcalib_main((int)(sizeof argv / sizeof argv[0]), argv, out, errf);
    cr_assert_eq(rc, 0, "vlcalib failed");
    calf_file f;
    cr_assert_eq(calf_read(path, &f, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(f.backend, "cpu");
    cr_expect_eq(f.version, 1);
    cr_assert_eq(f.nops, 1);
    cr_expect_str_eq(f.ops[0].op, "reduce");
    cr_expect_str_eq(f.ops[0].dtype, "float32");
    int npts = f.ops[0].npoints;
    cr_expect_eq(npts, 12);  /* batch 1, 8, 32 x tokens_out 37, 25, 12, 16 (49 tokens) */
    for (int j = 0; j < npts; j++)
        cr_expect_eq(f.ops[0].points[j].n, 3);
    cr_expect(strlen(f.date) == 20 && f.date[19] == 'Z', "%s", f.date);
    calf_free(&f);
    /* the samples: a header and one row per repetition */
    FILE *c = fopen(csv, "r");
    cr_assert_not_null(c);
    char line[256];
    int rows = 0;
    cr_assert_not_null(fgets(line, sizeof line, c));
    cr_expect_str_eq(line, CALFILE_SAMPLES_HEADER);
    while (fgets(line, sizeof line, c))
        rows++;
    fclose(c);
    cr_expect_eq(rows, 3 * npts);
    /* the YAML starts with the comment */
    c = fopen(path, "r");
    cr_assert_not_null(fgets(line, sizeof line, c));
    cr_expect(strstr(line, "CPU timings of model tiny") != NULL, "%s", line);
    fclose(c);
    /* a second run does not replace either file without --force */
    rewind(errf);
    rc = vlcalib_main((int)(sizeof argv / sizeof argv[0]), argv, out, errf);
    cr_expect_eq(rc, 2);
    fclose(out);
    fclose(errf);
    scratch_free(&s, (const char *const[]){ "t.yaml", "t.samples.csv", NULL });
}

/* ---- samples CSV and decode_video ---- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(calfile, samples_csv_errors)
{
    calf_file f;
    char err[512], p[256];
    cr_assert_eq(calf_read(FIXTURE, &f, err, sizeof err), 0, "%s", err);
    const calf_op *o = calf_find(&f, "encode", "tiny");
    cr_assert_not_null(o);
    double *vals[8] = { 0 };
    size_t counts[8] = { 0 };
    cr_assert_eq(calf_samples("calib/data/fixture-small.samples.csv", o, vals, counts, err, sizeof err), 0,
                 "%s", err);
    cr_expect_eq(counts[0], 3);
    cr_expect_eq(counts[2], 3);
    cr_expect(vals[1][0] == 4 && vals[1][2] == 6);
    for (int i = 0; i < o->npoints; i++)
        free(vals[i]);
    memset(vals, 0, sizeof vals);
    memset(counts, 0, sizeof counts);

    cr_expect_eq(calf_samples("/nonexistent/x.samples.csv", o, vals, counts, err, sizeof err), -1);
    cr_expect(strstr(err, "cannot open /nonexistent/x.samples.csv"), "%s", err);

    scratch s;
    scratch_new(&s);
    scratch_path(&s, "bad.samples.csv", p, sizeof p);
    write_text(p, "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\n"
                  "encode,tiny,1,49,49,0,0,0,1\nencode,tiny,1,49,49,0,0,1,abc\n");
    cr_expect_eq(calf_samples(p, o, vals, counts, err, sizeof err), -1);
    cr_expect(strstr(err, "bad.samples.csv:3: ms must be"), "%s", err);
    cr_expect(!vals[0] && !counts[0]);
    write_text(p, "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\nencode,tiny,1\n");
    cr_expect_eq(calf_samples(p, o, vals, counts, err, sizeof err), -1);
    cr_expect(strstr(err, "bad.samples.csv:2: expected 9 comma-separated fields"), "%s", err);
    write_text(p, "a,b\n");
    cr_expect_eq(calf_samples(p, o, vals, counts, err, sizeof err), -1);
    cr_expect(strstr(err, "bad.samples.csv:1: expected the header"), "%s", err);
    const char *names[] = { "bad.samples.csv", NULL };
    scratch_free(&s, names);

    /* the empirical jitter: ratios to each point's sample mean */
    calf_select sel = { .tokens_in = -1, .tokens_out = -1, .cache_len = -1 };
    double *r = NULL;
    size_t n = 0;
    cr_assert_eq(calf_empirical_ratios("calib/data/fixture-small.samples.csv", o, &sel, &r, &n, err,
                                       sizeof err), 0, "%s", err);
    cr_assert_eq(n, 9);
    cr_expect(r[0] == 0.5 && r[1] == 1 && r[2] == 1.5 && r[3] == 0.8 && r[8] == 16.0 / 14.0);
    free(r);
    calf_free(&f);
}

Test(calfile, decode_video_round_trip)
{
    calf_file f, g;
    char err[512], p[256];
    cr_assert_eq(calf_read("calib/data/fixture-video.yaml", &f, err, sizeof err), 0, "%s", err);
    cr_assert_eq(f.nops, 1);
    const calf_op *o = &f.ops[0];
    cr_expect_str_eq(o->op, "decode_video");
    cr_expect_str_eq(o->codec, "h264");
    cr_expect_str_eq(o->resolution, "64x64");
    cr_assert_eq(o->npoints, 2);
    cr_expect_str_eq(o->points[0].frame_type, "I");
    cr_expect_str_eq(o->points[1].frame_type, "P");
    scratch s;
    scratch_new(&s);
    scratch_path(&s, "v.yaml", p, sizeof p);
    cr_assert_eq(calfile_save(p, &f, "test", false, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calf_read(p, &g, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(g.ops[0].codec, "h264");
    cr_expect_str_eq(g.ops[0].resolution, "64x64");
    cr_expect_str_eq(g.ops[0].points[1].frame_type, "P");
    cr_expect(g.ops[0].points[1].mean_ms == 1.5);
    calf_free(&g);
    /* decode_video needs codec, resolution and a frame type per point */
    write_text(p, "vlcalib: 1\ndevice: {name: a, backend: a, driver: a, libraries: a, clocks: a}\n"
                  "date: x\nbackend: cpu\nops:\n  - {op: decode_video, model: m, dtype: d, codec: h264,\n"
                  "     resolution: 1x1, points: [{batch: 1, tokens_in: 0, tokens_out: 0, new_tokens: 0,\n"
                  "     cache_len: 0, n: 1, p50_ms: 1, p95_ms: 1, p99_ms: 1, mean_ms: 1, sd_ms: 0, min_ms: 1,\n"
                  "     fit: {dist: lognormal, mu: 0, sigma: 0, ks: 0}}]}\n");
    cr_expect_eq(calf_read(p, &g, err, sizeof err), -1);
    cr_expect(strstr(err, "ops[0].points[0]: missing required key 'frame_type'"), "%s", err);
    const char *names[] = { "v.yaml", NULL };
    scratch_free(&s, names);
    /* the shipped measurement reads */
    cr_assert_eq(calf_read("calib/data/cpu-h264-720p.yaml", &g, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(g.ops[0].op, "decode_video");
    calf_free(&g);
    calf_free(&f);
}


/* ---- the H100 calibration (calib/gpu-run.sh, 2026-12-05) ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One row of a samples CSV (op,model,batch,tokens_in,tokens_out,
 * new_tokens,cache_len,rep,ms), read here by hand. */
typedef struct {
    char op[32], model[64];
    int batch, tokens_in, tokens_out, new_tokens, cache_len;
    double ms;
} sample_row;

/* Every point of a shipped GPU file against its raw samples, recomputed here
 * from the CSV (read once): the count, the minimum and the median (the mean
 * of the two middle values of an even count). The file's statistics and its
 * samples were written by one run; a file edited by hand, or a samples file
 * from another run, fails. */
static void expect_points_match_samples(const char *yaml, const char *csv)
{
    calf_file f;
    char err[512];
    cr_assert_eq(calf_read(yaml, &f, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(f.backend, "cuda");
    cr_expect(strstr(f.device.name, "H100") != NULL, "%s", f.device.name);
    FILE *in = fopen(csv, "r");
    cr_assert_not_null(in, "%s", csv);
    size_t nrows = 0, cap = 0;
    sample_row *rows = NULL, row;
    char line[512];
    int rep;
    cr_assert_not_null(fgets(line, sizeof line, in));   /* header */
    while (fgets(line, sizeof line, in))
        if (sscanf(line, "%31[^,],%63[^,],%d,%d,%d,%d,%d,%d,%lf", row.op, row.model, &row.batch,
                   &row.tokens_in, &row.tokens_out, &row.new_tokens, &row.cache_len, &rep, &row.ms) == 9) {
            if (nrows == cap) {
                cap = cap ? 2 * cap : 1024;
                rows = realloc(rows, cap * sizeof *rows);
                cr_assert_not_null(rows);
            }
            rows[nrows++] = row;
        }
    fclose(in);
    int total = 0;
    for (int i = 0; i < f.nops; i++)
        for (int j = 0; j < f.ops[i].npoints; j++) {
            const calf_point *p = &f.ops[i].points[j];
            double ms[256];
            int n = 0;
            for (size_t k = 0; k < nrows; k++) {
                const sample_row *r = &rows[k];
                if (!strcmp(r->op, f.ops[i].op) && !strcmp(r->model, f.ops[i].model) && r->batch == p->batch
                    && r->tokens_in == p->tokens_in && r->tokens_out == p->tokens_out
                    && r->new_tokens == p->new_tokens && r->cache_len == p->cache_len) {
                    cr_assert_lt(n, 256);
                    ms[n++] = r->ms;
                }
            }
            qsort(ms, (size_t)n, sizeof ms[0], cmp_double);
            cr_expect_eq(n, p->n, "%s batch %d cache %d", f.ops[i].op, p->batch, p->cache_len);
            if (n == 0)
                continue;
            double med = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
            cr_expect(fabs(med - p->p50_ms) <= 2e-6 + 1e-6 * med, "%s batch %d: median %.6f, p50 %.6f",
                      f.ops[i].op, p->batch, med, p->p50_ms);
            cr_expect(fabs(ms[0] - p->min_ms) <= 2e-6, "%s batch %d: min", f.ops[i].op, p->batch);
            total++;
        }
    cr_expect_gt(total, 0);
    free(rows);
    calf_free(&f);
}

Test(calfile, h100_files_match_their_samples)
{
    static const char *const names[] = { "siglip-so400m-384", "llama-3-8b-prefill", "llama-3-8b-decode" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char yaml[128], csv[128];
        snprintf(yaml, sizeof yaml, "calib/data/h100-80gb-hbm3-%s.yaml", names[k]);
        snprintf(csv, sizeof csv, "calib/data/h100-80gb-hbm3-%s.samples.csv", names[k]);
        expect_points_match_samples(yaml, csv);
    }
}
