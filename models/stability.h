/* stability.h — does a queue grow without bound?
 *
 * The test the pipeline runs on every control tick (not per event): each
 * watched queue's waiting count is sampled once per tick. The samples since
 * the start (or the last restart) are kept as STAB_BLOCKS block sums, each
 * block of `per` ticks; when the blocks are full, pairs merge and `per`
 * doubles, so memory is fixed and the windows below always span the whole
 * history. The history is split into 8 equal windows (the latest 8k
 * blocks); a queue is judged to grow without bound when
 *   - its mean waiting count rose in each of the last four windows
 *     (window 4 < 5 < 6 < 7 < 8: it kept growing through the latter half
 *     of the elapsed time, not just in one burst), and
 *   - the rise from window 4 to window 8 is at least 2 items and more than
 *     STAB_Z times the largest standard deviation of the samples within
 *     windows 5..8 (a trend far beyond the queue's own fluctuation: a
 *     stationary queue's window means differ by much less than its sample
 *     spread once windows are long against its relaxation time), and
 *   - windows are at least STAB_MIN_WINDOW ticks and at least the series'
 *     own min_window (a multiple of the queue's relaxation time when the
 *     static offered load says it is stable; see pipeline.c), so that a
 *     heavily loaded but stable queue has time to show it is stable.
 * This module knows nothing of stages or video: it sees numbered series of
 * levels. It never prints and allocates only in stab_init. */
#ifndef VL_STABILITY_H
#define VL_STABILITY_H

#include <stdint.h>

#define STAB_BLOCKS 64          /* blocks kept per series (even) */
#define STAB_MIN_WINDOW 4       /* ticks per window, at least */
#define STAB_Z 4.0              /* rise over window 4 -> 8 vs within-window sd */

typedef struct {
    double sum, sumsq;          /* of the tick samples in the block */
} stab_block;

typedef struct {
    int n;                      /* series */
    stab_block *blk;            /* n x STAB_BLOCKS completed blocks */
    stab_block *cur;            /* n: the block being filled */
    double *min_window;         /* n: ticks a window needs before the series is judged;
                                   INFINITY: not watched */
    int nblk;                   /* completed blocks */
    uint64_t per, in_cur;       /* ticks per block; ticks in the current block */
    double t0, dt;              /* ms: the start of the history, the tick interval */
} stab_t;

/* A series found growing. */
typedef struct {
    int series;
    double t_from, t_to;        /* ms: the middles of windows 4 and 8 */
    double q_from, q_to;        /* the mean level over windows 4 and 8 */
} stab_growth;

/* n series, sampled every dt_ms from t = 0; none watched yet. 0 or -1. */
int stab_init(stab_t *d, int n, double dt_ms);
void stab_free(stab_t *d);

/* Watch series i once its windows are at least min_window ticks. */
void stab_watch(stab_t *d, int i, double min_window);

/* Forget the history: it starts again at now (ms). */
void stab_restart(stab_t *d, double now);

/* One sample per series, taken at now (ms). 1 with *g filled when a
 * watched series is found growing (the lowest-numbered), else 0. */
int stab_tick(stab_t *d, double now, const double *level, stab_growth *g);

#endif
