/* ev.c — binary min-heap event list ordered by (t, seq). See ev.h.
 * Sift-up and sift-down move a hole instead of swapping, which halves the
 * writes; the comparison is the whole ordering contract of the simulator. */
#include "sim/ev.h"
#include <stdlib.h>

static inline int ev_before(const ev_t *x, const ev_t *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int ev_init(ev_queue *q, size_t cap)
{
    q->n = 0;
    q->next_seq = 0;
    q->cap = cap ? cap : 1;
    q->heap = malloc(q->cap * sizeof *q->heap);
    return q->heap ? 0 : -1;
}

void ev_free(ev_queue *q)
{
    free(q->heap);
    q->heap = NULL;
    q->n = q->cap = 0;
}

void ev_clear(ev_queue *q)
{
    q->n = 0;
    q->next_seq = 0;
}

int ev_push(ev_queue *q, double t, uint32_t kind, uint32_t a, uint64_t b)
{
    if (q->n == q->cap) {
        size_t ncap = q->cap * 2;
        ev_t *nh = realloc(q->heap, ncap * sizeof *nh);
        if (!nh)
            return -1;
        q->heap = nh;
        q->cap = ncap;
    }
    ev_t e = { t, q->next_seq++, kind, a, b };
    size_t i = q->n++;
    while (i > 0) {                       /* sift the hole up */
        size_t parent = (i - 1) / 2;
        if (!ev_before(&e, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return 0;
}

int ev_pop(ev_queue *q, ev_t *out)
{
    if (q->n == 0)
        return -1;
    *out = q->heap[0];
    ev_t last = q->heap[--q->n];
    size_t n = q->n, i = 0;
    for (;;) {                            /* sift the hole at the root down */
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!ev_before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n)
        q->heap[i] = last;
    return 0;
}
