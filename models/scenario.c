/* scenario.c — turns a YAML scenario into a scenario_cfg (see scenario.h).
 *
 * This is the only code in vlsim that includes <yaml.h>. It uses libyaml's
 * document API and walks the node tree by hand, so that every error can name
 * FILE:LINE:COL and the key path, in one line:
 *   s.yaml:12:5: stages[1].service.mean_ms: must be > 0, got -3
 * It must never print, never exit, never keep global state, and never leave
 * anything allocated in *out when it fails. Range checks on distribution
 * parameters belong to dist.c; this file only attributes its messages. */
#include "models/scenario.h"
#include "models/calib_read.h"
#include "sim/slurp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define SCN_MAX_BYTES   ((size_t)16 << 20)  /* largest scenario file read */
#define SCN_MIX_DEPTH   4                   /* mixtures nest at most this deep */
#define SCN_MAX_DISTS   10000               /* distribution nodes per scenario */
#define SCN_PATH_LEN    256                 /* key paths in messages */
#define SCN_SHOW_LEN    48                  /* longest value echoed in a message */
/* Bounds on hostile values (README "Hostile inputs"): what sizes memory or
 * would stall the millisecond clock is refused with a clear message. */
#define SCN_MAX_SAMPLE_BYTES ((size_t)64 << 20) /* an empirical sample file */
#define SCN_MAX_STREAMS 1000000      /* streams + surge streams: state is kept per stream */
#define SCN_MAX_GPUS    65536        /* cluster.gpus: state is kept per GPU and stage */
#define SCN_MAX_BATCH   65536        /* max_batch: arrays are kept per batch size */
#define SCN_MAX_FPS     1000.0       /* a stream's frames 1 ms apart at least */
#define SCN_MAX_RATE_HZ 1e6          /* a Poisson process: 1 us between events on average */
#define SCN_MAX_PER_MIN 60000.0      /* queries, triggers, scene changes per stream per minute */
#define SCN_MIN_INTERVAL_S 0.001     /* degradation.interval_s: the control tick */
#define SCN_MAX_SLOTS   100000       /* control intervals a window spans (one histogram each) */
#define SCN_MAX_DEPTH   256          /* YAML nesting: libyaml's scanner slows with depth per token */
#define SCN_MAX_ANCHORS 1000         /* YAML anchors: libyaml looks each alias up among all of them */
#define SCN_MAX_ALIASES 10000        /* YAML aliases */

/* ---- the loader and its error reporting -------------------------------- */

typedef struct {
    yaml_document_t doc;
    const char *file;        /* name shown in messages */
    const char *basedir;     /* where relative file names resolve */
    char *err;
    size_t errlen;
    int ndists;              /* distribution nodes built so far */
    uint64_t reorder_unset;  /* bit s: stage s has a gop without reorder_ms (default
                                resolved once the workload is known) */
    const scn_override *ov;  /* the overrides applied to doc (scn_load_ex) */
    size_t nov;
    size_t text_len;         /* a node whose start_mark.index is beyond the text was
                                made by override (index - text_len - 1) */
    char calib_file[4096];   /* the current stage's calibration file ("" if none) */
} loader;

/* Messages are one line, whatever the inputs held. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* The override that made node n, or -1 when n was written in the file. */
static long override_of(const loader *ld, const yaml_node_t *n)
{
    if (!n || n->start_mark.index <= ld->text_len)
        return -1;
    size_t oi = n->start_mark.index - ld->text_len - 1;
    return oi < ld->nov ? (long)oi : -1;
}

/* "FILE:LINE:COL: PATH: message", or for a value or key set by override oi
 * (>= 0) "override KEY=VALUE: PATH: message". */
static void vreport(loader *ld, const yaml_mark_t *mark, long oi, const char *path,
                    const char *fmt, va_list ap)
{
    if (!ld->err || ld->errlen == 0)
        return;
    int n;
    if (oi >= 0)
        n = snprintf(ld->err, ld->errlen, "override %s=%s: %s: ", ld->ov[oi].key,
                     ld->ov[oi].value, *path ? path : "(root)");
    else if (mark)
        n = snprintf(ld->err, ld->errlen, "%s:%zu:%zu: %s: ", ld->file,
                     mark->line + 1, mark->column + 1, *path ? path : "(root)");
    else
        n = snprintf(ld->err, ld->errlen, "%s: ", ld->file);
    if (n >= 0 && (size_t)n < ld->errlen)
        vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
    one_line(ld->err);
}

/* Report an error at node n (its first character) and return -1. */
static int fail(loader *ld, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ld, &n->start_mark, override_of(ld, n), path, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_mark(loader *ld, const yaml_mark_t *mark, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ld, mark, -1, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* An error about the file as a whole: "FILE: message". */
static int fail_file(loader *ld, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ld, NULL, -1, "", fmt, ap);
    va_end(ap);
    return -1;
}

/* An error about override oi as a whole (its key path does not resolve). */
static int fail_override(loader *ld, long oi, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ld, NULL, oi, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* Where node n was given, for "first given at ...": "line N" or, for a node
 * an override made, "override KEY=VALUE". */
static const char *given_at(const loader *ld, const yaml_node_t *n, char *buf, size_t size)
{
    long oi = override_of(ld, n);
    if (oi >= 0)
        snprintf(buf, size, "override %s=%s", ld->ov[oi].key, ld->ov[oi].value);
    else
        snprintf(buf, size, "line %zu", n->start_mark.line + 1);
    return buf;
}

/* ---- small helpers ----------------------------------------------------- */

static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Key paths: "" is the root, then "stages", "stages[1]", "stages[1].service".
 * A path too long for the buffer ends in "...". */
static void path_mark_cut(char *buf, int n)
{
    if (n < 0 || n >= SCN_PATH_LEN)
        memcpy(buf + SCN_PATH_LEN - 4, "...", 4);
}

static void path_key(char *buf, const char *parent, const char *key)
{
    path_mark_cut(buf, *parent ? snprintf(buf, SCN_PATH_LEN, "%s.%s", parent, key)
                               : snprintf(buf, SCN_PATH_LEN, "%s", key));
}

static void path_index(char *buf, const char *parent, size_t i)
{
    path_mark_cut(buf, snprintf(buf, SCN_PATH_LEN, "%s[%zu]", parent, i));
}

/* A value echoed in a message: quoted, escaped, shortened. */
static const char *quoted(const char *s, char *buf, size_t size)
{
    size_t o = 0, i = 0;
    buf[o++] = '"';
    for (; s[i] && o + 8 < size && i < SCN_SHOW_LEN; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)ch;
        } else if (ch == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else if (ch == '\t') {
            buf[o++] = '\\';
            buf[o++] = 't';
        } else if (ch < 0x20 || ch == 0x7f) {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
        } else {
            buf[o++] = (char)ch;
        }
    }
    if (s[i] && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

static const char *text_of(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static bool one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* YAML's null and (1.1) boolean spellings, which a plain scalar may carry. */
static bool is_null(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    return is_plain(n) && one_of(text_of(n), nulls);
}

static bool is_bool(const yaml_node_t *n)
{
    static const char *const bools[] = {
        "true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES",
        "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N", NULL};
    return is_plain(n) && one_of(text_of(n), bools);
}

/* How a node looks, for "expected X, got Y". */
static const char *describe(const yaml_node_t *n, char *buf, size_t size)
{
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (n->type != YAML_SCALAR_NODE)
        return "nothing";
    if (is_null(n))
        return "an empty value (null)";
    return quoted(text_of(n), buf, size);
}

/* Edit distance, for did-you-mean; long strings count as far apart. */
static size_t levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

/* True when key is s plus a unit suffix: "mean" for "mean_ms". */
static bool missing_unit(const char *s, const char *key)
{
    static const char *const units[] = {"_ms", "_s", "_hz", NULL};
    size_t n = strlen(s);
    return n > 0 && strncmp(s, key, n) == 0 && one_of(key + n, units);
}

/* The closest of list to s when it is close enough to be a likely typo:
 * distance <= 2 or <= a third of s, and not a complete rewrite; failing
 * that, the key s names without its unit. NULL if none. */
static const char *closest(const char *s, const char *const *list)
{
    size_t limit = strlen(s) / 3 > 2 ? strlen(s) / 3 : 2;
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (const char *const *k = list; *k; k++) {
        size_t d = levenshtein(s, *k);
        if (d < best_d && d <= limit && d < strlen(*k)) {
            best = *k;
            best_d = d;
        }
    }
    for (const char *const *k = list; !best && *k; k++)
        if (missing_unit(s, *k))
            best = *k;
    return best;
}

/* "a, b, c" */
static const char *joined(const char *const *list, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (; *list && o < size; list++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", *list);
    return buf;
}

/* ---- mappings ---------------------------------------------------------- */

/* The value under key in mapping map, or NULL. */
static yaml_node_t *get(loader *ld, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(text_of(k), key) == 0)
            return yaml_document_get_node(&ld->doc, p->value);
    }
    return NULL;
}

/* The key node of key in mapping map, or NULL: where "remove this key"
 * errors point. */
static yaml_node_t *get_key(loader *ld, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(text_of(k), key) == 0)
            return k;
    }
    return NULL;
}

/* The first key of map, in file order, that is in keys (NULL if none). */
static yaml_node_t *first_key_of(loader *ld, const yaml_node_t *map, const char *const *keys)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && one_of(text_of(k), keys))
            return k;
    }
    return NULL;
}

/* Keys a and b of map are alternatives: when both are given, report at the
 * value written later and return -1. */
static int either_not_both(loader *ld, const yaml_node_t *map, const char *path,
                           const char *a, const char *b, const char *why)
{
    const yaml_node_t *va = get(ld, map, a), *vb = get(ld, map, b);
    if (!va || !vb)
        return 0;
    bool b_later = vb->start_mark.index > va->start_mark.index;
    char kpath[SCN_PATH_LEN];
    path_key(kpath, path, b_later ? b : a);
    return fail(ld, b_later ? vb : va, kpath, "give either %s or %s, not both%s", a, b, why);
}

/* The value under a required key; reports it missing at the mapping. */
static yaml_node_t *need(loader *ld, const yaml_node_t *map, const char *path, const char *key)
{
    yaml_node_t *v = get(ld, map, key);
    if (!v)
        fail(ld, map, path, "missing required key '%s'", key);
    return v;
}

static int expect_mapping(loader *ld, const yaml_node_t *n, const char *path, const char *what)
{
    char show[SCN_SHOW_LEN + 16];
    if (n->type == YAML_MAPPING_NODE)
        return 0;
    return fail(ld, n, path, "expected %s, got %s", what, describe(n, show, sizeof show));
}

/* Check that map is a mapping whose keys are plain strings from keys, none
 * given twice. An unknown key gets a did-you-mean or the list of valid keys. */
static int check_keys(loader *ld, const yaml_node_t *map, const char *path,
                      const char *what, const char *const *keys)
{
    if (expect_mapping(ld, map, path, what))
        return -1;
    char kpath[SCN_PATH_LEN], list[512];
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        if (!k || k->type != YAML_SCALAR_NODE)
            return fail(ld, k ? k : map, path, "keys must be plain strings, not a %s",
                        k && k->type == YAML_MAPPING_NODE ? "mapping" : "list");
        path_key(kpath, path, text_of(k));
        if (strlen(text_of(k)) != k->data.scalar.length)
            return fail(ld, k, kpath, "the key holds a NUL character (\\0)");
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k0 = yaml_document_get_node(&ld->doc, q->key);
            if (k0 && k0->type == YAML_SCALAR_NODE && strcmp(text_of(k0), text_of(k)) == 0) {
                char at[160];
                return fail(ld, k, kpath, "duplicate key (first given at %s)",
                            given_at(ld, k0, at, sizeof at));
            }
        }
        if (one_of(text_of(k), keys))
            continue;
        const char *guess = closest(text_of(k), keys);
        if (guess)
            return fail(ld, k, kpath, "unknown key; did you mean '%s'?", guess);
        return fail(ld, k, kpath, "unknown key; valid keys: %s", joined(keys, list, sizeof list));
    }
    return 0;
}

/* The first key of map that is not in allowed (NULL if none). */
static yaml_node_t *foreign_key(loader *ld, const yaml_node_t *map, const char *const *allowed)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        if (!one_of(text_of(k), allowed))
            return k;
    }
    return NULL;
}

/* ---- scalars ----------------------------------------------------------- */

/* NaN or infinity as YAML (.nan, -.Inf) or C (nan, inf, infinity) spells it. */
static bool nonfinite_spelling(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (*s == '.')
        s++;
    return strcasecmp(s, "nan") == 0 || strcasecmp(s, "inf") == 0
        || strcasecmp(s, "infinity") == 0;
}

/* Common checks for a scalar that should hold a number; what is "a number"
 * or "an integer". */
static int expect_number_text(loader *ld, const yaml_node_t *n, const char *path,
                              const char *what)
{
    char show[SCN_SHOW_LEN + 16];
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail(ld, n, path, "expected %s, got %s", what, describe(n, show, sizeof show));
    if (is_bool(n))
        return fail(ld, n, path, "expected %s, got the boolean %s", what, text_of(n));
    if (!is_plain(n))
        return fail(ld, n, path, "expected %s, got the quoted string %s (drop the quotes)",
                    what, quoted(text_of(n), show, sizeof show));
    if (nonfinite_spelling(text_of(n)))
        return fail(ld, n, path, "must be finite, got %s", text_of(n));
    return 0;
}

/* s as a plain decimal number (no hex, no spaces, no inf or nan); false
 * unless all of s is one. Overflow gives an infinite *x. */
static bool parse_decimal(const char *s, double *x)
{
    char *end;
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s))
        return false;
    *x = strtod(s, &end);
    return *end == '\0';
}

typedef enum { ANY, POSITIVE, NONNEGATIVE } sign_rule;

/* A finite double, with an optional sign rule. */
static int read_double(loader *ld, const yaml_node_t *n, const char *path, sign_rule rule,
                       double *out)
{
    char show[SCN_SHOW_LEN + 16];
    if (expect_number_text(ld, n, path, "a number"))
        return -1;
    const char *s = text_of(n);
    double x = 0;
    if (!parse_decimal(s, &x))
        return fail(ld, n, path, "expected a number, got %s", quoted(s, show, sizeof show));
    if (!isfinite(x))
        return fail(ld, n, path, "must be finite, got %s (out of range)", s);
    if (rule == POSITIVE && !(x > 0))
        return fail(ld, n, path, "must be > 0, got %s", s);
    if (rule == NONNEGATIVE && !(x >= 0))
        return fail(ld, n, path, "must be >= 0, got %s", s);
    *out = x == 0 ? 0.0 : x;                    /* -0 is 0: outputs never show "-0" */
    return 0;
}

/* Reports that the value at n exceeds a bound of the simulator: */
static int too_large(loader *ld, const yaml_node_t *n, const char *path, double max,
                     const char *why)
{
    return fail(ld, n, path, "must be <= %.10g (%s), got %s", max, why, text_of(n));
}

/* A decimal integer in [min, max]. */
static int read_integer(loader *ld, const yaml_node_t *n, const char *path,
                        long long min, long long max, long long *out)
{
    char show[SCN_SHOW_LEN + 16];
    if (expect_number_text(ld, n, path, "an integer"))
        return -1;
    const char *s = text_of(n);
    const char *digits = (*s == '+' || *s == '-') ? s + 1 : s;
    double x;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits))
        return fail(ld, n, path, "expected an integer, got %s",
                    parse_decimal(s, &x) ? s : quoted(s, show, sizeof show));
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return fail(ld, n, path, "integer out of range, got %s", s);
    if (v < min)
        return fail(ld, n, path, "must be >= %lld, got %s", min, s);
    if (v > max)
        return fail(ld, n, path, "must be <= %lld, got %s", max, s);
    *out = v;
    return 0;
}

static int read_int(loader *ld, const yaml_node_t *n, const char *path, int min, int *out)
{
    long long v = 0;
    if (read_integer(ld, n, path, min, INT_MAX, &v))
        return -1;
    *out = (int)v;
    return 0;
}

/* An unsigned 64-bit decimal integer (the seed). */
static int read_u64(loader *ld, const yaml_node_t *n, const char *path, uint64_t *out)
{
    char show[SCN_SHOW_LEN + 16];
    if (expect_number_text(ld, n, path, "an integer"))
        return -1;
    const char *s = text_of(n);
    if (*s == '-' && strspn(s + 1, "0123456789") == strlen(s + 1) && s[1])
        return fail(ld, n, path, "must be >= 0, got %s", s);
    const char *digits = *s == '+' ? s + 1 : s;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits))
        return fail(ld, n, path, "expected an integer, got %s", quoted(s, show, sizeof show));
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, 10);
    if (errno == ERANGE)
        return fail(ld, n, path, "integer out of range (largest is %llu), got %s",
                    (unsigned long long)UINT64_MAX, s);
    *out = (uint64_t)v;
    return 0;
}

/* A non-null scalar, as text. */
static int read_string(loader *ld, const yaml_node_t *n, const char *path, const char **out)
{
    char show[SCN_SHOW_LEN + 16];
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail(ld, n, path, "expected a string, got %s", describe(n, show, sizeof show));
    if (strlen(text_of(n)) != n->data.scalar.length)
        return fail(ld, n, path, "holds a NUL character (\\0), got %s",
                    quoted(text_of(n), show, sizeof show));
    *out = text_of(n);
    return 0;
}

/* One of names; *out is its index. An unknown one is "unknown <what>" with
 * a did-you-mean, and the valid names (beside the guess too when
 * list_with_guess). */
static int read_choice(loader *ld, const yaml_node_t *n, const char *path,
                       const char *const *names, const char *what, bool list_with_guess,
                       int *out)
{
    char show[SCN_SHOW_LEN + 16], list[256];
    const char *s = "";
    if (read_string(ld, n, path, &s))
        return -1;
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    const char *guess = closest(s, names);
    if (guess && list_with_guess)
        return fail(ld, n, path, "unknown %s %s; did you mean '%s'? (valid: %s)", what,
                    quoted(s, show, sizeof show), guess, joined(names, list, sizeof list));
    if (guess)
        return fail(ld, n, path, "unknown %s %s; did you mean '%s'?", what,
                    quoted(s, show, sizeof show), guess);
    return fail(ld, n, path, "unknown %s %s; valid%s: %s", what, quoted(s, show, sizeof show),
                list_with_guess ? " values" : "", joined(names, list, sizeof list));
}

static int read_enum(loader *ld, const yaml_node_t *n, const char *path,
                     const char *const *names, int *out)
{
    return read_choice(ld, n, path, names, "value", true, out);
}

/* A name for a scenario or stage: 1..63 characters of [A-Za-z0-9_-]. */
static int read_name(loader *ld, const yaml_node_t *n, const char *path, char out[CFG_NAME_MAX])
{
    char show[SCN_SHOW_LEN + 16];
    const char *s = "";
    if (read_string(ld, n, path, &s))
        return -1;
    size_t len = strlen(s);
    bool ok = len >= 1 && len < CFG_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-';
    if (!ok)
        return fail(ld, n, path, "must be 1 to %d characters of [A-Za-z0-9_-], got %s",
                    CFG_NAME_MAX - 1, quoted(s, show, sizeof show));
    copy_str(out, CFG_NAME_MAX, s);
    return 0;
}

/* ---- service distributions --------------------------------------------- */

static const char *const dist_names[] = {
    "constant", "exponential", "uniform", "lognormal", "gamma",
    "weibull", "pareto", "empirical", "mixture", NULL};
static const dist_kind dist_kinds[] = {
    DIST_CONSTANT, DIST_EXPONENTIAL, DIST_UNIFORM, DIST_LOGNORMAL, DIST_GAMMA,
    DIST_WEIBULL, DIST_PARETO, DIST_EMPIRICAL, DIST_MIXTURE};

/* Keys each kind takes besides dist (and weight, inside a mixture). */
static const char *const *dist_keys(dist_kind k)
{
    static const char *const constant[] = {"ms", NULL};
    static const char *const exponential[] = {"mean_ms", NULL};
    static const char *const uniform[] = {"min_ms", "max_ms", NULL};
    static const char *const lognormal[] = {"mean_ms", "sd_ms", "p50_ms", "p99_ms", NULL};
    static const char *const gamma[] = {"mean_ms", "sd_ms", NULL};
    static const char *const weibull[] = {"shape", "scale_ms", NULL};
    static const char *const pareto[] = {"shape", "min_ms", NULL};
    static const char *const empirical[] = {"file", NULL};
    static const char *const mixture[] = {"parts", NULL};
    switch (k) {
    case DIST_CONSTANT:    return constant;
    case DIST_EXPONENTIAL: return exponential;
    case DIST_UNIFORM:     return uniform;
    case DIST_LOGNORMAL:   return lognormal;
    case DIST_GAMMA:       return gamma;
    case DIST_WEIBULL:     return weibull;
    case DIST_PARETO:      return pareto;
    case DIST_EMPIRICAL:   return empirical;
    case DIST_MIXTURE:     return mixture;
    }
    return constant;
}

/* Every key a distribution mapping may hold, of any kind. */
static const char *const service_keys[] = {
    "dist", "ms", "mean_ms", "sd_ms", "min_ms", "max_ms", "p50_ms", "p99_ms",
    "shape", "scale_ms", "file", "parts", NULL};
static const char *const part_keys[] = {
    "weight", "dist", "ms", "mean_ms", "sd_ms", "min_ms", "max_ms", "p50_ms", "p99_ms",
    "shape", "scale_ms", "file", "parts", NULL};

static int read_dist(loader *ld, const yaml_node_t *map, const char *path, int mix_depth,
                     bool in_mixture, dist_t *d);

/* A required finite parameter of a distribution. */
static int read_param(loader *ld, const yaml_node_t *map, const char *path, const char *key,
                      double *out)
{
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v = need(ld, map, path, key);
    if (!v)
        return -1;
    path_key(kpath, path, key);
    return read_double(ld, v, kpath, ANY, out);
}

/* Report a dist_init_* message. "mean_ms must be > 0, got -3" is put on the
 * mean_ms value as "must be > 0, got -3"; anything else on the mapping. */
static int dist_error(loader *ld, const yaml_node_t *map, const char *path, const char *msg)
{
    char kpath[SCN_PATH_LEN];
    for (const char *const *k = service_keys; *k; k++) {
        size_t len = strlen(*k);
        const yaml_node_t *v = get(ld, map, *k);
        if (v && strncmp(msg, *k, len) == 0 && strncmp(msg + len, " must ", 6) == 0) {
            path_key(kpath, path, *k);
            return fail(ld, v, kpath, "%s", msg + len + 1);
        }
    }
    return fail(ld, map, path, "%s", msg);
}

/* lognormal takes mean_ms + sd_ms or p50_ms + p99_ms, complete and unmixed. */
static int read_lognormal(loader *ld, const yaml_node_t *map, const char *path, dist_t *d)
{
    static const char *const by_mean[] = {"mean_ms", "sd_ms", NULL};
    static const char *const by_pct[] = {"p50_ms", "p99_ms", NULL};
    const yaml_node_t *first = NULL;
    bool first_is_mean = false;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        bool mean = one_of(text_of(k), by_mean), pct = one_of(text_of(k), by_pct);
        if (!mean && !pct)
            continue;
        if (!first) {
            first = k;
            first_is_mean = mean;
        } else if (mean != first_is_mean) {
            char kpath[SCN_PATH_LEN], at[160];
            path_key(kpath, path, text_of(k));
            return fail(ld, k, kpath, "lognormal takes either mean_ms and sd_ms, or p50_ms "
                        "and p99_ms, not a mix (%s gave %s)",
                        given_at(ld, first, at, sizeof at), text_of(first));
        }
    }
    if (!first)
        return fail(ld, map, path, "missing required keys: lognormal needs mean_ms and "
                    "sd_ms, or p50_ms and p99_ms");
    double a = 0, b = 0;
    const char *const *pair = first_is_mean ? by_mean : by_pct;
    if (read_param(ld, map, path, pair[0], &a) || read_param(ld, map, path, pair[1], &b))
        return -1;
    const char *e = first_is_mean ? dist_init_lognormal_mean_sd(d, a, b)
                                  : dist_init_lognormal_p50_p99(d, a, b);
    return e ? dist_error(ld, map, path, e) : 0;
}

/* Parse one sample line of an empirical file; 1 = a value, 0 = blank or a
 * comment, -1 = an error already reported. */
static int sample_line(loader *ld, const yaml_node_t *fnode, const char *path,
                       const char *fname, size_t lineno, char *line, double *out)
{
    char show[SCN_SHOW_LEN + 16];
    while (isspace((unsigned char)*line))
        line++;
    size_t len = strlen(line);
    while (len && isspace((unsigned char)line[len - 1]))
        line[--len] = '\0';
    if (len == 0 || line[0] == '#')
        return 0;
    double x = 0;
    if (!parse_decimal(line, &x)) {
        if (nonfinite_spelling(line))
            return fail(ld, fnode, path, "%s:%zu: must be finite, got %s", fname, lineno, line);
        return fail(ld, fnode, path, "%s:%zu: not a number: %s", fname, lineno,
                    quoted(line, show, sizeof show));
    }
    if (!isfinite(x))
        return fail(ld, fnode, path, "%s:%zu: must be finite, got %s", fname, lineno, line);
    if (x < 0)
        return fail(ld, fnode, path, "%s:%zu: must be >= 0, got %s", fname, lineno, line);
    *out = x;
    return 1;
}

/* The data file named by fnode (a sample file, a trace), read whole into
 * *buf (malloc'd, *blen bytes) up to SCN_MAX_SAMPLE_BYTES; relative names
 * resolve against the scenario's directory. *fname is the name as written,
 * for messages. 0, or -1 with the error reported at fnode. */
static int read_data_file(loader *ld, const yaml_node_t *fnode, const char *path,
                          const char **fname, char **buf, size_t *blen)
{
    if (read_string(ld, fnode, path, fname))
        return -1;
    char full[4096];
    int len = (*fname)[0] == '/' ? snprintf(full, sizeof full, "%s", *fname)
                                 : snprintf(full, sizeof full, "%s/%s", ld->basedir, *fname);
    if (len < 0 || (size_t)len >= sizeof full)
        return fail(ld, fnode, path, "path too long");
    int e = 0;
    *buf = slurp_file(full, SCN_MAX_SAMPLE_BYTES, blen, &e);
    if (!*buf && e == EFBIG)
        return fail(ld, fnode, path, "%s is larger than %zu MiB", full, SCN_MAX_SAMPLE_BYTES >> 20);
    if (!*buf)
        return fail(ld, fnode, path, "cannot open %s: %s", full, strerror(e));
    return 0;
}

/* Read the sample file named by fnode (one value in ms per line) into
 * *values; relative names resolve against the scenario's directory. */
static int read_samples(loader *ld, const yaml_node_t *fnode, const char *path,
                        double **values, size_t *n)
{
    const char *fname = "";
    char *buf = NULL;
    size_t blen = 0;
    if (read_data_file(ld, fnode, path, &fname, &buf, &blen))
        return -1;

    double *vals = NULL;
    size_t count = 0, cap = 0, lineno = 0;
    int rc = 0;
    for (char *line = buf, *next; rc == 0 && line < buf + blen; line = next) {
        char *nl = memchr(line, '\n', (size_t)(buf + blen - line));
        next = nl ? nl + 1 : buf + blen;
        if (nl)
            *nl = '\0';
        double x = 0;
        int got;
        if (memchr(line, '\0', (size_t)(next - line) - (nl != NULL)))
            got = fail(ld, fnode, path, "%s:%zu: holds a NUL byte", fname, ++lineno);
        else
            got = sample_line(ld, fnode, path, fname, ++lineno, line, &x);
        if (got < 0) {
            rc = -1;
        } else if (got > 0) {
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 256;
                double *nv = ncap < SIZE_MAX / sizeof *nv ? realloc(vals, ncap * sizeof *nv) : NULL;
                if (!nv) {
                    rc = fail(ld, fnode, path, "%s: out of memory after %zu samples", fname, count);
                    break;
                }
                vals = nv;
                cap = ncap;
            }
            vals[count++] = x;
        }
    }
    if (rc == 0 && count == 0)
        rc = fail(ld, fnode, path, "%s: no samples (only blank lines and comments)", fname);
    free(buf);
    if (rc) {
        free(vals);
        return -1;
    }
    *values = vals;
    *n = count;
    return 0;
}

static int read_empirical(loader *ld, const yaml_node_t *map, const char *path, dist_t *d)
{
    char fpath[SCN_PATH_LEN];
    const yaml_node_t *fnode = need(ld, map, path, "file");
    if (!fnode)
        return -1;
    path_key(fpath, path, "file");
    double *values = NULL;
    size_t n = 0;
    if (read_samples(ld, fnode, fpath, &values, &n))
        return -1;
    const char *e = dist_init_empirical(d, values, n);  /* owns values now */
    return e ? fail(ld, fnode, fpath, "%s", e) : 0;
}

static void free_parts(dist_t *parts, size_t n)
{
    for (size_t i = 0; parts && i < n; i++)
        dist_free(&parts[i]);
    free(parts);
}

/* mixture {parts: [{weight: w, dist: ..., ...}, ...]} */
static int read_mixture(loader *ld, const yaml_node_t *map, const char *path, int mix_depth,
                        dist_t *d)
{
    char ppath[SCN_PATH_LEN], ipath[SCN_PATH_LEN], wpath[SCN_PATH_LEN];
    char show[SCN_SHOW_LEN + 16];
    if (mix_depth >= SCN_MIX_DEPTH)
        return fail(ld, map, path, "mixtures may nest at most %d deep", SCN_MIX_DEPTH);
    const yaml_node_t *list = need(ld, map, path, "parts");
    if (!list)
        return -1;
    path_key(ppath, path, "parts");
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, ppath, "expected a list of parts, got %s",
                    describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n == 0)
        return fail(ld, list, ppath, "a mixture needs at least one part");

    dist_t *parts = calloc(n, sizeof *parts);
    double *weights = calloc(n, sizeof *weights);
    if (!parts || !weights) {
        free(parts);
        free(weights);
        return fail(ld, list, ppath, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *part = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const yaml_node_t *w;
        path_index(ipath, ppath, i);
        path_key(wpath, ipath, "weight");
        if (read_dist(ld, part, ipath, mix_depth + 1, true, &parts[i])
            || !(w = need(ld, part, ipath, "weight"))
            || read_double(ld, w, wpath, ANY, &weights[i])) {
            free_parts(parts, n);
            free(weights);
            return -1;
        }
    }
    const char *e = dist_init_mixture(d, parts, weights, n);   /* owns both now */
    if (!e)
        return 0;
    size_t bad;
    if (sscanf(e, "weights[%zu]", &bad) == 1 && bad < n) {
        const char *rest = strstr(e, " must ");
        const yaml_node_t *part = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[bad]);
        path_index(ipath, ppath, bad);
        path_key(wpath, ipath, "weight");
        return fail(ld, get(ld, part, "weight"), wpath, "%s", rest ? rest + 1 : e);
    }
    return fail(ld, list, ppath, "%s", e);
}

/* The value of a dist key: *idx is its index in dist_names. */
static int read_dist_name(loader *ld, const yaml_node_t *dn, const char *path, int *idx)
{
    return read_choice(ld, dn, path, dist_names, "distribution", false, idx);
}

/* A distribution mapping {dist: NAME, ...}. On return *d is always safe to
 * dist_free; on error the caller frees it. mix_depth counts the mixtures
 * around this one; in_mixture allows the key weight. */
static int read_dist(loader *ld, const yaml_node_t *map, const char *path, int mix_depth,
                     bool in_mixture, dist_t *d)
{
    char kpath[SCN_PATH_LEN], list[256];
    memset(d, 0, sizeof *d);
    if (check_keys(ld, map, path, "a distribution mapping such as {dist: exponential, mean_ms: 10}",
                   in_mixture ? part_keys : service_keys))
        return -1;
    if (++ld->ndists > SCN_MAX_DISTS)
        return fail(ld, map, path, "more than %d distributions in one scenario", SCN_MAX_DISTS);
    const yaml_node_t *dn = need(ld, map, path, "dist");
    if (!dn)
        return -1;
    path_key(kpath, path, "dist");
    int idx = -1;
    if (read_dist_name(ld, dn, kpath, &idx))
        return -1;
    dist_kind kind = dist_kinds[idx];

    /* Keys of other kinds are errors here: "ms" under exponential. */
    const char *allowed[16] = {"dist", "weight"};
    size_t na = in_mixture ? 2 : 1;
    for (const char *const *k = dist_keys(kind); *k; k++)
        allowed[na++] = *k;
    allowed[na] = NULL;
    const yaml_node_t *bad = foreign_key(ld, map, allowed);
    if (bad) {
        path_key(kpath, path, text_of(bad));
        return fail(ld, bad, kpath, "does not apply to dist: %s (it takes: %s)",
                    dist_names[idx], joined(dist_keys(kind), list, sizeof list));
    }

    double a = 0, b = 0;
    const char *e = NULL;
    switch (kind) {
    case DIST_CONSTANT:
        if (read_param(ld, map, path, "ms", &a))
            return -1;
        e = dist_init_constant(d, a);
        break;
    case DIST_EXPONENTIAL:
        if (read_param(ld, map, path, "mean_ms", &a))
            return -1;
        e = dist_init_exponential(d, a);
        break;
    case DIST_UNIFORM:
        if (read_param(ld, map, path, "min_ms", &a) || read_param(ld, map, path, "max_ms", &b))
            return -1;
        e = dist_init_uniform(d, a, b);
        break;
    case DIST_LOGNORMAL:
        return read_lognormal(ld, map, path, d);
    case DIST_GAMMA:
        if (read_param(ld, map, path, "mean_ms", &a) || read_param(ld, map, path, "sd_ms", &b))
            return -1;
        e = dist_init_gamma(d, a, b);
        break;
    case DIST_WEIBULL:
        if (read_param(ld, map, path, "shape", &a) || read_param(ld, map, path, "scale_ms", &b))
            return -1;
        e = dist_init_weibull(d, a, b);
        break;
    case DIST_PARETO:
        if (read_param(ld, map, path, "shape", &a) || read_param(ld, map, path, "min_ms", &b))
            return -1;
        e = dist_init_pareto(d, a, b);
        break;
    case DIST_EMPIRICAL:
        return read_empirical(ld, map, path, d);
    case DIST_MIXTURE:
        return read_mixture(ld, map, path, mix_depth, d);
    }
    return e ? dist_error(ld, map, path, e) : 0;
}

/* ---- sections ---------------------------------------------------------- */

/* workload.surge: {at_s, for_s, streams} — extra streams for a while. */
static int read_surge(loader *ld, const yaml_node_t *map, workload_cfg *w)
{
    static const char *const keys[] = {"at_s", "for_s", "streams", NULL};
    const char *path = "workload.surge";
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {at_s: 300, for_s: 300, streams: 32}", keys))
        return -1;
    if (!(v = need(ld, map, path, "at_s"))
        || read_double(ld, v, "workload.surge.at_s", NONNEGATIVE, &w->surge_at_s))
        return -1;
    if (!(v = need(ld, map, path, "for_s"))
        || read_double(ld, v, "workload.surge.for_s", POSITIVE, &w->surge_for_s))
        return -1;
    if (!(v = need(ld, map, path, "streams"))
        || read_int(ld, v, "workload.surge.streams", 1, &w->surge_streams))
        return -1;
    if ((long long)w->streams + w->surge_streams > SCN_MAX_STREAMS)
        return too_large(ld, v, "workload.surge.streams", SCN_MAX_STREAMS - w->streams,
                         "workload.streams + surge streams at most 1000000: state is kept per stream");
    return 0;
}

/* One list of phases (ms), one per stream, each in [0, one frame interval),
 * into out[0 .. streams-1]. */
static int read_phase_list(loader *ld, const yaml_node_t *list, const char *path,
                           const workload_cfg *w, double *out)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n != (size_t)w->streams)
        return fail(ld, list, path, "must list one phase per stream (workload.streams = %d), "
                    "got %zu", w->streams, n);
    double period = 1000.0 / w->fps;
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        if (e->type != YAML_SCALAR_NODE)
            return fail(ld, e, ipath, "expected a phase in ms, got %s", describe(e, show, sizeof show));
        if (read_double(ld, e, ipath, NONNEGATIVE, &out[i]))
            return -1;
        if (!(out[i] < period))
            return fail(ld, e, ipath, "must be below one frame interval (1000 / fps = %g ms), "
                        "got %g", period, out[i]);
    }
    return 0;
}

/* workload.phase_ms: [p_1, ..., p_streams], the offset of each stream's first
 * frame, or a list of such lists — replication r uses list r mod n, so the
 * phases of recorded runs (vlrealpipe's) can be replayed run by run. */
static int read_phase_ms(loader *ld, const yaml_node_t *v, workload_cfg *w)
{
    const char *path = "workload.phase_ms";
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (v->type != YAML_SEQUENCE_NODE)
        return fail(ld, v, path, "expected a list of phases in ms, one per stream, such as "
                    "[0, 12.5, 40], or a list of such lists, got %s", describe(v, show, sizeof show));
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    int nested = n > 0 && yaml_document_get_node(&ld->doc, v->data.sequence.items.start[0])->type
                              == YAML_SEQUENCE_NODE;
    size_t sets = nested ? n : 1;      /* one flat list: read_phase_list checks its length */
    w->phase_ms = malloc(sets * (size_t)w->streams * sizeof *w->phase_ms);
    if (!w->phase_ms)
        return fail(ld, v, path, "out of memory");
    w->nphase_sets = (int)sets;
    w->phase = PHASE_GIVEN;
    if (!nested)
        return read_phase_list(ld, v, path, w, w->phase_ms);
    for (size_t k = 0; k < sets; k++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, v->data.sequence.items.start[k]);
        path_index(ipath, path, k);
        if (e->type != YAML_SEQUENCE_NODE)
            return fail(ld, e, ipath, "expected a list of phases in ms (one per stream) like the "
                        "first, got %s", describe(e, show, sizeof show));
        if (read_phase_list(ld, e, ipath, w, w->phase_ms + k * (size_t)w->streams))
            return -1;
    }
    return 0;
}

static int read_workload(loader *ld, const yaml_node_t *map, workload_cfg *w)
{
    static const char *const keys[] = {
        "arrival", "rate_hz", "streams", "fps", "jitter_ms", "phase", "phase_ms",
        "queries_per_min", "proactive_per_min", "surge", "profile", NULL};
    static const char *const poisson[] = {"arrival", "rate_hz", NULL};
    static const char *const periodic[] = {
        "arrival", "streams", "fps", "jitter_ms", "phase", "phase_ms", "queries_per_min",
        "proactive_per_min", "surge", "profile", NULL};
    static const char *const arrivals[] = {"poisson", "periodic", NULL};
    static const char *const phases[] = {"random", "aligned", NULL};
    const char *path = "workload";
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    int arrival = 0;

    if (check_keys(ld, map, path, "a mapping such as {arrival: poisson, rate_hz: 10}", keys))
        return -1;
    if (!(v = need(ld, map, path, "arrival")) || read_enum(ld, v, "workload.arrival", arrivals, &arrival))
        return -1;
    w->arrival = arrival == 0 ? ARRIVAL_POISSON : ARRIVAL_PERIODIC;
    const yaml_node_t *bad = foreign_key(ld, map, arrival == 0 ? poisson : periodic);
    if (bad) {
        path_key(kpath, path, text_of(bad));
        return fail(ld, bad, kpath, "applies only to arrival: %s", arrivals[1 - arrival]);
    }

    if (w->arrival == ARRIVAL_POISSON) {
        if (!(v = need(ld, map, path, "rate_hz"))
            || read_double(ld, v, "workload.rate_hz", POSITIVE, &w->rate_hz))
            return -1;
        return w->rate_hz > SCN_MAX_RATE_HZ
            ? too_large(ld, v, "workload.rate_hz", SCN_MAX_RATE_HZ, "arrivals 1 us apart on average")
            : 0;
    }

    if (!(v = need(ld, map, path, "streams")) || read_int(ld, v, "workload.streams", 1, &w->streams))
        return -1;
    if (w->streams > SCN_MAX_STREAMS)
        return too_large(ld, v, "workload.streams", SCN_MAX_STREAMS, "state is kept per stream");
    if (!(v = need(ld, map, path, "fps")) || read_double(ld, v, "workload.fps", POSITIVE, &w->fps))
        return -1;
    if (w->fps > SCN_MAX_FPS)
        return too_large(ld, v, "workload.fps", SCN_MAX_FPS, "a stream's frames 1 ms apart at least");
    if ((v = get(ld, map, "jitter_ms"))
        && read_double(ld, v, "workload.jitter_ms", NONNEGATIVE, &w->jitter_ms))
        return -1;
    int phase = 0;
    if ((v = get(ld, map, "phase"))) {
        if (read_enum(ld, v, "workload.phase", phases, &phase))
            return -1;
        w->phase = phase == 0 ? PHASE_RANDOM : PHASE_ALIGNED;
    }
    if ((v = get(ld, map, "phase_ms"))) {
        if (get(ld, map, "phase"))
            return fail(ld, get_key(ld, map, "phase_ms"), "workload.phase_ms",
                        "cannot be combined with workload.phase (give one of them)");
        if (read_phase_ms(ld, v, w))
            return -1;
    }
    if ((v = get(ld, map, "queries_per_min"))
        && read_double(ld, v, "workload.queries_per_min", NONNEGATIVE, &w->queries_per_min))
        return -1;
    if (v && w->queries_per_min > SCN_MAX_PER_MIN)
        return too_large(ld, v, "workload.queries_per_min", SCN_MAX_PER_MIN, "1000 per second per stream");
    if ((v = get(ld, map, "proactive_per_min"))
        && read_double(ld, v, "workload.proactive_per_min", NONNEGATIVE, &w->proactive_per_min))
        return -1;
    if (v && w->proactive_per_min > SCN_MAX_PER_MIN)
        return too_large(ld, v, "workload.proactive_per_min", SCN_MAX_PER_MIN, "1000 per second per stream");
    if ((v = get(ld, map, "surge")))
        return read_surge(ld, v, w);
    return 0;
}

static int read_metrics(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {"buckets_ms", NULL};
    const char *path = "metrics.buckets_ms";
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (check_keys(ld, map, "metrics", "a mapping such as {buckets_ms: [5, 10, 20]}", keys))
        return -1;
    const yaml_node_t *list = get(ld, map, "buckets_ms");
    if (!list)
        return 0;
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of bucket bounds in ms, got %s",
                    describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n < 1 || n > CFG_MAX_BUCKETS)
        return fail(ld, list, path, "must hold 1 to %d values, got %zu", CFG_MAX_BUCKETS, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *v = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        if (read_double(ld, v, ipath, POSITIVE, &c->buckets_ms[i]))
            return -1;
        if (i > 0 && !(c->buckets_ms[i] > c->buckets_ms[i - 1]))
            return fail(ld, v, ipath, "buckets must be strictly ascending, got %s after %.10g",
                        text_of(v), c->buckets_ms[i - 1]);
    }
    c->nbuckets = (int)n;
    return 0;
}

static int read_queue(loader *ld, const yaml_node_t *map, const char *path, stage_cfg *s)
{
    static const char *const keys[] = {"capacity", "on_full", NULL};
    static const char *const policies[] = {"drop_newest", "drop_oldest", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    long long cap = 0;
    int policy = 0;
    if (check_keys(ld, map, path, "a mapping such as {capacity: 64, on_full: drop_newest}", keys))
        return -1;
    path_key(kpath, path, "capacity");
    if (!(v = need(ld, map, path, "capacity")) || read_integer(ld, v, kpath, 0, LONG_MAX, &cap))
        return -1;
    s->capacity = (long)cap;
    if ((v = get(ld, map, "on_full"))) {
        path_key(kpath, path, "on_full");
        if (read_enum(ld, v, kpath, policies, &policy))
            return -1;
        s->on_full = policy == 0 ? ONFULL_DROP_NEWEST : ONFULL_DROP_OLDEST;
    }
    return 0;
}

/* ---- GPU service: a batch-time table and its jitter --------------------- */

/* table: [{batch: 1, ms: 6.1}, {batch: 8, ms: 14.9}, ...], or by the tokens a
 * batch carries: [{tokens: 64, ms: 7}, {tokens: 512, ms: 18}] (by_tokens).
 * Every point uses the key of the first. A batch table starts at batch 1;
 * a token table may start anywhere (it extends its ends, config.h). */
static int read_table(loader *ld, const yaml_node_t *list, const char *path, batch_table *t)
{
    static const char *const keys[] = {"batch", "tokens", "ms", NULL};
    char ipath[SCN_PATH_LEN], bpath[SCN_PATH_LEN], mpath[SCN_PATH_LEN];
    char show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of points such as [{batch: 1, ms: 6.1}, "
                    "{batch: 8, ms: 14.9}], got %s", describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n < 1 || n > CFG_MAX_TABLE)
        return fail(ld, list, path, "must hold 1 to %d points, got %zu", CFG_MAX_TABLE, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *pt = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const yaml_node_t *bv, *mv;
        double x = 0, ms = 0;
        path_index(ipath, path, i);
        path_key(mpath, ipath, "ms");
        if (check_keys(ld, pt, ipath, "a point such as {batch: 8, ms: 14.9} or "
                       "{tokens: 512, ms: 18}", keys)
            || either_not_both(ld, pt, ipath, "batch", "tokens",
                               " (a table is by batch size or by tokens)"))
            return -1;
        bool by_tokens = get(ld, pt, "tokens") != NULL;
        if (!by_tokens && !get(ld, pt, "batch"))
            return fail(ld, pt, ipath, "missing required key 'batch' (or 'tokens', for a "
                        "table by the tokens a batch carries)");
        if (i == 0)
            t->by_tokens = by_tokens;
        else if (by_tokens != t->by_tokens)
            return fail(ld, pt, ipath, "gives %s, but the table's first point gives %s; all "
                        "points of a table must use the same key",
                        by_tokens ? "tokens" : "batch", t->by_tokens ? "tokens" : "batch");
        const char *xkey = by_tokens ? "tokens" : "batch";
        path_key(bpath, ipath, xkey);
        bv = get(ld, pt, xkey);
        if (by_tokens) {
            if (read_double(ld, bv, bpath, POSITIVE, &x))
                return -1;
            if (i > 0 && !(x > t->batch[i - 1]))
                return fail(ld, bv, bpath, "token counts must be strictly ascending, got %s "
                            "after %.10g", text_of(bv), t->batch[i - 1]);
        } else {
            int b = 0;
            if (read_int(ld, bv, bpath, 1, &b))
                return -1;
            if (i == 0 && b != 1)
                return fail(ld, bv, bpath, "the first point must be batch 1, got %d", b);
            if (i > 0 && !(b > t->batch[i - 1]))
                return fail(ld, bv, bpath, "batch sizes must be strictly ascending, got %d "
                            "after %.0f", b, t->batch[i - 1]);
            x = b;
        }
        if (!(mv = need(ld, pt, ipath, "ms")) || read_double(ld, mv, mpath, POSITIVE, &ms))
            return -1;
        if (i > 0 && ms < t->ms[i - 1])
            return fail(ld, mv, mpath, "must not decrease as the %s, got %s after %.10g",
                        by_tokens ? "tokens grow" : "batch grows", text_of(mv), t->ms[i - 1]);
        t->batch[i] = x;
        t->ms[i] = ms;
    }
    t->n = (int)n;
    return 0;
}

/* jitter: a distribution of a factor with mean 1, or the shorthand
 * {dist: lognormal | gamma, cv: X} for mean 1 and sd X. */
static int read_jitter(loader *ld, const yaml_node_t *map, const char *path, dist_t *d)
{
    static const char *const keys[] = {
        "dist", "cv", "ms", "mean_ms", "sd_ms", "min_ms", "max_ms", "p50_ms", "p99_ms",
        "shape", "scale_ms", "file", "parts", NULL};
    static const char *const shorthand[] = {"dist", "cv", NULL};
    char kpath[SCN_PATH_LEN];
    memset(d, 0, sizeof *d);
    if (check_keys(ld, map, path, "a distribution of a factor with mean 1, such as "
                   "{dist: lognormal, cv: 0.05}", keys))
        return -1;
    const yaml_node_t *cvk = get_key(ld, map, "cv");
    if (cvk) {
        const yaml_node_t *dn = need(ld, map, path, "dist"), *bad;
        int idx = -1;
        double cv = 0;
        if (++ld->ndists > SCN_MAX_DISTS)
            return fail(ld, map, path, "more than %d distributions in one scenario", SCN_MAX_DISTS);
        path_key(kpath, path, "dist");
        if (!dn || read_dist_name(ld, dn, kpath, &idx))
            return -1;
        path_key(kpath, path, "cv");
        if (dist_kinds[idx] != DIST_LOGNORMAL && dist_kinds[idx] != DIST_GAMMA)
            return fail(ld, cvk, kpath, "the cv shorthand applies only to dist: lognormal or "
                        "gamma, not %s", dist_names[idx]);
        if ((bad = foreign_key(ld, map, shorthand))) {
            path_key(kpath, path, text_of(bad));
            return fail(ld, bad, kpath, "does not apply with cv (cv alone means mean 1 and sd cv)");
        }
        if (read_double(ld, get(ld, map, "cv"), kpath, POSITIVE, &cv))
            return -1;
        const char *e = dist_kinds[idx] == DIST_LOGNORMAL ? dist_init_lognormal_mean_sd(d, 1, cv)
                                                          : dist_init_gamma(d, 1, cv);
        if (e)
            return fail(ld, map, path, "%s", e);
    } else if (read_dist(ld, map, path, 0, false, d)) {
        return -1;
    }
    double m = dist_mean(d);
    if (!(fabs(m - 1) <= 1e-6))
        return fail(ld, map, path, "jitter must have mean 1 (it multiplies the table time), "
                    "got %.10g", m);
    return 0;
}

/* calib: {file: F, op: encode, model: M, [cache_len | tokens_in | tokens_out: N],
 * [stat: p50 | mean], [sampling: fitted]} — the stage's table from a
 * calibration file (models/calib_read.h; F relative to the scenario's
 * directory). Errors about the file's contents point at the calib key `key`
 * and name the file. *sigma gets the pooled log-spread of the points used. */
static int read_calib(loader *ld, const yaml_node_t *key, const yaml_node_t *map, const char *path,
                      stage_cfg *s, bool *fitted, double *sigma, dist_t *emp, bool *has_emp)
{
    static const char *const keys[] = {"file", "op", "model", "sampling", "stat", "cache_len",
                                       "tokens_in", "tokens_out", NULL};
    static const char *const ops[] = {"encode", "reduce", "prefill", "decode", NULL};
    static const char *const samplings[] = {"fitted", "empirical", NULL};
    static const char *const stats[] = {"p50", "mean", NULL};
    static const char *const sel_keys[] = {"tokens_in", "tokens_out", "cache_len"};
    char kpath[SCN_PATH_LEN], msg[1024];
    const yaml_node_t *fnode, *onode, *mnode, *v;
    const char *fname = "", *model = "";
    int op = 0, sampling = -1, stat = -1;
    calf_select sel = {.tokens_in = -1, .tokens_out = -1, .cache_len = -1};
    int *sel_vals[] = {&sel.tokens_in, &sel.tokens_out, &sel.cache_len};
    if (check_keys(ld, map, path, "a mapping such as {file: calib/data/h200.yaml, op: encode, "
                   "model: siglip-so400m-384}", keys))
        return -1;
    path_key(kpath, path, "file");
    if (!(fnode = need(ld, map, path, "file")) || read_string(ld, fnode, kpath, &fname))
        return -1;
    path_key(kpath, path, "op");
    if (!(onode = need(ld, map, path, "op")) || read_enum(ld, onode, kpath, ops, &op))
        return -1;
    path_key(kpath, path, "model");
    if (!(mnode = need(ld, map, path, "model")) || read_string(ld, mnode, kpath, &model))
        return -1;
    path_key(kpath, path, "sampling");
    if ((v = get(ld, map, "sampling")) && read_enum(ld, v, kpath, samplings, &sampling))
        return -1;
    path_key(kpath, path, "stat");
    if ((v = get(ld, map, "stat")) && read_enum(ld, v, kpath, stats, &stat))
        return -1;
    for (int k = 0; k < 3; k++) {
        path_key(kpath, path, sel_keys[k]);
        if ((v = get(ld, map, sel_keys[k])) && read_int(ld, v, kpath, 0, sel_vals[k]))
            return -1;
    }
    *fitted = sampling == 0;
    *has_emp = false;
    /* default: p50, or mean with fitted or empirical */
    sel.use_mean = stat >= 0 ? stat == 1 : sampling >= 0;

    int len = fname[0] == '/' ? snprintf(ld->calib_file, sizeof ld->calib_file, "%s", fname)
                              : snprintf(ld->calib_file, sizeof ld->calib_file, "%s/%s", ld->basedir, fname);
    path_key(kpath, path, "file");
    if (len < 0 || (size_t)len >= sizeof ld->calib_file)
        return fail(ld, fnode, kpath, "path too long");
    calf_file cf;
    if (calf_read(ld->calib_file, &cf, msg, sizeof msg))
        return fail(ld, key, path, "%s", msg);
    int rc = 0;
    const calf_op *o = calf_find(&cf, ops[op], model);
    if (!o) {
        char have[512] = "";
        size_t hl = 0;
        for (int i = 0; i < cf.nops && hl < sizeof have; i++)
            hl += (size_t)snprintf(have + hl, sizeof have - hl, "%s%s %s", i ? ", " : "",
                                   cf.ops[i].op, cf.ops[i].model);
        rc = fail(ld, key, path, "%s has no op %s for model %s (it has: %s)", ld->calib_file,
                  ops[op], model, cf.nops ? have : "no ops");
    } else if (calf_table(o, &sel, &s->table, NULL, sigma, msg, sizeof msg)) {
        rc = fail(ld, key, path, "%s: %s", ld->calib_file, msg);
    } else {
        s->has_table = true;
        if (sampling == 1) {            /* empirical: pooled sample / point-mean ratios */
            char csv[4096 + 16];
            double *ratios = NULL;
            size_t nr = 0;
            const char *e;
            if (calf_samples_path(ld->calib_file, csv, sizeof csv))
                rc = fail(ld, key, path, "path too long");
            else if (calf_empirical_ratios(csv, o, &sel, &ratios, &nr, msg, sizeof msg))
                rc = fail(ld, key, path, "sampling: empirical: %s", msg);
            else if (++ld->ndists > SCN_MAX_DISTS) {
                free(ratios);
                rc = fail(ld, key, path, "more than %d distributions in one scenario", SCN_MAX_DISTS);
            } else if ((e = dist_init_empirical(emp, ratios, nr))) {   /* owns ratios now */
                rc = fail(ld, key, path, "%s", e);
                dist_free(emp);
            } else
                *has_emp = true;
        }
    }
    calf_free(&cf);
    return rc;
}

/* calib: {file: F, op: decode_video, [model: M]} on a workers stage: a
 * mixture of empirical parts, one per frame type (point) of the op, each
 * the type's raw samples from F's samples CSV, weighted by its share of
 * the samples. */
static int read_calib_video(loader *ld, const yaml_node_t *key, const yaml_node_t *map,
                            const char *path, dist_t *d)
{
    static const char *const keys[] = {"file", "op", "model", NULL};
    static const char *const ops[] = {"decode_video", NULL};
    char kpath[SCN_PATH_LEN], msg[1024], csv[4096 + 16];
    const yaml_node_t *fnode, *onode, *v;
    const char *fname = "", *model = NULL;
    int op = 0;
    memset(d, 0, sizeof *d);
    if (check_keys(ld, map, path, "a mapping such as {file: calib/data/cpu-h264-720p.yaml, "
                   "op: decode_video}", keys))
        return -1;
    path_key(kpath, path, "file");
    if (!(fnode = need(ld, map, path, "file")) || read_string(ld, fnode, kpath, &fname))
        return -1;
    path_key(kpath, path, "op");
    if (!(onode = need(ld, map, path, "op")) || read_enum(ld, onode, kpath, ops, &op))
        return -1;
    path_key(kpath, path, "model");
    if ((v = get(ld, map, "model")) && read_string(ld, v, kpath, &model))
        return -1;
    int len = fname[0] == '/' ? snprintf(ld->calib_file, sizeof ld->calib_file, "%s", fname)
                              : snprintf(ld->calib_file, sizeof ld->calib_file, "%s/%s", ld->basedir, fname);
    path_key(kpath, path, "file");
    if (len < 0 || (size_t)len >= sizeof ld->calib_file || calf_samples_path(ld->calib_file, csv, sizeof csv))
        return fail(ld, fnode, kpath, "path too long");
    calf_file cf;
    if (calf_read(ld->calib_file, &cf, msg, sizeof msg))
        return fail(ld, key, path, "%s", msg);
    const calf_op *o = NULL;
    int found = 0;
    for (int i = 0; i < cf.nops; i++)
        if (!strcmp(cf.ops[i].op, ops[op]) && (!model || !strcmp(cf.ops[i].model, model))) {
            o = o ? o : &cf.ops[i];
            found++;
        }
    int rc = 0;
    size_t np = o ? (size_t)o->npoints : 0, total = 0, k = 0;
    double **vals = NULL;
    size_t *counts = NULL;
    dist_t *parts = NULL;
    double *weights = NULL;
    if (!o) {
        rc = fail(ld, key, path, "%s has no op %s%s%s", ld->calib_file, ops[op], model ? " for model " : "",
                  model ? model : "");
        goto out;
    }
    if (found > 1) {
        rc = fail(ld, key, path, "%s has %d %s ops; choose one with model: M", ld->calib_file, found, ops[op]);
        goto out;
    }
    vals = calloc(np, sizeof *vals);
    counts = calloc(np, sizeof *counts);
    if (!vals || !counts) {
        rc = fail(ld, key, path, "out of memory");
        goto out;
    }
    if (calf_samples(csv, o, vals, counts, msg, sizeof msg)) {
        rc = fail(ld, key, path, "%s", msg);
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        total += counts[i];
    if (!total) {
        rc = fail(ld, key, path, "%s: no samples for op %s model %s", csv, o->op, o->model);
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        k += counts[i] > 0;
    if (ld->ndists + (int)k + 1 > SCN_MAX_DISTS) {
        rc = fail(ld, key, path, "more than %d distributions in one scenario", SCN_MAX_DISTS);
        goto out;
    }
    ld->ndists += (int)k + 1;
    parts = calloc(k, sizeof *parts);
    weights = calloc(k, sizeof *weights);
    if (!parts || !weights) {
        free(parts);
        free(weights);
        rc = fail(ld, key, path, "out of memory");
        goto out;
    }
    k = 0;
    for (size_t i = 0; i < np; i++) {
        if (!counts[i])
            continue;
        weights[k] = (double)counts[i] / (double)total;
        const char *e = dist_init_empirical(&parts[k], vals[i], counts[i]);   /* owns vals[i] */
        vals[i] = NULL;
        k++;
        if (e) {
            rc = fail(ld, key, path, "%s: %s", csv, e);
            for (size_t j = 0; j < k; j++)
                dist_free(&parts[j]);
            free(parts);
            free(weights);
            goto out;
        }
    }
    const char *e = dist_init_mixture(d, parts, weights, k);   /* owns parts, weights */
    if (e) {
        rc = fail(ld, key, path, "%s", e);
        dist_free(d);
    }
out:
    for (size_t i = 0; vals && i < np; i++)
        free(vals[i]);
    free(vals);
    free(counts);
    calf_free(&cf);
    return rc;
}

/* service: a distribution (per item on workers, per batch on a GPU), or on
 * a GPU stage {table: [...], jitter: {...}} or {calib: {...}, jitter: {...}}. */
static int read_service(loader *ld, const yaml_node_t *map, const char *path, bool gpu,
                        stage_cfg *s)
{
    static const char *const table_keys[] = {"table", "jitter", NULL};
    static const char *const any_keys[] = {
        "table", "calib", "jitter", "dist", "ms", "mean_ms", "sd_ms", "min_ms", "max_ms", "p50_ms",
        "p99_ms", "shape", "scale_ms", "file", "parts", NULL};
    static const char *const calib_keys[] = {"calib", "jitter", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *k;
    ld->calib_file[0] = '\0';
    if (map->type == YAML_MAPPING_NODE && (k = get_key(ld, map, "calib"))) {
        const yaml_node_t *key = k;
        bool fitted = false, has_emp = false;
        double sigma = 0;
        dist_t emp;
        memset(&emp, 0, sizeof emp);
        path_key(kpath, path, "calib");
        if (!gpu) {
            const yaml_node_t *cm = get(ld, map, "calib"), *on;
            if (!cm || cm->type != YAML_MAPPING_NODE || !(on = get(ld, cm, "op")) ||
                on->type != YAML_SCALAR_NODE || strcmp(text_of(on), "decode_video"))
                return fail(ld, k, kpath, "a calibrated service applies only to on: gpu stages, "
                            "except op: decode_video (a per-frame mixture on a workers stage); "
                            "a workers stage takes a distribution per item");
            if (check_keys(ld, map, path, "a mapping such as {calib: {file: ..., op: decode_video}}",
                           any_keys))
                return -1;
            if ((k = foreign_key(ld, map, (const char *const[]){"calib", NULL}))) {
                path_key(kpath, path, text_of(k));
                return fail(ld, k, kpath, "does not apply with calib on a workers stage (it takes: calib)");
            }
            return read_calib_video(ld, key, get(ld, map, "calib"), kpath, &s->service);
        }
        if (check_keys(ld, map, path, "a mapping such as {calib: {...}, jitter: {...}}", any_keys))
            return -1;
        if ((k = foreign_key(ld, map, calib_keys))) {
            path_key(kpath, path, text_of(k));
            return fail(ld, k, kpath, "does not apply with calib (it takes: calib, jitter)");
        }
        path_key(kpath, path, "calib");
        if (read_calib(ld, key, get(ld, map, "calib"), kpath, s, &fitted, &sigma, &emp, &has_emp))
            return -1;
        const yaml_node_t *j = get(ld, map, "jitter");
        if (j) {                     /* the stage's own jitter wins over sampling: fitted/empirical */
            dist_free(&emp);
            path_key(kpath, path, "jitter");
            if (read_jitter(ld, j, kpath, &s->jitter))
                return -1;
            s->has_jitter = true;
        } else if (has_emp) {
            s->jitter = emp;
            s->has_jitter = true;
        } else if (fitted && sigma > 0) {
            if (++ld->ndists > SCN_MAX_DISTS)
                return fail(ld, key, kpath, "more than %d distributions in one scenario", SCN_MAX_DISTS);
            /* the fitted lognormal's spread around mean 1: cv = sqrt(exp(sigma^2) - 1) */
            const char *e = dist_init_lognormal_mean_sd(&s->jitter, 1, sqrt(expm1(sigma * sigma)));
            if (e)
                return fail(ld, key, kpath, "%s", e);
            s->has_jitter = true;
        }
        return 0;
    }
    if (map->type == YAML_MAPPING_NODE && (k = get_key(ld, map, "table"))) {
        path_key(kpath, path, "table");
        if (!gpu)
            return fail(ld, k, kpath, "a service table applies only to on: gpu stages; "
                        "a workers stage takes a distribution per item");
        if (check_keys(ld, map, path, "a mapping such as {table: [...], jitter: {...}}", any_keys))
            return -1;
        if ((k = foreign_key(ld, map, table_keys))) {
            path_key(kpath, path, text_of(k));
            return fail(ld, k, kpath, "does not apply with a service table (it takes: table, jitter)");
        }
        if (read_table(ld, get(ld, map, "table"), kpath, &s->table))
            return -1;
        s->has_table = true;
        const yaml_node_t *j = get(ld, map, "jitter");
        if (j) {
            path_key(kpath, path, "jitter");
            if (read_jitter(ld, j, kpath, &s->jitter))
                return -1;
            s->has_jitter = true;
        }
        return 0;
    }
    if (map->type == YAML_MAPPING_NODE && (k = get_key(ld, map, "jitter"))) {
        path_key(kpath, path, "jitter");
        return fail(ld, k, kpath, "jitter applies only with a service table: "
                    "{table: [{batch: 1, ms: ...}, ...], jitter: {...}}");
    }
    return read_dist(ld, map, path, 0, false, &s->service);
}

/* scene_change: {per_min: 2, burst: 15} — scene changes per stream per
 * minute (Poisson), after each of which the stream's next burst frames are
 * all kept. */
static int read_scene_change(loader *ld, const yaml_node_t *map, const char *path, stage_cfg *s)
{
    static const char *const keys[] = {"per_min", "burst", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    double per_min = 0;
    int burst = 0;
    if (check_keys(ld, map, path, "a mapping such as {per_min: 2, burst: 15}", keys))
        return -1;
    path_key(kpath, path, "per_min");
    if (!(v = need(ld, map, path, "per_min")) || read_double(ld, v, kpath, POSITIVE, &per_min))
        return -1;
    if (per_min > SCN_MAX_PER_MIN)
        return too_large(ld, v, kpath, SCN_MAX_PER_MIN, "1000 per second per stream");
    path_key(kpath, path, "burst");
    if (!(v = need(ld, map, path, "burst")) || read_int(ld, v, kpath, 1, &burst))
        return -1;
    s->scene_per_min = per_min;
    s->scene_burst = burst;
    return 0;
}

/* keep: {ratio: 0.5} | {every: 3} | {ratio: 0.2, scene_change: {per_min, burst}};
 * that scene changes need a periodic workload is checked once it is known
 * (check_stage_flow). */
static int read_keep(loader *ld, const yaml_node_t *map, const char *path, stage_cfg *s)
{
    static const char *const keys[] = {"ratio", "every", "scene_change", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v, *sk;
    if (check_keys(ld, map, path, "a mapping such as {ratio: 0.5} or {every: 3}", keys)
        || either_not_both(ld, map, path, "ratio", "every", ""))
        return -1;
    if ((sk = get_key(ld, map, "scene_change")) && !get(ld, map, "ratio")) {
        path_key(kpath, path, "scene_change");
        if (get(ld, map, "every"))
            return fail(ld, sk, kpath, "applies only with ratio (frames kept at random), "
                        "not with every");
        return fail(ld, sk, kpath, "needs ratio, the fraction of the other frames kept, "
                    "such as {ratio: 0.1, scene_change: {per_min: 2, burst: 15}}");
    }
    if ((v = get(ld, map, "ratio"))) {
        path_key(kpath, path, "ratio");
        if (read_double(ld, v, kpath, POSITIVE, &s->keep_ratio))
            return -1;
        if (s->keep_ratio > 1)
            return fail(ld, v, kpath, "must be <= 1, got %s", text_of(v));
        s->keep = KEEP_RATIO;
        path_key(kpath, path, "scene_change");
        if ((v = get(ld, map, "scene_change")) && read_scene_change(ld, v, kpath, s))
            return -1;
        return 0;
    }
    if ((v = get(ld, map, "every"))) {
        path_key(kpath, path, "every");
        if (read_int(ld, v, kpath, 1, &s->keep_every))
            return -1;
        s->keep = KEEP_EVERY;
        return 0;
    }
    return fail(ld, map, path, "give ratio (the fraction of frames kept) or every "
                "(keep every Nth frame)");
}

/* ---- jitter sources ---------------------------------------------------- */

/* A probability in (0, 1) (below1) or (0, 1]. */
static int read_prob(loader *ld, const yaml_node_t *v, const char *path, bool below1,
                     double *out)
{
    if (read_double(ld, v, path, POSITIVE, out))
        return -1;
    if (below1 && !(*out < 1))
        return fail(ld, v, path, "must be < 1, got %s", text_of(v));
    if (!below1 && !(*out <= 1))
        return fail(ld, v, path, "must be <= 1, got %s", text_of(v));
    return 0;
}

/* retransmit: {loss: 0.02, rtt_ms: 40, max_retries: 3} */
static int read_retransmit(loader *ld, const yaml_node_t *map, const char *path,
                           retransmit_cfg *r)
{
    static const char *const keys[] = {"loss", "rtt_ms", "max_retries", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    retransmit_cfg t = {.max_retries = 3};
    if (check_keys(ld, map, path, "a mapping such as {loss: 0.02, rtt_ms: 40, max_retries: 3}",
                   keys))
        return -1;
    path_key(kpath, path, "loss");
    if (!(v = need(ld, map, path, "loss")) || read_prob(ld, v, kpath, true, &t.loss))
        return -1;
    path_key(kpath, path, "rtt_ms");
    if (!(v = need(ld, map, path, "rtt_ms")) || read_double(ld, v, kpath, POSITIVE, &t.rtt_ms))
        return -1;
    path_key(kpath, path, "max_retries");
    if ((v = get(ld, map, "max_retries")) && read_int(ld, v, kpath, 1, &t.max_retries))
        return -1;
    *r = t;
    return 0;
}

/* A list of 1 to max positive numbers at `path` into *x (malloc'd), *n
 * the count; `noun` ("speeds") and `example` ("[1.03, 0.96]") word the
 * messages. */
static int read_positive_list(loader *ld, const yaml_node_t *list, const char *path, size_t max,
                              const char *noun, const char *example, double **x, size_t *n)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of %s such as %s, got %s", noun, example,
                    describe(list, show, sizeof show));
    size_t len = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (len == 0 || len > max)
        return fail(ld, list, path, "must list 1 to %zu %s, got %zu", max, noun, len);
    double *v = malloc(len * sizeof *v);
    if (!v)
        return fail(ld, list, path, "out of memory for %zu %s", len, noun);
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        if (read_double(ld, e, ipath, POSITIVE, &v[i])) {
            free(v);
            return -1;
        }
    }
    *x = v;
    *n = len;
    return 0;
}

/* gop.content: [f0, f1, ...] or {file: F} (one factor a line, in clip
 * order): frame k of a stream costs factor k mod n times its draw. */
static int read_content(loader *ld, const yaml_node_t *v, const char *path, gop_cfg *g)
{
    double *x = NULL;
    size_t n = 0;
    if (v->type == YAML_MAPPING_NODE) {
        static const char *const keys[] = {"file", NULL};
        const yaml_node_t *f;
        char fpath[SCN_PATH_LEN];
        if (check_keys(ld, v, path, "a list of factors such as [1.2, 0.9, 0.9] or {file: clip.content}",
                       keys) || !(f = need(ld, v, path, "file")))
            return -1;
        path_key(fpath, path, "file");
        if (read_samples(ld, f, fpath, &x, &n))
            return -1;
        for (size_t i = 0; i < n; i++)
            if (!(x[i] > 0)) {
                free(x);
                return fail(ld, f, fpath, "factor %zu (line order) must be > 0", i + 1);
            }
        if (n > CFG_MAX_CONTENT) {
            free(x);
            return fail(ld, v, path, "must list 1 to %d factors, got %zu", CFG_MAX_CONTENT, n);
        }
    } else if (read_positive_list(ld, v, path, CFG_MAX_CONTENT, "factors",
                                  "[1.2, 0.9, 0.9] or {file: clip.content}", &x, &n)) {
        return -1;
    }
    g->content = x;
    g->ncontent = (int)n;
    return 0;
}

/* gop: {length: 15, i_factor: 3.5, b_frames: 2, reorder_ms: 66}, or with
 * i_service: {dist: ...} (the I-frames' own distribution) instead of
 * i_factor, and content (read_content); *reorder_unset says reorder_ms was
 * omitted (its default needs the workload). On error *g is untouched. */
static int read_gop(loader *ld, const yaml_node_t *map, const char *path, gop_cfg *g,
                    bool *reorder_unset)
{
    static const char *const keys[] = {"length", "i_factor", "i_service", "b_frames", "reorder_ms",
                                       "content", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    gop_cfg t = {.i_factor = 1};
    if (check_keys(ld, map, path, "a mapping such as {length: 15, i_factor: 3.5, b_frames: 2}",
                   keys))
        return -1;
    path_key(kpath, path, "length");
    if (!(v = need(ld, map, path, "length")) || read_int(ld, v, kpath, 1, &t.length))
        return -1;
    path_key(kpath, path, "i_factor");
    if ((v = get(ld, map, "i_factor"))) {
        if (read_double(ld, v, kpath, ANY, &t.i_factor))
            return -1;
        if (!(t.i_factor >= 1))
            return fail(ld, v, kpath, "must be >= 1 (an I-frame costs at least a P-frame), "
                        "got %s", text_of(v));
    }
    path_key(kpath, path, "b_frames");
    if ((v = get(ld, map, "b_frames"))) {
        if (read_int(ld, v, kpath, 0, &t.b_frames))
            return -1;
        if (t.b_frames >= t.length)
            return fail(ld, v, kpath, "must be < length (%d), got %s", t.length, text_of(v));
    }
    path_key(kpath, path, "reorder_ms");
    *reorder_unset = !(v = get(ld, map, "reorder_ms"));
    if (v && read_double(ld, v, kpath, NONNEGATIVE, &t.reorder_ms))
        return -1;
    path_key(kpath, path, "i_service");
    if ((v = get(ld, map, "i_service"))) {
        if (get(ld, map, "i_factor"))
            return fail(ld, v, kpath, "give i_factor (times the drawn P-frame time) or i_service "
                        "(the I-frames' own distribution), not both");
        if (read_dist(ld, v, kpath, 0, false, &t.i_service)) {
            dist_free(&t.i_service);
            return -1;
        }
        t.has_i_service = true;
    }
    path_key(kpath, path, "content");
    if ((v = get(ld, map, "content")) && read_content(ld, v, kpath, &t)) {
        dist_free(&t.i_service);
        return -1;
    }
    *g = t;
    return 0;
}

/* cache_miss: {prob: 0.1, ms_per_token: 0.01, context_tokens: 4096} */
static int read_cache_miss(loader *ld, const yaml_node_t *map, const char *path,
                           cache_miss_cfg *m)
{
    static const char *const keys[] = {"prob", "ms_per_token", "context_tokens", NULL};
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v;
    cache_miss_cfg t = {0};
    if (check_keys(ld, map, path, "a mapping such as {prob: 0.1, ms_per_token: 0.01, "
                   "context_tokens: 4096}", keys))
        return -1;
    path_key(kpath, path, "prob");
    if (!(v = need(ld, map, path, "prob")) || read_prob(ld, v, kpath, false, &t.prob))
        return -1;
    path_key(kpath, path, "ms_per_token");
    if (!(v = need(ld, map, path, "ms_per_token"))
        || read_double(ld, v, kpath, POSITIVE, &t.ms_per_token))
        return -1;
    path_key(kpath, path, "context_tokens");
    if (!(v = need(ld, map, path, "context_tokens"))
        || read_double(ld, v, kpath, POSITIVE, &t.context_tokens))
        return -1;
    *m = t;
    return 0;
}

/* A gop without reorder_ms holds a B-frame for b_frames frame intervals of
 * a periodic workload (it waits for its future reference), else 0. Runs
 * after everything is loaded, wherever the workload was written. */
static void resolve_gop_defaults(const loader *ld, scenario_cfg *c)
{
    const workload_cfg *w = &c->workload;
    double interval = w->arrival == ARRIVAL_PERIODIC && w->fps > 0 ? 1000.0 / w->fps : 0;
    for (int s = 0; s < c->nstages; s++)
        if (ld->reorder_unset >> s & 1)
            c->stages[s].gop.reorder_ms = c->stages[s].gop.b_frames * interval;
}

/* ---- stages ------------------------------------------------------------ */

/* Where stage map's batch table was given, for a message about it: its
 * service.table, or the service.calib key it was read from (a calibrated
 * prefill op makes a table by tokens); kpath gets which. */
static const yaml_node_t *table_node(loader *ld, const yaml_node_t *map, const char *path,
                                     char *kpath)
{
    const yaml_node_t *svc = get(ld, map, "service"), *at = get(ld, svc, "table");
    path_key(kpath, path, at ? "service.table" : "service.calib");
    if (!at && !(at = get_key(ld, svc, "calib")))
        at = svc;
    return at;
}

static int read_stage(loader *ld, const yaml_node_t *map, const char *path, int idx,
                      stage_cfg *s)
{
    static const char *const keys[] = {
        "name", "on", "servers", "workers", "service", "queue", "timeout_ms",
        "max_batch", "batch_timeout_ms", "priority", "keep", "retransmit", "gop",
        "cache_miss", "path", "response_tokens", "budget_ms", "tokens_per_frame",
        "keep_tokens", NULL};
    static const char *const resources[] = {"workers", "nvdec", "gpu", NULL};
    static const char *const paths[] = {"frame", "response", NULL};
    static const char *const gpu_only[] = {
        "max_batch", "batch_timeout_ms", "priority", "response_tokens", NULL};
    static const char *const workers_only[] = {"retransmit", "gop", NULL};
    char kpath[SCN_PATH_LEN], name[CFG_NAME_MAX];
    const yaml_node_t *v, *k;

    if (check_keys(ld, map, path, "a stage mapping with name and service", keys))
        return -1;
    path_key(kpath, path, "name");
    if (!(v = need(ld, map, path, "name")) || read_name(ld, v, kpath, name))
        return -1;
    cfg_stage_defaults(s, name);

    int path_idx = 0;
    path_key(kpath, path, "path");
    if ((v = get(ld, map, "path"))) {
        if (read_enum(ld, v, kpath, paths, &path_idx))
            return -1;
        s->path = path_idx == 0 ? PATH_FRAME : PATH_RESPONSE;   /* overrides the name's */
    }

    int on = 0;
    path_key(kpath, path, "on");
    if ((v = get(ld, map, "on")) && read_enum(ld, v, kpath, resources, &on))
        return -1;
    bool gpu = on == 2;                 /* nvdec is a pool of decoder engines: workers */
    s->on = gpu ? RES_GPU : RES_WORKERS;

    if (either_not_both(ld, map, path, "servers", "workers", " (workers is a synonym)"))
        return -1;
    const char *which = get(ld, map, "servers") ? "servers" : "workers";
    if ((v = get(ld, map, which))) {
        path_key(kpath, path, which);
        if (gpu)
            return fail(ld, get_key(ld, map, which), kpath,
                        "a gpu stage runs on the cluster's GPUs; remove %s", which);
        if (read_int(ld, v, kpath, 1, &s->servers))
            return -1;
    }
    if (!gpu && (k = first_key_of(ld, map, gpu_only))) {
        path_key(kpath, path, text_of(k));
        return fail(ld, k, kpath, "applies only to on: gpu stages");
    }
    if (gpu && (k = first_key_of(ld, map, workers_only))) {
        path_key(kpath, path, text_of(k));
        return fail(ld, k, kpath, "applies only to worker stages (on: workers or nvdec)");
    }

    path_key(kpath, path, "service");
    if (!(v = need(ld, map, path, "service")) || read_service(ld, v, kpath, gpu, s))
        return -1;
    path_key(kpath, path, "queue");
    if ((v = get(ld, map, "queue")) && read_queue(ld, v, kpath, s))
        return -1;
    path_key(kpath, path, "timeout_ms");
    if ((v = get(ld, map, "timeout_ms")) && read_double(ld, v, kpath, POSITIVE, &s->timeout_ms))
        return -1;

    path_key(kpath, path, "max_batch");
    if ((v = get(ld, map, "max_batch"))) {
        if (read_int(ld, v, kpath, 1, &s->max_batch))
            return -1;
        if (s->max_batch > SCN_MAX_BATCH)
            return too_large(ld, v, kpath, SCN_MAX_BATCH, "arrays are kept per batch size");
        /* a token table extends its last segment: any batch size */
        double last = s->has_table && !s->table.by_tokens ? s->table.batch[s->table.n - 1]
                                                          : INFINITY;
        const yaml_node_t *svc = get(ld, map, "service"), *ck;
        if (s->max_batch > last && svc && svc->type == YAML_MAPPING_NODE
            && (ck = get_key(ld, svc, "calib"))) {
            path_key(kpath, path, "service.calib");
            return fail(ld, ck, kpath, "max_batch %d is beyond the calibration grid (largest "
                        "batch %.0f) of %s", s->max_batch, last, ld->calib_file);
        }
        if (s->max_batch > last)
            return fail(ld, v, kpath, "max_batch %d is beyond the service table (last batch %.0f)",
                        s->max_batch, last);
    }
    path_key(kpath, path, "batch_timeout_ms");
    if ((v = get(ld, map, "batch_timeout_ms"))
        && read_double(ld, v, kpath, NONNEGATIVE, &s->batch_timeout_ms))
        return -1;
    path_key(kpath, path, "priority");
    long long prio = 0;
    if ((v = get(ld, map, "priority"))) {
        if (read_integer(ld, v, kpath, INT_MIN, INT_MAX, &prio))
            return -1;
        s->priority = (int)prio;
    }
    path_key(kpath, path, "response_tokens");
    if ((v = get(ld, map, "response_tokens")) && read_int(ld, v, kpath, 1, &s->response_tokens))
        return -1;
    if (s->response_tokens > 0 && s->has_table && s->table.by_tokens) {
        return fail(ld, table_node(ld, map, path, kpath), kpath,
                    "a decode stage (response_tokens) takes a table by batch (the active "
                    "sequences), not by tokens");
    }
    /* tokens_per_frame (encode) and keep_tokens (reduce): the tokens an item
     * carries when it leaves this stage */
    if (either_not_both(ld, map, path, "tokens_per_frame", "keep_tokens", " (they are synonyms)"))
        return -1;
    const char *tok = get(ld, map, "tokens_per_frame") ? "tokens_per_frame" : "keep_tokens";
    path_key(kpath, path, tok);
    if ((v = get(ld, map, tok)) && read_int(ld, v, kpath, 1, &s->tokens_out))
        return -1;
    path_key(kpath, path, "budget_ms");
    if ((v = get(ld, map, "budget_ms")) && read_double(ld, v, kpath, POSITIVE, &s->budget_ms))
        return -1;
    path_key(kpath, path, "keep");
    if ((v = get(ld, map, "keep")) && read_keep(ld, v, kpath, s))
        return -1;
    path_key(kpath, path, "retransmit");
    if ((v = get(ld, map, "retransmit")) && read_retransmit(ld, v, kpath, &s->retransmit))
        return -1;
    path_key(kpath, path, "gop");
    bool reorder_unset = false;
    if ((v = get(ld, map, "gop")) && read_gop(ld, v, kpath, &s->gop, &reorder_unset))
        return -1;
    if (reorder_unset)
        ld->reorder_unset |= (uint64_t)1 << idx;
    path_key(kpath, path, "cache_miss");
    if ((v = get(ld, map, "cache_miss")) && read_cache_miss(ld, v, kpath, &s->cache_miss))
        return -1;
    return 0;
}

static int read_stages(loader *ld, const yaml_node_t *list, scenario_cfg *c)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, "stages", "expected a list of stages, got %s",
                    describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n == 0)
        return fail(ld, list, "stages", "must list at least one stage");
    if (n > CFG_MAX_STAGES)
        return fail(ld, list, "stages", "must list at most %d stages, got %zu", CFG_MAX_STAGES, n);
    c->stages = calloc(n, sizeof *c->stages);
    if (!c->stages)
        return fail(ld, list, "stages", "out of memory");
    c->nstages = (int)n;            /* every dist is zeroed: cfg_free-safe */
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *st = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, "stages", i);
        if (read_stage(ld, st, ipath, (int)i, &c->stages[i]))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->stages[j].name, c->stages[i].name) == 0) {
                char npath[SCN_PATH_LEN];
                path_key(npath, ipath, "name");
                return fail(ld, get(ld, st, "name"), npath,
                            "duplicate stage name %s (also stages[%zu])",
                            quoted(c->stages[i].name, show, sizeof show), j);
            }
    }
    return 0;
}

/* The node of stage s in the (already loaded) stages list. */
static const yaml_node_t *stage_node(loader *ld, const yaml_node_t *list, int s)
{
    return yaml_document_get_node(&ld->doc, list->data.sequence.items.start[s]);
}

/* Every on: gpu stage needs cluster.gpus; a cluster that is there but not
 * a mapping is left to read_cluster to report. */
static int check_gpu_stages(loader *ld, const yaml_node_t *root, const yaml_node_t *list,
                            const scenario_cfg *c)
{
    const yaml_node_t *cl = get(ld, root, "cluster");
    if (cl && (cl->type != YAML_MAPPING_NODE || get(ld, cl, "gpus")))
        return 0;
    for (int s = 0; s < c->nstages; s++) {
        if (c->stages[s].on != RES_GPU)
            continue;
        char path[SCN_PATH_LEN], kpath[SCN_PATH_LEN];
        path_index(path, "stages", (size_t)s);
        path_key(kpath, path, "on");
        return fail(ld, get_key(ld, stage_node(ld, list, s), "on"), kpath,
                    "on: gpu needs cluster.gpus >= 1 (add cluster: {gpus: N})");
    }
    return 0;
}

/* Checks that need every stage and the workload (wherever either was
 * written): a table by tokens needs an earlier stage on its path that sets
 * the tokens items carry, and scene changes are per stream, so they need a
 * periodic workload. */
static int check_stage_flow(loader *ld, const yaml_node_t *list, const scenario_cfg *c)
{
    char path[SCN_PATH_LEN], kpath[SCN_PATH_LEN];
    for (int s = 0; s < c->nstages; s++) {
        const stage_cfg *st = &c->stages[s];
        const yaml_node_t *node = stage_node(ld, list, s);
        path_index(path, "stages", (size_t)s);
        if (st->has_table && st->table.by_tokens) {
            bool carried = false;
            for (int j = 0; j < s && !carried; j++)
                carried = c->stages[j].path == st->path && c->stages[j].tokens_out > 0;
            if (!carried) {
                return fail(ld, table_node(ld, node, path, kpath), kpath,
                            "a table by tokens needs tokens: set tokens_per_frame or "
                            "keep_tokens on an earlier stage");
            }
        }
        if (st->scene_per_min > 0 && c->workload.arrival != ARRIVAL_PERIODIC) {
            path_key(kpath, path, "keep.scene_change");
            return fail(ld, get_key(ld, get(ld, node, "keep"), "scene_change"), kpath,
                        "scene changes are per stream: they need a periodic workload "
                        "(arrival: periodic); this one is poisson");
        }
    }
    return 0;
}

/* ---- cpu: cores shared by the stages (issue 7) --------------------------- */

/* cpu: {cores: K, wake_ms: W, wake_busy: [DIST, ...], wake_held: [H, ...], handoff_ms: H,
 * timer_ms: T, timer_busy: [DIST, ...], timer_held: [H, ...], source: ideal|timer|one_thread,
 * query_source: ideal|timer, speedup: [...], stages: [NAME, ...], sleepers: [NAME, ...]}
 * (see cpu_cfg). Without `stages` every stage's threads share the cores but
 * the sleepers'. */
/* The index of the stage called name, written at node n (path names it in
 * messages); -1 with an "unknown stage" error (and a did-you-mean) if none. */
static int stage_named(loader *ld, const yaml_node_t *n, const char *path,
                       const scenario_cfg *c, const char *name)
{
    char show[SCN_SHOW_LEN + 16], all[512];
    const char *names[CFG_MAX_STAGES + 1];
    for (int s = 0; s < c->nstages; s++) {
        if (strcmp(c->stages[s].name, name) == 0)
            return s;
        names[s] = c->stages[s].name;
    }
    names[c->nstages] = NULL;
    const char *guess = closest(name, names);
    if (guess)
        fail(ld, n, path, "unknown stage %s; did you mean '%s'?", quoted(name, show, sizeof show),
             guess);
    else
        fail(ld, n, path, "unknown stage %s; stages: %s", quoted(name, show, sizeof show),
             joined(names, all, sizeof all));
    return -1;
}

/* cpu.KEY, a list by the jobs on the cores (0, 1, ...; the last for more):
 * *list NULL when absent, else a sequence of 1..CFG_MAX_WAKE_BUSY items
 * (*len of them, the key's path in path). -1 with the error reported. */
static int class_list(loader *ld, const yaml_node_t *map, const char *key, const char *example,
                      char *path, const yaml_node_t **list, size_t *len)
{
    char show[SCN_SHOW_LEN + 16];
    *list = get(ld, map, key);
    if (!*list)
        return 0;
    path_key(path, "cpu", key);
    if ((*list)->type != YAML_SEQUENCE_NODE)
        return fail(ld, *list, path, "expected a list of %s, got %s", example,
                    describe(*list, show, sizeof show));
    *len = (size_t)((*list)->data.sequence.items.top - (*list)->data.sequence.items.start);
    if (*len == 0 || *len > CFG_MAX_WAKE_BUSY)
        return fail(ld, *list, path, "must list 1 to %d, one per number of jobs on the cores "
                    "(0, 1, ...), got %zu",
                    CFG_MAX_WAKE_BUSY, *len);
    return 0;
}

/* cpu.wake_busy / cpu.timer_busy: [D0, D1, ...], the delay with k jobs on
 * the cores drawn from D_k. *n counts the ones read, so that cfg_free frees
 * them whatever happens. */
static int read_busy_list(loader *ld, const yaml_node_t *map, const char *key, dist_t *d, int *n)
{
    char path[SCN_PATH_LEN], ipath[SCN_PATH_LEN];
    const yaml_node_t *list;
    size_t len = 0;
    if (class_list(ld, map, key, "distributions such as [{dist: constant, ms: 0.03}, "
                   "{dist: exponential, mean_ms: 0.15}]", path, &list, &len) || !list)
        return list ? -1 : 0;
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        *n = (int)i + 1;
        if (read_dist(ld, e, ipath, 0, false, &d[i]))
            return -1;
    }
    return 0;
}

/* cpu.wake_held / cpu.timer_held: [h0, h1, ...], shares 0..1 by the jobs on
 * the cores. */
static int read_share_list(loader *ld, const yaml_node_t *map, const char *key, double *h, int *n)
{
    char path[SCN_PATH_LEN], ipath[SCN_PATH_LEN];
    const yaml_node_t *list;
    size_t len = 0;
    if (class_list(ld, map, key, "shares from 0 to 1 such as [0, 0.2, 0.55]", path, &list, &len)
        || !list)
        return list ? -1 : 0;
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        if (read_double(ld, e, ipath, NONNEGATIVE, &h[i]))
            return -1;
        if (h[i] > 1)
            return fail(ld, e, ipath, "a share must be from 0 to 1, got %g", h[i]);
    }
    *n = (int)len;
    return 0;
}

/* cpu.speed: {window_ms: W, factors: [f0, f1, ...]}, the cores' speed by
 * window of simulated time (each replication starting at a factor of its
 * own). The factors are kept as given. */
static int read_speed(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const char *const keys[] = {"window_ms", "factors", NULL};
    const char *path = "cpu.speed";
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {window_ms: 1000, factors: [1.03, 0.96]}", keys))
        return -1;
    if (!(v = need(ld, map, path, "window_ms"))
        || read_double(ld, v, "cpu.speed.window_ms", POSITIVE, &u->speed_window_ms))
        return -1;
    const yaml_node_t *list = need(ld, map, path, "factors");
    size_t n = 0;
    if (!list || read_positive_list(ld, list, "cpu.speed.factors", CFG_MAX_SPEED, "speeds",
                                    "[1.03, 0.96]", &u->speed, &n))
        return -1;
    u->nspeed = (int)n;
    return 0;
}

/* A list of 1 to max numbers at `path` (each as `kind` says); *n the count. */
static int read_short_list(loader *ld, const yaml_node_t *list, const char *path, sign_rule kind,
                           int max, double *x, int *n)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of numbers such as [0, 1, 10], got %s",
                    describe(list, show, sizeof show));
    size_t len = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (len == 0 || len > (size_t)max)
        return fail(ld, list, path, "must list 1 to %d numbers, got %zu", max, len);
    for (size_t i = 0; i < len; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        path_index(ipath, path, i);
        if (read_double(ld, e, ipath, kind, &x[i]))
            return -1;
    }
    *n = (int)len;
    return 0;
}

/* The n numbers read from `list` at `path` are shares: none over 1. */
static int check_shares(loader *ld, const yaml_node_t *list, const char *path, const double *x,
                        int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] > 1) {
            char ipath[SCN_PATH_LEN];
            path_index(ipath, path, (size_t)i);
            return fail(ld, yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]),
                        ipath, "must be from 0 to 1, got %g", x[i]);
        }
    return 0;
}

/* A list of 1 to CFG_MAX_STACK_SHARE numbers from 0 to 1 at `path`; *n
 * the count. */
static int read_unit_list(loader *ld, const yaml_node_t *list, const char *path, double *x, int *n)
{
    return read_short_list(ld, list, path, NONNEGATIVE, CFG_MAX_STACK_SHARE, x, n)
           || check_shares(ld, list, path, x, *n) ? -1 : 0;
}

/* cpu.stack.share as a list by load: share: [S...], share_load: [U...]
 * (as many, increasing), util_halflife_ms: H (32). */
static int read_stack_shares(loader *ld, const yaml_node_t *map, const yaml_node_t *v, cpu_cfg *u)
{
    const yaml_node_t *at = need(ld, map, "cpu.stack", "share_load");
    int n = 0, nat = 0;
    if (!at || read_unit_list(ld, v, "cpu.stack.share", u->stack_shares, &n)
        || read_unit_list(ld, at, "cpu.stack.share_load", u->stack_share_load, &nat))
        return -1;
    if (nat != n)
        return fail(ld, at, "cpu.stack.share_load", "must list one load per share (%d), got %d", n,
                    nat);
    for (int i = 1; i < n; i++)
        if (!(u->stack_share_load[i] > u->stack_share_load[i - 1])) {
            char ipath[SCN_PATH_LEN];
            path_index(ipath, "cpu.stack.share_load", (size_t)i);
            return fail(ld, at, ipath, "the loads must increase, got %g after %g",
                        u->stack_share_load[i], u->stack_share_load[i - 1]);
        }
    const yaml_node_t *h = get(ld, map, "util_halflife_ms");
    u->stack_util_halflife_ms = 32;
    if (h && read_double(ld, h, "cpu.stack.util_halflife_ms", POSITIVE, &u->stack_util_halflife_ms))
        return -1;
    u->nstack_share = n;
    u->stack_share = u->stack_shares[0];
    return 0;
}

/* A table {X: [x...], Y: [y...]} (cpu.cold, cpu.stack.through): 1 to max
 * x's, increasing, and one y per x, each as its sign rule says. */
typedef struct {
    const char *path, *example;        /* "cpu.cold", "a mapping such as ..." */
    const char *xkey, *ykey;           /* "idle_ms", "factor" */
    const char *xname, *xnames, *yname;  /* "idle time", "idle times", "factor" */
    sign_rule xkind, ykind;
    int max;
    const char *extra;                 /* NULL, or one more key the caller reads */
} table_spec;

static int read_xy_table(loader *ld, const yaml_node_t *map, const table_spec *t, double *x,
                         double *y, int *n)
{
    const char *const keys[] = {t->xkey, t->ykey, t->extra, NULL};
    char xpath[SCN_PATH_LEN], ypath[SCN_PATH_LEN], ipath[SCN_PATH_LEN];
    const yaml_node_t *xv, *yv;
    int nx = 0, ny = 0;
    snprintf(xpath, sizeof xpath, "%s.%s", t->path, t->xkey);
    snprintf(ypath, sizeof ypath, "%s.%s", t->path, t->ykey);
    if (check_keys(ld, map, t->path, t->example, keys))
        return -1;
    if (!(xv = need(ld, map, t->path, t->xkey)) || !(yv = need(ld, map, t->path, t->ykey))
        || read_short_list(ld, xv, xpath, t->xkind, t->max, x, &nx)
        || read_short_list(ld, yv, ypath, t->ykind, t->max, y, &ny))
        return -1;
    if (ny != nx)
        return fail(ld, yv, ypath, "must list one %s per %s (%d), got %d", t->yname, t->xname, nx, ny);
    for (int i = 1; i < nx; i++)
        if (!(x[i] > x[i - 1])) {
            path_index(ipath, xpath, (size_t)i);
            return fail(ld, xv, ipath, "the %s must increase, got %g after %g", t->xnames, x[i],
                        x[i - 1]);
        }
    *n = nx;
    return 0;
}

/* cpu.stack.through: {work_ms: [W...], share: [P...]}, the share of the
 * jobs started on a busy core that run through, by their work (turncal). */
static int read_through(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const table_spec t = {"cpu.stack.through",
                                 "a mapping such as {work_ms: [0.5, 1, 2], share: [1, 0.8, 0]}",
                                 "work_ms", "share", "work", "works", "share", POSITIVE, NONNEGATIVE,
                                 CFG_MAX_THROUGH, NULL};
    int n = 0;
    if (read_xy_table(ld, map, &t, u->stack_through_work_ms, u->stack_through_share, &n)
        || check_shares(ld, get(ld, map, "share"), "cpu.stack.through.share", u->stack_through_share, n))
        return -1;
    u->nstack_through = n;
    return 0;
}

/* cpu.stack.protect: {ms: P, work_ms: [W...], share: [H...]}: a woken job
 * placed beside a running one that has had its core under P ms is held
 * till it has had P, with the share H by the woken job's work (turncal). */
static int read_protect(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const table_spec t = {"cpu.stack.protect",
                                 "a mapping such as {ms: 1.35, work_ms: [0.2, 0.65, 2], "
                                 "share: [0.3, 0.7, 0.95]}",
                                 "work_ms", "share", "work", "works", "share", POSITIVE, NONNEGATIVE,
                                 CFG_MAX_THROUGH, "ms"};
    int n = 0;
    const yaml_node_t *v;
    if (read_xy_table(ld, map, &t, u->stack_protect_work_ms, u->stack_protect_share, &n)
        || check_shares(ld, get(ld, map, "share"), "cpu.stack.protect.share", u->stack_protect_share, n)
        || !(v = need(ld, map, "cpu.stack.protect", "ms"))
        || read_double(ld, v, "cpu.stack.protect.ms", NONNEGATIVE, &u->stack_protect_ms))
        return -1;
    u->nstack_protect = n;
    return 0;
}

/* cpu.stack.run: {age_ms: [A...], factor: [F...], bridge_ms: B (0.05)}, the
 * share's factor by the busy core's run age (stackcal). */
static int read_run(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const table_spec t = {"cpu.stack.run",
                                 "a mapping such as {age_ms: [0.5, 2, 8], factor: [0.5, 1, 2]}",
                                 "age_ms", "factor", "age", "ages", "factor", NONNEGATIVE,
                                 NONNEGATIVE, CFG_MAX_STACK_RUN, "bridge_ms"};
    int n = 0;
    if (read_xy_table(ld, map, &t, u->stack_run_age_ms, u->stack_run_factor, &n))
        return -1;
    const yaml_node_t *b = get(ld, map, "bridge_ms");
    u->stack_run_bridge_ms = 0.05;
    if (b && read_double(ld, b, "cpu.stack.run.bridge_ms", NONNEGATIVE, &u->stack_run_bridge_ms))
        return -1;
    u->nstack_run = n;
    return 0;
}

/* cpu.stack: {share: S or [S...] (with share_load: [U...], util_halflife_ms:
 * H), migrate_ms: M, pull_ms: P (M), switch_ms: W (0) or tick_ms: T with
 * slice_ms: L (0), through: {...} and protect: {...}, run: {...}}, placement of
 * jobs on cores and their turns on one (vlrealpipe stackcal measures the
 * placement and W, turncal T, L, the through shares and the
 * protection). */
static int read_stack(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const char *const keys[] = {"share", "share_load", "util_halflife_ms", "migrate_ms",
                                       "pull_ms", "switch_ms", "tick_ms", "slice_ms", "protect",
                                       "through", "run", NULL};
    const char *path = "cpu.stack";
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {share: 0.1, migrate_ms: 8, pull_ms: 1.5}", keys))
        return -1;
    u->nstack_share = 0;
    if (!(v = need(ld, map, path, "share")))
        return -1;
    if (v->type == YAML_SEQUENCE_NODE) {
        if (read_stack_shares(ld, map, v, u))
            return -1;
    } else {
        if (read_double(ld, v, "cpu.stack.share", NONNEGATIVE, &u->stack_share))
            return -1;
        if (u->stack_share > 1)
            return fail(ld, v, "cpu.stack.share", "a share must be from 0 to 1, got %g", u->stack_share);
        const yaml_node_t *x = get(ld, map, "share_load");
        if (!x)
            x = get(ld, map, "util_halflife_ms");
        if (x)
            return fail(ld, x, "cpu.stack", "share_load and util_halflife_ms go with a share by load "
                        "(share: [S, ...]), not a single share");
    }
    if (!(v = need(ld, map, path, "migrate_ms"))
        || read_double(ld, v, "cpu.stack.migrate_ms", NONNEGATIVE, &u->stack_migrate_ms))
        return -1;
    u->stack_pull_ms = u->stack_migrate_ms;
    if ((v = get(ld, map, "pull_ms"))
        && read_double(ld, v, "cpu.stack.pull_ms", NONNEGATIVE, &u->stack_pull_ms))
        return -1;
    u->stack_switch_ms = 0;
    if ((v = get(ld, map, "switch_ms"))
        && read_double(ld, v, "cpu.stack.switch_ms", NONNEGATIVE, &u->stack_switch_ms))
        return -1;
    if (either_not_both(ld, map, path, "switch_ms", "tick_ms",
                        ": the turns come after exponential waits or at ticks"))
        return -1;
    u->stack_tick_ms = u->stack_slice_ms = 0;
    if ((v = get(ld, map, "tick_ms"))
        && read_double(ld, v, "cpu.stack.tick_ms", POSITIVE, &u->stack_tick_ms))
        return -1;
    if ((v = get(ld, map, "slice_ms"))) {
        if (!(u->stack_tick_ms > 0))
            return fail(ld, v, "cpu.stack.slice_ms", "slice_ms goes with tick_ms (turns at ticks)");
        if (read_double(ld, v, "cpu.stack.slice_ms", NONNEGATIVE, &u->stack_slice_ms))
            return -1;
    }
    u->nstack_protect = 0;
    if ((v = get(ld, map, "protect"))) {
        if (!(u->stack_tick_ms > 0))
            return fail(ld, v, "cpu.stack.protect", "protect goes with tick_ms (turns at ticks)");
        if (read_protect(ld, v, u))
            return -1;
    }
    u->nstack_through = 0;
    if ((v = get(ld, map, "through"))) {
        if (!(u->stack_tick_ms > 0))
            return fail(ld, v, "cpu.stack.through", "through goes with tick_ms (turns at ticks)");
        if (read_through(ld, v, u))
            return -1;
    }
    u->nstack_run = 0;
    if ((v = get(ld, map, "run")) && read_run(ld, v, u))
        return -1;
    u->has_stack = 1;
    return 0;
}

/* cpu.cold: {idle_ms: [G...] (increasing), factor: [F...] (as many, > 0)}:
 * a job starting on a core idle for g ms needs factor(g) times its work
 * (vlrealpipe coldcal measures it). */
static int read_cold(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const table_spec t = {"cpu.cold",
                                 "a mapping such as {idle_ms: [0, 1, 10], factor: [1, 1.02, 1.05]}",
                                 "idle_ms", "factor", "idle time", "idle times", "factor",
                                 NONNEGATIVE, POSITIVE, CFG_MAX_COLD, NULL};
    return read_xy_table(ld, map, &t, u->cold_idle_ms, u->cold_factor, &u->ncold);
}

/* cpu.duty: {util: [U...] (increasing, in [0, 1]), factor: [F...] (as many,
 * > 0), halflife_ms: H (32)}: a job starting while the cores' recent
 * utilisation is u needs factor(u) times its work (vlrealpipe dutycal
 * measures it). */
static int read_duty(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const table_spec t = {"cpu.duty",
                                 "a mapping such as {util: [0.1, 0.5, 1], factor: [1.2, 1.05, 1]}",
                                 "util", "factor", "utilisation", "utilisations", "factor",
                                 NONNEGATIVE, POSITIVE, CFG_MAX_DUTY, "halflife_ms"};
    char ipath[SCN_PATH_LEN];
    if (read_xy_table(ld, map, &t, u->duty_util, u->duty_factor, &u->nduty))
        return -1;
    if (u->duty_util[u->nduty - 1] > 1) {
        path_index(ipath, "cpu.duty.util", (size_t)(u->nduty - 1));
        return fail(ld, get(ld, map, "util"), ipath, "a utilisation is a share of the cores, at most "
                    "1, got %g", u->duty_util[u->nduty - 1]);
    }
    const yaml_node_t *h = get(ld, map, "halflife_ms");
    u->duty_halflife_ms = 32;
    return h && read_double(ld, h, "cpu.duty.halflife_ms", POSITIVE, &u->duty_halflife_ms) ? -1 : 0;
}

/* cpu.stalls: {per_s: R (> 0), ms: DIST, poll_ms: W (>= 0, 0)}: each core's
 * spells of not being run by the host, which a core idle for less than W
 * does not see (models/stalls.h). */
static int read_stalls(loader *ld, const yaml_node_t *map, cpu_cfg *u)
{
    static const char *const keys[] = {"per_s", "ms", "poll_ms", NULL};
    char show[SCN_SHOW_LEN + 16];
    const yaml_node_t *v;
    double per_s = 0;
    if (check_keys(ld, map, "cpu.stalls", "a mapping such as {per_s: 0.25, ms: {dist: empirical, "
                   "file: stalls.samples}}", keys))
        return -1;
    if (!(v = need(ld, map, "cpu.stalls", "per_s")) || read_double(ld, v, "cpu.stalls.per_s", POSITIVE, &per_s))
        return -1;
    if (!(v = need(ld, map, "cpu.stalls", "ms")))
        return -1;
    if (v->type != YAML_MAPPING_NODE)
        return fail(ld, v, "cpu.stalls.ms", "expected a distribution such as {dist: exponential, "
                    "mean_ms: 15}, got %s", describe(v, show, sizeof show));
    if (read_dist(ld, v, "cpu.stalls.ms", 0, false, &u->stall_ms))
        return -1;
    u->stall_per_s = per_s;
    u->stall_poll_ms = 0;
    if ((v = get(ld, map, "poll_ms")) && read_double(ld, v, "cpu.stalls.poll_ms", NONNEGATIVE, &u->stall_poll_ms))
        return -1;
    return 0;
}

/* A list of stage names at `path` into *mask, each once, none of them in
 * `sleepers` (cpu.stages: a sleeper's thread is off the cores, so it cannot
 * also be on them), and with workers_only no GPU stage (cpu.sleepers: a GPU
 * stage's executor does not sleep out its work). */
static int read_stage_list(loader *ld, const yaml_node_t *list, const char *path,
                           const scenario_cfg *c, uint64_t sleepers, int workers_only,
                           uint64_t *mask)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of stage names such as [decode, "
                    "encode], got %s", describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n == 0)
        return fail(ld, list, path, "must list at least one stage");
    *mask = 0;
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *e = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const char *name = "";
        path_index(ipath, path, i);
        if (read_string(ld, e, ipath, &name))
            return -1;
        int s = stage_named(ld, e, ipath, c, name);
        if (s < 0)
            return -1;
        if (*mask >> s & 1)
            return fail(ld, e, ipath, "stage %s is listed twice", quoted(name, show, sizeof show));
        if (sleepers >> s & 1)
            return fail(ld, e, ipath, "stage %s is in cpu.sleepers: its thread sleeps off the "
                        "cores", quoted(name, show, sizeof show));
        if (workers_only && c->stages[s].on == RES_GPU)
            return fail(ld, e, ipath, "stage %s runs on a GPU: only a worker stage's threads "
                        "sleep out their service", quoted(name, show, sizeof show));
        *mask |= (uint64_t)1 << s;
    }
    return 0;
}

static int read_cpu(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {"cores", "wake_ms", "wake_busy", "wake_held", "handoff_ms",
                                       "timer_ms", "timer_busy", "timer_held", "source", "stages",
                                       "speedup", "speed", "stack", "cold", "duty", "stalls",
                                       "wake_held_until", "query_source", "sleepers", NULL};
    static const char *const sources[] = {"ideal", "timer", "one_thread", NULL};   /* CPU_SOURCE_* */
    static const char *const qsources[] = {"ideal", "timer", NULL};                /* CPU_QUERY_* */
    static const char *const untils[] = {"end", "slice", NULL};                    /* CPU_HELD_* */
    const char *path = "cpu";
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    const yaml_node_t *v;
    cpu_cfg *u = &c->cpu;
    if (check_keys(ld, map, path, "a mapping such as {cores: 2, wake_ms: 0.02}", keys))
        return -1;
    if (!(v = need(ld, map, path, "cores")) || read_int(ld, v, "cpu.cores", 1, &u->cores))
        return -1;
    if ((v = get(ld, map, "wake_ms")) && read_double(ld, v, "cpu.wake_ms", NONNEGATIVE, &u->wake_ms))
        return -1;
    if ((v = get(ld, map, "handoff_ms"))
        && read_double(ld, v, "cpu.handoff_ms", NONNEGATIVE, &u->handoff_ms))
        return -1;
    if ((v = get(ld, map, "timer_ms"))) {
        if (read_double(ld, v, "cpu.timer_ms", NONNEGATIVE, &u->timer_ms))
            return -1;
        u->has_timer = 1;
    }
    if ((v = get(ld, map, "source")) && read_enum(ld, v, "cpu.source", sources, &u->source))
        return -1;
    if ((v = get(ld, map, "query_source"))
        && read_enum(ld, v, "cpu.query_source", qsources, &u->query_source))
        return -1;
    const yaml_node_t *sp = get(ld, map, "speedup");
    if (sp) {                          /* [s1, s2, ...]: 0 < s_n <= min(n, cores) */
        if (sp->type != YAML_SEQUENCE_NODE)
            return fail(ld, sp, "cpu.speedup", "expected a list of numbers such as [1, 1.4, 1.8], "
                        "got %s", describe(sp, show, sizeof show));
        size_t n = (size_t)(sp->data.sequence.items.top - sp->data.sequence.items.start);
        if (n == 0 || n > CFG_MAX_SPEEDUP)
            return fail(ld, sp, "cpu.speedup", "must list 1 to %d numbers, got %zu",
                        CFG_MAX_SPEEDUP, n);
        for (size_t i = 0; i < n; i++) {
            const yaml_node_t *e = yaml_document_get_node(&ld->doc, sp->data.sequence.items.start[i]);
            path_index(ipath, "cpu.speedup", i);
            if (read_double(ld, e, ipath, POSITIVE, &u->speedup[i]))
                return -1;
            double most = (double)(i + 1 < (size_t)u->cores ? i + 1 : (size_t)u->cores);
            if (u->speedup[i] > most)  /* n threads do at most n cores' work, and no more than exist */
                return fail(ld, e, ipath, "%zu busy threads on %d cores cannot run faster than "
                            "%g cores, got %g", i + 1, u->cores, most, u->speedup[i]);
        }
        u->nspeedup = (int)n;
    }
    if (read_busy_list(ld, map, "wake_busy", u->wake_busy, &u->nwake_busy)
        || read_busy_list(ld, map, "timer_busy", u->timer_busy, &u->ntimer_busy)
        || read_share_list(ld, map, "wake_held", u->wake_held, &u->nwake_held)
        || read_share_list(ld, map, "timer_held", u->timer_held, &u->ntimer_held))
        return -1;
    if ((v = get(ld, map, "speed")) && read_speed(ld, v, u))
        return -1;
    if ((v = get(ld, map, "stack")) && read_stack(ld, v, u))
        return -1;
    if ((v = get(ld, map, "cold")) && read_cold(ld, v, u))
        return -1;
    if ((v = get(ld, map, "duty")) && read_duty(ld, v, u))
        return -1;
    if ((v = get(ld, map, "stalls")) && read_stalls(ld, v, u))
        return -1;
    if ((v = get(ld, map, "wake_held_until"))) {
        if (read_enum(ld, v, "cpu.wake_held_until", untils, &u->held_until))
            return -1;
        if (u->held_until == CPU_HELD_SLICE && u->nstack_protect == 0)
            return fail(ld, v, "cpu.wake_held_until", "slice needs the protected slices "
                        "(cpu.stack.protect)");
    }
    const yaml_node_t *list = get(ld, map, "sleepers");
    if (list && read_stage_list(ld, list, "cpu.sleepers", c, 0, 1, &u->sleeper_mask))
        return -1;
    u->stage_mask = (c->nstages >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << c->nstages) - 1))
                    & ~u->sleeper_mask;
    if ((list = get(ld, map, "stages"))
        && read_stage_list(ld, list, "cpu.stages", c, u->sleeper_mask, 0, &u->stage_mask))
        return -1;
    return 0;
}

/* ---- cluster ----------------------------------------------------------- */

/* The stages of one pool: names of on: gpu stages, each once. */
static int read_pool_stages(loader *ld, const yaml_node_t *list, const char *path,
                            const scenario_cfg *c, pool_cfg *p)
{
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of stage names such as [encode, reduce], "
                    "got %s", describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n == 0)
        return fail(ld, list, path, "a pool must list at least one stage");
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *v = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const char *name = "";
        path_index(ipath, path, i);
        if (read_string(ld, v, ipath, &name))
            return -1;
        int s = stage_named(ld, v, ipath, c, name);
        if (s < 0)
            return -1;
        if (c->stages[s].on != RES_GPU)
            return fail(ld, v, ipath, "stage %s runs on workers; only on: gpu stages go in pools",
                        quoted(name, show, sizeof show));
        if (p->stage_mask & ((uint64_t)1 << s))
            return fail(ld, v, ipath, "stage %s is listed twice in this pool",
                        quoted(name, show, sizeof show));
        p->stage_mask |= (uint64_t)1 << s;
    }
    return 0;
}

/* pools: {NAME: {gpus: N, stages: [...]}, ...}; GPUs are numbered in the
 * order the pools are written, and together they are the cluster. */
static int read_pools(loader *ld, const yaml_node_t *map, const yaml_node_t *stage_list,
                      scenario_cfg *c)
{
    static const char *const keys[] = {"gpus", "stages", NULL};
    const char *path = "cluster.pools";
    char ppath[SCN_PATH_LEN], kpath[SCN_PATH_LEN];
    cluster_cfg *cl = &c->cluster;
    if (expect_mapping(ld, map, path, "a mapping of pool names to {gpus: N, stages: [...]}"))
        return -1;
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n == 0)
        return fail(ld, map, path, "must name at least one pool");
    if (n > CFG_MAX_POOLS)
        return fail(ld, map, path, "at most %d pools, got %zu", CFG_MAX_POOLS, n);
    long long total = 0;
    for (size_t i = 0; i < n; i++) {
        yaml_node_pair_t *pair = map->data.mapping.pairs.start + i;
        const yaml_node_t *k = yaml_document_get_node(&ld->doc, pair->key);
        const yaml_node_t *v = yaml_document_get_node(&ld->doc, pair->value), *x;
        pool_cfg *p = &cl->pools[i];
        if (k->type != YAML_SCALAR_NODE)
            return fail(ld, k, path, "pool names must be plain strings, not a %s",
                        k->type == YAML_MAPPING_NODE ? "mapping" : "list");
        path_key(ppath, path, text_of(k));
        for (size_t j = 0; j < i; j++) {
            const yaml_node_t *k0 = yaml_document_get_node(&ld->doc, map->data.mapping.pairs.start[j].key);
            if (strcmp(text_of(k0), text_of(k)) == 0) {
                char at[160];
                return fail(ld, k, ppath, "duplicate pool name (first given at %s)",
                            given_at(ld, k0, at, sizeof at));
            }
        }
        if (read_name(ld, k, ppath, p->name)
            || check_keys(ld, v, ppath, "a pool such as {gpus: 2, stages: [encode, reduce]}", keys))
            return -1;
        path_key(kpath, ppath, "gpus");
        if (!(x = need(ld, v, ppath, "gpus")) || read_int(ld, x, kpath, 1, &p->gpus))
            return -1;
        p->first = total <= INT_MAX ? (int)total : INT_MAX;   /* > cluster.gpus: rejected below */
        total += p->gpus;
        path_key(kpath, ppath, "stages");
        if (!(x = need(ld, v, ppath, "stages")) || read_pool_stages(ld, x, kpath, c, p))
            return -1;
    }
    if (total != cl->gpus)
        return fail(ld, map, path, "the pools hold %lld GPUs in all, but cluster.gpus is %d; "
                    "they must be equal", total, cl->gpus);
    cl->npools = (int)n;

    for (int s = 0; s < c->nstages; s++) {
        if (c->stages[s].on != RES_GPU)
            continue;
        int in = 0, first = -1, second = -1;
        for (int i = 0; i < cl->npools; i++)
            if (cl->pools[i].stage_mask & ((uint64_t)1 << s)) {
                if (in++ == 0)
                    first = i;
                else if (second < 0)
                    second = i;
            }
        if (in == 1)
            continue;
        path_index(kpath, "stages", (size_t)s);
        if (in == 0)
            return fail(ld, stage_node(ld, stage_list, s), kpath, "runs on: gpu but is in no "
                        "pool of cluster.pools; a gpu stage must be in exactly one pool");
        return fail(ld, stage_node(ld, stage_list, s), kpath, "is in pools '%s' and '%s'; "
                    "a gpu stage must be in exactly one pool",
                    cl->pools[first].name, cl->pools[second].name);
    }
    return 0;
}

static int read_cluster(loader *ld, const yaml_node_t *map, const yaml_node_t *stage_list,
                        scenario_cfg *c)
{
    static const char *const keys[] = {
        "gpus", "gpu_type", "gpu_hour_usd", "placement", "gpu_policy", "pools", NULL};
    static const char *const placements[] = {"hash", "least_loaded", NULL};
    static const char *const policies[] = {"priority", "fifo", NULL};
    char show[SCN_SHOW_LEN + 16];
    cluster_cfg *cl = &c->cluster;
    const yaml_node_t *v;
    int e = 0;
    if (check_keys(ld, map, "cluster", "a mapping such as {gpus: 4, gpu_type: h100}", keys))
        return -1;
    if (!(v = need(ld, map, "cluster", "gpus")) || read_int(ld, v, "cluster.gpus", 1, &cl->gpus))
        return -1;
    if (cl->gpus > SCN_MAX_GPUS)
        return too_large(ld, v, "cluster.gpus", SCN_MAX_GPUS, "state is kept per GPU");
    if ((v = get(ld, map, "gpu_type"))) {
        const char *t = "";
        if (read_string(ld, v, "cluster.gpu_type", &t))
            return -1;
        size_t len = strlen(t);
        bool ok = len >= 1 && len < sizeof cl->gpu_type;
        for (size_t i = 0; ok && i < len; i++)
            ok = !iscntrl((unsigned char)t[i]);
        if (!ok)
            return fail(ld, v, "cluster.gpu_type", "must be 1 to %zu characters (no control "
                        "characters), got %s", sizeof cl->gpu_type - 1, quoted(t, show, sizeof show));
        copy_str(cl->gpu_type, sizeof cl->gpu_type, t);
    }
    if ((v = get(ld, map, "gpu_hour_usd"))
        && read_double(ld, v, "cluster.gpu_hour_usd", NONNEGATIVE, &cl->gpu_hour_usd))
        return -1;
    if ((v = get(ld, map, "placement"))) {
        if (read_enum(ld, v, "cluster.placement", placements, &e))
            return -1;
        cl->placement = e == 0 ? PLACE_HASH : PLACE_LEAST_LOADED;
    }
    if ((v = get(ld, map, "gpu_policy"))) {
        if (read_enum(ld, v, "cluster.gpu_policy", policies, &e))
            return -1;
        cl->policy = e == 0 ? GPU_PRIORITY : GPU_FIFO;
    }
    if ((v = get(ld, map, "pools")) && read_pools(ld, v, stage_list, c))
        return -1;
    return 0;
}

/* ---- SLA --------------------------------------------------------------- */

/* sla: [{metric: frame | response | STAGE, percentile: 50 | 90 | 95 | 99 | 99.9,
 * ms: X}, ...]; frame and response are the two paths' end-to-end latencies
 * (a stage named like one of them cannot be meant by its sojourn). */
static int read_sla(loader *ld, const yaml_node_t *list, scenario_cfg *c)
{
    static const char *const keys[] = {"metric", "percentile", "ms", NULL};
    static const double percentiles[] = {50, 90, 95, 99, 99.9};
    char ipath[SCN_PATH_LEN], kpath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    const char *metrics[CFG_MAX_STAGES + 3];
    int nm = 0;
    metrics[nm++] = "frame";
    metrics[nm++] = "response";
    for (int s = 0; s < c->nstages; s++)
        if (strcmp(c->stages[s].name, "frame") != 0 && strcmp(c->stages[s].name, "response") != 0)
            metrics[nm++] = c->stages[s].name;
    metrics[nm] = NULL;
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, "sla", "expected a list of SLA lines such as "
                    "[{metric: frame, percentile: 95, ms: 100}], got %s",
                    describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n > CFG_MAX_SLA)
        return fail(ld, list, "sla", "at most %d SLA lines, got %zu", CFG_MAX_SLA, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *line = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const yaml_node_t *v;
        sla_cfg *sl = &c->sla[i];
        int m = 0;
        path_index(ipath, "sla", i);
        if (check_keys(ld, line, ipath, "an SLA line such as {metric: frame, percentile: 95, ms: 100}",
                       keys))
            return -1;
        path_key(kpath, ipath, "metric");
        if (!(v = need(ld, line, ipath, "metric")) || read_enum(ld, v, kpath, metrics, &m))
            return -1;
        copy_str(sl->metric, sizeof sl->metric, metrics[m]);
        path_key(kpath, ipath, "percentile");
        if (!(v = need(ld, line, ipath, "percentile"))
            || read_double(ld, v, kpath, ANY, &sl->percentile))
            return -1;
        size_t p = 0;
        while (p < sizeof percentiles / sizeof percentiles[0] && sl->percentile != percentiles[p])
            p++;
        if (p == sizeof percentiles / sizeof percentiles[0])
            return fail(ld, v, kpath, "must be one of 50, 90, 95, 99, 99.9, got %s", text_of(v));
        path_key(kpath, ipath, "ms");
        if (!(v = need(ld, line, ipath, "ms")) || read_double(ld, v, kpath, POSITIVE, &sl->ms))
            return -1;
    }
    c->nsla = (int)n;
    return 0;
}

/* ---- degradation controller and alert rules ---------------------------- */

/* A fraction in [0, 1]. */
static int read_unit(loader *ld, const yaml_node_t *v, const char *path, double *out)
{
    if (read_double(ld, v, path, NONNEGATIVE, out))
        return -1;
    if (!(*out <= 1))
        return fail(ld, v, path, "must be <= 1, got %s", text_of(v));
    return 0;
}

/* An optional number under key of map: absent leaves *out as it is. */
static int read_opt(loader *ld, const yaml_node_t *map, const char *parent, const char *key,
                    sign_rule rule, double *out)
{
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v = get(ld, map, key);
    path_key(kpath, parent, key);
    return v ? read_double(ld, v, kpath, rule, out) : 0;
}

/* modes: [reduce_fps | reduce_quality | drop_response, ...], 1 to 3, each
 * once; nodes[m] is the list item of mode m. */
static int read_modes(loader *ld, const yaml_node_t *list, const char *path, degrade_cfg *d,
                      const yaml_node_t *nodes[CFG_MAX_MODES])
{
    static const char *const names[] = {"reduce_fps", "reduce_quality", "drop_response", NULL};
    static const mode_kind kinds[] = {MODE_REDUCE_FPS, MODE_REDUCE_QUALITY, MODE_DROP_RESPONSE};
    char ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of modes in escalation order, such as "
                    "[reduce_fps, reduce_quality, drop_response], got %s",
                    describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n < 1 || n > CFG_MAX_MODES)
        return fail(ld, list, path, "must list 1 to %d modes, got %zu", CFG_MAX_MODES, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *v = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        int m = 0;
        path_index(ipath, path, i);
        if (read_enum(ld, v, ipath, names, &m))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (d->modes[j] == kinds[m])
                return fail(ld, v, ipath, "mode %s is listed twice (also %s[%zu])",
                            names[m], path, j);
        d->modes[i] = kinds[m];
        nodes[i] = v;
    }
    d->nmodes = (int)n;
    return 0;
}

/* reduce_quality: {scale: {STAGE: factor, ...}}: service-time factors of
 * named stages while the mode is on. */
static int read_quality(loader *ld, const yaml_node_t *map, const char *path,
                        const scenario_cfg *c, degrade_cfg *d)
{
    static const char *const keys[] = {"scale", NULL};
    char spath[SCN_PATH_LEN], kpath[SCN_PATH_LEN];
    if (check_keys(ld, map, path, "a mapping such as {scale: {encode: 0.5}}", keys))
        return -1;
    const yaml_node_t *scale = need(ld, map, path, "scale");
    if (!scale)
        return -1;
    path_key(spath, path, "scale");
    if (expect_mapping(ld, scale, spath, "a mapping of stage names to service-time factors "
                       "such as {encode: 0.5, llm_prefill: 0.6}"))
        return -1;
    size_t n = (size_t)(scale->data.mapping.pairs.top - scale->data.mapping.pairs.start);
    if (n == 0)
        return fail(ld, scale, spath, "must name at least one stage");
    for (size_t i = 0; i < n; i++) {
        const yaml_node_pair_t *pair = scale->data.mapping.pairs.start + i;
        const yaml_node_t *k = yaml_document_get_node(&ld->doc, pair->key);
        const yaml_node_t *v = yaml_document_get_node(&ld->doc, pair->value);
        if (k->type != YAML_SCALAR_NODE)
            return fail(ld, k, spath, "stage names must be plain strings, not a %s",
                        k->type == YAML_MAPPING_NODE ? "mapping" : "list");
        const char *name = text_of(k);
        path_key(kpath, spath, name);
        for (size_t j = 0; j < i; j++) {
            const yaml_node_t *k0 = yaml_document_get_node(&ld->doc, scale->data.mapping.pairs.start[j].key);
            if (k0->type == YAML_SCALAR_NODE && strcmp(text_of(k0), name) == 0) {
                char at[160];
                return fail(ld, k, kpath, "duplicate key (first given at %s)",
                            given_at(ld, k0, at, sizeof at));
            }
        }
        int s = stage_named(ld, k, kpath, c, name);
        if (s < 0)
            return -1;
        if (read_double(ld, v, kpath, POSITIVE, &d->quality_scale[s]))
            return -1;
    }
    return 0;
}

/* degradation: {modes: [...], p99_target_ms: X, ...} (see degrade_cfg). Read
 * after the workload and the stages, wherever they were written. */
static int read_degradation(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {
        "modes", "interval_s", "window_s", "p99_target_ms", "high_water", "low_water",
        "deescalate", "cooldown_s", "reduce_fps", "reduce_quality", NULL};
    static const char *const fps_keys[] = {"fps", NULL};
    const char *path = "degradation";
    char kpath[SCN_PATH_LEN];
    const yaml_node_t *v, *mode_node[CFG_MAX_MODES] = {0};
    const workload_cfg *w = &c->workload;
    degrade_cfg *d = &c->degrade;
    bool has[CFG_MAX_MODES] = {false};

    if (check_keys(ld, map, path, "a mapping such as {modes: [reduce_fps], p99_target_ms: 150, "
                   "reduce_fps: {fps: 10}}", keys))
        return -1;
    path_key(kpath, path, "modes");
    if (!(v = need(ld, map, path, "modes")) || read_modes(ld, v, kpath, d, mode_node))
        return -1;
    for (int m = 0; m < d->nmodes; m++) {
        has[d->modes[m]] = true;
        path_index(kpath, "degradation.modes", (size_t)m);
        if (d->modes[m] == MODE_REDUCE_FPS && w->arrival != ARRIVAL_PERIODIC)
            return fail(ld, mode_node[m], kpath, "reduce_fps needs a periodic workload "
                        "(arrival: periodic); this one is poisson");
        if (d->modes[m] == MODE_DROP_RESPONSE && !(w->proactive_per_min > 0))
            return fail(ld, mode_node[m], kpath, "drop_response has nothing to drop: "
                        "workload.proactive_per_min is 0");
    }

    if (read_opt(ld, map, path, "interval_s", POSITIVE, &d->interval_s)
        || read_opt(ld, map, path, "window_s", POSITIVE, &d->window_s))
        return -1;
    if (!(d->window_s >= d->interval_s)) {
        if ((v = get(ld, map, "window_s")))
            return fail(ld, v, "degradation.window_s", "must be >= interval_s (%.10g), got %s",
                        d->interval_s, text_of(v));
        return fail(ld, get(ld, map, "interval_s"), "degradation.interval_s",
                    "must be <= window_s (%.10g, the default), got %s", d->window_s,
                    text_of(get(ld, map, "interval_s")));
    }
    if (!(v = need(ld, map, path, "p99_target_ms"))
        || read_double(ld, v, "degradation.p99_target_ms", POSITIVE, &d->p99_target_ms))
        return -1;

    const yaml_node_t *hw = get(ld, map, "high_water"), *lw = get(ld, map, "low_water");
    if ((hw && read_unit(ld, hw, "degradation.high_water", &d->high_water))
        || (lw && read_unit(ld, lw, "degradation.low_water", &d->low_water)))
        return -1;
    if (!(d->low_water < d->high_water)) {
        bool at_high = hw && (!lw || hw->start_mark.index > lw->start_mark.index);
        if (at_high)
            return fail(ld, hw, "degradation.high_water", "must be > low_water (%.10g), got %s",
                        d->low_water, text_of(hw));
        return fail(ld, lw, "degradation.low_water", "must be < high_water (%.10g), got %s",
                    d->high_water, text_of(lw));
    }
    if ((v = get(ld, map, "deescalate"))) {
        if (read_double(ld, v, "degradation.deescalate", POSITIVE, &d->deescalate))
            return -1;
        if (!(d->deescalate <= 1))
            return fail(ld, v, "degradation.deescalate", "must be <= 1, got %s", text_of(v));
    }
    if (read_opt(ld, map, path, "cooldown_s", NONNEGATIVE, &d->cooldown_s))
        return -1;

    /* Each mode's parameters: required with the mode, an error without it. */
    const yaml_node_t *rf = get(ld, map, "reduce_fps");
    if (rf && !has[MODE_REDUCE_FPS])
        return fail(ld, get_key(ld, map, "reduce_fps"), "degradation.reduce_fps",
                    "applies only when reduce_fps is among the modes");
    if (!rf && has[MODE_REDUCE_FPS])
        return fail(ld, map, path, "missing required key 'reduce_fps' (the mode reduce_fps "
                    "needs {fps: N}, the frames per second per stream it keeps)");
    if (rf) {
        if (check_keys(ld, rf, "degradation.reduce_fps", "a mapping such as {fps: 10}", fps_keys)
            || !(v = need(ld, rf, "degradation.reduce_fps", "fps"))
            || read_double(ld, v, "degradation.reduce_fps.fps", POSITIVE, &d->fps))
            return -1;
        if (!(d->fps < w->fps))
            return fail(ld, v, "degradation.reduce_fps.fps", "must be < workload.fps (%.10g), "
                        "got %s", w->fps, text_of(v));
    }
    const yaml_node_t *rq = get(ld, map, "reduce_quality");
    if (rq && !has[MODE_REDUCE_QUALITY])
        return fail(ld, get_key(ld, map, "reduce_quality"), "degradation.reduce_quality",
                    "applies only when reduce_quality is among the modes");
    if (!rq && has[MODE_REDUCE_QUALITY])
        return fail(ld, map, path, "missing required key 'reduce_quality' (the mode "
                    "reduce_quality needs {scale: {STAGE: factor, ...}})");
    if (rq && read_quality(ld, rq, "degradation.reduce_quality", c, d))
        return -1;
    return 0;
}

/* alerts: {window_s, p99_sla_factor, drop_rate, gpu_util_below, gpu_util_for_s,
 * p99_p95_ratio}, all optional (see alert_cfg). */
static int read_alerts(loader *ld, const yaml_node_t *map, alert_cfg *a)
{
    static const char *const keys[] = {
        "window_s", "p99_sla_factor", "drop_rate", "gpu_util_below", "gpu_util_for_s",
        "p99_p95_ratio", NULL};
    const char *path = "alerts";
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {window_s: 60, drop_rate: 0.01}", keys))
        return -1;
    if (read_opt(ld, map, path, "window_s", POSITIVE, &a->window_s)
        || read_opt(ld, map, path, "p99_sla_factor", POSITIVE, &a->p99_sla_factor)
        || ((v = get(ld, map, "drop_rate")) && read_unit(ld, v, "alerts.drop_rate", &a->drop_rate))
        || ((v = get(ld, map, "gpu_util_below"))
            && read_unit(ld, v, "alerts.gpu_util_below", &a->gpu_util_below))
        || read_opt(ld, map, path, "gpu_util_for_s", POSITIVE, &a->gpu_util_for_s)
        || read_opt(ld, map, path, "p99_p95_ratio", POSITIVE, &a->p99_p95_ratio))
        return -1;
    return 0;
}

/* The control tick is at least SCN_MIN_INTERVAL_S, and each window it keeps
 * (degradation.window_s, alerts.window_s, alerts.gpu_util_for_s) spans at
 * most SCN_MAX_SLOTS ticks: each tick of a window holds a histogram. */
static int check_windows(loader *ld, const yaml_node_t *root, const scenario_cfg *c)
{
    static const char *const sect[] = {"degradation", "alerts", "alerts"};
    static const char *const keys[] = {"window_s", "window_s", "gpu_util_for_s"};
    const double spans[] = {c->degrade.window_s, c->alerts.window_s, c->alerts.gpu_util_for_s};
    const yaml_node_t *dg = get(ld, root, "degradation"), *al = get(ld, root, "alerts");
    const yaml_node_t *iv = dg ? get(ld, dg, "interval_s") : NULL;
    double tick = c->degrade.interval_s;
    if (tick < SCN_MIN_INTERVAL_S)
        return fail(ld, iv ? iv : root, "degradation.interval_s", "must be >= %g (the control "
                    "tick), got %.10g", SCN_MIN_INTERVAL_S, tick);
    for (int k = 0; k < 3; k++) {
        if (!(spans[k] / tick > SCN_MAX_SLOTS))
            continue;
        const yaml_node_t *m = k == 0 ? dg : al, *v = m ? get(ld, m, keys[k]) : NULL;
        char kpath[SCN_PATH_LEN];
        path_key(kpath, v || !iv ? sect[k] : "degradation", v || !iv ? keys[k] : "interval_s");
        return fail(ld, v ? v : iv ? iv : root, kpath, "%s.%s (%.10g s) spans more than %d "
                    "control intervals of %.10g s (degradation.interval_s); each holds a "
                    "histogram", sect[k], keys[k], spans[k], SCN_MAX_SLOTS, tick);
    }
    return 0;
}

/* Whole-scenario checks on the two paths: frames need a stage, and queries
 * (or proactive triggers) need a response-path stage. */
static int check_paths(loader *ld, const yaml_node_t *root, const yaml_node_t *stage_list,
                       const scenario_cfg *c)
{
    bool frame = false, response = false;
    for (int s = 0; s < c->nstages; s++) {
        frame |= c->stages[s].path == PATH_FRAME;
        response |= c->stages[s].path == PATH_RESPONSE;
    }
    if (!frame)
        return fail(ld, stage_list, "stages", "no stage serves frames: every stage is on the "
                    "response path");
    const workload_cfg *w = &c->workload;
    if (response || !(w->queries_per_min + w->proactive_per_min > 0))
        return 0;
    const yaml_node_t *wl = get(ld, root, "workload");
    const yaml_node_t *q = get(ld, wl, "queries_per_min"), *pr = get(ld, wl, "proactive_per_min");
    bool at_q = w->queries_per_min > 0
             && !(w->proactive_per_min > 0 && pr->start_mark.index < q->start_mark.index);
    return fail(ld, at_q ? q : pr, at_q ? "workload.queries_per_min" : "workload.proactive_per_min",
                "queries need a stage on the response path (path: response, or a stage "
                "named llm_decode or response)");
}

/* ---- canary rollout (issue 6) -------------------------------------------- */

/* canary.variant.stages.NAME: {service_scale: x, service: {dist: ...}}: the
 * variant's overrides of one frame-path stage. */
static int read_canary_stage(loader *ld, const yaml_node_t *map, const char *path, int s,
                             scenario_cfg *c)
{
    static const char *const keys[] = {"service_scale", "service", NULL};
    char kpath[SCN_PATH_LEN];
    canary_cfg *k = &c->canary;
    const stage_cfg *st = &c->stages[s];
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {service_scale: 1.2} or "
                   "{service: {dist: lognormal, mean_ms: 9, sd_ms: 3}}", keys))
        return -1;
    if (!get(ld, map, "service_scale") && !get(ld, map, "service"))
        return fail(ld, map, path, "give service_scale, service or both");
    if (st->path != PATH_FRAME)
        return fail(ld, map, path, "stage %s is on the response path; the canary covers the "
                    "frame path only", st->name);
    if (read_opt(ld, map, path, "service_scale", POSITIVE, &k->scale[s]))
        return -1;
    if (!(v = get(ld, map, "service")))
        return 0;
    path_key(kpath, path, "service");
    if (st->on == RES_GPU && st->has_table)
        return fail(ld, v, kpath, "stage %s takes its batch times from a table; a variant "
                    "can only scale them (service_scale)", st->name);
    if (k->ndists == CFG_MAX_CANARY_DISTS)
        return fail(ld, v, kpath, "at most %d variant distributions", CFG_MAX_CANARY_DISTS);
    dist_t *d = &k->dists[k->ndists];
    if (read_dist(ld, v, kpath, 0, false, d)) {
        dist_free(d);
        return -1;
    }
    k->dist_of[s] = (signed char)k->ndists++;
    return 0;
}

/* canary.variant: {stages: {NAME: {...}, ...}}. */
static int read_canary_variant(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {"stages", NULL};
    const char *path = "canary.variant";
    char kpath[SCN_PATH_LEN], all[512];
    const char *names[CFG_MAX_STAGES + 1];
    for (int s = 0; s < c->nstages; s++)
        names[s] = c->stages[s].name;
    names[c->nstages] = NULL;
    if (check_keys(ld, map, path, "a mapping such as {stages: {encode: {service_scale: 1.2}}}",
                   keys))
        return -1;
    const yaml_node_t *stages = need(ld, map, path, "stages");
    if (!stages || check_keys(ld, stages, "canary.variant.stages", "a mapping of stage names "
                              "to overrides such as {encode: {service_scale: 1.2}}", names))
        return -1;
    if (stages->data.mapping.pairs.top == stages->data.mapping.pairs.start)
        return fail(ld, stages, "canary.variant.stages", "must name at least one stage; "
                    "stages: %s", joined(names, all, sizeof all));
    for (yaml_node_pair_t *p = stages->data.mapping.pairs.start;
         p < stages->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(&ld->doc, p->key);
        int s = 0;
        while (strcmp(c->stages[s].name, text_of(k)) != 0)
            s++;                         /* check_keys made sure it is there */
        path_key(kpath, "canary.variant.stages", text_of(k));
        if (read_canary_stage(ld, yaml_document_get_node(&ld->doc, p->value), kpath, s, c))
            return -1;
    }
    return 0;
}

/* canary.steps: [{pct, hold_s}, ...], pct non-decreasing in (0, 100]. */
static int read_canary_steps(loader *ld, const yaml_node_t *list, canary_cfg *k)
{
    static const char *const keys[] = {"pct", "hold_s", NULL};
    const char *path = "canary.steps";
    char ipath[SCN_PATH_LEN], kpath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of steps such as [{pct: 1, hold_s: 3600}, "
                    "{pct: 5, hold_s: 3600}], got %s", describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n < 1 || n > CFG_MAX_CANARY_STEPS)
        return fail(ld, list, path, "must hold 1 to %d steps, got %zu", CFG_MAX_CANARY_STEPS, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *m = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const yaml_node_t *v;
        canary_step_cfg *st = &k->steps[i];
        path_index(ipath, path, i);
        if (check_keys(ld, m, ipath, "a mapping such as {pct: 5, hold_s: 3600}", keys))
            return -1;
        path_key(kpath, ipath, "pct");
        if (!(v = need(ld, m, ipath, "pct")) || read_double(ld, v, kpath, POSITIVE, &st->pct))
            return -1;
        if (!(st->pct <= 100))
            return fail(ld, v, kpath, "must be <= 100 (a percentage of sessions), got %s",
                        text_of(v));
        if (i > 0 && st->pct < k->steps[i - 1].pct)
            return fail(ld, v, kpath, "must be >= the previous step's pct (%.10g): a rollout "
                        "only widens", k->steps[i - 1].pct);
        path_key(kpath, ipath, "hold_s");
        if (!(v = need(ld, m, ipath, "hold_s")) || read_double(ld, v, kpath, POSITIVE, &st->hold_s))
            return -1;
        if (st->hold_s > SCN_MAX_SECONDS)
            return too_large(ld, v, kpath, SCN_MAX_SECONDS, "the millisecond clock must still "
                             "resolve 1 us");
    }
    k->nsteps = (int)n;
    return 0;
}

/* canary.gates: {p99_ratio, drop_rate, drop_ratio, gpu_util, min_frames}. */
static int read_canary_gates(loader *ld, const yaml_node_t *map, canary_cfg *k)
{
    static const char *const keys[] = {
        "p99_ratio", "drop_rate", "drop_ratio", "gpu_util", "min_frames", NULL};
    const char *path = "canary.gates";
    const yaml_node_t *v;
    long long mf = 0;
    if (check_keys(ld, map, path, "a mapping such as {p99_ratio: 1.3, drop_rate: 0.02, "
                   "gpu_util: 0.9, min_frames: 10000}", keys))
        return -1;
    if (read_opt(ld, map, path, "p99_ratio", NONNEGATIVE, &k->p99_ratio)
        || ((v = get(ld, map, "drop_rate")) && read_unit(ld, v, "canary.gates.drop_rate", &k->drop_rate))
        || read_opt(ld, map, path, "drop_ratio", NONNEGATIVE, &k->drop_ratio)
        || ((v = get(ld, map, "gpu_util")) && read_unit(ld, v, "canary.gates.gpu_util", &k->gpu_util)))
        return -1;
    if ((v = get(ld, map, "min_frames"))) {
        if (read_integer(ld, v, "canary.gates.min_frames", 1, LONG_MAX, &mf))
            return -1;
        k->min_frames = (long)mf;
    }
    return 0;
}

/* canary: {variant, steps, gates} (see canary_cfg); read after the stages
 * and the cluster. Without variant the variant is the baseline itself. */
static int read_canary(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {"variant", "steps", "gates", NULL};
    const yaml_node_t *v;
    if (check_keys(ld, map, "canary", "a mapping such as {variant: {stages: {encode: "
                   "{service_scale: 1.2}}}, steps: [{pct: 1, hold_s: 3600}], gates: "
                   "{p99_ratio: 1.3}}", keys))
        return -1;
    if (!(v = need(ld, map, "canary", "steps")) || read_canary_steps(ld, v, &c->canary))
        return -1;
    if ((v = get(ld, map, "variant")) && read_canary_variant(ld, v, c))
        return -1;
    if ((v = get(ld, map, "gates")) && read_canary_gates(ld, v, &c->canary))
        return -1;
    return 0;
}

/* ---- overrides: scalars set in the document before it is read ----------- */

/* scn_load_ex edits the parsed document, then reads it like any other: an
 * override replaces the scalar at its key path, or adds it (and the
 * mappings on its way) when missing. The nodes it makes are marked (see
 * override_of) so that a message about them names the override instead of
 * a file position; they also count as written after everything in the
 * file. The same walk, without editing, checks the keys of sweep axes. */

#define OV_MAX_PARTS 32

typedef struct {
    bool is_index;              /* [N] rather than a name */
    size_t index;
    char name[128];
} key_part;

typedef struct {
    char path[SCN_PATH_LEN];    /* where the walk stopped, as messages name it */
    char msg[256];
} walk_err;

/* The short names of scn_override: fps, streams, gpus. */
static const char *full_key(const char *key)
{
    static const char *const shorts[][2] = {
        {"fps", "workload.fps"}, {"streams", "workload.streams"}, {"gpus", "cluster.gpus"}};
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++)
        if (strcmp(key, shorts[i][0]) == 0)
            return shorts[i][1];
    return key;
}

/* Split "stages.encode.max_batch" or "stages[2].servers" into names and
 * indices; NULL, or what is wrong with key. */
static const char *split_key(const char *key, key_part *t, int *nt)
{
    const char *p = key;
    *nt = 0;
    if (!*p)
        return "the key is empty";
    for (;;) {
        size_t n = strcspn(p, ".[]");
        if (n == 0)
            return "an empty part (each part is a name, optionally followed by [N])";
        if (n >= sizeof t->name)
            return "a part longer than 127 characters";
        if (*nt == OV_MAX_PARTS)
            return "too many parts";
        key_part *k = &t[(*nt)++];
        k->is_index = false;
        memcpy(k->name, p, n);
        k->name[n] = '\0';
        for (p += n; *p == '['; ) {
            size_t d = strspn(++p, "0123456789");
            if (d == 0 || d > 9 || p[d] != ']')
                return "an index must be [N] with N a number, such as [0]";
            if (*nt == OV_MAX_PARTS)
                return "too many parts";
            k = &t[(*nt)++];
            k->is_index = true;
            k->index = strtoul(p, NULL, 10);
            p += d + 1;
        }
        if (*p == '\0')
            return NULL;
        if (*p != '.')
            return "expected '.' or '[' after a name";
        p++;
    }
}

static int walk_fail(walk_err *we, const char *path, const char *fmt, ...)
{
    va_list ap;
    copy_str(we->path, sizeof we->path, path);
    va_start(ap, fmt);
    vsnprintf(we->msg, sizeof we->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Mark node id as made by override oi (see override_of). */
static int mark_override(loader *ld, int id, long oi)
{
    yaml_node_t *n = yaml_document_get_node(&ld->doc, id);
    if (n) {
        yaml_mark_t m = {.index = ld->text_len + 1 + (size_t)oi};
        n->start_mark = n->end_mark = m;
    }
    return id;
}

/* A plain scalar made by override oi; 0 when libyaml refuses (out of
 * memory, or text that is not UTF-8). */
static int new_scalar(loader *ld, const char *text, long oi)
{
    int id = yaml_document_add_scalar(&ld->doc, NULL, (const yaml_char_t *)text, -1,
                                      YAML_PLAIN_SCALAR_STYLE);
    return id ? mark_override(ld, id, oi) : 0;
}

/* Check that the node a key path ends at may be overridden: a scalar. */
static int target_scalar(loader *ld, int id, const char *path, walk_err *we)
{
    const yaml_node_t *n = yaml_document_get_node(&ld->doc, id);
    if (n->type == YAML_SCALAR_NODE)
        return 0;
    return walk_fail(we, path, "holds a %s, not a scalar; an override sets one scalar value",
                     n->type == YAML_MAPPING_NODE ? "mapping" : "list");
}

/* The stage named name in the stages list (a node id), or 0 with the
 * error in we. */
static int stage_by_name(loader *ld, const yaml_node_t *list, const char *name, size_t *idx,
                         walk_err *we)
{
    const char *names[CFG_MAX_STAGES + 1];
    char show[SCN_SHOW_LEN + 16], all[512];
    int nn = 0;
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *st = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        const yaml_node_t *nm = st && st->type == YAML_MAPPING_NODE ? get(ld, st, "name") : NULL;
        if (!nm || nm->type != YAML_SCALAR_NODE)
            continue;
        if (strcmp(text_of(nm), name) == 0) {
            *idx = i;
            return list->data.sequence.items.start[i];
        }
        if (nn < CFG_MAX_STAGES)
            names[nn++] = text_of(nm);
    }
    names[nn] = NULL;
    const char *guess = closest(name, names);
    if (guess)
        walk_fail(we, "stages", "no stage named %s; did you mean '%s'?",
                  quoted(name, show, sizeof show), guess);
    else
        walk_fail(we, "stages", "no stage named %s; stages: %s", quoted(name, show, sizeof show),
                  joined(names, all, sizeof all));
    return 0;
}

/* Walk key (a full path, no short name) through the document. With oi >= 0,
 * set it to value as override oi: replace the scalar there (its key too, so
 * that messages about either name the override), or add it and the
 * mappings missing on its way. With oi < 0, only check that the walk would
 * succeed (sweep axes). canon gets the path as messages name it:
 * "stages.encode.max_batch" -> "stages[3].max_batch". The root is a mapping. */
static int walk(loader *ld, const char *key, const char *value, long oi, char *canon,
                walk_err *we)
{
    key_part t[OV_MAX_PARTS];
    char next[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    int nt = 0, cur = 1;            /* node 1 is the root */
    bool apply = oi >= 0, missing = false;
    const char *bad = split_key(key, t, &nt);
    canon[0] = '\0';
    if (bad)
        return walk_fail(we, key, "malformed key: %s", bad);
    for (int i = 0; i < nt; i++) {
        const key_part *k = &t[i];
        bool last = i == nt - 1;
        bool index_next = !last && t[i + 1].is_index;
        if (k->is_index)
            path_index(next, canon, k->index);
        else
            path_key(next, canon, k->name);
        yaml_node_t *n = yaml_document_get_node(&ld->doc, cur);
        if (missing) {                          /* dry run below a key that would be added */
            if (k->is_index)
                return walk_fail(we, canon, "is not in the scenario, and an override cannot "
                                 "add list items");
        } else if (k->is_index) {
            if (n->type != YAML_SEQUENCE_NODE)
                return walk_fail(we, canon, "expected a list to take item [%zu] of, got %s",
                                 k->index, describe(n, show, sizeof show));
            size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
            if (k->index >= len)
                return walk_fail(we, canon, "has %zu item%s; there is no [%zu]", len,
                                 len == 1 ? "" : "s", k->index);
            int item = n->data.sequence.items.start[k->index];
            if (last && target_scalar(ld, item, next, we))
                return -1;
            if (last && apply) {
                int id = new_scalar(ld, value, oi);
                if (!id)
                    return walk_fail(we, next, "cannot set the value (not UTF-8, or out of memory)");
                n = yaml_document_get_node(&ld->doc, cur);      /* nodes may have moved */
                n->data.sequence.items.start[k->index] = id;
            }
            cur = item;
        } else if (n->type == YAML_SEQUENCE_NODE && i == 1 && strcmp(t[0].name, "stages") == 0) {
            size_t s = 0;                       /* stages.NAME: a stage by its name */
            int item = stage_by_name(ld, n, k->name, &s, we);
            if (!item)
                return -1;
            path_index(next, "stages", s);
            if (last && target_scalar(ld, item, next, we))
                return -1;
            cur = item;
        } else if (n->type == YAML_MAPPING_NODE) {
            yaml_node_pair_t *p = n->data.mapping.pairs.start;
            while (p < n->data.mapping.pairs.top) {
                const yaml_node_t *pk = yaml_document_get_node(&ld->doc, p->key);
                if (pk && pk->type == YAML_SCALAR_NODE && strcmp(text_of(pk), k->name) == 0)
                    break;
                p++;
            }
            if (p < n->data.mapping.pairs.top) {
                size_t pi = (size_t)(p - n->data.mapping.pairs.start);
                int v = p->value;
                if (last && target_scalar(ld, v, next, we))
                    return -1;
                if (last && apply) {
                    int kid = new_scalar(ld, k->name, oi), vid = kid ? new_scalar(ld, value, oi) : 0;
                    if (!vid)
                        return walk_fail(we, next, "cannot set the value (not UTF-8, or out of memory)");
                    n = yaml_document_get_node(&ld->doc, cur);  /* nodes may have moved */
                    n->data.mapping.pairs.start[pi].key = kid;
                    n->data.mapping.pairs.start[pi].value = vid;
                }
                cur = v;
            } else if (index_next) {
                return walk_fail(we, next, "is not in the scenario, and an override cannot add "
                                 "list items");
            } else if (!apply) {
                missing = true;
            } else {
                int kid = new_scalar(ld, k->name, oi), vid = 0;
                if (kid)
                    vid = last ? new_scalar(ld, value, oi)
                               : yaml_document_add_mapping(&ld->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
                if (!vid || !mark_override(ld, vid, oi)
                    || !yaml_document_append_mapping_pair(&ld->doc, cur, kid, vid))
                    return walk_fail(we, next, "cannot add the key (not UTF-8, or out of memory)");
                cur = vid;
            }
        } else if (n->type == YAML_SEQUENCE_NODE) {
            return walk_fail(we, canon, "is a list; select an item by index, as in %s[0]", canon);
        } else {
            return walk_fail(we, canon, "expected a mapping holding '%s', got %s", k->name,
                             describe(n, show, sizeof show));
        }
        copy_str(canon, SCN_PATH_LEN, next);
    }
    return 0;
}

/* Apply the loader's overrides to its document, in order (a later one
 * wins). A root that is not a mapping is left for read_root to report. */
static int apply_overrides(loader *ld)
{
    const yaml_node_t *root = yaml_document_get_root_node(&ld->doc);
    if (!root || root->type != YAML_MAPPING_NODE)
        return 0;
    for (size_t i = 0; i < ld->nov; i++) {
        char canon[SCN_PATH_LEN];
        walk_err we;
        if (walk(ld, full_key(ld->ov[i].key), ld->ov[i].value, (long)i, canon, &we))
            return fail_override(ld, (long)i, we.path, "%s", we.msg);
    }
    return 0;
}

/* sweep: {KEY: [VALUE, ...], ...}: the axes of a parameter sweep. Each KEY
 * is an override key (short names too) and must resolve in this scenario
 * as an override would (the stage exists, the path goes through mappings);
 * the values are scalars kept as the text written, and are checked only
 * when a point (the scenario loaded with one override per axis) is loaded.
 * vlsim run ignores the axes. */
static int read_sweep(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    const char *path = "sweep";
    char kpath[SCN_PATH_LEN], ipath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    char canon[CFG_MAX_AXES][SCN_PATH_LEN];
    if (expect_mapping(ld, map, path, "a mapping of override keys to lists of values, such "
                       "as {fps: [10, 15, 30], stages.encode.max_batch: [1, 4, 8]}"))
        return -1;
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n == 0)
        return fail(ld, map, path, "must name at least one axis");
    if (n > CFG_MAX_AXES)
        return fail(ld, map, path, "at most %d axes, got %zu", CFG_MAX_AXES, n);
    for (size_t a = 0; a < n; a++) {
        const yaml_node_pair_t *pair = map->data.mapping.pairs.start + a;
        const yaml_node_t *k = yaml_document_get_node(&ld->doc, pair->key);
        const yaml_node_t *list = yaml_document_get_node(&ld->doc, pair->value);
        sweep_axis *ax = &c->axes[a];
        walk_err we;
        if (k->type != YAML_SCALAR_NODE)
            return fail(ld, k, path, "axis keys must be plain strings, not a %s",
                        k->type == YAML_MAPPING_NODE ? "mapping" : "list");
        path_key(kpath, path, text_of(k));
        for (size_t b = 0; b < a; b++) {
            const yaml_node_t *k0 = yaml_document_get_node(&ld->doc, map->data.mapping.pairs.start[b].key);
            if (strcmp(text_of(k0), text_of(k)) == 0) {
                char at[160];
                return fail(ld, k, kpath, "duplicate key (first given at %s)",
                            given_at(ld, k0, at, sizeof at));
            }
        }
        if (strlen(text_of(k)) >= sizeof ax->key)
            return fail(ld, k, kpath, "an axis key may be at most %zu characters",
                        sizeof ax->key - 1);
        if (walk(ld, full_key(text_of(k)), NULL, -1, canon[a], &we))
            return fail(ld, k, kpath, "not an override key for this scenario: %s%s%s", we.path,
                        *we.path ? ": " : "", we.msg);
        for (size_t b = 0; b < a; b++)
            if (strcmp(canon[b], canon[a]) == 0)
                return fail(ld, k, kpath, "sets %s, as axis '%s' does", canon[a], c->axes[b].key);
        copy_str(ax->key, sizeof ax->key, text_of(k));

        if (list->type != YAML_SEQUENCE_NODE)
            return fail(ld, list, kpath, "expected a list of values such as [10, 15, 30], got %s",
                        describe(list, show, sizeof show));
        size_t nv = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
        if (nv < 1 || nv > CFG_MAX_AXIS_VALUES)
            return fail(ld, list, kpath, "must hold 1 to %d values, got %zu", CFG_MAX_AXIS_VALUES, nv);
        for (size_t i = 0; i < nv; i++) {
            const yaml_node_t *v = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
            path_index(ipath, kpath, i);
            if (v->type != YAML_SCALAR_NODE || is_null(v))
                return fail(ld, v, ipath, "expected a scalar value, got %s",
                            describe(v, show, sizeof show));
            if (strlen(text_of(v)) >= sizeof ax->values[i])
                return fail(ld, v, ipath, "a value may be at most %zu characters, got %s",
                            sizeof ax->values[i] - 1, quoted(text_of(v), show, sizeof show));
            for (size_t j = 0; j < i; j++)
                if (strcmp(ax->values[j], text_of(v)) == 0)
                    return fail(ld, v, ipath, "value %s is listed twice (also %s[%zu])",
                                quoted(text_of(v), show, sizeof show), kpath, j);
            copy_str(ax->values[i], sizeof ax->values[i], text_of(v));
        }
        ax->nvalues = (int)nv;
    }
    c->naxes = (int)n;
    return 0;
}

/* warmup_s: N, or warmup: auto | N, not both. */
static int read_warmup(loader *ld, const yaml_node_t *root, scenario_cfg *c)
{
    const yaml_node_t *ws = get(ld, root, "warmup_s"), *w = get(ld, root, "warmup");
    if (ws && w) {
        bool w_later = w->start_mark.index > ws->start_mark.index;
        return fail(ld, w_later ? w : ws, w_later ? "warmup" : "warmup_s",
                    "give either warmup or warmup_s, not both");
    }
    if (ws)
        return read_double(ld, ws, "warmup_s", NONNEGATIVE, &c->warmup_s);
    if (!w)
        return 0;
    if (w->type == YAML_SCALAR_NODE && strcmp(text_of(w), "auto") == 0) {
        c->warmup_auto = true;
        return 0;
    }
    double x;
    if (is_plain(w) && !is_null(w) && !is_bool(w) && !parse_decimal(text_of(w), &x)
        && !nonfinite_spelling(text_of(w))) {
        char show[SCN_SHOW_LEN + 16];
        return fail(ld, w, "warmup", "expected 'auto' or a number of seconds, got %s",
                    quoted(text_of(w), show, sizeof show));
    }
    return read_double(ld, w, "warmup", NONNEGATIVE, &c->warmup_s);
}

/* ---- fleet (issue 6): workload.profile and autoscale ---------------------
 * Distributions in seconds (session_s, cold_start_s): the unit is in the
 * key's name, so their parameters are plain (mean, min, max, ...); they are
 * stored in ms like every dist_t. */

static int read_dist_s(loader *ld, const yaml_node_t *map, const char *path, dist_t *d)
{
    static const char *const keys[] = {"dist", "value", "mean", "sd", "min", "max", "shape",
                                       "scale", NULL};
    static const char *const names[] = {"constant", "exponential", "uniform", "lognormal",
                                        "gamma", "weibull", "pareto", NULL};
    static const char *const takes[][3] = {
        {"value"}, {"mean"}, {"min", "max"}, {"mean", "sd"}, {"mean", "sd"},
        {"shape", "scale"}, {"shape", "min"}};
    char kpath[SCN_PATH_LEN], list[128];
    memset(d, 0, sizeof *d);
    if (check_keys(ld, map, path, "a distribution in seconds such as {dist: exponential, mean: 600}",
                   keys))
        return -1;
    const yaml_node_t *dn = need(ld, map, path, "dist");
    int k = 0;
    path_key(kpath, path, "dist");
    if (!dn || read_choice(ld, dn, kpath, names, "distribution (in seconds)", true, &k))
        return -1;
    const char *allowed[4] = {"dist", takes[k][0], takes[k][1], NULL};
    const yaml_node_t *bad = foreign_key(ld, map, allowed);
    if (bad) {
        path_key(kpath, path, text_of(bad));
        snprintf(list, sizeof list, "%s%s%s", takes[k][0], takes[k][1] ? ", " : "",
                 takes[k][1] ? takes[k][1] : "");
        return fail(ld, bad, kpath, "does not apply to dist: %s (it takes: %s)", names[k], list);
    }
    double x[2] = {0, 0};
    for (int i = 0; i < 2 && takes[k][i]; i++) {
        const yaml_node_t *v = need(ld, map, path, takes[k][i]);
        path_key(kpath, path, takes[k][i]);
        bool may_be_zero = k == 2 && i == 0;          /* uniform min */
        if (!v || read_double(ld, v, kpath, may_be_zero ? NONNEGATIVE : POSITIVE, &x[i]))
            return -1;
    }
    if (k == 2 && !(x[1] > x[0])) {
        path_key(kpath, path, "max");
        return fail(ld, get(ld, map, "max"), kpath, "must be > min (%.10g), got %.10g", x[0], x[1]);
    }
    const char *e = NULL;
    switch (k) {
    case 0: e = dist_init_constant(d, x[0] * 1000); break;
    case 1: e = dist_init_exponential(d, x[0] * 1000); break;
    case 2: e = dist_init_uniform(d, x[0] * 1000, x[1] * 1000); break;
    case 3: e = dist_init_lognormal_mean_sd(d, x[0] * 1000, x[1] * 1000); break;
    case 4: e = dist_init_gamma(d, x[0] * 1000, x[1] * 1000); break;
    case 5: e = dist_init_weibull(d, x[0], x[1] * 1000); break;
    default: e = dist_init_pareto(d, x[0], x[1] * 1000); break;
    }
    if (!e && !isfinite(dist_mean(d)))
        e = "the mean must be finite (pareto shape > 1)";
    return e ? fail(ld, map, path, "%s", e) : 0;
}

/* workload.profile.trace: a CSV of "t_s,streams" lines (a header line and
 * # comments allowed), times strictly ascending from >= 0. */
static int read_trace(loader *ld, const yaml_node_t *fnode, const char *path, profile_cfg *pc)
{
    char show[SCN_SHOW_LEN + 16];
    const char *fname = "";
    char *buf = NULL;
    size_t blen = 0;
    if (read_data_file(ld, fnode, path, &fname, &buf, &blen))
        return -1;
    FILE *f = fmemopen(buf, blen ? blen : 1, "r");   /* (an empty buffer may not open) */
    if (f && blen == 0)
        fseek(f, 0, SEEK_END);                           /* nothing to read: "no points" */
    if (!f) {
        free(buf);
        return fail(ld, fnode, path, "%s: out of memory", fname);
    }
    char *line = NULL;
    size_t linecap = 0, lineno = 0;
    int cap = 0, rc = 0;
    bool data = false;
    ssize_t got;
    while (rc == 0 && (got = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        if (strlen(line) != (size_t)got) {
            rc = fail(ld, fnode, path, "%s:%zu: holds a NUL byte", fname, lineno);
            break;
        }
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strlen(s);
        while (n && isspace((unsigned char)s[n - 1]))
            s[--n] = '\0';
        if (n == 0 || s[0] == '#')
            continue;
        char *comma = strchr(s, ',');
        double t = 0, v = 0;
        if (comma)
            *comma = '\0';
        bool ok = comma && parse_decimal(s, &t) && parse_decimal(comma + 1, &v);
        if (!ok && !data && lineno == 1 && comma)
            continue;                            /* a header line */
        if (comma)
            *comma = ',';
        if (!ok) {
            rc = fail(ld, fnode, path, "%s:%zu: expected \"t_s,streams\", got %s", fname, lineno,
                      quoted(s, show, sizeof show));
            break;
        }
        data = true;
        if (!isfinite(t) || !isfinite(v) || t < 0 || v < 0 || v > SCN_MAX_STREAMS) {
            rc = fail(ld, fnode, path, "%s:%zu: time and streams must be finite and >= 0, and "
                      "streams <= %d, got %s", fname, lineno, SCN_MAX_STREAMS, s);
            break;
        }
        if (pc->ntrace > 0 && !(t > pc->trace_t[pc->ntrace - 1])) {
            rc = fail(ld, fnode, path, "%s:%zu: times must be strictly ascending, got %.10g after "
                      "%.10g", fname, lineno, t, pc->trace_t[pc->ntrace - 1]);
            break;
        }
        if (pc->ntrace == cap) {
            int ncap = cap ? cap * 2 : 256;
            double *nt = realloc(pc->trace_t, (size_t)ncap * sizeof *nt);
            if (nt)
                pc->trace_t = nt;
            double *nv = nt ? realloc(pc->trace_n, (size_t)ncap * sizeof *nv) : NULL;
            if (!nv) {
                rc = fail(ld, fnode, path, "%s: out of memory", fname);
                break;
            }
            pc->trace_n = nv;
            cap = ncap;
        }
        pc->trace_t[pc->ntrace] = t;
        pc->trace_n[pc->ntrace++] = v;
    }
    if (rc == 0 && ferror(f))
        rc = fail(ld, fnode, path, "cannot read %s: %s", fname, strerror(errno ? errno : EIO));
    if (rc == 0 && pc->ntrace == 0)
        rc = fail(ld, fnode, path, "%s: no points (expected lines \"t_s,streams\")", fname);
    free(line);
    fclose(f);
    free(buf);
    return rc;
}

static int read_steps(loader *ld, const yaml_node_t *list, const char *path, profile_cfg *pc)
{
    static const char *const keys[] = {"at_s", "streams", "ramp_s", NULL};
    char ipath[SCN_PATH_LEN], kpath[SCN_PATH_LEN], show[SCN_SHOW_LEN + 16];
    if (list->type != YAML_SEQUENCE_NODE)
        return fail(ld, list, path, "expected a list of steps such as [{at_s: 300, streams: 64, "
                    "ramp_s: 60}], got %s", describe(list, show, sizeof show));
    size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (n < 1 || n > CFG_MAX_PROFILE_STEPS)
        return fail(ld, list, path, "must hold 1 to %d steps, got %zu", CFG_MAX_PROFILE_STEPS, n);
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *m = yaml_document_get_node(&ld->doc, list->data.sequence.items.start[i]);
        profile_step *st = &pc->steps[i];
        const yaml_node_t *v;
        path_index(ipath, path, i);
        if (check_keys(ld, m, ipath, "a step such as {at_s: 300, streams: 64, ramp_s: 60}", keys))
            return -1;
        path_key(kpath, ipath, "at_s");
        if (!(v = need(ld, m, ipath, "at_s")) || read_double(ld, v, kpath, NONNEGATIVE, &st->at_s))
            return -1;
        if (i > 0 && st->at_s < pc->steps[i - 1].at_s + pc->steps[i - 1].ramp_s)
            return fail(ld, v, kpath, "starts at %.10g s, before step %zu's ramp ends (%.10g s)",
                        st->at_s, i - 1, pc->steps[i - 1].at_s + pc->steps[i - 1].ramp_s);
        path_key(kpath, ipath, "streams");
        if (!(v = need(ld, m, ipath, "streams")) || read_double(ld, v, kpath, NONNEGATIVE, &st->streams))
            return -1;
        if (st->streams > SCN_MAX_STREAMS)
            return too_large(ld, v, kpath, SCN_MAX_STREAMS, "state is kept per session");
        path_key(kpath, ipath, "ramp_s");
        if ((v = get(ld, m, "ramp_s")) && read_double(ld, v, kpath, NONNEGATIVE, &st->ramp_s))
            return -1;
    }
    pc->nsteps = (int)n;
    return 0;
}

static int read_profile(loader *ld, const yaml_node_t *map, scenario_cfg *c)
{
    static const char *const keys[] = {
        "kind", "peak_streams", "trough_streams", "period_s", "peak_at_s", "steps", "trace",
        "session_s", NULL};
    static const char *const kinds[] = {"diurnal", "steps", "trace", NULL};
    static const char *const only[][5] = {
        {"peak_streams", "trough_streams", "period_s", "peak_at_s", NULL}, {"steps"}, {"trace"}};
    const char *path = "workload.profile";
    profile_cfg *pc = &c->profile;
    const yaml_node_t *v;
    if (check_keys(ld, map, path, "a mapping such as {kind: diurnal, peak_streams: 64, "
                   "trough_streams: 8, period_s: 86400, peak_at_s: 72000, session_s: {...}}", keys))
        return -1;
    int k = get(ld, map, "steps") ? 1 : get(ld, map, "trace") ? 2 : 0;
    if ((v = get(ld, map, "kind")) && read_enum(ld, v, "workload.profile.kind", kinds, &k))
        return -1;
    pc->kind = k == 0 ? PROFILE_DIURNAL : k == 1 ? PROFILE_STEPS : PROFILE_TRACE;
    for (int other = 0; other < 3; other++)
        for (int i = 0; other != k && i < 4 && only[other][i]; i++)
            if (get(ld, map, only[other][i])) {
                char kpath[SCN_PATH_LEN];
                path_key(kpath, path, only[other][i]);
                return fail(ld, get_key(ld, map, only[other][i]), kpath,
                            "applies only to kind: %s (this profile is kind: %s)", kinds[other],
                            kinds[k]);
            }
    if (pc->kind == PROFILE_DIURNAL) {
        if (!(v = need(ld, map, path, "peak_streams"))
            || read_double(ld, v, "workload.profile.peak_streams", NONNEGATIVE, &pc->peak)
            || !(v = need(ld, map, path, "trough_streams"))
            || read_double(ld, v, "workload.profile.trough_streams", NONNEGATIVE, &pc->trough))
            return -1;
        if (pc->peak > SCN_MAX_STREAMS)
            return too_large(ld, get(ld, map, "peak_streams"), "workload.profile.peak_streams",
                             SCN_MAX_STREAMS, "state is kept per session");
        if (pc->trough > pc->peak)
            return fail(ld, v, "workload.profile.trough_streams",
                        "must be <= peak_streams (%.10g), got %.10g", pc->peak, pc->trough);
        pc->period_s = 86400;
        if (read_opt(ld, map, path, "period_s", POSITIVE, &pc->period_s)
            || read_opt(ld, map, path, "peak_at_s", NONNEGATIVE, &pc->peak_at_s))
            return -1;
    } else if (pc->kind == PROFILE_STEPS) {
        if (!(v = need(ld, map, path, "steps")) || read_steps(ld, v, "workload.profile.steps", pc))
            return -1;
    } else if (!(v = need(ld, map, path, "trace")) || read_trace(ld, v, "workload.profile.trace", pc)) {
        return -1;
    }
    if (!(v = need(ld, map, path, "session_s"))
        || read_dist_s(ld, v, "workload.profile.session_s", &pc->session))
        return -1;
    if (dist_mean(&pc->session) < 1000.0)    /* sessions start at target / mean per second */
        return fail(ld, v, "workload.profile.session_s",
                    "sessions must last 1 s or more on average, got a mean of %.10g s",
                    dist_mean(&pc->session) / 1000.0);
    return 0;
}

static int read_autoscale(loader *ld, const yaml_node_t *root, const yaml_node_t *map,
                          scenario_cfg *c)
{
    static const char *const keys[] = {
        "min_gpus", "max_gpus", "up", "down", "queue_up", "step", "cooldown_s", "cold_start_s",
        "warm_pool", "sla_window_s", NULL};
    static const char *const up_keys[] = {"util_above", "for_s", NULL};
    static const char *const down_keys[] = {"util_below", "for_s", NULL};
    static const char *const queue_keys[] = {"fill_above", NULL};
    const char *path = "autoscale";
    autoscale_cfg *a = &c->autoscale;
    const yaml_node_t *v, *m;
    if (check_keys(ld, map, path, "a mapping such as {min_gpus: 2, max_gpus: 16, cold_start_s: "
                   "{dist: uniform, min: 180, max: 300}}", keys))
        return -1;
    a->up_util = 0.8;
    a->up_for_s = 300;
    a->down_util = 0.3;
    a->down_for_s = 600;
    a->step = 1;
    a->cooldown_s = 60;
    a->sla_window_s = 60;
    if (!(v = need(ld, map, path, "min_gpus")) || read_int(ld, v, "autoscale.min_gpus", 1, &a->min_gpus)
        || !(v = need(ld, map, path, "max_gpus"))
        || read_int(ld, v, "autoscale.max_gpus", 1, &a->max_gpus))
        return -1;
    if (a->max_gpus < a->min_gpus)
        return fail(ld, v, "autoscale.max_gpus", "must be >= min_gpus (%d), got %d", a->min_gpus,
                    a->max_gpus);
    if (a->max_gpus > 4096)
        return fail(ld, v, "autoscale.max_gpus", "must be <= 4096, got %d", a->max_gpus);
    if ((m = get(ld, map, "up"))) {
        if (check_keys(ld, m, "autoscale.up", "a mapping such as {util_above: 0.8, for_s: 300}",
                       up_keys)
            || ((v = get(ld, m, "util_above")) && read_unit(ld, v, "autoscale.up.util_above",
                                                            &a->up_util))
            || read_opt(ld, m, "autoscale.up", "for_s", NONNEGATIVE, &a->up_for_s))
            return -1;
    }
    if ((m = get(ld, map, "down"))) {
        if (check_keys(ld, m, "autoscale.down", "a mapping such as {util_below: 0.3, for_s: 600}",
                       down_keys)
            || ((v = get(ld, m, "util_below")) && read_unit(ld, v, "autoscale.down.util_below",
                                                            &a->down_util))
            || read_opt(ld, m, "autoscale.down", "for_s", NONNEGATIVE, &a->down_for_s))
            return -1;
    }
    if (a->down_util >= a->up_util)
        return fail(ld, map, path, "down.util_below (%.10g) must be below up.util_above (%.10g)",
                    a->down_util, a->up_util);
    if ((m = get(ld, map, "queue_up"))) {
        if (check_keys(ld, m, "autoscale.queue_up", "a mapping such as {fill_above: 0.6}", queue_keys)
            || !(v = need(ld, m, "autoscale.queue_up", "fill_above"))
            || read_unit(ld, v, "autoscale.queue_up.fill_above", &a->queue_fill))
            return -1;
        if (!(a->queue_fill > 0))
            return fail(ld, v, "autoscale.queue_up.fill_above", "must be > 0, got %s", text_of(v));
    }
    if (((v = get(ld, map, "step")) && read_int(ld, v, "autoscale.step", 1, &a->step))
        || read_opt(ld, map, path, "cooldown_s", NONNEGATIVE, &a->cooldown_s)
        || ((v = get(ld, map, "warm_pool")) && read_int(ld, v, "autoscale.warm_pool", 0, &a->warm_pool))
        || read_opt(ld, map, path, "sla_window_s", POSITIVE, &a->sla_window_s))
        return -1;
    if (a->warm_pool > 4096)
        return too_large(ld, get(ld, map, "warm_pool"), "autoscale.warm_pool", 4096,
                         "state is kept per GPU");
    if (a->sla_window_s < 1)
        return fail(ld, get(ld, map, "sla_window_s"), "autoscale.sla_window_s",
                    "must be >= 1 (seconds; 60: minutes), got %.10g", a->sla_window_s);
    if (!(v = need(ld, map, path, "cold_start_s"))
        || read_dist_s(ld, v, "autoscale.cold_start_s", &a->cold_start))
        return -1;
    /* whole-scenario rules */
    const yaml_node_t *cl = get(ld, root, "cluster");
    if (!cl)
        return fail(ld, map, path, "needs a cluster (cluster.gpus: the GPUs serving at the start)");
    if (c->profile.kind == PROFILE_NONE)
        return fail(ld, map, path, "needs workload.profile (sessions that start and end, so that "
                    "new sessions can go to new GPUs)");
    if (c->cluster.npools > 0)
        return fail(ld, get(ld, cl, "pools"), "cluster.pools", "cannot be combined with autoscale");
    if (c->cluster.gpus < a->min_gpus || c->cluster.gpus > a->max_gpus)
        return fail(ld, get(ld, cl, "gpus"), "cluster.gpus",
                    "with autoscale, the GPUs serving at the start must be within [min_gpus, "
                    "max_gpus] = [%d, %d], got %d", a->min_gpus, a->max_gpus, c->cluster.gpus);
    a->initial_gpus = c->cluster.gpus;
    c->cluster.gpus = a->max_gpus;           /* the slots */
    a->on = true;
    return 0;
}

static int read_root(loader *ld, const yaml_node_t *root, scenario_cfg *c)
{
    static const char *const keys[] = {
        "name", "seed", "duration_s", "warmup_s", "warmup", "replications",
        "workload", "metrics", "stages", "cluster", "frame_deadline_ms", "sla",
        "degradation", "alerts", "sweep", "canary", "autoscale", "cpu", NULL};
    const yaml_node_t *v;
    if (check_keys(ld, root, "", "a mapping of scenario keys (name, duration_s, workload, stages, ...)", keys))
        return -1;
    if ((v = get(ld, root, "name")) && read_name(ld, v, "name", c->name))
        return -1;
    if ((v = get(ld, root, "seed")) && read_u64(ld, v, "seed", &c->seed))
        return -1;
    if (!(v = need(ld, root, "", "duration_s")) || read_double(ld, v, "duration_s", POSITIVE, &c->duration_s))
        return -1;
    if (c->duration_s > SCN_MAX_SECONDS)
        return too_large(ld, v, "duration_s", SCN_MAX_SECONDS, "the millisecond clock must still "
                         "resolve a microsecond");
    if (read_warmup(ld, root, c))
        return -1;
    if (c->warmup_s > SCN_MAX_SECONDS) {
        const char *wk = get(ld, root, "warmup_s") ? "warmup_s" : "warmup";
        return too_large(ld, get(ld, root, wk), wk, SCN_MAX_SECONDS, "the millisecond clock must "
                         "still resolve a microsecond");
    }
    if ((v = get(ld, root, "replications")) && read_int(ld, v, "replications", 1, &c->replications))
        return -1;
    if (v && c->replications > SCN_MAX_REPS)
        return too_large(ld, v, "replications", SCN_MAX_REPS, "a digest is kept per replication");
    if (!(v = need(ld, root, "", "workload")) || read_workload(ld, v, &c->workload))
        return -1;
    if ((v = get(ld, root, "metrics")) && read_metrics(ld, v, c))
        return -1;
    const yaml_node_t *stages = need(ld, root, "", "stages");
    if (!stages || read_stages(ld, stages, c) || check_gpu_stages(ld, root, stages, c)
        || check_stage_flow(ld, stages, c))
        return -1;
    if ((v = get(ld, root, "cluster")) && read_cluster(ld, v, stages, c))
        return -1;
    if ((v = get(ld, root, "frame_deadline_ms"))
        && read_double(ld, v, "frame_deadline_ms", POSITIVE, &c->frame_deadline_ms))
        return -1;
    if ((v = get(ld, root, "sla")) && read_sla(ld, v, c))
        return -1;
    if ((v = get(ld, root, "degradation")) && read_degradation(ld, v, c))
        return -1;
    if ((v = get(ld, root, "alerts")) && read_alerts(ld, v, &c->alerts))
        return -1;
    if ((v = get(ld, root, "cpu")) && read_cpu(ld, v, c))     /* issue 7 */
        return -1;
    if (check_windows(ld, root, c))
        return -1;
    if (check_paths(ld, root, stages, c))
        return -1;
    /* fleet (issue 6): the profile (read after the workload it belongs to)
     * and the autoscaler (after the cluster and degradation it uses) */
    const yaml_node_t *wl = get(ld, root, "workload"), *prof = wl ? get(ld, wl, "profile") : NULL;
    if (prof && get(ld, wl, "phase_ms"))
        return fail(ld, get_key(ld, wl, "phase_ms"), "workload.phase_ms",
                    "cannot be combined with workload.profile (its sessions start when they start)");
    if (prof && get(ld, wl, "surge"))
        return fail(ld, get_key(ld, wl, "surge"), "workload.surge",
                    "cannot be combined with workload.profile (give the crowd as profile steps)");
    if (prof && read_profile(ld, prof, c))
        return -1;
    if ((v = get(ld, root, "autoscale")) && read_autoscale(ld, root, v, c))
        return -1;
    if ((v = get(ld, root, "canary")) && read_canary(ld, v, c))
        return -1;
    if ((v = get(ld, root, "sweep")) && read_sweep(ld, v, c))
        return -1;
    resolve_gop_defaults(ld, c);
    return 0;
}

/* ---- YAML text to document --------------------------------------------- */

/* Report libyaml's complaint; a TAB on the offending line is named plainly,
 * since that is what the complaint almost always means. */
static int syntax_error(loader *ld, const yaml_parser_t *p, const char *text, size_t len)
{
    yaml_mark_t mark = p->problem_mark;
    if (p->error == YAML_READER_ERROR) {         /* bad encoding: only an offset */
        mark.line = mark.column = 0;
        for (size_t i = 0; i < p->problem_offset && i < len; i++) {
            mark.column++;
            if (text[i] == '\n') {
                mark.line++;
                mark.column = 0;
            }
        }
    }
    const char *problem = p->problem ? p->problem : "cannot parse";
    if (p->error == YAML_MEMORY_ERROR)
        problem = "out of memory";

    const char *line = text;                     /* start of the offending line */
    const char *end = text + len;
    for (size_t l = 0; l < mark.line && line < end; line++)
        if (*line == '\n')
            l++;
    size_t indent = 0;
    while (line + indent < end && line[indent] == ' ')
        indent++;
    if (line + indent < end && line[indent] == '\t') {
        yaml_mark_t tab = {.line = mark.line, .column = indent};
        return fail_mark(ld, &tab, "(syntax)",
                         "tab character in indentation; YAML allows only spaces (%s)", problem);
    }
    for (const char *q = line; q < end && *q != '\n'; q++)
        if (*q == '\t')
            return fail_mark(ld, &mark, "(syntax)", "%s (this line holds a tab character; "
                             "YAML allows only spaces for indentation)", problem);
    if (p->context)
        return fail_mark(ld, &mark, "(syntax)", "%s (%s at line %zu, column %zu)", problem,
                         p->context, p->context_mark.line + 1, p->context_mark.column + 1);
    return fail_mark(ld, &mark, "(syntax)", "%s", problem);
}

/* libyaml's scanner does work in proportion to the nesting depth for every
 * token, so 100000 levels of [[[... take minutes, and its loader looks each
 * alias up among all anchors, so 50000 of each take a minute: a first pass
 * over the events refuses more than SCN_MAX_DEPTH levels (a scenario needs
 * about 12), SCN_MAX_ANCHORS anchors or SCN_MAX_ALIASES aliases before the
 * document is built. Syntax errors are left to the second pass. */
static int check_structure(loader *ld, const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int depth = 0, rc = 0, anchors = 0, aliases = 0;
    if (!yaml_parser_initialize(&p))
        return fail_file(ld, "out of memory starting the YAML parser");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (rc == 0 && yaml_parser_parse(&p, &ev)) {
        yaml_event_type_t t = ev.type;
        const yaml_char_t *anchor = t == YAML_SCALAR_EVENT ? ev.data.scalar.anchor
                                  : t == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                  : t == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.anchor : NULL;
        if ((t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT)
            && ++depth > SCN_MAX_DEPTH)
            rc = fail_mark(ld, &ev.start_mark, "(syntax)", "nested more than %d levels deep",
                           SCN_MAX_DEPTH);
        else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
            depth--;
        if (anchor && ++anchors > SCN_MAX_ANCHORS)
            rc = fail_mark(ld, &ev.start_mark, "(syntax)", "more than %d anchors (&name)",
                           SCN_MAX_ANCHORS);
        if (t == YAML_ALIAS_EVENT && ++aliases > SCN_MAX_ALIASES)
            rc = fail_mark(ld, &ev.start_mark, "(syntax)", "more than %d aliases (*name)",
                           SCN_MAX_ALIASES);
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    return rc;
}

/* Parse text into ld->doc: exactly one document, which may be empty. */
static int load_document(loader *ld, const char *text, size_t len)
{
    yaml_parser_t p;
    if (check_structure(ld, text, len))
        return -1;
    if (!yaml_parser_initialize(&p))
        return fail_file(ld, "out of memory starting the YAML parser");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &ld->doc)) {
        syntax_error(ld, &p, text, len);
        yaml_parser_delete(&p);
        return -1;
    }
    int rc = 0;
    yaml_document_t extra;
    if (!yaml_parser_load(&p, &extra)) {
        rc = syntax_error(ld, &p, text, len);
    } else {
        yaml_node_t *r = yaml_document_get_root_node(&extra);
        if (r)
            rc = fail(ld, r, "(root)", "only one YAML document is allowed in a scenario");
        yaml_document_delete(&extra);
    }
    yaml_parser_delete(&p);
    if (rc)
        yaml_document_delete(&ld->doc);
    return rc;
}

/* ---- public ------------------------------------------------------------ */

/* The one conversion behind scn_load, scn_load_string and scn_load_ex:
 * parse text, apply ld's overrides to the document, read it into out. */
static int load_text(loader *ld, const char *text, size_t len, scenario_cfg *out)
{
    memset(out, 0, sizeof *out);
    if (ld->err && ld->errlen)
        ld->err[0] = '\0';
    if (len > SCN_MAX_BYTES)
        return fail_file(ld, "file is larger than 16 MiB");
    for (size_t i = 0; i < ld->nov; i++)
        if (!ld->ov || !ld->ov[i].key || !ld->ov[i].value)
            return fail_file(ld, "override %zu has no key or no value", i + 1);
    ld->text_len = len;
    if (load_document(ld, text ? text : "", text ? len : 0))
        return -1;

    cfg_defaults(out);
    copy_str(out->path, sizeof out->path, ld->file);
    int rc;
    if (!yaml_document_get_root_node(&ld->doc)) {
        yaml_mark_t start = {0};
        rc = fail_mark(ld, &start, "(root)",
                       "the document is empty; expected a mapping of scenario keys");
    } else {
        /* the root is fetched after the overrides: adding nodes moves them */
        rc = apply_overrides(ld);
        if (rc == 0)
            rc = read_root(ld, yaml_document_get_root_node(&ld->doc), out);
    }
    yaml_document_delete(&ld->doc);
    if (rc) {
        cfg_free(out);
        return -1;
    }
    return 0;
}

int scn_load_string(const char *text, size_t len, const char *display_name,
                    const char *basedir, scenario_cfg *out, char *err, size_t errlen)
{
    loader ld = {
        .file = display_name ? display_name : "(string)",
        .basedir = basedir && *basedir ? basedir : ".",
        .err = err,
        .errlen = errlen,
    };
    return load_text(&ld, text, len, out);
}

/* Read all of f, up to the 16 MiB limit, into *text (malloc'd). */
static int read_whole_file(loader *ld, FILE *f, char **text, size_t *len)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            if (cap == SCN_MAX_BYTES + 1)        /* one byte too many: too large */
                break;
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > SCN_MAX_BYTES + 1)
                ncap = SCN_MAX_BYTES + 1;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return fail_file(ld, "out of memory");
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f) || n > SCN_MAX_BYTES) {
        int e = errno ? errno : EIO;
        free(buf);
        return n > SCN_MAX_BYTES ? fail_file(ld, "file is larger than 16 MiB")
                                 : fail_file(ld, "cannot read: %s", strerror(e));
    }
    *text = buf;
    *len = n;
    return 0;
}

/* The directory part of path: "." when it has none. */
static void dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n == 0) {
        copy_str(dir, size, ".");
        return;
    }
    if (n >= size)
        n = size - 1;
    memcpy(dir, path, n);
    dir[n] = '\0';
}

int scn_load_ex(const char *path, const scn_override *ov, size_t nov,
                scenario_cfg *out, char *err, size_t errlen)
{
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    loader ld = {.file = path, .basedir = dir, .err = err, .errlen = errlen,
                 .ov = ov, .nov = nov};
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail_file(&ld, "cannot open: %s", strerror(errno));
    char *text = NULL;
    size_t len = 0;
    errno = 0;
    int rc = read_whole_file(&ld, f, &text, &len);
    fclose(f);
    if (rc)
        return -1;
    rc = load_text(&ld, text, len, out);
    free(text);
    return rc;
}

int scn_load(const char *path, scenario_cfg *out, char *err, size_t errlen)
{
    return scn_load_ex(path, NULL, 0, out, err, errlen);
}
