/* kit.h — helpers shared by the model tests (test_gpu.c, test_control.c):
 * building scenarios in C and comparing numbers with a readable message.
 * Header-only and static inline, so a test file pays only for what it uses.
 * A file may define KIT_VERBOSE_ENV before including this to name the
 * environment variable that prints every comparison (want, got). */
#ifndef VL_TEST_KIT_H
#define VL_TEST_KIT_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/config.h"
#include "models/dist.h"
#include "models/pipeline.h"
#include "models/run.h"
#include "sim/hist.h"

#ifndef KIT_VERBOSE_ENV
#define KIT_VERBOSE_ENV "VL_TEST_VERBOSE"
#endif

#define EXACT 1e-9      /* relative: sums / time averages of exact times */

/* ---- building scenarios ------------------------------------------------- */

/* nstages worker stages "stage0".. with a constant 1 ms service, a cluster
 * of gpus GPUs (0: none), the given seed, warm-up, duration, replications. */
static inline void kit_base(scenario_cfg *c, const char *name, uint64_t seed, int nstages,
                            int gpus, double warmup_s, double duration_s, int replications)
{
    cfg_defaults(c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->seed = seed;
    c->warmup_s = warmup_s;
    c->duration_s = duration_s;
    c->replications = replications;
    c->stages = calloc((size_t)nstages, sizeof *c->stages);
    cr_assert_not_null(c->stages);
    c->nstages = nstages;
    for (int s = 0; s < nstages; s++) {
        char sname[32];
        snprintf(sname, sizeof sname, "stage%d", s);
        cfg_stage_defaults(&c->stages[s], sname);
        cr_assert_null(dist_init_constant(&c->stages[s].service, 1.0));
    }
    c->cluster.gpus = gpus;
}

/* n aligned streams at fps, no jitter: all emit at t = 0, P, 2P, ... */
static inline void periodic(scenario_cfg *c, int streams, double fps)
{
    c->workload.arrival = ARRIVAL_PERIODIC;
    c->workload.streams = streams;
    c->workload.fps = fps;
    c->workload.jitter_ms = 0;
    c->workload.phase = PHASE_ALIGNED;
}

/* Periodic streams at the given phases (ms), one set for every replication. */
static inline void given_phases(scenario_cfg *c, int n, const double *ms)
{
    c->workload.phase = PHASE_GIVEN;
    c->workload.nphase_sets = 1;
    c->workload.phase_ms = malloc((size_t)n * sizeof(double));
    cr_assert_not_null(c->workload.phase_ms);
    memcpy(c->workload.phase_ms, ms, (size_t)n * sizeof(double));
}

static inline void poisson(scenario_cfg *c, double rate_hz)
{
    c->workload.arrival = ARRIVAL_POISSON;
    c->workload.rate_hz = rate_hz;
}

/* Stage s on the GPUs, named `name` (which sets its default priority), with
 * a constant batch time of ms (no table) until the caller sets one. */
static inline stage_cfg *on_gpu(scenario_cfg *c, int s, const char *name, int max_batch,
                                double batch_timeout_ms, double ms)
{
    stage_cfg *st = &c->stages[s];
    dist_free(&st->service);
    cfg_stage_defaults(st, name);
    st->on = RES_GPU;
    st->max_batch = max_batch;
    st->batch_timeout_ms = batch_timeout_ms;
    cr_assert_null(dist_init_constant(&st->service, ms));
    return st;
}

static inline stage_cfg *on_workers(scenario_cfg *c, int s, const char *name, int servers,
                                    double ms)
{
    stage_cfg *st = &c->stages[s];
    dist_free(&st->service);
    cfg_stage_defaults(st, name);
    st->servers = servers;
    cr_assert_null(dist_init_constant(&st->service, ms));
    return st;
}

/* Frames of three streams at 0, 1 and 2 ms (1 FPS) into 3 decode workers of
 * 5 ms on 2 cores, woken wake_ms 0.1 late, with the held shares held[0..n). */
static inline void held_trio(scenario_cfg *c, const char *name, uint64_t seed, int n,
                             const double *held)
{
    kit_base(c, name, seed, 1, 0, 0.0, 10.0, 1);
    periodic(c, 3, 1.0);
    given_phases(c, 3, (const double[]){0.0, 1.0, 2.0});
    on_workers(c, 0, "decode", 3, 5.0);
    c->cpu.cores = 2;
    c->cpu.stage_mask = 1;
    c->cpu.wake_ms = 0.1;
    c->cpu.nwake_held = n;
    memcpy(c->cpu.wake_held, held, (size_t)n * sizeof *held);
}

/* A two-point batch table {b1: ms1, b2: ms2}. */
static inline void table2(stage_cfg *st, double b1, double ms1, double b2, double ms2)
{
    st->has_table = true;
    st->table.n = 2;
    st->table.batch[0] = b1;
    st->table.ms[0] = ms1;
    st->table.batch[1] = b2;
    st->table.ms[1] = ms2;
}

/* One replication (rep 0) with the scenario's warm-up, into rs (caller frees). */
static inline void rep1(const scenario_cfg *c, rep_stats *rs)
{
    cr_assert_eq(pipe_stats_init(rs, c), 0);
    char err[256] = "";
    int rc = pipe_run(c, 0, c->warmup_s * 1000.0, NULL, rs, err, sizeof err);
    cr_assert_eq(rc, 0, "pipe_run: %s", err);
}

static inline void run(const scenario_cfg *c, int threads, run_result *r)
{
    run_opts o = { threads, NULL, NULL, NULL };
    char err[256] = "";
    int rc = run_scenario(c, &o, r, err, sizeof err);
    cr_assert_eq(rc, 0, "run_scenario: %s", err);
}

/* ---- comparisons -------------------------------------------------------- */

static inline int verbose(void)
{
    const char *v = getenv(KIT_VERBOSE_ENV);
    return v && *v && strcmp(v, "0") != 0;
}

static inline void near(const char *what, double got, double want, double rel)
{
    if (verbose())
        printf("  %-52s want %-14.10g got %.10g\n", what, want, got);
    double tol = rel * (fabs(want) > 1e-300 ? fabs(want) : 1.0);
    cr_expect(fabs(got - want) <= tol, "%s: got %.17g, want %.17g (rel tol %g)",
              what, got, want, rel);
}

static inline void count(const char *what, uint64_t got, uint64_t want)
{
    if (verbose())
        printf("  %-52s want %-14llu got %llu\n", what, (unsigned long long)want,
               (unsigned long long)got);
    cr_expect_eq(got, want, "%s: got %llu, want %llu", what, (unsigned long long)got,
                 (unsigned long long)want);
}

/* A histogram holding n values with this sum, min and max. */
static inline void hist_is(const char *what, const hist_t *h, uint64_t n, double sum,
                           double min, double max)
{
    char b[256];
    snprintf(b, sizeof b, "%s n", what);
    count(b, h->n, n);
    if (n == 0)
        return;
    snprintf(b, sizeof b, "%s mean", what);
    near(b, hist_mean(h), sum / (double)n, EXACT);
    snprintf(b, sizeof b, "%s min", what);
    near(b, h->min, min, EXACT);
    snprintf(b, sizeof b, "%s max", what);
    near(b, h->max, max, EXACT);
}

#endif
