/* weights.c — random weights from a fixed seed. See weights.h.
 * Never computes an op; never keeps state outside the structs it fills. */
#include "calib/weights.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include "sim/rng.h"

/* Stream ids: one per tensor; the "replication" slot of rng_stream carries
 * the layer set (STEM for the tensors outside the layers). */
enum { STEM = 0x7fffffff };
enum {
    T_PATCH = 1, T_PATCH_B, T_POS, T_LNF_G, T_LNF_B,
    T_LN1_G = 11, T_LN1_B, T_QKV, T_QKV_B, T_O, T_O_B, T_LN2_G, T_LN2_B, T_FC1, T_FC1_B, T_FC2, T_FC2_B,
    T_RMS1 = 31, T_LQKV, T_LO, T_RMS2, T_L13, T_L2,
};

/* Bump allocator over one block; with base == NULL it only counts. */
typedef struct { float *base; size_t used; } arena;

static float *take(arena *a, size_t n)
{
    float *p = a->base ? a->base + a->used : NULL;
    a->used += (n + 63) & ~(size_t)63;
    return p;
}

typedef enum { GAUSS, GAIN } fill_kind;

static int fill(float *p, size_t n, fill_kind kind, double sd, uint64_t seed, uint32_t set, uint32_t tensor)
{
    gsl_rng *r = rng_stream(seed, set, tensor);
    if (!r)
        return -1;
    for (size_t i = 0; i < n; i++) {
        double z = gsl_ran_gaussian_ziggurat(r, sd);
        p[i] = (float)(kind == GAIN ? 1.0 + z : z);
    }
    gsl_rng_free(r);
    return 0;
}

/* ---- vision ---- */

static void vlayer_layout(arena *a, const preset_vision *c, weights_vlayer *l)
{
    size_t D = (size_t)c->width, M = (size_t)c->mlp;
    l->ln1_g = take(a, D);     l->ln1_b = take(a, D);
    l->w_qkv = take(a, D * 3 * D); l->b_qkv = take(a, 3 * D);
    l->w_o = take(a, D * D);   l->b_o = take(a, D);
    l->ln2_g = take(a, D);     l->ln2_b = take(a, D);
    l->w_fc1 = take(a, D * M); l->b_fc1 = take(a, M);
    l->w_fc2 = take(a, M * D); l->b_fc2 = take(a, D);
}

static void vstem_layout(arena *a, const preset_vision *c, weights_vision *w)
{
    size_t D = (size_t)c->width, T = (size_t)preset_vision_tokens(c), K = (size_t)preset_vision_patch_dim(c);
    w->w_patch = take(a, K * D); w->b_patch = take(a, D);
    w->pos = take(a, T * D);
    w->lnf_g = take(a, D);       w->lnf_b = take(a, D);
}

size_t weights_vision_set_floats(const preset_vision *cfg)
{
    arena a = { NULL, 0 };
    weights_vlayer l;
    vlayer_layout(&a, cfg, &l);
    return a.used;
}

static int vlayer_fill(weights_vlayer *l, const preset_vision *c, uint64_t seed, uint32_t s)
{
    size_t D = (size_t)c->width, M = (size_t)c->mlp;
    double sd_d = 1.0 / sqrt((double)D), sd_m = 1.0 / sqrt((double)M);
    return fill(l->ln1_g, D, GAIN, 0.1, seed, s, T_LN1_G) | fill(l->ln1_b, D, GAUSS, 0.02, seed, s, T_LN1_B) |
           fill(l->w_qkv, D * 3 * D, GAUSS, sd_d, seed, s, T_QKV) | fill(l->b_qkv, 3 * D, GAUSS, 0.02, seed, s, T_QKV_B) |
           fill(l->w_o, D * D, GAUSS, sd_d, seed, s, T_O) | fill(l->b_o, D, GAUSS, 0.02, seed, s, T_O_B) |
           fill(l->ln2_g, D, GAIN, 0.1, seed, s, T_LN2_G) | fill(l->ln2_b, D, GAUSS, 0.02, seed, s, T_LN2_B) |
           fill(l->w_fc1, D * M, GAUSS, sd_d, seed, s, T_FC1) | fill(l->b_fc1, M, GAUSS, 0.02, seed, s, T_FC1_B) |
           fill(l->w_fc2, M * D, GAUSS, sd_m, seed, s, T_FC2) | fill(l->b_fc2, D, GAUSS, 0.02, seed, s, T_FC2_B);
}

int weights_vision_init(weights_vision *w, const preset_vision *cfg, uint64_t seed,
                        int max_sets, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (preset_vision_check(cfg, err, errlen))
        return -1;
    w->cfg = *cfg;
    w->n_sets = max_sets <= 0 || max_sets > cfg->layers ? cfg->layers : max_sets;
    w->set = calloc((size_t)w->n_sets, sizeof *w->set);
    arena a = { NULL, 0 };
    vstem_layout(&a, cfg, w);
    w->block_len = a.used;
    w->block = calloc(a.used, sizeof(float));   /* zeroed: the alignment gaps too */
    if (!w->set || !w->block)
        goto oom;
    a = (arena){ w->block, 0 };
    vstem_layout(&a, cfg, w);
    size_t D = (size_t)cfg->width, T = (size_t)preset_vision_tokens(cfg), K = (size_t)preset_vision_patch_dim(cfg);
    if (fill(w->w_patch, K * D, GAUSS, 1.0 / sqrt((double)K), seed, STEM, T_PATCH) |
        fill(w->b_patch, D, GAUSS, 0.02, seed, STEM, T_PATCH_B) |
        fill(w->pos, T * D, GAUSS, 0.5, seed, STEM, T_POS) |
        fill(w->lnf_g, D, GAIN, 0.1, seed, STEM, T_LNF_G) | fill(w->lnf_b, D, GAUSS, 0.02, seed, STEM, T_LNF_B))
        goto oom;
    for (int s = 0; s < w->n_sets; s++) {
        weights_vlayer *l = &w->set[s];
        l->block_len = weights_vision_set_floats(cfg);
        l->block = calloc(l->block_len, sizeof(float));
        if (!l->block)
            goto oom;
        a = (arena){ l->block, 0 };
        vlayer_layout(&a, cfg, l);
        if (vlayer_fill(l, cfg, seed, (uint32_t)s))
            goto oom;
    }
    return 0;
oom:
    weights_vision_free(w);
    snprintf(err, errlen, "%s: out of memory for the vision weights", cfg->name);
    return -1;
}

void weights_vision_free(weights_vision *w)
{
    if (w->set)
        for (int s = 0; s < w->n_sets; s++)
            free(w->set[s].block);
    free(w->set);
    free(w->block);
    memset(w, 0, sizeof *w);
}

const weights_vlayer *weights_vision_layer(const weights_vision *w, int layer)
{
    return &w->set[layer % w->n_sets];
}

/* ---- LLM ---- */

static void llayer_layout(arena *a, const preset_llm *c, weights_llayer *l)
{
    size_t D = (size_t)c->width, QD = (size_t)preset_llm_q_dim(c), KVD = (size_t)preset_llm_kv_dim(c);
    size_t M = (size_t)c->mlp;
    l->rms1 = take(a, D);
    l->w_qkv = take(a, D * (QD + 2 * KVD));
    l->w_o = take(a, QD * D);
    l->rms2 = take(a, D);
    l->w_13 = take(a, D * 2 * M);
    l->w_2 = take(a, M * D);
}

size_t weights_llm_set_floats(const preset_llm *cfg)
{
    arena a = { NULL, 0 };
    weights_llayer l;
    llayer_layout(&a, cfg, &l);
    return a.used;
}

int weights_llm_init(weights_llm *w, const preset_llm *cfg, uint64_t seed,
                     int max_sets, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (preset_llm_check(cfg, err, errlen))
        return -1;
    w->cfg = *cfg;
    w->n_sets = max_sets <= 0 || max_sets > cfg->layers ? cfg->layers : max_sets;
    w->set = calloc((size_t)w->n_sets, sizeof *w->set);
    if (!w->set)
        goto oom;
    size_t D = (size_t)cfg->width, QD = (size_t)preset_llm_q_dim(cfg), KVD = (size_t)preset_llm_kv_dim(cfg);
    size_t M = (size_t)cfg->mlp;
    /* The seed is offset so the LLM's streams differ from a vision model's. */
    uint64_t lseed = seed ^ 0x4c4c4d5f57454947ULL;
    for (int s = 0; s < w->n_sets; s++) {
        weights_llayer *l = &w->set[s];
        l->block_len = weights_llm_set_floats(cfg);
        l->block = calloc(l->block_len, sizeof(float));
        if (!l->block)
            goto oom;
        arena a = { l->block, 0 };
        llayer_layout(&a, cfg, l);
        uint32_t u = (uint32_t)s;
        if (fill(l->rms1, D, GAIN, 0.1, lseed, u, T_RMS1) |
            fill(l->w_qkv, D * (QD + 2 * KVD), GAUSS, 1.0 / sqrt((double)D), lseed, u, T_LQKV) |
            fill(l->w_o, QD * D, GAUSS, 1.0 / sqrt((double)QD), lseed, u, T_LO) |
            fill(l->rms2, D, GAIN, 0.1, lseed, u, T_RMS2) |
            fill(l->w_13, D * 2 * M, GAUSS, 1.0 / sqrt((double)D), lseed, u, T_L13) |
            fill(l->w_2, M * D, GAUSS, 1.0 / sqrt((double)M), lseed, u, T_L2))
            goto oom;
    }
    return 0;
oom:
    weights_llm_free(w);
    snprintf(err, errlen, "%s: out of memory for the LLM weights", cfg->name);
    return -1;
}

void weights_llm_free(weights_llm *w)
{
    if (w->set)
        for (int s = 0; s < w->n_sets; s++)
            free(w->set[s].block);
    free(w->set);
    memset(w, 0, sizeof *w);
}

const weights_llayer *weights_llm_layer(const weights_llm *w, int layer)
{
    return &w->set[layer % w->n_sets];
}

/* ---- bf16 ---- */

float weights_bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)   /* inf or NaN: truncate, keep NaN quiet */
        u = (u & 0xffff0000u) | ((u & 0xffffu) ? 0x00400000u : 0);
    else
        u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void round_block(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = weights_bf16_round(p[i]);
}

void weights_vision_round_bf16(weights_vision *w)
{
    round_block(w->block, w->block_len);
    for (int s = 0; s < w->n_sets; s++)
        round_block(w->set[s].block, w->set[s].block_len);
}

void weights_llm_round_bf16(weights_llm *w)
{
    for (int s = 0; s < w->n_sets; s++)
        round_block(w->set[s].block, w->set[s].block_len);
}
