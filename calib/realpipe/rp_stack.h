/* rp_stack.h — where the scheduler puts a woken op, and how soon it moves
 * one off a shared core (`vlrealpipe stackcal`, issue 7).
 *
 * The pipeline's op log (rp_oplog.h) showed that of the time two ops ran,
 * 13–25 % had both on one CPU while the other ran none: a woken thread put
 * beside its waker (Linux's wake-affine) waits for the load balancer to
 * move it. The simulator's cpu.stack models that with two figures, measured
 * here apart from the pipeline:
 *   share       of the ops whose thread was woken for them (it slept on its
 *               queue) and that start while a CPU runs exactly one op and
 *               another none, the part that start on the busy CPU (a
 *               thread going on at once with its next op stays where it
 *               is, as the simulator's does). Starts while every busy CPU
 *               ran two or more are counted apart: almost none go beside
 *               them (9 of 353 on 2026-12-03), and the simulator puts
 *               them on the free core;
 *   migrate_ms  while a CPU runs no op and another runs two or more, the
 *               mean wait until one moves over: the time spent in that
 *               state over the moves out of it (the maximum-likelihood
 *               mean of an exponential wait, censored by the ops' ends),
 *               for spells begun by a woken op put on the busy CPU;
 *   pull_ms     the same for spells begun by a CPU's last op ending (or
 *               moving away) while another CPU held two: Linux's newly
 *               idle CPU pulls a waiting thread at once, where an idle one
 *               must be found by the balancer. The wait is no exponential
 *               (a quarter to a third within 0.25 ms, the rest long), so
 *               the scenario takes a pull_ms fitted on these threads by
 *               the simulator (rp_stackfit.h), not this mean.
 *
 * The threads hand work over as the pipeline's do: a release thread at
 * Poisson times → a pool of decode workers (the pipeline's decode_workers)
 * → a sampler thread that forwards one in keep_every → an executor thread.
 * The ops are busy loops of the pipeline's own op times (a decode, and
 * encode + reduce + prefill at batch 1, each timed alone first on the real
 * kernels) that read their CPU (sched_getcpu) after every few microseconds
 * of work, so every op's CPU is known along its whole life. The release
 * rate steps through 20, 40, 60 and 80 % of the cores. Nothing here prints,
 * pins a thread, or keeps global state. */
#ifndef VL_RP_STACK_H
#define VL_RP_STACK_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_STACK_MAX_SEG 16        /* an op's CPU changes kept (more are counted, not kept) */
#define RP_STACK_MAX_GAP 16        /* an op's off-CPU gaps kept (more are counted, not kept) */
#define RP_STACK_GAP_MS 0.02       /* a unit this much longer than the others: the op was off its CPU */
#define RP_STACK_MAX_CPU 64
#define RP_STACK_NLOADS 4
#define RP_STACK_BRIDGE_MS 0.05    /* a CPU empty this long or less kept its run (a thread going on) */

/* One op's life: it ran on seg[k].cpu from seg[k].t to the next change (or t1). */
typedef struct {
    double t0, t1;                 /* ms, monotonic */
    int chain;                     /* 1: the executor's op; 0: a decode */
    int load;                      /* the load step it was released in */
    int woken;                     /* its thread slept before it (0: it went on from its last op) */
    int thread;                    /* which thread ran it (its next op is that thread's next) */
    int nseg;                      /* >= 1: seg[0] is at t0 */
    struct { double t; int cpu; } seg[RP_STACK_MAX_SEG];
    int ngap;                      /* gaps while the op was off its CPU (its thread preempted) */
    struct { double t0, t1; } gap[RP_STACK_MAX_GAP];   /* the last unit before, the first after */
} rp_stack_op;

/* The spells' age bins: their upper ends, ms (the last is open). */
#define RP_STACK_NAGE 7
extern const double rp_stack_age_ms[RP_STACK_NAGE];

/* The figures, over every op or one load step's. */
typedef struct {
    long ops;
    double op_ms, span_ms;         /* the ops' time, and first start to last end: op_ms / span_ms
                                      is the mean number running (the load carried) */
    long chain_ops;                /* of the ops, the executor's */
    double busy_cpu_ms;            /* the CPUs' time running an op, summed over the CPUs */
    double util;                   /* busy_cpu_ms over span_ms x cpus: the CPUs' utilisation */
    double on_cpu_ms;              /* the ops' time less their gaps: on a CPU */
    double lone_gap_ms;            /* of the gaps, the time no other op was on the op's CPU: the
                                      machine took it (a hypervisor's steal, another process) */
    /* Who yields a shared CPU, by kind ([0] the decodes, [1] the executor's):
     * the ops' time, and the part of it off their CPU while another op had
     * it (the gaps less their lone part). On the pipeline's op logs the
     * executor hardly slowed beside the decodes, which absorbed the sharing
     * (README, Accuracy, 2026-12-04): Linux favours a thread that slept. */
    double kind_ms[2], kind_yield_ms[2];
    long chances;                  /* woken ops' starts with a CPU running none and one running
                                      exactly one op (the share's) */
    long stacked;                  /* of those, starts on a CPU already running an op */
    long chances2, stacked2;       /* the same while every CPU running an op ran two or more
                                      (the simulator puts such a start on the free core) */
    double share;                  /* stacked / chances (0 when no chance) */
    /* The chances and the stacked by the busy CPU's run: how long it had
     * been running ops when the woken op started (since it last had none
     * for more than RP_STACK_BRIDGE_MS: a thread going on at once with its
     * next op keeps its run), in the bins of rp_stack_age_ms. Linux's
     * EEVDF lets the running thread keep its CPU till it has had its slice,
     * so a woken thread put beside a young run waits and is pulled to the
     * free CPU, where beside an old one it takes the CPU at once. */
    long run_chances[RP_STACK_NAGE], run_stacked[RP_STACK_NAGE];
    /* Time with a CPU running no op and another two or more, and the moves
     * out of it (an op from a CPU of 2+ to one of none), by how that spell
     * began: [0] a woken op started on the busy CPU (the balancer must find
     * the idle CPU), [1] a CPU's last op ended or moved away while another
     * held two and its thread then slept (the newly idle CPU can pull at
     * once), [2] the same, but its thread went on at once with its next op:
     * the CPU was not idle, only between two ops, so neither wait counts it. */
    double spell_ms[3], exposure_ms;     /* exposure_ms: kinds 0 and 1 */
    long spell_moves[3], moves;          /* moves: kinds 0 and 1 */
    long spells[3];                /* spells begun, by kind */
    long spell_ended[3][3];        /* ended, by kind and by what ended them: an op's end (on
                                      the shared CPU), an op's start (on the free CPU), a move */
    /* The spells of kinds 0 and 1 by their age: the time spent at ages in
     * each bin of rp_stack_age_ms (ms: [0, 0.25], (0.25, 0.5], (0.5, 1], (1,
     * 2], (2, 4], (4, 8], over 8) and the moves out of them at such an age.
     * Moves over time in a bin is the hazard there: flat if the wait for a
     * move is exponential, as the simulator draws it. */
    double age_ms[2][RP_STACK_NAGE];
    long age_moves[2][RP_STACK_NAGE];
    long other_moves;              /* the ops' other CPU changes */
    double migrate_ms;             /* exposure_ms / moves (-1: no move seen) */
    double spell_wait_ms[3];       /* spell_ms / spell_moves (-1: no move seen) */
    double two_ms, two_same_ms;    /* time exactly two ops ran; of it, both on one CPU */
    /* Who runs when two ops share a CPU. An op that starts on a CPU where
     * exactly one other op runs took that CPU from it (the other shows a
     * gap then). Either the newcomer runs through to its end before the
     * other gets the CPU back, or the other gets it back first, after the
     * newcomer's first run: the scheduler's slice. */
    long shared_starts;            /* starts on a CPU running exactly one other op */
    long through;                  /* of those, the other op off its CPU until the new one's end */
    long cut;                      /* ... back on its CPU before the new one's end */
    long moved_back;               /* ... back before the new one's end, on another CPU */
    long no_gap;                   /* ... showing no gap at the start (the two ran interleaved finer
                                      than RP_STACK_GAP_MS, or the CPU number was stale) */
    double through_ms;             /* the new ops' times, over `through` */
    double first_run_ms;           /* the new ops' first runs (start to the other's return), over `cut` */
    double slice_ms;               /* first_run_ms / cut (-1: none cut) */
    /* The simulator's turns (cpu.stack.switch_ms): the newcomers' first
     * runs as exponential waits for a turn, censored by their ends (through)
     * and by the other op's move: their whole time over the turns seen
     * (`cut`), the maximum-likelihood mean. */
    double turn_exposure_ms;
    double switch_ms;              /* turn_exposure_ms / cut (-1: none cut) */
} rp_stack_sum;

typedef struct {
    int cpus, workers, keep_every;
    double seconds;                /* at each load */
    double decode_ms, chain_ms;    /* the ops' times alone (the real kernels), times op_scale */
    double op_scale;
    double units_per_ms;           /* the busy loop's speed alone */
    double load[RP_STACK_NLOADS];
    rp_stack_sum all, at[RP_STACK_NLOADS];
} rp_stack_result;

/* The figures of ops op[0..n) on CPUs 0..cpus-1 (an op on another CPU is
 * left out), only from ops of load step `load` (-1: all). Ties at one
 * instant: ends, then moves, then starts. 0, or -1 when out of memory. */
int rp_stack_summarize(const rp_stack_op *op, size_t n, int cpus, int load, rp_stack_sum *s);

/* The share by load and by the busy CPU's run as two factors (rp_stack_sum's
 * run_chances and run_stacked): the chance a woken op goes beside a run of
 * age bin b at load step l is share[l] x factor[b], fitted to the counts by
 * iterative proportional fitting, so that each load's stacked count is
 * kept (sum over b of chances[l][b] share[l] factor[b] = stacked[l]) and
 * each bin's too (over l), and the factors' mean over every chance is 1.
 * The rows are the load steps (by_load), or the one pooled row (`all`,
 * share[0]). A bin with no chance takes the factor of the nearest younger
 * bin that had one (else the nearest older; 1 when none had any). age_ms
 * gets each bin's middle (the open bin: twice its lower end), the ages the
 * scenario's cpu.stack.run interpolates on. The rows' count (4 or 1). */
int rp_stack_runfit(const rp_stack_result *r, int by_load, double *share, double *factor,
                    double *age_ms);

/* The measurement: p->cores CPUs, p->decode_workers workers, seconds at each
 * load, the ops op_scale (> 0) times the real ops' times (1: the pipeline's;
 * longer ops show the wait for a move at older ages). 0, or -1 and a
 * message. */
int rp_stack_run(const rp_params *p, double seconds, double op_scale, rp_stack_result *r, char *err,
                 size_t errlen);

#endif
