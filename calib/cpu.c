/* cpu.c — the CPU float32 path: OpenBLAS sgemm for every matrix product,
 * plain loops for the rest. See cpu.h. Never allocates inside an op (the
 * KV cache helpers aside), never keeps state. */
#include "calib/cpu.h"
#include "calib/tome.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* C[M][N] = alpha A[M][K] op(B) + beta C, row-major; op(B) = B^T when tb
 * (B stored [N][K]). */
static void mm(int tb, int M, int N, int K, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cpu_set_threads(int n)
{
    if (n > 0)
        openblas_set_num_threads(n);
}

int cpu_threads(void) { return openblas_get_num_threads(); }

/* Rows of C [rows][n] <- b (the bias, before a GEMM with beta = 1). */
static void fill_rows(float *C, const float *b, int rows, int n)
{
    for (int r = 0; r < rows; r++)
        memcpy(&C[(size_t)r * n], b, (size_t)n * sizeof *b);
}

static void add_rows(float *C, const float *b, int rows, int n)
{
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++)
            C[(size_t)r * n + j] += b[j];
}

static void layernorm_rows(const float *x, const float *g, const float *b, int rows, int n,
                           float eps, float *y)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = &x[(size_t)r * n];
        float *yr = &y[(size_t)r * n];
        float mean = 0, var = 0;
        for (int i = 0; i < n; i++)
            mean += xr[i];
        mean /= (float)n;
        for (int i = 0; i < n; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        float inv = 1.0f / sqrtf(var / (float)n + eps);
        for (int i = 0; i < n; i++)
            yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
    }
}

static void rmsnorm_rows(const float *x, const float *g, int rows, int n, float eps, float *y)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = &x[(size_t)r * n];
        float ss = 0;
        for (int i = 0; i < n; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)n + eps);
        for (int i = 0; i < n; i++)
            y[(size_t)r * n + i] = xr[i] * inv * g[i];
    }
}

/* In place over one row: the first `valid` entries become softmax(scale * s),
 * the rest of the row (masked) zero. */
static void softmax_row(float *s, int n, int valid, float scale)
{
    float mx = -INFINITY, sum = 0;
    for (int j = 0; j < valid; j++)
        mx = fmaxf(mx, s[j] * scale);
    for (int j = 0; j < valid; j++)
        sum += (s[j] = expf(s[j] * scale - mx));
    float inv = 1.0f / sum;
    for (int j = 0; j < valid; j++)
        s[j] *= inv;
    for (int j = valid; j < n; j++)
        s[j] = 0;
}

static float gelu_tanh(float x)
{
    const float k = 0.7978845608028654f;   /* sqrt(2/pi) */
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

/* ---- vision ---- */

size_t cpu_vision_ws_floats(const preset_vision *c, int batch)
{
    size_t BT = (size_t)batch * preset_vision_tokens(c), D = (size_t)c->width;
    size_t T = (size_t)preset_vision_tokens(c);
    return BT * ((size_t)preset_vision_patch_dim(c) + 6 * D + (size_t)c->mlp) + T * T;
}

void cpu_vision_encode(const weights_vision *w, int batch, const float *pixels, float *out, float *ws)
{
    const preset_vision *c = &w->cfg;
    int D = c->width, M = c->mlp, H = c->heads, hd = D / H, P = c->patch, C = c->channels;
    int gw = preset_vision_grid_w(c), T = preset_vision_tokens(c), K = preset_vision_patch_dim(c);
    int BT = batch * T;
    float *patch = ws, *x = patch + (size_t)BT * K, *h = x + (size_t)BT * D;
    float *qkv = h + (size_t)BT * D, *att = qkv + (size_t)BT * 3 * D, *mlp = att + (size_t)BT * D;
    float *S = mlp + (size_t)BT * M;
    size_t img = (size_t)C * c->image_h * c->image_w;

    /* Unfold patches: row (b, t), column (channel, dy, dx). */
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < T; t++) {
            int py = t / gw, px = t % gw;
            float *row = &patch[((size_t)b * T + t) * K];
            for (int ch = 0; ch < C; ch++)
                for (int dy = 0; dy < P; dy++)
                    memcpy(&row[(ch * P + dy) * P],
                           &pixels[b * img + ((size_t)ch * c->image_h + py * P + dy) * c->image_w + px * P],
                           (size_t)P * sizeof(float));
        }
    mm(0, BT, D, K, 1, patch, K, w->w_patch, D, 0, x, D);
    for (int b = 0; b < batch; b++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < D; j++)
                x[((size_t)b * T + t) * D + j] += w->b_patch[j] + w->pos[(size_t)t * D + j];

    float scale = 1.0f / sqrtf((float)hd);
    for (int l = 0; l < c->layers; l++) {
        const weights_vlayer *L = weights_vision_layer(w, l);
        layernorm_rows(x, L->ln1_g, L->ln1_b, BT, D, (float)c->ln_eps, h);
        fill_rows(qkv, L->b_qkv, BT, 3 * D);
        mm(0, BT, 3 * D, D, 1, h, D, L->w_qkv, 3 * D, 1, qkv, 3 * D);
        for (int b = 0; b < batch; b++)
            for (int hh = 0; hh < H; hh++) {
                const float *q = &qkv[(size_t)b * T * 3 * D + hh * hd];
                mm(1, T, T, hd, 1, q, 3 * D, q + D, 3 * D, 0, S, T);
                for (int i = 0; i < T; i++)
                    softmax_row(&S[(size_t)i * T], T, T, scale);
                mm(0, T, hd, T, 1, S, T, q + 2 * D, 3 * D, 0, &att[(size_t)b * T * D + hh * hd], D);
            }
        mm(0, BT, D, D, 1, att, D, L->w_o, D, 1, x, D);
        add_rows(x, L->b_o, BT, D);
        layernorm_rows(x, L->ln2_g, L->ln2_b, BT, D, (float)c->ln_eps, h);
        fill_rows(mlp, L->b_fc1, BT, M);
        mm(0, BT, M, D, 1, h, D, L->w_fc1, M, 1, mlp, M);
        for (size_t i = 0; i < (size_t)BT * M; i++)
            mlp[i] = gelu_tanh(mlp[i]);
        mm(0, BT, D, M, 1, mlp, M, L->w_fc2, D, 1, x, D);
        add_rows(x, L->b_fc2, BT, D);
    }
    layernorm_rows(x, w->lnf_g, w->lnf_b, BT, D, (float)c->ln_eps, out);
}

/* ---- ToMe ---- */

typedef struct { float score; int idx; } tome_key;

/* Highest score first; equal scores by lowest index. */
static int tome_key_cmp(const void *pa, const void *pb)
{
    const tome_key *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

size_t cpu_tome_merge_ws_bytes(int n, int d)
{
    size_t nA = (size_t)(n + 1) / 2, nB = (size_t)n / 2;
    return ((nA + nB) * d + nA * nB) * sizeof(float) + nA * (sizeof(tome_key) + 2 * sizeof(int));
}

static void normalize_into(const float *x, int d, float *y)
{
    float ss = 0;
    for (int e = 0; e < d; e++)
        ss += x[e] * x[e];
    float inv = ss > 0 ? 1.0f / sqrtf(ss) : 0.0f;
    for (int e = 0; e < d; e++)
        y[e] = x[e] * inv;
}

int cpu_tome_merge(int n, int d, const float *x, const float *size, int r,
                   float *x_out, float *size_out, void *ws)
{
    int nA = (n + 1) / 2, nB = n / 2;
    if (n < 1 || d < 1 || r < 0 || r > nA || (r > 0 && nB < 1))
        return -1;
    float *an = ws, *bn = an + (size_t)nA * d, *S = bn + (size_t)nB * d;
    tome_key *key = (tome_key *)(S + (size_t)nA * nB);
    int *best = (int *)(key + nA), *merged = best + nA;

    for (int i = 0; i < nA; i++)
        normalize_into(&x[(size_t)2 * i * d], d, &an[(size_t)i * d]);
    for (int j = 0; j < nB; j++)
        normalize_into(&x[(size_t)(2 * j + 1) * d], d, &bn[(size_t)j * d]);
    if (nB > 0)
        mm(1, nA, nB, d, 1, an, d, bn, d, 0, S, nB);
    for (int i = 0; i < nA; i++) {
        const float *row = &S[(size_t)i * nB];
        int bj = 0;
        float bs = -INFINITY;
        for (int j = 0; j < nB; j++)
            if (row[j] > bs) {
                bs = row[j];
                bj = j;
            }
        best[i] = bj;
        key[i] = (tome_key){ bs, i };
        merged[i] = 0;
    }
    qsort(key, (size_t)nA, sizeof *key, tome_key_cmp);
    for (int k = 0; k < r; k++)
        merged[key[k].idx] = 1;

    int o = 0;
    for (int i = 0; i < nA; i++)
        if (!merged[i]) {
            memcpy(&x_out[(size_t)o * d], &x[(size_t)2 * i * d], (size_t)d * sizeof *x);
            size_out[o++] = size[2 * i];
        }
    float *bout = &x_out[(size_t)o * d], *bsize = &size_out[o];
    for (int j = 0; j < nB; j++) {
        int t = 2 * j + 1;
        bsize[j] = size[t];
        for (int e = 0; e < d; e++)
            bout[(size_t)j * d + e] = size[t] * x[(size_t)t * d + e];
    }
    for (int i = 0; i < nA; i++)
        if (merged[i]) {
            int j = best[i];
            float s = size[2 * i];
            bsize[j] += s;
            for (int e = 0; e < d; e++)
                bout[(size_t)j * d + e] += s * x[(size_t)2 * i * d + e];
        }
    for (int j = 0; j < nB; j++)
        for (int e = 0; e < d; e++)
            bout[(size_t)j * d + e] /= bsize[j];
    return 0;
}

size_t cpu_tome_reduce_ws_bytes(int n_in, int d)
{
    return cpu_tome_merge_ws_bytes(n_in, d) + (size_t)2 * n_in * (d + 1) * sizeof(float);
}

int cpu_tome_reduce(int batch, int n_in, int n_out, int d, const float *x, const float *size,
                    float *x_out, float *size_out, void *ws)
{
    if (batch < 1 || n_out < 1 || n_out > n_in || d < 1)
        return -1;
    float *px = (float *)((char *)ws + cpu_tome_merge_ws_bytes(n_in, d));
    float *ps = px + (size_t)n_in * d, *qx = ps + n_in, *qs = qx + (size_t)n_in * d;
    for (int b = 0; b < batch; b++) {
        const float *bx = &x[(size_t)b * n_in * d];
        memcpy(px, bx, (size_t)n_in * d * sizeof *px);
        for (int t = 0; t < n_in; t++)
            ps[t] = size ? size[(size_t)b * n_in + t] : 1.0f;
        int n = n_in;
        while (n > n_out) {
            int r = tome_round_r(n, n_out);
            int last = n - r == n_out;
            float *ox = last ? &x_out[(size_t)b * n_out * d] : qx;
            float *os = last ? &size_out[(size_t)b * n_out] : qs;
            if (cpu_tome_merge(n, d, px, ps, r, ox, os, ws))
                return -1;
            n -= r;
            if (!last) {
                float *t = px; px = qx; qx = t;
                t = ps; ps = qs; qs = t;
            }
        }
        if (n_out == n_in) {
            memcpy(&x_out[(size_t)b * n_out * d], px, (size_t)n_out * d * sizeof *px);
            memcpy(&size_out[(size_t)b * n_out], ps, (size_t)n_out * sizeof *ps);
        }
    }
    return 0;
}

/* ---- LLM ---- */

int cpu_kv_init(cpu_kv *c, const preset_llm *cfg, int seqs, int cap)
{
    c->seqs = seqs;
    c->layers = cfg->layers;
    c->kv_heads = cfg->kv_heads;
    c->cap = cap;
    c->head_dim = preset_llm_head_dim(cfg);
    size_t n = (size_t)seqs * c->layers * c->kv_heads * cap * c->head_dim;
    c->k = calloc(n, sizeof *c->k);
    c->v = calloc(n, sizeof *c->v);
    if (!c->k || !c->v) {
        cpu_kv_free(c);
        return -1;
    }
    return 0;
}

void cpu_kv_free(cpu_kv *c)
{
    free(c->k);
    free(c->v);
    c->k = c->v = NULL;
}

size_t cpu_kv_at(const cpu_kv *c, int seq, int layer, int kv_head, int pos)
{
    return ((((size_t)seq * c->layers + layer) * c->kv_heads + kv_head) * c->cap + pos) * c->head_dim;
}

size_t cpu_llm_ws_floats(const preset_llm *c, int ntok, int max_keys)
{
    size_t D = (size_t)c->width, QD = (size_t)preset_llm_q_dim(c), KVD = (size_t)preset_llm_kv_dim(c);
    size_t hd = (size_t)preset_llm_head_dim(c), G = (size_t)preset_llm_group(c);
    size_t rows = (size_t)ntok > G ? (size_t)ntok : G;
    return (size_t)ntok * (D + (QD + 2 * KVD) + QD + 2 * (size_t)c->mlp + hd) + rows * (size_t)max_keys;
}

/* Rotate-half RoPE of one head vector by a precomputed cos/sin row. The
 * angles are computed in double: pos * theta^(-2i/hd) reaches thousands of
 * radians, where a float angle would be off by ~1e-4. */
static void rope_tables(int ntok, int pos0, int pos_step, int hd, double theta, float *cs, float *sn)
{
    for (int n = 0; n < ntok; n++)
        for (int i = 0; i < hd / 2; i++) {
            double ang = (double)(pos0 + n * pos_step) * pow(theta, -2.0 * i / hd);
            cs[(size_t)n * (hd / 2) + i] = (float)cos(ang);
            sn[(size_t)n * (hd / 2) + i] = (float)sin(ang);
        }
}

static void rope_apply(float *v, int hd, const float *cs, const float *sn)
{
    for (int i = 0; i < hd / 2; i++) {
        float a = v[i], b = v[i + hd / 2];
        v[i] = a * cs[i] - b * sn[i];
        v[i + hd / 2] = b * cs[i] + a * sn[i];
    }
}

typedef struct {
    float *h, *qkv, *att, *gu, *cs, *sn, *S;
} llm_ws;

static llm_ws llm_carve(const preset_llm *c, int ntok, float *ws)
{
    size_t D = (size_t)c->width, QD = (size_t)preset_llm_q_dim(c), KVD = (size_t)preset_llm_kv_dim(c);
    size_t hd = (size_t)preset_llm_head_dim(c);
    llm_ws s;
    s.h = ws;
    s.qkv = s.h + ntok * D;
    s.att = s.qkv + ntok * (QD + 2 * KVD);
    s.gu = s.att + ntok * QD;
    s.cs = s.gu + ntok * 2 * (size_t)c->mlp;
    s.sn = s.cs + ntok * hd / 2;
    s.S = s.sn + ntok * hd / 2;
    return s;
}

/* Everything of a layer before attention: RMSNorm, QKV, RoPE, and the new
 * keys and values into the cache (token n of seq seq0 + n*seq_step at
 * position pos0 + n*pos_step). */
static void layer_pre(const weights_llm *w, const weights_llayer *W, cpu_kv *kv, int l, int ntok,
                      int seq0, int seq_step, int pos0, int pos_step, const float *x, llm_ws *s)
{
    const preset_llm *c = &w->cfg;
    int D = c->width, H = c->heads, KV = c->kv_heads, hd = D / H;
    int QD = H * hd, KVD = KV * hd, QKV = QD + 2 * KVD;
    rmsnorm_rows(x, W->rms1, ntok, D, (float)c->rms_eps, s->h);
    mm(0, ntok, QKV, D, 1, s->h, D, W->w_qkv, QKV, 0, s->qkv, QKV);
    for (int n = 0; n < ntok; n++) {
        float *q = &s->qkv[(size_t)n * QKV];
        const float *cs = &s->cs[(size_t)n * (hd / 2)], *sn = &s->sn[(size_t)n * (hd / 2)];
        for (int hh = 0; hh < H + KV; hh++)   /* the Q heads, then the K heads */
            rope_apply(&q[hh * hd], hd, cs, sn);
        for (int g = 0; g < KV; g++) {
            size_t at = cpu_kv_at(kv, seq0 + n * seq_step, l, g, pos0 + n * pos_step);
            memcpy(&kv->k[at], &q[QD + g * hd], (size_t)hd * sizeof(float));
            memcpy(&kv->v[at], &q[QD + KVD + g * hd], (size_t)hd * sizeof(float));
        }
    }
}

/* Everything after attention: projection, residual, RMSNorm, SwiGLU, residual. */
static void layer_post(const weights_llm *w, const weights_llayer *W, int ntok, float *x, llm_ws *s)
{
    const preset_llm *c = &w->cfg;
    int D = c->width, QD = preset_llm_q_dim(c), M = c->mlp;
    mm(0, ntok, D, QD, 1, s->att, QD, W->w_o, D, 1, x, D);
    rmsnorm_rows(x, W->rms2, ntok, D, (float)c->rms_eps, s->h);
    mm(0, ntok, 2 * M, D, 1, s->h, D, W->w_13, 2 * M, 0, s->gu, 2 * M);
    for (int n = 0; n < ntok; n++) {
        float *g = &s->gu[(size_t)n * 2 * M];
        for (int i = 0; i < M; i++)
            g[i] = g[i] / (1.0f + expf(-g[i])) * g[M + i];   /* silu(gate) * up, into the gate half */
    }
    mm(0, ntok, D, M, 1, s->gu, 2 * M, W->w_2, D, 1, x, D);
}

int cpu_llm_prefill(const weights_llm *w, cpu_kv *kv, int seq, int L, int N,
                    const float *x_in, float *out, float *ws)
{
    const preset_llm *c = &w->cfg;
    int D = c->width, H = c->heads, KV = c->kv_heads, hd = D / H, G = H / KV;
    int QD = H * hd, KVD = KV * hd, QKV = QD + 2 * KVD, nk = L + N;
    if (N < 1 || L < 0 || seq < 0 || seq >= kv->seqs || nk > kv->cap)
        return -1;
    llm_ws s = llm_carve(c, N, ws);
    float *x = out, scale = 1.0f / sqrtf((float)hd);
    memmove(x, x_in, (size_t)N * D * sizeof *x);
    rope_tables(N, L, 1, hd, c->rope_theta, s.cs, s.sn);
    for (int l = 0; l < c->layers; l++) {
        const weights_llayer *W = weights_llm_layer(w, l);
        layer_pre(w, W, kv, l, N, seq, 0, L, 1, x, &s);
        for (int hh = 0; hh < H; hh++) {
            size_t at = cpu_kv_at(kv, seq, l, hh / G, 0);
            mm(1, N, nk, hd, 1, &s.qkv[hh * hd], QKV, &kv->k[at], hd, 0, s.S, nk);
            for (int n = 0; n < N; n++)   /* causal: token n sees positions 0..L+n */
                softmax_row(&s.S[(size_t)n * nk], nk, L + n + 1, scale);
            mm(0, N, hd, nk, 1, s.S, nk, &kv->v[at], hd, 0, &s.att[hh * hd], QD);
        }
        layer_post(w, W, N, x, &s);
    }
    return 0;
}

int cpu_llm_decode(const weights_llm *w, cpu_kv *kv, int B, int L,
                   const float *x_in, float *out, float *ws)
{
    const preset_llm *c = &w->cfg;
    int D = c->width, H = c->heads, KV = c->kv_heads, hd = D / H, G = H / KV;
    int QD = H * hd, KVD = KV * hd, QKV = QD + 2 * KVD, nk = L + 1;
    if (B < 1 || B > kv->seqs || L < 0 || nk > kv->cap)
        return -1;
    llm_ws s = llm_carve(c, B, ws);
    float *x = out, scale = 1.0f / sqrtf((float)hd);
    memmove(x, x_in, (size_t)B * D * sizeof *x);
    rope_tables(B, L, 0, hd, c->rope_theta, s.cs, s.sn);
    for (int l = 0; l < c->layers; l++) {
        const weights_llayer *W = weights_llm_layer(w, l);
        layer_pre(w, W, kv, l, B, 0, 1, L, 0, x, &s);
        /* Per sequence and KV head: the G query heads that share it form a
         * G x hd matrix, so attention is two small GEMMs. */
        for (int b = 0; b < B; b++)
            for (int g = 0; g < KV; g++) {
                size_t at = cpu_kv_at(kv, b, l, g, 0);
                mm(1, G, nk, hd, 1, &s.qkv[(size_t)b * QKV + g * G * hd], hd, &kv->k[at], hd, 0, s.S, nk);
                for (int j = 0; j < G; j++)
                    softmax_row(&s.S[(size_t)j * nk], nk, nk, scale);
                mm(0, G, hd, nk, 1, s.S, nk, &kv->v[at], hd, 0, &s.att[(size_t)b * QD + g * G * hd], hd);
            }
        layer_post(w, W, B, x, &s);
    }
    return 0;
}
