/* compare.h — A/B comparison of two configurations by same-frame replay.
 *
 * Same-frame replay is common random numbers: both configurations run with
 * the same seed and the same replication numbers, so their arrivals, phases,
 * queries and every like-named stage's service and jitter draws come from
 * identical streams (sim/rng.h keys each stream by (seed, replication,
 * stream id); a stage's id is a hash of its name). Replication r of A and
 * replication r of B then see the same input, and the per-replication
 * difference B_r - A_r carries far less noise than the two runs apart: its
 * Student-t interval (the paired CI) is beside the unpaired Welch interval of
 * the two sets of replications, for each statistic (mean, p50, p90, p95, p99,
 * p99.9) of the frame latency, the response latency and each stage's sojourn
 * where both have the stage.
 *
 * Shadow traffic (--shadow): B receives a copy of A's traffic (its workload
 * is A's), both run, and the cost while shadowing is A's GPUs plus B's.
 *
 * This module never prints except through the writers, which write only to
 * the FILE they are given; it holds no global mutable state. */
#ifndef VL_COMPARE_H
#define VL_COMPARE_H

#include <stdbool.h>
#include <stdio.h>
#include "models/config.h"
#include "models/run.h"
#include "sim/stats.h"

#define CMP_NSTAT 6
/* "mean", "p50", "p90", "p95", "p99", "p99.9": the statistics compared, in order. */
extern const char *const cmp_stat_name[CMP_NSTAT];

typedef struct {
    double a, b;                 /* each run's estimate (the mean over replications) */
    stats_ci paired;             /* B_r - A_r over replications r, Student t */
    stats_ci unpaired;           /* mean(B) - mean(A), Welch's t */
} cmp_stat;

typedef struct {
    char name[CFG_NAME_MAX];     /* "frame_ms", "response_ms", or a stage's name */
    bool present;                /* response_ms: both answered something */
    cmp_stat st[CMP_NSTAT];
} cmp_metric;

typedef struct {
    int nrep;
    uint64_t seed;
    bool shadow;
    cmp_metric frame, response;
    cmp_metric *stage;           /* the stages both have, in A's order */
    int nstage;
    double cost_a, cost_b;       /* $ per stream-hour (NaN without streams or GPUs) */
    double cost_shadow;          /* with shadow: A's and B's GPUs for A's streams */
} cmp_result;

/* Which run settings cmp_align changed in b. */
enum { CMP_SEED = 1, CMP_REPS = 2, CMP_DURATION = 4, CMP_WARMUP = 8, CMP_WORKLOAD = 16 };

/* Make b run in the same frame as a: a's seed, replications, duration and
 * warm-up; with shadow also a's workload. Returns the CMP_* bits of what
 * differed (the caller may say so). */
int cmp_align(const scenario_cfg *a, scenario_cfg *b, bool shadow);

/* Align b to a, run a, fix b's warm-up to the one a used (so that an
 * automatic warm-up is the same for both), run b. On success both results
 * are the caller's to free. 0, or -1 with a message. */
int cmp_run(const scenario_cfg *a, scenario_cfg *b, bool shadow, const run_opts *opts,
            run_result *ra, run_result *rb, char *err, size_t errlen);

/* The comparison of two results with the same number of replications.
 * 0, or -1 with a message (different replication counts, out of memory). */
int cmp_compute(const run_result *a, const run_result *b, bool shadow, cmp_result *out,
                char *err, size_t errlen);
void cmp_free(cmp_result *c);

/* Unpaired CI width over paired CI width: how many times tighter pairing
 * is (INFINITY when the paired interval has zero width, NaN without CIs). */
double cmp_width_ratio(const cmp_stat *s);

/* A readable table; name_a and name_b label the two sides. */
void cmp_table(FILE *f, const cmp_result *c, const char *name_a, const char *name_b);
/* JSON: {"a", "b", "replications", "seed", "shadow",
 *        "paired": {"frame_ms": {"p50": {"diff", "ci95": [lo, hi], "a", "b"}, ...},
 *                   "response_ms": {...}},
 *        "unpaired": {likewise}, "width_ratio": {"frame_ms": {"p50": x}, ...},
 *        "stages": {"<name>": {"paired": {...}, "unpaired": {...}}},
 *        "cost_per_stream_hour": {"a", "b", "shadow"}}
 * A metric with no values (response_ms without answers) is null. */
void cmp_json(FILE *f, const cmp_result *c, const char *name_a, const char *name_b);

#endif
