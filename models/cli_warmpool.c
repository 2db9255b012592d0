/* cli_warmpool.c — `vlsim warmpool FILE`: size the warm pool of an
 * autoscaled scenario.
 *
 * For each warm-pool size (and, with --axis, each value of one more key,
 * e.g. a threshold) it loads the scenario again with autoscale.warm_pool
 * set, runs its replications (in parallel, deterministic for any --threads)
 * and keeps the fleet estimates: SLA-violation minutes per day, frame p99
 * during spikes, cost and its overhead over the smallest pool of the list,
 * and the keep-alive literature's axes, cold starts per hour against wasted
 * (billed, idle) GPU-hours. It recommends, per axis value, the smallest
 * pool whose mean violation-minutes per day meet the target. Points run
 * one after another; each one's replications use the threads. Outputs (the
 * table on stdout, --json, --out DIR: warmpool.csv and the warmpool plot)
 * are written whole or not at all, and never over an existing file
 * without --force. No simulation logic lives here. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "models/cli.h"
#include "models/plot.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/jsonw.h"
#include "sim/out.h"
#include "models/cli_args.h"

static const char *WARMPOOL_USAGE =
    "usage: vlsim warmpool FILE [options]\n"
    "\n"
    "Size the warm pool of a scenario with an autoscale section: run it with each\n"
    "warm-pool size over its replications and report SLA-violation minutes per day,\n"
    "frame p99 during spikes, cost overhead, cold starts per hour and wasted\n"
    "GPU-hours; recommend the smallest pool that meets the target.\n"
    "\n"
    "options:\n"
    "  --pools LIST                      warm-pool sizes, e.g. 0,1,2,4 (the default)\n"
    "  --target-violation-min-per-day X  the target (default 1)\n"
    "  --axis KEY=V1,V2,...              also vary one scalar, e.g. autoscale.up.util_above=0.7,0.8\n"
    "  --replications N                  override the scenario's replications\n"
    "  --duration S                      override duration_s\n"
    "  --seed N                          override the seed\n"
    "  --set KEY=VALUE                   override any scalar (repeatable)\n"
    "  --threads N                       threads per point (default: one per core)\n"
    "  --json F                          write the points and the recommendation as JSON (- for stdout)\n"
    "  --out DIR                         write DIR/warmpool.csv and the plot warmpool.{dat,gp,png,svg}\n"
    "  --force                           replace output files that already exist\n"
    "  -q, --quiet                       no table and no progress\n"
    "  -h, --help                        show this text\n"
    "\n"
    "exit status: 0 success, 2 bad input, 1 internal failure\n";

#define WP_MAX_POOLS 32
#define WP_MAX_VALUES 32

typedef struct {
    int pool;
    int axis;                    /* index into the axis values, or 0 */
    fleet_est f;
    double overhead_pct;         /* cost over the smallest pool with the same axis value */
    double hours;                /* simulated hours per replication */
    bool meets;
} wp_point;

typedef struct {
    const char *file, *json, *out_dir;
    int pools[WP_MAX_POOLS], npools;
    double target;
    char axis_key[128];
    char axis_vals[WP_MAX_VALUES][32];
    int naxis;
    cli_sets sets;                   /* --set KEY=VALUE */
    int replications, threads;
    double duration_s;
    bool have_seed, force, quiet;
    unsigned long long seed;
} wp_args;

static int parse_args(int argc, char **argv, wp_args *a)
{
    memset(a, 0, sizeof *a);
    static const int dflt[] = { 0, 1, 2, 4 };
    a->npools = 4;
    memcpy(a->pools, dflt, sizeof dflt);
    a->target = 1.0;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(WARMPOOL_USAGE, stdout);
            return -1;
        } else if (!strcmp(o, "--force")) {
            a->force = true;
        } else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
            a->quiet = true;
        } else if (!strcmp(o, "--pools")) {
            char buf[512];
            if (!v || strlen(v) >= sizeof buf)
                return cli_bad("warmpool", o, "a list of integers >= 0, e.g. 0,1,2,4", v);
            snprintf(buf, sizeof buf, "%s", v);
            a->npools = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (a->npools == WP_MAX_POOLS || cli_int_range(t, 0, 4096, &a->pools[a->npools]) != 0)
                    return cli_bad("warmpool", o, "at most 32 integers in [0, 4096], e.g. 0,1,2,4", v);
                for (int k = 0; k < a->npools; k++)
                    if (a->pools[k] == a->pools[a->npools])
                        return cli_bad("warmpool", o, "distinct sizes", v);
                a->npools++;
            }
            if (a->npools == 0)
                return cli_bad("warmpool", o, "a list of integers >= 0, e.g. 0,1,2,4", v);
            i++;
        } else if (!strcmp(o, "--target-violation-min-per-day")) {
            char *end;
            a->target = v ? strtod(v, &end) : -1;
            if (!v || *end || !isfinite(a->target) || a->target < 0)
                return cli_bad("warmpool", o, "a number >= 0", v);
            i++;
        } else if (!strcmp(o, "--axis")) {
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || (size_t)(eq - v) >= sizeof a->axis_key || !eq[1])
                return cli_bad("warmpool", o, "KEY=V1,V2,...", v);
            if (a->naxis)
                return cli_bad("warmpool", o, "one --axis", v);
            snprintf(a->axis_key, sizeof a->axis_key, "%.*s", (int)(eq - v), v);
            char buf[1024];
            snprintf(buf, sizeof buf, "%s", eq + 1);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (a->naxis == WP_MAX_VALUES || strlen(t) >= sizeof a->axis_vals[0])
                    return cli_bad("warmpool", o, "at most 32 values of at most 31 characters", v);
                snprintf(a->axis_vals[a->naxis++], sizeof a->axis_vals[0], "%s", t);
            }
            i++;
        } else if (!strcmp(o, "--replications")) {
            if (cli_replications(v, &a->replications) != 0)
                return cli_bad("warmpool", o, CLI_REPS_WANT, v);
            i++;
        } else if (!strcmp(o, "--threads")) {
            if (cli_pos_int(v, &a->threads) != 0)
                return cli_bad("warmpool", o, "an integer >= 1", v);
            i++;
        } else if (!strcmp(o, "--duration")) {
            if (cli_seconds(v, &a->duration_s, false) != 0)
                return cli_bad("warmpool", o, CLI_SECONDS_WANT, v);
            i++;
        } else if (!strcmp(o, "--seed")) {
            unsigned long long s;
            if (cli_u64(v, &s) != 0)
                return cli_bad("warmpool", o, "a non-negative integer", v);
            a->seed = s;
            a->have_seed = true;
            i++;
        } else if (!strcmp(o, "--set")) {
            int rc = cli_add_set(&a->sets, "warmpool", v);
            if (rc != 0)
                return rc;
            i++;
        } else if (!strcmp(o, "--json") || !strcmp(o, "--out")) {
            if (!v || !*v)
                return cli_bad("warmpool", o, o[2] == 'j' ? "a file name or -" : "a directory", v);
            *(o[2] == 'j' ? &a->json : &a->out_dir) = v;
            i++;
        } else {
            int rc = cli_positional("warmpool", o, &a->file);
            if (rc != 0)
                return rc;
        }
    }
    if (cli_need_file("warmpool", a->file) != 0)
        return CLI_BAD_INPUT;
    return 0;
}

/* Load the scenario for one point. */
static int load_point(const wp_args *a, int pool, int axis, scenario_cfg *cfg, char *err,
                      size_t errlen)
{
    scn_override ov[CLI_MAX_SET + 2];
    size_t n = 0;
    char pv[16];
    for (size_t k = 0; k < a->sets.n; k++)
        ov[n++] = a->sets.set[k];
    snprintf(pv, sizeof pv, "%d", pool);
    ov[n++] = (scn_override){ "autoscale.warm_pool", pv };
    if (a->naxis)
        ov[n++] = (scn_override){ a->axis_key, a->axis_vals[axis] };
    if (scn_load_ex(a->file, ov, n, cfg, err, errlen) != 0)
        return -1;
    if (!cfg->autoscale.on) {
        snprintf(err, errlen, "%s: vlsim warmpool needs a scenario with an autoscale section",
                 a->file);
        cfg_free(cfg);
        return -1;
    }
    if (a->have_seed)
        cfg->seed = a->seed;
    if (a->replications)
        cfg->replications = a->replications;
    if (a->duration_s > 0)
        cfg->duration_s = a->duration_s;
    return 0;
}

static const char *num(char *buf, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "nan");
    return buf;
}

static void write_table(FILE *f, const wp_args *a, const scenario_cfg *cfg, const wp_point *pt,
                        int npt, const int *best)
{
    fprintf(f, "warmpool: %s, %d replication%s x %g s each, target <= %g SLA-violation "
               "minutes per day\n", cfg->name, cfg->replications,
            cfg->replications == 1 ? "" : "s", cfg->duration_s, a->target);
    fprintf(f, "  %s%-5s %11s %10s %10s %26s %13s %9s %10s %12s %6s\n",
            a->naxis ? "axis value   " : "", "pool", "billed GPUs", "cost $", "overhead",
            "viol-min/day [95% CI]", "spike p99 ms", "cold/h", "cold rate", "wasted GPU-h",
            "meets");
    for (int k = 0; k < npt; k++) {
        const wp_point *p = &pt[k];
        char b[6][24], ci[96];
        if (a->naxis)
            fprintf(f, "  %-12s", a->axis_vals[p->axis]);
        else
            fputs("  ", f);
        snprintf(ci, sizeof ci, "%s [%s, %s]", num(b[1], sizeof b[1], "%.1f", p->f.viol_min_per_day.mean),
                 num(b[2], sizeof b[2], "%.1f", p->f.viol_min_per_day.lo),
                 num(b[3], sizeof b[3], "%.1f", p->f.viol_min_per_day.hi));
        fprintf(f, "%-5d %11.3f %10.2f %9.1f%% %26s %13s %9.3f %10s %12.2f %6s\n", p->pool,
                p->f.billed_gpus.mean, p->f.cost_usd.mean, p->overhead_pct, ci,
                num(b[4], sizeof b[4], "%.2f", p->f.spike_p99.mean), p->f.cold_starts_per_h.mean,
                num(b[5], sizeof b[5], "%.3f", p->f.cold_start_rate), p->f.wasted_gpu_h.mean,
                p->meets ? "yes" : "no");
    }
    for (int v = 0; v < (a->naxis ? a->naxis : 1); v++) {
        if (a->naxis)
            fprintf(f, "%s = %s: ", a->axis_key, a->axis_vals[v]);
        if (best[v] < 0)
            fprintf(f, "recommended: none of the pools meets <= %g violation-minutes per day "
                       "(raise --pools, or change the thresholds)\n", a->target);
        else
            fprintf(f, "recommended: warm_pool = %d, the smallest meeting <= %g "
                       "violation-minutes per day (cost %+.1f %%)\n", pt[best[v]].pool, a->target,
                    pt[best[v]].overhead_pct);
    }
}

static void write_json(FILE *f, const wp_args *a, const scenario_cfg *cfg, const wp_point *pt,
                       int npt, const int *best)
{
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "scenario", cfg->name);
    jw_int(&w, "replications", cfg->replications);
    jw_num(&w, "duration_s", cfg->duration_s);
    jw_num(&w, "target_violation_min_per_day", a->target);
    if (a->naxis)
        jw_str(&w, "axis", a->axis_key);
    jw_arr_begin(&w, "points");
    for (int k = 0; k < npt; k++) {
        const wp_point *p = &pt[k];
        jw_obj_begin(&w, NULL);
        jw_int(&w, "warm_pool", p->pool);
        if (a->naxis)
            jw_str(&w, "axis_value", a->axis_vals[p->axis]);
        jw_num(&w, "billed_gpus", p->f.billed_gpus.mean);
        jw_num(&w, "cost_usd", p->f.cost_usd.mean);
        jw_num(&w, "cost_overhead_pct", p->overhead_pct);
        jw_num(&w, "sla_violation_min_per_day", p->f.viol_min_per_day.mean);
        jw_pair(&w, "sla_violation_ci95", p->f.viol_min_per_day.lo, p->f.viol_min_per_day.hi);
        jw_num(&w, "spike_p99_ms", p->f.spike_p99.mean);
        jw_num(&w, "cold_starts_per_hour", p->f.cold_starts_per_h.mean);
        jw_num(&w, "cold_start_rate", p->f.cold_start_rate);
        jw_num(&w, "wasted_gpu_hours", p->f.wasted_gpu_h.mean);
        jw_num(&w, "warm_pool_gpu_hours", p->f.warm_gpu_h);
        jw_bool(&w, "meets", p->meets);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr_begin(&w, "recommended");
    for (int v = 0; v < (a->naxis ? a->naxis : 1); v++) {
        jw_obj_begin(&w, NULL);
        if (a->naxis)
            jw_str(&w, "axis_value", a->axis_vals[v]);
        if (best[v] >= 0)
            jw_int(&w, "warm_pool", pt[best[v]].pool);
        else
            jw_num(&w, "warm_pool", NAN);         /* written as null */
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_done(&w);
}

static void write_csv(FILE *f, const wp_args *a, const wp_point *pt, int npt)
{
    fputs("warm_pool,axis_value,billed_gpus,cost_usd,cost_overhead_pct,viol_min_per_day,"
          "viol_lo,viol_hi,spike_p99_ms,cold_starts_per_hour,cold_start_rate,wasted_gpu_hours,"
          "meets\n", f);
    for (int k = 0; k < npt; k++) {
        const wp_point *p = &pt[k];
        char b[8][32];
        fprintf(f, "%d,%s,%.6g,%.6g,%.6g,%s,%s,%s,%s,%.6g,%s,%.6g,%d\n", p->pool,
                a->naxis ? a->axis_vals[p->axis] : "", p->f.billed_gpus.mean, p->f.cost_usd.mean,
                p->overhead_pct, num(b[0], 32, "%.6g", p->f.viol_min_per_day.mean),
                num(b[1], 32, "%.6g", p->f.viol_min_per_day.lo),
                num(b[2], 32, "%.6g", p->f.viol_min_per_day.hi),
                num(b[3], 32, "%.6g", p->f.spike_p99.mean), p->f.cold_starts_per_h.mean,
                num(b[4], 32, "%.6g", p->f.cold_start_rate), p->f.wasted_gpu_h.mean, p->meets);
    }
}

/* warmpool.dat for the plot (the first axis value's points when there are several). */
static char *plot_data(const wp_args *a, const wp_point *pt, int npt, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fputs("# warmpool.dat — written by vlsim warmpool --out: one line per warm-pool size\n"
          "# columns: pool overhead_pct viol_min_per_day viol_lo viol_hi spike_p99_ms "
          "cold_starts_per_h wasted_gpu_h \"label\"\n", f);
    for (int k = 0; k < npt; k++) {
        const wp_point *p = &pt[k];
        if (p->axis != 0)
            continue;
        char b[4][32];
        double lo = p->f.viol_min_per_day.lo, hi = p->f.viol_min_per_day.hi;
        fprintf(f, "%d %.6g %s %s %s %s %.6g %.6g \"pool %d\"\n", p->pool, p->overhead_pct,
                num(b[0], 32, "%.6g", p->f.viol_min_per_day.mean),
                num(b[1], 32, "%.6g", isfinite(lo) ? lo : p->f.viol_min_per_day.mean),
                num(b[2], 32, "%.6g", isfinite(hi) ? hi : p->f.viol_min_per_day.mean),
                num(b[3], 32, "%.6g", p->f.spike_p99.mean), p->f.cold_starts_per_h.mean,
                p->f.wasted_gpu_h.mean, p->pool);
    }
    (void)a;
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int check_out_files(const wp_args *a, char *err, size_t errlen)
{
    static const char *const names[] = { "warmpool.csv", "warmpool.dat", "warmpool.gp",
                                         "warmpool.png", "warmpool.svg" };
    if (a->json && out_check(a->json, a->force, err, errlen) != 0)
        return -1;
    if (!a->out_dir || a->force)
        return 0;
    for (int k = 0; k < 5; k++) {
        char f[4200];
        snprintf(f, sizeof f, "%s/%s", a->out_dir, names[k]);
        if (access(f, F_OK) == 0) {
            snprintf(err, errlen, "%.1900s already exists; pass --force to replace it", f);
            return -1;
        }
    }
    return 0;
}

int cli_warmpool(int argc, char **argv)
{
    wp_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    char err[2048];
    int nval = a.naxis ? a.naxis : 1, npt = a.npools * nval;
    scenario_cfg cfg0;
    /* every point loads before anything runs: bad input fails at once */
    for (int v = 0; v < nval; v++)
        for (int k = 0; k < a.npools; k++) {
            if (load_point(&a, a.pools[k], v, &cfg0, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                return CLI_BAD_INPUT;
            }
            cfg_free(&cfg0);
        }
    if (check_out_files(&a, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim warmpool: %s\n", err);
        return CLI_BAD_INPUT;
    }
    wp_point *pt = calloc((size_t)npt, sizeof *pt);
    if (!pt) {
        fputs("vlsim warmpool: out of memory\n", stderr);
        return CLI_FAIL;
    }
    cli_progress ps;
    cli_progress_start(&ps, !a.quiet && isatty(STDERR_FILENO), "points");
    load_point(&a, a.pools[0], 0, &cfg0, err, sizeof err);   /* for the headers */
    for (int v = 0; v < nval && rc == 0; v++)
        for (int k = 0; k < a.npools && rc == 0; k++) {
            scenario_cfg cfg;
            wp_point *p = &pt[v * a.npools + k];
            p->pool = a.pools[k];
            p->axis = v;
            if (load_point(&a, p->pool, v, &cfg, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                rc = CLI_BAD_INPUT;
                break;
            }
            run_opts opts = { a.threads, NULL, NULL, NULL };
            run_result res;
            if (run_scenario(&cfg, &opts, &res, err, sizeof err) != 0) {
                fprintf(stderr, "vlsim warmpool: %s (warm_pool %d): %s\n", a.file, p->pool, err);
                cfg_free(&cfg);
                rc = CLI_FAIL;
                break;
            }
            p->f = res.fleet;
            p->hours = cfg.duration_s / 3600.0;
            run_result_free(&res);
            cfg_free(&cfg);
            cli_progress_cb(&ps, v * a.npools + k + 1, npt);
        }
    int best[WP_MAX_VALUES];
    for (int v = 0; v < nval && rc == 0; v++) {
        const wp_point *base = NULL;             /* the smallest pool of this axis value */
        for (int k = 0; k < a.npools; k++)
            if (!base || pt[v * a.npools + k].pool < base->pool)
                base = &pt[v * a.npools + k];
        best[v] = -1;
        for (int k = 0; k < a.npools; k++) {
            wp_point *p = &pt[v * a.npools + k];
            p->overhead_pct = base->f.cost_usd.mean > 0
                ? 100.0 * (p->f.cost_usd.mean - base->f.cost_usd.mean) / base->f.cost_usd.mean : NAN;
            p->meets = p->f.viol_min_per_day.mean <= a.target;
            if (p->meets && (best[v] < 0 || p->pool < pt[best[v]].pool))
                best[v] = v * a.npools + k;
        }
    }
    /* outputs: temporaries first, renamed when all are complete */
    out_file oj = { 0 }, oc = { 0 };
    bool table = !a.quiet && !(a.json && !strcmp(a.json, "-"));
    if (rc == 0 && a.json) {
        if (out_open(&oj, a.json, err, sizeof err) != 0)
            rc = CLI_FAIL;
        else
            write_json(oj.f, &a, &cfg0, pt, npt, best);
    }
    char csv[4200];
    if (rc == 0 && a.out_dir) {
        snprintf(csv, sizeof csv, "%s/warmpool.csv", a.out_dir);
        if (mkdir(a.out_dir, 0777) != 0 && errno != EEXIST) {
            snprintf(err, sizeof err, "%s: %s", a.out_dir, strerror(errno));
            rc = CLI_FAIL;
        } else if (out_open(&oc, csv, err, sizeof err) != 0) {
            rc = CLI_FAIL;
        } else {
            write_csv(oc.f, &a, pt, npt);
        }
    }
    if (rc == 0 && a.json && out_commit(&oj, err, sizeof err) != 0)
        rc = CLI_FAIL;
    if (rc == 0 && a.out_dir && out_commit(&oc, err, sizeof err) != 0)
        rc = CLI_FAIL;
    if (rc == CLI_FAIL) {
        out_abort(&oj);
        out_abort(&oc);
        fprintf(stderr, "vlsim warmpool: %s\n", err);
    }
    if (rc == 0 && table)
        write_table(stdout, &a, &cfg0, pt, npt, best);
    if (rc == 0 && a.out_dir) {
        plot_opts po;
        plot_opts_default(&po);
        char tbuf[4200], tgt[32], title[512];
        po.template_dir = cli_template_dir(tbuf, sizeof tbuf);
        plot_summary sum;
        memset(&sum, 0, sizeof sum);
        po.summary = &sum;
        size_t len = 0;
        char *data = plot_data(&a, pt, npt, &len);
        snprintf(tgt, sizeof tgt, "%.6g", a.target);
        snprintf(title, sizeof title, "%s: warm-pool size against SLA violations, spike p99 and "
                 "keep-alive cost%s%s%s", cfg0.name, a.naxis ? " (" : "", a.naxis ? a.axis_key : "",
                 a.naxis ? " = first value)" : "");
        char spikes[16];
        int nspike = 0;
        for (int k = 0; k < npt; k++)
            nspike += pt[k].axis == 0 && isfinite(pt[k].f.spike_p99.mean);
        snprintf(spikes, sizeof spikes, "%d", nspike);
        const char *keys[] = { "TITLE", "TARGET", "SPIKES" }, *vals[] = { title, tgt, spikes };
        if (!data) {
            fputs("vlsim warmpool: out of memory\n", stderr);
            rc = CLI_FAIL;
        } else if (plot_named(a.out_dir, "warmpool", data, len, keys, vals, 3, &po, err,
                              sizeof err) != PLOT_OK) {
            fprintf(stderr, "vlsim warmpool: plot: %s\n", err);
            rc = CLI_FAIL;
        } else if (table) {
            fprintf(stdout, "wrote %s/warmpool.csv\n", a.out_dir);
            plot_summary_report(stdout, a.out_dir, &sum);
        }
        free(data);
    }
    cfg_free(&cfg0);
    free(pt);
    return rc;
}
