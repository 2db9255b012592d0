/* rp_stackfit.h — the simulator run on stackcal's own threads and ops, and
 * the pull_ms with which it reproduces what stackcal measured (issue 7).
 *
 * stackcal (rp_stack.h) measures pull_ms as the mean of an exponential wait:
 * the time spent with a CPU free beside a CPU of two ops, begun by a CPU's
 * last op ending, over the moves out of it. Its own age figures say the wait
 * is no exponential: a quarter to a third of such spells end by a pull
 * within 0.25 ms (Linux's newly idle balance), the rest wait far longer, and
 * the simulator has about 1.5 x as many of them as stackcal sees. With the
 * measured mean the simulator, run on stackcal's own threads and ops, put
 * two ops on one core for about twice stackcal's share of the two-op time
 * (calib/realpipe/stackcal-sim.yaml; README, Accuracy).
 *
 * So the figure the scenario takes is fitted instead, to stackcal's own
 * measurement and never to the pipeline's: the simulator runs stackcal's
 * system (Poisson frames at each load, the decode workers and the executor
 * as busy ops of stackcal's times, a sampler keeping 1 in keep_every, the
 * measured share by load, migrate_ms and switch_ms), and pull_ms is set by
 * bisection on [0, the measured mean] so that the mean over the loads of the
 * simulated two-on-one-core share equals the measured one. The handoffs are
 * instant there: 0 to 0.1 ms of wake-up moved the share by under a point.
 * Nothing here prints or keeps global state; the runs are seeded, so the fit
 * is the same for the same figures. */
#ifndef VL_RP_STACKFIT_H
#define VL_RP_STACKFIT_H

#include <stddef.h>
#include "calib/realpipe/rp_stack.h"

typedef struct {
    double measured_ms;                        /* stackcal's pull_ms (the exponential's mean) */
    double pull_ms;                            /* the fitted one: the scenario's */
    int clamped;                               /* 0 fitted; -1 the share is still over the
                                                  measured one at 0; +1 under it at the
                                                  measured mean (kept) */
    double real[RP_STACK_NLOADS];              /* stackcal's two-on-one share by load (-1: no
                                                  two-op time there) */
    double sim_measured[RP_STACK_NLOADS];      /* the simulator's with the measured mean */
    double sim_fit[RP_STACK_NLOADS];           /* and with the fitted pull_ms */
    double real_mean, sim_mean;                /* over the loads with two-op time, at the fit */
} rp_stackfit;

/* `how`: the share's form, as the pipeline scenario will take it. */
enum { RP_STACKFIT_BY_LOAD = 1,   /* by the cores' utilisation (else r->all.share) */
       RP_STACKFIT_BY_RUN = 2 };  /* and by the busy core's run (rp_stack_runfit) */

/* The scenario text of stackcal's system at load step l with that pull_ms
 * (its cpu.stack written by rp_stack_yaml, as the pipeline scenario's, in
 * the form `how` says). 0, or -1 when it does not fit in cap. */
int rp_stackfit_scenario(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                         double switch_ms, int l, char *text, size_t cap);

/* The fit. 0, or -1 and a message (a scenario the simulator refused, out of
 * memory). */
int rp_stackfit_run(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                    double switch_ms, rp_stackfit *f, char *err, size_t errlen);

#endif
