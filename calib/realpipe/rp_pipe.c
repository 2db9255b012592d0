/* rp_pipe.c — the real pipeline's threads. See rp_pipe.h.
 *
 * Reading order: rings and the frame pool, the context, the source, decode,
 * sample, the executor (stage choice as models/gpu.c: priority, readiness
 * = a full batch or the head's batch timeout, stale heads dropped), queries
 * and response, set-up and the run. All times are ns of CLOCK_MONOTONIC
 * from the run's start. It must never print, and never allocate on the
 * per-frame path (pools and the span record are made up front). */
#define _GNU_SOURCE                /* sched_getcpu */
#include "calib/realpipe/rp_pipe.h"

#include <errno.h>
#include <sched.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_ops.h"

#define POOL_SLOTS 1024          /* frames holding pixels or tokens at once */

/* ---- time ---------------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The calling thread's CPU time (ns). */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec abs_ts(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}

/* ---- rings of frame (or query) ids ----------------------------------------- */

typedef struct {
    int32_t *v;
    size_t head, n, cap;       /* cap: the most ever held (allocated up front) */
} ring;

static int ring_init(ring *r, size_t cap)
{
    r->head = r->n = 0;
    r->cap = cap ? cap : 1;
    r->v = malloc(r->cap * sizeof *r->v);
    return r->v ? 0 : -1;
}
static void ring_push(ring *r, int32_t x) { r->v[(r->head + r->n++) % r->cap] = x; }
static int32_t ring_peek(const ring *r) { return r->v[r->head]; }
static int32_t ring_pop(ring *r)
{
    int32_t x = r->v[r->head];
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return x;
}

/* ---- the context ------------------------------------------------------------ */

typedef struct {
    const rp_params *p;
    rp_oplog *oplog;               /* NULL, or each op's CPU time and CPU */
    rp_record *rec;
    int64_t t0;
    int nframes, nqueries;
    const dect_clip *clip;
    rp_ops ops;                /* decoders and the executor's kernels (rp_ops.h) */
    pthread_mutex_t *dec_mu;   /* per stream: two workers never decode one stream at once */
    int64_t *release;          /* per frame: nominal release time */
    /* frame pool: pixels [3][56][56], tokens [49][64], reduced [keep][64] */
    float *pool;
    size_t slot_floats;
    int32_t *slot_of;          /* per frame */
    int32_t *free_slots;
    int nfree;
    pthread_mutex_t pool_mu;
    /* queues */
    pthread_mutex_t dq_mu, sq_mu, xq_mu, rq_mu;
    pthread_cond_t dq_cv, sq_cv, xq_cv, rq_cv;
    ring dq, sq, enc_q, red_q, pre_q, llm_q, act, rq;
    atomic_int frames_left, queries_left;
    atomic_int dropped, sampled, completed, answered;
    atomic_bool stop;
    int failed;
    char err[256];
    /* executor */
    int32_t *batch;
    float **bpix, **btok, **bred;  /* the batch's frames' buffers, max_batch each */
    int32_t *q_left;           /* per query: decode iterations left */
    int nq_used;
} ctx_t;

static float *slot_pix(ctx_t *c, int frame) { return c->pool + (size_t)c->slot_of[frame] * c->slot_floats; }
static float *slot_tok(ctx_t *c, int frame) { return slot_pix(c, frame) + RP_PIX_FLOATS; }
static float *slot_red(ctx_t *c, int frame) { return slot_tok(c, frame) + RP_TOK_FLOATS; }

static int slot_take(ctx_t *c, int frame)
{
    pthread_mutex_lock(&c->pool_mu);
    int ok = c->nfree > 0;
    if (ok)
        c->slot_of[frame] = c->free_slots[--c->nfree];
    pthread_mutex_unlock(&c->pool_mu);
    return ok ? 0 : -1;
}

static void slot_give(ctx_t *c, int frame)
{
    if (c->slot_of[frame] < 0)
        return;
    pthread_mutex_lock(&c->pool_mu);
    c->free_slots[c->nfree++] = c->slot_of[frame];
    pthread_mutex_unlock(&c->pool_mu);
    c->slot_of[frame] = -1;
}

static void fail(ctx_t *c, const char *msg)
{
    if (!c->failed)
        snprintf(c->err, sizeof c->err, "%s", msg);
    c->failed = 1;
    atomic_store(&c->stop, true);
}

static double tv_s(struct timeval t) { return (double)t.tv_sec + 1e-6 * (double)t.tv_usec; }

static int64_t now_rel(const ctx_t *c) { return mono_ns() - c->t0; }

/* Log an op that ran from w0 to w1 (read the instant it ended) on CPU cpu0
 * at the start, its thread's CPU time then u0. The end's CPU and CPU time
 * are read after w1: clock_gettime(CLOCK_THREAD_CPUTIME_ID) is a system
 * call, where a pending reschedule takes the thread off its CPU, and an end
 * read after it counted that wait (up to milliseconds beside the I-frames'
 * decodes) as the op's time. */
static void log_op(ctx_t *c, int kind, int batch, int frame, int cpu0, int64_t w0, int64_t w1, int64_t u0)
{
    int cpu1 = sched_getcpu();
    rp_oplog_add(c->oplog, kind, batch, frame, cpu0, cpu1, w0, w1, thread_cpu_ns() - u0);
}

/* Frame i ends at stage s with outcome o (drop or sampled out). */
static void frame_ends(ctx_t *c, int i, int s, int o, int64_t t)
{
    rp_span *sp = rp_fspan(c->rec, i, s);
    if (sp->start == 0 && sp->end == 0)
        sp->start = t;
    sp->end = t;
    if (sp->start > t)
        sp->start = t;
    sp->outcome = (uint8_t)o;
    slot_give(c, i);
    if (o == RP_SAMPLED_OUT)
        atomic_fetch_add(&c->sampled, 1);
    else
        atomic_fetch_add(&c->dropped, 1);
    atomic_fetch_sub(&c->frames_left, 1);
}

/* Push frame i into ring q of stage s (its lock held), capacity and policy
 * as the scenario's queue: {capacity, on_full}. */
static void push_bounded(ctx_t *c, ring *q, int s, long capacity, int drop_oldest, int i, int64_t t)
{
    rp_fspan(c->rec, i, s)->enq = t;
    if (capacity >= 0 && q->n >= (size_t)capacity) {
        if (!drop_oldest || capacity == 0) {
            frame_ends(c, i, s, RP_DROP_FULL, t);
            return;
        }
        frame_ends(c, ring_pop(q), s, RP_DROP_FULL, t);
    }
    ring_push(q, i);
}

/* ---- the source ------------------------------------------------------------- */

static void *source_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-source");
    for (int i = 0; i < c->nframes && !atomic_load(&c->stop); i++) {
        int64_t at = c->release[i];
        struct timespec ts = abs_ts(c->t0 + at);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        c->rec->f_arrive[i] = at;
        int64_t late = now_rel(c);     /* the decode enqueue: when this thread woke to release it */
        pthread_mutex_lock(&c->dq_mu);
        push_bounded(c, &c->dq, RP_DECODE, c->p->decode_capacity, c->p->decode_drop_oldest, i,
                     late > at ? late : at);
        pthread_cond_signal(&c->dq_cv);
        pthread_mutex_unlock(&c->dq_mu);
    }
    return NULL;
}

/* ---- decode ----------------------------------------------------------------- */

static void *decode_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-decode");
    for (;;) {
        pthread_mutex_lock(&c->dq_mu);
        while (c->dq.n == 0 && !atomic_load(&c->stop))
            pthread_cond_wait(&c->dq_cv, &c->dq_mu);
        if (c->dq.n == 0) {
            pthread_mutex_unlock(&c->dq_mu);
            return NULL;
        }
        int i = ring_pop(&c->dq);
        pthread_mutex_unlock(&c->dq_mu);
        rp_span *sp = rp_fspan(c->rec, i, RP_DECODE);
        sp->start = now_rel(c);
        if (slot_take(c, i)) {
            fail(c, "frame pool exhausted (more than 1024 frames decoded and not yet encoded)");
            return NULL;
        }
        int s = c->rec->f_stream[i];
        pthread_mutex_lock(&c->dec_mu[s]);
        int cpu0 = c->oplog ? sched_getcpu() : -1;
        int64_t u0 = c->oplog ? thread_cpu_ns() : 0, w0 = c->oplog ? now_rel(c) : 0;
        rp_ops_decode(&c->ops, s, (long)c->rec->f_seq[i], slot_pix(c, i));
        if (c->oplog)
            log_op(c, RP_OP_DECODE, 1, rp_ops_clip_frame(&c->ops, (long)c->rec->f_seq[i]), cpu0, w0,
                   now_rel(c), u0);
        pthread_mutex_unlock(&c->dec_mu[s]);
        int64_t t = now_rel(c);
        sp->end = t;
        sp->outcome = RP_DONE;
        pthread_mutex_lock(&c->sq_mu);
        rp_fspan(c->rec, i, RP_SAMPLE)->enq = t;
        ring_push(&c->sq, i);
        pthread_cond_signal(&c->sq_cv);
        pthread_mutex_unlock(&c->sq_mu);
    }
}

/* ---- sample ----------------------------------------------------------------- */

static void *sample_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-sample");
    for (;;) {
        pthread_mutex_lock(&c->sq_mu);
        while (c->sq.n == 0 && !atomic_load(&c->stop))
            pthread_cond_wait(&c->sq_cv, &c->sq_mu);
        if (c->sq.n == 0) {
            pthread_mutex_unlock(&c->sq_mu);
            return NULL;
        }
        int i = ring_pop(&c->sq);
        pthread_mutex_unlock(&c->sq_mu);
        rp_span *sp = rp_fspan(c->rec, i, RP_SAMPLE);
        int64_t t = now_rel(c);
        sp->start = t;
        if (c->rec->f_seq[i] % (uint64_t)c->p->keep_every != 0) {
            frame_ends(c, i, RP_SAMPLE, RP_SAMPLED_OUT, now_rel(c));
            continue;
        }
        t = now_rel(c);
        sp->end = t;
        sp->outcome = RP_DONE;
        pthread_mutex_lock(&c->xq_mu);
        push_bounded(c, &c->enc_q, RP_ENCODE, c->p->encode_capacity, c->p->encode_drop_oldest, i, t);
        pthread_cond_signal(&c->xq_cv);
        pthread_mutex_unlock(&c->xq_mu);
    }
}

/* ---- the executor ------------------------------------------------------------- */

enum { X_DECODE, X_PREFILL, X_REDUCE, X_ENCODE, X_NSTAGES };   /* priority order (gpu.c) */

/* Drop the stale heads of the encode queue (lock held). */
static void purge(ctx_t *c, int64_t t)
{
    double lim = c->p->encode_timeout_ms;
    while (lim > 0 && c->enc_q.n > 0) {
        int i = ring_peek(&c->enc_q);
        if ((double)(t - rp_fspan(c->rec, i, RP_ENCODE)->enq) <= lim * 1e6)
            break;
        ring_pop(&c->enc_q);
        frame_ends(c, i, RP_ENCODE, RP_DROP_TIMEOUT, t);
    }
}

/* The first ready stage in priority order, or -1 and *wake (the earliest
 * time one becomes ready; INT64_MAX: none). Lock held. */
static int choose(ctx_t *c, int64_t t, int64_t *wake)
{
    const rp_params *p = c->p;
    *wake = INT64_MAX;
    purge(c, t);
    if (c->act.n > 0 || c->llm_q.n > 0)
        return X_DECODE;                      /* batch timeout 0: always ready */
    if (c->pre_q.n > 0)
        return X_PREFILL;
    if (c->red_q.n > 0)
        return X_REDUCE;
    if (c->enc_q.n > 0) {
        int64_t ready = rp_fspan(c->rec, ring_peek(&c->enc_q), RP_ENCODE)->enq
                        + (int64_t)(p->batch_timeout_ms * 1e6);
        if (c->enc_q.n >= (size_t)p->max_batch || t >= ready)
            return X_ENCODE;
        *wake = ready;
    }
    return -1;
}

/* The batch's frames' buffers, for rp_ops. */
static void batch_buffers(ctx_t *c, int k)
{
    for (int j = 0; j < k; j++) {
        c->bpix[j] = slot_pix(c, c->batch[j]);
        c->btok[j] = slot_tok(c, c->batch[j]);
        c->bred[j] = slot_red(c, c->batch[j]);
    }
}

/* Hand the finished response-path item q to the response thread. */
static void to_response(ctx_t *c, int q, int64_t t)
{
    pthread_mutex_lock(&c->rq_mu);
    rp_qspan(c->rec, q, RP_RESPONSE)->enq = t;
    ring_push(&c->rq, q);
    pthread_cond_signal(&c->rq_cv);
    pthread_mutex_unlock(&c->rq_mu);
}

static void *executor_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-exec");
    const rp_params *p = c->p;
    pthread_mutex_lock(&c->xq_mu);
    for (;;) {
        if (atomic_load(&c->stop))
            break;
        int64_t t = now_rel(c), wake;
        int s = choose(c, t, &wake);
        if (s < 0) {
            if (wake == INT64_MAX) {
                pthread_cond_wait(&c->xq_cv, &c->xq_mu);
            } else {
                struct timespec ts = abs_ts(c->t0 + wake);
                pthread_cond_timedwait(&c->xq_cv, &c->xq_mu, &ts);
            }
            continue;
        }
        int k = 0;
        if (s == X_DECODE) {
            while (c->llm_q.n > 0 && c->act.n < (size_t)p->decode_max_batch) {
                int q = ring_pop(&c->llm_q);
                rp_qspan(c->rec, q, RP_LLM_DECODE)->start = t;
                c->q_left[q] = p->response_tokens;
                ring_push(&c->act, q);
            }
            k = (int)c->act.n;
        } else {
            ring *q = s == X_PREFILL ? &c->pre_q : s == X_REDUCE ? &c->red_q : &c->enc_q;
            int st = s == X_PREFILL ? RP_PREFILL : s == X_REDUCE ? RP_REDUCE : RP_ENCODE;
            while (k < p->max_batch && q->n > 0) {
                int i = ring_pop(q);
                c->batch[k++] = i;
                rp_fspan(c->rec, i, st)->start = t;
            }
        }
        pthread_mutex_unlock(&c->xq_mu);
        if (s != X_DECODE)
            batch_buffers(c, k);
        int cpu0 = c->oplog ? sched_getcpu() : -1;
        int64_t u0 = c->oplog ? thread_cpu_ns() : 0, w0 = c->oplog ? now_rel(c) : 0;
        switch (s) {
        case X_DECODE:  rp_ops_decode_step(&c->ops, k); break;
        case X_PREFILL: rp_ops_prefill(&c->ops, k, c->bred); break;
        case X_REDUCE:  rp_ops_reduce(&c->ops, k, c->btok, c->bred); break;
        default:        rp_ops_encode(&c->ops, k, c->bpix, c->btok); break;
        }
        int64_t e = now_rel(c);
        if (c->oplog)
            log_op(c, s == X_DECODE ? RP_OP_LLM_DECODE : s == X_PREFILL ? RP_OP_PREFILL
                   : s == X_REDUCE ? RP_OP_REDUCE : RP_OP_ENCODE, k, -1, cpu0, w0, e, u0);
        pthread_mutex_lock(&c->xq_mu);
        if (s == X_DECODE) {
            for (int j = k; j > 0; j--) {
                int q = ring_pop(&c->act);
                if (--c->q_left[q] > 0) {
                    ring_push(&c->act, q);
                } else {
                    rp_span *sp = rp_qspan(c->rec, q, RP_LLM_DECODE);
                    sp->end = e;
                    sp->outcome = RP_DONE;
                    to_response(c, q, e);
                }
            }
            continue;
        }
        int st = s == X_PREFILL ? RP_PREFILL : s == X_REDUCE ? RP_REDUCE : RP_ENCODE;
        for (int j = 0; j < k; j++) {
            int i = c->batch[j];
            rp_span *sp = rp_fspan(c->rec, i, st);
            sp->end = e;
            sp->outcome = RP_DONE;
            if (s == X_PREFILL) {
                slot_give(c, i);
                atomic_fetch_add(&c->completed, 1);
                atomic_fetch_sub(&c->frames_left, 1);
            } else {
                ring *next = s == X_ENCODE ? &c->red_q : &c->pre_q;
                rp_fspan(c->rec, i, s == X_ENCODE ? RP_REDUCE : RP_PREFILL)->enq = e;
                ring_push(next, i);
            }
        }
    }
    pthread_mutex_unlock(&c->xq_mu);
    return NULL;
}

/* ---- queries and the response -------------------------------------------------- */

static void *query_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-query");
    for (int q = 0; q < c->nq_used && !atomic_load(&c->stop); q++) {
        int64_t at = c->rec->q_arrive[q];
        struct timespec ts = abs_ts(c->t0 + at);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        pthread_mutex_lock(&c->xq_mu);
        rp_qspan(c->rec, q, RP_LLM_DECODE)->enq = at;
        ring_push(&c->llm_q, q);
        pthread_cond_signal(&c->xq_cv);
        pthread_mutex_unlock(&c->xq_mu);
    }
    return NULL;
}

static void *response_main(void *arg)
{
    ctx_t *c = arg;
    rp_quiet_thread("vl-response");
    for (;;) {
        pthread_mutex_lock(&c->rq_mu);
        while (c->rq.n == 0 && !atomic_load(&c->stop))
            pthread_cond_wait(&c->rq_cv, &c->rq_mu);
        if (c->rq.n == 0) {
            pthread_mutex_unlock(&c->rq_mu);
            return NULL;
        }
        int q = ring_pop(&c->rq);
        pthread_mutex_unlock(&c->rq_mu);
        rp_span *sp = rp_qspan(c->rec, q, RP_RESPONSE);
        sp->start = now_rel(c);
        struct timespec ts = abs_ts(c->t0 + sp->start + (int64_t)(c->p->response_ms * 1e6));
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        sp->end = now_rel(c);
        sp->outcome = RP_DONE;
        atomic_fetch_add(&c->answered, 1);
        atomic_fetch_sub(&c->queries_left, 1);
    }
}

/* ---- set-up and the run ----------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The release schedule: stream j's frame k at start + phase_j + k / fps
 * (phase uniform in one frame interval); frame ids in release order. */
static int schedule(ctx_t *c, gsl_rng *rng, int64_t start)
{
    const rp_params *p = c->p;
    int per = (int)floor(p->duration_s * p->fps);
    double period = 1e9 / p->fps;
    int64_t *key = malloc((size_t)c->nframes * 2 * sizeof *key);
    if (!key)
        return -1;
    for (int j = 0; j < p->streams; j++) {
        double ph = gsl_rng_uniform(rng) * period;
        c->rec->phase_ms[j] = 1e-6 * ph;
        for (int k = 0; k < per; k++) {
            size_t at = (size_t)(j * per + k);
            key[2 * at] = start + (int64_t)llround(ph + k * period);
            key[2 * at + 1] = (int64_t)j << 32 | k;
        }
    }
    qsort(key, (size_t)c->nframes, 2 * sizeof *key, cmp_i64);
    for (int i = 0; i < c->nframes; i++) {
        c->release[i] = key[2 * i];
        c->rec->f_stream[i] = (uint32_t)(key[2 * i + 1] >> 32);
        c->rec->f_seq[i] = (uint64_t)(key[2 * i + 1] & 0xffffffff);
    }
    free(key);
    /* queries: one Poisson process over all streams */
    double rate = p->streams * p->queries_per_min / 60.0;   /* per s */
    double t = 0;
    c->nq_used = 0;
    while (rate > 0 && c->nq_used < c->nqueries) {
        t += gsl_ran_exponential(rng, 1.0 / rate);
        if (t >= p->duration_s)
            break;
        c->rec->q_arrive[c->nq_used++] = start + (int64_t)llround(t * 1e9);
    }
    return 0;
}

/* The executor's batch bookkeeping and the per-stream decoder locks. */
static int setup_executor(ctx_t *c)
{
    int B = c->p->max_batch;
    c->batch = malloc((size_t)B * sizeof *c->batch);
    c->bpix = malloc((size_t)B * sizeof *c->bpix);
    c->btok = malloc((size_t)B * sizeof *c->btok);
    c->bred = malloc((size_t)B * sizeof *c->bred);
    c->q_left = calloc((size_t)(c->nqueries > 0 ? c->nqueries : 1), sizeof *c->q_left);
    c->dec_mu = malloc((size_t)c->p->streams * sizeof *c->dec_mu);
    if (!c->batch || !c->bpix || !c->btok || !c->bred || !c->q_left || !c->dec_mu)
        return -1;
    for (int j = 0; j < c->p->streams; j++)
        pthread_mutex_init(&c->dec_mu[j], NULL);
    return 0;
}

static void teardown(ctx_t *c)
{
    if (c->dec_mu)
        for (int j = 0; j < c->p->streams; j++)
            pthread_mutex_destroy(&c->dec_mu[j]);
    free(c->dec_mu);
    rp_ops_free(&c->ops);
    free(c->batch); free(c->bpix); free(c->btok); free(c->bred); free(c->q_left);
    free(c->pool); free(c->slot_of); free(c->free_slots); free(c->release);
    free(c->dq.v); free(c->sq.v); free(c->enc_q.v); free(c->red_q.v); free(c->pre_q.v);
    free(c->llm_q.v); free(c->act.v); free(c->rq.v);
    dect_clip_free((dect_clip *)c->clip);
}

int rp_pipe_run(const rp_params *p, rp_record *rec, rp_summary *sum, rp_oplog *ops, char *err,
                size_t errlen)
{
    memset(sum, 0, sizeof *sum);
    memset(rec, 0, sizeof *rec);
    if (p->streams < 1 || !(p->fps > 0) || !(p->duration_s > 0) || p->decode_workers < 1
        || p->keep_every < 1 || p->max_batch < 1 || p->decode_max_batch < 1 || p->keep_tokens < 1
        || p->keep_tokens > RP_NTOK) {
        snprintf(err, errlen, "bad parameters (streams, fps, duration, workers, batches >= 1)");
        return -1;
    }
    cpu_set_threads(1);                    /* the pipeline's threads are all the parallelism */
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.oplog = ops;
    c.rec = rec;
    int per = (int)floor(p->duration_s * p->fps);
    c.nframes = per * p->streams;
    double expect_q = p->streams * p->queries_per_min / 60.0 * p->duration_s;
    c.nqueries = (int)(expect_q + 10 * sqrt(expect_q) + 16);
    int rc = -1;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    dect_clip *clip = NULL;
    if (!rng || rp_record_init(rec, c.nframes, c.nqueries, p->streams)) {
        snprintf(err, errlen, "out of memory for %d frames", c.nframes);
        goto out;
    }
    gsl_rng_set(rng, (unsigned long)p->seed);
    if (rp_ops_clip(p, &clip, err, errlen))
        goto out;
    c.clip = clip;
    c.release = malloc((size_t)c.nframes * sizeof *c.release);
    c.slot_floats = RP_PIX_FLOATS + RP_TOK_FLOATS + (size_t)p->keep_tokens * 64;
    c.pool = malloc(POOL_SLOTS * c.slot_floats * sizeof(float));
    c.slot_of = malloc((size_t)c.nframes * sizeof *c.slot_of);
    c.free_slots = malloc(POOL_SLOTS * sizeof *c.free_slots);
    size_t nf = (size_t)c.nframes + 1, nq = (size_t)c.nqueries + 1;
    if (!c.release || !c.pool || !c.slot_of || !c.free_slots
        || ring_init(&c.dq, nf) || ring_init(&c.sq, nf) || ring_init(&c.enc_q, nf)
        || ring_init(&c.red_q, nf) || ring_init(&c.pre_q, nf) || ring_init(&c.llm_q, nq)
        || ring_init(&c.act, nq) || ring_init(&c.rq, nq)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    memset(c.pool, 0, POOL_SLOTS * c.slot_floats * sizeof(float));   /* touch it now */
    for (int i = 0; i < c.nframes; i++)
        c.slot_of[i] = -1;
    for (int k = 0; k < POOL_SLOTS; k++)
        c.free_slots[k] = POOL_SLOTS - 1 - k;
    c.nfree = POOL_SLOTS;
    if (rp_ops_init(&c.ops, p, clip, err, errlen))
        goto out;
    if (setup_executor(&c)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    pthread_mutex_init(&c.pool_mu, NULL);
    pthread_mutex_t *mus[] = {&c.dq_mu, &c.sq_mu, &c.xq_mu, &c.rq_mu};
    pthread_cond_t *cvs[] = {&c.dq_cv, &c.sq_cv, &c.xq_cv, &c.rq_cv};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    for (int k = 0; k < 4; k++) {
        pthread_mutex_init(mus[k], NULL);
        pthread_cond_init(cvs[k], &ca);
    }
    pthread_condattr_destroy(&ca);
    atomic_init(&c.frames_left, c.nframes);
    atomic_init(&c.stop, false);
    c.t0 = mono_ns();
    int64_t start = 300000000;             /* 0.3 s for the threads to settle */
    if (schedule(&c, rng, start)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    atomic_init(&c.queries_left, c.nq_used);
    int nthreads = 5 + p->decode_workers;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);          /* this thread only sleeps while they run */
    pthread_t th[64];
    int started = 0;
    void *(*fn[64])(void *);
    fn[0] = executor_main;
    fn[1] = sample_main;
    fn[2] = response_main;
    for (int k = 0; k < p->decode_workers && k < 56; k++)
        fn[3 + k] = decode_main;
    fn[3 + p->decode_workers] = query_main;
    fn[4 + p->decode_workers] = source_main;
    for (int k = 0; k < nthreads && k < 64; k++) {
        if (pthread_create(&th[k], NULL, fn[k], &c)) {
            fail(&c, "cannot start a pipeline thread");
            break;
        }
        started++;
    }
    /* wait until every frame and query has left the pipeline */
    for (;;) {
        if (c.failed || (atomic_load(&c.frames_left) == 0 && atomic_load(&c.queries_left) == 0))
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    sum->wall_s = 1e-9 * (double)(mono_ns() - c.t0);
    atomic_store(&c.stop, true);
    for (int k = 0; k < 4; k++) {
        pthread_mutex_lock(mus[k]);
        pthread_cond_broadcast(cvs[k]);
        pthread_mutex_unlock(mus[k]);
    }
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    getrusage(RUSAGE_SELF, &ru1);
    sum->cpu_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
    sum->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
    sum->vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
    sum->ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    for (int k = 0; k < 4; k++) {
        pthread_mutex_destroy(mus[k]);
        pthread_cond_destroy(cvs[k]);
    }
    pthread_mutex_destroy(&c.pool_mu);
    if (c.failed) {
        snprintf(err, errlen, "%s", c.err);
        goto out;
    }
    sum->frames = c.nframes;
    sum->queries = c.nq_used;
    sum->dropped = atomic_load(&c.dropped);
    sum->sampled_out = atomic_load(&c.sampled);
    sum->completed = atomic_load(&c.completed);
    sum->answered = atomic_load(&c.answered);
    rc = 0;
out:
    c.clip = clip;
    teardown(&c);
    if (rng)
        gsl_rng_free(rng);
    if (rc)
        rp_record_free(rec);
    return rc;
}
