/* config.h — the plain configuration structs a scenario turns into.
 *
 * The scenario loader (scenario.c) fills these from YAML; tests and other
 * front ends may fill them by hand. Nothing here knows about YAML or files,
 * and nothing here holds run-time state: a config is read-only once loaded. */
#ifndef VL_CONFIG_H
#define VL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include "dist.h"

#define CFG_NAME_MAX 64
#define CFG_MAX_STAGES 64
#define CFG_MAX_BUCKETS 32

typedef enum { ARRIVAL_POISSON, ARRIVAL_PERIODIC } arrival_kind;
typedef enum { PHASE_RANDOM, PHASE_ALIGNED, PHASE_GIVEN } phase_kind;

typedef struct {
    arrival_kind arrival;
    double queries_per_min;  /* periodic: user queries per stream per minute (Poisson), >= 0 */
    double proactive_per_min;/* periodic: proactive triggers per stream per minute, >= 0 */
    double rate_hz;          /* poisson: total arrival rate (Hz, > 0) */
    int streams;             /* periodic: number of independent sources (>= 1) */
    double fps;              /* periodic: frames per second per stream (> 0) */
    double jitter_ms;        /* periodic: sd of a Gaussian offset per frame (>= 0) */
    phase_kind phase;        /* periodic: random phase per stream, all at t=0, or phase_ms */
    double *phase_ms;        /* PHASE_GIVEN: nphase_sets x streams offsets (ms) of each stream's
                              * first frame; replication r uses set r mod nphase_sets (owned) */
    int nphase_sets;
    int surge_streams;       /* periodic: extra streams that join for a while (flash crowd) */
    double surge_at_s;       /* ... from this time (simulated seconds from the start) */
    double surge_for_s;      /* ... for this long */
} workload_cfg;

typedef enum { ONFULL_DROP_NEWEST, ONFULL_DROP_OLDEST } onfull_kind;

/* Where a stage runs: its own pool of `servers` workers sharing one FIFO
 * queue (CPU threads, NVDEC engines, a network), or the cluster's GPUs,
 * which it shares with the other GPU stages placed on the same GPU. */
typedef enum { RES_WORKERS, RES_GPU } resource_kind;

#define CFG_MAX_TABLE 32
/* Service time of one batch by batch size (or, with by_tokens, by the
 * tokens the batch carries), interpolated linearly between points. A batch
 * table must cover batch sizes 1..max_batch; a token table extends its last
 * segment linearly beyond its last point and holds its first value below
 * its first point. */
typedef struct {
    int n;                           /* points, 1..CFG_MAX_TABLE */
    double batch[CFG_MAX_TABLE];     /* x: strictly ascending; batch tables start at 1 */
    double ms[CFG_MAX_TABLE];        /* > 0, non-decreasing */
    bool by_tokens;                  /* x is the batch's total tokens, not its size */
} batch_table;

/* Which frames a stage lets through (the sampler); the rest end there and
 * are counted as sampled_out, not as drops. */
typedef enum { KEEP_ALL, KEEP_RATIO, KEEP_EVERY } keep_kind;

/* Jitter sources (seed 000 §1), each optional on any stage. */
typedef struct {              /* network capture: a lost frame is resent after an RTT */
    double loss;              /* probability that a transmission is lost, [0, 1) (0: off) */
    double rtt_ms;            /* delay added per retransmission, > 0 */
    int max_retries;          /* at most this many retransmissions, >= 1 */
} retransmit_cfg;

typedef struct {              /* video decode: group of pictures */
    int length;               /* GOP length in frames; frame 0 of each GOP is an I-frame (0: off) */
    double i_factor;          /* an I-frame's service time is this many times a P-frame's, >= 1 */
    bool has_i_service;       /* then an I-frame's time is drawn from i_service (no i_factor) */
    dist_t i_service;         /* the I-frames' own service distribution */
    int b_frames;             /* B-frames between references: positions k % (b+1) != 0 are B */
    double reorder_ms;        /* a B-frame is held this long after decoding (waits for its
                                 future reference), without occupying a decoder */
    int ncontent;             /* 0: off; else frame k of every stream costs content[k % ncontent]
                                 times its draw (the clip's content: a busy picture decodes
                                 slower, and streams that play one clip in step are busy at
                                 once) */
    double *content;          /* [ncontent] > 0, owned */
} gop_cfg;
#define CFG_MAX_CONTENT 1000000  /* gop.content: one factor per frame of the clip */

typedef struct {              /* LLM prefill: a prefix-cache miss re-prefills the context */
    double prob;              /* probability per frame, [0, 1] (0: off) */
    double ms_per_token;      /* re-prefill cost per context token, > 0 */
    double context_tokens;    /* context length re-prefilled on a miss, > 0 */
} cache_miss_cfg;

/* Which items a stage serves: frames (capture -> ... -> llm_prefill) or the
 * response path that a query or a proactive trigger starts (llm_decode ->
 * response). Each path runs through its stages in the order written. */
typedef enum { PATH_FRAME, PATH_RESPONSE } path_kind;

typedef struct {
    char name[CFG_NAME_MAX];
    path_kind path;          /* default by name: llm_decode and response are PATH_RESPONSE */
    resource_kind on;        /* RES_WORKERS (default) or RES_GPU */
    int servers;             /* workers: >= 1 (ignored on GPU stages) */
    dist_t service;          /* workers: per item; GPU without a table: per batch */
    long capacity;           /* waiting room, excluding items in service; -1 = unbounded.
                                On a GPU stage: per GPU. */
    onfull_kind on_full;
    double timeout_ms;       /* > 0: an item that waited longer is dropped; 0 = none */
    /* GPU stages */
    int max_batch;           /* >= 1, default 1 */
    double batch_timeout_ms; /* >= 0, default 0: how long a partial batch may wait to fill */
    bool has_table;          /* service from `table` (else `service` per batch) */
    batch_table table;
    bool has_jitter;         /* multiply each batch time by a draw of `jitter` (mean 1) */
    dist_t jitter;
    int response_tokens;     /* > 0: a continuous-batching decode stage (GPU): each item
                                needs this many iterations; an iteration runs every active
                                sequence once and takes table(active) ms */
    int priority;            /* gpu_policy priority: higher first; default by canonical
                                name: llm_decode 4, llm_prefill 3, reduce 2, encode 1, else 0 */
    double budget_ms;        /* > 0: this stage's latency budget, for the budget table; 0 = none */
    /* jitter sources */
    retransmit_cfg retransmit;
    gop_cfg gop;
    cache_miss_cfg cache_miss;
    /* sampling */
    keep_kind keep;
    double keep_ratio;       /* KEEP_RATIO: probability a frame is kept, (0, 1] */
    int keep_every;          /* KEEP_EVERY: keep frame numbers divisible by this, >= 1 */
    double scene_per_min;    /* KEEP_RATIO: scene changes per stream per minute (Poisson, 0: none);
                                after each, the stream's next scene_burst frames are all kept */
    int scene_burst;         /* >= 1 */
    /* tokens */
    int tokens_out;          /* > 0: an item leaves this stage carrying this many tokens
                                (encode: tokens_per_frame, reduce: keep_tokens); 0: unchanged */
} stage_cfg;

typedef enum { PLACE_HASH, PLACE_LEAST_LOADED } placement_kind;
typedef enum { GPU_PRIORITY, GPU_FIFO } gpu_policy_kind;

#define CFG_MAX_POOLS 8
/* A disaggregated pool: GPUs [first, first + gpus) serve only its stages. */
typedef struct {
    char name[CFG_NAME_MAX];
    int first, gpus;
    uint64_t stage_mask;     /* bit s set: stage s runs in this pool */
} pool_cfg;

typedef struct {
    int gpus;                /* 0: no cluster (then no stage may run on: gpu) */
    char gpu_type[32];       /* label, e.g. "h100" */
    double gpu_hour_usd;     /* price of one GPU-hour, >= 0 */
    placement_kind placement;/* stream -> GPU: hash of the session id (sticky) or least loaded */
    gpu_policy_kind policy;  /* which waiting batch a free GPU serves first */
    int npools;              /* 0: every GPU stage may use every GPU */
    pool_cfg pools[CFG_MAX_POOLS];
} cluster_cfg;

/* The degradation controller (seed 004 §4): an ordered list of modes. Level
 * k means the first k modes are on. Every interval it looks at the frame p99
 * over the last window and at the fullest bounded queue: it escalates one
 * level when p99 > target or fill > high_water, de-escalates when fill <
 * low_water and p99 < deescalate x target, and never changes twice within
 * cooldown_s. */
typedef enum { MODE_REDUCE_FPS, MODE_REDUCE_QUALITY, MODE_DROP_RESPONSE } mode_kind;
#define CFG_MAX_MODES 3
typedef struct {
    int nmodes;                      /* 0: no controller */
    mode_kind modes[CFG_MAX_MODES];  /* escalation order, each at most once */
    double interval_s;               /* > 0, default 1 */
    double window_s;                 /* >= interval_s, default 10 */
    double p99_target_ms;            /* > 0, required with modes */
    double high_water, low_water;    /* fill fractions, 0 <= low < high <= 1 (0.7, 0.3) */
    double deescalate;               /* (0, 1], default 0.8 */
    double cooldown_s;               /* >= 0, default 30 */
    double fps;                      /* reduce_fps: frames per second per stream kept */
    double quality_scale[CFG_MAX_STAGES];  /* reduce_quality: service-time factor per stage
                                              (default 1: unchanged) */
} degrade_cfg;

/* Alert rules (seed 004 §1), evaluated every degradation interval (1 s by
 * default) over a sliding window; each firing is recorded with its time. */
typedef struct {
    double window_s;                 /* default 60 */
    double p99_sla_factor;           /* frame p99 > this x the first frame SLA target (1.5) */
    double drop_rate;                /* frame drop rate over the window > this (0.01) */
    double gpu_util_below;           /* a GPU's utilization below this ... (0.2) */
    double gpu_util_for_s;           /* ... for this long (300) */
    double p99_p95_ratio;            /* frame p99 > this x frame p95 (1.5) */
} alert_cfg;

/* ---- cpu: cores shared by the stages (issue 7) ----------------------------
 * On a CPU every server is a thread, and the threads share a few cores: with
 * n threads busy on k cores each runs at min(1, k/n) of full speed (the
 * processor sharing that a time-slicing OS scheduler approximates). A thread
 * that sleeps when its queue is empty needs wake_ms to run again once an item
 * is handed to it (a condition-variable wake-up, measured in isolation by
 * `vlcalib wakeup`). A thread that sleeps until a time (a batch timeout's
 * timed wait, a camera thread releasing frames on schedule) wakes timer_ms
 * late (`vlcalib wakeup`'s timer line; wake_ms when not given).
 *
 * A woken thread also waits for a core the others hold: with wake_busy the
 * handoff's wake-up is drawn from wake_busy[k] instead (the last for more),
 * k the jobs then on the cores besides it — the stages' work, not the
 * handoffs', and counting the waker when it carries on with its next item.
 * With timer_busy a timed wait wakes timer_busy[k] late, k the jobs on the
 * cores when it was due. Some wake-ups with jobs running are held instead:
 * the scheduler queued the woken thread behind a running job, and it runs
 * when the first of the stages' jobs on the cores ends, however long that
 * takes — a share wake_held[k] (timer_held[k]) of them, the last for more
 * (`vlrealpipe wakecal` measures all of these apart from the pipeline); with
 * held_until slice, at most till the running job's protected slice ends.
 *
 * With stalls the host now and then does not run a core: each core's spells
 * begin at per_s a second and last a draw from ms, and a thread woken onto
 * an idle core in a spell runs at its end, unless the core has been idle
 * for less than poll_ms: the host still polls it (models/stalls.h;
 * `vlrealpipe stallcal`).
 *
 * With stack the jobs are placed on cores instead of pooled: a job started
 * while a core is free goes beside a running one with probability share,
 * and a free core takes a job from a shared one after an exponential wait
 * of mean migrate_ms (pull_ms when the core was emptied by a job's end;
 * models/cores.h; `vlrealpipe stackcal`). */
#define CFG_MAX_SPEEDUP 16
#define CFG_MAX_WAKE_BUSY 9
#define CFG_MAX_SPEED 65536      /* cpu.speed.factors */
#define CFG_MAX_STACK_SHARE 16   /* cpu.stack.share as a list by load */
#define CFG_MAX_COLD 16          /* cpu.cold's idle times */
#define CFG_MAX_DUTY 16          /* cpu.duty's utilisations */
#define CFG_MAX_THROUGH 16       /* cpu.stack.through's works */
#define CFG_MAX_STACK_RUN 16     /* cpu.stack.run's ages */
typedef struct {
    int cores;               /* 0: off (every server runs at full speed, no wake-up delay) */
    int nspeedup;            /* 0: speedup(n) = min(n, cores) */
    double speedup[CFG_MAX_SPEEDUP]; /* the cores' total speed with n threads busy,
                                        speedup[n-1] (the last for more): what the OS
                                        really delivers, measured by vlcalib wakeup --ring;
                                        each of n busy threads runs at speedup(n) / n */
    double wake_ms;          /* >= 0: delay before an idle thread starts a handed-over item */
    int nwake_busy;          /* 0: wake_ms; else that delay is drawn from wake_busy[min(k, n - 1)] */
    dist_t wake_busy[CFG_MAX_WAKE_BUSY];
    int ntimer_busy;         /* 0: timer_ms; else a timed wait is timer_busy[min(k, n - 1)] late */
    dist_t timer_busy[CFG_MAX_WAKE_BUSY];
    int nwake_held, ntimer_held;   /* 0: none held; else the share held with k jobs running */
    double wake_held[CFG_MAX_WAKE_BUSY], timer_held[CFG_MAX_WAKE_BUSY];
    int held_until;          /* CPU_HELD_*: how long a held wake-up waits (below) */
    double handoff_ms;       /* >= 0: CPU work one handoff costs the cores (the queue, the signal,
                                the switch), a job of its own beside the stages' */
    int has_timer;           /* timer_ms given */
    double timer_ms;         /* >= 0: how late a timed wait wakes */
    int source;              /* CPU_SOURCE_*: how frames reach the first stage (below) */
    int query_source;        /* CPU_QUERY_*: how queries reach the response path (below) */
    uint64_t sleeper_mask;   /* bit s: stage s's threads wait out each service time in a timed
                                sleep, off the cores, and wake late as any timed wait does
                                (cpu.sleepers; never in stage_mask) */
    uint64_t stage_mask;     /* bit s: stage s's servers (on a GPU stage, the GPU's batches
                                of it) are threads on the cores; default every stage */
    int nspeed;              /* 0: the cores at one speed; else cpu.speed's factors */
    double speed_window_ms;  /* > 0: each factor's window of simulated time */
    double *speed;           /* [nspeed] > 0: the cores' speed in window j of a replication is
                                speed[(k0 + j) % nspeed], k0 drawn per replication (a machine
                                whose speed moves: vlrealpipe driftcal); used as given, so a
                                mean of 1 keeps the calibrated speed as the time-average */
    int has_stack;           /* 0: pooled sharing; 1: jobs placed on cores (cpu.stack) */
    double stack_share;      /* [0, 1]: a start with a core free goes beside a running job */
    double stack_migrate_ms; /* >= 0: mean wait before a free core takes a shared core's job,
                                once a start stacked */
    double stack_pull_ms;    /* >= 0: the same once a core emptied beside a shared one
                                (default migrate_ms) */
    int nstack_share;        /* 0: stack_share throughout; else the share by the cores' recent
                                utilisation, interpolated on stack_share_load */
    double stack_shares[CFG_MAX_STACK_SHARE], stack_share_load[CFG_MAX_STACK_SHARE];
    double stack_util_halflife_ms;   /* > 0: the recent utilisation's half-life (32) */
    int nstack_run;          /* 0: the share as above; else times cpu.stack.run's factor at the
                                busy core's run age (models/cores.h, share by run) */
    double stack_run_age_ms[CFG_MAX_STACK_RUN], stack_run_factor[CFG_MAX_STACK_RUN];
    double stack_run_bridge_ms;      /* >= 0: a core empty this long keeps its run (0.05) */
    double stack_switch_ms;  /* 0: the jobs on one core share it evenly; > 0: they take turns,
                                a placed job preempting, the core turning to the longest
                                waiting after an exponential wait of this mean */
    double stack_tick_ms;    /* 0: as stack_switch_ms says; > 0: turns at the first tick (the
                                multiples of this) after the running job had its core for
                                stack_slice_ms */
    double stack_slice_ms;   /* >= 0, with stack_tick_ms */
    int nstack_protect;      /* 0: off; else (ticks on) a woken job placed beside a running one
                                younger than stack_protect_ms is held, with the share
                                interpolated at its work (cpu.stack.protect, cores_set_protect) */
    double stack_protect_ms;
    double stack_protect_work_ms[CFG_MAX_THROUGH], stack_protect_share[CFG_MAX_THROUGH];
    int nstack_through;      /* 0: every job on a busy core turns at ticks; else (ticks on) a
                                job started on a busy core runs through, never cut at a tick,
                                with the share interpolated at its work (cpu.stack.through) */
    double stack_through_work_ms[CFG_MAX_THROUGH], stack_through_share[CFG_MAX_THROUGH];
    int ncold;               /* 0: a job runs as fast on a core that was idle; else cpu.cold */
    double cold_idle_ms[CFG_MAX_COLD];   /* increasing, >= 0: a core's time with nothing to run */
    double cold_factor[CFG_MAX_COLD];    /* > 0: its next job's work is multiplied by this
                                            (interpolated, held at the ends) */
    int nduty;               /* 0: a job runs as fast however busy the cores were lately; else
                                cpu.duty (models/cores.h, cores_set_duty) */
    double duty_util[CFG_MAX_DUTY];      /* increasing, in [0, 1]: the cores' recent utilisation */
    double duty_factor[CFG_MAX_DUTY];    /* > 0: a job's work is multiplied by this there
                                            (interpolated, held at the ends) */
    double duty_halflife_ms;             /* > 0: the recent utilisation's half-life (32) */
    double stall_per_s;      /* 0: the host runs every core at once; else cpu.stalls: each
                                core's spells of not running begin at this rate (/s) */
    dist_t stall_ms;         /* the spells' lengths (models/stalls.h) */
    double stall_poll_ms;    /* >= 0: a core idle less than this is not in a spell (0) */
} cpu_cfg;

/* cpu.source: ideal — each frame enters the first stage at its time; timer — a
 * thread on the cores per stream sleeps until each frame's time and wakes
 * timer_ms late (its latency still counts from its time), so frames of
 * different streams due close together may enter in any order; one_thread —
 * one thread releases every stream's frames in time order: it sleeps until the
 * next frame's time, wakes late as timer does, and hands over every frame due
 * by then, in order, before it sleeps again (the real pipeline's source). */
enum { CPU_SOURCE_IDEAL, CPU_SOURCE_TIMER, CPU_SOURCE_ONE_THREAD };
/* cpu.query_source: ideal — each query enters the response path at its time;
 * timer — a thread sleeps until each query's time and wakes late as a timed
 * wait does (timer_ms, timer_busy, timer_held, the stalls), then hands it
 * over. The query's latency, and its first stage's sojourn, still count from
 * its time (the real pipeline stamps the query's due time as its enqueue). */
enum { CPU_QUERY_IDEAL, CPU_QUERY_TIMER };
/* cpu.wake_held_until: a held wake-up (wake_held, timer_held) runs at the
 * first end of a stage job on the cores (end, the default), or, queued on
 * one busy core, at the latest when that core's running job has had it for
 * cpu.stack.protect.ms (slice; not held at all when it had it longer):
 * Linux's EEVDF preempts a running thread for a woken one once its
 * protected slice is over, so a job of 8 ms holds a wakee 1.4 ms, not 8. */
enum { CPU_HELD_END, CPU_HELD_SLICE };

/* How late a timed wait on the cores wakes: timer_ms, or wake_ms when not given. */
static inline double cpu_timer_ms(const cpu_cfg *u)
{
    return u->has_timer ? u->timer_ms : u->wake_ms;
}

#define CFG_MAX_SLA 16
/* One SLA line: the percentile of a metric must be <= ms. The verdict uses
 * the upper end of the 95 % confidence interval. */
typedef struct {
    char metric[CFG_NAME_MAX];   /* "frame" (end to end) or a stage name (its sojourn) */
    double percentile;           /* one of 50, 90, 95, 99, 99.9 */
    double ms;                   /* > 0 */
} sla_cfg;

/* A sweep (issue: sweeps): the scenario's `sweep: {key: [values], ...}`.
 * Keys are override paths (scenario.h: scn_override); values are kept as
 * the text written, so that a point is the scenario loaded again with one
 * value per axis. */
#define CFG_MAX_AXES 8
#define CFG_MAX_AXIS_VALUES 64
typedef struct {
    char key[128];
    int nvalues;
    char values[CFG_MAX_AXIS_VALUES][32];
} sweep_axis;

/* ---- canary rollout (issue 6, seed 004 §3) ---------------------------------
 * Sessions are routed to the variant by a hash of the session id against the
 * current step's pct (sticky, and nested as pct grows); a variant frame uses
 * the variant's overrides of frame-path stages. At the end of each step's hold
 * the gates are judged on the step's frames of each arm (canary.c). */
#define CFG_MAX_CANARY_STEPS 16
#define CFG_MAX_CANARY_DISTS 8
typedef struct {
    double pct;              /* share of sessions in the variant, (0, 100], non-decreasing */
    double hold_s;           /* how long the step runs before its gates are judged, > 0 */
} canary_step_cfg;

typedef struct {
    int nsteps;                      /* 0: no canary */
    canary_step_cfg steps[CFG_MAX_CANARY_STEPS];
    /* the variant, per stage: service times x scale[s] (default 1), drawn from
     * dists[dist_of[s]] instead of the stage's own service when dist_of[s] >= 0 */
    double scale[CFG_MAX_STAGES];
    signed char dist_of[CFG_MAX_STAGES];
    dist_t dists[CFG_MAX_CANARY_DISTS];
    int ndists;
    /* gates (0 turns a gate off) */
    double p99_ratio;        /* abort when variant frame p99 > this x baseline p99 (1.3) */
    double drop_rate;        /* ... when the variant's frame drop rate > this (0.02) */
    double drop_ratio;       /* ... when it is > this x the baseline's (0: off) */
    double gpu_util;         /* ... when the GPUs' mean utilization over the step > this (0.9) */
    long min_frames;         /* judge only once the variant has this many frames in the step (10000) */
} canary_cfg;

/* ---- fleet (issue 6): traffic over time and autoscaling ----------------
 * workload.profile makes concurrency follow a target curve: sessions start
 * (a non-homogeneous Poisson process, models/profile.c) and end (session
 * length drawn from `session`), each a periodic frame source like a stream.
 * autoscale adds and removes GPUs with cold starts and a warm pool
 * (models/autoscale.c). Both are off when kind == PROFILE_NONE / !on. */
typedef enum { PROFILE_NONE, PROFILE_DIURNAL, PROFILE_STEPS, PROFILE_TRACE } profile_kind;
#define CFG_MAX_PROFILE_STEPS 64
typedef struct {
    double at_s;             /* when the step starts (>= 0, ascending) */
    double streams;          /* the target it reaches (>= 0) */
    double ramp_s;           /* reached linearly over this long (0: at once) */
} profile_step;

typedef struct {
    profile_kind kind;
    /* diurnal: target(t) = trough + (peak - trough) (1 + cos(2 pi (t - peak_at) / period)) / 2 */
    double peak, trough, period_s, peak_at_s;
    /* steps: from workload.streams at t = 0, each step ramps to its streams */
    profile_step steps[CFG_MAX_PROFILE_STEPS];
    int nsteps;
    /* trace: concurrent streams at times (s), linear in between, held past the ends */
    double *trace_t, *trace_n;   /* malloc'd, ntrace >= 1, times strictly ascending */
    int ntrace;
    dist_t session;          /* session length (ms), required with a profile */
} profile_cfg;

typedef struct {
    bool on;
    int min_gpus, max_gpus;  /* 1 <= min <= max; cluster.gpus is set to max_gpus (the slots) */
    int initial_gpus;        /* serving at t = 0: the cluster.gpus written, within [min, max] */
    double up_util, up_for_s;      /* mean utilization of serving GPUs above this for this long */
    double down_util, down_for_s;  /* ... below this for this long */
    double queue_fill;       /* > 0: the fullest GPU queue above this fraction scales up at once */
    int step;                /* GPUs added or removed per decision, >= 1 */
    double cooldown_s;       /* no two decisions within this, >= 0 */
    dist_t cold_start;       /* a new GPU's start-up time (ms) */
    int warm_pool;           /* started, idle GPUs that join at once, >= 0 */
    double sla_window_s;     /* SLA-violation windows (60: minutes) */
} autoscale_cfg;

typedef struct {
    char name[CFG_NAME_MAX];
    char path[4096];         /* the scenario file, for messages ("" if built in code) */
    uint64_t seed;
    double duration_s;       /* measured time per replication, after warm-up (> 0) */
    double warmup_s;         /* discarded prefix (>= 0); ignored when warmup_auto */
    bool warmup_auto;        /* choose the warm-up by MSER-5 on a pilot run */
    int replications;        /* >= 1 */
    workload_cfg workload;
    stage_cfg *stages;       /* malloc'd, nstages >= 1, names unique */
    int nstages;
    double buckets_ms[CFG_MAX_BUCKETS]; /* Prometheus bucket upper bounds, ascending */
    int nbuckets;
    cluster_cfg cluster;
    double frame_deadline_ms;    /* > 0: an item older than this (since arrival) when a
                                    server reaches it is dropped as `timeout`; 0 = none */
    sla_cfg sla[CFG_MAX_SLA];
    int nsla;
    degrade_cfg degrade;
    alert_cfg alerts;
    sweep_axis axes[CFG_MAX_AXES];   /* the scenario's sweep (vlsim run ignores it) */
    int naxes;
    canary_cfg canary;               /* canary rollout (nsteps 0: none) */
    /* fleet (issue 6) */
    profile_cfg profile;             /* workload.profile */
    autoscale_cfg autoscale;
    cpu_cfg cpu;                 /* cores shared by the stages (issue 7); cores 0: off */
} scenario_cfg;

/* Fill the defaults that a scenario may omit (everything but stages). */
void cfg_defaults(scenario_cfg *c);
/* Defaults of one stage: workers, 1 server, unbounded, max_batch 1, keep all,
 * and the priority its name implies. */
void cfg_stage_defaults(stage_cfg *s, const char *name);
/* A table's time at x (a batch size, or a batch's tokens), interpolated
 * linearly between its points (see batch_table for the ends). */
double cfg_table_ms(const batch_table *t, double k);
/* Release what a config owns (stages and their distributions). */
void cfg_free(scenario_cfg *c);

#endif
