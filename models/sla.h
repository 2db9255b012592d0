/* sla.h — an SLA proposal a product manager can read: what the scenario
 * promises at its cost, where the frame budget goes, and what each stricter
 * target would cost in GPUs.
 *
 * The baseline is the scenario run as written. For each target (a metric's
 * percentile within so many ms, met when the upper end of its 95 % CI is
 * within it, the SLA verdict's rule, and at most max_drop_rate of the frames
 * are dropped) the GPU count (cluster.gpus) is searched
 * upward from the scenario's: doubling the step (g0+1, g0+2, g0+4, ...)
 * until a count meets it or max_gpus is passed, then bisecting between the
 * last miss and the first hit. Like the capacity search (sweep.h) it assumes
 * more GPUs never hurt; every count is run at most once, whatever the number
 * of targets, so the search costs O(targets x log(max_gpus)) runs at most.
 * Every probe is the scenario loaded again with cluster.gpus overridden
 * (scenario.h: scn_load_ex), run with the same seed.
 *
 * This module never prints except through sla_markdown, which writes only
 * to the FILE it is given; it holds no global mutable state. */
#ifndef VL_SLA_H
#define VL_SLA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "models/config.h"
#include "models/frontier.h"
#include "models/run.h"
#include "models/scenario.h"

#define SLA_MAX_TARGETS 32

typedef struct {
    frontier_target target;      /* metric "frame", "response" or a stage; percentile; ms */
    int gpus;                    /* the fewest GPUs meeting it; 0: not met up to max_gpus */
    double value, hi;            /* the estimate and its CI upper end there (or at best_gpus) */
    double drop_rate;            /* frames dropped there (or at best_gpus) */
    double cost_per_stream_hour; /* there (NaN when not met) */
    int best_gpus;               /* not met: the count probed with the lowest upper end */
} sla_answer;

typedef struct {
    int threads;                 /* per run; <= 0: one per core */
    int max_gpus;                /* the largest count tried; <= 0: max(4 x gpus, gpus + 16) */
    double max_drop_rate;        /* a count meets no target while it drops more than this
                                    fraction of frames (an overloaded point's percentiles
                                    flatter it); < 0: no limit. Use sla_opts_default. */
    /* after each probe (not the baseline): its GPU count and the runs so far */
    void (*probe)(void *pctx, int gpus, int runs);
    void *pctx;
} sla_opts;

/* threads 0, max_gpus 0, max_drop_rate 0.01 (the page alert of seed 004 §1,
 * as `vlsim frontier`), no probe callback. */
void sla_opts_default(sla_opts *o);

typedef struct {
    scenario_cfg cfg;            /* the scenario as run (owned) */
    run_result base;             /* its run */
    sla_answer answer[SLA_MAX_TARGETS];
    int nanswer;
    int max_gpus;
    double max_drop_rate;        /* the limit used (< 0: none) */
    int runs;                    /* baseline included */
} sla_result;

/* The value of a metric's percentile in a run (50, 90, 95, 99 or 99.9;
 * "frame", "response" or a stage's sojourn); NULL when the metric is unknown
 * or the percentile not one of those. */
const stats_ci *sla_lookup(const run_result *r, const char *metric, double percentile);

/* The default targets: each SLA line of the scenario (frame p95 <= 100 and
 * frame p99 <= 200 ms without any), then each at 2/3 and at 1/2 of its ms
 * (rounded to a whole ms). Returns how many (at most max). */
int sla_default_targets(const scenario_cfg *c, frontier_target *t, int max);

/* Run the baseline and search the GPU count for each target (targets NULL:
 * the defaults). The scenario needs a cluster without pools and periodic
 * streams. Returns 0, -2 for bad input or -1 for a failed run, with a
 * message. */
int sla_search(const char *path, const scn_override *ov, size_t nov,
               const frontier_target *targets, int ntargets, const sla_opts *o,
               sla_result *res, char *err, size_t errlen);
void sla_free(sla_result *res);

/* The proposal in Markdown. */
void sla_markdown(FILE *f, const sla_result *res);

#endif
