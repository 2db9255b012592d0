/* rp_stall.h — how often, and how long, the host leaves an idle core
 * unrun (`vlrealpipe stallcal`, issue 7): the simulator's cpu.stalls.
 *
 * On the 2-vCPU VM the real pipeline now and then stops for 10-110 ms: in
 * the validations of 2026-12-06 the camera thread released ten frames at
 * once after 45 ms in which its core ran nothing (the other core ran the
 * query thread meanwhile), and at 85 % load nothing at all ran for 109 ms.
 * 0-1.9 % of a run's frames were released 5 ms late or more; the
 * simulator, which drew each wake-up alone, released 0.03 %. An idle core
 * halts, and the host gives its CPU to others; it must run the core again
 * to wake a thread there, and sometimes does so late.
 *
 * Here one thread is pinned to each CPU (pinning is the point: a core's
 * spells, not the scheduler's choices) and sleeps to absolute times every
 * period_ms, so that its core idles in between; a wake thr_ms late or more
 * is one spell of that core (its next times skip to after the wake, so a
 * spell counts once). The spell began somewhere in the sleep before the
 * due time: its length is taken as the lateness plus half a period. per_s
 * is the spells a core has a second, over every core. Shorter delays are
 * the wake-ups' own (wakecal), which leaves out the same 5 ms and longer.
 * Nothing of the pipeline runs. Nothing here prints or keeps global state. */
#ifndef VL_RP_STALL_H
#define VL_RP_STALL_H

#include <stddef.h>

#define RP_STALL_MAX_CPUS 64
#define RP_STALL_THR_MS 5.0            /* as wakecal's RP_WAKE_STALL_MS */
#define RP_STALL_PERIOD_MS 1.0         /* the probes' sleep: the pipeline's cores idle ms at a time */

typedef struct {
    int cpu;                           /* the core's index among those measured */
    double due_ms, late_ms;            /* when the wake was due, and how late it came */
} rp_stall_wake;

typedef struct {
    int cpus;
    double seconds, period_ms, thr_ms;
    long wakes;                        /* timed waits that woke, every core */
    long spells[RP_STALL_MAX_CPUS];    /* each core's spells */
    long nspells;                      /* all of them */
    double per_s;                      /* nspells / (cpus x seconds) */
    double *ms;                        /* [nspells]: each spell's length, ascending (malloc'd) */
    double mean_ms, p50_ms, p90_ms, max_ms, busy_share;   /* busy_share: the spells' time
                                          over the cores' time */
    long joint;                        /* spells overlapping one of another core by thr_ms or
                                          more: the whole machine's */
} rp_stall_result;

/* The figures from the wakes that came thr_ms late or more (others may be
 * passed: they are skipped). 0, or -1 and a message. */
int rp_stall_summarize(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                       double period_ms, double thr_ms, rp_stall_result *r, char *err, size_t errlen);

/* Measure every CPU this process may run on for `seconds`. 0, or -1 and a
 * message. */
int rp_stall_run(double seconds, double period_ms, double thr_ms, rp_stall_result *r, char *err,
                 size_t errlen);

void rp_stall_free(rp_stall_result *r);

#endif
