/* rp_cores.h — the cores' speed-up for the pipeline's own work
 * (`vlrealpipe corecal`, issue 7): how much work k busy threads get done
 * together, against one alone, when the work is the pipeline's ops.
 *
 * `vlcalib wakeup --ring` measures the speed-up with threads that spin on
 * the clock: it sees how much CPU time the machine hands out, but not what
 * real ops do to each other when they run at once — two decoders, or a
 * decoder beside the encoder's GEMMs, share the caches and the memory
 * bandwidth (and on a VM, maybe one physical core). On the 2-vCPU box at
 * 21:15 UTC the ring gave s(2) = 2.00 while the pipeline's P-frame decodes
 * ran 12-14 % slower on average with another op beside them (a time-average
 * that also counts spans shared in part by three: rp_overlap.h).
 *
 * Here T threads each own an rp_ops (a decoder of a stream of their own and
 * the tiny model's kernels) and repeat one unit of the pipeline's work:
 * decode the next keep_every frames of the stream (I-frames at their GOP
 * positions), then encode, reduce and prefill the kept one at batch 1. For
 * k = 1..T in turn (R rounds), k of the threads work for `seconds` and the
 * units they finish per second are counted; speedup(k) is the median of the
 * rounds' units(k) / units(1) in the same round, at most k and at most the
 * CPUs the process may run on (a faster spell of the machine during the
 * k-thread second can give more: 2.30 with 3 threads on 2 CPUs on
 * 2026-12-03, which made that load point's capacity 15 % too high). The threads are not
 * pinned: the operating system places them as it places the pipeline's.
 * Nothing of the pipeline runs: no queues, no schedule, no handoffs.
 *
 * rp_cores_pool takes the medians over the rounds of several calibrations
 * of the same machine (`vlrealpipe corepool`). A round's ratio on the shared
 * VM moves with the host, not with the cores: on 2026-12-04 (idle, 96 s of
 * alternating quarter-second windows) one and two busy threads each did
 * 385 units per s per thread, s(2) = 2.01 over the whole, 1.97-2.06 per
 * 10 s; yet one calibration's 3 rounds gave medians of 1.73 to 2.0 that
 * evening, and the validation's 50 % and 70 % points took 1.88 and 1.86,
 * 6 % below every other calibration of the day, while their runs behaved
 * as at 2.0. Pooled, a spell that moves one calibration's rounds moves the
 * median of all of them much less.
 * Nothing here prints or keeps global state. */
#ifndef VL_RP_CORES_H
#define VL_RP_CORES_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_CORES_MAX 16
#define RP_CORES_ROUNDS 100            /* rounds of one calibration, or pooled */

typedef struct {
    int threads, rounds;
    int cpus;                          /* the CPUs the process may run on */
    double seconds;
    double units[RP_CORES_MAX];        /* median units per second with k busy, k = 1..threads */
    double speedup[RP_CORES_MAX];      /* median of units(k) / units(1) over the rounds, at most
                                          min(k, cpus) */
    double lo[RP_CORES_MAX], hi[RP_CORES_MAX];   /* the rounds' least and greatest ratio */
    long done[RP_CORES_MAX];           /* units each thread finished in all */
    double round_units[RP_CORES_MAX][RP_CORES_ROUNDS];   /* units per second with k busy,
                                                            round by round, as measured */
} rp_cores_result;

/* 0, or -1 and a message. threads 1..RP_CORES_MAX, rounds 1..100, seconds > 0. */
int rp_cores_run(const rp_params *p, int threads, int rounds, double seconds, rp_cores_result *r,
                 char *err, size_t errlen);

/* units, speedup, lo and hi from r->round_units (r->threads, r->rounds,
 * r->cpus set): each k's medians over the rounds, the speed-up at most k
 * and at most the CPUs; a round whose one-thread count is 0 has no ratio. */
void rp_cores_summarise(rp_cores_result *r);

/* The rounds of in[0..n) (the same threads; at most RP_CORES_ROUNDS in all)
 * as one calibration, summarised; cpus the least of theirs, seconds their
 * rounds' mean, done summed. 0, or -1 and a message. */
int rp_cores_pool(const rp_cores_result *in, int n, rp_cores_result *out, char *err, size_t errlen);

#endif
