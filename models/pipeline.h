/* pipeline.h — one replication of a pipeline of stages.
 *
 * Items (frames) arrive from the workload's streams, pass through the
 * stages in order and leave after the last. A stage runs either on its own
 * pool of workers (a c-server FIFO station with an optional bounded waiting
 * room, a drop policy and a waiting-time limit) or on the cluster's GPUs,
 * where every GPU stage keeps one queue per GPU, frames are placed on GPUs
 * by stream, and each GPU runs one dynamically formed batch at a time for
 * whichever of its stages is ready first (gpu.c). This module owns the
 * event handlers and the per-replication statistics; the engine (sim/)
 * supplies the event list, random streams and histograms.
 * It never prints, never touches files and keeps nothing between calls. */
#ifndef VL_PIPELINE_H
#define VL_PIPELINE_H

#include <stdint.h>
#include <stdio.h>
#include "models/canary.h"
#include "models/config.h"
#include "models/fleet.h"
#include "sim/hist.h"
#include "sim/mser.h"

/* Counts, histograms and time averages of one stage over the measured window. */
typedef struct {
    uint64_t arrivals;          /* items that reached the stage */
    uint64_t completed;         /* items that finished service */
    uint64_t drop_queue_full;   /* dropped because the waiting room was full */
    uint64_t drop_timeout;      /* dropped because they waited longer than timeout_ms */
    uint64_t drop_policy;       /* dropped by the degradation controller */
    uint64_t waited;            /* completed items that had to wait (wait > 0) */
    uint64_t sampled_out;       /* completed items the stage did not pass on (keep) */
    uint64_t batches;           /* GPU stages: batches run */
    uint64_t *batch_counts;     /* GPU stages: batch_counts[k] = batches of size k, 1..max_batch */
    hist_t wait, service, sojourn;   /* ms, recorded at departure */
    uint64_t le[CFG_MAX_BUCKETS + 1];/* sojourn counts per Prometheus bucket (last: +Inf) */
    double utilization;         /* busy server-time / (servers * window) */
    double mean_queue_len;      /* time-average number waiting (not in service) */
} stage_stats;

/* One GPU over the measured window. */
typedef struct {
    double utilization;         /* busy time / window */
    double *busy_ms;            /* per stage: time spent running that stage's batches */
} gpu_stats;

#define PIPE_MAX_TIMELINE 256
#define PIPE_MAX_ALERTS 256
enum { ALERT_P99_SLA, ALERT_DROP_RATE, ALERT_GPU_IDLE, ALERT_P99_P95, ALERT_NRULES };

typedef struct {
    double t_s;                 /* simulated time, warm-up included */
    int level;                  /* degradation level from then on */
} mode_change;

/* One control tick of the time series (replication 0). */
typedef struct {
    double t_s;                 /* simulated time, warm-up included */
    double fps;                 /* frames that arrived per second over the last interval */
    int level;                  /* degradation level */
    double queue_fill;          /* the fullest bounded queue, waiting / capacity */
    double p99_ms;              /* frame p99 over the controller's window (coarse: whist) */
} series_point;

#define PIPE_MAX_SERIES 4096    /* the first 4096 ticks (68 min at 1 s) */

typedef struct {
    double t_s;                 /* when the rule started firing */
    int rule;                   /* ALERT_* */
    int gpu;                    /* ALERT_GPU_IDLE: which GPU; else -1 */
    double value;               /* the value that crossed the threshold */
} alert_event;

/* A replication stopped early because a queue grows without bound. */
enum { PIPE_STABLE = 0, PIPE_GREW, PIPE_CAPPED };

typedef struct {
    int kind;                   /* PIPE_STABLE; PIPE_GREW: the growth test (stability.h)
                                   fired; PIPE_CAPPED: PIPE_MAX_IN_FLIGHT was reached with
                                   the items waiting in an unbounded queue */
    int stage;                  /* the stage whose queue grew */
    double t_from_s, t_to_s;    /* PIPE_GREW: the middles of the test's windows 4 and 8 */
    double q_from, q_to;        /* mean waiting there (PIPE_CAPPED: q_to = waiting at the cap) */
    double t_stop_s;            /* when the replication stopped (simulated, warm-up included) */
} pipe_growth;

typedef struct {
    int nstages;
    stage_stats *stage;
    int ngpus;
    gpu_stats *gpu;
    hist_t e2e;                 /* frames: arrival at the first stage -> leaving the last, ms */
    uint64_t e2e_le[CFG_MAX_BUCKETS + 1];
    hist_t response;            /* queries: query -> the last response stage done, ms */
    uint64_t resp_le[CFG_MAX_BUCKETS + 1];
    uint64_t queries, proactive;/* response-path items started (user queries, proactive) */
    uint64_t answered, unanswered;  /* response-path items completed / dropped */
    uint64_t arrivals, completed, dropped;   /* system-wide, over the window */
    uint64_t sampled_out;       /* system-wide: items that ended at a sampling stage */
    uint64_t events;            /* events processed, warm-up included */
    /* degradation and alerts (the first PIPE_MAX_* of each, warm-up included) */
    mode_change timeline[PIPE_MAX_TIMELINE];
    int ntimeline;
    uint64_t mode_changes;      /* in the measured window */
    double level_ms[CFG_MAX_MODES + 1];   /* measured time spent at each level */
    alert_event alerts[PIPE_MAX_ALERTS];
    int nalerts;
    series_point *series;       /* PIPE_MAX_SERIES, allocated by pipe_stats_init */
    int nseries;
    uint64_t alert_count[ALERT_NRULES];   /* firings in the measured window */
    double window_ms;           /* the measured window */
    uint64_t peak_in_flight;    /* most items in the system at once */
    double cpu_busy_ms, cpu_two_ms, cpu_two_same_ms;   /* cpu: time with jobs on the cores,
                                   with exactly two, and those two on one core (cpu.stack) */
    double cpu_work_ms, cpu_cold_extra_ms, cpu_duty_extra_ms;   /* cpu.cold, cpu.duty: the
                                   jobs' work as started, and what cold cores and cores idle
                                   lately added to it */
    double cpu_spell_ms[2];     /* cpu.stack: cores.h's spells, begun by a start / an end */
    uint64_t cpu_stall_wakes, cpu_stalled;   /* cpu.stalls: wake-ups onto an idle core, and
                                   those that waited for the host's spell to end */
    uint64_t cpu_stall_polled;  /* cpu.stalls: of the wake-ups, those within the poll window */
    double cpu_stall_wait_ms;   /* cpu.stalls: those waits, summed */
    uint64_t cpu_spells[2], cpu_spell_moves[2], cpu_chances, cpu_stacked;
    canary_rec canary;          /* the canary rollout, warm-up excluded (canary.h) */
    pipe_growth growth;         /* kind PIPE_STABLE unless the replication stopped early */
    fleet_stats fleet;          /* profile and autoscaling (fleet.h) */
} rep_stats;

/* Allocate the statistics for cfg (histograms included). 0 or -1. */
int pipe_stats_init(rep_stats *s, const scenario_cfg *cfg);
void pipe_stats_free(rep_stats *s);

/* Items in flight beyond which a replication stops, so that memory stays
 * bounded: 4 Mi items of 64 bytes is 256 MiB per replication (384 MiB
 * while the pool grows), about 6 GiB with 16 threads. When most of them
 * wait in an unbounded queue the replication ends with growth kind
 * PIPE_CAPPED; otherwise it is an error. */
#define PIPE_MAX_IN_FLIGHT (1u << 22)

/* Watched by the growth test: a queue with no capacity, no timeout_ms and
 * no frame_deadline_ms, the only kind that can grow without bound. */
int pipe_queue_unbounded(const scenario_cfg *cfg, int s);

/* pipe_run's return when stop_requested() (sim/stop.h) said stop. */
#define PIPE_INTERRUPTED (-2)

/* Run replication `rep` with the given warm-up (ms) for cfg->duration_s.
 * When pilot is not NULL, every end-to-end latency is also fed to it with
 * its completion time (for MSER warm-up detection). On every control tick
 * the growth test (stability.h) looks at the unbounded queues; when one
 * grows without bound the replication stops there, out->growth says why,
 * and the statistics cover the window up to the stop. Returns 0, -1 with a
 * message in err (out of memory, too many items in flight outside an
 * unbounded queue), or PIPE_INTERRUPTED. */
int pipe_run(const scenario_cfg *cfg, uint32_t rep, double warmup_ms,
             mser_t *pilot, rep_stats *out, char *err, size_t errlen);
/* pipe_run, and every item's span at every stage it completes written to
 * trace as it happens (NULL: none), one CSV row each in the real pipeline's
 * span format (calib/realpipe/rp_span.h): kind,id,stream,seq,stage,outcome,
 * arrive_ms,enqueue_ms,start_ms,end_ms — kind frame or query, id unique per
 * item in the replication (its arrival number), outcome done (a frame a
 * sampler lets go is sampled_out), times in ms from the replication's start,
 * the warm-up included. The header is the caller's. */
int pipe_run_traced(const scenario_cfg *cfg, uint32_t rep, double warmup_ms, mser_t *pilot,
                    rep_stats *out, FILE *trace, char *err, size_t errlen);

/* The random-stream id used for a stage's service times: a hash of its
 * name, so that adding or reordering stages leaves the others' draws alone. */
uint32_t pipe_stage_stream(const char *name);

#endif
