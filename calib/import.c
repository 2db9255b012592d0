/* import.c — production traces and Prometheus histogram scrapes into
 * calibration files and scenario fragments (import.h; the formats:
 * calib/README.md "Import from production").
 *
 * Reading order: small text helpers, the trace reader, the Prometheus
 * reader, the writers. No printing, no exit, no global mutable state. */
#include "calib/import.h"
#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "calib/calfile.h"
#include "calib/harness.h"

/* ---- helpers ---- */

static int failf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int failf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A finite decimal number filling all of s. */
static bool parse_num(const char *s, double *x)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return false;
    errno = 0;
    *x = strtod(s, &end);
    return !*end && isfinite(*x) && errno != ERANGE;
}

static bool stage_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= IMPORT_NAME)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-')
            return false;
    return true;
}

/* The shortest %g text that reads back to x. */
static void shortest(char *buf, size_t size, double x)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

/* ---- traces ---- */

static import_stage *trace_stage(import_trace *t, const char *name)
{
    for (int i = 0; i < t->nstages; i++)
        if (!strcmp(t->stages[i].name, name))
            return &t->stages[i];
    import_stage *s = realloc(t->stages, (size_t)(t->nstages + 1) * sizeof *s);
    if (!s)
        return NULL;
    t->stages = s;
    s = &t->stages[t->nstages++];
    *s = (import_stage){ .n = 0 };
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

static int stage_push(import_stage *s, double x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *v = realloc(s->ms, cap * sizeof *v);
        if (!v)
            return -1;
        s->ms = v;
        s->cap = cap;
    }
    s->ms[s->n++] = x;
    return 0;
}

void import_trace_free(import_trace *t)
{
    for (int i = 0; t && i < t->nstages; i++)
        free(t->stages[i].ms);
    if (t) {
        free(t->stages);
        *t = (import_trace){ .nstages = 0 };
    }
}

/* Split line at commas into at most max fields (trimmed); the count. */
static int split_csv(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (n < max)
            f[n] = trim(p);
        n++;
        if (!c)
            return n;
        p = c + 1;
    }
}

int import_trace_read(FILE *in, const char *fname, import_trace *t, char *err, size_t errlen)
{
    *t = (import_trace){ .nstages = 0 };
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    bool header = false;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *f[3];
        int n = split_csv(s, f, 3);
        if (!header) {
            if (n != 3 || strcmp(f[0], "frame_id") || strcmp(f[1], "stage") || strcmp(f[2], "ms"))
                rc = failf(err, errlen, "%s:%zu: expected the header frame_id,stage,ms", fname, lineno);
            header = true;
            continue;
        }
        double x;
        if (n != 3)
            rc = failf(err, errlen, "%s:%zu: expected 3 fields (frame_id,stage,ms), got %d", fname, lineno, n);
        else if (!*f[0])
            rc = failf(err, errlen, "%s:%zu: empty frame_id", fname, lineno);
        else if (!stage_name_ok(f[1]))
            rc = failf(err, errlen, "%s:%zu: stage '%.64s' must be 1 to %d characters of A-Z a-z 0-9 _ . -",
                       fname, lineno, f[1], IMPORT_NAME - 1);
        else if (!parse_num(f[2], &x))
            rc = failf(err, errlen, "%s:%zu: ms '%.64s' is not a finite number", fname, lineno, f[2]);
        else if (!(x > 0))
            rc = failf(err, errlen, "%s:%zu: ms must be > 0, got %.64s", fname, lineno, f[2]);
        else {
            import_stage *st = trace_stage(t, f[1]);
            if (!st || stage_push(st, x))
                rc = failf(err, errlen, "%s:%zu: out of memory", fname, lineno);
        }
    }
    free(line);
    if (rc == 0 && ferror(in))
        rc = failf(err, errlen, "%s: read error", fname);
    if (rc == 0 && !header)
        rc = failf(err, errlen, "%s: empty file (expected the header frame_id,stage,ms)", fname);
    if (rc == 0 && t->nstages == 0)
        rc = failf(err, errlen, "%s: no samples after the header", fname);
    if (rc)
        import_trace_free(t);
    return rc;
}

int import_samples_write(FILE *out, const import_stage *s)
{
    char buf[40];
    for (size_t i = 0; i < s->n; i++) {
        shortest(buf, sizeof buf, s->ms[i]);
        if (fprintf(out, "%s\n", buf) < 0)
            return -1;
    }
    return ferror(out) ? -1 : 0;
}

/* ---- Prometheus ---- */

typedef struct {
    double le, count;          /* le in the metric's unit; +Inf as INFINITY */
    size_t line;
} bucket;

typedef struct {
    char metric[128], stage[IMPORT_NAME];
    bucket *b;
    int nb;
    size_t first_line;
    double sum;
    bool has_sum;
} series;

typedef struct {
    series *s;
    int n;
} series_set;

static series *find_series(series_set *ss, const char *metric, const char *stage, bool add, size_t line)
{
    for (int i = 0; i < ss->n; i++)
        if (!strcmp(ss->s[i].metric, metric) && !strcmp(ss->s[i].stage, stage))
            return &ss->s[i];
    if (!add)
        return NULL;
    series *s = realloc(ss->s, (size_t)(ss->n + 1) * sizeof *s);
    if (!s)
        return NULL;
    ss->s = s;
    s = &ss->s[ss->n++];
    *s = (series){ .first_line = line };
    snprintf(s->metric, sizeof s->metric, "%s", metric);
    snprintf(s->stage, sizeof s->stage, "%s", stage);
    return s;
}

static void series_free(series_set *ss)
{
    for (int i = 0; i < ss->n; i++)
        free(ss->s[i].b);
    free(ss->s);
}

#define PROM_LABEL 128   /* a label value kept, with its NUL (longer ones are cut) */

/* Parse `name{k="v",...} value [timestamp]` in s. Labels le and stage are
 * copied out (empty when absent). 0, or -1 with a reason in why. */
static int parse_sample(char *s, char *name, size_t nsize, char *le, char *stage, double *value,
                        const char **why)
{
    size_t n = 0;
    le[0] = stage[0] = '\0';
    if (!(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
        return *why = "expected a metric name", -1;
    while (isalnum((unsigned char)*s) || *s == '_' || *s == ':') {
        if (n + 1 < nsize)
            name[n++] = *s;
        s++;
    }
    name[n] = '\0';
    if (*s == '{') {
        s++;
        for (;;) {
            while (*s == ' ')
                s++;
            if (*s == '}') {
                s++;
                break;
            }
            char key[64];
            size_t k = 0;
            while (isalnum((unsigned char)*s) || *s == '_') {
                if (k + 1 < sizeof key)
                    key[k++] = *s;
                s++;
            }
            key[k] = '\0';
            if (!k || *s++ != '=' || *s++ != '"')
                return *why = "malformed label (expected name=\"value\")", -1;
            char val[PROM_LABEL];
            size_t v = 0;
            while (*s && *s != '"') {
                char c = *s++;
                if (c == '\\') {
                    c = *s++;
                    if (c == 'n')
                        c = '\n';
                    else if (c != '\\' && c != '"')
                        return *why = "bad escape in a label value", -1;
                }
                if (v + 1 < sizeof val)
                    val[v++] = c;
            }
            val[v] = '\0';
            if (*s++ != '"')
                return *why = "unterminated label value", -1;
            if (!strcmp(key, "le"))
                memcpy(le, val, v + 1);
            else if (!strcmp(key, "stage"))
                memcpy(stage, val, v + 1);
            while (*s == ' ')
                s++;
            if (*s == ',')
                s++;
            else if (*s != '}')
                return *why = "expected ',' or '}' after a label", -1;
        }
    }
    if (*s != ' ' && *s != '\t')
        return *why = "expected a space and a value after the metric", -1;
    s = trim(s);
    char *sp = strpbrk(s, " \t");
    if (sp)
        *sp = '\0';   /* a timestamp follows: ignored */
    if (!strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "NaN"))
        return *why = "the value must be finite", -1;
    if (!parse_num(s, value))
        return *why = "the value is not a number", -1;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int add_bucket(series *s, double le, double count, size_t line)
{
    for (int i = 0; i < s->nb; i++)
        if (s->b[i].le == le) {
            s->b[i].count += count;   /* the same series under other labels */
            s->b[i].line = line;
            return 0;
        }
    bucket *b = realloc(s->b, (size_t)(s->nb + 1) * sizeof *b);
    if (!b)
        return -1;
    s->b = b;
    s->b[s->nb++] = (bucket){ le, count, line };
    return 0;
}

static int cmp_bucket(const void *a, const void *b)
{
    double x = ((const bucket *)a)->le, y = ((const bucket *)b)->le;
    return (x > y) - (x < y);
}

void import_prom_free(import_prom *p)
{
    for (int i = 0; p && i < p->nstages; i++)
        free(p->stages[i].parts);
    if (p) {
        free(p->stages);
        *p = (import_prom){ .nstages = 0 };
    }
}

/* One series -> one stage. 0, or -1 with a message. */
static int build_stage(const series *s, const char *fname, import_prom_stage *st, char *err, size_t errlen)
{
    *st = (import_prom_stage){ .scale = 1 };
    snprintf(st->name, sizeof st->name, "%s", s->stage);
    snprintf(st->metric, sizeof st->metric, "%s", s->metric);
    if (ends_with(s->metric, "_seconds"))
        st->scale = 1000;
    else if (!ends_with(s->metric, "_ms") && !ends_with(s->metric, "_milliseconds"))
        snprintf(st->warn[st->nwarn++], IMPORT_WARN,
                 "stage %s: metric %s names no unit (_seconds, _ms): le read as milliseconds",
                 s->stage, s->metric);
    const bucket *b = s->b;
    int nb = s->nb;
    if (!isinf(b[nb - 1].le))
        return failf(err, errlen, "%s:%zu: %s{stage=\"%s\"}: no le=\"+Inf\" bucket", fname, s->first_line,
                     s->metric, s->stage);
    if (b[0].le < 0)
        return failf(err, errlen, "%s:%zu: le must be >= 0 for a duration", fname, b[0].line);
    for (int i = 1; i < nb; i++)
        if (b[i].count < b[i - 1].count)
            return failf(err, errlen,
                         "%s:%zu: %s{stage=\"%s\"}: cumulative count %.17g at le=%g is below %.17g at le=%g",
                         fname, b[i].line, s->metric, s->stage, b[i].count, b[i].le, b[i - 1].count,
                         b[i - 1].le);
    st->total = b[nb - 1].count;
    if (!(st->total > 0))
        return failf(err, errlen, "%s:%zu: %s{stage=\"%s\"}: no observations (+Inf count 0)", fname,
                     b[nb - 1].line, s->metric, s->stage);
    if (s->has_sum) {
        st->has_sum = true;
        st->sum_ms = s->sum * st->scale;
    }
    if (!(st->parts = calloc((size_t)nb, sizeof *st->parts)))
        return failf(err, errlen, "%s: out of memory", fname);
    double prev = 0, lo = 0, best = -1;
    int ibest = -1;
    for (int i = 0; i < nb; i++) {
        double c = b[i].count - prev, hi = b[i].le * st->scale;
        prev = b[i].count;
        if (isinf(hi)) {
            if (c > 0) {
                if (!(lo > 0))
                    return failf(err, errlen, "%s:%zu: %s{stage=\"%s\"}: observations above le=0 only in +Inf",
                                 fname, b[i].line, s->metric, s->stage);
                hi = 2 * lo;
                snprintf(st->warn[st->nwarn++], IMPORT_WARN,
                         "stage %s: %.3g %% of observations are above the last finite bucket (%g ms): "
                         "modelled as uniform from %g to %g ms",
                         s->stage, 100 * c / st->total, lo, lo, hi);
            }
        }
        if (c > 0 && hi > lo) {
            st->parts[st->nparts++] = (import_part){ lo, hi, c, c / st->total };
            if (c > best) {
                best = c;
                ibest = st->nparts - 1;
            }
        } else if (c > 0) {   /* a bucket le=0: a point mass at 0; widen to a sliver */
            return failf(err, errlen, "%s:%zu: %s{stage=\"%s\"}: observations in the bucket le=%g of zero width",
                         fname, b[i].line, s->metric, s->stage, b[i].le);
        }
        if (!isinf(b[i].le))
            lo = hi;
    }
    if (ibest >= 0 && best / st->total >= IMPORT_COARSE_SHARE) {
        const import_part *q = &st->parts[ibest];
        snprintf(st->warn[st->nwarn++], IMPORT_WARN,
                 "stage %s: %.0f %% of observations fall in one bucket (%g-%g ms): percentiles inside it are "
                 "interpolated",
                 s->stage, 100 * best / st->total, q->lo, q->hi);
    }
    return 0;
}

int import_prom_read(FILE *in, const char *fname, import_prom *p, char *err, size_t errlen)
{
    *p = (import_prom){ .nstages = 0 };
    series_set ss = { NULL, 0 };
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char name[192], le[PROM_LABEL], stage[PROM_LABEL];
        double v;
        const char *why = "";
        if (parse_sample(s, name, sizeof name, le, stage, &v, &why)) {
            rc = failf(err, errlen, "%s:%zu: %s", fname, lineno, why);
            break;
        }
        bool is_bucket = ends_with(name, "_bucket"), is_sum = ends_with(name, "_sum");
        if (!stage[0] || !(is_bucket || is_sum))
            continue;
        name[strlen(name) - (is_bucket ? 7 : 4)] = '\0';
        if (strlen(name) >= 120) {
            rc = failf(err, errlen, "%s:%zu: metric name too long", fname, lineno);
            break;
        }
        if (!stage_name_ok(stage)) {
            rc = failf(err, errlen, "%s:%zu: stage '%.64s' must be 1 to %d characters of A-Z a-z 0-9 _ . -",
                       fname, lineno, stage, IMPORT_NAME - 1);
            break;
        }
        if (is_sum) {
            series *sr = find_series(&ss, name, stage, true, lineno);
            if (!sr) {
                rc = failf(err, errlen, "%s: out of memory", fname);
                break;
            }
            sr->sum += v;
            sr->has_sum = true;
            continue;
        }
        double edge;
        if (!le[0]) {
            rc = failf(err, errlen, "%s:%zu: a _bucket sample without an le label", fname, lineno);
            break;
        }
        if (!strcmp(le, "+Inf"))
            edge = INFINITY;
        else if (!parse_num(le, &edge)) {
            rc = failf(err, errlen, "%s:%zu: le=\"%s\" is not a number or +Inf", fname, lineno, le);
            break;
        }
        if (v < 0) {
            rc = failf(err, errlen, "%s:%zu: a bucket count must be >= 0, got %g", fname, lineno, v);
            break;
        }
        series *sr = find_series(&ss, name, stage, true, lineno);
        if (!sr || add_bucket(sr, edge, v, lineno)) {
            rc = failf(err, errlen, "%s: out of memory", fname);
            break;
        }
        if (sr->nb == 1)
            sr->first_line = lineno;   /* the series' first bucket */
    }
    free(line);
    if (rc == 0 && ferror(in))
        rc = failf(err, errlen, "%s: read error", fname);
    int nseries = 0;
    for (int i = 0; i < ss.n; i++)
        nseries += ss.s[i].nb > 0;
    if (rc == 0 && nseries == 0)
        rc = failf(err, errlen, "%s: no histogram series with a stage label (NAME_bucket{stage=\"X\",le=\"B\"} N)",
                   fname);
    if (rc == 0 && !(p->stages = calloc((size_t)nseries, sizeof *p->stages)))
        rc = failf(err, errlen, "%s: out of memory", fname);
    for (int i = 0; rc == 0 && i < ss.n; i++) {
        series *sr = &ss.s[i];
        if (!sr->nb)
            continue;   /* a _sum without buckets */
        qsort(sr->b, (size_t)sr->nb, sizeof *sr->b, cmp_bucket);
        rc = build_stage(sr, fname, &p->stages[p->nstages], err, errlen);
        p->nstages++;
    }
    series_free(&ss);
    if (rc)
        import_prom_free(p);
    return rc;
}

double import_prom_quantile(const import_prom_stage *s, double q)
{
    double acc = 0;
    for (int i = 0; i < s->nparts; i++) {
        const import_part *p = &s->parts[i];
        if (q <= acc + p->weight || i == s->nparts - 1) {
            double f = p->weight > 0 ? (q - acc) / p->weight : 0;
            f = f < 0 ? 0 : f > 1 ? 1 : f;
            return p->lo + f * (p->hi - p->lo);
        }
        acc += p->weight;
    }
    return 0;
}

/* ---- writers ---- */

int import_trace_fragment(FILE *out, const import_trace *t, const char *source,
                          const char *const *sample_files)
{
    fprintf(out, "# from vlcalib import --trace %s: empirical service times per stage (ms);\n"
                 "# sample files resolve against the scenario's directory\n"
                 "stages:\n", source);
    for (int i = 0; i < t->nstages; i++) {
        const import_stage *s = &t->stages[i];
        double *v = malloc(s->n * sizeof *v);
        if (!v)
            return -1;
        memcpy(v, s->ms, s->n * sizeof *v);
        harness_result r = { 0 };
        if (harness_stats(v, (int)s->n, &r))
            return -1;
        fprintf(out, "  - name: %s   # n %zu, p50 %.4g, p99 %.4g, mean %.4g ms\n"
                     "    service: {dist: empirical, file: \"%s\"}\n",
                s->name, s->n, r.p50, r.p99, r.mean, sample_files[i]);
        harness_result_free(&r);
    }
    return ferror(out) ? -1 : 0;
}

int import_prom_fragment(FILE *out, const import_prom *p, const char *source)
{
    fprintf(out, "# from vlcalib import --prom %s: piecewise-uniform service times per stage (ms),\n"
                 "# one part per non-empty histogram bucket, weight = its share of the observations\n"
                 "stages:\n", source);
    for (int i = 0; i < p->nstages; i++) {
        const import_prom_stage *s = &p->stages[i];
        fprintf(out, "  - name: %s   # %s, %.17g observations, p50 %.4g, p99 %.4g ms\n"
                     "    service:\n      dist: mixture\n      parts:\n",
                s->name, s->metric, s->total, import_prom_quantile(s, 0.5), import_prom_quantile(s, 0.99));
        for (int k = 0; k < s->nparts; k++) {
            char w[40], lo[40], hi[40];
            shortest(w, sizeof w, s->parts[k].weight);
            shortest(lo, sizeof lo, s->parts[k].lo);
            shortest(hi, sizeof hi, s->parts[k].hi);
            fprintf(out, "        - {weight: %s, dist: uniform, min_ms: %s, max_ms: %s}\n", w, lo, hi);
        }
    }
    return ferror(out) ? -1 : 0;
}

static calf_op *stage_op(calf_file *f, const char *stage, const char *model, char *err, size_t errlen)
{
    if (strlen(stage) >= sizeof f->ops[0].op) {
        failf(err, errlen, "stage '%s': a calibration file op name has at most %zu characters", stage,
              sizeof f->ops[0].op - 1);
        return NULL;
    }
    calf_op *op = calfile_add_op(f, stage, model, "ms");
    if (!op)
        failf(err, errlen, "out of memory");
    return op;
}

static void file_head(calf_file *f, const char *what)
{
    *f = (calf_file){ .version = CALF_VERSION };
    snprintf(f->device.name, sizeof f->device.name, "unknown (%s)", what);
    snprintf(f->device.backend, sizeof f->device.backend, "import");
    snprintf(f->device.driver, sizeof f->device.driver, "unknown");
    snprintf(f->device.libraries, sizeof f->device.libraries, "unknown");
    snprintf(f->device.clocks, sizeof f->device.clocks, "unknown");
    calfile_now_utc(f->date, sizeof f->date);
    snprintf(f->backend, sizeof f->backend, "import");
}

/* Statistics of n samples (not modified) into a point at batch 1. */
static int point_of(const double *x, int n, calf_point *pt, double mean_override)
{
    double *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return -1;
    memcpy(v, x, (size_t)n * sizeof *v);
    harness_result r = { 0 };
    if (harness_stats(v, n, &r))
        return -1;
    *pt = (calf_point){ .batch = 1 };
    double mean = isnan(mean_override) ? r.mean : mean_override;
    int rc = calfile_point_from(pt, r.samples, n, r.p50, r.p95, r.p99, mean, n > 1 ? r.sd : 0, r.min);
    harness_result_free(&r);
    return rc;
}

int import_trace_calfile(const import_trace *t, const char *model, calf_file *f, char *err, size_t errlen)
{
    file_head(f, "production trace");
    for (int i = 0; i < t->nstages; i++) {
        const import_stage *s = &t->stages[i];
        calf_point pt;
        calf_op *op = stage_op(f, s->name, model, err, errlen);
        if (!op)
            goto fail;
        if (s->n > INT32_MAX || point_of(s->ms, (int)s->n, &pt, NAN) || calfile_add_point(op, &pt)) {
            failf(err, errlen, "stage %s: cannot compute the statistics (out of memory?)", s->name);
            goto fail;
        }
    }
    return 0;
fail:
    calf_free(f);
    return -1;
}

#define PROM_QUANTILES 1000

int import_prom_calfile(const import_prom *p, const char *model, calf_file *f, char *err, size_t errlen)
{
    file_head(f, "Prometheus histograms");
    double *x = malloc(PROM_QUANTILES * sizeof *x);
    if (!x)
        return failf(err, errlen, "out of memory");
    for (int i = 0; i < p->nstages; i++) {
        const import_prom_stage *s = &p->stages[i];
        calf_point pt;
        calf_op *op = stage_op(f, s->name, model, err, errlen);
        if (!op)
            goto fail;
        for (int k = 0; k < PROM_QUANTILES; k++)
            x[k] = import_prom_quantile(s, (k + 0.5) / PROM_QUANTILES);
        if (x[0] <= 0) {
            failf(err, errlen, "stage %s: the lowest bucket starts at 0, so no lognormal can be fitted "
                  "(quantile %g ms)", s->name, x[0]);
            goto fail;
        }
        if (point_of(x, PROM_QUANTILES, &pt, s->has_sum ? s->sum_ms / s->total : NAN)) {
            failf(err, errlen, "stage %s: cannot compute the statistics", s->name);
            goto fail;
        }
        pt.n = s->total > INT32_MAX ? INT32_MAX : (int)s->total;
        if (pt.n < 1)
            pt.n = 1;
        if (calfile_add_point(op, &pt)) {
            failf(err, errlen, "out of memory");
            goto fail;
        }
    }
    free(x);
    return 0;
fail:
    free(x);
    calf_free(f);
    return -1;
}

int import_trace_samples_csv(FILE *out, const import_trace *t, const char *model)
{
    char buf[40];
    fputs(CALFILE_SAMPLES_HEADER, out);
    for (int i = 0; i < t->nstages; i++)
        for (size_t k = 0; k < t->stages[i].n; k++) {
            shortest(buf, sizeof buf, t->stages[i].ms[k]);
            fprintf(out, "%s,%s,1,0,0,0,0,%zu,%s\n", t->stages[i].name, model, k, buf);
        }
    return ferror(out) ? -1 : 0;
}
