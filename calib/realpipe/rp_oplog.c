/* rp_oplog.c — the pipeline's ops with their CPU time and CPU. See rp_oplog.h.
 * It must never lock or allocate in rp_oplog_add: the pipeline's threads
 * call it on their per-frame path. */
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

void rp_oplog_add(rp_oplog *l, int kind, int batch, int cpu0, int cpu1, int64_t start, int64_t end,
                  int64_t cpu_ns)
{
    int j = atomic_fetch_add(&l->n, 1);
    if (j < l->cap)
        l->op[j] = (rp_op){(uint8_t)kind, (uint8_t)(batch > 255 ? 255 : batch), (int16_t)cpu0,
                           (int16_t)cpu1, start, end, cpu_ns};
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

void rp_oplog_write(FILE *f, const rp_op *op, int n)
{
    fprintf(f, "kind,batch,cpu_start,cpu_end,start_ms,end_ms,cpu_ms\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s,%d,%d,%d,%.6f,%.6f,%.6f\n", rp_op_name(op[i].kind), op[i].batch, op[i].cpu0,
                op[i].cpu1, 1e-6 * (double)op[i].start, 1e-6 * (double)op[i].end,
                1e-6 * (double)op[i].cpu_ns);
}
