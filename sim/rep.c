/* rep.c — a minimal work queue over pthreads for replications. See rep.h. */
#include "sim/rep.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    pthread_mutex_t lock;
    int next, done, nrep;
    int *codes;              /* per replication: fn's return value */
    rep_fn fn;
    void *ctx;
    rep_progress_fn progress;
    void *pctx;
    int stop;                /* set when some replication failed */
} rep_pool;

static void *rep_worker(void *arg)
{
    rep_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int r = p->stop ? p->nrep : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (r >= p->nrep)
            return NULL;
        int code = p->fn(p->ctx, r);
        pthread_mutex_lock(&p->lock);
        p->codes[r] = code;
        if (code)
            p->stop = 1;
        p->done++;
        if (p->progress)
            p->progress(p->pctx, p->done, p->nrep);
        pthread_mutex_unlock(&p->lock);
    }
}

int rep_run_all(int nrep, int nthreads, rep_fn fn, void *ctx,
                rep_progress_fn progress, void *pctx)
{
    rep_pool p = { .next = 0, .done = 0, .nrep = nrep, .fn = fn, .ctx = ctx,
                   .progress = progress, .pctx = pctx, .stop = 0 };
    if (nrep <= 0)
        return 0;
    p.codes = calloc((size_t)nrep, sizeof *p.codes);
    if (!p.codes)
        return -1;
    pthread_mutex_init(&p.lock, NULL);
    if (nthreads > nrep)
        nthreads = nrep;
    int rc = 0;
    if (nthreads <= 1) {
        rep_worker(&p);
    } else {
        pthread_t *th = malloc((size_t)nthreads * sizeof *th);
        int started = 0;
        if (th)
            for (; started < nthreads; started++)
                if (pthread_create(&th[started], NULL, rep_worker, &p) != 0)
                    break;
        if (started == 0)
            rep_worker(&p);               /* no threads at all: do it here */
        for (int i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        free(th);
    }
    for (int r = 0; r < nrep && !rc; r++)
        rc = p.codes[r];
    if (!rc && p.done < nrep)
        rc = -1;
    pthread_mutex_destroy(&p.lock);
    free(p.codes);
    return rc;
}

int rep_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
