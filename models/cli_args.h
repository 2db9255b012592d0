/* cli_args.h — the small parsers every subcommand's options share.
 *
 * Each takes a whole argument and accepts it only when every character is
 * part of the number: no sign where none is allowed, no leading spaces, no
 * trailing text, nothing out of range, no NaN or infinity. They return 0
 * and store the value, or -1 and leave *out alone; cli_bad prints the one
 * message format the CLI uses for a bad option value. Nothing here exits. */
#ifndef VL_CLI_ARGS_H
#define VL_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include "models/scenario.h"

/* An unsigned decimal integer (a seed). */
int cli_u64(const char *s, unsigned long long *out);
/* An integer in [lo, hi] (a leading '-' is allowed when lo < 0). */
int cli_int_range(const char *s, long lo, long hi, int *out);
/* An integer >= 1. */
int cli_pos_int(const char *s, int *out);
/* A finite number > 0, or >= 0 with allow_zero. */
int cli_pos_double(const char *s, double *out, bool allow_zero);
/* --duration and --warmup: seconds in (0, SCN_MAX_SECONDS] ([0, ...] with
 * allow_zero); --replications: an integer in [1, SCN_MAX_REPS] — the
 * limits the scenario loader puts on duration_s, warmup_s, replications. */
int cli_seconds(const char *s, double *out, bool allow_zero);
int cli_replications(const char *s, int *out);
#define CLI_SECONDS_WANT "seconds > 0 and <= 1e9"
#define CLI_REPS_WANT "an integer from 1 to 100000"
/* The --set KEY=VALUE options of one command: each argument copied and
 * split at its first '=', in the order given (scn_load_ex applies them). */
#define CLI_MAX_SET 64
typedef struct {
    scn_override set[CLI_MAX_SET];
    char buf[CLI_MAX_SET][256];
    size_t n;
} cli_sets;
/* Add one --set argument v; 0, or CLI_BAD_INPUT with a message naming cmd
 * (no '=', an empty key, too long, more than CLI_MAX_SET). */
int cli_add_set(cli_sets *s, const char *cmd, const char *v);

/* A non-option argument o: the scenario FILE. An unknown option (-x) or a
 * second file is an error: CLI_BAD_INPUT with a message naming cmd; else 0. */
int cli_positional(const char *cmd, const char *o, const char **file);
/* After the arguments: 0 when the FILE was given, else CLI_BAD_INPUT. */
int cli_need_file(const char *cmd, const char *file);

/* Prints "vlsim CMD: OPT: expected WANT, got "GOT"" on stderr; returns
 * CLI_BAD_INPUT (2), the exit status for bad arguments. */
int cli_bad(const char *cmd, const char *opt, const char *want, const char *got);

#endif
