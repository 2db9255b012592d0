/* wakeup.h — thread wake-up latency on a condition variable (issue 7): the
 * delay between one thread signalling a sleeping one and that one running,
 * measured in isolation by a ping-pong of two threads, each handing a token
 * to the other and going to sleep. It is the per-handoff delay a pipeline
 * of threads pays when an item reaches an idle worker (the simulator's
 * cpu.wake_ms). Also how late a timed sleep wakes (cpu.timer_ms) and how
 * many cores a ring of threads keeps busy (cpu.speedup). Nothing here
 * prints or keeps global state (the timer sets the calling thread's timer
 * slack and puts it back). */
#ifndef VL_CALIB_WAKEUP_H
#define VL_CALIB_WAKEUP_H

#include <stdio.h>
#include "calib/harness.h"

/* rounds handoffs (each one way) after warmup untimed ones: r filled with
 * their latencies in ms (free with harness_result_free), and *cpu_ms (may
 * be NULL) with the process's CPU time (user + system) per handoff, all
 * handoffs counted. 0, or -1 and a message. */
int wake_measure(int rounds, int warmup, harness_result *r, double *cpu_ms, char *err,
                 size_t errlen);

/* The same with `busy` threads spinning meanwhile (busy = the cores: the
 * woken thread must take a core from a running one). */
int wake_measure_busy(int rounds, int warmup, int busy, harness_result *r, char *err,
                      size_t errlen);

/* How late a timed wait wakes: `rounds` sleeps (clock_nanosleep to an
 * absolute time, timer slack 1 ns as the real pipeline's threads set it),
 * each to a deadline 0..4 ms (uniform, a fixed sequence) after the last
 * wake-up; r holds each wake-up's lateness past its deadline in ms (free with
 * harness_result_free). It is the simulator's cpu.timer_ms: a batch timeout,
 * or a camera thread sleeping until each frame's time. 0, or -1 and a message. */
int wake_measure_timer(int rounds, harness_result *r, char *err, size_t errlen);

/* How many cores a pipeline of threads really keeps busy: `threads` threads
 * in a ring, each taking a token from its queue, computing work_us of CPU
 * time (CLOCK_THREAD_CPUTIME_ID) and handing the token to the next, with
 * `tokens` tokens circulating, for `seconds`. *busy: CPU work done per
 * second of wall time (processor sharing would give min(tokens, cores)).
 * 0, or -1 and a message. */
int wake_ring_busy(int threads, int tokens, double work_us, double seconds, double *busy,
                   char *err, size_t errlen);

/* `vlcalib wakeup [--rounds N] [--out F.yaml [--force]]` (argv[0] is
 * "wakeup"); returns the exit status. */
int vlcalib_wakeup_main(int argc, char **argv, FILE *out, FILE *err);

#endif
