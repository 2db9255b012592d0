/* test_schedtrace.c — a scheduler trace's wake-ups (vlrealpipe schedtrace,
 * calib/realpipe/rp_sched.h) and the threads' names it tells them apart by
 * (rp_clock.h).
 *
 * Independent source: a hand-written trace of two CPUs whose every wake-up
 * was worked out by hand below (where it went, what ran there, whether the
 * other CPU was idle, the wait, a move, the slice age), and malformed
 * lines whose errors must name the file, line and column. */
#include <pthread.h>
#include <sys/prctl.h>

#include "tests/kit.h"
#include "tests/kit_files.h"
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_sched.h"

TestSuite(schedtrace, .timeout = 60);

#define SW(cpu, t, pc, pp, st, nc, np)                                                        \
    "   x-1   [00" #cpu "] d..2. " t ": sched_switch: prev_comm=" pc " prev_pid=" #pp          \
    " prev_prio=120 prev_state=" st " ==> next_comm=" nc " next_pid=" #np " next_prio=120\n"
#define WK(who, cpu, t, ev, comm, pid, target)                                                \
    "   " who "   [00" #cpu "] d..2. " t ": " ev ": comm=" comm " pid=" #pid                   \
    " prio=120 target_cpu=00" #target "\n"

/* Two CPUs: vl-exec (10) on CPU 0 from 100.0000, vl-source (30) on CPU 1.
 *  1. decode 20 (last on 0) woken by the source on 1 at .0004, put on 0
 *     beside the exec (run 0.4 ms: the 0.25-0.5 bin), CPU 1 busy with the
 *     source: its last, vl-exec, no idle; runs at .0015 on 0: 1.1 ms.
 *  2. woken at .0030 from an interrupt on idle CPU 1 (last on 0, where the
 *     exec runs since .0023), put on 1: the waker's, idle, no other idle
 *     (CPU 0 runs the exec); runs at .00304 till .0034: 0.04 ms.
 *  3. decode 21 (last on 0) woken by the exec on 0 at .0035, put on 1
 *     (idle): another, idle, no; runs at .00355: 0.05 ms.
 *  4. decode 20 (last on 1) woken by the exec on 0 at .0050, put on 0
 *     beside the exec (run 2.7 ms: the 2-4 bin) with CPU 1 idle: the
 *     waker's, vl-exec, yes; runs on 1 at .0052: 0.2 ms, moved.
 *  5. decode 20 woken at .0070 and never run: lost.
 * The vl-sample wake-up, the migrate line and the comments are not decode's. */
static const char TRACE[] =
    "# tracer: nop\n"
    "#\n"
    SW(0, "100.000000", "swapper/0", 0, "R", "vl-exec", 10)
    SW(1, "100.000100", "swapper/1", 0, "R", "vl-source", 30)
    WK("vl-source-30", 1, "100.000400", "sched_waking", "vl-decode", 20, 0)
    WK("vl-source-30", 1, "100.000402", "sched_wakeup", "vl-decode", 20, 0)
    SW(1, "100.000510", "vl-source", 30, "S", "swapper/1", 0)
    WK("<idle>-0", 1, "100.000600", "sched_waking", "vl-sample", 40, 1)
    "   x-1   [001] d..2. 100.000601: sched_migrate_task: comm=vl-sample pid=40 prio=120 "
    "orig_cpu=1 dest_cpu=1\n"
    SW(0, "100.001500", "vl-exec", 10, "S", "vl-decode", 20)
    SW(0, "100.002300", "vl-decode", 20, "S", "vl-exec", 10)
    WK("<idle>-0", 1, "100.003000", "sched_waking", "vl-decode", 20, 0)
    WK("<idle>-0", 1, "100.003001", "sched_wakeup", "vl-decode", 20, 1)
    SW(1, "100.003040", "swapper/1", 0, "R", "vl-decode", 20)
    SW(1, "100.003400", "vl-decode", 20, "S", "swapper/1", 0)
    WK("vl-exec-10", 0, "100.003500", "sched_waking", "vl-decode", 21, 0)
    WK("vl-exec-10", 0, "100.003501", "sched_wakeup", "vl-decode", 21, 1)
    SW(1, "100.003550", "swapper/1", 0, "R", "vl-decode", 21)
    SW(1, "100.004000", "vl-decode", 21, "S", "swapper/1", 0)
    WK("vl-exec-10", 0, "100.005000", "sched_waking", "vl-decode", 20, 1)
    WK("vl-exec-10", 0, "100.005001", "sched_wakeup", "vl-decode", 20, 0)
    SW(1, "100.005200", "swapper/1", 0, "R", "vl-decode", 20)
    SW(1, "100.006000", "vl-decode", 20, "S", "swapper/1", 0)
    WK("vl-exec-10", 0, "100.007000", "sched_waking", "vl-decode", 20, 1);

static char dir[256], path[300];

static void write_trace(const char *text)
{
    kit_tmpdir(dir, sizeof dir, "sched");
    snprintf(path, sizeof path, "%s/trace.txt", dir);
    kit_write_file(path, text);
}

/* The class of (went, beside, idle), or NULL. */
static const rp_sched_class *cls(const rp_sched_sum *s, int went, const char *beside, int idle)
{
    for (int k = 0; k < s->nclass; k++)
        if (s->cls[k].went == went && !strcmp(s->cls[k].beside, beside)
            && s->cls[k].idle_elsewhere == idle)
            return &s->cls[k];
    return NULL;
}

static void one(const rp_sched_sum *s, int went, const char *beside, int idle, double wait,
                long moved)
{
    const rp_sched_class *c = cls(s, went, beside, idle);
    cr_assert_not_null(c, "no class (%d, %s, %d)", went, beside, idle);
    count("its wake-ups", (uint64_t)c->n, 1);
    near("its wait p50", c->p50_ms, wait, 1e-6);
    near("its mean wait", c->mean_ms, wait, 1e-6);
    count("its moves", (uint64_t)c->moved, (uint64_t)moved);
}

Test(schedtrace, every_wakeup_as_worked_out)
{
    write_trace(TRACE);
    rp_sched_sum s;
    char err[512] = "";
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0, 0, &s, err, sizeof err), 0, "%s", err);
    count("wake-ups run", (uint64_t)s.wakeups, 4);
    count("lost", (uint64_t)s.lost, 1);
    count("CPUs", (uint64_t)s.ncpu, 2);
    count("classes", (uint64_t)s.nclass, 4);
    near("span", s.span_s, 0.007, 1e-6);
    one(&s, RP_WENT_PREV, "vl-exec", 0, 1.1, 0);
    one(&s, RP_WENT_WAKER, "idle", 0, 0.04, 0);
    one(&s, RP_WENT_ELSE, "idle", 0, 0.05, 0);
    one(&s, RP_WENT_WAKER, "vl-exec", 1, 0.2, 1);
    for (int k = 0; k < RP_SCHED_NAGE; k++)
        count("beside a run, by age", (uint64_t)s.age_n[k], k == 1 || k == 4);
    near("wait beside a 0.25-0.5 ms run", s.age_wait_ms[1], 1.1, 1e-6);
    near("wait beside a 2-4 ms run", s.age_wait_ms[4], 0.2, 1e-6);
    kit_rm_rf(dir);
}

Test(schedtrace, a_window_and_another_thread)
{
    write_trace(TRACE);
    rp_sched_sum s;
    char err[512] = "";
    /* from 3.2 ms: wake-ups 3, 4 (and 5, lost) */
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0.0032, 0, &s, err, sizeof err), 0, "%s", err);
    count("wake-ups from 3.2 ms", (uint64_t)s.wakeups, 2);
    count("lost", (uint64_t)s.lost, 1);
    one(&s, RP_WENT_ELSE, "idle", 0, 0.05, 0);
    /* before 3.2 ms: wake-ups 1 and 2 */
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0, 0.0032, &s, err, sizeof err), 0, "%s", err);
    count("wake-ups before 3.2 ms", (uint64_t)s.wakeups, 2);
    count("none lost", (uint64_t)s.lost, 0);
    one(&s, RP_WENT_PREV, "vl-exec", 0, 1.1, 0);
    /* vl-sample was woken once and never seen to run */
    cr_assert_eq(rp_sched_read(path, "vl-sample", 0, 0, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "no wake-up of a thread named vl-sample"), "%s", err);
    kit_rm_rf(dir);
}

Test(schedtrace, malformed_lines_name_file_line_column)
{
    write_trace("# tracer: nop\n"
                "   x-1   [000] d..2. 100.000000: sched_switch: prev_comm=a prev_pid=1 "
                "prev_prio=120 prev_state=S ==> next_comm=b next_prio=120\n");
    rp_sched_sum s;
    char err[512] = "", want[400];
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0, 0, &s, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2:34: sched_switch: no valid next_comm field", path);
    cr_assert_str_eq(err, want);
    kit_rm_rf(dir);
    write_trace("   x-1   [000] d..2. 100.000000: sched_waking: comm=vl-decode pid=x prio=120 "
                "target_cpu=000\n");
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0, 0, &s, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:1:34: sched_waking: no valid pid field", path);
    cr_assert_str_eq(err, want);
    kit_rm_rf(dir);
    write_trace("   x-1   [000] d..2. 1e: sched_waking: comm=vl-decode pid=3 target_cpu=000\n");
    cr_assert_eq(rp_sched_read(path, "vl-decode", 0, 0, &s, err, sizeof err), -1);
    cr_assert(strstr(err, ":1:1: sched_waking: no [CPU] and timestamp"), "%s", err);
    kit_rm_rf(dir);
    cr_assert_eq(rp_sched_read("/nonexistent/trace.txt", "vl-decode", 0, 0, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot read /nonexistent/trace.txt"), "%s", err);
    cr_assert_eq(rp_sched_read("/dev/null", "a-name-far-too-long", 0, 0, &s, err, sizeof err), -1);
}

Test(schedtrace, the_command_prints_the_tables)
{
    write_trace(TRACE);
    char out[400];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    cr_assert_eq(kit_sh("./vlrealpipe schedtrace '%s' --who vl-decode > '%s'", path, out), 0);
    char *text = kit_slurp(out);
    cr_assert(strstr(text, "4 wake-ups of vl-decode that ran"), "%s", text);
    cr_assert(strstr(text, "its last  vl-exec         no          1  25.0%     1.100"), "%s", text);
    cr_assert(strstr(text, "0.25-0.5 ms: 1, mean wait 1.100 ms"), "%s", text);
    free(text);
    cr_assert_eq(kit_sh("./vlrealpipe schedtrace '%s' --from 2 --to 1 2> /dev/null", path), 2);
    cr_assert_eq(kit_sh("./vlrealpipe schedtrace 2> /dev/null"), 2);
    kit_rm_rf(dir);
}

static void *named(void *arg)
{
    rp_quiet_thread("vl-test");
    char name[RP_SCHED_NAME] = "";
    prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0);
    snprintf(arg, RP_SCHED_NAME, "%s", name);
    return NULL;
}

Test(schedtrace, threads_carry_their_names)
{
    char got[RP_SCHED_NAME] = "";
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, named, got), 0);
    pthread_join(t, NULL);
    cr_assert_str_eq(got, "vl-test");
}
