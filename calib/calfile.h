/* calfile.h — writing calibration files (the format: calib/README.md; the
 * in-memory form and the reader: models/calib_read.h).
 *
 * vlcalib builds a calf_file point by point (calfile_add_op,
 * calfile_add_point, calfile_point_from) and saves it with calfile_save,
 * which writes atomically (sim/out.h). Nothing here prints to the terminal,
 * exits or keeps global state. */
#ifndef VL_CALIB_CALFILE_H
#define VL_CALIB_CALFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "models/calib_read.h"

/* Append an op (points empty) to f: the new op, or NULL out of memory. The
 * strings are truncated to their fields. */
calf_op *calfile_add_op(calf_file *f, const char *op, const char *model, const char *dtype);
/* Append a copy of p to op: 0, or -1 out of memory. */
int calfile_add_point(calf_op *op, const calf_point *p);

/* Fill p's statistics and fit from n samples (ms, all > 0), given the
 * percentiles, mean, sd and min already computed (harness.h) — the shape
 * fields are left alone. Times are rounded to the nanosecond (1e-6 ms) and
 * mu, sigma, ks to 9 significant digits, so the file stays short and reads
 * back exactly. 0, or -1 when the fit fails (n < 1, a sample <= 0). */
int calfile_point_from(calf_point *p, const double *samples, int n, double p50, double p95,
                       double p99, double mean, double sd, double min);

/* Write f as YAML to out; comment (may be NULL or "") goes first, each of
 * its lines as a "# " comment. Doubles are written in the shortest form that
 * reads back to the same value. 0, or -1 on a write error. */
int calfile_write(FILE *out, const calf_file *f, const char *comment);

/* Write f atomically to path (an existing file needs force). 0, or -1 with
 * a message. */
int calfile_save(const char *path, const calf_file *f, const char *comment, bool force,
                 char *err, size_t errlen);

/* The raw-samples CSV beside a calibration file: NAME.yaml (or .yml, or any
 * other name) -> NAME.samples.csv. 0, or -1 when it does not fit in size. */
int calfile_samples_path(const char *yaml_path, char *buf, size_t size);

/* The CSV header of that file (with its newline). */
#define CALFILE_SAMPLES_HEADER "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\n"

/* The CPU's model name (/proc/cpuinfo's first "model name"), or "unknown CPU". */
void calfile_cpu_name(char *buf, size_t size);
/* Now as ISO 8601 UTC ("2024-06-11T09:30:00Z") into buf. */
void calfile_now_utc(char *buf, size_t size);

#endif
