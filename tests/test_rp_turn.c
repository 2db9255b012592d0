/* test_rp_turn.c — `vlrealpipe turncal` (calib/realpipe/rp_turn.h): the tick
 * model's expected wall over CPU time, the slice fit, and a short real run
 * checked for its shape only.
 *
 * Independent sources: every expected ratio is worked out by hand in the
 * comments from the sum E[cuts](W) = sum_n clamp((W - slice - n tick) /
 * tick, 0, 1), ratio = 1 + tick E[cuts] / W, and checked once more against
 * 2 - min(slice, W) / W, what the sum telescopes to (its terms are 1 up to
 * (W - slice) / tick, then that number's fraction). The real run asserts no
 * speed of the machine: only that each part measured something sane. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/realpipe/rp_turn.h"

#define TOL 1e-12

TestSuite(rp_turn, .timeout = 30);

static void near(const char *what, double got, double want, double tol)
{
    cr_expect(fabs(got - want) <= tol, "%s: got %.15g, want %.15g (+- %g)", what, got, want, tol);
}

/* W = 1, slice 0.3, tick 4: n = 0: (1 - 0.3) / 4 = 0.175, n >= 1 negative:
 * E = 0.175, ratio = 1 + 4 * 0.175 / 1 = 1.7.
 * W = 6, slice 0.3, tick 4: n = 0: 5.7 / 4 -> 1; n = 1: 1.7 / 4 = 0.425:
 * E = 1.425, ratio = 1 + 5.7 / 6 = 1.95 = 2 - 0.3 / 6.
 * W = 9, slice 0.5, tick 4: n = 0: 8.5 / 4 -> 1; n = 1: 4.5 / 4 -> 1;
 * n = 2: 0.5 / 4 = 0.125: E = 2.125, ratio = 1 + 8.5 / 9 = 17.5 / 9.
 * W <= slice: no term is positive, no cut: exactly 1. */
Test(rp_turn, ratio_by_hand)
{
    near("W 1, slice 0.3", rp_turn_ratio(1, 0.3, 4), 1.7, TOL);
    near("W 6, slice 0.3", rp_turn_ratio(6, 0.3, 4), 1.95, TOL);
    near("W 9, slice 0.5", rp_turn_ratio(9, 0.5, 4), 17.5 / 9, TOL);
    cr_expect_eq(rp_turn_ratio(0.25, 0.3, 4), 1.0);
    cr_expect_eq(rp_turn_ratio(0.3, 0.3, 4), 1.0);
    cr_expect_eq(rp_turn_ratio(2, 3.5, 4), 1.0);
    /* slice 0: every W costs one tick per tick run, 2 (the exponential
     * model's ratio) */
    near("W 0.25, slice 0", rp_turn_ratio(0.25, 0, 4), 2, TOL);
    near("W 5, slice 0", rp_turn_ratio(5, 0, 4), 2, TOL);
    cr_expect(isnan(rp_turn_ratio(0, 0.3, 4)));
    cr_expect(isnan(rp_turn_ratio(-1, 0.3, 4)));
    cr_expect(isnan(rp_turn_ratio(1, -0.1, 4)));
    cr_expect(isnan(rp_turn_ratio(1, 0.3, 0)));
    cr_expect(isnan(rp_turn_ratio(1, NAN, 4)));
}

/* The telescoped form on a grid of W, slice and tick, ticks of 1, 4 and 10
 * ms: W from 0.1 to 30, slice from 0 to the tick. */
Test(rp_turn, ratio_is_two_less_slice_over_w)
{
    const double ticks[] = {1, 4, 10};
    for (int t = 0; t < 3; t++)
        for (double w = 0.1; w < 30; w += 0.37)
            for (double s = 0; s <= ticks[t]; s += ticks[t] / 7) {
                char what[96];
                snprintf(what, sizeof what, "W %g, slice %g, tick %g", w, s, ticks[t]);
                near(what, rp_turn_ratio(w, s, ticks[t]), 2 - fmin(s, w) / w, 1e-9);
            }
}

/* Ratios by hand for slice 0.4, tick 4 (the sum's terms, as above):
 *   W 0.25: W <= slice                      -> 1
 *   W 0.5:  E = 0.1 / 4 = 0.025             -> 1 + 4 * 0.025 / 0.5 = 1.2
 *   W 1:    E = 0.6 / 4 = 0.15              -> 1 + 0.6 / 1 = 1.6
 *   W 2:    E = 1.6 / 4 = 0.4               -> 1 + 1.6 / 2 = 1.8
 *   W 4:    E = 3.6 / 4 = 0.9               -> 1 + 3.6 / 4 = 1.9
 *   W 8:    E = 1 + 3.6 / 4 = 1.9           -> 1 + 7.6 / 8 = 1.95
 * The fit finds 0.4 with a sum of squares of 0. */
Test(rp_turn, fit_recovers_slice)
{
    const double w[] = {0.25, 0.5, 1, 2, 4, 8};
    const double ratio[] = {1, 1.2, 1.6, 1.8, 1.9, 1.95};
    double slice = -1, sse = -1;
    cr_assert_eq(rp_turn_fit(w, ratio, 6, 4, &slice, &sse), 0);
    near("slice", slice, 0.4, 0.002);
    near("sse", sse, 0, 1e-12);

    /* every ratio 2: slice 0, exactly */
    const double two[] = {2, 2, 2, 2, 2, 2};
    cr_assert_eq(rp_turn_fit(w, two, 6, 4, &slice, &sse), 0);
    cr_expect_eq(slice, 0.0);
    near("sse at 2", sse, 0, 1e-12);

    /* every ratio 1: the larger the slice the better, up to the tick: at 4,
     * W <= 4 give 1 and W 8 gives 2 - 4 / 8 = 1.5, sum of squares 0.25 */
    const double one[] = {1, 1, 1, 1, 1, 1};
    cr_assert_eq(rp_turn_fit(w, one, 6, 4, &slice, &sse), 0);
    near("slice at 1", slice, 4, 1e-12);
    near("sse at 1", sse, 0.25, 1e-12);
}

/* Bad input: nothing set, -1. */
Test(rp_turn, fit_refuses_bad_input)
{
    const double w[] = {0.5, 1}, ratio[] = {1.2, 1.6}, bad_w[] = {0, 1}, bad_r[] = {1.2, NAN};
    double slice = 7, sse = 7;
    cr_expect_eq(rp_turn_fit(w, ratio, 0, 4, &slice, &sse), -1);
    cr_expect_eq(rp_turn_fit(w, ratio, 2, 0, &slice, &sse), -1);
    cr_expect_eq(rp_turn_fit(w, ratio, 2, -4, &slice, &sse), -1);
    cr_expect_eq(rp_turn_fit(w, ratio, 2, NAN, &slice, &sse), -1);
    cr_expect_eq(rp_turn_fit(bad_w, ratio, 2, 4, &slice, &sse), -1);
    cr_expect_eq(rp_turn_fit(w, bad_r, 2, 4, &slice, &sse), -1);
    cr_expect_eq(slice, 7.0);
    cr_expect_eq(sse, 7.0);
}

/* The through share is 2 - ratio (the model: 1 x through, 2 x otherwise),
 * held to [0, 1]: 1.2 -> 0.8, 1.95 -> 0.05, 1 -> 1, below 1 (an op faster
 * than alone, noise) -> 1, over 2 -> 0. */
Test(rp_turn, through_by_hand)
{
    near("1.2", rp_turn_through(1.2), 0.8, 1e-12);
    near("1.95", rp_turn_through(1.95), 0.05, 1e-12);
    near("1", rp_turn_through(1), 1, 0);
    near("0.97", rp_turn_through(0.97), 1, 0);
    near("2.1", rp_turn_through(2.1), 0, 0);
    cr_expect(isnan(rp_turn_through(NAN)));
    cr_expect(isnan(rp_turn_through(INFINITY)));
}

/* The turns line as turncal writes it, with and without the through part;
 * anything else is refused and leaves *t alone. */
Test(rp_turn, parse_the_turns_line)
{
    rp_turns t;
    cr_assert_eq(rp_turn_parse("turns: {tick_ms: 3.9768, slice_ms: 0, through: {work_ms: "
                               "[0.25, 0.5, 1, 2], share: [0.9901, 0.9946, 0.7936, 0]}}\n", &t), 0);
    near("tick", t.tick_ms, 3.9768, 0);
    near("slice", t.slice_ms, 0, 0);
    cr_expect_eq(t.nthrough, 4);
    near("work 2", t.work_ms[2], 1, 0);
    near("share 2", t.share[2], 0.7936, 0);
    near("share 3", t.share[3], 0, 0);
    cr_expect_eq(t.nprotect, 0);
    cr_assert_eq(rp_turn_parse("turns: {tick_ms: 4, slice_ms: 0.617}", &t), 0);
    near("tick", t.tick_ms, 4, 0);
    near("slice", t.slice_ms, 0.617, 0);
    cr_expect_eq(t.nthrough, 0);
    cr_assert_eq(rp_turn_parse("turns: {tick_ms: 3.98, slice_ms: 0, through: {work_ms: [0.25, 8], "
                               "share: [0.98, 0]}, protect: {ms: 1.3929, work_ms: [0.25, 0.5, 4], "
                               "share: [0.226, 0.4167, 1]}}\n", &t), 0);
    cr_expect_eq(t.nthrough, 2);
    cr_expect_eq(t.nprotect, 3);
    near("protect ms", t.protect_ms, 1.3929, 0);
    near("protect work 1", t.pwork_ms[1], 0.5, 0);
    near("protect share 2", t.pshare[2], 1, 0);
    cr_assert_eq(rp_turn_parse("turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, work_ms: [1], "
                               "share: [0.5]}}", &t), 0);
    cr_expect_eq(t.nthrough, 0);
    cr_expect_eq(t.nprotect, 1);
    static const char *const bad[] = {
        "turns: {tick_ms: 0, slice_ms: 0}",
        "turns: {tick_ms: 4, slice_ms: -1}",
        "turns: {tick_ms: 4, slice_ms: 0",
        "turns: {tick_ms: 4, slice_ms: 0} x",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [1, 2], share: [1]}}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [2, 1], share: [1, 0]}}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [0, 1], share: [1, 0]}}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [1, 2], share: [1, 1.5]}}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [1, 2], share: [1, 0]}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [], share: []}}",
        "turns: {tick_ms: 4, slice_ms: 0, through: {work_ms: [1, 2], share: [1; 0]}}",
        "# turns: {tick_ms: 4, slice_ms: 0}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: -1, work_ms: [1], share: [0.5]}}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, work_ms: [1, 2], share: [0.5]}}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, work_ms: [1], share: [1.5]}}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, work_ms: [2, 1], share: [1, 1]}}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, share: [1]}}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: 1.4, work_ms: [1], share: [1]}",
        "turns: {tick_ms: 4, slice_ms: 0, protect: {ms: x, work_ms: [1], share: [1]}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t.tick_ms = -7;
        cr_expect_eq(rp_turn_parse(bad[i], &t), -1, "%s", bad[i]);
        cr_expect_eq(t.tick_ms, -7.0, "%s: left alone", bad[i]);
    }
}

/* A short real run: each part measured something, loosely sane; the fit
 * is no worse than slice 0 (which is on its grid); the through shares are
 * 2 - ratio where the ratio is in [1, 2]. */
Test(rp_turn, run_short, .timeout = 60)
{
    rp_turn_result r;
    char err[512] = "";
    cr_assert_eq(rp_turn_run(1.5, &r, err, sizeof err), 0, "%s", err);
    cr_expect(r.tick_ms > 0.5 && r.tick_ms < 20, "tick_ms %g", r.tick_ms);
    cr_expect(r.tick_runs > 0);
    for (int k = 0; k < RP_TURN_NW; k++) {
        cr_expect_eq(r.w_ms[k], rp_turn_w_ms[k]);
        cr_expect(r.n[k] > 0, "W %g: n %ld", r.w_ms[k], r.n[k]);
        cr_expect(r.ratio[k] >= 0.95, "W %g: ratio %g", r.w_ms[k], r.ratio[k]);
    }
    cr_expect(r.slice_ms >= 0 && r.slice_ms <= r.tick_ms, "slice %g, tick %g", r.slice_ms,
              r.tick_ms);
    cr_expect(r.sse <= r.sse0, "sse %g at the fit, %g at slice 0", r.sse, r.sse0);
    for (int k = 0; k < RP_TURN_NW; k++) {
        cr_expect(r.through[k] >= 0 && r.through[k] <= 1, "W %g: through %g", r.w_ms[k],
                  r.through[k]);
        if (r.ratio[k] >= 1 && r.ratio[k] <= 2)
            near("through", r.through[k], 2 - r.ratio[k], 1e-12);
    }
    cr_expect(r.sse_through <= r.sse0 + 1e-12, "through %g, slice 0 %g", r.sse_through, r.sse0);
    for (int k = 0; k < RP_TURN_NP; k++) {   /* the protect part: counts and shares agree */
        cr_expect_eq(r.p_w_ms[k], rp_turn_p_ms[k]);
        cr_expect(r.p_n[k] > 0 && r.p_held[k] <= r.p_n[k], "W %g: %ld of %ld held", r.p_w_ms[k],
                  r.p_held[k], r.p_n[k]);
        near("held share", r.p_share[k], (double)r.p_held[k] / (double)r.p_n[k], 1e-12);
    }
    long held = 0;
    for (int k = 0; k < RP_TURN_NP; k++)
        held += r.p_held[k];
    if (held > 0)                      /* a held wakee waited past RP_TURN_HELD_MS from an age >= 0 */
        cr_expect(r.protect_ms > RP_TURN_HELD_MS && r.protect_q1 <= r.protect_ms
                  && r.protect_ms <= r.protect_q3, "protect %g (%g..%g)", r.protect_ms, r.protect_q1,
                  r.protect_q3);
    cr_expect_eq(rp_turn_run(0, &r, err, sizeof err), -1);
}
