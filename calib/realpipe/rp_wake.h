/* rp_wake.h — how long a woken thread waits before it runs, by how many of
 * the pipeline's ops are on the cores when it is woken (`vlrealpipe
 * wakecal`, issue 7).
 *
 * In the real pipeline a frame handed to a stage whose worker sleeps waits
 * for that worker to wake and get a core. `vlcalib wakeup` times that
 * wake-up with nothing else running (0.03 ms on the 2-vCPU box); in the
 * pipeline's spans the same wait, with a worker free, grew with the load to
 * 0.14 / 0.31 / 0.40 / 0.53 ms at 30 / 50 / 70 / 85 %: the woken thread
 * waits for a core the others hold.
 *
 * Here a release thread hands jobs at Poisson times to one FIFO served by
 * `cores + 1` worker threads that sleep on a condition variable when it is
 * empty (as the pipeline's decode workers do). A job is the pipeline's own
 * op: a P-frame decode of the worker's own stream (I-frames at their GOP
 * positions), or, one job in keep_every + 1, encode + reduce + prefill at
 * batch 1. A job handed over while a worker slept (more workers asleep than
 * jobs queued) had nothing to wait for but the wake-up: its wait, from the
 * handoff to a worker starting it, is one sample of class k, the number of
 * other jobs running at the handoff (the last class: `cores` or more). The
 * release thread's own timed wait (a clock_nanosleep to each job's time, as
 * the pipeline's camera thread) gives the timer family: how late it woke, by
 * the jobs running when it was due.
 *
 * Of the waits with jobs running, some end exactly when the first of those
 * jobs ends (on the 2-vCPU box at 03:58 UTC, 56 % with both cores busy,
 * mean 0.33 ms, against 0.035 ms for the others): the scheduler queued the
 * woken thread behind a running job instead of preempting it or using a free
 * core. Such a wait is "held": it lasts till that job's end, whatever its
 * length, so it cannot be drawn from the others' samples; a class records
 * the held share and keeps the other, quick waits as its samples (the
 * simulator's cpu.wake_held / timer_held and wake_busy / timer_busy). A wait
 * is held when it lasted at least until the first running job's end, less
 * RP_WAKE_HELD_TOL. The release rate steps through 20, 40, 60 and 80 % of the cores so every class
 * is seen. Nothing of the pipeline runs: no stages, no batching.
 * Nothing here prints or keeps global state. */
#ifndef VL_RP_WAKE_H
#define VL_RP_WAKE_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_WAKE_MAX_CLASSES 9      /* cores 1..8 */
#define RP_WAKE_NLOADS 4
#define RP_WAKE_HELD_TOL 0.05      /* ms: a wait ending this close to a running job's end is held */
#define RP_WAKE_STALL_MS 5.0       /* ms: a class-0 wait and a class-0 timer lateness overlapping this
                                      long are the machine stalled (rp_wake_classify) */

/* One family of waits by class: the held share, the quick waits' samples
 * and their summary. */
typedef struct {
    size_t all[RP_WAKE_MAX_CLASSES];        /* waits of the class, held or not */
    double held[RP_WAKE_MAX_CLASSES];       /* their share held to a running job's end */
    double held_ms[RP_WAKE_MAX_CLASSES];    /* the held ones' mean (0: none) */
    double *samples[RP_WAKE_MAX_CLASSES];   /* the quick ones, ms, ascending (malloc'd; rp_wake_free) */
    size_t n[RP_WAKE_MAX_CLASSES];
    double mean[RP_WAKE_MAX_CLASSES], p50[RP_WAKE_MAX_CLASSES], p90[RP_WAKE_MAX_CLASSES],
        p99[RP_WAKE_MAX_CLASSES];           /* of the quick ones */
    long n_at[RP_WAKE_NLOADS][RP_WAKE_MAX_CLASSES];     /* every wait's mean by load: whether */
    double mean_at[RP_WAKE_NLOADS][RP_WAKE_MAX_CLASSES];/* it depends on more than the class */
} rp_wake_classes;

typedef struct {
    int classes;                   /* cores + 1: k = 0 .. cores other jobs running (the last: or more) */
    int workers;                   /* cores + 1 */
    double seconds;                /* at each load */
    double job_ms;                 /* a job's mean time on one thread alone, the rates' unit */
    double load[RP_WAKE_NLOADS];   /* the cores' share the release rate asks for */
    long jobs;                     /* jobs handed over, all loads */
    rp_wake_classes wake;          /* a handed-over job's wait, by the jobs running at the handoff */
    rp_wake_classes timer;         /* how late the release thread woke from its timed wait, by
                                      the jobs running when it was due */
    long timer_caught_up;          /* jobs due before the one ahead was handed over: no timed
                                      wait of their own, left out of timer */
    long stalls;                   /* class-0 samples of the machine stalled, left out of both
                                      families (rp_wake_classify) */
    double stall_ms;               /* the longest of those stalls (the overlap), 0 when none */
    double index_ms;               /* the wake index: the geometric mean of the two families'
                                      class-0 quick p90s, how fast a woken thread runs with the
                                      cores idle (make validate's after-run probe compares it:
                                      the host's wake-ups switch regimes on a shared VM) */
} rp_wake_result;

/* One job of the measurement (ms, monotonic). */
typedef struct {
    double due, tq, t0, t1;        /* its time, handed over, started, ended */
    int chain;                     /* 1: encode + reduce + prefill; 0: a P-frame decode */
    int load;                      /* the load step it was released in, 0 .. RP_WAKE_NLOADS - 1 */
    int asleep;                    /* a worker slept for it at the handoff */
} rp_wake_job;

/* r->wake and r->timer from n finished jobs in release order, for
 * r->classes classes (r otherwise zero): a job with asleep set gives a wake
 * sample t0 - tq of class "jobs running at tq"; every job but those due by
 * the previous one's handoff (caught up: counted in r->timer_caught_up)
 * gives a timer sample tq - due of class "jobs running at due" (running
 * at t: t0 <= t < t1; the last class takes the rest); a sample is held
 * when it lasts at least until the first of those jobs ends, less
 * RP_WAKE_HELD_TOL; a class-0 wake sample and a class-0 timer sample that
 * overlap by RP_WAKE_STALL_MS or more are the machine stalled, not a
 * thread's wake-up: both are left out (r->stalls, r->stall_ms); and
 * r->index_ms. 0, or -1 and a message when a class
 * has no quick sample (r then holds none). */
int rp_wake_classify(rp_wake_result *r, const rp_wake_job *jobs, long n, char *err, size_t errlen);

/* 0, or -1 and a message. p->cores 1..8 (the workers are cores + 1),
 * seconds > 0 at each load. A class with no sample is an error: the machine
 * never ran that many ops at once. */
int rp_wake_run(const rp_params *p, double seconds, rp_wake_result *r, char *err, size_t errlen);
void rp_wake_free(rp_wake_result *r);

/* The samples file of class k beside a `wakecal --out` file: F.yaml ->
 * F.busyK.samples (the wake family) or F.timerK.samples (timer != 0); F
 * without .yaml the same. 0, or -1 when it does not fit in n bytes. */
int rp_wake_samples_path(const char *out, int timer, int k, char *buf, size_t n);

#endif
