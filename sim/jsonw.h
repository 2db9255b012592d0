/* jsonw.h — a small streaming JSON writer.
 *
 * Keys and values are written in call order, two-space indented, so output
 * is byte-for-byte reproducible. Numbers use "%.10g"; NaN and infinities are
 * written as null (JSON has no spelling for them). Strings are escaped.
 * The writer holds only nesting state; it never buffers the document.
 * Nesting deeper than JW_MAX_DEPTH - 1 levels is not supported. */
#ifndef VL_JSONW_H
#define VL_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct {
    FILE *f;
    int depth;
    bool first[JW_MAX_DEPTH];   /* no member written yet at this depth */
} jw_t;

void jw_init(jw_t *w, FILE *f);
/* key is NULL inside arrays and for the top-level value. */
void jw_obj_begin(jw_t *w, const char *key);
void jw_obj_end(jw_t *w);
void jw_arr_begin(jw_t *w, const char *key);
void jw_arr_end(jw_t *w);
void jw_num(jw_t *w, const char *key, double v);
void jw_int(jw_t *w, const char *key, long long v);
void jw_str(jw_t *w, const char *key, const char *s);
void jw_bool(jw_t *w, const char *key, bool v);
/* A two-element array [lo, hi] on one line. */
void jw_pair(jw_t *w, const char *key, double lo, double hi);
/* Finish the document (a newline). */
void jw_done(jw_t *w);

#endif
