/* test_calib.c — the calibration kernels (calib/): the CPU float32 path
 * against the double reference on the tiny presets and odd shapes, ToMe
 * merging worked by hand and its conservation laws, decode against separate
 * prefills, causality, the presets and weights, the timing harness, and the
 * vlcalib command run in process.
 *
 * Every test draws its random inputs from its own fixed stream, so a
 * failure reproduces; `--verbose` logs the relative errors observed. These
 * tests must never need a GPU or the network, and never run a large preset. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_randist.h>
#include "calib/cpu.h"
#include "calib/harness.h"
#include "calib/presets.h"
#include "calib/ref.h"
#include "calib/vlcalib.h"
#include "calib/weights.h"
#include "sim/rng.h"

#define TOL 1e-4
#define WSEED 4242

/* ---- helpers ---- */

static gsl_rng *stream(uint32_t id)
{
    gsl_rng *r = rng_stream(20240611, id, 0);
    cr_assert_not_null(r);
    return r;
}

static float *gauss(gsl_rng *r, size_t n, double sd)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    cr_assert_not_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)gsl_ran_gaussian_ziggurat(r, sd);
    return p;
}

static double *dup_double(const float *x, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    cr_assert_not_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* ||y - ref|| / ||ref|| */
static double rel_err(const float *y, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / den);
}

static double rel_err_ff(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / den);
}

static const preset_vision *tiny_vision(void) { return preset_find("tiny")->vision; }
static const preset_llm *tiny_llm(void) { return preset_find("tiny")->llm; }

/* ---- presets and weights ---- */

Test(calib, presets_shapes)
{
    static const struct { const char *name; int tokens; } v[] = {
        { "siglip-so400m-384", 729 }, { "siglip-base-224", 196 }, { "vit-l-14-224", 256 }, { "tiny", 49 },
    };
    char err[256];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const preset_model *m = preset_find(v[i].name);
        cr_assert_not_null(m, "%s", v[i].name);
        cr_assert_not_null(m->vision);
        cr_expect_eq(preset_vision_tokens(m->vision), v[i].tokens, "%s", v[i].name);
        cr_expect_eq(preset_vision_check(m->vision, err, sizeof err), 0, "%s", err);
    }
    const preset_llm *l = preset_find("llama-3-8b")->llm;
    cr_expect_eq(preset_llm_head_dim(l), 128);
    cr_expect_eq(preset_llm_kv_dim(l), 1024);
    cr_expect_eq(preset_llm_group(l), 4);
    cr_expect_eq(preset_llm_group(preset_find("qwen2-7b")->llm), 7);
    for (size_t i = 0; i < preset_count(); i++)
        if (preset_at(i)->llm)
            cr_expect_eq(preset_llm_check(preset_at(i)->llm, err, sizeof err), 0, "%s", err);
    cr_expect_null(preset_find("gpt-5"));
    preset_llm bad = *l;
    bad.kv_heads = 5;
    cr_expect_eq(preset_llm_check(&bad, err, sizeof err), -1);
    cr_expect(strstr(err, "kv_heads") != NULL, "%s", err);
}

Test(calib, weights_reproducible_nonzero_and_cycled)
{
    char err[256];
    preset_vision c = *tiny_vision();
    c.layers = 5;
    weights_vision a, b, cyc;
    cr_assert_eq(weights_vision_init(&a, &c, 9, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(weights_vision_init(&b, &c, 9, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(weights_vision_init(&cyc, &c, 9, 2, err, sizeof err), 0, "%s", err);
    cr_expect_eq(a.n_sets, 5);
    cr_expect_eq(cyc.n_sets, 2);
    size_t D = (size_t)c.width;
    cr_expect_eq(memcmp(a.set[3].w_fc1, b.set[3].w_fc1, D * c.mlp * sizeof(float)), 0);
    /* A set's values do not depend on how many sets there are. */
    cr_expect_eq(memcmp(a.set[1].w_qkv, cyc.set[1].w_qkv, D * 3 * D * sizeof(float)), 0);
    cr_expect_eq(weights_vision_layer(&cyc, 3), &cyc.set[1]);
    /* Never zeros; scale 1/sqrt(fan_in). */
    double ss = 0;
    size_t zeros = 0, n = D * 3 * D;
    for (size_t i = 0; i < n; i++) {
        ss += a.set[0].w_qkv[i] * a.set[0].w_qkv[i];
        zeros += a.set[0].w_qkv[i] == 0;
    }
    cr_expect_eq(zeros, 0);
    cr_expect_float_eq(sqrt(ss / n), 1 / sqrt((double)D), 0.05 / sqrt((double)D));
    cr_expect_neq(a.set[0].w_qkv[0], a.set[1].w_qkv[0]);
    weights_vision_free(&a);
    weights_vision_free(&b);
    weights_vision_free(&cyc);

    weights_llm l;
    cr_assert_eq(weights_llm_init(&l, tiny_llm(), 9, 0, err, sizeof err), 0, "%s", err);
    cr_expect_neq(l.set[0].w_13[0], 0.0f);
    weights_llm_round_bf16(&l);
    cr_expect_eq(weights_bf16_round(l.set[1].w_2[7]), l.set[1].w_2[7]);
    weights_llm_free(&l);
    cr_expect_eq(weights_bf16_round(1.0f + 0x1p-9f), 1.0f);           /* tie to even */
    cr_expect_eq(weights_bf16_round(1.0f + 0x1p-8f + 0x1p-9f), 1.0f + 0x1p-7f);
}

/* ---- vision encoder ---- */

static double vision_case(const preset_vision *cfg, int batch, uint32_t id)
{
    char err[256];
    weights_vision w;
    cr_assert_eq(weights_vision_init(&w, cfg, WSEED, 0, err, sizeof err), 0, "%s", err);
    gsl_rng *r = stream(id);
    size_t npix = (size_t)batch * cfg->channels * cfg->image_h * cfg->image_w;
    size_t nout = (size_t)batch * preset_vision_tokens(cfg) * cfg->width;
    float *pix = gauss(r, npix, 1.0), *out = malloc(nout * sizeof *out);
    float *ws = malloc(cpu_vision_ws_floats(cfg, batch) * sizeof *ws);
    double *dpix = dup_double(pix, npix), *ref = malloc(nout * sizeof *ref);
    cr_assert(out && ws && ref);
    cr_assert_eq(ref_vision_encode(&w, batch, dpix, ref), 0);
    cpu_vision_encode(&w, batch, pix, out, ws);
    double e = rel_err(out, ref, nout);
    cr_log_info("encode %s batch %d (%d tokens): rel err %.3e", cfg->name, batch, preset_vision_tokens(cfg), e);
    free(pix); free(out); free(ws); free(dpix); free(ref);
    gsl_rng_free(r);
    weights_vision_free(&w);
    return e;
}

Test(calib, vision_tiny_batches)
{
    for (int b = 1; b <= 3; b++) {
        double e = vision_case(tiny_vision(), b, (uint32_t)b);
        cr_expect(e <= TOL, "batch %d: rel err %.3e", b, e);
    }
}

Test(calib, vision_odd_shapes)
{
    /* 15 tokens (5 x 3 from a 23 x 13 image: edge pixels dropped), head dim 16. */
    preset_vision a = { "odd-a", 2, 48, 3, 100, 4, 23, 13, 3, 1e-6 };
    /* 21 tokens, 5 heads of 8, one channel, 3 layers. */
    preset_vision b = { "odd-b", 3, 40, 5, 72, 5, 35, 15, 1, 1e-5 };
    /* One token, one head. */
    preset_vision c = { "odd-c", 1, 24, 1, 30, 6, 6, 6, 2, 1e-6 };
    double e;
    cr_expect((e = vision_case(&a, 2, 11)) <= TOL, "odd-a: %.3e", e);
    cr_expect((e = vision_case(&b, 3, 12)) <= TOL, "odd-b: %.3e", e);
    cr_expect((e = vision_case(&c, 1, 13)) <= TOL, "odd-c: %.3e", e);
}

/* ---- ToMe ---- */

typedef struct { int n, d, r; const double *x, *size, *want_x, *want_size; } tome_case;

static void tome_hand(const tome_case *t)
{
    int n_out = t->n - t->r;
    double rx[32], rs[16];
    float fx[32], fsz[16], ox[32], os[16];
    for (int i = 0; i < t->n * t->d; i++)
        fx[i] = (float)t->x[i];
    for (int i = 0; i < t->n; i++)
        fsz[i] = (float)t->size[i];
    void *ws = malloc(cpu_tome_merge_ws_bytes(t->n, t->d));
    cr_assert_eq(ref_tome_merge(t->n, t->d, t->x, t->size, t->r, rx, rs), 0);
    cr_assert_eq(cpu_tome_merge(t->n, t->d, fx, fsz, t->r, ox, os, ws), 0);
    for (int i = 0; i < n_out; i++) {
        cr_expect_float_eq(rs[i], t->want_size[i], 1e-15, "r=%d ref size %d", t->r, i);
        cr_expect_float_eq(os[i], t->want_size[i], 1e-6, "r=%d cpu size %d", t->r, i);
        for (int e = 0; e < t->d; e++) {
            double want = t->want_x[i * t->d + e];
            cr_expect_float_eq(rx[i * t->d + e], want, 1e-12, "r=%d ref token %d dim %d", t->r, i, e);
            cr_expect_float_eq(ox[i * t->d + e], want, 1e-6, "r=%d cpu token %d dim %d", t->r, i, e);
        }
    }
    free(ws);
}

/* Four tokens: A = {t0, t2}, B = {t1, t3}.
 * t0 = (1, 0), t1 = (0, 1), t2 = (0, 2), t3 = (1, 0.1).
 * cos(t0, t1) = 0, cos(t0, t3) = 1/sqrt(1.01) = 0.995 -> t0's match t3;
 * cos(t2, t1) = 1, cos(t2, t3) = 0.0995 -> t2's match t1 (score 1, the highest). */
Test(calib, tome_hand_four_tokens)
{
    static const double x[] = { 1, 0, 0, 1, 0, 2, 1, 0.1 }, s[] = { 1, 1, 1, 1 };
    /* r = 1: t2 merges into t1 = (0*1 + ... ) -> ((0,1) + (0,2)) / 2 = (0, 1.5), size 2.
     * Out: unmerged A [t0], then B [t1', t3]. */
    static const double x1[] = { 1, 0, 0, 1.5, 1, 0.1 }, s1[] = { 1, 2, 1 };
    /* r = 2: t0 also merges into t3: ((1,0) + (1,0.1)) / 2 = (1, 0.05). */
    static const double x2[] = { 0, 1.5, 1, 0.05 }, s2[] = { 2, 2 };
    /* r = 0: unchanged, reordered A then B. */
    static const double x0[] = { 1, 0, 0, 2, 0, 1, 1, 0.1 };
    tome_hand(&(tome_case){ 4, 2, 1, x, s, x1, s1 });
    tome_hand(&(tome_case){ 4, 2, 2, x, s, x2, s2 });
    tome_hand(&(tome_case){ 4, 2, 0, x, s, x0, s });
}

/* Five tokens with sizes: A = {t0, t2, t4}, B = {t1, t3}.
 * t0 = (1,0) s2, t1 = (2,0) s1, t2 = (0,1) s1, t3 = (0,3) s3, t4 = (1,0.2) s1.
 * Best: t0 -> t1 (cos 1), t2 -> t3 (cos 1), t4 -> t1 (cos 1/sqrt(1.04) = 0.98).
 * t0 and t2 tie at exactly 1: the lower index (t0) goes first. */
Test(calib, tome_hand_sizes_and_ties)
{
    static const double x[] = { 1, 0, 2, 0, 0, 1, 0, 3, 1, 0.2 }, s[] = { 2, 1, 1, 3, 1 };
    /* r = 1: t0 into t1: (2*(1,0) + 1*(2,0)) / 3 = (4/3, 0), size 3. Out [t2, t4, t1', t3]. */
    static const double x1[] = { 0, 1, 1, 0.2, 4.0 / 3, 0, 0, 3 }, s1[] = { 1, 1, 3, 3 };
    /* r = 2: t2 into t3 as well: (1*(0,1) + 3*(0,3)) / 4 = (0, 2.5), size 4. */
    static const double x2[] = { 1, 0.2, 4.0 / 3, 0, 0, 2.5 }, s2[] = { 1, 3, 4 };
    /* r = 3 = |A|: t4 into t1 too: (2*(1,0) + (2,0) + (1,0.2)) / 4 = (1.25, 0.05). */
    static const double x3[] = { 1.25, 0.05, 0, 2.5 }, s3[] = { 4, 4 };
    tome_hand(&(tome_case){ 5, 2, 1, x, s, x1, s1 });
    tome_hand(&(tome_case){ 5, 2, 2, x, s, x2, s2 });
    tome_hand(&(tome_case){ 5, 2, 3, x, s, x3, s3 });
}

Test(calib, tome_rejects_bad_r)
{
    double x[6] = { 1, 2, 3, 4, 5, 6 }, s[3] = { 1, 1, 1 }, ox[6], os[3];
    float fx[6] = { 1, 2, 3, 4, 5, 6 }, fs[3] = { 1, 1, 1 }, fox[6], fos[3];
    void *ws = malloc(cpu_tome_merge_ws_bytes(3, 2));
    cr_expect_eq(ref_tome_merge(3, 2, x, s, 3, ox, os), -1);   /* |A| = 2 */
    cr_expect_eq(cpu_tome_merge(3, 2, fx, fs, 3, fox, fos, ws), -1);
    cr_expect_eq(ref_tome_merge(3, 2, x, s, -1, ox, os), -1);
    cr_expect_eq(ref_tome_merge(1, 2, x, s, 1, ox, os), -1);   /* no B token */
    cr_expect_eq(ref_tome_reduce(3, 0, 2, x, NULL, ox, os), -1);
    cr_expect_eq(cpu_tome_reduce(1, 3, 4, 2, fx, NULL, fox, fos, ws), -1);
    free(ws);
}

/* Random features, multi-round reduction: CPU vs reference, and the
 * conservation laws on both. */
Test(calib, tome_reduce_random_conservation)
{
    const int B = 2, d = 64;
    static const struct { int n_in, n_out; } cases[] = {
        { 49, 37 }, { 49, 25 }, { 49, 8 }, { 49, 1 }, { 49, 49 }, { 50, 13 }, { 7, 3 }, { 2, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n_in = cases[c].n_in, n_out = cases[c].n_out;
        gsl_rng *r = stream(100 + (uint32_t)c);
        size_t nx = (size_t)B * n_in * d, ny = (size_t)B * n_out * d;
        float *x = gauss(r, nx, 1.0), *y = malloc(ny * sizeof *y), *sz = malloc((size_t)B * n_out * sizeof *sz);
        float *s_in = malloc((size_t)B * n_in * sizeof *s_in);
        double *dx = dup_double(x, nx), *ry = malloc(ny * sizeof *ry), *rs = malloc((size_t)B * n_out * sizeof *rs);
        double *ds_in = malloc((size_t)B * n_in * sizeof *ds_in);
        void *ws = malloc(cpu_tome_reduce_ws_bytes(n_in, d));
        cr_assert(y && sz && s_in && ry && rs && ds_in && ws);
        /* Sizes from an earlier stage: small integers. */
        for (int i = 0; i < B * n_in; i++)
            ds_in[i] = s_in[i] = (float)(1 + gsl_rng_uniform_int(r, 3));
        cr_assert_eq(cpu_tome_reduce(B, n_in, n_out, d, x, s_in, y, sz, ws), 0);
        for (int b = 0; b < B; b++) {
            size_t xo = (size_t)b * n_in * d, yo = (size_t)b * n_out * d;
            cr_assert_eq(ref_tome_reduce(n_in, n_out, d, dx + xo, ds_in + (size_t)b * n_in, ry + yo,
                                         rs + (size_t)b * n_out), 0);
            /* Conservation: sizes sum to the input's, size-weighted sums equal. */
            double in_size = 0, ref_size = 0, cpu_size = 0;
            for (int t = 0; t < n_in; t++)
                in_size += ds_in[(size_t)b * n_in + t];
            for (int t = 0; t < n_out; t++) {
                ref_size += rs[(size_t)b * n_out + t];
                cpu_size += sz[(size_t)b * n_out + t];
            }
            cr_expect_eq(ref_size, in_size, "case %zu: ref sizes", c);
            cr_expect_eq(cpu_size, in_size, "case %zu: cpu sizes", c);
            for (int e = 0; e < d; e++) {
                double win = 0, wref = 0, wcpu = 0, scale = 0;
                for (int t = 0; t < n_in; t++) {
                    win += ds_in[(size_t)b * n_in + t] * dx[xo + (size_t)t * d + e];
                    scale += fabs(ds_in[(size_t)b * n_in + t] * dx[xo + (size_t)t * d + e]);
                }
                for (int t = 0; t < n_out; t++) {
                    wref += rs[(size_t)b * n_out + t] * ry[yo + (size_t)t * d + e];
                    wcpu += (double)sz[(size_t)b * n_out + t] * y[yo + (size_t)t * d + e];
                }
                cr_expect(fabs(wref - win) <= 1e-12 * scale, "case %zu dim %d: ref sum %g vs %g", c, e, wref, win);
                cr_expect(fabs(wcpu - win) <= 1e-6 * scale, "case %zu dim %d: cpu sum %g vs %g", c, e, wcpu, win);
            }
        }
        for (int i = 0; i < B * n_out; i++)
            cr_expect_eq(sz[i], rs[i], "case %zu: size %d differs: the matching differs", c, i);
        double e = rel_err(y, ry, ny);
        cr_log_info("reduce %d -> %d: rel err %.3e", n_in, n_out, e);
        cr_expect(e <= TOL, "reduce %d -> %d: rel err %.3e", n_in, n_out, e);
        free(x); free(y); free(sz); free(s_in); free(dx); free(ry); free(rs); free(ds_in); free(ws);
        gsl_rng_free(r);
    }
}

/* ---- LLM ---- */

typedef struct {
    weights_llm w;
    cpu_kv ck;
    ref_kv rk;
} llm_fixture;

/* Weights, and caches of `seqs` sequences whose first L positions hold the
 * same random keys and values for both paths. */
static void llm_setup(llm_fixture *f, const preset_llm *cfg, int seqs, int L, int cap, gsl_rng *r)
{
    char err[256];
    cr_assert_eq(weights_llm_init(&f->w, cfg, WSEED, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cpu_kv_init(&f->ck, cfg, seqs, cap), 0);
    cr_assert_eq(ref_kv_init(&f->rk, cfg, seqs, cap), 0);
    for (int s = 0; s < seqs; s++)
        for (int l = 0; l < cfg->layers; l++)
            for (int g = 0; g < cfg->kv_heads; g++)
                for (int p = 0; p < L; p++) {
                    size_t at = cpu_kv_at(&f->ck, s, l, g, p);
                    cr_assert_eq(at, ref_kv_at(&f->rk, s, l, g, p));
                    for (int e = 0; e < f->ck.head_dim; e++) {
                        f->ck.k[at + e] = (float)gsl_ran_gaussian_ziggurat(r, 1.0);
                        f->ck.v[at + e] = (float)gsl_ran_gaussian_ziggurat(r, 1.0);
                        f->rk.k[at + e] = f->ck.k[at + e];
                        f->rk.v[at + e] = f->ck.v[at + e];
                    }
                }
}

static void llm_teardown(llm_fixture *f)
{
    weights_llm_free(&f->w);
    cpu_kv_free(&f->ck);
    ref_kv_free(&f->rk);
}

/* The new keys and values both paths stored at positions L..L+n-1. */
static double cache_err(const llm_fixture *f, int seqs, int L, int n)
{
    double num = 0, den = 0;
    for (int s = 0; s < seqs; s++)
        for (int l = 0; l < f->ck.layers; l++)
            for (int g = 0; g < f->ck.kv_heads; g++)
                for (int p = L; p < L + n; p++)
                    for (int e = 0; e < f->ck.head_dim; e++) {
                        size_t at = cpu_kv_at(&f->ck, s, l, g, p) + e;
                        num += pow(f->ck.k[at] - f->rk.k[at], 2) + pow(f->ck.v[at] - f->rk.v[at], 2);
                        den += pow(f->rk.k[at], 2) + pow(f->rk.v[at], 2);
                    }
    return sqrt(num / den);
}

static double prefill_case(const preset_llm *cfg, int L, int N, uint32_t id)
{
    gsl_rng *r = stream(id);
    llm_fixture f;
    llm_setup(&f, cfg, 1, L, L + N, r);
    size_t nx = (size_t)N * cfg->width;
    float *x = gauss(r, nx, 1.0), *y = malloc(nx * sizeof *y);
    float *ws = malloc(cpu_llm_ws_floats(cfg, N, L + N) * sizeof *ws);
    double *dx = dup_double(x, nx), *ry = malloc(nx * sizeof *ry);
    cr_assert(y && ws && ry);
    cr_assert_eq(ref_llm_prefill(&f.w, &f.rk, 0, L, N, dx, ry), 0);
    cr_assert_eq(cpu_llm_prefill(&f.w, &f.ck, 0, L, N, x, y, ws), 0);
    double e = rel_err(y, ry, nx), ec = cache_err(&f, 1, L, N);
    cr_log_info("prefill %s L=%d N=%d: rel err %.3e, new cache entries %.3e", cfg->name, L, N, e, ec);
    cr_expect(ec <= TOL, "prefill %s L=%d N=%d: cache rel err %.3e", cfg->name, L, N, ec);
    free(x); free(y); free(ws); free(dx); free(ry);
    llm_teardown(&f);
    gsl_rng_free(r);
    return e;
}

/* Odd LLM shapes: MHA (kv = heads), MQA (one KV head), group 3, 3 layers. */
static const preset_llm odd_mha = { "odd-mha", 2, 48, 3, 3, 80, 10000.0, 1e-5 };
static const preset_llm odd_mqa = { "odd-mqa", 1, 40, 5, 1, 50, 500000.0, 1e-6 };
static const preset_llm odd_gqa = { "odd-gqa", 3, 72, 6, 2, 100, 1000000.0, 1e-5 };

Test(calib, prefill_tiny_and_odd)
{
    static const struct { int L, N; } tiny_cases[] = { { 0, 1 }, { 0, 7 }, { 13, 5 }, { 1, 1 }, { 30, 17 }, { 200, 3 } };
    for (size_t i = 0; i < sizeof tiny_cases / sizeof tiny_cases[0]; i++) {
        double e = prefill_case(tiny_llm(), tiny_cases[i].L, tiny_cases[i].N, 200 + (uint32_t)i);
        cr_expect(e <= TOL, "tiny L=%d N=%d: rel err %.3e", tiny_cases[i].L, tiny_cases[i].N, e);
    }
    double e;
    cr_expect((e = prefill_case(&odd_mha, 0, 9, 210)) <= TOL, "mha: %.3e", e);
    cr_expect((e = prefill_case(&odd_mqa, 11, 6, 211)) <= TOL, "mqa: %.3e", e);
    cr_expect((e = prefill_case(&odd_gqa, 7, 13, 212)) <= TOL, "gqa: %.3e", e);
    /* A position where a float angle would be off by ~1e-3 rad. */
    cr_expect((e = prefill_case(tiny_llm(), 5000, 2, 213)) <= TOL, "long cache: %.3e", e);
}

static double decode_case(const preset_llm *cfg, int B, int L, uint32_t id)
{
    gsl_rng *r = stream(id);
    llm_fixture f;
    llm_setup(&f, cfg, B, L, L + 1, r);
    size_t nx = (size_t)B * cfg->width;
    float *x = gauss(r, nx, 1.0), *y = malloc(nx * sizeof *y);
    float *ws = malloc(cpu_llm_ws_floats(cfg, B, L + 1) * sizeof *ws);
    double *dx = dup_double(x, nx), *ry = malloc(nx * sizeof *ry);
    cr_assert(y && ws && ry);
    cr_assert_eq(ref_llm_decode(&f.w, &f.rk, B, L, dx, ry), 0);
    cr_assert_eq(cpu_llm_decode(&f.w, &f.ck, B, L, x, y, ws), 0);
    double e = rel_err(y, ry, nx), ec = cache_err(&f, B, L, 1);
    cr_log_info("decode %s B=%d L=%d: rel err %.3e, new cache entries %.3e", cfg->name, B, L, e, ec);
    cr_expect(ec <= TOL, "decode %s B=%d L=%d: cache rel err %.3e", cfg->name, B, L, ec);
    free(x); free(y); free(ws); free(dx); free(ry);
    llm_teardown(&f);
    gsl_rng_free(r);
    return e;
}

Test(calib, decode_batches_and_cache_lengths)
{
    static const struct { int B, L; } cases[] = { { 1, 0 }, { 1, 17 }, { 2, 1 }, { 3, 40 }, { 5, 9 }, { 8, 64 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double e = decode_case(tiny_llm(), cases[i].B, cases[i].L, 300 + (uint32_t)i);
        cr_expect(e <= TOL, "B=%d L=%d: rel err %.3e", cases[i].B, cases[i].L, e);
    }
    double e;
    cr_expect((e = decode_case(&odd_gqa, 3, 21, 310)) <= TOL, "gqa: %.3e", e);
    cr_expect((e = decode_case(&odd_mqa, 4, 5, 311)) <= TOL, "mqa: %.3e", e);
}

/* Decode of B sequences = B prefills of one token each at the same cache
 * length: a different code path (batched GEMMs, grouped attention) must
 * give the same outputs and the same new cache entries. */
Test(calib, decode_equals_separate_prefills)
{
    const preset_llm *cfg = &odd_gqa;
    const int B = 4, L = 23;
    gsl_rng *r = stream(400);
    llm_fixture f;
    llm_setup(&f, cfg, B, L, L + 1, r);
    cpu_kv ck2;
    cr_assert_eq(cpu_kv_init(&ck2, cfg, B, L + 1), 0);
    size_t nkv = (size_t)B * cfg->layers * cfg->kv_heads * (L + 1) * f.ck.head_dim;
    memcpy(ck2.k, f.ck.k, nkv * sizeof(float));
    memcpy(ck2.v, f.ck.v, nkv * sizeof(float));
    size_t D = (size_t)cfg->width;
    float *x = gauss(r, B * D, 1.0), *yd = malloc(B * D * sizeof *yd), *yp = malloc(B * D * sizeof *yp);
    float *ws = malloc(cpu_llm_ws_floats(cfg, B, L + 1) * sizeof *ws);
    cr_assert(yd && yp && ws);
    cr_assert_eq(cpu_llm_decode(&f.w, &f.ck, B, L, x, yd, ws), 0);
    for (int b = 0; b < B; b++)
        cr_assert_eq(cpu_llm_prefill(&f.w, &ck2, b, L, 1, x + b * D, yp + b * D, ws), 0);
    double e = rel_err_ff(yd, yp, B * D), ek = rel_err_ff(f.ck.k, ck2.k, nkv), ev = rel_err_ff(f.ck.v, ck2.v, nkv);
    cr_log_info("decode vs %d prefills: outputs %.3e, keys %.3e, values %.3e", B, e, ek, ev);
    cr_expect(e <= 1e-5, "outputs: %.3e", e);
    cr_expect(ek <= 1e-6 && ev <= 1e-6, "caches: %.3e %.3e", ek, ev);
    /* The reference agrees with itself the same way, exactly. */
    double *dx = dup_double(x, B * D), *rd = malloc(B * D * sizeof *rd), *rp = malloc(B * D * sizeof *rp);
    ref_kv rk2;
    cr_assert_eq(ref_kv_init(&rk2, cfg, B, L + 1), 0);
    memcpy(rk2.k, f.rk.k, nkv * sizeof(double));
    memcpy(rk2.v, f.rk.v, nkv * sizeof(double));
    cr_assert_eq(ref_llm_decode(&f.w, &f.rk, B, L, dx, rd), 0);
    for (int b = 0; b < B; b++)
        cr_assert_eq(ref_llm_prefill(&f.w, &rk2, b, L, 1, dx + b * D, rp + b * D), 0);
    cr_expect_eq(memcmp(rd, rp, B * D * sizeof *rd), 0);
    free(x); free(yd); free(yp); free(ws); free(dx); free(rd); free(rp);
    cpu_kv_free(&ck2);
    ref_kv_free(&rk2);
    llm_teardown(&f);
    gsl_rng_free(r);
}

/* Changing new token k changes no output before k, and does change k. */
Test(calib, prefill_is_causal)
{
    const preset_llm *cfg = tiny_llm();
    const int L = 6, N = 8, D = cfg->width;
    gsl_rng *r = stream(500);
    llm_fixture f;
    llm_setup(&f, cfg, 1, L, L + N, r);
    float *x = gauss(r, (size_t)N * D, 1.0), *y0 = malloc((size_t)N * D * sizeof *y0), *y1 = malloc((size_t)N * D * sizeof *y1);
    float *ws = malloc(cpu_llm_ws_floats(cfg, N, L + N) * sizeof *ws);
    double *dx = dup_double(x, (size_t)N * D), *r0 = malloc((size_t)N * D * sizeof *r0), *r1 = malloc((size_t)N * D * sizeof *r1);
    cr_assert(y0 && y1 && ws && r0 && r1);
    cr_assert_eq(cpu_llm_prefill(&f.w, &f.ck, 0, L, N, x, y0, ws), 0);
    cr_assert_eq(ref_llm_prefill(&f.w, &f.rk, 0, L, N, dx, r0), 0);
    for (int k = N - 1; k >= 3; k -= 4) {   /* the last token, then a middle one */
        x[(size_t)k * D] += 1.0f;
        dx[(size_t)k * D] += 1.0;
        cr_assert_eq(cpu_llm_prefill(&f.w, &f.ck, 0, L, N, x, y1, ws), 0);
        cr_assert_eq(ref_llm_prefill(&f.w, &f.rk, 0, L, N, dx, r1), 0);
        for (int n = 0; n < N; n++) {
            double dc = 0, dr = 0, norm = 0;
            for (int j = 0; j < D; j++) {
                dc = fmax(dc, fabs(y1[(size_t)n * D + j] - y0[(size_t)n * D + j]));
                dr = fmax(dr, fabs(r1[(size_t)n * D + j] - r0[(size_t)n * D + j]));
                norm = fmax(norm, fabs(r0[(size_t)n * D + j]));
            }
            if (n < k) {
                cr_expect(dc <= 1e-6 * norm, "cpu: token %d changed by token %d (%g)", n, k, dc);
                cr_expect_eq(dr, 0.0, "ref: token %d changed by token %d (%g)", n, k, dr);
            } else {
                cr_expect(dc > 1e-3 * norm && dr > 1e-3 * norm, "token %d unchanged by token %d", n, k);
            }
        }
    }
    free(x); free(y0); free(y1); free(ws); free(dx); free(r0); free(r1);
    llm_teardown(&f);
    gsl_rng_free(r);
}

/* ---- harness ---- */

Test(calib, harness_stats_known_sample)
{
    double *s = malloc(100 * sizeof *s);
    for (int i = 0; i < 100; i++)
        s[i] = 100 - i;   /* 100 .. 1, unsorted order kept */
    harness_result r;
    cr_assert_eq(harness_stats(s, 100, &r), 0);
    cr_expect_float_eq(r.p50, 50.5, 1e-12);
    cr_expect_float_eq(r.p95, 95.05, 1e-12);
    cr_expect_float_eq(r.p99, 99.01, 1e-12);
    cr_expect_float_eq(r.mean, 50.5, 1e-12);
    cr_expect_float_eq(r.sd, sqrt(100.0 * 101 / 12), 1e-12);
    cr_expect_eq(r.min, 1.0);
    cr_expect_eq(r.max, 100.0);
    cr_expect_eq(r.samples[0], 100.0);
    harness_result_free(&r);
    cr_expect_null(r.samples);
    double one = 3;
    double *p = malloc(sizeof *p);
    *p = one;
    cr_assert_eq(harness_stats(p, 1, &r), 0);
    cr_expect(r.p50 == 3 && r.p99 == 3 && r.sd == 0);
    harness_result_free(&r);
}

typedef struct { int calls, slots[64]; double busy_s; int fail_at; } probe;

static int probe_op(void *ctx, int slot)
{
    probe *p = ctx;
    if (p->calls < 64)
        p->slots[p->calls] = slot;
    if (++p->calls == p->fail_at)
        return -1;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < p->busy_s);
    return 0;
}

Test(calib, harness_times_rotates_and_skips)
{
    char err[256];
    probe p = { .busy_s = 2e-4 };
    harness_result r;
    harness_opts o = { .reps = 12, .warmups = 5, .nbuf = 3 };
    cr_assert_eq(harness_time_cpu(probe_op, &p, &o, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(p.calls, 17);
    for (int i = 0; i < 17; i++)
        cr_expect_eq(p.slots[i], i % 3);
    cr_expect_eq(r.n, 12);
    cr_expect(r.min >= 0.2 && r.p50 >= r.min && r.p95 >= r.p50 && r.p99 >= r.p95, "min %g p50 %g", r.min, r.p50);
    harness_result_free(&r);

    probe slow = { .busy_s = 2e-3 };
    o.max_seconds = 0.01;   /* 17 runs of 2 ms > 10 ms */
    cr_assert_eq(harness_time_cpu(probe_op, &slow, &o, &r, err, sizeof err), 0);
    cr_expect(r.skipped);
    cr_expect_eq(slow.calls, 1);
    cr_expect(r.est_seconds > 0.01, "estimate %g s", r.est_seconds);
    cr_expect_null(r.samples);

    probe bad = { .fail_at = 9 };
    o.max_seconds = 0;
    cr_expect_eq(harness_time_cpu(probe_op, &bad, &o, &r, err, sizeof err), -1);
    cr_expect_null(r.samples);
    o.warmups = 2;
    cr_expect_eq(harness_time_cpu(probe_op, &p, &o, &r, err, sizeof err), -1);
    cr_expect(strstr(err, "warmups") != NULL, "%s", err);
}

/* ---- vlcalib ---- */

/* Run vlcalib with a NULL-terminated argument list; its output in *text. */
static int vlcalib(char **text, const char *first, ...)
{
    char *argv[32] = { "vlcalib", (char *)first };
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a; argc < 31 && (a = va_arg(ap, const char *));)
        argv[argc++] = (char *)a;
    va_end(ap);
    static char buf[1 << 16];
    FILE *out = fmemopen(buf, sizeof buf, "w");
    cr_assert_not_null(out);
    int rc = vlcalib_main(argc, argv, out, out);
    fclose(out);
    *text = buf;
    return rc;
}

static char tmpdir[64];

static void mk_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vlcalib-test-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    cr_expect_eq(system(cmd), 0);
}

Test(calib, vlcalib_usage_errors)
{
    char *t;
    cr_expect_eq(vlcalib(&t, "--help", NULL), 0);
    cr_expect(strstr(t, "usage: vlcalib") && strstr(t, "--reps"), "%s", t);
    cr_expect_eq(vlcalib(&t, "--list", NULL), 0);
    cr_expect(strstr(t, "siglip-so400m-384") && strstr(t, "729 tokens"), "%s", t);
    cr_expect_eq(vlcalib(&t, "--model", "tiny", "--out", "/tmp/x.csv", NULL), 2);
    cr_expect(strstr(t, "--backend") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "tpu", NULL), 2);
    cr_expect_eq(vlcalib(&t, "--bogus", NULL), 2);
    cr_expect(strstr(t, "unknown option '--bogus'") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "gpt-9", "--out", "/tmp/x.csv", NULL), 2);
    cr_expect(strstr(t, "unknown model 'gpt-9'") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", NULL), 2);
    cr_expect(strstr(t, "--out") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--out", "/tmp/x.csv", "--reps", "0", NULL), 2);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--out", "/tmp/x.csv", "--reps", NULL), 2);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "llama-3-8b", "--ops", "encode", "--out", "/tmp/x.csv", NULL), 2);
    cr_expect(strstr(t, "no encode op") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--ops", "encode,warp", "--out", "/tmp/x.csv", NULL), 2);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--out", "/no/such/dir/x.csv", NULL), 2);
    cr_expect(strstr(t, "does not exist") != NULL, "%s", t);
    cr_expect_eq(vlcalib(&t, "--backend", "cuda", "--model", "tiny", "--out", "/tmp/x.csv", NULL), 2);
    cr_expect(strstr(t, "CUDA=1") != NULL, "%s", t);
}

Test(calib, vlcalib_check_cpu)
{
    char *t;
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--check", NULL), 0, "%s", t);
    cr_expect(strstr(t, "all within tolerance") != NULL, "%s", t);
    cr_expect(strstr(t, "FAIL") == NULL, "%s", t);
}

static int count_lines(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += !strncmp(line, prefix, strlen(prefix));
    fclose(f);
    return n;
}

Test(calib, vlcalib_writes_csv_atomically, .init = mk_tmp, .fini = rm_tmp)
{
    char path[128], *t;
    snprintf(path, sizeof path, "%s/t.csv", tmpdir);
    cr_assert_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--ops", "reduce,decode", "--reps", "2",
                         "--out", path, NULL), 0, "%s", t);
    cr_expect(strstr(t, "smoke test") != NULL, "%s", t);
    /* reduce: 3 batches x 4 outs (37, 25, 12, 16); decode: 7 batches x 3 lengths; 2 reps each. */
    cr_expect_eq(count_lines(path, "op,model,backend,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms"), 1);
    cr_expect_eq(count_lines(path, "reduce,tiny,cpu,"), 3 * 4 * 2);
    cr_expect_eq(count_lines(path, "decode,tiny,cpu,"), 7 * 3 * 2);
    cr_expect_eq(count_lines(path, "reduce,tiny,cpu,8,49,16,0,0,1,"), 1);
    cr_expect_eq(count_lines(path, "decode,tiny,cpu,64,0,0,1,1024,0,"), 1);
    /* An existing file stays unless --force. */
    struct stat st0, st1;
    cr_assert_eq(stat(path, &st0), 0);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--ops", "encode", "--reps", "1", "--out", path, NULL), 2);
    cr_expect(strstr(t, "--force") != NULL, "%s", t);
    cr_assert_eq(stat(path, &st1), 0);
    cr_expect_eq(st0.st_size, st1.st_size);
    cr_expect_eq(count_lines(path, "encode,"), 0);
    cr_expect_eq(vlcalib(&t, "--backend", "cpu", "--model", "tiny", "--ops", "prefill", "--reps", "1", "--force",
                         "--threads", "1", "--out", path, NULL), 0, "%s", t);
    cr_expect_eq(count_lines(path, "prefill,tiny,cpu,1,0,0,"), 4 * 3);
    cr_expect_eq(count_lines(path, "decode,"), 0);
    /* No temporary left behind. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", tmpdir);
    cr_expect_eq(system(cmd), 0);
}
