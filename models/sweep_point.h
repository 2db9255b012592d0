/* sweep_point.h — one point of a finished sweep, again: which point stands
 * for the sweep, running it again from what its point file records, and
 * drawing that run's pictures into the sweep's directory (`vlsim plot DIR`).
 *
 * Point files keep no histograms (they would bloat every sweep); runs are
 * deterministic, so a point is rebuilt exactly from its scenario (the path
 * and FNV-1a hash the point file records), its options and its axis values.
 * Nothing here prints or exits; no global mutable state; it writes only the
 * one-run pictures (plot.h: plot_run) into the sweep's directory. */
#ifndef VL_SWEEP_POINT_H
#define VL_SWEEP_POINT_H

#include <stdbool.h>
#include <stddef.h>
#include "models/config.h"
#include "models/frontier.h"
#include "models/plot.h"
#include "models/run.h"

/* Which point of the finished sweep in dir stands for it (from
 * dir/results.csv): the cheapest whose sla_pass is 1 (frontier_cheapest_sla
 * with fo's drop-rate limit); else the first passing one (a sweep without
 * costs); else the first row. *why (whylen bytes) says which. 0, or -1 and
 * a message (no or bad results.csv). */
int sweep_pick_point(const char *dir, const frontier_opts *fo, int *point, char *why,
                     size_t whylen, char *err, size_t errlen);

/* Run point `point` of the sweep in dir again: the scenario its point file
 * records (scenario_path instead when not NULL: for sweeps written before
 * point files recorded it, or a scenario that moved), which must still have
 * the bytes the sweep ran, with the point's options and axis values, on
 * `threads` threads (<= 0: one per core; the result does not depend on it).
 * Fills *cfg and *res (the caller frees both: run_result_free, then
 * cfg_free). *same: the run's JSON equals the point file's "result" (runs
 * are deterministic, so false means a file the scenario names changed, or
 * another vlsim wrote the sweep). label (labellen bytes): "point 3
 * (streams=16, gpus=2)". Returns 0; -2 (bad input: no such point file, one
 * that names no scenario, a scenario whose bytes changed) or -1 (the run
 * failed, out of memory), with a message. */
int sweep_rerun_point(const char *dir, int point, const char *scenario_path, int threads,
                      scenario_cfg *cfg, run_result *res, bool *same, char *label,
                      size_t labellen, char *err, size_t errlen);

/* What sweep_plot_point did. */
typedef struct {
    int point;               /* the point drawn */
    char why[128];           /* why that one ("chosen with --point", "the cheapest ...") */
    char label[512];         /* "point 3 (streams=16, gpus=2)" */
    bool same;               /* the re-run equals the point file */
} sweep_plot_info;

/* The one-run pictures of a point of the sweep in dir, into dir: point >= 0
 * that one, < 0 the one sweep_pick_point picks; re-run (sweep_rerun_point,
 * threads) and drawn by plot_run with po (its run_label set to the point's
 * label). Returns PLOT_OK, PLOT_BAD_INPUT or PLOT_FAIL, with a message. */
int sweep_plot_point(const char *dir, int point, const char *scenario_path, int threads,
                     const plot_opts *po, sweep_plot_info *info, char *err, size_t errlen);

#endif
