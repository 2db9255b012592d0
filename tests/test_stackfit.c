/* test_stackfit.c — the simulator on stackcal's own threads and the pull_ms
 * fitted to stackcal's two-on-one share (calib/realpipe/rp_stackfit.h).
 *
 * Independent sources: the scenario's rate and figures are worked out by
 * hand from the stackcal result the test builds; the fit is checked by
 * recovery (the "measured" shares are the simulator's own at a pull_ms the
 * test picks, and the fit must find that pull_ms again from a measured mean
 * four times larger) and by its two ends, where the answer is fixed by the
 * rule and not by a number. The ops are 10 ms long so that the simulated
 * minutes stay cheap (tens of frames per second). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "calib/realpipe/rp_stackfit.h"
#include "models/config.h"
#include "models/dist.h"
#include "models/run.h"
#include "models/scenario.h"

TestSuite(stackfit, .timeout = 120);

/* stackcal's figures of a made-up run: 2 CPUs, 2 decode workers, a sampler
 * keeping 1 in 2, decodes of decode_ms and an executor chain of chain_ms. */
static void made_up(rp_stack_result *r, double decode_ms, double chain_ms)
{
    memset(r, 0, sizeof *r);
    static const double loads[RP_STACK_NLOADS] = {0.2, 0.4, 0.6, 0.8};
    static const double util[RP_STACK_NLOADS] = {0.21, 0.41, 0.62, 0.83};
    static const double share[RP_STACK_NLOADS] = {0.03, 0.07, 0.13, 0.19};
    memcpy(r->load, loads, sizeof loads);
    r->cpus = 2;
    r->workers = 2;
    r->keep_every = 2;
    r->decode_ms = decode_ms;
    r->chain_ms = chain_ms;
    r->all.share = 0.11;
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        r->at[l].util = util[l];
        r->at[l].share = share[l];
    }
}

static void load_text(const char *text, scenario_cfg *c)
{
    char err[512] = "";
    cr_assert_eq(scn_load_string(text, strlen(text), "fit.yaml", NULL, c, err, sizeof err), 0,
                 "%s\n%s", err, text);
}

/* Load step 3 (80 %) of decodes of 0.8 ms and a chain of 1.0 ms, 1 in 2
 * kept: a frame costs 0.8 + 1.0 / 2 = 1.3 ms of CPU, so 80 % of 2 CPUs is
 * 0.8 x 2 / 1.3 = 1.2307692 frames per ms, 1230.7692 Hz. */
Test(stackfit, scenario_by_hand)
{
    rp_stack_result r;
    made_up(&r, 0.8, 1.0);
    char text[2048];
    cr_assert_eq(rp_stackfit_scenario(&r, 1, 7.5, 0.25, 3.0, 3, text, sizeof text), 0);
    scenario_cfg c;
    load_text(text, &c);
    cr_expect(fabs(c.workload.rate_hz - 1600.0 / 1.3) < 1e-4, "rate %g", c.workload.rate_hz);
    cr_expect_eq(c.cpu.cores, 2);
    cr_expect_eq(c.cpu.has_stack, 1);
    cr_expect(fabs(c.cpu.stack_migrate_ms - 7.5) < 1e-12);
    cr_expect(fabs(c.cpu.stack_pull_ms - 0.25) < 1e-12);
    cr_expect(fabs(c.cpu.stack_switch_ms - 3.0) < 1e-12);
    cr_expect_eq(c.cpu.nstack_share, 4);
    cr_expect(fabs(c.cpu.stack_shares[2] - 0.13) < 1e-12);
    cr_expect(fabs(c.cpu.stack_share_load[3] - 0.83) < 1e-12);
    cr_assert_eq(c.nstages, 3);
    cr_expect_str_eq(c.stages[0].name, "decode");
    cr_expect_eq(c.stages[0].servers, 2);
    cr_expect(fabs(dist_mean(&c.stages[0].service) - 0.8) < 1e-12);
    cr_expect_eq(c.stages[1].keep_every, 2);
    cr_expect(fabs(dist_mean(&c.stages[2].service) - 1.0) < 1e-12);
    cfg_free(&c);

    /* without the table the one share throughout; 20 % is a quarter of the rate */
    cr_assert_eq(rp_stackfit_scenario(&r, 0, 7.5, 0.25, 3.0, 0, text, sizeof text), 0);
    load_text(text, &c);
    cr_expect(fabs(c.workload.rate_hz - 400.0 / 1.3) < 1e-4, "rate %g", c.workload.rate_hz);
    cr_expect_eq(c.cpu.nstack_share, 0);
    cr_expect(fabs(c.cpu.stack_share - 0.11) < 1e-12);
    cfg_free(&c);
}

/* The simulator's own two-on-one share at load step l with that pull_ms. */
static double share_at(const rp_stack_result *r, double pull_ms, int l)
{
    char text[2048], err[512] = "";
    cr_assert_eq(rp_stackfit_scenario(r, 1, 30, pull_ms, 3.0, l, text, sizeof text), 0);
    scenario_cfg c;
    load_text(text, &c);
    run_opts o = {.threads = 1};
    run_result res;
    cr_assert_eq(run_scenario(&c, &o, &res, err, sizeof err), 0, "%s", err);
    double s = res.cpu_two_same.mean;
    run_result_free(&res);
    cfg_free(&c);
    return s;
}

/* Shares the simulator gives at pull_ms 4 are "measured"; from a measured
 * mean of 16 ms the fit must come back to about 4. */
Test(stackfit, recovers_a_known_pull)
{
    rp_stack_result r;
    made_up(&r, 10, 10);
    double mean = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        r.at[l].two_ms = 1000;
        r.at[l].two_same_ms = 1000 * share_at(&r, 4.0, l);
        mean += r.at[l].two_same_ms / 1000 / RP_STACK_NLOADS;
    }
    rp_stackfit f;
    char err[512] = "";
    cr_assert_eq(rp_stackfit_run(&r, 1, 30, 16, 3.0, &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.clamped, 0);
    cr_expect(fabs(f.measured_ms - 16) < 1e-12);
    cr_expect(fabs(f.pull_ms - 4) < 0.4, "fitted %g", f.pull_ms);
    cr_expect(fabs(f.real_mean - mean) < 1e-12);
    cr_expect(fabs(f.sim_mean - mean) < 0.01, "sim %g, measured %g", f.sim_mean, mean);
    /* with the measured mean the simulator stacks more than at the fit */
    double at16 = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        at16 += f.sim_measured[l] / RP_STACK_NLOADS;
    cr_expect(at16 > mean + 0.02, "at 16 ms %g, at 4 ms %g", at16, mean);
}

/* A measured share above the simulator's at the measured mean keeps the
 * mean; one below its share with an instant pull gives 0. */
Test(stackfit, clamps_at_both_ends)
{
    rp_stack_result r;
    made_up(&r, 10, 10);
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        r.at[l].two_ms = 1000;
        r.at[l].two_same_ms = 990;
    }
    rp_stackfit f;
    char err[512] = "";
    cr_assert_eq(rp_stackfit_run(&r, 1, 30, 16, 3.0, &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.clamped, 1);
    cr_expect(fabs(f.pull_ms - 16) < 1e-12);
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        r.at[l].two_same_ms = 0;
    cr_assert_eq(rp_stackfit_run(&r, 1, 30, 16, 3.0, &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.clamped, -1);
    cr_expect_eq(f.pull_ms, 0);
    cr_expect(f.sim_mean > 0, "an instant pull still leaves stacked starts: %g", f.sim_mean);
}

/* A load with no two-op time is left out of both means; none at all is an
 * error that says so. */
Test(stackfit, loads_without_two_ops)
{
    rp_stack_result r;
    made_up(&r, 10, 10);
    rp_stackfit f;
    char err[512] = "";
    cr_expect_eq(rp_stackfit_run(&r, 1, 30, 16, 3.0, &f, err, sizeof err), -1);
    cr_expect(strstr(err, "no time with two ops") != NULL, "%s", err);
    r.at[3].two_ms = 1000;
    r.at[3].two_same_ms = 990;
    cr_assert_eq(rp_stackfit_run(&r, 1, 30, 16, 3.0, &f, err, sizeof err), 0, "%s", err);
    cr_expect(f.real[0] < 0 && f.sim_measured[0] < 0 && f.sim_fit[1] < 0);
    cr_expect(fabs(f.real_mean - 0.99) < 1e-12);
    cr_expect(fabs(f.sim_mean - f.sim_measured[3]) < 1e-12);
}
