/* cores.h — processor sharing of a few CPU cores among the jobs running on
 * them (issue 7: a CPU pipeline's threads compete for cores).
 *
 * A job is a piece of work (ms of CPU at full speed) whose completion is an
 * ordinary event (kind, a, b) of the caller's. With n jobs running on k
 * cores each advances at min(1, k/n) ms of work per ms (or speedup(n)/n with a
 * measured speed-up table); whenever n changes
 * the earliest completion is rescheduled as one `tick` event of the
 * caller's kind tick_kind, carrying a generation number so that superseded
 * ticks are recognised and ignored. When a job's work is done its own event
 * is pushed at that instant. The cores' speed (1 unless cores_set_speed
 * says otherwise: a machine whose speed moves over time) multiplies every
 * job's rate. The module knows nothing of stages or items and never prints;
 * cost per change is O(jobs running). */
#ifndef VL_CORES_H
#define VL_CORES_H

#include <stdint.h>
#include "sim/ev.h"

typedef struct {
    uint32_t kind, a;      /* the caller's completion event */
    uint64_t b;
    double left;           /* work still to do, ms at full speed */
} cores_job;

typedef struct {
    int cores;             /* k >= 1 */
    const double *speedup; /* NULL, or the total speed with n busy: speedup[min(n, nspeedup) - 1] */
    int nspeedup;
    uint32_t tick_kind;    /* the caller's event kind for ticks */
    cores_job *job;
    int n, cap;
    double speed;          /* > 0: multiplies every job's rate (1 after cores_init) */
    double t_last;         /* when `left` was last brought up to date */
    uint64_t gen;          /* the generation of the one live tick */
} cores_t;

/* 0, or -1 when out of memory. speedup (may be NULL; kept, not copied):
 * with n jobs running their total speed is speedup[min(n, nspeedup) - 1]
 * instead of min(n, cores). */
int cores_init(cores_t *c, int cores, const double *speedup, int nspeedup, uint32_t tick_kind);
void cores_free(cores_t *c);
/* Start a job of `work` ms at now; its event (kind, a, b) comes when done. */
int cores_start(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                double work);
/* Handle a tick event (its payload b is the generation). 0, or -1 when out
 * of memory. */
int cores_tick(cores_t *c, ev_queue *q, double now, uint64_t gen);
/* From now on the cores run at `speed` (> 0) times their rate: the work
 * done so far at the old speed is kept. 0, or -1 when out of memory. */
int cores_set_speed(cores_t *c, ev_queue *q, double now, double speed);
/* The speed of each running job now: min(1, k/n), or speedup(n)/n, times
 * the cores' speed. */
double cores_rate(const cores_t *c);

#endif
