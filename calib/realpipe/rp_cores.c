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
    r->cpus = cpus_available();
    r->threads = threads;
    r->rounds = rounds;
    r->seconds = seconds;
    dect_clip *clip = NULL;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    atomic_init(&sh.units, 0);
    sh.keep_every = p->keep_every;
    int started = 0, rc = -1;
    if (!w || !th) {
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
            r->round_units[k - 1][rd] = measure(&sh, k, seconds);
    rp_cores_summarise(r);
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
    return rc;
}

void rp_cores_summarise(rp_cores_result *r)
{
    double u[RP_CORES_ROUNDS], ratio[RP_CORES_ROUNDS];
    for (int k = 0; k < r->threads; k++) {
        int nr = 0;
        for (int rd = 0; rd < r->rounds; rd++) {
            u[rd] = r->round_units[k][rd];
            if (r->round_units[0][rd] > 0)
                ratio[nr++] = r->round_units[k][rd] / r->round_units[0][rd];
        }
        r->units[k] = r->rounds > 0 ? median(u, r->rounds) : 0;
        if (nr == 0) {
            r->speedup[k] = r->lo[k] = r->hi[k] = 0;
            continue;
        }
        r->speedup[k] = median(ratio, nr);   /* sorts: lo and hi are its ends */
        int most = k + 1 < r->cpus ? k + 1 : r->cpus;
        if (r->speedup[k] > most)      /* a faster spell of the machine cannot make k threads */
            r->speedup[k] = most;      /* do more than k, nor more than the CPUs they run on */
        r->lo[k] = ratio[0];
        r->hi[k] = ratio[nr - 1];
    }
}

int rp_cores_pool(const rp_cores_result *in, int n, rp_cores_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n < 1) {
        snprintf(err, errlen, "corepool: no calibration to pool");
        return -1;
    }
    out->threads = in[0].threads;
    out->cpus = in[0].cpus;
    double secs = 0;
    for (int i = 0; i < n; i++) {
        if (in[i].threads != out->threads) {
            snprintf(err, errlen, "corepool: calibration %d has %d threads, calibration 1 %d "
                     "(pool calibrations of the same threads)", i + 1, in[i].threads, out->threads);
            return -1;
        }
        if (out->rounds + in[i].rounds > RP_CORES_ROUNDS) {
            snprintf(err, errlen, "corepool: more than %d rounds in all", RP_CORES_ROUNDS);
            return -1;
        }
        if (in[i].cpus < out->cpus)
            out->cpus = in[i].cpus;
        for (int rd = 0; rd < in[i].rounds; rd++) {
            for (int k = 0; k < out->threads; k++)
                out->round_units[k][out->rounds] = in[i].round_units[k][rd];
            out->rounds++;
            secs += in[i].seconds;
        }
        for (int k = 0; k < out->threads; k++)
            out->done[k] += in[i].done[k];
    }
    out->seconds = out->rounds > 0 ? secs / out->rounds : 0;
    rp_cores_summarise(out);
    return 0;
}
