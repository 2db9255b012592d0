/* rp_sched.c — a scheduler trace's wake-ups of the pipeline's threads. See
 * rp_sched.h. It must never write anything but the summary and the error. */
#include "calib/realpipe/rp_sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/realpipe/rp_vec.h"

const double rp_sched_age_ms[RP_SCHED_NAGE] = {0.25, 0.5, 1, 2, 4, HUGE_VAL};

#define IDLE_BIN RP_SCHED_MAX_BESIDE           /* the beside bins: names, idle, other */
#define OTHER_BIN (RP_SCHED_MAX_BESIDE + 1)
#define NBESIDE (RP_SCHED_MAX_BESIDE + 2)
#define NCLASS RP_SCHED_MAX_CLASS

typedef struct {                       /* what a CPU runs now */
    int known;                         /* a switch on it has been seen */
    int pid;                           /* 0: idle */
    char name[RP_SCHED_NAME];
    double since;                      /* switched in at (s) */
} cpu_now;

typedef struct {                       /* a wake-up of `who` not yet run */
    int pid;
    double t;                          /* sched_waking (s) */
    int prev, waker, target;           /* target -1 until sched_wakeup */
    int cls;                           /* its class, once placed; -1: skipped */
    int age_bin;                       /* -1: put on an idle CPU */
    cpu_now *snap;                     /* [nsnap]: the CPUs at its sched_waking */
    int nsnap;
} pending;

typedef struct {
    rp_vec w;                          /* the waits, ms */
    long moved;
} acc;

typedef struct {
    const char *path;
    long line;
    char *err;
    size_t errlen;
    cpu_now cpu[RP_SCHED_MAX_CPU];
    int ncpu;
    char names[RP_SCHED_MAX_BESIDE][RP_SCHED_NAME];
    int nnames;
    double from_s, to_s;               /* the window of sched_waking, s after the first event */
    pending *pend;
    size_t npend, cappend;
    acc cls[NCLASS];
    double age_sum[RP_SCHED_NAGE];
    long age_n[RP_SCHED_NAGE];
} reader;

static int bad(reader *r, int col, const char *ev, const char *key)
{
    snprintf(r->err, r->errlen, "%s:%ld:%d: %s: no valid %s field", r->path, r->line, col, ev, key);
    return -1;
}

/* The value after `key` (which ends in '=') at a token boundary in f, or NULL. */
static const char *field(const char *f, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = f; (p = strstr(p, key)); p += k)
        if (p == f || p[-1] == ' ')
            return p + k;
    return NULL;
}

/* A name field: from after `key` up to ` end` (a name may hold spaces). */
static int name_field(const char *f, const char *key, const char *end, char out[RP_SCHED_NAME])
{
    const char *v = field(f, key), *e = v ? strstr(v, end) : NULL;
    if (!v || !e)
        return -1;
    size_t n = (size_t)(e - v) < RP_SCHED_NAME - 1 ? (size_t)(e - v) : RP_SCHED_NAME - 1;
    memcpy(out, v, n);
    out[n] = 0;
    return 0;
}

static int int_field(const char *f, const char *key, int *out)
{
    const char *v = field(f, key);
    char *e;
    if (!v)
        return -1;
    long x = strtol(v, &e, 10);
    if (e == v || x < 0 || x > 1 << 30)
        return -1;
    *out = (int)x;
    return 0;
}

/* The bin of name: one of the names seen, idle, or other once they are full. */
static int beside_bin(reader *r, const cpu_now *c)
{
    if (c->pid == 0)
        return IDLE_BIN;
    for (int k = 0; k < r->nnames; k++)
        if (!strcmp(r->names[k], c->name))
            return k;
    if (r->nnames == RP_SCHED_MAX_BESIDE)
        return OTHER_BIN;
    snprintf(r->names[r->nnames], RP_SCHED_NAME, "%s", c->name);
    return r->nnames++;
}

static pending *find(reader *r, int pid)
{
    for (size_t k = 0; k < r->npend; k++)
        if (r->pend[k].pid == pid)
            return &r->pend[k];
    return NULL;
}

static int waking(reader *r, int pid, double t, int prev, int waker)
{
    pending *p = find(r, pid);
    if (!p) {
        if (r->npend == r->cappend) {
            size_t cap = r->cappend ? 2 * r->cappend : 16;
            pending *np = realloc(r->pend, cap * sizeof *np);
            if (!np)
                return -1;
            r->pend = np;
            r->cappend = cap;
        }
        p = &r->pend[r->npend++];
        p->snap = NULL;
    }
    cpu_now *snap = realloc(p->snap, (size_t)(r->ncpu > 0 ? r->ncpu : 1) * sizeof *snap);
    if (!snap)
        return -1;
    memcpy(snap, r->cpu, (size_t)r->ncpu * sizeof *snap);
    *p = (pending){pid, t, prev, waker, -1, -1, -1, snap, r->ncpu};
    return 0;
}

/* sched_wakeup of a pending one: where it went, judged by the CPUs as they
 * were at its sched_waking (a wake-up on another CPU completes there, by an
 * interrupt, and the CPUs may have switched meanwhile). */
static void placed(reader *r, pending *p, int target)
{
    p->target = target;
    const cpu_now *c = target < p->nsnap ? &p->snap[target] : NULL;
    if (!c || !c->known) {
        p->cls = -1;
        return;
    }
    int went = target == p->prev ? RP_WENT_PREV : target == p->waker ? RP_WENT_WAKER : RP_WENT_ELSE;
    int idle = 0;
    for (int k = 0; k < p->nsnap; k++)
        if (k != target && p->snap[k].known && p->snap[k].pid == 0)
            idle = 1;
    int b = beside_bin(r, c);
    p->cls = (went * NBESIDE + b) * 2 + idle;
    p->age_bin = -1;
    if (c->pid != 0) {
        double age = 1e3 * (p->t - c->since);
        int k = 0;
        while (k < RP_SCHED_NAGE - 1 && age > rp_sched_age_ms[k])
            k++;
        p->age_bin = k;
    }
}

static int ran(reader *r, pending *p, int cpu, double t)
{
    if (p->cls >= 0) {
        acc *a = &r->cls[p->cls];
        double w = 1e3 * (t - p->t);
        if (rp_vec_push(&a->w, w))
            return -1;
        a->moved += cpu != p->target;
        if (p->age_bin >= 0) {
            r->age_n[p->age_bin]++;
            r->age_sum[p->age_bin] += w;
        }
    }
    free(p->snap);
    *p = r->pend[--r->npend];
    return 0;
}

/* One line: 0 (used or skipped), or -1 on a malformed sched_* line or out
 * of memory. `who`: the threads whose wake-ups are followed. */
static int one_line(reader *r, char *l, const char *who, double *t0, double *t1)
{
    char *ev = strstr(l, ": sched_");
    if (!ev || l[0] == '#')
        return 0;
    char *name = ev + 2, *colon = strchr(name, ':');
    if (!colon)
        return 0;
    *colon = 0;
    int col = (int)(name - l) + 1;
    int is_waking = !strcmp(name, "sched_waking"), is_wakeup = !strcmp(name, "sched_wakeup"),
        is_switch = !strcmp(name, "sched_switch");
    if (!is_waking && !is_wakeup && !is_switch)
        return 0;
    const char *f = colon + 1;
    char *ts = ev;                     /* the timestamp: the token before ": sched_" */
    while (ts > l && ts[-1] != ' ')
        ts--;
    char *end;
    double t = strtod(ts, &end);
    char *lb = ts;                     /* the CPU: "[NNN]" before it */
    while (lb > l && *lb != '[')
        lb--;
    int cpu = *lb == '[' ? (int)strtol(lb + 1, NULL, 10) : -1;
    if (end != ev || cpu < 0 || cpu >= RP_SCHED_MAX_CPU) {
        snprintf(r->err, r->errlen, "%s:%ld:1: %s: no [CPU] and timestamp before the event",
                 r->path, r->line, name);
        return -1;
    }
    if (cpu >= r->ncpu)
        r->ncpu = cpu + 1;
    if (isnan(*t0))
        *t0 = t;
    *t1 = t;
    if (is_switch) {
        cpu_now *c = &r->cpu[cpu];
        int pid;
        if (name_field(f, "next_comm=", " next_pid=", c->name))
            return bad(r, col, name, "next_comm");
        if (int_field(f, "next_pid=", &pid))
            return bad(r, col, name, "next_pid");
        c->known = 1;
        c->pid = pid;
        c->since = t;
        pending *p = find(r, pid);
        if (p && p->target >= 0)
            return ran(r, p, cpu, t);
        return 0;
    }
    char comm[RP_SCHED_NAME];
    int pid, target;
    if (name_field(f, "comm=", " pid=", comm))
        return bad(r, col, name, "comm");
    if (int_field(f, "pid=", &pid))
        return bad(r, col, name, "pid");
    if (int_field(f, "target_cpu=", &target) || target >= RP_SCHED_MAX_CPU)
        return bad(r, col, name, "target_cpu");
    if (strcmp(comm, who) != 0)
        return 0;
    if (is_waking && (t - *t0 < r->from_s || (r->to_s > 0 && t - *t0 >= r->to_s)))
        return 0;                      /* outside the window: never followed */
    if (target >= r->ncpu)
        r->ncpu = target + 1;
    if (is_waking)                     /* target_cpu: the CPU it last ran on */
        return waking(r, pid, t, target, cpu);
    pending *p = find(r, pid);
    if (p && p->target < 0)
        placed(r, p, target);
    return 0;
}

static int by_count(const void *a, const void *b)
{
    const rp_sched_class *x = a, *y = b;
    return (x->n < y->n) - (x->n > y->n);
}

/* The summary from the reader's counts. */
static void summarize(reader *r, rp_sched_sum *s)
{
    for (int k = 0; k < NCLASS; k++) {
        acc *a = &r->cls[k];
        if (a->w.n == 0)
            continue;
        rp_sched_class *c = &s->cls[s->nclass++];
        int b = k / 2 % NBESIDE;
        c->went = k / 2 / NBESIDE;
        c->idle_elsewhere = k % 2;
        snprintf(c->beside, sizeof c->beside, "%s",
                 b == IDLE_BIN ? "idle" : b == OTHER_BIN ? "other" : r->names[b]);
        double *w = a->w.v;
        size_t n = a->w.n;
        c->n = (long)n;
        c->moved = a->moved;
        gsl_sort(w, 1, n);
        c->p50_ms = gsl_stats_quantile_from_sorted_data(w, 1, n, 0.5);
        c->p90_ms = gsl_stats_quantile_from_sorted_data(w, 1, n, 0.9);
        c->mean_ms = gsl_stats_mean(w, 1, n);
        s->wakeups += c->n;
    }
    /* most first; a stable order for ties (the class order) */
    for (int i = 1; i < s->nclass; i++)
        for (int j = i; j > 0 && by_count(&s->cls[j - 1], &s->cls[j]) > 0; j--) {
            rp_sched_class x = s->cls[j];
            s->cls[j] = s->cls[j - 1];
            s->cls[j - 1] = x;
        }
    for (int k = 0; k < RP_SCHED_NAGE; k++) {
        s->age_n[k] = r->age_n[k];
        s->age_wait_ms[k] = r->age_n[k] ? r->age_sum[k] / (double)r->age_n[k] : 0;
    }
    s->lost = (long)r->npend;
}

int rp_sched_read(const char *path, const char *who, double from_s, double to_s, rp_sched_sum *s,
                  char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!who || !*who || strlen(who) >= RP_SCHED_NAME) {
        snprintf(err, errlen, "a thread name of 1 to %d characters", RP_SCHED_NAME - 1);
        return -1;
    }
    snprintf(s->who, sizeof s->who, "%s", who);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    reader *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->path = path;
    r->from_s = from_s;
    r->to_s = to_s;
    r->err = err;
    r->errlen = errlen;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    double t0 = NAN, t1 = NAN;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        r->line++;
        rc = one_line(r, line, who, &t0, &t1);
        if (rc && !*err)
            snprintf(err, errlen, "out of memory");
    }
    free(line);
    fclose(f);
    if (rc == 0) {
        summarize(r, s);
        s->ncpu = r->ncpu;
        s->span_s = isnan(t0) ? 0 : t1 - t0;
        if (s->wakeups == 0) {
            snprintf(err, errlen, "%s: no wake-up of a thread named %s that then ran (were "
                     "sched_waking, sched_wakeup and sched_switch traced, and the threads named?)",
                     path, who);
            rc = -1;
        }
    }
    for (int k = 0; k < NCLASS; k++)
        free(r->cls[k].w.v);
    for (size_t k = 0; k < r->npend; k++)
        free(r->pend[k].snap);
    free(r->pend);
    free(r);
    return rc;
}

void rp_sched_print(FILE *f, const rp_sched_sum *s)
{
    static const char *const went[RP_WENT_N] = {"its last", "waker's", "another"};
    fprintf(f, "%ld wake-ups of %s that ran, in a trace of %.2f s on %d CPUs (%ld not seen to run)\n",
            s->wakeups, s->who, s->span_s, s->ncpu, s->lost);
    fprintf(f, "%-9s %-15s %-5s %7s %6s %9s %9s %9s %6s\n", "put on", "beside", "idle",
            "n", "share", "wait p50", "p90", "mean ms", "moved");
    for (int k = 0; k < s->nclass; k++) {
        const rp_sched_class *c = &s->cls[k];
        fprintf(f, "%-9s %-15s %-5s %7ld %5.1f%% %9.3f %9.3f %9.3f %6ld\n", went[c->went], c->beside,
                c->idle_elsewhere ? "yes" : "no", c->n, 100.0 * (double)c->n / (double)s->wakeups,
                c->p50_ms, c->p90_ms, c->mean_ms, c->moved);
    }
    fprintf(f, "put beside a running thread, by how long it had run since switched in:\n");
    double lo = 0;
    for (int k = 0; k < RP_SCHED_NAGE; lo = rp_sched_age_ms[k++]) {
        if (isinf(rp_sched_age_ms[k]))
            fprintf(f, "  over %g ms", lo);
        else
            fprintf(f, "  %g-%g ms", lo, rp_sched_age_ms[k]);
        fprintf(f, ": %ld, mean wait %.3f ms\n", s->age_n[k], s->age_wait_ms[k]);
    }
}
