/* cli.h — the vlsim command line: subcommands, options, exit codes.
 * Exit status: 0 success, 2 bad input (scenario or arguments), 1 internal
 * failure. cli_main is main() in all but name, so tests can reach it. */
#ifndef VL_CLI_H
#define VL_CLI_H

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD_INPUT = 2 };

int cli_main(int argc, char **argv);

/* The sweep subcommands (cli_sweep.c); argv starts after the command name. */
int cli_sweep(int argc, char **argv);
int cli_capacity(int argc, char **argv);
int cli_frontier(int argc, char **argv);
int cli_plot(int argc, char **argv);

#endif
