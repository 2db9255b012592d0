/* rp_main.c — `vlrealpipe`: the real pipeline and its comparison with the
 * simulator (issue 7; calib/realpipe/README.md).
 *
 *   vlrealpipe run       [PARAMS] --out SPANS.csv [--ops OPS.csv] [--force]
 *   vlrealpipe capacity  --calib TINY.yaml --decode-calib DEC.yaml [PARAMS]
 *   vlrealpipe scenario  --calib TINY.yaml --decode-calib DEC.yaml [PARAMS]
 *                        [--sim-duration S] [--sim-reps N] [--phases-from SPANS.csv]...
 *                        [--speed-scale X] --out S.yaml [--force]
 *   vlrealpipe mixcal    [PARAMS] [--rounds N] --out TINY.yaml --decode-out DEC.yaml
 *                        [--calib TINY.yaml --decode-calib DEC.yaml] [--force]
 *   vlrealpipe corecal   [PARAMS] [--threads T] [--rounds R] [--seconds S] [--out F.yaml]
 *   vlrealpipe corepool  CORECAL.yaml... [--out F.yaml]
 *   vlrealpipe wakecal   [PARAMS] [--seconds S] [--out F.yaml]
 *   vlrealpipe driftcal  [PARAMS] [--threads T] [--seconds S] [--window-ms W] [--out F.yaml]
 *   vlrealpipe stackcal  [PARAMS] [--seconds S] [--op-scale X] [--no-fit] [--no-run] [--out F.yaml]
 *   vlrealpipe coldcal   [PARAMS] [--seconds S] [--out F.yaml]
 *   vlrealpipe dutycal   [PARAMS] [--threads T] [--rounds R] [--seconds S] [--out F.yaml]
 *   vlrealpipe turncal   [--seconds S] [--out F.yaml]
 *   vlrealpipe stallcal  [--seconds S] [--periods P,P...|--poll-ms W] [--out F.yaml]
 *   vlrealpipe compare   --load L --sim SIM.csv [--warmup S] --out ROWS.csv
 *                        [--spread F.csv] [--cdf F.dat] [--overlap F.csv]
 *                        [--sim-spans T.csv --stages F.csv --batches F.csv [--gop-stages F.csv]]
 *                        [--force] SPANS.csv...
 *
 * PARAMS: --streams N --fps X --duration S --warmup S --seed N
 *         --decode-workers N --keep-every N --max-batch N --batch-timeout-ms X
 *         --queries-per-min X --cores N --wake-ms X | --wakeup FILE [--cores-calib FILE]
 *         [--wake-calib FILE] [--drift-calib FILE] [--stack-calib FILE [--turn-calib FILE]
 *         [--no-stack-run] [--no-protect]] [--cold-calib FILE] [--duty-calib FILE]
 *         [--stall-calib FILE]
 * Every output is written atomically (sim/out.h), never over a file without
 * --force. Exit status: 0, 2 on bad input or a failure. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/realpipe/rp_cold.h"
#include "calib/realpipe/rp_cores.h"
#include "calib/realpipe/rp_corefile.h"
#include "calib/realpipe/rp_drift.h"
#include "calib/realpipe/rp_duty.h"
#include "calib/realpipe/rp_stall.h"
#include "calib/realpipe/rp_flow.h"
#include "calib/realpipe/rp_overlap.h"
#include "calib/realpipe/rp_params.h"
#include "calib/realpipe/rp_mix.h"
#include "calib/realpipe/rp_pipe.h"
#include "calib/realpipe/rp_scen.h"
#include "calib/realpipe/rp_span.h"
#include "calib/realpipe/rp_sched.h"
#include "calib/realpipe/rp_stack.h"
#include "calib/realpipe/rp_stackfit.h"
#include "calib/realpipe/rp_stages.h"
#include "calib/realpipe/rp_stats.h"
#include "calib/realpipe/rp_turn.h"
#include "calib/realpipe/rp_wake.h"
#include "sim/out.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: vlrealpipe run      [PARAMS] --out SPANS.csv [--ops OPS.csv] [--force]\n"
        "       vlrealpipe capacity --calib TINY.yaml --decode-calib DEC.yaml [PARAMS]\n"
        "       vlrealpipe scenario --calib TINY.yaml --decode-calib DEC.yaml [PARAMS]\n"
        "                           [--sim-duration S] [--sim-reps N] [--phases-from SPANS.csv]...\n"
        "                           [--speed-scale X]\n"
        "                           --out S.yaml [--force]\n"
        "       vlrealpipe mixcal   [PARAMS] [--rounds N] --out TINY.yaml --decode-out DEC.yaml\n"
        "                           [--calib TINY.yaml --decode-calib DEC.yaml] [--force]\n"
        "       vlrealpipe corecal  [PARAMS] [--threads T] [--rounds R] [--seconds S]\n"
        "                           [--out F.yaml [--force]]\n"
        "       vlrealpipe corepool CORECAL.yaml... [--out F.yaml [--force]]\n"
        "       vlrealpipe wakecal  [PARAMS] [--seconds S] [--out F.yaml [--force]]\n"
        "       vlrealpipe driftcal [PARAMS] [--threads T] [--seconds S] [--window-ms W]\n"
        "                           [--out F.yaml [--force]]\n"
        "       vlrealpipe stackcal [PARAMS] [--seconds S] [--op-scale X] [--no-fit] [--no-run]\n"
        "                           [--out F.yaml [--force]]\n"
        "       vlrealpipe coldcal  [PARAMS] [--seconds S] [--out F.yaml [--force]]\n"
        "       vlrealpipe dutycal  [PARAMS] [--threads T] [--rounds R] [--seconds S]\n"
        "                           [--out F.yaml [--force]]\n"
        "       vlrealpipe turncal  [--seconds S] [--out F.yaml [--force]]\n"
        "       vlrealpipe stallcal [--seconds S] [--periods P,P...|--poll-ms W]\n"
        "                           [--out F.yaml [--force]]\n"
        "       vlrealpipe schedtrace TRACE.txt [--who NAME] [--from S] [--to S]\n"
        "       vlrealpipe compare  --load L --sim SIM.csv [--warmup S] --out ROWS.csv\n"
        "                           [--spread F.csv] [--cdf F.dat] [--overlap F.csv]\n"
        "                           [--sim-spans T.csv --stages F.csv --batches F.csv [--gop-stages F.csv]]\n"
        "                           [--force] SPANS.csv...\n"
        "run: the real threaded pipeline (H.264 decode, sampler, tiny encoder, ToMe, prefill,\n"
        "queries -> decode -> response); one span per frame and stage to SPANS.csv;\n"
        "--ops: every decode and executor op with its thread's CPU time and the CPU it ran on\n"
        "(rp_oplog.h), and a summary: wall over CPU time by op, two ops sharing one CPU.\n"
        "capacity: the frame rate each resource saturates at, from the calibration alone.\n"
        "scenario: the simulator's scenario of the same pipeline, from the calibration alone;\n"
        "--phases-from (repeatable): the streams' phases of these real runs (their spans'\n"
        "phases_ms line), replayed by the replications in turn, instead of random ones;\n"
        "--speed-scale X (0.1..10): the machine X times as fast as calibrated (every cpu.speed\n"
        "factor times X; without --drift-calib, one factor X).\n"
        "mixcal: the pipeline's ops timed one at a time in the order a frame meets them,\n"
        "each frame decoded on one of --cores cores at random (no queues, schedule or\n"
        "concurrency; rp_mix.h), as calibration files in vlcalib's formats: the tiny model's\n"
        "ops (--out) and the clip's decode (--decode-out); --rounds N (60) cycles over every\n"
        "batch size. It prints each op's mean over the same op back to back in the same\n"
        "rounds and, with --calib/--decode-calib (vlcalib's files), over their means.\n"
        "corecal: the cores' speed-up for the pipeline's own work (rp_cores.h): T (4) threads,\n"
        "each decoding a stream of its own and encoding, reducing, prefilling every kept frame;\n"
        "k = 1..T busy in turn, R (5) rounds of S (1) s; speedup: [1, u2/u1, ...], units done\n"
        "per second against one thread's, the simulator's cpu.speedup (--cores-calib F).\n"
        "corepool: several corecal files of one machine (the same T) as one: each k's median\n"
        "over all their rounds, so that one calibration's spell moves it less.\n"
        "wakecal: how long a woken thread waits before it runs, by how many of the pipeline's\n"
        "ops run beside it (rp_wake.h): --cores + 1 workers sleeping on one queue, the ops\n"
        "released at Poisson times at 20/40/60/80 %% of the cores for S (4) s each; a job\n"
        "handed over while a worker slept is a sample of class k (k other ops running; the\n"
        "last: --cores or more). Samples beside F (F.busyK.samples): the simulator's\n"
        "cpu.wake_busy (--wake-calib F).\n"
        "driftcal: how the machine's speed moves (rp_drift.h): T (--cores) threads repeat\n"
        "corecal's unit back to back for S (60) s; the units done per window of W (1000) ms,\n"
        "over their mean, are the simulator's cpu.speed (--drift-calib F).\n"
        "stackcal: where the scheduler puts a woken op (rp_stack.h): a release thread, the\n"
        "decode workers, a sampler and an executor hand work over as the pipeline's do, at\n"
        "20/40/60/80 %% of the cores for S (4) s each; the ops are busy loops of the real ops'\n"
        "times that read their CPU as they run. share: of the ops whose thread was woken for\n"
        "them and that start beside another with a CPU free, those on the busy CPU;\n"
        "migrate_ms: the mean wait for a move to the free CPU after such a start; pull_ms:\n"
        "the same after a CPU's last op ended beside a shared CPU. The simulator's\n"
        "cpu.stack (--stack-calib F). The stack line's pull_ms is then fitted (rp_stackfit.h):\n"
        "the simulator runs these threads and ops, and pull_ms in [0, the measured mean] is\n"
        "set so that its two-on-one-core share, averaged over the loads, is stackcal's;\n"
        "--no-fit keeps the measured mean. The share is also split into a factor by load and one\n"
        "by the busy CPU's run (how long it had run ops: EEVDF lets a young run keep its CPU),\n"
        "the line stack_run: {age_ms: [...], factor: [...], share: [...]} (rp_stack_runfit;\n"
        "the simulator's cpu.stack.run; --no-run leaves it out, and scenario --no-stack-run\n"
        "ignores it). Each load also prints the moves per ms by the spell's\n"
        "age (flat if the wait is exponential); --op-scale X (1) makes the ops X times the\n"
        "real ones, to see older ages (its figures are not the pipeline's).\n"
        "schedtrace: where Linux put the woken threads named NAME (vl-decode) and how long\n"
        "they waited to run, from a scheduler trace (ftrace's text with sched_waking,\n"
        "sched_wakeup and sched_switch; calib/realpipe/schedtrace.sh records one around any\n"
        "command, as root): by the CPU it was put on (its last, the waker's, another), what ran\n"
        "there, whether another CPU was idle, and by how long the thread it was put beside\n"
        "had run since switched in (rp_sched.h). The pipeline's and stackcal's threads are\n"
        "named vl-source, vl-decode, vl-sample, vl-exec, vl-query, vl-response. --from/--to:\n"
        "only the wake-ups S seconds after the trace's first event and before (stackcal's loads).\n"
        "coldcal: how much slower an op runs after its core idled (rp_cold.h): one thread, the\n"
        "pipeline's op mix for S (30) s, a sleep of 0, 0.1, 0.3, 1, 3, 10 or 30 ms (at random)\n"
        "before each op; factor: a frame's CPU time with every op after that gap over with\n"
        "none. The simulator's cpu.cold (--cold-calib F).\n"
        "dutycal: how much more CPU an op takes when its core has been busy less of the time\n"
        "lately (rp_duty.h): T (the cores) threads repeat corecal's unit, each sleeping after a\n"
        "unit to stay busy a duty of 1, 0.8, 0.6, 0.45, 0.3, 0.2, 0.1, S (2) s each (the first\n"
        "0.4 s not counted), R (4) rounds; factor: a unit's CPU time at a duty over at 1. The\n"
        "simulator's cpu.duty (--duty-calib F), by the cores' recent utilisation.\n"
        "turncal: how two runnable threads on one CPU take turns (rp_turn.h), on the last CPU:\n"
        "tick_ms, the median run of two busy loops there (a third of S (6) s); then a busy loop\n"
        "and a thread that sleeps 1 ms (and a random part of the tick) and spins W = 0.25..8 ms\n"
        "of its own CPU time there, wall over W by W; the share of ops that run through (never\n"
        "cut; the rest turn at ticks, each cut costing a tick) at each W, 2 - ratio; and the\n"
        "slice of the tick-turns model without through nearest those ratios, for comparison;\n"
        "then (S s more) a runner that wakes and spins 2 ms and a wakee woken 0-1 ms after it\n"
        "that spins W = 0.05..4 ms: the share of wakees held till the runner's protected slice\n"
        "ended, by W, and the runner's age then (median).\n"
        "The line turns: {tick_ms: T, slice_ms: 0, through: {work_ms: [W...], share: [P...]},\n"
        "protect: {ms: G, work_ms: [W...], share: [H...]}}.\n"
        "stallcal: how often and how long the host leaves an idle core unrun (rp_stall.h): one\n"
        "thread pinned to each CPU sleeps to times 1 ms apart for S (20) s; a wake 5 ms late or\n"
        "more is a spell of its core (its length: the lateness and half a period). The line\n"
        "stalls: {per_s: R, ms: {dist: empirical, file: F.samples}} (R: a core's spells a\n"
        "second; the lengths beside F), or stalls: none; the simulator's cpu.stalls\n"
        "(--stall-calib F). --periods: the sleeps taken in turn, a second each; the host's poll\n"
        "window (a core idle less long sees no spell) fitted between two of them, R and the\n"
        "lengths from those above it, and poll_ms: W in the line; --poll-ms W: a window\n"
        "measured so before, written into the line.\n"
        "compare: real (spans, pooled) vs simulated (vlsim run --csv) p50/p95/p99 per stage\n"
        "and end to end, and the drop rate: rows load,stage,metric,real_ms,sim_ms,rel_err;\n"
        "--overlap: the real ops' times by how many other ops ran beside them (rp_overlap.h).\n"
        "--stages/--batches: a kept frame's mean time per segment and the encoder's batch sizes,\n"
        "the first span file (run 1) against T (vlsim run --trace: replication 0, which replays\n"
        "run 1's phases): rows load,segment,real_ms,sim_ms,diff_ms and load,batch,real_pct,sim_pct\n"
        "(rp_stages.h); --gop-stages: the segments and the frame p95 by GOP position (seq %% 30,\n"
        "0 the I-frame): rows load,pos,segment,real_frames,sim_frames,real_ms,sim_ms,diff_ms.\n"
        "PARAMS: --streams N (8) --fps X (30) --duration S (12) --warmup S (2) --seed N (1)\n"
        "        --decode-workers N (2) --keep-every N (2) --max-batch N (8)\n"
        "        --batch-timeout-ms X (2) --queries-per-min X (6) --cores N (2)\n"
        "        --wake-ms X (0) | --wakeup FILE (vlcalib wakeup --out: its mean_ms, and\n"
        "        its speedup list from --ring, if any) [--cores-calib FILE (corecal --out:\n"
        "        its speedup list instead)] [--wake-calib FILE (wakecal --out: the wake-up\n"
        "        by ops running beside it, the scenario's cpu.wake_busy)]\n"
        "        [--drift-calib FILE (driftcal --out: the machine's speed per window,\n"
        "        the scenario's cpu.speed)] [--stack-calib FILE (stackcal --out: where\n"
        "        woken ops land, the scenario's cpu.stack) [--turn-calib FILE (turncal --out:\n"
        "        the jobs on one core turn at the scheduler's tick, cpu.stack.tick_ms,\n"
        "        slice_ms, through and protect)] [--no-stack-run (the stack file's share by\n"
        "        load alone, without its stack_run line)] [--no-protect (the turns without\n"
        "        the turncal file's protect part)]] [--cold-calib FILE (coldcal\n"
        "        --out: an op's slow-down after its core idled, the scenario's cpu.cold)]\n"
        "        [--duty-calib FILE (dutycal --out: an op's slow-down when the cores were idle\n"
        "        much of the time lately, the scenario's cpu.duty)]\n"
        "        [--stall-calib FILE (stallcal --out: the host's spells of not running an\n"
        "        idle core, the scenario's cpu.stalls)]\n");
}

static int num_arg(const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(x) || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* path opened for reading, or NULL and a message. */
static FILE *open_read(const char *path, char *err, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        snprintf(err, n, "cannot open %s (%s)", path, strerror(errno));
    return f;
}

/* A "speedup: [s1, s2, ...]" line into p's list: 1 when it was one. */
static int speedup_line(const char *line, rp_params *p)
{
    if (strncmp(line, "speedup: [", 10))
        return 0;
    const char *c = line + 10;
    p->nspeedup = 0;
    while (p->nspeedup < 16) {
        char *end;
        double x = strtod(c, &end);
        if (end == c || !(x > 0))
            break;
        p->speedup[p->nspeedup++] = x;
        c = end;
        while (*c == ',' || *c == ' ')
            c++;
    }
    return p->nspeedup > 0;
}

/* The speedup list of a `vlrealpipe corecal --out` file (its "speedup:" line),
 * replacing the wakeup file's. */
static int read_cores_calib(const char *path, rp_params *p, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = speedup_line(line, p);
    fclose(f);
    if (!found)
        snprintf(err, n, "%s: no \"speedup: [...]\" line (expected vlrealpipe corecal --out output)",
                 path);
    return found ? 0 : -1;
}

/* mean_ms (and the speedup list, when there is one) from a `vlcalib wakeup
 * --out` file. */
static int read_wakeup(const char *path, double *ms, rp_params *p, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        const char *m = strstr(line, "mean_ms:");
        if (!found && !strncmp(line, "wakeup:", 7) && m && sscanf(m + 8, "%lf", ms) == 1 && *ms >= 0) {
            found = 1;
            const char *cpu = strstr(line, "cpu_ms:");   /* older files have none */
            double h;
            if (cpu && sscanf(cpu + 7, "%lf", &h) == 1 && h >= 0)
                p->handoff_ms = h;
        }
        double t;
        if (!strncmp(line, "timer:", 6) && m && sscanf(m + 8, "%lf", &t) == 1 && t >= 0)
            p->timer_ms = t;               /* older files have none */
        speedup_line(line, p);
    }
    fclose(f);
    if (!found)
        snprintf(err, n, "%s: no mean_ms (expected vlcalib wakeup --out output)", path);
    return found ? 0 : -1;
}

/* The classes of a `vlrealpipe wakecal --out` file (its "wake_busy:" line),
 * and the file's absolute path, whose samples files must all be there. */
static int read_wake_calib(const char *path, rp_params *p, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[1024];
    int classes = 0, got[2] = {0, 0};
    while (fgets(line, sizeof line, f))
        for (int fam = 0; fam < 2; fam++) {
            int c;
            const char *h = strstr(line, ", held: [");
            if (sscanf(line, fam ? "timer_busy: {classes: %d" : "wake_busy: {classes: %d", &c) != 1 || !h
                || c < 1 || c > RP_WAKE_MAX_CLASSES)
                continue;
            double *out = fam ? p->timer_held : p->wake_held;
            h += 9;
            for (int k = 0; k < c; k++) {
                char *end;
                out[k] = strtod(h, &end);
                if (end == h || !(out[k] >= 0 && out[k] <= 1))
                    c = 0;
                h = end + (*end == ',' ? 2 : 0);
            }
            got[fam] = c;
            if (!fam)
                classes = c;
        }
    fclose(f);
    if (got[0] != got[1])
        classes = 0;
    if (classes < 1 || classes > RP_WAKE_MAX_CLASSES) {
        snprintf(err, n, "%s: no \"wake_busy: {classes: N, ..., held: [...]}\" and \"timer_busy: "
                 "{...}\" lines of N 1..%d classes each (expected vlrealpipe wakecal --out output)",
                 path, RP_WAKE_MAX_CLASSES);
        return -1;
    }
    char *abs = realpath(path, NULL);
    if (!abs || strlen(abs) >= sizeof p->wake_calib) {
        snprintf(err, n, "cannot resolve %s", path);
        free(abs);
        return -1;
    }
    snprintf(p->wake_calib, sizeof p->wake_calib, "%s", abs);
    free(abs);
    for (int fam = 0; fam < 2; fam++)
        for (int k = 0; k < classes; k++) {
            char sp[1100];
            if (rp_wake_samples_path(p->wake_calib, fam, k, sp, sizeof sp) || !(f = fopen(sp, "r"))) {
                snprintf(err, n, "%.900s: its %s samples of class %d are missing (%s)", path,
                         fam ? "timer" : "wake", k, strerror(errno));
                return -1;
            }
            fclose(f);
        }
    p->nwake_busy = classes;
    return 0;
}

typedef struct opts opts;
static int read_drift_calib(const char *path, opts *o, char *err, size_t n);
static int read_cold_calib(const char *path, opts *o, char *err, size_t n);
static int read_duty_calib(const char *path, opts *o, char *err, size_t n);
static int read_stall_calib(const char *path, opts *o, char *err, size_t n);

struct opts {
    rp_params p;
    const char *ops;               /* run --ops: the op log */
    const char *out, *calib, *dcalib, *sim, *spread, *cdf, *dout, *overlap;
    const char *sim_spans, *stages, *batches, *gop_stages;   /* compare: the segment diagnostic */
    const char *who;               /* schedtrace: the threads' name (vl-decode) */
    double from_s, to_s;           /* schedtrace: the wake-ups from, to s into the trace (0: end) */
    double load, sim_s;
    int sim_reps, rounds, threads;
    double seconds, window_ms;     /* driftcal's windows (0: 1000 ms) */
    double op_scale;               /* stackcal: its ops this many times the real ones' */
    double periods[RP_STALL_MAX_PERIODS];   /* stallcal --periods (none: RP_STALL_PERIOD_MS) */
    int nperiods;
    double poll_ms;                /* stallcal --poll-ms: a window measured before (-1: none) */
    char *speed;                   /* --drift-calib: its "speed: {...}" mapping (malloc'd) */
    char *cold;                    /* --cold-calib: its "cold: {...}" mapping (malloc'd) */
    char *duty;                    /* --duty-calib: its "duty: {...}" mapping (malloc'd) */
    char *stalls;                  /* --stall-calib: its "stalls: {...}" mapping (malloc'd;
                                      NULL for a file that saw none) */
    const char *cores_calib;       /* --cores-calib: a corecal file's speedup */
    bool force;
    bool no_fit;                   /* stackcal --no-fit: pull_ms as measured (rp_stackfit.h) */
    bool no_run;                   /* stackcal --no-run: no share by run; scenario --no-stack-run:
                                      the stackcal file's share by run left out */
    bool no_protect;               /* scenario --no-protect: the turncal file's protect part left out */
    int nfiles, nphases;
    char **files;
    const char **phases;       /* scenario --phases-from: span files */
};

/* The first line of `path` that is "KEY: {FIRST...}" holding `inner`: its
 * mapping (from the brace, malloc'd) into *dst; -1 and a message naming
 * `form` and the command whose --out writes it when there is none. The
 * simulator's loader checks the mapping's numbers when the scenario is read. */
static int read_flow_line(const char *path, const char *key_first, const char *inner,
                          const char *form, const char *cmd, char **dst, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0, klen = strlen(key_first);
    ssize_t len;
    const char *brace = strchr(key_first, '{');
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (!strncmp(line, key_first, klen) && (size_t)len > klen && line[len - 1] == '}'
            && strstr(line, inner)) {
            free(*dst);
            *dst = strdup(line + (brace - key_first));
            break;
        }
    }
    free(line);
    fclose(f);
    if (!*dst) {
        snprintf(err, n, "%s: no \"%s\" line (expected vlrealpipe %s --out output)", path, form, cmd);
        return -1;
    }
    return 0;
}

/* The "speed: {window_ms: W, factors: [...]}" line of a `vlrealpipe
 * driftcal --out` file: its mapping becomes the scenario's cpu.speed. */
static int read_drift_calib(const char *path, opts *o, char *err, size_t n)
{
    if (read_flow_line(path, "speed: {window_ms: ", ", factors: [", "speed: {window_ms: W, factors: [...]}",
                       "driftcal", &o->speed, err, n))
        return -1;
    o->p.speed = o->speed;
    return 0;
}

/* The "cold: {idle_ms: [...], factor: [...]}" line of a `vlrealpipe coldcal
 * --out` file: its mapping becomes the scenario's cpu.cold. */
static int read_cold_calib(const char *path, opts *o, char *err, size_t n)
{
    if (read_flow_line(path, "cold: {idle_ms: [", "], factor: [", "cold: {idle_ms: [...], factor: [...]}",
                       "coldcal", &o->cold, err, n))
        return -1;
    o->p.cold = o->cold;
    return 0;
}

/* The "duty: {util: [...], factor: [...]}" line of a `vlrealpipe dutycal
 * --out` file: its mapping becomes the scenario's cpu.duty. */
static int read_duty_calib(const char *path, opts *o, char *err, size_t n)
{
    if (read_flow_line(path, "duty: {util: [", "], factor: [", "duty: {util: [...], factor: [...]}",
                       "dutycal", &o->duty, err, n))
        return -1;
    o->p.duty = o->duty;
    return 0;
}

/* The "stalls: {per_s: R, ms: {...}}" line of a `vlrealpipe stallcal --out`
 * file: its mapping becomes the scenario's cpu.stalls; a file whose line is
 * "stalls: none" (no spell seen) leaves the scenario without. */
static int read_stall_calib(const char *path, opts *o, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[256];
    bool none = false;
    while (fgets(line, sizeof line, f))
        if (!strcmp(line, "stalls: none\n"))
            none = true;
    fclose(f);
    free(o->stalls);
    o->stalls = NULL;
    o->p.stalls = NULL;
    if (none)
        return 0;
    if (read_flow_line(path, "stalls: {per_s: ", ", ms: {dist: empirical, file: ",
                       "stalls: {per_s: R, ms: {...}}", "stallcal", &o->stalls, err, n))
        return -1;
    o->p.stalls = o->stalls;
    return 0;
}

/* A "stack_load: {util: [U...], share: [S...]}" line into p: 0 (also when
 * the line is another), or -1 when it is malformed. */
static int read_stack_load(const char *line, rp_params *p)
{
    const char *c = line;
    if (strncmp(c, "stack_load: {util: ", 19) != 0)
        return 0;
    c += 19;
    double u[8], s[8];
    int nu = rp_flow_read(&c, u, 8);
    if (nu < 1 || strncmp(c, ", share: ", 9) != 0)
        return -1;
    c += 9;
    int ns = rp_flow_read(&c, s, 8);
    if (ns != nu || *c != '}')
        return -1;
    for (int i = 0; i < nu; i++)
        if (!(u[i] >= 0 && u[i] <= 1 && s[i] >= 0 && s[i] <= 1) || (i > 0 && !(u[i] > u[i - 1])))
            return -1;
    memcpy(p->stack_load_util, u, sizeof u);
    memcpy(p->stack_load_share, s, sizeof s);
    p->nstack_load = nu;
    return 0;
}

/* A "stack_run: {age_ms: [A...], factor: [F...], share: [S...]}" line of a
 * stackcal file (rp_stack_runfit) into p: 0 (also when the line is another),
 * or -1 when it is malformed. The shares' count is checked by the caller. */
static int read_stack_run(const char *line, rp_params *p, int *nshare)
{
    const char *c = line;
    if (strncmp(c, "stack_run: {age_ms: ", 20) != 0)
        return 0;
    c += 20;
    double a[8], f[8], s[8];
    int na = rp_flow_read(&c, a, 8);
    if (na < 1 || strncmp(c, ", factor: ", 10) != 0)
        return -1;
    c += 10;
    int nf = rp_flow_read(&c, f, 8);
    if (nf != na || strncmp(c, ", share: ", 9) != 0)
        return -1;
    c += 9;
    int ns = rp_flow_read(&c, s, 8);
    if (ns < 1 || *c != '}')
        return -1;
    for (int i = 0; i < na; i++)
        if (!(a[i] >= 0 && f[i] >= 0) || (i > 0 && !(a[i] > a[i - 1])))
            return -1;
    for (int i = 0; i < ns; i++)
        if (!(s[i] >= 0 && s[i] <= 1))
            return -1;
    memcpy(p->stack_run_age_ms, a, sizeof a);
    memcpy(p->stack_run_factor, f, sizeof f);
    memcpy(p->stack_run_share, s, sizeof s);
    p->nstack_run = na;
    *nshare = ns;
    return 0;
}

/* The turns line of a `vlrealpipe turncal --out` file (rp_turn_parse):
 * the scenario's cpu.stack turns at ticks and its ops running through. */
static int read_turn_calib(const char *path, rp_params *p, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[1024];
    int found = 0;
    rp_turns t;
    while (!found && fgets(line, sizeof line, f))
        found = rp_turn_parse(line, &t) == 0;
    fclose(f);
    if (found)
        p->turns = t;
    if (!found) {
        snprintf(err, n, "%s: no \"turns: {tick_ms: T, slice_ms: S[, through: {work_ms: [...], "
                 "share: [...]}]}\" line with T > 0, S >= 0, works increasing and shares in [0, 1] "
                 "(expected vlrealpipe turncal --out output)", path);
        return -1;
    }
    return 0;
}

/* The "stack: {share: S, migrate_ms: M, pull_ms: P, switch_ms: W}" line of
 * a `vlrealpipe stackcal --out` file (W may be missing: 0, the jobs on a
 * core share it): the scenario's cpu.stack. */
static int read_stack_calib(const char *path, rp_params *p, char *err, size_t n)
{
    FILE *f = open_read(path, err, n);
    if (!f)
        return -1;
    char line[512];
    p->has_stack = 0;
    while (!p->has_stack && fgets(line, sizeof line, f)) {
        double s, m, u, w = 0;
        char end;
        int got = sscanf(line, "stack: {share: %lf, migrate_ms: %lf, pull_ms: %lf, switch_ms: %lf%c",
                         &s, &m, &u, &w, &end);
        if (got != 5) {
            w = 0;
            got = sscanf(line, "stack: {share: %lf, migrate_ms: %lf, pull_ms: %lf%c", &s, &m, &u,
                         &end) == 4 ? 5 : 0;
        }
        if (got == 5 && end == '}' && s >= 0 && s <= 1 && m >= 0 && u >= 0 && w >= 0) {
            p->stack_share = s;
            p->stack_migrate_ms = m;
            p->stack_pull_ms = u;
            p->stack_switch_ms = w;
            p->has_stack = 1;
        }
    }
    p->nstack_load = p->nstack_run = 0;   /* and the optional share by utilisation, and by run */
    int nrun_share = 0;
    while (p->has_stack && fgets(line, sizeof line, f)) {
        if (p->nstack_load == 0 && read_stack_load(line, p) != 0) {
            fclose(f);
            snprintf(err, n, "%s: a \"stack_load: {util: [U...], share: [S...]}\" line needs 1 to 8 "
                     "utilisations increasing in [0, 1] and as many shares in [0, 1]", path);
            return -1;
        }
        if (p->nstack_run == 0 && read_stack_run(line, p, &nrun_share) != 0) {
            fclose(f);
            snprintf(err, n, "%s: a \"stack_run: {age_ms: [A...], factor: [F...], share: [S...]}\" "
                     "line needs 1 to 8 ages increasing from 0, as many factors >= 0 and 1 to 8 "
                     "shares in [0, 1]", path);
            return -1;
        }
    }
    fclose(f);
    if (p->nstack_run > 0 && nrun_share != (p->nstack_load > 0 ? p->nstack_load : 1)) {
        snprintf(err, n, "%s: the stack_run line lists %d shares, and needs one per load of the "
                 "stack_load line (%d), or one without it", path, nrun_share, p->nstack_load);
        return -1;
    }
    if (!p->has_stack) {
        snprintf(err, n, "%s: no \"stack: {share: S, migrate_ms: M, pull_ms: P[, switch_ms: W]}\" "
                 "line with S in [0, 1] and M, P, W >= 0 (expected vlrealpipe stackcal --out output)",
                 path);
        return -1;
    }
    return 0;
}

/* stallcal --periods P1,P2,...: 1 to RP_STALL_MAX_PERIODS sleeps, ms, increasing. */
static int read_periods(const char *a, const char *v, opts *o, char *err, size_t n)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf) {
        snprintf(err, n, "%s: the list is too long", a);
        return -1;
    }
    o->nperiods = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        double x;
        if (o->nperiods == RP_STALL_MAX_PERIODS || num_arg(tok, 0.01, 1000, &x)
            || (o->nperiods > 0 && !(x > o->periods[o->nperiods - 1]))) {
            snprintf(err, n, "%s must list 1 to %d sleeps from 0.01 to 1000 ms, increasing, comma "
                     "separated (such as 0.1,0.2,0.3,1), not '%s'", a, RP_STALL_MAX_PERIODS, v);
            return -1;
        }
        o->periods[o->nperiods++] = x;
    }
    if (o->nperiods == 0) {
        snprintf(err, n, "%s needs at least one sleep, ms (such as 0.1,0.2,0.3,1)", a);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, opts *o, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    rp_params_default(&o->p);
    o->sim_s = 120;
    o->sim_reps = 5;
    o->rounds = 0;                 /* mixcal 60, corecal 5 */
    o->threads = 0;                /* corecal 4, driftcal --cores */
    o->seconds = 0;                /* corecal 1, wakecal 4 */
    o->op_scale = 1;
    o->poll_ms = -1;
    o->load = NAN;
    o->files = calloc((size_t)argc, sizeof *o->files);
    o->phases = calloc((size_t)argc, sizeof *o->phases);
    if (!o->files || !o->phases) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--force")) {
            o->force = true;
            continue;
        }
        if (!strcmp(a, "--no-fit")) {
            o->no_fit = true;
            continue;
        }
        if (!strcmp(a, "--no-run") || !strcmp(a, "--no-stack-run")) {
            o->no_run = true;
            continue;
        }
        if (!strcmp(a, "--no-protect")) {
            o->no_protect = true;
            continue;
        }
        if (strncmp(a, "--", 2)) {
            o->files[o->nfiles++] = argv[i];
            continue;
        }
        if (i + 1 >= argc) {
            snprintf(err, n, "%s needs a value", a);
            return -1;
        }
        const char *v = argv[++i];
        double x;
        struct { const char *name; double lo, hi; } num[] = {
            {"--streams", 1, 4096}, {"--fps", 1e-3, 1e5}, {"--duration", 1e-3, 1e6},
            {"--warmup", 0, 1e6}, {"--seed", 0, 4e9}, {"--decode-workers", 1, 56},
            {"--keep-every", 1, 1e6}, {"--max-batch", 1, 64}, {"--batch-timeout-ms", 0, 1e6},
            {"--queries-per-min", 0, 1e6}, {"--cores", 1, 4096}, {"--wake-ms", 0, 1e3},
            {"--load", 1e-6, 10}, {"--sim-duration", 1e-3, 1e7}, {"--sim-reps", 1, 1000},
            {"--rounds", 1, 1e5}, {"--threads", 1, RP_CORES_MAX}, {"--window-ms", 1, 1e6},
            {"--seconds", 1e-3, 3600}, {"--op-scale", 0.1, 100}, {"--speed-scale", 0.1, 10},
            {"--from", 0, 1e6}, {"--to", 1e-6, 1e6}};
        int k = 0, nn = (int)(sizeof num / sizeof num[0]);
        while (k < nn && strcmp(a, num[k].name))
            k++;
        if (k < nn) {
            if (num_arg(v, num[k].lo, num[k].hi, &x)) {
                snprintf(err, n, "%s must be a number from %g to %g, not '%s'", a, num[k].lo,
                         num[k].hi, v);
                return -1;
            }
            bool integer = k == 0 || k == 4 || k == 5 || k == 6 || k == 7 || k == 10 || k == 14
                           || k == 15 || k == 16;
            if (integer && x != floor(x)) {
                snprintf(err, n, "%s must be an integer, not '%s'", a, v);
                return -1;
            }
            switch (k) {
            case 0: o->p.streams = (int)x; break;
            case 1: o->p.fps = x; break;
            case 2: o->p.duration_s = x; break;
            case 3: o->p.warmup_s = x; break;
            case 4: o->p.seed = (uint64_t)x; break;
            case 5: o->p.decode_workers = (int)x; break;
            case 6: o->p.keep_every = (int)x; break;
            case 7: o->p.max_batch = (int)x; break;
            case 8: o->p.batch_timeout_ms = x; break;
            case 9: o->p.queries_per_min = x; break;
            case 10: o->p.cores = (int)x; break;
            case 11: o->p.wake_ms = x; break;
            case 12: o->load = x; break;
            case 13: o->sim_s = x; break;
            case 14: o->sim_reps = (int)x; break;
            case 15: o->rounds = (int)x; break;
            case 16: o->threads = (int)x; break;
            case 17: o->window_ms = x; break;
            case 18: o->seconds = x; break;
            case 19: o->op_scale = x; break;
            case 20: o->p.speed_scale = x; break;
            case 21: o->from_s = x; break;
            default: o->to_s = x; break;
            }
        } else if (!strcmp(a, "--wakeup")) {
            if (read_wakeup(v, &o->p.wake_ms, &o->p, err, n))
                return -1;
        } else if (!strcmp(a, "--cores-calib")) {
            o->cores_calib = v;
        } else if (!strcmp(a, "--wake-calib")) {
            if (read_wake_calib(v, &o->p, err, n))
                return -1;
        } else if (!strcmp(a, "--drift-calib")) {
            if (read_drift_calib(v, o, err, n))
                return -1;
        } else if (!strcmp(a, "--cold-calib")) {
            if (read_cold_calib(v, o, err, n))
                return -1;
        } else if (!strcmp(a, "--duty-calib")) {
            if (read_duty_calib(v, o, err, n))
                return -1;
        } else if (!strcmp(a, "--stall-calib")) {
            if (read_stall_calib(v, o, err, n))
                return -1;
        } else if (!strcmp(a, "--stack-calib")) {
            if (read_stack_calib(v, &o->p, err, n))
                return -1;
        } else if (!strcmp(a, "--turn-calib")) {
            if (read_turn_calib(v, &o->p, err, n))
                return -1;
        } else if (!strcmp(a, "--ops")) {
            o->ops = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--calib")) {
            o->calib = v;
        } else if (!strcmp(a, "--decode-calib")) {
            o->dcalib = v;
        } else if (!strcmp(a, "--decode-out")) {
            o->dout = v;
        } else if (!strcmp(a, "--sim")) {
            o->sim = v;
        } else if (!strcmp(a, "--spread")) {
            o->spread = v;
        } else if (!strcmp(a, "--cdf")) {
            o->cdf = v;
        } else if (!strcmp(a, "--overlap")) {
            o->overlap = v;
        } else if (!strcmp(a, "--sim-spans")) {
            o->sim_spans = v;
        } else if (!strcmp(a, "--periods")) {
            if (read_periods(a, v, o, err, n))
                return -1;
        } else if (!strcmp(a, "--poll-ms")) {
            if (num_arg(v, 0, 100, &o->poll_ms)) {
                snprintf(err, n, "--poll-ms must be a number from 0 to 100, not '%s'", v);
                return -1;
            }
        } else if (!strcmp(a, "--who")) {
            o->who = v;
        } else if (!strcmp(a, "--stages")) {
            o->stages = v;
        } else if (!strcmp(a, "--batches")) {
            o->batches = v;
        } else if (!strcmp(a, "--gop-stages")) {
            o->gop_stages = v;
        } else if (!strcmp(a, "--phases-from")) {
            o->phases[o->nphases++] = v;
        } else {
            snprintf(err, n, "unknown option %s", a);
            return -1;
        }
    }
    if (o->p.turns.tick_ms > 0 && !o->p.has_stack) {
        snprintf(err, n, "--turn-calib needs --stack-calib: the turns are those of jobs placed on cores");
        return -1;
    }
    if (o->no_run)                     /* scenario --no-stack-run: the share by load alone */
        o->p.nstack_run = 0;
    if (o->no_protect)                 /* scenario --no-protect: no woken op held */
        o->p.turns.nprotect = 0;
    return o->cores_calib ? read_cores_calib(o->cores_calib, &o->p, err, n) : 0;
}

static int check_out(const char *path, bool force, char *err, size_t n)
{
    return path ? out_check(path, force, err, n) : 0;
}

/* run --ops: the op log's summary (after the warm-up) to stderr, its
 * records to the file. */
static int ops_out(const opts *o, const rp_oplog *log, char *err, size_t n)
{
    int len = rp_oplog_len(log);
    rp_opsum s;
    if (rp_oplog_summarize(log->op, len, (int64_t)(o->p.warmup_s * 1e9), &s)) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(stderr, "vlrealpipe run: ops after the warm-up, wall over their thread's CPU time:");
    for (int k = 0; k < RP_OP_NKINDS; k++)
        if (s.n[k] > 0)
            fprintf(stderr, " %s %.3f (%ld, %.4f ms CPU each)", rp_op_name(k),
                    s.cpu_ms[k] > 0 ? s.wall_ms[k] / s.cpu_ms[k] : 0.0, s.n[k], s.cpu_ms[k] / s.n[k]);
    fprintf(stderr, "; exactly two ops ran %.1f %% of the time ops ran, %.1f %% of that on one CPU "
            "(%ld ops moved CPU)\n", s.busy_ms > 0 ? 100 * s.two_ms / s.busy_ms : 0.0,
            s.two_ms > 0 ? 100 * s.two_same_ms / s.two_ms : 0.0, s.moved);
    rp_opbeside b;
    if (rp_oplog_beside(log->op, len, (int64_t)(o->p.warmup_s * 1e9), &b)) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(stderr, "vlrealpipe run: ops beside an op on another CPU, CPU over alone (same clip frame,"
            " same batch):");
    for (int k = 0; k < RP_OP_NKINDS; k++)
        if (b.beside[k] > 0)
            fprintf(stderr, " %s %.3f (%ld of %ld beside, %ld alone; keys mixed %.3f)", rp_op_name(k),
                    b.ratio[k], b.paired[k], b.beside[k], b.alone[k], b.naive[k]);
    fprintf(stderr, "\n");
    if (atomic_load(&log->n) > log->cap)
        fprintf(stderr, "vlrealpipe run: the op log kept the first %d ops of %d\n", log->cap,
                atomic_load(&log->n));
    out_file f;
    if (out_open(&f, o->ops, err, n))
        return -1;
    rp_oplog_write(f.f, log->op, len);
    return out_commit(&f, err, n);
}

static int cmd_run(opts *o, char *err, size_t n)
{
    if (!o->out) {
        snprintf(err, n, "run needs --out SPANS.csv");
        return -1;
    }
    if (check_out(o->out, o->force, err, n) || check_out(o->ops, o->force, err, n))
        return -1;
    rp_record rec;
    rp_summary s;
    rp_oplog log;
    double frames = floor(o->p.duration_s * o->p.fps) * o->p.streams;
    if (o->ops && (frames > 1e8 || rp_oplog_init(&log, 3 * (int)frames + 65536))) {
        snprintf(err, n, "out of memory for the op log of %.0f frames", frames);
        return -1;
    }
    int ran = rp_pipe_run(&o->p, &rec, &s, o->ops ? &log : NULL, err, n);
    int logged = ran == 0 && o->ops ? ops_out(o, &log, err, n) : 0;
    if (o->ops)
        rp_oplog_free(&log);
    if (ran)
        return -1;
    if (logged) {
        rp_record_free(&rec);
        return -1;
    }
    double per_frame_ms = s.frames ? 1e3 * s.cpu_s / s.frames : 0.0;
    char comment[512];
    snprintf(comment, sizeof comment,
             "vlrealpipe spans: streams %d, fps %.9g, duration %g s, warmup %g s, seed %llu,\n"
             "decode workers %d, keep every %d, max batch %d, batch timeout %g ms; "
             "%d frames, %d queries, %.2f s wall; cpu %.3f s (%.4f ms per frame), system %.3f s, "
             "context switches %ld voluntary, %ld involuntary",
             o->p.streams, o->p.fps, o->p.duration_s, o->p.warmup_s,
             (unsigned long long)o->p.seed, o->p.decode_workers, o->p.keep_every, o->p.max_batch,
             o->p.batch_timeout_ms, s.frames, s.queries, s.wall_s, s.cpu_s, per_frame_ms, s.sys_s,
             s.vcsw, s.ivcsw);
    int rc = rp_record_write(&rec, s.frames, s.queries, comment, o->out, err, n);
    rp_record_free(&rec);
    if (!rc)
        fprintf(stderr, "vlrealpipe run: %d frames (%d completed, %d sampled out, %d dropped), "
                "%d queries (%d answered) in %.2f s, cpu %.2f s (%.4f ms per frame; system %.2f s) -> %s\n",
                s.frames, s.completed, s.sampled_out, s.dropped, s.queries, s.answered, s.wall_s,
                s.cpu_s, per_frame_ms, s.sys_s, o->out);
    return rc;
}

static int need_calib(const opts *o, char *err, size_t n)
{
    if (!o->calib || !o->dcalib) {
        snprintf(err, n, "needs --calib TINY.yaml and --decode-calib DEC.yaml");
        return -1;
    }
    return 0;
}

static int cmd_capacity(opts *o, char *err, size_t n)
{
    rp_capacity c;
    if (need_calib(o, err, n) || rp_capacity_of(&o->p, o->calib, o->dcalib, &c, err, n))
        return -1;
    printf("# means at batch 1 (ms): decode %.6f, encode %.6f, reduce %.6f, prefill(%d tok) %.6f,"
           " llm_decode %.6f; queries take %.4f of the executor\n", c.decode_ms, c.encode_ms,
           c.reduce_ms, o->p.keep_tokens, c.prefill_ms, c.llm_decode_ms, c.query_share);
    printf("# the cores' work per frame %.6f ms (decode, the executor's batch-1 share, the handoffs;"
           " queries apart)\n", c.cpu_ms);
    for (int r = 0; r < RP_NRES; r++)
        printf("# %-15s saturates at %10.2f frames/s (%.3f fps per stream)\n",
               rp_resource_name(r), c.rate[r], c.rate[r] / o->p.streams);
    printf("capacity_fps_per_stream %.6f bottleneck %s\n", c.capacity / o->p.streams,
           rp_resource_name(c.bottleneck));
    return 0;
}

/* The phases of every --phases-from span file into ph (one list of
 * p.streams per file), each recorded at the scenario's --fps. */
static int read_phase_files(const opts *o, double *ph, char *err, size_t n)
{
    for (int k = 0; k < o->nphases; k++) {
        double fps;
        if (rp_phases_read(o->phases[k], o->p.streams, ph + (size_t)k * (size_t)o->p.streams, &fps,
                           err, n))
            return -1;
        if (fabs(fps - o->p.fps) > 1e-6 * o->p.fps) {
            snprintf(err, n, "%s: recorded at fps %.9g, but the scenario is for --fps %.9g",
                     o->phases[k], fps, o->p.fps);
            return -1;
        }
    }
    return 0;
}

static int cmd_scenario(opts *o, char *err, size_t n)
{
    if (need_calib(o, err, n))
        return -1;
    if (!o->out) {
        snprintf(err, n, "scenario needs --out S.yaml");
        return -1;
    }
    rp_capacity c;
    if (check_out(o->out, o->force, err, n) || rp_capacity_of(&o->p, o->calib, o->dcalib, &c, err, n))
        return -1;

    /* absolute paths: the scenario resolves relative ones against its own folder */
    char *tiny = realpath(o->calib, NULL), *dec = realpath(o->dcalib, NULL);
    double *ph = o->nphases ? malloc((size_t)o->nphases * (size_t)o->p.streams * sizeof *ph) : NULL;
    int rc = -1;
    out_file f;
    if (!tiny || !dec)
        snprintf(err, n, "cannot resolve %s", !tiny ? o->calib : o->dcalib);
    else if (o->nphases && !ph)
        snprintf(err, n, "out of memory");
    else if (!read_phase_files(o, ph, err, n) && !out_open(&f, o->out, err, n)) {
        rp_scenario_write(f.f, &o->p, tiny, dec, &c, o->sim_s, o->sim_reps, ph, o->nphases);
        rc = out_commit(&f, err, n);
    }
    free(ph);
    free(tiny);
    free(dec);
    return rc;
}

/* A calibration's text on stdout, and with --out in that file, written
 * atomically (sim/out.h). */
static int print_and_save(const opts *o, const char *text, char *err, size_t n)
{
    fputs(text, stdout);
    if (!o->out)
        return 0;
    out_file f;
    if (out_open(&f, o->out, err, n))
        return -1;
    fputs(text, f.f);
    return out_commit(&f, err, n);
}

/* The calibration commands write their file into a memstream: close it (m
 * writes into *text), print and save the text, and free it (*text NULL). */
static int save_stream(const opts *o, FILE *m, char **text, char *err, size_t n)
{
    int rc = -1;
    if (fclose(m) != 0)
        snprintf(err, n, "out of memory");
    else
        rc = print_and_save(o, *text, err, n);
    free(*text);
    *text = NULL;
    return rc;
}

/* One line of mixcal's table: the mix's mean, p50, p95; the same op back to
 * back in the same rounds (ref) and mix / ref; and, when there is one, the
 * mean of the back-to-back calibration file at the same shape (iso <= 0: none)
 * and mix / iso. */
static void mix_row(const char *op, const char *shape, const harness_result *h,
                    const harness_result *ref, double iso)
{
    if (h->n == 0)
        return;
    printf("%-12s %-11s %5d %8.4f %8.4f %8.4f", op, shape, h->n, h->mean, h->p50, h->p95);
    if (ref->n > 0)
        printf(" %8.4f %6.3f", ref->mean, h->mean / ref->mean);
    else
        printf(" %8s %6s", "-", "-");
    if (iso > 0)
        printf(" %8.4f %6.3f", iso, h->mean / iso);
    printf("\n");
}

/* A corecal result as its file (rp_corefile.h), printed and saved. */
static int save_corefile(const opts *o, const rp_cores_result *r, const char *comment, char *err,
                         size_t n)
{
    char *text = rp_corefile_text(r, comment);
    if (!text) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    int rc = print_and_save(o, text, err, n);
    free(text);
    return rc;
}

static int cmd_corecal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    int rounds = o->rounds > 0 ? o->rounds : 5;
    rp_cores_result r;
    if (rp_cores_run(&o->p, o->threads > 0 ? o->threads : 4, rounds, o->seconds > 0 ? o->seconds : 1, &r, err, n))
        return -1;
    char comment[512];
    snprintf(comment, sizeof comment,
             "vlrealpipe corecal: %d threads, each a decoder of its own and the tiny model,\n"
             "# repeating: decode %d frames, encode + reduce + prefill the kept one (batch 1);\n"
             "# k = 1..%d busy in turn, %d rounds of %g s",
             r.threads, o->p.keep_every, r.threads, r.rounds, r.seconds);
    return save_corefile(o, &r, comment, err, n);
}

/* corepool: the rounds of several corecal files (the same threads) as one
 * calibration (rp_cores_pool): each k's median over all of them. */
static int cmd_corepool(opts *o, char *err, size_t n)
{
    if (o->nfiles < 1) {
        snprintf(err, n, "corepool needs one or more corecal files");
        return -1;
    }
    if (o->nfiles > RP_CORES_ROUNDS) {
        snprintf(err, n, "corepool: at most %d files", RP_CORES_ROUNDS);
        return -1;
    }
    if (check_out(o->out, o->force, err, n))
        return -1;
    rp_cores_result *in = calloc((size_t)o->nfiles, sizeof *in), r;
    if (!in) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < o->nfiles && rc == 0; i++)
        rc = rp_corefile_read(o->files[i], &in[i], err, n);
    if (rc == 0 && rp_cores_pool(in, o->nfiles, &r, err, n))
        rc = -1;
    if (rc == 0) {
        char comment[256];
        snprintf(comment, sizeof comment,
                 "vlrealpipe corepool: %d corecal files, %d rounds in all, each k's median "
                 "over all of them", o->nfiles, r.rounds);
        rc = save_corefile(o, &r, comment, err, n);
    }
    free(in);
    return rc;
}

/* The driftcal file: a comment with the series' figures, units_per_s and
 * the speed line the scenario takes (--drift-calib). */
static int cmd_driftcal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    int threads = o->threads > 0 ? o->threads : o->p.cores;
    double seconds = o->seconds > 0 ? o->seconds : 60, window = o->window_ms > 0 ? o->window_ms : 1000;
    rp_drift_result r;
    if (rp_drift_run(&o->p, threads, seconds, window, &r, err, n)) {
        rp_drift_free(&r);
        return -1;
    }
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        snprintf(err, n, "out of memory");
        rp_drift_free(&r);
        return -1;
    }
    fprintf(m, "# vlrealpipe driftcal: %d threads, each a decoder of its own and the tiny model,\n"
               "# repeating corecal's unit (decode %d frames, encode + reduce + prefill the kept one)\n"
               "# back to back for %g s; the units done per window of %g ms, all threads together,\n"
               "# over their mean: speed factors sd %.2f %%, %.3f..%.3f, autocorrelation %.2f at\n"
               "# 1 window and %.2f at 5",
            r.threads, o->p.keep_every, r.seconds, r.window_ms, 100 * r.sd, r.lo, r.hi, r.lag1,
            r.lag5);
    if (r.threads >= 2)
        fprintf(m, "; the first two threads' correlation %.2f", r.cross);
    fprintf(m, "\n# units done by each thread:");
    for (int t = 0; t < r.threads && t < RP_DRIFT_MAX_THREADS; t++)
        fprintf(m, " %ld", r.done[t]);
    fprintf(m, "\nunits_per_s: %.2f\nspeed_sd: %.4f\nspeed: {window_ms: %.9g, factors: [",
            r.units_per_s, r.sd, r.window_ms);
    for (int k = 0; k < r.windows; k++)
        fprintf(m, "%s%.4f", k ? ", " : "", r.factors[k]);
    fprintf(m, "]}\n");
    int rc = save_stream(o, m, &text, err, n);
    rp_drift_free(&r);
    return rc;
}

/* The gaps coldcal sleeps before its ops, ms: the first must be 0 (the
 * reference, mixcal's back to back). */
static const double coldcal_gaps[] = {0, 0.1, 0.3, 1, 3, 10, 30};

/* The coldcal file: each gap's ops as comments, and the cold line the
 * scenario takes (--cold-calib). */
static int cmd_coldcal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    int ng = (int)(sizeof coldcal_gaps / sizeof coldcal_gaps[0]);
    double seconds = o->seconds > 0 ? o->seconds : 30;
    rp_cold_result r;
    if (rp_cold_run(&o->p, coldcal_gaps, ng, seconds, o->p.seed, &r, err, n))
        return -1;
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(m, "# vlrealpipe coldcal: one thread, %d streams' decoders and the tiny model, the\n"
               "# pipeline's op mix (each stream's next frame decoded, every %d-th encoded + reduced +\n"
               "# prefilled at batch 1) for %.1f s; before each timed op a sleep of a gap drawn at\n"
               "# random; CPU ms per op (thread CPU time; I-frames untimed), mean (standard error, n);\n"
               "# factor: a frame's CPU with every op after the gap over with none\n"
               "# gap_ms   decode_P                 encode+reduce+prefill    factor\n",
            o->p.streams, o->p.keep_every, r.seconds);
    for (int g = 0; g < r.ngaps; g++)
        fprintf(m, "# %6g   %.4f (%.4f, %5ld)   %.4f (%.4f, %5ld)   %.4f\n", r.gap_ms[g], r.dec_ms[g],
                r.dec_se[g], r.dec_n[g], r.chain_ms[g], r.chain_se[g], r.chain_n[g], r.factor[g]);
    fprintf(m, "cold: {idle_ms: [");
    for (int g = 0; g < r.ngaps; g++)
        fprintf(m, "%s%g", g ? ", " : "", r.gap_ms[g]);
    fprintf(m, "], factor: [");
    for (int g = 0; g < r.ngaps; g++)
        fprintf(m, "%s%.4f", g ? ", " : "", r.factor[g]);
    fprintf(m, "]}\n");
    return save_stream(o, m, &text, err, n);
}

/* The duties dutycal steps through: the first 1 (mixcal's back to back). */
static const double dutycal_duties[] = {1, 0.8, 0.6, 0.45, 0.3, 0.2, 0.1};
#define DUTYCAL_SETTLE_S 0.4           /* a step's first part, still the last step's past */

/* The dutycal file: each duty's units as comments, and the duty line the
 * scenario takes (--duty-calib). */
static int cmd_dutycal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    int nd = (int)(sizeof dutycal_duties / sizeof dutycal_duties[0]);
    int threads = o->threads > 0 ? o->threads : o->p.cores, rounds = o->rounds > 0 ? o->rounds : 4;
    double step = o->seconds > 0 ? o->seconds : 2;
    if (!(step > DUTYCAL_SETTLE_S)) {
        snprintf(err, n, "dutycal: --seconds (each duty's step) must be over %g", DUTYCAL_SETTLE_S);
        return -1;
    }
    rp_duty_result r;
    if (rp_duty_run(&o->p, threads, dutycal_duties, nd, rounds, step, DUTYCAL_SETTLE_S, &r, err, n))
        return -1;
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(m, "# vlrealpipe dutycal: %d threads, each a decoder of its own and the tiny model,\n"
               "# repeating corecal's unit (decode %d frames, encode + reduce + prefill the kept one),\n"
               "# each sleeping after a unit to stay busy the duty; %g s a duty (the first %g s not\n"
               "# counted), %d rounds; CPU ms per unit (thread CPU time), mean over the rounds\n"
               "# (standard error), the units, the busy share the threads had; factor: over duty 1,\n"
               "# and the rounds' least..greatest\n"
               "# duty   cpu_ms              units   busy    factor  rounds\n",
            r.threads, o->p.keep_every, r.step_s, r.settle_s, r.rounds);
    for (int d = 0; d < r.nduty; d++)
        fprintf(m, "# %5.2f   %.4f (%.4f)   %6ld   %.3f   %.4f  %.3f..%.3f\n", r.duty[d],
                r.cpu_ms[d], r.se_ms[d], r.n[d], r.busy[d], r.factor[d], r.lo[d], r.hi[d]);
    /* the scenario's table runs up the utilisation: the duties reversed */
    fprintf(m, "duty: {util: [");
    for (int d = r.nduty - 1; d >= 0; d--)
        fprintf(m, "%s%g", d < r.nduty - 1 ? ", " : "", r.duty[d]);
    fprintf(m, "], factor: [");
    for (int d = r.nduty - 1; d >= 0; d--)
        fprintf(m, "%s%.4f", d < r.nduty - 1 ? ", " : "", r.factor[d]);
    fprintf(m, "]}\n");
    return save_stream(o, m, &text, err, n);
}

/* The stallcal file: the spells as comments, the lengths in a samples file
 * beside it (F less .yaml, plus .samples; committed first), and the stalls
 * line the scenario takes (--stall-calib), which names them. */
static int cmd_stallcal(opts *o, char *err, size_t n)
{
    char sp[1100] = "", *abs = NULL;
    if (o->out) {
        size_t len = strlen(o->out);
        if (len > 5 && !strcmp(o->out + len - 5, ".yaml"))
            len -= 5;
        if ((size_t)snprintf(sp, sizeof sp, "%.*s.samples", (int)len, o->out) >= sizeof sp) {
            snprintf(err, n, "%s: the path is too long", o->out);
            return -1;
        }
    }
    if (check_out(o->out, o->force, err, n) || (o->out && check_out(sp, o->force, err, n)))
        return -1;
    if (o->nperiods > 0 && o->poll_ms >= 0) {
        snprintf(err, n, "--periods measures the poll window; --poll-ms gives one measured "
                 "before: one or the other");
        return -1;
    }
    double seconds = o->seconds > 0 ? o->seconds : 20;
    const double one = RP_STALL_PERIOD_MS;
    rp_stall_result r;
    if (rp_stall_run(seconds, o->nperiods > 0 ? o->periods : &one, o->nperiods > 0 ? o->nperiods : 1,
                     RP_STALL_THR_MS, &r, err, n))
        return -1;
    double poll = o->poll_ms >= 0 ? o->poll_ms : r.poll_ms;
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        rp_stall_free(&r);
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(m, "# vlrealpipe stallcal: one thread pinned to each of %d CPUs, sleeping to times ", r.cpus);
    for (int i = 0; i < r.nperiods; i++)
        fprintf(m, "%s%g", i ? (i == r.nperiods - 1 ? " or " : ", ") : "", r.periods_ms[i]);
    fprintf(m, " ms\n# apart%s for %g s (%ld wakes); a wake %g ms late or more is a spell of its core\n"
               "# unrun by the host, its length the lateness and half a period\n",
            r.nperiods > 1 ? " (in turn, a second each)" : "", r.seconds, r.wakes, r.thr_ms);
    if (r.nperiods > 1) {
        fprintf(m, "# sleep_ms  spells  core_s  per_s\n");
        for (int i = 0; i < r.nperiods; i++)
            fprintf(m, "# %8g  %6ld  %6.1f  %.4f\n", r.periods_ms[i], r.period_spells[i], r.period_core_s[i],
                    r.period_core_s[i] > 0 ? (double)r.period_spells[i] / r.period_core_s[i] : 0);
        if (r.split > 0)
            fprintf(m, "# the poll window: the rate rises between %g and %g ms (likelihood ratio %.2f >= "
                       "%.2f); counted from %g ms on: poll_ms %g\n", r.periods_ms[r.split - 1],
                    r.periods_ms[r.split], r.lr, RP_STALL_LR_MIN, r.periods_ms[r.split], r.poll_ms);
        else
            fprintf(m, "# no poll window: no split of the sleeps raises the rate by a likelihood ratio "
                       "of %.2f (best %.2f); every sleep counted\n", RP_STALL_LR_MIN, r.lr);
    }
    fprintf(m, "# spells by core:");
    for (int k = 0; k < r.cpus; k++)
        fprintf(m, " %ld", r.spells[k]);
    fprintf(m, "; on two cores at once (overlapping %g ms or more): %ld\n", r.thr_ms, r.joint);
    fprintf(m, "# spells: %ld, %.4f a second a core, ms mean %.3f p50 %.3f p90 %.3f max %.3f; "
               "their time %.3f %% of the cores'\n",
            r.nspells, r.per_s, r.mean_ms, r.p50_ms, r.p90_ms, r.max_ms, 100 * r.busy_share);
    if (r.nspells == 0) {
        fprintf(m, "stalls: none\n");
    } else if (o->out) {
        char *slash = strrchr(sp, '/');
        char dir[1100];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - sp) : 1, slash ? sp : ".");
        if (!(abs = realpath(dir[0] ? dir : "/", NULL))) {
            fclose(m);
            free(text);
            rp_stall_free(&r);
            snprintf(err, n, "cannot resolve %.900s", dir);
            return -1;
        }
        fprintf(m, "stalls: {per_s: %.6g, ms: {dist: empirical, file: \"%s/%s\"}", r.per_s, abs,
                slash ? slash + 1 : sp);
        if (poll > 0)
            fprintf(m, ", poll_ms: %g", poll);
        fprintf(m, "}\n");
    } else {
        fprintf(m, "# (no --out: the spells' lengths are not kept)\n");
    }
    free(abs);
    if (fclose(m) != 0) {
        free(text);
        rp_stall_free(&r);
        snprintf(err, n, "out of memory");
        return -1;
    }
    fputs(text, stdout);
    int rc = 0;
    if (o->out) {
        out_file f[2];
        int opened = 0;
        for (; opened < 2 && !rc; opened++)
            rc = out_open(&f[opened], opened ? o->out : sp, err, n);
        if (rc)
            opened--;
        if (!rc) {
            fprintf(f[0].f, "# vlrealpipe stallcal: the spells' lengths (ms) of an idle core unrun by "
                            "the host, beside %s\n", o->out);
            for (long i = 0; i < r.nspells; i++)
                fprintf(f[0].f, "%.6f\n", r.ms[i]);
            fputs(text, f[1].f);
        }
        for (int i = 0; i < opened; i++)
            if (rc)
                out_abort(&f[i]);
            else
                rc = out_commit(&f[i], err, n);
    }
    free(text);
    rp_stall_free(&r);
    return rc;
}

/* The turncal file: the method and each op length's walls as comments, and
 * the turns line (rp_turn.h). */
static int cmd_turncal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    double seconds = o->seconds > 0 ? o->seconds : 6;
    rp_turn_result r;
    if (rp_turn_run(seconds, &r, err, n))
        return -1;
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(m, "# vlrealpipe turncal: how two runnable threads on one CPU take turns (rp_turn.h), all\n"
               "# on CPU %d, %.1f s in all.\n"
               "# tick: two busy loops pinned there for a third of the time, each reading the monotonic\n"
               "# clock back to back; a jump over %g ms while the other loop ran is a turn lost (%ld\n"
               "# jumps while it did not, interruptions, left inside the runs); the runs between turns\n"
               "# lost (%ld, each loop's first %d dropped): median %.4f ms, quartiles %.4f..%.4f; the\n"
               "# tick's period (a run and the turn lost after it, halved) %.4f ms; counting every jump\n"
               "# as a turn lost, the median run would be %.4f ms.\n"
               "# sweep: a busy loop and a thread pinned there that sleeps %g ms plus a uniform part of\n"
               "# the period (absolute; the op starts at a random phase of the tick) and spins W ms of\n"
               "# its own CPU time; W in blocks of about %g ms, the same share of the time each, a random\n"
               "# order each round, a block's first op untimed; wall: the op's from its wake (running)\n"
               "# to its end; ratio: mean wall / W (standard error); wake_ms: the mean wait from the\n"
               "# wake-up time asked for to running (not in the wall).\n"
               "# model (rp_turn_ratio): the op starts at a random phase of the tick, is cut at the\n"
               "# first tick after it ran slice_ms and every tick_ms of its running after; each cut\n"
               "# costs it tick_ms: ratio = 1 + tick E[cuts] / W = 2 - min(slice, W) / W. slice_ms\n"
               "# minimises the sum of squares over W in [0, tick_ms]. The exponential-turns model\n"
               "# (rate 1/m while the op runs, each turn m) gives 2 at every W, as does slice 0.\n"
               "# through (rp_turn_through): with slice 0, an op beside a busy thread runs through\n"
               "# (never cut) with probability p(W), else turns at ticks: ratio = 2 - p(W), so the\n"
               "# share measured at W is p = 2 - ratio, held to [0, 1]; the scenario interpolates it\n"
               "# on W (cpu.stack.through). It is what the turns line below gives the scenario.\n"
               "#   W_ms      n   wall_ms   ratio (se)         fit  slice0     exp  wake_ms  through\n",
            r.cpu, r.seconds, RP_TURN_GAP_MS, r.interruptions, r.tick_runs, RP_TURN_DROP, r.tick_ms,
            r.tick_q1, r.tick_q3, r.period_ms, r.split_ms, RP_TURN_SLEEP_MS, RP_TURN_BLOCK_MS);
    for (int k = 0; k < RP_TURN_NW; k++)
        fprintf(m, "# %6g %6ld %9.4f  %6.4f (%.4f)  %6.4f  %6.4f  %6.4f  %7.4f  %7.4f\n", r.w_ms[k],
                r.n[k], r.wall_ms[k], r.ratio[k], r.ratio_se[k],
                rp_turn_ratio(r.w_ms[k], r.slice_ms, r.tick_ms),
                rp_turn_ratio(r.w_ms[k], 0, r.tick_ms), 2.0, r.wake_ms[k], r.through[k]);
    fprintf(m, "# protect: a runner that wakes and spins %g ms of its CPU time and a wakee woken a uniform\n"
               "# 0-%g ms after it that spins W ms, both there, in blocks of one W as above; a wakee that\n"
               "# waited over %g ms from its wake-up time was held (a wake-up's own wait is shorter); its\n"
               "# wait ended when the runner had run (age at the wake-up + wait) median %.4f ms, quartiles\n"
               "# %.4f..%.4f (%ld rounds dropped: the runner ran over %g ms late). The scenario's\n"
               "# cpu.stack.protect: a job woken beside one that has had its core under ms is held, with\n"
               "# the share by its work, till that one has had ms.\n"
               "#   W_ms      n   held  share\n",
            RP_TURN_RUNNER_MS, RP_TURN_AGE_MAX_MS, RP_TURN_HELD_MS, r.protect_ms, r.protect_q1,
            r.protect_q3, r.p_late, RP_TURN_LATE_MS);
    for (int k = 0; k < RP_TURN_NP; k++)
        fprintf(m, "# %6g %6ld %6ld %6.4f\n", r.p_w_ms[k], r.p_n[k], r.p_held[k], r.p_share[k]);
    fprintf(m, "# sum of squares: %.6f at the fit (slice_ms %.4f, no op through), %.6f at slice 0,\n"
               "# %.6f exponential, %.6f through\n"
               "turns: {tick_ms: %.4f, slice_ms: 0, through: {work_ms: ",
            r.sse, r.slice_ms, r.sse0, r.sse_exp, r.sse_through, r.tick_ms);
    rp_flow_write(m, r.w_ms, RP_TURN_NW);
    fprintf(m, ", share: ");
    rp_flow_write(m, r.through, RP_TURN_NW);
    fprintf(m, "}");
    long held = 0;
    for (int k = 0; k < RP_TURN_NP; k++)
        held += r.p_held[k];
    if (held > 0) {
        fprintf(m, ", protect: {ms: %.4f, work_ms: ", r.protect_ms);
        rp_flow_write(m, r.p_w_ms, RP_TURN_NP);
        fprintf(m, ", share: ");
        rp_flow_write(m, r.p_share, RP_TURN_NP);
        fprintf(m, "}");
    }
    fprintf(m, "}\n");
    return save_stream(o, m, &text, err, n);
}

/* One stackcal summary as a comment line. */
static void stack_line(FILE *f, const char *what, const rp_stack_sum *s, const rp_stack_result *r)
{
    double alone = (double)(s->ops - s->chain_ops) * r->decode_ms + (double)s->chain_ops * r->chain_ms;
    fprintf(f, "# %s: %ld ops (CPUs busy %.3f of the time, %.3f running on average, on a CPU %.3f x their time alone, off it "
               "with no op beside them %.1f %% of their time: the machine ran them at %.3f of "
               "their speed alone); %ld "
               "woken for and started beside one op with a CPU free, %ld of "
               "them on the busy CPU (share %.3f; beside two or more, %ld and %ld); a CPU free and another shared after a woken op "
               "stacked %ld spells, %.1f ms, %ld moves (mean wait %.3f ms), after a CPU emptied %ld "
               "spells, %.1f ms, %ld moves (%.3f ms), between a going-on thread's ops %ld spells, "
               "%.1f ms, %ld moves; %ld other "
               "moves; two ops %.1f ms, %.1f %% of it on one CPU; "
               "%ld starts beside one op: %ld ran through (%.3f ms), %ld were cut after %.3f ms, "
               "%ld lost the other to another CPU, %ld without a gap (mean wait for a turn %.3f "
               "ms); spells ended by an op's end / a start on the free CPU / a move: after a "
               "start %ld / %ld / %ld, after a CPU emptied %ld / %ld / %ld; off their CPU while another "
               "op had it: the decodes %.1f %% of their time, the executor's %.1f %%\n",
            what, s->ops, s->util, s->span_ms > 0 ? s->op_ms / s->span_ms : 0,
            alone > 0 ? s->on_cpu_ms / alone : 0, s->op_ms > 0 ? 100 * s->lone_gap_ms / s->op_ms : 0,
            s->on_cpu_ms + s->lone_gap_ms > 0 ? alone / (s->on_cpu_ms + s->lone_gap_ms) : 0,
            s->chances, s->stacked, s->share, s->chances2, s->stacked2, s->spells[0], s->spell_ms[0],
            s->spell_moves[0], s->spell_wait_ms[0], s->spells[1], s->spell_ms[1], s->spell_moves[1],
            s->spell_wait_ms[1], s->spells[2], s->spell_ms[2], s->spell_moves[2], s->other_moves, s->two_ms,
            s->two_ms > 0 ? 100 * s->two_same_ms / s->two_ms : 0, s->shared_starts, s->through,
            s->through_ms, s->cut, s->slice_ms, s->moved_back, s->no_gap, s->switch_ms,
            s->spell_ended[0][0], s->spell_ended[0][1], s->spell_ended[0][2],
            s->spell_ended[1][0], s->spell_ended[1][1], s->spell_ended[1][2],
            s->kind_ms[0] > 0 ? 100 * s->kind_yield_ms[0] / s->kind_ms[0] : 0,
            s->kind_ms[1] > 0 ? 100 * s->kind_yield_ms[1] / s->kind_ms[1] : 0);
    /* the share by how long the busy CPU had been running ops */
    fprintf(f, "#   %s: share by the busy CPU's run (ms 0-0.25/0.5/1/2/4/8/more):", what);
    for (int b = 0; b < RP_STACK_NAGE; b++)
        fprintf(f, " %.3f (%ld of %ld)", s->run_chances[b] > 0 ? (double)s->run_stacked[b] / s->run_chances[b] : 0,
                s->run_stacked[b], s->run_chances[b]);
    fprintf(f, "\n");
    /* the wait for a move by the spell's age: moves per ms spent at that age */
    for (int k = 0; k < 2; k++) {
        fprintf(f, "#   %s: moves per ms by the spell's age (ms 0-0.25/0.5/1/2/4/8/more) %s:", what,
                k == 0 ? "after a start" : "after a CPU emptied");
        for (int b = 0; b < RP_STACK_NAGE; b++)
            fprintf(f, " %.3f (%ld in %.1f ms)", s->age_ms[k][b] > 0 ? s->age_moves[k][b] / s->age_ms[k][b] : 0,
                    s->age_moves[k][b], s->age_ms[k][b]);
        fprintf(f, "\n");
    }
}

/* The fit's comment lines (rp_stackfit.h): the two-on-one-core share by
 * load, measured and simulated, and which pull_ms the stack line takes. */
static void fit_lines(FILE *m, const rp_stackfit *f, const rp_stack_result *r)
{
    const struct { const char *what; const double *v; } row[] = {
        {"measured", f->real}, {"simulated, pull_ms measured", f->sim_measured},
        {"simulated, pull_ms fitted", f->sim_fit}};
    fprintf(m, "# the simulator on these threads and ops (rp_stackfit.h): two ops on one CPU, share of\n"
               "# the two-op time at");
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        fprintf(m, "%s %.0f", l ? " /" : "", 100 * r->load[l]);
    fprintf(m, " %%\n");
    for (size_t k = 0; k < sizeof row / sizeof row[0]; k++) {
        fprintf(m, "#   %-28s", row[k].what);
        for (int l = 0; l < RP_STACK_NLOADS; l++)
            if (row[k].v[l] >= 0)
                fprintf(m, " %.3f", row[k].v[l]);
            else
                fprintf(m, "     -");
        fprintf(m, "\n");
    }
    fprintf(m, "# pull_ms: %.4f measured (an exponential's mean), %.4f fitted%s (mean share %.3f, "
               "stackcal's %.3f)\n", f->measured_ms, f->pull_ms,
            f->clamped > 0 ? ": the simulator stacks no more than measured, the measured mean kept"
            : f->clamped < 0 ? ": still over the measured share with an instant pull" : "",
            f->sim_mean, f->real_mean);
}

/* The stackcal file: the figures by load as comments, and the stack line
 * the scenario takes (--stack-calib). */
static int cmd_stackcal(opts *o, char *err, size_t n)
{
    if (check_out(o->out, o->force, err, n))
        return -1;
    rp_stack_result r;
    if (rp_stack_run(&o->p, o->seconds > 0 ? o->seconds : 4, o->op_scale, &r, err, n))
        return -1;
    /* a spell kind with no move seen takes the pooled wait */
    double wait[2];
    for (int k = 0; k < 2; k++)
        wait[k] = r.all.spell_wait_ms[k] > 0 ? r.all.spell_wait_ms[k] : r.all.migrate_ms;
    /* no turn seen: the jobs on a core share it (switch_ms 0) */
    double switch_ms = r.all.switch_ms > 0 ? r.all.switch_ms : 0;
    /* the share by the CPUs' utilisation, when each step had chances and
     * the utilisations increase (else the one share above throughout) */
    int by_load = 1;
    for (int l = 0; l < RP_STACK_NLOADS; l++)
        by_load &= r.at[l].chances > 0 && (l == 0 || r.at[l].util > r.at[l - 1].util)
                   && r.at[l].util <= 1;
    rp_stackfit fit = {0};
    int how = (by_load ? RP_STACKFIT_BY_LOAD : 0) | (o->no_run ? 0 : RP_STACKFIT_BY_RUN);
    if (!o->no_fit && rp_stackfit_run(&r, how, wait[0], wait[1], switch_ms, &fit, err, n))
        return -1;
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    fprintf(m, "# vlrealpipe stackcal: %d CPUs; a release thread, %d decode workers, a sampler\n"
               "# keeping 1 in %d and an executor, handing over as the pipeline's threads do;\n"
               "# busy-loop ops of %g x the real ops' times alone (decode %.3f ms, encode + reduce +\n"
               "# prefill %.3f ms; %.0f units per ms), %g s at each load\n",
            r.cpus, r.workers, r.keep_every, r.op_scale, r.decode_ms, r.chain_ms, r.units_per_ms,
            r.seconds);
    for (int l = 0; l < RP_STACK_NLOADS; l++) {
        char what[32];
        snprintf(what, sizeof what, "%.0f %%", 100 * r.load[l]);
        stack_line(m, what, &r.at[l], &r);
    }
    stack_line(m, "all", &r.all, &r);
    if (!o->no_fit)
        fit_lines(m, &fit, &r);
    fprintf(m, "stack: {share: %.4f, migrate_ms: %.4f, pull_ms: %.4f, switch_ms: %.4f}\n",
            r.all.share, wait[0], o->no_fit ? wait[1] : fit.pull_ms, switch_ms);
    if (by_load) {
        fprintf(m, "stack_load: {util: [");
        for (int l = 0; l < RP_STACK_NLOADS; l++)
            fprintf(m, "%s%.4f", l ? ", " : "", r.at[l].util);
        fprintf(m, "], share: [");
        for (int l = 0; l < RP_STACK_NLOADS; l++)
            fprintf(m, "%s%.4f", l ? ", " : "", r.at[l].share);
        fprintf(m, "]}\n");
    }
    if (!o->no_run) {                  /* the share by load and by the busy CPU's run */
        double share[RP_STACK_NLOADS], factor[RP_STACK_NAGE], age[RP_STACK_NAGE];
        int nl = rp_stack_runfit(&r, by_load, share, factor, age);
        fprintf(m, "stack_run: {age_ms: ");
        rp_flow_write(m, age, RP_STACK_NAGE);
        fprintf(m, ", factor: ");
        rp_flow_write(m, factor, RP_STACK_NAGE);
        fprintf(m, ", share: ");
        rp_flow_write(m, share, nl);
        fprintf(m, "}\n");
    }
    return save_stream(o, m, &text, err, n);
}

/* A family's summary line, "NAME: {classes: K, n: [...], mean_ms: [...], ...}",
 * and a comment line of its means by load. */
static int family_text(char *t, size_t cap, const char *name, const rp_wake_result *r,
                       const rp_wake_classes *f)
{
    const char *keys[] = {"n", "held", "held_ms", "quick", "mean_ms", "p50_ms", "p90_ms", "p99_ms"};
    size_t len = (size_t)snprintf(t, cap, "%s: {classes: %d", name, r->classes);
    for (int m = 0; m < 8 && len < cap; m++) {
        len += (size_t)snprintf(t + len, cap - len, ", %s: [", keys[m]);
        for (int k = 0; k < r->classes && len < cap; k++) {
            double v[8] = {(double)f->all[k], f->held[k], f->held_ms[k], (double)f->n[k], f->mean[k],
                           f->p50[k], f->p90[k], f->p99[k]};
            len += (size_t)snprintf(t + len, cap - len, m == 0 || m == 3 ? "%s%.0f" : "%s%.4f",
                                    k ? ", " : "", v[m]);
        }
        if (len < cap)
            len += (size_t)snprintf(t + len, cap - len, "]");
    }
    if (len < cap)
        len += (size_t)snprintf(t + len, cap - len, "}\n# %s by load, mean ms (n):", name);
    for (int l = 0; l < RP_WAKE_NLOADS && len < cap; l++) {
        len += (size_t)snprintf(t + len, cap - len, "%s %.0f %%:", l ? ";" : "", 100 * r->load[l]);
        for (int k = 0; k < r->classes && len < cap; k++)
            len += (size_t)snprintf(t + len, cap - len, " %.3f (%ld)", f->mean_at[l][k], f->n_at[l][k]);
    }
    if (len < cap)
        len += (size_t)snprintf(t + len, cap - len, "\n");
    return (int)(len < cap ? len : cap);
}

/* The wakecal file: a summary per family and class, each class's samples in
 * a file of their own (every destination checked before the measurement;
 * the summary, which names the samples, committed last). */
static int cmd_wakecal(opts *o, char *err, size_t n)
{
    double seconds = o->seconds > 0 ? o->seconds : 4;
    int classes = o->p.cores + 1, nf = 0;
    char sp[2 * RP_WAKE_MAX_CLASSES][1100];
    if (check_out(o->out, o->force, err, n))
        return -1;
    for (int fam = 0; o->out && fam < 2; fam++)
        for (int k = 0; k < classes && k < RP_WAKE_MAX_CLASSES; k++, nf++)
            if (rp_wake_samples_path(o->out, fam, k, sp[nf], sizeof sp[nf])
                || check_out(sp[nf], o->force, err, n))
                return -1;
    rp_wake_result r;
    if (rp_wake_run(&o->p, seconds, &r, err, n))
        return -1;
    char text[8192];
    int len = snprintf(text, sizeof text,
                       "# vlrealpipe wakecal: %d workers sleeping on one queue; %ld jobs (a P-frame decode, or\n"
                       "# encode + reduce + prefill at batch 1 one time in %d; %.3f ms in mean alone) released\n"
                       "# at Poisson times at 20/40/60/80 %% of %d cores, %g s each, by a thread sleeping until\n"
                       "# each one's time. wake_busy: the wait (ms) of a job handed over while a worker slept\n"
                       "# (its wake-up alone), by the other jobs running at the handoff; timer_busy: how late\n"
                       "# the release thread woke, by the jobs running when it was due (the last class: %d or\n"
                       "# more). n waits; held: the share that lasted till the first running job's end (mean\n"
                       "# held_ms); the quick others' count, mean and quantiles, and their samples beside this\n"
                       "# file (.busyK.samples, .timerK.samples)\n",
                       r.workers, r.jobs, o->p.keep_every + 1, r.job_ms, o->p.cores, seconds,
                       r.classes - 1);
    len += family_text(text + len, sizeof text - (size_t)len, "wake_busy", &r, &r.wake);
    len += family_text(text + len, sizeof text - (size_t)len, "timer_busy", &r, &r.timer);
    snprintf(text + len, sizeof text - (size_t)len,
             "# the wake index: the geometric mean of the two class-0 quick p90s (ms), how fast a woken\n"
             "# thread runs with the cores idle (make validate's after-run probe compares it)\n"
             "wake_index_ms: %.4f\n"
             "# releases due before the previous one was handed over (the thread still late, no timed\n"
             "# wait of their own): left out of timer_busy\n"
             "timer_caught_up: %ld\n"
             "# the machine stalled: class-0 samples of the two families overlapping by %.0f ms or more\n"
             "# (the cores idle, two threads not run: the host's, not a wake-up), left out of both;\n"
             "# the longest overlap (ms)\n"
             "machine_stalls: %ld\n"
             "machine_stall_ms: %.3f\n", r.index_ms, r.timer_caught_up, RP_WAKE_STALL_MS, r.stalls, r.stall_ms);
    fputs(text, stdout);
    int rc = 0;
    if (o->out) {
        out_file f[2 * RP_WAKE_MAX_CLASSES + 1];
        int opened = 0;
        for (; opened <= nf && !rc; opened++)
            rc = out_open(&f[opened], opened < nf ? sp[opened] : o->out, err, n);
        if (rc)
            opened--;
        for (int i = 0; !rc && i < nf; i++) {
            int fam = i / r.classes, k = i % r.classes;
            const rp_wake_classes *c = fam ? &r.timer : &r.wake;
            fprintf(f[i].f, "# vlrealpipe wakecal: %s (ms) with %d other job%s running%s, "
                    "the quick ones (not held to a running job's end)\n",
                    fam ? "how late the release thread woke from a timed wait"
                        : "the wait of a job handed over to a sleeping worker",
                    k, k == 1 ? "" : "s", k == r.classes - 1 ? " or more" : "");
            for (size_t j = 0; j < c->n[k]; j++)
                fprintf(f[i].f, "%.6f\n", c->samples[k][j]);
        }
        if (!rc)
            fputs(text, f[nf].f);
        for (int i = 0; i < opened; i++)
            if (rc)
                out_abort(&f[i]);
            else
                rc = out_commit(&f[i], err, n);
    }
    rp_wake_free(&r);
    return rc;
}

static int cmd_mixcal(opts *o, char *err, size_t n)
{
    if (!o->out || !o->dout) {
        snprintf(err, n, "mixcal needs --out TINY.yaml and --decode-out DEC.yaml");
        return -1;
    }
    if ((o->calib == NULL) != (o->dcalib == NULL)) {
        snprintf(err, n, "mixcal compares with both --calib and --decode-calib, or neither");
        return -1;
    }
    if (rp_mix_check(o->out, o->dout, o->force, err, n))
        return -1;
    calf_file ft, fd;
    memset(&ft, 0, sizeof ft);
    memset(&fd, 0, sizeof fd);
    if (o->calib && (calf_read(o->calib, &ft, err, n) || calf_read(o->dcalib, &fd, err, n))) {
        calf_free(&ft);
        return -1;
    }
    rp_mix_result r;
    int rc = -1;
    if (o->rounds == 0)
        o->rounds = 60;
    if (rp_mix_run(&o->p, o->rounds, &r, err, n))
        goto done;
    if (rp_mix_save(&o->p, &r, o->rounds, o->out, o->dout, err, n)) {
        rp_mix_result_free(&r);
        goto done;
    }
    printf("# vlrealpipe mixcal: %d rounds in %.2f s, decodes spread over %d core%s; ms; ref = the same\n"
           "# op back to back in the same rounds on one core (its mean), /ref = mix mean / ref%s\n",
           o->rounds, r.seconds, r.decode_cores, r.decode_cores == 1 ? "" : "s",
           o->calib ? "; iso = the back-to-back files' mean (--calib, --decode-calib,\n"
                      "# timed by another program earlier), /iso = mix mean / iso" : "");
    printf("%-12s %-11s %5s %8s %8s %8s %8s %6s%s\n", "op", "shape", "n", "mean", "p50", "p95",
           "ref", "/ref", o->calib ? "      iso   /iso" : "");
    double iso_i = -1, iso_p = -1;
    for (int k = 0; o->calib && k < fd.nops; k++)
        for (int j = 0; !strcmp(fd.ops[k].op, "decode_video") && j < fd.ops[k].npoints; j++) {
            if (!strcmp(fd.ops[k].points[j].frame_type, "I"))
                iso_i = fd.ops[k].points[j].mean_ms;
            if (!strcmp(fd.ops[k].points[j].frame_type, "P"))
                iso_p = fd.ops[k].points[j].mean_ms;
        }
    mix_row("decode_video", "I-frame", &r.decode_i, &r.b2b_decode_i, iso_i);
    mix_row("decode_video", "P-frame", &r.decode_p, &r.b2b_decode_p, iso_p);
    char shape[64], msg[256];
    const rp_params *p = &o->p;
    for (int b = 1; b <= r.max_batch; b++) {
        double e = -1, d = -1, f = -1;
        if (o->calib && (rp_mean_at(&ft, o->calib, "encode", -1, -1, b, &e, msg, sizeof msg)
                         || rp_mean_at(&ft, o->calib, "reduce", p->keep_tokens, -1, b, &d, msg, sizeof msg)
                         || rp_mean_at(&ft, o->calib, "prefill", -1, p->prefill_cache,
                                       b * p->keep_tokens, &f, msg, sizeof msg)))
            e = d = f = -1;
        snprintf(shape, sizeof shape, "batch %d", b);
        mix_row("encode", shape, &r.encode[b - 1], &r.b2b_encode[b - 1], e);
        mix_row("reduce", shape, &r.reduce[b - 1], &r.b2b_reduce[b - 1], d);
        snprintf(shape, sizeof shape, "%d tokens", b * p->keep_tokens);
        mix_row("prefill", shape, &r.prefill[b - 1], &r.b2b_prefill[b - 1], f);
    }
    for (int b = 1; b <= r.decode_max_batch; b++) {
        double e = -1;
        if (o->calib && rp_mean_at(&ft, o->calib, "decode", -1, p->decode_cache, b, &e, msg, sizeof msg))
            e = -1;
        snprintf(shape, sizeof shape, "batch %d", b);
        mix_row("decode", shape, &r.llm_decode[b - 1], &r.b2b_llm_decode[b - 1], e);
    }
    fprintf(stderr, "vlrealpipe mixcal: wrote %s and %s (and their samples files)\n", o->out, o->dout);
    rp_mix_result_free(&r);
    rc = 0;
done:
    calf_free(&ft);
    calf_free(&fd);
    return rc;
}

static void put_row(FILE *f, double load, const char *stage, const char *metric, double real,
                    double sim, bool points)
{
    double e = points ? sim - real : rp_rel_err(real, sim);
    fprintf(f, "%.2f,%s,%s,%.6f,%.6f,%.6f\n", load, stage, metric, real, sim, e);
}

/* --gop-stages: the segments of run 1 of s against t's replication 0 at each
 * place of the GOP that kept frames reach (both runs), then the frame p95. */
static int write_gop_stages(const opts *o, const rp_set *s, const rp_set *t, double from_ms,
                            char *err, size_t n)
{
    int gop = o->p.gop, wk = o->p.decode_workers;
    rp_stages *re = calloc((size_t)gop, sizeof *re), *si = calloc((size_t)gop, sizeof *si);
    out_file f;
    int rc = -1;
    if (!re || !si || rp_stages_by_place(s, 0, from_ms, wk, gop, re)
        || rp_stages_by_place(t, 0, from_ms, wk, gop, si)) {
        snprintf(err, n, "out of memory");
        goto done;
    }
    if (out_open(&f, o->gop_stages, err, n))
        goto done;
    fprintf(f.f, "load,pos,segment,real_frames,sim_frames,real_ms,sim_ms,diff_ms\n");
    for (int pos = 0; pos < gop; pos++) {
        if (!re[pos].frames || !si[pos].frames)
            continue;
        for (int k = 0; k <= RP_NSEGS; k++) {
            double a = k < RP_NSEGS ? re[pos].mean[k] : re[pos].frame_p95;
            double b = k < RP_NSEGS ? si[pos].mean[k] : si[pos].frame_p95;
            fprintf(f.f, "%.2f,%d,%s,%ld,%ld,%.6f,%.6f,%.6f\n", o->load, pos,
                    k < RP_NSEGS ? rp_seg_name(k) : "frame_p95", re[pos].frames, si[pos].frames, a, b, b - a);
        }
    }
    rc = out_commit(&f, err, n);
done:
    free(re);
    free(si);
    return rc;
}

/* --stages and --batches: run 1 of s (the first span file) against t, the
 * simulator's trace of replication 0 (which replays run 1's phases). */
static int write_stages(const opts *o, const rp_set *s, const rp_set *t, double from_ms, char *err,
                        size_t n)
{
    rp_stages re, si;
    int wk = o->p.decode_workers;
    if (rp_stages_of(s, 0, from_ms, wk, &re) || rp_stages_of(t, 0, from_ms, wk, &si)) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    if (!re.frames || !si.frames) {
        snprintf(err, n, "--stages: no kept frame after the warm-up in %s",
                 !re.frames ? o->files[0] : o->sim_spans);
        return -1;
    }
    out_file f;
    if (o->stages) {
        if (out_open(&f, o->stages, err, n))
            return -1;
        fprintf(f.f, "load,segment,real_ms,sim_ms,diff_ms\n");
        for (int k = 0; k < RP_NSEGS; k++)
            fprintf(f.f, "%.2f,%s,%.6f,%.6f,%.6f\n", o->load, rp_seg_name(k), re.mean[k], si.mean[k],
                    si.mean[k] - re.mean[k]);
        fprintf(f.f, "%.2f,decode_wait_free,%.6f,%.6f,%.6f\n", o->load, re.decode_wait_free,
                si.decode_wait_free, si.decode_wait_free - re.decode_wait_free);
        fprintf(f.f, "%.2f,decode_gap,%.6f,%.6f,%.6f\n", o->load, re.decode_gap, si.decode_gap,
                si.decode_gap - re.decode_gap);
        if (out_commit(&f, err, n))
            return -1;
    }
    if (o->batches) {
        if (out_open(&f, o->batches, err, n))
            return -1;
        fprintf(f.f, "load,batch,real_pct,sim_pct\n");
        for (int k = 0; k < RP_BATCH_MAX; k++)
            fprintf(f.f, "%.2f,%d%s,%.3f,%.3f\n", o->load, k + 1, k + 1 == RP_BATCH_MAX ? "+" : "",
                    100 * re.share[k], 100 * si.share[k]);
        if (out_commit(&f, err, n))
            return -1;
    }
    return o->gop_stages ? write_gop_stages(o, s, t, from_ms, err, n) : 0;
}

static int cmd_schedtrace(opts *o, char *err, size_t n)
{
    if (o->nfiles != 1) {
        snprintf(err, n, "schedtrace needs one trace file (calib/realpipe/schedtrace.sh records one)");
        return -1;
    }
    if (o->to_s > 0 && !(o->to_s > o->from_s)) {
        snprintf(err, n, "--to must come after --from");
        return -1;
    }
    rp_sched_sum s;
    if (rp_sched_read(o->files[0], o->who ? o->who : "vl-decode", o->from_s, o->to_s, &s, err, n))
        return -1;
    rp_sched_print(stdout, &s);
    return 0;
}

static int cmd_compare(opts *o, char *err, size_t n)
{
    if (isnan(o->load) || !o->sim || !o->out || o->nfiles < 1) {
        snprintf(err, n, "compare needs --load L, --sim SIM.csv, --out ROWS.csv and span files");
        return -1;
    }
    if (check_out(o->out, o->force, err, n) || check_out(o->spread, o->force, err, n)
        || check_out(o->cdf, o->force, err, n) || check_out(o->overlap, o->force, err, n)
        || check_out(o->stages, o->force, err, n) || check_out(o->batches, o->force, err, n)
        || check_out(o->gop_stages, o->force, err, n))
        return -1;
    if ((o->stages || o->batches || o->gop_stages) != (o->sim_spans != NULL)) {
        snprintf(err, n, "--stages, --batches and --gop-stages go with --sim-spans T.csv (vlsim run --trace)");
        return -1;
    }
    rp_set s = {0}, t = {0};
    rp_metrics real, sim;
    double *e2e = NULL;
    size_t ne2e = 0;
    int rc = -1;
    for (int k = 0; k < o->nfiles; k++)
        if (rp_set_read(&s, o->files[k], err, n))
            goto done;
    double w = o->p.warmup_s * 1000.0 + 300.0;    /* the run starts releasing at 0.3 s */
    if (o->sim_spans && rp_set_read(&t, o->sim_spans, err, n))
        goto done;
    if (rp_sim_read(o->sim, &sim, err, n) || rp_metrics_of(&s, -1, w, &real, &e2e, &ne2e)) {
        if (!*err)
            snprintf(err, n, "out of memory");
        goto done;
    }
    out_file f;
    if (out_open(&f, o->out, err, n))
        goto done;
    fprintf(f.f, "load,stage,metric,real_ms,sim_ms,rel_err\n");
    put_row(f.f, o->load, "frame", "p50", real.frame.p50, sim.frame.p50, false);
    put_row(f.f, o->load, "frame", "p95", real.frame.p95, sim.frame.p95, false);
    put_row(f.f, o->load, "frame", "p99", real.frame.p99, sim.frame.p99, false);
    put_row(f.f, o->load, "frame", "drop_rate", 100 * real.drop_rate, 100 * sim.drop_rate, true);
    for (int st = 0; st < RP_NSTAGES; st++) {
        if (!real.stage[st].n)
            continue;
        put_row(f.f, o->load, rp_stage_name(st), "p50", real.stage[st].p50, sim.stage[st].p50, false);
        put_row(f.f, o->load, rp_stage_name(st), "p95", real.stage[st].p95, sim.stage[st].p95, false);
        put_row(f.f, o->load, rp_stage_name(st), "p99", real.stage[st].p99, sim.stage[st].p99, false);
    }
    if (out_commit(&f, err, n))
        goto done;
    if (o->overlap) {                  /* a diagnostic of the spans, not of the simulator */
        rp_overlap ov;
        if (rp_overlap_of(&s, o->p.gop, w, &ov)) {
            snprintf(err, n, "out of memory");
            goto done;
        }
        if (out_open(&f, o->overlap, err, n))
            goto done;
        fprintf(f.f, "load,op,others,n,mean_ms,p50_ms,mean_over_alone\n");
        for (int op = 0; op < RP_OVL_OPS; op++)
            for (int c = 0; c < RP_OVL_OTHERS; c++) {
                const rp_ovl_cell *cell = &ov.cell[op][c], *alone = &ov.cell[op][0];
                fprintf(f.f, "%.2f,%s,%s,%d,%.6f,%.6f,", o->load, rp_overlap_op_name(op),
                        c == 0 ? "0" : c == 1 ? "1" : "2+", cell->n, cell->mean, cell->p50);
                if (cell->n && alone->n)
                    fprintf(f.f, "%.4f\n", cell->mean / alone->mean);
                else
                    fprintf(f.f, "\n");
            }
        if (out_commit(&f, err, n))
            goto done;
    }
    if (o->sim_spans && write_stages(o, &s, &t, w, err, n))
        goto done;
    if (o->spread) {
        if (out_open(&f, o->spread, err, n))
            goto done;
        fprintf(f.f, "load,run,frames,p50,p95,p99,drop_rate_pct\n");
        for (int r = 0; r < s.runs; r++) {
            rp_metrics m;
            if (rp_metrics_of(&s, r, w, &m, NULL, NULL)) {
                out_abort(&f);
                snprintf(err, n, "out of memory");
                goto done;
            }
            fprintf(f.f, "%.2f,%d,%llu,%.6f,%.6f,%.6f,%.6f\n", o->load, r,
                    (unsigned long long)m.completed, m.frame.p50, m.frame.p95, m.frame.p99,
                    100 * m.drop_rate);
        }
        if (out_commit(&f, err, n))
            goto done;
    }
    if (o->cdf) {
        if (out_open(&f, o->cdf, err, n))
            goto done;
        fprintf(f.f, "# real end-to-end frame latency CDF, load %.2f: ms F\n", o->load);
        size_t step = ne2e > 2000 ? ne2e / 2000 : 1;
        for (size_t i = 0; i < ne2e; i += step)
            fprintf(f.f, "%.6f %.6f\n", e2e[i], (double)(i + 1) / (double)ne2e);
        if (ne2e)
            fprintf(f.f, "%.6f 1\n", e2e[ne2e - 1]);
        if (out_commit(&f, err, n))
            goto done;
    }
    printf("load %.2f: real frame p50 %.3f p95 %.3f p99 %.3f drop %.3f%% (%zu frames, %d runs) | "
           "sim p50 %.3f p95 %.3f p99 %.3f drop %.3f%%\n", o->load, real.frame.p50,
           real.frame.p95, real.frame.p99, 100 * real.drop_rate, ne2e, s.runs, sim.frame.p50,
           sim.frame.p95, sim.frame.p99, 100 * sim.drop_rate);
    rc = 0;
done:
    free(e2e);
    rp_set_free(&s);
    rp_set_free(&t);
    return rc;
}

int main(int argc, char **argv)
{
    /* OpenBLAS reads its thread count when it loads: without the variable it
     * would start a pool whose threads compete with the pipeline's own. */
    if (!getenv("OPENBLAS_NUM_THREADS")) {
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv);          /* on failure, go on: cpu_set_threads(1) */
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    opts o;
    char err[1024] = "";
    int rc;
    const char *cmd = argv[1];
    if (parse(argc, argv, &o, err, sizeof err))
        rc = -1;
    else if (!strcmp(cmd, "run"))
        rc = cmd_run(&o, err, sizeof err);
    else if (!strcmp(cmd, "capacity"))
        rc = cmd_capacity(&o, err, sizeof err);
    else if (!strcmp(cmd, "scenario"))
        rc = cmd_scenario(&o, err, sizeof err);
    else if (!strcmp(cmd, "mixcal"))
        rc = cmd_mixcal(&o, err, sizeof err);
    else if (!strcmp(cmd, "corecal"))
        rc = cmd_corecal(&o, err, sizeof err);
    else if (!strcmp(cmd, "corepool"))
        rc = cmd_corepool(&o, err, sizeof err);
    else if (!strcmp(cmd, "wakecal"))
        rc = cmd_wakecal(&o, err, sizeof err);
    else if (!strcmp(cmd, "driftcal"))
        rc = cmd_driftcal(&o, err, sizeof err);
    else if (!strcmp(cmd, "stackcal"))
        rc = cmd_stackcal(&o, err, sizeof err);
    else if (!strcmp(cmd, "coldcal"))
        rc = cmd_coldcal(&o, err, sizeof err);
    else if (!strcmp(cmd, "turncal"))
        rc = cmd_turncal(&o, err, sizeof err);
    else if (!strcmp(cmd, "dutycal"))
        rc = cmd_dutycal(&o, err, sizeof err);
    else if (!strcmp(cmd, "stallcal"))
        rc = cmd_stallcal(&o, err, sizeof err);
    else if (!strcmp(cmd, "compare"))
        rc = cmd_compare(&o, err, sizeof err);
    else if (!strcmp(cmd, "schedtrace"))
        rc = cmd_schedtrace(&o, err, sizeof err);
    else {
        snprintf(err, sizeof err, "unknown command '%s'", cmd);
        rc = -1;
    }
    free(o.files);
    free(o.phases);
    free(o.speed);
    free(o.cold);
    free(o.duty);
    free(o.stalls);
    if (rc) {
        fprintf(stderr, "vlrealpipe %s: %s (see vlrealpipe --help)\n", cmd, err);
        return 2;
    }
    return 0;
}
