/* whatif.h — "what if this stage were s times faster?": Amdahl's prediction
 * beside the re-simulated answer.
 *
 * Speeding a stage up by s divides its service times by s (whatif_apply).
 * Amdahl's law (seed 000 §3) predicts the end-to-end latency from the
 * stage's share f of it: latency x ((1 - f) + f / s). The share is defined
 * here as the stage's sojourn percentile over the sum of that percentile
 * over every stage of its path (frame or response): for the p99 prediction
 * f = stage p99 / sum of stage p99s (the budget table's column), for the
 * mean f = stage mean / sum of stage means. Amdahl's law knows nothing of
 * queues: a faster stage also waits less (M/M/1: 1/(mu - lambda) falls faster
 * than 1/mu), so under queueing the re-simulated gain differs from the
 * prediction, usually exceeding it; with no waiting the two agree.
 *
 * Every variant is the scenario loaded again (scenario.h: scn_load_ex) with
 * the speedups applied and run with the same seed: common random numbers,
 * so the difference between the variants is the speedup's, not noise.
 * This module never prints and holds no global mutable state. */
#ifndef VL_WHATIF_H
#define VL_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "models/config.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/stats.h"

#define WHATIF_MAX 16

typedef struct {
    char stage[CFG_NAME_MAX];
    double factor;               /* > 0: service times divided by this */
} whatif_speedup;

/* Parse "encode=4" (a stage name, '=', a finite factor > 0). 0, or -1 and a message. */
int whatif_parse(const char *spec, whatif_speedup *out, char *err, size_t errlen);

/* Divide stage st's service times by factor: its service distribution (per
 * item, or per batch on a GPU), its batch table, its retransmission RTT and
 * its cache-miss cost. Not changed: the jitter multiplier (mean 1), an
 * I-frame's factor, the B-frame reorder hold and the batch timeout, which
 * are not service times. */
void whatif_apply(stage_cfg *st, double factor);

/* One end-to-end metric (the frame path, or the response path) of a variant. */
typedef struct {
    double share_p99, share_mean;    /* f of the stages sped up on this path (summed) */
    double amdahl_p99, amdahl_mean;  /* predicted latency, ms */
    stats_ci sim_p99, sim_mean;      /* re-simulated latency, ms */
    bool touched;                    /* a sped-up stage is on this path */
} whatif_metric;

typedef struct {
    int nstages;                     /* sped up together: 1, or all given (the combined row) */
    int stage[WHATIF_MAX];
    double factor[WHATIF_MAX];
    whatif_metric m[2];              /* [0] frame, [1] response */
} whatif_row;

typedef struct {
    scenario_cfg cfg;                /* the baseline scenario (owned by the result) */
    stats_ci base_p99[2], base_mean[2];   /* baseline frame / response latency */
    bool has_response;
    whatif_row *rows;                /* each speedup alone, then (with more than one) all together */
    int nrows;
    whatif_row *rank;                /* every stage alone at rank_factor, best frame (then
                                        response) p99 gain first; NULL when not asked */
    int nrank;
    double rank_factor;
    int runs;
} whatif_result;

typedef struct {
    int threads;                     /* per run; <= 0: one per core */
    double rank_factor;              /* > 0: also rank every stage at this speedup */
    void (*progress)(void *pctx, int done, int total);   /* after each run */
    void *pctx;
} whatif_opts;

/* Run the baseline, each speedup alone, all of them together (when more
 * than one) and, with rank_factor, every stage alone at that factor.
 * Speedups must name distinct stages of the scenario. Returns 0, -2 for bad
 * input (scenario, a stage name) or -1 for a failed run, with a message. */
int whatif_run(const char *path, const scn_override *ov, size_t nov, const whatif_speedup *sp,
               int nsp, const whatif_opts *o, whatif_result *res, char *err, size_t errlen);
void whatif_free(whatif_result *res);

/* A readable table; JSON with the same numbers. */
void whatif_table(FILE *f, const whatif_result *res);
void whatif_json(FILE *f, const whatif_result *res);

#endif
