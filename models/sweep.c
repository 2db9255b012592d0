/* sweep.c — sweeps over scenario keys and the capacity search. See sweep.h.
 *
 * Everything a point writes is a function of the point alone (its
 * overrides, the scenario file, the replications seeded from the scenario's
 * seed), never of --jobs or of which thread ran it, so a sweep's files are
 * byte-identical for any --jobs and after any --resume. This file must
 * never print, exit, or write outside the sweep's directory, and it keeps no
 * global mutable state (the work queue's state lives on the caller's stack). */
#include "models/sweep.h"
#include "models/sweep_int.h"
#include "sim/slurp.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "models/report.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/out.h"
#include "sim/rep.h"
#include "sim/rng.h"
#include "sim/stop.h"

#define POINT_FORMAT 1           /* "vlsim_sweep_point": the point file's format */
#define MSG 1024                 /* message buffers */

void sweep_fmt_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- axes ------------------------------------------------------------------- */

const char *sweep_canonical_key(const char *key)
{
    if (strcmp(key, "streams") == 0)
        return "workload.streams";
    if (strcmp(key, "fps") == 0)
        return "workload.fps";
    if (strcmp(key, "gpus") == 0)
        return "cluster.gpus";
    return key;
}

static bool same_key(const char *a, const char *b)
{
    return strcmp(sweep_canonical_key(a), sweep_canonical_key(b)) == 0;
}

/* Copy [s, e) without the spaces around it into out (n bytes); the trimmed
 * length, or -1 when it does not fit. */
static int trim_copy(const char *s, const char *e, char *out, size_t n)
{
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    size_t len = (size_t)(e - s);
    if (len + 1 > n)
        return -1;
    memcpy(out, s, len);
    out[len] = 0;
    return (int)len;
}

static int axis_check_values(const sweep_axis *a, const char *what, char *err, size_t errlen)
{
    if (a->nvalues < 1) {
        sweep_fmt_err(err, errlen, "%s %s: no values", what, a->key);
        return -1;
    }
    for (int i = 0; i < a->nvalues; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(a->values[i], a->values[j]) == 0) {
                sweep_fmt_err(err, errlen, "%s %s: value '%s' given twice", what, a->key, a->values[i]);
                return -1;
            }
    return 0;
}

int sweep_axis_parse(const char *spec, sweep_axis *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(spec, '=');
    if (!eq) {
        sweep_fmt_err(err, errlen, "axis '%s': expected KEY=V1,V2,...", spec);
        return -1;
    }
    int klen = trim_copy(spec, eq, out->key, sizeof out->key);
    if (klen < 0) {
        sweep_fmt_err(err, errlen, "axis '%s': key longer than %zu characters", spec,
                sizeof out->key - 1);
        return -1;
    }
    if (klen == 0) {
        sweep_fmt_err(err, errlen, "axis '%s': empty key", spec);
        return -1;
    }
    const char *p = eq + 1;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        if (out->nvalues == CFG_MAX_AXIS_VALUES) {
            sweep_fmt_err(err, errlen, "axis %s: more than %d values", out->key, CFG_MAX_AXIS_VALUES);
            return -1;
        }
        char *v = out->values[out->nvalues];
        int vlen = trim_copy(p, end, v, sizeof out->values[0]);
        if (vlen < 0) {
            sweep_fmt_err(err, errlen, "axis %s: value '%.*s' longer than %zu characters", out->key,
                    (int)(end - p), p, sizeof out->values[0] - 1);
            return -1;
        }
        if (vlen == 0) {
            sweep_fmt_err(err, errlen, "axis %s: empty value in '%s'", out->key, eq + 1);
            return -1;
        }
        out->nvalues++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return axis_check_values(out, "axis", err, errlen);
}

int sweep_axes_merge(const sweep_axis *scn, int nscn, const sweep_axis *cli, int ncli,
                     sweep_axis *out, int *nout, char *err, size_t errlen)
{
    int n = 0;
    for (int i = 0; i < ncli; i++)
        for (int j = 0; j < i; j++)
            if (same_key(cli[i].key, cli[j].key)) {
                sweep_fmt_err(err, errlen, "axis %s given twice on the command line%s%s%s", cli[i].key,
                        strcmp(cli[i].key, cli[j].key) ? " (as " : "",
                        strcmp(cli[i].key, cli[j].key) ? cli[j].key : "",
                        strcmp(cli[i].key, cli[j].key) ? ")" : "");
                return -1;
            }
    for (int i = 0; i < nscn; i++) {
        for (int j = 0; j < i; j++)
            if (same_key(scn[i].key, scn[j].key)) {
                sweep_fmt_err(err, errlen, "sweep: axis %s given twice (as %s)", scn[i].key, scn[j].key);
                return -1;
            }
        const sweep_axis *a = &scn[i];
        for (int j = 0; j < ncli; j++)
            if (same_key(cli[j].key, scn[i].key))
                a = &cli[j];
        if (n == CFG_MAX_AXES) {
            sweep_fmt_err(err, errlen, "more than %d axes", CFG_MAX_AXES);
            return -1;
        }
        if (axis_check_values(a, a == &scn[i] ? "sweep axis" : "axis", err, errlen) != 0)
            return -1;
        out[n++] = *a;
    }
    for (int j = 0; j < ncli; j++) {
        bool replaced = false;
        for (int i = 0; i < nscn; i++)
            replaced = replaced || same_key(cli[j].key, scn[i].key);
        if (replaced)
            continue;
        if (n == CFG_MAX_AXES) {
            sweep_fmt_err(err, errlen, "more than %d axes", CFG_MAX_AXES);
            return -1;
        }
        if (axis_check_values(&cli[j], "axis", err, errlen) != 0)
            return -1;
        out[n++] = cli[j];
    }
    *nout = n;
    return 0;
}

/* ---- points ------------------------------------------------------------------ */

uint64_t sweep_grid_size(const sweep_axis *axes, int naxes)
{
    uint64_t t = 1;
    for (int a = 0; a < naxes; a++) {
        uint64_t m = axes[a].nvalues > 0 ? (uint64_t)axes[a].nvalues : 0;
        if (m == 0)
            return 0;
        if (t > UINT64_MAX / m)
            return UINT64_MAX;
        t *= m;
    }
    return t;
}

/* Uniform on [0, m), m >= 1, without modulo bias. */
static uint64_t rand_below(gsl_rng *r, uint64_t m)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % m;
    for (;;) {
        uint64_t x = rng_next64(r);
        if (x < lim)
            return x % m;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Point p's value indices from its grid number L (last axis fastest). */
static void decode_point(const sweep_axis *axes, int naxes, uint64_t L, int *idx)
{
    for (int a = naxes - 1; a >= 0; a--) {
        idx[a] = (int)(L % (uint64_t)axes[a].nvalues);
        L /= (uint64_t)axes[a].nvalues;
    }
}

/* A set of n distinct grid numbers below T drawn uniformly (Floyd's
 * algorithm over an open-addressing table), sorted. */
static int floyd_sample(gsl_rng *r, uint64_t T, int n, uint64_t *out)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    uint64_t *tab = malloc(cap * sizeof *tab);
    unsigned char *used = calloc(cap, 1);
    if (!tab || !used) {
        free(tab);
        free(used);
        return -1;
    }
    int k = 0;
    for (uint64_t j = T - (uint64_t)n; j < T; j++) {
        uint64_t t = rand_below(r, j + 1);
        /* insert t, or j when t is already there */
        for (int pass = 0; pass < 2; pass++) {
            uint64_t v = pass ? j : t;
            size_t h = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
            bool found = false;
            while (used[h]) {
                if (tab[h] == v) {
                    found = true;
                    break;
                }
                h = (h + 1) & (cap - 1);
            }
            if (found)
                continue;             /* t taken: try j (never taken: j grows) */
            used[h] = 1;
            tab[h] = v;
            out[k++] = v;
            break;
        }
    }
    free(tab);
    free(used);
    qsort(out, (size_t)n, sizeof *out, cmp_u64);
    return 0;
}

void sweep_points_free(sweep_points *p)
{
    free(p->idx);
    memset(p, 0, sizeof *p);
}

int sweep_points_make(const sweep_axis *axes, int naxes, sweep_sample kind, int n,
                      uint64_t seed, sweep_points *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (naxes < 0 || naxes > CFG_MAX_AXES) {
        sweep_fmt_err(err, errlen, "%d axes: at most %d", naxes, CFG_MAX_AXES);
        return -1;
    }
    for (int a = 0; a < naxes; a++)
        if (axes[a].nvalues < 1 || axes[a].nvalues > CFG_MAX_AXIS_VALUES) {
            sweep_fmt_err(err, errlen, "axis %s: %d values (1 to %d)", axes[a].key, axes[a].nvalues,
                    CFG_MAX_AXIS_VALUES);
            return -1;
        }
    if (kind != SWEEP_GRID && (n < 1 || n > SWEEP_MAX_POINTS)) {
        sweep_fmt_err(err, errlen, "%s %d: the number of samples must be 1 to %d",
                kind == SWEEP_LHS ? "lhs" : "random", n, SWEEP_MAX_POINTS);
        return -1;
    }
    uint64_t T = sweep_grid_size(axes, naxes);
    out->naxes = naxes;
    if (naxes == 0) {                 /* one point: the scenario as written */
        out->npoints = 1;
        return 0;
    }
    uint64_t *L = NULL;
    int np = 0;
    gsl_rng *r = NULL;
    if (kind == SWEEP_GRID || (kind == SWEEP_RANDOM && (uint64_t)n >= T)) {
        if (T > SWEEP_MAX_POINTS) {
            sweep_fmt_err(err, errlen, "the grid has %llu points, more than %d; sample it "
                    "(random N or lhs N) or use fewer values",
                    (unsigned long long)T, SWEEP_MAX_POINTS);
            return -1;
        }
        np = (int)T;
        L = malloc((size_t)np * sizeof *L);
        if (!L)
            goto oom;
        for (int p = 0; p < np; p++)
            L[p] = (uint64_t)p;
    } else if (kind == SWEEP_RANDOM) {
        np = n;
        L = malloc((size_t)np * sizeof *L);
        r = rng_stream(seed, 0, 0);
        if (!L || !r || floyd_sample(r, T, np, L) != 0)
            goto oom;
    } else {                          /* Latin hypercube over value indices */
        np = n;
        L = calloc((size_t)np, sizeof *L);
        int *col = malloc((size_t)np * sizeof *col);
        if (!L || !col) {
            free(col);
            goto oom;
        }
        for (int a = 0; a < naxes; a++) {
            gsl_rng *ra = rng_stream(seed, 1, (uint32_t)a);
            if (!ra) {
                free(col);
                goto oom;
            }
            int m = axes[a].nvalues, q = np / m, rem = np % m;
            int perm[CFG_MAX_AXIS_VALUES];
            for (int v = 0; v < m; v++)
                perm[v] = v;
            for (int v = m - 1; v > 0; v--) {     /* Fisher-Yates */
                int w = (int)rand_below(ra, (uint64_t)v + 1);
                int t = perm[v];
                perm[v] = perm[w];
                perm[w] = t;
            }
            int k = 0;
            for (int i = 0; i < m; i++)           /* perm[0..rem-1] get one use more */
                for (int c = 0; c < q + (i < rem); c++)
                    col[k++] = perm[i];
            for (int i = np - 1; i > 0; i--) {
                int w = (int)rand_below(ra, (uint64_t)i + 1);
                int t = col[i];
                col[i] = col[w];
                col[w] = t;
            }
            for (int p = 0; p < np; p++)
                L[p] = L[p] * (uint64_t)m + (uint64_t)col[p];
            gsl_rng_free(ra);
        }
        free(col);
        qsort(L, (size_t)np, sizeof *L, cmp_u64);
    }
    out->idx = malloc((size_t)np * (size_t)naxes * sizeof *out->idx);
    if (!out->idx)
        goto oom;
    for (int p = 0; p < np; p++)
        decode_point(axes, naxes, L[p], &out->idx[(size_t)p * (size_t)naxes]);
    out->npoints = np;
    free(L);
    if (r)
        gsl_rng_free(r);
    return 0;
oom:
    free(L);
    if (r)
        gsl_rng_free(r);
    sweep_points_free(out);
    sweep_fmt_err(err, errlen, "out of memory making %d sweep points", np);
    return -1;
}

/* ---- CSV and JSON text ----------------------------------------------------------- */

void sweep_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.10g", v);
}

static void csv_ci(FILE *f, const stats_ci *c)
{
    csv_num(f, c->mean);
    csv_num(f, c->lo);
    csv_num(f, c->hi);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Which of streams, fps, gpus get a column of their own: those no axis sets. */
static const char *const CONTEXT[3] = { "streams", "fps", "gpus" };

static bool context_col(const sweep_axis *axes, int naxes, int k)
{
    for (int a = 0; a < naxes; a++)
        if (same_key(axes[a].key, CONTEXT[k]))
            return false;
    return true;
}

/* The header of results.csv for points shaped like cfg (malloc'd, no newline). */
static char *csv_header(const scenario_cfg *cfg, const sweep_axis *axes, int naxes)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("point", f);
    for (int a = 0; a < naxes; a++) {
        fputc(',', f);
        sweep_csv_field(f, axes[a].key);
    }
    for (int k = 0; k < 3; k++)
        if (context_col(axes, naxes, k))
            fprintf(f, ",%s", CONTEXT[k]);
    static const char *const PCT[3] = { "p50", "p95", "p99" };
    static const char *const WHAT[2] = { "frame", "response" };
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 3; k++)
            fprintf(f, ",%s_%s,%s_%s_lo,%s_%s_hi", WHAT[w], PCT[k], WHAT[w], PCT[k], WHAT[w],
                    PCT[k]);
    for (int s = 0; s < cfg->nstages; s++) {
        fputs(",", f);
        char col[CFG_NAME_MAX + 8];
        snprintf(col, sizeof col, "p99_%s", cfg->stages[s].name);
        sweep_csv_field(f, col);
    }
    fputs(",drop_rate,gpu_util,cost_per_stream_hour,sla_pass,stable", f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Point p's results.csv row (malloc'd, no newline). */
static char *csv_row(const run_result *r, const sweep_axis *axes, int naxes, const int *vidx,
                     int p)
{
    const scenario_cfg *c = r->cfg;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "%d", p);
    for (int a = 0; a < naxes; a++) {
        fputc(',', f);
        sweep_csv_field(f, axes[a].values[vidx[a]]);
    }
    bool periodic = c->workload.arrival == ARRIVAL_PERIODIC;
    if (context_col(axes, naxes, 0)) {
        fputc(',', f);
        if (periodic)
            fprintf(f, "%d", c->workload.streams);
    }
    if (context_col(axes, naxes, 1))
        csv_num(f, periodic ? c->workload.fps : NAN);
    if (context_col(axes, naxes, 2)) {
        fputc(',', f);
        if (c->cluster.gpus > 0)
            fprintf(f, "%d", c->cluster.gpus);
    }
    csv_ci(f, &r->e2e.p50);
    csv_ci(f, &r->e2e.p95);
    csv_ci(f, &r->e2e.p99);
    if (r->queries + r->proactive > 0) {
        csv_ci(f, &r->response.p50);
        csv_ci(f, &r->response.p95);
        csv_ci(f, &r->response.p99);
    } else {
        fputs(",,,,,,,,,", f);
    }
    for (int s = 0; s < c->nstages; s++)
        csv_num(f, r->stage[s].completed > 0 ? r->stage[s].sojourn.p99.mean : NAN);
    csv_num(f, r->drop_rate.mean);
    double util = NAN;
    if (r->ngpus > 0) {
        util = 0;
        for (int g = 0; g < r->ngpus; g++)
            util += r->gpu[g].utilization.mean;
        util /= r->ngpus;
    }
    csv_num(f, util);
    csv_num(f, r->cost_per_stream_hour);
    fputc(',', f);
    if (r->nsla > 0) {
        bool pass = true;
        for (int k = 0; k < r->nsla; k++)
            pass = pass && r->sla[k].pass;
        fputc(pass ? '1' : '0', f);
    }
    fputs(r->verdict.stable ? ",1" : ",0", f);  /* 0: a queue grew without bound (run.h) */
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- reading point files: a small JSON reader ----------------------------------- */

typedef struct {
    const char *p, *end;
} jreader;

static void jr_ws(jreader *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static bool jr_lit(jreader *j, char c)
{
    jr_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int jr_hex4(jreader *j, unsigned *u)
{
    if (j->end - j->p < 4)
        return -1;
    *u = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)j->p[i]);
        if (h < 0)
            return -1;
        *u = *u * 16 + (unsigned)h;
    }
    j->p += 4;
    return 0;
}

/* A JSON string at j->p, decoded to a malloc'd UTF-8 string (out NULL: skip). */
static int jr_string(jreader *j, char **out)
{
    if (out)
        *out = NULL;
    if (!jr_lit(j, '"'))
        return -1;
    const char *s = j->p;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p == '\\')
            j->p++;
        j->p++;
    }
    if (j->p >= j->end)
        return -1;
    const char *e = j->p++;
    if (!out)
        return 0;
    char *buf = malloc((size_t)(e - s) + 1), *o = buf;
    if (!buf)
        return -1;
    jreader r = { s, e };
    while (r.p < r.end) {
        unsigned char c = (unsigned char)*r.p++;
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        if (r.p >= r.end)
            goto bad;
        c = (unsigned char)*r.p++;
        switch (c) {
        case '"': case '\\': case '/': *o++ = (char)c; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned u;
            if (jr_hex4(&r, &u) != 0)
                goto bad;
            if (u >= 0xD800 && u < 0xDC00) {     /* a surrogate pair */
                unsigned lo;
                if (r.end - r.p < 6 || r.p[0] != '\\' || r.p[1] != 'u')
                    goto bad;
                r.p += 2;
                if (jr_hex4(&r, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                    goto bad;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (u < 0x80) {
                *o++ = (char)u;
            } else if (u < 0x800) {
                *o++ = (char)(0xC0 | (u >> 6));
                *o++ = (char)(0x80 | (u & 0x3F));
            } else if (u < 0x10000) {
                *o++ = (char)(0xE0 | (u >> 12));
                *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
                *o++ = (char)(0x80 | (u & 0x3F));
            } else {
                *o++ = (char)(0xF0 | (u >> 18));
                *o++ = (char)(0x80 | ((u >> 12) & 0x3F));
                *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
                *o++ = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default:
            goto bad;
        }
    }
    *o = 0;
    *out = buf;
    return 0;
bad:
    free(buf);
    return -1;
}

static int jr_skip(jreader *j, int depth)
{
    if (depth > 64)
        return -1;
    jr_ws(j);
    if (j->p >= j->end)
        return -1;
    char c = *j->p;
    if (c == '"')
        return jr_string(j, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (jr_lit(j, close))
            return 0;
        do {
            if (c == '{' && (jr_string(j, NULL) != 0 || !jr_lit(j, ':')))
                return -1;
            if (jr_skip(j, depth + 1) != 0)
                return -1;
        } while (jr_lit(j, ','));
        return jr_lit(j, close) ? 0 : -1;
    }
    const char *s = j->p;
    while (j->p < j->end && (isalnum((unsigned char)*j->p) || strchr("+-.", *j->p)))
        j->p++;
    return j->p > s ? 0 : -1;
}

static int jr_number(jreader *j, double *v)
{
    jr_ws(j);
    const char *s = j->p;
    while (j->p < j->end && (isdigit((unsigned char)*j->p) || strchr("+-.eE", *j->p)))
        j->p++;
    if (j->p == s || j->p - s > 40)
        return -1;
    char tmp[48];
    memcpy(tmp, s, (size_t)(j->p - s));
    tmp[j->p - s] = 0;
    char *e;
    *v = strtod(tmp, &e);
    return *e ? -1 : 0;
}

void sweep_point_rec_free(sweep_point_rec *r)
{
    free(r->fnv);
    free(r->reps);
    free(r->dur);
    free(r->header);
    free(r->row);
    free(r->scenario);
    free(r->result);
    for (int a = 0; a < r->naxes; a++) {
        free(r->axkey[a]);
        free(r->axval[a]);
    }
    memset(r, 0, sizeof *r);
}

/* A flat object of strings; keys[i] = value (malloc'd). */
static int jr_string_object(jreader *j, char **keys, char **vals, int max, int *n)
{
    *n = 0;
    if (!jr_lit(j, '{'))
        return -1;
    if (jr_lit(j, '}'))
        return 0;
    do {
        if (*n == max)
            return -1;
        if (jr_string(j, &keys[*n]) != 0)
            return -1;
        if (!jr_lit(j, ':') || jr_string(j, &vals[*n]) != 0) {
            free(keys[*n]);
            return -1;
        }
        (*n)++;
    } while (jr_lit(j, ','));
    return jr_lit(j, '}') ? 0 : -1;
}

int sweep_point_parse(const char *text, size_t len, sweep_point_rec *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->format = rec->point = -1;
    jreader j = { text, text + len };
    if (!jr_lit(&j, '{'))
        return -1;
    if (jr_lit(&j, '}'))
        return -1;
    do {
        char *key;
        if (jr_string(&j, &key) != 0)
            return -1;
        int rc = jr_lit(&j, ':') ? 0 : -1;
        if (rc == 0) {
            if (strcmp(key, "vlsim_sweep_point") == 0) {
                rc = jr_number(&j, &rec->format);
            } else if (strcmp(key, "point") == 0) {
                rc = jr_number(&j, &rec->point);
            } else if (strcmp(key, "scenario_fnv1a64") == 0 && !rec->fnv) {
                rc = jr_string(&j, &rec->fnv);
            } else if (strcmp(key, "csv_header") == 0 && !rec->header) {
                rc = jr_string(&j, &rec->header);
            } else if (strcmp(key, "csv_row") == 0 && !rec->row) {
                rc = jr_string(&j, &rec->row);
            } else if (strcmp(key, "scenario") == 0 && !rec->scenario) {
                rc = jr_string(&j, &rec->scenario);
            } else if (strcmp(key, "result") == 0 && !rec->result) {
                jr_ws(&j);
                const char *v = j.p;
                rc = jr_skip(&j, 0);
                if (rc == 0 && !(rec->result = strndup(v, (size_t)(j.p - v))))
                    rc = -1;
            } else if (strcmp(key, "axes") == 0 && rec->naxes == 0) {
                rc = jr_string_object(&j, rec->axkey, rec->axval, CFG_MAX_AXES, &rec->naxes);
            } else if (strcmp(key, "options") == 0 && !rec->reps) {
                char *k[2] = { 0 }, *v[2] = { 0 };
                int n = 0;
                rc = jr_string_object(&j, k, v, 2, &n);
                for (int i = 0; i < n; i++) {
                    if (rc == 0 && strcmp(k[i], "replications") == 0 && !rec->reps) {
                        rec->reps = v[i];
                        v[i] = NULL;
                    } else if (rc == 0 && strcmp(k[i], "duration_s") == 0 && !rec->dur) {
                        rec->dur = v[i];
                        v[i] = NULL;
                    }
                    free(k[i]);
                    free(v[i]);
                }
            } else {
                rc = jr_skip(&j, 0);
            }
        }
        free(key);
        if (rc != 0)
            return -1;
    } while (jr_lit(&j, ','));
    if (!jr_lit(&j, '}'))
        return -1;
    jr_ws(&j);
    if (j.p != j.end)
        return -1;
    return rec->format >= 0 && rec->point >= 0 && rec->fnv && rec->reps && rec->dur && rec->header && rec->row ? 0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
    int e;
    return slurp_file(path, 0, len, &e);
}

/* ---- the sweep -------------------------------------------------------------------- */

typedef struct {
    const char *path;
    const sweep_opts *o;
    sweep_axis axes[CFG_MAX_AXES];
    int naxes;
    sweep_points pts;
    char reps[32], dur[32];      /* override texts; "" when not given */
    bool reps_axis, dur_axis;    /* an axis sets replications / duration_s itself */
    char fnv[17];
    char scn_abs[4096];          /* the scenario's absolute path, for `vlsim plot` */
    char pdir[4200];             /* DIR/points */
    char *header;                /* results.csv header, from point 0 */
    char (*stages)[CFG_NAME_MAX];/* point 0's stage names */
    int nstages;
    int *todo;                   /* the points this call runs */
    int ntodo;
    int ndone;                   /* of them, finished (their files written) */
    pthread_mutex_t lock;
    int fail_idx;                /* lowest failing index (of the current batch), or -1 */
    int fail_code;
    char fail_msg[MSG];
} sweep_ctx;

static const int *point_idx(const sweep_ctx *c, int p)
{
    return c->pts.idx ? &c->pts.idx[(size_t)p * (size_t)c->naxes] : NULL;
}

static size_t point_overrides(const sweep_ctx *c, int p, scn_override *ov)
{
    size_t n = 0;
    if (c->reps[0] && !c->reps_axis)
        ov[n++] = (scn_override){ "replications", c->reps };
    if (c->dur[0] && !c->dur_axis)
        ov[n++] = (scn_override){ "duration_s", c->dur };
    const int *idx = point_idx(c, p);
    for (int a = 0; a < c->naxes; a++)
        ov[n++] = (scn_override){ c->axes[a].key, c->axes[a].values[idx[a]] };
    return n;
}

/* "point 3 (streams=16, gpus=2)" */
static void point_name(const sweep_ctx *c, int p, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "point %d", p);
    const int *idx = point_idx(c, p);
    for (int a = 0; a < c->naxes && k < n; a++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s=%s", a ? ", " : " (", c->axes[a].key,
                              c->axes[a].values[idx[a]]);
    if (c->naxes > 0 && k < n)
        snprintf(buf + k, n - k, ")");
}

static int load_point(const sweep_ctx *c, int p, scenario_cfg *cfg, char *err, size_t errlen)
{
    scn_override ov[CFG_MAX_AXES + 2];
    size_t nov = point_overrides(c, p, ov);
    char msg[MSG] = "";
    if (scn_load_ex(c->path, ov, nov, cfg, msg, sizeof msg) != 0) {
        char name[512];
        point_name(c, p, name, sizeof name);
        sweep_fmt_err(err, errlen, "%s: %s", name, msg);
        return -1;
    }
    return 0;
}

/* Keep the message of the lowest failing index. */
static void record_fail(sweep_ctx *c, int idx, int code, const char *msg)
{
    pthread_mutex_lock(&c->lock);
    if (c->fail_idx < 0 || idx < c->fail_idx) {
        c->fail_idx = idx;
        c->fail_code = code;
        snprintf(c->fail_msg, sizeof c->fail_msg, "%s", msg);
    }
    pthread_mutex_unlock(&c->lock);
}

static int validate_fn(void *vc, int p)
{
    sweep_ctx *c = vc;
    scenario_cfg cfg;
    char msg[MSG];
    if (load_point(c, p, &cfg, msg, sizeof msg) != 0) {
        record_fail(c, p, SWEEP_BAD_INPUT, msg);
        return 1;
    }
    bool same = cfg.nstages == c->nstages;
    for (int s = 0; same && s < cfg.nstages; s++)
        same = strcmp(cfg.stages[s].name, c->stages[s]) == 0;
    cfg_free(&cfg);
    if (!same) {
        char name[512];
        point_name(c, p, name, sizeof name);
        snprintf(msg, sizeof msg, "%s: its stages differ from point 0's; the points of a "
                 "sweep must have the same stages", name);
        record_fail(c, p, SWEEP_BAD_INPUT, msg);
        return 1;
    }
    return 0;
}

static void point_path(const sweep_ctx *c, int p, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%05d.json", c->pdir, p);
}

char *sweep_point_result_text(const run_result *r)
{
    char *json = NULL, *out = NULL;
    size_t jlen = 0, olen = 0;
    FILE *m = open_memstream(&json, &jlen);
    if (!m)
        return NULL;
    report_json(m, r, 0.0);
    if (fclose(m) != 0) {
        free(json);
        return NULL;
    }
    FILE *f = open_memstream(&out, &olen);
    if (!f) {
        free(json);
        return NULL;
    }
    while (jlen > 0 && json[jlen - 1] == '\n')
        jlen--;
    for (size_t i = 0; i < jlen; i++) {          /* indented one level */
        fputc(json[i], f);
        if (json[i] == '\n')
            fputs("  ", f);
    }
    free(json);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

void sweep_point_label(int p, char *const *keys, char *const *vals, int n, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "point %d", p);
    for (int a = 0; a < n && k < len; a++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s=%s", a ? ", " : " (", keys[a], vals[a]);
    if (n > 0 && k < len)
        snprintf(buf + k, len - k, ")");
}

static int write_point(const sweep_ctx *c, int p, const run_result *r, const char *row,
                       char *err, size_t errlen)
{
    char path[4300];
    point_path(c, p, path, sizeof path);
    char *json = sweep_point_result_text(r);
    if (!json) {
        sweep_fmt_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    out_file o;
    if (out_open(&o, path, err, errlen) != 0) {
        free(json);
        return -1;
    }
    FILE *f = o.f;
    fprintf(f, "{\n  \"vlsim_sweep_point\": %d,\n  \"point\": %d,\n  \"stable\": %s,\n"
               "  \"scenario\": ", POINT_FORMAT, p, r->verdict.stable ? "true" : "false");
    json_string(f, c->scn_abs);
    fputs(",\n  \"scenario_fnv1a64\": ", f);
    json_string(f, c->fnv);
    fputs(",\n  \"options\": {\"replications\": ", f);
    json_string(f, c->reps);
    fputs(", \"duration_s\": ", f);
    json_string(f, c->dur);
    fputs("},\n  \"axes\": {", f);
    const int *idx = point_idx(c, p);
    for (int a = 0; a < c->naxes; a++) {
        fputs(a ? ", " : "", f);
        json_string(f, c->axes[a].key);
        fputs(": ", f);
        json_string(f, c->axes[a].values[idx[a]]);
    }
    fputs("},\n  \"csv_header\": ", f);
    json_string(f, c->header);
    fputs(",\n  \"csv_row\": ", f);
    json_string(f, row);
    fputs(",\n  \"result\": ", f);
    fputs(json, f);
    fputs("\n}\n", f);
    free(json);
    return out_commit(&o, err, errlen);
}

/* Does point p's file exist and record this very point? On a match *row
 * (malloc'd) is its results.csv row. */
static bool point_matches(const sweep_ctx *c, int p, char **row)
{
    char path[4300];
    point_path(c, p, path, sizeof path);
    size_t len;
    char *text = slurp(path, &len);
    if (!text)
        return false;
    sweep_point_rec rec;
    bool ok = sweep_point_parse(text, len, &rec) == 0;
    free(text);
    ok = ok && rec.format == POINT_FORMAT && rec.point == p && strcmp(rec.fnv, c->fnv) == 0 &&
         strcmp(rec.reps, c->reps) == 0 && strcmp(rec.dur, c->dur) == 0 &&
         strcmp(rec.header, c->header) == 0 && rec.naxes == c->naxes && !strchr(rec.row, '\n');
    const int *idx = point_idx(c, p);
    for (int a = 0; ok && a < c->naxes; a++)
        ok = strcmp(rec.axkey[a], c->axes[a].key) == 0 &&
             strcmp(rec.axval[a], c->axes[a].values[idx[a]]) == 0;
    if (ok && row) {
        *row = rec.row;
        rec.row = NULL;
    }
    sweep_point_rec_free(&rec);
    return ok;
}

/* Run point p and write its file; 0, or 1 with *code and msg set. */
static int run_point(const sweep_ctx *c, int p, int *code, char *msg, size_t msglen)
{
    scenario_cfg cfg;
    *code = SWEEP_BAD_INPUT;
    if (load_point(c, p, &cfg, msg, msglen) != 0)
        return 1;
    run_opts ro = { 1, NULL, NULL, NULL };
    run_result res;
    char rerr[MSG] = "";
    *code = SWEEP_FAIL;
    int rrc = run_scenario(&cfg, &ro, &res, rerr, sizeof rerr);
    if (rrc == RUN_INTERRUPTED) {                 /* abandoned: no point file */
        *code = SWEEP_INTERRUPTED;
        snprintf(msg, msglen, "interrupted");
        cfg_free(&cfg);
        return 1;
    }
    if (rrc != 0) {
        char name[512];
        point_name(c, p, name, sizeof name);
        sweep_fmt_err(msg, msglen, "%s: %s", name, rerr);
        cfg_free(&cfg);
        return 1;
    }
    int rc = 0;
    char *row = csv_row(&res, c->axes, c->naxes, point_idx(c, p), p);
    if (!row) {
        snprintf(msg, msglen, "point %d: out of memory", p);
        rc = 1;
    } else if (write_point(c, p, &res, row, msg, msglen) != 0) {
        rc = 1;
    }
    free(row);
    run_result_free(&res);
    cfg_free(&cfg);
    return rc;
}

/* The work queue stops taking points once SIGINT or SIGTERM asked
 * (sim/stop.h); a running point's replications see it too and give up. */
static int run_fn(void *vc, int k)
{
    sweep_ctx *c = vc;
    char msg[MSG];
    int code;
    if (stop_requested())
        return 1;
    if (run_point(c, c->todo[k], &code, msg, sizeof msg) != 0) {
        if (code != SWEEP_INTERRUPTED)
            record_fail(c, k, code, msg);
        return 1;
    }
    pthread_mutex_lock(&c->lock);
    c->ndone++;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static void run_progress(void *vc, int done, int total)
{
    sweep_ctx *c = vc;
    if (c->o->progress)
        c->o->progress(c->o->pctx, done, total);
}

int sweep_fnv_file(const char *path, char out[17])
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text)
        return -1;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)text[i];
        h *= 0x100000001b3ull;
    }
    free(text);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    return 0;
}

/* mkdir -p */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
    char buf[4200];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        sweep_fmt_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    for (char *s = buf + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char save = *s;
            *s = 0;
            struct stat st;
            if (stat(buf, &st) != 0) {
                if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                    sweep_fmt_err(err, errlen, "%s: cannot create directory: %s", buf, strerror(errno));
                    return -1;
                }
            } else if (!S_ISDIR(st.st_mode)) {
                sweep_fmt_err(err, errlen, "%s: not a directory", buf);
                return -1;
            }
            *s = save;
            if (!save)
                break;
        }
    }
    return 0;
}

bool sweep_dir_entry_ok(const char *name, bool is_dir)
{
    if (is_dir)
        return strcmp(name, "points") == 0;
    if (strcmp(name, "results.csv") == 0 || strncmp(name, "results.csv.tmp.", 16) == 0)
        return true;
    static const char *const EXT[] = { ".png", ".svg", ".gp", ".dat" };
    size_t n = strlen(name);
    for (size_t k = 0; k < sizeof EXT / sizeof EXT[0]; k++) {
        size_t e = strlen(EXT[k]);
        if (n > e && strcmp(name + n - e, EXT[k]) == 0)
            return true;
    }
    return false;
}

/* NNNNN.json (tmp false) or NNNNN.json.tmp.XXXXXX (tmp true); 5+ digits. */
static bool point_file_name(const char *name, bool *tmp)
{
    size_t d = strspn(name, "0123456789");
    if (d < 5 || strncmp(name + d, ".json", 5) != 0)
        return false;
    *tmp = name[d + 5] != 0;
    return !*tmp || strncmp(name + d + 5, ".tmp.", 5) == 0;
}

static bool is_dir_entry(const char *dir, const char *name)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Check DIR holds only a sweep's files, create it and DIR/points, and
 * remove the temporaries a killed run left. */
static int prepare_dir(sweep_ctx *c, char *err, size_t errlen)
{
    const char *dir = c->o->out_dir;
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        sweep_fmt_err(err, errlen, "%s: not a directory", dir);
        return SWEEP_BAD_INPUT;
    }
    for (int pass = 0; pass < 2; pass++) {         /* 0: check everything, 1: clean up */
        DIR *d = opendir(dir);
        if (!d) {
            if (errno == ENOENT)
                break;
            sweep_fmt_err(err, errlen, "%s: %s", dir, strerror(errno));
            return SWEEP_BAD_INPUT;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            bool isd = is_dir_entry(dir, e->d_name);
            if (pass == 0 && !sweep_dir_entry_ok(e->d_name, isd)) {
                sweep_fmt_err(err, errlen, "%s: holds %s%s, which is not a sweep's; give a new or "
                        "empty directory, or one an earlier sweep wrote", dir, e->d_name,
                        isd ? "/" : "");
                closedir(d);
                return SWEEP_BAD_INPUT;
            }
            if (pass == 1 && strncmp(e->d_name, "results.csv.tmp.", 16) == 0) {
                char path[8400];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        }
        closedir(d);
        d = opendir(c->pdir);
        if (!d)
            continue;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            bool tmp = false;
            bool ok = point_file_name(e->d_name, &tmp) && !is_dir_entry(c->pdir, e->d_name);
            if (pass == 0 && !ok) {
                sweep_fmt_err(err, errlen, "%s: holds %s, which is not a sweep's point file; give a "
                        "new or empty directory", c->pdir, e->d_name);
                closedir(d);
                return SWEEP_BAD_INPUT;
            }
            if (pass == 1 && ok && tmp) {
                char path[8400];
                snprintf(path, sizeof path, "%s/%s", c->pdir, e->d_name);
                unlink(path);
            }
        }
        closedir(d);
    }
    if (make_dirs(dir, err, errlen) != 0 || make_dirs(c->pdir, err, errlen) != 0)
        return SWEEP_FAIL;
    if (access(c->pdir, W_OK) != 0) {
        sweep_fmt_err(err, errlen, "%s: not writable", c->pdir);
        return SWEEP_FAIL;
    }
    return SWEEP_OK;
}

static int write_results(const sweep_ctx *c, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.csv", c->o->out_dir);
    out_file o;
    if (out_open(&o, path, err, errlen) != 0)
        return SWEEP_FAIL;
    fputs(c->header, o.f);
    fputc('\n', o.f);
    for (int p = 0; p < c->pts.npoints; p++) {
        char *row = NULL;
        if (!point_matches(c, p, &row)) {
            char pp[4300];
            point_path(c, p, pp, sizeof pp);
            sweep_fmt_err(err, errlen, "%s: missing or changed while the sweep ran", pp);
            out_abort(&o);
            return SWEEP_FAIL;
        }
        fputs(row, o.f);
        fputc('\n', o.f);
        free(row);
    }
    return out_commit(&o, err, errlen) == 0 ? SWEEP_OK : SWEEP_FAIL;
}

int sweep_run(const char *scenario_path, const sweep_opts *o, char *err, size_t errlen)
{
    if (o->summary)
        memset(o->summary, 0, sizeof *o->summary);
    if (!o->out_dir || !*o->out_dir) {
        sweep_fmt_err(err, errlen, "sweep: no output directory");
        return SWEEP_BAD_INPUT;
    }
    if (strlen(o->out_dir) > 4000) {
        sweep_fmt_err(err, errlen, "%s: path too long", o->out_dir);
        return SWEEP_BAD_INPUT;
    }
    if (o->replications < 0 || o->duration_s < 0 || !isfinite(o->duration_s)) {
        sweep_fmt_err(err, errlen, "sweep: replications and duration must be > 0");
        return SWEEP_BAD_INPUT;
    }
    sweep_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        sweep_fmt_err(err, errlen, "out of memory");
        return SWEEP_FAIL;
    }
    c->path = scenario_path;
    c->o = o;
    c->fail_idx = -1;
    pthread_mutex_init(&c->lock, NULL);
    snprintf(c->pdir, sizeof c->pdir, "%s/points", o->out_dir);
    if (o->replications > 0)
        snprintf(c->reps, sizeof c->reps, "%d", o->replications);
    if (o->duration_s > 0)
        snprintf(c->dur, sizeof c->dur, "%.17g", o->duration_s);
    int rc = SWEEP_BAD_INPUT;
    int jobs = o->jobs > 0 ? o->jobs : rep_default_threads();
    scenario_cfg cfg0;
    bool have0 = false;

    /* the scenario's own axes, then the command line's */
    {
        scn_override ov[2];
        size_t nov = 0;
        if (c->reps[0])
            ov[nov++] = (scn_override){ "replications", c->reps };
        if (c->dur[0])
            ov[nov++] = (scn_override){ "duration_s", c->dur };
        if (scn_load_ex(scenario_path, ov, nov, &cfg0, err, errlen) != 0)
            goto done;
        have0 = true;
    }
    if (o->naxes < 0 || o->naxes > CFG_MAX_AXES) {
        sweep_fmt_err(err, errlen, "%d axes on the command line: at most %d", o->naxes, CFG_MAX_AXES);
        goto done;
    }
    sweep_axis cli[CFG_MAX_AXES];
    for (int a = 0; a < o->naxes; a++)
        if (sweep_axis_parse(o->axes[a], &cli[a], err, errlen) != 0)
            goto done;
    if (sweep_axes_merge(cfg0.axes, cfg0.naxes, cli, o->naxes, c->axes, &c->naxes, err,
                         errlen) != 0)
        goto done;
    for (int a = 0; a < c->naxes; a++) {
        c->reps_axis = c->reps_axis || strcmp(c->axes[a].key, "replications") == 0;
        c->dur_axis = c->dur_axis || strcmp(c->axes[a].key, "duration_s") == 0;
    }
    if (sweep_points_make(c->axes, c->naxes, o->sample, o->nsamples, o->sample_seed, &c->pts,
                          err, errlen) != 0)
        goto done;
    if (sweep_fnv_file(scenario_path, c->fnv) != 0) {
        sweep_fmt_err(err, errlen, "%s: cannot read: %s", scenario_path, strerror(errno));
        goto done;
    }
    {
        char *abs = realpath(scenario_path, NULL);
        snprintf(c->scn_abs, sizeof c->scn_abs, "%s", abs ? abs : scenario_path);
        free(abs);
    }

    /* point 0 fixes the stages and the header; every point must load */
    cfg_free(&cfg0);
    have0 = false;
    if (load_point(c, 0, &cfg0, err, errlen) != 0)
        goto done;
    have0 = true;
    c->nstages = cfg0.nstages;
    c->stages = malloc((size_t)cfg0.nstages * sizeof *c->stages);
    c->header = csv_header(&cfg0, c->axes, c->naxes);
    if (!c->stages || !c->header) {
        sweep_fmt_err(err, errlen, "out of memory");
        rc = SWEEP_FAIL;
        goto done;
    }
    for (int s = 0; s < cfg0.nstages; s++)
        snprintf(c->stages[s], CFG_NAME_MAX, "%s", cfg0.stages[s].name);
    if (o->dist && o->dist->rank != 0) {        /* a worker rank: run what rank 0 hands out */
        rc = SWEEP_OK;
        for (int p; rc == SWEEP_OK && (p = o->dist->next(o->dist->dctx)) >= 0;) {
            if (p >= c->pts.npoints) {
                sweep_fmt_err(err, errlen, "sweep: point %d handed out, but the sweep has %d", p,
                        c->pts.npoints);
                rc = SWEEP_FAIL;
            } else if (run_point(c, p, &rc, err, errlen) == 0) {
                rc = SWEEP_OK;
            }
        }
        goto done;
    }
    if (rep_run_all(c->pts.npoints, jobs, validate_fn, c, NULL, NULL) != 0) {
        if (c->fail_idx >= 0) {
            sweep_fmt_err(err, errlen, "%s", c->fail_msg);
            rc = c->fail_code;
        } else {
            sweep_fmt_err(err, errlen, "sweep: cannot start threads");
            rc = SWEEP_FAIL;
        }
        goto done;
    }

    rc = prepare_dir(c, err, errlen);
    if (rc != SWEEP_OK)
        goto done;

    c->todo = malloc((size_t)c->pts.npoints * sizeof *c->todo);
    if (!c->todo) {
        sweep_fmt_err(err, errlen, "out of memory");
        rc = SWEEP_FAIL;
        goto done;
    }
    for (int p = 0; p < c->pts.npoints; p++)
        if (!o->resume || !point_matches(c, p, NULL))
            c->todo[c->ntodo++] = p;
    if (o->summary) {
        o->summary->npoints = c->pts.npoints;
        o->summary->nskipped = c->pts.npoints - c->ntodo;
    }
    c->fail_idx = -1;
    if (o->progress)
        o->progress(o->pctx, 0, c->ntodo);
    if (o->dist) {                              /* rank 0: the other ranks run them */
        if (o->dist->serve(o->dist->dctx, c->todo, c->ntodo, o->progress, o->pctx, err,
                           errlen) != 0) {
            rc = SWEEP_FAIL;
            goto done;
        }
    } else if (rep_run_all(c->ntodo, jobs, run_fn, c, run_progress, c) != 0) {
        if (c->fail_idx < 0 && stop_requested()) {
            sweep_fmt_err(err, errlen, "interrupted: %d of %d points are finished and kept in %s; "
                    "run the same command with --resume to finish the others",
                    c->pts.npoints - c->ntodo + c->ndone, c->pts.npoints, c->pdir);
            rc = SWEEP_INTERRUPTED;
        } else if (c->fail_idx >= 0) {
            sweep_fmt_err(err, errlen, "%s", c->fail_msg);
            rc = c->fail_code;
        } else {
            sweep_fmt_err(err, errlen, "sweep: cannot start threads");
            rc = SWEEP_FAIL;
        }
        goto done;
    }
    if (o->summary)
        o->summary->nrun = c->ntodo;
    rc = write_results(c, err, errlen);
done:
    if (have0)
        cfg_free(&cfg0);
    sweep_points_free(&c->pts);
    free(c->header);
    free(c->stages);
    free(c->todo);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return rc;
}

/* ---- capacity --------------------------------------------------------------------- */

#define CAP_MAX_HALVINGS 40

typedef struct {
    const char *path;
    const sweep_capacity_opts *o;
    const sweep_axis *over;      /* NULL: no outer key */
    bool over_reps, over_dur;    /* the outer key sets replications / duration_s itself */
    bool continuous;             /* the load is workload.rate_hz */
    sweep_capacity_row *rows;
    int inner_threads, max_streams;
    double tol, rate0, max_rate;
    char reps[32], dur[32];
    pthread_mutex_t lock;
    int fail_idx, fail_code;
    char fail_msg[MSG];
} cap_ctx;

static const char *cap_load_key(const cap_ctx *c)
{
    return c->continuous ? "workload.rate_hz" : "workload.streams";
}

/* "gpus=2 streams=16" (load 0: without the load) */
static void cap_name(const cap_ctx *c, int i, double load, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    if (c->over)
        k = (size_t)snprintf(buf, n, "%s=%s", c->over->key, c->over->values[i]);
    if (load > 0 && k < n) {
        if (c->continuous)
            snprintf(buf + k, n - k, "%srate_hz=%.6g", k ? " " : "", load);
        else
            snprintf(buf + k, n - k, "%sstreams=%d", k ? " " : "", (int)load);
    }
    if (!buf[0])
        snprintf(buf, n, "the scenario");
}

/* Row i's scenario at load (streams or Hz; 0: the scenario's own). */
static int cap_load(const cap_ctx *c, int i, double load, scenario_cfg *cfg, char *err,
                    size_t errlen)
{
    char v[40];
    scn_override ov[4];
    size_t n = 0;
    if (c->reps[0] && !c->over_reps)
        ov[n++] = (scn_override){ "replications", c->reps };
    if (c->dur[0] && !c->over_dur)
        ov[n++] = (scn_override){ "duration_s", c->dur };
    if (c->over)
        ov[n++] = (scn_override){ c->over->key, c->over->values[i] };
    if (load > 0) {
        if (c->continuous)
            snprintf(v, sizeof v, "%.17g", load);
        else
            snprintf(v, sizeof v, "%d", (int)load);
        ov[n++] = (scn_override){ cap_load_key(c), v };
    }
    return scn_load_ex(c->path, ov, n, cfg, err, errlen);
}

static void sla_text(const sla_verdict *v, char *buf, size_t n)
{
    if (isfinite(v->value.hi))
        snprintf(buf, n, "%s p%g <= %g ms: %.4g ms, CI upper %.4g", v->line->metric,
                 v->line->percentile, v->line->ms, v->value.mean, v->value.hi);
    else
        snprintf(buf, n, "%s p%g <= %g ms: %.4g ms", v->line->metric, v->line->percentile,
                 v->line->ms, v->value.mean);
}

/* What a verdict is judged by: the CI's upper end, or the estimate alone. */
static double sla_judged(const sla_verdict *v)
{
    return isfinite(v->value.hi) ? v->value.hi : v->value.mean;
}

/* How many values an SLA line's percentile was estimated from (all
 * replications), and how many it needs: one per replication (on average),
 * so that a percentile of no values at all (reported as 0) never passes. */
static uint64_t sla_count(const run_result *res, const sla_cfg *l)
{
    const scenario_cfg *cfg = res->cfg;
    if (strcmp(l->metric, "frame") == 0)
        return res->cdf_e2e.n;
    if (strcmp(l->metric, "response") == 0)
        return res->answered;
    for (int s = 0; s < cfg->nstages; s++)
        if (strcmp(l->metric, cfg->stages[s].name) == 0)
            return res->cdf_stage[s].n;
    return 0;
}

static uint64_t sla_needed(const run_result *res)
{
    return (uint64_t)res->nrep;
}

/* One probe: 1 feasible, 0 not, -1 error (message in err). A probe whose
 * SLA lines rest on too few values (sla_needed) is not feasible: a load so
 * small that nothing completes would otherwise pass every line. */
static int cap_probe(cap_ctx *c, int i, double load, char *err, size_t errlen)
{
    sweep_capacity_row *row = &c->rows[i];
    scenario_cfg cfg;
    char msg[MSG] = "", name[256];
    cap_name(c, i, load, name, sizeof name);
    if (cap_load(c, i, load, &cfg, msg, sizeof msg) != 0) {
        sweep_fmt_err(err, errlen, "%s: %s", name, msg);
        return -1;
    }
    run_opts ro = { c->inner_threads, NULL, NULL, NULL };
    run_result res;
    if (run_scenario(&cfg, &ro, &res, msg, sizeof msg) != 0) {
        sweep_fmt_err(err, errlen, "%s: %s", name, msg);
        cfg_free(&cfg);
        return -1;
    }
    row->probes++;
    int k = 0, few = -1;
    while (k < res.nsla && res.sla[k].pass)
        k++;
    for (int j = 0; j < res.nsla && few < 0; j++)
        if (sla_count(&res, res.sla[j].line) < sla_needed(&res))
            few = j;
    bool ok = k == res.nsla && few < 0;
    if (ok) {
        row->frame_p99_ms = res.e2e.p99.mean;
        row->frame_p99_hi = res.e2e.p99.hi;
        row->drop_rate = res.drop_rate.mean;
        row->cost_per_stream_hour = res.cost_per_stream_hour;
        int t = 0;
        for (int j = 1; j < res.nsla; j++)
            if (sla_judged(&res.sla[j]) / res.sla[j].line->ms >
                sla_judged(&res.sla[t]) / res.sla[t].line->ms)
                t = j;
        sla_text(&res.sla[t], row->tightest, sizeof row->tightest);
        row->tight_value = res.sla[t].value.mean;
        row->tight_hi = res.sla[t].value.hi;
        row->tight_ms = res.sla[t].line->ms;
    } else if (k < res.nsla) {
        sla_text(&res.sla[k], row->failed, sizeof row->failed);
    } else {
        const sla_cfg *l = res.sla[few].line;
        snprintf(row->failed, sizeof row->failed, "%s p%g <= %g ms: %llu values, too few to "
                 "judge (%llu needed)", l->metric, l->percentile, l->ms,
                 (unsigned long long)sla_count(&res, l), (unsigned long long)sla_needed(&res));
    }
    run_result_free(&res);
    cfg_free(&cfg);
    if (c->o->probe) {
        pthread_mutex_lock(&c->lock);
        c->o->probe(c->o->pctx, row, load, ok);
        pthread_mutex_unlock(&c->lock);
    }
    return ok;
}

/* The integer search over workload.streams. 0, or -1 (message in msg). */
static int cap_streams(cap_ctx *c, int i, char *msg, size_t msglen)
{
    sweep_capacity_row *row = &c->rows[i];
    int lo = 0, hi = 0;                  /* lo: largest pass; hi: smallest failure (0: none) */
    char failed[sizeof row->failed] = "";
    for (int s = 1;;) {
        int f = cap_probe(c, i, s, msg, msglen);
        if (f < 0)
            return -1;
        if (!f) {
            hi = s;
            snprintf(failed, sizeof failed, "%s", row->failed);
            break;
        }
        lo = s;
        if (s >= c->max_streams) {
            row->capped = true;
            break;
        }
        s = s > c->max_streams / 2 ? c->max_streams : 2 * s;
    }
    while (hi > 0 && hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        int f = cap_probe(c, i, mid, msg, msglen);
        if (f < 0)
            return -1;
        if (f) {
            lo = mid;
        } else {
            hi = mid;
            snprintf(failed, sizeof failed, "%s", row->failed);
        }
    }
    /* the figures at lo came from the last passing probe, which was at lo:
     * passes only ever raise lo */
    row->streams = lo;
    row->first_infeasible = hi;
    snprintf(row->failed, sizeof row->failed, "%s", failed);
    return 0;
}

/* The search over workload.rate_hz, to a relative tolerance. 0, or -1. */
static int cap_rate(cap_ctx *c, int i, char *msg, size_t msglen)
{
    sweep_capacity_row *row = &c->rows[i];
    double lo = 0, hi = 0;               /* lo: largest pass; hi: smallest failure (0: none) */
    char failed[sizeof row->failed] = "", first_failed[sizeof row->failed] = "";
    double r = c->rate0 < c->max_rate ? c->rate0 : c->max_rate;
    int f = cap_probe(c, i, r, msg, msglen);
    if (f < 0)
        return -1;
    if (f) {                             /* double until a rate fails */
        lo = r;
        while (hi == 0) {
            if (r >= c->max_rate) {
                row->capped = true;
                break;
            }
            r = 2 * r < c->max_rate ? 2 * r : c->max_rate;
            if ((f = cap_probe(c, i, r, msg, msglen)) < 0)
                return -1;
            if (f) {
                lo = r;
            } else {
                hi = r;
                snprintf(failed, sizeof failed, "%s", row->failed);
            }
        }
    } else {                             /* halve until a rate passes */
        hi = r;
        snprintf(failed, sizeof failed, "%s", row->failed);
        snprintf(first_failed, sizeof first_failed, "%s", row->failed);
        for (int k = 0; k < CAP_MAX_HALVINGS && lo == 0; k++) {
            r /= 2;
            if ((f = cap_probe(c, i, r, msg, msglen)) < 0)
                return -1;
            if (f) {
                lo = r;
            } else {
                hi = r;
                snprintf(failed, sizeof failed, "%s", row->failed);
            }
        }
    }
    while (lo > 0 && hi > 0 && hi - lo > c->tol * lo) {
        double mid = 0.5 * (lo + hi);
        if ((f = cap_probe(c, i, mid, msg, msglen)) < 0)
            return -1;
        if (f) {
            lo = mid;
        } else {
            hi = mid;
            snprintf(failed, sizeof failed, "%s", row->failed);
        }
    }
    /* as for streams: the last passing probe was at lo */
    row->rate_hz = lo;
    row->rate_fail_hz = hi;
    snprintf(row->failed, sizeof row->failed, "%s", failed);
    if (lo == 0) {                       /* nothing passes: say why at the first rate */
        row->rate_fail_hz = c->rate0 < c->max_rate ? c->rate0 : c->max_rate;
        snprintf(row->failed, sizeof row->failed, "%s", first_failed);
    }
    return 0;
}

static int cap_fn(void *vc, int i)
{
    cap_ctx *c = vc;
    sweep_capacity_row *row = &c->rows[i];
    char msg[MSG];
    if ((c->continuous ? cap_rate(c, i, msg, sizeof msg) : cap_streams(c, i, msg, sizeof msg)) != 0) {
        pthread_mutex_lock(&c->lock);
        if (c->fail_idx < 0 || i < c->fail_idx) {
            c->fail_idx = i;
            c->fail_code = SWEEP_FAIL;
            snprintf(c->fail_msg, sizeof c->fail_msg, "%s", msg);
        }
        pthread_mutex_unlock(&c->lock);
        return 1;
    }
    if (c->continuous ? row->rate_hz == 0 : row->streams == 0) {
        row->frame_p99_ms = row->frame_p99_hi = row->drop_rate = row->cost_per_stream_hour = NAN;
        row->tight_value = row->tight_hi = row->tight_ms = NAN;
    }
    return 0;
}

int sweep_capacity(const char *scenario_path, const sweep_axis *over,
                   const sweep_capacity_opts *o, sweep_capacity_row *rows,
                   char *err, size_t errlen)
{
    if (over && over->nvalues == 0)
        over = NULL;
    if (over && (!over->key[0] || axis_check_values(over, "capacity: outer key", err, errlen)))
        return SWEEP_BAD_INPUT;
    if (over && over->nvalues > CFG_MAX_AXIS_VALUES) {
        sweep_fmt_err(err, errlen, "capacity: %s: more than %d values", over->key, CFG_MAX_AXIS_VALUES);
        return SWEEP_BAD_INPUT;
    }
    if (o->replications < 0 || o->duration_s < 0 || !isfinite(o->duration_s)) {
        sweep_fmt_err(err, errlen, "capacity: replications and duration must be > 0");
        return SWEEP_BAD_INPUT;
    }
    if (!isfinite(o->tol) || o->tol > 0.5 || !isfinite(o->max_rate_hz)) {
        sweep_fmt_err(err, errlen, "capacity: the tolerance must be in (0, 0.5] and the largest "
                "rate finite");
        return SWEEP_BAD_INPUT;
    }
    cap_ctx c = { .path = scenario_path, .o = o, .over = over, .rows = rows, .fail_idx = -1 };
    if (o->replications > 0)
        snprintf(c.reps, sizeof c.reps, "%d", o->replications);
    if (o->duration_s > 0)
        snprintf(c.dur, sizeof c.dur, "%.17g", o->duration_s);
    c.max_streams = o->max_streams > 0 ? o->max_streams : 65536;
    c.tol = o->tol > 0 ? o->tol : SWEEP_CAPACITY_TOL;
    const char *okey = over ? sweep_canonical_key(over->key) : "";
    c.over_reps = strcmp(okey, "replications") == 0;
    c.over_dur = strcmp(okey, "duration_s") == 0;
    int nrows = over ? over->nvalues : 1;

    /* the scenario must have what the search varies and judges */
    scenario_cfg cfg;
    if (scn_load_ex(scenario_path, NULL, 0, &cfg, err, errlen) != 0)
        return SWEEP_BAD_INPUT;
    int rc = SWEEP_BAD_INPUT;
    c.continuous = cfg.workload.arrival == ARRIVAL_POISSON;
    if (cfg.nsla == 0)
        sweep_fmt_err(err, errlen, "%s: no sla lines; capacity searches for the most load that "
                "meets them", scenario_path);
    else if (strcmp(okey, cap_load_key(&c)) == 0)
        sweep_fmt_err(err, errlen, "the outer key %s is the load the search varies; give another "
                "key", over->key);
    else if (strcmp(okey, "cluster.gpus") == 0 && cfg.cluster.gpus < 1)
        sweep_fmt_err(err, errlen, "%s: capacity varies cluster.gpus; the scenario has no cluster",
                scenario_path);
    else
        rc = SWEEP_OK;
    cfg_free(&cfg);
    if (rc != SWEEP_OK)
        return rc;
    for (int i = 0; i < nrows; i++) {            /* every row loads, with the same arrivals */
        char msg[MSG], name[256];
        cap_name(&c, i, 0, name, sizeof name);
        if (cap_load(&c, i, 0, &cfg, msg, sizeof msg) != 0) {
            sweep_fmt_err(err, errlen, "%s: %s", name, msg);
            return SWEEP_BAD_INPUT;
        }
        bool same = (cfg.workload.arrival == ARRIVAL_POISSON) == c.continuous;
        if (i == 0)
            c.rate0 = cfg.workload.rate_hz;
        memset(&rows[i], 0, sizeof rows[i]);
        if (over)
            snprintf(rows[i].over, sizeof rows[i].over, "%s", over->values[i]);
        rows[i].gpus = cfg.cluster.gpus;
        rows[i].continuous = c.continuous;
        cfg_free(&cfg);
        if (!same) {
            sweep_fmt_err(err, errlen, "%s: its arrivals are not the scenario's; every row of a "
                    "capacity search varies the same load", name);
            return SWEEP_BAD_INPUT;
        }
    }
    c.max_rate = o->max_rate_hz > 0 ? o->max_rate_hz : ldexp(c.rate0, 20);
    int jobs = o->jobs > 0 ? o->jobs : rep_default_threads();
    int outer = jobs < nrows ? jobs : nrows;
    c.inner_threads = jobs / outer > 1 ? jobs / outer : 1;
    pthread_mutex_init(&c.lock, NULL);
    if (rep_run_all(nrows, outer, cap_fn, &c, NULL, NULL) != 0) {
        if (c.fail_idx >= 0)
            sweep_fmt_err(err, errlen, "%s", c.fail_msg);
        else
            sweep_fmt_err(err, errlen, "capacity: cannot start threads");
        rc = SWEEP_FAIL;
    }
    pthread_mutex_destroy(&c.lock);
    return rc;
}

void sweep_capacity_report(FILE *f, const char *key, const sweep_capacity_row *rows, int n)
{
    const char *kname = NULL;
    if (key)
        kname = strcmp(sweep_canonical_key(key), "cluster.gpus") == 0 ? "gpus" : key;
    int kw = kname ? (int)strlen(kname) : 0;
    kw = kw < 5 ? 5 : kw;
    bool cont = n > 0 && rows[0].continuous;
    if (kname)
        fprintf(f, "  %*s", kw, kname);
    if (cont)
        fprintf(f, "%s%10s %15s %10s %7s  %-46s  %s\n", kname ? " " : "  ", "rate (Hz)",
                "frame p99 (ms)", "drop %", "probes", "tightest SLA line at capacity",
                "what fails beyond");
    else
        fprintf(f, "%s%8s %12s %15s %10s %14s %7s  %s\n", kname ? " " : "  ", "streams",
                "streams/GPU", "frame p99 (ms)", "drop %", "$/stream-hour", "probes",
                "what fails beyond");
    for (int i = 0; i < n; i++) {
        const sweep_capacity_row *r = &rows[i];
        bool any = cont ? r->rate_hz > 0 : r->streams > 0;
        char p99[32] = "-", drop[32] = "-", cost[32] = "-", per[32] = "-", beyond[256];
        if (any) {
            snprintf(p99, sizeof p99, "%.2f", r->frame_p99_ms);
            snprintf(drop, sizeof drop, "%.3f%%", 100.0 * r->drop_rate);
            if (isfinite(r->cost_per_stream_hour))
                snprintf(cost, sizeof cost, "%.4f", r->cost_per_stream_hour);
        }
        if (kname)
            fprintf(f, "  %*s", kw, r->over);
        const char *sep = kname ? " " : "  ";
        if (cont) {
            if (r->capped)
                snprintf(beyond, sizeof beyond, "(search limit: %.6g Hz passes)", r->rate_hz);
            else if (!any)
                snprintf(beyond, sizeof beyond, "no rate passes, down to 2^-%d x %.6g Hz; at "
                         "%.6g Hz: %s", CAP_MAX_HALVINGS, r->rate_fail_hz, r->rate_fail_hz,
                         r->failed);
            else
                snprintf(beyond, sizeof beyond, "%.6g Hz: %s", r->rate_fail_hz, r->failed);
            fprintf(f, "%s%10.6g %15s %10s %7d  %-46s  %s\n", sep, r->rate_hz, p99, drop,
                    r->probes, any ? r->tightest : "-", beyond);
            continue;
        }
        if (r->capped)
            snprintf(beyond, sizeof beyond, "(search limit: %d streams all pass)", r->streams);
        else
            snprintf(beyond, sizeof beyond, "%d streams: %s", r->first_infeasible, r->failed);
        if (r->gpus > 0)
            snprintf(per, sizeof per, "%.1f", (double)r->streams / r->gpus);
        fprintf(f, "%s%8d %12s %15s %10s %14s %7d  %s\n", sep, r->streams, per, p99, drop, cost,
                r->probes, beyond);
    }
    if (cont)
        fprintf(f, "  rate: the largest rate probed for which every SLA line passes (the 95%% CI's "
                "upper end within its\n  target), within the tolerance of the smallest rate "
                "that fails; the search assumes more load never helps.\n");
    else
        fprintf(f, "  streams: the most for which every SLA line passes (the 95%% CI's upper "
                "end within its target);\n  the search assumes that more streams never make a "
                "configuration feasible again.\n");
}
