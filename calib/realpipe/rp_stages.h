/* rp_stages.h — where a kept frame's time goes, stage by stage, and how the
 * encoder's batches came out (issue 7): a diagnostic of span files, the real
 * pipeline's or the simulator's own (vlsim run --trace writes the same
 * format), never an input of the prediction.
 *
 * A kept frame is one whose prefill is done, released at from_ms or later.
 * Its time splits into consecutive segments that add up to its end-to-end
 * latency:
 *   release      the frame's time to its decode enqueue (how late the camera
 *                thread woke to release it; 0 in span files older than
 *                2026-12-02, whose decode enqueue is the frame's time)
 *   decode_wait  decode enqueue to decode start (the wake-up, the queue)
 *   decode       decode start to end
 *   sample       decode end to sample end (the handoff to the sampler, its work)
 *   encode_wait  sample end to encode start (the batch wait, the executor busy)
 *   encode       encode start to end (its batch's time)
 *   reduce       encode end to reduce end (queue and op)
 *   prefill      reduce end to prefill end (queue and op)
 *   frame        the frame's time to prefill end
 * and the means are over the kept frames. decode_wait_free is the part of
 * decode_wait during which fewer than `workers` decodes of the same run were
 * running: a worker was free and the frame still waited (the wake-up, the
 * scheduler), as against waiting for a busy worker (the queue). decode_gap
 * is the mean time from a decode's end, while a frame waited, to the next
 * decode's start: a worker going on with the next frame, its handoff and
 * whatever took its CPU between the two. A batch is the frames of one run
 * sharing an encode start; batches begun at from_ms or later are counted by
 * size (1 .. RP_BATCH_MAX - 1, then RP_BATCH_MAX or more).
 *
 * By place in the GOP (rp_stages_by_place): the same segments over the
 * kept frames at each place of the group of pictures (seq % gop; place 0
 * is the I-frame), in one pass, and their frame p95: where the tail comes from. With
 * the streams' I-frames released within one frame period of each other
 * (the real pipeline's phases are), the I-frame and the frames behind it
 * queue behind every stream's I-frame decode, and carry the tail.
 *
 * Two runs replaying the same stream phases (the real run 1 and the
 * simulator's replication 0) can be compared segment by segment; two with
 * different phases cannot, since the phases set which frames batch together.
 * Nothing here prints. */
#ifndef VL_RP_STAGES_H
#define VL_RP_STAGES_H

#include "calib/realpipe/rp_span.h"

enum { RP_SEG_RELEASE, RP_SEG_DECODE_WAIT, RP_SEG_DECODE, RP_SEG_SAMPLE, RP_SEG_ENCODE_WAIT, RP_SEG_ENCODE,
       RP_SEG_REDUCE, RP_SEG_PREFILL, RP_SEG_FRAME, RP_NSEGS };
#define RP_BATCH_MAX 8

typedef struct {
    long frames;                       /* kept frames */
    double mean[RP_NSEGS];             /* ms; 0 when frames is 0 */
    double frame_p95;                  /* ms: the kept frames' latency (the frame segment), p95 */
    double decode_wait_free;           /* ms, mean: of decode_wait, with a worker free */
    double decode_gap;                 /* ms, mean: a decode's end to the next start while a
                                          frame waited (a worker going on); 0 when none */
    long decode_gaps;                  /* how many such ends */
    long batches;
    double share[RP_BATCH_MAX];        /* fraction of batches of size k + 1 (the last: or more) */
} rp_stages;

/* The segments and batches of run `run` of s (-1: every run), with `workers`
 * decode workers. 0, or -1 out of memory. */
int rp_stages_of(const rp_set *s, int run, double from_ms, int workers, rp_stages *o);
/* The same by place: o[p], p in 0..gop-1, over the kept frames with
 * seq % gop == p (gop 1: every frame, as rp_stages_of); each holds the
 * whole run's batches and decode_gap. 0, or -1 out of memory. */
int rp_stages_by_place(const rp_set *s, int run, double from_ms, int workers, int gop, rp_stages *o);
const char *rp_seg_name(int seg);      /* "decode_wait", ..., "frame" */

#endif
