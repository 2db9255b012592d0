/* fleet.h — the records of traffic over time and autoscaling (issue 6):
 * what one replication measures (fleet_stats, in rep_stats), what is kept
 * of it (fleet_digest) and the estimates over replications (fleet_est, in
 * run_result). Plain data only: profile.c and autoscale.c fill the first,
 * autoscale.c reduces, report_fleet.c writes. Nothing here allocates except
 * the one histogram that fleet_stats holds. */
#ifndef VL_FLEET_H
#define VL_FLEET_H

#include <stdint.h>
#include "sim/hist.h"
#include "sim/stats.h"

/* What happened to the fleet, in time order (replication 0 is reported). */
enum {
    FLEET_START,         /* t = 0: the GPUs serving and billed at the start */
    FLEET_UP_COLD,       /* a scale-up decision that starts a GPU from cold */
    FLEET_UP_WARM,       /* a scale-up decision served from the warm pool: joins at once */
    FLEET_READY,         /* a cold-started GPU has started and serves */
    FLEET_REFILLED,      /* a warm-pool GPU has started and waits in the pool */
    FLEET_DOWN,          /* a scale-down: the GPU is released */
    FLEET_DOWN_TO_POOL,  /* a scale-down whose GPU stays started, in the warm pool */
    FLEET_NKINDS
};

#define FLEET_MAX_EVENTS 512

typedef struct {
    double t_s;          /* simulated time, warm-up included */
    int kind;            /* FLEET_* */
    int gpu;             /* the GPU slot (-1: a warm-pool GPU) */
    int serving;         /* GPUs serving after the event */
    int billed;          /* GPUs billed after the event */
} fleet_event;

/* One replication, over the measured window (events: warm-up included). */
typedef struct {
    int on;                      /* a profile or an autoscaler was given */
    int scaling;                 /* an autoscaler was given */
    double billed_gpu_ms;        /* GPU-time billed: serving + starting + warm pool */
    double serving_gpu_ms;       /* GPU-time of GPUs that serve */
    double warm_gpu_ms;          /* GPU-time of started, idle warm-pool GPUs */
    double busy_gpu_ms;          /* GPU-time running batches */
    double mean_sessions;        /* time-average concurrent sessions */
    uint64_t sessions;           /* sessions started in the window */
    int peak_sessions;           /* most at once (warm-up included) */
    uint64_t ups, downs;         /* scale decisions (GPUs added / removed) */
    uint64_t cold_starts;        /* GPUs added that had to start from cold */
    uint64_t warm_joins;         /* GPUs added from the warm pool */
    uint64_t windows;            /* full SLA windows in the window */
    uint64_t viol_windows;       /* ... in which the SLA percentile failed */
    hist_t spike;                /* frame end-to-end (ms) during spikes: from each
                                    scale-up decision for a mean cold start */
    fleet_event events[FLEET_MAX_EVENTS];
    int nevents;
} fleet_stats;

/* The numbers kept from one replication. */
typedef struct {
    double billed_gpus, serving_gpus;    /* time-average GPU counts */
    double cost_usd;                     /* billed GPU-hours x gpu_hour_usd */
    double viol_min_per_day;             /* SLA-violation minutes, scaled to a day */
    double spike_p99;                    /* NaN without spike frames */
    double mean_sessions;
    double cold_starts_per_h, warm_joins_per_h;
    double idle_share;                   /* billed GPU-time not running batches / billed */
    double warm_gpu_h;
    double wasted_gpu_h;                 /* billed GPU-hours not running batches */
    uint64_t sessions, ups, downs, cold_starts, warm_joins, windows, viol_windows;
    int peak_sessions;
} fleet_digest;

typedef struct {
    int on, scaling;
    stats_ci billed_gpus, serving_gpus, cost_usd, viol_min_per_day, spike_p99;
    stats_ci mean_sessions, cold_starts_per_h, idle_share, wasted_gpu_h;
    double warm_gpu_h;                   /* mean per replication */
    double cold_start_rate;              /* cold starts / GPUs added, all replications */
    uint64_t sessions, ups, downs, cold_starts, warm_joins, windows, viol_windows;
    int peak_sessions;
    fleet_event events[FLEET_MAX_EVENTS];   /* replication 0 */
    int nevents;
} fleet_est;

#endif
