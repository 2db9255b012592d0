/* calib_read.h — the calibration file (calib/README.md, "The calibration
 * file"): its in-memory form, the one reader, and the batch table a scenario
 * builds from one op of it.
 *
 * The writer (calib/calfile.c) and the fit (calib/fit.c) live with vlcalib;
 * this reader lives in models/ because the scenario loader needs it and
 * vlsim links only sim/ and models/. It never prints, never exits and keeps
 * no global state; every error is one line "PATH:LINE:COL: KEYPATH: message"
 * (or "PATH: message" when no position applies). */
#ifndef VL_CALIB_READ_H
#define VL_CALIB_READ_H

#include <stdbool.h>
#include <stddef.h>
#include "models/config.h"

#define CALF_VERSION 1
#define CALF_STR 256            /* every string field, including its NUL */

/* One grid point: the shape, the statistics of its n samples (ms), and the
 * lognormal fitted to them by maximum likelihood with its KS distance. */
typedef struct {
    int batch, tokens_in, tokens_out, new_tokens, cache_len;
    char frame_type[4];                 /* decode_video: "I", "P" or "B"; else "" */
    int n;                              /* samples, >= 1 */
    double p50_ms, p95_ms, p99_ms, mean_ms, sd_ms, min_ms;
    double mu, sigma, ks;               /* fit: {dist: lognormal, mu, sigma, ks} */
} calf_point;

typedef struct {
    char op[16];                        /* encode | reduce | prefill | decode | decode_video */
    char model[CALF_STR];
    char dtype[32];                     /* float32, bf16, ... */
    char codec[16], resolution[32];     /* decode_video (required there): h264, 1280x720; else "" */
    int npoints;
    calf_point *points;                 /* malloc'ed */
} calf_op;

typedef struct {
    int version;                        /* vlcalib: 1 */
    struct {
        char name[CALF_STR], backend[CALF_STR], driver[CALF_STR],
             libraries[CALF_STR], clocks[CALF_STR];   /* "unknown" when not known */
    } device;
    char date[64];                      /* ISO 8601 UTC, 2024-06-11T09:30:00Z */
    char backend[32];                   /* cpu | cuda */
    int nops;
    calf_op *ops;                       /* malloc'ed */
} calf_file;

/* Read the calibration file at path into *f (zeroed first). 0, or -1 with
 * a message naming path (and LINE:COL where there is one); *f then holds
 * nothing to free. */
int calf_read(const char *path, calf_file *f, char *err, size_t errlen);
/* Same, from len bytes of text in memory (need not be NUL-terminated);
 * name is the file named in messages ("(string)" if NULL). */
int calf_read_mem(const char *text, size_t len, const char *name, calf_file *f, char *err,
                  size_t errlen);
/* The largest calibration file read: 16 MiB (a real one is tens of KiB),
 * and the largest samples CSV: 64 MiB (a real one is hundreds of KiB). */
#define CALF_MAX_BYTES (16 << 20)
#define CALF_MAX_SAMPLES_BYTES (64 << 20)
/* Release what *f owns and zero it. Safe on a zeroed file. */
void calf_free(calf_file *f);

/* The op named op for model, or NULL. */
const calf_op *calf_find(const calf_file *f, const char *op, const char *model);

/* Which points of an op make a table, and from which statistic. The table
 * runs along batch (encode, reduce, decode) or along tokens = new_tokens x
 * batch (prefill: by_tokens); every other shape field must then be one value
 * across the points: a field >= 0 here keeps only points with that value,
 * -1 leaves it free (an error when the points disagree on it). */
typedef struct {
    int tokens_in, tokens_out, cache_len;   /* -1: any (must be unique) */
    bool use_mean;                          /* ms from mean_ms, else p50_ms */
} calf_select;

/* Build t from op's points under sel. Times that fall below an earlier
 * point's (measurement noise) are raised to it, so the table is
 * non-decreasing; *raised (may be NULL) counts them. *sigma_rms (may be
 * NULL) gets sqrt(mean sigma^2) over the points used: the pooled log-spread.
 * 0, or -1 with a one-line message (no file or position in it). */
int calf_table(const calf_op *op, const calf_select *sel, batch_table *t, int *raised,
               double *sigma_rms, char *err, size_t errlen);

/* The raw-samples CSV beside a calibration file: NAME.yaml (or .yml, or any
 * other name) -> NAME.samples.csv. 0, or -1 when it does not fit in size. */
int calf_samples_path(const char *yaml_path, char *buf, size_t size);

/* Whether point p is one that calf_table uses under sel. */
bool calf_selected(const calf_point *p, const calf_select *sel);

/* Read the samples CSV at csv (header op,model,batch,tokens_in,tokens_out,
 * new_tokens,cache_len,rep,ms, or with frame_type after cache_len) and hand
 * each point of op its samples: vals[i] (malloc'ed, NULL when none) and
 * counts[i], for the rows whose op, model, shape (and frame type) match point
 * i; other rows are skipped. vals and counts hold op->npoints entries, zeroed
 * by the caller. 0, or -1 with "CSV:LINE: message" (or "cannot open CSV: ...")
 * and nothing left allocated. */
int calf_samples(const char *csv, const calf_op *op, double **vals, size_t *counts, char *err,
                 size_t errlen);

/* sampling: empirical for a batch table: the samples of the points sel uses,
 * each divided by the mean of its point's samples, pooled into *ratios
 * (malloc'ed, *n of them; their mean is 1). A used point without samples is
 * an error. 0, or -1 with a message naming csv. */
int calf_empirical_ratios(const char *csv, const calf_op *op, const calf_select *sel,
                          double **ratios, size_t *n, char *err, size_t errlen);

#endif
