/* rp_stages.c — a kept frame's time by segment, and the encoder's batch
 * sizes. See rp_stages.h. It must never feed the simulator: it reads spans. */
#include "calib/realpipe/rp_stages.h"

#include <stdlib.h>
#include <string.h>

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

/* Add frame f's segments to sum, when it is kept. */
static void add_frame(const frame_rows *f, double from_ms, double *sum, long *kept)
{
    const rp_row *d = f->st[RP_DECODE], *s = f->st[RP_SAMPLE], *e = f->st[RP_ENCODE],
                 *r = f->st[RP_REDUCE], *p = f->st[RP_PREFILL];
    if (!d || !s || !e || !r || !p || p->outcome != RP_DONE || d->arrive < from_ms)
        return;
    double seg[RP_NSEGS] = {
        d->start - d->arrive, d->end - d->start, s->end - d->end, e->start - s->end,
        e->end - e->start,    r->end - e->end,   p->end - r->end, p->end - d->arrive,
    };
    for (int k = 0; k < RP_NSEGS; k++)
        sum[k] += seg[k];
    (*kept)++;
}

int rp_stages_of(const rp_set *s, int run, double from_ms, rp_stages *o)
{
    memset(o, 0, sizeof *o);
    const rp_row **fr = malloc((s->n + 1) * sizeof *fr), **en = malloc((s->n + 1) * sizeof *en);
    if (!fr || !en) {
        free(fr);
        free(en);
        return -1;
    }
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
    double sum[RP_NSEGS] = {0};
    for (size_t k = 0; k < nf;) {
        frame_rows f;
        memset(&f, 0, sizeof f);
        size_t j = k;
        for (; j < nf && fr[j]->run == fr[k]->run && fr[j]->id == fr[k]->id; j++)
            f.st[fr[j]->stage] = fr[j];
        add_frame(&f, from_ms, sum, &o->frames);
        k = j;
    }
    if (o->frames)
        for (int k = 0; k < RP_NSEGS; k++)
            o->mean[k] = sum[k] / (double)o->frames;
    qsort(en, ne, sizeof *en, cmp_encode_row);
    long count[RP_BATCH_MAX] = {0};
    for (size_t k = 0; k < ne;) {
        size_t j = k;
        while (j < ne && en[j]->run == en[k]->run && en[j]->start == en[k]->start)
            j++;
        size_t size = j - k;
        count[size < RP_BATCH_MAX ? size - 1 : RP_BATCH_MAX - 1]++;
        o->batches++;
        k = j;
    }
    for (int k = 0; k < RP_BATCH_MAX && o->batches; k++)
        o->share[k] = (double)count[k] / (double)o->batches;
    free(fr);
    free(en);
    return 0;
}

const char *rp_seg_name(int seg)
{
    static const char *const names[RP_NSEGS] = {"decode_wait", "decode",  "sample", "encode_wait",
                                                "encode",      "reduce",  "prefill", "frame"};
    return seg >= 0 && seg < RP_NSEGS ? names[seg] : "?";
}
