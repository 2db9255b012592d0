/* cli.c — argument parsing and the `run` subcommand.
 *
 * The order of work in `run` is what keeps the user's files safe: parse
 * the arguments, load the scenario, check every output destination, run,
 * write every output to a temporary, and only when all of them are
 * complete rename them into place. Any failure before the last step leaves
 * the file system exactly as it was; so does SIGINT or SIGTERM (sim/stop.h:
 * the run stops, nothing is renamed, exit 128 + the signal). No simulation
 * logic lives here. */
#include "models/cli.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "models/plot.h"
#include "models/report.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/out.h"
#include "sim/stop.h"
#include "models/cli_args.h"

static const char *USAGE =
    "usage: vlsim <command> [options]\n"
    "\n"
    "vlsim simulates a pipeline of queueing stages (a real-time video-LLM service)\n"
    "and reports per-stage and end-to-end latency distributions with 95% confidence\n"
    "intervals, drops and utilization.\n"
    "\n"
    "commands:\n"
    "  run FILE      simulate one scenario (see `vlsim run --help`)\n"
    "  sweep FILE    run it over a grid of values: the cost-vs-latency map\n"
    "  capacity FILE the most streams per GPU count that meet the SLA\n"
    "  frontier CSV  the Pareto set and the cheapest configuration per target\n"
    "  plot DIR      a sweep's pictures: the frontier and the capacity heatmap\n"
    "  compare A B   A/B by same-frame replay: paired against unpaired CIs\n"
    "  sla FILE      an SLA proposal (Markdown): budget table, cost of stricter targets\n"
    "  whatif FILE   stage speedups: Amdahl's prediction beside the re-simulated result\n"
    "  canary FILE   how likely the canary rollout is to catch a regression, and to\n"
    "                abort a harmless variant\n"
    "  warmpool FILE size the warm pool of an autoscaled scenario\n"
    "  help          show this text\n"
    "\n"
    "options:\n"
    "  -h, --help    show this text\n"
    "  --version     print the version\n";

static const char *RUN_USAGE =
    "usage: vlsim run FILE [options]\n"
    "\n"
    "Simulate the scenario in FILE (YAML) and print a table of results.\n"
    "\n"
    "options:\n"
    "  --seed N           override the scenario's seed\n"
    "  --replications N   override the number of replications (>= 1)\n"
    "  --duration S       override duration_s (simulated seconds measured per replication)\n"
    "  --warmup S|auto    override the warm-up (seconds, or auto for MSER-5)\n"
    "  --set KEY=VALUE    override any scalar of the scenario, e.g. --set streams=48,\n"
    "                     --set stages.encode.max_batch=16 (repeatable)\n"
    "  --threads N        worker threads (default: one per core); results do not depend on it\n"
    "  --json F           write results as JSON to F (- for stdout)\n"
    "  --csv F            write one CSV row per stage to F (- for stdout)\n"
    "  --prom F           write Prometheus text exposition to F (- for stdout)\n"
    "  --plot DIR         draw the run's pictures into DIR (created if missing): per-stage\n"
    "                     CDFs, stage p99s against the budget, replication 0 over time\n"
    "  --trace F          write replication 0's spans to F, a CSV row per item and stage\n"
    "                     (kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,\n"
    "                     end_ms: the format of calib/realpipe's spans), warm-up included\n"
    "  --force            replace output files that already exist\n"
    "  -q, --quiet        no table and no progress; warnings still go to stderr\n"
    "  -h, --help         show this text\n"
    "\n"
    "exit status: 0 success (also when the verdict is unstable: a queue grew without\n"
    "bound; see \"verdict\" in the JSON), 2 bad input, 1 internal failure,\n"
    "130 interrupted by SIGINT (143: SIGTERM), with no output written\n";

/* ---- progress -------------------------------------------------------------- */

void cli_progress_start(cli_progress *p, bool on, const char *what)
{
    p->on = on;
    p->what = what;
    clock_gettime(CLOCK_MONOTONIC, &p->t0);
}

double cli_progress_elapsed(const cli_progress *p)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - p->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - p->t0.tv_nsec);
}

void cli_progress_cb(void *vp, int done, int total)
{
    cli_progress *p = vp;
    if (!p->on)
        return;
    double el = cli_progress_elapsed(p), rate = el > 0 ? done / el : 0;
    double eta = done ? el * (total - done) / done : 0.0;
    fprintf(stderr, "\rvlsim: %s %d/%d, %.2f/s, %.1f s elapsed, ETA %.1f s   ", p->what, done,
            total, rate, el, eta);
    if (done == total)
        fputs("\r\033[K", stderr);
}

/* ---- gnuplot templates ------------------------------------------------------ */

/* Where the gnuplot templates are: $VLSIM_PLOTS, ./plots (a checkout), or
 * PREFIX/share/vlsim/plots beside an installed binary (PREFIX/bin/vlsim). */
const char *cli_template_dir(char *buf, size_t n)
{
    const char *env = getenv("VLSIM_PLOTS");
    if (env && *env)
        return env;
    if (access("plots/frontier.gp.in", R_OK) == 0)
        return "plots";
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, n, "%s/../share/vlsim/plots", exe);
            return buf;
        }
    }
    return "plots";
}

/* ---- run --------------------------------------------------------------------- */

enum { OUT_JSON, OUT_CSV, OUT_PROM, OUT_N };

typedef struct {
    const char *file;
    const char *out[OUT_N];
    cli_sets sets;                   /* --set KEY=VALUE */
    const char *plot_dir;
    const char *trace;           /* --trace: replication 0's spans */
    bool force, quiet, have_seed;
    unsigned long long seed;
    int replications, threads;
    double duration_s;
    const char *warmup;
} run_args;

static int parse_run_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(RUN_USAGE, stdout);
            return -1;
        } else if (!strcmp(o, "--force")) {
            a->force = true;
        } else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
            a->quiet = true;
        } else if (!strcmp(o, "--seed")) {
            if (cli_u64(v, &a->seed) != 0)
                return cli_bad("run", o, "a non-negative integer", v);
            a->have_seed = true;
            i++;
        } else if (!strcmp(o, "--replications")) {
            if (cli_replications(v, &a->replications) != 0)
                return cli_bad("run", o, CLI_REPS_WANT, v);
            i++;
        } else if (!strcmp(o, "--threads")) {
            if (cli_pos_int(v, &a->threads) != 0)
                return cli_bad("run", o, "an integer >= 1", v);
            i++;
        } else if (!strcmp(o, "--duration")) {
            if (cli_seconds(v, &a->duration_s, false) != 0)
                return cli_bad("run", o, CLI_SECONDS_WANT, v);
            i++;
        } else if (!strcmp(o, "--warmup")) {
            double w;
            if (!v || (strcmp(v, "auto") != 0 && cli_seconds(v, &w, true) != 0))
                return cli_bad("run", o, "seconds >= 0 or auto", v);
            a->warmup = v;
            i++;
        } else if (!strcmp(o, "--set")) {
            int rc = cli_add_set(&a->sets, "run", v);
            if (rc != 0)
                return rc;
            i++;
        } else if (!strcmp(o, "--plot")) {
            if (!v || !*v)
                return cli_bad("run", o, "a directory", v);
            a->plot_dir = v;
            i++;
        } else if (!strcmp(o, "--trace")) {
            if (!v || !*v || !strcmp(v, "-"))
                return cli_bad("run", o, "a file name", v);
            a->trace = v;
            i++;
        } else if (!strcmp(o, "--json") || !strcmp(o, "--csv") || !strcmp(o, "--prom")) {
            int k = o[2] == 'j' ? OUT_JSON : o[2] == 'c' ? OUT_CSV : OUT_PROM;
            if (!v || !*v)
                return cli_bad("run", o, "a file name or -", v);
            a->out[k] = v;
            i++;
        } else {
            int rc = cli_positional("run", o, &a->file);
            if (rc != 0)
                return rc;
        }
    }
    if (cli_need_file("run", a->file) != 0)
        return CLI_BAD_INPUT;
    int nstdout = 0;
    for (int k = 0; k < OUT_N; k++)
        nstdout += a->out[k] && !strcmp(a->out[k], "-");
    if (nstdout > 1) {
        fputs("vlsim run: only one of --json/--csv/--prom may write to stdout (-)\n", stderr);
        return CLI_BAD_INPUT;
    }
    for (int k = 0; k < OUT_N; k++)
        for (int j = 0; j < k; j++)
            if (a->out[k] && a->out[j] && strcmp(a->out[k], "-") && !strcmp(a->out[k], a->out[j])) {
                fprintf(stderr, "vlsim run: %s is named for two outputs\n", a->out[k]);
                return CLI_BAD_INPUT;
            }
    for (int k = 0; k < OUT_N && a->trace; k++)
        if (a->out[k] && !strcmp(a->out[k], a->trace)) {
            fprintf(stderr, "vlsim run: %s is named for two outputs\n", a->trace);
            return CLI_BAD_INPUT;
        }
    return 0;
}

static void apply_overrides(const run_args *a, scenario_cfg *cfg)
{
    if (a->have_seed)
        cfg->seed = a->seed;
    if (a->replications)
        cfg->replications = a->replications;
    if (a->duration_s > 0)
        cfg->duration_s = a->duration_s;
    if (a->warmup) {
        cfg->warmup_auto = !strcmp(a->warmup, "auto");
        if (!cfg->warmup_auto)
            cfg->warmup_s = strtod(a->warmup, NULL);
    }
}

static void write_output(int k, FILE *f, const run_result *r, double wall_s)
{
    if (k == OUT_JSON)
        report_json(f, r, wall_s);
    else if (k == OUT_CSV)
        report_csv(f, r);
    else
        report_prom(f, r);
}

/* SIGINT or SIGTERM stopped the run: one line, and 128 + the signal. */
static int interrupted(const char *what)
{
    int sig = stop_requested();
    fprintf(stderr, "vlsim run: interrupted by %s; %s\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
            what);
    return 128 + sig;
}

static int cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse_run_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? CLI_OK : rc;
    if (stop_install() != 0) {
        fputs("vlsim run: cannot install the SIGINT/SIGTERM handlers\n", stderr);
        return CLI_FAIL;
    }

    char err[2048];
    scenario_cfg cfg;
    if (scn_load_ex(a.file, a.sets.set, a.sets.n, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return CLI_BAD_INPUT;
    }
    apply_overrides(&a, &cfg);
    for (int k = 0; k < OUT_N; k++)
        if (a.out[k] && out_check(a.out[k], a.force, err, sizeof err) != 0) {
            fprintf(stderr, "vlsim run: %s\n", err);
            cfg_free(&cfg);
            return CLI_BAD_INPUT;
        }
    if (a.trace && out_check(a.trace, a.force, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim run: --trace: %s\n", err);
        cfg_free(&cfg);
        return CLI_BAD_INPUT;
    }

    if (a.plot_dir && !a.force) {          /* the pictures must not replace a user's files */
        static const char *const names[] = { "cdf", "budget", "series" };
        static const char *const exts[] = { "dat", "gp", "png", "svg" };
        for (int k = 0; k < 3; k++)
            for (int x = 0; x < 4; x++) {
                char f[4200];
                snprintf(f, sizeof f, "%s/%s.%s", a.plot_dir, names[k], exts[x]);
                if (access(f, F_OK) == 0) {
                    fprintf(stderr, "vlsim run: --plot: %s already exists; pass --force to replace it\n", f);
                    cfg_free(&cfg);
                    return CLI_BAD_INPUT;
                }
            }
    }
    bool table = !a.quiet;
    for (int k = 0; k < OUT_N; k++)
        if (a.out[k] && !strcmp(a.out[k], "-"))
            table = false;                     /* stdout belongs to the machine format */
    cli_progress ps;
    cli_progress_start(&ps, !a.quiet && isatty(STDERR_FILENO), "replications");
    run_opts opts = { a.threads, cli_progress_cb, &ps, NULL };
    out_file tf;                       /* --trace: written as replication 0 runs, kept at the end */
    memset(&tf, 0, sizeof tf);
    if (a.trace) {
        if (out_open(&tf, a.trace, err, sizeof err) != 0) {
            fprintf(stderr, "vlsim run: --trace: %s\n", err);
            cfg_free(&cfg);
            return CLI_FAIL;
        }
        fputs("kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n", tf.f);
        opts.trace = tf.f;
    }
    run_result res;
    int rrc = run_scenario(&cfg, &opts, &res, err, sizeof err);
    if (rrc != 0) {
        if (ps.on)
            fputs("\r\033[K", stderr);
        out_abort(&tf);
        cfg_free(&cfg);
        if (rrc == RUN_INTERRUPTED)
            return interrupted("nothing was written");
        fprintf(stderr, "vlsim run: %s: %s\n", a.file, err);
        return CLI_FAIL;
    }
    double wall_s = cli_progress_elapsed(&ps);
    for (int k = 0; k < res.nwarnings; k++)
        fprintf(stderr, "vlsim: warning: %s\n", res.warnings[k]);
    if (!res.verdict.stable)
        fprintf(stderr, "vlsim: unstable: %s\n", res.verdict.reason);

    /* Everything to temporaries first; rename only when all are complete. */
    out_file of[OUT_N];
    memset(of, 0, sizeof of);
    rc = CLI_OK;
    for (int k = 0; k < OUT_N && rc == CLI_OK; k++) {
        if (!a.out[k])
            continue;
        if (out_open(&of[k], a.out[k], err, sizeof err) != 0) {
            rc = CLI_FAIL;
            break;
        }
        write_output(k, of[k].f, &res, wall_s);
        if (ferror(of[k].f)) {
            snprintf(err, sizeof err, "%s: write error", a.out[k]);
            rc = CLI_FAIL;
        }
    }
    if (rc == CLI_OK && a.trace && ferror(tf.f)) {
        snprintf(err, sizeof err, "%s: write error", a.trace);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && stop_requested()) {   /* the last moment to keep the user's files as they were */
        for (int k = 0; k < OUT_N; k++)
            out_abort(&of[k]);
        out_abort(&tf);
        run_result_free(&res);
        cfg_free(&cfg);
        return interrupted("nothing was written");
    }
    for (int k = 0; k < OUT_N && rc == CLI_OK; k++)
        if (a.out[k] && out_commit(&of[k], err, sizeof err) != 0)
            rc = CLI_FAIL;
    if (rc == CLI_OK && a.trace && out_commit(&tf, err, sizeof err) != 0)
        rc = CLI_FAIL;
    if (rc != CLI_OK) {
        for (int k = 0; k < OUT_N; k++)
            out_abort(&of[k]);
        out_abort(&tf);
        fprintf(stderr, "vlsim run: %s\n", err);
    } else if (table) {
        report_table(stdout, &res, wall_s);
    }
    if (rc == CLI_OK && a.plot_dir) {
        plot_opts po;
        plot_opts_default(&po);
        char tbuf[4200];
        po.template_dir = cli_template_dir(tbuf, sizeof tbuf);
        plot_summary sum;
        po.summary = &sum;
        if (mkdir(a.plot_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "vlsim run: --plot %s: %s\n", a.plot_dir, strerror(errno));
            rc = CLI_FAIL;
        } else if (plot_run(&res, a.plot_dir, &po, err, sizeof err) != PLOT_OK) {
            fprintf(stderr, "vlsim run: --plot: %s\n", err);
            rc = CLI_FAIL;
        } else if (table) {
            plot_summary_report(stdout, a.plot_dir, &sum);
        }
    }
    run_result_free(&res);
    cfg_free(&cfg);
    return rc;
}

int cli_main(int argc, char **argv)
{
    gsl_set_error_handler_off();   /* GSL errors come back as codes; never abort */
    if (argc < 2) {
        fputs(USAGE, stderr);
        return CLI_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return CLI_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vlsim %s\n", VLSIM_VERSION);
        return CLI_OK;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "sweep"))
        return cli_sweep(argc - 2, argv + 2);
    if (!strcmp(cmd, "capacity"))
        return cli_capacity(argc - 2, argv + 2);
    if (!strcmp(cmd, "frontier"))
        return cli_frontier(argc - 2, argv + 2);
    if (!strcmp(cmd, "plot"))
        return cli_plot(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare"))
        return cli_compare(argc - 2, argv + 2);
    if (!strcmp(cmd, "sla"))
        return cli_sla(argc - 2, argv + 2);
    if (!strcmp(cmd, "whatif"))
        return cli_whatif(argc - 2, argv + 2);
    if (!strcmp(cmd, "canary"))
        return cli_canary(argc - 2, argv + 2);
    if (!strcmp(cmd, "warmpool"))
        return cli_warmpool(argc - 2, argv + 2);
    fprintf(stderr, "vlsim: unknown command '%s' (see vlsim --help)\n", cmd);
    return CLI_BAD_INPUT;
}
