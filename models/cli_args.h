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
/* Prints "vlsim CMD: OPT: expected WANT, got "GOT"" on stderr; returns
 * CLI_BAD_INPUT (2), the exit status for bad arguments. */
int cli_bad(const char *cmd, const char *opt, const char *want, const char *got);

#endif
