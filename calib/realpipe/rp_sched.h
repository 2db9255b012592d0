/* rp_sched.h — where Linux put a pipeline's woken threads and how long they
 * waited to run, read from a scheduler trace (`vlrealpipe schedtrace`).
 *
 * The trace is ftrace's text (tracefs `trace`, as calib/realpipe/
 * schedtrace.sh records it) with the events sched_waking, sched_wakeup and
 * sched_switch; the threads are told apart by their names (rp_clock.h
 * names the pipeline's and stackcal's: vl-decode, vl-exec, vl-source, ...).
 * For every wake-up of the threads named `who` it notes, at the instant the
 * wake-up began (sched_waking):
 *   - the CPU the thread last ran on (prev) and the waker's CPU (the one
 *     the event was traced on);
 *   - where it was put (sched_wakeup's target): prev, the waker's, else;
 *   - what was running there then (a thread's name, or idle), and for how
 *     long since it was last switched in (its slice's age);
 *   - whether another CPU was idle then (Linux looks for one; the waker's
 *     own CPU is not idle while the waker runs);
 * and, when the thread is switched in, how long it waited and whether it
 * ran on another CPU than the one it was put on (a move before it ran).
 *
 * On the 2-vCPU VM this showed the mechanism behind cpu.stack's share (the
 * README's Accuracy section): a decode thread whose last CPU runs the
 * executor, woken by the camera thread on the other, goes back to the
 * executor's CPU almost always, and waits there about a millisecond when
 * the executor has just been switched in.
 *
 * Reading only: it never touches tracefs or the live system. Lines of other
 * events and comment lines are skipped; a sched_* line without the fields
 * it needs is an error naming the file, line and column. */
#ifndef VL_RP_SCHED_H
#define VL_RP_SCHED_H

#include <stddef.h>
#include <stdio.h>

#define RP_SCHED_MAX_CPU 256
#define RP_SCHED_NAME 16               /* a thread name and its NUL, as the kernel keeps it */
#define RP_SCHED_MAX_BESIDE 12         /* names told apart beside a wake-up; the rest: "other" */
#define RP_SCHED_NAGE 6                /* the slice-age bins' count */

/* Where a woken thread was put: its last CPU (also when that is the
 * waker's), the waker's, or another. */
enum { RP_WENT_PREV, RP_WENT_WAKER, RP_WENT_ELSE, RP_WENT_N };

/* The classes: where it went x what ran there (the names, idle, other) x
 * whether another CPU was idle. */
#define RP_SCHED_MAX_CLASS (RP_WENT_N * (RP_SCHED_MAX_BESIDE + 2) * 2)

/* The slice-age bins' upper ends, ms (the last is open). */
extern const double rp_sched_age_ms[RP_SCHED_NAGE];

typedef struct {
    int went;                          /* RP_WENT_* */
    char beside[RP_SCHED_NAME];        /* what ran where it was put: a name, "idle", "other" */
    int idle_elsewhere;                /* another CPU was idle as it was woken */
    long n, moved;                     /* wake-ups; those that ran on another CPU */
    double p50_ms, p90_ms, mean_ms;    /* the wait from sched_waking to running */
} rp_sched_class;

typedef struct {
    char who[RP_SCHED_NAME];
    int ncpu;                          /* 1 + the highest CPU seen */
    double span_s;                     /* from the first event to the last */
    long wakeups;                      /* of `who`, woken and run */
    long lost;                         /* woken but never seen to run (the trace ended) */
    int nclass;
    rp_sched_class cls[RP_SCHED_MAX_CLASS];   /* most first */
    /* put beside a running thread (not idle), by that thread's slice age */
    long age_n[RP_SCHED_NAGE];
    double age_wait_ms[RP_SCHED_NAGE]; /* their mean wait */
} rp_sched_sum;

/* Summarise the wake-ups of the threads named `who` in the trace at path
 * whose sched_waking comes from_s seconds or more after the trace's first
 * event and before to_s (<= 0: to its end). 0, or -1 with err set (the file
 * unreadable, a malformed sched_* line, out of memory, or no such wake-up). */
int rp_sched_read(const char *path, const char *who, double from_s, double to_s, rp_sched_sum *s,
                  char *err, size_t errlen);

/* The summary as two tables: by where it went and what ran there, and by
 * the slice age of the thread it was put beside. */
void rp_sched_print(FILE *f, const rp_sched_sum *s);

#endif
