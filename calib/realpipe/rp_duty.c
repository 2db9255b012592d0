/* rp_duty.c — the ops' CPU time by how busy their threads were lately. See
 * rp_duty.h. It must never pin its threads nor count a unit begun while the
 * last step's duty still lingers. */
#include "calib/realpipe/rp_duty.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/cpu.h"
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_ops.h"

int rp_duty_summarize(rp_duty_result *r, double (*sum_ms)[RP_DUTY_MAX_ROUNDS],
                      long (*cnt)[RP_DUTY_MAX_ROUNDS], const double *wall_ms, char *err,
                      size_t errlen)
{
    double rmean[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS];
    for (int d = 0; d < r->nduty; d++) {
        double s = 0, ss = 0, cpu = 0;
        int k = 0;
        r->n[d] = 0;
        for (int i = 0; i < r->rounds; i++) {
            r->n[d] += cnt[d][i];
            cpu += sum_ms[d][i];
            rmean[d][i] = cnt[d][i] > 0 ? sum_ms[d][i] / (double)cnt[d][i] : NAN;
            if (cnt[d][i] > 0) {
                s += rmean[d][i];
                ss += rmean[d][i] * rmean[d][i];
                k++;
            }
        }
        if (k == 0) {
            snprintf(err, errlen, "dutycal: no unit counted at duty %g (longer --step-s?)",
                     r->duty[d]);
            return -1;
        }
        r->cpu_ms[d] = s / k;
        r->se_ms[d] = k > 1 ? sqrt(fmax(0, (ss - s * s / k) / (k - 1)) / k) : NAN;
        r->busy[d] = wall_ms[d] > 0 ? cpu / wall_ms[d] : NAN;
    }
    for (int d = 0; d < r->nduty; d++) {
        r->factor[d] = r->cpu_ms[d] / r->cpu_ms[0];
        r->lo[d] = INFINITY;
        r->hi[d] = -INFINITY;
        for (int i = 0; i < r->rounds; i++)
            if (cnt[d][i] > 0 && cnt[0][i] > 0) {
                double q = rmean[d][i] / rmean[0][i];
                r->lo[d] = q < r->lo[d] ? q : r->lo[d];
                r->hi[d] = q > r->hi[d] ? q : r->hi[d];
            }
    }
    return 0;
}

typedef struct {
    rp_solo solo;                      /* its stream and kernels */
    int keep_every, nduty, rounds;
    const double *duty;
    double t0, step_ms, settle_ms;     /* the steps start at t0 (rp_now_ms) */
    double sum_ms[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS];   /* counted units' CPU, by duty and round */
    long cnt[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS];
    double wall_ms[RP_DUTY_MAX];       /* their wall, sleeps included */
} worker;

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* corecal's unit, then a sleep that keeps the thread busy the step's duty,
 * until the last step's end; the units before t0 warm the decoder and the
 * caches at the first duty. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    int steps = w->nduty * w->rounds;
    double end = w->t0 + steps * w->step_ms;
    for (double a = rp_now_ms(); a < end;) {
        double c0 = thread_cpu_ms();
        for (int k = 0; k < w->keep_every; k++)
            rp_solo_decode(&w->solo, k == 0);
        rp_solo_chain(&w->solo);
        double cpu = thread_cpu_ms() - c0, b = rp_now_ms();
        double in = a - w->t0;
        int step = in >= 0 ? (int)(in / w->step_ms) : 0;
        int d = step % w->nduty, round = step / w->nduty;
        double duty = w->duty[in >= 0 ? d : 0];
        rp_sleep_until(b + (b - a) * (1 - duty) / duty);
        double e = rp_now_ms();
        if (in >= 0 && step < steps && in - step * w->step_ms >= w->settle_ms) {
            w->sum_ms[d][round] += cpu;
            w->cnt[d][round]++;
            w->wall_ms[d] += e - a;
        }
        a = e;
    }
    return NULL;
}

int rp_duty_run(const rp_params *p, int threads, const double *duty, int nduty, int rounds,
                double step_s, double settle_s, rp_duty_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    int ok = threads >= 1 && threads <= RP_DUTY_MAX_THREADS && nduty >= 2 && nduty <= RP_DUTY_MAX
             && rounds >= 1 && rounds <= RP_DUTY_MAX_ROUNDS && step_s > 0 && settle_s >= 0
             && settle_s < step_s && p->keep_every >= 1 && duty[0] == 1;
    for (int d = 1; ok && d < nduty; d++)
        ok = duty[d] > 0 && duty[d] < duty[d - 1];
    if (!ok) {
        snprintf(err, errlen, "dutycal: threads 1..%d, 2..%d duties decreasing in (0, 1] from 1, "
                 "rounds 1..%d, settle_s in [0, step_s)", RP_DUTY_MAX_THREADS, RP_DUTY_MAX,
                 RP_DUTY_MAX_ROUNDS);
        return -1;
    }
    r->threads = threads;
    r->nduty = nduty;
    r->rounds = rounds;
    r->step_s = step_s;
    r->settle_s = settle_s;
    memcpy(r->duty, duty, (size_t)nduty * sizeof *duty);
    cpu_set_threads(1);                /* as the pipeline runs its kernels */
    dect_clip *clip = NULL;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    int started = 0, rc = -1;
    if (!w || !th) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (rp_ops_clip(p, &clip, err, errlen))
        goto out;
    for (int t = 0; t < threads; t++)
        if (rp_solo_init(&w[t].solo, p, clip, err, errlen))   /* a stream of its own */
            goto out;
    double t0 = rp_now_ms() + 300;     /* every thread warms up first */
    for (int t = 0; t < threads; t++) {
        w[t].keep_every = p->keep_every;
        w[t].duty = r->duty;
        w[t].nduty = nduty;
        w[t].rounds = rounds;
        w[t].t0 = t0;
        w[t].step_ms = 1e3 * step_s;
        w[t].settle_ms = 1e3 * settle_s;
    }
    for (; started < threads; started++)
        if (pthread_create(&th[started], NULL, worker_main, &w[started])) {
            snprintf(err, errlen, "cannot start dutycal's threads");
            goto out;
        }
    rc = 0;
out:
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    if (rc == 0 && started == threads) {   /* every thread's sums together */
        double sum[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS] = {{0}}, wall[RP_DUTY_MAX] = {0};
        long cnt[RP_DUTY_MAX][RP_DUTY_MAX_ROUNDS] = {{0}};
        for (int t = 0; t < threads; t++)
            for (int d = 0; d < nduty; d++) {
                wall[d] += w[t].wall_ms[d];
                for (int i = 0; i < rounds; i++) {
                    sum[d][i] += w[t].sum_ms[d][i];
                    cnt[d][i] += w[t].cnt[d][i];
                }
            }
        rc = rp_duty_summarize(r, sum, cnt, wall, err, errlen);
    }
    for (int t = 0; w && t < threads; t++)
        rp_solo_free(&w[t].solo);
    dect_clip_free(clip);
    free(w);
    free(th);
    return rc;
}
