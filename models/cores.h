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
 * job's rate.
 *
 * Placement (cores_set_stack; off unless called). The pooled sharing above
 * spreads the jobs evenly over the cores at every instant. A real scheduler
 * puts each woken thread on one core, and sometimes on a busy one while
 * another core has nothing to run (Linux's wake-affine places the wakee
 * beside its waker): two jobs then share one core at half speed each until
 * the load balancer moves one. With placement on, each job sits on a core
 * and runs at 1 / (jobs on its core) of the core (times the speed-up
 * table's efficiency speedup(n) / min(n, k), and the speed). A job that
 * starts while a core is free and another runs exactly one job goes beside
 * it (the least loaded busy core) with probability `share`, else onto the
 * first free core; while every busy core already holds two or more it goes
 * onto the free core (stackcal saw 9 of 353 such starts go beside them, 0 of
 * 199 at 80 % of the cores: Linux finds the idle CPU when its own is
 * crowded); with every core busy it joins the least loaded. While one core is free
 * and another holds two or more jobs, a move comes after an exponential
 * wait (memoryless, so redrawn whenever the state is left and entered
 * again) of mean migrate_ms when a start stacked, pull_ms when a job's end
 * left its core empty (Linux's newly idle core pulls a waiting thread at
 * once, where an idle one must be found by the balancer): the last-started
 * job of the most loaded core goes to the first free core. `vlrealpipe stackcal` measures both
 * figures apart from the pipeline.
 *
 * Turns (cores_set_turns; off unless called). Without them the jobs on one
 * core share it evenly. A real scheduler runs one at a time: a job placed
 * on a busy core takes it at once (a woken thread preempts the one
 * running, as Linux's does for a thread that slept), and the core turns to
 * the job that has waited longest after an exponential wait of mean
 * switch_ms (the scheduler's slice ends at a tick or at another thread's
 * wake-up, which come at times a job cannot see). A move takes a waiting
 * job, never the running one. switch_ms -> 0 is the even sharing again;
 * switch_ms -> infinity runs the latest job through. stackcal measures it
 * too. Events at one instant come one at a time, in an order the threads
 * never saw: a job that loses its core at the instant it got it never ran,
 * and keeps its place as the one that waited longest (a 1 us sampler given
 * the core as a decode ended, and taken off it at once by the decoder's
 * thread going on, waited behind every later turn).
 *
 * Ticks (cores_set_ticks; turns at ticks instead of exponential waits).
 * Linux turns a shared CPU at its scheduler tick (every 4 ms at HZ=250),
 * once the running thread has used its slice: a job keeps its core until
 * the first tick (at the multiples of tick_ms, every core's together) that
 * comes after it has had the core for slice_ms. A short job is then never
 * cut, where an exponential turn cuts any job at the same rate (on the
 * 2-vCPU VM an op of 0.3 ms woken beside a busy thread took 1.007 x its time,
 * one of 1 ms 1.69 x and of 4 ms 2.0 x; exponential turns give 2 x for all).
 * `vlrealpipe turncal` measures both figures apart from the pipeline.
 *
 * Protected slices (cores_set_protect; with ticks, off unless called).
 * Linux's EEVDF protects a thread it has just woken and picked for the
 * first part of its slice (RUN_TO_PARITY): a thread woken onto its CPU may
 * wait rather than preempt it, and then runs the instant the protection
 * ends (or the running thread sleeps). Whether it waits depends on the two
 * threads' lag, which follows from how much each ran before: on the VM a
 * thread woken beside one that woke under 1.2 ms earlier waited 32 % of
 * the time with ops of 0.2 ms, 70 % with ops of 0.65 ms, 95 % with ops of
 * 2 ms, and every wait ended when the running thread had run 1.3-1.4 ms.
 * turncal's hog never sleeps, so its protection is long gone when the
 * sleeper wakes. With protection on, a job placed on a core whose running
 * job has had it for less than protect_ms is held with probability
 * share(its work), and takes the core when the running job has had it for
 * protect_ms; else it takes the core at once, as above. A held job stays
 * held while the core changes hands (a job that ends or turns): whoever
 * takes the core next has a fresh protected slice, as a thread Linux picks
 * anew does.
 *
 * Running through (cores_set_through; with ticks, off unless called). The
 * measured step is sharper than any slice gives: ops of up to 0.5 ms woken
 * beside a busy thread ran 1.01 x their time, of 1 ms 1.21 x, of 2 ms and
 * more 1.95-1.99 x (EEVDF lets a thread that slept run on its lag; a long
 * op uses it up). So a job started on a busy core runs through, never cut
 * at a tick, with probability share[] interpolated on its work (held at the
 * ends), drawn from the placement stream; the rest turn at ticks. With
 * slice 0 an op of W <= tick_ms then takes 2 - share(W) x its time, which
 * turncal measures. A thread going on at once with its next job (on the
 * core its last one just left) draws none: it was never put beside the
 * others, and its run turns at ticks (each op of a decoder going on ran
 * through before, and a thread waiting on its core waited for all of them).
 *
 * Share by load (cores_set_share_load; off unless called). Linux's search
 * for an idle CPU for a woken thread gives up sooner the busier the cores
 * have been lately, so the share of starts put beside a running job grows
 * with the load. With a table the share is interpolated (linearly, held at
 * the ends) at the cores' recent utilisation: the busy share of the cores,
 * averaged with an exponential decay of half-life halflife_ms (Linux's
 * load tracking uses 32 ms).
 *
 * Share by run (cores_set_share_run; off unless called). Linux's EEVDF lets
 * a running thread keep its CPU until it has had its slice: a woken thread
 * put beside a young run waits there and is pulled to the free CPU before
 * it starts, where beside an old one it takes the CPU at once. The start's
 * share (the one share, or by load) is then multiplied by factor[]
 * interpolated (held at the ends) at the busy core's run: how long that
 * core has been running jobs, since it last had none for more than
 * bridge_ms (a thread going on with its next job keeps its run), and held
 * to 1. `vlrealpipe stackcal` measures both, apart from the pipeline.
 *
 * Cold cores (cores_set_cold; off unless called). A core that has had
 * nothing to run for a while runs its next job slower: its caches were
 * emptied (a deep idle state flushes them; on a VM the host runs others
 * there meanwhile). With a table of factors by idle time, a job's work is
 * multiplied at its start by the factor at its core's idle time
 * (`vlrealpipe coldcal` measures it apart from the pipeline).
 *
 * Busy lately (cores_set_duty; off unless called). A machine whose cores
 * have been idle much of the time lately runs its next jobs slower, however
 * long ago their own core last ran: on the 2-vCPU VM the same ops took 7-9 %
 * more CPU with the threads busy 45 % of the time, 11-14 % at 30 %, 14-24 %
 * at 10 % (two dutycal runs; a host that lowers an idle core's clock would
 * do this). With a table of factors by utilisation, a job's work is
 * multiplied at its start by the factor at the cores' recent utilisation:
 * the busy share of the cores (placement on: cores holding a job; pooled:
 * min(n, k) / k), averaged with an exponential decay of its own half-life
 * (`vlrealpipe dutycal` measures the table apart from the pipeline).
 *
 * The module knows nothing of stages or items and never prints; cost per
 * change is O(jobs running + cores). */
#ifndef VL_CORES_H
#define VL_CORES_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "sim/ev.h"

typedef struct {
    uint32_t kind, a;      /* the caller's completion event */
    uint64_t b;
    double left;           /* work still to do, ms at full speed */
    int core;              /* placement on: the core it sits on */
    int running;           /* turns on: it has its core now */
    double since;          /* turns on: when it last got or lost its core */
    double waited;         /* turns on, while it runs: when its wait for the core began */
    int through;           /* ticks on: started on a busy core, it is never cut at a tick */
    int held;              /* protection on: waiting out the running job's protected slice */
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
    /* placement (cores_set_stack); place_rng NULL: off, the pooled sharing */
    gsl_rng *place_rng;    /* the caller's: drawn from only when a choice or a move arises */
    double share;          /* [0, 1]: a start with a core free goes onto a busy one */
    double migrate_ms;     /* >= 0: mean wait for a move to a free core, once a start stacked */
    double pull_ms;        /* >= 0: the same once a core emptied beside a shared one */
    int by_start;          /* the last change was a start (else an end or a move) */
    int *on;               /* [cores]: jobs on each core */
    uint64_t mgen;         /* the generation of the one live move event */
    int move_due;          /* a move event is pending */
    double freed_t;        /* when a job last ended, the core it left, and when it */
    int freed_core;        /* had last got that core (turns on) */
    double freed_since;
    /* turns (cores_set_turns); switch_ms 0: the jobs on a core share it */
    double switch_ms;      /* > 0: mean wait before a shared core turns to another job
                              (ticks on: tick_ms, the flag that turns are on) */
    uint64_t *sgen;        /* [cores]: the generation of each core's one live turn event */
    int *turn_due;         /* [cores]: a turn event is pending */
    double tick_ms;        /* > 0 (cores_set_ticks): turns at ticks, not after exponential waits */
    double slice_ms;       /* ticks on: a job keeps its core at least this long */
    double *turn_at;       /* [cores], ticks on: when each core's pending turn comes */
    /* protected slices (cores_set_protect); nprotect 0: off */
    double protect_ms;     /* a running job's protected slice */
    const double *protect_work_ms, *protect_share;   /* [nprotect], kept, not copied */
    int nprotect;
    /* jobs running through (cores_set_through); nthrough 0: none */
    const double *through_work_ms, *through_share;   /* [nthrough], kept, not copied */
    int nthrough;
    /* share by load (cores_set_share_load); nshare 0: `share` throughout */
    const double *share_load, *share_at;   /* [nshare], kept, not copied: load increasing */
    int nshare;
    double util_tau_ms;    /* the recent utilisation's decay time, halflife / ln 2 */
    double util;           /* the cores' recent utilisation, in [0, 1] */
    /* share by run (cores_set_share_run); nrun 0: off */
    const double *run_age_ms, *run_factor;   /* [nrun], kept, not copied: age increasing */
    int nrun;
    double run_bridge_ms;  /* a core empty this long or less keeps its run */
    double *run_t0, *empty_t;   /* [cores]: when core k's run began, when it last emptied */
    /* cold cores (cores_set_cold); ncold 0: off */
    const double *cold_idle_ms, *cold_factor;   /* [ncold], kept, not copied: idle increasing */
    int ncold;
    double *idle_t;        /* [cores]: when core k last emptied (pooled: when the running
                              jobs last fell to k, so that the k-th core had nothing) */
    /* busy lately (cores_set_duty); nduty 0: off */
    const double *duty_util, *duty_factor;   /* [nduty], kept, not copied: util increasing */
    int nduty;
    double duty_tau_ms;    /* the recent utilisation's decay time, halflife / ln 2 */
    double duty_now;       /* the cores' recent utilisation for it, in [0, 1] (0 at the start:
                              the machine was idle before the run) */
    /* since cores_reset_stats (to cores_close): time with any job running,
     * with exactly two, and with those two on one core (placement on) */
    double busy_ms, two_ms, two_same_ms;
    /* cold cores or busy lately on, since cores_reset_stats: the jobs' work
     * as started, and what the cold and the duty factors added to it */
    double work_ms, cold_extra_ms, duty_extra_ms;
    /* placement on, since cores_reset_stats: stackcal's figures (rp_stack.h).
     * A spell is a time with a core free and another holding two or more;
     * its kind is what began it: 0 a start, 1 an end (a core emptied). One
     * a start ended at the instant it began is not counted: a thread going
     * on at once with its next job never left its core.
     * chances: starts placed with a core free and a busy core running
     * exactly one job; stacked: those that went beside it. */
    double spell_ms[2];
    long spell_moves[2], spells[2], chances, stacked;
    long protected_starts; /* protect on: starts that waited beside a job within its slice */
    int spell;             /* the spell now: its kind, -1 none */
    double spell_t0;       /* when it began */
} cores_t;

/* 0, or -1 when out of memory. speedup (may be NULL; kept, not copied):
 * with n jobs running their total speed is speedup[min(n, nspeedup) - 1]
 * instead of min(n, cores). */
int cores_init(cores_t *c, int cores, const double *speedup, int nspeedup, uint32_t tick_kind);
void cores_free(cores_t *c);
/* Start a job of `work` ms at now; its event (kind, a, b) comes when done. */
int cores_start(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                double work);
/* The same on core `core` (placement on; -1, or placement off: as
 * cores_start). A thread that goes on at once with more work after its job
 * ended (a worker taking its next queued item, an executor its next batch,
 * a waker doing its handoff) stays on its core: no placement is drawn. */
int cores_start_on(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                   double work, int core);
/* The core of the job that ended at now, the last if several did (-1: none
 * ended at now, or placement off): where a thread going on at once stays. */
int cores_freed_core(const cores_t *c, double now);
/* Handle a tick event (its payload b is the generation). 0, or -1 when out
 * of memory. */
int cores_tick(cores_t *c, ev_queue *q, double now, uint64_t gen);
/* Handle any event of tick_kind: payload a 0 is a tick, 1 a move (placement
 * on), 2 a turn (turns on). 0, or -1 when out of memory. */
int cores_event(cores_t *c, ev_queue *q, double now, uint32_t a, uint64_t b);
/* Turn placement on (before the first job): share in [0, 1], migrate_ms
 * and pull_ms >= 0, r the stream its choices and waits are drawn from
 * (kept, not owned). 0, or -1 when out of memory. */
int cores_set_stack(cores_t *c, double share, double migrate_ms, double pull_ms, gsl_rng *r);
/* Turns on (after cores_set_stack, before the first job): the jobs on one
 * core run one at a time, the core turning after an exponential wait of
 * mean switch_ms (> 0) drawn from the placement stream. 0, or -1 when out
 * of memory. */
int cores_set_turns(cores_t *c, double switch_ms);
/* Ticks (after cores_set_stack, instead of cores_set_turns): the jobs on a
 * core run one at a time, the core turning at the first tick (the
 * multiples of tick_ms > 0) after its running job has had it for slice_ms
 * (>= 0). 0, or -1 when out of memory or a figure is out of range. */
int cores_set_ticks(cores_t *c, double tick_ms, double slice_ms);
/* Protected slices (after cores_set_ticks; off unless called): a job placed
 * on a core whose running job has had it for less than protect_ms (>= 0,
 * finite) is held, with probability share[] (in [0, 1]) interpolated at
 * its work on work_ms[] (n >= 1, increasing, > 0; kept, not copied), and
 * takes the core when the running job has had it for protect_ms (or ends);
 * else it takes the core at once. A thread going on at once on its core
 * (cores_start_on at the instant its job ended) keeps its turn: it counts
 * from when its last job got the core. 0, or -1 when ticks are off or a
 * figure is out of range. */
int cores_set_protect(cores_t *c, double protect_ms, const double *work_ms, const double *share,
                      int n);
/* Running through (after cores_set_ticks): a job started on a busy core
 * runs through with probability share[] (in [0, 1]) interpolated at its
 * work on work_ms[] (n >= 1, increasing, > 0; kept, not copied). 0, or -1
 * when ticks are off or a figure is out of range. */
int cores_set_through(cores_t *c, const double *work_ms, const double *share, int n);
/* Share by load (after cores_set_stack): a start with a core free goes
 * beside a running job with probability share[] interpolated at the cores'
 * recent utilisation on load[] (n >= 1, increasing in [0, 1]; kept, not
 * copied), averaged with half-life halflife_ms (> 0). 0, or -1 on bad
 * arguments. */
int cores_set_share_load(cores_t *c, const double *load, const double *share, int n,
                         double halflife_ms);
/* Share by run (after cores_set_stack, before the first job): the share
 * of a start beside a running job is multiplied by factor[] (>= 0)
 * interpolated at the busy core's run age on age_ms[] (n >= 1, increasing,
 * >= 0; both kept, not copied), a core empty for bridge_ms (>= 0) or less
 * keeping its run; held to 1. 0, or -1 on bad arguments or out of memory. */
int cores_set_share_run(cores_t *c, const double *age_ms, const double *factor, int n,
                        double bridge_ms);
/* Cold cores (either mode, before the first job): a job that starts on a
 * core that has had nothing to run for g ms needs factor(g) times its work,
 * factor interpolated (linearly, held at the ends) on idle_ms[] (n >= 1,
 * increasing, >= 0; factor > 0; both kept, not copied); on a core running a
 * job, factor(0). Pooled, the jobs take the cores in order (the n-th
 * running job the n-th core) and the last to end leaves the highest one, so
 * a job starting beside n others takes the core that emptied when the
 * running jobs last fell to n. A move or a turn changes no job's work.
 * 0, or -1 on bad arguments or out of memory. */
int cores_set_cold(cores_t *c, const double *idle_ms, const double *factor, int n);
/* Keep when each core last emptied (cold cores do; so may a caller that
 * asks cores_idle_since). Idempotent; 0, or -1 out of memory. */
int cores_track_idle(cores_t *c);
/* Tracking on: when core k last emptied (0 if never run; pooled: when the
 * running jobs last fell to k, so that the k-th core had nothing). Only
 * meaningful while core k is idle. */
double cores_idle_since(const cores_t *c, int k);
/* Protected slices on: when the job running on core k has had it for
 * protect_ms (may be past); -HUGE_VAL with protection off or none running
 * there (a thread woken onto that core then takes it at once). */
double cores_protect_end(const cores_t *c, int k);
/* Busy lately: a job starting now needs its work times factor interpolated
 * (linearly, held at the ends) on util[] (n >= 1, increasing in [0, 1];
 * factor > 0; both kept, not copied) at the cores' recent utilisation, the
 * busy share of the cores decaying with half-life halflife_ms (> 0). With
 * cold cores too both factors apply. 0, or -1 on bad arguments. */
int cores_set_duty(cores_t *c, const double *util, const double *factor, int n, double halflife_ms);
/* The cores' recent utilisation cores_set_duty's table is read at, brought
 * up to now (0 with it off). */
double cores_duty_util(cores_t *c, double now);
/* Placement on: a core is free and every core running a job holds two or
 * more (a start now would go onto the free core). 0 with placement off. */
int cores_crowded(const cores_t *c);
/* The share a start with a core free would go beside a running job with
 * now, before the busy core's run factor (cores_set_share_run). */
double cores_share_now(const cores_t *c);
/* From now on the cores run at `speed` (> 0) times their rate: the work
 * done so far at the old speed is kept. 0, or -1 when out of memory. */
int cores_set_speed(cores_t *c, ev_queue *q, double now, double speed);
/* The speed of each running job now: min(1, k/n), or speedup(n)/n, times
 * the cores' speed (placement off). */
double cores_rate(const cores_t *c);
/* The time figures (busy_ms, two_ms, two_same_ms) and the work figures
 * (work_ms, cold_extra_ms, duty_extra_ms) start again at now, and are brought up to now. */
void cores_reset_stats(cores_t *c, double now);
void cores_close(cores_t *c, double now);

#endif
