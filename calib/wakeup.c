/* wakeup.c — condition-variable ping-pong: thread wake-up latency. See
 * wakeup.h. Each side waits for its turn on one condition variable; the
 * signaller stamps CLOCK_MONOTONIC just before pthread_cond_signal, the
 * woken side just after its pthread_cond_wait returns. */
#include "calib/wakeup.h"

#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/out.h"

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;              /* 0 or 1: whose turn */
    int total;             /* handoffs to make */
    int done;
    int64_t stamp;         /* ns, at the last signal */
    double *ms;            /* latencies, index = handoff */
} pingpong;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    pingpong *pp;
    int me;
} side;

static void *player(void *arg)
{
    side *sd = arg;
    pingpong *pp = sd->pp;
    pthread_mutex_lock(&pp->mu);
    for (;;) {
        while (pp->turn != sd->me && pp->done < pp->total)
            pthread_cond_wait(&pp->cv, &pp->mu);
        if (pp->done >= pp->total)
            break;
        if (pp->done > 0)
            pp->ms[pp->done - 1] = 1e-6 * (double)(now_ns() - pp->stamp);
        pp->done++;
        pp->turn = 1 - sd->me;
        pp->stamp = now_ns();
        pthread_cond_broadcast(&pp->cv);
    }
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->mu);
    return NULL;
}

typedef struct {
    atomic_bool *stop;
} spinner;

int wake_measure_timer(int rounds, harness_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (rounds < 1) {
        snprintf(err, errlen, "timer rounds must be at least 1");
        return -1;
    }
    double *ms = malloc((size_t)rounds * sizeof *ms);
    if (!ms) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint64_t x = 0x9e3779b97f4a7c15ull;                /* the deadlines' fixed sequence */
    for (int i = 0; i < rounds; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t deadline = now_ns() + (int64_t)((x >> 33) % 4000000);   /* 0..4 ms ahead */
        struct timespec ts = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        ms[i] = 1e-6 * (double)(now_ns() - deadline);
    }
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    harness_stats(ms, rounds, r);                      /* takes ms; rounds >= 1 */
    return 0;
}

/* Keep one core busy until told to stop (the cores-all-busy case). */
static void *spin_main(void *arg)
{
    spinner *sp = arg;
    volatile uint64_t x = 0;
    while (!atomic_load_explicit(sp->stop, memory_order_relaxed))
        x++;
    return NULL;
}

int wake_measure_busy(int rounds, int warmup, int busy, harness_result *r, char *err,
                      size_t errlen)
{
    if (busy < 0 || busy > 256) {
        snprintf(err, errlen, "busy threads must be in 0..256");
        return -1;
    }
    atomic_bool stop;
    atomic_init(&stop, false);
    spinner sp = {&stop};
    pthread_t th[256];
    int started = 0;
    for (; started < busy; started++)
        if (pthread_create(&th[started], NULL, spin_main, &sp))
            break;
    int rc = started == busy ? wake_measure(rounds, warmup, r, NULL, err, errlen) : -1;
    if (started != busy)
        snprintf(err, errlen, "cannot start the busy threads");
    atomic_store(&stop, true);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    return rc;
}

int wake_measure(int rounds, int warmup, harness_result *r, double *cpu_ms, char *err,
                 size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (rounds < 1 || warmup < 0) {
        snprintf(err, errlen, "rounds must be >= 1 and warmup >= 0");
        return -1;
    }
    pingpong pp;
    memset(&pp, 0, sizeof pp);
    pp.total = rounds + warmup + 1;
    pp.ms = malloc((size_t)pp.total * sizeof *pp.ms);
    if (!pp.ms) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&pp.mu, NULL);
    pthread_cond_init(&pp.cv, NULL);
    side a = {&pp, 0}, b = {&pp, 1};
    pthread_t ta, tb;
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    int bad = pthread_create(&ta, NULL, player, &a);
    if (!bad && pthread_create(&tb, NULL, player, &b)) {
        pthread_mutex_lock(&pp.mu);
        pp.done = pp.total;           /* stop the first one */
        pthread_cond_broadcast(&pp.cv);
        pthread_mutex_unlock(&pp.mu);
        pthread_join(ta, NULL);
        bad = 1;
    } else if (!bad) {
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
    }
    getrusage(RUSAGE_SELF, &u1);
    pthread_cond_destroy(&pp.cv);
    pthread_mutex_destroy(&pp.mu);
    if (cpu_ms) {
        double used = (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec + u1.ru_stime.tv_sec
                               - u0.ru_stime.tv_sec) * 1e3
                      + (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec + u1.ru_stime.tv_usec
                                 - u0.ru_stime.tv_usec) * 1e-3;
        *cpu_ms = used / pp.total;
    }
    if (bad) {
        free(pp.ms);
        snprintf(err, errlen, "cannot start the ping-pong threads");
        return -1;
    }
    double *s = malloc((size_t)rounds * sizeof *s);
    if (!s) {
        free(pp.ms);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(s, pp.ms + warmup, (size_t)rounds * sizeof *s);
    free(pp.ms);
    if (harness_stats(s, rounds, r)) {   /* takes s */
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- the ring ---------------------------------------------------------- */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
} ring_q;

typedef struct {
    ring_q *q;
    int threads, me;
    double work_us;
    atomic_bool *stop;
    atomic_long *done;
} ring_arg;

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *ring_main(void *arg)
{
    ring_arg *a = arg;
    ring_q *mine = &a->q[a->me], *next = &a->q[(a->me + 1) % a->threads];
    for (;;) {
        pthread_mutex_lock(&mine->mu);
        while (mine->n == 0 && !atomic_load(a->stop))
            pthread_cond_wait(&mine->cv, &mine->mu);
        if (atomic_load(a->stop)) {
            pthread_mutex_unlock(&mine->mu);
            return NULL;
        }
        mine->n--;
        pthread_mutex_unlock(&mine->mu);
        int64_t end = cpu_ns() + (int64_t)(a->work_us * 1e3);
        volatile uint64_t x = 0;
        while (cpu_ns() < end)
            x++;
        atomic_fetch_add(a->done, 1);
        pthread_mutex_lock(&next->mu);
        next->n++;
        pthread_cond_signal(&next->cv);
        pthread_mutex_unlock(&next->mu);
    }
}

int wake_ring_busy(int threads, int tokens, double work_us, double seconds, double *busy,
                   char *err, size_t errlen)
{
    if (threads < 1 || threads > 64 || tokens < 1 || !(work_us > 0) || !(seconds > 0)) {
        snprintf(err, errlen, "ring: threads 1..64, tokens >= 1, work and time > 0");
        return -1;
    }
    ring_q q[64];
    ring_arg args[64];
    pthread_t th[64];
    atomic_bool stop;
    atomic_long done;
    atomic_init(&stop, false);
    atomic_init(&done, 0);
    for (int k = 0; k < threads; k++) {
        pthread_mutex_init(&q[k].mu, NULL);
        pthread_cond_init(&q[k].cv, NULL);
        q[k].n = 0;
        args[k] = (ring_arg){q, threads, k, work_us, &stop, &done};
    }
    q[0].n = tokens;
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&th[started], NULL, ring_main, &args[started]))
            break;
    struct timespec t0, t1, nap = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long d0 = atomic_load(&done);
    nanosleep(&nap, NULL);
    long d1 = atomic_load(&done);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_store(&stop, true);
    for (int k = 0; k < threads; k++) {
        pthread_mutex_lock(&q[k].mu);
        pthread_cond_broadcast(&q[k].cv);
        pthread_mutex_unlock(&q[k].mu);
    }
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < threads; k++) {
        pthread_mutex_destroy(&q[k].mu);
        pthread_cond_destroy(&q[k].cv);
    }
    if (started != threads) {
        snprintf(err, errlen, "cannot start the ring's threads");
        return -1;
    }
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *busy = (double)(d1 - d0) * work_us * 1e-6 / wall;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vlcalib wakeup [--rounds N] [--busy N] [--timer-rounds N]\n"
            "                      [--ring T [--ring-reps R]] [--out F.yaml [--force]]\n"
            "Thread wake-up latency: two threads hand a token back and forth on a condition\n"
            "variable; each handoff is timed from the signal to the woken thread running\n"
            "(CLOCK_MONOTONIC), after 1000 untimed ones. Default 20000 rounds. Prints n, mean,\n"
            "p50, p95, p99 in ms; --out writes them as YAML (wakeup: {n, mean_ms, ...}),\n"
            "the simulator's cpu.wake_ms is its mean_ms; cpu_ms is the CPU time (user +\n"
            "system, both threads) per handoff (not in the simulator's model). --busy N measures it\n"
            "a second time\n"
            "with N threads spinning (N = the cores: every core busy) and adds a line\n"
            "busy: {threads, n, mean_ms, ...} (whether a woken thread waits for a core).\n"
            "--timer-rounds N (default 1000, 0: none): N timed sleeps (clock_nanosleep to a\n"
            "deadline 0..4 ms ahead, timer slack 1 ns), each one's lateness past its deadline:\n"
            "timer: {n, mean_ms, ...}; its mean_ms is the simulator's cpu.timer_ms (a batch\n"
            "timeout's wait, a camera thread sleeping until each frame's time).\n"
            "--ring T: T threads in a ring hand tokens on, each computing 500 us of CPU per\n"
            "token; with k = 1..T tokens circulating, the cores kept busy (CPU work per wall\n"
            "second, 1 s each, k = 1..T in turn, R rounds (--ring-reps, default 5), the median\n"
            "per k): ring_busy: [b1, ..., bT], and speedup: [1, b2 / b1, ..., bT / b1], the\n"
            "simulator's cpu.speedup. b1 < 1 only because a token waits out each handoff's\n"
            "wake-up, which the simulator's cpu.wake_ms already charges; the speed-up is the\n"
            "cores' parallelism net of it.\n");
}

/* The integer value of option `name`, from lo to hi, into *v; -1 and a
 * message on err when it is not one. */
static int int_opt(const char *name, const char *arg, long lo, long hi, int *v, FILE *err)
{
    char *end;
    long x = strtol(arg, &end, 10);
    if (end == arg || *end || x < lo || x > hi) {
        fprintf(err, "vlcalib wakeup: %s must be an integer from %ld to %ld, not '%s'\n", name, lo,
                hi, arg);
        return -1;
    }
    *v = (int)x;
    return 0;
}

int vlcalib_wakeup_main(int argc, char **argv, FILE *out, FILE *err)
{
    int rounds = 20000, busy = 0, ring = 0, ring_reps = 5, timer_rounds = 1000;
    const char *path = NULL;
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(out);
            return 0;
        } else if (!strcmp(argv[i], "--force")) {
            force = true;
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            if (int_opt("--rounds", argv[++i], 1, 10000000, &rounds, err))
                return 2;
        } else if (!strcmp(argv[i], "--busy") && i + 1 < argc) {
            if (int_opt("--busy", argv[++i], 0, 256, &busy, err))
                return 2;
        } else if (!strcmp(argv[i], "--timer-rounds") && i + 1 < argc) {
            if (int_opt("--timer-rounds", argv[++i], 0, 1000000, &timer_rounds, err))
                return 2;
        } else if (!strcmp(argv[i], "--ring") && i + 1 < argc) {
            if (int_opt("--ring", argv[++i], 1, 16, &ring, err))
                return 2;
        } else if (!strcmp(argv[i], "--ring-reps") && i + 1 < argc) {
            if (int_opt("--ring-reps", argv[++i], 1, 100, &ring_reps, err))
                return 2;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            path = argv[++i];
        } else {
            fprintf(err, "vlcalib wakeup: unknown or incomplete option '%s' (see vlcalib "
                    "wakeup --help)\n", argv[i]);
            return 2;
        }
    }
    char msg[512];
    if (path && out_check(path, force, msg, sizeof msg)) {
        fprintf(err, "vlcalib wakeup: %s\n", msg);
        return 2;
    }
    harness_result r;
    double cpu = 0;
    if (wake_measure(rounds, 1000, &r, &cpu, msg, sizeof msg)) {
        fprintf(err, "vlcalib wakeup: %s\n", msg);
        return 2;
    }
    char line[2048];
    int len = snprintf(line, sizeof line,
             "wakeup: {n: %d, mean_ms: %.6f, p50_ms: %.6f, p95_ms: %.6f, p99_ms: %.6f, "
             "max_ms: %.6f, cpu_ms: %.6f}\n", r.n, r.mean, r.p50, r.p95, r.p99, r.max, cpu);
    if (busy > 0) {
        harness_result b;
        if (wake_measure_busy(rounds, 1000, busy, &b, msg, sizeof msg)) {
            harness_result_free(&r);
            fprintf(err, "vlcalib wakeup: %s\n", msg);
            return 2;
        }
        snprintf(line + len, sizeof line - (size_t)len,
                 "busy: {threads: %d, n: %d, mean_ms: %.6f, p50_ms: %.6f, p95_ms: %.6f, "
                 "p99_ms: %.6f, max_ms: %.6f}\n", busy, b.n, b.mean, b.p50, b.p95, b.p99, b.max);
        harness_result_free(&b);
        len = (int)strlen(line);
    }
    if (timer_rounds > 0) {
        harness_result t;
        if (wake_measure_timer(timer_rounds, &t, msg, sizeof msg)) {
            harness_result_free(&r);
            fprintf(err, "vlcalib wakeup: %s\n", msg);
            return 2;
        }
        len += snprintf(line + len, sizeof line - (size_t)len,
                        "timer: {n: %d, mean_ms: %.6f, p50_ms: %.6f, p95_ms: %.6f, p99_ms: %.6f, "
                        "max_ms: %.6f}\n", t.n, t.mean, t.p50, t.p95, t.p99, t.max);
        harness_result_free(&t);
    }
    if (ring > 0) {
        /* k = 1..ring in turn, ring_reps times, so a slow spell of the machine
         * spreads over every k instead of biasing one; the median per k */
        double b[16][100], med[16];
        for (int rep = 0; rep < ring_reps; rep++)
            for (int k = 1; k <= ring; k++)
                if (wake_ring_busy(ring, k, 500.0, 1.0, &b[k - 1][rep], msg, sizeof msg)) {
                    harness_result_free(&r);
                    fprintf(err, "vlcalib wakeup: %s\n", msg);
                    return 2;
                }
        len += snprintf(line + len, sizeof line - (size_t)len,
                        "# ring: %d threads, %d rounds of 1 s per k; min..max per k:", ring, ring_reps);
        for (int k = 0; k < ring; k++) {
            gsl_sort(b[k], 1, (size_t)ring_reps);
            med[k] = gsl_stats_median_from_sorted_data(b[k], 1, (size_t)ring_reps);
            len += snprintf(line + len, sizeof line - (size_t)len, " %.4f..%.4f", b[k][0],
                            b[k][ring_reps - 1]);
        }
        len += snprintf(line + len, sizeof line - (size_t)len, "\nring_busy: [");
        for (int k = 0; k < ring; k++)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%.4f", k ? ", " : "", med[k]);
        len += snprintf(line + len, sizeof line - (size_t)len, "]\nspeedup: [");
        for (int k = 0; k < ring; k++) {
            double s = med[k] / med[0];
            if (s > k + 1)
                s = k + 1;                   /* a faster spell cannot give more than k cores */
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%.4f", k ? ", " : "", s);
        }
        snprintf(line + len, sizeof line - (size_t)len, "]\n");
    }
    fprintf(out, "%s", line);
    int status = 0;
    if (path) {
        out_file o;
        if (out_open(&o, path, msg, sizeof msg)) {
            status = 2;
        } else {
            fprintf(o.f, "# vlcalib wakeup: condition-variable handoff latency, %d rounds\n%s",
                    rounds, line);
            if (out_commit(&o, msg, sizeof msg))
                status = 2;
        }
        if (status)
            fprintf(err, "vlcalib wakeup: %s\n", msg);
    }
    harness_result_free(&r);
    return status;
}
