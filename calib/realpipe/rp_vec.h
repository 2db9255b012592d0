/* rp_vec.h — a growing list of doubles (timings, latencies) for the
 * experiment's tools: the span statistics (rp_stats.c), the mix
 * calibration (rp_mix.c) and a scheduler trace's waits (rp_sched.c). None
 * is on a simulation path, where statistics live in fixed-size histograms.
 * Zero-initialise; free v. */
#ifndef VL_RP_VEC_H
#define VL_RP_VEC_H

#include <stdlib.h>

typedef struct {
    double *v;
    size_t n, cap;
} rp_vec;

/* Append x: 0, or -1 out of memory (the list is unchanged). */
static inline int rp_vec_push(rp_vec *a, double x)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 1024;
        double *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

#endif
