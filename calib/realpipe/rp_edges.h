/* rp_edges.h — how many intervals (ops, decodes) run at each moment, as a
 * step function built from their start and end edges: the span diagnostics'
 * shared piece (rp_overlap.c, rp_stages.c). Each caller integrates its own
 * function of the count over time. Header-only; it allocates nothing. */
#ifndef VL_RP_EDGES_H
#define VL_RP_EDGES_H

#include <stddef.h>
#include <stdlib.h>

typedef struct {
    double t;
    int d;                             /* +1 an interval starts, -1 one ends */
} rp_edge;

static inline int rp_edge_cmp(const void *a, const void *b)
{
    const rp_edge *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Sort ed[0..n) by time; te[k]: edge k's time, cnt[k]: the count just after it. */
static inline void rp_edges_count(rp_edge *ed, size_t n, double *te, int *cnt)
{
    qsort(ed, n, sizeof *ed, rp_edge_cmp);
    int c = 0;
    for (size_t k = 0; k < n; k++) {
        te[k] = ed[k].t;
        c += ed[k].d;
        cnt[k] = c;
    }
}

/* The last of the n (> 0) edges at or before t; 0 when t is before them all. */
static inline size_t rp_edge_last(const double *te, size_t n, double t)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (te[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

#endif
