/* test_compare.c — A/B comparison by same-frame replay (models/compare.c):
 * identical configurations give a paired interval of exactly zero width on
 * every statistic; a 5 % slower M/M/1 server gives a paired interval much
 * tighter than the unpaired one, with the right sign and covering the
 * closed-form difference of sojourn means 1/(mu'-lambda) - 1/(mu-lambda);
 * both intervals match the textbook formulas computed here from the
 * per-replication values; replication 0's values equal a lone replication
 * 0 run through pipe_run; the shadow cost adds B's GPUs to A's by hand; and
 * the command line writes its JSON atomically and refuses to overwrite.
 * Runs from the repository root. */
#include <gsl/gsl_cdf.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/kit.h"
#include "models/compare.h"
#include "models/scenario.h"
#include "tests/kit_files.h"

static double stat_k(const rep_lat *v, int k)
{
    const double x[CMP_NSTAT] = { v->mean, v->p50, v->p90, v->p95, v->p99, v->p999 };
    return x[k];
}

static void exact_zero(const cmp_metric *m)
{
    for (int k = 0; k < CMP_NSTAT; k++) {
        const stats_ci *p = &m->st[k].paired;
        cr_expect(p->mean == 0 && p->lo == 0 && p->hi == 0,
                  "%s %s: paired diff %.17g [%.17g, %.17g], want exactly 0 [0, 0]", m->name,
                  cmp_stat_name[k], p->mean, p->lo, p->hi);
    }
}

Test(compare, identical_configs_give_zero_width, .timeout = 120)
{
    /* the shipped scenario (frames and the response path), run twice */
    static const scn_override ov[] = { { "replications", "3" }, { "duration_s", "20" },
                                       { "warmup_s", "5" } };
    scenario_cfg a, b;
    char err[2048] = "";
    cr_assert_eq(scn_load_ex("scenarios/default.yaml", ov, 3, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scn_load_ex("scenarios/default.yaml", ov, 3, &b, err, sizeof err), 0, "%s", err);
    run_opts o = { 2, NULL, NULL, NULL };
    run_result ra, rb;
    cr_assert_eq(cmp_run(&a, &b, false, &o, &ra, &rb, err, sizeof err), 0, "%s", err);
    cmp_result c;
    cr_assert_eq(cmp_compute(&ra, &rb, false, &c, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.nrep, 3);
    cr_expect(c.response.present);
    exact_zero(&c.frame);
    exact_zero(&c.response);
    cr_expect_eq(c.nstage, a.nstages);
    for (int s = 0; s < c.nstage; s++)
        exact_zero(&c.stage[s]);
    /* the unpaired interval of the same data is not degenerate */
    cr_expect_gt(c.frame.st[4].unpaired.hi - c.frame.st[4].unpaired.lo, 0);
    cmp_free(&c);
    run_result_free(&ra);
    run_result_free(&rb);
    cfg_free(&a);
    cfg_free(&b);
}

/* Poisson arrivals at lambda into one exponential server of mean ms. */
static void mm1(scenario_cfg *c, double lambda_hz, double mean_ms, int reps, double dur_s)
{
    kit_base(c, "mm1", 2024, 1, 0, 20, dur_s, reps);
    poisson(c, lambda_hz);
    dist_free(&c->stages[0].service);
    cr_assert_null(dist_init_exponential(&c->stages[0].service, mean_ms));
}

Test(compare, pairing_is_tighter_and_matches_hand_formulas, .timeout = 120)
{
    /* A: mu = 100/s; B: 5 % slower, mu' = 100/1.05; lambda = 50/s */
    const double lambda = 50, ms_a = 10, ms_b = 10.5;
    const int n = 10;
    scenario_cfg a, b;
    mm1(&a, lambda, ms_a, n, 200);
    mm1(&b, lambda, ms_b, n, 200);
    run_opts o = { 2, NULL, NULL, NULL };
    run_result ra, rb;
    char err[1024] = "";
    cr_assert_eq(cmp_run(&a, &b, false, &o, &ra, &rb, err, sizeof err), 0, "%s", err);
    cmp_result c;
    cr_assert_eq(cmp_compute(&ra, &rb, false, &c, err, sizeof err), 0, "%s", err);
    cr_expect(!c.response.present);
    cr_expect_eq(c.nstage, 1);

    /* M/M/1 sojourn mean 1/(mu - lambda): 20 ms against 1/(95.238 - 50) s */
    double mu_a = 1000.0 / ms_a, mu_b = 1000.0 / ms_b;
    double want = 1000.0 / (mu_b - lambda) - 1000.0 / (mu_a - lambda);
    const stats_ci *pm = &c.frame.st[0].paired;
    if (verbose())
        printf("  mean diff %.4f [%.4f, %.4f], closed form %.4f\n", pm->mean, pm->lo, pm->hi, want);
    cr_expect(pm->lo > 0, "B is slower: the paired interval of the mean difference [%g, %g] "
                          "should lie above 0", pm->lo, pm->hi);
    cr_expect(pm->lo <= want && want <= pm->hi, "closed-form difference %g outside [%g, %g]",
              want, pm->lo, pm->hi);

    for (int k = 0; k < CMP_NSTAT; k++) {
        const cmp_stat *s = &c.frame.st[k];
        double x[16], y[16], d[16];
        for (int r = 0; r < n; r++) {
            x[r] = stat_k(&ra.rep_e2e[r], k);
            y[r] = stat_k(&rb.rep_e2e[r], k);
            d[r] = y[r] - x[r];
        }
        /* by hand: means, sample variances, t quantiles */
        double mx = 0, my = 0, md = 0;
        for (int r = 0; r < n; r++)
            mx += x[r] / n, my += y[r] / n, md += d[r] / n;
        double vx = 0, vy = 0, vd = 0;
        for (int r = 0; r < n; r++) {
            vx += (x[r] - mx) * (x[r] - mx) / (n - 1);
            vy += (y[r] - my) * (y[r] - my) / (n - 1);
            vd += (d[r] - md) * (d[r] - md) / (n - 1);
        }
        double hp = gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(vd / n);
        double se2 = vx / n + vy / n;
        double df = se2 * se2 / ((vx / n) * (vx / n) / (n - 1) + (vy / n) * (vy / n) / (n - 1));
        double hu = gsl_cdf_tdist_Pinv(0.975, df) * sqrt(se2);
        char what[64];
        snprintf(what, sizeof what, "%s paired lo", cmp_stat_name[k]);
        near(what, s->paired.lo, md - hp, 1e-9);
        snprintf(what, sizeof what, "%s paired hi", cmp_stat_name[k]);
        near(what, s->paired.hi, md + hp, 1e-9);
        snprintf(what, sizeof what, "%s Welch lo", cmp_stat_name[k]);
        near(what, s->unpaired.lo, my - mx - hu, 1e-9);
        snprintf(what, sizeof what, "%s Welch hi", cmp_stat_name[k]);
        near(what, s->unpaired.hi, my - mx + hu, 1e-9);
        near("a", s->a, mx, 1e-12);
        near("b", s->b, my, 1e-12);
        /* common random numbers: much tighter, same sign */
        if (verbose())
            printf("  %-6s paired width %.4f, Welch width %.4f (%.1fx)\n", cmp_stat_name[k],
                   2 * hp, 2 * hu, hu / hp);
        if (k <= 4) {                    /* p99.9 of 10^4 values per replication: left out */
            cr_expect(2 * hp < 2 * hu / 3, "%s: paired width %g not < 1/3 of Welch's %g",
                      cmp_stat_name[k], 2 * hp, 2 * hu);
            cr_expect(md > 0, "%s: B - A = %g, want > 0 (B is slower)", cmp_stat_name[k], md);
        }
    }
    /* the stage both have: its sojourn is the frame's here */
    near("stage p99 paired", c.stage[0].st[4].paired.mean, c.frame.st[4].paired.mean, 1e-12);
    cmp_free(&c);

    /* the per-replication hook: replication 0 equals a lone pipe_run of replication 0 */
    rep_stats rs;
    rep1(&a, &rs);
    near("rep 0 p99", ra.rep_e2e[0].p99, hist_quantile(&rs.e2e, 0.99), 0);
    near("rep 0 mean", ra.rep_e2e[0].mean, hist_mean(&rs.e2e), 0);
    near("rep 0 stage p50", ra.rep_stage[0].p50, hist_quantile(&rs.stage[0].sojourn, 0.5), 0);
    pipe_stats_free(&rs);
    run_result_free(&ra);
    run_result_free(&rb);
    cfg_free(&a);
    cfg_free(&b);
}

Test(compare, align_and_shadow_cost)
{
    scenario_cfg a, b;
    kit_base(&a, "a", 5, 1, 2, 1, 10, 2);
    kit_base(&b, "b", 99, 1, 3, 7, 30, 5);
    periodic(&a, 4, 10);
    periodic(&b, 8, 15);
    on_gpu(&a, 0, "encode", 1, 0, 5);
    on_gpu(&b, 0, "encode", 1, 0, 6);
    a.cluster.gpu_hour_usd = 2.0;
    b.cluster.gpu_hour_usd = 3.0;
    int changed = cmp_align(&a, &b, true);
    cr_expect_eq(changed, CMP_SEED | CMP_REPS | CMP_DURATION | CMP_WARMUP | CMP_WORKLOAD);
    cr_expect_eq(b.seed, 5);
    cr_expect_eq(b.replications, 2);
    cr_expect_eq(b.workload.streams, 4);
    cr_expect_eq(b.workload.fps, 10);
    run_opts o = { 1, NULL, NULL, NULL };
    run_result ra, rb;
    char err[1024] = "";
    cr_assert_eq(cmp_run(&a, &b, true, &o, &ra, &rb, err, sizeof err), 0, "%s", err);
    cmp_result c;
    cr_assert_eq(cmp_compute(&ra, &rb, true, &c, err, sizeof err), 0, "%s", err);
    near("cost A", c.cost_a, 2.0 * 2 / 4, 1e-12);        /* $2 x 2 GPUs / 4 streams */
    near("cost B", c.cost_b, 3.0 * 3 / 4, 1e-12);        /* B now carries A's 4 streams */
    near("cost shadow", c.cost_shadow, (2.0 * 2 + 3.0 * 3) / 4, 1e-12);
    cmp_free(&c);
    /* different replication counts cannot be paired */
    rb.nrep = 3;
    cr_expect_eq(cmp_compute(&ra, &rb, false, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "same") != NULL, "%s", err);
    rb.nrep = 2;
    run_result_free(&ra);
    run_result_free(&rb);
    cfg_free(&a);
    cfg_free(&b);
}

/* ---- the command line ------------------------------------------------------------ */

Test(compare, cli_json_atomic_and_no_overwrite, .timeout = 120)
{
    char d[64];
    snprintf(d, sizeof d, "/tmp/vlsim-cmp-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    const char *args = "--replications 2 --duration 10 --threads 1";
    cr_assert_eq(kit_sh("./vlsim compare scenarios/tandem-mm1.yaml scenarios/tandem-mm1.yaml %s "
                    "--json %s/c.json -q", args, d), 0);
    /* the keys the issue names, and a zero paired width for identical inputs */
    cr_expect_eq(kit_sh("grep -q '\"paired\"' %s/c.json && grep -q '\"unpaired\"' %s/c.json && "
                    "grep -q '\"frame_ms\"' %s/c.json && grep -q '\"response_ms\": null' %s/c.json",
                    d, d, d, d), 0);
    cr_expect_eq(kit_sh("python3 -c 'import json,sys; j=json.load(open(\"%s/c.json\")); "
                    "p=j[\"paired\"][\"frame_ms\"]; "
                    "sys.exit(0 if all(p[k][\"diff\"]==0 and p[k][\"ci95\"]==[0,0] for k in "
                    "(\"mean\",\"p50\",\"p90\",\"p95\",\"p99\",\"p99.9\")) else 1)' "
                    "2>/dev/null || ! command -v python3 >/dev/null", d), 0);
    /* an existing file is not replaced without --force, and nothing else is left */
    cr_expect_eq(kit_sh("echo mine > %s/c.json && ./vlsim compare scenarios/tandem-mm1.yaml "
                    "scenarios/tandem-mm1.yaml %s --json %s/c.json -q 2>/dev/null", d, args, d), 2);
    cr_expect_eq(kit_sh("test \"$(cat %s/c.json)\" = mine", d), 0);
    cr_expect_eq(kit_sh("./vlsim compare scenarios/tandem-mm1.yaml scenarios/tandem-mm1.yaml %s "
                    "--json %s/c.json -q --force", args, d), 0);
    cr_expect_eq(kit_sh("grep -q paired %s/c.json", d), 0);
    cr_expect_eq(kit_sh("ls %s | grep -q tmp", d), 1);
    /* bad input: file:line:column and exit 2, no output */
    cr_expect_eq(kit_sh("printf 'name: x\\nduration_s: -1\\n' > %s/bad.yaml && ./vlsim compare "
                    "%s/bad.yaml scenarios/tandem-mm1.yaml --json %s/n.json 2>%s/err; "
                    "test $? = 2 && grep -q 'bad.yaml:2:' %s/err && ! test -e %s/n.json",
                    d, d, d, d, d, d), 0);
    cr_expect_eq(kit_sh("./vlsim compare scenarios/tandem-mm1.yaml 2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim compare scenarios/tandem-mm1.yaml scenarios/tandem-mm1.yaml "
                    "--replications 1 2>/dev/null"), 2);
    kit_sh("rm -rf %s", d);
}

/* Same seed, same bytes, whatever the number of threads. */
Test(compare, json_independent_of_threads, .timeout = 60)
{
    char *out[2] = { NULL, NULL };
    for (int t = 0; t < 2; t++) {
        scenario_cfg a, b;
        mm1(&a, 50, 10, 4, 30);
        mm1(&b, 50, 10.5, 4, 30);
        run_opts o = { t + 1, NULL, NULL, NULL };
        run_result ra, rb;
        char err[1024] = "";
        cr_assert_eq(cmp_run(&a, &b, false, &o, &ra, &rb, err, sizeof err), 0, "%s", err);
        cmp_result c;
        cr_assert_eq(cmp_compute(&ra, &rb, false, &c, err, sizeof err), 0, "%s", err);
        size_t len = 0;
        FILE *f = open_memstream(&out[t], &len);
        cmp_json(f, &c, "a", "b");
        cmp_table(f, &c, "a", "b");
        fclose(f);
        cmp_free(&c);
        run_result_free(&ra);
        run_result_free(&rb);
        cfg_free(&a);
        cfg_free(&b);
    }
    cr_expect_str_eq(out[0], out[1]);
    free(out[0]);
    free(out[1]);
}
