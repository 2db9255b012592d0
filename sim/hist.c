/* hist.c — log-linear histogram queries and merging. See hist.h.
 * Everything here scans only the touched range [lo, hi], so queries on a
 * histogram of a narrow distribution cost a few thousand adds. */
#include "sim/hist.h"
#include <math.h>
#include <stdlib.h>

int hist_init(hist_t *h)
{
    memset(h, 0, sizeof *h);
    h->counts = calloc(HIST_NBUCKETS, sizeof *h->counts);
    if (!h->counts)
        return -1;
    hist_reset(h);
    return 0;
}

void hist_free(hist_t *h)
{
    free(h->counts);
    h->counts = NULL;
}

void hist_reset(hist_t *h)
{
    if (h->n > h->n_low + h->n_high)
        memset(h->counts + h->lo, 0, (size_t)(h->hi - h->lo + 1) * sizeof *h->counts);
    h->n = h->n_low = h->n_high = 0;
    h->lo = HIST_NBUCKETS;
    h->hi = 0;
    h->sum = 0.0;
    h->min = INFINITY;
    h->max = -INFINITY;
}

void hist_merge(hist_t *dst, const hist_t *src)
{
    if (src->n == 0)
        return;
    if (src->n > src->n_low + src->n_high) {
        for (uint32_t i = src->lo; i <= src->hi; i++)
            dst->counts[i] += src->counts[i];
        if (src->lo < dst->lo) dst->lo = src->lo;
        if (src->hi > dst->hi) dst->hi = src->hi;
    }
    dst->n += src->n;
    dst->n_low += src->n_low;
    dst->n_high += src->n_high;
    dst->sum += src->sum;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

double hist_bucket_lower(uint32_t i)
{
    int e = (int)(i >> HIST_SUB_BITS) + HIST_EXP_MIN;
    double m = 1.0 + (double)(i & ((1u << HIST_SUB_BITS) - 1)) / (double)(1u << HIST_SUB_BITS);
    return ldexp(m, e);
}

double hist_bucket_upper(uint32_t i)
{
    int e = (int)(i >> HIST_SUB_BITS) + HIST_EXP_MIN;
    double m = 1.0 + (double)((i & ((1u << HIST_SUB_BITS) - 1)) + 1) / (double)(1u << HIST_SUB_BITS);
    return ldexp(m, e);
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double hist_quantile(const hist_t *h, double q)
{
    if (h->n == 0)
        return 0.0;
    if (q <= 0.0)
        return h->min;
    if (q >= 1.0)
        return h->max;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);   /* 1-based */
    if (rank < 1)
        rank = 1;
    uint64_t seen = h->n_low;
    if (rank <= seen)                    /* zero/underflow values: report the smallest */
        return h->min;
    if (h->n > h->n_low + h->n_high) {
        for (uint32_t i = h->lo; i <= h->hi; i++) {
            seen += h->counts[i];
            if (seen >= rank) {
                double mid = 0.5 * (hist_bucket_lower(i) + hist_bucket_upper(i));
                return clampd(mid, h->min, h->max);
            }
        }
    }
    return h->max;                       /* the rank falls among the overflow values */
}
