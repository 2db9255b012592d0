/* mser.h — MSER-5 warm-up truncation in bounded memory.
 *
 * Feed the observations of a pilot run in the order they occur, each with
 * its time; they are kept as batch means of 5 (MSER-5). When the batch
 * store is full, neighbouring batches are merged and the batch size doubles,
 * so memory is fixed however long the pilot runs. The truncation point d*
 * minimises the MSER statistic
 *     MSER(d) = sum_{i>d} (Y_i - mean_{>d})^2 / (k - d)^2,  0 <= d <= k/2,
 * (White 1997; Franklin & White 2008) and is returned as the time at which
 * batch d* ended. A minimum at the limit d = k/2 means the run never
 * settled: the caller should warn. */
#ifndef VL_MSER_H
#define VL_MSER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    double *mean, *t_end;   /* per batch: mean of its observations, time of its last one */
    size_t k, cap;          /* batches stored, capacity (even) */
    size_t batch;           /* observations per stored batch: 5 * 2^j */
    double acc;             /* sum of the partial batch */
    size_t acc_n;           /* observations in the partial batch */
} mser_t;

typedef struct {
    double t_trunc;         /* warm-up: time at which batch d* ended (0 when d* = 0) */
    size_t d, k;            /* the chosen truncation and the number of batches */
    size_t batch;           /* observations per batch at the end */
    bool settled;           /* false when there were too few batches (< 4) or d* = k/2,
                               the most MSER may truncate: no steady state was seen */
} mser_result;

int mser_init(mser_t *m, size_t cap);   /* cap >= 4 (rounded up to even); 0 or -1 */
void mser_free(mser_t *m);
void mser_add(mser_t *m, double t, double x);
mser_result mser_compute(const mser_t *m);

#endif
