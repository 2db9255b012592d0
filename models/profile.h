/* profile.h — traffic over time: the target concurrency curve of
 * workload.profile and the session process that follows it.
 *
 * The curve (prof_curve) is plain arithmetic on the config, usable on its
 * own (tests, reports). The session process (prof_* on a pipe_t) starts and
 * ends sessions so that the number of concurrent sessions follows the curve;
 * each session is a periodic frame source of the pipeline, in a slot that is
 * reused once it ends, so memory is bounded by the peak concurrency, never
 * by the number of sessions in a run. It never prints. */
#ifndef VL_PROFILE_H
#define VL_PROFILE_H

#include <stdint.h>
#include "models/config.h"

/* The target curve. Diurnal: analytic. Steps and trace: knots (t_s, n),
 * linear between knots, constant before the first and after the last; two
 * knots at one time are a jump (the curve takes the later value there). */
typedef struct {
    profile_kind kind;
    const profile_cfg *pc;
    double *kt, *kn;     /* knots (steps: owned; trace: the config's) */
    int nk;
    int own;
} prof_curve;

/* 0, or -1 when out of memory. base_streams: the steps' starting level. */
int prof_curve_init(prof_curve *c, const profile_cfg *pc, double base_streams);
void prof_curve_free(prof_curve *c);
/* Target concurrency at t (s); right-continuous at jumps. */
double prof_target(const prof_curve *c, double t_s);
/* Its right derivative (streams per second; 0 at and beyond the ends). */
double prof_slope(const prof_curve *c, double t_s);
/* The largest target value anywhere. */
double prof_peak(const prof_curve *c);
/* The session arrival rate (per second) that keeps the target: see profile.c. */
double prof_rate(const prof_curve *c, double t_s, double mean_session_s);

#endif
