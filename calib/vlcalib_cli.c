/* vlcalib_cli.c — the vlcalib command: time the calibration ops over a grid
 * of shapes and write a calibration file (YAML, with the raw samples in a
 * CSV beside it) or only the raw samples as CSV, or check a backend against
 * the double reference.
 *
 *   vlcalib --backend cpu|cuda --model PRESET --out calib/data/NAME.yaml [--reps N] ...
 *   vlcalib --backend cpu|cuda --model PRESET --out FILE.csv [--reps N] ...
 *   vlcalib --backend cpu|cuda --check
 *   vlcalib import --trace FILE.csv | --prom FILE.prom --out NAME.yaml [--scenario-out S.yaml] ...
 *
 * Reading order: options, the grid, the CPU and CUDA runners of one grid
 * point, the run over the grid, the check, vlcalib_main. Every output is
 * written atomically (sim/out.h) and never replaces an existing file without
 * --force; the calibration file format is calib/calfile.h. This file must never time anything itself
 * (harness.h and cuda_time do), never keep global mutable state, and never
 * exit(): every error returns status 2 with a message on `err`. */
#include "calib/decode_time.h"
#include "calib/vlcalib.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "calib/calfile.h"
#include "calib/cpu.h"
#include "calib/cuda_ops.h"
#include "calib/harness.h"
#include "calib/import.h"
#include "calib/presets.h"
#include "calib/ref.h"
#include "calib/weights.h"
#include "calib/wakeup.h"
#include "sim/out.h"
#include "sim/rng.h"

#define NBUF 4                          /* input/output slots rotated through */
#define WEIGHT_SEED 20240611ULL         /* the weights: drawn once, from this seed */
#define WEIGHT_BUDGET (2.0 * (1 << 30)) /* host bytes of distinct layer sets */
#define CPU_MEM_CAP (8.0 * (1 << 30))   /* CPU points needing more are skipped */

/* ---- options ---- */

enum { OP_ENCODE, OP_REDUCE, OP_PREFILL, OP_DECODE, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "encode", "reduce", "prefill", "decode" };

typedef struct {
    const char *backend, *model, *out, *note;
    int reps, threads;
    unsigned ops;          /* bit i: op i requested; 0 = all the model has */
    double cpu_budget;     /* seconds per CPU grid point */
    uint64_t seed;         /* inputs */
    bool force, check, help, list;
} options;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: vlcalib --backend cpu|cuda --model PRESET --out FILE.yaml|FILE.csv [options]\n"
        "       vlcalib --backend cpu|cuda --check\n"
        "       vlcalib --list | --help\n"
        "       vlcalib wakeup [--rounds N] [--out F.yaml]   (thread wake-up latency)\n"
        "\n"
        "Times the calibration ops (vision encode, ToMe reduce, LLM prefill and\n"
        "decode) over a grid of shapes and writes a calibration file (calib/README.md):\n"
        "the device, date and backend, and per op and point p50, p95, p99, mean, sd,\n"
        "min and a lognormal fit with its KS distance; the raw samples go beside it\n"
        "in NAME.samples.csv (op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms).\n"
        "An --out name ending in .csv writes only the raw samples, one row per timed\n"
        "repetition: op,model,backend,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\n"
        "A summary (p50, p95, p99, mean, sd, min per point) goes to standard output.\n"
        "\n"
        "  --backend cpu|cuda  cpu: float32, OpenBLAS; cuda: bf16 on the GPU\n"
        "                      (needs a build with `make CUDA=1 vlcalib`)\n"
        "  --model PRESET      a preset from --list; `tiny` runs in seconds on a CPU\n"
        "  --out FILE          FILE.yaml: the calibration file (and FILE.samples.csv);\n"
        "                      FILE.csv: raw samples only. Written atomically; an\n"
        "                      existing file needs --force\n"
        "  --note TEXT         a comment at the top of the calibration file\n"
        "  --reps N            timed repetitions per point (default %d; fewer is for\n"
        "                      smoke tests), after %d warm-ups, inputs rotated over %d buffers\n"
        "  --ops LIST          comma-separated subset of encode,reduce,prefill,decode\n"
        "                      (default: every op the model has)\n"
        "  --threads N         OpenBLAS threads (default: OpenBLAS's choice)\n"
        "  --cpu-budget S      CPU backend: skip a point whose runs would take more than\n"
        "                      S seconds, and every larger point of that op (default 60)\n"
        "  --seed N            seed of the random inputs (weights use a fixed seed)\n"
        "  --force             replace an existing --out file\n"
        "  --check             compare the backend with the double reference on the\n"
        "                      tiny shapes and two odd ones (head dim 72 and 128, long\n"
        "                      caches); tolerance 1e-4 cpu, 1e-2 cuda; exit 1 if over\n"
        "\n"
        "Grid: encode batch 1,2,4,8,16,32,64; reduce batch 1,8,32 x tokens_out\n"
        "(3/4, 1/2, 1/4 of the tokens, 64, 16); prefill new_tokens 1,8,49,128 x cache\n"
        "0,64,512 (tiny) or 16,64,256,1024 x 0,1024,4096,16384; decode batch 1..64 x\n"
        "cache 16,128,1024 (tiny) or 512,2048,8192. On the CPU, points over the budget\n"
        "or over %.0f GiB of memory are skipped and listed; on a GPU, points that do not\n"
        "fit in its memory (and every larger point of that op).\n"
        "\n"
        "       vlcalib import --trace FILE | --prom FILE --out NAME.yaml [options]\n"
        "Turns production timings into a calibration file and a scenario stages:\n"
        "fragment (see vlcalib import --help).\n"
        "\n"
        "       vlcalib decode --codec h264 --resolution WxH --fps N --gop N --bframes N [options]\n"
        "Times H.264 decoding (libavcodec) of a clip made at run time, per frame type\n"
        "I / P / B (see vlcalib decode --help).\n"
        "Exit status: 0 done, 1 --check over tolerance, 2 error.\n",
        HARNESS_DEFAULT_REPS, HARNESS_MIN_WARMUPS, NBUF, CPU_MEM_CAP / (1 << 30));
}

static int parse_int(const char *s, long lo, long hi, long *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

static int parse_ops(const char *s, unsigned *ops)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *ops = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < OP_COUNT && strcmp(tok, op_names[k]) != 0)
            k++;
        if (k == OP_COUNT)
            return -1;
        *ops |= 1u << k;
    }
    return *ops ? 0 : -1;
}

/* 0, or -1 with a message. */
static int parse_args(int argc, char **argv, options *o, char *msg, size_t n)
{
    *o = (options){ .backend = NULL, .reps = HARNESS_DEFAULT_REPS, .cpu_budget = 60, .seed = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { o->help = true; continue; }
        if (!strcmp(a, "--list")) { o->list = true; continue; }
        if (!strcmp(a, "--force")) { o->force = true; continue; }
        if (!strcmp(a, "--check")) { o->check = true; continue; }
        bool takes = !strcmp(a, "--backend") || !strcmp(a, "--model") || !strcmp(a, "--out") ||
                     !strcmp(a, "--reps") || !strcmp(a, "--ops") || !strcmp(a, "--threads") ||
                     !strcmp(a, "--cpu-budget") || !strcmp(a, "--seed") ||
                     !strcmp(a, "--note");
        if (!takes) {
            snprintf(msg, n, "unknown option '%s'", a);
            return -1;
        }
        if (!v) {
            snprintf(msg, n, "%s needs a value", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--backend")) {
            if (strcmp(v, "cpu") && strcmp(v, "cuda")) {
                snprintf(msg, n, "--backend must be cpu or cuda, not '%s'", v);
                return -1;
            }
            o->backend = v;
        } else if (!strcmp(a, "--model")) {
            o->model = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--note")) {
            o->note = v;
        } else if (!strcmp(a, "--reps")) {
            if (parse_int(v, 1, 1000000, &x)) {
                snprintf(msg, n, "--reps must be an integer from 1 to 1000000, not '%s'", v);
                return -1;
            }
            o->reps = (int)x;
        } else if (!strcmp(a, "--threads")) {
            if (parse_int(v, 1, 1024, &x)) {
                snprintf(msg, n, "--threads must be an integer from 1 to 1024, not '%s'", v);
                return -1;
            }
            o->threads = (int)x;
        } else if (!strcmp(a, "--seed")) {
            if (parse_int(v, 0, 0x7fffffffL, &x)) {
                snprintf(msg, n, "--seed must be a non-negative integer, not '%s'", v);
                return -1;
            }
            o->seed = (uint64_t)x;
        } else if (!strcmp(a, "--ops")) {
            if (parse_ops(v, &o->ops)) {
                snprintf(msg, n, "--ops must list encode, reduce, prefill or decode, not '%s'", v);
                return -1;
            }
        } else {   /* --cpu-budget */
            char *end;
            o->cpu_budget = strtod(v, &end);
            if (!*v || *end || !(o->cpu_budget > 0)) {
                snprintf(msg, n, "--cpu-budget must be a positive number of seconds, not '%s'", v);
                return -1;
            }
        }
    }
    return 0;
}

/* ---- the grid ---- */

typedef struct {
    int op, batch, tokens_in, tokens_out, new_tokens, cache_len;
} point;

static const int batch_grid[] = { 1, 2, 4, 8, 16, 32, 64 };
static const int reduce_batches[] = { 1, 8, 32 };
static const int tiny_new[] = { 1, 8, 49, 128 }, tiny_prefill_L[] = { 0, 64, 512 }, tiny_decode_L[] = { 16, 128, 1024 };
static const int big_new[] = { 16, 64, 256, 1024 }, big_prefill_L[] = { 0, 1024, 4096, 16384 };
static const int big_decode_L[] = { 512, 2048, 8192 };
#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void push(point **pts, int *n, point p)
{
    point *q = realloc(*pts, (size_t)(*n + 1) * sizeof *q);
    if (q) {
        *pts = q;
        q[(*n)++] = p;
    }
}

/* The grid of one op, cheapest first along each axis. */
static int grid(const preset_model *m, int op, point **pts)
{
    int n = 0;
    bool tiny = strcmp(m->name, "tiny") == 0;
    *pts = NULL;
    if (op == OP_ENCODE || op == OP_REDUCE) {
        int T = preset_vision_tokens(m->vision);
        if (op == OP_ENCODE)
            for (int i = 0; i < LEN(batch_grid); i++)
                push(pts, &n, (point){ op, batch_grid[i], T, T, 0, 0 });
        int outs[] = { (3 * T + 2) / 4, (T + 1) / 2, (T + 2) / 4, 64, 16 }, nout = 0;
        for (int i = 0; i < LEN(outs); i++) {   /* 1 <= out < T, distinct, kept in order */
            bool dup = false;
            for (int j = 0; j < i; j++)
                dup |= outs[j] == outs[i];
            if (!dup && outs[i] >= 1 && outs[i] < T)
                outs[nout++] = outs[i];
        }
        if (op == OP_REDUCE)
            for (int b = 0; b < LEN(reduce_batches); b++)
                for (int i = 0; i < nout; i++)
                    push(pts, &n, (point){ op, reduce_batches[b], T, outs[i], 0, 0 });
    } else if (op == OP_PREFILL) {
        const int *N = tiny ? tiny_new : big_new, *L = tiny ? tiny_prefill_L : big_prefill_L;
        int nn = tiny ? LEN(tiny_new) : LEN(big_new), nl = tiny ? LEN(tiny_prefill_L) : LEN(big_prefill_L);
        for (int j = 0; j < nl; j++)
            for (int i = 0; i < nn; i++)
                push(pts, &n, (point){ op, 1, 0, 0, N[i], L[j] });
    } else {
        const int *L = tiny ? tiny_decode_L : big_decode_L;
        int nl = tiny ? LEN(tiny_decode_L) : LEN(big_decode_L);
        for (int j = 0; j < nl; j++)
            for (int i = 0; i < LEN(batch_grid); i++)
                push(pts, &n, (point){ op, batch_grid[i], 0, 0, 1, L[j] });
    }
    return n;
}

/* The two sizes a point grows along; a point at least as large on both as a
 * skipped one is skipped too. */
static void point_size(const point *p, long *a, long *b)
{
    *a = p->op == OP_PREFILL ? p->new_tokens : p->batch;
    *b = p->op == OP_REDUCE ? p->tokens_in - p->tokens_out : p->cache_len;
}

/* ---- random inputs ---- */

static void fill_uniform(float *p, size_t n, uint64_t seed, uint32_t stream)
{
    gsl_rng *r = rng_stream(seed, 0x5eed, stream);
    if (!r) {   /* out of memory: still deterministic, still finite */
        for (size_t i = 0; i < n; i++)
            p[i] = (float)((double)(i % 1999) / 999.5 - 1.0);
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((double)(rng_next64(r) >> 40) * 0x1p-23 - 1.0);   /* [-1, 1) */
    gsl_rng_free(r);
}

/* NBUF buffers of n random floats each; 0 or -1. */
static int bufs_new(float *b[NBUF], size_t n, uint64_t seed, uint32_t stream)
{
    for (int i = 0; i < NBUF; i++) {
        b[i] = malloc((n ? n : 1) * sizeof(float));
        if (!b[i])
            return -1;
        fill_uniform(b[i], n, seed, stream * NBUF + (uint32_t)i);
    }
    return 0;
}

static void bufs_free(float *b[NBUF])
{
    for (int i = 0; i < NBUF; i++) {
        free(b[i]);
        b[i] = NULL;
    }
}

/* ---- one run over the grid ---- */

typedef struct {
    const options *o;
    const preset_model *m;
    FILE *csv, *out, *err;
    cuda_ctx *cu;            /* the cuda backend's context, else NULL */
    cuda_llm *cl;            /* the LLM weights on the GPU, uploaded once */
    weights_vision wv;
    weights_llm wl;
    harness_opts h;
    calf_file *cal;          /* the calibration file being built; NULL: CSV only */
    calf_op *cal_op;         /* its op being timed */
    char msg[1024];
} run;

/* CPU op contexts: the harness calls op(ctx, slot). */
typedef struct {
    const weights_vision *w;
    int batch;
    float *in[NBUF], *out[NBUF], *ws;
} cpu_enc;

static int cpu_enc_op(void *p, int s)
{
    cpu_enc *c = p;
    cpu_vision_encode(c->w, c->batch, c->in[s], c->out[s], c->ws);
    return 0;
}

typedef struct {
    int batch, n_in, n_out, d;
    float *in[NBUF], *out[NBUF], *size[NBUF];
    void *ws;
} cpu_red;

static int cpu_red_op(void *p, int s)
{
    cpu_red *c = p;
    return cpu_tome_reduce(c->batch, c->n_in, c->n_out, c->d, c->in[s], NULL, c->out[s], c->size[s], c->ws);
}

typedef struct {
    const weights_llm *w;
    cpu_kv kv;
    int prefill, ntok, L;
    float *in[NBUF], *out[NBUF], *ws;
} cpu_llm;

static int cpu_llm_op(void *p, int s)
{
    cpu_llm *c = p;
    return c->prefill ? cpu_llm_prefill(c->w, &c->kv, 0, c->L, c->ntok, c->in[s], c->out[s], c->ws)
                      : cpu_llm_decode(c->w, &c->kv, c->ntok, c->L, c->in[s], c->out[s], c->ws);
}

/* Positions 0..L-1 of every cache of kv get random keys and values. */
static void kv_fill(cpu_kv *kv, int L, uint64_t seed)
{
    for (int s = 0; s < kv->seqs; s++)
        for (int l = 0; l < kv->layers; l++)
            for (int g = 0; g < kv->kv_heads; g++) {
                size_t at = cpu_kv_at(kv, s, l, g, 0), n = (size_t)L * kv->head_dim;
                uint32_t id = (uint32_t)((s * kv->layers + l) * kv->kv_heads + g);
                fill_uniform(&kv->k[at], n, seed, 2 * id + 100);
                fill_uniform(&kv->v[at], n, seed, 2 * id + 101);
            }
}

/* Bytes a CPU point needs beyond the weights. */
static double cpu_bytes(const run *R, const point *p)
{
    double f = 4.0;
    if (p->op == OP_ENCODE) {
        const preset_vision *v = &R->wv.cfg;
        double pix = (double)p->batch * v->channels * v->image_h * v->image_w;
        double out = (double)p->batch * preset_vision_tokens(v) * v->width;
        return f * (NBUF * (pix + out) + (double)cpu_vision_ws_floats(v, p->batch));
    }
    if (p->op == OP_REDUCE) {
        double x = (double)p->batch * p->tokens_in * R->wv.cfg.width;
        return f * NBUF * 2 * x + (double)cpu_tome_reduce_ws_bytes(p->tokens_in, R->wv.cfg.width);
    }
    const preset_llm *c = &R->wl.cfg;
    int ntok = p->op == OP_PREFILL ? p->new_tokens : p->batch;
    int cap = p->cache_len + (p->op == OP_PREFILL ? p->new_tokens : 1);
    double kv = 2.0 * (p->op == OP_PREFILL ? 1 : p->batch) * c->layers * preset_llm_kv_dim(c) * (double)cap;
    return f * (kv + 2.0 * NBUF * ntok * c->width + (double)cpu_llm_ws_floats(c, ntok, cap));
}

/* Time one point on the CPU: 0 (r filled or skipped), -1 error. */
static int cpu_point(run *R, const point *p, harness_result *r)
{
    int rc = -1;
    harness_opts h = R->h;
    h.max_seconds = R->o->cpu_budget;
    uint64_t seed = R->o->seed;
    if (p->op == OP_ENCODE) {
        const preset_vision *v = &R->wv.cfg;
        cpu_enc c = { .w = &R->wv, .batch = p->batch };
        size_t pix = (size_t)p->batch * v->channels * v->image_h * v->image_w;
        size_t out = (size_t)p->batch * preset_vision_tokens(v) * v->width;
        c.ws = malloc(cpu_vision_ws_floats(v, p->batch) * sizeof(float));
        if (c.ws && !bufs_new(c.in, pix, seed, 1) && !bufs_new(c.out, out, seed, 2))
            rc = harness_time_cpu(cpu_enc_op, &c, &h, r, R->msg, sizeof R->msg);
        else
            snprintf(R->msg, sizeof R->msg, "out of memory");
        bufs_free(c.in); bufs_free(c.out); free(c.ws);
    } else if (p->op == OP_REDUCE) {
        int d = R->wv.cfg.width;
        cpu_red c = { .batch = p->batch, .n_in = p->tokens_in, .n_out = p->tokens_out, .d = d };
        size_t in = (size_t)p->batch * p->tokens_in * d, out = (size_t)p->batch * p->tokens_out;
        c.ws = malloc(cpu_tome_reduce_ws_bytes(p->tokens_in, d));
        if (c.ws && !bufs_new(c.in, in, seed, 3) && !bufs_new(c.out, out * d, seed, 4) &&
            !bufs_new(c.size, out, seed, 5))
            rc = harness_time_cpu(cpu_red_op, &c, &h, r, R->msg, sizeof R->msg);
        else
            snprintf(R->msg, sizeof R->msg, "out of memory");
        bufs_free(c.in); bufs_free(c.out); bufs_free(c.size); free(c.ws);
    } else {
        const preset_llm *m = &R->wl.cfg;
        bool pre = p->op == OP_PREFILL;
        cpu_llm c = { .w = &R->wl, .prefill = pre, .ntok = pre ? p->new_tokens : p->batch, .L = p->cache_len };
        int cap = p->cache_len + (pre ? p->new_tokens : 1);
        size_t x = (size_t)c.ntok * m->width;
        c.ws = malloc(cpu_llm_ws_floats(m, c.ntok, cap) * sizeof(float));
        if (c.ws && !cpu_kv_init(&c.kv, m, pre ? 1 : p->batch, cap) && !bufs_new(c.in, x, seed, 6) &&
            !bufs_new(c.out, x, seed, 7)) {
            kv_fill(&c.kv, p->cache_len, seed);
            rc = harness_time_cpu(cpu_llm_op, &c, &h, r, R->msg, sizeof R->msg);
        } else {
            snprintf(R->msg, sizeof R->msg, "out of memory");
        }
        cpu_kv_free(&c.kv);
        bufs_free(c.in); bufs_free(c.out); free(c.ws);
    }
    return rc;
}

/* CUDA op contexts: cuda_time calls enqueue(arg, slot). */
typedef struct { cuda_vision *v; int batch; } cu_enc;
typedef struct { cuda_reduce *r; int batch, n_out; } cu_red;
typedef struct { cuda_llm_ws *s; int prefill, ntok, L; } cu_llm;

static int cu_enc_op(void *p, int s) { cu_enc *c = p; return cuda_vision_enqueue(c->v, s, c->batch); }
static int cu_red_op(void *p, int s) { cu_red *c = p; return cuda_reduce_enqueue(c->r, s, c->batch, c->n_out); }

static int cu_llm_op(void *p, int s)
{
    cu_llm *c = p;
    return c->prefill ? cuda_llm_prefill_enqueue(c->s, s, c->L, c->ntok)
                      : cuda_llm_decode_enqueue(c->s, s, c->ntok, c->L);
}

/* Time one point on the GPU: 0, or -1 with the CUDA error in R->msg. */
static int cuda_point(run *R, const point *p, harness_result *r)
{
    int rc = -1;
    uint64_t seed = R->o->seed;
    float *host[NBUF] = { 0 };
    if (p->op == OP_ENCODE) {
        const preset_vision *v = &R->wv.cfg;
        cu_enc c = { cuda_vision_new(R->cu, &R->wv, p->batch, NBUF), p->batch };
        size_t pix = (size_t)p->batch * v->channels * v->image_h * v->image_w;
        if (c.v && !bufs_new(host, pix, seed, 1)) {
            rc = 0;
            for (int i = 0; i < NBUF && !rc; i++)
                rc = cuda_vision_set_input(c.v, i, p->batch, host[i]);
            rc = rc ? rc : cuda_time(R->cu, cu_enc_op, &c, &R->h, r);
        }
        cuda_vision_free(c.v);
    } else if (p->op == OP_REDUCE) {
        int d = R->wv.cfg.width;
        cu_red c = { cuda_reduce_new(R->cu, p->batch, p->tokens_in, d, NBUF), p->batch, p->tokens_out };
        if (c.r && !bufs_new(host, (size_t)p->batch * p->tokens_in * d, seed, 3)) {
            rc = 0;
            for (int i = 0; i < NBUF && !rc; i++)
                rc = cuda_reduce_set_input(c.r, i, p->batch, host[i]);
            rc = rc ? rc : cuda_time(R->cu, cu_red_op, &c, &R->h, r);
        }
        cuda_reduce_free(c.r);
    } else {
        bool pre = p->op == OP_PREFILL;
        cu_llm c = { NULL, pre, pre ? p->new_tokens : p->batch, p->cache_len };
        if (!R->cl)
            R->cl = cuda_llm_new(R->cu, &R->wl);
        int cap = p->cache_len + (pre ? p->new_tokens : 1);
        c.s = R->cl ? cuda_llm_ws_new(R->cl, c.ntok, pre ? 1 : p->batch, cap, NBUF) : NULL;
        if (c.s && !cuda_llm_fill_cache(c.s, seed) && !bufs_new(host, (size_t)c.ntok * R->wl.cfg.width, seed, 6)) {
            rc = 0;
            for (int i = 0; i < NBUF && !rc; i++)
                rc = cuda_llm_set_input(c.s, i, c.ntok, host[i]);
            rc = rc ? rc : cuda_time(R->cu, cu_llm_op, &c, &R->h, r);
        }
        cuda_llm_ws_free(c.s);
    }
    bufs_free(host);
    if (rc)
        snprintf(R->msg, sizeof R->msg, "%s", cuda_error(R->cu));
    return rc;
}

static void print_point(FILE *f, const point *p)
{
    fprintf(f, "%-8s %5d %6d %7d %5d %6d", op_names[p->op], p->batch, p->tokens_in, p->tokens_out,
            p->new_tokens, p->cache_len);
}

/* The points an op skipped (over a budget, a memory cap or the GPU's
 * memory): a point not smaller in both sizes than one of them is skipped
 * too, without trying it. */
typedef struct {
    long a[64], b[64];
    int n;
} skips;

static void skip_larger(skips *s, long a, long b)
{
    if (s->n < 64) {
        s->a[s->n] = a;
        s->b[s->n++] = b;
    }
}

static bool dominated_by(const skips *s, long a, long b)
{
    for (int k = 0; k < s->n; k++)
        if (a >= s->a[k] && b >= s->b[k])
            return true;
    return false;
}

/* One op's grid: 0, or -1 on an error (message printed). */
static int run_op(run *R, int op)
{
    point *pts;
    int n = grid(R->m, op, &pts), rc = 0;
    skips sk = { .n = 0 };
    bool cpu = !R->cu;
    if (R->cal && !(R->cal_op = calfile_add_op(R->cal, op_names[op], R->m->name, cpu ? "float32" : "bf16"))) {
        fprintf(R->err, "vlcalib: out of memory\n");
        free(pts);
        return -1;
    }
    for (int i = 0; i < n && !rc; i++) {
        const point *p = &pts[i];
        long a, b;
        point_size(p, &a, &b);
        bool dominated = dominated_by(&sk, a, b);
        harness_result r = { 0 };
        double bytes = cpu ? cpu_bytes(R, p) : 0;
        if (dominated || (cpu && bytes > CPU_MEM_CAP)) {
            print_point(R->out, p);
            if (dominated)
                fprintf(R->out, "  skipped: not smaller than a point already skipped\n");
            else
                fprintf(R->out, "  skipped: needs %.1f GiB, over the CPU cap of %.0f GiB\n",
                        bytes / (1 << 30), CPU_MEM_CAP / (1 << 30));
            skip_larger(&sk, a, b);
            continue;
        }
        if ((cpu ? cpu_point(R, p, &r) : cuda_point(R, p, &r))) {
            if (!cpu && cuda_take_oom(R->cu)) {   /* too large for this GPU: skip it and larger ones */
                print_point(R->out, p);
                fprintf(R->out, "  skipped: does not fit in GPU memory (%s)\n", R->msg);
                skip_larger(&sk, a, b);
                continue;
            }
            fprintf(R->err, "vlcalib: %s batch %d: %s\n", op_names[op], p->batch, R->msg);
            rc = -1;
            break;
        }
        print_point(R->out, p);
        if (r.skipped) {
            fprintf(R->out, "  skipped: one run took %.2f s; %d runs would take %.0f s, over the %.0f s CPU budget\n",
                    r.est_seconds / (R->h.warmups + R->h.reps), R->h.warmups + R->h.reps, r.est_seconds,
                    R->o->cpu_budget);
            skip_larger(&sk, a, b);
            continue;
        }
        fprintf(R->out, " %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f\n", r.p50, r.p95, r.p99, r.mean, r.sd, r.min);
        for (int k = 0; k < r.n; k++) {
            fprintf(R->csv, "%s,%s,", op_names[op], R->m->name);
            if (!R->cal)
                fprintf(R->csv, "%s,", R->o->backend);
            fprintf(R->csv, "%d,%d,%d,%d,%d,%d,%.6f\n", p->batch, p->tokens_in, p->tokens_out,
                    p->new_tokens, p->cache_len, k, r.samples[k]);
        }
        if (R->cal) {
            calf_point cp = { .batch = p->batch, .tokens_in = p->tokens_in, .tokens_out = p->tokens_out,
                              .new_tokens = p->new_tokens, .cache_len = p->cache_len };
            if (calfile_point_from(&cp, r.samples, r.n, r.p50, r.p95, r.p99, r.mean, r.sd, r.min) ||
                calfile_add_point(R->cal_op, &cp)) {
                fprintf(R->err, "vlcalib: %s batch %d: cannot fit a lognormal (a sample <= 0 ms, "
                        "or out of memory)\n", op_names[op], p->batch);
                rc = -1;
            }
        }
        harness_result_free(&r);
    }
    free(pts);
    if (R->cal && R->cal_op->npoints == 0) {   /* every point skipped: no op */
        free(R->cal_op->points);
        R->cal->nops--;
    }
    return rc;
}

/* ---- the calibration file's device fields ---- */

char *openblas_get_config(void);   /* OpenBLAS (cblas.h is only on cpu.c's include path) */

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void cpuinfo(const char *key, char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    buf[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, key, strlen(key)) != 0 || !colon)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, size, "%s", colon);
        break;
    }
    if (f)
        fclose(f);
}

/* The next ", "-separated field of s (advancing *s) into buf. */
static void next_field(const char **s, char *buf, size_t size)
{
    const char *e = strstr(*s, ", ");
    size_t len = e ? (size_t)(e - *s) : strlen(*s);
    snprintf(buf, size, "%.*s", (int)len, *s);
    *s += len + (e ? 2 : 0);
}

static void describe_device(const run *R, calf_file *f)
{
    char buf[512], cpu[200];
    struct utsname u;
    snprintf(f->backend, sizeof f->backend, "%s", R->o->backend);
    snprintf(f->device.clocks, sizeof f->device.clocks, "unknown");
    calfile_now_utc(f->date, sizeof f->date);
    if (R->cu && !cuda_describe(R->cu, buf, sizeof buf)) {
        /* "NAME, sm_90, 132 SMs, 139.8 GiB, driver 12.4, runtime 12.4, cuBLAS 120400" */
        const char *s = buf;
        char part[6][60] = { { 0 } };
        for (int i = 0; i < 6 && *s; i++)
            next_field(&s, part[i], sizeof part[i]);
        snprintf(f->device.name, sizeof f->device.name, "%s (%s, %s, %s)", part[0], part[1], part[2], part[3]);
        snprintf(f->device.backend, sizeof f->device.backend, "cuda (bf16, cuBLAS GEMMs)");
        snprintf(f->device.driver, sizeof f->device.driver, "%s", part[4][0] ? part[4] : "unknown");
        snprintf(f->device.libraries, sizeof f->device.libraries, "CUDA %s, %s", part[5], s);
        return;
    }
    if (R->cu) {
        snprintf(f->device.name, sizeof f->device.name, "unknown");
        snprintf(f->device.backend, sizeof f->device.backend, "cuda (bf16, cuBLAS GEMMs)");
        snprintf(f->device.driver, sizeof f->device.driver, "unknown");
        snprintf(f->device.libraries, sizeof f->device.libraries, "unknown");
        return;
    }
    cpuinfo("model name", cpu, sizeof cpu);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(f->device.name, sizeof f->device.name, "%s (%ld CPUs online)", cpu[0] ? cpu : "unknown CPU", ncpu);
    snprintf(f->device.backend, sizeof f->device.backend, "cpu (float32, OpenBLAS sgemm, %d threads)", cpu_threads());
    if (uname(&u) == 0)
        snprintf(f->device.driver, sizeof f->device.driver, "none (CPU); kernel %s %s", u.sysname, u.release);
    else
        snprintf(f->device.driver, sizeof f->device.driver, "unknown");
    const char *cfg = openblas_get_config();
    snprintf(f->device.libraries, sizeof f->device.libraries, "%s", cfg && *cfg ? cfg : "OpenBLAS");
}

static int choose_sets(size_t set_floats, int layers)
{
    double per = (double)set_floats * sizeof(float);
    int n = (int)(WEIGHT_BUDGET / per);
    return n < 1 ? 1 : n > layers ? layers : n;
}

/* --out FILE.csv: raw samples only (the command's first form). */
static bool vlcalib_csv_only(const char *out)
{
    size_t n = strlen(out);
    return n >= 4 && !strcmp(out + n - 4, ".csv");
}

static int run_grid(const options *o, const preset_model *m, unsigned ops, FILE *out, FILE *err)
{
    char msg[512];
    run R = { .o = o, .m = m, .out = out, .err = err };
    R.h = (harness_opts){ .reps = o->reps, .warmups = HARNESS_MIN_WARMUPS, .nbuf = NBUF };
    if (!strcmp(o->backend, "cuda") && !(R.cu = cuda_ctx_new(msg, sizeof msg))) {
        fprintf(err, "vlcalib: %s\n", msg);
        return 2;
    }
    int status = 2;
    out_file f = { 0 }, yf = { 0 };
    bool opened = false, yopened = false;
    calf_file cal = { .version = CALF_VERSION };
    char samples[4096] = "";
    if (!vlcalib_csv_only(o->out)) {
        R.cal = &cal;
        calfile_samples_path(o->out, samples, sizeof samples);   /* checked in vlcalib_main */
    }
    if (m->vision && (ops & (1u << OP_ENCODE | 1u << OP_REDUCE)) &&
        weights_vision_init(&R.wv, m->vision, WEIGHT_SEED,
                            choose_sets(weights_vision_set_floats(m->vision), m->vision->layers), msg, sizeof msg))
        goto fail;
    if (m->llm && (ops & (1u << OP_PREFILL | 1u << OP_DECODE)) &&
        weights_llm_init(&R.wl, m->llm, WEIGHT_SEED,
                         choose_sets(weights_llm_set_floats(m->llm), m->llm->layers), msg, sizeof msg))
        goto fail;
    if (out_open(&f, R.cal ? samples : o->out, msg, sizeof msg))
        goto fail;
    opened = true;
    R.csv = f.f;
    if (R.cal) {
        if (out_open(&yf, o->out, msg, sizeof msg))
            goto fail;
        yopened = true;
    }

    fprintf(out, "vlcalib: model %s, backend %s", m->name, o->backend);
    if (R.cu) {
        char d[512];
        cuda_describe(R.cu, d, sizeof d);
        fprintf(out, " (%s)", d);
    } else {
        fprintf(out, " (float32, OpenBLAS with %d threads)", cpu_threads());
    }
    fprintf(out, "\n%d timed repetitions after %d warm-ups per point, inputs rotated over %d buffers\n",
            o->reps, HARNESS_MIN_WARMUPS, NBUF);
    if (o->reps < HARNESS_DEFAULT_REPS)
        fprintf(out, "note: fewer than %d repetitions: a smoke test, not a calibration\n", HARNESS_DEFAULT_REPS);
    if (R.wv.set && R.wv.n_sets < m->vision->layers)
        fprintf(out, "note: %d distinct vision layer weight sets cycled over %d layers\n", R.wv.n_sets, m->vision->layers);
    if (R.wl.set && R.wl.n_sets < m->llm->layers)
        fprintf(out, "note: %d distinct LLM layer weight sets cycled over %d layers (each larger than any cache)\n",
                R.wl.n_sets, m->llm->layers);
    if (!R.cu && strcmp(m->name, "tiny") != 0)
        fprintf(out, "note: CPU backend on a large model: points over %.0f s or %.0f GiB are skipped, "
                "with every larger point of the op\n", o->cpu_budget, CPU_MEM_CAP / (1 << 30));
    fprintf(out, "%-8s %5s %6s %7s %5s %6s %9s %9s %9s %9s %9s %9s  (ms)\n", "op", "batch", "tok_in",
            "tok_out", "new", "cache", "p50", "p95", "p99", "mean", "sd", "min");
    fprintf(R.csv, R.cal ? CALFILE_SAMPLES_HEADER
                         : "op,model,backend,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms\n");
    for (int op = 0; op < OP_COUNT; op++)
        if ((ops & (1u << op)) && run_op(&R, op))
            goto done;
    if (R.cal) {
        char comment[2048];
        describe_device(&R, &cal);
        int len = snprintf(comment, sizeof comment,
                           "vlcalib calibration file (format: calib/README.md): %s timings of model %s,\n"
                           "%d timed repetitions after %d warm-ups per point; raw samples in %s",
                           R.cu ? "GPU (CUDA)" : "CPU", m->name, o->reps, HARNESS_MIN_WARMUPS,
                           strrchr(samples, '/') ? strrchr(samples, '/') + 1 : samples);
        if (o->note && len > 0 && (size_t)len < sizeof comment)
            snprintf(comment + len, sizeof comment - (size_t)len, "\n%s", o->note);
        if (calfile_write(yf.f, &cal, comment)) {
            snprintf(msg, sizeof msg, "%s: write error", o->out);
            goto fail;
        }
    }
    bool committed = !out_commit(&f, msg, sizeof msg);
    opened = false;
    if (!committed)
        goto fail;
    if (R.cal) {
        yopened = false;
        if (out_commit(&yf, msg, sizeof msg))
            goto fail;
        fprintf(out, "wrote %s\n", samples);
    }
    fprintf(out, "wrote %s\n", o->out);
    status = 0;
    goto done;
fail:
    fprintf(err, "vlcalib: %s\n", msg);
done:
    if (opened)
        out_abort(&f);
    if (yopened)
        out_abort(&yf);
    calf_free(&cal);
    weights_vision_free(&R.wv);
    weights_llm_free(&R.wl);
    cuda_llm_free(R.cl);
    cuda_ctx_free(R.cu);
    return status;
}

/* ---- the check against the reference ---- */

static double rel_err(const float *y, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double *to_double(const float *x, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; d && i < n; i++)
        d[i] = x[i];
    return d;
}

static void round_bf16(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = weights_bf16_round(x[i]);
}

typedef struct {
    cuda_ctx *cu;            /* NULL: the CPU backend */
    double tol;
    int failures;
    FILE *out;
    char msg[512];
} checker;

static void verdict(checker *k, const char *what, double e)
{
    bool ok = e <= k->tol;
    fprintf(k->out, "check %-42s rel err %.3e (tolerance %.0e) %s\n", what, e, k->tol, ok ? "ok" : "FAIL");
    k->failures += !ok;
}

/* Vision: 0, or -1 on a backend error. */
static int check_vision(checker *k, const weights_vision *w, int B)
{
    const preset_vision *v = &w->cfg;
    size_t npix = (size_t)B * v->channels * v->image_h * v->image_w;
    size_t nout = (size_t)B * preset_vision_tokens(v) * v->width;
    float *pix = malloc(npix * sizeof *pix), *y = malloc(nout * sizeof *y);
    double *ref = malloc(nout * sizeof *ref), *dpix = NULL;
    int rc = -1;
    if (!pix || !y || !ref)
        goto out;
    fill_uniform(pix, npix, 77, 1);
    if (k->cu)
        round_bf16(pix, npix);
    if (!(dpix = to_double(pix, npix)) || ref_vision_encode(w, B, dpix, ref))
        goto out;
    if (k->cu) {
        cuda_vision *cv = cuda_vision_new(k->cu, w, B, 1);
        rc = cv && !cuda_vision_set_input(cv, 0, B, pix) && !cuda_vision_enqueue(cv, 0, B) &&
             !cuda_vision_get_output(cv, 0, B, y) ? 0 : -1;
        cuda_vision_free(cv);
        if (rc)
            goto out;
    } else {
        float *ws = malloc(cpu_vision_ws_floats(v, B) * sizeof *ws);
        if (!ws)
            goto out;
        cpu_vision_encode(w, B, pix, y, ws);
        free(ws);
    }
    char what[64];
    snprintf(what, sizeof what, "encode %s batch %d", v->name, B);
    verdict(k, what, rel_err(y, ref, nout));
    rc = 0;
out:
    free(pix); free(y); free(ref); free(dpix);
    return rc;
}

static int check_reduce(checker *k, int B, int n_in, int n_out, int d)
{
    size_t nx = (size_t)B * n_in * d, ny = (size_t)B * n_out * d;
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y), *s = malloc((size_t)B * n_out * sizeof *s);
    double *ref = malloc(ny * sizeof *ref), *rs = malloc((size_t)B * n_out * sizeof *rs), *dx = NULL;
    int rc = -1;
    if (!x || !y || !s || !ref || !rs)
        goto out;
    fill_uniform(x, nx, 78, 1);
    if (k->cu)
        round_bf16(x, nx);
    if (!(dx = to_double(x, nx)))
        goto out;
    for (int b = 0; b < B; b++)
        if (ref_tome_reduce(n_in, n_out, d, dx + (size_t)b * n_in * d, NULL, ref + (size_t)b * n_out * d,
                            rs + (size_t)b * n_out))
            goto out;
    if (k->cu) {
        cuda_reduce *cr = cuda_reduce_new(k->cu, B, n_in, d, 1);
        rc = cr && !cuda_reduce_set_input(cr, 0, B, x) && !cuda_reduce_enqueue(cr, 0, B, n_out) &&
             !cuda_reduce_get_output(cr, 0, B, n_out, y, s) ? 0 : -1;
        cuda_reduce_free(cr);
        if (rc)
            goto out;
    } else {
        void *ws = malloc(cpu_tome_reduce_ws_bytes(n_in, d));
        rc = ws ? cpu_tome_reduce(B, n_in, n_out, d, x, NULL, y, s, ws) : -1;
        free(ws);
        if (rc)
            goto out;
    }
    char what[64];
    int bad_sizes = 0;
    for (int i = 0; i < B * n_out; i++)
        bad_sizes += s[i] != rs[i];
    snprintf(what, sizeof what, "reduce %d -> %d batch %d", n_in, n_out, B);
    verdict(k, what, rel_err(y, ref, ny));
    if (bad_sizes) {
        fprintf(k->out, "check %-42s %d token sizes differ from the reference FAIL\n", what, bad_sizes);
        k->failures++;
    }
    rc = 0;
out:
    free(x); free(y); free(s); free(ref); free(rs); free(dx);
    return rc;
}

/* Prefill (B == 0: N tokens of sequence 0) or decode (B sequences, 1 token). */
static int check_llm(checker *k, const weights_llm *w, int B, int L, int N)
{
    const preset_llm *c = &w->cfg;
    int seqs = B ? B : 1, ntok = B ? B : N, cap = L + (B ? 1 : N);
    size_t nx = (size_t)ntok * c->width;
    cpu_kv kv = { 0 };
    ref_kv rk = { 0 };
    float *x = malloc(nx * sizeof *x), *y = malloc(nx * sizeof *y);
    double *ref = malloc(nx * sizeof *ref), *dx = NULL;
    int rc = -1;
    if (!x || !y || !ref || cpu_kv_init(&kv, c, seqs, cap) || ref_kv_init(&rk, c, seqs, cap))
        goto out;
    fill_uniform(x, nx, 79, 1);
    kv_fill(&kv, L, 80);
    if (k->cu) {
        size_t nkv = (size_t)seqs * kv.layers * kv.kv_heads * cap * kv.head_dim;
        round_bf16(kv.k, nkv);
        round_bf16(kv.v, nkv);
    }
    for (size_t i = 0; i < (size_t)seqs * kv.layers * kv.kv_heads * cap * kv.head_dim; i++) {
        rk.k[i] = kv.k[i];
        rk.v[i] = kv.v[i];
    }
    if (!(dx = to_double(x, nx)) ||
        (B ? ref_llm_decode(w, &rk, B, L, dx, ref) : ref_llm_prefill(w, &rk, 0, L, N, dx, ref)))
        goto out;
    if (k->cu) {
        cuda_llm *m = cuda_llm_new(k->cu, w);
        cuda_llm_ws *s = m ? cuda_llm_ws_new(m, ntok, seqs, cap, 1) : NULL;
        rc = s ? 0 : -1;
        for (int q = 0; q < seqs && !rc; q++)
            rc = cuda_llm_set_cache(s, q, &kv.k[cpu_kv_at(&kv, q, 0, 0, 0)], &kv.v[cpu_kv_at(&kv, q, 0, 0, 0)], cap);
        rc = rc || cuda_llm_set_input(s, 0, ntok, x) ||
             (B ? cuda_llm_decode_enqueue(s, 0, B, L) : cuda_llm_prefill_enqueue(s, 0, L, N)) ||
             cuda_llm_get_output(s, 0, ntok, y) ? -1 : 0;
        cuda_llm_ws_free(s);
        cuda_llm_free(m);
        if (rc)
            goto out;
    } else {
        float *ws = malloc(cpu_llm_ws_floats(c, ntok, cap) * sizeof *ws);
        rc = !ws ? -1 : B ? cpu_llm_decode(w, &kv, B, L, x, y, ws) : cpu_llm_prefill(w, &kv, 0, L, N, x, y, ws);
        free(ws);
        if (rc)
            goto out;
    }
    char what[64];
    if (B)
        snprintf(what, sizeof what, "decode %s batch %d cache %d", c->name, B, L);
    else
        snprintf(what, sizeof what, "prefill %s new %d cache %d", c->name, N, L);
    verdict(k, what, rel_err(y, ref, nx));
    rc = 0;
out:
    cpu_kv_free(&kv);
    ref_kv_free(&rk);
    free(x); free(y); free(ref); free(dx);
    return rc;
}

/* Shapes beyond tiny that a GPU path must get right: head_dim 72 (SigLIP
 * so400m) with a token count that is no multiple of 8; head_dim 128 with
 * four query heads per KV head (Llama-3) and caches long enough for several
 * decode splits. */
static const preset_vision check_vision_odd = { "check-hd72", 1, 144, 2, 200, 8, 72, 56, 3, 1e-6 };
static const preset_llm check_llm_odd = { "check-hd128", 1, 512, 4, 1, 256, 500000.0, 1e-5 };

static int check_model(checker *k, const preset_vision *pv, const preset_llm *pl)
{
    char msg[512];
    weights_vision wv;
    weights_llm wl;
    if (weights_vision_init(&wv, pv, WEIGHT_SEED, 0, msg, sizeof msg))
        return -1;
    if (weights_llm_init(&wl, pl, WEIGHT_SEED, 0, msg, sizeof msg)) {
        weights_vision_free(&wv);
        return -1;
    }
    if (k->cu) {
        weights_vision_round_bf16(&wv);
        weights_llm_round_bf16(&wl);
    }
    int T = preset_vision_tokens(pv), d = pv->width;
    int rc = check_vision(k, &wv, 1) || check_vision(k, &wv, 3) ||
             check_reduce(k, 2, T, T / 3, d) || check_reduce(k, 1, T, T - 3, d) ||
             check_llm(k, &wl, 0, 0, 7) || check_llm(k, &wl, 0, 13, 5) || check_llm(k, &wl, 0, 200, 9) ||
             check_llm(k, &wl, 3, 9, 1) || check_llm(k, &wl, 1, 0, 1) || check_llm(k, &wl, 2, 300, 1) ? -1 : 0;
    weights_vision_free(&wv);
    weights_llm_free(&wl);
    return rc;
}

static int run_check(const options *o, FILE *out, FILE *err)
{
    checker k = { .out = out, .tol = 1e-4 };
    char msg[512];
    if (!strcmp(o->backend, "cuda")) {
        if (!(k.cu = cuda_ctx_new(msg, sizeof msg))) {
            fprintf(err, "vlcalib: %s\n", msg);
            return 2;
        }
        k.tol = 1e-2;
        cuda_describe(k.cu, msg, sizeof msg);
        fprintf(out, "vlcalib check: backend cuda (%s), weights and inputs rounded to bf16\n", msg);
    } else {
        fprintf(out, "vlcalib check: backend cpu (float32, OpenBLAS with %d threads)\n", cpu_threads());
    }
    const preset_model *tiny = preset_find("tiny");
    int rc = check_model(&k, tiny->vision, tiny->llm) || check_model(&k, &check_vision_odd, &check_llm_odd);
    if (rc)
        fprintf(err, "vlcalib: check: %s\n", k.cu ? cuda_error(k.cu) : "out of memory");
    cuda_ctx_free(k.cu);
    if (rc)
        return 2;
    fprintf(out, "vlcalib check: %s\n", k.failures ? "FAILED" : "all within tolerance");
    return k.failures ? 1 : 0;
}

/* ---- vlcalib import ---- */

static void import_usage(FILE *f)
{
    fprintf(f,
        "usage: vlcalib import --trace FILE.csv --out NAME.yaml [--scenario-out S.yaml] [--model M] [--force]\n"
        "       vlcalib import --prom FILE.prom --out NAME.yaml [--scenario-out S.yaml] [--model M] [--force]\n"
        "\n"
        "--trace: a per-frame stage trace, CSV with the header frame_id,stage,ms; each\n"
        "  stage's times become an empirical distribution: one samples file per stage,\n"
        "  STEM.STAGE.ms.txt (one value in ms per line) beside the fragment (or beside\n"
        "  --out), the calibration file NAME.yaml and the raw samples NAME.samples.csv.\n"
        "--prom: a Prometheus text exposition; every NAME_bucket{stage=\"X\",le=\"B\"} N\n"
        "  histogram (cumulative counts with +Inf; le in seconds for *_seconds, else ms)\n"
        "  becomes a mixture of uniform parts, one per non-empty bucket; the +Inf bucket\n"
        "  becomes a uniform from the last finite edge to twice it (with a warning).\n"
        "\n"
        "  --out NAME.yaml      the calibration file: an op per stage (op = stage name,\n"
        "                       model = --model, default \"import\"), backend import\n"
        "  --scenario-out S     write the stages: fragment to S instead of standard output\n"
        "  --model M            the model field of the calibration file's ops\n"
        "  --force              replace existing outputs\n"
        "Every output is written atomically. Exit status: 0 done, 2 bad input or usage.\n");
}

/* NAME.yaml / NAME.yml / NAME -> NAME into buf. */
static void path_stem(const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "%s", path);
    size_t n = strlen(buf);
    if (n > 5 && !strcmp(buf + n - 5, ".yaml"))
        buf[n - 5] = '\0';
    else if (n > 4 && !strcmp(buf + n - 4, ".yml"))
        buf[n - 4] = '\0';
}

/* Write via out_file; 0, or -1 with a message. */
typedef int (*import_writer)(FILE *f, const void *arg, int i);

static int import_write_file(const char *path, import_writer w, const void *arg, int i, char *msg, size_t n)
{
    out_file of;
    if (out_open(&of, path, msg, n))
        return -1;
    if (w(of.f, arg, i)) {
        out_abort(&of);
        snprintf(msg, n, "%.900s: write error", path);
        return -1;
    }
    return out_commit(&of, msg, n);
}

typedef struct {
    const import_trace *t;
    const import_prom *p;
    const char *source, *model;
    char (*files)[4096];
} import_job;

static int w_samples(FILE *f, const void *a, int i) { return import_samples_write(f, &((const import_job *)a)->t->stages[i]); }
static int w_csv(FILE *f, const void *a, int i)
{
    (void)i;
    const import_job *j = a;
    return import_trace_samples_csv(f, j->t, j->model);
}
static int w_fragment(FILE *f, const void *a, int i)
{
    (void)i;
    const import_job *j = a;
    if (j->p)
        return import_prom_fragment(f, j->p, j->source);
    const char **names = malloc((size_t)(j->t->nstages > 0 ? j->t->nstages : 1) * sizeof *names);
    if (!names)
        return -1;
    for (int k = 0; k < j->t->nstages; k++)
        names[k] = j->files[k];
    int rc = import_trace_fragment(f, j->t, j->source, names);
    free(names);
    return rc;
}

static int import_main(int argc, char **argv, FILE *out, FILE *err)
{
    const char *trace = NULL, *prom = NULL, *yaml = NULL, *scen = NULL, *model = "import";
    bool force = false;
    char msg[1024];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            import_usage(out);
            return 0;
        }
        if (!strcmp(a, "--force")) {
            force = true;
            continue;
        }
        const char **dst = !strcmp(a, "--trace") ? &trace : !strcmp(a, "--prom") ? &prom :
                           !strcmp(a, "--out") ? &yaml : !strcmp(a, "--scenario-out") ? &scen :
                           !strcmp(a, "--model") ? &model : NULL;
        if (!dst) {
            fprintf(err, "vlcalib import: unknown option '%s' (see vlcalib import --help)\n", a);
            return 2;
        }
        if (!v) {
            fprintf(err, "vlcalib import: %s needs a value\n", a);
            return 2;
        }
        *dst = v;
        i++;
    }
    if (!trace == !prom) {
        fprintf(err, "vlcalib import: give one of --trace FILE or --prom FILE (see vlcalib import --help)\n");
        return 2;
    }
    if (!yaml || !strcmp(yaml, "-")) {
        fprintf(err, "vlcalib import: --out NAME.yaml (the calibration file) is required\n");
        return 2;
    }
    if (!*model || strlen(model) >= CALF_STR) {
        fprintf(err, "vlcalib import: --model must be 1 to %d characters\n", CALF_STR - 1);
        return 2;
    }
    const char *src = trace ? trace : prom;
    FILE *in = fopen(src, "r");
    if (!in) {
        fprintf(err, "vlcalib import: cannot open %s: %s\n", src, strerror(errno));
        return 2;
    }
    import_trace t = { 0 };
    import_prom p = { 0 };
    calf_file cal = { 0 };
    char (*files)[4096] = NULL;
    int status = 2, rc = trace ? import_trace_read(in, src, &t, msg, sizeof msg)
                               : import_prom_read(in, src, &p, msg, sizeof msg);
    fclose(in);
    if (rc)
        goto fail;
    if (trace ? import_trace_calfile(&t, model, &cal, msg, sizeof msg)
              : import_prom_calfile(&p, model, &cal, msg, sizeof msg))
        goto fail;
    /* every destination is checked before anything is written */
    char samples[4096], stem[4096];
    if (out_check(yaml, force, msg, sizeof msg) || (scen && strcmp(scen, "-") && out_check(scen, force, msg, sizeof msg)))
        goto fail;
    if (trace) {
        if (calfile_samples_path(yaml, samples, sizeof samples)) {
            snprintf(msg, sizeof msg, "--out name too long");
            goto fail;
        }
        if (out_check(samples, force, msg, sizeof msg))
            goto fail;
        bool beside_scen = scen && strcmp(scen, "-");
        path_stem(beside_scen ? scen : yaml, stem, sizeof stem);
        if (!(files = calloc((size_t)t.nstages, sizeof *files))) {
            snprintf(msg, sizeof msg, "out of memory");
            goto fail;
        }
        for (int i = 0; i < t.nstages; i++) {
            int len = snprintf(files[i], sizeof files[i], "%s.%s.ms.txt", stem, t.stages[i].name);
            if (len < 0 || (size_t)len >= sizeof files[i]) {
                snprintf(msg, sizeof msg, "output name too long");
                goto fail;
            }
            if (out_check(files[i], force, msg, sizeof msg))
                goto fail;
        }
    }
    import_job job = { trace ? &t : NULL, prom ? &p : NULL, src, model, files };
    char comment[4096];
    snprintf(comment, sizeof comment,
             "vlcalib import (format: calib/README.md, \"Import from production\"): %s,\n"
             "one op per stage (op = stage name, one point at batch 1)%s",
             src, trace ? "; raw samples beside this file" :
                          "; statistics of the histogram's piecewise-uniform distribution");
    if (calfile_save(yaml, &cal, comment, force, msg, sizeof msg))
        goto fail;
    fprintf(err, "vlcalib import: wrote %s\n", yaml);
    if (trace) {
        if (import_write_file(samples, w_csv, &job, 0, msg, sizeof msg))
            goto fail;
        fprintf(err, "vlcalib import: wrote %s\n", samples);
        for (int i = 0; i < t.nstages; i++) {
            if (import_write_file(files[i], w_samples, &job, i, msg, sizeof msg))
                goto fail;
            fprintf(err, "vlcalib import: wrote %s (%zu samples of stage %s)\n", files[i], t.stages[i].n,
                    t.stages[i].name);
        }
        /* beside the fragment: its sample files by their base names */
        if (scen && strcmp(scen, "-"))
            for (int i = 0; i < t.nstages; i++) {
                const char *b = strrchr(files[i], '/');
                if (b)
                    memmove(files[i], b + 1, strlen(b + 1) + 1);
            }
    } else {
        for (int i = 0; i < p.nstages; i++)
            for (int k = 0; k < p.stages[i].nwarn; k++)
                fprintf(err, "vlcalib import: warning: %s\n", p.stages[i].warn[k]);
    }
    if (scen && strcmp(scen, "-")) {
        if (import_write_file(scen, w_fragment, &job, 0, msg, sizeof msg))
            goto fail;
        fprintf(err, "vlcalib import: wrote %s\n", scen);
    } else if (w_fragment(out, &job, 0)) {
        snprintf(msg, sizeof msg, "write error on standard output");
        goto fail;
    }
    status = 0;
    goto done;
fail:
    fprintf(err, "vlcalib import: %s\n", msg);
done:
    free(files);
    calf_free(&cal);
    import_trace_free(&t);
    import_prom_free(&p);
    return status;
}

/* ---- main ---- */

int vlcalib_main(int argc, char **argv, FILE *out, FILE *err)
{
    options o;
    char msg[512];
    if (argc >= 2 && !strcmp(argv[1], "import"))
        return import_main(argc - 1, argv + 1, out, err);
    if (argc >= 2 && !strcmp(argv[1], "decode"))
        return vlcalib_decode_main(argc - 1, argv + 1, out, err);
    if (argc >= 2 && !strcmp(argv[1], "wakeup"))
        return vlcalib_wakeup_main(argc - 1, argv + 1, out, err);
    if (parse_args(argc, argv, &o, msg, sizeof msg)) {
        fprintf(err, "vlcalib: %s (see vlcalib --help)\n", msg);
        return 2;
    }
    if (o.help) {
        usage(out);
        return 0;
    }
    if (o.list) {
        for (size_t i = 0; i < preset_count(); i++) {
            const preset_model *m = preset_at(i);
            fprintf(out, "%-18s", m->name);
            if (m->vision)
                fprintf(out, " vision: %d layers, width %d, %d heads, MLP %d, %d tokens (patch %d, image %dx%d)",
                        m->vision->layers, m->vision->width, m->vision->heads, m->vision->mlp,
                        preset_vision_tokens(m->vision), m->vision->patch, m->vision->image_h, m->vision->image_w);
            if (m->llm)
                fprintf(out, "%s llm: %d layers, width %d, %d heads / %d KV heads, MLP %d", m->vision ? ";" : "",
                        m->llm->layers, m->llm->width, m->llm->heads, m->llm->kv_heads, m->llm->mlp);
            fprintf(out, "\n");
        }
        return 0;
    }
    if (!o.backend) {
        fprintf(err, "vlcalib: --backend cpu|cuda is required (see vlcalib --help)\n");
        return 2;
    }
    if (!strcmp(o.backend, "cuda") && !cuda_compiled()) {
        fprintf(err, "vlcalib: --backend cuda: %s\n", cuda_error(NULL));
        return 2;
    }
    cpu_set_threads(o.threads);
    if (o.check)
        return run_check(&o, out, err);
    if (!o.model) {
        fprintf(err, "vlcalib: --model is required (vlcalib --list shows the presets)\n");
        return 2;
    }
    const preset_model *m = preset_find(o.model);
    if (!m) {
        fprintf(err, "vlcalib: unknown model '%s' (vlcalib --list shows the presets)\n", o.model);
        return 2;
    }
    unsigned has = (m->vision ? 1u << OP_ENCODE | 1u << OP_REDUCE : 0) |
                   (m->llm ? 1u << OP_PREFILL | 1u << OP_DECODE : 0);
    unsigned ops = o.ops ? o.ops : has;
    for (int op = 0; op < OP_COUNT; op++)
        if ((ops & (1u << op)) && !(has & (1u << op))) {
            fprintf(err, "vlcalib: model %s has no %s op (it is %s)\n", m->name, op_names[op],
                    m->vision ? "a vision encoder" : "an LLM");
            return 2;
        }
    if (!o.out) {
        fprintf(err, "vlcalib: --out FILE.yaml (or FILE.csv) is required\n");
        return 2;
    }
    if (out_check(o.out, o.force, msg, sizeof msg)) {
        fprintf(err, "vlcalib: %s\n", msg);
        return 2;
    }
    if (!vlcalib_csv_only(o.out)) {
        char samples[4096];
        if (!strcmp(o.out, "-")) {
            fprintf(err, "vlcalib: --out - is only for FILE.csv output; a calibration file needs a name\n");
            return 2;
        }
        if (calfile_samples_path(o.out, samples, sizeof samples)) {
            fprintf(err, "vlcalib: --out name too long\n");
            return 2;
        }
        if (out_check(samples, o.force, msg, sizeof msg)) {
            fprintf(err, "vlcalib: %s\n", msg);
            return 2;
        }
    }
    return run_grid(&o, m, ops, out, err);
}
