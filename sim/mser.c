/* mser.c — MSER-5 over bounded batch means. See mser.h. */
#include "sim/mser.h"
#include <stdlib.h>

int mser_init(mser_t *m, size_t cap)
{
    if (cap < 4)
        cap = 4;
    cap += cap & 1;
    m->mean = malloc(cap * sizeof *m->mean);
    m->t_end = malloc(cap * sizeof *m->t_end);
    m->k = 0;
    m->cap = cap;
    m->batch = 5;
    m->acc = 0.0;
    m->acc_n = 0;
    if (!m->mean || !m->t_end) {
        mser_free(m);
        return -1;
    }
    return 0;
}

void mser_free(mser_t *m)
{
    free(m->mean);
    free(m->t_end);
    m->mean = m->t_end = NULL;
    m->k = m->cap = 0;
}

/* Halve the number of stored batches by merging neighbours. */
static void mser_fold(mser_t *m)
{
    for (size_t i = 0; i < m->k / 2; i++) {
        m->mean[i] = 0.5 * (m->mean[2 * i] + m->mean[2 * i + 1]);
        m->t_end[i] = m->t_end[2 * i + 1];
    }
    m->k /= 2;
    m->batch *= 2;
}

void mser_add(mser_t *m, double t, double x)
{
    m->acc += x;
    if (++m->acc_n < m->batch)
        return;
    if (m->k == m->cap) {
        mser_fold(m);                     /* batch doubled: keep filling this one */
        if (m->acc_n < m->batch)
            return;
    }
    m->mean[m->k] = m->acc / (double)m->acc_n;
    m->t_end[m->k] = t;
    m->k++;
    m->acc = 0.0;
    m->acc_n = 0;
}

mser_result mser_compute(const mser_t *m)
{
    mser_result r = { 0.0, 0, m->k, m->batch, false };
    size_t k = m->k;
    if (k < 4)
        return r;
    /* Walk d from the end backwards so the suffix sums build up in O(k).
     * The values are centred on their grand mean first: the one-pass
     * variance below would otherwise lose digits on large, flat series. */
    double c = 0.0;
    for (size_t i = 0; i < k; i++)
        c += m->mean[i];
    c /= (double)k;
    double s = 0.0, s2 = 0.0, best = 0.0;
    size_t best_d = 0;
    int have = 0;
    for (size_t i = k; i-- > 0;) {
        double y = m->mean[i] - c;
        s += y;
        s2 += y * y;
        size_t d = i, n = k - d;
        if (d > k / 2)
            continue;
        double mu = s / (double)n;
        double ss = s2 - (double)n * mu * mu;
        if (ss < 0.0)
            ss = 0.0;
        double stat = ss / ((double)n * (double)n);
        if (!have || stat <= best) {      /* <= prefers the smaller d on ties */
            best = stat;
            best_d = d;
            have = 1;
        }
    }
    r.d = best_d;
    r.t_trunc = best_d ? m->t_end[best_d - 1] : 0.0;
    r.settled = best_d < k / 2;
    return r;
}
