/* decode_time.c — encode a synthetic clip with libavcodec and time its
 * decode frame by frame. See decode_time.h.
 *
 * Content: a luma sawtooth gradient scrolling right, plus a fixed random
 * texture scrolling diagonally (motion the encoder can predict), plus a
 * little fresh noise every frame (so P/B frames carry some residual); chroma
 * are slow-moving ramps. The noise comes from a local xorshift generator
 * seeded by the parameters, so the clip is the same run to run. */
#include "calib/decode_time.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/opt.h>

#define DECT_MAX_DIM 8192
#define DECT_MAX_FRAMES 100000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t xs_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void set_err(char *err, size_t errlen, const char *what, int averr)
{
    char buf[AV_ERROR_MAX_STRING_SIZE] = "";
    if (averr)
        av_strerror(averr, buf, sizeof buf);
    if (err && errlen)
        snprintf(err, errlen, "%s%s%s", what, averr ? ": " : "", buf);
}

const char *dect_type_name(dect_type t)
{
    switch (t) {
    case DECT_I: return "I";
    case DECT_P: return "P";
    case DECT_B: return "B";
    default: return "?";
    }
}

void dect_params_default(dect_params *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->codec, sizeof p->codec, "h264");
    p->width = 1280;
    p->height = 720;
    p->fps = 30;
    p->gop = 30;
    p->bframes = 2;
    p->frames = 300;
    p->passes = 1;
    p->crf = 23;
    p->seed = 1;
}

int dect_parse_resolution(const char *s, int *w, int *h)
{
    if (!s)
        return -1;
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || errno)
        return -1;
    const char *t = end + 1;
    long b = strtol(t, &end, 10);
    if (end == t || *end || errno || a <= 0 || b <= 0 || a > DECT_MAX_DIM || b > DECT_MAX_DIM)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

int dect_check(const dect_params *p, char *err, size_t errlen)
{
#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
    if (strcmp(p->codec, "h264") && strcmp(p->codec, "mpeg4"))
        BAD("codec \"%s\": must be h264 or mpeg4", p->codec);
    if (p->width < 16 || p->height < 16 || p->width > DECT_MAX_DIM || p->height > DECT_MAX_DIM)
        BAD("resolution %dx%d: width and height must be in 16..%d", p->width, p->height, DECT_MAX_DIM);
    if (p->width % 2 || p->height % 2)
        BAD("resolution %dx%d: width and height must be even (4:2:0 chroma)", p->width, p->height);
    if (p->fps < 1 || p->fps > 240)
        BAD("fps %d: must be in 1..240", p->fps);
    if (p->gop < 1)
        BAD("gop %d: must be >= 1", p->gop);
    if (p->bframes < 0 || p->bframes > 16)
        BAD("bframes %d: must be in 0..16", p->bframes);
    if (p->bframes >= p->gop)
        BAD("bframes %d: must be < gop (%d)", p->bframes, p->gop);
    if (p->frames < 1 || p->frames > DECT_MAX_FRAMES)
        BAD("frames %d: must be in 1..%d", p->frames, DECT_MAX_FRAMES);
    if (p->passes < 1 || p->passes > 1000)
        BAD("passes %d: must be in 1..1000", p->passes);
    if (!strcmp(p->codec, "h264") ? (p->crf < 0 || p->crf > 51) : (p->crf < 2 || p->crf > 31))
        BAD("crf %d: must be in %s for %s", p->crf, !strcmp(p->codec, "h264") ? "0..51" : "2..31",
            p->codec);
    return 0;
#undef BAD
}

/* ---- the clip ---------------------------------------------------------- */

typedef struct {
    AVPacket **pkts;
    int n, cap;
    enum AVCodecID id;
} clip;

static void clip_free(clip *c)
{
    for (int i = 0; i < c->n; i++)
        av_packet_free(&c->pkts[i]);
    free(c->pkts);
    memset(c, 0, sizeof *c);
}

static int clip_take(clip *c, AVPacket *pkt)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        AVPacket **np = realloc(c->pkts, (size_t)cap * sizeof *np);
        if (!np)
            return -1;
        c->pkts = np;
        c->cap = cap;
    }
    AVPacket *k = av_packet_alloc();
    if (!k)
        return -1;
    av_packet_move_ref(k, pkt);
    c->pkts[c->n++] = k;
    return 0;
}

static void fill_frame(AVFrame *f, int t, const uint8_t *tex, uint64_t *rng)
{
    int w = f->width, h = f->height;
    for (int y = 0; y < h; y++) {
        uint8_t *row = f->data[0] + (size_t)y * (size_t)f->linesize[0];
        const uint8_t *trow = tex + (size_t)((y + t) % h) * (size_t)w;
        uint64_t bits = 0;
        for (int x = 0; x < w; x++) {
            if ((x & 7) == 0)
                bits = xs_next(rng);
            int noise = (int)(bits & 7) - 3;      /* -3..4 */
            bits >>= 8;
            int g = ((x + 4 * t) % w) * 160 / w;
            int v = 24 + g + trow[(x + 3 * t) % w] + noise;
            row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    int cw = w / 2, ch = h / 2;
    for (int y = 0; y < ch; y++) {
        uint8_t *u = f->data[1] + (size_t)y * (size_t)f->linesize[1];
        uint8_t *v = f->data[2] + (size_t)y * (size_t)f->linesize[2];
        for (int x = 0; x < cw; x++) {
            u[x] = (uint8_t)(96 + ((x + 2 * t) % cw) * 64 / cw);
            v[x] = (uint8_t)(96 + ((y + t) % ch) * 64 / ch);
        }
    }
}

/* Drain the encoder's packets into c: 0, or -1 and a message. */
static int drain_encoder(AVCodecContext *enc, AVPacket *pkt, clip *c, char *err, size_t errlen)
{
    for (;;) {
        int ret = avcodec_receive_packet(enc, pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            set_err(err, errlen, "encoder: receive packet", ret);
            return -1;
        }
        if (clip_take(c, pkt)) {
            av_packet_unref(pkt);
            set_err(err, errlen, "out of memory", 0);
            return -1;
        }
    }
}

static int encode_clip(const dect_params *p, clip *c, dect_result *r, char *err, size_t errlen)
{
    int rc = -1, ret;
    bool h264 = !strcmp(p->codec, "h264");
    const AVCodec *codec = h264 ? avcodec_find_encoder_by_name("libx264")
                                : avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (!codec) {
        set_err(err, errlen, h264 ? "libavcodec has no libx264 encoder" : "libavcodec has no MPEG-4 encoder", 0);
        return -1;
    }
    snprintf(r->encoder, sizeof r->encoder, "%s", codec->name);
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    AVFrame *frame = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    uint8_t *tex = malloc((size_t)p->width * (size_t)p->height);
    if (!enc || !frame || !pkt || !tex) {
        set_err(err, errlen, "out of memory", 0);
        goto done;
    }
    enc->log_level_offset = 64;   /* quiet: every level past AV_LOG_TRACE; library code never prints */
    enc->width = p->width;
    enc->height = p->height;
    enc->pix_fmt = AV_PIX_FMT_YUV420P;
    enc->time_base = (AVRational){1, p->fps};
    enc->framerate = (AVRational){p->fps, 1};
    enc->gop_size = p->gop;
    enc->max_b_frames = p->bframes;
    if (h264) {
        enc->thread_count = 0;   /* encoding is setup, not measured */
        av_opt_set(enc->priv_data, "preset", "veryfast", 0);
        av_opt_set_double(enc->priv_data, "crf", (double)p->crf, 0);
        /* keyframes exactly every gop frames, closed GOPs */
        av_opt_set(enc->priv_data, "x264-params", "scenecut=0:open-gop=0", 0);
    } else {
        enc->thread_count = 1;
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA * p->crf;
        av_opt_set_int(enc->priv_data, "sc_threshold", 1000000000, 0);
    }
    if ((ret = avcodec_open2(enc, codec, NULL)) < 0) {
        set_err(err, errlen, "encoder: open", ret);
        goto done;
    }
    c->id = enc->codec_id;
    frame->format = AV_PIX_FMT_YUV420P;
    frame->width = p->width;
    frame->height = p->height;
    if ((ret = av_frame_get_buffer(frame, 0)) < 0) {
        set_err(err, errlen, "frame buffer", ret);
        goto done;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)p->seed * 0xD1B54A32D192ED03ULL);
    if (!rng)
        rng = 1;
    for (size_t i = 0; i < (size_t)p->width * (size_t)p->height; i++)
        tex[i] = (uint8_t)(xs_next(&rng) & 63);

    double t0 = now_s();
    for (int t = 0; t < p->frames; t++) {
        if ((ret = av_frame_make_writable(frame)) < 0) {
            set_err(err, errlen, "frame writable", ret);
            goto done;
        }
        fill_frame(frame, t, tex, &rng);
        frame->pts = t;
        if ((ret = avcodec_send_frame(enc, frame)) < 0) {
            set_err(err, errlen, "encoder: send frame", ret);
            goto done;
        }
        if (drain_encoder(enc, pkt, c, err, errlen))
            goto done;
    }
    if ((ret = avcodec_send_frame(enc, NULL)) < 0) {
        set_err(err, errlen, "encoder: flush", ret);
        goto done;
    }
    if (drain_encoder(enc, pkt, c, err, errlen))
        goto done;
    r->encode_s = now_s() - t0;
    if (c->n != p->frames) {
        snprintf(err, errlen, "encoder: %d packets for %d frames", c->n, p->frames);
        goto done;
    }
    for (int i = 0; i < c->n; i++) {
        if (c->pkts[i]->pts < 0 || c->pkts[i]->pts >= p->frames) {
            snprintf(err, errlen, "encoder: packet %d has pts %lld outside the clip", i,
                     (long long)c->pkts[i]->pts);
            goto done;
        }
        r->bytes += (size_t)c->pkts[i]->size;
    }
    rc = 0;
done:
    free(tex);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc);
    return rc;
}

/* ---- decoding ---------------------------------------------------------- */

/* Per pts: the decoded frame's type (-1: not yet seen) and the time of the
 * send/receive cycle of its packet. */
typedef struct {
    int *type;      /* dect_type, DECT_NTYPES for other types, -1 unseen */
    double *ms;
    int frames;
} pass_rec;

static int note_frame(pass_rec *pr, const AVFrame *f, char *err, size_t errlen)
{
    int64_t pts = f->pts != AV_NOPTS_VALUE ? f->pts : f->best_effort_timestamp;
    if (pts < 0 || pts >= pr->frames || pr->type[pts] != -1) {
        snprintf(err, errlen, "decoder: frame with pts %lld unexpected (missing or repeated)",
                 (long long)pts);
        return -1;
    }
    switch (f->pict_type) {
    case AV_PICTURE_TYPE_I: pr->type[pts] = DECT_I; break;
    case AV_PICTURE_TYPE_P: pr->type[pts] = DECT_P; break;
    case AV_PICTURE_TYPE_B: pr->type[pts] = DECT_B; break;
    default: pr->type[pts] = DECT_NTYPES; break;
    }
    return 0;
}

static int receive_all(AVCodecContext *dec, AVFrame *f, pass_rec *pr, char *err, size_t errlen)
{
    for (;;) {
        int ret = avcodec_receive_frame(dec, f);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            set_err(err, errlen, "decoder: receive frame", ret);
            return -1;
        }
        int bad = note_frame(pr, f, err, errlen);
        av_frame_unref(f);
        if (bad)
            return -1;
    }
}

/* One pass over the clip: every packet's cycle timed into pr. */
static int decode_pass(AVCodecContext *dec, AVFrame *f, const clip *c, pass_rec *pr, char *err,
                       size_t errlen)
{
    for (int i = 0; i < pr->frames; i++)
        pr->type[i] = -1;
    for (int i = 0; i < c->n; i++) {
        const AVPacket *k = c->pkts[i];
        double t0 = now_s();
        int ret = avcodec_send_packet(dec, k);
        if (ret < 0) {
            set_err(err, errlen, "decoder: send packet", ret);
            return -1;
        }
        if (receive_all(dec, f, pr, err, errlen))
            return -1;
        pr->ms[k->pts] = 1e3 * (now_s() - t0);
    }
    int ret = avcodec_send_packet(dec, NULL);
    if (ret < 0) {
        set_err(err, errlen, "decoder: flush", ret);
        return -1;
    }
    if (receive_all(dec, f, pr, err, errlen))
        return -1;
    for (int i = 0; i < pr->frames; i++)
        if (pr->type[i] == -1) {
            snprintf(err, errlen, "decoder: frame %d of %d never came out", i, pr->frames);
            return -1;
        }
    avcodec_flush_buffers(dec);   /* ready for the next pass */
    return 0;
}

static int decode_clip(const dect_params *p, const clip *c, dect_result *r, char *err,
                       size_t errlen)
{
    int rc = -1, ret;
    const AVCodec *codec = avcodec_find_decoder(c->id);
    if (!codec) {
        set_err(err, errlen, "libavcodec has no decoder for the clip", 0);
        return -1;
    }
    AVCodecContext *dec = avcodec_alloc_context3(codec);
    AVFrame *f = av_frame_alloc();
    pass_rec pr = {malloc((size_t)p->frames * sizeof(int)), malloc((size_t)p->frames * sizeof(double)),
                   p->frames};
    double *s[DECT_NTYPES] = {0};
    int *at[DECT_NTYPES] = {0};                  /* each sample's frame in the clip */
    int ns[DECT_NTYPES] = {0};
    size_t total = (size_t)p->frames * (size_t)p->passes;
    for (int t = 0; t < DECT_NTYPES; t++) {
        s[t] = malloc(total * sizeof(double));
        at[t] = malloc(total * sizeof(int));
    }
    if (!dec || !f || !pr.type || !pr.ms || !s[0] || !s[1] || !s[2] || !at[0] || !at[1] || !at[2]) {
        set_err(err, errlen, "out of memory", 0);
        goto done;
    }
    dec->log_level_offset = 64;    /* quiet, as the encoder */
    dec->thread_count = 1;   /* per-frame times need a frame decoded in its own call */
    if ((ret = avcodec_open2(dec, codec, NULL)) < 0) {
        set_err(err, errlen, "decoder: open", ret);
        goto done;
    }
    if (decode_pass(dec, f, c, &pr, err, errlen))   /* warm-up, untimed */
        goto done;
    for (int pass = 0; pass < p->passes; pass++) {
        if (decode_pass(dec, f, c, &pr, err, errlen))
            goto done;
        int other = 0;
        for (int i = 0; i < p->frames; i++) {
            int t = pr.type[i];
            if (t == DECT_NTYPES) {
                other++;
            } else {
                at[t][ns[t]] = i;
                s[t][ns[t]++] = pr.ms[i];
            }
        }
        r->other = other;
    }
    r->frames = p->frames;
    for (int t = 0; t < DECT_NTYPES; t++) {
        if (ns[t] == 0)
            continue;
        if (harness_stats(s[t], ns[t], &r->type[t])) {   /* takes s[t] */
            set_err(err, errlen, "out of memory", 0);
            goto done;
        }
        s[t] = NULL;
    }
    if (dect_content(r, (const int *const *)at)) {
        set_err(err, errlen, "out of memory", 0);
        goto done;
    }
    rc = 0;
done:
    for (int t = 0; t < DECT_NTYPES; t++) {
        free(s[t]);
        free(at[t]);
    }
    free(pr.type);
    free(pr.ms);
    av_frame_free(&f);
    avcodec_free_context(&dec);
    return rc;
}

int dect_run(const dect_params *p, dect_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (dect_check(p, err, errlen))
        return -1;
    clip c = {0};
    int rc = encode_clip(p, &c, r, err, errlen);
    if (rc == 0)
        rc = decode_clip(p, &c, r, err, errlen);
    clip_free(&c);
    if (rc)
        dect_result_free(r);
    return rc;
}

void dect_result_free(dect_result *r)
{
    for (int t = 0; t < DECT_NTYPES; t++) {
        harness_result_free(&r->type[t]);
        free(r->resid[t]);
    }
    free(r->content);
    memset(r, 0, sizeof *r);
}

int dect_content(dect_result *r, const int *const frame_of[DECT_NTYPES])
{
    if (r->frames < 1)
        return -1;
    size_t F = (size_t)r->frames;
    double *sum = calloc(F, sizeof *sum), *content = malloc(F * sizeof *content);
    int *cnt = calloc(F, sizeof *cnt);
    double *resid[DECT_NTYPES] = {0};
    int bad = !sum || !content || !cnt;
    for (size_t k = 0; !bad && k < F; k++)
        content[k] = 1;
    for (int t = 0; !bad && t < DECT_NTYPES; t++) {
        const harness_result *h = &r->type[t];
        if (h->n == 0)
            continue;
        bad = !frame_of[t] || !(resid[t] = malloc((size_t)h->n * sizeof *resid[t]));
        for (int i = 0; !bad && i < h->n; i++) {
            int k = frame_of[t][i];
            bad = k < 0 || k >= r->frames;
            if (!bad) {
                sum[k] += h->samples[i];
                cnt[k]++;
            }
        }
        for (int i = 0; !bad && i < h->n; i++) {
            int k = frame_of[t][i];   /* a frame's samples are all of one type */
            content[k] = sum[k] / cnt[k] / h->mean;
            resid[t][i] = h->samples[i] / content[k];
        }
    }
    free(sum);
    free(cnt);
    if (bad) {
        free(content);
        for (int t = 0; t < DECT_NTYPES; t++)
            free(resid[t]);
        return -1;
    }
    free(r->content);
    r->content = content;
    for (int t = 0; t < DECT_NTYPES; t++) {
        free(r->resid[t]);
        r->resid[t] = resid[t];
    }
    return 0;
}

/* ---- the clip for others (calib/realpipe releases its packets as camera
 * frames, so the pipeline decodes exactly what `vlcalib decode` timed) ---- */

struct dect_clip {
    clip c;
};

int dect_clip_make(const dect_params *p, dect_clip **out, char *err, size_t errlen)
{
    *out = NULL;
    if (dect_check(p, err, errlen))
        return -1;
    dect_clip *k = calloc(1, sizeof *k);
    dect_result r;
    memset(&r, 0, sizeof r);
    if (!k) {
        set_err(err, errlen, "out of memory", 0);
        return -1;
    }
    if (encode_clip(p, &k->c, &r, err, errlen)) {
        clip_free(&k->c);
        free(k);
        return -1;
    }
    *out = k;
    return 0;
}

int dect_clip_len(const dect_clip *k) { return k->c.n; }
const AVPacket *dect_clip_packet(const dect_clip *k, int i) { return k->c.pkts[i]; }
int dect_clip_codec(const dect_clip *k) { return (int)k->c.id; }

void dect_clip_free(dect_clip *k)
{
    if (!k)
        return;
    clip_free(&k->c);
    free(k);
}
