/* cli_sweep.c — the `sweep`, `capacity` and `frontier` subcommands: their
 * options, progress and exit codes. The work is in sweep.c and frontier.c;
 * nothing here computes anything a test cannot reach through them. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "models/cli.h"
#include "models/frontier.h"
#include "models/plot.h"
#include "models/sweep.h"
#include "models/sweep_mpi.h"
#include "models/sweep_point.h"
#include "sim/stop.h"
#include "models/cli_args.h"

static const char *SWEEP_USAGE =
    "usage: vlsim sweep FILE --out DIR [options]\n"
    "\n"
    "Run the scenario over a grid of values (its `sweep:` axes and --axis), one\n"
    "point per combination, points in parallel; write DIR/points/NNNNN.json per\n"
    "point and DIR/results.csv (one row per point). Results do not depend on --jobs.\n"
    "\n"
    "options:\n"
    "  --out DIR             where the point files and results.csv go (created if missing)\n"
    "  --axis KEY=V1,V2,...  an axis (repeatable); replaces the scenario's axis of that key.\n"
    "                        KEY is any scalar path (stages.encode.max_batch) or fps, streams, gpus\n"
    "  --jobs N              points run in parallel (default: one per core)\n"
    "  --replications N      override the scenario's replications\n"
    "  --duration S          override duration_s\n"
    "  --resume              skip points already finished in DIR\n"
    "  --sample random|lhs   run N points drawn from the grid instead of all of it\n"
    "  --points N            how many points --sample draws\n"
    "  --sample-seed N       the seed of the sample (default 1)\n"
    "  -q, --quiet           no progress line\n"
    "  -h, --help            show this text\n"
    "\n"
    "A point whose queue grew without bound is kept with stable = 0 in results.csv.\n"
    "exit status: 0 success, 2 bad input, 1 failure, 130 interrupted by SIGINT (143:\n"
    "SIGTERM): finished points are kept; the same command with --resume finishes.\n";

static const char *CAPACITY_USAGE =
    "usage: vlsim capacity FILE [--gpus N1,N2,... | --over KEY=V1,V2,...] [options]\n"
    "\n"
    "For each value of the outer key, the largest load for which every SLA line of\n"
    "the scenario passes (the upper end of the 95% CI within the target). The load\n"
    "is workload.streams with periodic arrivals (an exact count) and\n"
    "workload.rate_hz with poisson arrivals (bisected to --tol). Without an outer\n"
    "key, one row: the scenario as written.\n"
    "\n"
    "options:\n"
    "  --gpus LIST           GPU counts to search (cluster.gpus), e.g. 1,2,4,8;\n"
    "                        short for --over gpus=LIST\n"
    "  --over KEY=V1,V2,...  any scalar key as the outer dimension, e.g.\n"
    "                        stages.serve.servers=1,2,4 (not the load itself)\n"
    "  --jobs N              threads (default: one per core)\n"
    "  --replications N      override the scenario's replications\n"
    "  --duration S          override duration_s\n"
    "  --max-streams N       periodic: the largest stream count tried (default 65536)\n"
    "  --tol X               poisson: relative tolerance of the rate (default 0.01)\n"
    "  --max-rate HZ         poisson: the largest rate tried (default 2^20 x the scenario's)\n"
    "  -q, --quiet           no progress\n"
    "  -h, --help            show this text\n";

static const char *FRONTIER_USAGE =
    "usage: vlsim frontier DIR/results.csv [options]\n"
    "\n"
    "The Pareto set of (cost per stream-hour, frame p99) per FPS, and for each target\n"
    "the cheapest configuration that meets it.\n"
    "\n"
    "options:\n"
    "  --target \"METRIC pNN <= MS\"  a target (repeatable), e.g. \"frame p95 <= 100\",\n"
    "                               \"response p50 <= 500\"; default: frame p95 <= 100, p99 <= 200\n"
    "  --max-drop-rate X             leave out rows dropping more than X of the frames\n"
    "                               (default 0.01; negative: keep all)\n"
    "  --estimate                    judge targets by the estimate, not the CI's upper end\n"
    "  -h, --help                    show this text\n";

static const char *PLOT_USAGE =
    "usage: vlsim plot DIR [options]\n"
    "\n"
    "Draw a sweep's pictures into DIR (PNG and SVG, with their gnuplot scripts and data):\n"
    "frontier (cost per stream-hour vs frame p99, per FPS, Pareto points and the SLA line)\n"
    "and capacity (streams x GPUs -> frame p99, with the SLA contour); then one point's\n"
    "run again (runs are deterministic: the same run as in the sweep) for the one-run\n"
    "pictures: cdf (per-stage latency CDFs), budget (stage p99s against the budget) and\n"
    "series (the run over time). The point: the cheapest that meets every SLA line, else\n"
    "the first; or --point N.\n"
    "\n"
    "options:\n"
    "  --target \"frame p99 <= MS\"   the SLA line to draw (repeatable; default frame p99 <= 200)\n"
    "  --max-drop-rate X             leave out points dropping more than X of the frames\n"
    "  --estimate                    judge the contour by the estimate, not the CI's upper end\n"
    "  --point N|none                the point whose run to draw (none: no one-run pictures)\n"
    "  --scenario FILE               the sweep's scenario, for sweeps whose point files do not\n"
    "                                record it (older ones) or whose scenario moved\n"
    "  -h, --help                    show this text\n"
    "\n"
    "The gnuplot templates are found in $VLSIM_PLOTS, ./plots, or PREFIX/share/vlsim/plots.\n";

static int rc_of(int sweep_rc)
{
    if (sweep_rc == SWEEP_INTERRUPTED)
        return 128 + stop_requested();          /* 130 for SIGINT, 143 for SIGTERM */
    return sweep_rc == SWEEP_OK ? CLI_OK : sweep_rc == SWEEP_BAD_INPUT ? CLI_BAD_INPUT : CLI_FAIL;
}

/* ---- progress ------------------------------------------------------------------ */

static void probe(void *vp, const sweep_capacity_row *row, double load, bool feasible)
{
    cli_progress *p = vp;
    if (!p->on)
        return;
    fprintf(stderr, "vlsim: capacity: %s%s", row->over, row->over[0] ? ": " : "");
    if (row->continuous)
        fprintf(stderr, "%.6g Hz", load);
    else
        fprintf(stderr, "%d streams", (int)load);
    fprintf(stderr, ": %s\n", feasible ? "meets the SLA" : "misses it");
}

/* ---- vlsim sweep ------------------------------------------------------------------ */

int cli_sweep(int argc, char **argv)
{
    sweep_opts o;
    memset(&o, 0, sizeof o);
    const char *file = NULL, *axes[CFG_MAX_AXES * 2];
    bool quiet = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(SWEEP_USAGE, stdout);
            return CLI_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--resume")) {
            o.resume = true;
        } else if (!strcmp(a, "--out")) {
            if (!v || !*v)
                return cli_bad("sweep", a, "a directory", v);
            o.out_dir = v;
            i++;
        } else if (!strcmp(a, "--axis")) {
            if (!v || !strchr(v, '='))
                return cli_bad("sweep", a, "KEY=V1,V2,...", v);
            if (o.naxes == (int)(sizeof axes / sizeof axes[0]))
                return cli_bad("sweep", a, "fewer axes", v);
            axes[o.naxes++] = v;
            i++;
        } else if (!strcmp(a, "--jobs")) {
            if (cli_pos_int(v, &o.jobs))
                return cli_bad("sweep", a, "an integer >= 1", v);
            i++;
        } else if (!strcmp(a, "--replications")) {
            if (cli_replications(v, &o.replications))
                return cli_bad("sweep", a, CLI_REPS_WANT, v);
            i++;
        } else if (!strcmp(a, "--duration")) {
            if (cli_seconds(v, &o.duration_s, false))
                return cli_bad("sweep", a, CLI_SECONDS_WANT, v);
            i++;
        } else if (!strcmp(a, "--sample")) {
            if (!v || (strcmp(v, "random") && strcmp(v, "lhs") && strcmp(v, "grid")))
                return cli_bad("sweep", a, "random, lhs or grid", v);
            o.sample = !strcmp(v, "random") ? SWEEP_RANDOM : !strcmp(v, "lhs") ? SWEEP_LHS : SWEEP_GRID;
            i++;
        } else if (!strcmp(a, "--points")) {
            if (cli_pos_int(v, &o.nsamples))
                return cli_bad("sweep", a, "an integer >= 1", v);
            i++;
        } else if (!strcmp(a, "--sample-seed")) {
            char *end;
            errno = 0;
            unsigned long long s = v ? strtoull(v, &end, 10) : 0;
            if (!v || !*v || errno || *end || *v == '-')
                return cli_bad("sweep", a, "a non-negative integer", v);
            o.sample_seed = s;
            i++;
        } else if (cli_positional("sweep", a, &file) != 0) {
            return CLI_BAD_INPUT;
        }
    }
    if (cli_need_file("sweep", file) != 0)
        return CLI_BAD_INPUT;
    if (!o.out_dir) {
        fputs("vlsim sweep: missing --out DIR (see vlsim sweep --help)\n", stderr);
        return CLI_BAD_INPUT;
    }
    if (o.sample != SWEEP_GRID && o.nsamples == 0) {
        fputs("vlsim sweep: --sample needs --points N\n", stderr);
        return CLI_BAD_INPUT;
    }
    if (o.sample_seed == 0)
        o.sample_seed = 1;
    o.axes = axes;
    /* under mpirun (an MPI build): rank 0 hands points out, the others run them */
    int nranks = sweep_mpi_init();
    o.dist = sweep_mpi_dist();
    if (sweep_mpi_rank() != 0)
        quiet = true;
    cli_progress ps;
    cli_progress_start(&ps, !quiet && isatty(STDERR_FILENO), "points");
    o.progress = cli_progress_cb;
    o.pctx = &ps;
    sweep_summary sum;
    o.summary = &sum;
    char err[2048];
    if (nranks <= 1 && stop_install() != 0) {   /* SIGINT/SIGTERM: finish cleanly, keep points */
        fputs("vlsim sweep: cannot install the SIGINT/SIGTERM handlers\n", stderr);
        return CLI_FAIL;
    }
    int rc = sweep_run(file, &o, err, sizeof err);
    if (rc != SWEEP_OK) {
        if (ps.on)
            fputs("\r\033[K", stderr);
        if (nranks > 1)
            sweep_mpi_abort(err, rc_of(rc));
        fprintf(stderr, "vlsim sweep: %s\n", err);
        sweep_mpi_finalize();
        return rc_of(rc);
    }
    sweep_mpi_finalize();
    if (!quiet)
        printf("vlsim sweep: %d points (%d run, %d already done) in %.1f s -> %s/results.csv\n",
               sum.npoints, sum.nrun, sum.nskipped, cli_progress_elapsed(&ps), o.out_dir);
    return CLI_OK;
}

/* ---- vlsim capacity ------------------------------------------------------------ */

int cli_capacity(int argc, char **argv)
{
    sweep_capacity_opts o;
    memset(&o, 0, sizeof o);
    const char *file = NULL, *over_spec = NULL, *over_opt = NULL;
    char gbuf[600];
    bool quiet = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(CAPACITY_USAGE, stdout);
            return CLI_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--gpus") || !strcmp(a, "--over")) {
            bool g = !strcmp(a, "--gpus");
            if (!v || !*v || (!g && !strchr(v, '=')))
                return cli_bad("capacity", a, g ? "a list such as 1,2,4" : "KEY=V1,V2,...", v);
            if (over_opt) {
                fprintf(stderr, "vlsim capacity: %s and %s: one outer key at a time\n", over_opt, a);
                return CLI_BAD_INPUT;
            }
            if (g) {
                int n = 0;
                char buf[512];
                snprintf(buf, sizeof buf, "%s", v);
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","), n++)
                    if (cli_pos_int(tok, &(int){ 0 }))
                        return cli_bad("capacity", a, "integers >= 1, comma-separated", v);
                if (n == 0)
                    return cli_bad("capacity", a, "a list such as 1,2,4", v);
                snprintf(gbuf, sizeof gbuf, "gpus=%s", v);
                over_spec = gbuf;
            } else {
                over_spec = v;
            }
            over_opt = a;
            i++;
        } else if (!strcmp(a, "--jobs")) {
            if (cli_pos_int(v, &o.jobs))
                return cli_bad("capacity", a, "an integer >= 1", v);
            i++;
        } else if (!strcmp(a, "--replications")) {
            if (cli_replications(v, &o.replications))
                return cli_bad("capacity", a, CLI_REPS_WANT, v);
            i++;
        } else if (!strcmp(a, "--duration")) {
            if (cli_seconds(v, &o.duration_s, false))
                return cli_bad("capacity", a, CLI_SECONDS_WANT, v);
            i++;
        } else if (!strcmp(a, "--max-streams")) {
            if (cli_pos_int(v, &o.max_streams))
                return cli_bad("capacity", a, "an integer >= 1", v);
            i++;
        } else if (!strcmp(a, "--tol")) {
            if (cli_pos_double(v, &o.tol, false) || o.tol > 0.5)
                return cli_bad("capacity", a, "a fraction in (0, 0.5]", v);
            i++;
        } else if (!strcmp(a, "--max-rate")) {
            if (cli_pos_double(v, &o.max_rate_hz, false))
                return cli_bad("capacity", a, "a rate in Hz > 0", v);
            i++;
        } else if (cli_positional("capacity", a, &file) != 0) {
            return CLI_BAD_INPUT;
        }
    }
    if (cli_need_file("capacity", file) != 0)
        return CLI_BAD_INPUT;
    char err[2048];
    sweep_axis over;
    if (over_spec && sweep_axis_parse(over_spec, &over, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim capacity: %s: %s\n", over_opt, err);
        return CLI_BAD_INPUT;
    }
    cli_progress ps;
    cli_progress_start(&ps, !quiet && isatty(STDERR_FILENO), "probes");
    o.probe = probe;
    o.pctx = &ps;
    sweep_capacity_row rows[CFG_MAX_AXIS_VALUES];
    int rc = sweep_capacity(file, over_spec ? &over : NULL, &o, rows, err, sizeof err);
    if (rc != SWEEP_OK) {
        fprintf(stderr, "vlsim capacity: %s\n", err);
        return rc_of(rc);
    }
    sweep_capacity_report(stdout, over_spec ? over.key : NULL, rows, over_spec ? over.nvalues : 1);
    return CLI_OK;
}

/* The options frontier and plot share: --target, --max-drop-rate,
 * --estimate. Returns 1 when argv[*i] is one of them (consumed, *i
 * advanced past its value), 0 when it is not, or CLI_BAD_INPUT + 10 on a
 * bad value (the message printed). */
static int target_option(const char *cmd, int argc, char **argv, int *i, frontier_opts *o,
                         frontier_target *targets, int *ntargets, int max)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    char err[512];
    if (!strcmp(a, "--target")) {
        if (!v || *ntargets == max)
            return cli_bad(cmd, a, "\"METRIC pNN <= MS\" (at most 16)", v) + 10;
        if (frontier_target_parse(v, &targets[*ntargets], err, sizeof err) != 0) {
            fprintf(stderr, "vlsim %s: --target: %s\n", cmd, err);
            return CLI_BAD_INPUT + 10;
        }
        (*ntargets)++;
        (*i)++;
        return 1;
    }
    if (!strcmp(a, "--max-drop-rate")) {
        char *end;
        double x = v ? strtod(v, &end) : NAN;
        if (!v || !*v || *end || !isfinite(x))
            return cli_bad(cmd, a, "a number", v) + 10;
        o->max_drop_rate = x;
        (*i)++;
        return 1;
    }
    if (!strcmp(a, "--estimate")) {
        o->use_ci = false;
        return 1;
    }
    return 0;
}

/* ---- vlsim frontier ------------------------------------------------------------ */

int cli_frontier(int argc, char **argv)
{
    frontier_opts o;
    frontier_opts_default(&o);
    frontier_target targets[16];
    int ntargets = 0, opt;
    const char *file = NULL;
    char err[2048];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(FRONTIER_USAGE, stdout);
            return CLI_OK;
        } else if ((opt = target_option("frontier", argc, argv, &i, &o, targets, &ntargets, 16))) {
            if (opt > 1)
                return opt - 10;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vlsim frontier: unknown option %s (see vlsim frontier --help)\n", a);
            return CLI_BAD_INPUT;
        } else if (file) {
            fprintf(stderr, "vlsim frontier: one results.csv at a time\n");
            return CLI_BAD_INPUT;
        } else {
            file = a;
        }
    }
    if (!file) {
        fputs("vlsim frontier: missing DIR/results.csv (see vlsim frontier --help)\n", stderr);
        return CLI_BAD_INPUT;
    }
    if (ntargets == 0)
        ntargets = frontier_default_targets(targets, 16);
    frontier_table t;
    if (frontier_read(file, &t, err, sizeof err) != 0) {
        fprintf(stderr, "vlsim frontier: %s\n", err);
        return CLI_BAD_INPUT;
    }
    int rc = frontier_report(stdout, &t, targets, ntargets, &o, err, sizeof err);
    frontier_free(&t);
    if (rc != 0) {
        fprintf(stderr, "vlsim frontier: %s\n", err);
        return CLI_BAD_INPUT;
    }
    return CLI_OK;
}

/* ---- vlsim plot ------------------------------------------------------------------ */

int cli_plot(int argc, char **argv)
{
    plot_opts o;
    plot_opts_default(&o);
    frontier_target targets[16];
    int ntargets = 0, opt, point = -1;
    bool no_point = false;
    const char *dir = NULL, *scenario = NULL;
    char err[2048], tbuf[4200];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(PLOT_USAGE, stdout);
            return CLI_OK;
        } else if ((opt = target_option("plot", argc, argv, &i, &o.fo, targets, &ntargets, 16))) {
            if (opt > 1)
                return opt - 10;
        } else if (!strcmp(a, "--point")) {
            char *end;
            errno = 0;
            long n = v ? strtol(v, &end, 10) : -1;
            if (v && !strcmp(v, "none")) {
                no_point = true;
            } else if (!v || !*v || errno || *end || n < 0 || n >= SWEEP_MAX_POINTS) {
                return cli_bad("plot", a, "a point number or none", v);
            } else {
                point = (int)n;
                no_point = false;
            }
            i++;
        } else if (!strcmp(a, "--scenario")) {
            if (!v || !*v)
                return cli_bad("plot", a, "a scenario file", v);
            scenario = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vlsim plot: unknown option %s (see vlsim plot --help)\n", a);
            return CLI_BAD_INPUT;
        } else if (dir) {
            fprintf(stderr, "vlsim plot: one sweep directory at a time\n");
            return CLI_BAD_INPUT;
        } else {
            dir = a;
        }
    }
    if (!dir) {
        fputs("vlsim plot: missing DIR (a `vlsim sweep --out` directory; see vlsim plot --help)\n",
              stderr);
        return CLI_BAD_INPUT;
    }
    if (ntargets) {
        o.targets = targets;
        o.ntargets = ntargets;
    }
    if (point >= 0) {                          /* refuse before drawing anything */
        char pp[4200];
        snprintf(pp, sizeof pp, "%s/points/%05d.json", dir, point);
        if (access(pp, R_OK) != 0) {
            fprintf(stderr, "vlsim plot: --point %d: %s: %s\n", point, pp, strerror(errno));
            return CLI_BAD_INPUT;
        }
    }
    o.template_dir = cli_template_dir(tbuf, sizeof tbuf);
    plot_summary sum;
    o.summary = &sum;
    int rc = plot_dir(dir, &o, err, sizeof err);
    if (rc != PLOT_OK) {
        fprintf(stderr, "vlsim plot: %s\n", err);
        return rc == PLOT_BAD_INPUT ? CLI_BAD_INPUT : CLI_FAIL;
    }
    plot_summary_report(stdout, dir, &sum);
    if (no_point)
        return CLI_OK;
    sweep_plot_info info;
    rc = sweep_plot_point(dir, point, scenario, 0, &o, &info, err, sizeof err);
    if (rc == PLOT_BAD_INPUT && point < 0) {     /* the sweep's own pictures stand */
        printf("note: one-run pictures skipped: %s\n", err);
        return CLI_OK;
    }
    if (rc != PLOT_OK) {
        fprintf(stderr, "vlsim plot: %s\n", err);
        return rc == PLOT_BAD_INPUT ? CLI_BAD_INPUT : CLI_FAIL;
    }
    printf("one run: %s, %s, run again%s\n", info.label, info.why,
           info.same ? " (the same results as its point file)" : "");
    plot_summary_report(stdout, dir, &sum);
    if (!info.same)
        printf("note: the run of point %d differs from its point file: a file the scenario "
               "names changed, or another vlsim wrote the sweep\n", info.point);
    return CLI_OK;
}
