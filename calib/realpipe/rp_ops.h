/* rp_ops.h — the real pipeline's ops, without threads or clocks: one
 * libavcodec decoder per stream over the clip's packets, and the executor's
 * kernels (the tiny vision encoder, ToMe reduce, LLM prefill and the LLM's
 * decode step, calib/cpu.c on one OpenBLAS thread) with their buffers.
 *
 * The pipeline (rp_pipe.c) runs them from its threads; the mix calibration
 * (rp_mix.c) times them on one thread in the pipeline's order. Both call the
 * same functions with the same shapes, so what the calibration times is
 * what the pipeline runs. Nothing here locks, prints or keeps global state;
 * a caller serialises the calls on one stream's decoder and on the kernels. */
#ifndef VL_RP_OPS_H
#define VL_RP_OPS_H

#include <stddef.h>
#include "calib/cpu.h"
#include "calib/decode_time.h"
#include "calib/realpipe/rp_params.h"
#include "calib/weights.h"

#define RP_NTOK 49                          /* tiny: 56 / 8 = 7 x 7 patches */
#define RP_PIX_FLOATS (3 * 56 * 56)         /* one frame on the encoder's input */
#define RP_TOK_FLOATS (RP_NTOK * 64)        /* its 49 tokens of width 64 */

typedef struct rp_stream_dec rp_stream_dec;

typedef struct {
    const rp_params *p;
    const dect_clip *clip;
    int nstreams;
    rp_stream_dec *dec;                     /* per stream */
    weights_vision wv;
    weights_llm wl;
    cpu_kv kv_pre, kv_dec;
    float *xin, *xout, *ws_v, *ws_l, *red_size;
    void *ws_t;
} rp_ops;

/* The clip p describes (640x360 H.264 GOP 30, ...), as vlcalib decode's
 * parameters, and the clip itself (dect_clip_make). */
void rp_ops_clip_params(const rp_params *p, dect_params *dp);
int rp_ops_clip(const rp_params *p, dect_clip **clip, char *err, size_t errlen);
/* The clip's size in bytes (its packets'). */
size_t rp_ops_clip_bytes(const dect_clip *clip);
/* Decoders for p->streams streams of clip and the executor's weights and
 * buffers for batches up to p->max_batch. 0, or -1 and a message (o then
 * holds nothing; rp_ops_free is still safe). */
int rp_ops_init(rp_ops *o, const rp_params *p, const dect_clip *clip, char *err, size_t errlen);
void rp_ops_free(rp_ops *o);
/* Decode stream s's frame seq (the clip's packet seq mod its length) and,
 * when pix is not NULL, sample its luma onto pix (RP_PIX_FLOATS). 1 when a
 * picture came out, 0 when not (a dropped reference: the decoder conceals). */
int rp_ops_decode(rp_ops *o, int s, long seq, float *pix);
/* The clip frame a stream's frame seq decodes (seq mod the clip's length). */
int rp_ops_clip_frame(const rp_ops *o, long seq);
/* The executor's batches of k (1..p->max_batch) frames: pix[j], tok[j], red[j]
 * point at frame j's pixels, tokens and reduced tokens (keep_tokens x 64). */
void rp_ops_encode(rp_ops *o, int k, float *const *pix, float *const *tok);
void rp_ops_reduce(rp_ops *o, int k, float *const *tok, float *const *red);
/* One sequence of k x keep_tokens new tokens at cache prefill_cache: the
 * calibration's prefill by tokens (new_tokens x batch). */
void rp_ops_prefill(rp_ops *o, int k, float *const *red);
/* One continuous-batching decode step of b (1..decode_max_batch) queries at
 * cache decode_cache. */
void rp_ops_decode_step(rp_ops *o, int b);

/* One thread's own stream and kernels with one frame's buffers: a worker of
 * the calibrations that run the pipeline's ops on several threads at once
 * (corecal, rp_cores.c; wakecal, rp_wake.c). Its ops keep a pointer to `one`,
 * so an rp_solo must not move once initialised. */
typedef struct {
    rp_params one;                          /* p with one stream: this thread's decoder */
    rp_ops ops;
    int ops_ok;
    float *pix, *tok, *red;                 /* one frame's pixels, tokens, reduced tokens */
    long seq;                               /* the stream's next frame */
} rp_solo;

/* 0, or -1 and a message (s is then still safe to rp_solo_free). */
int rp_solo_init(rp_solo *s, const rp_params *p, const dect_clip *clip, char *err, size_t errlen);
void rp_solo_free(rp_solo *s);
/* The stream's next frame (an I-frame at its GOP positions); its luma onto
 * pix when sample is not 0. */
void rp_solo_decode(rp_solo *s, int sample);
/* Encode, reduce and prefill the frame in pix at batch 1. */
void rp_solo_chain(rp_solo *s);

#endif
