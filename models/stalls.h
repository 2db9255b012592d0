/* stalls.h — the machine's stalls: spells in which the host does not run
 * one of the cores (issue 7).
 *
 * On a virtual machine a core with nothing to run halts, and the host gives
 * its physical CPU to others; when a timer or another thread wakes a thread
 * onto that core, the host must run it again first, which now and then
 * takes tens of milliseconds (2026-12-06, the 2-vCPU VM at rest: per core
 * 0.2-0.3 waits of 5 ms or more a second, a mean 14-21 ms, the longest
 * 113 ms; the real pipeline's camera thread released ten frames at once
 * after one). Every thread woken onto the core in that spell waits for its
 * end together, which is what a draw per wake-up cannot give: a wake-up
 * latency drawn alone stalls one thread while the rest run on.
 *
 * Each core's spells are a renewal process of its own: the next spell
 * begins an exponential gap (mean 1 / per_s s) after the last one ended
 * and lasts a draw from `ms`. A wake-up at time t onto core k runs at t, or
 * at the end of core k's spell when t falls in one. Which core a thread is
 * woken onto, and whether a busy core (one that is running, so not halted)
 * is exposed, is the caller's: the module knows only spells and times.
 *
 * A core halted only a moment ago is not exposed either: the host polls a
 * halted core for a while (KVM's halt polling, 200 us by default) before it
 * gives its CPU to others, and a wake-up within that window runs at once
 * (2026-12-06, the same VM at rest: threads sleeping 0.1-0.2 ms at a time
 * saw 0.03 spells a second a core, at 0.3-1 ms 0.26-0.31). With a poll
 * window (stalls_set_poll) a wake-up onto a core halted for less than it
 * is never held. `vlrealpipe stallcal` measures per_s, the spells' lengths
 * and the poll window apart from the pipeline.
 *
 * Draws come from the caller's generator only as a core's spells are
 * walked past, in the order the caller asks, so a run is reproducible. It
 * never prints and never allocates after stalls_init. */
#ifndef VL_STALLS_H
#define VL_STALLS_H

#include <gsl/gsl_rng.h>
#include "models/dist.h"

typedef struct {
    int cores;
    double gap_mean_ms;        /* 1000 / per_s */
    const dist_t *ms;          /* the spells' lengths, kept, not copied */
    gsl_rng *rng;              /* the caller's */
    double poll_ms;            /* a core halted less than this is not exposed (0 after init) */
    double *t0, *t1;           /* [cores]: core k's current or next spell, [t0, t1) */
    /* what happened (stalls_reset_stats clears them) */
    long wakes;                /* wake-ups asked about */
    long polled;               /* of those, within the poll window of the core's halt */
    long stalled;              /* of those, held to a spell's end */
    double wait_ms;            /* their waits for it, summed */
} stalls_t;

/* Spells on `cores` cores at per_s a second each (> 0), lengths drawn from
 * ms; the first gaps are drawn now, from time 0. 0, or -1 out of memory. */
int stalls_init(stalls_t *s, int cores, double per_s, const dist_t *ms, gsl_rng *r);
void stalls_free(stalls_t *s);

/* The host polls a core halted for less than poll_ms (>= 0) before giving
 * its CPU away: a wake-up then is never held. */
void stalls_set_poll(stalls_t *s, double poll_ms);

/* When a thread woken onto core k at time t runs: t, or the end of the
 * spell t falls in, when the core has been halted for halted_ms (at t; use
 * HUGE_VAL for "long") of at least the poll window. `now` (<= t, never decreasing from call to call) is
 * the present: spells that ended by then are past and the next drawn. Only
 * the spell current or next at now is looked at: t - now (a wake-up's
 * delay, under a millisecond or so) must be short against the gaps (a
 * spell that began after one ending in (now, t) is missed). */
double stalls_wake(stalls_t *s, int k, double now, double t, double halted_ms);

/* Core k is in a spell at time now (spells past walked as above). */
int stalls_on(stalls_t *s, int k, double now);

void stalls_reset_stats(stalls_t *s);

#endif
