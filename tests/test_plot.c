/* test_plot.c — `vlsim plot` (models/plot.c) on a hand-made results.csv:
 * every file written and non-empty, real PNG and SVG, the frontier's data
 * file holding exactly the Pareto sets worked out by hand, the capacity
 * heatmap's SLA contour, a table without streams / gpus (frontier only, the
 * heatmap skipped with a note), and the failures: no results.csv, no
 * gnuplot, a gnuplot error, a missing template — none leaving a picture or
 * a temporary behind; and the one-run pictures of a sweep's point, run
 * again from its point file, whose numbers equal the sweep's. Needs gnuplot (make deps: gnuplot-nox); runs from the
 * repository root (the templates in plots/). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "models/frontier.h"
#include "models/plot.h"
#include "models/sweep.h"
#include "models/sweep_point.h"
#include "tests/kit_files.h"

/* ---- helpers -------------------------------------------------------------------- */

static void mk_tmpdir(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/vlsim-plot-XXXXXX");
    cr_assert_not_null(mkdtemp(buf));
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void write_in(const char *dir, const char *name, const char *text)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fputs(text, f);
    fclose(f);
}

static char *slurp_in(const char *dir, const char *name, size_t *len)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    if (len)
        *len = got;
    return s;
}

static bool exists_in(const char *dir, const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0;
}

/* No temporaries (".tmp") left in dir. */
static void assert_no_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        cr_assert_null(strstr(e->d_name, ".tmp"), "%s: temporary %s left behind", dir,
                       e->d_name);
    closedir(d);
}

static bool has_note(const plot_summary *s, const char *what)
{
    for (int k = 0; k < s->nnotes; k++)
        if (strstr(s->notes[k], what))
            return true;
    return false;
}

/* The point numbers (third column) of each index of frontier.dat whose
 * header says "Pareto set", as "5 0 1|8 6 9". */
static void pareto_points(const char *dat, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    bool in = false, first = true;
    int nsets = 0;
    for (const char *p = dat; *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
        if (line[0] == '#') {
            if (strstr(line, "# index") && strstr(line, "Pareto set")) {
                in = true;
                first = true;
                k += (size_t)snprintf(out + k, n - k, "%s", nsets++ ? "|" : "");
            }
        } else if (line[0] == 0) {
            in = false;
        } else if (in) {
            double cost, p99;
            char pt[64];
            cr_assert_eq(sscanf(line, "%lf %lf %63s", &cost, &p99, pt), 3, "bad line: %s", line);
            k += (size_t)snprintf(out + k, n - k, "%s%s", first ? "" : " ", pt);
            first = false;
        }
        p = e ? e + 1 : p + l;
    }
}

/* Two FPS groups on streams {8, 16, 32} x gpus {1, 2}. By hand, lower is
 * better on both cost and frame p99, rows dropping > 1 % left out:
 *   fps 10: p4 drops; p2 (0.125, 82) loses to p5 (0.125, 80); p3 (0.25, 50)
 *           to p0 (0.25, 44) -> {p5, p0, p1} by cost.
 *   fps 15: p10 drops; p11 (0.125, 300) loses to p8 (0.125, 120); p7 (0.5, 70)
 *           to p6 (0.25, 60); p6 and p9 tie -> {p8, p6, p9}.
 * Heatmap (fps 10 only; frame_p99_hi = p99 + 5): every cell meets p99 <= 200
 * but (32 streams, 1 GPU), which drops: two contour edges. */
static const char CSV[] =
    "point,streams,gpus,fps,frame_p50,frame_p50_lo,frame_p50_hi,frame_p95,frame_p95_lo,"
    "frame_p95_hi,frame_p99,frame_p99_lo,frame_p99_hi,drop_rate,gpu_util,cost_per_stream_hour,"
    "sla_pass\n"
    "0,8,1,10,30,29,31,40,39,41,44,39,49,0,0.78,0.25,1\n"
    "1,8,2,10,25,24,26,33,32,34,36,31,41,0,0.49,0.5,1\n"
    "2,16,1,10,57,56,58,76,75,77,82,77,87,0,1,0.125,1\n"
    "3,16,2,10,31,30,32,45,44,46,50,45,55,0,0.76,0.25,1\n"
    "4,32,1,10,136,135,137,148,147,149,152,147,157,0.44,1,0.0625,0\n"
    "5,32,2,10,55,54,56,75,74,76,80,75,85,0,1,0.125,1\n"
    "6,8,1,15,40,39,41,55,54,56,60,55,65,0,0.9,0.25,1\n"
    "7,8,2,15,45,44,46,65,64,66,70,65,75,0,0.6,0.5,1\n"
    "8,16,1,15,90,89,91,110,109,111,120,115,125,0,1,0.125,1\n"
    "9,16,2,15,40,39,41,55,54,56,60,55,65,0,0.8,0.25,1\n"
    "10,32,1,15,300,299,301,380,379,381,400,395,405,0.2,1,0.0625,0\n"
    "11,32,2,15,200,199,201,280,279,281,300,295,305,0,1,0.125,0\n";

static const char *const FILES[] = { "frontier.dat", "frontier.gp", "frontier.png",
                                     "frontier.svg", "capacity.dat", "capacity.gp",
                                     "capacity.png", "capacity.svg" };

static void assert_picture(const char *dir, const char *name)
{
    size_t len = 0;
    char *s = slurp_in(dir, name, &len);
    cr_assert_not_null(s, "%s/%s missing", dir, name);
    cr_assert_gt(len, 0, "%s/%s is empty", dir, name);
    if (strstr(name, ".png"))
        cr_assert(len > 8 && memcmp(s, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: not a PNG", name);
    if (strstr(name, ".svg"))
        cr_assert_not_null(strstr(s, "<svg"), "%s: not an SVG", name);
    free(s);
}

/* ---- tests ------------------------------------------------------------------------ */

Test(plot, frontier_and_heatmap)
{
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    write_in(dir, "results.csv", CSV);
    plot_opts o;
    plot_opts_default(&o);
    plot_summary s;
    o.summary = &s;
    char err[1024] = "";
    int rc = plot_dir(dir, &o, err, sizeof err);
    cr_assert_eq(rc, PLOT_OK, "%s", err);
    for (size_t k = 0; k < sizeof FILES / sizeof FILES[0]; k++)
        assert_picture(dir, FILES[k]);
    cr_assert_eq(s.nfiles, 8);
    cr_assert(has_note(&s, "frontier: 2 points left out for dropping"));
    cr_assert(has_note(&s, "capacity: drew only the points with fps 10"));
    assert_no_temporaries(dir);

    char *dat = slurp_in(dir, "frontier.dat", NULL);
    char got[256];
    pareto_points(dat, got, sizeof got);
    cr_assert_str_eq(got, "5 0 1|8 6 9");
    free(dat);

    /* the heatmap: 6 cells, two contour edges around (32 streams, 1 GPU) */
    char *cap = slurp_in(dir, "capacity.dat", NULL);
    cr_assert_not_null(strstr(cap, "\n1.5 -0.5\n1.5 0.5\n\n"), "%s", cap);
    cr_assert_not_null(strstr(cap, "\n1.5 0.5\n2.5 0.5\n\n"), "%s", cap);
    cr_assert_not_null(strstr(cap, "\"152*\""), "%s", cap);
    free(cap);
    char *gp = slurp_in(dir, "capacity.gp", NULL);
    cr_assert_not_null(strstr(gp, "only the points with fps 10"));
    cr_assert_not_null(strstr(gp, "frame p99 <= 200 ms"));
    free(gp);
    gp = slurp_in(dir, "frontier.gp", NULL);
    cr_assert_not_null(strstr(gp, "200 with lines"), "the SLA line");
    cr_assert_not_null(strstr(gp, "\"10 fps: Pareto set\", \"15 fps: Pareto set\""));
    free(gp);

    /* again, with two targets, one of them not frame p99: replaced, noted */
    frontier_target tg[2];
    char e2[256];
    cr_assert_eq(frontier_target_parse("frame p99 <= 60", &tg[0], e2, sizeof e2), 0, "%s", e2);
    cr_assert_eq(frontier_target_parse("frame p95 <= 100", &tg[1], e2, sizeof e2), 0, "%s", e2);
    o.targets = tg;
    o.ntargets = 2;
    rc = plot_dir(dir, &o, err, sizeof err);
    cr_assert_eq(rc, PLOT_OK, "%s", err);
    cr_assert(has_note(&s, "target frame p95 <= 100 ms not drawn"));
    gp = slurp_in(dir, "frontier.gp", NULL);
    cr_assert_not_null(strstr(gp, "60 with lines"));
    cr_assert_null(strstr(gp, "200 with lines"));
    free(gp);
    assert_no_temporaries(dir);
    rm_tree(dir);
}

Test(plot, no_streams_or_gpus_skips_the_heatmap)
{
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    write_in(dir, "results.csv",
             "point,stages.encode.max_batch,frame_p50,frame_p99,frame_p99_hi,drop_rate,"
             "cost_per_stream_hour\n"
             "0,1,10,50,55,0,0.5\n"
             "1,4,12,40,45,0,0.5\n"
             "2,8,15,70,75,0,0.25\n"
             "3,16,30,90,95,0,0.25\n");
    plot_opts o;
    plot_opts_default(&o);
    plot_summary s;
    o.summary = &s;
    char err[1024] = "";
    cr_assert_eq(plot_dir(dir, &o, err, sizeof err), PLOT_OK, "%s", err);
    for (size_t k = 0; k < 4; k++)
        assert_picture(dir, FILES[k]);
    for (size_t k = 4; k < 8; k++)
        cr_assert(!exists_in(dir, FILES[k]), "%s written", FILES[k]);
    cr_assert(has_note(&s, "capacity: skipped"), "%s", s.nnotes ? s.notes[0] : "(no note)");
    cr_assert(has_note(&s, "streams or gpus"));
    char *dat = slurp_in(dir, "frontier.dat", NULL);
    char got[256];
    pareto_points(dat, got, sizeof got);
    cr_assert_str_eq(got, "2 1");
    cr_assert_not_null(strstr(dat, "all points"));
    free(dat);
    assert_no_temporaries(dir);
    rm_tree(dir);
}

Test(plot, missing_results_csv)
{
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    plot_opts o;
    plot_opts_default(&o);
    char err[1024] = "";
    cr_assert_eq(plot_dir(dir, &o, err, sizeof err), PLOT_BAD_INPUT);
    cr_assert_not_null(strstr(err, "results.csv"), "%s", err);
    cr_assert_not_null(strstr(err, dir), "%s", err);
    rm_tree(dir);
    cr_assert_eq(plot_dir("/nonexistent/vlsim-plot", &o, err, sizeof err), PLOT_BAD_INPUT);
    cr_assert_not_null(strstr(err, "/nonexistent/vlsim-plot"), "%s", err);
}

Test(plot, no_gnuplot)
{
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    write_in(dir, "results.csv", CSV);
    plot_opts o;
    plot_opts_default(&o);
    o.gnuplot = "vlsim-test-no-such-gnuplot";
    char err[1024] = "";
    cr_assert_eq(plot_dir(dir, &o, err, sizeof err), PLOT_FAIL);
    cr_assert_not_null(strstr(err, "not found on PATH"), "%s", err);
    cr_assert_not_null(strstr(err, "gnuplot-nox"), "%s", err);
    cr_assert(!exists_in(dir, "frontier.png"));
    cr_assert(!exists_in(dir, "frontier.svg"));
    assert_no_temporaries(dir);
    rm_tree(dir);
}

Test(plot, gnuplot_error_is_reported)
{
    char dir[64], tdir[64];
    mk_tmpdir(dir, sizeof dir);
    mk_tmpdir(tdir, sizeof tdir);
    write_in(dir, "results.csv", CSV);
    write_in(tdir, "frontier.gp.in",
             "set terminal svg\nset output svg_out\nplot \"@DATA@\" using 1:2\n"
             "set nosuchoption\n");
    plot_opts o;
    plot_opts_default(&o);
    o.template_dir = tdir;
    char err[1024] = "";
    cr_assert_eq(plot_dir(dir, &o, err, sizeof err), PLOT_FAIL);
    cr_assert_not_null(strstr(err, "frontier.gp"), "%s", err);
    cr_assert_not_null(strstr(err, "line 4"), "gnuplot's error line: %s", err);
    cr_assert(!exists_in(dir, "frontier.png"));
    cr_assert(!exists_in(dir, "frontier.svg"));
    assert_no_temporaries(dir);

    /* a missing template: bad input naming it */
    char tpl[128];
    snprintf(tpl, sizeof tpl, "%s/frontier.gp.in", tdir);
    unlink(tpl);
    cr_assert_eq(plot_dir(dir, &o, err, sizeof err), PLOT_BAD_INPUT);
    cr_assert_not_null(strstr(err, "frontier.gp.in"), "%s", err);
    rm_tree(dir);
    rm_tree(tdir);
}

/* ---- plot_run: the pictures of one run ---------------------------------------------- */

/* A run built by hand: frame stages "decode" (budget 30) and "infer"
 * (budget 50), a response stage left out of every picture. */
typedef struct {
    scenario_cfg cfg;
    run_result r;
    series_point pts[5];
} hand_run;

static void hand_run_init(hand_run *h)
{
    memset(h, 0, sizeof *h);
    h->cfg.nstages = 3;
    h->cfg.stages = calloc(3, sizeof *h->cfg.stages);
    const char *names[3] = { "decode", "infer", "response" };
    const double budgets[3] = { 30, 50, 0 };
    for (int s = 0; s < 3; s++) {
        snprintf(h->cfg.stages[s].name, sizeof h->cfg.stages[s].name, "%s", names[s]);
        h->cfg.stages[s].path = s == 2 ? PATH_RESPONSE : PATH_FRAME;
        h->cfg.stages[s].budget_ms = budgets[s];
    }
    run_result *r = &h->r;
    r->cfg = &h->cfg;
    r->nrep = 1;
    r->stage = calloc(3, sizeof *r->stage);
    r->stage[0].sojourn.p99.mean = 12.5;
    r->stage[1].sojourn.p99.mean = 41.25;
    r->stage[2].sojourn.p99.mean = 999;
    r->e2e.p99.mean = 47.75;
    r->cdf_stage = calloc(3, sizeof *r->cdf_stage);
    for (int s = 0; s < 3; s++)
        cr_assert_eq(hist_init(&r->cdf_stage[s]), 0);
    cr_assert_eq(hist_init(&r->cdf_e2e), 0);
    for (int v = 1; v <= 100; v++)           /* decode: 1..100 ms, 10 % at or below 10 */
        hist_record(&r->cdf_stage[0], v);
    for (int k = 0; k < 20000; k++)          /* infer: many values, to be thinned */
        hist_record(&r->cdf_stage[1], 1 + k * 0.05);
    hist_record(&r->cdf_stage[2], 5);
    hist_record(&r->cdf_e2e, 0);             /* e2e: 0, 5, 50, 500: 3/4 at or below 50 */
    hist_record(&r->cdf_e2e, 5);
    hist_record(&r->cdf_e2e, 50);
    hist_record(&r->cdf_e2e, 500);
    for (int k = 0; k < 5; k++)
        h->pts[k] = (series_point){ .t_s = k + 1, .fps = 100 + 10 * k, .level = k / 2,
                                    .queue_fill = 0.125 * k, .p99_ms = 20 + 7.5 * k };
    r->series = h->pts;
    r->nseries = 5;
}

static void hand_run_free(hand_run *h)
{
    for (int s = 0; s < 3; s++)
        hist_free(&h->r.cdf_stage[s]);
    hist_free(&h->r.cdf_e2e);
    free(h->r.cdf_stage);
    free(h->r.stage);
    free(h->cfg.stages);
}

/* Each curve of cdf.dat: fractions non-decreasing, ending at 1, at most
 * ~400 points; returns the number of curves. Sets *at50 to the e2e fraction
 * at the point whose x is within 50's bucket, *at10 to decode's at 10. */
static int check_cdf(const char *dat, double *at10, double *at50)
{
    int ncurves = 0, npts = 0;
    double last = -1;
    bool in = false;
    const char *p = dat;
    char title[512] = "";
    for (;;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
        if (line[0] == 0 || line[0] == '#') {
            if (in) {
                cr_assert_float_eq(last, 1.0, 1e-12, "%s: ends at %g", title, last);
                cr_assert_leq(npts, 402, "%s: %d points", title, npts);
                in = false;
            }
            if (strncmp(line, "# index", 7) == 0)
                snprintf(title, sizeof title, "%s", line);
        } else {
            double x, f;
            cr_assert_eq(sscanf(line, "%lf %lf", &x, &f), 2, "%s", line);
            if (!in) {
                in = true;
                ncurves++;
                npts = 0;
                last = -1;
            }
            cr_assert_geq(f, last, "%s: fraction falls at %g", title, x);
            cr_assert(f > 0 && f <= 1);
            last = f;
            npts++;
            if (strstr(title, "decode") && x >= 10 && x < 10.02)
                *at10 = f;
            if (strstr(title, "frame end to end") && x >= 50 && x < 50.1)
                *at50 = f;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return ncurves;
}

Test(plot, run_pictures)
{
    hand_run h;
    hand_run_init(&h);
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    plot_opts o;
    plot_opts_default(&o);
    plot_summary s;
    o.summary = &s;
    char err[1024] = "";
    int rc = plot_run(&h.r, dir, &o, err, sizeof err);
    cr_assert_eq(rc, PLOT_OK, "%s", err);
    static const char *const RUN_FILES[] = {
        "cdf.dat", "cdf.gp", "cdf.png", "cdf.svg", "budget.dat", "budget.gp", "budget.png",
        "budget.svg", "series.dat", "series.gp", "series.png", "series.svg",
    };
    for (size_t k = 0; k < sizeof RUN_FILES / sizeof RUN_FILES[0]; k++)
        assert_picture(dir, RUN_FILES[k]);
    cr_assert_eq(s.nfiles, 12);
    assert_no_temporaries(dir);

    char *cdf = slurp_in(dir, "cdf.dat", NULL);
    double at10 = -1, at50 = -1;
    cr_assert_eq(check_cdf(cdf, &at10, &at50), 3, "decode, infer, e2e: %s", cdf);
    cr_assert_null(strstr(cdf, "response"));
    cr_assert_float_eq(at10, 0.10, 1e-12, "decode at 10 ms");
    cr_assert_float_eq(at50, 0.75, 1e-12, "e2e at 50 ms");
    free(cdf);
    char *gp = slurp_in(dir, "cdf.gp", NULL);
    cr_assert_not_null(strstr(gp, "where the tail comes from"));
    cr_assert_not_null(strstr(gp, "\"infer (sojourn)\""));
    free(gp);

    char *bud = slurp_in(dir, "budget.dat", NULL);
    cr_assert_not_null(strstr(bud, "\n0 decode 12.5 30 0 12.5 0 30\n"), "%s", bud);
    cr_assert_not_null(strstr(bud, "\n1 infer 41.25 50 12.5 53.75 30 80\n"), "%s", bud);
    cr_assert_null(strstr(bud, "response"));
    free(bud);
    gp = slurp_in(dir, "budget.gp", NULL);
    cr_assert_not_null(strstr(gp, "e2e_p99 = 47.75"));
    cr_assert_not_null(strstr(gp, "sum of stage p99s 53.75 ms, sum of budgets 80 ms"));
    free(gp);

    char *ser = slurp_in(dir, "series.dat", NULL);
    cr_assert_not_null(strstr(ser, "\n1 100 0 0 20\n2 110 0 0.125 27.5\n3 120 1 0.25 35\n"
                              "4 130 1 0.375 42.5\n5 140 2 0.5 50\n"), "%s", ser);
    free(ser);
    rm_tree(dir);
    hand_run_free(&h);
}

Test(plot, run_without_series_or_budgets)
{
    hand_run h;
    hand_run_init(&h);
    h.r.nseries = 0;
    h.cfg.stages[1].budget_ms = 0;
    hist_reset(&h.r.cdf_stage[1]);   /* infer: nothing recorded */
    char dir[64];
    mk_tmpdir(dir, sizeof dir);
    plot_opts o;
    plot_opts_default(&o);
    plot_summary s;
    o.summary = &s;
    char err[1024] = "";
    cr_assert_eq(plot_run(&h.r, dir, &o, err, sizeof err), PLOT_OK, "%s", err);
    cr_assert_eq(s.nfiles, 8);
    cr_assert(!exists_in(dir, "series.dat"));
    cr_assert(!exists_in(dir, "series.png"));
    cr_assert(has_note(&s, "series: skipped"));
    cr_assert(has_note(&s, "cdf: infer (sojourn) skipped, no values"));
    cr_assert(has_note(&s, "budget: 1 stage without a budget"));
    char *gp = slurp_in(dir, "budget.gp", NULL);
    cr_assert_not_null(strstr(gp, "infer (no budget: 0)"));
    free(gp);
    char *bud = slurp_in(dir, "budget.dat", NULL);
    cr_assert_not_null(strstr(bud, "\n1 infer 41.25 0 12.5 53.75 30 30\n"), "%s", bud);
    free(bud);
    assert_no_temporaries(dir);
    rm_tree(dir);

    /* no directory: bad input */
    cr_assert_eq(plot_run(&h.r, "/nonexistent/vlsim-plot", &o, err, sizeof err), PLOT_BAD_INPUT);
    hand_run_free(&h);
}

/* ---- one point of a sweep, again ------------------------------------------------------ */

#define EXAMPLE "scenarios/sweep-example.yaml"

/* Column `name` of a CSV row (no quoted fields), given its header. */
static void csv_cell(const char *header, const char *row, const char *name, char *out, size_t n)
{
    int col = -1, k = 0;
    for (const char *p = header; p && *p; k++) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (strlen(name) == l && strncmp(p, name, l) == 0)
            col = k;
        p = e ? e + 1 : NULL;
    }
    cr_assert_geq(col, 0, "no column %s", name);
    const char *p = row;
    for (k = 0; k < col; k++) {
        p = strchr(p, ',');
        cr_assert_not_null(p);
        p++;
    }
    const char *e = strpbrk(p, ",\n");
    size_t l = e ? (size_t)(e - p) : strlen(p);
    snprintf(out, n, "%.*s", (int)l, p);
}

/* The line of results.csv whose point column is p (the header: line 0). */
static char *csv_line(const char *csv, int line)
{
    const char *p = csv;
    for (int k = 0; k < line; k++) {
        p = strchr(p, '\n');
        cr_assert_not_null(p);
        p++;
    }
    const char *e = strchr(p, '\n');
    return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

static void expect_cell(const char *header, const char *row, const char *name, double v)
{
    char got[64], want[64] = "";
    csv_cell(header, row, name, got, sizeof got);
    if (isfinite(v))
        snprintf(want, sizeof want, "%.10g", v);
    cr_expect_str_eq(got, want, "%s: the sweep has %s, the run again %s", name, got, want);
}

Test(plot, sweep_point_run_again, .timeout = 120)
{
    char d[64];
    mk_tmpdir(d, sizeof d);
    sweep_opts so = { .out_dir = d, .jobs = 2, .replications = 2, .duration_s = 20 };
    char err[2048] = "";
    cr_assert_eq(sweep_run(EXAMPLE, &so, err, sizeof err), SWEEP_OK, "%s", err);
    char *csv = slurp_in(d, "results.csv", NULL);
    cr_assert_not_null(csv);
    char *header = csv_line(csv, 0);

    /* the pick, by hand from results.csv: the least cost among the rows
     * that pass every SLA line and drop at most 1 % */
    frontier_table t;
    char path[256];
    snprintf(path, sizeof path, "%s/results.csv", d);
    cr_assert_eq(frontier_read(path, &t, err, sizeof err), 0, "%s", err);
    double best = INFINITY;
    for (int r = 0; r < t.nrows; r++) {
        char sla[8], drop[32], cost[32];
        char *row = csv_line(csv, r + 1);
        csv_cell(header, row, "sla_pass", sla, sizeof sla);
        csv_cell(header, row, "drop_rate", drop, sizeof drop);
        csv_cell(header, row, "cost_per_stream_hour", cost, sizeof cost);
        if (!strcmp(sla, "1") && atof(drop) <= 0.01 && atof(cost) < best)
            best = atof(cost);
        free(row);
    }
    frontier_free(&t);
    cr_assert(isfinite(best), "some point of the example passes its SLA");
    plot_opts po;
    plot_opts_default(&po);
    plot_summary s;
    po.summary = &s;
    sweep_plot_info info;
    cr_assert_eq(sweep_plot_point(d, -1, NULL, 2, &po, &info, err, sizeof err), PLOT_OK, "%s",
                 err);
    char *row = csv_line(csv, info.point + 1);
    char cell[64];
    csv_cell(header, row, "sla_pass", cell, sizeof cell);
    cr_expect_str_eq(cell, "1");
    csv_cell(header, row, "cost_per_stream_hour", cell, sizeof cell);
    cr_expect_float_eq(atof(cell), best, 1e-12, "point %d costs %s, the least passing %g",
                       info.point, cell, best);
    cr_expect(strstr(info.why, "cheapest") != NULL, "%s", info.why);
    cr_expect(info.same, "the run again equals point %d's file", info.point);
    char streams[16], gpus[16], want[128];
    csv_cell(header, row, "streams", streams, sizeof streams);
    csv_cell(header, row, "gpus", gpus, sizeof gpus);
    snprintf(want, sizeof want, "point %d (streams=%s, gpus=%s)", info.point, streams, gpus);
    cr_expect_str_eq(info.label, want);

    /* the one-run pictures: every file, non-empty, real PNG / SVG, the
     * point named in the titles, and gnuplot redraws them without a word */
    static const char *const RUN_FILES[] = {
        "cdf.dat", "cdf.gp", "cdf.png", "cdf.svg", "budget.dat", "budget.gp", "budget.png",
        "budget.svg", "series.dat", "series.gp", "series.png", "series.svg",
    };
    for (size_t k = 0; k < sizeof RUN_FILES / sizeof RUN_FILES[0]; k++)
        assert_picture(d, RUN_FILES[k]);
    cr_expect_eq(s.nfiles, 12);
    assert_no_temporaries(d);
    char *gp = slurp_in(d, "cdf.gp", NULL);
    cr_expect(strstr(gp, want) != NULL, "cdf.gp names %s", want);
    free(gp);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot cdf.gp budget.gp series.gp > gp.out 2>&1", d);
    cr_expect_eq(system(cmd), 0);
    size_t glen = 1;
    char *gout = slurp_in(d, "gp.out", &glen);
    cr_expect_eq(glen, 0, "gnuplot said: %s", gout ? gout : "");
    free(gout);
    snprintf(path, sizeof path, "%s/gp.out", d);
    unlink(path);
    /* the directory is still a sweep's: a resume accepts it and runs nothing */
    sweep_summary sum;
    so.resume = true;
    so.summary = &sum;
    cr_expect_eq(sweep_run(EXAMPLE, &so, err, sizeof err), SWEEP_OK, "%s", err);
    cr_expect_eq(sum.nrun, 0);

    /* the numbers of the run again equal the sweep's own run of the point
     * (its row in results.csv), on another thread count */
    scenario_cfg cfg;
    run_result res;
    bool same = false;
    char label[512];
    cr_assert_eq(sweep_rerun_point(d, info.point, NULL, 1, &cfg, &res, &same, label,
                                   sizeof label, err, sizeof err), 0, "%s", err);
    cr_expect(same);
    expect_cell(header, row, "frame_p50", res.e2e.p50.mean);
    expect_cell(header, row, "frame_p95", res.e2e.p95.mean);
    expect_cell(header, row, "frame_p99", res.e2e.p99.mean);
    expect_cell(header, row, "frame_p99_lo", res.e2e.p99.lo);
    expect_cell(header, row, "frame_p99_hi", res.e2e.p99.hi);
    expect_cell(header, row, "drop_rate", res.drop_rate.mean);
    expect_cell(header, row, "cost_per_stream_hour", res.cost_per_stream_hour);
    for (int st = 0; st < cfg.nstages; st++) {
        char col[96];
        snprintf(col, sizeof col, "p99_%s", cfg.stages[st].name);
        expect_cell(header, row, col, res.stage[st].sojourn.p99.mean);
    }
    cr_expect_eq(cfg.workload.streams, atoi(streams));
    cr_expect_eq(cfg.cluster.gpus, atoi(gpus));
    cr_expect_eq(cfg.replications, 2);
    cr_expect_float_eq(cfg.duration_s, 20, 1e-12);
    run_result_free(&res);
    cfg_free(&cfg);
    free(row);

    /* --point: that one */
    cr_assert_eq(sweep_plot_point(d, 0, NULL, 2, &po, &info, err, sizeof err), PLOT_OK, "%s", err);
    cr_expect_eq(info.point, 0);
    cr_expect(info.same);
    cr_expect_str_eq(info.why, "chosen with --point");
    cr_expect_eq(sweep_plot_point(d, 999, NULL, 2, &po, &info, err, sizeof err), PLOT_BAD_INPUT);
    cr_expect(strstr(err, "00999.json") != NULL, "%s", err);

    /* an older point file, without "scenario": a clear error, and it runs
     * again when the scenario is named */
    snprintf(path, sizeof path, "%s/points/00000.json", d);
    char *pf = slurp_in(d, "points/00000.json", NULL);
    char *sc = strstr(pf, "  \"scenario\": ");
    cr_assert_not_null(sc);
    char *eol = strchr(sc, '\n');
    memmove(sc, eol + 1, strlen(eol + 1) + 1);
    write_in(d, "points/00000.json", pf);
    free(pf);
    cr_expect_eq(sweep_rerun_point(d, 0, NULL, 1, &cfg, &res, &same, label, sizeof label, err,
                                   sizeof err), -2);
    cr_expect(strstr(err, "does not record its scenario") != NULL, "%s", err);
    cr_expect(strstr(err, "--scenario FILE") != NULL, "%s", err);
    same = false;
    cr_assert_eq(sweep_rerun_point(d, 0, EXAMPLE, 1, &cfg, &res, &same, label, sizeof label, err,
                                   sizeof err), 0, "%s", err);
    cr_expect(same);
    run_result_free(&res);
    cfg_free(&cfg);
    /* a scenario whose bytes changed */
    char *text = slurp_in(".", EXAMPLE, NULL);
    char *moved = malloc(strlen(text) + 32);
    sprintf(moved, "%s# edited\n", text);
    write_in(d, "edited.yaml", moved);
    free(moved);
    free(text);
    snprintf(path, sizeof path, "%s/edited.yaml", d);
    cr_expect_eq(sweep_rerun_point(d, 0, path, 1, &cfg, &res, &same, label, sizeof label, err,
                                   sizeof err), -2);
    cr_expect(strstr(err, "its bytes are not those") != NULL, "%s", err);
    free(header);
    free(csv);
    kit_rm_rf(d);
}
