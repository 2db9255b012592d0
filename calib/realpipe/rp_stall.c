/* rp_stall.c — an idle core's spells unrun by the host. See rp_stall.h.
 * It must never run anything between its sleeps but the clock: a busy
 * core is not halted, and would hide the spells it is here to find. */
#define _GNU_SOURCE                    /* pthread_setaffinity_np, CPU_* */
#include "calib/realpipe/rp_stall.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/realpipe/rp_clock.h"

typedef struct {
    int index, cpu;                    /* its place among the measured, and the CPU it is on */
    int ncpus;                         /* how many are measured */
    double t0, end, period_ms, thr_ms;
    rp_stall_wake *late;               /* the late wakes, at most cap */
    long nlate, cap, wakes;
    int pinned;
} prober;

static void *probe_main(void *arg)
{
    prober *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    p->pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    rp_quiet_thread("vl-stallcal");
    /* the cores' due times interleave: core i's a share i / cpus of a period later */
    double due = p->t0 + p->period_ms * (1.0 + (double)p->index / (double)p->ncpus);
    while (due < p->end) {
        rp_sleep_until(due);
        double t = rp_now_ms();
        p->wakes++;
        if (t - due >= p->thr_ms && p->nlate < p->cap)
            p->late[p->nlate++] = (rp_stall_wake){p->index, due, t - due};
        due += p->period_ms;
        if (due <= t)                  /* a spell: the times it covered are one wake */
            due += p->period_ms * (double)(long)((t - due) / p->period_ms + 1);
    }
    return NULL;
}

void rp_stall_free(rp_stall_result *r)
{
    free(r->ms);
    r->ms = NULL;
}

int rp_stall_summarize(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                       double period_ms, double thr_ms, rp_stall_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (cpus < 1 || cpus > RP_STALL_MAX_CPUS || !(seconds > 0) || !(period_ms > 0) || !(thr_ms > 0)) {
        snprintf(err, errlen, "stallcal: 1 to %d cores, and seconds, period and threshold > 0 expected",
                 RP_STALL_MAX_CPUS);
        return -1;
    }
    r->cpus = cpus;
    r->seconds = seconds;
    r->period_ms = period_ms;
    r->thr_ms = thr_ms;
    r->wakes = wakes;
    r->ms = malloc(((size_t)n + 1) * sizeof *r->ms);
    if (!r->ms) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double total = 0;
    for (long i = 0; i < n; i++) {
        if (!(w[i].late_ms >= thr_ms) || w[i].cpu < 0 || w[i].cpu >= cpus)
            continue;
        r->spells[w[i].cpu]++;
        r->ms[r->nspells++] = w[i].late_ms + period_ms / 2;
        total += w[i].late_ms + period_ms / 2;
        int joint = 0;                 /* another core late over the same thr_ms */
        for (long j = 0; j < n && !joint; j++) {
            if (w[j].cpu == w[i].cpu || !(w[j].late_ms >= thr_ms))
                continue;
            double a = w[i].due_ms > w[j].due_ms ? w[i].due_ms : w[j].due_ms;
            double b = w[i].due_ms + w[i].late_ms < w[j].due_ms + w[j].late_ms
                           ? w[i].due_ms + w[i].late_ms : w[j].due_ms + w[j].late_ms;
            joint = b - a >= thr_ms;
        }
        r->joint += joint;
    }
    r->per_s = (double)r->nspells / ((double)cpus * seconds);
    r->busy_share = total / ((double)cpus * seconds * 1e3);
    if (r->nspells > 0) {
        gsl_sort(r->ms, 1, (size_t)r->nspells);
        r->mean_ms = total / (double)r->nspells;
        r->p50_ms = gsl_stats_quantile_from_sorted_data(r->ms, 1, (size_t)r->nspells, 0.50);
        r->p90_ms = gsl_stats_quantile_from_sorted_data(r->ms, 1, (size_t)r->nspells, 0.90);
        r->max_ms = r->ms[r->nspells - 1];
    }
    return 0;
}

int rp_stall_run(double seconds, double period_ms, double thr_ms, rp_stall_result *r, char *err,
                 size_t errlen)
{
    cpu_set_t mine;
    memset(r, 0, sizeof *r);
    if (!(seconds > 0) || !(period_ms > 0) || !(thr_ms > 0)) {
        snprintf(err, errlen, "stallcal: --seconds, --period-ms and --threshold-ms must be > 0");
        return -1;
    }
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
        snprintf(err, errlen, "stallcal: cannot read the CPUs this process may run on");
        return -1;
    }
    int cpus = 0;
    prober pr[RP_STALL_MAX_CPUS];
    long cap = (long)(seconds * 1e3 / thr_ms) + 16;   /* a spell lasts thr_ms at least */
    double t0 = rp_now_ms() + 20;
    for (int c = 0; c < CPU_SETSIZE && cpus < RP_STALL_MAX_CPUS; c++) {
        if (!CPU_ISSET(c, &mine))
            continue;
        pr[cpus] = (prober){.index = cpus, .cpu = c, .t0 = t0, .end = t0 + seconds * 1e3,
                            .period_ms = period_ms, .thr_ms = thr_ms, .cap = cap};
        if (!(pr[cpus].late = malloc((size_t)cap * sizeof *pr[cpus].late))) {
            for (int k = 0; k < cpus; k++)
                free(pr[k].late);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        cpus++;
    }
    for (int k = 0; k < cpus; k++)
        pr[k].ncpus = cpus;
    pthread_t th[RP_STALL_MAX_CPUS];
    int started = 0, rc = 0;
    for (; started < cpus; started++)
        if (pthread_create(&th[started], NULL, probe_main, &pr[started]) != 0)
            break;
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    long n = 0, wakes = 0;
    for (int k = 0; k < cpus; k++) {
        n += pr[k].nlate;
        wakes += pr[k].wakes;
        if (k < started && !pr[k].pinned && rc == 0) {
            snprintf(err, errlen, "stallcal: cannot pin a thread to CPU %d", pr[k].cpu);
            rc = -1;
        }
    }
    if (started < cpus && rc == 0) {
        snprintf(err, errlen, "stallcal: cannot start a thread");
        rc = -1;
    }
    rp_stall_wake *all = rc == 0 ? malloc(((size_t)n + 1) * sizeof *all) : NULL;
    if (rc == 0 && !all) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        long m = 0;
        for (int k = 0; k < cpus; k++) {
            memcpy(all + m, pr[k].late, (size_t)pr[k].nlate * sizeof *all);
            m += pr[k].nlate;
        }
        rc = rp_stall_summarize(all, n, wakes, cpus, seconds, period_ms, thr_ms, r, err, errlen);
    }
    free(all);
    for (int k = 0; k < cpus; k++)
        free(pr[k].late);
    return rc;
}
