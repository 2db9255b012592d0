/* profile.c — traffic over time: the target curve and the session process.
 *
 * The curve. diurnal: trough + (peak - trough) (1 + cos(2 pi (t - peak_at)
 * / period)) / 2. steps: workload.streams from t = 0; step i holds the level
 * until at_s, then moves linearly to its streams over ramp_s (0: a jump).
 * trace: the CSV's points, linear in between.
 *
 * The session process. Let n(t) be the target and m the mean session
 * length. If sessions start as a non-homogeneous Poisson process of rate
 * lambda(t) and each lasts an exponential time of mean m, the expected
 * number in progress N(t) obeys dN/dt = lambda(t) - N(t)/m (arrivals minus
 * departures); choosing
 *     lambda(t) = n'(t) + n(t)/m                       (Little's law, L = lambda W)
 * and starting at N(0) = n(0) makes E N(t) = n(t) at every t. For other
 * session-length laws (M_t/G/inf) it is exact while the target is constant
 * and lags a changing one by about the mean residual session. Where the
 * target falls faster than sessions end (n' < -n/m) the rate is clipped at
 * 0 and concurrency follows as fast as departures allow. A jump up starts
 * its sessions at once (rounded, the fractions carried to the next jump).
 * The process is drawn by thinning: on each knot segment lambda is linear,
 * so its larger end bounds it there (diurnal: one global bound); a
 * candidate at rate B is kept with probability lambda/B.
 * The sessions in progress at t = 0 get their remaining length: a fresh
 * draw when sessions are exponential (memoryless: exact), else U x a draw
 * (exact for constant lengths, an approximation otherwise).
 *
 * Each session is a periodic source of the pipeline in a slot (frame
 * number, phase, the sampler's per-stream state); a slot is reused once its
 * session ends, and the slot arrays grow only when more sessions are in
 * progress than ever before, so memory follows the peak concurrency. A
 * session emits the frames whose nominal times fall before its end; it
 * ends (an event) at its end, or at its last frame if jitter made that one
 * later, and only then is its slot free. Each session has an id of its own
 * (placement hashes it). This file never prints; it works on the pipeline's state through
 * pipe_int.h. */
#include "models/profile.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models/pipe_int.h"
#include "sim/rng.h"

#define STREAM_SESSIONS 0x5e55u

/* ---- the curve ----------------------------------------------------------- */

int prof_curve_init(prof_curve *c, const profile_cfg *pc, double base_streams)
{
    memset(c, 0, sizeof *c);
    c->kind = pc->kind;
    c->pc = pc;
    if (pc->kind == PROFILE_TRACE) {
        c->kt = pc->trace_t;
        c->kn = pc->trace_n;
        c->nk = pc->ntrace;
        return 0;
    }
    if (pc->kind != PROFILE_STEPS)
        return 0;
    c->own = 1;
    c->kt = malloc((size_t)(2 * pc->nsteps + 1) * sizeof *c->kt);
    c->kn = malloc((size_t)(2 * pc->nsteps + 1) * sizeof *c->kn);
    if (!c->kt || !c->kn) {
        prof_curve_free(c);
        return -1;
    }
    double level = base_streams;
    c->kt[0] = 0;
    c->kn[0] = level;
    c->nk = 1;
    for (int i = 0; i < pc->nsteps; i++) {
        const profile_step *s = &pc->steps[i];
        c->kt[c->nk] = s->at_s;
        c->kn[c->nk++] = level;
        c->kt[c->nk] = s->at_s + s->ramp_s;
        c->kn[c->nk++] = s->streams;
        level = s->streams;
    }
    return 0;
}

void prof_curve_free(prof_curve *c)
{
    if (c->own) {
        free(c->kt);
        free(c->kn);
    }
    memset(c, 0, sizeof *c);
}

/* The last knot at or before t (-1: before the first). */
static int knot_at(const prof_curve *c, double t)
{
    int lo = 0, hi = c->nk - 1;
    if (c->nk == 0 || t < c->kt[0])
        return -1;
    while (lo < hi) {                    /* largest k with kt[k] <= t */
        int mid = (lo + hi + 1) / 2;
        if (c->kt[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

double prof_target(const prof_curve *c, double t)
{
    if (c->kind == PROFILE_DIURNAL) {
        const profile_cfg *p = c->pc;
        return p->trough + (p->peak - p->trough)
             * (1 + cos(2 * M_PI * (t - p->peak_at_s) / p->period_s)) / 2;
    }
    if (c->nk == 0)
        return 0;
    int k = knot_at(c, t);
    if (k < 0)
        return c->kn[0];
    if (k == c->nk - 1)
        return c->kn[k];
    return c->kn[k] + (c->kn[k + 1] - c->kn[k]) * (t - c->kt[k]) / (c->kt[k + 1] - c->kt[k]);
}

double prof_slope(const prof_curve *c, double t)
{
    if (c->kind == PROFILE_DIURNAL) {
        const profile_cfg *p = c->pc;
        double w = 2 * M_PI / p->period_s;
        return -(p->peak - p->trough) / 2 * w * sin(w * (t - p->peak_at_s));
    }
    int k = knot_at(c, t);
    if (k < 0 || k >= c->nk - 1)
        return 0;
    return (c->kn[k + 1] - c->kn[k]) / (c->kt[k + 1] - c->kt[k]);
}

double prof_peak(const prof_curve *c)
{
    if (c->kind == PROFILE_DIURNAL)
        return c->pc->peak > c->pc->trough ? c->pc->peak : c->pc->trough;
    double m = 0;
    for (int k = 0; k < c->nk; k++)
        if (c->kn[k] > m)
            m = c->kn[k];
    return m;
}

double prof_rate(const prof_curve *c, double t, double mean_s)
{
    double r = prof_slope(c, t) + prof_target(c, t) / mean_s;
    return r > 0 ? r : 0;
}

/* ---- the session process ---------------------------------------------------- */

struct prof_state {
    prof_curve curve;
    double mean_s;           /* mean session length, s */
    gsl_rng *rng;            /* arrivals, lengths, phases */
    double bound;            /* the pending candidate's thinning rate (per s) */
    uint32_t cap, nactive, nfree;
    uint32_t *free_stack;
    uint32_t *sid;           /* per slot: its session's id */
    double *end_ms;          /* per slot: when the session ends */
    int *gpu;                /* per slot: its GPU (autoscaling), or -1 */
    uint8_t *live;
    uint32_t next_id;
    double carry;            /* jumps: the fractions of sessions not yet started */
    tw_t conc;               /* sessions in progress, over the measured window */
    uint64_t started;
    int peak;
};

enum { SESS_CANDIDATE, SESS_JUMP, SESS_END };

/* The sampler keeps per-stream scene-change state at this stage. */
static int has_scenes(const stage_cfg *c)
{
    return c->keep == KEEP_RATIO && c->scene_per_min > 0;
}

/* Grow every per-slot array to ncap (the pipeline's too). */
static int grow(pipe_t *p, uint32_t ncap)
{
    struct prof_state *s = p->prof;
    uint32_t old = s->cap;
#define GROW(ptr) do {                                              \
        void *np_ = realloc((ptr), (size_t)ncap * sizeof *(ptr));      \
        if (!np_)                                                       \
            return -1;                                                  \
        (ptr) = np_;                                                    \
    } while (0)
    GROW(s->free_stack);
    GROW(s->sid);
    GROW(s->end_ms);
    GROW(s->gpu);
    GROW(s->live);
    GROW(p->frame_no);
    GROW(p->phase);
    for (int st = 0; st < p->cfg->nstages; st++)
        if (has_scenes(&p->cfg->stages[st])) {
            GROW(p->stn[st].scene_next);
            GROW(p->stn[st].scene_left);
        }
#undef GROW
    for (uint32_t j = old; j < ncap; j++) {
        s->live[j] = 0;
        s->gpu[j] = -1;
        p->frame_no[j] = 0;
        p->phase[j] = 0;
        for (int st = 0; st < p->cfg->nstages; st++)
            if (p->stn[st].scene_next) {
                p->stn[st].scene_next[j] = 0;
                p->stn[st].scene_left[j] = 0;
            }
    }
    for (uint32_t j = ncap; j > old; j--)       /* lowest slot on top */
        s->free_stack[s->nfree++] = j - 1;
    s->cap = ncap;
    return 0;
}

/* Slots to start with: the peak and five standard deviations of its
 * Poisson fluctuation, so the arrays almost never grow. */
uint32_t prof_initial_slots(const scenario_cfg *cfg)
{
    prof_curve c;
    if (prof_curve_init(&c, &cfg->profile, cfg->workload.streams) != 0)
        return 64;
    double peak = prof_peak(&c);
    prof_curve_free(&c);
    return (uint32_t)ceil(peak + 5 * sqrt(peak) + 8);
}

static int start_session(pipe_t *p, double now, int initial)
{
    struct prof_state *s = p->prof;
    if (s->nfree == 0 && grow(p, s->cap * 2) != 0) {
        pipe_fail(p, "out of memory growing the session table");
        return -1;
    }
    uint32_t j = s->free_stack[--s->nfree];
    const dist_t *len = &p->cfg->profile.session;
    double ms = dist_sample(len, s->rng);
    if (initial && len->kind != DIST_EXPONENTIAL)
        ms *= gsl_rng_uniform(s->rng);
    s->sid[j] = s->next_id++;
    s->end_ms[j] = now + ms;
    s->live[j] = 1;
    s->nactive++;
    if ((int)s->nactive > s->peak)
        s->peak = (int)s->nactive;
    tw_set(&s->conc, now, s->nactive);
    if (now >= p->t_reset)
        s->started++;
    p->frame_no[j] = 0;
    p->phase[j] = now + (p->cfg->workload.phase == PHASE_RANDOM
                         ? gsl_rng_uniform(s->rng) * p->period_ms : 0.0);
    for (int st = 0; st < p->cfg->nstages; st++)
        if (p->stn[st].scene_next) {
            p->stn[st].scene_next[j] = now + dist_exp_draw(p->stn[st].keep_rng,
                                                           60000.0 / p->stn[st].cfg->scene_per_min);
            p->stn[st].scene_left[j] = 0;
        }
    s->gpu[j] = -1;
    if (p->asc)
        asc_session_start(p, j, now);
    return pipe_source_start(p, j, now);
}

int prof_frame_due(pipe_t *p, uint32_t j, double now)
{
    struct prof_state *s = p->prof;
    if (p->phase[j] + (double)p->frame_no[j] * p->period_ms < s->end_ms[j])
        return 1;
    /* no more frames: the session ends at its end (or now, if a late frame
     * arrived after it), and only then is its slot free */
    double at = s->end_ms[j] > now ? s->end_ms[j] : now;
    if (ev_push(&p->evq, at, EV_SESSION, SESS_END, j) != 0)
        pipe_fail(p, "out of memory growing the event list");
    return 0;
}

static void end_session(pipe_t *p, uint32_t j, double now)
{
    struct prof_state *s = p->prof;
    s->live[j] = 0;
    s->nactive--;
    tw_set(&s->conc, now, s->nactive);
    if (p->asc)
        asc_session_end(p, j);
    s->free_stack[s->nfree++] = j;
}

/* Schedule the next session event after t (s): a thinning candidate on the
 * current segment, or a jump at the next knot, or nothing (rate 0 to the end). */
static int schedule_next(pipe_t *p, double t)
{
    struct prof_state *s = p->prof;
    const prof_curve *c = &s->curve;
    for (int guard = 0; guard < 1000000; guard++) {
        double seg_end = INFINITY, bound;
        if (c->kind == PROFILE_DIURNAL) {
            const profile_cfg *pc = c->pc;
            bound = fabs(pc->peak - pc->trough) * M_PI / pc->period_s + prof_peak(c) / s->mean_s;
        } else {
            int k = knot_at(c, t);
            if (k + 1 < c->nk)
                seg_end = c->kt[k + 1];
            double r0 = prof_rate(c, t, s->mean_s);
            double r1 = isfinite(seg_end)
                ? fmax(0, prof_slope(c, t) + (k < 0 ? c->kn[0] : c->kn[k + 1]) / s->mean_s) : r0;
            bound = fmax(r0, r1);
        }
        double cand = bound > 0 ? t + dist_exp_draw(s->rng, 1.0 / bound) : INFINITY;
        if (cand < seg_end || !isfinite(seg_end)) {
            if (!isfinite(cand))
                return 0;                /* no more sessions start */
            s->bound = bound;
            return ev_push(&p->evq, cand * 1000.0, EV_SESSION, SESS_CANDIDATE, 0);
        }
        /* the segment ends first: a jump there, or the next segment */
        int k = knot_at(c, seg_end);
        int first = k;
        while (first > 0 && c->kt[first - 1] == seg_end)
            first--;
        if (k > first && c->kn[k] > c->kn[first])
            return ev_push(&p->evq, seg_end * 1000.0, EV_SESSION, SESS_JUMP, (uint64_t)first);
        t = seg_end;
    }
    return 0;
}

void prof_event(pipe_t *p, uint32_t what, uint64_t arg, double now)
{
    struct prof_state *s = p->prof;
    double t = now / 1000.0;
    if (what == SESS_END) {
        end_session(p, (uint32_t)arg, now);
        return;
    }
    if (what == SESS_CANDIDATE) {
        if (gsl_rng_uniform(s->rng) * s->bound < prof_rate(&s->curve, t, s->mean_s)
            && start_session(p, now, 0) != 0)
            return;
    } else {
        const prof_curve *c = &s->curve;
        int first = (int)arg, k = knot_at(c, t);
        double want = c->kn[k] - c->kn[first] + s->carry;
        long n = lround(floor(want + 0.5));
        s->carry = want - (double)n;
        for (long i = 0; i < n && !p->failed; i++)
            if (start_session(p, now, 0) != 0)
                return;
    }
    if (schedule_next(p, t) != 0)
        pipe_fail(p, "out of memory growing the event list");
}

int prof_setup(pipe_t *p, uint32_t rep)
{
    const scenario_cfg *cfg = p->cfg;
    p->prof = calloc(1, sizeof *p->prof);
    if (!p->prof)
        return -1;
    struct prof_state *s = p->prof;
    if (prof_curve_init(&s->curve, &cfg->profile, cfg->workload.streams) != 0)
        return -1;
    s->mean_s = dist_mean(&cfg->profile.session) / 1000.0;
    s->rng = rng_stream(cfg->seed, rep, STREAM_SESSIONS);
    if (!s->rng)
        return -1;
    /* the pipeline made frame_no and phase for its initial sources: ours now */
    free(p->frame_no);
    free(p->phase);
    p->frame_no = NULL;
    p->phase = NULL;
    for (int st = 0; st < cfg->nstages; st++) {
        free(p->stn[st].scene_next);
        free(p->stn[st].scene_left);
        p->stn[st].scene_next = NULL;
        p->stn[st].scene_left = NULL;
    }
    return grow(p, prof_initial_slots(cfg));
}

/* The first events: the sessions in progress at t = 0, then the process. */
int prof_start(pipe_t *p)
{
    struct prof_state *s = p->prof;
    long n0 = lround(prof_target(&s->curve, 0.0));
    for (long i = 0; i < n0; i++)
        if (start_session(p, 0.0, 1) != 0)
            return -1;
    return schedule_next(p, 0.0);
}

void prof_free(pipe_t *p)
{
    struct prof_state *s = p->prof;
    if (!s)
        return;
    prof_curve_free(&s->curve);
    if (s->rng)
        gsl_rng_free(s->rng);
    free(s->free_stack);
    free(s->sid);
    free(s->end_ms);
    free(s->gpu);
    free(s->live);
    free(s);
    p->prof = NULL;
}

void prof_reset(pipe_t *p, double now)
{
    struct prof_state *s = p->prof;
    tw_reset(&s->conc, now);
    s->started = 0;
}

void prof_close(pipe_t *p, double t_end)
{
    struct prof_state *s = p->prof;
    fleet_stats *f = &p->out->fleet;
    f->mean_sessions = tw_mean(&s->conc, t_end);
    f->sessions = s->started;
    f->peak_sessions = s->peak;
}

uint32_t prof_session_id(const pipe_t *p, uint32_t j)
{
    return p->prof->sid[j];
}

/* Queries: one process at the rate of prof_initial_slots sessions, thinned
 * to those in progress by picking a slot at random (a free slot: no query);
 * the query goes to that session. (Should the table grow past its first
 * size, queries run a little below their rate: noted in README.) */
int prof_query_stream(pipe_t *p, gsl_rng *r, uint32_t *stream)
{
    struct prof_state *s = p->prof;
    uint32_t j = (uint32_t)gsl_rng_uniform_int(r, s->cap);
    if (!s->live[j])
        return 0;
    *stream = j;
    return 1;
}

uint32_t prof_slots(const pipe_t *p)
{
    return p->prof->cap;
}

int *prof_gpu_map(pipe_t *p)
{
    return p->prof->gpu;
}

const uint8_t *prof_live_map(const pipe_t *p)
{
    return p->prof->live;
}
