/* whist.c — sliding-window coarse histograms. See whist.h. */
#include "sim/whist.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int whist_init(whist_t *w, int nslots)
{
    memset(w, 0, sizeof *w);
    if (nslots < 1)
        nslots = 1;
    w->slots = calloc((size_t)nslots * WHIST_NB, sizeof *w->slots);
    w->nslots = nslots;
    return w->slots ? 0 : -1;
}

void whist_free(whist_t *w)
{
    free(w->slots);
    w->slots = NULL;
}

void whist_clear(whist_t *w)
{
    memset(w->slots, 0, (size_t)w->nslots * WHIST_NB * sizeof *w->slots);
    memset(w->sum, 0, sizeof w->sum);
    w->n = 0;
    w->cur = 0;
}

/* Bucket 0: below 2^EXP_MIN (and zero, negatives, NaN); last: at or above
 * 2^EXP_MAX. Read from the bits of the double, as hist.h does: the exponent
 * and the top four mantissa bits. */
static int whist_bucket(double v)
{
    if (!(v > 0))
        return 0;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    if (e < WHIST_EXP_MIN)
        return 0;
    if (e >= WHIST_EXP_MAX)
        return WHIST_NB - 1;
    return 1 + (e - WHIST_EXP_MIN) * WHIST_SUB + (int)((bits >> 48) & (WHIST_SUB - 1));
}

static double whist_mid(int b)
{
    if (b == 0)
        return 0.0;
    if (b == WHIST_NB - 1)
        return ldexp(1.0, WHIST_EXP_MAX);
    int e = (b - 1) / WHIST_SUB + WHIST_EXP_MIN, sub = (b - 1) % WHIST_SUB;
    return ldexp(1.0 + (sub + 0.5) / WHIST_SUB, e);
}

void whist_add(whist_t *w, double v)
{
    int b = whist_bucket(v);
    w->slots[(size_t)w->cur * WHIST_NB + (size_t)b]++;
    w->sum[b]++;
    w->n++;
}

void whist_advance(whist_t *w)
{
    w->cur = (w->cur + 1) % w->nslots;
    uint32_t *old = &w->slots[(size_t)w->cur * WHIST_NB];
    for (int b = 0; b < WHIST_NB; b++) {
        w->sum[b] -= old[b];
        w->n -= old[b];
        old[b] = 0;
    }
}

double whist_quantile(const whist_t *w, double q)
{
    if (w->n == 0)
        return 0.0;
    uint64_t rank = (uint64_t)ceil(q * (double)w->n), seen = 0;
    if (rank < 1)
        rank = 1;
    for (int b = 0; b < WHIST_NB; b++) {
        seen += w->sum[b];
        if (seen >= rank)
            return whist_mid(b);
    }
    return whist_mid(WHIST_NB - 1);
}
