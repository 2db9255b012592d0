/* rp_overlap.h — how much slower the real pipeline's ops ran with other ops
 * running beside them (issue 7): a diagnostic of the spans, printed beside
 * the comparison, never an input of the prediction.
 *
 * An op is a decode (one frame's decode span) or an executor batch (the
 * frames of one stage sharing a start). For each op begun after the warm-up,
 * "others" is the time-average, over the op's own span, of how many other
 * ops were running in the same run, rounded to 0, 1 or 2+ (below 0.5, below
 * 1.5, the rest). The mean and median of the ops' times in each class say
 * whether an op alone takes what the calibration says (it should: nothing
 * shares its cores) and how much the others cost it. The classes blur: an
 * op that shared part of its span with two others and ran alone the rest
 * counts as "1 other", so processor sharing itself gives class 1 a ratio
 * above 1 when three threads compete for two cores; compare the ratios with
 * a model's only on the same classification. Nothing here prints. */
#ifndef VL_RP_OVERLAP_H
#define VL_RP_OVERLAP_H

#include "calib/realpipe/rp_span.h"

enum { RP_OVL_DECODE_P, RP_OVL_DECODE_I, RP_OVL_ENCODE_1, RP_OVL_ENCODE_2, RP_OVL_PREFILL_1,
       RP_OVL_OPS };
#define RP_OVL_OTHERS 3                /* 0, 1, 2 or more */

typedef struct {
    int n;
    double mean, p50;                  /* ms; 0 when n is 0 */
} rp_ovl_cell;

typedef struct {
    rp_ovl_cell cell[RP_OVL_OPS][RP_OVL_OTHERS];
} rp_overlap;

/* The classes of the ops of s (a frame is an I-frame when seq % gop == 0)
 * begun at from_ms or later. 0, or -1 out of memory. */
int rp_overlap_of(const rp_set *s, int gop, double from_ms, rp_overlap *o);
const char *rp_overlap_op_name(int op);   /* "decode_P", ..., "prefill_b1" */

#endif
