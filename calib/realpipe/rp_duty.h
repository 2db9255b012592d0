/* rp_duty.h — how fast the machine runs the pipeline's ops by how busy its
 * cores have been lately (`vlrealpipe dutycal`, issue 7).
 *
 * mixcal times the ops back to back, its core always busy. The real
 * pipeline's threads sleep between ops, the more the lighter the load, and
 * on the 2-vCPU VM its ops took more CPU per frame at 30 % load than at 50,
 * 70 or 85 % in every validation of 2026-12-05 (9-17 % more, the threads'
 * getrusage), the same ops at the same batch sizes 8-10 % more CPU each. It
 * is no cold cache after one gap: coldcal, which sleeps a random gap before
 * each op, finds the ops after no gap as slow as those after 10 ms. It is
 * the recent past: one thread sleeping 5 or 20 ms before every op (its core
 * busy 5-25 %) took 4-35 % more CPU per op, after the gaps and after none
 * alike, than the same thread with no sleep (2026-12-06 00:40 UTC, 6 s
 * each, three rounds; a host that lowers an idle core's clock would do
 * this).
 *
 * Here T threads (the pipeline's cores) each own a stream and the kernels
 * (rp_solo) and repeat corecal's unit (decode keep_every frames, encode +
 * reduce + prefill the kept one at batch 1), each sleeping after a unit so
 * that its thread is busy a share d of the time (the sleep is the unit's
 * wall time x (1 - d) / d). The duties step through the list, step_s
 * seconds each, round after round (so a drift of the machine falls on every
 * duty alike); the units begun in the first settle_s of a step are not
 * counted (the recent past is still the last step's). Each unit's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) is summed by duty; factor(d) is the mean at d
 * over the mean at the busiest duty (the first, 1: mixcal's back to back):
 * the simulator's cpu.duty, by the cores' recent utilisation. Nothing of
 * the pipeline runs; the threads are not pinned. Nothing here prints or
 * keeps global state. */
#ifndef VL_RP_DUTY_H
#define VL_RP_DUTY_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_DUTY_MAX 16                 /* duties in the list */
#define RP_DUTY_MAX_THREADS 16
#define RP_DUTY_MAX_ROUNDS 64

typedef struct {
    int threads, nduty, rounds;
    double duty[RP_DUTY_MAX];          /* decreasing, the first 1 */
    double step_s, settle_s;
    long n[RP_DUTY_MAX];               /* units counted at each duty, all threads */
    double cpu_ms[RP_DUTY_MAX];        /* their mean CPU ms */
    double se_ms[RP_DUTY_MAX];         /* its standard error over the rounds' means */
    double busy[RP_DUTY_MAX];          /* the busy share the threads had (CPU over wall) */
    double factor[RP_DUTY_MAX];        /* cpu_ms[d] / cpu_ms[0] */
    double lo[RP_DUTY_MAX], hi[RP_DUTY_MAX];   /* the rounds' least and greatest ratio to duty
                                                  0's mean in the same round */
} rp_duty_result;

/* The figures from the sums: sum_ms[d][r] and cnt[d][r] the CPU ms and units
 * of duty d in round r, wall_ms[d] the threads' wall (units and sleeps) in
 * duty d's counted time. factor[d] = (mean over rounds of duty d's mean)
 * over the same for duty 0. 0, or -1 and a message (a duty with no unit). */
int rp_duty_summarize(rp_duty_result *r, double (*sum_ms)[RP_DUTY_MAX_ROUNDS],
                      long (*cnt)[RP_DUTY_MAX_ROUNDS], const double *wall_ms, char *err,
                      size_t errlen);

/* Run `threads` threads through duty[0..nduty) (decreasing in (0, 1], the
 * first 1), step_s each with the first settle_s not counted, `rounds`
 * times. 0, or -1 and a message. */
int rp_duty_run(const rp_params *p, int threads, const double *duty, int nduty, int rounds,
                double step_s, double settle_s, rp_duty_result *r, char *err, size_t errlen);

#endif
