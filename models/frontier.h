/* frontier.h — what a sweep's results.csv says: the Pareto set of (cost per
 * stream-hour, frame p99) per FPS, and the cheapest configuration that meets
 * each latency target.
 *
 * The reader parses results.csv (sweep.h lists its columns; RFC 4180
 * quoting, LF or CRLF) into a table of text and numbers; everything else is
 * a pure function of such a table, so tests can feed hand-made point sets.
 * Nothing here runs a simulation, prints (the report goes to a FILE* it is
 * given) or exits; messages name file:line. No global mutable state. */
#ifndef VL_FRONTIER_H
#define VL_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A parsed results.csv. Cells are [row * ncols + col]. */
typedef struct {
    char name[512];          /* the file, for messages */
    int ncols;
    char **cols;             /* header names */
    int nrows;
    char **text;             /* every cell as written (unquoted) */
    double *num;             /* every cell as a number; NaN when empty or not a number */
    int *line;               /* the line each row starts on (the header is line 1) */
    /* the configuration columns: those between `point` and `frame_p50`
     * (the axes, and streams / fps / gpus where no axis set them) */
    int cfg_first, cfg_end;
    /* where the columns the frontier uses are; -1 when absent */
    int c_point, c_fps, c_streams, c_gpus, c_cost, c_p99, c_drop, c_sla;
    int c_stable;            /* "stable" (0: a queue grew without bound), or -1 */
} frontier_table;

/* Parse text (len bytes) named `name` in messages. Required columns: point,
 * frame_p50, frame_p99, cost_per_stream_hour; every column after frame_p50
 * must hold numbers or nothing. fps, streams and gpus are found under their
 * short names or as workload.fps, workload.streams, cluster.gpus.
 * 0, or -1 and "name:line: ..." (the table is left empty). */
int frontier_parse(const char *text, size_t len, const char *name, frontier_table *t,
                   char *err, size_t errlen);
/* The same from a file. */
int frontier_read(const char *path, frontier_table *t, char *err, size_t errlen);
void frontier_free(frontier_table *t);

/* The cell of a named column (NULL / NaN when the column is absent). */
int frontier_col(const frontier_table *t, const char *name);

typedef struct {
    double max_drop_rate;    /* rows whose frame drop rate is above this are left out of the
                                Pareto set and the picks (default 0.01, the page alert of
                                seed 004 §1); NaN or < 0: keep every row */
    bool use_ci;             /* a target is met when the CI's upper end is within it
                                (default; the SLA verdict's rule); false: the estimate */
} frontier_opts;

void frontier_opts_default(frontier_opts *o);

/* A latency target: metric's percentile <= ms. metric is "frame",
 * "response" or a stage name (stages have only p99 in results.csv). */
typedef struct {
    char metric[64];
    double percentile;       /* 50, 95 or 99 */
    double ms;               /* > 0 */
} frontier_target;

/* Parse "frame p95 <= 100", "frame_p99<200ms", "response.p50 <= 500 ms",
 * "encode p99 <= 40" ('<' reads as '<='). 0, or -1 and a message. */
int frontier_target_parse(const char *s, frontier_target *t, char *err, size_t errlen);
/* The default targets (seed 000 §2): frame p95 <= 100 ms, frame p99 <= 200 ms.
 * Fills up to max; returns how many there are (2). */
int frontier_default_targets(frontier_target *t, int max);
/* "frame p95 <= 100 ms" */
void frontier_target_str(const frontier_target *t, char *buf, size_t n);

/* Is row r eligible (a finite cost and frame p99, stable unless its
 * `stable` column says 0, drop rate within the limit)? */
bool frontier_row_eligible(const frontier_table *t, int r, const frontier_opts *o);

/* The value row r is judged by for target g (the CI's upper end, or the
 * estimate; NaN when empty), or NaN with *missing set when the table has no
 * such column. */
double frontier_target_value(const frontier_table *t, int r, const frontier_target *g,
                             const frontier_opts *o, bool *missing);

/* One FPS group's Pareto set. */
typedef struct {
    double fps;              /* NaN: no fps column, or rows without an fps */
    int neligible;           /* eligible rows of this group */
    int n;
    int *rows;               /* the Pareto rows, by cost, then p99, then row order */
} frontier_group;

typedef struct {
    int ngroups;             /* by fps ascending (the NaN group last) */
    frontier_group *g;
    int left_out_drops;      /* rows left out for their drop rate */
    int left_out_empty;      /* rows left out for an empty cost or frame p99 */
    int left_out_unstable;   /* rows left out because a queue grew without bound (stable 0) */
} frontier_pareto_set;

/* Per fps group, the rows no other eligible row of the group dominates
 * (lower is better on both cost_per_stream_hour and frame_p99, the
 * estimate; a row dominates another when it is no worse on both and better
 * on one, so rows equal on both are all kept). 0, or -1 (out of memory). */
int frontier_pareto(const frontier_table *t, const frontier_opts *o, frontier_pareto_set *out,
                    char *err, size_t errlen);
void frontier_pareto_free(frontier_pareto_set *s);

/* The cheapest eligible row meeting target g, over all groups (ties: the
 * lower value, then the earlier row), into *row (-1 when none does).
 * 0, or -1 when the table lacks the target's column. */
int frontier_cheapest(const frontier_table *t, const frontier_target *g, const frontier_opts *o,
                      int *row, char *err, size_t errlen);

/* The cheapest eligible row whose sla_pass is 1 (the scenario's own SLA
 * lines), or -1. */
int frontier_cheapest_sla(const frontier_table *t, const frontier_opts *o);

/* "32 streams on 2 GPUs, fps 15, stages.encode.max_batch=8" */
void frontier_describe(const frontier_table *t, int r, char *buf, size_t n);

/* The short text report: the Pareto set per fps, then per target the
 * cheapest row meeting it ("frame p95 <= 100 ms: 32 streams on 2 GPUs,
 * fps 15: $0.31/stream-hour ..."), then the scenario's SLA when the table
 * has sla_pass. 0, or -1 and a message (a target's column missing). */
int frontier_report(FILE *f, const frontier_table *t, const frontier_target *targets, int ntargets,
                    const frontier_opts *o, char *err, size_t errlen);

#endif
