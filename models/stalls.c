/* stalls.c — spells in which the host does not run a core. See stalls.h.
 * It must never know what a thread or a stage is: the caller says which
 * core a wake-up goes to. */
#include "models/stalls.h"

#include <stdlib.h>
#include <gsl/gsl_randist.h>

/* Draw core k's next spell, its gap counted from `from`. */
static void next_spell(stalls_t *s, int k, double from)
{
    double gap = gsl_ran_exponential(s->rng, s->gap_mean_ms);
    double len = dist_sample(s->ms, s->rng);
    s->t0[k] = from + gap;
    s->t1[k] = s->t0[k] + (len > 0 ? len : 0);
}

int stalls_init(stalls_t *s, int cores, double per_s, const dist_t *ms, gsl_rng *r)
{
    s->cores = cores;
    s->gap_mean_ms = 1000.0 / per_s;
    s->ms = ms;
    s->rng = r;
    s->poll_ms = 0;
    s->t0 = malloc((size_t)cores * sizeof *s->t0);
    s->t1 = malloc((size_t)cores * sizeof *s->t1);
    if (!s->t0 || !s->t1) {
        stalls_free(s);
        return -1;
    }
    for (int k = 0; k < cores; k++)
        next_spell(s, k, 0);
    stalls_reset_stats(s);
    return 0;
}

void stalls_free(stalls_t *s)
{
    free(s->t0);
    free(s->t1);
    s->t0 = s->t1 = NULL;
}

/* Walk core k past the spells that ended by now. */
static void walk(stalls_t *s, int k, double now)
{
    while (s->t1[k] <= now)
        next_spell(s, k, s->t1[k]);
}

int stalls_on(stalls_t *s, int k, double now)
{
    walk(s, k, now);
    return s->t0[k] <= now;
}

void stalls_set_poll(stalls_t *s, double poll_ms)
{
    s->poll_ms = poll_ms > 0 ? poll_ms : 0;
}

double stalls_wake(stalls_t *s, int k, double now, double t, double halted_ms)
{
    walk(s, k, now);
    s->wakes++;
    if (halted_ms < s->poll_ms) {      /* the host is still polling it */
        s->polled++;
        return t;
    }
    if (t < s->t0[k] || t >= s->t1[k])
        return t;
    s->stalled++;
    s->wait_ms += s->t1[k] - t;
    return s->t1[k];
}

void stalls_reset_stats(stalls_t *s)
{
    s->wakes = s->polled = s->stalled = 0;
    s->wait_ms = 0;
}
