/* gpu.c — stages that run on the cluster's GPUs: placement and dynamic
 * batching.
 *
 * Every GPU stage keeps one FIFO queue per GPU. A frame goes to the GPU its
 * stream is placed on (within the stage's pool): by a hash of the session
 * id, sticky for the whole session (seed 004 §3; session ids differ between
 * replications, so the luck of the placement is part of the confidence
 * intervals), or least loaded — for periodic streams the GPU with the fewest
 * streams when the stream starts (so round robin), for Poisson arrivals
 * (each its own session) the GPU with the fewest frames of that stage
 * waiting or running.
 *
 * A GPU runs one batch at a time. When it is free it looks at its stages'
 * queues in policy order — `priority` (higher first; ties: the later stage,
 * which finishes work already in the system) or `fifo` (the queue whose
 * head frame entered the system first) — and starts the first queue that is
 * ready: it holds max_batch frames, or its head has waited batch_timeout_ms.
 * A queue that is not ready does not block the others. The batch takes the
 * head min(n, max_batch) frames (stale frames are dropped first); its time
 * comes from the stage's table (interpolated linearly in the batch size) or
 * its distribution, times a jitter draw; all its frames finish together.
 * When nothing is ready the GPU sleeps until the earliest head reaches its
 * batch timeout (a GPU_WAKE event) or a new frame fills a batch.
 *
 * Under `fifo` an active decode stage counts as old as the moment its next
 * step became ready, so decode steps and frame batches take turns; under
 * `priority` a decode stage with the highest priority runs step after step
 * while it has active sequences (strict priority starves the others).
 *
 * A decode stage (response_tokens > 0) batches continuously, as vLLM and
 * Orca do: each GPU keeps a set of active sequences; an iteration first
 * admits waiting sequences up to max_batch, then generates one token for
 * every active sequence in table(active) ms; a sequence leaves after
 * response_tokens iterations. The stage is ready whenever sequences are
 * active (or, when none are, by the usual rule on its queue); its batch
 * sizes are the iteration sizes.
 *
 * With a canary rollout the variant is another model: a batch holds frames
 * of one arm only — the head frame's, taken in order, looking at most
 * GPU_ARM_SCAN frames deep; frames of the other arm keep their places — and
 * a variant batch's time uses the variant's overrides of the stage.
 * This file must never print; it shares pipe_int.h with pipeline.c only. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "models/pipe_int.h"

/* ---- set-up -------------------------------------------------------------- */

/* Insertion sort of the stage list into policy order (a handful of stages). */
static void order_stages(const scenario_cfg *c, int *v, int n)
{
    for (int a = 1; a < n; a++) {
        int x = v[a], b = a - 1;
        while (b >= 0) {
            const stage_cfg *sx = &c->stages[x], *sb = &c->stages[v[b]];
            int before = sx->priority > sb->priority || (sx->priority == sb->priority && x > v[b]);
            if (!before)
                break;
            v[b + 1] = v[b];
            b--;
        }
        v[b + 1] = x;
    }
}

int gpu_setup(pipe_t *p)
{
    const scenario_cfg *c = p->cfg;
    p->ngpus = c->cluster.gpus;
    if (p->ngpus <= 0)
        return 0;
    p->gpu = calloc((size_t)p->ngpus, sizeof *p->gpu);
    if (!p->gpu)
        return -1;
    int maxb = 1;
    for (int s = 0; s < c->nstages; s++) {
        station_t *stn = &p->stn[s];
        if (stn->cfg->on != RES_GPU)
            continue;
        if (stn->cfg->max_batch > maxb)
            maxb = stn->cfg->max_batch;
        stn->pool_first = 0;
        stn->pool_n = p->ngpus;
        for (int k = 0; k < c->cluster.npools; k++)
            if (c->cluster.pools[k].stage_mask >> s & 1) {
                stn->pool_first = c->cluster.pools[k].first;
                stn->pool_n = c->cluster.pools[k].gpus;
            }
        stn->gq = calloc((size_t)p->ngpus, sizeof *stn->gq);
        if (!stn->gq)
            return -1;
        if (stn->cfg->response_tokens > 0
            && (!(stn->active = calloc((size_t)p->ngpus, sizeof *stn->active))
                || !(stn->step_ready = calloc((size_t)p->ngpus, sizeof *stn->step_ready))))
            return -1;
    }
    for (int g = 0; g < p->ngpus; g++) {
        gpu_t *gp = &p->gpu[g];
        gp->wake_at = INFINITY;
        gp->batch = malloc((size_t)maxb * sizeof *gp->batch);
        gp->order = malloc((size_t)c->nstages * sizeof *gp->order);
        if (!gp->batch || !gp->order)
            return -1;
        for (int s = 0; s < c->nstages; s++) {
            const station_t *stn = &p->stn[s];
            if (stn->cfg->on == RES_GPU && g >= stn->pool_first && g < stn->pool_first + stn->pool_n)
                gp->order[gp->norder++] = s;
        }
        order_stages(c, gp->order, gp->norder);
    }
    return 0;
}

void gpu_free(pipe_t *p)
{
    if (p->stn)
        for (int s = 0; s < p->cfg->nstages; s++)
            if (p->stn[s].gq) {
                for (int g = 0; g < p->ngpus; g++) {
                    free(p->stn[s].gq[g].buf);
                    if (p->stn[s].active)
                        free(p->stn[s].active[g].buf);
                }
                free(p->stn[s].gq);
                free(p->stn[s].active);
                free(p->stn[s].step_ready);
            }
    if (p->gpu)
        for (int g = 0; g < p->ngpus; g++) {
            free(p->gpu[g].batch);
            free(p->gpu[g].order);
        }
    free(p->gpu);
    p->gpu = NULL;
}

/* ---- placement ------------------------------------------------------------ */

static uint64_t session_hash(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The GPU (absolute index) for item i at GPU stage s. */
static int place(pipe_t *p, const station_t *stn, uint32_t i)
{
    const scenario_cfg *c = p->cfg;
    uint32_t stream = p->items[i].stream;
    int n = stn->pool_n;
    if (p->asc) {                        /* autoscaling: the session's own GPU */
        int g = asc_place(p, stream);
        if (g >= 0)
            return g;
    }
    if (p->prof)                         /* a profile: stream is the session's slot */
        stream = prof_session_id(p, stream);
    if (c->cluster.placement == PLACE_HASH)
        return stn->pool_first + (int)(session_hash(stream ^ p->place_salt) % (uint64_t)n);
    if (c->workload.arrival == ARRIVAL_PERIODIC)
        return stn->pool_first + (int)(stream % (uint32_t)n);   /* fewest streams at start */
    /* fewest frames waiting or running; an idle GPU before a busy one */
    int best = stn->pool_first;
    size_t best_load = SIZE_MAX;
    for (int g = stn->pool_first; g < stn->pool_first + n; g++) {
        size_t load = stn->gq[g].n + (size_t)p->gpu[g].nbatch;
        if (load < best_load) {
            best_load = load;
            best = g;
        }
    }
    return best;
}

/* ---- batching --------------------------------------------------------------- */

/* Service time of a batch at stage s: the table interpolated at x — the
 * batch size, or for a token table the tokens the batch carries — (or a
 * draw of the stage's distribution), times a jitter draw. */
static double batch_time(const pipe_t *p, const station_t *stn, double x, int arm)
{
    const stage_cfg *c = stn->cfg;
    int s = (int)(stn - p->stn);
    double ms = c->has_table ? cfg_table_ms(&c->table, x) * (arm ? p->cfg->canary.scale[s] : 1.0)
              : arm ? canary_variant_ms(&p->cfg->canary, s, &c->service, stn->rng)
                    : dist_sample(&c->service, stn->rng);
    ms *= pipe_quality(p, s);
    if (c->has_jitter)
        ms *= dist_sample(&c->jitter, stn->rng);
    return ms;
}

/* Drop the stale frames at the head of queue q of stage s. */
static void purge(pipe_t *p, station_t *stn, fifo_t *q, double now)
{
    size_t before = stn->waiting;
    while (q->n > 0 && pipe_is_stale(p, stn, q->buf[q->head], now)) {
        uint32_t i = pipe_fifo_pop(q);
        stn->waiting--;
        stn->st->drop_timeout++;
        pipe_drop(p, i);
    }
    if (stn->waiting != before)
        tw_set(&stn->qlen, now, (double)stn->waiting);
}

/* Mark GPU g busy with a batch of k at stage s for ms. */
static void run_batch(pipe_t *p, int g, int s, int k, double ms, double now)
{
    gpu_t *gp = &p->gpu[g];
    station_t *stn = &p->stn[s];
    stn->st->batches++;
    stn->st->batch_counts[k]++;
    gp->busy = 1;
    gp->stage = s;
    gp->nbatch = k;
    gp->t_start = now;
    tw_set(&gp->busy_tw, now, 1.0);
    int core = p->gpu_going_on == g + 1 ? cores_freed_core(&p->cores, now) : -1;
    int bad = pipe_on_cores(p, s)      /* cpu: the "GPU" is a thread sharing the cores */
        ? cores_start_on(&p->cores, &p->evq, now, EV_GPU_DONE, (uint32_t)g, 0, ms, core)
        : ev_push(&p->evq, now + ms, EV_GPU_DONE, (uint32_t)g, 0);
    if (bad != 0)
        pipe_fail(p, "out of memory growing the event list");
}

/* A decode iteration: admit waiting sequences, then one token for each. */
static void start_iteration(pipe_t *p, int g, int s, double now)
{
    station_t *stn = &p->stn[s];
    fifo_t *q = &stn->gq[g], *act = &stn->active[g];
    size_t before = stn->waiting;
    while (q->n > 0 && act->n < (size_t)stn->cfg->max_batch) {
        uint32_t i = pipe_fifo_pop(q);
        stn->waiting--;
        if (pipe_is_stale(p, stn, i, now)) {
            stn->st->drop_timeout++;
            pipe_drop(p, i);
            continue;
        }
        p->items[i].t_start = now;
        p->items[i].left = (uint32_t)stn->cfg->response_tokens;
        if (pipe_fifo_push(act, i) != 0) {
            pipe_fail(p, "out of memory growing a decode batch");
            return;
        }
    }
    if (stn->waiting != before)
        tw_set(&stn->qlen, now, (double)stn->waiting);
    int k = (int)act->n;
    run_batch(p, g, s, k, batch_time(p, stn, (double)k, CANARY_BASE), now);
}

/* The iteration is done: sequences with tokens left stay active, in order;
 * the finished ones move on. */
static void end_iteration(pipe_t *p, int g, int s, double now)
{
    gpu_t *gp = &p->gpu[g];
    fifo_t *act = &p->stn[s].active[g];
    int done = 0;
    p->stn[s].step_ready[g] = now;
    for (int j = gp->nbatch; j > 0; j--) {
        uint32_t i = pipe_fifo_pop(act);
        if (--p->items[i].left > 0) {
            pipe_fifo_push(act, i);                /* cannot grow: it just shrank */
        } else {
            p->items[i].svc = now - p->items[i].t_start;
            gp->batch[done++] = i;
        }
    }
    for (int j = 0; j < done && !p->failed; j++)
        pipe_finish(p, s, gp->batch[j], now);
}

#define GPU_ARM_SCAN 1024

/* Canary: the batch of the head frame's arm, up to max_batch frames from
 * the first GPU_ARM_SCAN; the other arm's frames go back in their order. */
static int gather_arm(pipe_t *p, station_t *stn, fifo_t *q, uint32_t *batch, double now, int *arm)
{
    uint32_t skip[GPU_ARM_SCAN];
    int k = 0, ns = 0, scanned = 0;
    *arm = -1;
    while (k < stn->cfg->max_batch && q->n > 0 && scanned < GPU_ARM_SCAN) {
        uint32_t i = pipe_fifo_pop(q);
        stn->waiting--;
        scanned++;
        if (pipe_is_stale(p, stn, i, now)) {
            stn->st->drop_timeout++;
            pipe_drop(p, i);
            continue;
        }
        if (*arm < 0)
            *arm = p->items[i].arm;
        if (p->items[i].arm == *arm) {
            batch[k++] = i;
        } else {
            skip[ns++] = i;
        }
    }
    while (ns > 0) {                 /* back to the head, in order: the ring has room */
        q->head = (q->head + q->cap - 1) & (q->cap - 1);
        q->buf[q->head] = skip[--ns];
        q->n++;
        stn->waiting++;
    }
    if (*arm < 0)
        *arm = CANARY_BASE;
    return k;
}

static void start_batch(pipe_t *p, int g, int s, double now)
{
    gpu_t *gp = &p->gpu[g];
    station_t *stn = &p->stn[s];
    if (stn->active) {
        start_iteration(p, g, s, now);
        return;
    }
    fifo_t *q = &stn->gq[g];
    int k = 0, arm = CANARY_BASE;
    if (p->cfg->canary.nsteps > 0)
        k = gather_arm(p, stn, q, gp->batch, now, &arm);
    while (p->cfg->canary.nsteps == 0 && k < stn->cfg->max_batch && q->n > 0) {
        uint32_t i = pipe_fifo_pop(q);
        stn->waiting--;
        if (pipe_is_stale(p, stn, i, now)) {
            stn->st->drop_timeout++;
            pipe_drop(p, i);
            continue;
        }
        gp->batch[k++] = i;
    }
    double x = k;
    if (stn->cfg->table.by_tokens) {             /* prefill: the tokens appended */
        x = 0;
        for (int j = 0; j < k; j++)
            x += p->items[gp->batch[j]].tokens;
    }
    double ms = batch_time(p, stn, x, arm);
    if (stn->cfg->cache_miss.prob > 0)          /* each frame's miss re-prefills its context */
        for (int j = 0; j < k; j++)
            ms += pipe_cache_miss_ms(stn);
    for (int j = 0; j < k; j++) {
        p->items[gp->batch[j]].t_start = now;
        p->items[gp->batch[j]].svc = ms;
    }
    tw_set(&stn->qlen, now, (double)stn->waiting);
    run_batch(p, g, s, k, ms, now);
}

/* cpu: GPU g's thread is on the cores (one of its stages is). */
static int thread_on_cores(const pipe_t *p, int g)
{
    const gpu_t *gp = &p->gpu[g];
    for (int k = 0; k < gp->norder; k++)
        if (pipe_on_cores(p, gp->order[k]))
            return 1;
    return 0;
}

/* GPU g may be free: start the first ready batch, or sleep until one is. */
static void kick(pipe_t *p, int g, double now)
{
    gpu_t *gp = &p->gpu[g];
    if (gp->busy)
        return;
    int best = -1;
    double best_t = INFINITY, earliest = INFINITY;
    for (int k = 0; k < gp->norder; k++) {
        int s = gp->order[k];
        station_t *stn = &p->stn[s];
        fifo_t *q = &stn->gq[g];
        purge(p, stn, q, now);
        int active = stn->active && stn->active[g].n > 0;
        if (q->n == 0 && !active)
            continue;
        const item_t *head = &p->items[q->n ? q->buf[q->head] : stn->active[g].buf[stn->active[g].head]];
        double ready_at = head->t_enq + stn->cfg->batch_timeout_ms;
        if (!active && q->n < (size_t)stn->cfg->max_batch && now < ready_at) {
            if (ready_at < earliest)
                earliest = ready_at;
            continue;
        }
        if (p->cfg->cluster.policy == GPU_PRIORITY) {
            best = s;
            break;
        }
        /* fifo: the oldest work first — a waiting item's age is its arrival
         * in the system; an active decode's is when its next step became
         * ready, so decode steps interleave with frame batches. */
        double key = active ? stn->step_ready[g] : head->t_sys;
        if (q->n && head->t_sys < key)
            key = head->t_sys;
        if (key < best_t) {
            best_t = key;
            best = s;
        }
    }
    if (best >= 0) {
        start_batch(p, g, best, now);
    } else if (earliest < INFINITY) {
        /* cpu: a timed wait wakes late: timer_ms, known now; with timer_busy it
         * (and with stalls whether an idle core is in a spell) depends on the
         * cores when it is due, so the wake at `earliest` is a due one
         * (gpu_wake draws how late then) */
        const cpu_cfg *u = &p->cfg->cpu;
        int on = thread_on_cores(p, g),
            due = on && (u->ntimer_busy > 0 || u->ntimer_held > 0 || u->stall_per_s > 0);
        if (on && !due)
            earliest += cpu_timer_ms(u);
        if (earliest < gp->wake_at) {
            gp->wake_at = earliest;
            if (ev_push(&p->evq, earliest, EV_GPU_WAKE, (uint32_t)g, (uint64_t)due) != 0)
                pipe_fail(p, "out of memory growing the event list");
        }
    }
}

void gpu_enter(pipe_t *p, int from, int s, uint32_t i, double now)
{
    station_t *stn = &p->stn[s];
    int g = place(p, stn, i);
    fifo_t *q = &stn->gq[g];
    if (stn->cfg->capacity >= 0 && q->n >= (size_t)stn->cfg->capacity) {
        int keep_new;
        pipe_queue_full(p, stn, q, i, &keep_new);
        if (!keep_new) {
            tw_set(&stn->qlen, now, (double)stn->waiting);
            return;
        }
    }
    if (pipe_fifo_push(q, i) != 0) {
        pipe_fail(p, "out of memory growing a GPU queue");
        return;
    }
    stn->waiting++;
    tw_set(&stn->qlen, now, (double)stn->waiting);
    if (p->defer_kicks) {
        p->gpu[g].kick_pending = 1;
    } else if (!p->gpu[g].busy && pipe_wakes(p, s)) {
        /* cpu: the sleeping thread looks after its wake-up delay */
        pipe_wake(p, from, now, EV_GPU_WAKE, (uint32_t)g, 0);
    } else {
        kick(p, g, now);
    }
}

void gpu_done(pipe_t *p, int g, double now)
{
    gpu_t *gp = &p->gpu[g];
    int s = gp->stage;
    if (pipe_on_cores(p, s))           /* cpu: its batch was a job on the cores */
        pipe_job_ended(p, now);
    double from = gp->t_start > p->t_reset ? gp->t_start : p->t_reset;
    p->out->gpu[g].busy_ms[s] += now - from;
    gp->busy_total += now - gp->t_start;
    /* All frames of a batch finish at the same instant: no GPU (this one or
     * another pool's) may start a batch for the next stage before all of
     * them have arrived there, so kicks wait until the batch has moved on. */
    p->defer_kicks = 1;
    if (p->stn[s].active) {
        end_iteration(p, g, s, now);
    } else {
        if (pipe_on_cores(p, s))       /* cpu: the time the batch took, sharing the cores */
            for (int j = 0; j < gp->nbatch; j++)
                p->items[gp->batch[j]].svc = now - gp->t_start;
        for (int j = 0; j < gp->nbatch && !p->failed; j++)
            pipe_finish(p, s, gp->batch[j], now);
    }
    p->defer_kicks = 0;
    gp->busy = 0;
    gp->nbatch = 0;
    tw_set(&gp->busy_tw, now, 0.0);
    gp->kick_pending = 1;
    p->gpu_going_on = g + 1;           /* cpu.stack: its next batch stays on its core */
    for (int h = 0; h < p->ngpus; h++)
        if (p->gpu[h].kick_pending) {
            p->gpu[h].kick_pending = 0;
            kick(p, h, now);
        }
    p->gpu_going_on = 0;
}

double gpu_busy_ms(const pipe_t *p, double now)
{
    double busy = 0;
    for (int g = 0; g < p->ngpus; g++)
        busy += p->gpu[g].busy_total + (p->gpu[g].busy ? now - p->gpu[g].t_start : 0.0);
    return busy;
}

void gpu_wake(pipe_t *p, int g, double t, int due)
{
    gpu_t *gp = &p->gpu[g];
    if (due && t >= gp->wake_at) {   /* cpu: the timed wait is due; it wakes late, or held */
        gp->wake_at = INFINITY;
        pipe_timer_wake(p, t, EV_GPU_WAKE, (uint32_t)g, 0);
        return;
    }
    if (t >= gp->wake_at)
        gp->wake_at = INFINITY;
    int core = pipe_held_core(p, t);   /* cpu.stack: a held thread takes the ended job's core */
    if (core >= 0)
        p->gpu_going_on = g + 1;
    kick(p, g, t);
    p->gpu_going_on = 0;
}

/* ---- statistics -------------------------------------------------------------- */

void gpu_reset(pipe_t *p, double now)
{
    for (int g = 0; g < p->ngpus; g++) {
        tw_reset(&p->gpu[g].busy_tw, now);
        memset(p->out->gpu[g].busy_ms, 0, (size_t)p->cfg->nstages * sizeof(double));
    }
}

/* At the end of the window: GPU utilization, the running batches' time so
 * far, and each GPU stage's share of its pool. */
void gpu_close(pipe_t *p, double t_end)
{
    double window = p->out->window_ms;
    for (int g = 0; g < p->ngpus; g++) {
        gpu_t *gp = &p->gpu[g];
        if (gp->busy) {
            double from = gp->t_start > p->t_reset ? gp->t_start : p->t_reset;
            p->out->gpu[g].busy_ms[gp->stage] += t_end - from;
        }
        p->out->gpu[g].utilization = tw_mean(&gp->busy_tw, t_end);
    }
    for (int s = 0; s < p->cfg->nstages; s++) {
        station_t *stn = &p->stn[s];
        if (stn->cfg->on != RES_GPU)
            continue;
        double busy = 0;
        for (int g = stn->pool_first; g < stn->pool_first + stn->pool_n; g++)
            busy += p->out->gpu[g].busy_ms[s];
        stn->st->utilization = window > 0 ? busy / (window * stn->pool_n) : 0.0;
    }
}
