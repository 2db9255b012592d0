/* test_autoscale.c — the autoscaler: scale-up after exactly the window plus
 * the cold start, a warm pool removing the delay, billing of a scripted
 * scale-up and scale-down in GPU-seconds, SLA-violation windows, and the
 * same output for any thread count.
 *
 * The scripts are built so that every time is known by hand: one GPU stage
 * with a constant 1 ms batch of one frame, sessions at 100 FPS with aligned
 * phases (each frame at its session's start + k x 10 ms) and a constant
 * length, so a GPU's utilization over any 1 s tick is exactly
 * sessions x 100 x 1 ms / 1 s. Expected times and GPU-seconds are written
 * out as the arithmetic they come from. */
#include "tests/kit.h"
#include "models/autoscale.h"
#include "models/report.h"
#include "models/scenario.h"

#define MS 1000.0

/* Sessions jump to n1 at t1 and to n2 at t2 (steps with ramp 0), from 0;
 * each lasts `len_s` (constant); 100 FPS, aligned; one GPU stage of 1 ms. */
static void script(scenario_cfg *c, double duration_s, double t1, double n1, double t2, double n2,
                   double len_s)
{
    kit_base(c, "autoscale", 7, 1, 4, 0.0, duration_s, 1);
    periodic(c, 1, 100.0);
    c->workload.streams = 0;                 /* the steps start from 0 sessions */
    on_gpu(c, 0, "encode", 1, 0.0, 1.0);
    profile_cfg *p = &c->profile;
    p->kind = PROFILE_STEPS;
    p->steps[0] = (profile_step){ t1, n1, 0 };
    p->steps[1] = (profile_step){ t2, n2, 0 };
    p->nsteps = 2;
    cr_assert_null(dist_init_constant(&p->session, len_s * MS));
    autoscale_cfg *a = &c->autoscale;
    a->on = true;
    a->min_gpus = 1;
    a->max_gpus = 4;
    a->initial_gpus = 1;
    a->up_util = 0.8;
    a->up_for_s = 300;
    a->down_util = 0.1;
    a->down_for_s = 600;
    a->step = 1;
    a->cooldown_s = 0;
    a->sla_window_s = 60;
    cr_assert_null(dist_init_constant(&a->cold_start, 200 * MS));
}

static const fleet_event *find(const fleet_stats *f, int kind, int nth)
{
    for (int k = 0; k < f->nevents; k++)
        if (f->events[k].kind == kind && nth-- == 0)
            return &f->events[k];
    return NULL;
}

/* 4 sessions from t = 1 s (utilization 4 x 100 x 1 ms = 0.4), 9 from
 * t = 100 s (0.9 > 0.8). The tick at 101 s sees the first interval above,
 * (100, 101], so the window starts at 100 s and is complete at 100 + 300. */
Test(autoscale, step_scales_up_after_window_plus_cold_start)
{
    scenario_cfg c;
    script(&c, 700, 1, 4, 100, 9, 1e6);
    rep_stats rs;
    rep1(&c, &rs);
    const double step_at = 100, for_s = 300, cold_s = 200;
    const fleet_event *up = find(&rs.fleet, FLEET_UP_COLD, 0);
    const fleet_event *ready = find(&rs.fleet, FLEET_READY, 0);
    cr_assert_not_null(up, "no scale-up");
    cr_assert_not_null(ready, "the new GPU never started");
    near("scale-up decision (s)", up->t_s, step_at + for_s, EXACT);
    near("GPU serving (s)", ready->t_s, step_at + for_s + cold_s, EXACT);
    cr_expect_eq(up->serving, 1, "a starting GPU must not serve");
    cr_expect_eq(up->billed, 2, "a starting GPU is billed");
    cr_expect_eq(ready->serving, 2);
    /* after 600 s the mean over 2 GPUs is 0.45: no second scale-up */
    cr_expect_null(find(&rs.fleet, FLEET_UP_COLD, 1), "a second scale-up");
    /* billing: 1 GPU over [0, 700] and the new one from its request at 400 s */
    near("billed GPU-s", rs.fleet.billed_gpu_ms / MS, 1 * 700 + 1 * (700 - 400), EXACT);
    near("serving GPU-s", rs.fleet.serving_gpu_ms / MS, 1 * 700 + 1 * (700 - 600), EXACT);
    count("cold starts", rs.fleet.cold_starts, 1);
    count("warm joins", rs.fleet.warm_joins, 0);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* The same step with a warm pool of 1: the GPU joins at the decision, the
 * pool refills with a cold start of 200 s. */
Test(autoscale, warm_pool_removes_the_delay)
{
    scenario_cfg c;
    script(&c, 700, 1, 4, 100, 9, 1e6);
    c.autoscale.warm_pool = 1;
    rep_stats rs;
    rep1(&c, &rs);
    const fleet_event *up = find(&rs.fleet, FLEET_UP_WARM, 0);
    const fleet_event *refill = find(&rs.fleet, FLEET_REFILLED, 0);
    cr_assert_not_null(up, "no scale-up from the pool");
    near("warm GPU joins (s)", up->t_s, 100 + 300, EXACT);
    cr_expect_eq(up->serving, 2, "a warm GPU serves at once");
    cr_assert_not_null(refill);
    near("pool refilled (s)", refill->t_s, 400 + 200, EXACT);
    cr_expect_null(find(&rs.fleet, FLEET_UP_COLD, 0));
    /* billing: serving 1 + warm 1 over [0, 400]; then serving 2 + refilling
     * (then refilled) 1 over [400, 700] */
    near("billed GPU-s", rs.fleet.billed_gpu_ms / MS, 2 * 400 + 3 * 300, EXACT);
    near("serving GPU-s", rs.fleet.serving_gpu_ms / MS, 1 * 400 + 2 * 300, EXACT);
    near("warm-pool GPU-s", rs.fleet.warm_gpu_ms / MS, 1 * 400 + 0 * 200 + 1 * 100, EXACT);
    count("warm joins", rs.fleet.warm_joins, 1);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* A scripted scale-down: 3 GPUs serve 4 sessions from t = 1 s (2, 1, 1:
 * mean utilization 0.4 / 3 = 0.133 < 0.15). The first tick (1 s) sees the
 * empty interval (0, 1], so the window starts at 0 and is complete at 600 s;
 * the GPU with the fewest sessions (ties: the highest, GPU 2) goes, its
 * session moves, and 2 GPUs at 0.2 stay above the threshold. */
Test(autoscale, billing_of_a_scale_down)
{
    scenario_cfg c;
    script(&c, 1000, 1, 4, 5000, 4, 1e6);
    c.autoscale.initial_gpus = 3;
    c.autoscale.down_util = 0.15;
    rep_stats rs;
    rep1(&c, &rs);
    const fleet_event *down = find(&rs.fleet, FLEET_DOWN, 0);
    cr_assert_not_null(down, "no scale-down");
    const double down_at = 0 + 600;
    near("scale-down (s)", down->t_s, down_at, EXACT);
    cr_expect_eq(down->gpu, 2);
    cr_expect_eq(down->serving, 2);
    cr_expect_null(find(&rs.fleet, FLEET_DOWN, 1), "2 GPUs at 0.2 stay above 0.15");
    near("billed GPU-s", rs.fleet.billed_gpu_ms / MS, 3 * down_at + 2 * (1000 - down_at), EXACT);
    /* the moved session still gets its frames served: 4 x 100 FPS throughout */
    near("GPU-busy s (4 sessions x 100 FPS x 1 ms)", rs.fleet.busy_gpu_ms / MS,
         4 * 100 * 0.001 * (1000 - 1), 1e-3);
    count("sessions started", rs.fleet.sessions, 4);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* With a cooldown longer than the run after the first decision, one
 * scale-up only; with step 2, two GPUs at once. */
Test(autoscale, step_and_cooldown)
{
    scenario_cfg c;
    script(&c, 1200, 1, 4, 100, 9, 1e6);
    c.autoscale.step = 2;
    c.autoscale.cooldown_s = 5000;
    rep_stats rs;
    rep1(&c, &rs);
    cr_assert_not_null(find(&rs.fleet, FLEET_UP_COLD, 1), "step 2 adds two GPUs");
    near("second GPU decided with the first", find(&rs.fleet, FLEET_UP_COLD, 1)->t_s, 400, EXACT);
    cr_expect_null(find(&rs.fleet, FLEET_UP_COLD, 2), "the cooldown holds further decisions");
    count("ups", rs.fleet.ups, 2);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

/* SLA windows: 20 sessions on one GPU of 1 ms per frame at 100 FPS is an
 * offered load of 2: frames queue (up to a 2 s waiting room) and every
 * window after the first few fails frame p95 <= 50 ms. Below capacity (4
 * sessions, aligned: the worst frame waits 3 ms) no window fails. The
 * overloaded case bounds the queue, so that it is not stopped as unstable. */
Test(autoscale, sla_violation_windows)
{
    scenario_cfg c;
    script(&c, 600, 0.5, 4, 5000, 4, 1e6);
    c.autoscale.max_gpus = 1;
    c.cluster.gpus = 1;
    c.nsla = 1;
    snprintf(c.sla[0].metric, sizeof c.sla[0].metric, "frame");
    c.sla[0].percentile = 95;
    c.sla[0].ms = 50;
    rep_stats rs;
    rep1(&c, &rs);
    count("windows (600 s / 60 s)", rs.fleet.windows, 10);
    count("violations below capacity", rs.fleet.viol_windows, 0);
    pipe_stats_free(&rs);
    cfg_free(&c);

    script(&c, 600, 0.5, 20, 5000, 20, 1e6);
    c.autoscale.max_gpus = 1;
    c.cluster.gpus = 1;
    /* a bounded waiting room (2 s of work): an unbounded queue at load 2 is
     * stopped early as unstable (stability.c); here frames wait ~2 s or are
     * dropped, and a drop counts as a miss */
    c.stages[0].capacity = 2000;
    c.nsla = 1;
    snprintf(c.sla[0].metric, sizeof c.sla[0].metric, "frame");
    c.sla[0].percentile = 95;
    c.sla[0].ms = 50;
    rep1(&c, &rs);
    count("windows", rs.fleet.windows, 10);
    /* the backlog grows by 1 s of work per s up to the 2 s room: past the
     * first window every frame waits > 50 ms or is dropped */
    cr_expect_geq(rs.fleet.viol_windows, 9, "overloaded: got %llu violated windows",
                  (unsigned long long)rs.fleet.viol_windows);
    fleet_digest d;
    asc_digest(&c, &rs.fleet, rs.window_ms, &d);
    near("violation-minutes per day", d.viol_min_per_day,
         (double)rs.fleet.viol_windows / 10.0 * 1440.0, EXACT);
    pipe_stats_free(&rs);
    cfg_free(&c);
}

static char *json_of(const run_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    report_json(f, r, 0.0);
    fclose(f);
    return buf;
}

/* The shipped scenario, shortened: byte-identical JSON for 1 and 3 threads. */
Test(autoscale, same_output_for_any_thread_count)
{
    scenario_cfg c;
    char err[512];
    scn_override ov[] = { { "duration_s", "1800" }, { "replications", "3" } };
    cr_assert_eq(scn_load_ex("scenarios/diurnal-autoscale.yaml", ov, 2, &c, err, sizeof err), 0,
                 "%s", err);
    run_result a, b;
    run(&c, 1, &a);
    run(&c, 3, &b);
    char *ja = json_of(&a), *jb = json_of(&b);
    cr_expect_str_eq(ja, jb);
    cr_expect(strstr(ja, "\"fleet\"") != NULL);
    free(ja);
    free(jb);
    run_result_free(&a);
    run_result_free(&b);
    cfg_free(&c);
}

/* ---- vlsim warmpool as a user runs it ------------------------------------------ */

#include <stdarg.h>
#include <sys/wait.h>
#include "tests/kit_files.h"

static char wdir[64];

static void wp_setup(void)
{
    snprintf(wdir, sizeof wdir, "/tmp/vlsim-wp-XXXXXX");
    cr_assert_not_null(mkdtemp(wdir));
}

static void wp_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", wdir);
    cr_expect_eq(system(cmd), 0);
}

Test(autoscale, warmpool_bad_input, .init = wp_setup, .fini = wp_teardown)
{
    cr_expect_eq(kit_sh("./vlsim warmpool scenarios/default.yaml -q 2>/dev/null"), 2,
                 "a scenario without autoscale is bad input");
    cr_expect_eq(kit_sh("./vlsim warmpool scenarios/flash-crowd-autoscale.yaml --pools 1,x -q "
                    "2>/dev/null"), 2);
    cr_expect_eq(kit_sh("./vlsim warmpool scenarios/flash-crowd-autoscale.yaml --pools 1,1 -q "
                    "2>/dev/null"), 2, "duplicate pool sizes");
    cr_expect_eq(kit_sh("./vlsim warmpool scenarios/flash-crowd-autoscale.yaml --axis "
                    "autoscale.up.util_abov=0.7 -q 2>/dev/null"), 2, "an unknown axis key");
    cr_expect_eq(kit_sh("./vlsim warmpool 2>/dev/null"), 2);
}

/* A short sweep writes its files whole; again without --force it refuses and
 * leaves them as they were; the JSON is the same for 1 and 2 threads; with
 * a target nothing can miss, the smallest pool is recommended at 0 % overhead. */
Test(autoscale, warmpool_outputs, .init = wp_setup, .fini = wp_teardown)
{
    const char *args = "scenarios/flash-crowd-autoscale.yaml --pools 2,0 --duration 60 "
                       "--replications 2 -q";
    cr_assert_eq(kit_sh("./vlsim warmpool %s --threads 1 --json %s/a.json --out %s/out "
                    "--target-violation-min-per-day 1e9", args, wdir, wdir), 0);
    cr_expect_eq(kit_sh("test -s %s/out/warmpool.csv && test -s %s/out/warmpool.png && "
                    "test -s %s/out/warmpool.svg && test -s %s/out/warmpool.gp", wdir, wdir, wdir,
                    wdir), 0);
    cr_expect_eq(kit_sh("./vlsim warmpool %s --json %s/a.json 2>/dev/null", args, wdir), 2,
                 "an existing output without --force");
    cr_expect_eq(kit_sh("./vlsim warmpool %s --out %s/out 2>/dev/null", args, wdir), 2);
    cr_assert_eq(kit_sh("./vlsim warmpool %s --threads 2 --json %s/b.json "
                    "--target-violation-min-per-day 1e9", args, wdir), 0);
    cr_expect_eq(kit_sh("cmp -s %s/a.json %s/b.json", wdir, wdir), 0, "threads changed the output");
    char path[128];
    snprintf(path, sizeof path, "%s/a.json", wdir);
    char *j = kit_slurp(path);
    cr_assert_not_null(j);
    const char *rec = strstr(j, "\"recommended\"");
    cr_assert_not_null(rec, "%s", j);
    cr_expect(strstr(rec, "\"warm_pool\": 0\n") != NULL, "recommended: %s", rec);
    cr_expect(strstr(rec, "\"warm_pool\": 2") == NULL, "recommended: %s", rec);
    cr_expect_eq(kit_sh("grep -q '^0,,.*,0,' %s/out/warmpool.csv", wdir), 0,
                 "pool 0 is the base: 0 %% overhead");
    free(j);
}
