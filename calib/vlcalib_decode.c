/* vlcalib_decode.c — `vlcalib decode`: time the decode of a synthetic clip
 * frame by frame (calib/decode_time.h) and report per frame type (I / P / B).
 *
 *   vlcalib decode [--codec h264|mpeg4] [--resolution WxH] [--fps N] [--gop N]
 *                  [--bframes N] [--frames N] [--passes N] [--crf N] [--seed N]
 *                  [--out F.yaml [--force]]
 *
 * With --out F.yaml it writes, each atomically (sim/out.h) and none over an
 * existing file without --force: F.yaml, a calibration file (calfile.h;
 * format: calib/README.md) with one op decode_video and one point per frame
 * type (frame_type I | P | B), F.samples.csv beside it (the raw samples,
 * with a frame_type column), and F.I.samples, F.P.samples, F.B.samples,
 * the samples of each type that occurred, one value in ms per line — the
 * empirical sample list a scenario's `{dist: empirical, file: ...}` reads —
 * and the clip's content (dect_content): F.content, a factor per clip frame
 * (a scenario's gop.content), and F.I.resid.samples, ..., the draws to use
 * with it. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>

#include "calib/calfile.h"
#include "calib/decode_time.h"
#include "sim/out.h"

#define PATH_LEN 4096

typedef struct {
    dect_params p;
    const char *out;
    bool force, help;
} dec_opts;

static void dec_usage(FILE *f)
{
    fprintf(f,
            "usage: vlcalib decode [--codec h264|mpeg4] [--resolution WxH] [--fps N] [--gop N]\n"
            "                      [--bframes N] [--frames N] [--passes N] [--crf N] [--seed N]\n"
            "                      [--out F.yaml [--force]]\n"
            "Encode a synthetic clip in memory (h264: libx264, preset veryfast), decode it with\n"
            "libavcodec on one thread after an untimed warm-up pass, and time every frame.\n"
            "Defaults: h264 1280x720, 30 fps, GOP 30, 2 B-frames, 300 frames, 1 pass, CRF 23.\n"
            "--out F.yaml writes a calibration file (op decode_video), F.samples.csv and\n"
            "F.I.samples, F.P.samples, F.B.samples (ms, one per line), F.content (each clip\n"
            "frame's mean over its type's: a scenario's gop.content) and F.I.resid.samples, ...\n"
            "(each sample over its frame's factor: the draws to use with gop.content).\n");
}

static int parse_int(const char *s, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end || x < -1000000000L || x > 1000000000L)
        return -1;
    *v = (int)x;
    return 0;
}

static int parse_opts(int argc, char **argv, dec_opts *o, char *msg, size_t len)
{
    memset(o, 0, sizeof *o);
    dect_params_default(&o->p);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { o->help = true; continue; }
        if (!strcmp(a, "--force")) { o->force = true; continue; }
        static const char *const takes[] = {"--codec", "--resolution", "--fps", "--gop", "--bframes",
                                            "--frames", "--passes", "--crf", "--seed", "--out", NULL};
        int k = 0;
        while (takes[k] && strcmp(a, takes[k]))
            k++;
        if (!takes[k]) {
            snprintf(msg, len, "unknown option %s", a);
            return -1;
        }
        if (i + 1 >= argc) {
            snprintf(msg, len, "%s needs a value", a);
            return -1;
        }
        const char *v = argv[++i];
        int x = 0, bad = 0;
        if (!strcmp(a, "--codec")) {
            if (strlen(v) >= sizeof o->p.codec) {
                snprintf(msg, len, "codec \"%s\": must be h264 or mpeg4", v);
                return -1;
            }
            snprintf(o->p.codec, sizeof o->p.codec, "%s", v);
        } else if (!strcmp(a, "--resolution")) {
            if (dect_parse_resolution(v, &o->p.width, &o->p.height)) {
                snprintf(msg, len, "--resolution \"%s\": expected WxH, e.g. 1280x720", v);
                return -1;
            }
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if ((bad = parse_int(v, &x)) == 0) {
            if (!strcmp(a, "--fps")) o->p.fps = x;
            else if (!strcmp(a, "--gop")) o->p.gop = x;
            else if (!strcmp(a, "--bframes")) o->p.bframes = x;
            else if (!strcmp(a, "--frames")) o->p.frames = x;
            else if (!strcmp(a, "--passes")) o->p.passes = x;
            else if (!strcmp(a, "--crf")) o->p.crf = x;
            else if (x < 0) bad = 1;
            else o->p.seed = (unsigned)x;
        }
        if (bad) {
            snprintf(msg, len, "%s \"%s\": not an integer", a, v);
            return -1;
        }
    }
    if (o->p.crf == 23 && !strcmp(o->p.codec, "mpeg4"))
        o->p.crf = 4;   /* the h264 default is no qscale: a fair MPEG-4 quality instead */
    return 0;
}

/* F.yaml (or .yml, or any name) -> F<suffix>. */
static int side_path(const char *yaml, const char *suffix, char *buf, size_t size)
{
    size_t n = strlen(yaml);
    if (n >= 5 && !strcmp(yaml + n - 5, ".yaml"))
        n -= 5;
    else if (n >= 4 && !strcmp(yaml + n - 4, ".yml"))
        n -= 4;
    int w = snprintf(buf, size, "%.*s%s", (int)n, yaml, suffix);
    return w < 0 || (size_t)w >= size ? -1 : 0;
}

/* F.yaml -> F.<type>.samples, or with resid F.<type>.resid.samples. */
static int samples_path(const char *yaml, dect_type t, int resid, char *buf, size_t size)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%s.%ssamples", dect_type_name(t), resid ? "resid." : "");
    return side_path(yaml, suffix, buf, size);
}

static void write_table(FILE *f, const dect_params *p, const dect_result *r)
{
    fprintf(f, "decode %s %dx%d, %d fps, GOP %d, %d B-frames: %d frames x %d pass%s, %.1f kB, encoded by %s in %.2f s\n",
            p->codec, p->width, p->height, p->fps, p->gop, p->bframes, r->frames, p->passes,
            p->passes == 1 ? "" : "es", (double)r->bytes / 1e3, r->encoder, r->encode_s);
    fprintf(f, "%-4s %6s %10s %10s %10s %10s %10s %10s %10s\n", "type", "n", "p50_ms", "p95_ms",
            "p99_ms", "mean_ms", "sd_ms", "min_ms", "max_ms");
    for (int t = 0; t < DECT_NTYPES; t++) {
        const harness_result *h = &r->type[t];
        if (h->n == 0) {
            fprintf(f, "%-4s %6d %10s\n", dect_type_name((dect_type)t), 0, "-");
            continue;
        }
        fprintf(f, "%-4s %6d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                dect_type_name((dect_type)t), h->n, h->p50, h->p95, h->p99, h->mean, h->sd, h->min,
                h->max);
    }
    if (r->other)
        fprintf(f, "(%d frames per pass of another picture type, not counted)\n", r->other);
}

/* The calibration file (calib/README.md, "The calibration file"): one op
 * decode_video, one point per frame type that occurred (batch 1, other shape
 * fields 0, frame_type I | P | B). */
static int build_calfile(const dect_params *p, const dect_result *r, const char *note, calf_file *f,
                         char *comment, size_t clen)
{
    char cpu[200], model[64], res[32];
    unsigned v = avcodec_version();
    memset(f, 0, sizeof *f);
    f->version = CALF_VERSION;
    calfile_cpu_name(cpu, sizeof cpu);
    snprintf(f->device.name, sizeof f->device.name, "%s (%ld CPUs online)", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(f->device.backend, sizeof f->device.backend, "cpu (libavcodec %s decoder, 1 thread)", p->codec);
    snprintf(f->device.driver, sizeof f->device.driver, "none (CPU)");
    snprintf(f->device.libraries, sizeof f->device.libraries, "libavcodec %u.%u.%u", v >> 16, (v >> 8) & 0xffu, v & 0xffu);
    snprintf(f->device.clocks, sizeof f->device.clocks, "unknown");
    calfile_now_utc(f->date, sizeof f->date);
    snprintf(f->backend, sizeof f->backend, "cpu");
    snprintf(res, sizeof res, "%dx%d", p->width, p->height);
    snprintf(model, sizeof model, "%s-%s", p->codec, res);
    calf_op *o = calfile_add_op(f, "decode_video", model, "yuv420p");
    if (!o)
        return -1;
    snprintf(o->codec, sizeof o->codec, "%s", p->codec);
    snprintf(o->resolution, sizeof o->resolution, "%s", res);
    for (int t = 0; t < DECT_NTYPES; t++) {
        const harness_result *h = &r->type[t];
        if (h->n == 0)
            continue;
        calf_point pt = { .batch = 1 };
        snprintf(pt.frame_type, sizeof pt.frame_type, "%s", dect_type_name((dect_type)t));
        if (calfile_point_from(&pt, h->samples, h->n, h->p50, h->p95, h->p99, h->mean, h->sd, h->min) ||
            calfile_add_point(o, &pt))
            return -1;
    }
    snprintf(comment, clen,
             "vlcalib decode: per-frame video decode times on the CPU (format: calib/README.md,\n"
             "\"Decode timing\"): a synthetic clip encoded by %s (%s %d), decoded by libavcodec on\n"
             "one thread; %dx%d, %d fps, GOP %d, %d B-frames, %d frames x %d pass%s, seed %u, %zu bytes.\n"
             "One point per frame type (frame_type I | P | B); raw samples in the .samples.csv beside it.",
             r->encoder, strcmp(p->codec, "h264") ? "qscale" : "preset veryfast, crf", p->crf, p->width,
             p->height, p->fps, p->gop, p->bframes, r->frames, p->passes, p->passes == 1 ? "" : "es",
             p->seed, r->bytes);
    if (note && *note) {
        size_t used = strlen(comment);
        snprintf(comment + used, clen - used, "\n%s", note);
    }
    return 0;
}

static int write_csv(FILE *f, const calf_file *cf, const dect_result *r)
{
    const calf_op *o = &cf->ops[0];
    fputs("op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,frame_type,rep,ms\n", f);
    for (int t = 0; t < DECT_NTYPES; t++)
        for (int i = 0; i < r->type[t].n; i++)
            fprintf(f, "%s,%s,1,0,0,0,0,%s,%d,%.6f\n", o->op, o->model, dect_type_name((dect_type)t), i,
                    r->type[t].samples[i]);
    return ferror(f) ? -1 : 0;
}

/* A type's samples, or with resid each over its frame's content factor
 * (F.content): the draws the simulator's gop.content multiplies again. */
static int write_samples(FILE *f, const dect_params *p, const dect_result *r, dect_type t, int resid)
{
    const harness_result *h = &r->type[t];
    fprintf(f, "# vlcalib decode: %s-frame decode times (ms), %s %dx%d GOP %d, %d B-frames, %s\n",
            dect_type_name(t), p->codec, p->width, p->height, p->gop, p->bframes,
            resid ? "over their\n# frames' factors (the .content file beside this one)"
                  : "display order, pass after pass");
    for (int i = 0; i < h->n; i++)
        fprintf(f, "%.6f\n", resid ? r->resid[t][i] : h->samples[i]);
    return ferror(f) ? -1 : 0;
}

/* The clip's content: one factor per frame, in clip order (gop.content). */
static int write_content(FILE *f, const dect_params *p, const dect_result *r)
{
    fprintf(f, "# vlcalib decode: the clip's content, %s %dx%d GOP %d, %d frames: frame k's mean decode\n"
               "# time over its type's mean, one line per frame in clip order (the simulator's gop.content;\n"
               "# draw from the .resid.samples beside this file)\n",
            p->codec, p->width, p->height, p->gop, r->frames);
    for (int k = 0; k < r->frames; k++)
        fprintf(f, "%.6f\n", r->content[k]);
    return ferror(f) ? -1 : 0;
}

/* The files beside F.yaml by index k: 2t + 0 type t's samples, 2t + 1 its
 * draws over the content, NSIDE - 1 the content; whether r has file k, and
 * its text. */
#define NSIDE (2 * DECT_NTYPES + 1)

static int side_name(const char *yaml, int k, char *buf, size_t size)
{
    return k == NSIDE - 1 ? side_path(yaml, ".content", buf, size)
                          : samples_path(yaml, (dect_type)(k / 2), k % 2, buf, size);
}

static int side_wanted(const dect_result *r, int k)
{
    return k == NSIDE - 1 ? r->content != NULL : r->type[k / 2].n > 0 && (k % 2 == 0 || r->content);
}

static int side_write(FILE *f, const dect_params *p, const dect_result *r, int k)
{
    return k == NSIDE - 1 ? write_content(f, p, r) : write_samples(f, p, r, (dect_type)(k / 2), k % 2);
}

int dect_check_files(const char *out, bool force, char *msg, size_t len)
{
    char sp[PATH_LEN];
    if (out_check(out, force, msg, len))
        return -1;
    if (calfile_samples_path(out, sp, sizeof sp)) {
        snprintf(msg, len, "--out %s: name too long", out);
        return -1;
    }
    if (out_check(sp, force, msg, len))
        return -1;
    for (int k = 0; k < NSIDE; k++) {
        if (side_name(out, k, sp, sizeof sp)) {
            snprintf(msg, len, "--out %s: name too long", out);
            return -1;
        }
        if (out_check(sp, force, msg, len))
            return -1;
    }
    return 0;
}

/* Write every output; all are checked first, and none is left half written. */
int dect_write_files(const char *out, const dect_params *p, const dect_result *r, const char *note,
                     char *msg, size_t len)
{
    char sp[PATH_LEN];
    out_file of;
    memset(&of, 0, sizeof of);
    if (out_open(&of, out, msg, len))
        return -1;
    calf_file cf;
    char comment[2048];
    int bad = build_calfile(p, r, note, &cf, comment, sizeof comment) || calfile_write(of.f, &cf, comment);
    if (bad) {
        calf_free(&cf);
        out_abort(&of);
        snprintf(msg, len, "%s: write error", out);
        return -1;
    }
    if (out_commit(&of, msg, len) || calfile_samples_path(out, sp, sizeof sp)) {
        calf_free(&cf);
        return -1;
    }
    memset(&of, 0, sizeof of);
    if (out_open(&of, sp, msg, len)) {
        calf_free(&cf);
        return -1;
    }
    bad = write_csv(of.f, &cf, r);
    calf_free(&cf);
    if (bad) {
        out_abort(&of);
        snprintf(msg, len, "%s: write error", sp);
        return -1;
    }
    if (out_commit(&of, msg, len))
        return -1;
    for (int k = 0; k < NSIDE; k++) {
        if (!side_wanted(r, k))
            continue;
        side_name(out, k, sp, sizeof sp);   /* checked before the run */
        memset(&of, 0, sizeof of);
        if (out_open(&of, sp, msg, len))
            return -1;
        if (side_write(of.f, p, r, k)) {
            out_abort(&of);
            snprintf(msg, len, "%s: write error", sp);
            return -1;
        }
        if (out_commit(&of, msg, len))
            return -1;
    }
    return 0;
}

int vlcalib_decode_main(int argc, char **argv, FILE *out, FILE *err)
{
    dec_opts o;
    char msg[PATH_LEN + 256];
    if (parse_opts(argc, argv, &o, msg, sizeof msg)) {
        fprintf(err, "vlcalib decode: %s (see vlcalib decode --help)\n", msg);
        return 2;
    }
    if (o.help) {
        dec_usage(out);
        return 0;
    }
    if (dect_check(&o.p, msg, sizeof msg)) {
        fprintf(err, "vlcalib decode: %s\n", msg);
        return 2;
    }
    if (o.out) {
        if (!strcmp(o.out, "-")) {
            fprintf(err, "vlcalib decode: --out needs a file name (it writes sample files beside it)\n");
            return 2;
        }
        if (dect_check_files(o.out, o.force, msg, sizeof msg)) {
            fprintf(err, "vlcalib decode: %s\n", msg);
            return 2;
        }
    }
    dect_result r;
    if (dect_run(&o.p, &r, msg, sizeof msg)) {
        fprintf(err, "vlcalib decode: %s\n", msg);
        return 2;
    }
    write_table(out, &o.p, &r);
    int rc = 0;
    if (o.out) {
        if (dect_write_files(o.out, &o.p, &r, NULL, msg, sizeof msg)) {
            fprintf(err, "vlcalib decode: %s\n", msg);
            rc = 2;
        } else {
            fprintf(out, "wrote %s and its samples files\n", o.out);
        }
    }
    dect_result_free(&r);
    return rc;
}
