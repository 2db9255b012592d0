/* rp_cores.c — the cores' speed-up for the pipeline's own work. See rp_cores.h.
 * It must never pin its threads (the point is where the OS puts them) nor
 * time anything but whole units. */
#define _GNU_SOURCE                    /* sched_getaffinity */
#include "calib/realpipe/rp_cores.h"

#include <sched.h>
#include <unistd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_ops.h"

typedef struct shared shared;

typedef struct {
    shared *sh;
    int me;
    rp_solo solo;                      /* its stream and kernels */
    long done;                         /* read after the join */
} worker;

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int active;                        /* workers 0..active-1 work; the others wait */
    bool stop;
    atomic_long units;
    int keep_every;
};

/* One unit: the next keep_every frames of this worker's stream, then the
 * kept frame through encode, reduce and prefill at batch 1. */
static void unit(worker *w)
{
    for (int k = 0; k < w->sh->keep_every; k++)
        rp_solo_decode(&w->solo, k == 0);
    rp_solo_chain(&w->solo);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (;;) {
        pthread_mutex_lock(&sh->mu);
        while (!sh->stop && w->me >= sh->active)
            pthread_cond_wait(&sh->cv, &sh->mu);
        bool stop = sh->stop;
        pthread_mutex_unlock(&sh->mu);
        if (stop)
            return NULL;
        unit(w);
        w->done++;
        atomic_fetch_add(&sh->units, 1);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void set_active(shared *sh, int k)
{
    pthread_mutex_lock(&sh->mu);
    sh->active = k;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

/* Units per second with k workers busy: a short settling, then `seconds`.
 * The workers stop at their next unit's end; a unit in flight at the edges
 * counts where it ends, which over hundreds of units is noise. */
static double measure(shared *sh, int k, double seconds)
{
    set_active(sh, k);
    nap(0.1);
    long u0 = atomic_load(&sh->units);
    double t0 = now_s();
    nap(seconds);
    long u1 = atomic_load(&sh->units);
    double t1 = now_s();
    set_active(sh, 0);
    nap(0.05);                         /* let the last units finish */
    return (double)(u1 - u0) / (t1 - t0);
}

/* The median of v[0..n), which it leaves sorted. */
static double median(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* The CPUs this process may run on. */
static int cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int rp_cores_run(const rp_params *p, int threads, int rounds, double seconds, rp_cores_result *r,
                 char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (threads < 1 || threads > RP_CORES_MAX || rounds < 1 || rounds > 100 || !(seconds > 0)
        || p->keep_every < 1) {
        snprintf(err, errlen, "corecal: threads 1..%d, rounds 1..100, seconds > 0", RP_CORES_MAX);
        return -1;
    }
    cpu_set_threads(1);                /* as the pipeline runs its kernels */
    int cpus = cpus_available();
    r->cpus = cpus;
    r->threads = threads;
    r->rounds = rounds;
    r->seconds = seconds;
    dect_clip *clip = NULL;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    double (*ratio)[100] = calloc((size_t)threads, sizeof *ratio);
    double (*units)[100] = calloc((size_t)threads, sizeof *units);
    shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    atomic_init(&sh.units, 0);
    sh.keep_every = p->keep_every;
    int started = 0, rc = -1;
    if (!w || !th || !ratio || !units) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (rp_ops_clip(p, &clip, err, errlen))
        goto out;
    for (int k = 0; k < threads; k++) {
        w[k].sh = &sh;
        w[k].me = k;
        if (rp_solo_init(&w[k].solo, p, clip, err, errlen))   /* a stream of its own */
            goto out;
    }
    for (; started < threads; started++)
        if (pthread_create(&th[started], NULL, worker_main, &w[started])) {
            snprintf(err, errlen, "cannot start corecal's threads");
            goto out;
        }
    measure(&sh, threads, 0.3);        /* warm every worker's decoder and caches */
    for (int rd = 0; rd < rounds; rd++)
        for (int k = 1; k <= threads; k++)
            units[k - 1][rd] = measure(&sh, k, seconds);
    for (int rd = 0; rd < rounds; rd++)
        for (int k = 1; k <= threads; k++)
            ratio[k - 1][rd] = units[0][rd] > 0 ? units[k - 1][rd] / units[0][rd] : 0;
    for (int k = 0; k < threads; k++) {
        r->units[k] = median(units[k], rounds);
        r->speedup[k] = median(ratio[k], rounds);   /* sorts: lo and hi are its ends */
        int most = k + 1 < cpus ? k + 1 : cpus;
        if (r->speedup[k] > most)      /* a faster spell of the machine cannot make k threads */
            r->speedup[k] = most;      /* do more than k, nor more than the CPUs they run on */
        r->lo[k] = ratio[k][0];
        r->hi[k] = ratio[k][rounds - 1];
    }
    rc = r->units[0] > 0 ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "corecal: no unit finished in %g s", seconds);
out:
    pthread_mutex_lock(&sh.mu);
    sh.stop = true;
    pthread_cond_broadcast(&sh.cv);
    pthread_mutex_unlock(&sh.mu);
    for (int k = 0; k < started; k++) {
        pthread_join(th[k], NULL);
        r->done[k] = w[k].done;
    }
    for (int k = 0; w && k < threads; k++)
        rp_solo_free(&w[k].solo);
    dect_clip_free(clip);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    free(w);
    free(th);
    free(ratio);
    free(units);
    return rc;
}
