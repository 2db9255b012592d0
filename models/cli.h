/* cli.h — the vlsim command line: subcommands, options, exit codes.
 * Exit status: 0 success, 2 bad input (scenario or arguments), 1 internal
 * failure. cli_main is main() in all but name, so tests can reach it. */
#ifndef VL_CLI_H
#define VL_CLI_H

#include <stdbool.h>
#include <time.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD_INPUT = 2 };

int cli_main(int argc, char **argv);

/* A progress line on stderr ("vlsim: points 3/10, 1.2/s, 4 s elapsed,
 * ETA 6 s"), shown only when `on` (a terminal, not --quiet); the callback
 * of run_scenario and sweep_run. */
typedef struct {
    struct timespec t0;
    bool on;
    const char *what;        /* "replications", "points" */
} cli_progress;

void cli_progress_start(cli_progress *p, bool on, const char *what);
void cli_progress_cb(void *p, int done, int total);
/* Seconds since the progress started. */
double cli_progress_elapsed(const cli_progress *p);

/* Where the gnuplot templates are: $VLSIM_PLOTS, ./plots (a checkout), or
 * PREFIX/share/vlsim/plots beside an installed PREFIX/bin/vlsim. */
const char *cli_template_dir(char *buf, size_t n);

/* The sweep subcommands (cli_sweep.c); argv starts after the command name. */
int cli_sweep(int argc, char **argv);
int cli_capacity(int argc, char **argv);
int cli_frontier(int argc, char **argv);
int cli_plot(int argc, char **argv);
/* The planning subcommands (cli_plan.c): compare, sla, whatif. */
int cli_compare(int argc, char **argv);
int cli_sla(int argc, char **argv);
int cli_whatif(int argc, char **argv);
/* vlsim canary (cli_canary.c). */
int cli_canary(int argc, char **argv);
/* vlsim warmpool (cli_warmpool.c) */
int cli_warmpool(int argc, char **argv);

#endif
