/* import.h — service times from production: per-frame stage traces (CSV
 * `frame_id,stage,ms`) and Prometheus histogram scrapes (text exposition),
 * turned into a calibration file (calfile.h) and a scenario `stages:`
 * fragment (`vlcalib import`, calib/README.md "Import from production").
 *
 * Readers take a FILE and the name to put in messages; every error is one
 * line "FILE:LINE: message" (or "FILE: message"). Writers write to the FILE
 * they are given. Nothing here prints to the terminal, exits or keeps
 * global state; warnings are returned in the structs for the caller to show. */
#ifndef VL_CALIB_IMPORT_H
#define VL_CALIB_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "models/calib_read.h"

#define IMPORT_NAME 64          /* a stage name, with its NUL */
#define IMPORT_WARN 320         /* one warning line, with its NUL */
#define IMPORT_COARSE_SHARE 0.5 /* a bucket holding this share or more is warned about */

/* ---- traces ---- */

typedef struct {
    char name[IMPORT_NAME];
    double *ms;                 /* the samples in file order (malloc'ed) */
    size_t n, cap;
} import_stage;

typedef struct {
    import_stage *stages;       /* in order of first appearance */
    int nstages;
} import_trace;

/* Read a trace CSV: the header `frame_id,stage,ms` (fields may carry
 * spaces around them; CRLF line ends are fine), then one row per frame and
 * stage; blank lines and lines starting with '#' are skipped. Stage names
 * are [A-Za-z0-9_.-], at most 63 characters; ms is finite and > 0. 0, or -1
 * with "FILE:LINE: message" in err (*t then holds nothing to free). */
int import_trace_read(FILE *in, const char *fname, import_trace *t, char *err, size_t errlen);
void import_trace_free(import_trace *t);

/* One samples file of the scenario loader's `empirical` distribution: one
 * value in ms per line, each the shortest text that reads back to the same
 * double, in file order. 0, or -1 on a write error. */
int import_samples_write(FILE *out, const import_stage *s);

/* ---- Prometheus histograms ---- */

typedef struct {
    double lo, hi;              /* ms; the +Inf bucket: last finite edge .. 2x it */
    double count, weight;       /* observations; weight = count / total */
} import_part;

typedef struct {
    char name[IMPORT_NAME];     /* the stage label */
    char metric[128];           /* the histogram's name (without _bucket) */
    double scale;               /* ms per unit of le: 1000 for *_seconds, else 1 */
    double total;               /* the +Inf bucket's count */
    double sum_ms;              /* from METRIC_sum, when has_sum */
    bool has_sum;
    int nparts;
    import_part *parts;         /* non-empty buckets, ascending (malloc'ed) */
    int nwarn;
    char warn[3][IMPORT_WARN];  /* +Inf part, resolution, unit */
} import_prom_stage;

typedef struct {
    import_prom_stage *stages;  /* in order of first appearance */
    int nstages;
} import_prom;

/* Read a text exposition: every `NAME_bucket{...,stage="X",...,le="B"} N`
 * sample, cumulative counts per (NAME, stage) (series that differ only in
 * other labels are added together), must include le="+Inf" and never
 * decrease with le. `# ...` lines and other samples are skipped, except
 * NAME_sum for the mean. 0, or -1 with "FILE:LINE: message" in err: a
 * malformed line, a decreasing count (the line of the smaller count), a
 * missing +Inf bucket (the series' first line), a stage with no
 * observations, or no histogram series with a stage label at all. */
int import_prom_read(FILE *in, const char *fname, import_prom *p, char *err, size_t errlen);
void import_prom_free(import_prom *p);

/* The q-quantile (0..1) of a stage's piecewise-uniform distribution. */
double import_prom_quantile(const import_prom_stage *s, double q);

/* ---- outputs ---- */

/* A scenario fragment: `stages:` then, per trace stage, an empirical
 * service reading sample_files[i] (as written: the loader resolves it
 * against the scenario's directory), with n and percentiles in a comment. */
int import_trace_fragment(FILE *out, const import_trace *t, const char *source,
                          const char *const *sample_files);
/* The same for a scrape: per stage a mixture of uniform parts, one per
 * non-empty bucket, weight its share of the observations. */
int import_prom_fragment(FILE *out, const import_prom *p, const char *source);

/* Build a calibration file (zeroed first, backend "import"): an op per
 * stage, op = stage name, model = model, dtype "ms", one point at batch 1
 * (all other shape fields 0) with the statistics and lognormal fit of the
 * stage's samples. A scrape's point comes from 1000 quantiles of its
 * piecewise distribution (n = the observation count; mean from _sum when
 * present). 0, or -1 with a message (a stage name over 15 characters, out of
 * memory); f is then freed. */
int import_trace_calfile(const import_trace *t, const char *model, calf_file *f, char *err, size_t errlen);
int import_prom_calfile(const import_prom *p, const char *model, calf_file *f, char *err, size_t errlen);

/* The raw samples of a trace in the CSV beside a calibration file
 * (CALFILE_SAMPLES_HEADER): op = stage, batch 1, rep = the index within the
 * stage. 0, or -1 on a write error. */
int import_trace_samples_csv(FILE *out, const import_trace *t, const char *model);

#endif
