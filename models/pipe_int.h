/* pipe_int.h — the run-time state of one replication, shared by
 * pipeline.c (workload, worker stages, the event loop) and gpu.c (placement
 * and batching on the GPUs), and by the parts of the run that act on it:
 * control.c (the controller and alerts), profile.c (sessions) and
 * autoscale.c (the fleet). Not part of any public interface: nothing else
 * may include it. */
#ifndef VL_PIPE_INT_H
#define VL_PIPE_INT_H

#include <stdint.h>
#include <stdio.h>
#include "models/canary.h"
#include "models/pipeline.h"
#include "sim/ev.h"
#include "sim/tw.h"
#include "sim/whist.h"
#include "models/cores.h"
#include "models/stalls.h"

enum { EV_ARRIVE, EV_QUERY, EV_DEPART, EV_RELEASE, EV_GPU_DONE, EV_GPU_WAKE, EV_CONTROL,
       EV_SESSION, EV_GPU_READY, EV_WARMUP, EV_END, EV_CANARY, EV_CORES, EV_WOKEN, EV_HANDOFF,
       EV_SOURCED, EV_SPEED, EV_UNHOLD, EV_SLEEP_DUE, EV_SLEPT, EV_QUERIED };
enum { ITEM_FRAME, ITEM_QUERY };
#define NO_ITEM UINT32_MAX

typedef struct {
    double t_sys;      /* arrival at the first stage */
    double t_enq;      /* arrival at the current stage */
    double t_start;    /* start of service at the current stage */
    double svc;        /* service time at the current stage (the batch's, on a GPU) */
    uint64_t seq;      /* frame number within its stream */
    uint32_t stream;   /* the stream (session) it belongs to */
    uint32_t left;     /* decode: iterations still to run */
    uint32_t tokens;   /* tokens the item carries (set by stages with tokens_out) */
    uint32_t next;     /* free-list link */
    uint8_t kind;      /* ITEM_FRAME or ITEM_QUERY */
    uint8_t arm;       /* canary: CANARY_BASE or CANARY_VARIANT, fixed at arrival */
} item_t;

typedef struct {       /* ring buffer of waiting item indices */
    uint32_t *buf;
    size_t head, n, cap;   /* cap is a power of two */
} fifo_t;

typedef struct {
    const stage_cfg *cfg;
    stage_stats *st;
    gsl_rng *rng;          /* service times */
    gsl_rng *keep_rng;     /* KEEP_RATIO decisions */
    gsl_rng *jit_rng;      /* jitter sources: retransmits, cache misses */
    fifo_t q;              /* workers: the queue */
    fifo_t woken_for;      /* cpu workers: the items threads are being woken for, oldest
                              first; a thread that wakes takes the oldest */
    fifo_t *gq;            /* GPU: one queue per GPU */
    fifo_t *active;        /* decode: the sequences being generated, per GPU */
    double *step_ready;    /* decode: when the active set's last step ended, per GPU */
    int next;              /* the next stage on this stage's path, or -1 */
    double *scene_next;    /* scene-change sampler: each stream's next change (ms) */
    int *scene_left;       /* ... and the frames of its burst still to keep */
    int busy;              /* workers: servers busy */
    size_t waiting;        /* items waiting (all queues of the stage) */
    int pool_first, pool_n;/* GPU: the GPUs this stage may use */
    tw_t qlen, busy_tw;
} station_t;

typedef struct {
    int busy;
    int stage;             /* stage of the running batch */
    uint32_t *batch;       /* its items */
    int nbatch;
    double t_start;        /* when the running batch started */
    double wake_at;        /* the pending wake-up, or INFINITY */
    int *order;            /* GPU stages that may run here, in policy order */
    int norder;
    tw_t busy_tw;
    int kick_pending;      /* gpu_done: look at this GPU once the batch has moved on */
    double busy_total;     /* busy ms since the start, warm-up included (alerts) */
} gpu_t;

/* The degradation controller's and the alert rules' state (control.c). */
typedef struct {
    int level;                   /* modes[0..level-1] are on */
    int fps_on, quality_on, drop_resp_on;
    double last_change;          /* time of the last level change (-INFINITY: never) */
    double level_since;          /* start of the current level's measured time */
    whist_t frame_win;           /* frame latencies over the controller's window */
    whist_t alert_win;           /* ... over the alerts' window */
    uint64_t *slot_arr, *slot_drop;   /* frames arrived / dropped per alert slot */
    uint64_t win_arr, win_drop;
    int aslots, acur;
    double *busy_ring;           /* cumulative busy ms per GPU at each tick, for the idle rule */
    int nlook, look_cur, look_n;
    uint64_t tick_arr;           /* frames arrived since the last tick (the series) */
    uint8_t firing[ALERT_NRULES];
    uint8_t *gpu_firing;         /* per GPU, for ALERT_GPU_IDLE */
} ctl_t;

typedef struct {
    const scenario_cfg *cfg;
    rep_stats *out;
    FILE *trace;                 /* pipe_run_traced: every completed span, else NULL */
    uint64_t *trace_id;          /* tracing: each item slot's arrival number */
    uint64_t trace_next;
    ctl_t ctl;
    ev_queue evq;
    station_t *stn;
    gpu_t *gpu;
    int ngpus;
    item_t *items;
    uint32_t nitems, cap_items, free_head, in_flight;
    gsl_rng *arr_rng;
    gsl_rng *query_rng;          /* queries: times, streams, kinds */
    double query_gap_ms;         /* mean time between response-path items, all streams */
    int first_frame, first_response;   /* the first stage of each path, or -1 */
    uint64_t *frame_no;          /* periodic: next frame number per stream */
    double *phase;               /* periodic: phase per stream (ms) */
    double period_ms, interarrival_ms;
    uint64_t poisson_seq;        /* poisson: arrivals so far (each its own session) */
    double t_reset;              /* start of the measured window */
    mser_t *pilot;
    char *err;
    size_t errlen;
    int failed;
    int defer_kicks;             /* a batch's frames are moving on: GPUs wait for all of them */
    uint64_t place_salt;         /* hash placement: this replication's session ids */
    canary_run canary;           /* the canary rollout (canary.c) */
    struct prof_state *prof;     /* workload.profile: the session process (profile.c) */
    struct asc_state *asc;       /* profile or autoscale: the fleet (autoscale.c) */
    cores_t cores;               /* cpu.cores > 0: the cores the stages' threads share */
    stalls_t stalls;             /* cpu.stalls: the host's spells of not running a core */
    gsl_rng *stall_rng;          /* cpu.stalls: the spells' draws and the woken threads' cores
                                    (NULL: no stalls) */
    double speed_until;          /* cpu.speed: no window boundary is scheduled at or after this */
    int handoffs_running;        /* cpu: of cores' jobs, the handoffs' (not the stages' work) */
    int handing;                 /* cpu: the worker stage whose thread is passing an item on
                                    now (-1: none); its handoff is on that thread's path */
    int handed;                  /* cpu: that thread started its handoff (it takes its next
                                    item when the handoff ends) */
    gsl_rng *wake_rng;           /* cpu.wake_busy / held: the wake-ups' draws */
    gsl_rng *place_rng;          /* cpu.stack: the cores' placements and moves */
    int gpu_going_on;            /* cpu.stack: 1 + the GPU thread whose batch just ended, while
                                    it looks for its next (0: none) */
    int held_core;               /* cpu.stack: the core the first held thread released at
                                    held_core_t takes, the ended job's (-1: none) */
    double held_core_t;
    struct held_wake *held;      /* cpu: woken threads queued behind a running job, a FIFO ring */
    size_t held_head, held_n, held_cap;
    fifo_t src_due;              /* cpu.source one_thread: the frames due, not yet handed over,
                                    in time order; not empty exactly while its thread wakes */
} pipe_t;

/* Stage s's threads run on the shared cores (cpu: in the scenario). */
static inline int pipe_on_cores(const pipe_t *p, int s)
{
    return p->cfg->cpu.cores > 0 && (p->cfg->cpu.stage_mask >> s & 1);
}

/* Stage s's threads sleep out each service time (cpu.sleepers): off the
 * cores, they wake from that timed wait as late as any timed wait does. */
static inline int pipe_sleeps(const pipe_t *p, int s)
{
    return p->cfg->cpu.cores > 0 && (p->cfg->cpu.sleeper_mask >> s & 1);
}

/* pipeline.c */
/* cpu: a thread asleep at stage s is woken for an item handed over: 1 when
 * that takes time (wake_ms, wake_busy or wake_held) or may (stalls). A
 * sleeper's thread too: it runs no work on the cores, but is woken as
 * any thread is. */
static inline int pipe_wakes(const pipe_t *p, int s)
{
    const cpu_cfg *u = &p->cfg->cpu;
    return (pipe_on_cores(p, s) || pipe_sleeps(p, s))
           && (u->wake_ms > 0 || u->nwake_busy > 0 || u->nwake_held > 0 || u->stall_per_s > 0);
}
/* cpu: wake a sleeping thread for an item handed over from stage `from`
 * (-1: none) at now: its event (kind, a, b) comes after wake_ms or a draw
 * from wake_busy by the jobs on the cores, or, held (wake_held), when the
 * next of the stages' jobs on the cores ends. */
void pipe_wake(pipe_t *p, int from, double now, uint32_t kind, uint32_t a, uint64_t b);
/* cpu: a timed wait due now wakes, its event (kind, a, b) after timer_ms
 * (wake_ms without it) or a draw from timer_busy, or held (timer_held). */
void pipe_timer_wake(pipe_t *p, double now, uint32_t kind, uint32_t a, uint64_t b);
/* cpu: a stage's job on the cores has ended: the first held thread runs now. */
void pipe_job_ended(pipe_t *p, double now);
/* cpu.stack: the core a woken thread starting now takes (the ended job's, for the first
 * held thread that end released), or -1: placed by the cores. Consumed. */
int pipe_held_core(pipe_t *p, double now);
int pipe_fifo_push(fifo_t *q, uint32_t v);
uint32_t pipe_fifo_pop(fifo_t *q);
void pipe_drop(pipe_t *p, uint32_t i);
int pipe_is_stale(const pipe_t *p, const station_t *stn, uint32_t i, double now);
void pipe_finish(pipe_t *p, int s, uint32_t i, double now);
double pipe_cache_miss_ms(station_t *stn);
void pipe_fail(pipe_t *p, const char *what);
void pipe_queue_full(pipe_t *p, station_t *stn, fifo_t *q, uint32_t i, int *keep_new);

/* control.c */
int ctl_setup(pipe_t *p);
void ctl_free(pipe_t *p);
void ctl_tick(pipe_t *p, double now);
void ctl_reset(pipe_t *p, double now);
void ctl_close(pipe_t *p, double t_end);
void pipe_policy_drop(pipe_t *p, int s, uint32_t i);

/* Called on every frame: inline, the hot path of every run. */
static inline double pipe_quality(const pipe_t *p, int s)
{
    return p->ctl.quality_on ? p->cfg->degrade.quality_scale[s] : 1.0;
}

/* The windows of the controller and the alerts see every frame that
 * completes, arrives or is dropped. */
static inline void ctl_frame_done(pipe_t *p, double e2e)
{
    whist_add(&p->ctl.frame_win, e2e);
    whist_add(&p->ctl.alert_win, e2e);
}

static inline void ctl_frame_arrived(pipe_t *p)
{
    p->ctl.slot_arr[p->ctl.acur]++;
    p->ctl.win_arr++;
    p->ctl.tick_arr++;
}

static inline void ctl_frame_dropped(pipe_t *p)
{
    p->ctl.slot_drop[p->ctl.acur]++;
    p->ctl.win_drop++;
}

/* pipeline.c: start periodic source j (schedule its next frame) */
int pipe_source_start(pipe_t *p, uint32_t j, double now);

/* profile.c (fleet, issue 6). With a profile, items[].stream and the
 * per-source arrays (frame_no, phase, scene state) are indexed by the
 * session's slot; prof_session_id gives the session's own id. */
uint32_t prof_initial_slots(const scenario_cfg *cfg);
int prof_setup(pipe_t *p, uint32_t rep);
int prof_start(pipe_t *p);
void prof_free(pipe_t *p);
void prof_reset(pipe_t *p, double now);
void prof_close(pipe_t *p, double t_end);
void prof_event(pipe_t *p, uint32_t what, uint64_t arg, double now);
int prof_frame_due(pipe_t *p, uint32_t j, double now);
uint32_t prof_session_id(const pipe_t *p, uint32_t j);
int prof_query_stream(pipe_t *p, gsl_rng *r, uint32_t *stream);
uint32_t prof_slots(const pipe_t *p);
int *prof_gpu_map(pipe_t *p);
const uint8_t *prof_live_map(const pipe_t *p);

/* autoscale.c (fleet, issue 6) */
int asc_setup(pipe_t *p, uint32_t rep);
void asc_free(pipe_t *p);
void asc_reset(pipe_t *p, double now);
void asc_close(pipe_t *p, double t_end);
void asc_tick(pipe_t *p, double now);
void asc_ready(pipe_t *p, uint32_t what, double now);
void asc_session_start(pipe_t *p, uint32_t j, double now);
void asc_session_end(pipe_t *p, uint32_t j);
int asc_place(const pipe_t *p, uint32_t j);
void asc_frame(pipe_t *p, double e2e, double now);   /* e2e < 0: dropped */

/* gpu.c */
int gpu_setup(pipe_t *p);
void gpu_free(pipe_t *p);
void gpu_enter(pipe_t *p, int from, int s, uint32_t i, double now);
void gpu_done(pipe_t *p, int g, double now);
void gpu_wake(pipe_t *p, int g, double t, int due);
void gpu_reset(pipe_t *p, double now);
void gpu_close(pipe_t *p, double t_end);
/* Busy ms of all GPUs together since the start, the running batches' time so far included. */
double gpu_busy_ms(const pipe_t *p, double now);

#endif
