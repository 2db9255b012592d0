/* sweep.h — many runs of one scenario: a grid (or samples of it) over
 * scalar keys, run point by point on all cores, and the capacity search.
 *
 * A sweep point is the scenario loaded again with one value per axis
 * (scenario.h: scn_load_ex), run with run_scenario on one thread; points
 * run in parallel on a work queue (sim/rep.h), and everything written
 * depends only on the point, never on --jobs or on scheduling. Each point
 * is written atomically (sim/out.h) as DIR/points/NNNNN.json; DIR/results.csv
 * is built from those files once every point is done, so a resumed sweep
 * gives the same bytes as an uninterrupted one.
 *
 * This module never prints and never exits: messages go to err, progress
 * to a callback. It keeps no global mutable state (it only polls the stop
 * flag of sim/stop.h, set by SIGINT/SIGTERM: the work queue takes no new
 * point once it is set, and running points give up without a file). It writes only under the
 * sweep's directory, and refuses a directory holding files that are not a
 * sweep's. */
#ifndef VL_SWEEP_H
#define VL_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "models/config.h"

/* Return codes of sweep_run and sweep_capacity. SWEEP_INTERRUPTED: SIGINT
 * or SIGTERM (sim/stop.h) stopped sweep_run; finished points are kept,
 * running ones abandoned without a file, results.csv not written. */
enum { SWEEP_OK = 0, SWEEP_FAIL = -1, SWEEP_BAD_INPUT = -2, SWEEP_INTERRUPTED = -3 };

/* Points are numbered 0..99999 (file names NNNNN.json). */
#define SWEEP_MAX_POINTS 100000

/* ---- axes and points -------------------------------------------------------- */

typedef enum { SWEEP_GRID, SWEEP_RANDOM, SWEEP_LHS } sweep_sample;

/* The scenario key a short name stands for ("streams" -> "workload.streams",
 * "fps" -> "workload.fps", "gpus" -> "cluster.gpus"); any other key as is.
 * Two axes are the same axis when their canonical keys are equal. */
const char *sweep_canonical_key(const char *key);

/* Parse a command-line axis "key=v1,v2,...": a non-empty key, 1 to
 * CFG_MAX_AXIS_VALUES distinct, non-empty values (spaces around them are
 * trimmed). 0, or -1 and a message. */
int sweep_axis_parse(const char *spec, sweep_axis *out, char *err, size_t errlen);

/* The axes of a sweep: the scenario's, in their order, where a command-line
 * axis with the same (canonical) key replaces the scenario's in place; the
 * other command-line axes follow in their order. Duplicate command-line
 * axes, duplicate values and more than CFG_MAX_AXES axes are errors.
 * 0, or -1 and a message. */
int sweep_axes_merge(const sweep_axis *scn, int nscn, const sweep_axis *cli, int ncli,
                     sweep_axis *out, int *nout, char *err, size_t errlen);

/* The number of points of the full grid (1 with no axes); UINT64_MAX when
 * it does not fit in 64 bits. */
uint64_t sweep_grid_size(const sweep_axis *axes, int naxes);

/* The points of a sweep: point p takes value idx[p * naxes + a] of axis a. */
typedef struct {
    int naxes;
    int npoints;
    int *idx;
} sweep_points;

/* The points to run:
 *  SWEEP_GRID    the full grid, first axis slowest (the last axis varies
 *                fastest), n and seed unused; more than SWEEP_MAX_POINTS is
 *                an error;
 *  SWEEP_RANDOM  n distinct points drawn uniformly from the grid (the whole
 *                grid when n >= its size), listed in grid order;
 *  SWEEP_LHS     n points of a Latin hypercube over the axes' value
 *                indices: axis a's values are each used floor(n / m_a) or
 *                ceil(n / m_a) times (which values get the extra use, and
 *                how the axes are paired, is random); listed in grid order,
 *                and a point may repeat when n is large against the grid.
 * Samples are a function of (axes' sizes, n, seed) only. n in
 * [1, SWEEP_MAX_POINTS] for the samples. 0, or -1 and a message. */
int sweep_points_make(const sweep_axis *axes, int naxes, sweep_sample kind, int n,
                      uint64_t seed, sweep_points *out, char *err, size_t errlen);
void sweep_points_free(sweep_points *p);

/* ---- results.csv -------------------------------------------------------------- */

/* Write one CSV field (RFC 4180: quoted when it holds a comma, a quote, a
 * CR or an LF; quotes doubled). */
void sweep_csv_field(FILE *f, const char *s);

/* The columns of results.csv, in order:
 *   point                          the point's number (0-based)
 *   <axis key>...                  each axis's value, named by its key as given
 *   streams, fps, gpus             the point's workload.streams, workload.fps and
 *                                  cluster.gpus, each only when no axis is that key
 *                                  (empty where it does not apply)
 *   frame_p50, frame_p50_lo, frame_p50_hi, frame_p95 (_lo, _hi), frame_p99 (_lo, _hi)
 *                                  frame (end-to-end) latency, ms, with the 95 % CI
 *   response_p50 ... response_p99_hi   the same for the response path (empty without one)
 *   p99_<stage>...                 each stage's sojourn p99, ms
 *   drop_rate                      frame drop rate (e2e)
 *   gpu_util                       mean utilization over the GPUs (empty without a cluster)
 *   cost_per_stream_hour           $ (empty without periodic streams and a cluster)
 *   sla_pass                       1 when every SLA line passes, else 0 (empty: no lines)
 *   stable                         1, or 0 when a queue grew without bound (run.h:
 *                                  run_verdict; every SLA line then fails)
 * Numbers use "%.10g"; NaN (a CI with one replication) is an empty field. */

/* A directory entry a sweep may find in its DIR: "points" (a directory),
 * "results.csv", a temporary of it ("results.csv.tmp.*"), or what `vlsim
 * plot DIR` writes (*.png, *.svg, *.gp, *.dat). */
bool sweep_dir_entry_ok(const char *name, bool is_dir);

/* ---- vlsim sweep ------------------------------------------------------------ */

typedef struct {
    int npoints;             /* points in the sweep */
    int nrun;                /* run by this call */
    int nskipped;            /* found finished (resume) */
} sweep_summary;

/* Points spread over processes (sweep_mpi.c, `mpirun`). Rank 0 sets the
 * sweep up as usual (loads and checks every point, prepares DIR), then
 * serve hands the points todo[0..n) out and returns once all are done;
 * rank 0 then writes results.csv. Any other rank loads the scenario and
 * the points itself (not checked again, DIR not touched), then runs the
 * points next returns, one at a time on one thread, until it returns -1,
 * writing each point file itself; sweep_run returns SWEEP_OK with an empty
 * summary there. serve returns 0, or -1 and a message. */
typedef struct {
    int rank;
    int (*serve)(void *dctx, const int *todo, int n,
                 void (*progress)(void *pctx, int done, int total), void *pctx,
                 char *err, size_t errlen);
    int (*next)(void *dctx);
    void *dctx;
} sweep_dist;

typedef struct {
    const char *out_dir;         /* DIR; created (with its parents) if missing */
    int jobs;                    /* points run in parallel; <= 0: one per core */
    int replications;            /* > 0: override the scenario's; 0: keep */
    double duration_s;           /* > 0: override the scenario's; 0: keep */
    bool resume;                 /* skip points whose file is there and matches */
    sweep_sample sample;         /* SWEEP_GRID (default), SWEEP_RANDOM, SWEEP_LHS */
    int nsamples;                /* n for the samples */
    uint64_t sample_seed;        /* seed of the samples */
    const char *const *axes;     /* command-line axes, "key=v1,v2,..." */
    int naxes;
    /* Called once with done 0 before the first point runs, then after
     * each point run (not for points skipped by resume), on whichever
     * thread ran it, one call at a time: done / total of the points this
     * call runs. */
    void (*progress)(void *pctx, int done, int total);
    void *pctx;
    sweep_summary *summary;      /* filled when not NULL */
    const sweep_dist *dist;      /* NULL: every point runs in this process */
} sweep_opts;

/* Run the sweep of the scenario at path into o->out_dir.
 *
 * Before any point runs: the axes are merged and every point is loaded
 * once, so a bad axis key or value, or a combination the loader refuses,
 * is an error naming the point and its values; points whose stages differ
 * from point 0's are an error; DIR must hold only what sweep_dir_entry_ok
 * allows (and NNNNN.json files and their temporaries under points/).
 * Leftover temporaries of a killed run are removed.
 *
 * Point files, DIR/points/NNNNN.json (5 digits), hold one JSON object:
 *   {"vlsim_sweep_point": 1, "point": N, "stable": true|false, "scenario": "<the
 *    scenario's absolute path>", "scenario_fnv1a64": "<hex of the scenario file's
 *    bytes>", "options": {"replications": "3", "duration_s": ""},
 *    "axes": {"<key>": "<value>", ...}, "csv_header": "<results.csv header>",
 *    "csv_row": "<this point's results.csv row>", "result": <the run's JSON
 *    as `vlsim run --json` writes it, with wall_s 0>}
 * With o->resume a point whose file parses and whose number, axes, scenario
 * hash, options and header all match is not run again (files the scenario
 * names, such as empirical samples, are not hashed; the recorded path is not
 * compared). Without it every point runs and its file is replaced. The path
 * and the options and axes are what sweep_point.h needs to run a point
 * again; files written before the path was recorded lack "scenario".
 *
 * results.csv (see the columns above) is written atomically from the point
 * files when every point is done, replacing an earlier one.
 * Returns SWEEP_OK, SWEEP_BAD_INPUT (scenario, axes, options, DIR) or
 * SWEEP_FAIL (a run failed, I/O, out of memory), with a message. */
int sweep_run(const char *scenario_path, const sweep_opts *o, char *err, size_t errlen);

/* ---- vlsim capacity --------------------------------------------------------- */

/* One row of the capacity search: one value of the outer key. The load the
 * search varies is workload.streams (periodic arrivals: an integer count)
 * or workload.rate_hz (poisson arrivals: a continuous rate). */
typedef struct {
    char over[32];               /* the outer key's value as given ("" without an outer key) */
    int gpus;                    /* the row's cluster.gpus (0: no cluster) */
    bool continuous;             /* the load is workload.rate_hz, not workload.streams */
    /* periodic */
    int streams;                 /* the largest feasible stream count; 0: not even one */
    int first_infeasible;        /* the smallest infeasible count probed (0 when capped) */
    /* poisson */
    double rate_hz;              /* the largest feasible rate probed; 0: none found */
    double rate_fail_hz;         /* the smallest infeasible rate probed (0 when capped; when
                                    nothing passes, the first rate probed, and `failed` is
                                    what failed there) */
    bool capped;                 /* feasible up to the search limit: the search stopped there */
    char failed[160];            /* at the smallest infeasible load: the first SLA line that
                                    failed, e.g. "frame p99 <= 200 ms: 312.4 ms, CI upper 330.1" */
    char tightest[160];          /* at the capacity: the SLA line nearest its target (the
                                    largest CI upper end / target), the same form */
    double tight_value, tight_hi, tight_ms;   /* that line's estimate, CI upper end, target */
    int probes;                  /* runs made */
    /* at the capacity (NaN when nothing is feasible) */
    double frame_p99_ms, frame_p99_hi, drop_rate, cost_per_stream_hour;
} sweep_capacity_row;

#define SWEEP_CAPACITY_TOL 0.01  /* default relative tolerance of a rate search */

typedef struct {
    int jobs;                    /* threads in all; <= 0: one per core */
    int replications;            /* > 0: override */
    double duration_s;           /* > 0: override */
    int max_streams;             /* periodic: largest count tried; <= 0: 65536 */
    double tol;                  /* poisson: stop when (fail - pass) <= tol x pass;
                                    <= 0: SWEEP_CAPACITY_TOL; at most 0.5 */
    double max_rate_hz;          /* poisson: largest rate tried; <= 0: 2^20 x the scenario's */
    /* Called after each probe, one call at a time, from any thread: the
     * row being searched (its over, gpus and continuous are set), the load
     * probed (streams or Hz) and the verdict. */
    void (*probe)(void *pctx, const sweep_capacity_row *row, double load, bool feasible);
    void *pctx;
} sweep_capacity_opts;

/* For each value of the outer key (over->values; over NULL or with no
 * values: the scenario as written, one row), the largest load for which
 * every SLA line passes (the verdict of run_result: the CI's upper end
 * within the target), into rows[i] (room for over->nvalues rows, or 1).
 * over->key is any scalar key path (sweep_canonical_key: gpus, fps, streams
 * stand for their workload / cluster keys), but not the load itself.
 *
 * Periodic arrivals: workload.streams from 1, doubled until a count fails
 * (or max_streams passes), then bisected between the last pass and the
 * first failure to the exact count. Poisson arrivals: workload.rate_hz from
 * the scenario's rate, doubled until a rate fails (or halved until one
 * passes: at most 40 halvings, after which the row reports 0), then
 * bisected until the gap between the largest passing and the smallest
 * failing rate is within tol of the passing one; the answer is that passing
 * rate, so it errs low by at most tol, plus what the CI rule costs. Both
 * assume that feasibility is monotone in the load (more load never helps).
 * A probe passes only when each SLA line's percentile rests on at least
 * one value per replication (on average), so that a load at which nothing
 * completes (a percentile of no values reads 0) does not pass by default.
 * The scenario needs at least one SLA line. The rows are searched in
 * parallel; the answer does not depend on jobs. Returns as sweep_run. */
int sweep_capacity(const char *scenario_path, const sweep_axis *over,
                   const sweep_capacity_opts *o, sweep_capacity_row *rows,
                   char *err, size_t errlen);

/* A readable table of the rows (one line per row); key is the outer key as
 * given (NULL: no outer key). */
void sweep_capacity_report(FILE *f, const char *key, const sweep_capacity_row *rows, int n);

#endif
