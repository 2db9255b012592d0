/* hist.h — fixed-size log-linear histograms of non-negative values.
 *
 * Each power of two is split into 1024 equal sub-buckets, so a bucket is
 * 1/1024 of its lower edge wide and reporting its midpoint is within 0.05 %
 * of any value in it. The bucket index comes straight from the bits of the
 * IEEE double (exponent and top ten mantissa bits): recording is O(1) with
 * no log(). Range: [2^-20, 2^44) in the caller's unit (ms: 1 ns to 557 years);
 * zero and values below the range are counted in an exact-zero/underflow
 * bucket, values above in an overflow bucket, and min, max and sum are kept
 * exactly. Histograms with the same layout merge by adding counts.
 * Memory is fixed at creation (512 KiB): it never grows with the number of
 * values. A histogram never allocates after hist_init. */
#ifndef VL_HIST_H
#define VL_HIST_H

#include <stdint.h>
#include <string.h>

#define HIST_SUB_BITS 10
#define HIST_EXP_MIN (-20)
#define HIST_EXP_MAX 44
#define HIST_NBUCKETS ((HIST_EXP_MAX - HIST_EXP_MIN) << HIST_SUB_BITS)

typedef struct {
    uint64_t *counts;        /* HIST_NBUCKETS */
    uint64_t n;              /* all values recorded */
    uint64_t n_low;          /* zero or below 2^HIST_EXP_MIN */
    uint64_t n_high;         /* at or above 2^HIST_EXP_MAX */
    uint32_t lo, hi;         /* lowest and highest bucket touched (valid when n > n_low + n_high) */
    double sum, min, max;
} hist_t;

int hist_init(hist_t *h);          /* 0, or -1 when out of memory */
void hist_free(hist_t *h);
void hist_reset(hist_t *h);        /* forget all values, keep memory */
/* Add src's values to dst. */
void hist_merge(hist_t *dst, const hist_t *src);

static inline void hist_record(hist_t *h, double v)
{
    h->n++;
    h->sum += v;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;   /* v >= 0, so no sign bit */
    if (e < HIST_EXP_MIN) { h->n_low++; return; }  /* includes 0 and subnormals */
    if (e >= HIST_EXP_MAX) { h->n_high++; return; }
    uint32_t i = ((uint32_t)(e - HIST_EXP_MIN) << HIST_SUB_BITS)
               | (uint32_t)((bits >> (52 - HIST_SUB_BITS)) & ((1u << HIST_SUB_BITS) - 1));
    h->counts[i]++;
    if (i < h->lo) h->lo = i;
    if (i > h->hi) h->hi = i;
}

static inline double hist_mean(const hist_t *h) { return h->n ? h->sum / (double)h->n : 0.0; }

/* The q-quantile (0 <= q <= 1) by nearest rank: the smallest recorded value x
 * such that at least ceil(q*n) values are <= x, reported as its bucket's
 * midpoint clamped to [min, max]. 0 when empty. */
double hist_quantile(const hist_t *h, double q);
/* Bucket edges, for tests and plots. */
double hist_bucket_lower(uint32_t i);
double hist_bucket_upper(uint32_t i);

#endif
