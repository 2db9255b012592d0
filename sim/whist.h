/* whist.h — quantiles over a sliding window of recent time, in fixed memory.
 *
 * For controllers and alerts that ask "what is the p99 of the last 10 s?".
 * Values go into the current slot (one slot per control interval); advance
 * starts a new slot and forgets the oldest, so the window always covers the
 * last nslots intervals. Each slot is a coarse log-linear histogram — 16
 * equal buckets per power of two (a bucket is 1/16 of its octave's lower
 * edge wide, so its midpoint is within 3.125 % of any value in it) over
 * [2^-4, 2^24) — and a running sum over the window makes a query cost one
 * pass over 448 counters, whatever the window's length. Memory is fixed at
 * init: nslots x 448 x 4 bytes. Coarse on purpose: this answers control
 * questions; the exact statistics live in hist.h. */
#ifndef VL_WHIST_H
#define VL_WHIST_H

#include <stdint.h>

#define WHIST_SUB 16
#define WHIST_EXP_MIN (-4)
#define WHIST_EXP_MAX 24
#define WHIST_NB ((WHIST_EXP_MAX - WHIST_EXP_MIN) * WHIST_SUB + 2)   /* + under, over */

typedef struct {
    uint32_t *slots;      /* nslots x WHIST_NB */
    uint64_t sum[WHIST_NB];   /* counts over the window */
    uint64_t n;           /* values in the window */
    int nslots, cur;
} whist_t;

int whist_init(whist_t *w, int nslots);     /* nslots >= 1; 0 or -1 */
void whist_free(whist_t *w);
void whist_clear(whist_t *w);
void whist_add(whist_t *w, double v);
/* Start a new slot, dropping the oldest from the window. */
void whist_advance(whist_t *w);
/* The q-quantile of the window by nearest rank (bucket midpoint); 0 when empty. */
double whist_quantile(const whist_t *w, double q);

#endif
