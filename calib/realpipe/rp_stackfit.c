/* rp_stackfit.c — the simulator on stackcal's threads, and the pull_ms that
 * reproduces stackcal's two-on-one share. See rp_stackfit.h.
 * It must never read the pipeline's spans or op logs: the fit is to the
 * isolated calibration alone. */
#include "calib/realpipe/rp_stackfit.h"
#include "calib/realpipe/rp_scen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/config.h"
#include "models/run.h"
#include "models/scenario.h"

#define FIT_SECONDS 120     /* each load's simulated time (and 2 replications) */
#define FIT_STEPS 14        /* bisection: the measured mean / 2^14 */

int rp_stackfit_scenario(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                         double switch_ms, int l, char *text, size_t cap)
{
    int by_load = (how & RP_STACKFIT_BY_LOAD) != 0;
    rp_params sp;                      /* the stack figures, written as the pipeline's are */
    rp_params_default(&sp);
    sp.has_stack = 1;
    sp.stack_share = r->all.share;
    sp.stack_migrate_ms = migrate_ms;
    sp.stack_pull_ms = pull_ms;
    sp.stack_switch_ms = switch_ms;
    sp.nstack_load = by_load ? RP_STACK_NLOADS : 0;
    for (int k = 0; k < sp.nstack_load; k++) {
        sp.stack_load_share[k] = r->at[k].share;
        sp.stack_load_util[k] = r->at[k].util;
    }
    if (how & RP_STACKFIT_BY_RUN) {
        rp_stack_runfit(r, by_load, sp.stack_run_share, sp.stack_run_factor, sp.stack_run_age_ms);
        sp.nstack_run = RP_STACK_NAGE;
    }
    char *stack = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&stack, &len);
    if (!m)
        return -1;
    rp_stack_yaml(m, &sp);
    if (fclose(m) != 0) {
        free(stack);
        return -1;
    }
    double frame_ms = r->decode_ms + r->chain_ms / r->keep_every;
    double rate_hz = r->load[l] * r->cpus / frame_ms * 1e3;
    int n = snprintf(text, cap,
                     "name: stackcal-sim\nseed: 1\nduration_s: %d\nwarmup_s: 1\nreplications: 2\n"
                     "workload: {arrival: poisson, rate_hz: %.9g}\n"
                     "cpu: {cores: %d, wake_ms: 0, stages: [decode, encode],\n"
                     "      %s}\n"
                     "stages:\n"
                     "  - {name: decode, workers: %d, service: {dist: constant, ms: %.9g}}\n"
                     "  - {name: sample, workers: 1, keep: {every: %d}, "
                     "service: {dist: constant, ms: 0.001}}\n"
                     "  - {name: encode, workers: 1, service: {dist: constant, ms: %.9g}}\n",
                     FIT_SECONDS, rate_hz, r->cpus, stack, r->workers, r->decode_ms, r->keep_every,
                     r->chain_ms);
    free(stack);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The simulator's two-on-one-core share at load step l with that pull_ms. */
static int sim_share(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                     double switch_ms, int l, double *share, char *err, size_t errlen)
{
    char text[2048];
    if (rp_stackfit_scenario(r, how, migrate_ms, pull_ms, switch_ms, l, text, sizeof text)) {
        snprintf(err, errlen, "stackcal's scenario does not fit in %zu bytes", sizeof text);
        return -1;
    }
    scenario_cfg cfg;
    char why[512];
    if (scn_load_string(text, strlen(text), "stackcal-sim.yaml", NULL, &cfg, why, sizeof why)) {
        snprintf(err, errlen, "stackcal's own system, simulated: %s", why);
        return -1;
    }
    run_opts opts = {.threads = 1};
    run_result res;
    int rc = run_scenario(&cfg, &opts, &res, why, sizeof why);   /* frees res on failure */
    if (rc == 0) {
        *share = res.cpu_two_same.mean;
        run_result_free(&res);
    } else {
        snprintf(err, errlen, "stackcal's own system, simulated: %s", why);
    }
    cfg_free(&cfg);
    return rc == 0 ? 0 : -1;
}

/* The simulator's shares at every load with that pull_ms, and their mean
 * over the loads stackcal saw two ops at. */
static int sim_all(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                   double switch_ms, const double *real, double *share, double *mean, char *err,
                   size_t errlen)
{
    double sum = 0;
    int n = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        share[l] = -1;
        if (real[l] < 0)
            continue;
        if (sim_share(r, how, migrate_ms, pull_ms, switch_ms, l, &share[l], err, errlen))
            return -1;
        sum += share[l];
        n++;
    }
    *mean = n > 0 ? sum / n : 0;
    return 0;
}

int rp_stackfit_run(const rp_stack_result *r, int how, double migrate_ms, double pull_ms,
                    double switch_ms, rp_stackfit *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->measured_ms = f->pull_ms = pull_ms;
    double sum = 0;
    int n = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        const rp_stack_sum *s = &r->at[l];
        f->real[l] = s->two_ms > 0 ? s->two_same_ms / s->two_ms : -1;
        if (f->real[l] >= 0) {
            sum += f->real[l];
            n++;
        }
    }
    if (n == 0) {
        snprintf(err, errlen, "stackcal saw no time with two ops running: nothing to fit pull_ms to");
        return -1;
    }
    f->real_mean = sum / n;
    double hi_mean, lo_mean, mean;
    if (sim_all(r, how, migrate_ms, pull_ms, switch_ms, f->real, f->sim_measured, &hi_mean, err,
                errlen))
        return -1;
    memcpy(f->sim_fit, f->sim_measured, sizeof f->sim_fit);
    f->sim_mean = hi_mean;
    if (hi_mean <= f->real_mean) {      /* it stacks no more than measured: keep the mean */
        f->clamped = 1;
        return 0;
    }
    double lo = 0, hi = pull_ms, share[RP_STACK_NLOADS];
    if (sim_all(r, how, migrate_ms, 0, switch_ms, f->real, share, &lo_mean, err, errlen))
        return -1;
    if (lo_mean >= f->real_mean) {      /* over it even with an instant pull */
        f->clamped = -1;
        f->pull_ms = 0;
        memcpy(f->sim_fit, share, sizeof share);
        f->sim_mean = lo_mean;
        return 0;
    }
    for (int k = 0; k < FIT_STEPS; k++) {  /* the share grows with pull_ms */
        double mid = 0.5 * (lo + hi);
        if (sim_all(r, how, migrate_ms, mid, switch_ms, f->real, share, &mean, err, errlen))
            return -1;
        if (mean > f->real_mean)
            hi = mid;
        else
            lo = mid;
    }
    f->pull_ms = 0.5 * (lo + hi);
    return sim_all(r, how, migrate_ms, f->pull_ms, switch_ms, f->real, f->sim_fit,
                   &f->sim_mean, err, errlen);
}
