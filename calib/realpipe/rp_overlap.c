/* rp_overlap.c — the pipeline's ops by how many others ran beside them. See
 * rp_overlap.h. It must never feed the simulator: it reads the real spans. */
#include "calib/realpipe/rp_overlap.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#include "calib/realpipe/rp_edges.h"
#include "calib/realpipe/rp_vec.h"

typedef struct {
    double start, end;
    int op;                            /* RP_OVL_*, or -1: counted as another op only */
} interval;

/* The integral of the running-op count from the first edge to t, from the
 * edges' times te[], the count just after each (cnt[]) and the integral at
 * each (cum[]). */
static double integral_at(const double *te, const int *cnt, const double *cum, size_t n, double t)
{
    size_t lo = rp_edge_last(te, n, t);
    return cum[lo] + (double)cnt[lo] * (t - te[lo]);
}

typedef struct {
    int stage;
    double start, end;
} xrow;

static int cmp_xrow(const void *a, const void *b)
{
    const xrow *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The ops of run r: every decode span, and each executor batch once (its
 * frames share the stage and the start) with its size. xr: scratch. */
static size_t ops_of_run(const rp_set *s, int run, int gop, interval *iv, xrow *xr)
{
    size_t n = 0, nx = 0;
    for (size_t k = 0; k < s->n; k++) {
        const rp_row *w = &s->rows[k];
        if (w->run != run || w->kind != RP_FRAME || w->outcome != RP_DONE)
            continue;
        if (w->stage == RP_DECODE) {
            int i_frame = gop > 0 && w->seq % (uint64_t)gop == 0;
            iv[n++] = (interval){w->start, w->end, i_frame ? RP_OVL_DECODE_I : RP_OVL_DECODE_P};
        } else if (w->stage == RP_ENCODE || w->stage == RP_REDUCE || w->stage == RP_PREFILL) {
            xr[nx++] = (xrow){w->stage, w->start, w->end};
        }
    }
    qsort(xr, nx, sizeof *xr, cmp_xrow);
    for (size_t k = 0; k < nx;) {
        size_t j = k;
        while (j < nx && xr[j].stage == xr[k].stage && xr[j].start == xr[k].start)
            j++;
        size_t size = j - k;
        int op = -1;
        if (xr[k].stage == RP_ENCODE && size <= 2)
            op = size == 1 ? RP_OVL_ENCODE_1 : RP_OVL_ENCODE_2;
        else if (xr[k].stage == RP_PREFILL && size == 1)
            op = RP_OVL_PREFILL_1;
        iv[n++] = (interval){xr[k].start, xr[k].end, op};
        k = j;
    }
    return n;
}

int rp_overlap_of(const rp_set *s, int gop, double from_ms, rp_overlap *o)
{
    memset(o, 0, sizeof *o);
    rp_vec v[RP_OVL_OPS][RP_OVL_OTHERS];
    memset(v, 0, sizeof v);
    interval *iv = malloc((s->n + 1) * sizeof *iv);
    rp_edge *ed = malloc(2 * (s->n + 1) * sizeof *ed);
    double *te = malloc(2 * (s->n + 1) * sizeof *te), *cum = malloc(2 * (s->n + 1) * sizeof *cum);
    int *cnt = malloc(2 * (s->n + 1) * sizeof *cnt);
    xrow *xr = malloc((s->n + 1) * sizeof *xr);
    int rc = -1;
    if (!iv || !ed || !te || !cum || !cnt || !xr)
        goto out;
    for (int run = 0; run < s->runs; run++) {
        size_t n = ops_of_run(s, run, gop, iv, xr);
        if (n == 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            ed[2 * k] = (rp_edge){iv[k].start, +1};
            ed[2 * k + 1] = (rp_edge){iv[k].end, -1};
        }
        rp_edges_count(ed, 2 * n, te, cnt);
        for (size_t k = 0; k < 2 * n; k++)
            cum[k] = k ? cum[k - 1] + (double)cnt[k - 1] * (te[k] - te[k - 1]) : 0;
        for (size_t k = 0; k < n; k++) {
            if (iv[k].op < 0 || iv[k].start < from_ms || !(iv[k].end > iv[k].start))
                continue;
            double len = iv[k].end - iv[k].start;
            double busy = integral_at(te, cnt, cum, 2 * n, iv[k].end)
                          - integral_at(te, cnt, cum, 2 * n, iv[k].start);
            double others = busy / len - 1;
            int cls = others < 0.5 ? 0 : others < 1.5 ? 1 : 2;
            if (rp_vec_push(&v[iv[k].op][cls], len))
                goto out;
        }
    }
    for (int op = 0; op < RP_OVL_OPS; op++)
        for (int c = 0; c < RP_OVL_OTHERS; c++) {
            rp_vec *a = &v[op][c];
            rp_ovl_cell *cell = &o->cell[op][c];
            cell->n = (int)a->n;
            if (!a->n)
                continue;
            gsl_sort(a->v, 1, a->n);
            cell->mean = gsl_stats_mean(a->v, 1, a->n);
            cell->p50 = gsl_stats_median_from_sorted_data(a->v, 1, a->n);
        }
    rc = 0;
out:
    for (int op = 0; op < RP_OVL_OPS; op++)
        for (int c = 0; c < RP_OVL_OTHERS; c++)
            free(v[op][c].v);
    free(iv);
    free(ed);
    free(te);
    free(cum);
    free(cnt);
    free(xr);
    return rc;
}

const char *rp_overlap_op_name(int op)
{
    static const char *const names[RP_OVL_OPS] = {"decode_P", "decode_I", "encode_b1", "encode_b2",
                                                  "prefill_b1"};
    return op >= 0 && op < RP_OVL_OPS ? names[op] : "?";
}
