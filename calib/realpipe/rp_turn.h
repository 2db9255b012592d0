/* rp_turn.h — how two runnable threads on one CPU take turns (`vlrealpipe
 * turncal`, issue 7), measured apart from any pipeline.
 *
 * On the Linux VMs (kernel 6.18, EEVDF, CONFIG_HZ=250) two runnable threads
 * on one CPU take turns at the scheduler tick. The simulator's "tick turns"
 * model: while a core holds two or more jobs, the running job keeps it until
 * the first tick (every tick_ms, at multiples of tick_ms) that comes strictly
 * after it has held the core for slice_ms; a job placed on a busy core
 * preempts the running one at once. Two figures, both on the last CPU
 * (number nprocs - 1, whichever CPU the caller runs on):
 *   tick_ms   two busy loops pinned there for a third of the time, each
 *             reading CLOCK_MONOTONIC back to back: a jump of more than
 *             RP_TURN_GAP_MS between two reads while the other loop read
 *             the clock is a turn lost (one while it did not is an
 *             interruption, an interrupt or the host, and the run goes on
 *             through it), and the time between two turns lost a turn run
 *             (each loop's first RP_TURN_DROP dropped). tick_ms is the runs'
 *             median: the tick's period less the switches (3.98 ms against
 *             4 on the VM). A quarter to a third of the gaps on the VM are
 *             interruptions; counting them as turns lost would split as many
 *             runs and pull the median down (3.27-3.97 ms in five tries).
 *   slice_ms  the rest of the time, a busy-loop "hog" and a "sleeper" pinned
 *             there: the sleeper repeats a sleep (clock_nanosleep, absolute)
 *             of RP_TURN_SLEEP_MS plus a part of the tick's period drawn
 *             uniformly, and an op that spins until its own CPU time
 *             (CLOCK_THREAD_CPUTIME_ID) has grown by W ms, timing the op's
 *             wall from its wake (its first clock read once it runs) to its
 *             end (CLOCK_MONOTONIC); the wait from the wake-up time it asked
 *             for to that read is kept apart (wake_ms: a wake-up's wait, as
 *             wakecal measures, not a turn). The random part makes the op
 *             start at a uniformly random phase of the tick, as the model
 *             has it: with a fixed sleep the phase follows from the last
 *             op's (the lengths and the sleep are multiples of a sixteenth
 *             of the tick), and one length alone gave 1.38 at W = 1 against
 *             1.14 with the random part (2026-12-04, this VM). W goes round
 *             rp_turn_w_ms in blocks of about RP_TURN_BLOCK_MS, each length
 *             the same share of the time, a random order each round, so the
 *             machine's drift spreads over all of them; a block's first op
 *             is untimed. Lengths mixed op by op came out differently (W = 2:
 *             2.14-2.29 against 1.92-1.99 in blocks or alone): what an op
 *             leaves behind (EEVDF's lag) lasts past the next sleep.
 *             ratio(W) = mean wall / W. slice_ms is the slice in [0, tick_ms]
 *             whose model ratios (rp_turn_ratio) are nearest the measured
 *             ones in the sum of squares (rp_turn_fit).
 * Measured by hand before this tool (1 ms sleeps, 2026-12): W = 0.3 ms ->
 * 1.007, 1 -> 1.686, 2 -> 1.931, 4 -> 2.002, 6 -> 2.001, 10 -> 2.000.
 *
 * Nothing here runs the pipeline's ops, prints, pins the caller's thread
 * (only the threads it starts) or keeps global state. */
#ifndef VL_RP_TURN_H
#define VL_RP_TURN_H

#include <stddef.h>

#define RP_TURN_NW 6               /* the op lengths swept */
#define RP_TURN_GAP_MS 0.02        /* a jump between two clock reads this long: the CPU was lost */
#define RP_TURN_DROP 3             /* each tick loop's first runs, dropped */
#define RP_TURN_SLEEP_MS 1.0       /* the sleeper's sleep before each op, and a part of the period */
#define RP_TURN_BLOCK_MS 100.0     /* the sweep's blocks of one length: about this long */

/* The op lengths, ms of the sleeper's own CPU time: 0.25, 0.5, 1, 2, 4, 8. */
extern const double rp_turn_w_ms[RP_TURN_NW];

/* The protect part (as long again as the other two together): a "runner"
 * and a "wakee" pinned there, each sleeping to the times of one plan. In
 * each round the runner wakes and spins RP_TURN_RUNNER_MS of its own CPU
 * time; the wakee wakes a uniform RP_TURN_AGE_MAX_MS or less after the
 * runner's wake-up time and spins W ms, W going round rp_turn_p_ms in
 * blocks as the sweep's do (a block's first round untimed); the next round
 * comes RP_TURN_SLEEP_MS plus a uniform part of the tick's period after
 * both are done. The runner's age at the wake-up is the wakee's wake-up
 * time less the runner's first clock read (a round whose runner ran more
 * than RP_TURN_LATE_MS late is dropped); the wakee was held when it waited
 * more than RP_TURN_HELD_MS from its wake-up time to its first read (a
 * wake-up's own wait is 0.01-0.1 ms; a held one lasts till the runner has
 * run its protected slice, over 0.3 ms here). share(W): the held share;
 * protect_ms: the median of the runner's age when a held wakee ran (age +
 * wait). On the VM (2026-12-05, throwaway runs): shares 0.32 / 0.70 / 0.95
 * at W = 0.2 / 0.65 / 2 ms, and every held wait ended at an age of
 * 1.3-1.4 ms. */
#define RP_TURN_NP 6
#define RP_TURN_RUNNER_MS 2.0
#define RP_TURN_AGE_MAX_MS 1.0
#define RP_TURN_HELD_MS 0.2
#define RP_TURN_LATE_MS 0.3
extern const double rp_turn_p_ms[RP_TURN_NP];  /* 0.05, 0.25, 0.5, 1, 2, 4 */

typedef struct {
    int cpu;                       /* the CPU everything ran on (nprocs - 1) */
    double seconds;                /* how long both parts ran */
    long tick_runs;                /* the runs tick_ms is the median of */
    double tick_ms;                /* their median */
    double tick_q1, tick_q3;       /* their quartiles */
    double period_ms;              /* the median of (a run + the turn lost after it) / 2 */
    long interruptions;            /* gaps while the other loop did not run */
    double split_ms;               /* the median run counting every gap as a turn lost */
    double w_ms[RP_TURN_NW];       /* rp_turn_w_ms */
    long n[RP_TURN_NW];            /* timed ops of each length */
    double wall_ms[RP_TURN_NW];    /* their mean wall, wake to end */
    double ratio[RP_TURN_NW];      /* wall_ms / w_ms */
    double ratio_se[RP_TURN_NW];   /* its standard error */
    double wake_ms[RP_TURN_NW];    /* the mean wait from the wake-up time asked for to running */
    double slice_ms;               /* the fit (rp_turn_fit) */
    double sse;                    /* the sum of squares at the fit */
    double sse0;                   /* at slice 0 */
    double sse_exp;                /* of the exponential-turns model (ratio 2 at every W) */
    double through[RP_TURN_NW];    /* the share of the ops running through (rp_turn_through) */
    double sse_through;            /* the through model's sum of squares (0 with every
                                      ratio in [1, 2]) */
    double p_w_ms[RP_TURN_NP];     /* rp_turn_p_ms */
    long p_n[RP_TURN_NP];          /* timed rounds kept of each wakee length */
    long p_held[RP_TURN_NP];       /* those whose wakee was held */
    double p_share[RP_TURN_NP];    /* p_held / p_n */
    long p_late;                   /* rounds dropped: the runner ran late */
    double protect_ms;             /* the median age at a held wakee's run */
    double protect_q1, protect_q3; /* its quartiles */
} rp_turn_result;

/* The tick model's expected wall over CPU time of an op of w_ms of CPU on a
 * core that another busy job shares. The op starts at a uniformly random
 * phase of the tick; it is cut at the first tick after it has run slice_ms,
 * then every tick_ms of its own running after that; each cut costs it one
 * tick_ms (the other job runs from tick to tick). With U uniform on [0, 1)
 * the cuts come at c_n = slice + U tick + n tick of its own CPU time, so
 *   E[cuts](w) = sum_{n >= 0} clamp((w - slice - n tick) / tick, 0, 1),
 *   ratio(w)   = 1 + tick E[cuts](w) / w.
 * The sum telescopes to max(0, w - slice) / tick, so ratio(w) = 2 -
 * min(slice, w) / w: 1 for w <= slice, tending to 2; tick_ms drops out of
 * the mean (it sets the spread). The exponential-turns model (turns of mean
 * m: preempted at rate 1 / m while the op runs, each costing m) gives 2 at
 * every w, as does slice 0. NAN unless w_ms > 0, slice_ms >= 0, tick_ms > 0. */
double rp_turn_ratio(double w_ms, double slice_ms, double tick_ms);

/* The slice in [0, tick] (steps of 0.001 ms, and tick itself) that
 * minimises sum_i (rp_turn_ratio(w[i], slice, tick) - ratio[i])^2, the
 * smallest such on a tie; that sum in *sse. 0, or -1 (nothing set) unless
 * n >= 1, 0 < tick <= 1000, every w > 0 and every ratio finite. */
int rp_turn_fit(const double *w, const double *ratio, int n, double tick, double *slice, double *sse);

/* The step the sweep shows (ops of up to 0.5 ms about 1 x, of 2 ms and more
 * about 2 x on the VM) is sharper than any slice gives. The through model:
 * with slice 0, an op put beside a busy job runs through (never cut, 1 x)
 * with probability p, else turns at ticks (2 x at every w, as above), so
 * ratio(w) = 2 - p(w), and the share measured at w is p = 2 - ratio(w),
 * clamped to [0, 1]. NAN unless ratio is finite. */
double rp_turn_through(double ratio);

/* The line turncal's file ends with, what the scenario's cpu.stack takes:
 * "turns: {tick_ms: T, slice_ms: S}" or, with ops running through,
 * "turns: {tick_ms: T, slice_ms: S, through: {work_ms: [W, ...], share:
 * [P, ...]}}", and either may end, before its last brace, with the
 * protection ", protect: {ms: G, work_ms: [W, ...], share: [H, ...]}"
 * (numbers as strtod reads them, ", " between). */
#define RP_TURN_MAX_THROUGH 16
typedef struct {
    double tick_ms, slice_ms;
    int nthrough;                  /* 0: no through part */
    double work_ms[RP_TURN_MAX_THROUGH], share[RP_TURN_MAX_THROUGH];
    int nprotect;                  /* 0: no protect part */
    double protect_ms;
    double pwork_ms[RP_TURN_MAX_THROUGH], pshare[RP_TURN_MAX_THROUGH];
} rp_turns;

/* Read such a line (trailing white space allowed): 0, or -1 (*t unset)
 * when it is not one, or T <= 0, S < 0, the lists differ in length or
 * hold more than RP_TURN_MAX_THROUGH, a work is not above the one before
 * (nor > 0), or a share is outside [0, 1]. */
int rp_turn_parse(const char *line, rp_turns *t);

/* Measure the tick and the sweep for `seconds` in all (a third the tick,
 * the rest the sweep), fit the slice and take the through shares, then the
 * protect part for `seconds` more. 0, or -1 and a message: seconds not > 0,
 * a thread that cannot start or be pinned to the CPU, or a part with no
 * sample (run longer). */
int rp_turn_run(double seconds, rp_turn_result *r, char *err, size_t errlen);

#endif
