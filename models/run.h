/* run.h — run a scenario: warm-up choice, replications, estimates.
 *
 * run_scenario runs cfg->replications independent replications (on
 * threads; results are identical for any thread count), reduces each to a
 * handful of numbers as soon as it finishes (so memory stays at one set of
 * histograms per thread), and turns those into point estimates with 95 %
 * Student-t confidence intervals. With `warmup: auto` a pilot replication
 * picks the warm-up by MSER-5 first. It never prints: warnings are
 * collected in the result and progress goes to a callback. */
#ifndef VL_RUN_H
#define VL_RUN_H

#include <stdio.h>

#include <stdbool.h>
#include <stdint.h>
#include "models/config.h"
#include "models/pipeline.h"
#include "sim/hist.h"
#include "sim/mser.h"
#include "sim/stats.h"

#define RUN_MAX_WARNINGS 16

/* cpu.stack's figures, as vlrealpipe stackcal prints them (rp_stack.h), each
 * a replication's and averaged with its interval: of the starts with a core
 * free beside a running job, the share that went beside it; and for the
 * spells (a core free while another holds two or more) begun by a start and
 * by a core emptied, how many began per second, their mean length in ms, and
 * the share of them a move ended. */
enum { RUN_STACK_SHARE, RUN_START_SPELLS_S, RUN_START_SPELL_MS, RUN_START_MOVED,
       RUN_END_SPELLS_S, RUN_END_SPELL_MS, RUN_END_MOVED, RUN_NSTACK };
extern const char *const run_stack_names[RUN_NSTACK];

/* Estimates of one latency distribution: each statistic averaged over the
 * replications with its interval; max is the largest value seen anywhere. */
typedef struct {
    stats_ci mean, p50, p90, p95, p99, p999;
    double max;
} lat_est;

/* One replication's own value of each statistic of a latency distribution
 * (its histogram's mean and percentiles), kept in replication order so that
 * two runs with the same seed can be compared replication by replication
 * (paired differences; models/compare.h). */
typedef struct {
    double mean, p50, p90, p95, p99, p999;
} rep_lat;

typedef struct {
    lat_est wait, service, sojourn;
    uint64_t arrivals, completed, drop_queue_full, drop_timeout, drop_policy;   /* totals */
    stats_ci drop_rate, utilization, mean_queue_len;
    stats_ci p_wait;                    /* fraction of completed items that waited */
    uint64_t sampled_out;               /* total */
    uint64_t batches;                   /* GPU stages: total batches */
    uint64_t *batch_counts;             /* GPU stages: [k] = batches of size k, totals */
    stats_ci batch_mean;                /* GPU stages: mean batch size */
    uint64_t le[CFG_MAX_BUCKETS + 1];   /* pooled sojourn bucket counts (last: +Inf) */
    double sojourn_sum;                 /* pooled sum of sojourn times, ms */
} stage_est;

typedef struct {
    stats_ci utilization;
    double *busy_ms;             /* per stage, mean over replications */
} gpu_est;

/* An SLA line's verdict: pass when the upper end of the 95 % CI (the
 * estimate itself with one replication) is within the target. */
typedef struct {
    const sla_cfg *line;
    stats_ci value;
    bool pass;
} sla_verdict;

/* Is the system stable? Unstable when some replication stopped early
 * because a queue grew without bound (pipeline.h: pipe_growth); the figures
 * then describe a transient up to the stops, and every SLA line fails. */
typedef struct {
    bool stable;
    int stage;                   /* unstable: the stage whose queue grew (first such replication) */
    int rep;                     /* ... that replication */
    int unstable_reps;           /* replications that stopped early */
    double t_stop_s;             /* when that replication stopped */
    double offered_load;         /* run_offered_load of the stage */
    char reason[384];            /* e.g. "encode queue grew from ... ; offered load 1.3 x capacity" */
} run_verdict;

typedef struct {
    const scenario_cfg *cfg;
    int nrep;
    run_verdict verdict;
    double warmup_ms;            /* the warm-up used */
    bool warmup_auto;
    mser_result mser;            /* when warmup_auto */
    stage_est *stage;            /* cfg->nstages */
    lat_est e2e;                 /* frames */
    lat_est response;            /* queries and proactive triggers: start -> answered */
    uint64_t queries, proactive, answered, unanswered;   /* totals */
    uint64_t resp_le[CFG_MAX_BUCKETS + 1];
    double resp_sum;
    uint64_t arrivals, completed, dropped;   /* system-wide totals */
    uint64_t sampled_out;
    stats_ci drop_rate;
    stats_ci cpu_two, cpu_two_same;  /* cpu: the share of the cores' busy time with exactly two
                                        jobs, and of that the share on one core (cpu.stack) */
    stats_ci cpu_stack[RUN_NSTACK];  /* cpu.stack: run_stack_names' figures */
    stats_ci cpu_cold;               /* cpu.cold: the work cold cores added, as a share of the
                                        jobs' work */
    stats_ci cpu_duty;               /* cpu.duty: the same for cores idle lately */
    stats_ci cpu_stalled;            /* cpu.stalls: the share of the wake-ups onto an idle core
                                        that waited out the host's spell on it */
    stats_ci cpu_stall_ms;           /* cpu.stalls: their mean wait, ms */
    stats_ci cpu_polled;             /* cpu.stalls: the share of those wake-ups within the
                                        host's poll window (cpu.stalls.poll_ms) */
    int nstages;                     /* the stages its arrays hold: run_result_free reads this,
                                        not cfg, which may be gone by then */
    int ngpus;
    gpu_est *gpu;
    double gpu_hours;            /* GPU-hours simulated in the measured windows */
    double cost_per_stream_hour; /* gpu_hour_usd x gpus / streams; NaN without streams */
    sla_verdict sla[CFG_MAX_SLA];
    int nsla;
    /* degradation and alerts */
    double level_share[CFG_MAX_MODES + 1];  /* mean fraction of the window at each level */
    double mode_changes_per_hour;           /* mean over replications */
    mode_change timeline[PIPE_MAX_TIMELINE];/* replication 0, warm-up included */
    int ntimeline;
    alert_event alerts[PIPE_MAX_ALERTS];    /* replication 0, warm-up included */
    int nalerts;
    uint64_t alert_count[ALERT_NRULES];     /* firings in the measured windows, all replications */
    series_point *series;                   /* replication 0's time series (PIPE_MAX_SERIES) */
    int nseries;
    /* pooled over all replications, for CDF plots: each stage's sojourn and
     * the frame end-to-end latency (counts only: the merge order does not
     * change them) */
    hist_t *cdf_stage;                      /* cfg->nstages */
    hist_t cdf_e2e;
    uint64_t e2e_le[CFG_MAX_BUCKETS + 1];
    double e2e_sum;
    /* per replication, in replication order (nrep each; bounded by the
     * replications, not by time): frames end to end, the response path,
     * and each stage's sojourn at rep_stage[r * nstages + s] */
    rep_lat *rep_e2e, *rep_response, *rep_stage;
    fleet_est fleet;             /* profile and autoscaling (fleet.h); fleet.on: given */
    uint64_t events;             /* over all replications (and the pilot) */
    uint64_t peak_in_flight;
    canary_rec *canary;          /* with a canary rollout: each replication's (nrep), else NULL */
    char warnings[RUN_MAX_WARNINGS][256];
    int nwarnings;
} run_result;

typedef struct {
    int threads;                 /* <= 0: one per core */
    void (*progress)(void *pctx, int done, int total);
    void *pctx;
    FILE *trace;                 /* NULL, or replication 0's spans (pipe_run_traced) */
} run_opts;

/* run_scenario's return when a SIGINT or SIGTERM asked to stop (sim/stop.h). */
#define RUN_INTERRUPTED (-2)

/* 0 (an unstable system is a result: res->verdict), -1 with a message (out
 * of memory, too many items in flight outside an unbounded queue), or
 * RUN_INTERRUPTED. */
int run_scenario(const scenario_cfg *cfg, const run_opts *opts, run_result *res,
                 char *err, size_t errlen);
void run_result_free(run_result *res);

/* Offered load of stage s as a fraction of its capacity:
 * (arrival rate) x (mean service) / servers, ignoring upstream drops. */
double run_offered_load(const scenario_cfg *cfg, int s);

#endif
