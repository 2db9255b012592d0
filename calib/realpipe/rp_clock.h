/* rp_clock.h — the measurement threads' clock: the monotonic time in ms, a
 * sleep to an absolute time, and a thread's set-up: its timer slack set to
 * 1 ns so that its timed waits wake on time, not 50 us late (as the
 * pipeline's threads), and its name (vl-decode, vl-exec, ...), which a
 * scheduler trace, top -H and perf show (rp_sched.h reads them).
 * Shared by the pipeline and the calibrations that run threads of their own
 * (rp_pipe.c, rp_mix.c, rp_wake.c, rp_stack.c, rp_duty.c). Header-only; no state. */
#ifndef VL_RP_CLOCK_H
#define VL_RP_CLOCK_H

#include <sys/prctl.h>
#include <time.h>

static inline double rp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* Sleep until ms on the monotonic clock (at once when it is past). */
static inline void rp_sleep_until(double ms)
{
    struct timespec ts = {(time_t)(ms / 1e3), 0};
    ts.tv_nsec = (long)((ms - 1e3 * (double)ts.tv_sec) * 1e6);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

/* name: at most 15 characters (the kernel keeps 15), or NULL to keep it. */
static inline void rp_quiet_thread(const char *name)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (name)
        prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#endif
