/* rp_stats.c — percentiles and drop rates of span sets and of a simulator
 * CSV. See rp_stats.h. Never prints; never reads the clock. */
#include "calib/realpipe/rp_stats.h"
#include "calib/realpipe/rp_vec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

double rp_quantile(const double *sorted, size_t n, double q)
{
    return n ? gsl_stats_quantile_from_sorted_data(sorted, 1, n, q) : NAN;
}

double rp_rel_err(double real, double sim)
{
    if (!(real != 0) || isnan(real) || isnan(sim))
        return NAN;
    return (sim - real) / real;
}

static rp_pct pct_of(rp_vec *a)
{
    gsl_sort(a->v, 1, a->n);
    rp_pct p = {rp_quantile(a->v, a->n, 0.50), rp_quantile(a->v, a->n, 0.95),
                rp_quantile(a->v, a->n, 0.99), a->n};
    return p;
}

int rp_metrics_of(const rp_set *s, int run, double warmup_ms, rp_metrics *m, double **e2e,
                  size_t *ne2e)
{
    memset(m, 0, sizeof *m);
    rp_vec fr = {0}, st[RP_NSTAGES];
    memset(st, 0, sizeof st);
    int bad = 0;
    for (size_t i = 0; i < s->n && !bad; i++) {
        const rp_row *r = &s->rows[i];
        if ((run >= 0 && r->run != run) || r->arrive < warmup_ms)
            continue;
        if (r->kind == RP_FRAME) {
            if (r->stage == RP_DECODE)
                m->arrived++;
            if (r->outcome == RP_DROP_FULL || r->outcome == RP_DROP_TIMEOUT)
                m->dropped++;
            if (r->outcome == RP_SAMPLED_OUT)
                m->sampled_out++;
            if (r->stage == RP_PREFILL && r->outcome == RP_DONE) {
                m->completed++;
                bad |= rp_vec_push(&fr, r->end - r->arrive);
            }
        }
        if (r->outcome == RP_DONE || r->outcome == RP_SAMPLED_OUT)
            bad |= rp_vec_push(&st[r->stage], r->end - r->enq);
    }
    if (!bad) {
        m->frame = pct_of(&fr);
        for (int k = 0; k < RP_NSTAGES; k++)
            m->stage[k] = pct_of(&st[k]);
        m->drop_rate = m->arrived ? (double)m->dropped / (double)m->arrived : NAN;
    }
    for (int k = 0; k < RP_NSTAGES; k++)
        free(st[k].v);
    if (bad || !e2e) {
        free(fr.v);
        return bad ? -1 : 0;
    }
    *e2e = fr.v;
    *ne2e = fr.n;
    return 0;
}

/* ---- the simulator's CSV ------------------------------------------------- */

#define SIM_MAX_COLS 96

static int col_of(char **names, int n, const char *want)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(names[k], want))
            return k;
    return -1;
}

static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line;;) {
        if (n == max)
            return -1;
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = '\0';
        p = c + 1;
    }
}

static double num(const char *s)
{
    char *end;
    double x = strtod(s, &end);
    return *s && !*end ? x : NAN;
}

int rp_sim_read(const char *path, rp_metrics *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->frame.p50 = m->frame.p95 = m->frame.p99 = m->drop_rate = NAN;
    for (int k = 0; k < RP_NSTAGES; k++)
        m->stage[k].p50 = m->stage[k].p95 = m->stage[k].p99 = NAN;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open %s (%s)", path, strerror(errno));
        return -1;
    }
    static char head[8192], line[8192];
    char *names[SIM_MAX_COLS], *v[SIM_MAX_COLS];
    int nh = 0, lineno = 1, rc = -1, seen_e2e = 0;
    if (!fgets(head, sizeof head, f)) {
        snprintf(err, errlen, "%s:1: empty file (expected vlsim run --csv output)", path);
        goto done;
    }
    head[strcspn(head, "\r\n")] = '\0';
    nh = split(head, names, SIM_MAX_COLS);
    int ck = col_of(names, nh, "kind"), cn = col_of(names, nh, "name"),
        c50 = col_of(names, nh, "sojourn_p50"), c95 = col_of(names, nh, "sojourn_p95"),
        c99 = col_of(names, nh, "sojourn_p99"), cd = col_of(names, nh, "drop_rate"),
        ca = col_of(names, nh, "arrivals");
    if (nh < 0 || ck < 0 || cn < 0 || c50 < 0 || c95 < 0 || c99 < 0 || cd < 0 || ca < 0) {
        snprintf(err, errlen, "%s:1: not a vlsim run --csv header (needs kind, name, arrivals, "
                 "drop_rate, sojourn_p50, sojourn_p95, sojourn_p99)", path);
        goto done;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line)
            continue;
        int n = split(line, v, SIM_MAX_COLS);
        if (n != nh) {
            snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, lineno, n, nh);
            goto done;
        }
        rp_pct p = {num(v[c50]), num(v[c95]), num(v[c99]), 1};
        if (!strcmp(v[ck], "e2e")) {
            m->frame = p;
            m->drop_rate = num(v[cd]);
            m->arrived = (uint64_t)num(v[ca]);
            seen_e2e = 1;
        } else if (!strcmp(v[ck], "stage")) {
            int s = rp_stage_find(v[cn]);
            if (s >= 0)
                m->stage[s] = p;
        }
    }
    if (!seen_e2e) {
        snprintf(err, errlen, "%s: no e2e row", path);
        goto done;
    }
    rc = 0;
done:
    fclose(f);
    return rc;
}
