/* rp_stack.c — where the scheduler puts a woken op. See rp_stack.h.
 * It must never pin its threads (the point is where the OS puts them) nor
 * read anything but the clock and the CPU number while an op runs. */
#define _GNU_SOURCE                    /* sched_getcpu */
#include "calib/realpipe/rp_stack.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_ops.h"

/* ---- the figures ---------------------------------------------------------- */

const double rp_stack_age_ms[RP_STACK_NAGE] = {0.25, 0.5, 1, 2, 4, 8, HUGE_VAL};

/* The bin of a move at age a: the first whose upper end is a or more. */
static int age_bin(double a)
{
    int b = 0;
    while (b < RP_STACK_NAGE - 1 && a > rp_stack_age_ms[b])
        b++;
    return b;
}

/* Spread a spell's time from age a0 to a1 over the age bins. */
static void add_ages(double *ms, double a0, double a1)
{
    double lo = 0;
    for (int b = 0; b < RP_STACK_NAGE; lo = rp_stack_age_ms[b++]) {
        double x = a0 > lo ? a0 : lo, y = a1 < rp_stack_age_ms[b] ? a1 : rp_stack_age_ms[b];
        if (y > x)
            ms[b] += y - x;
    }
}

enum { EV_END, EV_MOVE, EV_START };    /* the order of events at one instant */

typedef struct {
    double t;
    int type;
    int from, to;
    size_t op;
} stack_ev;

static int ev_cmp(const void *a, const void *b)
{
    const stack_ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->type != y->type)
        return x->type - y->type;
    return x->op < y->op ? -1 : x->op > y->op;
}

static int op_in(const rp_stack_op *o, int cpus, int load)
{
    if ((load >= 0 && o->load != load) || !(o->t1 > o->t0) || o->nseg < 1)
        return 0;
    for (int k = 0; k < o->nseg && k < RP_STACK_MAX_SEG; k++)
        if (o->seg[k].cpu < 0 || o->seg[k].cpu >= cpus)
            return 0;
    return 1;
}

/* The CPU op o ran on at time t (t within it). */
static int cpu_at(const rp_stack_op *o, double t)
{
    int m = o->nseg < RP_STACK_MAX_SEG ? o->nseg : RP_STACK_MAX_SEG, cpu = o->seg[0].cpu;
    for (int k = 1; k < m && o->seg[k].t <= t; k++)
        cpu = o->seg[k].cpu;
    return cpu;
}

typedef struct {
    double t0;
    size_t op;
} start_at;

static int by_start(const void *a, const void *b)
{
    const start_at *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

/* The part of gap g of op a (from its CPU then) during which another op of
 * order[lo..hi) was on that CPU. Ops on one CPU are one at a time, so
 * their parts add up. */
static double covered(const rp_stack_op *op, const start_at *order, size_t lo, size_t hi,
                      const rp_stack_op *a, int g)
{
    double t0 = a->gap[g].t0, t1 = a->gap[g].t1, sum = 0;
    int cpu = cpu_at(a, t0);
    for (size_t k = lo; k < hi; k++) {
        const rp_stack_op *b = &op[order[k].op];
        if (b == a || b->t1 <= t0 || b->t0 >= t1 || cpu_at(b, t0 > b->t0 ? t0 : b->t0) != cpu)
            continue;
        double x0 = b->t0 > t0 ? b->t0 : t0, x1 = b->t1 < t1 ? b->t1 : t1;
        sum += x1 - x0;
    }
    return sum < t1 - t0 ? sum : t1 - t0;
}

/* rp_stack_sum's lone_gap_ms: each gap less the time another op had its
 * CPU, over the ops in start order (an op that overlaps a gap started
 * before the gap's end and at most the longest op's time before it); that
 * time is kind_yield_ms, by the gapped op's kind. */
static void lone_gaps(const rp_stack_op *op, const start_at *order, size_t m, rp_stack_sum *s)
{
    double longest = 0;
    for (size_t k = 0; k < m; k++) {
        const rp_stack_op *o = &op[order[k].op];
        longest = o->t1 - o->t0 > longest ? o->t1 - o->t0 : longest;
    }
    size_t lo = 0, hi = 0;
    for (size_t k = 0; k < m; k++) {
        const rp_stack_op *a = &op[order[k].op];
        while (lo < m && op[order[lo].op].t0 < a->t0 - longest)
            lo++;
        if (hi < k)
            hi = k;
        while (hi < m && op[order[hi].op].t0 < a->t1)
            hi++;
        for (int g = 0; g < a->ngap && g < RP_STACK_MAX_GAP; g++) {
            double other = covered(op, order, lo, hi, a, g);
            s->lone_gap_ms += a->gap[g].t1 - a->gap[g].t0 - other;
            s->kind_yield_ms[a->chain != 0] += other;
        }
    }
}

/* Who runs when two ops share a CPU (rp_stack_sum's shared_starts ..
 * slice_ms): the ops in start order, each against the ops still running
 * when it starts. 0, or -1 when out of memory. */
static int share_cpu(const rp_stack_op *op, size_t n, int cpus, int load, rp_stack_sum *s)
{
    start_at *order = malloc((n ? n : 1) * sizeof *order);
    size_t *live = malloc((n ? n : 1) * sizeof *live);
    if (!order || !live) {
        free(order);
        free(live);
        return -1;
    }
    size_t m = 0, nlive = 0;
    for (size_t i = 0; i < n; i++)
        if (op_in(&op[i], cpus, load))
            order[m++] = (start_at){op[i].t0, i};
    qsort(order, m, sizeof *order, by_start);
    for (size_t k = 0; k < m; k++) {
        const rp_stack_op *b = &op[order[k].op];
        size_t keep = 0, other = 0;
        int beside = 0;
        for (size_t j = 0; j < nlive; j++) {
            const rp_stack_op *a = &op[live[j]];
            if (a->t1 <= b->t0)
                continue;              /* ended: no longer live */
            live[keep++] = live[j];
            if (a->t0 < b->t0 && cpu_at(a, b->t0) == b->seg[0].cpu) {
                beside++;
                other = live[j];
            }
        }
        nlive = keep;
        live[nlive++] = order[k].op;
        if (beside != 1)
            continue;
        s->shared_starts++;
        const rp_stack_op *a = &op[other];
        int g = 0, ng = a->ngap < RP_STACK_MAX_GAP ? a->ngap : RP_STACK_MAX_GAP;
        while (g < ng && !(a->gap[g].t0 <= b->t0 && a->gap[g].t1 >= b->t0))
            g++;
        if (g == ng) {
            s->no_gap++;
        } else if (a->gap[g].t1 >= b->t1) {
            s->through++;
            s->through_ms += b->t1 - b->t0;
            s->turn_exposure_ms += b->t1 - b->t0;
        } else if (cpu_at(a, a->gap[g].t1) != b->seg[0].cpu) {
            s->moved_back++;           /* it came back on another CPU: a move, not a turn */
            s->turn_exposure_ms += a->gap[g].t1 - b->t0;
        } else {
            s->cut++;
            s->first_run_ms += a->gap[g].t1 - b->t0;
            s->turn_exposure_ms += a->gap[g].t1 - b->t0;
        }
    }
    lone_gaps(op, order, m, s);
    free(order);
    free(live);
    s->slice_ms = s->cut > 0 ? s->first_run_ms / (double)s->cut : -1;
    s->switch_ms = s->cut > 0 ? s->turn_exposure_ms / (double)s->cut : -1;
    if (s->through > 0)
        s->through_ms /= (double)s->through;
    return 0;
}

/* For each op of the selection, whether its thread went on at once with
 * its next op (the next by start of the same thread, not woken): a malloc'd
 * array over op[0..n), or NULL when out of memory. */
static char *went_on(const rp_stack_op *op, size_t n, int cpus, int load)
{
    char *on = calloc(n ? n : 1, 1);
    start_at *order = malloc((n ? n : 1) * sizeof *order);
    if (!on || !order) {
        free(on);
        free(order);
        return NULL;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (op_in(&op[i], cpus, load))
            order[m++] = (start_at){op[i].t0, i};
    qsort(order, m, sizeof *order, by_start);
    for (size_t k = 0; k < m; k++)     /* the same thread's next op, by start */
        for (size_t j = k + 1; j < m; j++)
            if (op[order[j].op].thread == op[order[k].op].thread) {
                on[order[k].op] = !op[order[j].op].woken;
                break;
            }
    free(order);
    return on;
}

int rp_stack_summarize(const rp_stack_op *op, size_t n, int cpus, int load, rp_stack_sum *s)
{
    memset(s, 0, sizeof *s);
    s->migrate_ms = -1;
    if (cpus > RP_STACK_MAX_CPU)
        cpus = RP_STACK_MAX_CPU;
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        if (op_in(&op[i], cpus, load))
            ne += 1 + (size_t)(op[i].nseg < RP_STACK_MAX_SEG ? op[i].nseg : RP_STACK_MAX_SEG);
    stack_ev *e = malloc((ne ? ne : 1) * sizeof *e);
    if (!e)
        return -1;
    ne = 0;
    for (size_t i = 0; i < n; i++) {
        const rp_stack_op *o = &op[i];
        if (!op_in(o, cpus, load))
            continue;
        int m = o->nseg < RP_STACK_MAX_SEG ? o->nseg : RP_STACK_MAX_SEG;
        s->ops++;
        s->op_ms += o->t1 - o->t0;
        s->chain_ops += o->chain;
        s->kind_ms[o->chain != 0] += o->t1 - o->t0;
        s->on_cpu_ms += o->t1 - o->t0;
        for (int g = 0; g < o->ngap && g < RP_STACK_MAX_GAP; g++)
            s->on_cpu_ms -= o->gap[g].t1 - o->gap[g].t0;
        e[ne++] = (stack_ev){o->t0, EV_START, -1, o->seg[0].cpu, i};
        for (int k = 1; k < m; k++)
            e[ne++] = (stack_ev){o->seg[k].t, EV_MOVE, o->seg[k - 1].cpu, o->seg[k].cpu, i};
        e[ne++] = (stack_ev){o->t1, EV_END, o->seg[m - 1].cpu, -1, i};
    }
    qsort(e, ne, sizeof *e, ev_cmp);
    char *goes_on = went_on(op, n, cpus, load);
    if (!goes_on) {
        free(e);
        return -1;
    }
    if (ne > 0)
        s->span_ms = e[ne - 1].t - e[0].t;
    int on[RP_STACK_MAX_CPU] = {0}, total = 0, most = 0, idle = cpus;   /* idle: CPUs with no op */
    double run_t0[RP_STACK_MAX_CPU], empty_t[RP_STACK_MAX_CPU];   /* a CPU's run: since, and when it emptied */
    for (int c = 0; c < cpus; c++)
        run_t0[c] = empty_t[c] = -HUGE_VAL;
    int spell = -1;                    /* the shared spell's kind (-1: not in one) */
    double spell_t0 = 0;               /* when it began */
    for (size_t k = 0; k < ne; k++) {
        if (k > 0) {
            double dt = e[k].t - e[k - 1].t;
            s->busy_cpu_ms += dt * (cpus - idle);
            if (spell >= 0)
                s->spell_ms[spell] += dt;
            if (spell == 0 || spell == 1)
                add_ages(s->age_ms[spell], e[k - 1].t - spell_t0, e[k].t - spell_t0);
            if (total == 2) {
                s->two_ms += dt;
                if (most == 2)
                    s->two_same_ms += dt;
            }
        }
        const stack_ev *v = &e[k];
        if (v->type == EV_START) {
            if (op[v->op].woken && total >= 1 && idle > 0) {
                int least = 0;         /* the least ops on a CPU running any */
                for (int c = 0; c < cpus; c++)
                    if (on[c] > 0 && (least == 0 || on[c] < least))
                        least = on[c];
                int crowded = least >= 2;
                s->chances += !crowded;
                s->chances2 += crowded;
                if (on[v->to] >= 1) {
                    s->stacked += !crowded;
                    s->stacked2 += crowded;
                }
                if (!crowded) {        /* the busy CPU's run (the one CPU running exactly one op) */
                    int busy = -1;
                    for (int c = 0; c < cpus; c++)
                        if (on[c] == 1 && (busy < 0 || c == v->to))
                            busy = c;
                    int b = age_bin(v->t - run_t0[busy]);
                    s->run_chances[b]++;
                    s->run_stacked[b] += on[v->to] >= 1;
                }
            }
        } else if (v->type == EV_MOVE) {
            if (spell >= 0 && on[v->from] >= 2 && on[v->to] == 0) {
                s->spell_moves[spell]++;
                if (spell < 2)
                    s->age_moves[spell][age_bin(v->t - spell_t0)]++;
            }
            else
                s->other_moves++;
        }
        if (v->from >= 0 && --on[v->from] == 0)
            empty_t[v->from] = v->t;
        if (v->to >= 0 && on[v->to]++ == 0 && v->t - empty_t[v->to] > RP_STACK_BRIDGE_MS)
            run_t0[v->to] = v->t;      /* a new run (not a thread going on) */
        total += (v->to >= 0) - (v->from >= 0);
        most = 0;
        idle = 0;
        for (int c = 0; c < cpus; c++) {
            most = on[c] > most ? on[c] : most;
            idle += on[c] == 0;
        }
        if (idle > 0 && most >= 2) {
            if (spell < 0) {           /* a spell begins: by a start, or by a CPU emptied */
                spell = v->type == EV_START ? 0 : v->type == EV_END && goes_on[v->op] ? 2 : 1;
                spell_t0 = v->t;
                s->spells[spell]++;
            }
        } else {
            if (spell >= 0)            /* what ended it: an op's end, a start, a move */
                s->spell_ended[spell][v->type == EV_END ? 0 : v->type == EV_START ? 1 : 2]++;
            spell = -1;
        }
    }
    free(e);
    s->share = s->chances ? (double)s->stacked / (double)s->chances : 0;
    free(goes_on);
    s->util = s->span_ms > 0 ? s->busy_cpu_ms / (s->span_ms * cpus) : 0;
    s->exposure_ms = s->spell_ms[0] + s->spell_ms[1];
    s->moves = s->spell_moves[0] + s->spell_moves[1];
    if (s->moves > 0)
        s->migrate_ms = s->exposure_ms / (double)s->moves;
    for (int k = 0; k < 3; k++)
        s->spell_wait_ms[k] = s->spell_moves[k] > 0 ? s->spell_ms[k] / (double)s->spell_moves[k] : -1;
    return share_cpu(op, n, cpus, load, s);
}

/* ---- the share by load and run ---------------------------------------------- */

#define RUNFIT_ITERS 1000

int rp_stack_runfit(const rp_stack_result *r, int by_load, double *share, double *factor,
                    double *age_ms)
{
    const rp_stack_sum *row[RP_STACK_NLOADS];
    int nl = by_load ? RP_STACK_NLOADS : 1;
    for (int l = 0; l < nl; l++)
        row[l] = by_load ? &r->at[l] : &r->all;
    double lo = 0;
    for (int b = 0; b < RP_STACK_NAGE; lo = rp_stack_age_ms[b++]) {
        age_ms[b] = isinf(rp_stack_age_ms[b]) ? 2 * lo : 0.5 * (lo + rp_stack_age_ms[b]);
        factor[b] = 1;
    }
    for (int it = 0; it < RUNFIT_ITERS; it++) {
        for (int l = 0; l < nl; l++) {  /* each load's stacked count kept */
            double den = 0;
            long st = 0;
            for (int b = 0; b < RP_STACK_NAGE; b++) {
                den += (double)row[l]->run_chances[b] * factor[b];
                st += row[l]->run_stacked[b];
            }
            share[l] = den > 0 ? (double)st / den : 0;
        }
        for (int b = 0; b < RP_STACK_NAGE; b++) {   /* each bin's */
            double den = 0;
            long st = 0;
            for (int l = 0; l < nl; l++) {
                den += (double)row[l]->run_chances[b] * share[l];
                st += row[l]->run_stacked[b];
            }
            if (den > 0)
                factor[b] = (double)st / den;
        }
    }
    /* the factors' mean over every chance 1: the loads' shares take the scale */
    double w = 0, c = 0;
    for (int l = 0; l < nl; l++)
        for (int b = 0; b < RP_STACK_NAGE; b++) {
            w += (double)row[l]->run_chances[b] * factor[b];
            c += (double)row[l]->run_chances[b];
        }
    if (w > 0) {
        for (int b = 0; b < RP_STACK_NAGE; b++)
            factor[b] *= c / w;
        for (int l = 0; l < nl; l++)
            share[l] *= w / c;
    }
    /* bins never seen: the nearest younger seen bin's factor, else the older's */
    int seen[RP_STACK_NAGE], any = 0;
    for (int b = 0; b < RP_STACK_NAGE; b++) {
        long ch = 0;
        for (int l = 0; l < nl; l++)
            ch += row[l]->run_chances[b];
        any |= seen[b] = ch > 0;
    }
    for (int b = 0; any && b < RP_STACK_NAGE; b++)
        if (!seen[b]) {
            int k = b;
            while (k >= 0 && !seen[k])
                k--;
            if (k < 0)
                for (k = b; !seen[k]; k++)
                    ;
            factor[b] = factor[k];
        }
    return nl;
}

/* ---- the measurement -------------------------------------------------------- */

#define UNIT_ITERS 512                 /* one unit of busy work: about a microsecond */

/* A queue of frame indices between two kinds of thread. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long *item, head, tail;        /* item[head..tail) waiting; room for every frame */
    bool stop;                     /* no more will come */
} queue;

typedef struct {
    queue dq, sq, xq;              /* decode, sample, execute */
    rp_stack_op *op;               /* op[2 i]: frame i's decode; op[2 i + 1]: its chain */
    int *load;                     /* frame i's load step */
    long decode_units, chain_units;
    int keep_every;
} shared;

/* A thread's start: the shared state and its number (the decode workers
 * 0..workers-1, then the sampler, then the executor). */
typedef struct {
    shared *sh;
    int id;
} thread_arg;

/* The busy work's start and end go through these, so that the compiler
 * can neither fold the loop (from a known start) nor drop it. */
static volatile double seed = 0.5, sink;

/* One unit of dependent arithmetic the compiler cannot drop. */
static double unit(double x)
{
    for (int i = 0; i < UNIT_ITERS; i++)
        x = x * 0.9999999 + 1e-7;
    return x;
}

/* An op of `units` of busy work, its CPU and the clock read after every
 * unit: a unit that took RP_STACK_GAP_MS longer than units do is a gap
 * when the op was off its CPU. */
static double busy_op(long units, rp_stack_op *o, double x)
{
    o->t0 = rp_now_ms();
    int cpu = sched_getcpu();
    o->seg[0].t = o->t0;
    o->seg[0].cpu = cpu;
    o->nseg = 1;
    o->ngap = 0;
    double last = o->t0;
    for (long u = 0; u < units; u++) {
        x = unit(x);
        int c = sched_getcpu();
        double t = rp_now_ms();
        if (t - last > RP_STACK_GAP_MS) {
            if (o->ngap < RP_STACK_MAX_GAP) {
                o->gap[o->ngap].t0 = last;
                o->gap[o->ngap].t1 = t;
            }
            o->ngap++;
        }
        last = t;
        if (c != cpu) {
            if (o->nseg < RP_STACK_MAX_SEG) {
                o->seg[o->nseg].t = t;
                o->seg[o->nseg].cpu = c;
            }
            o->nseg++;
            cpu = c;
        }
    }
    o->t1 = rp_now_ms();
    if (o->nseg > RP_STACK_MAX_SEG)
        o->nseg = RP_STACK_MAX_SEG;
    if (o->ngap > RP_STACK_MAX_GAP)
        o->ngap = RP_STACK_MAX_GAP;
    return x;
}

static void q_push(queue *q, long i)
{
    pthread_mutex_lock(&q->mu);
    q->item[q->tail++] = i;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* The next frame, or -1 once the queue is stopped and empty; *slept:
 * whether the thread waited for it. */
static long q_pop(queue *q, int *slept)
{
    pthread_mutex_lock(&q->mu);
    *slept = 0;
    while (q->head == q->tail && !q->stop) {
        *slept = 1;
        pthread_cond_wait(&q->cv, &q->mu);
    }
    long i = q->head < q->tail ? q->item[q->head++] : -1;
    pthread_mutex_unlock(&q->mu);
    return i;
}

static void q_stop(queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void *decode_main(void *arg)
{
    shared *sh = ((thread_arg *)arg)->sh;
    int id = ((thread_arg *)arg)->id;
    double x = seed;
    rp_quiet_thread("vl-decode");
    int slept;
    for (long i; (i = q_pop(&sh->dq, &slept)) >= 0;) {
        sh->op[2 * i].load = sh->load[i];
        sh->op[2 * i].woken = slept;
        sh->op[2 * i].thread = id;
        x = busy_op(sh->decode_units, &sh->op[2 * i], x);
        q_push(&sh->sq, i);
    }
    sink = x;
    return NULL;
}

static void *sample_main(void *arg)
{
    shared *sh = ((thread_arg *)arg)->sh;
    rp_quiet_thread("vl-sample");
    int slept;
    for (long i; (i = q_pop(&sh->sq, &slept)) >= 0;)
        if (i % sh->keep_every == 0)
            q_push(&sh->xq, i);
    return NULL;
}

static void *execute_main(void *arg)
{
    shared *sh = ((thread_arg *)arg)->sh;
    int id = ((thread_arg *)arg)->id;
    double x = seed;
    rp_quiet_thread("vl-exec");
    int slept;
    for (long i; (i = q_pop(&sh->xq, &slept)) >= 0;) {
        rp_stack_op *o = &sh->op[2 * i + 1];
        o->load = sh->load[i];
        o->woken = slept;
        o->chain = 1;
        o->thread = id;
        x = busy_op(sh->chain_units, o, x);
    }
    sink = x;
    return NULL;
}

/* The busy loop's units per ms on this thread alone, each unit read as
 * busy_op reads it (its CPU and the clock): the median of 7 ops of
 * 10000 units. */
static double units_per_ms(void)
{
    double r[7], x = seed;
    rp_stack_op o;
    for (int k = 0; k < 7; k++) {
        x = busy_op(10000, &o, x);
        r[k] = 10000 / (o.t1 - o.t0);
    }
    sink = x;
    gsl_sort(r, 1, 7);
    return r[3];
}

/* The real ops' times alone: 30 of each after 10 to warm the caches. */
static void op_times(rp_solo *s, double *decode_ms, double *chain_ms)
{
    for (int chain = 0; chain < 2; chain++) {
        for (int i = 0; i < 10; i++)
            chain ? rp_solo_chain(s) : rp_solo_decode(s, 1);
        double a = rp_now_ms();
        for (int i = 0; i < 30; i++)
            chain ? rp_solo_chain(s) : rp_solo_decode(s, 1);
        *(chain ? chain_ms : decode_ms) = (rp_now_ms() - a) / 30;
    }
}

static int q_init(queue *q, long cap)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    q->item = malloc((size_t)cap * sizeof *q->item);
    return q->item ? 0 : -1;
}

static void q_free(queue *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q->item);
}

int rp_stack_run(const rp_params *p, double seconds, double op_scale, rp_stack_result *r, char *err,
                 size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (p->cores < 1 || p->cores > RP_STACK_MAX_CPU || !(seconds > 0) || p->keep_every < 1
        || p->decode_workers < 1) {
        snprintf(err, errlen, "stackcal: cores 1..%d, seconds > 0, decode workers >= 1",
                 RP_STACK_MAX_CPU);
        return -1;
    }
    static const double loads[RP_STACK_NLOADS] = {0.2, 0.4, 0.6, 0.8};
    memcpy(r->load, loads, sizeof loads);
    r->cpus = p->cores;
    r->workers = p->decode_workers;
    r->keep_every = p->keep_every;
    r->seconds = seconds;
    cpu_set_threads(1);
    dect_clip *clip = NULL;
    rp_solo solo;
    memset(&solo, 0, sizeof solo);
    if (rp_ops_clip(p, &clip, err, errlen) || rp_solo_init(&solo, p, clip, err, errlen)) {
        rp_solo_free(&solo);
        dect_clip_free(clip);
        return -1;
    }
    op_times(&solo, &r->decode_ms, &r->chain_ms);
    r->op_scale = op_scale > 0 ? op_scale : 1;
    r->decode_ms *= r->op_scale;
    r->chain_ms *= r->op_scale;
    rp_solo_free(&solo);
    dect_clip_free(clip);
    r->units_per_ms = units_per_ms();

    double frame_ms = r->decode_ms + r->chain_ms / p->keep_every, expect = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        expect += loads[l] * p->cores / frame_ms * seconds * 1e3;
    long cap = (long)(1.5 * expect) + 1000;
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.keep_every = p->keep_every;
    sh.decode_units = (long)(r->decode_ms * r->units_per_ms + 0.5);
    sh.chain_units = (long)(r->chain_ms * r->units_per_ms + 0.5);
    int nth = p->decode_workers + 2, started = 0, rc = -1;
    pthread_t *th = calloc((size_t)nth, sizeof *th);
    thread_arg *arg = calloc((size_t)nth, sizeof *arg);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    sh.op = calloc(2 * (size_t)cap, sizeof *sh.op);
    sh.load = calloc((size_t)cap, sizeof *sh.load);
    int qok = (q_init(&sh.dq, cap) == 0) & (q_init(&sh.sq, cap) == 0) & (q_init(&sh.xq, cap) == 0);
    if (!th || !arg || !rng || !sh.op || !sh.load || !qok) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    gsl_rng_set(rng, p->seed);
    for (; started < nth; started++) {
        void *(*fn)(void *) = started < p->decode_workers ? decode_main
                              : started == p->decode_workers ? sample_main : execute_main;
        arg[started] = (thread_arg){&sh, started};
        if (pthread_create(&th[started], NULL, fn, &arg[started])) {
            snprintf(err, errlen, "cannot start stackcal's threads");
            goto out;
        }
    }
    rp_quiet_thread("vl-source");                    /* the releaser, as the pipeline's camera thread */
    double t = rp_now_ms() + 50;
    long nf = 0;
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        double gap = frame_ms / (loads[l] * p->cores), end = t + seconds * 1e3;
        while (nf < cap) {
            t += gsl_ran_exponential(rng, gap);
            if (t >= end)
                break;
            rp_sleep_until(t);
            sh.load[nf] = l;
            q_push(&sh.dq, nf++);
        }
        t = end;
    }
    rc = 0;
out:
    /* stop in pipeline order, each queue once the threads feeding it are done */
    q_stop(&sh.dq);
    for (int k = 0; k < started && k < p->decode_workers; k++)
        pthread_join(th[k], NULL);
    q_stop(&sh.sq);
    if (started > p->decode_workers)
        pthread_join(th[p->decode_workers], NULL);
    q_stop(&sh.xq);
    if (started > p->decode_workers + 1)
        pthread_join(th[p->decode_workers + 1], NULL);
    if (rc == 0) {
        if (rp_stack_summarize(sh.op, 2 * (size_t)nf, r->cpus, -1, &r->all))
            rc = -1;
        for (int l = 0; rc == 0 && l < RP_STACK_NLOADS; l++)
            if (rp_stack_summarize(sh.op, 2 * (size_t)nf, r->cpus, l, &r->at[l]))
                rc = -1;
        if (rc)
            snprintf(err, errlen, "out of memory");
        else if (r->all.chances == 0 || r->all.moves == 0) {
            snprintf(err, errlen, "stackcal: %ld chances to stack and %ld moves seen in %ld ops; "
                     "run it longer (--seconds)", r->all.chances, r->all.moves, r->all.ops);
            rc = -1;
        }
    }
    q_free(&sh.dq);
    q_free(&sh.sq);
    q_free(&sh.xq);
    gsl_rng_free(rng);
    free(sh.op);
    free(sh.load);
    free(th);
    free(arg);
    return rc;
}
