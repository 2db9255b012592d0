/* ev.h — the event list: a binary min-heap of timestamped events.
 *
 * Events live by value in one array that doubles when full (amortised: no
 * malloc per event, and capacity grows with events pending, never with
 * simulated time). Ties are broken by insertion order, so two runs that
 * schedule the same events pop them in the same order: deterministic.
 * The heap knows nothing of what an event means; kind and the two payload
 * words are the caller's. It must never call back into the model. */
#ifndef VL_EV_H
#define VL_EV_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double t;        /* when, in the caller's time unit (the models use ms) */
    uint64_t seq;    /* insertion number: tie-break among equal t */
    uint32_t kind;   /* caller's event type */
    uint32_t a;      /* caller's payload (e.g. a stage index) */
    uint64_t b;      /* caller's payload (e.g. an item index) */
} ev_t;

typedef struct {
    ev_t *heap;
    size_t n, cap;
    uint64_t next_seq;
} ev_queue;

/* Initialise with room for cap events (>= 1). Returns 0, or -1 when out of memory. */
int ev_init(ev_queue *q, size_t cap);
void ev_free(ev_queue *q);
/* Empty the queue and restart the tie-break counter, keeping the memory. */
void ev_clear(ev_queue *q);
/* Schedule an event. Returns 0, or -1 when out of memory (queue unchanged). */
int ev_push(ev_queue *q, double t, uint32_t kind, uint32_t a, uint64_t b);
/* Remove the earliest event into *out. Returns 0, or -1 when empty. */
int ev_pop(ev_queue *q, ev_t *out);
static inline size_t ev_len(const ev_queue *q) { return q->n; }
/* The earliest event without removing it; NULL when empty. */
static inline const ev_t *ev_peek(const ev_queue *q) { return q->n ? &q->heap[0] : NULL; }

#endif
