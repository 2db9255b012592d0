/* sweep_int.h — what sweep.c shares with sweep_point.c and nothing else:
 * the point file's reader, the scenario hash and the text of a point's
 * "result". Not a public interface: the point file format is described in
 * sweep.h (sweep_run). Never include this outside models/sweep*.c. */
#ifndef VL_SWEEP_INT_H
#define VL_SWEEP_INT_H

#include <stddef.h>
#include "models/config.h"
#include "models/run.h"

/* What a point file records (NULL: absent). */
typedef struct {
    double format, point;                /* -1 when absent */
    char *fnv, *reps, *dur, *header, *row;
    char *scenario;                      /* the scenario's absolute path (newer files only) */
    char *result;                        /* the "result" value's text, as written */
    int naxes;
    char *axkey[CFG_MAX_AXES], *axval[CFG_MAX_AXES];
} sweep_point_rec;

/* Parse a point file's text. 0, or -1 (not a point file, or one lacking
 * fnv, options, header or row); rec is filled either way (free it). */
int sweep_point_parse(const char *text, size_t len, sweep_point_rec *rec);
void sweep_point_rec_free(sweep_point_rec *r);

/* The FNV-1a 64 hash of a file's bytes, as 16 hex digits. 0, or -1. */
int sweep_fnv_file(const char *path, char out[17]);

/* The run's JSON as a point file holds it after "result": (report_json with
 * wall_s 0, indented one level, no final newline); malloc'd, NULL when out
 * of memory. */
char *sweep_point_result_text(const run_result *r);

/* printf into err[errlen] (nothing when err is NULL or errlen 0). */
void sweep_fmt_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "point 3 (streams=16, gpus=2)" from keys and values. */
void sweep_point_label(int p, char *const *keys, char *const *vals, int n, char *buf,
                       size_t len);

#endif
