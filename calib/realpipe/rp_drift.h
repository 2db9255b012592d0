/* rp_drift.h — how the machine's speed moves over time (`vlrealpipe
 * driftcal`, issue 7): the pipeline's own work done back to back, counted
 * per window of wall time.
 *
 * The 2-vCPU VMs this project validates on are not steady: the after-run
 * capacity probes of one load point differ by up to a quarter, and one
 * thread repeating the mix for 45 s on the Intel VM (2026-12-02 07:56 UTC)
 * did 180-260 units per 1 s window (sd 7.4 %), in spells of 5-10 s. A queue
 * near saturation on such a machine waits longer than on a steady one of
 * the same mean speed, and the simulator, at one speed, cannot show that
 * unless the scenario says how the speed moves (cpu.speed).
 *
 * Here T threads (the pipeline's cores) each own a stream and the kernels
 * (rp_solo) and repeat corecal's unit (decode keep_every frames, encode +
 * reduce + prefill the kept one at batch 1) for S seconds. A unit is
 * credited to the windows it overlaps, in proportion to the overlap, so a
 * window's credit is the units done in it. The machine's speed in window k
 * is all threads' credit there over the mean window's: factors with mean 1,
 * the simulator's cpu.speed.factors. Nothing of the pipeline runs; the
 * threads are not pinned. Nothing here prints or keeps global state. */
#ifndef VL_RP_DRIFT_H
#define VL_RP_DRIFT_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_DRIFT_MAX_THREADS 16
#define RP_DRIFT_MAX_WINDOWS 65536      /* the simulator's cpu.speed.factors limit */

typedef struct {
    int threads, windows;
    double window_ms, seconds;
    double *factors;                    /* [windows]: speed per window, mean 1 (malloc'd; rp_drift_free) */
    double units_per_s;                 /* all threads together, the mean over the windows */
    double sd;                          /* the factors' standard deviation */
    double lo, hi;                      /* their least and greatest */
    double lag1, lag5;                  /* their autocorrelation at 1 and 5 windows */
    double cross;                       /* the first two threads' per-window units' correlation
                                           (NAN with one thread): 1 when the cores move together */
    long done[RP_DRIFT_MAX_THREADS];    /* units each thread finished in all */
} rp_drift_result;

/* Add one unit that ran from a to b seconds (relative to the windows'
 * start) to win[0..nwin) of window_s seconds each, in proportion to its
 * time in each; what lies outside [0, nwin * window_s) is not counted. */
void rp_drift_credit(double *win, int nwin, double window_s, double a, double b);

/* The result from each thread's window credits win[t][0..nwin): 0, or -1
 * and a message (no work done, or out of memory). r->factors is allocated. */
int rp_drift_summarize(double *const *win, int threads, int nwin, double window_ms,
                       rp_drift_result *r, char *err, size_t errlen);

/* Run `threads` threads for `seconds` in windows of window_ms. 0, or -1 and
 * a message. threads 1..RP_DRIFT_MAX_THREADS; at least 4 and at most
 * RP_DRIFT_MAX_WINDOWS windows. */
int rp_drift_run(const rp_params *p, int threads, double seconds, double window_ms,
                 rp_drift_result *r, char *err, size_t errlen);

void rp_drift_free(rp_drift_result *r);

#endif
