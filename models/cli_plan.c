/* cli_plan.c — the planning subcommands: `vlsim compare` (A/B by same-frame
 * replay), `vlsim sla` (an SLA proposal in Markdown) and `vlsim whatif`
 * (stage speedups: Amdahl against re-simulation).
 *
 * Argument parsing and file handling only: the work is in compare.c, sla.c
 * and whatif.c. As in `run`, every output destination is checked before any
 * work, written to a temporary and renamed into place only when complete
 * (sim/out.h), so a failure never leaves a half-written file and an
 * existing file is replaced only with --force. */
#include "models/cli.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "models/compare.h"
#include "models/frontier.h"
#include "models/scenario.h"
#include "models/sla.h"
#include "models/whatif.h"
#include "sim/out.h"
#include "models/cli_args.h"

static const char *COMPARE_USAGE =
    "usage: vlsim compare A.yaml B.yaml [options]\n"
    "\n"
    "Compare two configurations by same-frame replay: both run with A's seed,\n"
    "replications, duration and warm-up, so they see identical arrivals and jitter\n"
    "(common random numbers). For every percentile of the frame and response latency\n"
    "(and each stage both have) it prints the paired 95% CI of B - A beside the\n"
    "unpaired (Welch) one, and how many times tighter pairing is.\n"
    "\n"
    "options:\n"
    "  --shadow           B mirrors A's traffic (a copy of it: B's workload becomes A's);\n"
    "                     the cost line adds B's GPUs to A's\n"
    "  --seed N           the seed of both (default: A's)\n"
    "  --replications N   replications of each (default: A's); pairs need >= 2\n"
    "  --duration S       measured seconds per replication (default: A's)\n"
    "  --set KEY=VALUE    override a scalar in both scenarios (repeatable)\n"
    "  --threads N        worker threads (default: one per core); results do not depend on it\n"
    "  --json F           write the comparison as JSON to F (- for stdout)\n"
    "  --force            replace an output file that already exists\n"
    "  -q, --quiet        no table and no progress\n"
    "  -h, --help         show this text\n"
    "\n"
    "exit status: 0 success, 2 bad input, 1 internal failure\n";

static const char *SLA_USAGE =
    "usage: vlsim sla FILE [options]\n"
    "\n"
    "Write a short SLA proposal in Markdown: the percentiles the scenario achieves at\n"
    "its cost (with 95% CIs), the per-stage budget table, and for each stricter\n"
    "target the fewest GPUs (cluster.gpus, searched upward) that meet it and the cost\n"
    "per stream-hour there. Default targets: each SLA line, and each at 2/3 and 1/2.\n"
    "\n"
    "options:\n"
    "  --out F            write the proposal to F (default: - for stdout)\n"
    "  --target T         a target instead of the defaults, e.g. \"frame p99 <= 66\"\n"
    "                     (repeatable; frame, response or a stage; p50, p95 or p99)\n"
    "  --max-gpus N       search at most N GPUs (default: max(4 x gpus, gpus + 16))\n"
    "  --max-drop-rate X  a GPU count that drops more than X of the frames meets no\n"
    "                     target (default 0.01)\n"
    "  --seed N           override the scenario's seed\n"
    "  --replications N   override the number of replications\n"
    "  --duration S       override duration_s\n"
    "  --set KEY=VALUE    override any scalar of the scenario (repeatable)\n"
    "  --threads N        worker threads per run (default: one per core)\n"
    "  --force            replace an output file that already exists\n"
    "  -q, --quiet        no progress\n"
    "  -h, --help         show this text\n"
    "\n"
    "exit status: 0 success, 2 bad input, 1 internal failure\n";

static const char *WHATIF_USAGE =
    "usage: vlsim whatif FILE --speedup STAGE=S [--speedup STAGE=S ...] [options]\n"
    "\n"
    "What if a stage were S times faster (its service times divided by S)? Prints\n"
    "Amdahl's prediction of the frame (or response) p99, from the stage's share f of\n"
    "it (its sojourn p99 over the sum of its path's stage p99s), beside the\n"
    "re-simulated p99 and by how much they differ under queueing; with several\n"
    "speedups, also all of them together; then every stage ranked by its p99 gain at\n"
    "the first speedup's factor.\n"
    "\n"
    "options:\n"
    "  --speedup STAGE=S  divide STAGE's service times by S > 0 (repeatable)\n"
    "  --rank-factor S    rank the stages at this speedup instead (default: the first S)\n"
    "  --no-rank          do not rank the stages (fewer runs)\n"
    "  --seed N           override the scenario's seed\n"
    "  --replications N   override the number of replications\n"
    "  --duration S       override duration_s\n"
    "  --set KEY=VALUE    override any scalar of the scenario (repeatable)\n"
    "  --threads N        worker threads per run (default: one per core)\n"
    "  --json F           write the results as JSON to F (- for stdout)\n"
    "  --force            replace an output file that already exists\n"
    "  -q, --quiet        no table and no progress\n"
    "  -h, --help         show this text\n"
    "\n"
    "exit status: 0 success, 2 bad input, 1 internal failure\n";

/* ---- the options the three share ------------------------------------------------ */

#define PLAN_MAX_SET 64
#define PLAN_MAX_FILES 2

typedef struct {
    const char *cmd;                     /* "compare", "sla", "whatif" */
    const char *usage;
    int nfiles_want;
    const char *file[PLAN_MAX_FILES];
    int nfiles;
    const char *out;                     /* --json or --out */
    bool force, quiet, shadow, no_rank;
    int threads, max_gpus;
    double rank_factor, max_drop_rate;
    bool have_max_drop;
    scn_override ov[PLAN_MAX_SET + 3];   /* --set, then seed / replications / duration */
    size_t nov;
    char buf[PLAN_MAX_SET + 3][256];
    whatif_speedup sp[WHATIF_MAX];
    int nsp;
    frontier_target tg[SLA_MAX_TARGETS];
    int ntg;
} plan_args;

/* Add "key=value" to the overrides (the scenario loader checks the value). */
static int add_override(plan_args *a, const char *key, const char *value)
{
    if (a->nov >= sizeof a->ov / sizeof a->ov[0]
        || strlen(key) + strlen(value) + 2 > sizeof a->buf[0]) {
        fprintf(stderr, "vlsim %s: too many or too long overrides\n", a->cmd);
        return CLI_BAD_INPUT;
    }
    char *b = a->buf[a->nov];
    size_t kl = strlen(key);
    memcpy(b, key, kl + 1);
    memcpy(b + kl + 1, value, strlen(value) + 1);
    a->ov[a->nov].key = b;
    a->ov[a->nov].value = b + kl + 1;
    a->nov++;
    return 0;
}

/* 0: parsed; -1: --help shown; else an exit status. */
static int parse_plan(int argc, char **argv, plan_args *a)
{
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool is_compare = !strcmp(a->cmd, "compare"), is_sla = !strcmp(a->cmd, "sla");
        bool is_whatif = !strcmp(a->cmd, "whatif");
        int rc;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(a->usage, stdout);
            return -1;
        } else if (!strcmp(o, "--force")) {
            a->force = true;
        } else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
            a->quiet = true;
        } else if (is_compare && !strcmp(o, "--shadow")) {
            a->shadow = true;
        } else if (is_whatif && !strcmp(o, "--no-rank")) {
            a->no_rank = true;
        } else if (!strcmp(o, "--seed") || !strcmp(o, "--replications")
                   || !strcmp(o, "--duration")) {
            double d;
            int n;
            if (!strcmp(o, "--duration") ? cli_pos_double(v, &d, false) != 0
                : !strcmp(o, "--replications") ? cli_pos_int(v, &n) != 0
                : (!v || !*v || strspn(v, "0123456789") != strlen(v)))
                return cli_bad(a->cmd, o, !strcmp(o, "--duration") ? "seconds > 0"
                               : !strcmp(o, "--seed") ? "a non-negative integer"
                               : "an integer >= 1", v);
            if ((rc = add_override(a, !strcmp(o, "--duration") ? "duration_s" : o + 2, v)) != 0)
                return rc;
            i++;
        } else if (!strcmp(o, "--set")) {
            const char *eq = v ? strchr(v, '=') : NULL;
            if (!eq || eq == v || a->nov >= PLAN_MAX_SET)
                return cli_bad(a->cmd, o, "KEY=VALUE (at most 64)", v);
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - v), v);
            if ((rc = add_override(a, key, eq + 1)) != 0)
                return rc;
            i++;
        } else if (!strcmp(o, "--threads")) {
            if (cli_pos_int(v, &a->threads) != 0)
                return cli_bad(a->cmd, o, "an integer >= 1", v);
            i++;
        } else if ((!is_sla && !strcmp(o, "--json")) || (is_sla && !strcmp(o, "--out"))) {
            if (!v || !*v)
                return cli_bad(a->cmd, o, "a file name or -", v);
            a->out = v;
            i++;
        } else if (is_sla && !strcmp(o, "--max-gpus")) {
            if (cli_pos_int(v, &a->max_gpus) != 0)
                return cli_bad(a->cmd, o, "an integer >= 1", v);
            i++;
        } else if (is_sla && !strcmp(o, "--max-drop-rate")) {
            char *end = NULL;
            errno = 0;
            double x = v && *v ? strtod(v, &end) : NAN;
            if (!v || !*v || errno || *end || !isfinite(x) || x < 0)
                return cli_bad(a->cmd, o, "a fraction >= 0 (0.01 is 1 %)", v);
            a->max_drop_rate = x;
            a->have_max_drop = true;
            i++;
        } else if (is_sla && !strcmp(o, "--target")) {
            char err[512];
            if (a->ntg == SLA_MAX_TARGETS) {
                fprintf(stderr, "vlsim sla: at most %d targets\n", SLA_MAX_TARGETS);
                return CLI_BAD_INPUT;
            }
            if (!v || frontier_target_parse(v, &a->tg[a->ntg], err, sizeof err) != 0) {
                fprintf(stderr, "vlsim sla: --target: %s\n", v ? err : "missing its value");
                return CLI_BAD_INPUT;
            }
            a->ntg++;
            i++;
        } else if (is_whatif && !strcmp(o, "--speedup")) {
            char err[512];
            if (a->nsp == WHATIF_MAX) {
                fprintf(stderr, "vlsim whatif: at most %d --speedup\n", WHATIF_MAX);
                return CLI_BAD_INPUT;
            }
            if (whatif_parse(v, &a->sp[a->nsp], err, sizeof err) != 0) {
                fprintf(stderr, "vlsim whatif: %s\n", err);
                return CLI_BAD_INPUT;
            }
            a->nsp++;
            i++;
        } else if (is_whatif && !strcmp(o, "--rank-factor")) {
            if (cli_pos_double(v, &a->rank_factor, false) != 0)
                return cli_bad(a->cmd, o, "a factor > 0", v);
            i++;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "vlsim %s: unknown option %s (see vlsim %s --help)\n", a->cmd, o,
                    a->cmd);
            return CLI_BAD_INPUT;
        } else if (a->nfiles == a->nfiles_want) {
            fprintf(stderr, "vlsim %s: too many files (%s); see vlsim %s --help\n", a->cmd, o,
                    a->cmd);
            return CLI_BAD_INPUT;
        } else {
            a->file[a->nfiles++] = o;
        }
    }
    if (a->nfiles != a->nfiles_want) {
        fprintf(stderr, "vlsim %s: missing %s (see vlsim %s --help)\n", a->cmd,
                a->nfiles_want == 2 ? "the scenario files A.yaml B.yaml" : "the scenario FILE",
                a->cmd);
        return CLI_BAD_INPUT;
    }
    return 0;
}

static int check_out(const plan_args *a)
{
    char err[2048];
    if (a->out && out_check(a->out, a->force, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim %s: %s\n", a->cmd, err);
        return CLI_BAD_INPUT;
    }
    return 0;
}

/* Write through fn into a->out atomically. */
typedef void (*plan_writer)(FILE *f, const void *ctx);

static int write_out(const plan_args *a, plan_writer fn, const void *ctx)
{
    char err[2048];
    out_file of;
    memset(&of, 0, sizeof of);
    if (out_open(&of, a->out, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim %s: %s\n", a->cmd, err);
        return CLI_FAIL;
    }
    fn(of.f, ctx);
    if (ferror(of.f)) {
        out_abort(&of);
        fprintf(stderr, "vlsim %s: %s: write error\n", a->cmd, a->out);
        return CLI_FAIL;
    }
    if (out_commit(&of, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim %s: %s\n", a->cmd, err);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static bool to_stdout(const plan_args *a)
{
    return a->out && !strcmp(a->out, "-");
}

/* ---- compare ------------------------------------------------------------------------ */

typedef struct {
    const cmp_result *c;
    const char *a, *b;
} cmp_ctx;

static void cmp_write(FILE *f, const void *v)
{
    const cmp_ctx *x = v;
    cmp_json(f, x->c, x->a, x->b);
}

int cli_compare(int argc, char **argv)
{
    plan_args a;
    memset(&a, 0, sizeof a);
    a.cmd = "compare";
    a.usage = COMPARE_USAGE;
    a.nfiles_want = 2;
    int rc = parse_plan(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    if ((rc = check_out(&a)) != 0)
        return rc;
    char err[2048];
    scenario_cfg ca, cb;
    if (scn_load_ex(a.file[0], a.ov, a.nov, &ca, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return CLI_BAD_INPUT;
    }
    if (scn_load_ex(a.file[1], a.ov, a.nov, &cb, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        cfg_free(&ca);
        return CLI_BAD_INPUT;
    }
    if (ca.replications < 2) {
        fprintf(stderr, "vlsim compare: %s: %d replication: confidence intervals need at least "
                        "2 (--replications N)\n", a.file[0], ca.replications);
        cfg_free(&ca);
        cfg_free(&cb);
        return CLI_BAD_INPUT;
    }
    int changed = cmp_align(&ca, &cb, a.shadow);
    if (!a.quiet && (changed & (CMP_SEED | CMP_REPS | CMP_DURATION | CMP_WARMUP | CMP_WORKLOAD)))
        fprintf(stderr, "vlsim compare: B runs with A's%s%s%s%s%s (same-frame replay)\n",
                changed & CMP_SEED ? " seed" : "", changed & CMP_REPS ? " replications" : "",
                changed & CMP_DURATION ? " duration" : "", changed & CMP_WARMUP ? " warm-up" : "",
                changed & CMP_WORKLOAD ? " workload (shadow)" : "");
    cli_progress ps;
    cli_progress_start(&ps, !a.quiet && isatty(STDERR_FILENO), "replications");
    run_opts opts = { a.threads, cli_progress_cb, &ps, NULL };
    run_result ra, rb;
    if (cmp_run(&ca, &cb, a.shadow, &opts, &ra, &rb, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim compare: %s\n", err);
        cfg_free(&ca);
        cfg_free(&cb);
        return CLI_FAIL;
    }
    for (int k = 0; k < ra.nwarnings; k++)
        fprintf(stderr, "vlsim: warning: A: %s\n", ra.warnings[k]);
    for (int k = 0; k < rb.nwarnings; k++)
        fprintf(stderr, "vlsim: warning: B: %s\n", rb.warnings[k]);
    cmp_result c;
    rc = CLI_OK;
    if (cmp_compute(&ra, &rb, a.shadow, &c, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim compare: %s\n", err);
        rc = CLI_FAIL;
    }
    char na[4200], nb[4200];
    snprintf(na, sizeof na, "%s (%s)", ca.name, a.file[0]);
    snprintf(nb, sizeof nb, "%s (%s)", cb.name, a.file[1]);
    if (rc == CLI_OK && a.out) {
        cmp_ctx x = { &c, na, nb };
        rc = write_out(&a, cmp_write, &x);
    }
    if (rc == CLI_OK && !a.quiet && !to_stdout(&a))
        cmp_table(stdout, &c, na, nb);
    cmp_free(&c);
    run_result_free(&ra);
    run_result_free(&rb);
    cfg_free(&ca);
    cfg_free(&cb);
    return rc;
}

/* ---- sla ------------------------------------------------------------------------------ */

typedef struct {
    cli_progress ps;
    bool on;
} sla_progress;

static void sla_probe(void *pctx, int gpus, int runs)
{
    sla_progress *p = pctx;
    if (!p->on)
        return;
    fprintf(stderr, "\rvlsim: sla: %d runs, last %d GPUs, %.1f s elapsed   ", runs, gpus,
            cli_progress_elapsed(&p->ps));
}

static void sla_write(FILE *f, const void *v)
{
    sla_markdown(f, v);
}

int cli_sla(int argc, char **argv)
{
    plan_args a;
    memset(&a, 0, sizeof a);
    a.cmd = "sla";
    a.usage = SLA_USAGE;
    a.nfiles_want = 1;
    int rc = parse_plan(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    if (!a.out)
        a.out = "-";
    if ((rc = check_out(&a)) != 0)
        return rc;
    sla_progress sp;
    sp.on = !a.quiet && isatty(STDERR_FILENO);
    cli_progress_start(&sp.ps, sp.on, "runs");
    sla_opts o;
    sla_opts_default(&o);
    o.threads = a.threads;
    o.max_gpus = a.max_gpus;
    if (a.have_max_drop)
        o.max_drop_rate = a.max_drop_rate;
    o.probe = sla_probe;
    o.pctx = &sp;
    sla_result res;
    char err[2048];
    rc = sla_search(a.file[0], a.ov, a.nov, a.ntg ? a.tg : NULL, a.ntg, &o, &res, err,
                    sizeof err);
    if (sp.on)
        fputs("\r\033[K", stderr);
    if (rc != 0) {
        fprintf(stderr, "vlsim sla: %s\n", err);
        return rc == -2 ? CLI_BAD_INPUT : CLI_FAIL;
    }
    for (int k = 0; k < res.base.nwarnings; k++)
        fprintf(stderr, "vlsim: warning: %s\n", res.base.warnings[k]);
    rc = write_out(&a, sla_write, &res);
    if (rc == CLI_OK && !a.quiet && !to_stdout(&a))
        printf("vlsim sla: %s written (%d runs)\n", a.out, res.runs);
    sla_free(&res);
    return rc;
}

/* ---- whatif ---------------------------------------------------------------------------- */

static void whatif_write(FILE *f, const void *v)
{
    whatif_json(f, v);
}

int cli_whatif(int argc, char **argv)
{
    plan_args a;
    memset(&a, 0, sizeof a);
    a.cmd = "whatif";
    a.usage = WHATIF_USAGE;
    a.nfiles_want = 1;
    int rc = parse_plan(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    if (a.nsp == 0) {
        fputs("vlsim whatif: give at least one --speedup STAGE=S (see vlsim whatif --help)\n",
              stderr);
        return CLI_BAD_INPUT;
    }
    if ((rc = check_out(&a)) != 0)
        return rc;
    cli_progress ps;
    cli_progress_start(&ps, !a.quiet && isatty(STDERR_FILENO), "runs");
    whatif_opts o = { a.threads, a.no_rank ? 0 : a.rank_factor > 0 ? a.rank_factor : a.sp[0].factor,
                      cli_progress_cb, &ps };
    whatif_result res;
    char err[2048];
    rc = whatif_run(a.file[0], a.ov, a.nov, a.sp, a.nsp, &o, &res, err, sizeof err);
    if (rc != 0) {
        if (ps.on)
            fputs("\r\033[K", stderr);
        fprintf(stderr, "vlsim whatif: %s\n", err);
        return rc == -2 ? CLI_BAD_INPUT : CLI_FAIL;
    }
    if (a.out)
        rc = write_out(&a, whatif_write, &res);
    if (rc == CLI_OK && !a.quiet && !to_stdout(&a))
        whatif_table(stdout, &res);
    whatif_free(&res);
    return rc;
}
