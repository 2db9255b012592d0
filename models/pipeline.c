/* pipeline.c — the workload, the worker stages and the event loop.
 *
 * The clock is in milliseconds. These events drive everything:
 *   ARRIVE    a new frame enters the first stage of the frame path (and the next
 *             arrival of its stream is scheduled);
 *   SOURCED   cpu: source timer — a frame's camera thread has woken from its
 *             sleep (timer_ms after the frame's time) and hands it to the first
 *             stage;
 *   QUERY     a user query or proactive trigger enters the first stage of the
 *             response path;
 *   DEPART    an item finishes service at a worker stage: it moves on, and the
 *             freed worker takes the next waiting item (cpu: after its handoff);
 *   HANDOFF   cpu: a handoff's work is done; a worker that handed over takes
 *             its next waiting item;
 *   RELEASE   a B-frame held for reordering after decode moves on;
 *   GPU_DONE  a GPU finishes a batch (gpu.c);
 *   GPU_WAKE  a partial batch on a GPU has waited batch_timeout_ms (gpu.c);
 *   CONTROL   the degradation controller and the alert rules look (control.c);
 *   WARMUP    the end of the warm-up: every statistic starts afresh (and a
 *             canary rollout starts);
 *   CANARY    the end of a canary step's hold: its gates are judged (canary.c);
 *   END       the end of the measured window: the run stops.
 * Items live in a pool with a free list and queues are rings of item
 * indices, so nothing is allocated per event; both grow only with the
 * number of items in flight. A waiting item that has waited longer than its
 * stage's timeout_ms, or has been in the system longer than
 * frame_deadline_ms, is dropped (`timeout`) when a server reaches it — the
 * moment a real worker would look at it and discard it as stale.
 * This file must never print or read files: results go into rep_stats. */
#include "models/pipe_int.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/load.h"
#include "models/stability.h"
#include "sim/rng.h"
#include "sim/stop.h"

enum { STREAM_ARRIVALS = 1, STREAM_PERIODIC = 2, STREAM_QUERIES = 3, STREAM_WAKE = 4,
       STREAM_SPEED = 5, STREAM_PLACE = 6, STREAM_STALLS = 7 };

void pipe_fail(pipe_t *p, const char *what)
{
    if (!p->failed)
        snprintf(p->err, p->errlen, "%s", what);
    p->failed = 1;
}

/* ---- items and queues ------------------------------------------------ */

static void in_flight_cap(pipe_t *p, double now);

static uint32_t item_new(pipe_t *p, double now)
{
    if (p->free_head == NO_ITEM) {
        if (p->nitems == p->cap_items) {
            if (p->cap_items >= PIPE_MAX_IN_FLIGHT) {
                in_flight_cap(p, now);
                return NO_ITEM;
            }
            uint32_t ncap = p->cap_items * 2;
            item_t *ni = realloc(p->items, (size_t)ncap * sizeof *ni);
            if (!ni) {
                pipe_fail(p, "out of memory growing the item pool");
                return NO_ITEM;
            }
            p->items = ni;
            if (p->trace) {            /* tracing: the ids grow with the slots */
                uint64_t *nid = realloc(p->trace_id, (size_t)ncap * sizeof *nid);
                if (!nid) {
                    pipe_fail(p, "out of memory growing the item pool");
                    return NO_ITEM;
                }
                p->trace_id = nid;
            }
            p->cap_items = ncap;
        }
        p->items[p->nitems].next = NO_ITEM;
        p->free_head = p->nitems++;
    }
    uint32_t i = p->free_head;
    p->free_head = p->items[i].next;
    p->items[i].t_sys = now;
    if (p->trace)
        p->trace_id[i] = p->trace_next++;
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

int pipe_fifo_push(fifo_t *q, uint32_t v)
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

uint32_t pipe_fifo_pop(fifo_t *q)
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
        st->arrivals = st->completed = st->drop_queue_full = st->drop_timeout = 0;
        st->drop_policy = 0;
        st->waited = st->sampled_out = st->batches = 0;
        if (st->batch_counts)
            memset(st->batch_counts, 0,
                   ((size_t)p->cfg->stages[s].max_batch + 1) * sizeof *st->batch_counts);
        hist_reset(&st->wait);
        hist_reset(&st->service);
        hist_reset(&st->sojourn);
        memset(st->le, 0, sizeof st->le);
        tw_reset(&p->stn[s].qlen, now);
        tw_reset(&p->stn[s].busy_tw, now);
    }
    hist_reset(&o->e2e);
    memset(o->e2e_le, 0, sizeof o->e2e_le);
    hist_reset(&o->response);
    memset(o->resp_le, 0, sizeof o->resp_le);
    o->arrivals = o->completed = o->dropped = o->sampled_out = 0;
    o->queries = o->proactive = o->answered = o->unanswered = 0;
    p->t_reset = now;
    if (p->cfg->cpu.cores > 0)
        cores_reset_stats(&p->cores, now);
    if (p->stall_rng)
        stalls_reset_stats(&p->stalls);
    gpu_reset(p, now);
    ctl_reset(p, now);
    if (p->prof)
        prof_reset(p, now);
    if (p->asc)
        asc_reset(p, now);
}

/* ---- moving items on -------------------------------------------------- */

void pipe_drop(pipe_t *p, uint32_t i)
{
    if (p->items[i].kind == ITEM_QUERY) {
        p->out->unanswered++;
    } else {
        p->out->dropped++;
        ctl_frame_dropped(p);
        canary_dropped(&p->canary, p->items[i].arm);
        if (p->asc)
            asc_frame(p, -1.0, 0.0);
    }
    item_free(p, i);
}

/* Stale: waited longer than the stage allows, or older than the frame deadline. */
int pipe_is_stale(const pipe_t *p, const station_t *stn, uint32_t i, double now)
{
    const item_t *it = &p->items[i];
    double limit = stn->cfg->timeout_ms, deadline = p->cfg->frame_deadline_ms;
    return (limit > 0 && now - it->t_enq > limit) || (deadline > 0 && now - it->t_sys > deadline);
}

/* The waiting room of stn (queue q) is full and item i arrives: count the
 * drop and drop i (drop_newest) or the oldest waiting item (drop_oldest,
 * which leaves room for i: *keep_new = 1). */
void pipe_queue_full(pipe_t *p, station_t *stn, fifo_t *q, uint32_t i, int *keep_new)
{
    stn->st->drop_queue_full++;
    if (stn->cfg->on_full == ONFULL_DROP_NEWEST || stn->cfg->capacity == 0) {
        pipe_drop(p, i);
        *keep_new = 0;
        return;
    }
    pipe_drop(p, pipe_fifo_pop(q));
    stn->waiting--;
    *keep_new = 1;
}

/* The sampler: keep frame i? With scene changes, a change (a Poisson
 * process per stream, drawn lazily) makes the stream's next scene_burst
 * frames all kept; other frames are kept with probability keep_ratio. */
static int kept(pipe_t *p, station_t *stn, uint32_t i)
{
    const stage_cfg *c = stn->cfg;
    if (c->keep == KEEP_RATIO && stn->scene_next) {
        uint32_t j = p->cfg->workload.arrival == ARRIVAL_PERIODIC ? p->items[i].stream : 0;
        double gap = 60000.0 / c->scene_per_min;
        double captured = p->items[i].t_sys;   /* changes are judged at capture, not here */
        while (stn->scene_next[j] <= captured) {
            stn->scene_left[j] = c->scene_burst;
            stn->scene_next[j] += dist_exp_draw(stn->keep_rng, gap);
        }
        if (stn->scene_left[j] > 0) {
            stn->scene_left[j]--;
            return 1;
        }
    }
    switch (c->keep) {
    case KEEP_RATIO: return gsl_rng_uniform(stn->keep_rng) < c->keep_ratio;
    case KEEP_EVERY: return p->items[i].seq % (uint64_t)stn->cfg->keep_every == 0;
    default:         return 1;
    }
}

static void enter_stage(pipe_t *p, int from, int s, uint32_t i, double now);
static void release(pipe_t *p, int s, uint32_t i, double now);

/* A canary decision is due (the end of a hold, or the frame that completes
 * the sample): judge it and schedule the next one. */
static void canary_tick(pipe_t *p, double now)
{
    double t = canary_decide(&p->canary, now, gpu_busy_ms(p, now));
    if (isfinite(t) && ev_push(&p->evq, t, EV_CANARY, 0, 0) != 0)
        pipe_fail(p, "out of memory growing the event list");
}

/* ---- jitter sources (seed 000 §1) ------------------------------------- */

/* Network capture: each transmission is lost with probability `loss`, and
 * every retransmission adds one RTT, up to max_retries. */
static double retransmit_ms(station_t *stn)
{
    const retransmit_cfg *r = &stn->cfg->retransmit;
    int k = 0;
    while (k < r->max_retries && gsl_rng_uniform(stn->jit_rng) < r->loss)
        k++;
    return k * r->rtt_ms;
}

/* LLM prefill: a prefix-cache miss re-prefills the whole context. */
double pipe_cache_miss_ms(station_t *stn)
{
    const cache_miss_cfg *m = &stn->cfg->cache_miss;
    return gsl_rng_uniform(stn->jit_rng) < m->prob ? m->ms_per_token * m->context_tokens : 0.0;
}

/* Position in the GOP: 'I', 'P' or 'B'. */
static char gop_type(const gop_cfg *g, uint64_t seq)
{
    uint64_t k = seq % (uint64_t)g->length;
    if (k == 0)
        return 'I';
    return g->b_frames > 0 && k % (uint64_t)(g->b_frames + 1) != 0 ? 'B' : 'P';
}

/* A worker stage's service time for item i: the drawn time, an I-frame's
 * extra cost, the clip's content, retransmissions and cache misses. */
static double service_ms(pipe_t *p, station_t *stn, uint32_t i)
{
    const stage_cfg *c = stn->cfg;
    int s = (int)(stn - p->stn);
    int iframe = c->gop.length > 0 && gop_type(&c->gop, p->items[i].seq) == 'I';
    double ms;
    if (iframe && c->gop.has_i_service) {           /* the I-frames' own distribution */
        ms = dist_sample(&c->gop.i_service, stn->rng) * pipe_quality(p, s)
           * (p->items[i].arm ? p->cfg->canary.scale[s] : 1.0);
    } else {
        ms = (p->items[i].arm ? canary_variant_ms(&p->cfg->canary, s, &c->service, stn->rng)
                              : dist_sample(&c->service, stn->rng)) * pipe_quality(p, s);
        if (iframe)
            ms *= c->gop.i_factor;
    }
    if (c->gop.ncontent > 0)                        /* the clip's content at this frame */
        ms *= c->gop.content[p->items[i].seq % (uint64_t)c->gop.ncontent];
    if (c->retransmit.loss > 0)
        ms += retransmit_ms(stn);
    if (c->cache_miss.prob > 0)
        ms += pipe_cache_miss_ms(stn);
    return ms;
}

/* Item i has finished service at stage s (its t_start and svc are set). A
 * B-frame is first held for reordering; then it is recorded and passed on. */
void pipe_finish(pipe_t *p, int s, uint32_t i, double now)
{
    const gop_cfg *g = &p->stn[s].cfg->gop;
    if (g->length > 0 && g->reorder_ms > 0 && gop_type(g, p->items[i].seq) == 'B') {
        if (ev_push(&p->evq, now + g->reorder_ms, EV_RELEASE, (uint32_t)s, i) != 0)
            pipe_fail(p, "out of memory growing the event list");
        return;
    }
    release(p, s, i, now);
}

/* Record item i at stage s, then pass it on, end it at a sampler, or let it
 * leave. Its sojourn runs to now (a reorder hold included). */
static void release(pipe_t *p, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    stage_stats *st = stn->st;
    item_t *it = &p->items[i];
    double wait = it->t_start - it->t_enq, sojourn = now - it->t_enq;
    st->completed++;
    st->waited += wait > 0;
    hist_record(&st->wait, wait);
    hist_record(&st->service, it->svc);
    hist_record(&st->sojourn, sojourn);
    count_bucket(st->le, p->cfg->buckets_ms, p->cfg->nbuckets, sojourn);

    rep_stats *o = p->out;
    double e2e = now - it->t_sys;
    if (stn->cfg->tokens_out > 0)
        it->tokens = (uint32_t)stn->cfg->tokens_out;
    int sampled_out = it->kind == ITEM_FRAME && stn->cfg->keep != KEEP_ALL && !kept(p, stn, i);
    if (p->trace)
        fprintf(p->trace, "%s,%llu,%u,%llu,%s,%s,%.6f,%.6f,%.6f,%.6f\n",
                it->kind == ITEM_FRAME ? "frame" : "query", (unsigned long long)p->trace_id[i],
                it->stream, (unsigned long long)it->seq, stn->cfg->name,
                sampled_out ? "sampled_out" : "done", it->t_sys, it->t_enq, it->t_start, now);
    if (sampled_out) {
        st->sampled_out++;
        o->sampled_out++;
        item_free(p, i);
    } else if (stn->next >= 0) {
        enter_stage(p, s, stn->next, i, now);
    } else if (it->kind == ITEM_QUERY) {
        o->answered++;
        hist_record(&o->response, e2e);
        count_bucket(o->resp_le, p->cfg->buckets_ms, p->cfg->nbuckets, e2e);
        item_free(p, i);
    } else {
        o->completed++;
        ctl_frame_done(p, e2e);
        if (canary_completed(&p->canary, it->arm, e2e))
            canary_tick(p, now);
        if (p->asc)
            asc_frame(p, e2e, now);
        hist_record(&o->e2e, e2e);
        count_bucket(o->e2e_le, p->cfg->buckets_ms, p->cfg->nbuckets, e2e);
        if (p->pilot)
            mser_add(p->pilot, now, e2e);
        item_free(p, i);
    }
}

/* ---- worker stages ---------------------------------------------------- */

/* core: cpu.stack, the core a thread going on at once stays on (-1: a
 * woken or idle thread, placed by the cores). */
static void start_service(pipe_t *p, int s, uint32_t i, double now, int core)
{
    station_t *stn = &p->stn[s];
    item_t *it = &p->items[i];
    it->t_start = now;
    it->svc = service_ms(p, stn, i);
    stn->busy++;
    tw_set(&stn->busy_tw, now, stn->busy);
    int bad = pipe_on_cores(p, s)      /* cpu: the work is shared with the other threads */
        ? cores_start_on(&p->cores, &p->evq, now, EV_DEPART, (uint32_t)s, i, it->svc, core)
        : ev_push(&p->evq, now + it->svc, pipe_sleeps(p, s) ? EV_SLEEP_DUE : EV_DEPART,
                  (uint32_t)s, i);
    if (bad != 0)
        pipe_fail(p, "out of memory growing the event list");
}

/* cpu: handing item i from stage `from` (-1: its arrival) to stage s costs
 * the cores cpu.handoff_ms of work — the queue, the signal, the switch — as a
 * job of its own, unless both are GPU stages: one executor thread then runs
 * both, and nothing is handed over. The item is in s's queue at once (the
 * push comes first, and the signal wakes s's thread). A worker stage's
 * thread handing over as its item departs does that work itself before it
 * takes its next item, as a real worker pushes, signals, then pops: its
 * handoff's event names the stage (1 + from), and the worker stays busy till
 * then (handoff_done). Other handoffs (a camera's, the executor's, a
 * B-frame's after its reorder hold) delay nobody. */
static void handoff(pipe_t *p, int from, int s, double now)
{
    if (p->cfg->cpu.handoff_ms <= 0 || !pipe_on_cores(p, s))
        return;
    if (from >= 0 && p->stn[from].cfg->on == RES_GPU && p->stn[s].cfg->on == RES_GPU)
        return;
    int core = from >= 0 ? cores_freed_core(&p->cores, now) : -1;   /* on the waker's core */
    uint32_t by = 0;
    if (from >= 0 && from == p->handing && pipe_on_cores(p, from)) {
        by = (uint32_t)from + 1;
        p->handed = 1;
    }
    if (cores_start_on(&p->cores, &p->evq, now, EV_HANDOFF, by, 0, p->cfg->cpu.handoff_ms, core) != 0)
        pipe_fail(p, "out of memory growing the event list");
    p->handoffs_running++;
}

/* ---- cpu: wake-ups by the jobs on the cores ----------------------------
 * A woken thread waits for a core the others hold. With wake_busy (timer_busy)
 * how long depends on k, the stages' jobs on the cores (not the handoffs'),
 * the waker counted when it carries on: a worker stage that still has items
 * queued starts the next one at this instant. A share wake_held[k] of the
 * wake-ups are held instead: queued behind a running job, the thread runs
 * when the next stage job on the cores ends. With cpu.stack, none is held
 * while a core is free and every busy one holds two or more: the woken
 * thread goes onto the free core (cores_crowded), as its start would.
 * With cpu.wake_held_until slice the thread is queued on one of the busy
 * cores (drawn) and runs, beside the job there, when that job has had its
 * core for its protected slice, if no job ended first; behind a job that
 * had it longer already it is not held at all (EEVDF preempts it). wakecal
 * measured the held share with ops of about 0.8 ms, shorter than the slice,
 * so there "the job's end" and "the slice's end" were the same wait; the
 * pipeline's I-frame decodes (7-8 ms) and large batches are not. */

struct held_wake {
    uint32_t kind, a;
    uint64_t b;
    double until;          /* protected slices: it runs then at the latest (HUGE_VAL: at an end) */
    int core;              /* the core whose running job's slice it waits out (-1: none) */
};

static int jobs_on_cores(const pipe_t *p, int from)
{
    int k = p->cores.n - p->handoffs_running;
    if (from >= 0 && p->stn[from].cfg->on != RES_GPU && pipe_on_cores(p, from) && p->stn[from].q.n > 0)
        k++;
    return k;
}

static void hold(pipe_t *p, uint32_t kind, uint32_t a, uint64_t b, double until, int core)
{
    for (size_t j = 0; kind == EV_GPU_WAKE && j < p->held_n; j++) {
        const struct held_wake *h = &p->held[(p->held_head + j) % p->held_cap];
        if (h->kind == kind && h->a == a)
            return;                        /* that GPU thread is held already: one wake-up */
    }
    if (p->held_n == p->held_cap) {        /* grow the ring, unrolled from its head */
        size_t cap = p->held_cap ? 2 * p->held_cap : 16;
        struct held_wake *h = malloc(cap * sizeof *h);
        if (!h) {
            pipe_fail(p, "out of memory growing the held wake-ups");
            return;
        }
        for (size_t j = 0; j < p->held_n; j++)
            h[j] = p->held[(p->held_head + j) % p->held_cap];
        free(p->held);
        p->held = h;
        p->held_head = 0;
        p->held_cap = cap;
    }
    p->held[(p->held_head + p->held_n++) % p->held_cap] = (struct held_wake){kind, a, b, until, core};
    if (until < HUGE_VAL && ev_push(&p->evq, until, EV_UNHOLD, 0, 0) != 0)
        pipe_fail(p, "out of memory growing the event list");
}

/* cpu.stalls: when a thread woken at now, due to run at t, runs. Linux wakes
 * it onto an idle core when there is one, and an idle core is halted: the
 * host must run it again, and in one of its spells that is at the spell's
 * end. The core is drawn among the idle ones; pooled cores have no identity,
 * so there any core is drawn while one is idle (its spells are as likely as
 * an idle one's). With every core busy the thread goes beside a running one,
 * which the host is running: no spell (its own are in the ops' measured
 * times). Nor in one while the host still polls the idle core: halted for
 * less than cpu.stalls.poll_ms at t. */
/* cpu.stack: how many cores hold a job (busy 1) or none (busy 0), and the
 * n-th of them from 0 (cores when there is none). */
static int cores_holding(const cores_t *c, int busy)
{
    int n = 0;
    for (int j = 0; j < c->cores; j++)
        n += (c->on[j] > 0) == busy;
    return n;
}

static int nth_core_holding(const cores_t *c, int busy, int n)
{
    int k = 0;
    for (; k < c->cores; k++)
        if ((c->on[k] > 0) == busy && n-- == 0)
            break;
    return k;
}

static double after_stalls(pipe_t *p, double now, double t)
{
    const cores_t *c = &p->cores;
    int idle = 0, k = 0;
    if (c->on) {
        idle = cores_holding(c, 0);
    } else {
        idle = c->n < c->cores ? c->cores - c->n : 0;
    }
    if (idle == 0)
        return t;
    int pick = (int)gsl_rng_uniform_int(p->stall_rng, c->on ? (unsigned long)idle
                                                              : (unsigned long)c->cores);
    int slot = pick;                   /* whose idle time counts */
    if (c->on) {
        k = slot = nth_core_holding(c, 0, pick);
    } else {
        k = pick;                      /* pooled: any core's spells; the idle time of one */
        slot = c->n + pick * idle / c->cores;   /* of the free slots, n .. cores - 1, spread
                                                   evenly over the picks (no draw of its own) */
    }
    double halted = p->stalls.poll_ms > 0 ? t - cores_idle_since(c, slot) : HUGE_VAL;
    return stalls_wake(&p->stalls, k, now, t, halted);
}

/* Push (kind, a, b) after a draw from busy[min(k, nbusy - 1)] (plain when
 * nbusy is 0), then after the host's spell of the idle core it wakes on
 * (cpu.stalls); or hold it with probability held[min(k, nheld - 1)], k > 0
 * (queued behind a running job: on a core the host is running), with
 * held_until slice only while the job on the core drawn is within its
 * protected slice, and at most till it ends (EV_UNHOLD). */
static void wake_by(pipe_t *p, int k, double now, double plain, const dist_t *busy, int nbusy,
                    const double *held, int nheld, uint32_t kind, uint32_t a, uint64_t b)
{
    if (nheld > 0 && k > 0 && !cores_crowded(&p->cores)
        && gsl_rng_uniform(p->wake_rng) < held[k < nheld ? k : nheld - 1]) {
        double until = HUGE_VAL;
        int core = -1;
        if (p->cfg->cpu.held_until == CPU_HELD_SLICE) {   /* queued on one busy core: the
                                                             slice of the job running there */
            const cores_t *c = &p->cores;
            int running = cores_holding(c, 1);
            int pick = running > 1 ? (int)gsl_rng_uniform_int(p->wake_rng, (unsigned long)running)
                                   : 0;
            core = nth_core_holding(c, 1, pick);
            until = cores_protect_end(c, core);
        }
        if (until > now) {
            hold(p, kind, a, b, until, core);
            return;
        }
    }
    double d = nbusy > 0 ? dist_sample(&busy[k < nbusy ? k : nbusy - 1], p->wake_rng) : plain;
    double t = p->stall_rng ? after_stalls(p, now, now + d) : now + d;
    if (ev_push(&p->evq, t, kind, a, b) != 0)
        pipe_fail(p, "out of memory growing the event list");
}

void pipe_wake(pipe_t *p, int from, double now, uint32_t kind, uint32_t a, uint64_t b)
{
    const cpu_cfg *u = &p->cfg->cpu;
    wake_by(p, jobs_on_cores(p, from), now, u->wake_ms, u->wake_busy, u->nwake_busy, u->wake_held,
            u->nwake_held, kind, a, b);
}

void pipe_timer_wake(pipe_t *p, double now, uint32_t kind, uint32_t a, uint64_t b)
{
    const cpu_cfg *u = &p->cfg->cpu;
    wake_by(p, jobs_on_cores(p, -1), now, cpu_timer_ms(u), u->timer_busy, u->ntimer_busy,
            u->timer_held, u->ntimer_held, kind, a, b);
}

/* A held wake-up that would do nothing now: a GPU thread already running a
 * batch (it looks at its queues when the batch ends). */
static int moot(const pipe_t *p, const struct held_wake *h)
{
    return h->kind == EV_GPU_WAKE && p->gpu[h->a].busy;
}

/* A held thread with next to no work of its own: a sleeper (cpu.sleepers)
 * woken for an item or from its sleep, or the query thread
 * (cpu.query_source), starts a sleep or hands its item on in microseconds,
 * so it runs when released but does not keep the freed core from the next
 * held thread. */
static int light(const pipe_t *p, const struct held_wake *h)
{
    return h->kind == EV_SLEPT || h->kind == EV_QUERIED
           || (h->kind == EV_WOKEN && pipe_sleeps(p, (int)h->a));
}

/* EV_UNHOLD (wake_held_until slice): the held threads whose core's job has
 * had its protected slice by now run, beside that job (the first released
 * takes the core it waited on); the others stay held in their order. */
static void unhold(pipe_t *p, double now)
{
    size_t n = p->held_n, kept = 0;
    int first = 1;
    for (size_t j = 0; j < n; j++) {
        struct held_wake h = p->held[(p->held_head + j) % p->held_cap];
        if (h.until > now) {
            p->held[(p->held_head + kept++) % p->held_cap] = h;
            continue;
        }
        if (moot(p, &h))
            continue;
        if (ev_push(&p->evq, now, h.kind, h.a, h.b) != 0)
            pipe_fail(p, "out of memory growing the event list");
        if (first && !light(p, &h)) {
            p->held_core = h.core;
            p->held_core_t = now;
            first = 0;
        }
    }
    p->held_n = kept;
}

/* The ended job's core goes to the first held thread that has work; when
 * no stage job is left on the cores, every held thread runs (the cores are
 * free). A moot one is dropped without taking the core. */
void pipe_job_ended(pipe_t *p, double now)
{
    int released = 0;
    while (p->held_n > 0 && (!released || jobs_on_cores(p, -1) == 0)) {
        struct held_wake h = p->held[p->held_head];
        p->held_head = (p->held_head + 1) % p->held_cap;
        p->held_n--;
        if (moot(p, &h))
            continue;
        if (ev_push(&p->evq, now, h.kind, h.a, h.b) != 0)
            pipe_fail(p, "out of memory growing the event list");
        if (light(p, &h))
            continue;
        if (!released) {               /* cpu.stack: it was queued on that job's core */
            p->held_core = cores_freed_core(&p->cores, now);
            p->held_core_t = now;
        }
        released = 1;
    }
}

/* Item i enters stage s at now, its sojourn there counting from `since`
 * (now, but for a query handed over late: cpu.query_source timer). */
static void enter_stage_since(pipe_t *p, int from, int s, uint32_t i, double now, double since)
{
    station_t *stn = &p->stn[s];
    const stage_cfg *c = stn->cfg;
    handoff(p, from, s, now);
    stn->st->arrivals++;
    p->items[i].t_enq = since;
    if (c->on == RES_GPU) {
        gpu_enter(p, from, s, i, now);
        return;
    }
    if (stn->busy < c->servers) {
        if (pipe_wakes(p, s)) {        /* cpu: wake a sleeping thread */
            stn->busy++;
            if (pipe_fifo_push(&stn->woken_for, i) != 0) {
                pipe_fail(p, "out of memory growing a queue");
                return;
            }
            pipe_wake(p, from, now, EV_WOKEN, (uint32_t)s, 0);
            return;
        }
        start_service(p, s, i, now, -1);
        return;
    }
    if (c->capacity >= 0 && stn->q.n >= (size_t)c->capacity) {
        int keep_new;
        pipe_queue_full(p, stn, &stn->q, i, &keep_new);
        if (!keep_new)
            return;
    }
    if (pipe_fifo_push(&stn->q, i) != 0) {
        pipe_fail(p, "out of memory growing a queue");
        return;
    }
    stn->waiting++;
    tw_set(&stn->qlen, now, (double)stn->waiting);
}

static void enter_stage(pipe_t *p, int from, int s, uint32_t i, double now)
{
    enter_stage_since(p, from, s, i, now, now);
}

/* A worker at stage s is free: give it the next waiting item that is not
 * stale, on `core` (-1: the cores place it). cpu: an item a sleeping thread
 * is being woken for is older than every queued one (it was handed over
 * while a thread was free), so a thread going on takes it first, as a real
 * one pops the queue's head; the woken thread then takes what is left
 * (woken). Returns 1 if it started one. */
static int next_item(pipe_t *p, int s, double now, int core)
{
    station_t *stn = &p->stn[s];
    if (stn->woken_for.n > 0) {
        start_service(p, s, pipe_fifo_pop(&stn->woken_for), now, core);
        return 1;
    }
    size_t before = stn->q.n;
    int started = 0;
    while (stn->q.n > 0) {
        uint32_t i = pipe_fifo_pop(&stn->q);
        stn->waiting--;
        if (pipe_is_stale(p, stn, i, now)) {
            stn->st->drop_timeout++;
            pipe_drop(p, i);
            continue;
        }
        start_service(p, s, i, now, core);
        started = 1;
        break;
    }
    if (stn->q.n != before)
        tw_set(&stn->qlen, now, (double)stn->waiting);
    return started;
}

static void next_from_queue(pipe_t *p, int s, double now)
{
    next_item(p, s, now, cores_freed_core(&p->cores, now));   /* it goes on */
}

/* cpu.stack: the core a woken thread starting now takes: the ended job's
 * when it is the first held thread released by that end, else -1 (placed
 * by the cores). */
int pipe_held_core(pipe_t *p, double now)
{
    int core = p->held_core_t == now ? p->held_core : -1;
    p->held_core = -1;
    return core;
}

/* cpu: a thread woken at stage s is running: it takes the oldest item
 * waiting there, whichever of the woken threads runs first (a real one pops
 * the queue's head), or, a thread going on having taken it, goes back to
 * sleep. */
static void woken(pipe_t *p, int s, double now)
{
    station_t *stn = &p->stn[s];
    stn->busy--;                       /* start_service counts it again */
    if (!next_item(p, s, now, pipe_sleeps(p, s) ? -1 : pipe_held_core(p, now)))
        tw_set(&stn->busy_tw, now, stn->busy);
}

static void depart(pipe_t *p, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    if (pipe_on_cores(p, s)) {         /* cpu: the time it took, sharing the cores */
        p->items[i].svc = now - p->items[i].t_start;
        pipe_job_ended(p, now);
    } else if (pipe_sleeps(p, s)) {    /* cpu: the sleep and the late wake from it */
        p->items[i].svc = now - p->items[i].t_start;
    }
    p->handing = s;
    p->handed = 0;
    pipe_finish(p, s, i, now);
    p->handing = -1;
    if (p->handed)
        return;                        /* cpu: its thread hands the item over first */
    stn->busy--;
    tw_set(&stn->busy_tw, now, stn->busy);
    next_from_queue(p, s, now);
}

/* cpu: a handoff's work is done; `by` (1 + the stage, 0: nobody) names the
 * worker stage whose thread did it, now free for its next item. */
static void handoff_done(pipe_t *p, uint32_t by, double now)
{
    p->handoffs_running--;
    if (by == 0)
        return;
    station_t *stn = &p->stn[by - 1];
    stn->busy--;
    tw_set(&stn->busy_tw, now, stn->busy);
    next_from_queue(p, (int)by - 1, now);
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
        double d = gsl_ran_gaussian_ziggurat(p->arr_rng, w->jitter_ms);
        double lim = 0.49 * p->period_ms;
        t += d < -lim ? -lim : d > lim ? lim : d;
    }
    return t < 0 ? 0 : t;
}

/* Schedule the next arrival of source j. A surge stream (j >= streams)
 * emits only within [surge_at_s, surge_at_s + surge_for_s). */
static int schedule_arrival(pipe_t *p, uint32_t j, double now)
{
    const workload_cfg *w = &p->cfg->workload;
    double t;
    if (w->arrival == ARRIVAL_POISSON) {
        t = now + dist_exp_draw(p->arr_rng, p->interarrival_ms);
    } else if (p->prof) {
        if (!prof_frame_due(p, j, now))
            return 0;                /* the session is over: its slot is free */
        t = periodic_time(p, j);
    } else {
        if (j >= (uint32_t)w->streams) {
            double at = w->surge_at_s * 1000.0, end = at + w->surge_for_s * 1000.0;
            double nominal = p->phase[j] + (double)p->frame_no[j] * p->period_ms;
            if (nominal < at)        /* before the surge: skip to its first frame */
                p->frame_no[j] = (uint64_t)ceil((at - p->phase[j]) / p->period_ms);
            if (p->phase[j] + (double)p->frame_no[j] * p->period_ms >= end)
                return 0;            /* the surge is over for this stream */
        }
        t = periodic_time(p, j);
    }
    return ev_push(&p->evq, t, EV_ARRIVE, j, 0);
}

int pipe_source_start(pipe_t *p, uint32_t j, double now)
{
    return schedule_arrival(p, j, now);
}

static void arrive(pipe_t *p, uint32_t j, double now)
{
    uint64_t seq;
    uint32_t stream = j;
    if (p->cfg->workload.arrival == ARRIVAL_PERIODIC) {
        seq = p->frame_no[j]++;
    } else {
        seq = p->poisson_seq++;          /* every Poisson arrival is its own session */
        stream = (uint32_t)seq;
    }
    if (schedule_arrival(p, j, now) != 0) {
        pipe_fail(p, "out of memory growing the event list");
        return;
    }
    uint32_t i = item_new(p, now);
    if (i == NO_ITEM)
        return;
    p->items[i].seq = seq;
    p->items[i].stream = stream;
    p->items[i].tokens = 0;
    p->items[i].kind = ITEM_FRAME;
    /* sticky per session; with a profile, stream is a reused slot and the
     * session has its own id */
    p->items[i].arm = (uint8_t)canary_arm(&p->canary, p->prof ? prof_session_id(p, stream) : stream);
    canary_arrived(&p->canary, p->items[i].arm);
    p->out->arrivals++;
    ctl_frame_arrived(p);
    if (p->ctl.fps_on && p->cfg->workload.arrival == ARRIVAL_PERIODIC) {
        /* reduce_fps: keep frame k when floor((k+1) kept/fps) > floor(k kept/fps),
         * so the kept frames are spread evenly over each second (multiply
         * before dividing: kept/fps rounded first loses whole frames) */
        double keep = p->cfg->degrade.fps, fps = p->cfg->workload.fps;
        if (floor((double)(seq + 1) * keep / fps) == floor((double)seq * keep / fps)) {
            pipe_policy_drop(p, p->first_frame, i);
            return;
        }
    }
    const cpu_cfg *u = &p->cfg->cpu;
    if (u->cores > 0 && u->source != CPU_SOURCE_IDEAL
        && (cpu_timer_ms(u) > 0 || u->ntimer_busy > 0 || u->ntimer_held > 0 || u->stall_per_s > 0)) {
        if (u->source == CPU_SOURCE_TIMER) {
            /* cpu: the stream's camera thread wakes late from its sleep until
             * this frame's time */
            pipe_timer_wake(p, now, EV_SOURCED, 0, i);
            return;
        }
        /* cpu: the one source thread; asleep, it wakes late for this frame;
         * awake already (late for an earlier one), it hands this one over
         * with that one, after it */
        if (pipe_fifo_push(&p->src_due, i) != 0) {
            pipe_fail(p, "out of memory growing the source's frames");
            return;
        }
        if (p->src_due.n == 1)         /* it was asleep: frames wait only while it wakes */
            pipe_timer_wake(p, now, EV_SOURCED, 0, 0);
        return;
    }
    enter_stage(p, -1, p->first_frame, i, now);
}

/* cpu.source: a camera thread woke: frame i enters (timer), or (one_thread)
 * every frame due by now, in time order. */
static void sourced(pipe_t *p, uint32_t i, double now)
{
    if (p->cfg->cpu.source == CPU_SOURCE_TIMER) {
        enter_stage(p, -1, p->first_frame, i, now);
        return;
    }
    while (p->src_due.n > 0 && !p->failed)
        enter_stage(p, -1, p->first_frame, pipe_fifo_pop(&p->src_due), now);
}

/* Queries and proactive triggers: one Poisson process over all streams at
 * the summed rate; each picks its stream uniformly and is proactive with
 * probability proactive / (queries + proactive). */
static void query(pipe_t *p, double now)
{
    const workload_cfg *w = &p->cfg->workload;
    if (ev_push(&p->evq, now + dist_exp_draw(p->query_rng, p->query_gap_ms), EV_QUERY, 0, 0) != 0) {
        pipe_fail(p, "out of memory growing the event list");
        return;
    }
    uint32_t stream = 0;
    if (p->prof) {
        if (!prof_query_stream(p, p->query_rng, &stream))
            return;                      /* thinned: no session in that slot */
    } else {
        stream = (uint32_t)gsl_rng_uniform_int(p->query_rng, (unsigned long)w->streams);
    }
    int proactive = gsl_rng_uniform(p->query_rng) * (w->queries_per_min + w->proactive_per_min)
                    < w->proactive_per_min;
    uint32_t i = item_new(p, now);
    if (i == NO_ITEM)
        return;
    p->items[i].seq = proactive ? p->out->proactive++ : p->out->queries++;
    p->items[i].stream = stream;
    p->items[i].tokens = 0;
    p->items[i].kind = ITEM_QUERY;
    p->items[i].arm = CANARY_BASE;       /* the canary covers the frame path */
    if (proactive && p->ctl.drop_resp_on) {
        pipe_policy_drop(p, p->first_response, i);
        return;
    }
    if (p->cfg->cpu.cores > 0 && p->cfg->cpu.query_source == CPU_QUERY_TIMER) {
        pipe_timer_wake(p, now, EV_QUERIED, 0, i);   /* its thread wakes late for it */
        return;
    }
    enter_stage(p, -1, p->first_response, i, now);
}

/* cpu.query_source timer: the query thread woke; query i enters the response
 * path, its sojourn there counting from its time. */
static void queried(pipe_t *p, uint32_t i, double now)
{
    enter_stage_since(p, -1, p->first_response, i, now, p->items[i].t_sys);
}

/* ---- the growth check (stability.h) ---------------------------------- */

int pipe_queue_unbounded(const scenario_cfg *cfg, int s)
{
    const stage_cfg *c = &cfg->stages[s];
    return c->capacity < 0 && !(c->timeout_ms > 0) && !(cfg->frame_deadline_ms > 0);
}

/* How long the test's windows must be, in relaxation times of the queue at
 * its static offered load when that is below 1: the heavy-traffic
 * relaxation time of the waiting count, variance rate over squared drift,
 * lambda (ca^2 + cs^2) / (c mu - lambda)^2 = s (rho + cs^2) / (c (1 - rho)^2)
 * with ca^2 = 1 (Poisson; periodic arrivals vary less) and cs^2 the
 * service's squared coefficient of variation, at least 1. */
#define GROWTH_RELAXATIONS 10.0

static double service_cs2(const stage_cfg *st)
{
    if (st->on == RES_GPU || st->has_table)
        return 1.0;
    double m = dist_mean(&st->service), v = dist_var(&st->service);
    double cs2 = m > 0 ? v / (m * m) : 1.0;
    if (isnan(cs2))
        return INFINITY;                   /* no finite variance: no relaxation time to wait for */
    return cs2 > 1.0 ? cs2 : 1.0;
}

static int growth_setup(const pipe_t *p, stab_t *d)
{
    const scenario_cfg *cfg = p->cfg;
    double dt = cfg->degrade.interval_s * 1000.0;
    if (stab_init(d, cfg->nstages, dt) != 0)
        return -1;
    for (int s = 0; s < cfg->nstages; s++) {
        if (!pipe_queue_unbounded(cfg, s))
            continue;
        double rho = load_offered(cfg, s), win = 0;
        if (rho < 1) {
            int c = load_servers(cfg, s);
            double tau = load_ms_per_item(cfg, s) * (rho + service_cs2(&cfg->stages[s]))
                         / ((c > 0 ? c : 1) * (1 - rho) * (1 - rho));
            win = GROWTH_RELAXATIONS * tau / dt;
        }
        if (isfinite(win))                 /* infinite: the cap on items in flight is the guard */
            stab_watch(d, s, win);
    }
    return 0;
}

/* On a control tick: sample every queue; 1 when one grows without bound
 * (out->growth filled). A surge raises the load for a while by design: no
 * verdict while it lasts, and the test starts afresh once it is over. */
static int growth_tick(pipe_t *p, stab_t *d, double *level, double now)
{
    const workload_cfg *w = &p->cfg->workload;
    if (w->arrival == ARRIVAL_PERIODIC && w->surge_streams > 0) {
        double at = w->surge_at_s * 1000.0, end = at + w->surge_for_s * 1000.0;
        if (now >= at && now < end)
            return 0;
        if (now >= end && d->t0 < end)
            stab_restart(d, end);
    }
    for (int s = 0; s < p->cfg->nstages; s++)
        level[s] = (double)p->stn[s].waiting;
    stab_growth g;
    if (!stab_tick(d, now, level, &g))
        return 0;
    p->out->growth = (pipe_growth){ PIPE_GREW, g.series, g.t_from / 1000.0, g.t_to / 1000.0,
                                    g.q_from, g.q_to, now / 1000.0 };
    return 1;
}

/* PIPE_MAX_IN_FLIGHT reached: name the stage holding the most waiting items. */
static void in_flight_cap(pipe_t *p, double now)
{
    int worst = 0;
    for (int s = 1; s < p->cfg->nstages; s++)
        if (p->stn[s].waiting > p->stn[worst].waiting)
            worst = s;
    size_t n = p->stn[worst].waiting;
    p->failed = 1;
    if (pipe_queue_unbounded(p->cfg, worst) && n >= p->in_flight / 2) {
        p->out->growth = (pipe_growth){ PIPE_CAPPED, worst, NAN, now / 1000.0, NAN, (double)n,
                                        now / 1000.0 };
        return;
    }
    snprintf(p->err, p->errlen,
             "more than %u items in flight at t=%.1f s (%zu of them waiting at stage %s): "
             "the limit that keeps memory bounded; the system is unstable or far larger "
             "than one replication can hold",
             PIPE_MAX_IN_FLIGHT, now / 1000.0, n, p->cfg->stages[worst].name);
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
    s->gpu = calloc((size_t)(cfg->cluster.gpus > 0 ? cfg->cluster.gpus : 1), sizeof *s->gpu);
    if (!s->stage || !s->gpu) {
        free(s->stage);
        free(s->gpu);
        return -1;
    }
    s->nstages = cfg->nstages;
    s->ngpus = cfg->cluster.gpus;
    int bad = hist_init(&s->e2e) | hist_init(&s->response);
    s->series = malloc(PIPE_MAX_SERIES * sizeof *s->series);
    bad |= !s->series;
    if (cfg->profile.kind != PROFILE_NONE || cfg->autoscale.on)
        bad |= hist_init(&s->fleet.spike);
    for (int k = 0; k < cfg->nstages; k++) {
        stage_stats *st = &s->stage[k];
        bad |= hist_init(&st->wait) | hist_init(&st->service) | hist_init(&st->sojourn);
        if (cfg->stages[k].on == RES_GPU) {
            st->batch_counts = calloc((size_t)cfg->stages[k].max_batch + 1, sizeof *st->batch_counts);
            bad |= !st->batch_counts;
        }
    }
    for (int g = 0; g < s->ngpus; g++) {
        s->gpu[g].busy_ms = calloc((size_t)cfg->nstages, sizeof *s->gpu[g].busy_ms);
        bad |= !s->gpu[g].busy_ms;
    }
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
        free(s->stage[k].batch_counts);
    }
    for (int g = 0; g < s->ngpus; g++)
        free(s->gpu[g].busy_ms);
    hist_free(&s->e2e);
    hist_free(&s->response);
    hist_free(&s->fleet.spike);
    free(s->series);
    s->series = NULL;
    free(s->stage);
    free(s->gpu);
    s->stage = NULL;
    s->gpu = NULL;
    s->nstages = s->ngpus = 0;
}

static void pipe_free(pipe_t *p)
{
    asc_free(p);
    prof_free(p);
    cores_free(&p->cores);
    gpu_free(p);
    ctl_free(p);
    canary_free(&p->canary);
    if (p->stn)
        for (int s = 0; s < p->cfg->nstages; s++) {
            if (p->stn[s].rng)
                gsl_rng_free(p->stn[s].rng);
            if (p->stn[s].keep_rng)
                gsl_rng_free(p->stn[s].keep_rng);
            if (p->stn[s].jit_rng)
                gsl_rng_free(p->stn[s].jit_rng);
            free(p->stn[s].q.buf);
            free(p->stn[s].woken_for.buf);
            free(p->stn[s].scene_next);
            free(p->stn[s].scene_left);
        }
    free(p->stn);
    free(p->items);
    free(p->trace_id);
    free(p->frame_no);
    free(p->phase);
    if (p->arr_rng)
        gsl_rng_free(p->arr_rng);
    if (p->query_rng)
        gsl_rng_free(p->query_rng);
    if (p->wake_rng)
        gsl_rng_free(p->wake_rng);
    if (p->place_rng)
        gsl_rng_free(p->place_rng);
    if (p->stall_rng) {
        stalls_free(&p->stalls);
        gsl_rng_free(p->stall_rng);
    }
    free(p->held);
    free(p->src_due.buf);
    ev_free(&p->evq);
}

/* cpu.speed: the cores' speed in the window starting now is factor k, and
 * the next window's is k + 1 (cyclically), until the run's end. */
static int speed_window(pipe_t *p, double now, uint64_t k)
{
    const cpu_cfg *u = &p->cfg->cpu;
    if (cores_set_speed(&p->cores, &p->evq, now, u->speed[k]) != 0)
        return -1;
    double next = now + u->speed_window_ms;
    if (u->nspeed < 2 || next >= p->speed_until)
        return 0;
    return ev_push(&p->evq, next, EV_SPEED, 0, (k + 1) % (uint64_t)u->nspeed);
}

/* cpu.speed: each replication starts at a factor of its own, drawn from a
 * stream of its own so that no other draw moves. */
static int speed_setup(pipe_t *p, uint32_t rep, double t_end)
{
    const cpu_cfg *u = &p->cfg->cpu;
    if (u->cores <= 0 || u->nspeed <= 0)
        return 0;
    gsl_rng *r = rng_stream(p->cfg->seed, rep, STREAM_SPEED);
    if (!r)
        return -1;
    uint64_t k0 = gsl_rng_uniform_int(r, (unsigned long)u->nspeed);
    gsl_rng_free(r);
    p->speed_until = t_end;
    return speed_window(p, 0.0, k0);
}

/* Build the stations and streams and schedule the first events. WARMUP and
 * END go in before any arrival so that, on a tie, they come first. */
static int pipe_setup(pipe_t *p, uint32_t rep, double warmup_ms, double t_end)
{
    const scenario_cfg *cfg = p->cfg;
    const workload_cfg *w = &cfg->workload;
    int nsrc = w->arrival == ARRIVAL_PERIODIC ? w->streams + w->surge_streams : 1;
    p->free_head = NO_ITEM;
    p->cap_items = 1024;
    p->items = malloc(p->cap_items * sizeof *p->items);
    p->stn = calloc((size_t)cfg->nstages, sizeof *p->stn);
    if (p->trace && !(p->trace_id = malloc(p->cap_items * sizeof *p->trace_id)))
        return -1;
    if (ev_init(&p->evq, (size_t)nsrc + 64) != 0 || !p->items || !p->stn
        || ev_push(&p->evq, warmup_ms, EV_WARMUP, 0, 0) != 0
        || ev_push(&p->evq, t_end, EV_END, 0, 0) != 0)
        return -1;
    for (int s = 0; s < cfg->nstages; s++) {
        station_t *stn = &p->stn[s];
        stn->cfg = &cfg->stages[s];
        stn->st = &p->out->stage[s];
        uint32_t id = pipe_stage_stream(stn->cfg->name);
        stn->rng = rng_stream(cfg->seed, rep, id);
        if (!stn->rng)
            return -1;
        if (stn->cfg->keep == KEEP_RATIO && !(stn->keep_rng = rng_stream(cfg->seed, rep, id ^ 0x40000000u)))
            return -1;
        if (stn->cfg->keep == KEEP_RATIO && stn->cfg->scene_per_min > 0) {
            size_t ns = (size_t)(w->arrival == ARRIVAL_PERIODIC ? w->streams + w->surge_streams : 1);
            stn->scene_next = malloc(ns * sizeof *stn->scene_next);
            stn->scene_left = calloc(ns, sizeof *stn->scene_left);
            if (!stn->scene_next || !stn->scene_left)
                return -1;
            for (size_t j = 0; j < ns; j++)      /* each stream's first change */
                stn->scene_next[j] = dist_exp_draw(stn->keep_rng, 60000.0 / stn->cfg->scene_per_min);
        }
        if ((stn->cfg->retransmit.loss > 0 || stn->cfg->cache_miss.prob > 0)
            && !(stn->jit_rng = rng_stream(cfg->seed, rep, id ^ 0x20000000u)))
            return -1;
    }
    /* Each path visits its stages in the order written. */
    p->first_frame = p->first_response = -1;
    for (int s = cfg->nstages - 1; s >= 0; s--) {
        int *first = cfg->stages[s].path == PATH_RESPONSE ? &p->first_response : &p->first_frame;
        p->stn[s].next = *first;
        *first = s;
    }
    if (p->first_frame < 0) {
        snprintf(p->err, p->errlen, "no stage serves frames (every stage is on the response path)");
        return -2;
    }
    p->place_salt = rng_stream_seed(cfg->seed, rep, 0x91ace5u);
    if (canary_init(&p->canary, &cfg->canary, cfg->cluster.gpus,
                    rng_stream_seed(cfg->seed, rep, 0xca9a27u), &p->out->canary) != 0)
        return -1;
    if (cfg->cpu.cores > 0 && cores_init(&p->cores, cfg->cpu.cores, cfg->cpu.speedup, cfg->cpu.nspeedup, EV_CORES) != 0)
        return -1;
    if (cfg->cpu.cores > 0
        && (cfg->cpu.nwake_busy > 0 || cfg->cpu.ntimer_busy > 0 || cfg->cpu.nwake_held > 0
            || cfg->cpu.ntimer_held > 0)
        && !(p->wake_rng = rng_stream(cfg->seed, rep, STREAM_WAKE)))
        return -1;
    if (cfg->cpu.cores > 0 && cfg->cpu.has_stack     /* jobs placed on cores: their own draws */
        && (!(p->place_rng = rng_stream(cfg->seed, rep, STREAM_PLACE))
            || cores_set_stack(&p->cores, cfg->cpu.stack_share, cfg->cpu.stack_migrate_ms,
                               cfg->cpu.stack_pull_ms, p->place_rng) != 0
            || (cfg->cpu.stack_switch_ms > 0
                && cores_set_turns(&p->cores, cfg->cpu.stack_switch_ms) != 0)
            || (cfg->cpu.stack_tick_ms > 0
                && cores_set_ticks(&p->cores, cfg->cpu.stack_tick_ms, cfg->cpu.stack_slice_ms) != 0)
            || (cfg->cpu.nstack_protect > 0
                && cores_set_protect(&p->cores, cfg->cpu.stack_protect_ms, cfg->cpu.stack_protect_work_ms,
                                     cfg->cpu.stack_protect_share, cfg->cpu.nstack_protect) != 0)
            || (cfg->cpu.nstack_through > 0
                && cores_set_through(&p->cores, cfg->cpu.stack_through_work_ms,
                                     cfg->cpu.stack_through_share, cfg->cpu.nstack_through) != 0)
            || (cfg->cpu.nstack_share > 0
                && cores_set_share_load(&p->cores, cfg->cpu.stack_share_load, cfg->cpu.stack_shares,
                                        cfg->cpu.nstack_share, cfg->cpu.stack_util_halflife_ms) != 0)
            || (cfg->cpu.nstack_run > 0
                && cores_set_share_run(&p->cores, cfg->cpu.stack_run_age_ms, cfg->cpu.stack_run_factor,
                                       cfg->cpu.nstack_run, cfg->cpu.stack_run_bridge_ms) != 0)))
        return -1;
    if (cfg->cpu.cores > 0 && cfg->cpu.ncold > 0
        && cores_set_cold(&p->cores, cfg->cpu.cold_idle_ms, cfg->cpu.cold_factor, cfg->cpu.ncold) != 0)
        return -1;
    if (cfg->cpu.cores > 0 && cfg->cpu.nduty > 0
        && cores_set_duty(&p->cores, cfg->cpu.duty_util, cfg->cpu.duty_factor, cfg->cpu.nduty,
                          cfg->cpu.duty_halflife_ms) != 0)
        return -1;
    if (cfg->cpu.cores > 0 && cfg->cpu.stall_per_s > 0) {
        if (!(p->stall_rng = rng_stream(cfg->seed, rep, STREAM_STALLS)))
            return -1;
        if (stalls_init(&p->stalls, cfg->cpu.cores, cfg->cpu.stall_per_s, &cfg->cpu.stall_ms,
                        p->stall_rng) != 0) {
            gsl_rng_free(p->stall_rng);
            p->stall_rng = NULL;
            return -1;
        }
        stalls_set_poll(&p->stalls, cfg->cpu.stall_poll_ms);
        if (cfg->cpu.stall_poll_ms > 0 && cores_track_idle(&p->cores) != 0)
            return -1;
    }
    if (speed_setup(p, rep, t_end) != 0)
        return -1;
    if (gpu_setup(p) != 0 || ctl_setup(p) != 0)
        return -1;
    if (cfg->profile.kind != PROFILE_NONE || cfg->autoscale.on) {
        int arc = asc_setup(p, rep);     /* -2: a message in err */
        if (arc != 0)
            return arc;
    }
    double per_min = w->arrival == ARRIVAL_PERIODIC ? w->queries_per_min + w->proactive_per_min : 0;
    if (per_min > 0 && p->first_response >= 0) {
        double nq = cfg->profile.kind != PROFILE_NONE ? (double)prof_initial_slots(cfg) : (double)w->streams;
        p->query_gap_ms = 60000.0 / (per_min * nq);
        p->query_rng = rng_stream(cfg->seed, rep, STREAM_QUERIES);
        if (!p->query_rng
            || ev_push(&p->evq, dist_exp_draw(p->query_rng, p->query_gap_ms), EV_QUERY, 0, 0) != 0)
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
    if (cfg->profile.kind != PROFILE_NONE)   /* sessions instead of fixed streams */
        return prof_setup(p, rep) != 0 || prof_start(p) != 0 ? -1 : 0;
    for (int j = 0; j < nsrc; j++) {
        if (w->arrival == ARRIVAL_PERIODIC && w->phase == PHASE_GIVEN && j < w->streams)
            p->phase[j] = w->phase_ms[(size_t)(rep % (uint32_t)w->nphase_sets) * (size_t)w->streams + (size_t)j];
        else if (w->arrival == ARRIVAL_PERIODIC && w->phase != PHASE_ALIGNED)
            p->phase[j] = gsl_rng_uniform(p->arr_rng) * p->period_ms;   /* surge streams too */
        if (schedule_arrival(p, (uint32_t)j, 0.0) != 0)
            return -1;
    }
    return 0;
}

/* The rollout starts with the measured window, so the warm-up is all baseline. */
static void canary_start(pipe_t *p, double now)
{
    double t = canary_begin(&p->canary, now, gpu_busy_ms(p, now));
    if (isfinite(t) && ev_push(&p->evq, t, EV_CANARY, 0, 0) != 0)
        pipe_fail(p, "out of memory growing the event list");
}

int pipe_run(const scenario_cfg *cfg, uint32_t rep, double warmup_ms,
             mser_t *pilot, rep_stats *out, char *err, size_t errlen)
{
    return pipe_run_traced(cfg, rep, warmup_ms, pilot, out, NULL, err, errlen);
}

int pipe_run_traced(const scenario_cfg *cfg, uint32_t rep, double warmup_ms, mser_t *pilot,
                    rep_stats *out, FILE *trace, char *err, size_t errlen)
{
    pipe_t p;
    memset(&p, 0, sizeof p);
    p.trace = trace;
    p.held_core = -1;
    p.handing = -1;
    p.cfg = cfg;
    p.out = out;
    p.pilot = pilot;
    p.err = err;
    p.errlen = errlen;
    double t_end = warmup_ms + cfg->duration_s * 1000.0;
    out->events = 0;
    out->peak_in_flight = 0;
    out->cpu_busy_ms = out->cpu_two_ms = out->cpu_two_same_ms = 0;
    out->cpu_stall_wakes = out->cpu_stalled = out->cpu_stall_polled = 0;
    out->cpu_stall_wait_ms = 0;
    out->cpu_work_ms = out->cpu_cold_extra_ms = out->cpu_duty_extra_ms = 0;
    memset(out->cpu_spell_ms, 0, sizeof out->cpu_spell_ms);
    memset(out->cpu_spells, 0, sizeof out->cpu_spells);
    memset(out->cpu_spell_moves, 0, sizeof out->cpu_spell_moves);
    out->cpu_chances = out->cpu_stacked = 0;
    out->ntimeline = out->nalerts = out->nseries = 0;
    out->window_ms = cfg->duration_s * 1000.0;
    memset(&out->growth, 0, sizeof out->growth);

    stab_t stab;
    double *level = malloc((size_t)cfg->nstages * sizeof *level);
    int rc = !level || growth_setup(&p, &stab) != 0 ? -1 : pipe_setup(&p, rep, warmup_ms, t_end);
    if (rc != 0) {
        if (rc == -1)
            snprintf(err, errlen, "out of memory setting up replication %u", rep);
        if (level)
            stab_free(&stab);
        free(level);
        pipe_free(&p);
        return -1;
    }
    stats_reset(&p, 0.0);

    ev_t e;
    uint64_t events = 0;
    int interrupted = 0;
    while (!p.failed && ev_pop(&p.evq, &e) == 0) {
        if ((++events & 0xfff) == 0 && stop_requested()) {
            interrupted = 1;
            break;
        }
        double now = e.t;
        switch (e.kind) {
        case EV_DEPART:   depart(&p, (int)e.a, (uint32_t)e.b, now); continue;
        case EV_RELEASE:  release(&p, (int)e.a, (uint32_t)e.b, now); continue;
        case EV_ARRIVE:   arrive(&p, e.a, now); continue;
        case EV_QUERY:    query(&p, now); continue;
        case EV_GPU_DONE: gpu_done(&p, (int)e.a, now); continue;
        case EV_GPU_WAKE: gpu_wake(&p, (int)e.a, now, (int)e.b); continue;
        case EV_CONTROL:
            ctl_tick(&p, now);
            if (!growth_tick(&p, &stab, level, now))
                continue;
            break;                                   /* a queue grows without bound: stop */
        case EV_SESSION:  prof_event(&p, e.a, e.b, now); continue;
        case EV_GPU_READY: asc_ready(&p, e.a, now); continue;
        case EV_WARMUP:   stats_reset(&p, now); canary_start(&p, now); continue;
        case EV_CORES:    if (cores_event(&p.cores, &p.evq, now, e.a, e.b) != 0)
                              pipe_fail(&p, "out of memory growing the event list");
                          continue;
        case EV_WOKEN:    woken(&p, (int)e.a, now); continue;
        case EV_HANDOFF:  handoff_done(&p, e.a, now); continue;
        case EV_SOURCED:  sourced(&p, (uint32_t)e.b, now); continue;
        case EV_UNHOLD:   unhold(&p, now); continue;
        case EV_SLEEP_DUE: pipe_timer_wake(&p, now, EV_SLEPT, e.a, e.b); continue;
        case EV_SLEPT:    depart(&p, (int)e.a, (uint32_t)e.b, now); continue;
        case EV_QUERIED:  queried(&p, (uint32_t)e.b, now); continue;
        case EV_SPEED:    if (speed_window(&p, now, e.b) != 0)
                              pipe_fail(&p, "out of memory growing the event list");
                          continue;
        case EV_CANARY:   canary_tick(&p, now); continue;
        default:          break;                     /* EV_END */
        }
        break;
    }
    out->events = events;
    /* a replication stopped early is measured up to the stop */
    double t_close = out->growth.kind != PIPE_STABLE ? out->growth.t_stop_s * 1000.0 : t_end;
    if (t_close < t_end)
        out->window_ms = t_close - p.t_reset;
    for (int s = 0; s < cfg->nstages; s++) {
        station_t *stn = &p.stn[s];
        stn->st->utilization = stn->cfg->on == RES_GPU
            ? 0.0 : tw_mean(&stn->busy_tw, t_close) / stn->cfg->servers;
        stn->st->mean_queue_len = tw_mean(&stn->qlen, t_close);
    }
    canary_close(&p.canary, t_close, gpu_busy_ms(&p, t_close));
    if (cfg->cpu.cores > 0) {
        cores_close(&p.cores, t_close);
        out->cpu_busy_ms = p.cores.busy_ms;
        out->cpu_two_ms = p.cores.two_ms;
        out->cpu_two_same_ms = p.cores.two_same_ms;
        if (p.stall_rng) {
            out->cpu_stall_wakes = (uint64_t)p.stalls.wakes;
            out->cpu_stalled = (uint64_t)p.stalls.stalled;
            out->cpu_stall_polled = (uint64_t)p.stalls.polled;
            out->cpu_stall_wait_ms = p.stalls.wait_ms;
        }
        out->cpu_work_ms = p.cores.work_ms;
        out->cpu_cold_extra_ms = p.cores.cold_extra_ms;
        out->cpu_duty_extra_ms = p.cores.duty_extra_ms;
        for (int k = 0; k < 2; k++) {
            out->cpu_spell_ms[k] = p.cores.spell_ms[k];
            out->cpu_spells[k] = (uint64_t)p.cores.spells[k];
            out->cpu_spell_moves[k] = (uint64_t)p.cores.spell_moves[k];
        }
        out->cpu_chances = (uint64_t)p.cores.chances;
        out->cpu_stacked = (uint64_t)p.cores.stacked;
    }
    gpu_close(&p, t_close);
    ctl_close(&p, t_close);
    if (p.prof)
        prof_close(&p, t_close);
    if (p.asc)
        asc_close(&p, t_close);
    int failed = p.failed && out->growth.kind != PIPE_CAPPED;
    stab_free(&stab);
    free(level);
    pipe_free(&p);
    if (interrupted) {
        snprintf(err, errlen, "interrupted");
        return PIPE_INTERRUPTED;
    }
    return failed ? -1 : 0;
}
