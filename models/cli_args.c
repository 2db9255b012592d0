/* cli_args.c — the small parsers every subcommand's options share (see
 * cli_args.h). strtol and friends skip leading white space and take a sign
 * on their own; these check the first character themselves so that " 5",
 * "+5" and " -5" (which strtoull would wrap to a huge value) are refused.
 * Nothing here prints except cli_bad, and nothing exits. */
#include "models/cli_args.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/cli.h"
#include "models/scenario.h"

int cli_u64(const char *s, unsigned long long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int cli_int_range(const char *s, long lo, long hi, int *out)
{
    if (!s || !(isdigit((unsigned char)*s) || (lo < 0 && *s == '-')))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_pos_int(const char *s, int *out)
{
    return cli_int_range(s, 1, INT_MAX, out);
}

int cli_pos_double(const char *s, double *out, bool allow_zero)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0 || (!allow_zero && v == 0))
        return -1;
    *out = v;
    return 0;
}

int cli_seconds(const char *s, double *out, bool allow_zero)
{
    double v;
    if (cli_pos_double(s, &v, allow_zero) != 0 || v > SCN_MAX_SECONDS)
        return -1;
    *out = v;
    return 0;
}

int cli_replications(const char *s, int *out)
{
    return cli_int_range(s, 1, SCN_MAX_REPS, out);
}

int cli_add_set(cli_sets *s, const char *cmd, const char *v)
{
    const char *eq = v ? strchr(v, '=') : NULL;
    if (!eq || eq == v || strlen(v) >= sizeof s->buf[0])
        return cli_bad(cmd, "--set", "KEY=VALUE", v);
    if (s->n == CLI_MAX_SET) {
        fprintf(stderr, "vlsim %s: at most %d --set options\n", cmd, CLI_MAX_SET);
        return CLI_BAD_INPUT;
    }
    char *b = s->buf[s->n];
    snprintf(b, sizeof s->buf[0], "%s", v);
    b[eq - v] = 0;                               /* split KEY=VALUE in place */
    s->set[s->n].key = b;
    s->set[s->n].value = b + (eq - v) + 1;
    s->n++;
    return 0;
}

int cli_positional(const char *cmd, const char *o, const char **file)
{
    if (o[0] == '-' && o[1]) {
        fprintf(stderr, "vlsim %s: unknown option %s (see vlsim %s --help)\n", cmd, o, cmd);
        return CLI_BAD_INPUT;
    }
    if (*file) {
        fprintf(stderr, "vlsim %s: one scenario file at a time (got %s and %s)\n", cmd, *file, o);
        return CLI_BAD_INPUT;
    }
    *file = o;
    return 0;
}

int cli_need_file(const char *cmd, const char *file)
{
    if (file)
        return 0;
    fprintf(stderr, "vlsim %s: missing scenario FILE (see vlsim %s --help)\n", cmd, cmd);
    return CLI_BAD_INPUT;
}

int cli_bad(const char *cmd, const char *opt, const char *want, const char *got)
{
    fprintf(stderr, "vlsim %s: %s: expected %s, got \"%s\"\n", cmd, opt, want, got ? got : "");
    return CLI_BAD_INPUT;
}
