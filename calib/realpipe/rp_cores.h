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
 * Nothing here prints or keeps global state. */
#ifndef VL_RP_CORES_H
#define VL_RP_CORES_H

#include <stddef.h>
#include "calib/realpipe/rp_params.h"

#define RP_CORES_MAX 16

typedef struct {
    int threads, rounds;
    int cpus;                          /* the CPUs the process may run on */
    double seconds;
    double units[RP_CORES_MAX];        /* median units per second with k busy, k = 1..threads */
    double speedup[RP_CORES_MAX];      /* median of units(k) / units(1) over the rounds, at most
                                          min(k, cpus) */
    double lo[RP_CORES_MAX], hi[RP_CORES_MAX];   /* the rounds' least and greatest ratio */
    long done[RP_CORES_MAX];           /* units each thread finished in all */
} rp_cores_result;

/* 0, or -1 and a message. threads 1..RP_CORES_MAX, rounds 1..100, seconds > 0. */
int rp_cores_run(const rp_params *p, int threads, int rounds, double seconds, rp_cores_result *r,
                 char *err, size_t errlen);

#endif
