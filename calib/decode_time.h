/* decode_time.h — real video decode timing on the CPU (issue 4, "Decode
 * stage"): a synthetic clip is encoded at run time with libavcodec (libx264
 * for h264, the native encoder for mpeg4), its packets are kept in memory,
 * then decoded with libavcodec, one thread, timing every frame with
 * CLOCK_MONOTONIC after an untimed warm-up pass.
 *
 * Each packet's time is the whole avcodec_send_packet + avcodec_receive_frame
 * cycle that consumed it (the decoder decodes the packet's picture there);
 * its type (I / P / B) is the pict_type of the decoded frame with the same
 * pts, so reordering by B-frames does not misattribute times.
 *
 * Nothing here prints, exits or keeps global state. */
#ifndef VL_CALIB_DECODE_TIME_H
#define VL_CALIB_DECODE_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "calib/harness.h"

typedef enum { DECT_I, DECT_P, DECT_B, DECT_NTYPES } dect_type;

typedef struct {
    char codec[16];     /* "h264" (libx264) or "mpeg4" (MPEG-4 part 2) */
    int width, height;  /* even, 16..8192 */
    int fps;            /* 1..240 */
    int gop;            /* keyframe interval in frames, >= 1 (1: all I) */
    int bframes;        /* consecutive B-frames allowed, 0..16 (< gop) */
    int frames;         /* frames in the clip, >= 1 */
    int passes;         /* timed decode passes over the clip (>= 1);
                           samples from all passes are pooled */
    int crf;            /* h264 quality (libx264 CRF, 0..51); mpeg4: qscale 2..31 */
    unsigned seed;      /* the synthetic content's noise */
} dect_params;

typedef struct {
    harness_result type[DECT_NTYPES];  /* per type: n, samples (ms, display
                                          order, pass after pass), p50..max;
                                          n = 0 and no samples when the type
                                          never occurs */
    int frames;                        /* decoded frames per pass */
    int other;                         /* frames of another type (S, SI, ...) per pass,
                                          not timed into any type */
    size_t bytes;                      /* encoded clip size */
    double encode_s;                   /* seconds spent encoding */
    char encoder[32];                  /* the encoder's name ("libx264") */
    /* the clip's content (dect_content; NULL when not worked out) */
    double *content;                   /* [frames]: a frame's mean time over its type's */
    double *resid[DECT_NTYPES];        /* [type[t].n]: each sample over its frame's factor */
} dect_result;

/* Defaults: h264, 1280x720, 30 fps, GOP 30, 2 B-frames, 300 frames, 1 pass,
 * CRF 23, seed 1. */
void dect_params_default(dect_params *p);

/* 0 when p is valid, else -1 and a message ("resolution 321x240: width and
 * height must be even"). */
int dect_check(const dect_params *p, char *err, size_t errlen);

/* Encode, warm up, decode p->passes times. 0 and r filled (free with
 * dect_result_free), or -1 and a message (r is left freeable). */
int dect_run(const dect_params *p, dect_result *r, char *err, size_t errlen);

void dect_result_free(dect_result *r);

/* The clip's content, for the simulator's gop.content: a busy picture
 * decodes slower whenever it is decoded, and streams that play one clip in
 * step decode it at once. frame_of[t][i] is the clip frame (0..r->frames-1)
 * of sample i of type t (NULL where the type has no samples). content[k] =
 * the mean of frame k's samples over the mean of its type's samples (1 for
 * a frame with none), and resid[t][i] = sample i over its frame's factor:
 * the draw that the simulator multiplies by the factor again, so that the
 * position's share of the spread is not counted twice. 0, or -1 (out of
 * memory, or a frame out of range: r unchanged). */
int dect_content(dect_result *r, const int *const frame_of[DECT_NTYPES]);

/* The encoded clip itself, for a pipeline that decodes it (calib/realpipe):
 * the same content, encoder and settings as dect_run. Packets are in decode
 * order (AVPacket *, read-only); codec is the AVCodecID to decode with.
 * 0, or -1 and a message (*out NULL). */
typedef struct dect_clip dect_clip;
struct AVPacket;
int dect_clip_make(const dect_params *p, dect_clip **out, char *err, size_t errlen);
int dect_clip_len(const dect_clip *k);
const struct AVPacket *dect_clip_packet(const dect_clip *k, int i);
int dect_clip_codec(const dect_clip *k);
void dect_clip_free(dect_clip *k);

/* "I", "P", "B". */
const char *dect_type_name(dect_type t);

/* Parse "WxH" (e.g. "1280x720"): 0, or -1 when malformed. */
int dect_parse_resolution(const char *s, int *w, int *h);

/* The `vlcalib decode` subcommand (calib/vlcalib_decode.c): argv[0] is
 * "decode", the options follow. Prints the per-type table to out, messages
 * to err; returns the exit status (0 done, 2 bad usage or a failure), like
 * vlcalib_main. */
/* The files vlcalib decode --out F.yaml writes (F.yaml, F.samples.csv,
 * F.I.samples, F.P.samples, F.B.samples, and with r->content F.content and
 * F.I.resid.samples, ...: dect_content): dect_check_files says whether
 * they may be written (an existing one needs force) before a run, and
 * dect_write_files writes them from r, each atomically, with note (NULL
 * or "": none) as a last comment line. 0, or -1 and a message. (In
 * vlcalib_decode.c.) */
int dect_check_files(const char *out, bool force, char *msg, size_t len);
int dect_write_files(const char *out, const dect_params *p, const dect_result *r, const char *note,
                     char *msg, size_t len);
int vlcalib_decode_main(int argc, char **argv, FILE *out, FILE *err);

#endif
