/* cores.c — processor sharing of CPU cores among running jobs, pooled or with
 * each job placed on a core (cpu.stack). See cores.h.
 * It must never know what a job is: completions are the caller's events. */
#include "models/cores.h"

#include <math.h>
#include <stdlib.h>
#include "sim/rng.h"

/* A job this close to done (ms of work) is done: the tick that ends it was
 * computed from its remaining work, so only rounding is left. */
#define CORES_EPS 1e-9

int cores_init(cores_t *c, int cores, const double *speedup, int nspeedup, uint32_t tick_kind)
{
    c->cores = cores < 1 ? 1 : cores;
    c->speedup = nspeedup > 0 ? speedup : NULL;
    c->nspeedup = nspeedup;
    c->tick_kind = tick_kind;
    c->n = 0;
    c->cap = 16;
    c->speed = 1;
    c->t_last = 0;
    c->gen = 0;
    c->place_rng = NULL;
    c->share = c->migrate_ms = c->pull_ms = 0;
    c->by_start = 0;
    c->on = NULL;
    c->mgen = 0;
    c->move_due = 0;
    c->freed_t = -1;
    c->freed_core = -1;
    c->freed_since = 0;
    c->switch_ms = 0;
    c->protect_ms = 0;
    c->protect_work_ms = c->protect_share = NULL;
    c->nprotect = 0;
    c->tick_ms = c->slice_ms = 0;
    c->turn_at = NULL;
    c->through_work_ms = c->through_share = NULL;
    c->nthrough = 0;
    c->sgen = NULL;
    c->turn_due = NULL;
    c->share_load = c->share_at = NULL;
    c->nshare = 0;
    c->util_tau_ms = 0;
    c->util = 0;
    c->run_age_ms = c->run_factor = NULL;
    c->nrun = 0;
    c->run_bridge_ms = 0;
    c->run_t0 = c->empty_t = NULL;
    c->cold_idle_ms = c->cold_factor = NULL;
    c->ncold = 0;
    c->idle_t = NULL;
    c->duty_util = c->duty_factor = NULL;
    c->nduty = 0;
    c->duty_tau_ms = c->duty_now = 0;
    c->busy_ms = c->two_ms = c->two_same_ms = 0;
    c->work_ms = c->cold_extra_ms = c->duty_extra_ms = 0;
    c->spell_ms[0] = c->spell_ms[1] = 0;
    c->spell_moves[0] = c->spell_moves[1] = c->spells[0] = c->spells[1] = 0;
    c->chances = c->stacked = c->protected_starts = 0;
    c->spell = -1;
    c->spell_t0 = 0;
    c->job = malloc((size_t)c->cap * sizeof *c->job);
    return c->job ? 0 : -1;
}

void cores_free(cores_t *c)
{
    free(c->job);
    free(c->on);
    free(c->sgen);
    free(c->turn_due);
    free(c->idle_t);
    free(c->run_t0);
    free(c->empty_t);
    free(c->turn_at);
    c->run_t0 = c->empty_t = NULL;
    c->job = NULL;
    c->idle_t = NULL;
    c->on = NULL;
    c->sgen = NULL;
    c->turn_due = NULL;
    c->turn_at = NULL;
    c->place_rng = NULL;
    c->n = c->cap = 0;
}

double cores_rate(const cores_t *c)
{
    if (c->speedup && c->n > 0)
        return c->speed * c->speedup[(c->n < c->nspeedup ? c->n : c->nspeedup) - 1] / c->n;
    return c->speed * (c->n > c->cores ? (double)c->cores / c->n : 1.0);
}

int cores_set_stack(cores_t *c, double share, double migrate_ms, double pull_ms, gsl_rng *r)
{
    free(c->on);
    c->on = calloc((size_t)c->cores, sizeof *c->on);
    if (!c->on)
        return -1;
    c->share = share < 0 ? 0 : share > 1 ? 1 : share;
    c->migrate_ms = migrate_ms > 0 ? migrate_ms : 0;
    c->pull_ms = pull_ms > 0 ? pull_ms : 0;
    c->place_rng = r;
    return 0;
}

int cores_set_turns(cores_t *c, double switch_ms)
{
    if (!c->on || !(switch_ms > 0))
        return -1;
    free(c->sgen);
    free(c->turn_due);
    c->sgen = calloc((size_t)c->cores, sizeof *c->sgen);
    c->turn_due = calloc((size_t)c->cores, sizeof *c->turn_due);
    if (!c->sgen || !c->turn_due)
        return -1;
    c->switch_ms = switch_ms;
    return 0;
}

int cores_set_ticks(cores_t *c, double tick_ms, double slice_ms)
{
    if (!(tick_ms > 0) || !(slice_ms >= 0) || cores_set_turns(c, tick_ms) != 0)
        return -1;
    free(c->turn_at);
    if (!(c->turn_at = calloc((size_t)c->cores, sizeof *c->turn_at)))
        return -1;
    c->tick_ms = tick_ms;
    c->slice_ms = slice_ms;
    return 0;
}

/* A table of shares by work: n >= 1 works > 0, increasing, shares in [0, 1]. */
static int share_table_ok(const double *work_ms, const double *share, int n)
{
    if (n < 1)
        return 0;
    for (int i = 0; i < n; i++)
        if (!(work_ms[i] > 0 && share[i] >= 0 && share[i] <= 1)
            || (i > 0 && !(work_ms[i] > work_ms[i - 1])))
            return 0;
    return 1;
}

int cores_set_protect(cores_t *c, double protect_ms, const double *work_ms, const double *share,
                      int n)
{
    if (!(c->tick_ms > 0) || !(protect_ms >= 0) || !isfinite(protect_ms)
        || !share_table_ok(work_ms, share, n))
        return -1;
    c->protect_ms = protect_ms;
    c->protect_work_ms = work_ms;
    c->protect_share = share;
    c->nprotect = n;
    return 0;
}

int cores_set_through(cores_t *c, const double *work_ms, const double *share, int n)
{
    if (!(c->tick_ms > 0) || !share_table_ok(work_ms, share, n))
        return -1;
    c->through_work_ms = work_ms;
    c->through_share = share;
    c->nthrough = n;
    return 0;
}

int cores_set_share_load(cores_t *c, const double *load, const double *share, int n,
                         double halflife_ms)
{
    if (!c->on || n < 1 || !(halflife_ms > 0))
        return -1;
    for (int i = 0; i < n; i++)
        if (!(share[i] >= 0 && share[i] <= 1 && load[i] >= 0 && load[i] <= 1)
            || (i > 0 && !(load[i] > load[i - 1])))
            return -1;
    c->share_load = load;
    c->share_at = share;
    c->nshare = n;
    c->util_tau_ms = halflife_ms / M_LN2;
    return 0;
}

/* y on x (n >= 1, x increasing) at v: linear between points, held at the ends. */
static double held_interp(const double *x, const double *y, int n, double v)
{
    if (v <= x[0])
        return y[0];
    for (int i = 1; i < n; i++)
        if (v <= x[i])
            return y[i - 1] + (y[i] - y[i - 1]) * (v - x[i - 1]) / (x[i] - x[i - 1]);
    return y[n - 1];
}

double cores_share_now(const cores_t *c)
{
    return c->nshare == 0 ? c->share : held_interp(c->share_load, c->share_at, c->nshare, c->util);
}

int cores_set_share_run(cores_t *c, const double *age_ms, const double *factor, int n,
                        double bridge_ms)
{
    if (!c->on || n < 1 || !(bridge_ms >= 0))
        return -1;
    for (int i = 0; i < n; i++)
        if (!(age_ms[i] >= 0 && factor[i] >= 0) || (i > 0 && !(age_ms[i] > age_ms[i - 1])))
            return -1;
    free(c->run_t0);
    free(c->empty_t);
    c->run_t0 = malloc((size_t)c->cores * sizeof *c->run_t0);
    c->empty_t = malloc((size_t)c->cores * sizeof *c->empty_t);
    if (!c->run_t0 || !c->empty_t)
        return -1;
    for (int k = 0; k < c->cores; k++)
        c->run_t0[k] = c->empty_t[k] = -HUGE_VAL;   /* empty since ever: the first job begins a run */
    c->run_age_ms = age_ms;
    c->run_factor = factor;
    c->nrun = n;
    c->run_bridge_ms = bridge_ms;
    return 0;
}

/* Placement on: a job comes onto core k at now (its run begins unless the
 * core emptied within bridge_ms), or leaves it. */
static void core_gain(cores_t *c, int k, double now)
{
    if (c->on[k]++ == 0 && c->nrun > 0 && now - c->empty_t[k] > c->run_bridge_ms)
        c->run_t0[k] = now;
}

static void core_lose(cores_t *c, int k, double now)
{
    if (--c->on[k] == 0) {
        if (c->idle_t)
            c->idle_t[k] = now;
        if (c->nrun > 0)
            c->empty_t[k] = now;
    }
}

int cores_track_idle(cores_t *c)
{
    if (!c->idle_t && !(c->idle_t = calloc((size_t)c->cores, sizeof *c->idle_t)))
        return -1;                     /* idle since time 0 */
    return 0;
}

double cores_idle_since(const cores_t *c, int k)
{
    return c->idle_t[k];
}

int cores_set_cold(cores_t *c, const double *idle_ms, const double *factor, int n)
{
    if (n < 1)
        return -1;
    for (int i = 0; i < n; i++)
        if (!(idle_ms[i] >= 0 && factor[i] > 0) || (i > 0 && !(idle_ms[i] > idle_ms[i - 1])))
            return -1;
    if (cores_track_idle(c) != 0)
        return -1;
    c->cold_idle_ms = idle_ms;
    c->cold_factor = factor;
    c->ncold = n;
    return 0;
}

int cores_set_duty(cores_t *c, const double *util, const double *factor, int n, double halflife_ms)
{
    if (n < 1 || !(halflife_ms > 0))
        return -1;
    for (int i = 0; i < n; i++)
        if (!(util[i] >= 0 && util[i] <= 1 && factor[i] > 0) || (i > 0 && !(util[i] > util[i - 1])))
            return -1;
    c->duty_util = util;
    c->duty_factor = factor;
    c->nduty = n;
    c->duty_tau_ms = halflife_ms / M_LN2;
    return 0;
}

static void advance(cores_t *c, double now);

double cores_duty_util(cores_t *c, double now)
{
    advance(c, now);
    return c->duty_now;
}

/* Cold cores on: the factor a job starting now on `core` (placement on; the
 * pooled cores: the core the n-th running job takes) needs on its work, by
 * how long that core has had nothing to run: 0 when it is running a job. */
static double cold_factor_at(const cores_t *c, int core, double now)
{
    int idle = c->place_rng ? c->on[core] == 0 : c->n < c->cores;
    if (!idle)
        return held_interp(c->cold_idle_ms, c->cold_factor, c->ncold, 0);
    return held_interp(c->cold_idle_ms, c->cold_factor, c->ncold, now - c->idle_t[core]);
}

/* Placement on: the total speed's efficiency with n busy, speedup(n) /
 * min(n, k) (1 without a table), so that n <= k jobs on n cores run as the
 * pooled sharing runs them. */
static double efficiency(const cores_t *c)
{
    if (!c->speedup || c->n == 0)
        return 1.0;
    int m = c->n < c->cores ? c->n : c->cores;
    return c->speedup[(c->n < c->nspeedup ? c->n : c->nspeedup) - 1] / m;
}

/* Job j's speed now (either mode). */
static double cores_job_rate(const cores_t *c, int j)
{
    if (!c->place_rng)
        return cores_rate(c);
    if (c->switch_ms > 0)              /* turns: the running job has the whole core */
        return c->job[j].running ? c->speed * efficiency(c) : 0;
    return c->speed * efficiency(c) / c->on[c->job[j].core];
}

/* Bring every job's remaining work up to now at the current rate. */
static void advance(cores_t *c, double now)
{
    double dt = now - c->t_last;
    c->t_last = now;
    if (!(dt > 0))
        return;
    if (c->n > 0)
        c->busy_ms += dt;
    if (c->nshare > 0 || c->nduty > 0) {   /* the recent utilisations decay towards the busy share */
        int busy = 0;
        if (c->on)
            for (int k = 0; k < c->cores; k++)
                busy += c->on[k] > 0;
        else
            busy = c->n < c->cores ? c->n : c->cores;
        double b = (double)busy / c->cores;
        if (c->nshare > 0)
            c->util = b + (c->util - b) * exp(-dt / c->util_tau_ms);
        if (c->nduty > 0)
            c->duty_now = b + (c->duty_now - b) * exp(-dt / c->duty_tau_ms);
    }
    if (c->spell >= 0)
        c->spell_ms[c->spell] += dt;
    if (c->n == 2) {
        c->two_ms += dt;
        if (c->place_rng && c->job[0].core == c->job[1].core)
            c->two_same_ms += dt;
    }
    if (!c->place_rng) {
        double done = dt * cores_rate(c);
        for (int j = 0; j < c->n; j++)
            c->job[j].left -= done;
        return;
    }
    for (int j = 0; j < c->n; j++)
        c->job[j].left -= dt * cores_job_rate(c, j);
}

/* Placement on: the first core with no job (-1: none), and the least loaded
 * core with at least `min` jobs (lowest index on a tie; -1: none). */
static int first_free(const cores_t *c)
{
    for (int k = 0; k < c->cores; k++)
        if (c->on[k] == 0)
            return k;
    return -1;
}

static int least_loaded(const cores_t *c, int min)
{
    int best = -1;
    for (int k = 0; k < c->cores; k++)
        if (c->on[k] >= min && (best < 0 || c->on[k] < c->on[best]))
            best = k;
    return best;
}

static int most_loaded(const cores_t *c)
{
    int best = 0;
    for (int k = 1; k < c->cores; k++)
        if (c->on[k] > c->on[best])
            best = k;
    return best;
}

/* Placement on: a move is due while a core is free and another holds two
 * or more; schedule one (an exponential wait, its mean by what entered the
 * state: a start, or an end or a move) on entering that state and forget
 * it on leaving (a later generation). */
static int check_move(cores_t *c, ev_queue *q, double now)
{
    int due = first_free(c) >= 0 && c->on[most_loaded(c)] >= 2;
    if (due && !c->move_due) {
        c->move_due = 1;
        c->mgen++;
        double mean = c->by_start ? c->migrate_ms : c->pull_ms;
        double wait = mean > 0 ? mean * rng_exp(c->place_rng) : 0;
        return ev_push(q, now + wait, c->tick_kind, 1, c->mgen);
    }
    if (!due && c->move_due) {
        c->move_due = 0;
        c->mgen++;                     /* the pending move is void */
    }
    return 0;
}

int cores_crowded(const cores_t *c)
{
    if (!c->place_rng || first_free(c) < 0)
        return 0;
    int busy = least_loaded(c, 1);
    return busy >= 0 && c->on[busy] >= 2;
}

/* Placement on: the core a job starting now goes onto. */
static int place(cores_t *c, double now)
{
    int idle = first_free(c);
    if (idle < 0)
        return least_loaded(c, 0);
    if (c->n == 0)
        return idle;
    int busy = least_loaded(c, 1);
    if (busy < 0 || c->on[busy] >= 2)
        return idle;                   /* the busy cores are crowded: the free one */
    c->chances++;
    double share = cores_share_now(c);
    if (c->nrun > 0) {                 /* by the busy core's run: young runs keep their core */
        share *= held_interp(c->run_age_ms, c->run_factor, c->nrun, now - c->run_t0[busy]);
        share = share < 1 ? share : 1;
    }
    if (gsl_rng_uniform(c->place_rng) < share) {
        c->stacked++;
        return busy;                   /* beside a running job: stacked */
    }
    return idle;
}

/* Turns on: core k's running job (-1: none), and the job on it that has
 * waited longest, other than `not` (the earliest start on a tie; -1: none). */
static int running_on(const cores_t *c, int k)
{
    for (int j = 0; j < c->n; j++)
        if (c->job[j].core == k && c->job[j].running)
            return j;
    return -1;
}

double cores_protect_end(const cores_t *c, int k)
{
    if (c->nprotect == 0 || !c->place_rng || k < 0 || k >= c->cores)
        return -HUGE_VAL;
    int r = running_on(c, k);
    return r >= 0 ? c->job[r].since + c->protect_ms : -HUGE_VAL;
}

static int longest_waiting(const cores_t *c, int k, int not)
{
    int best = -1;
    for (int j = 0; j < c->n; j++)
        if (c->job[j].core == k && j != not && !c->job[j].running
            && (best < 0 || c->job[j].since < c->job[best].since))
            best = j;
    return best;
}

/* Protection on: a job held (waiting out the running job's protected
 * slice) is on core k. */
static int held_on(const cores_t *c, int k)
{
    for (int j = 0; j < c->n; j++)
        if (c->job[j].core == k && c->job[j].held)
            return 1;
    return 0;
}

/* Turns on: job j takes its core at now from whoever had it. */
static void take_core(cores_t *c, int j, double now)
{
    int r = running_on(c, c->job[j].core);
    if (r >= 0) {
        c->job[r].running = 0;
        /* one that got the core at this same instant never ran: it keeps
         * its place as the longest waiting (events at one instant are
         * handled one by one, in an order the threads never saw) */
        c->job[r].since = c->job[r].since == now ? c->job[r].waited : now;
    }
    c->job[j].running = 1;
    c->job[j].held = 0;
    c->job[j].waited = c->job[j].since;
    c->job[j].since = now;
}

/* Turns on: a turn is due on every core holding two or more jobs; schedule
 * one (an exponential wait) on entering that state and forget it on
 * leaving (a later generation). The event's payload names the core. */
/* Ticks on: when core k turns, the first tick (the ticks fall at the
 * multiples of tick_ms, every core's together, as Linux's do without
 * skew_tick) after its running job has had it for slice_ms, and not before
 * now. Strictly after: a job that took the core at a tick keeps it to the
 * next one. */
static double tick_due(const cores_t *c, int k, double now)
{
    int r = running_on(c, k);
    if (r >= 0 && c->nprotect > 0 && held_on(c, k))   /* a held job takes it when its slice ends */
        return c->job[r].since + c->protect_ms > now ? c->job[r].since + c->protect_ms : now;
    if (r >= 0 && c->job[r].through)
        return HUGE_VAL;               /* it runs through: no turn while it runs */
    double t = r >= 0 ? c->job[r].since + c->slice_ms : now;
    if (t < now)
        t = now;
    double at = (floor(t / c->tick_ms) + 1) * c->tick_ms;
    if (at <= t)                       /* t on a tick whose k T rounds below k: the next */
        at += c->tick_ms;
    return at;
}

static int check_turns(cores_t *c, ev_queue *q, double now)
{
    for (int k = 0; k < c->cores; k++) {
        int due = c->on[k] >= 2;
        if (due && c->tick_ms > 0) {   /* ticks: the turn moves with the running job */
            double at = tick_due(c, k, now);
            if (c->turn_due[k] && c->turn_at[k] == at)
                continue;
            if (isinf(at)) {           /* a job running through: the pending turn is void */
                if (c->turn_due[k]) {
                    c->turn_due[k] = 0;
                    c->sgen[k]++;
                }
                continue;
            }
            c->turn_due[k] = 1;
            c->turn_at[k] = at;
            c->sgen[k]++;
            if (ev_push(q, at, c->tick_kind, 2, c->sgen[k] * (uint64_t)c->cores + (uint64_t)k))
                return -1;
            continue;
        }
        if (due && !c->turn_due[k]) {
            c->turn_due[k] = 1;
            c->sgen[k]++;
            double wait = c->switch_ms * rng_exp(c->place_rng);
            if (ev_push(q, now + wait, c->tick_kind, 2, c->sgen[k] * (uint64_t)c->cores + (uint64_t)k))
                return -1;
        } else if (!due && c->turn_due[k]) {
            c->turn_due[k] = 0;
            c->sgen[k]++;              /* the pending turn is void */
        }
    }
    return 0;
}

/* Placement on: after a change, is a spell on (a core free, another
 * holding two or more)? One that begins takes the change's kind. */
static void note_spell(cores_t *c, double now)
{
    if (first_free(c) >= 0 && c->on[most_loaded(c)] >= 2) {
        if (c->spell < 0) {
            c->spell = c->by_start ? 0 : 1;
            c->spell_t0 = now;
            c->spells[c->spell]++;
        }
    } else {
        if (c->spell >= 0 && c->spell_t0 == now && c->by_start)
            c->spells[c->spell]--;     /* a start ended it at once: a thread going on never left its core */
        c->spell = -1;
    }
}

/* One tick for the earliest completion under the new rate. */
static int reschedule(cores_t *c, ev_queue *q, double now)
{
    c->gen++;
    if (c->place_rng)
        note_spell(c, now);
    if (c->place_rng && c->switch_ms > 0 && check_turns(c, q, now) != 0)
        return -1;
    if (c->n == 0)
        return c->place_rng ? check_move(c, q, now) : 0;
    if (c->place_rng) {
        double first = -1;
        for (int j = 0; j < c->n; j++) {
            double rate = cores_job_rate(c, j);
            if (!(rate > 0))
                continue;              /* turns: waiting for its core */
            double t = (c->job[j].left > 0 ? c->job[j].left : 0) / rate;
            if (first < 0 || t < first)
                first = t;
        }
        if (first >= 0 && ev_push(q, now + first, c->tick_kind, 0, c->gen) != 0)
            return -1;
        return check_move(c, q, now);
    }
    double least = c->job[0].left;
    for (int j = 1; j < c->n; j++)
        if (c->job[j].left < least)
            least = c->job[j].left;
    if (least < 0)
        least = 0;
    return ev_push(q, now + least / cores_rate(c), c->tick_kind, 0, c->gen);
}

int cores_start(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                double work)
{
    return cores_start_on(c, q, now, kind, a, b, work, -1);
}

int cores_freed_core(const cores_t *c, double now)
{
    return c->place_rng && c->freed_t == now ? c->freed_core : -1;
}

int cores_start_on(cores_t *c, ev_queue *q, double now, uint32_t kind, uint32_t a, uint64_t b,
                   double work, int on_core)
{
    advance(c, now);
    if (c->n == c->cap) {
        int ncap = 2 * c->cap;
        cores_job *nj = realloc(c->job, (size_t)ncap * sizeof *nj);
        if (!nj)
            return -1;
        c->job = nj;
        c->cap = ncap;
    }
    int core = 0;
    if (c->place_rng)
        core = on_core >= 0 && on_core < c->cores ? on_core : place(c, now);
    /* a thread going on at once on the core its last job just left */
    int going_on = c->place_rng && on_core == core && c->freed_t == now && c->freed_core == core;
    if ((c->ncold > 0 || c->nduty > 0) && work > 0) {
        double w0 = work;
        c->work_ms += w0;
        if (c->ncold > 0) {            /* a core idle for a while runs its next job slower */
            work = w0 * cold_factor_at(c, c->place_rng ? core : c->n, now);
            c->cold_extra_ms += work - w0;
        }
        if (c->nduty > 0) {            /* so do cores idle much of the time lately */
            double f = held_interp(c->duty_util, c->duty_factor, c->nduty, c->duty_now);
            c->duty_extra_ms += work * (f - 1);
            work *= f;
        }
    }
    /* started on a busy core, it may run through; a thread going on at once
     * is no new start (cores.h) */
    int through = 0;
    if (c->nthrough > 0 && c->on[core] > 0 && !going_on)
        through = gsl_rng_uniform(c->place_rng)
                  < held_interp(c->through_work_ms, c->through_share, c->nthrough, work);
    if (c->place_rng)
        core_gain(c, core, now);
    c->job[c->n++] = (cores_job){kind, a, b, work > 0 ? work : 0, core, 0, now, now, through, 0};
    if (c->place_rng && c->switch_ms > 0) {
        int r = running_on(c, core);
        if (!going_on && r >= 0 && c->nprotect > 0 && now - c->job[r].since < c->protect_ms
            && gsl_rng_uniform(c->place_rng)
               < held_interp(c->protect_work_ms, c->protect_share, c->nprotect, work)) {
            c->job[c->n - 1].held = 1; /* the running job is within its protected slice: wait */
            c->protected_starts++;
        } else {
            take_core(c, c->n - 1, now);   /* a placed job preempts the one running there */
        }
        if (going_on && c->nprotect > 0)
            c->job[c->n - 1].since = c->freed_since;   /* its thread's turn goes on */
    }
    c->by_start = 1;
    return reschedule(c, q, now);
}

int cores_tick(cores_t *c, ev_queue *q, double now, uint64_t gen)
{
    if (gen != c->gen)
        return 0;                      /* superseded by a later change */
    advance(c, now);
    int k = 0;
    for (int j = 0; j < c->n; j++) {   /* finished jobs leave, in start order */
        if (c->job[j].left <= CORES_EPS) {
            if (ev_push(q, now, c->job[j].kind, c->job[j].a, c->job[j].b) != 0)
                return -1;
            if (c->place_rng) {
                core_lose(c, c->job[j].core, now);
                c->freed_t = now;
                c->freed_core = c->job[j].core;
                c->freed_since = c->job[j].since;
            }
        } else {
            c->job[k++] = c->job[j];
        }
    }
    if (!c->place_rng && c->idle_t)   /* pooled: cores min(k, n) .. min(k, n_before) - 1 emptied */
        for (int m = k; m < c->n && m < c->cores; m++)
            c->idle_t[m] = now;
    c->n = k;
    if (c->place_rng && c->switch_ms > 0)
        for (int core = 0; core < c->cores; core++)
            if (c->on[core] > 0 && running_on(c, core) < 0)
                take_core(c, longest_waiting(c, core, -1), now);   /* its running job ended */
    c->by_start = 0;
    return reschedule(c, q, now);
}

/* Placement on: the move is made, the last-started job of the most loaded
 * core going to the first free one, if the state still calls for it. */
static int cores_move(cores_t *c, ev_queue *q, double now, uint64_t gen)
{
    if (gen != c->mgen || !c->move_due)
        return 0;                      /* the state was left since */
    c->move_due = 0;
    advance(c, now);
    int from = most_loaded(c), to = first_free(c);
    if (to >= 0 && c->on[from] >= 2 && c->spell >= 0)
        c->spell_moves[c->spell]++;
    if (to >= 0 && c->on[from] >= 2)
        for (int j = c->n - 1; j >= 0; j--)
            if (c->job[j].core == from && !c->job[j].running) {   /* turns: a waiting one */
                c->job[j].core = to;
                core_lose(c, from, now);
                core_gain(c, to, now);
                if (c->switch_ms > 0)
                    take_core(c, j, now);
                break;
            }
    c->by_start = 0;
    return reschedule(c, q, now);
}

void cores_reset_stats(cores_t *c, double now)
{
    advance(c, now);
    c->busy_ms = c->two_ms = c->two_same_ms = 0;
    c->work_ms = c->cold_extra_ms = c->duty_extra_ms = 0;
    c->spell_ms[0] = c->spell_ms[1] = 0;
    c->spell_moves[0] = c->spell_moves[1] = c->spells[0] = c->spells[1] = 0;
    c->chances = c->stacked = c->protected_starts = 0;
}

void cores_close(cores_t *c, double now)
{
    advance(c, now);
}

/* Turns on: core k turns from its running job to the one that has waited
 * longest, if it still holds two or more. */
static int cores_turn(cores_t *c, ev_queue *q, double now, uint64_t b)
{
    int k = (int)(b % (uint64_t)c->cores);
    if (!c->turn_due || b / (uint64_t)c->cores != c->sgen[k] || !c->turn_due[k])
        return 0;                      /* the core has held one job or none since */
    advance(c, now);
    int r = running_on(c, k);
    if (r >= 0 && c->job[r].left <= CORES_EPS)
        return 0;                      /* it ends at this instant: its end, a tick already
                                          due now, hands the core on (turning first would
                                          void that tick and leave it waiting a turn) */
    c->turn_due[k] = 0;
    int next = longest_waiting(c, k, r);
    if (next >= 0)
        take_core(c, next, now);
    return reschedule(c, q, now);
}

int cores_event(cores_t *c, ev_queue *q, double now, uint32_t a, uint64_t b)
{
    if (a == 2)
        return cores_turn(c, q, now, b);
    return a == 1 ? cores_move(c, q, now, b) : cores_tick(c, q, now, b);
}

int cores_set_speed(cores_t *c, ev_queue *q, double now, double speed)
{
    advance(c, now);                   /* the work so far at the old speed */
    c->speed = speed > 0 ? speed : c->speed;
    return reschedule(c, q, now);
}
