/* test_whatif.c — stage speedups (models/whatif.c) and dist_scale:
 * scaling each distribution family multiplies its closed-form mean by k and,
 * on the same random stream, every draw by k; with no queueing (constant
 * times, one frame in the system at a time) the re-simulated latency equals
 * Amdahl's formula computed here from the configured times, to 1e-6; with
 * queueing (an M/M/1 bottleneck behind a stage that never waits) the
 * re-simulated p99 and mean land on the M/M/1 closed forms (sojourn
 * exponential with rate mu - lambda) before and after the speedup, and the
 * gain exceeds Amdahl's; the stages are ranked by return; bad speedups are
 * refused. Runs from the repository root. */
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/kit.h"
#include "models/whatif.h"
#include "tests/kit_files.h"

static char dir[64];

static void mk(void)
{
    kit_tmpdir(dir, sizeof dir, "whatif");
}

static void rm(void)
{
    kit_rm_rf(dir);
}

TestSuite(whatif, .init = mk, .fini = rm, .timeout = 120);

static const char *write_yaml(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kit_write_file(path, text);
    return path;
}

/* ---- dist_scale ------------------------------------------------------------------- */

Test(whatif, dist_scale_every_family)
{
    dist_t d[9];
    memset(d, 0, sizeof d);
    cr_assert_null(dist_init_constant(&d[0], 4));
    cr_assert_null(dist_init_exponential(&d[1], 4));
    cr_assert_null(dist_init_uniform(&d[2], 1, 5));
    cr_assert_null(dist_init_lognormal_mean_sd(&d[3], 4, 2));
    cr_assert_null(dist_init_gamma(&d[4], 4, 1.5));
    cr_assert_null(dist_init_weibull(&d[5], 1.7, 3));
    cr_assert_null(dist_init_pareto(&d[6], 3, 2));
    double *v = malloc(3 * sizeof *v);
    v[0] = 1, v[1] = 2, v[2] = 6;
    cr_assert_null(dist_init_empirical(&d[7], v, 3));
    dist_t *parts = calloc(2, sizeof *parts);
    double *w = malloc(2 * sizeof *w);
    cr_assert_null(dist_init_constant(&parts[0], 2));
    cr_assert_null(dist_init_exponential(&parts[1], 10));
    w[0] = 0.25, w[1] = 0.75;
    cr_assert_null(dist_init_mixture(&d[8], parts, w, 2));
    const double k = 0.25;
    for (int i = 0; i < 9; i++) {
        double m0 = dist_mean(&d[i]), v0 = dist_var(&d[i]);
        gsl_rng *r0 = rng_stream(1, 0, 77), *r1 = rng_stream(1, 0, 77);
        double x0[50];
        for (int j = 0; j < 50; j++)
            x0[j] = dist_sample(&d[i], r0);
        dist_scale(&d[i], k);
        char what[64];
        snprintf(what, sizeof what, "%s mean x k", dist_kind_name(d[i].kind));
        near(what, dist_mean(&d[i]), k * m0, 1e-12);
        snprintf(what, sizeof what, "%s var x k^2", dist_kind_name(d[i].kind));
        near(what, dist_var(&d[i]), k * k * v0, 1e-12);
        for (int j = 0; j < 50; j++) {
            double x1 = dist_sample(&d[i], r1);
            cr_expect(fabs(x1 - k * x0[j]) <= 1e-12 * fmax(1.0, x0[j]),
                      "%s draw %d: %.17g, want k x %.17g", dist_kind_name(d[i].kind), j, x1, x0[j]);
        }
        gsl_rng_free(r0);
        gsl_rng_free(r1);
        dist_free(&d[i]);
    }
}

Test(whatif, parse)
{
    whatif_speedup s;
    char err[256];
    cr_expect_eq(whatif_parse("encode=4", &s, err, sizeof err), 0);
    cr_expect_str_eq(s.stage, "encode");
    cr_expect_eq(s.factor, 4);
    cr_expect_eq(whatif_parse("llm_prefill=1.5", &s, err, sizeof err), 0);
    cr_expect_eq(s.factor, 1.5);
    static const char *bad[] = { "encode", "=4", "encode=", "encode=0", "encode=-2", "encode=x",
                                 "encode=inf", "encode=4x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(whatif_parse(bad[i], &s, err, sizeof err), -1, "%s accepted", bad[i]);
}

/* ---- no queueing: Amdahl exactly ---------------------------------------------------- */

/* One stream at 10 FPS, no jitter: a frame every 100 ms, and a frame needs
 * 5 + 10 + 20 = 35 ms, so no frame ever waits. */
static const char *FLAT =
    "name: flat\n"
    "seed: 1\n"
    "duration_s: 20\n"
    "warmup_s: 1\n"
    "replications: 2\n"
    "workload: {arrival: periodic, streams: 1, fps: 10, phase: aligned, jitter_ms: 0}\n"
    "stages:\n"
    "  - {name: capture, service: {dist: constant, ms: 5}}\n"
    "  - {name: encode, service: {dist: constant, ms: 10}}\n"
    "  - {name: reduce, service: {dist: constant, ms: 20}}\n";

static double amdahl(double total, double part, double s)
{
    double f = part / total;
    return total * ((1 - f) + f / s);
}

Test(whatif, no_queueing_equals_amdahl)
{
    const char *path = write_yaml("flat.yaml", FLAT);
    whatif_speedup sp[2] = { { "encode", 4 }, { "reduce", 2 } };
    whatif_opts o = { 1, 4, NULL, NULL };
    whatif_result r;
    char err[2048] = "";
    cr_assert_eq(whatif_run(path, NULL, 0, sp, 2, &o, &r, err, sizeof err), 0, "%s", err);
    near("baseline p99", r.base_p99[0].mean, 35, 1e-9);
    cr_assert_eq(r.nrows, 3);
    /* encode x4: 5 + 2.5 + 20 */
    double want = amdahl(35, 10, 4);
    near("encode x4 Amdahl p99", r.rows[0].m[0].amdahl_p99, want, 1e-6);
    near("encode x4 sim p99", r.rows[0].m[0].sim_p99.mean, want, 1e-6);
    near("encode x4 sim mean", r.rows[0].m[0].sim_mean.mean, want, 1e-6);
    near("encode x4 share", r.rows[0].m[0].share_p99, 10.0 / 35, 1e-9);
    cr_expect(!r.rows[0].m[1].touched);
    /* reduce x2: 5 + 10 + 10 */
    want = amdahl(35, 20, 2);
    near("reduce x2 Amdahl p99", r.rows[1].m[0].amdahl_p99, want, 1e-6);
    near("reduce x2 sim p99", r.rows[1].m[0].sim_p99.mean, want, 1e-6);
    /* both: the generalised law 1/((1 - f1 - f2) + f1/s1 + f2/s2): 5 + 2.5 + 10 */
    want = 35 * ((1 - 10.0 / 35 - 20.0 / 35) + 10.0 / 35 / 4 + 20.0 / 35 / 2);
    near("both Amdahl p99", r.rows[2].m[0].amdahl_p99, want, 1e-6);
    near("both sim p99", r.rows[2].m[0].sim_p99.mean, want, 1e-6);
    /* ranked at x4: reduce saves 15 ms, encode 7.5, capture 3.75 */
    cr_assert_eq(r.nrank, 3);
    cr_expect_str_eq(r.cfg.stages[r.rank[0].stage[0]].name, "reduce");
    cr_expect_str_eq(r.cfg.stages[r.rank[1].stage[0]].name, "encode");
    cr_expect_str_eq(r.cfg.stages[r.rank[2].stage[0]].name, "capture");
    near("rank reduce p99", r.rank[0].m[0].sim_p99.mean, amdahl(35, 20, 4), 1e-6);
    near("rank capture p99", r.rank[2].m[0].sim_p99.mean, amdahl(35, 5, 4), 1e-6);
    /* runs: baseline, 3 rows, 3 ranked less encode x4 (already run) */
    cr_expect_eq(r.runs, 1 + 3 + 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    whatif_table(f, &r);
    whatif_json(f, &r);
    fclose(f);
    cr_expect(strstr(buf, "encode x4 + reduce x2") != NULL, "%s", buf);
    cr_expect(strstr(buf, "\"amdahl_p99_ms\"") != NULL);
    free(buf);
    whatif_free(&r);

    /* bad input */
    whatif_speedup unknown = { "encdoe", 2 };
    cr_expect_eq(whatif_run(path, NULL, 0, &unknown, 1, &o, &r, err, sizeof err), -2);
    cr_expect(strstr(err, "no stage named \"encdoe\"") != NULL, "%s", err);
    whatif_speedup twice[2] = { { "encode", 2 }, { "encode", 3 } };
    cr_expect_eq(whatif_run(path, NULL, 0, twice, 2, &o, &r, err, sizeof err), -2);
    cr_expect(strstr(err, "twice") != NULL, "%s", err);
}

/* ---- queueing: the gain exceeds Amdahl's ------------------------------------------- */

/* Poisson arrivals at 80 Hz; a 2 ms stage on 64 servers (it never waits:
 * at 0.16 Erlangs all 64 are never busy), then an M/M/1 server of mean
 * 10 ms (mu = 100/s). The frame latency is 2 ms plus an exponential
 * sojourn of rate mu - lambda = 20/s: mean 52 ms, p99 2 + 50 ln 100 ms. */
static const char *MM1 =
    "name: mm1-bottleneck\n"
    "seed: 9\n"
    "duration_s: 400\n"
    "warmup_s: 20\n"
    "replications: 8\n"
    "workload: {arrival: poisson, rate_hz: 80}\n"
    "stages:\n"
    "  - {name: front, servers: 64, service: {dist: constant, ms: 2}}\n"
    "  - {name: server, service: {dist: exponential, mean_ms: 10}}\n";

Test(whatif, queueing_gain_exceeds_amdahl)
{
    const char *path = write_yaml("mm1.yaml", MM1);
    const double lambda = 80, mu = 100, s = 2;
    whatif_speedup sp = { "server", s };
    whatif_opts o = { 2, s, NULL, NULL };
    whatif_result r;
    char err[2048] = "";
    cr_assert_eq(whatif_run(path, NULL, 0, &sp, 1, &o, &r, err, sizeof err), 0, "%s", err);
    double base99 = 2 + 1000.0 / (mu - lambda) * log(100);
    double after99 = 2 + 1000.0 / (s * mu - lambda) * log(100);
    double base_mean = 2 + 1000.0 / (mu - lambda), after_mean = 2 + 1000.0 / (s * mu - lambda);
    /* the simulator against M/M/1 (8 x 400 s; the p99 of a queue at 80 % load) */
    near("baseline p99 vs closed form", r.base_p99[0].mean, base99, 0.05);
    near("baseline mean vs closed form", r.base_mean[0].mean, base_mean, 0.05);
    const whatif_metric *m = &r.rows[0].m[0];
    near("sped-up p99 vs closed form", m->sim_p99.mean, after99, 0.05);
    near("sped-up mean vs closed form", m->sim_mean.mean, after_mean, 0.05);
    /* Amdahl from the closed-form shares: the server's p99 share of the sum */
    double f = (base99 - 2) / base99;
    double amdahl99 = base99 * ((1 - f) + f / s);
    near("Amdahl p99 (closed-form shares)", m->amdahl_p99, amdahl99, 0.05);
    /* queueing: the real gain beats Amdahl's by far (closed forms: 5.75x vs 1.98x) */
    double gain_sim = r.base_p99[0].mean / m->sim_p99.mean;
    double gain_amdahl = r.base_p99[0].mean / m->amdahl_p99;
    if (verbose())
        printf("  gain: simulated %.3fx, Amdahl %.3fx; closed forms %.3fx, %.3fx\n", gain_sim,
               gain_amdahl, base99 / after99, base99 / amdahl99);
    cr_expect_gt(gain_sim, gain_amdahl);
    cr_expect(m->sim_p99.hi < m->amdahl_p99, "simulated p99 CI [%g, %g] not below Amdahl's %g",
              m->sim_p99.lo, m->sim_p99.hi, m->amdahl_p99);
    cr_expect_gt(base99 / after99, base99 / amdahl99);   /* the same in closed form */
    /* the bottleneck ranks first */
    cr_assert_eq(r.nrank, 2);
    cr_expect_str_eq(r.cfg.stages[r.rank[0].stage[0]].name, "server");
    whatif_free(&r);
}

/* ---- the command line ------------------------------------------------------------- */

Test(whatif, cli)
{
    const char *path = write_yaml("flat.yaml", FLAT);
    cr_expect_eq(kit_sh("./vlsim whatif %s --speedup encode=4 > %s/out.txt", path, dir), 0);
    cr_expect_eq(kit_sh("grep -q 'encode x4' %s/out.txt && grep -q 'ranked' %s/out.txt", dir, dir), 0);
    cr_expect_eq(kit_sh("./vlsim whatif %s --speedup encode=4 --no-rank --json %s/w.json -q", path,
                    dir), 0);
    cr_expect_eq(kit_sh("grep -q '\"sim_p99_ms\": 27.5,' %s/w.json", dir), 0);
    cr_expect_eq(kit_sh("./vlsim whatif %s --speedup encode=4 --json %s/w.json -q 2>/dev/null",
                    path, dir), 2);
    cr_expect_eq(kit_sh("./vlsim whatif %s 2>/dev/null", path), 2);
    cr_expect_eq(kit_sh("./vlsim whatif %s --speedup encode=0 2>/dev/null", path), 2);
    cr_expect_eq(kit_sh("./vlsim whatif %s --speedup nope=2 2>%s/err; test $? = 2 && "
                    "grep -q 'no stage named' %s/err", path, dir, dir), 0);
}
