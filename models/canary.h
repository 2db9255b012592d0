/* canary.h — a canary rollout inside one replication (seed 004 §3).
 *
 * Sessions are routed to the variant arm by a hash of the session id: a
 * session is in the variant while hash(session) / 2^53 < pct / 100 of the
 * current step, so it sticks to its arm for the whole step, and a session in
 * the variant at 1 % is still in it at 5 % (the arms nest). Frames carry
 * their arm from arrival; a variant frame is served with the variant's
 * overrides of its stages (canary_variant_ms). Each arm's frames are
 * measured separately over the current step — frame p99 from a fixed-size
 * histogram per arm, reset at every step, and the drop rate — and the GPUs'
 * utilization over the step for both arms together.
 *
 * At the end of a step's hold the gates are judged, but only once the
 * variant has min_frames frames (completed or dropped) in the step; until
 * then the step goes on and the decision is made at the frame that brings
 * the count to min_frames. The rollout aborts when the variant's p99 >
 * p99_ratio x the baseline's (judged only while the baseline too has
 * min_frames frames: a step at 100 % has no baseline), its drop rate >
 * drop_rate, its drop rate > drop_ratio x the baseline's (a baseline without
 * drops counts as one drop in its frames), or the GPUs were
 * busy more than gpu_util of the step. On abort every session returns to
 * the baseline (rollback) and the rollout ends; when every step has passed
 * it is complete and the last step's split stays.
 *
 * This module knows nothing of the pipeline's internals: the pipeline tells
 * it about arrivals, drops and completions and asks it for the arm of a
 * session and when to decide next. It never prints and never allocates
 * after canary_init. */
#ifndef VL_CANARY_H
#define VL_CANARY_H

#include <math.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "models/config.h"
#include "models/dist.h"
#include "sim/hist.h"

enum { CANARY_BASE = 0, CANARY_VARIANT = 1 };

/* What became of a step. */
typedef enum {
    CANARY_NOT_REACHED,     /* the rollout ended (or the run did) before it */
    CANARY_RUNNING,         /* the run ended during its hold */
    CANARY_WAITING,         /* its hold was over, but the run ended before the variant had
                               min_frames frames: no decision */
    CANARY_PASSED,
    CANARY_ABORTED
} canary_verdict;

/* Why a step aborted (a bit set per gate that tripped). */
enum {
    CANARY_R_P99 = 1, CANARY_R_DROP = 2, CANARY_R_DROP_RATIO = 4, CANARY_R_GPU = 8,
    CANARY_NREASONS = 4
};

typedef struct {
    double pct;
    double start_s, end_s;       /* simulated s, warm-up included; end: the decision, or the
                                    run's end (NaN when not reached) */
    canary_verdict verdict;
    unsigned reasons;            /* CANARY_R_* bits, when aborted */
    uint64_t arrived[2], completed[2], dropped[2];   /* frames in the step, per arm */
    double p50_ms[2], p99_ms[2]; /* frame end-to-end latency per arm over the step */
    double drop_rate[2];         /* dropped / (completed + dropped), per arm */
    double gpu_util;             /* the GPUs' mean utilization over the step (NaN: no GPUs) */
} canary_step_rec;

typedef enum { CANARY_EV_START, CANARY_EV_WAIT, CANARY_EV_PASS, CANARY_EV_ABORT,
               CANARY_EV_COMPLETE } canary_event_kind;

typedef struct {
    double t_s;                  /* simulated s, warm-up included */
    int step;
    canary_event_kind what;
} canary_event;

#define CANARY_MAX_EVENTS (3 * CFG_MAX_CANARY_STEPS + 2)

/* One replication's rollout: fixed size, no pointers (copied by value). */
typedef struct {
    int nsteps;                  /* 0: no canary */
    canary_step_rec step[CFG_MAX_CANARY_STEPS];
    int aborted_at;              /* the step that aborted, or -1 */
    unsigned reasons;            /* ... and why (CANARY_R_* bits) */
    int completed;               /* every step passed */
    int reached;                 /* steps started */
    canary_event timeline[CANARY_MAX_EVENTS];
    int nevents;
} canary_rec;

typedef enum { CANARY_IDLE, CANARY_HOLD, CANARY_WAIT, CANARY_OVER } canary_state;

/* The run-time state of the rollout in one replication. */
typedef struct {
    const canary_cfg *cfg;
    canary_rec *rec;
    uint64_t salt;               /* this replication's session hash */
    double frac;                 /* current share in the variant, 0..1 (0: none) */
    int step;                    /* the current step, -1 before the start */
    canary_state state;
    int ngpus;
    double t_step, busy0;        /* the step's start (ms) and the GPUs' busy ms then */
    hist_t e2e[2];               /* frame latencies of the step, per arm */
    uint64_t arrived[2], completed[2], dropped[2];
} canary_run;

/* The hash of a session id as a number in [0, 1): splitmix64's finaliser
 * over (session xor salt), its top 53 bits. */
static inline double canary_unit(uint64_t salt, uint64_t session)
{
    uint64_t z = (session ^ salt) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* The arm of a session under a variant share frac (0..1). */
static inline int canary_arm_at(uint64_t salt, uint64_t session, double frac)
{
    return frac > 0 && canary_unit(salt, session) < frac ? CANARY_VARIANT : CANARY_BASE;
}

static inline int canary_arm(const canary_run *c, uint64_t session)
{
    return canary_arm_at(c->salt, session, c->frac);
}

/* A variant frame's service draw at stage s: the variant's distribution (or
 * the stage's own, base), from the same random stream the baseline would use,
 * times the variant's scale — so the regression is the only difference. */
static inline double canary_variant_ms(const canary_cfg *cc, int s, const dist_t *base, gsl_rng *r)
{
    const dist_t *d = cc->dist_of[s] >= 0 ? &cc->dists[(int)cc->dist_of[s]] : base;
    return dist_sample(d, r) * cc->scale[s];
}

/* Set-up: 0, or -1 when out of memory. With cfg->nsteps == 0 it only clears
 * rec and the rollout never starts. */
int canary_init(canary_run *c, const canary_cfg *cfg, int ngpus, uint64_t salt, canary_rec *rec);
void canary_free(canary_run *c);

static inline int canary_measuring(const canary_run *c)
{
    return c->state == CANARY_HOLD || c->state == CANARY_WAIT;
}

static inline void canary_arrived(canary_run *c, int arm)
{
    if (canary_measuring(c))
        c->arrived[arm]++;
}

static inline void canary_dropped(canary_run *c, int arm)
{
    if (canary_measuring(c))
        c->dropped[arm]++;
}

/* A frame of arm completed with end-to-end latency e2e_ms. Returns 1 when a
 * decision is due now (the hold is over and this frame brings the variant to
 * min_frames): the caller then calls canary_decide. */
static inline int canary_completed(canary_run *c, int arm, double e2e_ms)
{
    if (!canary_measuring(c))
        return 0;
    c->completed[arm]++;
    hist_record(&c->e2e[arm], e2e_ms);
    return c->state == CANARY_WAIT && arm == CANARY_VARIANT
        && (long)(c->completed[1] + c->dropped[1]) >= c->cfg->min_frames;
}

/* Start the rollout (step 0) at now_ms, the GPUs having been busy busy_ms in
 * all so far. Returns when the step's hold ends (ms), or INFINITY. */
double canary_begin(canary_run *c, double now_ms, double busy_ms);
/* The end of a step's hold, or a decision that canary_completed said is due:
 * judge the gates (or wait for min_frames), roll back or start the next
 * step. Returns when to call again (ms), or INFINITY. */
double canary_decide(canary_run *c, double now_ms, double busy_ms);
/* The end of the run: record the step in progress. */
void canary_close(canary_run *c, double now_ms, double busy_ms);

/* ---- names and summaries, for reports ------------------------------------ */

const char *canary_verdict_name(canary_verdict v);
const char *canary_event_name(canary_event_kind k);
/* "p99", "drop_rate", "drop_ratio", "gpu_util": the name of reason bit k. */
const char *canary_reason_name(int k);
/* The reasons as "p99+drop_rate" into buf ("" when none). */
const char *canary_reasons(unsigned reasons, char *buf, size_t size);

/* What the replications' rollouts did, counted. */
typedef struct {
    int nrep, nsteps;
    int aborted, completed;          /* rollouts that aborted / passed every step */
    int unfinished;                  /* neither, when the run ended (running or waiting) */
    int aborted_at[CFG_MAX_CANARY_STEPS];   /* aborts at each step */
    int reached[CFG_MAX_CANARY_STEPS];      /* rollouts that started each step */
    int waiting[CFG_MAX_CANARY_STEPS];      /* ... that ended waiting for min_frames there */
    int by_reason[CANARY_NREASONS];  /* aborts in which each gate tripped */
} canary_summary;

void canary_summarize(const canary_rec *reps, int nrep, canary_summary *out);

/* The Wilson score interval for a binomial proportion x/n at confidence
 * level (0.95): *lo, *hi; both NaN when n == 0. */
void canary_wilson(uint64_t x, uint64_t n, double level, double *lo, double *hi);

#endif
