/* rp_scen.h — from calibration files and an experiment's parameters to
 * (1) the pipeline's capacity and (2) the simulator's scenario for it
 * (issue 7). Both use ONLY the isolated calibration (vlcalib's tiny file,
 * vlcalib decode's H.264 file, vlcalib wakeup's latency), never the
 * pipeline's own spans. Nothing here prints (the scenario goes to a FILE the
 * caller opens) or keeps state. */
#ifndef VL_RP_SCEN_H
#define VL_RP_SCEN_H

#include <stddef.h>
#include <stdio.h>
#include "calib/realpipe/rp_params.h"
#include "models/calib_read.h"

enum { RP_RES_DECODE, RP_RES_EXECUTOR, RP_RES_CORES, RP_NRES };

/* The capacity: for each resource the offered frame rate (all streams) at
 * which it is fully busy, from the calibrated mean service times:
 *   decode pool: workers / d                    (d: mean decode, I and P weighted by count)
 *   executor:    (1 - q) / (x / keep_every)     (x: encode(1) + reduce(1) + prefill(keep_tokens)
 *                                                at batch 1; q: the queries' decode share)
 *   cores:       (cores - q) / (d + x / keep_every)   (cores: the speed-up with
 *                                                decode_workers + 1 threads busy
 *                                                — the decoders and the executor —
 *                                                or the last one measured when the
 *                                                list is shorter; without one,
 *                                                min(cores, decode_workers + 1))
 * and the smallest of them. Times in ms, rates in frames/s. */
typedef struct {
    double decode_i_ms, decode_p_ms;   /* I- and P-frame means (0 when the type is absent) */
    double decode_ms, encode_ms, reduce_ms, prefill_ms, llm_decode_ms;  /* batch 1 means */
    double query_share;        /* q: executor time per second taken by queries */
    double cpu_ms;             /* the cores' work per frame: decode, the executor's batch-1
                                  share, the handoffs (queries apart) */
    double rate[RP_NRES];      /* frames/s at which the resource saturates */
    int bottleneck;            /* argmin */
    double capacity;           /* rate[bottleneck], frames/s over all streams */
} rp_capacity;

/* 0, or -1 and a message naming the file. */
int rp_capacity_of(const rp_params *p, const char *tiny_calib, const char *decode_calib,
                   rp_capacity *c, char *err, size_t errlen);
const char *rp_resource_name(int r);
/* Mean ms of op (model tiny) in calibration f (read from path, for messages)
 * at x — the batch, or the tokens of a prefill-by-tokens table — interpolated
 * as the simulator does; tokens_out, cache_len: -1 for any. 0, or -1. */
int rp_mean_at(const calf_file *f, const char *path, const char *op, int tokens_out,
               int cache_len, double x, double *ms, char *err, size_t errlen);   /* "decode workers", "executor", "cores" */

/* The scenario's cpu.stack mapping from p's stack figures, "stack: {...}"
 * with no separator after it (rp_scenario_write's, and rp_stackfit's). */
void rp_stack_yaml(FILE *f, const rp_params *p);

/* Write the scenario of p (its streams, fps, ...) simulated for sim_s
 * seconds x reps replications; calibration paths are written as given
 * (make them absolute, or relative to where the scenario will be). With
 * both I- and P-frame means in c, decode is the P-frame samples beside the
 * decode calibration (NAME.P.samples, as vlcalib decode writes them) with a
 * GOP of p->gop whose I-frame costs decode_i_ms / decode_p_ms times as much
 * — the I-frames then come at the same frame numbers as the pipeline's, in
 * every stream; otherwise the measured I/P mixture. phase_ms: NULL (each
 * stream's phase drawn at random), or nsets x p->streams phases of recorded
 * runs (rp_phases_read), replayed by the replications in turn. */
void rp_scenario_write(FILE *f, const rp_params *p, const char *tiny_calib,
                       const char *decode_calib, const rp_capacity *c, double sim_s, int reps,
                       const double *phase_ms, int nsets);

#endif
