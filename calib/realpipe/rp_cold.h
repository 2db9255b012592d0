/* rp_cold.h — how much slower an op runs on a core that was idle before it
 * (`vlrealpipe coldcal`, issue 7): the pipeline's op mix on one thread, a
 * sleep of a known length before each op.
 *
 * mixcal times the ops back to back, so its caches are always warm. The
 * real pipeline's threads sleep between ops, and the busier the cores the
 * shorter those sleeps: at 30 % load its threads used 5-11 % more CPU per
 * frame than the calibration gives, at 85 % none more (2026-12-03, the
 * Intel VM). A core that idles loses its caches (a deep idle state flushes
 * them; on a VM the host runs others there meanwhile), and the next op
 * pays for refilling them. On that VM one thread sleeping 10-30 ms before
 * each op took 6 % longer per P-frame decode and per batch-1 encode +
 * reduce + prefill than with no sleep, and 3 % after 1 ms.
 *
 * Here one thread owns the pipeline's decoders (one per stream) and kernels
 * and goes round the streams' frames as mixcal does: decode each stream's
 * next frame, and every keep_every-th frame encode + reduce + prefill it at
 * batch 1. Before each timed op it sleeps a gap drawn at random (a seeded
 * stream) from the list; each op's CPU time (CLOCK_THREAD_CPUTIME_ID: the
 * sleep and any preemption are not in it) is added to its gap's sums.
 * I-frames are decoded untimed (they are few and ten times a P-frame); a
 * P-frame's time is mostly its content, so decode is compared frame by
 * frame: each gap's decodes over what the same clip frames take at every
 * gap together, times the overall mean.
 * factor(g): the CPU per frame with every op after gap g, decode P and the
 * chain weighted as a frame meets them (1 chain per keep_every decodes),
 * over the same at the first gap (0): the simulator's cpu.cold. Nothing of
 * the pipeline runs; the thread is not pinned; nothing here prints or keeps
 * global state. */
#ifndef VL_RP_COLD_H
#define VL_RP_COLD_H

#include <stddef.h>
#include <stdint.h>
#include "calib/realpipe/rp_params.h"

#define RP_COLD_MAX_GAPS 16

typedef struct {
    int ngaps;
    double gap_ms[RP_COLD_MAX_GAPS];   /* increasing; the first is 0 */
    double seconds;                    /* how long it ran */
    long dec_n[RP_COLD_MAX_GAPS], chain_n[RP_COLD_MAX_GAPS];
    double dec_ms[RP_COLD_MAX_GAPS], chain_ms[RP_COLD_MAX_GAPS];     /* mean CPU ms (decode:
                                                                       frame by frame) */
    double dec_se[RP_COLD_MAX_GAPS], chain_se[RP_COLD_MAX_GAPS];     /* their standard errors */
    double factor[RP_COLD_MAX_GAPS];   /* the frame's CPU at gap g over at gap 0 */
} rp_cold_result;

/* The factors from the sums: each gap's means (n > 0 for every gap, both
 * kinds), weighted 1 decode to 1 / keep_every chains, over the first gap's.
 * 0, or -1 when a gap has no sample. */
int rp_cold_factors(rp_cold_result *r, int keep_every);

/* Run for `seconds` (after a warm-up of a few rounds) with gaps gap_ms[0..ngaps)
 * (1..RP_COLD_MAX_GAPS, the first 0, increasing), drawn with seed. 0, or -1
 * and a message. */
int rp_cold_run(const rp_params *p, const double *gap_ms, int ngaps, double seconds, uint64_t seed,
                rp_cold_result *r, char *err, size_t errlen);

#endif
