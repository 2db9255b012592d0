/* pipeline.c — the event handlers of a tandem of c-server FIFO stages.
 *
 * The clock is in milliseconds. Four kinds of event drive everything:
 *   ARRIVE   a new item enters the first stage (and the next arrival of its
 *            source is scheduled);
 *   DEPART   an item finishes service at a stage: it moves to the next stage
 *            (or leaves), and the freed server takes the next waiting item;
 *   WARMUP   the end of the warm-up: every statistic starts afresh;
 *   END      the end of the measured window: the run stops.
 * Items live in a pool with a free list and queues are rings of item
 * indices, so nothing is allocated per event; both grow only with the
 * number of items in flight. A waiting item whose wait exceeds the stage's
 * timeout_ms is dropped when it reaches the head of the queue (the moment a
 * real worker would look at it and discard it as stale).
 * This file must never print or read files: results go into rep_stats. */
#include "models/pipeline.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/ev.h"
#include "sim/rng.h"
#include "sim/tw.h"

enum { EV_ARRIVE, EV_DEPART, EV_WARMUP, EV_END };
enum { STREAM_ARRIVALS = 1, STREAM_PERIODIC = 2 };
#define NO_ITEM UINT32_MAX

typedef struct {
    double t_sys;      /* arrival at the first stage */
    double t_enq;      /* arrival at the current stage */
    double t_start;    /* start of service at the current stage */
    double svc;        /* drawn service time at the current stage */
    uint32_t next;     /* free-list link */
} item_t;

typedef struct {       /* ring buffer of waiting item indices */
    uint32_t *buf;
    size_t head, n, cap;   /* cap is a power of two */
} fifo_t;

typedef struct {
    const stage_cfg *cfg;
    stage_stats *st;
    gsl_rng *rng;
    fifo_t q;
    int busy;
    tw_t qlen, busy_tw;
} station_t;

typedef struct {
    const scenario_cfg *cfg;
    rep_stats *out;
    ev_queue evq;
    station_t *stn;
    item_t *items;
    uint32_t nitems, cap_items, free_head, in_flight;
    gsl_rng *arr_rng;
    uint64_t *frame_no;          /* periodic: next frame number per stream */
    double *phase;               /* periodic: phase per stream (ms) */
    double period_ms, interarrival_ms;
    mser_t *pilot;
    char *err;
    size_t errlen;
    int failed;
} pipe_t;

/* ---- items and queues ------------------------------------------------ */

static uint32_t item_new(pipe_t *p, double now)
{
    if (p->free_head == NO_ITEM) {
        if (p->nitems == p->cap_items) {
            if (p->cap_items >= PIPE_MAX_IN_FLIGHT) {
                snprintf(p->err, p->errlen,
                         "more than %u items in flight at t=%.1f s: the system is unstable "
                         "(offered load above capacity with unbounded queues)",
                         PIPE_MAX_IN_FLIGHT, now / 1000.0);
                p->failed = 1;
                return NO_ITEM;
            }
            uint32_t ncap = p->cap_items * 2;
            item_t *ni = realloc(p->items, (size_t)ncap * sizeof *ni);
            if (!ni) {
                snprintf(p->err, p->errlen, "out of memory growing the item pool to %u", ncap);
                p->failed = 1;
                return NO_ITEM;
            }
            p->items = ni;
            p->cap_items = ncap;
        }
        p->items[p->nitems].next = NO_ITEM;
        p->free_head = p->nitems++;
    }
    uint32_t i = p->free_head;
    p->free_head = p->items[i].next;
    p->items[i].t_sys = now;
    if (++p->in_flight > p->out->peak_in_flight)
        p->out->peak_in_flight = p->in_flight;
    return i;
}

static void item_free(pipe_t *p, uint32_t i)
{
    p->items[i].next = p->free_head;
    p->free_head = i;
    p->in_flight--;
}

static int fifo_push(fifo_t *q, uint32_t v)
{
    if (q->n == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 64;
        uint32_t *nb = malloc(ncap * sizeof *nb);
        if (!nb)
            return -1;
        for (size_t k = 0; k < q->n; k++)   /* unroll the ring into the new buffer */
            nb[k] = q->buf[(q->head + k) & (q->cap - 1)];
        free(q->buf);
        q->buf = nb;
        q->head = 0;
        q->cap = ncap;
    }
    q->buf[(q->head + q->n++) & (q->cap - 1)] = v;
    return 0;
}

static uint32_t fifo_pop(fifo_t *q)
{
    uint32_t v = q->buf[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->n--;
    return v;
}

/* ---- statistics ------------------------------------------------------- */

static void count_bucket(uint64_t *le, const double *edges, int nedges, double v)
{
    int k = 0;
    while (k < nedges && v > edges[k])
        k++;
    le[k]++;
}

static void stats_reset(pipe_t *p, double now)
{
    rep_stats *o = p->out;
    for (int s = 0; s < o->nstages; s++) {
        stage_stats *st = &o->stage[s];
        st->arrivals = st->completed = st->drop_queue_full = st->drop_timeout = st->waited = 0;
        hist_reset(&st->wait);
        hist_reset(&st->service);
        hist_reset(&st->sojourn);
        memset(st->le, 0, sizeof st->le);
        tw_reset(&p->stn[s].qlen, now);
        tw_reset(&p->stn[s].busy_tw, now);
    }
    hist_reset(&o->e2e);
    memset(o->e2e_le, 0, sizeof o->e2e_le);
    o->arrivals = o->completed = o->dropped = 0;
}

/* ---- the stations ----------------------------------------------------- */

static void drop(pipe_t *p, uint32_t i)
{
    p->out->dropped++;
    item_free(p, i);
}

static void start_service(pipe_t *p, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    item_t *it = &p->items[i];
    it->t_start = now;
    it->svc = dist_sample(&stn->cfg->service, stn->rng);
    stn->busy++;
    tw_set(&stn->busy_tw, now, stn->busy);
    if (ev_push(&p->evq, now + it->svc, EV_DEPART, (uint32_t)s, i) != 0) {
        snprintf(p->err, p->errlen, "out of memory growing the event list");
        p->failed = 1;
    }
}

static void enter_stage(pipe_t *p, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    const stage_cfg *c = stn->cfg;
    stn->st->arrivals++;
    p->items[i].t_enq = now;
    if (stn->busy < c->servers) {
        start_service(p, s, i, now);
        return;
    }
    if (c->capacity >= 0 && stn->q.n >= (size_t)c->capacity) {
        stn->st->drop_queue_full++;
        if (c->on_full == ONFULL_DROP_NEWEST || c->capacity == 0) {
            drop(p, i);
            return;
        }
        drop(p, fifo_pop(&stn->q));          /* drop_oldest: make room at the tail */
    }
    if (fifo_push(&stn->q, i) != 0) {
        snprintf(p->err, p->errlen, "out of memory growing the queue of stage %s", c->name);
        p->failed = 1;
        return;
    }
    tw_set(&stn->qlen, now, (double)stn->q.n);
}

/* A server at stage s is free: give it the next waiting item that is not stale. */
static void next_from_queue(pipe_t *p, int s, double now)
{
    station_t *stn = &p->stn[s];
    double limit = stn->cfg->timeout_ms;
    size_t before = stn->q.n;
    while (stn->q.n > 0) {
        uint32_t i = fifo_pop(&stn->q);
        if (limit > 0 && now - p->items[i].t_enq > limit) {
            stn->st->drop_timeout++;
            drop(p, i);
            continue;
        }
        start_service(p, s, i, now);
        break;
    }
    if (stn->q.n != before)
        tw_set(&stn->qlen, now, (double)stn->q.n);
}

static void depart(pipe_t *p, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    stage_stats *st = stn->st;
    item_t *it = &p->items[i];
    double sojourn = now - it->t_enq;
    double wait = it->t_start - it->t_enq;
    st->completed++;
    st->waited += wait > 0;
    hist_record(&st->wait, wait);
    hist_record(&st->service, it->svc);
    hist_record(&st->sojourn, sojourn);
    count_bucket(st->le, p->cfg->buckets_ms, p->cfg->nbuckets, sojourn);
    stn->busy--;
    tw_set(&stn->busy_tw, now, stn->busy);

    if (s + 1 < p->cfg->nstages) {
        enter_stage(p, s + 1, i, now);
    } else {
        double e2e = now - it->t_sys;
        rep_stats *o = p->out;
        o->completed++;
        hist_record(&o->e2e, e2e);
        count_bucket(o->e2e_le, p->cfg->buckets_ms, p->cfg->nbuckets, e2e);
        if (p->pilot)
            mser_add(p->pilot, now, e2e);
        item_free(p, i);
    }
    next_from_queue(p, s, now);
}

/* ---- the workload ----------------------------------------------------- */

/* The time of frame k of periodic stream j: its phase plus k periods, moved
 * by Gaussian jitter that is clipped to half a period so frames of one
 * stream never overtake each other. */
static double periodic_time(pipe_t *p, uint32_t j)
{
    const workload_cfg *w = &p->cfg->workload;
    double t = p->phase[j] + (double)p->frame_no[j] * p->period_ms;
    if (w->jitter_ms > 0) {
        double d = gsl_ran_gaussian(p->arr_rng, w->jitter_ms);
        double lim = 0.49 * p->period_ms;
        t += d < -lim ? -lim : d > lim ? lim : d;
    }
    return t < 0 ? 0 : t;
}

static int schedule_arrival(pipe_t *p, uint32_t j, double now)
{
    double t;
    if (p->cfg->workload.arrival == ARRIVAL_POISSON)
        t = now + dist_exp_draw(p->arr_rng, p->interarrival_ms);
    else
        t = periodic_time(p, j);
    return ev_push(&p->evq, t, EV_ARRIVE, j, 0);
}

static void arrive(pipe_t *p, uint32_t j, double now)
{
    if (p->cfg->workload.arrival == ARRIVAL_PERIODIC)
        p->frame_no[j]++;
    if (schedule_arrival(p, j, now) != 0) {
        snprintf(p->err, p->errlen, "out of memory growing the event list");
        p->failed = 1;
        return;
    }
    uint32_t i = item_new(p, now);
    if (i == NO_ITEM)
        return;
    p->out->arrivals++;
    enter_stage(p, 0, i, now);
}

/* ---- set-up, the loop, tear-down -------------------------------------- */

uint32_t pipe_stage_stream(const char *name)
{
    uint32_t h = 2166136261u;            /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    return h | 0x80000000u;              /* never collides with the workload streams */
}

int pipe_stats_init(rep_stats *s, const scenario_cfg *cfg)
{
    memset(s, 0, sizeof *s);
    s->stage = calloc((size_t)cfg->nstages, sizeof *s->stage);
    if (!s->stage)
        return -1;
    s->nstages = cfg->nstages;
    int bad = hist_init(&s->e2e);
    for (int k = 0; k < cfg->nstages; k++)
        bad |= hist_init(&s->stage[k].wait) | hist_init(&s->stage[k].service)
             | hist_init(&s->stage[k].sojourn);
    if (bad) {
        pipe_stats_free(s);
        return -1;
    }
    return 0;
}

void pipe_stats_free(rep_stats *s)
{
    for (int k = 0; k < s->nstages; k++) {
        hist_free(&s->stage[k].wait);
        hist_free(&s->stage[k].service);
        hist_free(&s->stage[k].sojourn);
    }
    hist_free(&s->e2e);
    free(s->stage);
    s->stage = NULL;
    s->nstages = 0;
}

static void pipe_free(pipe_t *p)
{
    if (p->stn)
        for (int s = 0; s < p->cfg->nstages; s++) {
            gsl_rng_free(p->stn[s].rng);
            free(p->stn[s].q.buf);
        }
    free(p->stn);
    free(p->items);
    free(p->frame_no);
    free(p->phase);
    if (p->arr_rng)
        gsl_rng_free(p->arr_rng);
    ev_free(&p->evq);
}

/* Build the stations and streams and schedule the first events. WARMUP and
 * END go in before any arrival so that, on a tie, they come first. */
static int pipe_setup(pipe_t *p, uint32_t rep, double warmup_ms, double t_end)
{
    const scenario_cfg *cfg = p->cfg;
    const workload_cfg *w = &cfg->workload;
    int nsrc = w->arrival == ARRIVAL_PERIODIC ? w->streams : 1;
    p->free_head = NO_ITEM;
    p->cap_items = 1024;
    p->items = malloc(p->cap_items * sizeof *p->items);
    p->stn = calloc((size_t)cfg->nstages, sizeof *p->stn);
    if (ev_init(&p->evq, (size_t)nsrc + 64) != 0 || !p->items || !p->stn
        || ev_push(&p->evq, warmup_ms, EV_WARMUP, 0, 0) != 0
        || ev_push(&p->evq, t_end, EV_END, 0, 0) != 0)
        return -1;
    for (int s = 0; s < cfg->nstages; s++) {
        station_t *stn = &p->stn[s];
        stn->cfg = &cfg->stages[s];
        stn->st = &p->out->stage[s];
        stn->rng = rng_stream(cfg->seed, rep, pipe_stage_stream(stn->cfg->name));
        if (!stn->rng)
            return -1;
    }
    if (w->arrival == ARRIVAL_POISSON) {
        p->interarrival_ms = 1000.0 / w->rate_hz;
        p->arr_rng = rng_stream(cfg->seed, rep, STREAM_ARRIVALS);
    } else {
        p->period_ms = 1000.0 / w->fps;
        p->arr_rng = rng_stream(cfg->seed, rep, STREAM_PERIODIC);
        p->frame_no = calloc((size_t)nsrc, sizeof *p->frame_no);
        p->phase = calloc((size_t)nsrc, sizeof *p->phase);
        if (!p->frame_no || !p->phase)
            return -1;
    }
    if (!p->arr_rng)
        return -1;
    for (int j = 0; j < nsrc; j++) {
        if (w->arrival == ARRIVAL_PERIODIC && w->phase == PHASE_RANDOM)
            p->phase[j] = gsl_rng_uniform(p->arr_rng) * p->period_ms;
        if (schedule_arrival(p, (uint32_t)j, 0.0) != 0)
            return -1;
    }
    return 0;
}

int pipe_run(const scenario_cfg *cfg, uint32_t rep, double warmup_ms,
             mser_t *pilot, rep_stats *out, char *err, size_t errlen)
{
    pipe_t p;
    memset(&p, 0, sizeof p);
    p.cfg = cfg;
    p.out = out;
    p.pilot = pilot;
    p.err = err;
    p.errlen = errlen;
    double t_end = warmup_ms + cfg->duration_s * 1000.0;
    out->events = 0;
    out->peak_in_flight = 0;
    out->window_ms = cfg->duration_s * 1000.0;

    if (pipe_setup(&p, rep, warmup_ms, t_end) != 0) {
        snprintf(err, errlen, "out of memory setting up replication %u", rep);
        pipe_free(&p);
        return -1;
    }
    stats_reset(&p, 0.0);

    ev_t e;
    uint64_t events = 0;
    while (!p.failed && ev_pop(&p.evq, &e) == 0) {
        events++;
        double now = e.t;
        if (e.kind == EV_DEPART)
            depart(&p, (int)e.a, (uint32_t)e.b, now);
        else if (e.kind == EV_ARRIVE)
            arrive(&p, e.a, now);
        else if (e.kind == EV_WARMUP)
            stats_reset(&p, now);
        else
            break;                        /* EV_END */
    }
    out->events = events;
    for (int s = 0; s < cfg->nstages; s++) {
        station_t *stn = &p.stn[s];
        stn->st->utilization = tw_mean(&stn->busy_tw, t_end) / stn->cfg->servers;
        stn->st->mean_queue_len = tw_mean(&stn->qlen, t_end);
    }
    int failed = p.failed;
    pipe_free(&p);
    return failed ? -1 : 0;
}
