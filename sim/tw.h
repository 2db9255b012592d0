/* tw.h — time-weighted averages of a piecewise-constant level (queue length,
 * busy servers). Record the level at every change; the area under the curve
 * accumulates from the last reset. O(1), no memory beyond the struct. */
#ifndef VL_TW_H
#define VL_TW_H

typedef struct {
    double level;      /* current value */
    double t_last;     /* time of the last change */
    double t_start;    /* time of the last reset */
    double area;       /* integral of level dt since t_start */
} tw_t;

static inline void tw_reset(tw_t *w, double now)
{
    w->t_last = w->t_start = now;
    w->area = 0.0;
}

static inline void tw_set(tw_t *w, double now, double level)
{
    w->area += w->level * (now - w->t_last);
    w->t_last = now;
    w->level = level;
}

/* The time average over [t_start, now]; 0 over an empty interval. */
static inline double tw_mean(const tw_t *w, double now)
{
    double span = now - w->t_start;
    return span > 0 ? (w->area + w->level * (now - w->t_last)) / span : 0.0;
}

#endif
