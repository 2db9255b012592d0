/* rp_stall.c — an idle core's spells unrun by the host. See rp_stall.h.
 * It must never run anything between its sleeps but the clock: a busy
 * core is not halted, and would hide the spells it is here to find. */
#define _GNU_SOURCE                    /* pthread_setaffinity_np, CPU_* */
#include "calib/realpipe/rp_stall.h"

#include <math.h>
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
    double t0, end, thr_ms;
    const double *periods;             /* [nperiods], in turn RP_STALL_CYCLE_MS each */
    int nperiods;
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
    double due = p->t0 + p->periods[0] * (1.0 + (double)p->index / (double)p->ncpus);
    while (due < p->end) {
        int k = (int)((long)((due - p->t0) / RP_STALL_CYCLE_MS) % p->nperiods);
        double period = p->periods[k];
        rp_sleep_until(due);
        double t = rp_now_ms();
        p->wakes++;
        if (t - due >= p->thr_ms && p->nlate < p->cap)
            p->late[p->nlate++] = (rp_stall_wake){p->index, due, t - due, k};
        due += period;
        if (due <= t)                  /* a spell: the times it covered are one wake */
            due += period * (double)(long)((t - due) / period + 1);
    }
    return NULL;
}

void rp_stall_free(rp_stall_result *r)
{
    free(r->ms);
    r->ms = NULL;
}

/* 1 to RP_STALL_MAX_PERIODS periods, each > 0, increasing. */
static int periods_ok(const double *periods_ms, int nperiods)
{
    int ok = nperiods >= 1 && nperiods <= RP_STALL_MAX_PERIODS;
    for (int i = 0; ok && i < nperiods; i++)
        ok = periods_ms[i] > 0 && (i == 0 || periods_ms[i] > periods_ms[i - 1]);
    return ok;
}

/* w is a spell of one of the cpus cores in a period from..nperiods - 1. */
static int spell_in(const rp_stall_wake *w, int cpus, int from, int nperiods, double thr_ms)
{
    return w->late_ms >= thr_ms && w->cpu >= 0 && w->cpu < cpus && w->period >= from
           && w->period < nperiods;
}

/* A Poisson count's log-likelihood at its own rate, N ln(N / T) - N. */
static double loglik(double spells, double core_s)
{
    return spells > 0 ? spells * log(spells / core_s) - spells : 0;
}

void rp_stall_poll_fit(const long *spells, const double *core_s, int n, int *split, double *lr)
{
    double all_n = 0, all_t = 0;
    for (int i = 0; i < n; i++) {
        all_n += (double)spells[i];
        all_t += core_s[i];
    }
    *split = 0;
    *lr = 0;
    double lo_n = 0, lo_t = 0;
    for (int j = 1; j < n; j++) {
        lo_n += (double)spells[j - 1];
        lo_t += core_s[j - 1];
        double hi_n = all_n - lo_n, hi_t = all_t - lo_t;
        if (!(lo_t > 0 && hi_t > 0) || !(hi_n / hi_t > lo_n / lo_t))
            continue;
        double x = 2 * (loglik(lo_n, lo_t) + loglik(hi_n, hi_t) - loglik(all_n, all_t));
        if (x > *lr) {
            *lr = x;
            *split = j;
        }
    }
    if (*lr < RP_STALL_LR_MIN)
        *split = 0;
}

/* The seconds of `seconds` spent in period k of n taken in turn, RP_STALL_CYCLE_MS each. */
static double period_seconds(double seconds, int n, int k)
{
    double ms = seconds * 1e3;
    long slots = (long)(ms / RP_STALL_CYCLE_MS);
    double in = (double)(slots / n + (k < slots % n)) * RP_STALL_CYCLE_MS;
    if (k == slots % n)
        in += ms - (double)slots * RP_STALL_CYCLE_MS;
    return in / 1e3;
}

int rp_stall_summarize(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                       double period_ms, double thr_ms, rp_stall_result *r, char *err, size_t errlen)
{
    return rp_stall_summarize_periods(w, n, wakes, cpus, seconds, &period_ms, 1, thr_ms, r, err, errlen);
}

int rp_stall_summarize_periods(const rp_stall_wake *w, long n, long wakes, int cpus, double seconds,
                               const double *periods_ms, int nperiods, double thr_ms,
                               rp_stall_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (cpus < 1 || cpus > RP_STALL_MAX_CPUS || !(seconds > 0) || !periods_ok(periods_ms, nperiods)
        || !(thr_ms > 0)) {
        snprintf(err, errlen, "stallcal: 1 to %d cores, seconds and threshold > 0, and 1 to %d "
                 "periods > 0, increasing, expected", RP_STALL_MAX_CPUS, RP_STALL_MAX_PERIODS);
        return -1;
    }
    r->cpus = cpus;
    r->seconds = seconds;
    r->thr_ms = thr_ms;
    r->wakes = wakes;
    r->nperiods = nperiods;
    for (int i = 0; i < nperiods; i++) {
        r->periods_ms[i] = periods_ms[i];
        r->period_core_s[i] = cpus * period_seconds(seconds, nperiods, i);
    }
    for (long i = 0; i < n; i++)
        if (spell_in(&w[i], cpus, 0, nperiods, thr_ms))
            r->period_spells[w[i].period]++;
    if (nperiods > 1)
        rp_stall_poll_fit(r->period_spells, r->period_core_s, nperiods, &r->split, &r->lr);
    if (r->split > 0)
        r->poll_ms = (periods_ms[r->split - 1] + periods_ms[r->split]) / 2;
    r->period_ms = periods_ms[r->split];
    double core_s = 0;                 /* the cores' seconds counted */
    for (int i = r->split; i < nperiods; i++)
        core_s += r->period_core_s[i];
    r->ms = malloc(((size_t)n + 1) * sizeof *r->ms);
    if (!r->ms) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double total = 0;
    for (long i = 0; i < n; i++) {
        if (!spell_in(&w[i], cpus, r->split, nperiods, thr_ms))
            continue;
        double len = w[i].late_ms + periods_ms[w[i].period] / 2;
        r->spells[w[i].cpu]++;
        r->ms[r->nspells++] = len;
        total += len;
        int joint = 0;                 /* another core late over the same thr_ms */
        for (long j = 0; j < n && !joint; j++) {
            if (w[j].cpu == w[i].cpu || !spell_in(&w[j], cpus, r->split, nperiods, thr_ms))
                continue;
            double a = w[i].due_ms > w[j].due_ms ? w[i].due_ms : w[j].due_ms;
            double b = w[i].due_ms + w[i].late_ms < w[j].due_ms + w[j].late_ms
                           ? w[i].due_ms + w[i].late_ms : w[j].due_ms + w[j].late_ms;
            joint = b - a >= thr_ms;
        }
        r->joint += joint;
    }
    r->per_s = core_s > 0 ? (double)r->nspells / core_s : 0;
    r->busy_share = core_s > 0 ? total / (core_s * 1e3) : 0;
    if (r->nspells > 0) {
        gsl_sort(r->ms, 1, (size_t)r->nspells);
        r->mean_ms = total / (double)r->nspells;
        r->p50_ms = gsl_stats_quantile_from_sorted_data(r->ms, 1, (size_t)r->nspells, 0.50);
        r->p90_ms = gsl_stats_quantile_from_sorted_data(r->ms, 1, (size_t)r->nspells, 0.90);
        r->max_ms = r->ms[r->nspells - 1];
    }
    return 0;
}

int rp_stall_run(double seconds, const double *periods_ms, int nperiods, double thr_ms,
                 rp_stall_result *r, char *err, size_t errlen)
{
    cpu_set_t mine;
    memset(r, 0, sizeof *r);
    if (!(seconds > 0) || !periods_ok(periods_ms, nperiods) || !(thr_ms > 0)) {
        snprintf(err, errlen, "stallcal: --seconds and the threshold must be > 0, and 1 to %d "
                 "--periods > 0, increasing", RP_STALL_MAX_PERIODS);
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
                            .periods = periods_ms, .nperiods = nperiods, .thr_ms = thr_ms,
                            .cap = cap};
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
        rc = rp_stall_summarize_periods(all, n, wakes, cpus, seconds, periods_ms, nperiods, thr_ms, r,
                                        err, errlen);
    }
    free(all);
    for (int k = 0; k < cpus; k++)
        free(pr[k].late);
    return rc;
}
