/* rp_stages.c — a kept frame's time by segment, and the encoder's batch
 * sizes. See rp_stages.h. It must never feed the simulator: it reads spans. */
#include "calib/realpipe/rp_stages.h"

#include <gsl/gsl_sort.h>
#include <stdlib.h>
#include <string.h>

#include "calib/realpipe/rp_edges.h"
#include "calib/realpipe/rp_stats.h"

/* The rows of one (run, frame), by stage: NULL where the frame has none. */
typedef struct {
    const rp_row *st[RP_NFRAME_STAGES];
} frame_rows;

static int cmp_frame_row(const void *a, const void *b)
{
    const rp_row *x = *(const rp_row *const *)a, *y = *(const rp_row *const *)b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->stage > y->stage) - (x->stage < y->stage);
}

static int cmp_encode_row(const void *a, const void *b)
{
    const rp_row *x = *(const rp_row *const *)a, *y = *(const rp_row *const *)b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

/* ---- a worker free: the time fewer than `workers` decodes of one run ran ---- */

/* F(t): the time from the run's first decode to t with a worker free, from
 * the edges' times te[], the count of decodes running just after each (cnt[])
 * and F at each (cum[]); before the first edge every worker is free. */
typedef struct {
    double *te, *cum;
    int *cnt;
    size_t n;
    int workers;
} free_time;

static double free_at(const free_time *f, double t)
{
    if (f->n == 0 || t < f->te[0])
        return f->n ? t - f->te[0] : t;
    size_t lo = rp_edge_last(f->te, f->n, t);
    return f->cum[lo] + (f->cnt[lo] < f->workers ? t - f->te[lo] : 0);
}

/* F for run `run` of s. ed: scratch, 2 s->n edges. */
static void free_time_of(const rp_set *s, int run, rp_edge *ed, free_time *f)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n; k++) {
        const rp_row *w = &s->rows[k];
        if (w->run == run && w->kind == RP_FRAME && w->stage == RP_DECODE && w->outcome == RP_DONE
            && w->end > w->start) {
            ed[n++] = (rp_edge){w->start, +1};
            ed[n++] = (rp_edge){w->end, -1};
        }
    }
    rp_edges_count(ed, n, f->te, f->cnt);
    for (size_t k = 0; k < n; k++)
        f->cum[k] = k ? f->cum[k - 1] + (f->cnt[k - 1] < f->workers ? f->te[k] - f->te[k - 1] : 0) : 0;
    f->n = n;
}

/* A kept frame's latency and its place in the GOP, sorted by both. */
typedef struct {
    int place;
    double lat;
} placed_lat;

static int cmp_placed(const void *a, const void *b)
{
    const placed_lat *x = a, *y = b;
    if (x->place != y->place)
        return x->place < y->place ? -1 : 1;
    return (x->lat > y->lat) - (x->lat < y->lat);
}

/* Add frame f's segments to sum[place], when it is kept (place: its seq %
 * gop); its decode wait with a worker free (F: its run's) to free_sum[place],
 * its latency to lat[*kept], and count it in o[place]. */
static void add_frame(const frame_rows *f, double from_ms, int gop, const free_time *F,
                      double (*sum)[RP_NSEGS], double *free_sum, placed_lat *lat, long *kept,
                      rp_stages *o)
{
    const rp_row *d = f->st[RP_DECODE], *s = f->st[RP_SAMPLE], *e = f->st[RP_ENCODE],
                 *r = f->st[RP_REDUCE], *p = f->st[RP_PREFILL];
    if (!d || !s || !e || !r || !p || p->outcome != RP_DONE || d->arrive < from_ms)
        return;
    int place = (int)(d->seq % (uint64_t)gop);
    double seg[RP_NSEGS] = {
        d->enq - d->arrive,   d->start - d->enq, d->end - d->start, s->end - d->end, e->start - s->end,
        e->end - e->start,    r->end - e->end,   p->end - r->end, p->end - d->arrive,
    };
    for (int k = 0; k < RP_NSEGS; k++)
        sum[place][k] += seg[k];
    free_sum[place] += free_at(F, d->start) - free_at(F, d->enq);
    lat[(*kept)++] = (placed_lat){place, seg[RP_SEG_FRAME]};
    o[place].frames++;
}

/* ---- a worker going on: its decode's end to the next decode's start ---- */

/* The first index in v[0..n) (sorted) with v[i] >= t (or > t when `after`). */
static size_t first_at(const double *v, size_t n, double t, int after)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (after ? v[mid] <= t : v[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The decodes d[0..n) of one run (done ones): at each end at from_ms or
 * later while a frame waited (enqueued by then, not started before), the
 * time to the next decode start, added to *sum and counted in *count. A
 * worker that goes on with the next frame shows its own time between two
 * decodes (the handoff, the queue's lock, a preemption); -1 out of memory. */
static int going_on_gaps(const rp_row *const *d, size_t n, double from_ms, double *sum, long *count)
{
    double *enq = malloc((n + 1) * sizeof *enq), *st = malloc((n + 1) * sizeof *st);
    if (!enq || !st) {
        free(enq);
        free(st);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        enq[k] = d[k]->enq;
        st[k] = d[k]->start;
    }
    gsl_sort(enq, 1, n);
    gsl_sort(st, 1, n);
    for (size_t k = 0; k < n; k++) {
        double t = d[k]->end;
        if (t < from_ms)
            continue;
        size_t next = first_at(st, n, t, 0);   /* started before t: the ones before next */
        if (first_at(enq, n, t, 1) > next && next < n) {
            *sum += st[next] - t;
            (*count)++;
        }
    }
    free(enq);
    free(st);
    return 0;
}

int rp_stages_of(const rp_set *s, int run, double from_ms, int workers, rp_stages *o)
{
    return rp_stages_by_place(s, run, from_ms, workers, 1, o);
}

int rp_stages_by_place(const rp_set *s, int run, double from_ms, int workers, int gop, rp_stages *o)
{
    if (gop < 1)
        gop = 1;
    memset(o, 0, (size_t)gop * sizeof *o);
    size_t ne2 = 2 * s->n + 1;
    const rp_row **fr = malloc((s->n + 1) * sizeof *fr), **en = malloc((s->n + 1) * sizeof *en);
    placed_lat *lat = malloc((s->n + 1) * sizeof *lat);
    double *lat_v = malloc((s->n + 1) * sizeof *lat_v);
    double (*sum)[RP_NSEGS] = calloc((size_t)gop, sizeof *sum), *free_sum = calloc((size_t)gop, sizeof *free_sum);
    rp_edge *ed = malloc(ne2 * sizeof *ed);
    free_time F = {malloc(ne2 * sizeof(double)), malloc(ne2 * sizeof(double)),
                   malloc(ne2 * sizeof(int)), 0, workers};
    rp_stages run_wide = {0};          /* the batches and decode gaps: the run's, every place's */
    int rc = -1;
    if (!fr || !en || !lat || !lat_v || !sum || !free_sum || !ed || !F.te || !F.cum || !F.cnt)
        goto out;
    size_t nf = 0, ne = 0;
    for (size_t k = 0; k < s->n; k++) {
        const rp_row *w = &s->rows[k];
        if (w->kind != RP_FRAME || (run >= 0 && w->run != run) || w->stage >= RP_NFRAME_STAGES)
            continue;
        fr[nf++] = w;
        if (w->stage == RP_ENCODE && w->outcome == RP_DONE && w->start >= from_ms)
            en[ne++] = w;
    }
    qsort(fr, nf, sizeof *fr, cmp_frame_row);
    long kept = 0;
    int F_run = -1;
    for (size_t k = 0; k < nf;) {
        frame_rows f;
        memset(&f, 0, sizeof f);
        size_t j = k;
        for (; j < nf && fr[j]->run == fr[k]->run && fr[j]->id == fr[k]->id; j++)
            f.st[fr[j]->stage] = fr[j];
        if (fr[k]->run != F_run) {      /* the rows are in run order: one F per run */
            F_run = fr[k]->run;
            free_time_of(s, F_run, ed, &F);
        }
        add_frame(&f, from_ms, gop, &F, sum, free_sum, lat, &kept, o);
        k = j;
    }
    qsort(lat, (size_t)kept, sizeof *lat, cmp_placed);   /* each place's latencies, ascending */
    for (long k = 0; k < kept; k++)
        lat_v[k] = lat[k].lat;
    for (int pl = 0, first = 0; pl < gop; first += (int)o[pl].frames, pl++) {
        rp_stages *q = &o[pl];
        if (!q->frames)
            continue;
        for (int k = 0; k < RP_NSEGS; k++)
            q->mean[k] = sum[pl][k] / (double)q->frames;
        q->decode_wait_free = free_sum[pl] / (double)q->frames;
        q->frame_p95 = rp_quantile(lat_v + first, (size_t)q->frames, 0.95);
    }
    double gap_sum = 0;                /* fr is by run: each run's decodes in turn */
    for (size_t k = 0, nd = 0; k < nf; k++) {
        if (fr[k]->stage == RP_DECODE && fr[k]->outcome == RP_DONE)
            en[ne + nd++] = fr[k];     /* en's tail is free scratch */
        if ((k + 1 == nf || fr[k + 1]->run != fr[k]->run) && nd > 0) {
            if (going_on_gaps(en + ne, nd, from_ms, &gap_sum, &run_wide.decode_gaps) != 0)
                goto out;
            nd = 0;
        }
    }
    if (run_wide.decode_gaps)
        run_wide.decode_gap = gap_sum / (double)run_wide.decode_gaps;
    qsort(en, ne, sizeof *en, cmp_encode_row);
    long count[RP_BATCH_MAX] = {0};
    for (size_t k = 0; k < ne;) {
        size_t j = k;
        while (j < ne && en[j]->run == en[k]->run && en[j]->start == en[k]->start)
            j++;
        size_t size = j - k;
        count[size < RP_BATCH_MAX ? size - 1 : RP_BATCH_MAX - 1]++;
        run_wide.batches++;
        k = j;
    }
    for (int k = 0; k < RP_BATCH_MAX && run_wide.batches; k++)
        run_wide.share[k] = (double)count[k] / (double)run_wide.batches;
    for (int pl = 0; pl < gop; pl++) {
        o[pl].decode_gap = run_wide.decode_gap;
        o[pl].decode_gaps = run_wide.decode_gaps;
        o[pl].batches = run_wide.batches;
        memcpy(o[pl].share, run_wide.share, sizeof o[pl].share);
    }
    rc = 0;
out:
    free(fr);
    free(en);
    free(lat);
    free(lat_v);
    free(sum);
    free(free_sum);
    free(ed);
    free(F.te);
    free(F.cum);
    free(F.cnt);
    return rc;
}

const char *rp_seg_name(int seg)
{
    static const char *const names[RP_NSEGS] = {"release", "decode_wait", "decode",  "sample",
                                                "encode_wait", "encode",  "reduce", "prefill",
                                                "frame"};
    return seg >= 0 && seg < RP_NSEGS ? names[seg] : "?";
}
