/* rp_mix.h — the mix calibration (`vlrealpipe mixcal`): the pipeline's ops
 * timed apart from the pipeline, one at a time, in the order a frame meets
 * them, so each op is timed in the cache state the other ops leave behind
 * (issue 7).
 *
 * vlcalib times every op back to back: the same op, the same buffers, warm
 * caches. In the pipeline the ops take turns on a core — a P-frame decode of
 * stream 3 after the encoder's batch, the encoder after eight streams'
 * decodes — and each starts with caches the others filled. Measured here
 * by this file's own reference, the interleaved ops run 0-17 % slower than
 * back to back, the tiny ones (reduce, LLM decode) up to 38 %
 * (calib/realpipe/README.md). The mix calibration replays that order, with none
 * of the pipeline's threads, queues or schedule: cycle after cycle,
 * for a batch size b (every size 1..max_batch in turn), decode frames of the
 * streams round robin (each stream's frames in order, so I-frames fall at
 * their GOP positions, the streams' together) until b frames are kept
 * (keep_every) — each frame on a core drawn at random from the first
 * `cores` (rp_mix.c: the decode workers take a stream's frames on whichever
 * core they run, so its decoder state moves between the cores' caches) — then encode, reduce and prefill that batch, then one LLM
 * decode step (batch 1..decode_max_batch in turn). Every op is timed with
 * CLOCK_MONOTONIC and its samples pooled by shape; the first two rounds are
 * not timed. Each round ends with the reference the mix is compared with,
 * in the same process and minute: every op back to back (twice, the second
 * timed; a decoder of its own decoding 2b frames in a row, all but the
 * first timed), so that the ratio mix / back to back is not a drift of the
 * machine between two programs.
 *
 * The output is two calibration files in vlcalib's formats, so the scenario
 * reads them as it reads vlcalib's: the tiny model's ops (encode, reduce,
 * prefill by tokens at prefill_cache, decode at decode_cache) with their
 * samples CSV, and the clip's decode_video (I and P) with its samples
 * files. Nothing here prints or keeps global state. */
#ifndef VL_RP_MIX_H
#define VL_RP_MIX_H

#include <stdbool.h>
#include <stddef.h>
#include "calib/harness.h"
#include "calib/realpipe/rp_params.h"

#define RP_MIX_MAX_BATCH 64
#define RP_MIX_MAX_CORES 64

typedef struct {
    int max_batch, decode_max_batch;
    harness_result encode[RP_MIX_MAX_BATCH];    /* [b - 1] */
    harness_result reduce[RP_MIX_MAX_BATCH];
    harness_result prefill[RP_MIX_MAX_BATCH];   /* b x keep_tokens new tokens */
    harness_result llm_decode[RP_MIX_MAX_BATCH];
    harness_result decode_i, decode_p;          /* the clip's I- and P-frames */
    int *decode_i_at, *decode_p_at;             /* each of their samples' frame in the clip */
    /* the same ops back to back, interleaved with the mix round by round */
    harness_result b2b_encode[RP_MIX_MAX_BATCH], b2b_reduce[RP_MIX_MAX_BATCH],
                   b2b_prefill[RP_MIX_MAX_BATCH], b2b_llm_decode[RP_MIX_MAX_BATCH];
    harness_result b2b_decode_i, b2b_decode_p;
    double seconds;                             /* timed wall time */
    size_t clip_bytes;                          /* the clip's encoded size */
    int decode_cores;                           /* the cores the mix's decodes were spread over */
} rp_mix_result;

/* Run rounds (>= 1) timed rounds (after 2 untimed) of the mix for p. 0, or
 * -1 and a message. */
int rp_mix_run(const rp_params *p, int rounds, rp_mix_result *r, char *err, size_t errlen);
void rp_mix_result_free(rp_mix_result *r);
/* Whether calib_out (and its samples CSV) and decode_out (and its samples
 * files) may be written: before the run. 0, or -1 and a message. */
int rp_mix_check(const char *calib_out, const char *decode_out, bool force, char *err,
                 size_t errlen);
/* Write both files (each atomically). 0, or -1 and a message. */
int rp_mix_save(const rp_params *p, const rp_mix_result *r, int rounds, const char *calib_out,
                const char *decode_out, char *err, size_t errlen);

#endif
