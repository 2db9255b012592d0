/* rp_wake.c — the wait of a woken thread by the ops running beside it. See
 * rp_wake.h. It must never pin its threads (the point is where the OS puts
 * them) nor count a job that found no worker asleep. */
#include "calib/realpipe/rp_wake.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_edges.h"
#include "calib/realpipe/rp_ops.h"

typedef struct shared shared;

typedef struct {
    shared *sh;
    rp_solo solo;                  /* its stream and kernels */
} worker;

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rp_wake_job *jobs;                     /* every job, in release order */
    long head, tail;               /* the FIFO: jobs[head..tail) are waiting */
    int asleep;                    /* workers inside the wait */
    bool stop;
};

/* One job on w's own stream and kernels: the stream's next frame (an
 * I-frame one time in gop, as the pipeline's decoders meet them), or the
 * chain at batch 1. */
static void do_job(worker *w, int chain)
{
    if (chain)
        rp_solo_chain(&w->solo);
    else
        rp_solo_decode(&w->solo, 1);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    rp_quiet_thread("vl-worker");
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        while (!sh->stop && sh->head == sh->tail) {
            sh->asleep++;
            pthread_cond_wait(&sh->cv, &sh->mu);
            sh->asleep--;
        }
        if (sh->head == sh->tail) {
            pthread_mutex_unlock(&sh->mu);
            return NULL;
        }
        rp_wake_job *j = &sh->jobs[sh->head++];
        pthread_mutex_unlock(&sh->mu);
        j->t0 = rp_now_ms();
        do_job(w, j->chain);
        j->t1 = rp_now_ms();
    }
}

/* A job's mean time on one thread alone: 30 of each kind on w, after 10
 * to warm the caches, weighted keep_every decodes to one chain. */
static double job_ms(worker *w, int keep_every)
{
    double t[2] = {0, 0};
    for (int chain = 0; chain < 2; chain++) {
        for (int i = 0; i < 10; i++)
            do_job(w, chain);
        double a = rp_now_ms();
        for (int i = 0; i < 30; i++)
            do_job(w, chain);
        t[chain] = (rp_now_ms() - a) / 30;
    }
    return (keep_every * t[0] + t[1]) / (keep_every + 1);
}

/* Hand one job over (under the lock), due at `due`: whether a worker sleeps for it. */
static void release(shared *sh, double due, int chain, int load)
{
    pthread_mutex_lock(&sh->mu);
    rp_wake_job *j = &sh->jobs[sh->tail];
    j->due = due;
    j->chain = chain;
    j->load = load;
    j->tq = rp_now_ms();
    j->asleep = sh->asleep >= sh->tail - sh->head + 1;   /* one asleep for each queued, this one too */
    sh->tail++;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

/* Jobs running at t (started at or before, not yet ended), at most top. */
static int running_at(const double *te, const int *cnt, size_t ne, double t, int top)
{
    if (ne == 0 || t < te[0])
        return 0;
    int k = cnt[rp_edge_last(te, ne, t)];
    return k < top ? k : top;
}

/* The end of the first job running at t (t0 <= t < t1), or INFINITY: s
 * holds the jobs' spans by start, none longer than maxdur. */
typedef struct {
    double t0, t1;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static double first_end(const span *s, long n, double maxdur, double t)
{
    long lo = 0, hi = n;               /* the first span starting after t */
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (s[mid].t0 <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    double end = INFINITY;
    for (long i = lo - 1; i >= 0 && s[i].t0 >= t - maxdur; i--)
        if (s[i].t1 > t && s[i].t1 < end)
            end = s[i].t1;
    return end;
}

/* One family's classes: sample i (v[i], or none when cls[i] < 0) goes to
 * class cls[i], held when it lasted until rem[i] (the first running job's
 * end, after the sample's start) or later, less the tolerance. */
static int family(rp_wake_classes *f, int classes, const rp_wake_job *jobs, const double *v,
                  const double *rem, const int *cls, long njobs, const char *what, char *err,
                  size_t errlen)
{
    for (int k = 0; k < classes; k++) {
        size_t m = 0, held = 0;
        double held_sum = 0;
        for (long i = 0; i < njobs; i++)
            if (cls[i] == k) {
                f->all[k]++;
                f->n_at[jobs[i].load][k]++;
                f->mean_at[jobs[i].load][k] += v[i];
                if (v[i] >= rem[i] - RP_WAKE_HELD_TOL) {
                    held++;
                    held_sum += v[i];
                } else {
                    m++;
                }
            }
        if (m == 0) {
            snprintf(err, errlen, "wakecal: no %s with %d other job%s running%s%s; run it longer "
                     "(--seconds)", what, k, k == 1 ? "" : "s", k == classes - 1 ? " or more" : "",
                     f->all[k] ? " but held ones" : "");
            return -1;
        }
        f->held[k] = (double)held / (double)f->all[k];
        f->held_ms[k] = held ? held_sum / (double)held : 0;
        double *x = malloc(m * sizeof *x);
        if (!x) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        m = 0;
        for (long i = 0; i < njobs; i++)
            if (cls[i] == k && v[i] < rem[i] - RP_WAKE_HELD_TOL)
                x[m++] = v[i];
        for (int l = 0; l < RP_WAKE_NLOADS; l++)
            if (f->n_at[l][k] > 0)
                f->mean_at[l][k] /= (double)f->n_at[l][k];
        gsl_sort(x, 1, m);
        f->samples[k] = x;
        f->n[k] = m;
        f->mean[k] = gsl_stats_mean(x, 1, m);
        f->p50[k] = gsl_stats_quantile_from_sorted_data(x, 1, m, 0.50);
        f->p90[k] = gsl_stats_quantile_from_sorted_data(x, 1, m, 0.90);
        f->p99[k] = gsl_stats_quantile_from_sorted_data(x, 1, m, 0.99);
    }
    return 0;
}

/* A machine stall: a class-0 wake-up wait (cores idle) and a class-0 timer
 * lateness, of two threads, that overlap by RP_WAKE_STALL_MS or more. With
 * the cores idle nothing of the machine's own load keeps two threads from
 * running: the host did not run the VM's CPUs (a 120 ms freeze caught both
 * the waking worker and the release thread in a wakecal of 2026-12-05
 * 22:20). Such a wait is the whole machine's, not one thread's wake-up:
 * drawn by the simulator as one thread's wake-up it stalled the sampler
 * alone for 120 ms, every few seconds, while the rest of the pipeline ran
 * on. Both samples get the class STALLED, which family() counts in no class,
 * and are counted here; a sample already STALLED still pairs with others.
 * Only a long wait looks for a long lateness: O(long waits x releases), the
 * long waits a handful. */
#define STALLED (-2)

static int stall_candidate(int cls, double v)
{
    return (cls == 0 || cls == STALLED) && v >= RP_WAKE_STALL_MS;
}

static void mark_stalls(rp_wake_result *r, const rp_wake_job *jobs, long njobs, const double *wv,
                        int *wcls, const double *tv, int *tcls)
{
    r->stalls = 0;
    r->stall_ms = 0;
    for (long i = 0; i < njobs; i++) {
        if (!stall_candidate(wcls[i], wv[i]))
            continue;
        for (long j = 0; j < njobs; j++) {
            if (!stall_candidate(tcls[j], tv[j]))
                continue;
            double a = jobs[i].tq > jobs[j].due ? jobs[i].tq : jobs[j].due;
            double b = jobs[i].t0 < jobs[j].tq ? jobs[i].t0 : jobs[j].tq;
            if (b - a < RP_WAKE_STALL_MS)
                continue;
            r->stalls += (wcls[i] == 0) + (tcls[j] == 0);
            wcls[i] = tcls[j] = STALLED;
            if (b - a > r->stall_ms)
                r->stall_ms = b - a;
        }
    }
}

/* Both families from the finished jobs: the jobs running at any moment are
 * counted from their start and end edges afterwards, so the measurement
 * itself touches nothing but the clock. */
int rp_wake_classify(rp_wake_result *r, const rp_wake_job *jobs, long njobs, char *err, size_t errlen)
{
    size_t ne = 2 * (size_t)njobs;
    rp_edge *ed = malloc((ne + 1) * sizeof *ed);
    double *te = malloc((ne + 1) * sizeof *te), *v = calloc((size_t)njobs + 1, sizeof *v);
    double *rem = calloc((size_t)njobs + 1, sizeof *rem);
    int *cnt = malloc((ne + 1) * sizeof *cnt), *cls = calloc((size_t)njobs + 1, sizeof *cls);
    double *tv = calloc((size_t)njobs + 1, sizeof *tv), *trem = calloc((size_t)njobs + 1, sizeof *trem);
    int *tcls = calloc((size_t)njobs + 1, sizeof *tcls);
    span *sp = malloc(((size_t)njobs + 1) * sizeof *sp);
    int rc = -1, top = r->classes - 1;
    double maxdur = 0;
    if (!ed || !te || !v || !rem || !cnt || !cls || !tv || !trem || !tcls || !sp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (long i = 0; i < njobs; i++) {
        ed[2 * i] = (rp_edge){jobs[i].t0, +1};
        ed[2 * i + 1] = (rp_edge){jobs[i].t1, -1};
        sp[i] = (span){jobs[i].t0, jobs[i].t1};
        if (jobs[i].t1 - jobs[i].t0 > maxdur)
            maxdur = jobs[i].t1 - jobs[i].t0;
    }
    rp_edges_count(ed, ne, te, cnt);
    qsort(sp, (size_t)njobs, sizeof *sp, span_cmp);
    for (long i = 0; i < njobs; i++) {
        v[i] = jobs[i].t0 - jobs[i].tq;
        cls[i] = jobs[i].asleep ? running_at(te, cnt, ne, jobs[i].tq, top) : -1;
        rem[i] = first_end(sp, njobs, maxdur, jobs[i].tq) - jobs[i].tq;
    }
    /* A job due before the one ahead of it was handed over found the release
     * thread awake, still late for that one: it was handed over at once, with
     * no timed wait of its own. Its lateness is the earlier wait's remainder;
     * counted again it would turn one long oversleep into many (a 20 ms one,
     * a dozen samples over 5 ms), and the simulator's release thread, which
     * hands over every frame due while it was late with the late one, would
     * then draw each of them as an oversleep of its own. */
    r->timer_caught_up = 0;
    for (long i = 0; i < njobs; i++) {
        tv[i] = jobs[i].tq - jobs[i].due;
        tcls[i] = running_at(te, cnt, ne, jobs[i].due, top);
        trem[i] = first_end(sp, njobs, maxdur, jobs[i].due) - jobs[i].due;
        if (i > 0 && jobs[i].due <= jobs[i - 1].tq) {
            tcls[i] = -1;
            r->timer_caught_up++;
        }
    }
    mark_stalls(r, jobs, njobs, v, cls, tv, tcls);
    if (family(&r->wake, r->classes, jobs, v, rem, cls, njobs,
               "quick wake-up of a sleeping worker", err, errlen))
        goto out;
    rc = family(&r->timer, r->classes, jobs, tv, trem, tcls, njobs, "quick timed wake-up", err, errlen);
    if (rc == 0)
        r->index_ms = sqrt(r->wake.p90[0] * r->timer.p90[0]);
out:
    free(rem);
    free(tv);
    free(trem);
    free(tcls);
    free(sp);
    if (rc)
        rp_wake_free(r);
    free(ed);
    free(te);
    free(v);
    free(cnt);
    free(cls);
    return rc;
}

int rp_wake_run(const rp_params *p, double seconds, rp_wake_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (p->cores < 1 || p->cores > RP_WAKE_MAX_CLASSES - 1 || !(seconds > 0) || p->keep_every < 1) {
        snprintf(err, errlen, "wakecal: cores 1..%d, seconds > 0", RP_WAKE_MAX_CLASSES - 1);
        return -1;
    }
    static const double loads[RP_WAKE_NLOADS] = {0.2, 0.4, 0.6, 0.8};
    cpu_set_threads(1);                /* as the pipeline runs its kernels */
    r->classes = p->cores + 1;
    r->workers = p->cores + 1;
    r->seconds = seconds;
    memcpy(r->load, loads, sizeof loads);
    int nw = r->workers, started = 0, rc = -1;
    dect_clip *clip = NULL;
    worker *w = calloc((size_t)nw, sizeof *w);
    pthread_t *th = calloc((size_t)nw, sizeof *th);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    if (!w || !th || !rng) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    gsl_rng_set(rng, p->seed);
    if (rp_ops_clip(p, &clip, err, errlen))
        goto out;
    for (int k = 0; k < nw; k++) {
        w[k].sh = &sh;
        if (rp_solo_init(&w[k].solo, p, clip, err, errlen))   /* a stream of its own */
            goto out;
    }
    r->job_ms = job_ms(&w[0], p->keep_every);
    /* room for every job: the loads' expected counts, and half as many again */
    double expect = 0;
    for (int l = 0; l < RP_WAKE_NLOADS; l++)
        expect += loads[l] * p->cores / r->job_ms * seconds * 1e3;
    long cap = (long)(1.5 * expect) + 1000;
    if (!(sh.jobs = malloc((size_t)cap * sizeof *sh.jobs))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (; started < nw; started++)
        if (pthread_create(&th[started], NULL, worker_main, &w[started])) {
            snprintf(err, errlen, "cannot start wakecal's threads");
            goto out;
        }
    rp_quiet_thread("vl-source");                    /* the releaser, as the pipeline's camera thread */
    double t = rp_now_ms() + 50;          /* the workers are asleep by then */
    for (int l = 0; l < RP_WAKE_NLOADS; l++) {
        double gap = r->job_ms / (loads[l] * p->cores), end = t + seconds * 1e3;
        while (sh.tail < cap) {
            t += gsl_ran_exponential(rng, gap);
            if (t >= end)
                break;
            int chain = gsl_rng_uniform(rng) * (p->keep_every + 1) < 1.0;
            rp_sleep_until(t);            /* late: at once, as the pipeline's camera thread */
            release(&sh, t, chain, l);
        }
        t = end;
    }
    rc = 0;
out:
    pthread_mutex_lock(&sh.mu);
    sh.stop = true;
    pthread_cond_broadcast(&sh.cv);
    pthread_mutex_unlock(&sh.mu);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    if (rc == 0) {
        r->jobs = sh.tail;
        rc = rp_wake_classify(r, sh.jobs, sh.tail, err, errlen);
    }
    for (int k = 0; w && k < nw; k++)
        rp_solo_free(&w[k].solo);
    dect_clip_free(clip);
    gsl_rng_free(rng);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    free(sh.jobs);
    free(w);
    free(th);
    if (rc)
        rp_wake_free(r);
    return rc;
}

void rp_wake_free(rp_wake_result *r)
{
    for (int k = 0; k < RP_WAKE_MAX_CLASSES; k++) {
        free(r->wake.samples[k]);
        free(r->timer.samples[k]);
        r->wake.samples[k] = r->timer.samples[k] = NULL;
        r->wake.n[k] = r->timer.n[k] = 0;
    }
}

int rp_wake_samples_path(const char *out, int timer, int k, char *buf, size_t n)
{
    size_t len = strlen(out);
    if (len >= 5 && !strcmp(out + len - 5, ".yaml"))
        len -= 5;
    int m = snprintf(buf, n, "%.*s.%s%d.samples", (int)len, out, timer ? "timer" : "busy", k);
    return m < 0 || (size_t)m >= n ? -1 : 0;
}
