/* bench_mm1.c — `make bench`: how fast is the engine?
 *
 * 1. M/M/1 at rho = 0.9 for 1 000 000 customers, statistics on (wait,
 *    service, sojourn and end-to-end histograms, time-weighted queue length
 *    and utilization, Prometheus buckets): events/s and customers/s on one
 *    core, best of 3, against the reference points in the issue.
 * 2. scenarios/default.yaml (16 periodic streams through 6 stages with
 *    mixture service times and bounded queues): one replication of 10
 *    simulated minutes, events/s and frames/s.
 * 3. The event list alone: the classic "hold" model with N pending events.
 * 4. hist_record alone.
 * 5. The default sweep: scenarios/sweep-example.yaml over 8 stream counts x
 *    5 GPU counts x 5 frame rates = 200 points x 3 replications, on all
 *    cores: points/s and the total time (target on 2 cores: under 60 s).
 * 6. Threads on cores (cpu): 4 servers sharing 2 cores at rho 0.75, 600 000
 *    customers, the cores pooled against jobs placed on cores (cpu.stack):
 *    what placement costs per event.
 * Figures are printed, never asserted: machines are shared and noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include "models/config.h"
#include "models/pipeline.h"
#include "models/scenario.h"
#include "models/sweep.h"
#include "sim/rep.h"
#include "sim/ev.h"
#include "sim/hist.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Run one replication of cfg three times (replications 0, 1, 2); rs holds
 * the fastest run's statistics, and its wall time is returned. */
static double best_of_3(const scenario_cfg *cfg, rep_stats *rs)
{
    if (pipe_stats_init(rs, cfg) != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    rep_stats tmp;
    if (pipe_stats_init(&tmp, cfg) != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    char err[256];
    double best = 1e30;
    for (int k = 0; k < 3; k++) {
        rep_stats *into = k == 0 ? rs : &tmp;
        double t0 = now_s();
        if (pipe_run(cfg, (uint32_t)k, 0.0, NULL, into, err, sizeof err) != 0) {
            fprintf(stderr, "bench: %s\n", err);
            exit(1);
        }
        double dt = now_s() - t0;
        if (dt < best) {
            best = dt;
            if (into != rs) {            /* keep the fastest run's statistics in rs */
                rep_stats swap = *rs;
                *rs = tmp;
                tmp = swap;
            }
        }
    }
    pipe_stats_free(&tmp);
    return best;
}

static void bench_mm1(void)
{
    scenario_cfg cfg;
    cfg_defaults(&cfg);
    snprintf(cfg.name, sizeof cfg.name, "bench-mm1");
    cfg.workload.arrival = ARRIVAL_POISSON;
    cfg.workload.rate_hz = 900.0;             /* lambda = 0.9 per ms */
    cfg.nstages = 1;
    cfg.stages = calloc(1, sizeof *cfg.stages);
    snprintf(cfg.stages[0].name, CFG_NAME_MAX, "server");
    cfg.stages[0].servers = 1;
    cfg.stages[0].capacity = -1;
    dist_init_exponential(&cfg.stages[0].service, 1.0);   /* mu = 1 per ms */
    cfg.duration_s = 1e6 / 900.0;             /* 1 000 000 customers expected */
    cfg.warmup_s = 0;

    rep_stats rs;
    double best = best_of_3(&cfg, &rs);
    uint64_t events = rs.events, customers = rs.completed;
    double evs = (double)events / best, cps = (double)customers / best;
    printf("M/M/1 rho=0.9, %llu customers, %llu events, statistics on, 1 core (best of 3)\n",
           (unsigned long long)customers, (unsigned long long)events);
    printf("  wall %.3f s  |  %.3g events/s  |  %.3g customers/s  |  %.1f ns/event\n",
           best, evs, cps, 1e9 / evs);
    printf("  vs SimPy (1.3e5 customers/s): %.0fx   vs Cimba (3.5e7 events/s): %.2fx   "
           "target 3e7 events/s: %s\n", cps / 1.3e5, evs / 3.5e7, evs >= 3e7 ? "met" : "NOT met");
    printf("  mean sojourn %.3f ms (closed form 1/(mu-lambda) = 10 ms)\n", hist_mean(&rs.e2e));
    pipe_stats_free(&rs);
    cfg_free(&cfg);
}

static void bench_default(void)
{
    scenario_cfg cfg;
    char err[1024];
    if (scn_load("scenarios/default.yaml", &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    cfg.duration_s = 600;
    cfg.warmup_s = 0;
    rep_stats rs;
    double best = best_of_3(&cfg, &rs);
    uint64_t events = rs.events, frames = rs.arrivals;
    printf("scenarios/default.yaml, 600 simulated s, %d stages, 1 core (best of 3)\n", cfg.nstages);
    printf("  wall %.3f s  |  %.3g events/s  |  %.3g frames/s  |  %.0fx faster than real time\n",
           best, (double)events / best, (double)frames / best, 600.0 / best);
    pipe_stats_free(&rs);
    cfg_free(&cfg);
}

/* 4 exponential servers of mean 1 ms on 2 cores, Poisson 1.5 per ms;
 * stack 1: jobs placed on cores, 2: and taking turns. */
static double bench_cores_one(int stack, uint64_t *events)
{
    scenario_cfg cfg;
    cfg_defaults(&cfg);
    snprintf(cfg.name, sizeof cfg.name, "cores");
    cfg.seed = 1;
    cfg.duration_s = 400;
    cfg.warmup_s = 0;
    cfg.replications = 1;
    cfg.stages = calloc(1, sizeof *cfg.stages);
    if (!cfg.stages) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    cfg.nstages = 1;
    cfg_stage_defaults(&cfg.stages[0], "decode");
    cfg.stages[0].servers = 4;
    if (dist_init_exponential(&cfg.stages[0].service, 1.0)) {
        fprintf(stderr, "bench: cannot set the service time\n");
        exit(1);
    }
    cfg.workload.arrival = ARRIVAL_POISSON;
    cfg.workload.rate_hz = 1500;
    cfg.cpu.cores = 2;
    cfg.cpu.stage_mask = 1;
    cfg.cpu.has_stack = stack > 0;
    cfg.cpu.stack_switch_ms = stack == 2 ? 3.0 : 0;
    cfg.cpu.stack_share = 0.09;
    cfg.cpu.stack_migrate_ms = 8.7;
    cfg.cpu.stack_pull_ms = 1.5;
    rep_stats rs;
    double best = best_of_3(&cfg, &rs);
    *events = rs.events;
    pipe_stats_free(&rs);
    cfg_free(&cfg);
    return best;
}

static void bench_cores(void)
{
    uint64_t ep, es, et;
    double pooled = bench_cores_one(0, &ep), stacked = bench_cores_one(1, &es);
    double turns = bench_cores_one(2, &et);
    printf("threads on cores: 4 servers on 2 cores, rho 0.75, 600 000 customers (best of 3)\n");
    printf("  pooled  %.3f s  |  %.3g events/s\n", pooled, (double)ep / pooled);
    printf("  placed  %.3f s  |  %.3g events/s  |  %.2fx the pooled time per event "
           "(cpu.stack: share 0.09, migrate_ms 8.7, pull_ms 1.5)\n", stacked, (double)es / stacked,
           (stacked / (double)es) / (pooled / (double)ep));
    printf("  turns   %.3f s  |  %.3g events/s  |  %.2fx the pooled time per event "
           "(and switch_ms 3)\n", turns, (double)et / turns, (turns / (double)et) / (pooled / (double)ep));
}

static void bench_hold(size_t n)
{
    ev_queue q;
    ev_init(&q, n);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t i = 0; i < n; i++)
        ev_push(&q, gsl_rng_uniform(r), 0, 0, i);
    const size_t ops = 5000000;
    double *inc = malloc(ops * sizeof *inc);
    for (size_t i = 0; i < ops; i++)
        inc[i] = gsl_ran_exponential(r, 1.0);
    double t0 = now_s();
    ev_t e;
    for (size_t i = 0; i < ops; i++) {
        ev_pop(&q, &e);
        ev_push(&q, e.t + inc[i], 0, 0, e.b);
    }
    double dt = now_s() - t0;
    printf("  hold model, %8zu pending: %.1f ns per pop+push  (%.3g events/s)\n",
           n, 1e9 * dt / (double)ops, (double)ops / dt);
    free(inc);
    gsl_rng_free(r);
    ev_free(&q);
}

static void bench_hist(void)
{
    hist_t h;
    hist_init(&h);
    const size_t n = 20000000;
    double *v = malloc(4096 * sizeof *v);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t i = 0; i < 4096; i++)
        v[i] = gsl_ran_lognormal(r, 2.0, 1.0);
    double t0 = now_s();
    for (size_t i = 0; i < n; i++)
        hist_record(&h, v[i & 4095]);
    double dt = now_s() - t0;
    printf("  hist_record: %.2f ns per value (p99 of lognormal(2,1) = %.3f ms)\n",
           1e9 * dt / (double)n, hist_quantile(&h, 0.99));
    free(v);
    gsl_rng_free(r);
    hist_free(&h);
}

static void bench_sweep(void)
{
    char dir[] = "/tmp/vlsim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench: mkdtemp");
        exit(1);
    }
    const char *axes[] = { "streams=4,8,12,16,24,32,40,48", "gpus=1,2,3,4,6", "fps=5,10,15,20,30" };
    sweep_opts o;
    memset(&o, 0, sizeof o);
    o.out_dir = dir;
    o.jobs = 0;
    o.replications = 3;
    o.axes = axes;
    o.naxes = 3;
    sweep_summary sum;
    o.summary = &sum;
    char err[2048];
    double t0 = now_s();
    if (sweep_run("scenarios/sweep-example.yaml", &o, err, sizeof err) != SWEEP_OK) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    double dt = now_s() - t0;
    printf("sweep: scenarios/sweep-example.yaml, %d points x 3 replications on %d cores\n",
           sum.npoints, rep_default_threads());
    printf("  wall %.1f s  |  %.1f points/s  |  target under 60 s on 2 cores: %s\n", dt,
           sum.npoints / dt, dt < 60 ? "met" : "NOT met");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", dir);
}

/* `bench mm1` runs only the first part (for profiling). */
int main(int argc, char **argv)
{
    bench_mm1();
    if (argc > 1 && strcmp(argv[1], "mm1") == 0)
        return 0;
    bench_default();
    bench_cores();
    bench_sweep();
    printf("event list alone:\n");
    bench_hold(16);
    bench_hold(1024);
    bench_hold(65536);
    bench_hist();
    return 0;
}
