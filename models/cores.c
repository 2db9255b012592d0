/* cores.c — processor sharing of CPU cores among running jobs. See cores.h.
 * It must never know what a job is: completions are the caller's events. */
#include "models/cores.h"

#include <stdlib.h>

/* A job this close to done (ms of work) is done: the tick that ends it was
 * computed from its remaining work, so only rounding is left. */
#define CORES_EPS 1e-9

int cores_init(cores_t *c, int cores, const double *speedup, int nspeedup, uint32_t tick_kind)
{
    c->cores = cores < 1 ? 1 : cores;
    c->speedup = nspeedup > 0 ? speedup : NULL;
    c->nspeedup = nspeedup;
    c->tick_kind = tick_kind;
    c->n = 0;
    c->cap = 16;
    c->speed = 1;
    c->t_last = 0;
    c->gen = 0;
    c->job = malloc((size_t)c->cap * sizeof *c->job);
    return c->job ? 0 : -1;
}

void cores_free(cores_t *c)
{
    free(c->job);
    c->job = NULL;
    c->n = c->cap = 0;
}

double cores_rate(const cores_t *c)
{
    if (c->speedup && c->n > 0)
        return c->speed * c->speedup[(c->n < c->nspeedup ? c->n : c->nspeedup) - 1] / c->n;
    return c->speed * (c->n > c->cores ? (double)c->cores / c->n : 1.0);
}

/* Bring every job's remaining work up to now at the current rate. */
static void advance(cores_t *c, double now)
{
    double done = (now - c->t_last) * cores_rate(c);
    if (done > 0)
        for (int j = 0; j < c->n; j++)
            c->job[j].left -= done;
    c->t_last = now;
}

/* One tick for the earliest completion under the new rate. */
static int reschedule(cores_t *c, ev_queue *q, double now)
{
    c->gen++;
    if (c->n == 0)
        return 0;
    double least = c->job[0].left;
    for (int j = 1; j < c->n; j++)
        if (c->job[j].left < least)
            least = c->job[j].left;
    if (least < 0)
        least = 0;
    return ev_push(q, now + least / cores_rate(c), c->tick_kind, 0, c->gen);
}

int cores_start(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                double work)
{
    advance(c, now);
    if (c->n == c->cap) {
        int ncap = 2 * c->cap;
        cores_job *nj = realloc(c->job, (size_t)ncap * sizeof *nj);
        if (!nj)
            return -1;
        c->job = nj;
        c->cap = ncap;
    }
    c->job[c->n++] = (cores_job){kind, a, b, work > 0 ? work : 0};
    return reschedule(c, q, now);
}

int cores_tick(cores_t *c, ev_queue *q, double now, uint64_t gen)
{
    if (gen != c->gen)
        return 0;                      /* superseded by a later change */
    advance(c, now);
    int k = 0;
    for (int j = 0; j < c->n; j++) {   /* finished jobs leave, in start order */
        if (c->job[j].left <= CORES_EPS) {
            if (ev_push(q, now, c->job[j].kind, c->job[j].a, c->job[j].b) != 0)
                return -1;
        } else {
            c->job[k++] = c->job[j];
        }
    }
    c->n = k;
    return reschedule(c, q, now);
}

int cores_set_speed(cores_t *c, ev_queue *q, double now, double speed)
{
    advance(c, now);                   /* the work so far at the old speed */
    c->speed = speed > 0 ? speed : c->speed;
    return reschedule(c, q, now);
}
