/* rp_turn.c — how two runnable threads on one CPU take turns. See rp_turn.h.
 * It must never pin the caller's thread nor any thread to another CPU than
 * the one it measures, and never time anything but its own busy loops. */
#define _GNU_SOURCE                    /* pthread_setaffinity_np, CPU_SET */
#include "calib/realpipe/rp_turn.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_flow.h"
#include "calib/realpipe/rp_vec.h"

const double rp_turn_w_ms[RP_TURN_NW] = {0.25, 0.5, 1, 2, 4, 8};
const double rp_turn_p_ms[RP_TURN_NP] = {0.05, 0.25, 0.5, 1, 2, 4};

#define FIT_STEP_MS 0.001              /* rp_turn_fit's grid */
#define FIT_MAX_TICK_MS 1000.0
#define SWEEP_SEED 1                   /* the sweep's order of lengths and its sleeps */
#define PROTECT_SEED 2                 /* the protect part's plan */
#define PROTECT_LEAD_MS 5.0            /* the plan's first round, after the gate opens */

/* ---- the model ------------------------------------------------------------- */

double rp_turn_ratio(double w_ms, double slice_ms, double tick_ms)
{
    if (!(w_ms > 0) || !(slice_ms >= 0) || !(tick_ms > 0) || !isfinite(w_ms)
        || !isfinite(slice_ms) || !isfinite(tick_ms))
        return NAN;
    /* The sum's terms: clamp((w - slice - n tick) / tick, 0, 1) is 1 for the
     * m = floor((w - slice) / tick) first n, then one fraction, then 0. */
    double x = w_ms - slice_ms, cuts = 0;
    if (x > 0) {
        double m = floor(x / tick_ms), rest = (x - m * tick_ms) / tick_ms;
        cuts = m + (rest < 0 ? 0 : rest > 1 ? 1 : rest);
    }
    return 1 + tick_ms * cuts / w_ms;
}

double rp_turn_through(double ratio)
{
    if (!isfinite(ratio))
        return NAN;
    double p = 2 - ratio;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* "[W, ...], share: [P, ...]}" at *c: works increasing and > 0, as many
 * shares in [0, 1]; *c moved past the brace. The count, or -1. */
static int read_table(const char **c, double *work, double *share)
{
    static const char sh[] = ", share: ";
    int n = rp_flow_read(c, work, RP_TURN_MAX_THROUGH);
    if (n < 1 || strncmp(*c, sh, sizeof sh - 1) != 0)
        return -1;
    *c += sizeof sh - 1;
    if (rp_flow_read(c, share, RP_TURN_MAX_THROUGH) != n || *(*c)++ != '}')
        return -1;
    for (int i = 0; i < n; i++)
        if (!(work[i] > (i ? work[i - 1] : 0)) || !(share[i] >= 0 && share[i] <= 1))
            return -1;
    return n;
}

int rp_turn_parse(const char *line, rp_turns *t)
{
    static const char through[] = ", through: {work_ms: ", protect[] = ", protect: {ms: ",
                      pwork[] = ", work_ms: ";
    rp_turns r = {0};
    int at = -1;
    if (!line || sscanf(line, "turns: {tick_ms: %lf, slice_ms: %lf%n", &r.tick_ms, &r.slice_ms, &at) != 2
        || at < 0 || !(r.tick_ms > 0) || !isfinite(r.tick_ms) || !(r.slice_ms >= 0)
        || !isfinite(r.slice_ms))
        return -1;
    const char *c = line + at;
    if (strncmp(c, through, sizeof through - 1) == 0) {
        c += sizeof through - 1;
        if ((r.nthrough = read_table(&c, r.work_ms, r.share)) < 0)
            return -1;
    }
    if (strncmp(c, protect, sizeof protect - 1) == 0) {
        c += sizeof protect - 1;
        char *e;
        r.protect_ms = strtod(c, &e);
        if (e == c || !(r.protect_ms >= 0) || !isfinite(r.protect_ms)
            || strncmp(e, pwork, sizeof pwork - 1) != 0)
            return -1;
        c = e + sizeof pwork - 1;
        if ((r.nprotect = read_table(&c, r.pwork_ms, r.pshare)) < 0)
            return -1;
    }
    if (*c++ != '}')
        return -1;
    while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
        c++;
    if (*c)
        return -1;
    *t = r;
    return 0;
}

static double sum_sq(const double *w, const double *ratio, int n, double slice, double tick)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        double d = rp_turn_ratio(w[i], slice, tick) - ratio[i];
        e += d * d;
    }
    return e;
}

int rp_turn_fit(const double *w, const double *ratio, int n, double tick, double *slice, double *sse)
{
    if (!w || !ratio || !slice || !sse || n < 1 || !(tick > 0) || !(tick <= FIT_MAX_TICK_MS))
        return -1;
    for (int i = 0; i < n; i++)
        if (!(w[i] > 0) || !isfinite(w[i]) || !isfinite(ratio[i]))
            return -1;
    long steps = (long)floor(tick / FIT_STEP_MS + 1e-9);
    double best = HUGE_VAL, at = 0;
    for (long k = 0; k <= steps + 1; k++) {          /* the last: tick itself */
        double s = k <= steps ? (double)k / (1.0 / FIT_STEP_MS) : tick;
        if (s > tick)
            s = tick;
        double e = sum_sq(w, ratio, n, s, tick);
        if (e < best) {
            best = e;
            at = s;
        }
    }
    *slice = at;
    *sse = best;
    return 0;
}

/* ---- the threads ----------------------------------------------------------- */

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* The threads of one part wait here until they are all pinned, then go
 * together (state 1) with the part's end time, or leave at once (-1). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;
    double end_ms;
} gate;

static int gate_pass(gate *g, double *end_ms)
{
    pthread_mutex_lock(&g->mu);
    while (g->state == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    int go = g->state > 0;
    *end_ms = g->end_ms;
    pthread_mutex_unlock(&g->mu);
    return go;
}

typedef void *(*thread_fn)(void *);

#define GATE_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0}

/* Start fn[i](arg[i]) for i < n (n <= 2), each waiting at g, pin each to
 * cpu, open g for ms, join them. 0, or -1 and a message (the started
 * threads told to leave). */
static int run_pinned(gate *g, int cpu, int n, thread_fn const *fn, void *const *arg, double ms,
                      char *err, size_t errlen)
{
    pthread_t th[2];
    int started = 0, rc = 0;
    for (; started < n; started++) {
        int e = pthread_create(&th[started], NULL, fn[started], arg[started]);
        if (e) {
            snprintf(err, errlen, "turncal: cannot start a thread (%s)", strerror(e));
            rc = -1;
            break;
        }
    }
    for (int i = 0; rc == 0 && i < started; i++) {
        cpu_set_t cs;
        CPU_ZERO(&cs);
        CPU_SET(cpu, &cs);
        int e = pthread_setaffinity_np(th[i], sizeof cs, &cs);
        if (e) {
            snprintf(err, errlen, "turncal: cannot pin a thread to CPU %d (%s)", cpu, strerror(e));
            rc = -1;
        }
    }
    pthread_mutex_lock(&g->mu);
    g->end_ms = rp_now_ms() + ms;
    g->state = rc ? -1 : 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    return rc;
}

/* ---- tick_ms: two busy loops ------------------------------------------------ */

typedef struct {
    gate *g;
    int id;                        /* 0 or 1: polls[id] is its own */
    atomic_long *polls;            /* each loop's clock reads so far */
    rp_vec runs;                   /* ms between two turns lost */
    rp_vec period;                 /* (a run + the turn lost after it) / 2 */
    rp_vec split;                  /* ms between two gaps of any kind */
    long interruptions;            /* gaps while the other loop did not run */
    int oom;
} tick_arg;

static void push(tick_arg *a, rp_vec *v, double x)
{
    if (rp_vec_push(v, x))
        a->oom = 1;
}

/* A gap over RP_TURN_GAP_MS between two clock reads while the other loop
 * read the clock is a turn lost; one while it did not (an interrupt, the
 * host) is not, and the run goes on through it. */
static void *tick_main(void *p)
{
    tick_arg *a = p;
    double end;
    if (!gate_pass(a->g, &end))
        return NULL;
    atomic_long *mine = &a->polls[a->id], *other = &a->polls[1 - a->id];
    long n = 0, other_seen = atomic_load_explicit(other, memory_order_relaxed);
    double last = rp_now_ms(), start = last, split_start = last;
    int seen = 0, split_seen = 0;
    while (last < end) {
        double t = rp_now_ms();
        atomic_store_explicit(mine, ++n, memory_order_relaxed);
        if (t - last > RP_TURN_GAP_MS) {
            if (split_seen++ >= RP_TURN_DROP)
                push(a, &a->split, last - split_start);
            split_start = t;
            long o = atomic_load_explicit(other, memory_order_relaxed);
            if (o != other_seen) {
                other_seen = o;
                if (seen++ >= RP_TURN_DROP) {
                    push(a, &a->runs, last - start);
                    push(a, &a->period, (t - start) / 2);
                }
                start = t;
            } else if (seen > RP_TURN_DROP) {
                a->interruptions++;
            }
        }
        last = t;
    }
    return NULL;
}

/* ---- the sweep: a hog and a sleeper ----------------------------------------- */

typedef struct {
    gate *g;
    atomic_int *stop;
} hog_arg;

static void *hog_main(void *p)
{
    hog_arg *a = p;
    double end;
    if (!gate_pass(a->g, &end))
        return NULL;
    while (!atomic_load_explicit(a->stop, memory_order_relaxed))
        ;
    return NULL;
}

typedef struct {
    gate *g;
    atomic_int *stop;
    gsl_rng *rng;
    double period;                          /* the tick's, ms: the sleeps' spread */
    double sweep_ms;                        /* how long it sweeps */
    long n[RP_TURN_NW];
    double s[RP_TURN_NW], ss[RP_TURN_NW];   /* sums of the walls and their squares */
    double wake[RP_TURN_NW];                /* sums of the waits from the wake-up time to running */
} sleeper_arg;

/* Sleep until due (absolute, ms), then spin w ms of the thread's own CPU
 * time. Returns its first clock read once it ran, before the spin. */
static double wake_and_spin(double due, double w)
{
    rp_sleep_until(due);
    double w0 = rp_now_ms(), c0 = cpu_ms();
    while (cpu_ms() - c0 < w)
        ;
    return w0;
}

/* Sleep sleep_ms, then spin w ms: the op's wall from its wake (its first
 * clock read) to its end; *wait, from the time it asked to wake at to that
 * read. */
static double one_op(double sleep_ms, double w, double *wait)
{
    double due = rp_now_ms() + sleep_ms;
    double w0 = wake_and_spin(due, w);
    *wait = w0 - due;
    return rp_now_ms() - w0;
}

/* RP_TURN_SLEEP_MS and a part of the tick's period drawn uniformly: the op
 * starts at a uniformly random phase of the tick, whatever the last one's. */
static double next_sleep(const sleeper_arg *a)
{
    return RP_TURN_SLEEP_MS + a->period * gsl_rng_uniform(a->rng);
}

/* Rounds of one block of each length (in a random order each round), each
 * block the same share of the time: its first op untimed (what the last
 * length left behind, the scheduler's lag, wears off), then timed ops until
 * the block's end (one at least). */
static void *sleeper_main(void *p)
{
    sleeper_arg *a = p;
    double end, wait;
    if (gate_pass(a->g, &end)) {
        rp_quiet_thread("vl-sleeper");                        /* its sleeps end on time */
        double t0 = rp_now_ms();
        int rounds = (int)(a->sweep_ms / (RP_TURN_NW * RP_TURN_BLOCK_MS));
        if (rounds < 1)
            rounds = 1;
        double block = a->sweep_ms / (rounds * RP_TURN_NW);
        int order[RP_TURN_NW];
        for (int k = 0; k < RP_TURN_NW; k++)
            order[k] = k;
        for (int r = 0, b = 0; r < rounds; r++) {
            gsl_ran_shuffle(a->rng, order, RP_TURN_NW, sizeof order[0]);
            for (int j = 0; j < RP_TURN_NW; j++, b++) {
                int k = order[j];
                double w = rp_turn_w_ms[k], block_end = t0 + (b + 1) * block;
                one_op(next_sleep(a), w, &wait);
                do {
                    double wall = one_op(next_sleep(a), w, &wait);
                    a->n[k]++;
                    a->s[k] += wall;
                    a->ss[k] += wall * wall;
                    a->wake[k] += wait;
                } while (rp_now_ms() < block_end);
            }
        }
    }
    atomic_store(a->stop, 1);                     /* the hog's end */
    return NULL;
}

/* ---- the run ---------------------------------------------------------------- */

/* The median of v's n values (sorted in place); the quartiles too when q1. */
static double median_of(rp_vec *v, double *q1, double *q3)
{
    gsl_sort(v->v, 1, v->n);
    if (q1) {
        *q1 = gsl_stats_quantile_from_sorted_data(v->v, 1, v->n, 0.25);
        *q3 = gsl_stats_quantile_from_sorted_data(v->v, 1, v->n, 0.75);
    }
    return gsl_stats_median_from_sorted_data(v->v, 1, v->n);
}

/* Append b's values to a: 0, or -1 out of memory. */
static int join_vec(rp_vec *a, const rp_vec *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (rp_vec_push(a, b->v[i]))
            return -1;
    return 0;
}

/* ---- the protect part: a runner and a wakee ------------------------------- */

typedef struct {
    double t;                      /* the runner's wake-up time, ms after the plan's base */
    double age;                    /* the wakee's, after the runner's */
    int k;                         /* the wakee's length: rp_turn_p_ms[k] */
    int timed;                     /* 0: a block's first round */
    double r0, w0;                 /* each one's first clock read once it ran */
} round_t;

typedef struct {
    gate *g;
    round_t *plan;
    size_t n;
    double ms;                     /* the part's length: the plan's base is end - ms + lead */
    int wakee;                     /* 0: the runner */
} protect_arg;

static void *protect_main(void *p)
{
    protect_arg *a = p;
    double end;
    if (!gate_pass(a->g, &end))
        return NULL;
    rp_quiet_thread(a->wakee ? "vl-wakee" : "vl-runner");
    double base = end - a->ms + PROTECT_LEAD_MS;
    for (size_t i = 0; i < a->n; i++) {
        round_t *r = &a->plan[i];
        double w = a->wakee ? rp_turn_p_ms[r->k] : RP_TURN_RUNNER_MS;
        double ran = wake_and_spin(base + r->t + (a->wakee ? r->age : 0), w) - base;
        if (a->wakee)
            r->w0 = ran;
        else
            r->r0 = ran;
    }
    return NULL;
}

/* The plan: blocks of about RP_TURN_BLOCK_MS of one wakee length each, the
 * lengths in a random order each round of blocks, until ms less the lead
 * and the last round's room. NULL when out of memory. */
static round_t *protect_plan(double ms, double period, size_t *n)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return NULL;
    gsl_rng_set(rng, PROTECT_SEED);
    size_t cap = 1024, m = 0;
    round_t *plan = malloc(cap * sizeof *plan);
    int order[RP_TURN_NP];
    for (int k = 0; k < RP_TURN_NP; k++)
        order[k] = k;
    double t = 0, room = RP_TURN_AGE_MAX_MS + 1.5 + rp_turn_p_ms[RP_TURN_NP - 1] + RP_TURN_SLEEP_MS
                         + period + PROTECT_LEAD_MS;
    for (int j = RP_TURN_NP; plan && t + room < ms; j++) {
        if (j == RP_TURN_NP) {
            gsl_ran_shuffle(rng, order, RP_TURN_NP, sizeof order[0]);
            j = 0;
        }
        int k = order[j];
        double block_end = t + RP_TURN_BLOCK_MS;
        for (int first = 1; plan && t < block_end && t + room < ms; first = 0) {
            if (m == cap) {
                round_t *np = realloc(plan, 2 * cap * sizeof *plan);
                if (!np) {
                    free(plan);
                    plan = NULL;
                    break;
                }
                plan = np;
                cap *= 2;
            }
            double age = RP_TURN_AGE_MAX_MS * gsl_rng_uniform(rng);
            plan[m++] = (round_t){t, age, k, !first, NAN, NAN};
            double busy = fmax(RP_TURN_RUNNER_MS, age + 1.5 + rp_turn_p_ms[k]);
            t += busy + RP_TURN_SLEEP_MS + period * gsl_rng_uniform(rng);
        }
    }
    gsl_rng_free(rng);
    *n = m;
    return plan;
}

static int protect_part(int cpu, double ms, rp_turn_result *r, char *err, size_t errlen)
{
    size_t n = 0;
    round_t *plan = protect_plan(ms, r->period_ms > 0 ? r->period_ms : 4, &n);
    rp_vec ends = {0};
    int rc = -1;
    if (!plan) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    gate g = GATE_INIT;
    protect_arg a[2] = {{&g, plan, n, ms, 0}, {&g, plan, n, ms, 1}};
    thread_fn fn[2] = {protect_main, protect_main};
    void *arg[2] = {&a[0], &a[1]};
    if (run_pinned(&g, cpu, 2, fn, arg, ms, err, errlen))
        goto out;
    for (size_t i = 0; i < n; i++) {
        const round_t *x = &plan[i];
        if (!x->timed || !isfinite(x->r0) || !isfinite(x->w0))
            continue;
        if (x->r0 - x->t > RP_TURN_LATE_MS) {
            r->p_late++;
            continue;
        }
        double due = x->t + x->age, age = due - x->r0, wait = x->w0 - due;
        if (age < 0)
            continue;                  /* the runner ran after the wakee's wake-up time */
        r->p_n[x->k]++;
        if (wait > RP_TURN_HELD_MS) {
            r->p_held[x->k]++;
            if (rp_vec_push(&ends, age + wait)) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
    }
    for (int k = 0; k < RP_TURN_NP; k++) {
        r->p_w_ms[k] = rp_turn_p_ms[k];
        if (r->p_n[k] < 1) {
            snprintf(err, errlen, "turncal: no round with a wakee of %g ms ran in %g s (run longer)",
                     rp_turn_p_ms[k], ms / 1e3);
            goto out;
        }
        r->p_share[k] = (double)r->p_held[k] / (double)r->p_n[k];
    }
    if (ends.n > 0) {
        r->protect_ms = median_of(&ends, &r->protect_q1, &r->protect_q3);
    }
    rc = 0;
out:
    free(ends.v);
    free(plan);
    return rc;
}

static int tick_part(int cpu, double ms, rp_turn_result *r, char *err, size_t errlen)
{
    gate g = GATE_INIT;
    atomic_long polls[2];
    atomic_init(&polls[0], 0);
    atomic_init(&polls[1], 0);
    tick_arg a[2];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 2; i++) {
        a[i].g = &g;
        a[i].id = i;
        a[i].polls = polls;
    }
    thread_fn fn[2] = {tick_main, tick_main};
    void *arg[2] = {&a[0], &a[1]};
    int rc = -1;
    if (run_pinned(&g, cpu, 2, fn, arg, ms, err, errlen))
        goto out;
    if (a[0].oom || a[1].oom || join_vec(&a[0].runs, &a[1].runs)
        || join_vec(&a[0].period, &a[1].period) || join_vec(&a[0].split, &a[1].split)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (a[0].runs.n < 1) {
        snprintf(err, errlen, "turncal: no turn was lost on CPU %d in %g s (run longer)", cpu,
                 ms / 1e3);
        goto out;
    }
    r->tick_runs = (long)a[0].runs.n;
    r->tick_ms = median_of(&a[0].runs, &r->tick_q1, &r->tick_q3);
    r->period_ms = median_of(&a[0].period, NULL, NULL);
    r->interruptions = a[0].interruptions + a[1].interruptions;
    r->split_ms = a[0].split.n > 0 ? median_of(&a[0].split, NULL, NULL) : 0;
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        free(a[i].runs.v);
        free(a[i].period.v);
        free(a[i].split.v);
    }
    return rc;
}

static int sweep_part(int cpu, double ms, rp_turn_result *r, char *err, size_t errlen)
{
    gate g = GATE_INIT;
    atomic_int stop;
    atomic_init(&stop, 0);
    hog_arg h = {&g, &stop};
    sleeper_arg s;
    memset(&s, 0, sizeof s);
    s.g = &g;
    s.stop = &stop;
    s.period = r->period_ms;
    s.sweep_ms = ms;
    if (!(s.rng = gsl_rng_alloc(gsl_rng_mt19937))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    gsl_rng_set(s.rng, SWEEP_SEED);
    thread_fn fn[2] = {hog_main, sleeper_main};
    void *arg[2] = {&h, &s};
    int rc = run_pinned(&g, cpu, 2, fn, arg, ms, err, errlen);
    gsl_rng_free(s.rng);
    if (rc)
        return -1;
    for (int k = 0; k < RP_TURN_NW; k++) {
        double w = rp_turn_w_ms[k];
        r->w_ms[k] = w;
        r->n[k] = s.n[k];
        if (s.n[k] < 1) {
            snprintf(err, errlen, "turncal: no op of %g ms ran in %g s (run longer)", w, ms / 1e3);
            return -1;
        }
        double mean = s.s[k] / (double)s.n[k];
        double var = s.n[k] > 1 ? (s.ss[k] - s.s[k] * mean) / (double)(s.n[k] - 1) : 0;
        r->wall_ms[k] = mean;
        r->ratio[k] = mean / w;
        r->ratio_se[k] = var > 0 ? sqrt(var / (double)s.n[k]) / w : 0;
        r->wake_ms[k] = s.wake[k] / (double)s.n[k];
    }
    return 0;
}

int rp_turn_run(double seconds, rp_turn_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (!(seconds > 0) || !isfinite(seconds)) {
        snprintf(err, errlen, "turncal: seconds must be > 0");
        return -1;
    }
    long nprocs = sysconf(_SC_NPROCESSORS_ONLN);
    r->cpu = nprocs > 1 ? (int)(nprocs - 1) : 0;
    if (r->cpu >= CPU_SETSIZE) {
        snprintf(err, errlen, "turncal: cannot pin a thread to CPU %d (over CPU_SETSIZE)", r->cpu);
        return -1;
    }
    double t0 = rp_now_ms();
    if (tick_part(r->cpu, 1e3 * seconds / 3, r, err, errlen)
        || sweep_part(r->cpu, 1e3 * seconds * 2 / 3, r, err, errlen)
        || protect_part(r->cpu, 1e3 * seconds, r, err, errlen))
        return -1;
    r->seconds = (rp_now_ms() - t0) / 1e3;
    if (rp_turn_fit(r->w_ms, r->ratio, RP_TURN_NW, r->tick_ms, &r->slice_ms, &r->sse)) {
        snprintf(err, errlen, "turncal: cannot fit a slice to tick_ms %g", r->tick_ms);
        return -1;
    }
    r->sse0 = sum_sq(r->w_ms, r->ratio, RP_TURN_NW, 0, r->tick_ms);
    for (int k = 0; k < RP_TURN_NW; k++) {
        r->sse_exp += (2 - r->ratio[k]) * (2 - r->ratio[k]);
        r->through[k] = rp_turn_through(r->ratio[k]);
        double d = 2 - r->through[k] - r->ratio[k];
        r->sse_through += d * d;
    }
    return 0;
}
