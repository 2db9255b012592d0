/* cli_canary.c — `vlsim canary FILE`: how likely the scenario's canary
 * rollout is to catch a regressed variant at each step, and how often it
 * aborts a harmless one.
 *
 * It runs the scenario's replications twice with the same seed — so both
 * runs see the same arrivals and session hashes, and each stage draws its
 * service times from the same random stream (common random numbers) — once
 * with the regressed variant (--regression, or the scenario's variant as
 * written) and once with a variant identical to the baseline. Each replication is one rollout. It reports, per step, the
 * share of rollouts that aborted by that step with a Wilson 95 % interval.
 * The simulation is run_scenario's and the counting canary.c's; nothing here
 * computes more than a sum of those counts. Output files are written
 * atomically and never replace a file without --force. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "models/canary.h"
#include "models/cli.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/jsonw.h"
#include "sim/out.h"
#include "models/cli_args.h"

static const char *CANARY_USAGE =
    "usage: vlsim canary FILE [options]\n"
    "\n"
    "Estimate, over the scenario's replications (one rollout each), the probability\n"
    "that its canary rollout catches a regressed variant by each step, and how often\n"
    "it aborts a variant identical to the baseline (the false-abort rate), each with\n"
    "a Wilson 95% interval. Both runs use the same seed (common random numbers).\n"
    "\n"
    "options:\n"
    "  --regression STAGE=FACTOR  the variant serves STAGE FACTOR times slower, e.g.\n"
    "                     encode=1.2 (+20%); repeatable; replaces the scenario's variant\n"
    "                     (default: the scenario's canary.variant as written)\n"
    "  --replications N   rollouts per variant (override the scenario's replications)\n"
    "  --seed N           override the scenario's seed\n"
    "  --duration S       override duration_s (the rollout needs the sum of its holds)\n"
    "  --set KEY=VALUE    override any scalar of the scenario (repeatable), e.g.\n"
    "                     --set canary.gates.min_frames=10000\n"
    "  --threads N        worker threads (default: one per core); results do not depend on it\n"
    "  --json F           write the estimates as JSON to F (- for stdout)\n"
    "  --force            replace an output file that already exists\n"
    "  -q, --quiet        no table and no progress\n"
    "  -h, --help         show this text\n"
    "\n"
    "exit status: 0 success, 2 bad input, 1 internal failure\n";

#define CANARY_MAX_REG 16

typedef struct {
    const char *file, *json;
    char reg_stage[CANARY_MAX_REG][CFG_NAME_MAX];
    double reg_factor[CANARY_MAX_REG];
    int nreg;
    cli_sets sets;                   /* --set KEY=VALUE */
    int replications, threads;
    bool have_seed, force, quiet;
    unsigned long long seed;
    double duration_s;
} canary_args;

static int parse_args(int argc, char **argv, canary_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(CANARY_USAGE, stdout);
            return -1;
        } else if (!strcmp(o, "--force")) {
            a->force = true;
        } else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
            a->quiet = true;
        } else if (!strcmp(o, "--regression")) {
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || (size_t)(eq - v) >= CFG_NAME_MAX)
                return cli_bad("canary", o, "STAGE=FACTOR, e.g. encode=1.2", v);
            if (a->nreg == CANARY_MAX_REG) {
                fprintf(stderr, "vlsim canary: at most %d --regression options\n", CANARY_MAX_REG);
                return CLI_BAD_INPUT;
            }
            memcpy(a->reg_stage[a->nreg], v, (size_t)(eq - v));
            a->reg_stage[a->nreg][eq - v] = 0;
            if (cli_pos_double(eq + 1, &a->reg_factor[a->nreg], false) != 0)
                return cli_bad("canary", o, "STAGE=FACTOR with a factor > 0, e.g. encode=1.2", v);
            a->nreg++;
            i++;
        } else if (!strcmp(o, "--replications")) {
            if (cli_replications(v, &a->replications) != 0)
                return cli_bad("canary", o, CLI_REPS_WANT, v);
            i++;
        } else if (!strcmp(o, "--threads")) {
            if (cli_pos_int(v, &a->threads) != 0)
                return cli_bad("canary", o, "an integer >= 1", v);
            i++;
        } else if (!strcmp(o, "--seed")) {
            unsigned long long s;
            if (cli_u64(v, &s) != 0)
                return cli_bad("canary", o, "a non-negative integer", v);
            a->seed = s;
            a->have_seed = true;
            i++;
        } else if (!strcmp(o, "--duration")) {
            if (cli_seconds(v, &a->duration_s, false) != 0)
                return cli_bad("canary", o, CLI_SECONDS_WANT, v);
            i++;
        } else if (!strcmp(o, "--set")) {
            int rc = cli_add_set(&a->sets, "canary", v);
            if (rc != 0)
                return rc;
            i++;
        } else if (!strcmp(o, "--json")) {
            if (!v || !*v)
                return cli_bad("canary", o, "a file name or -", v);
            a->json = v;
            i++;
        } else {
            int rc = cli_positional("canary", o, &a->file);
            if (rc != 0)
                return rc;
        }
    }
    if (cli_need_file("canary", a->file) != 0)
        return CLI_BAD_INPUT;
    return 0;
}

/* --regression: the variant is exactly these scale factors. */
static int apply_regression(const canary_args *a, scenario_cfg *cfg)
{
    if (a->nreg == 0)
        return 0;
    for (int s = 0; s < CFG_MAX_STAGES; s++) {
        cfg->canary.scale[s] = 1.0;
        cfg->canary.dist_of[s] = -1;
    }
    for (int k = 0; k < a->nreg; k++) {
        int s = 0;
        while (s < cfg->nstages && strcmp(cfg->stages[s].name, a->reg_stage[k]) != 0)
            s++;
        if (s == cfg->nstages) {
            fprintf(stderr, "vlsim canary: --regression %s=%g: %s has no stage named \"%s\"; "
                    "stages:", a->reg_stage[k], a->reg_factor[k], a->file, a->reg_stage[k]);
            for (int t = 0; t < cfg->nstages; t++)
                fprintf(stderr, "%s %s", t ? "," : "", cfg->stages[t].name);
            fputc('\n', stderr);
            return CLI_BAD_INPUT;
        }
        if (cfg->stages[s].path != PATH_FRAME) {
            fprintf(stderr, "vlsim canary: --regression %s=%g: the stage is on the response "
                    "path; the canary covers the frame path only\n", a->reg_stage[k], a->reg_factor[k]);
            return CLI_BAD_INPUT;
        }
        cfg->canary.scale[s] = a->reg_factor[k];
    }
    return 0;
}

/* The variant's overrides in words: "encode x1.25, decode: its own distribution". */
static void describe_variant(const scenario_cfg *cfg, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = 0;
    for (int s = 0; s < cfg->nstages && o < size; s++) {
        const canary_cfg *k = &cfg->canary;
        if (k->scale[s] == 1.0 && k->dist_of[s] < 0)
            continue;
        int n = snprintf(buf + o, size - o, "%s%s", o ? ", " : "", cfg->stages[s].name);
        if (n > 0 && k->dist_of[s] >= 0)
            n += snprintf(buf + o + (size_t)n, size - o - (size_t)n, " (its own service)");
        if (n > 0 && k->scale[s] != 1.0)
            n += snprintf(buf + o + (size_t)n, size - o - (size_t)n, " x%g", k->scale[s]);
        if (n < 0)
            break;
        o += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, size, "identical to the baseline");
}

static int run_arm(scenario_cfg *cfg, const canary_args *a, canary_summary *sum, char *err, size_t errlen)
{
    cli_progress ps;
    cli_progress_start(&ps, !a->quiet && isatty(STDERR_FILENO), "rollouts");
    run_opts opts = { a->threads, cli_progress_cb, &ps, NULL };
    run_result res;
    if (run_scenario(cfg, &opts, &res, err, errlen) != 0)
        return -1;
    canary_summarize(res.canary, res.nrep, sum);
    for (int k = 0; k < res.nwarnings; k++)
        fprintf(stderr, "vlsim: warning: %s\n", res.warnings[k]);
    run_result_free(&res);
    return 0;
}

static void table_arm_row(FILE *f, const canary_summary *s, int k, int *cum)
{
    double lo, hi;
    *cum += s->aborted_at[k];
    canary_wilson((uint64_t)*cum, (uint64_t)s->nrep, 0.95, &lo, &hi);
    fprintf(f, "  %7d %6d %7.1f%% [%5.1f, %5.1f]", s->reached[k], s->aborted_at[k],
            100.0 * *cum / s->nrep, 100.0 * lo, 100.0 * hi);
}

static void write_table(FILE *f, const scenario_cfg *cfg, const char *variant,
                        const canary_summary *reg, const canary_summary *same)
{
    const canary_cfg *k = &cfg->canary;
    fprintf(f, "%s: %d rollouts per variant, seed %llu, %g s measured after %g s warm-up\n",
            cfg->name, reg->nrep, (unsigned long long)cfg->seed, cfg->duration_s, cfg->warmup_s);
    fprintf(f, "gates: variant p99 > %g x baseline, drop rate > %g, GPU utilization > %g; "
               "judged after %ld variant frames in a step\n",
            k->p99_ratio, k->drop_rate, k->gpu_util, k->min_frames);
    fprintf(f, "regressed variant: %s\n\n", variant);
    fputs("                         regressed variant                          identical variant\n", f);
    fputs("  step     pct  reached caught  caught by here [95% CI]    reached aborted aborted by here [95% CI]\n", f);
    int c1 = 0, c2 = 0;
    for (int s = 0; s < reg->nsteps; s++) {
        fprintf(f, "  %4d %6.2f%%", s, k->steps[s].pct);
        table_arm_row(f, reg, s, &c1);
        fputs("  ", f);
        table_arm_row(f, same, s, &c2);
        fputc('\n', f);
    }
    double lo, hi;
    char why[160];
    const canary_summary *both[2] = { reg, same };
    for (int v = 0; v < 2; v++) {
        const canary_summary *s = both[v];
        size_t o = 0;
        why[0] = 0;
        for (int r = 0; r < CANARY_NREASONS; r++)
            if (s->by_reason[r])
                o += (size_t)snprintf(why + o, sizeof why - o, "%s%s %d", o ? ", " : "",
                                      canary_reason_name(r), s->by_reason[r]);
        canary_wilson((uint64_t)s->aborted, (uint64_t)s->nrep, 0.95, &lo, &hi);
        fprintf(f, "\n  %s: %s %d of %d (%.1f%% [%.1f, %.1f]); completed %d, unfinished %d%s%s%s",
                v ? "identical variant" : "regressed variant", v ? "wrongly aborted" : "caught",
                s->aborted, s->nrep, 100.0 * s->aborted / s->nrep, 100.0 * lo, 100.0 * hi,
                s->completed, s->unfinished, *why ? " (gates: " : "", why, *why ? ")" : "");
    }
    fputs("\n  caught by here: rollouts aborted at this step or before; unfinished: the run ended "
          "first\n  (still holding, or waiting for min_frames) — lengthen --duration\n", f);
}

static void json_arm(jw_t *w, const char *key, const canary_summary *s, const canary_cfg *k)
{
    double lo, hi;
    int cum = 0;
    jw_obj_begin(w, key);
    jw_arr_begin(w, "steps");
    for (int t = 0; t < s->nsteps; t++) {
        cum += s->aborted_at[t];
        canary_wilson((uint64_t)cum, (uint64_t)s->nrep, 0.95, &lo, &hi);
        jw_obj_begin(w, NULL);
        jw_num(w, "pct", k->steps[t].pct);
        jw_int(w, "reached", s->reached[t]);
        jw_int(w, "aborted", s->aborted_at[t]);
        jw_int(w, "waiting", s->waiting[t]);
        jw_num(w, "aborted_by_here", (double)cum / s->nrep);
        jw_pair(w, "ci95", lo, hi);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    canary_wilson((uint64_t)s->aborted, (uint64_t)s->nrep, 0.95, &lo, &hi);
    jw_int(w, "rollouts", s->nrep);
    jw_int(w, "aborted", s->aborted);
    jw_num(w, "abort_rate", (double)s->aborted / s->nrep);
    jw_pair(w, "ci95", lo, hi);
    jw_int(w, "completed", s->completed);
    jw_int(w, "unfinished", s->unfinished);
    jw_obj_begin(w, "by_gate");
    for (int r = 0; r < CANARY_NREASONS; r++)
        jw_int(w, canary_reason_name(r), s->by_reason[r]);
    jw_obj_end(w);
    jw_obj_end(w);
}

static void write_json(FILE *f, const scenario_cfg *cfg, const char *variant,
                       const canary_summary *reg, const canary_summary *same)
{
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "scenario", cfg->name);
    jw_int(&w, "seed", (long long)cfg->seed);
    jw_int(&w, "rollouts", reg->nrep);
    jw_num(&w, "duration_s", cfg->duration_s);
    jw_str(&w, "variant", variant);
    jw_obj_begin(&w, "regression");
    for (int s = 0; s < cfg->nstages; s++)
        if (cfg->canary.scale[s] != 1.0)
            jw_num(&w, cfg->stages[s].name, cfg->canary.scale[s]);
    jw_obj_end(&w);
    json_arm(&w, "regressed", reg, &cfg->canary);
    json_arm(&w, "identical", same, &cfg->canary);
    jw_obj_end(&w);
    jw_done(&w);
}

int cli_canary(int argc, char **argv)
{
    canary_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    char err[2048];
    scenario_cfg cfg;
    if (scn_load_ex(a.file, a.sets.set, a.sets.n, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return CLI_BAD_INPUT;
    }
    if (cfg.canary.nsteps == 0) {
        fprintf(stderr, "vlsim canary: %s: the scenario has no canary: key (canary: {variant, "
                "steps, gates})\n", a.file);
        cfg_free(&cfg);
        return CLI_BAD_INPUT;
    }
    if (a.have_seed)
        cfg.seed = a.seed;
    if (a.replications)
        cfg.replications = a.replications;
    if (a.duration_s > 0)
        cfg.duration_s = a.duration_s;
    if ((rc = apply_regression(&a, &cfg)) != 0
        || (a.json && out_check(a.json, a.force, err, sizeof err) != 0)) {
        if (rc == 0)
            fprintf(stderr, "vlsim canary: %s\n", err);
        cfg_free(&cfg);
        return CLI_BAD_INPUT;
    }
    char variant[512];
    describe_variant(&cfg, variant, sizeof variant);

    canary_summary reg, same;
    double scale[CFG_MAX_STAGES];
    signed char dist_of[CFG_MAX_STAGES];
    memcpy(scale, cfg.canary.scale, sizeof scale);
    memcpy(dist_of, cfg.canary.dist_of, sizeof dist_of);
    rc = run_arm(&cfg, &a, &reg, err, sizeof err);
    for (int s = 0; s < CFG_MAX_STAGES; s++) {      /* the harmless variant: the baseline itself */
        cfg.canary.scale[s] = 1.0;
        cfg.canary.dist_of[s] = -1;
    }
    if (rc == 0)
        rc = run_arm(&cfg, &a, &same, err, sizeof err);
    memcpy(cfg.canary.scale, scale, sizeof scale);
    memcpy(cfg.canary.dist_of, dist_of, sizeof dist_of);
    if (rc != 0) {
        fprintf(stderr, "vlsim canary: %s: %s\n", a.file, err);
        cfg_free(&cfg);
        return CLI_FAIL;
    }
    rc = CLI_OK;
    bool table = !a.quiet && !(a.json && !strcmp(a.json, "-"));
    if (a.json) {
        out_file of;
        memset(&of, 0, sizeof of);
        if (out_open(&of, a.json, err, sizeof err) != 0) {
            rc = CLI_FAIL;
        } else {
            write_json(of.f, &cfg, variant, &reg, &same);
            if (ferror(of.f) || out_commit(&of, err, sizeof err) != 0) {
                if (!err[0] || ferror(of.f))
                    snprintf(err, sizeof err, "%s: write error", a.json);
                out_abort(&of);
                rc = CLI_FAIL;
            }
        }
        if (rc != CLI_OK)
            fprintf(stderr, "vlsim canary: %s\n", err);
    }
    if (rc == CLI_OK && table)
        write_table(stdout, &cfg, variant, &reg, &same);
    cfg_free(&cfg);
    return rc;
}
