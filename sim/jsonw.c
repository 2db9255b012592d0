/* jsonw.c — streaming JSON writer. See jsonw.h. */
#include "sim/jsonw.h"
#include <math.h>

void jw_init(jw_t *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->first[0] = true;
}

static void jw_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Comma, newline and indent before a member; then "key": when there is one. */
static void jw_member(jw_t *w, const char *key)
{
    if (w->depth > 0) {
        fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    w->first[w->depth] = false;
    if (key) {
        jw_string(w->f, key);
        fputs(": ", w->f);
    }
}

static void jw_open(jw_t *w, const char *key, char c)
{
    jw_member(w, key);
    fputc(c, w->f);
    if (w->depth + 1 < JW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

static void jw_close(jw_t *w, char c)
{
    bool empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty) {
        fputc('\n', w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    fputc(c, w->f);
}

void jw_obj_begin(jw_t *w, const char *key) { jw_open(w, key, '{'); }
void jw_obj_end(jw_t *w) { jw_close(w, '}'); }
void jw_arr_begin(jw_t *w, const char *key) { jw_open(w, key, '['); }
void jw_arr_end(jw_t *w) { jw_close(w, ']'); }

static void jw_raw_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

void jw_num(jw_t *w, const char *key, double v)
{
    jw_member(w, key);
    jw_raw_num(w->f, v);
}

void jw_int(jw_t *w, const char *key, long long v)
{
    jw_member(w, key);
    fprintf(w->f, "%lld", v);
}

void jw_str(jw_t *w, const char *key, const char *s)
{
    jw_member(w, key);
    jw_string(w->f, s);
}

void jw_bool(jw_t *w, const char *key, bool v)
{
    jw_member(w, key);
    fputs(v ? "true" : "false", w->f);
}

void jw_pair(jw_t *w, const char *key, double lo, double hi)
{
    jw_member(w, key);
    fputc('[', w->f);
    jw_raw_num(w->f, lo);
    fputs(", ", w->f);
    jw_raw_num(w->f, hi);
    fputc(']', w->f);
}

void jw_done(jw_t *w)
{
    fputc('\n', w->f);
}
