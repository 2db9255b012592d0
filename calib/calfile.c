/* calfile.c — the calibration file writer (see calfile.h). YAML is written
 * by hand (a small, fixed layout: one flow mapping per grid point), strings
 * plain when they are simple names and double-quoted otherwise, numbers in
 * their shortest round-tripping form. */
#include "calib/calfile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "calib/fit.h"
#include "sim/out.h"

calf_op *calfile_add_op(calf_file *f, const char *op, const char *model, const char *dtype)
{
    calf_op *ops = realloc(f->ops, (size_t)(f->nops + 1) * sizeof *ops);
    if (!ops)
        return NULL;
    f->ops = ops;
    calf_op *o = &ops[f->nops++];
    memset(o, 0, sizeof *o);
    snprintf(o->op, sizeof o->op, "%s", op);
    snprintf(o->model, sizeof o->model, "%s", model);
    snprintf(o->dtype, sizeof o->dtype, "%s", dtype);
    return o;
}

int calfile_add_point(calf_op *op, const calf_point *p)
{
    calf_point *pts = realloc(op->points, (size_t)(op->npoints + 1) * sizeof *pts);
    if (!pts)
        return -1;
    op->points = pts;
    pts[op->npoints++] = *p;
    return 0;
}

/* x rounded as printf's format prints it: what the file shows is what the
 * struct holds, and both are short. */
static double rounded(const char *fmt, double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, x);
    return strtod(buf, NULL);
}

int calfile_point_from(calf_point *p, const double *samples, int n, double p50, double p95,
                       double p99, double mean, double sd, double min)
{
    fit_lognormal_t fit;
    if (n < 1 || fit_lognormal(samples, (size_t)n, &fit))
        return -1;
    /* times to the nanosecond (the clock's resolution), the fit to 9 digits */
    p->n = n;
    p->p50_ms = rounded("%.6f", p50);
    p->p95_ms = rounded("%.6f", p95);
    p->p99_ms = rounded("%.6f", p99);
    p->mean_ms = rounded("%.6f", mean);
    p->sd_ms = rounded("%.6f", sd);
    p->min_ms = rounded("%.6f", min);
    p->mu = rounded("%.9g", fit.mu);
    p->sigma = rounded("%.9g", fit.sigma);
    p->ks = rounded("%.9g", fit.ks);
    return 0;
}

/* ---- YAML output ---- */

static void put_num(FILE *out, double x)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, out);
}

/* A string YAML reads back as the same string without quotes. */
static bool plain_ok(const char *s)
{
    static const char *const special[] = { "true", "false", "yes", "no", "on", "off", "null", "y", "n", NULL };
    if (!isalpha((unsigned char)s[0]))
        return false;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    for (int i = 0; special[i]; i++)
        if (!strcasecmp(s, special[i]))
            return false;
    return true;
}

static void put_str(FILE *out, const char *s)
{
    if (plain_ok(s)) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(out, "\\x%02x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void put_kv_num(FILE *out, const char *sep, const char *key, double x)
{
    fprintf(out, "%s%s: ", sep, key);
    put_num(out, x);
}

int calfile_write(FILE *out, const calf_file *f, const char *comment)
{
    if (comment && *comment) {
        const char *s = comment;
        while (*s) {
            const char *e = strchr(s, '\n');
            int len = e ? (int)(e - s) : (int)strlen(s);
            fprintf(out, "#%s%.*s\n", len ? " " : "", len, s);
            s += len + (e ? 1 : 0);
        }
    }
    fprintf(out, "vlcalib: %d\ndevice:\n", f->version ? f->version : CALF_VERSION);
    const char *const dkeys[] = { "name", "backend", "driver", "libraries", "clocks" };
    const char *const dvals[] = { f->device.name, f->device.backend, f->device.driver,
                                  f->device.libraries, f->device.clocks };
    for (int i = 0; i < 5; i++) {
        fprintf(out, "  %s: ", dkeys[i]);
        put_str(out, *dvals[i] ? dvals[i] : "unknown");
        fputc('\n', out);
    }
    fputs("date: ", out);
    put_str(out, f->date);
    fputs("\nbackend: ", out);
    put_str(out, f->backend);
    fputs("\nops:\n", out);
    for (int i = 0; i < f->nops; i++) {
        const calf_op *o = &f->ops[i];
        fputs("  - op: ", out);
        put_str(out, o->op);
        fputs("\n    model: ", out);
        put_str(out, o->model);
        fputs("\n    dtype: ", out);
        put_str(out, o->dtype);
        if (o->codec[0]) {
            fputs("\n    codec: ", out);
            put_str(out, o->codec);
        }
        if (o->resolution[0]) {
            fputs("\n    resolution: ", out);
            put_str(out, o->resolution);
        }
        fputs("\n    points:\n", out);
        for (int j = 0; j < o->npoints; j++) {
            const calf_point *p = &o->points[j];
            fputs("      - {", out);
            if (p->frame_type[0])
                fprintf(out, "frame_type: %s, ", p->frame_type);
            fprintf(out, "batch: %d, tokens_in: %d, tokens_out: %d, new_tokens: %d, cache_len: %d, n: %d",
                    p->batch, p->tokens_in, p->tokens_out, p->new_tokens, p->cache_len, p->n);
            put_kv_num(out, ", ", "p50_ms", p->p50_ms);
            put_kv_num(out, ", ", "p95_ms", p->p95_ms);
            put_kv_num(out, ", ", "p99_ms", p->p99_ms);
            put_kv_num(out, ", ", "mean_ms", p->mean_ms);
            put_kv_num(out, ", ", "sd_ms", p->sd_ms);
            put_kv_num(out, ", ", "min_ms", p->min_ms);
            fputs(",\n          fit: {dist: lognormal", out);
            put_kv_num(out, ", ", "mu", p->mu);
            put_kv_num(out, ", ", "sigma", p->sigma);
            put_kv_num(out, ", ", "ks", p->ks);
            fputs("}}\n", out);
        }
    }
    return ferror(out) ? -1 : 0;
}

int calfile_save(const char *path, const calf_file *f, const char *comment, bool force,
                 char *err, size_t errlen)
{
    out_file o = { 0 };
    if (out_check(path, force, err, errlen) || out_open(&o, path, err, errlen))
        return -1;
    if (calfile_write(o.f, f, comment)) {
        snprintf(err, errlen, "%s: write error", path);
        out_abort(&o);
        return -1;
    }
    return out_commit(&o, err, errlen);
}

int calfile_samples_path(const char *yaml_path, char *buf, size_t size)
{
    return calf_samples_path(yaml_path, buf, size);
}

void calfile_now_utc(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "unknown");
}

void calfile_cpu_name(char *buf, size_t size)
{
    char line[512];
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(buf, size, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    fclose(f);
}
