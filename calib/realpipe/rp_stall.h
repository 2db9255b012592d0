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
 *
 * With several periods the probes take them in turn, a second each, every
 * core the same at once: the host polls a halted core a while before it
 * gives its CPU away (KVM's halt polling), and a core idle for less than
 * that window sees no spell (2026-12-06: 0.03 spells a second a core at
 * 0.1-0.2 ms, 0.26-0.31 at 0.3-1 ms). The window is put between the two
 * periods where the spells' rate rises most likely: of the splits of the
 * periods into shorter and longer, the one with the largest Poisson
 * likelihood of a rate of each side, if it beats one rate for all by a
 * likelihood ratio test at 5 % (twice the log ratio 3.84 or more) and the
 * longer side's rate is the higher; then per_s and the lengths are the
 * longer side's. Without one, every period counts and the window is 0.
 * Nothing of the pipeline runs. Nothing here prints or keeps global state. */
#ifndef VL_RP_STALL_H
#define VL_RP_STALL_H

#include <stddef.h>

#define RP_STALL_MAX_CPUS 64
#define RP_STALL_THR_MS 5.0            /* as wakecal's RP_WAKE_STALL_MS */
#define RP_STALL_PERIOD_MS 1.0         /* the probes' sleep: the pipeline's cores idle ms at a time */
#define RP_STALL_MAX_PERIODS 16
#define RP_STALL_CYCLE_MS 1000.0       /* several periods: each this long in turn */
#define RP_STALL_LR_MIN 3.84           /* chi-squared, 1 degree of freedom, 5 % */

typedef struct {
    int cpu;                           /* the core's index among those measured */
    double due_ms, late_ms;            /* when the wake was due, and how late it came */
    int period;                        /* the index of the period it slept (0 with one) */
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
    /* by period (one unless several were asked) */
    int nperiods;
    double periods_ms[RP_STALL_MAX_PERIODS];   /* increasing */
    long period_spells[RP_STALL_MAX_PERIODS];  /* every core's */
    double period_core_s[RP_STALL_MAX_PERIODS];   /* the cores' seconds in each */
    int split;                         /* the first period counted: per_s, the lengths and the
                                          figures above are from it on (0: all) */
    double poll_ms;                    /* the poll window between periods split - 1 and split
                                          (their mean); 0: none found */
    double lr;                         /* twice the log-likelihood ratio of that split over one
                                          rate (0 with one period) */
} rp_stall_result;

/* The split of n periods' spells (spells[i] in core_s[i] cores' seconds,
 * periods increasing) into shorter and longer by the likelihood ratio test
 * above: *split the first longer one (0: none), *lr its statistic. */
void rp_stall_poll_fit(const long *spells, const double *core_s, int n, int *split, double *lr);

/* The figures from the wakes that came thr_ms late or more (others may be
 * passed: they are skipped). 0, or -1 and a message. */
int rp_stall_summarize(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                       double period_ms, double thr_ms, rp_stall_result *r, char *err, size_t errlen);
/* The same with nperiods periods (increasing) taken in turn, RP_STALL_CYCLE_MS
 * each: the wakes' `period` says which; the poll window fitted. */
int rp_stall_summarize_periods(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                               const double *periods_ms, int nperiods, double thr_ms,
                               rp_stall_result *r, char *err, size_t errlen);

/* Measure every CPU this process may run on for `seconds`, sleeping the
 * periods in turn. 0, or -1 and a message. */
int rp_stall_run(double seconds, const double *periods_ms, int nperiods, double thr_ms,
                 rp_stall_result *r, char *err, size_t errlen);

void rp_stall_free(rp_stall_result *r);

#endif
