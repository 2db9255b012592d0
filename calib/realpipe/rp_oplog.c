/* rp_oplog.c — the pipeline's ops with their CPU time and CPU. See rp_oplog.h.
 * It must never lock or allocate in rp_oplog_add: the pipeline's threads
 * call it on their per-frame path. */
#define _GNU_SOURCE                    /* qsort_r */
#include "calib/realpipe/rp_oplog.h"

#include <stdlib.h>
#include <string.h>

const char *rp_op_name(int kind)
{
    static const char *const names[] = {"decode", "encode", "reduce", "prefill", "llm_decode"};
    return kind >= 0 && kind < RP_OP_NKINDS ? names[kind] : "?";
}

int rp_oplog_init(rp_oplog *l, int cap)
{
    l->cap = cap > 0 ? cap : 1;
    atomic_init(&l->n, 0);
    l->op = malloc((size_t)l->cap * sizeof *l->op);
    return l->op ? 0 : -1;
}

void rp_oplog_free(rp_oplog *l)
{
    free(l->op);
    l->op = NULL;
    l->cap = 0;
}

void rp_oplog_add(rp_oplog *l, int kind, int batch, int frame, int cpu0, int cpu1, int64_t start,
                  int64_t end, int64_t cpu_ns)
{
    int j = atomic_fetch_add(&l->n, 1);
    if (j < l->cap)
        l->op[j] = (rp_op){(uint8_t)kind, (uint8_t)(batch > 255 ? 255 : batch), (int16_t)cpu0,
                           (int16_t)cpu1, start, end, cpu_ns, frame};
}

int rp_oplog_len(const rp_oplog *l)
{
    int n = atomic_load(&l->n);
    return n < l->cap ? n : l->cap;
}

typedef struct { int64_t t; int cpu, d; } edge;

static int edge_cmp(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d;                /* an end before a start at the same instant */
}

int rp_oplog_summarize(const rp_op *op, int n, int64_t from_ns, rp_opsum *s)
{
    memset(s, 0, sizeof *s);
    edge *e = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e)
        return -1;
    int ne = 0;
    for (int i = 0; i < n; i++) {
        const rp_op *o = &op[i];
        if (o->start < from_ns || o->kind >= RP_OP_NKINDS)
            continue;
        s->n[o->kind]++;
        s->wall_ms[o->kind] += 1e-6 * (double)(o->end - o->start);
        s->cpu_ms[o->kind] += 1e-6 * (double)o->cpu_ns;
        if (o->cpu0 != o->cpu1) {
            s->moved++;
            continue;
        }
        if (o->cpu0 < 0 || o->cpu0 >= RP_OP_MAX_CPU || !(o->end > o->start))
            continue;
        e[ne++] = (edge){o->start, o->cpu0, +1};
        e[ne++] = (edge){o->end, o->cpu0, -1};
    }
    qsort(e, (size_t)ne, sizeof *e, edge_cmp);
    int on[RP_OP_MAX_CPU] = {0}, total = 0, most = 0;   /* ops per CPU, all, the most on one */
    for (int k = 0; k < ne; k++) {
        if (k > 0 && total > 0) {
            double dt = 1e-6 * (double)(e[k].t - e[k - 1].t);
            s->busy_ms += dt;
            if (total == 2) {
                s->two_ms += dt;
                if (most == 2)
                    s->two_same_ms += dt;
            }
        }
        on[e[k].cpu] += e[k].d;
        total += e[k].d;
        most = 0;
        for (int c = 0; c < RP_OP_MAX_CPU; c++)
            most = on[c] > most ? on[c] : most;
    }
    free(e);
    return 0;
}

/* ---- alone or beside another op (rp_oplog_beside) ---------------------- */

enum { CLS_NONE, CLS_ALONE, CLS_BESIDE };

static int by_start(const void *a, const void *b, void *ops)
{
    const rp_op *op = ops;
    int64_t x = op[*(const int *)a].start, y = op[*(const int *)b].start;
    return x < y ? -1 : x > y;
}

typedef struct { int64_t a, b; } span;

static int span_cmp(const void *x, const void *y)
{
    int64_t p = ((const span *)x)->a, q = ((const span *)y)->a;
    return p < q ? -1 : p > q;
}

/* Op i's class among all ops (ord: their indices by start; maxdur: the
 * longest op's span, how far back an overlapping op can have started).
 * sp: room for the other CPUs' overlaps. */
static int classify(const rp_op *op, const int *ord, int n, int at, int64_t maxdur, span *sp)
{
    const rp_op *o = &op[ord[at]];
    int ns = 0, lo = at;
    while (lo > 0 && op[ord[lo - 1]].start > o->start - maxdur - 1)
        lo--;
    for (int k = lo; k < n && op[ord[k]].start < o->end; k++) {
        const rp_op *q = &op[ord[k]];
        if (k == at || q->end <= o->start || q->kind >= RP_OP_NKINDS)
            continue;
        if (q->cpu0 != q->cpu1 || q->cpu0 < 0 || q->cpu0 == o->cpu0)
            return CLS_NONE;           /* on its CPU, or maybe: neither alone nor beside */
        sp[ns++] = (span){q->start > o->start ? q->start : o->start, q->end < o->end ? q->end : o->end};
    }
    if (ns == 0)
        return CLS_ALONE;
    qsort(sp, (size_t)ns, sizeof *sp, span_cmp);
    int64_t covered = 0, a = sp[0].a, b = sp[0].b;
    for (int k = 1; k <= ns; k++) {
        if (k < ns && sp[k].a <= b) {
            b = sp[k].b > b ? sp[k].b : b;
            continue;
        }
        covered += b - a;
        if (k < ns)
            a = sp[k].a, b = sp[k].b;
    }
    return (double)covered >= RP_BESIDE_COVER * (double)(o->end - o->start) ? CLS_BESIDE : CLS_NONE;
}

/* An op's key among its kind: a decode's clip frame, an executor op's batch. */
static int op_key(const rp_op *o)
{
    return o->kind == RP_OP_DECODE ? o->frame : o->batch;
}

int rp_oplog_beside(const rp_op *op, int n, int64_t from_ns, rp_opbeside *b)
{
    memset(b, 0, sizeof *b);
    int nk = 256;                      /* keys: batches up to 255, clip frames as logged */
    for (int i = 0; i < n; i++)
        if (op[i].kind == RP_OP_DECODE && op[i].frame >= nk)
            nk = op[i].frame + 1;
    int *ord = malloc((size_t)(n > 0 ? n : 1) * sizeof *ord);
    unsigned char *cls = malloc((size_t)(n > 0 ? n : 1));
    span *sp = malloc((size_t)(n > 0 ? n : 1) * sizeof *sp);
    double *sum = calloc((size_t)RP_OP_NKINDS * (size_t)nk, sizeof *sum);   /* alone CPU by key */
    long *cnt = calloc((size_t)RP_OP_NKINDS * (size_t)nk, sizeof *cnt);
    int ok = ord && cls && sp && sum && cnt;
    if (ok) {
        int64_t maxdur = 0;
        for (int i = 0; i < n; i++) {
            ord[i] = i;
            maxdur = op[i].end - op[i].start > maxdur ? op[i].end - op[i].start : maxdur;
        }
        qsort_r(ord, (size_t)n, sizeof *ord, by_start, (void *)op);
        double cpu_alone[RP_OP_NKINDS] = {0}, cpu_beside[RP_OP_NKINDS] = {0};
        double paired_cpu[RP_OP_NKINDS] = {0}, paired_ref[RP_OP_NKINDS] = {0};
        for (int at = 0; at < n; at++) {
            const rp_op *o = &op[ord[at]];
            cls[ord[at]] = CLS_NONE;
            if (o->start < from_ns || o->kind >= RP_OP_NKINDS || o->cpu0 != o->cpu1 || o->cpu0 < 0
                || !(o->end > o->start))
                continue;
            int c = classify(op, ord, n, at, maxdur, sp), k = op_key(o);
            cls[ord[at]] = (unsigned char)c;
            if (c == CLS_ALONE) {
                b->alone[o->kind]++;
                cpu_alone[o->kind] += (double)o->cpu_ns;
                if (k >= 0) {
                    sum[o->kind * nk + k] += (double)o->cpu_ns;
                    cnt[o->kind * nk + k]++;
                }
            } else if (c == CLS_BESIDE) {
                b->beside[o->kind]++;
                cpu_beside[o->kind] += (double)o->cpu_ns;
            }
        }
        for (int i = 0; i < n; i++) {
            int k = op_key(&op[i]);
            if (cls[i] != CLS_BESIDE || k < 0 || cnt[op[i].kind * nk + k] == 0)
                continue;
            b->paired[op[i].kind]++;
            paired_cpu[op[i].kind] += (double)op[i].cpu_ns;
            paired_ref[op[i].kind] += sum[op[i].kind * nk + k] / (double)cnt[op[i].kind * nk + k];
        }
        for (int t = 0; t < RP_OP_NKINDS; t++) {
            b->ratio[t] = paired_ref[t] > 0 ? paired_cpu[t] / paired_ref[t] : 0;
            b->naive[t] = b->alone[t] > 0 && b->beside[t] > 0 && cpu_alone[t] > 0
                              ? (cpu_beside[t] / (double)b->beside[t]) / (cpu_alone[t] / (double)b->alone[t])
                              : 0;
        }
    }
    free(ord);
    free(cls);
    free(sp);
    free(sum);
    free(cnt);
    return ok ? 0 : -1;
}

void rp_oplog_write(FILE *f, const rp_op *op, int n)
{
    fprintf(f, "kind,batch,cpu_start,cpu_end,start_ms,end_ms,cpu_ms,frame\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s,%d,%d,%d,%.6f,%.6f,%.6f,%d\n", rp_op_name(op[i].kind), op[i].batch, op[i].cpu0,
                op[i].cpu1, 1e-6 * (double)op[i].start, 1e-6 * (double)op[i].end,
                1e-6 * (double)op[i].cpu_ns, (int)op[i].frame);
}
