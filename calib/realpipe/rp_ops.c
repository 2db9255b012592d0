/* rp_ops.c — the real pipeline's ops. See rp_ops.h. It must never lock,
 * sleep or read a clock: timing is the caller's. */
#include "calib/realpipe/rp_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "calib/presets.h"

struct rp_stream_dec {
    AVCodecContext *ctx;
    AVFrame *frame;
};

void rp_ops_clip_params(const rp_params *p, dect_params *dp)
{
    dect_params_default(dp);
    dp->width = p->width;
    dp->height = p->height;
    dp->gop = p->gop;
    dp->bframes = 0;
    dp->frames = p->clip_frames;
    dp->fps = 30;
}

int rp_ops_clip(const rp_params *p, dect_clip **clip, char *err, size_t errlen)
{
    dect_params dp;
    rp_ops_clip_params(p, &dp);
    return dect_clip_make(&dp, clip, err, errlen);
}

size_t rp_ops_clip_bytes(const dect_clip *clip)
{
    size_t n = 0;
    for (int i = 0; i < dect_clip_len(clip); i++)
        n += (size_t)dect_clip_packet(clip, i)->size;
    return n;
}

static int setup_decoders(rp_ops *o, char *err, size_t errlen)
{
    const AVCodec *codec = avcodec_find_decoder((enum AVCodecID)dect_clip_codec(o->clip));
    if (!codec) {
        snprintf(err, errlen, "libavcodec has no decoder for the clip");
        return -1;
    }
    o->dec = calloc((size_t)o->nstreams, sizeof *o->dec);
    if (!o->dec) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int j = 0; j < o->nstreams; j++) {
        rp_stream_dec *d = &o->dec[j];
        d->ctx = avcodec_alloc_context3(codec);
        d->frame = av_frame_alloc();
        if (!d->ctx || !d->frame) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        d->ctx->log_level_offset = 64;    /* quiet (concealment after a dropped frame) */
        d->ctx->thread_count = 1;         /* as vlcalib decode timed it */
        if (avcodec_open2(d->ctx, codec, NULL) < 0) {
            snprintf(err, errlen, "cannot open the decoder");
            return -1;
        }
    }
    return 0;
}

static int setup_executor(rp_ops *o, char *err, size_t errlen)
{
    const rp_params *p = o->p;
    const preset_model *m = preset_find("tiny");
    if (!m) {
        snprintf(err, errlen, "no preset tiny");
        return -1;
    }
    if (weights_vision_init(&o->wv, m->vision, 42, 0, err, errlen))
        return -1;
    if (weights_llm_init(&o->wl, m->llm, 43, 0, err, errlen))
        return -1;
    int B = p->max_batch, ntok = B * p->keep_tokens;
    if (p->decode_max_batch > ntok)
        ntok = p->decode_max_batch;
    int keys = p->prefill_cache + B * p->keep_tokens;
    if (p->decode_cache + 1 > keys)
        keys = p->decode_cache + 1;
    size_t big = (size_t)B * RP_PIX_FLOATS;
    if ((size_t)B * RP_TOK_FLOATS > big)
        big = (size_t)B * RP_TOK_FLOATS;
    if ((size_t)ntok * 64 > big)
        big = (size_t)ntok * 64;
    o->xin = calloc(big, sizeof(float));
    o->xout = calloc(big, sizeof(float));
    o->ws_v = malloc(cpu_vision_ws_floats(m->vision, B) * sizeof(float));
    o->ws_l = malloc(cpu_llm_ws_floats(m->llm, ntok, keys) * sizeof(float));
    o->ws_t = malloc(cpu_tome_reduce_ws_bytes(RP_NTOK, 64));
    o->red_size = malloc((size_t)B * RP_NTOK * sizeof(float));
    if (!o->xin || !o->xout || !o->ws_v || !o->ws_l || !o->ws_t || !o->red_size
        || cpu_kv_init(&o->kv_pre, m->llm, 1, p->prefill_cache + B * p->keep_tokens)
        || cpu_kv_init(&o->kv_dec, m->llm, p->decode_max_batch, p->decode_cache + 1)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int rp_ops_init(rp_ops *o, const rp_params *p, const dect_clip *clip, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->p = p;
    o->clip = clip;
    o->nstreams = p->streams;
    if (p->keep_tokens < 1 || p->keep_tokens > RP_NTOK) {
        snprintf(err, errlen, "keep_tokens must be 1..%d", RP_NTOK);
        return -1;
    }
    if (setup_decoders(o, err, errlen) || setup_executor(o, err, errlen)) {
        rp_ops_free(o);
        return -1;
    }
    return 0;
}

void rp_ops_free(rp_ops *o)
{
    if (o->dec)
        for (int j = 0; j < o->nstreams; j++) {
            avcodec_free_context(&o->dec[j].ctx);
            av_frame_free(&o->dec[j].frame);
        }
    free(o->dec);
    weights_vision_free(&o->wv);
    weights_llm_free(&o->wl);
    cpu_kv_free(&o->kv_pre);
    cpu_kv_free(&o->kv_dec);
    free(o->xin); free(o->xout); free(o->ws_v); free(o->ws_l); free(o->ws_t);
    free(o->red_size);
    memset(o, 0, sizeof *o);
}

/* Luma sampled on the encoder's 56 x 56 grid, in all three channels. */
static void to_pixels(const AVFrame *f, float *pix)
{
    for (int y = 0; y < 56; y++) {
        const uint8_t *row = f->data[0] + (size_t)(y * f->height / 56) * (size_t)f->linesize[0];
        for (int x = 0; x < 56; x++) {
            float v = row[x * f->width / 56] * (1.0f / 255.0f);
            pix[y * 56 + x] = v;
            pix[56 * 56 + y * 56 + x] = v;
            pix[2 * 56 * 56 + y * 56 + x] = v;
        }
    }
}

int rp_ops_clip_frame(const rp_ops *o, long seq)
{
    return (int)(seq % dect_clip_len(o->clip));
}

int rp_ops_decode(rp_ops *o, int s, long seq, float *pix)
{
    rp_stream_dec *d = &o->dec[s];
    const AVPacket *pkt = dect_clip_packet(o->clip, rp_ops_clip_frame(o, seq));
    int got = 0;
    if (avcodec_send_packet(d->ctx, pkt) >= 0)
        got = avcodec_receive_frame(d->ctx, d->frame) >= 0;
    if (got) {
        if (pix)
            to_pixels(d->frame, pix);
        av_frame_unref(d->frame);
    }
    return got;
}

void rp_ops_encode(rp_ops *o, int k, float *const *pix, float *const *tok)
{
    for (int j = 0; j < k; j++)
        memcpy(o->xin + (size_t)j * RP_PIX_FLOATS, pix[j], RP_PIX_FLOATS * sizeof(float));
    cpu_vision_encode(&o->wv, k, o->xin, o->xout, o->ws_v);
    for (int j = 0; j < k; j++)
        memcpy(tok[j], o->xout + (size_t)j * RP_TOK_FLOATS, RP_TOK_FLOATS * sizeof(float));
}

void rp_ops_reduce(rp_ops *o, int k, float *const *tok, float *const *red)
{
    int kt = o->p->keep_tokens;
    for (int j = 0; j < k; j++)
        memcpy(o->xin + (size_t)j * RP_TOK_FLOATS, tok[j], RP_TOK_FLOATS * sizeof(float));
    cpu_tome_reduce(k, RP_NTOK, kt, 64, o->xin, NULL, o->xout, o->red_size, o->ws_t);
    for (int j = 0; j < k; j++)
        memcpy(red[j], o->xout + (size_t)j * kt * 64, (size_t)kt * 64 * sizeof(float));
}

void rp_ops_prefill(rp_ops *o, int k, float *const *red)
{
    int kt = o->p->keep_tokens;
    for (int j = 0; j < k; j++)
        memcpy(o->xin + (size_t)j * kt * 64, red[j], (size_t)kt * 64 * sizeof(float));
    cpu_llm_prefill(&o->wl, &o->kv_pre, 0, o->p->prefill_cache, k * kt, o->xin, o->xout, o->ws_l);
}

void rp_ops_decode_step(rp_ops *o, int b)
{
    cpu_llm_decode(&o->wl, &o->kv_dec, b, o->p->decode_cache, o->xin, o->xout, o->ws_l);
}

/* ---- one thread's own stream and kernels ------------------------------- */

int rp_solo_init(rp_solo *s, const rp_params *p, const dect_clip *clip, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->one = *p;
    s->one.streams = 1;
    if (rp_ops_init(&s->ops, &s->one, clip, err, errlen))
        return -1;
    s->ops_ok = 1;
    s->pix = calloc(RP_PIX_FLOATS, sizeof(float));
    s->tok = calloc(RP_TOK_FLOATS, sizeof(float));
    s->red = calloc((size_t)p->keep_tokens * 64, sizeof(float));
    if (!s->pix || !s->tok || !s->red) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

void rp_solo_free(rp_solo *s)
{
    if (s->ops_ok)
        rp_ops_free(&s->ops);
    free(s->pix);
    free(s->tok);
    free(s->red);
    memset(s, 0, sizeof *s);
}

void rp_solo_decode(rp_solo *s, int sample)
{
    rp_ops_decode(&s->ops, 0, s->seq++, sample ? s->pix : NULL);
}

void rp_solo_chain(rp_solo *s)
{
    float *pix[1] = {s->pix}, *tok[1] = {s->tok}, *red[1] = {s->red};
    rp_ops_encode(&s->ops, 1, pix, tok);
    rp_ops_reduce(&s->ops, 1, tok, red);
    rp_ops_prefill(&s->ops, 1, red);
}
