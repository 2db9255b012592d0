/* frontier.c — the cost-vs-p99 frontier of a sweep. See frontier.h.
 *
 * A CSV reader and pure functions over its table. This file must never run
 * a simulation, print on its own (the report goes to the FILE* it is
 * given), or keep global mutable state. */
#include "models/frontier.h"
#include "sim/slurp.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct {
    char **v;
    int n, cap;
} strvec;

static int sv_push(strvec *s, char *x)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

static void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

typedef struct {
    const char *p, *end;
    int line;
    const char *name;
    char *err;
    size_t errlen;
} csv_reader;

/* One record into fields; 1 read, 0 at the end of the input, -1 error. */
static int csv_record(csv_reader *r, strvec *fields)
{
    if (r->p >= r->end)
        return 0;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        n = 0;
        bool quoted = false;
        int qline = r->line;
        if (r->p < r->end && *r->p == '"') {
            quoted = true;
            r->p++;
        }
        for (;;) {
            if (r->p >= r->end) {
                if (quoted) {
                    fmt_err(r->err, r->errlen, "%s:%d: quoted field never closed", r->name, qline);
                    free(buf);
                    return -1;
                }
                break;
            }
            char c = *r->p;
            if (quoted) {
                if (c == '"') {
                    if (r->p + 1 < r->end && r->p[1] == '"') {
                        r->p += 2;
                    } else {
                        r->p++;
                        quoted = false;
                        if (r->p < r->end && *r->p != ',' && *r->p != '\n' && *r->p != '\r') {
                            fmt_err(r->err, r->errlen, "%s:%d: text after a closing quote",
                                    r->name, r->line);
                            free(buf);
                            return -1;
                        }
                        continue;
                    }
                } else {
                    if (c == '\n')
                        r->line++;
                    r->p++;
                }
            } else {
                if (c == ',' || c == '\n' || c == '\r')
                    break;
                if (c == '"') {
                    fmt_err(r->err, r->errlen, "%s:%d: a quote inside an unquoted field",
                            r->name, r->line);
                    free(buf);
                    return -1;
                }
                r->p++;
            }
            if (n + 2 > cap) {
                cap = cap ? 2 * cap : 64;
                char *nb = realloc(buf, cap);
                if (!nb) {
                    free(buf);
                    fmt_err(r->err, r->errlen, "%s: out of memory", r->name);
                    return -1;
                }
                buf = nb;
            }
            buf[n++] = c;
        }
        char *field = malloc(n + 1);
        if (!field || sv_push(fields, field) != 0) {
            free(field);
            free(buf);
            fmt_err(r->err, r->errlen, "%s: out of memory", r->name);
            return -1;
        }
        if (n)
            memcpy(field, buf, n);
        field[n] = 0;
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        /* end of record */
        if (r->p < r->end && *r->p == '\r')
            r->p++;
        if (r->p < r->end && *r->p == '\n')
            r->p++;
        r->line++;
        free(buf);
        return 1;
    }
}

int frontier_col(const frontier_table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c], name) == 0)
            return c;
    return -1;
}

static int col2(const frontier_table *t, const char *a, const char *b)
{
    int c = frontier_col(t, a);
    return c >= 0 ? c : frontier_col(t, b);
}

void frontier_free(frontier_table *t)
{
    if (t->cols)
        for (int c = 0; c < t->ncols; c++)
            free(t->cols[c]);
    if (t->text)
        for (size_t i = 0; i < (size_t)t->nrows * (size_t)t->ncols; i++)
            free(t->text[i]);
    free(t->cols);
    free(t->text);
    free(t->num);
    free(t->line);
    memset(t, 0, sizeof *t);
}

/* The number in s (spaces around allowed), or NaN when empty; *ok false
 * when it is not a number. */
static double parse_num(const char *s, bool *ok)
{
    *ok = true;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return NAN;
    char *e;
    double v = strtod(s, &e);
    while (isspace((unsigned char)*e))
        e++;
    if (*e || e == s) {
        *ok = false;
        return NAN;
    }
    return v;
}

static bool blank_record(const strvec *f)
{
    return f->n == 1 && f->v[0][0] == 0;
}

int frontier_parse(const char *text, size_t len, const char *name, frontier_table *t,
                   char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    csv_reader r = { text, text + len, 1, t->name, err, errlen };
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        r.p += 3;                                   /* a UTF-8 byte-order mark */
    strvec hdr = { 0 }, cells = { 0 };
    int *lines = NULL;
    size_t nlines = 0, capl = 0;
    int rc = csv_record(&r, &hdr);
    if (rc <= 0) {
        if (rc == 0)
            fmt_err(err, errlen, "%s: empty; expected a results.csv header", t->name);
        goto fail;
    }
    t->ncols = hdr.n;
    for (int c = 0; c < hdr.n; c++)
        for (int d = 0; d < c; d++)
            if (strcmp(hdr.v[c], hdr.v[d]) == 0) {
                fmt_err(err, errlen, "%s:1: column '%s' appears twice", t->name, hdr.v[c]);
                goto fail;
            }
    t->cols = hdr.v;
    t->ncols = hdr.n;
    static const char *const REQ[] = { "point", "frame_p50", "frame_p99", "cost_per_stream_hour" };
    for (size_t k = 0; k < sizeof REQ / sizeof REQ[0]; k++)
        if (frontier_col(t, REQ[k]) < 0) {
            fmt_err(err, errlen, "%s:1: no column '%s' (is this the results.csv of a vlsim "
                    "sweep?)", t->name, REQ[k]);
            t->cols = NULL;
            goto fail;
        }
    t->c_point = frontier_col(t, "point");
    t->cfg_first = t->c_point + 1;
    t->cfg_end = frontier_col(t, "frame_p50");
    if (t->cfg_end < t->cfg_first) {
        fmt_err(err, errlen, "%s:1: column 'frame_p50' comes before 'point'", t->name);
        t->cols = NULL;
        goto fail;
    }
    t->cols = NULL;              /* owned by hdr until the table is complete */
    for (;;) {
        int line = r.line;
        size_t before = (size_t)cells.n;
        rc = csv_record(&r, &cells);
        if (rc < 0)
            goto fail;
        if (rc == 0)
            break;
        strvec rec = { cells.v + before, cells.n - (int)before, 0 };
        if (blank_record(&rec)) {                   /* an empty line */
            free(cells.v[before]);
            cells.n = (int)before;
            continue;
        }
        if (rec.n != hdr.n) {
            fmt_err(err, errlen, "%s:%d: %d fields, but the header has %d", t->name, line,
                    rec.n, hdr.n);
            goto fail;
        }
        if (nlines == capl) {
            capl = capl ? 2 * capl : 64;
            int *nl = realloc(lines, capl * sizeof *nl);
            if (!nl) {
                fmt_err(err, errlen, "%s: out of memory", t->name);
                goto fail;
            }
            lines = nl;
        }
        lines[nlines++] = line;
    }
    t->nrows = (int)nlines;
    t->num = malloc(((size_t)cells.n + 1) * sizeof *t->num);
    if (!t->num) {
        fmt_err(err, errlen, "%s: out of memory", t->name);
        goto fail;
    }
    for (int i = 0; i < t->nrows; i++)
        for (int c = 0; c < t->ncols; c++) {
            size_t k = (size_t)i * (size_t)t->ncols + (size_t)c;
            bool ok;
            t->num[k] = parse_num(cells.v[k], &ok);
            bool cfgcol = c >= t->cfg_first && c < t->cfg_end;
            if (!ok && !cfgcol) {
                fmt_err(err, errlen, "%s:%d: column %s: not a number: '%s'", t->name, lines[i],
                        hdr.v[c], cells.v[k]);
                goto fail;
            }
        }
    t->cols = hdr.v;
    t->text = cells.v;
    t->line = lines;
    t->c_fps = col2(t, "fps", "workload.fps");
    t->c_streams = col2(t, "streams", "workload.streams");
    t->c_gpus = col2(t, "gpus", "cluster.gpus");
    t->c_cost = frontier_col(t, "cost_per_stream_hour");
    t->c_p99 = frontier_col(t, "frame_p99");
    t->c_drop = frontier_col(t, "drop_rate");
    t->c_sla = frontier_col(t, "sla_pass");
    t->c_stable = frontier_col(t, "stable");
    return 0;
fail:
    sv_free(&hdr);
    sv_free(&cells);
    free(lines);
    free(t->num);
    memset(t, 0, sizeof *t);
    return -1;
}

int frontier_read(const char *path, frontier_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    size_t n;
    int e;
    char *buf = slurp_file(path, 0, &n, &e);
    if (!buf) {
        fmt_err(err, errlen, "%s: cannot %s: %s", path,
                e == ENOENT || e == EACCES || e == ENOTDIR ? "open" : "read", strerror(e));
        return -1;
    }
    int rc = frontier_parse(buf, n, path, t, err, errlen);
    free(buf);
    return rc;
}

/* ---- targets ------------------------------------------------------------------- */

void frontier_opts_default(frontier_opts *o)
{
    o->max_drop_rate = 0.01;
    o->use_ci = true;
}

int frontier_default_targets(frontier_target *t, int max)
{
    static const frontier_target DEF[2] = { { "frame", 95, 100 }, { "frame", 99, 200 } };
    for (int k = 0; k < 2 && k < max; k++)
        t[k] = DEF[k];
    return 2;
}

void frontier_target_str(const frontier_target *t, char *buf, size_t n)
{
    snprintf(buf, n, "%s p%g <= %g ms", t->metric, t->percentile, t->ms);
}

int frontier_target_parse(const char *s, frontier_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *lt = strchr(s, '<');
    if (!lt) {
        fmt_err(err, errlen, "target '%s': expected METRIC pNN <= MS, e.g. 'frame p95 <= 100'", s);
        return -1;
    }
    /* the left side: METRIC, a separator (space, '_' or '.'), pNN */
    const char *b = s, *e = lt;
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    const char *p = e;
    while (p > b && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
        p--;
    if (p == e || p - 1 <= b || (p[-1] != 'p' && p[-1] != 'P')) {
        fmt_err(err, errlen, "target '%s': expected METRIC pNN before '<'", s);
        return -1;
    }
    char pct[16];
    if (e - p >= (long)sizeof pct) {
        fmt_err(err, errlen, "target '%s': bad percentile", s);
        return -1;
    }
    memcpy(pct, p, (size_t)(e - p));
    pct[e - p] = 0;
    t->percentile = atof(pct);
    const char *m = p - 1;                       /* at the 'p' */
    while (m > b && (isspace((unsigned char)m[-1]) || m[-1] == '_' || m[-1] == '.'))
        m--;
    if (m == p - 1 || m == b) {
        fmt_err(err, errlen, "target '%s': expected METRIC pNN, e.g. 'frame p95'", s);
        return -1;
    }
    if ((size_t)(m - b) >= sizeof t->metric) {
        fmt_err(err, errlen, "target '%s': metric name too long", s);
        return -1;
    }
    memcpy(t->metric, b, (size_t)(m - b));
    t->metric[m - b] = 0;
    bool stage = strcmp(t->metric, "frame") != 0 && strcmp(t->metric, "response") != 0;
    if (stage ? t->percentile != 99
              : t->percentile != 50 && t->percentile != 95 && t->percentile != 99) {
        fmt_err(err, errlen, "target '%s': results.csv has %s; not p%s", s,
                stage ? "only p99 of a stage" : "p50, p95 and p99", pct);
        return -1;
    }
    /* the right side: '<' or '<=', a number, optionally "ms" */
    const char *r = lt + 1;
    if (*r == '=')
        r++;
    char *end;
    t->ms = strtod(r, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (strncmp(end, "ms", 2) == 0)
        end += 2;
    while (isspace((unsigned char)*end))
        end++;
    if (end == r || *end || !(t->ms > 0) || !isfinite(t->ms)) {
        fmt_err(err, errlen, "target '%s': expected a number of ms > 0 after '<='", s);
        return -1;
    }
    return 0;
}

static double cell(const frontier_table *t, int r, int c)
{
    return c < 0 ? NAN : t->num[(size_t)r * (size_t)t->ncols + (size_t)c];
}

static const char *text(const frontier_table *t, int r, int c)
{
    return c < 0 ? "" : t->text[(size_t)r * (size_t)t->ncols + (size_t)c];
}

bool frontier_row_eligible(const frontier_table *t, int r, const frontier_opts *o)
{
    if (!isfinite(cell(t, r, t->c_cost)) || !isfinite(cell(t, r, t->c_p99)))
        return false;
    if (t->c_stable >= 0 && cell(t, r, t->c_stable) == 0)
        return false;                        /* unstable: its p99 is a transient's */
    double d = cell(t, r, t->c_drop);
    return !(o->max_drop_rate >= 0) || !isfinite(d) || d <= o->max_drop_rate;
}

static void target_cols(const frontier_target *g, char *col, char *hi, size_t n)
{
    bool stage = strcmp(g->metric, "frame") != 0 && strcmp(g->metric, "response") != 0;
    if (stage) {
        snprintf(col, n, "p99_%s", g->metric);
        hi[0] = 0;
    } else {
        snprintf(col, n, "%s_p%g", g->metric, g->percentile);
        snprintf(hi, n, "%s_p%g_hi", g->metric, g->percentile);
    }
}

double frontier_target_value(const frontier_table *t, int r, const frontier_target *g,
                             const frontier_opts *o, bool *missing)
{
    char col[96], hi[96];
    target_cols(g, col, hi, sizeof col);
    int c = frontier_col(t, col), h = hi[0] ? frontier_col(t, hi) : -1;
    *missing = c < 0;
    if (c < 0)
        return NAN;
    double v = cell(t, r, c), u = cell(t, r, h);
    return o->use_ci && isfinite(u) ? u : v;
}

int frontier_cheapest(const frontier_table *t, const frontier_target *g, const frontier_opts *o,
                      int *row, char *err, size_t errlen)
{
    *row = -1;
    char col[96], hi[96];
    target_cols(g, col, hi, sizeof col);
    if (frontier_col(t, col) < 0) {
        char ts[128];
        frontier_target_str(g, ts, sizeof ts);
        fmt_err(err, errlen, "%s: no column '%s' for the target %s", t->name, col, ts);
        return -1;
    }
    double best_cost = INFINITY, best_v = INFINITY;
    for (int r = 0; r < t->nrows; r++) {
        if (!frontier_row_eligible(t, r, o))
            continue;
        bool missing;
        double v = frontier_target_value(t, r, g, o, &missing);
        if (!(v <= g->ms))
            continue;
        double c = cell(t, r, t->c_cost);
        if (c < best_cost || (c == best_cost && v < best_v)) {
            best_cost = c;
            best_v = v;
            *row = r;
        }
    }
    return 0;
}

int frontier_cheapest_sla(const frontier_table *t, const frontier_opts *o)
{
    int best = -1;
    for (int r = 0; r < t->nrows; r++) {
        if (!frontier_row_eligible(t, r, o) || cell(t, r, t->c_sla) != 1)
            continue;
        double c = cell(t, r, t->c_cost), p = cell(t, r, t->c_p99);
        if (best < 0 || c < cell(t, best, t->c_cost) ||
            (c == cell(t, best, t->c_cost) && p < cell(t, best, t->c_p99)))
            best = r;
    }
    return best;
}

/* ---- Pareto ---------------------------------------------------------------------- */

typedef struct {
    double fps, cost, p99;
    int row;
} prow;

static int cmp_fps(double a, double b)
{
    bool na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na - nb;          /* NaN last */
    return a < b ? -1 : a > b;
}

static int cmp_prow(const void *va, const void *vb)
{
    const prow *a = va, *b = vb;
    int c = cmp_fps(a->fps, b->fps);
    if (c)
        return c;
    if (a->cost != b->cost)
        return a->cost < b->cost ? -1 : 1;
    if (a->p99 != b->p99)
        return a->p99 < b->p99 ? -1 : 1;
    return a->row - b->row;
}

void frontier_pareto_free(frontier_pareto_set *s)
{
    for (int g = 0; g < s->ngroups; g++)
        free(s->g[g].rows);
    free(s->g);
    memset(s, 0, sizeof *s);
}

int frontier_pareto(const frontier_table *t, const frontier_opts *o, frontier_pareto_set *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    prow *v = malloc(((size_t)t->nrows + 1) * sizeof *v);
    if (!v) {
        fmt_err(err, errlen, "out of memory");
        return -1;
    }
    int n = 0;
    for (int r = 0; r < t->nrows; r++) {
        if (!isfinite(cell(t, r, t->c_cost)) || !isfinite(cell(t, r, t->c_p99))) {
            out->left_out_empty++;
            continue;
        }
        if (t->c_stable >= 0 && cell(t, r, t->c_stable) == 0) {
            out->left_out_unstable++;
            continue;
        }
        if (!frontier_row_eligible(t, r, o)) {
            out->left_out_drops++;
            continue;
        }
        v[n++] = (prow){ cell(t, r, t->c_fps), cell(t, r, t->c_cost), cell(t, r, t->c_p99), r };
    }
    qsort(v, (size_t)n, sizeof *v, cmp_prow);
    for (int i = 0; i < n;) {
        int j = i;                                   /* [i, j): one fps group */
        while (j < n && cmp_fps(v[j].fps, v[i].fps) == 0)
            j++;
        frontier_group *ng = realloc(out->g, ((size_t)out->ngroups + 1) * sizeof *ng);
        if (!ng)
            goto oom;
        out->g = ng;
        frontier_group *g = &out->g[out->ngroups++];
        memset(g, 0, sizeof *g);
        g->fps = v[i].fps;
        g->neligible = j - i;
        g->rows = malloc((size_t)(j - i) * sizeof *g->rows);
        if (!g->rows)
            goto oom;
        /* by cost, then p99: a row survives when no cheaper row has a p99 at
         * or below its own, and it has the lowest p99 at its cost */
        double best_before = INFINITY;               /* lowest p99 at lower costs */
        for (int k = i; k < j;) {
            int m = k;                               /* [k, m): one cost */
            while (m < j && v[m].cost == v[k].cost)
                m++;
            double low = v[k].p99;
            for (int q = k; q < m && v[q].p99 == low; q++)
                if (low < best_before)
                    g->rows[g->n++] = v[q].row;
            if (low < best_before)
                best_before = low;
            k = m;
        }
        i = j;
    }
    free(v);
    return 0;
oom:
    free(v);
    frontier_pareto_free(out);
    fmt_err(err, errlen, "out of memory");
    return -1;
}

/* ---- the report -------------------------------------------------------------------- */

void frontier_describe(const frontier_table *t, int r, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
#define ADD(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    const char *s = text(t, r, t->c_streams), *g = text(t, r, t->c_gpus),
               *f = text(t, r, t->c_fps);
    if (*s)
        ADD("%s stream%s", s, strcmp(s, "1") ? "s" : "");
    if (*g)
        ADD("%s%s GPU%s", *s ? " on " : "", g, strcmp(g, "1") ? "s" : "");
    if (*f)
        ADD("%sfps %s", k ? ", " : "", f);
    for (int c = t->cfg_first; c < t->cfg_end; c++) {
        if (c == t->c_streams || c == t->c_gpus || c == t->c_fps)
            continue;
        ADD("%s%s=%s", k ? ", " : "", t->cols[c], text(t, r, c));
    }
    if (!k)
        ADD("point %s", text(t, r, t->c_point));
#undef ADD
}

/* "$0.125", "$0.50", "$12.00": dollars with at least two decimals and up to
 * four where they matter */
static void money(double v, char *buf, size_t n)
{
    if (fabs(v) >= 1) {
        snprintf(buf, n, "$%.2f", v);
        return;
    }
    snprintf(buf, n, "$%.4f", v);
    size_t k = strlen(buf);
    while (k > 0 && buf[k - 1] == '0' && k - 1 > (size_t)(strchr(buf, '.') - buf) + 2)
        buf[--k] = 0;
}

int frontier_report(FILE *f, const frontier_table *t, const frontier_target *targets, int ntargets,
                    const frontier_opts *o, char *err, size_t errlen)
{
    frontier_pareto_set ps;
    if (frontier_pareto(t, o, &ps, err, errlen) != 0)
        return -1;
    char desc[512], m[32];
    fprintf(f, "%s: %d point%s. Pareto set of (cost per stream-hour, frame p99), lower is "
            "better on both:\n", t->name, t->nrows, t->nrows == 1 ? "" : "s");
    for (int gi = 0; gi < ps.ngroups; gi++) {
        const frontier_group *g = &ps.g[gi];
        if (isnan(g->fps))
            fprintf(f, "  %s (%d of %d points)\n", t->c_fps >= 0 ? "no fps" : "all points", g->n,
                    g->neligible);
        else
            fprintf(f, "  fps %g (%d of %d points)\n", g->fps, g->n, g->neligible);
        for (int k = 0; k < g->n; k++) {
            int r = g->rows[k];
            char ms[64];
            money(cell(t, r, t->c_cost), m, sizeof m);
            snprintf(ms, sizeof ms, "%s/stream-hour", m);
            frontier_describe(t, r, desc, sizeof desc);
            fprintf(f, "    %-20s frame p99 %9.2f ms  %s (point %s)\n", ms,
                    cell(t, r, t->c_p99), desc, text(t, r, t->c_point));
        }
    }
    if (ps.ngroups == 0)
        fprintf(f, "  (no point has both a cost and a frame p99)\n");
    if (ps.left_out_drops)
        fprintf(f, "  %d point%s left out: frame drop rate above %g%%\n", ps.left_out_drops,
                ps.left_out_drops == 1 ? "" : "s", 100 * o->max_drop_rate);
    if (ps.left_out_unstable)
        fprintf(f, "  %d point%s left out: unstable (a queue grew without bound)\n",
                ps.left_out_unstable, ps.left_out_unstable == 1 ? "" : "s");
    if (ps.left_out_empty)
        fprintf(f, "  %d point%s left out: no cost per stream-hour or no frame p99\n",
                ps.left_out_empty, ps.left_out_empty == 1 ? "" : "s");
    frontier_pareto_free(&ps);

    fprintf(f, "Cheapest configuration meeting each target (%s):\n",
            o->use_ci ? "the 95% CI's upper end within it" : "the estimate within it");
    for (int k = 0; k < ntargets; k++) {
        const frontier_target *g = &targets[k];
        char ts[128];
        frontier_target_str(g, ts, sizeof ts);
        int r;
        if (frontier_cheapest(t, g, o, &r, err, errlen) != 0)
            return -1;
        if (r >= 0) {
            bool missing;
            double v = frontier_target_value(t, r, g, o, &missing);
            money(cell(t, r, t->c_cost), m, sizeof m);
            frontier_describe(t, r, desc, sizeof desc);
            fprintf(f, "  %s: %s: %s/stream-hour (point %s: %.2f ms)\n", ts, desc, m,
                    text(t, r, t->c_point), v);
            continue;
        }
        /* none meets it: say how close the sweep came */
        int best = -1;
        double bv = INFINITY;
        for (int q = 0; q < t->nrows; q++) {
            bool missing;
            double v = frontier_target_value(t, q, g, o, &missing);
            if (frontier_row_eligible(t, q, o) && v < bv) {
                bv = v;
                best = q;
            }
        }
        if (best >= 0) {
            frontier_describe(t, best, desc, sizeof desc);
            fprintf(f, "  %s: no point meets it (the lowest: %.2f ms, %s, point %s)\n", ts, bv,
                    desc, text(t, best, t->c_point));
        } else {
            fprintf(f, "  %s: no point meets it\n", ts);
        }
    }
    bool any_sla = false;
    for (int r = 0; r < t->nrows && t->c_sla >= 0; r++)
        any_sla = any_sla || isfinite(cell(t, r, t->c_sla));
    if (any_sla) {
        int r = frontier_cheapest_sla(t, o);
        if (r >= 0) {
            money(cell(t, r, t->c_cost), m, sizeof m);
            frontier_describe(t, r, desc, sizeof desc);
            fprintf(f, "  the scenario's SLA (every line): %s: %s/stream-hour (point %s)\n", desc,
                    m, text(t, r, t->c_point));
        } else {
            fprintf(f, "  the scenario's SLA (every line): no point meets it\n");
        }
    }
    return 0;
}
