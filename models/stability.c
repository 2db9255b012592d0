/* stability.c — the growth test of stability.h. O(n x STAB_BLOCKS) work
 * when a block completes, O(n) on other ticks; no allocation after
 * stab_init. It must never look at events one by one. */
#include "models/stability.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int stab_init(stab_t *d, int n, double dt_ms)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->dt = dt_ms;
    size_t m = n > 0 ? (size_t)n : 1;
    d->blk = calloc(m * STAB_BLOCKS, sizeof *d->blk);
    d->cur = calloc(m, sizeof *d->cur);
    d->min_window = malloc(m * sizeof *d->min_window);
    if (!d->blk || !d->cur || !d->min_window) {
        stab_free(d);
        return -1;
    }
    for (int i = 0; i < n; i++)
        d->min_window[i] = INFINITY;
    stab_restart(d, 0.0);
    return 0;
}

void stab_free(stab_t *d)
{
    free(d->blk);
    free(d->cur);
    free(d->min_window);
    d->blk = d->cur = NULL;
    d->min_window = NULL;
    d->n = 0;
}

void stab_watch(stab_t *d, int i, double min_window)
{
    d->min_window[i] = min_window > STAB_MIN_WINDOW ? min_window : STAB_MIN_WINDOW;
}

void stab_restart(stab_t *d, double now)
{
    d->nblk = 0;
    d->per = 1;
    d->in_cur = 0;
    d->t0 = now;
    memset(d->cur, 0, (size_t)d->n * sizeof *d->cur);
}

/* Mean and standard deviation of the samples of blocks [b, b + k) of series i. */
static void window(const stab_t *d, int i, int b, int k, double *mean, double *sd)
{
    double s = 0, ss = 0;
    for (int j = b; j < b + k; j++) {
        s += d->blk[(size_t)i * STAB_BLOCKS + (size_t)j].sum;
        ss += d->blk[(size_t)i * STAB_BLOCKS + (size_t)j].sumsq;
    }
    double n = (double)k * (double)d->per;
    *mean = s / n;
    double v = ss / n - *mean * *mean;
    *sd = v > 0 ? sqrt(v) : 0.0;
}

static int judge(const stab_t *d, int i, stab_growth *g)
{
    int k = d->nblk / 8;
    double len = (double)k * (double)d->per;            /* ticks per window */
    if (k < 1 || !(len >= d->min_window[i]))
        return 0;
    int off = d->nblk - 8 * k;
    double m[9], sd[9], worst = 0;
    for (int w = 4; w <= 8; w++) {
        window(d, i, off + (w - 1) * k, k, &m[w], &sd[w]);
        if (w > 4 && sd[w] > worst)
            worst = sd[w];
    }
    for (int w = 5; w <= 8; w++)
        if (!(m[w] > m[w - 1]))
            return 0;
    double rise = m[8] - m[4];
    if (!(rise >= 2.0 && rise > STAB_Z * worst))
        return 0;
    double t_win = len * d->dt, t_first = d->t0 + (double)off * (double)d->per * d->dt;
    g->series = i;
    g->t_from = t_first + 3.5 * t_win;
    g->t_to = t_first + 7.5 * t_win;
    g->q_from = m[4];
    g->q_to = m[8];
    return 1;
}

int stab_tick(stab_t *d, double now, const double *level, stab_growth *g)
{
    (void)now;
    for (int i = 0; i < d->n; i++) {
        d->cur[i].sum += level[i];
        d->cur[i].sumsq += level[i] * level[i];
    }
    if (++d->in_cur < d->per)
        return 0;
    for (int i = 0; i < d->n; i++) {                    /* the block is complete */
        d->blk[(size_t)i * STAB_BLOCKS + (size_t)d->nblk] = d->cur[i];
        d->cur[i] = (stab_block){ 0, 0 };
    }
    d->in_cur = 0;
    if (++d->nblk == STAB_BLOCKS) {                     /* full: merge pairs */
        for (int i = 0; i < d->n; i++) {
            stab_block *b = &d->blk[(size_t)i * STAB_BLOCKS];
            for (int j = 0; j < STAB_BLOCKS / 2; j++)
                b[j] = (stab_block){ b[2 * j].sum + b[2 * j + 1].sum,
                                     b[2 * j].sumsq + b[2 * j + 1].sumsq };
        }
        d->nblk = STAB_BLOCKS / 2;
        d->per *= 2;
    }
    if (d->nblk < STAB_BLOCKS / 2)                      /* windows of at least 4 blocks */
        return 0;
    for (int i = 0; i < d->n; i++)
        if (isfinite(d->min_window[i]) && judge(d, i, g))
            return 1;
    return 0;
}
