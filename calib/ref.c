/* ref.c — the double-precision reference. See ref.h.
 * Plain loops only: never BLAS, never code shared with cpu.c or cuda_ops.cu. */
#include "calib/ref.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* y[j] = sum_i x[i] W[i][j] (+ b[j]), W row-major [in][out]. */
static void matvec(const double *x, const float *W, const float *b, int in, int out, double *y)
{
    for (int j = 0; j < out; j++) {
        double s = b ? b[j] : 0.0;
        for (int i = 0; i < in; i++)
            s += x[i] * (double)W[(size_t)i * out + j];
        y[j] = s;
    }
}

static void layernorm(const double *x, const float *g, const float *b, int n, double eps, double *y)
{
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += x[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (x[i] - mean) * (x[i] - mean);
    var /= n;
    double inv = 1.0 / sqrt(var + eps);
    for (int i = 0; i < n; i++)
        y[i] = (x[i] - mean) * inv * g[i] + b[i];
}

static void rmsnorm(const double *x, const float *g, int n, double eps, double *y)
{
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * inv * g[i];
}

static double gelu_tanh(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double silu(double x) { return x / (1.0 + exp(-x)); }

/* In place: p[0..n) <- softmax(p). */
static void softmax(double *p, int n)
{
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++)
        mx = fmax(mx, p[j]);
    for (int j = 0; j < n; j++)
        sum += (p[j] = exp(p[j] - mx));
    for (int j = 0; j < n; j++)
        p[j] /= sum;
}

/* ---- vision ---- */

static void vision_one(const weights_vision *w, const double *pix, double *out,
                       double *x, double *h, double *qkv, double *att, double *mlp, double *tmp, double *p)
{
    const preset_vision *c = &w->cfg;
    int D = c->width, M = c->mlp, H = c->heads, hd = D / H, P = c->patch, C = c->channels;
    int gw = preset_vision_grid_w(c), T = preset_vision_tokens(c), K = preset_vision_patch_dim(c);
    double *patch = tmp;   /* K <= max(K, M, D) */

    for (int t = 0; t < T; t++) {
        int py = t / gw, px = t % gw;
        for (int ch = 0; ch < C; ch++)
            for (int dy = 0; dy < P; dy++)
                for (int dx = 0; dx < P; dx++)
                    patch[(ch * P + dy) * P + dx] =
                        pix[((size_t)ch * c->image_h + py * P + dy) * c->image_w + px * P + dx];
        matvec(patch, w->w_patch, w->b_patch, K, D, &x[(size_t)t * D]);
        for (int j = 0; j < D; j++)
            x[(size_t)t * D + j] += w->pos[(size_t)t * D + j];
    }
    for (int l = 0; l < c->layers; l++) {
        const weights_vlayer *L = weights_vision_layer(w, l);
        for (int t = 0; t < T; t++) {
            layernorm(&x[(size_t)t * D], L->ln1_g, L->ln1_b, D, c->ln_eps, h);
            matvec(h, L->w_qkv, L->b_qkv, D, 3 * D, &qkv[(size_t)t * 3 * D]);
        }
        for (int hh = 0; hh < H; hh++)
            for (int i = 0; i < T; i++) {
                const double *q = &qkv[(size_t)i * 3 * D + hh * hd];
                for (int j = 0; j < T; j++) {
                    const double *k = &qkv[(size_t)j * 3 * D + D + hh * hd];
                    double s = 0;
                    for (int e = 0; e < hd; e++)
                        s += q[e] * k[e];
                    p[j] = s / sqrt((double)hd);
                }
                softmax(p, T);
                for (int e = 0; e < hd; e++) {
                    double s = 0;
                    for (int j = 0; j < T; j++)
                        s += p[j] * qkv[(size_t)j * 3 * D + 2 * D + hh * hd + e];
                    att[(size_t)i * D + hh * hd + e] = s;
                }
            }
        for (int t = 0; t < T; t++) {
            double *xt = &x[(size_t)t * D];
            matvec(&att[(size_t)t * D], L->w_o, L->b_o, D, D, tmp);
            for (int j = 0; j < D; j++)
                xt[j] += tmp[j];
            layernorm(xt, L->ln2_g, L->ln2_b, D, c->ln_eps, h);
            matvec(h, L->w_fc1, L->b_fc1, D, M, mlp);
            for (int j = 0; j < M; j++)
                mlp[j] = gelu_tanh(mlp[j]);
            matvec(mlp, L->w_fc2, L->b_fc2, M, D, tmp);
            for (int j = 0; j < D; j++)
                xt[j] += tmp[j];
        }
    }
    for (int t = 0; t < T; t++)
        layernorm(&x[(size_t)t * D], w->lnf_g, w->lnf_b, D, c->ln_eps, &out[(size_t)t * D]);
}

int ref_vision_encode(const weights_vision *w, int batch, const double *pixels, double *out)
{
    const preset_vision *c = &w->cfg;
    size_t D = (size_t)c->width, T = (size_t)preset_vision_tokens(c);
    size_t K = (size_t)preset_vision_patch_dim(c), M = (size_t)c->mlp;
    size_t big = K > M ? K : M;
    big = big > D ? big : D;
    size_t img = (size_t)c->channels * c->image_h * c->image_w;
    double *x = malloc(T * D * sizeof *x), *h = malloc(D * sizeof *h);
    double *qkv = malloc(T * 3 * D * sizeof *qkv), *att = malloc(T * D * sizeof *att);
    double *mlp = malloc(M * sizeof *mlp), *tmp = malloc(big * sizeof *tmp), *p = malloc(T * sizeof *p);
    int ok = x && h && qkv && att && mlp && tmp && p && batch >= 1;
    for (int b = 0; ok && b < batch; b++)
        vision_one(w, pixels + b * img, out + b * T * D, x, h, qkv, att, mlp, tmp, p);
    free(x); free(h); free(qkv); free(att); free(mlp); free(tmp); free(p);
    return ok ? 0 : -1;
}

/* ---- ToMe ---- */

static double cosine(const double *a, const double *b, int d)
{
    double ab = 0, aa = 0, bb = 0;
    for (int e = 0; e < d; e++) {
        ab += a[e] * b[e];
        aa += a[e] * a[e];
        bb += b[e] * b[e];
    }
    return aa > 0 && bb > 0 ? ab / (sqrt(aa) * sqrt(bb)) : 0.0;
}

int ref_tome_merge(int n, int d, const double *x, const double *size, int r,
                   double *x_out, double *size_out)
{
    int nA = (n + 1) / 2, nB = n / 2;
    if (n < 1 || d < 1 || r < 0 || r > nA || (r > 0 && nB < 1))
        return -1;
    int *best = malloc((size_t)nA * sizeof *best), *merged = calloc((size_t)nA, sizeof *merged);
    double *score = malloc((size_t)nA * sizeof *score), *acc = malloc((size_t)d * sizeof *acc);
    if (!best || !merged || !score || !acc) {
        free(best); free(merged); free(score); free(acc);
        return -1;
    }
    for (int i = 0; i < nA; i++) {
        best[i] = 0;
        score[i] = -INFINITY;
        for (int j = 0; j < nB; j++) {
            double s = cosine(&x[(size_t)2 * i * d], &x[(size_t)(2 * j + 1) * d], d);
            if (s > score[i]) {
                score[i] = s;
                best[i] = j;
            }
        }
    }
    /* The r highest best-scores, one at a time (ties: lowest index). */
    for (int k = 0; k < r; k++) {
        int pick = -1;
        for (int i = 0; i < nA; i++)
            if (!merged[i] && (pick < 0 || score[i] > score[pick]))
                pick = i;
        merged[pick] = 1;
    }
    int o = 0;
    for (int i = 0; i < nA; i++)
        if (!merged[i]) {
            memcpy(&x_out[(size_t)o * d], &x[(size_t)2 * i * d], (size_t)d * sizeof *x);
            size_out[o++] = size[2 * i];
        }
    for (int j = 0; j < nB; j++) {
        int t = 2 * j + 1;
        double s = size[t];
        for (int e = 0; e < d; e++)
            acc[e] = size[t] * x[(size_t)t * d + e];
        for (int i = 0; i < nA; i++)
            if (merged[i] && best[i] == j) {
                s += size[2 * i];
                for (int e = 0; e < d; e++)
                    acc[e] += size[2 * i] * x[(size_t)2 * i * d + e];
            }
        for (int e = 0; e < d; e++)
            x_out[(size_t)o * d + e] = acc[e] / s;
        size_out[o++] = s;
    }
    free(best); free(merged); free(score); free(acc);
    return 0;
}

int ref_tome_reduce(int n_in, int n_out, int d, const double *x, const double *size,
                    double *x_out, double *size_out)
{
    if (n_out < 1 || n_out > n_in || d < 1)
        return -1;
    double *cx = malloc((size_t)n_in * d * sizeof *cx), *cs = malloc((size_t)n_in * sizeof *cs);
    double *nx = malloc((size_t)n_in * d * sizeof *nx), *ns = malloc((size_t)n_in * sizeof *ns);
    int rc = cx && cs && nx && ns ? 0 : -1;
    if (!rc) {
        memcpy(cx, x, (size_t)n_in * d * sizeof *cx);
        for (int t = 0; t < n_in; t++)
            cs[t] = size ? size[t] : 1.0;
    }
    int n = n_in;
    while (!rc && n > n_out) {
        int r = n - n_out < n / 2 ? n - n_out : n / 2;
        rc = ref_tome_merge(n, d, cx, cs, r, nx, ns);
        n -= r;
        double *t = cx; cx = nx; nx = t;
        t = cs; cs = ns; ns = t;
    }
    if (!rc) {
        memcpy(x_out, cx, (size_t)n_out * d * sizeof *cx);
        memcpy(size_out, cs, (size_t)n_out * sizeof *cs);
    }
    free(cx); free(cs); free(nx); free(ns);
    return rc;
}

/* ---- LLM ---- */

int ref_kv_init(ref_kv *c, const preset_llm *cfg, int seqs, int cap)
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
        ref_kv_free(c);
        return -1;
    }
    return 0;
}

void ref_kv_free(ref_kv *c)
{
    free(c->k);
    free(c->v);
    c->k = c->v = NULL;
}

size_t ref_kv_at(const ref_kv *c, int seq, int layer, int kv_head, int pos)
{
    return ((((size_t)seq * c->layers + layer) * c->kv_heads + kv_head) * c->cap + pos) * c->head_dim;
}

static void rope(double *v, int hd, int pos, double theta)
{
    for (int i = 0; i < hd / 2; i++) {
        double ang = pos * pow(theta, -2.0 * i / hd);
        double a = v[i], b = v[i + hd / 2];
        v[i] = a * cos(ang) - b * sin(ang);
        v[i + hd / 2] = b * cos(ang) + a * sin(ang);
    }
}

int ref_llm_prefill(const weights_llm *w, ref_kv *kv, int seq, int L, int N,
                    const double *x_in, double *out)
{
    const preset_llm *c = &w->cfg;
    int D = c->width, H = c->heads, KV = c->kv_heads, hd = D / H, G = H / KV, M = c->mlp;
    int QD = H * hd, KVD = KV * hd, QKV = QD + 2 * KVD;
    if (N < 1 || L < 0 || seq < 0 || seq >= kv->seqs || L + N > kv->cap)
        return -1;
    double *x = out, *h = malloc((size_t)D * sizeof *h), *qkv = malloc((size_t)N * QKV * sizeof *qkv);
    double *att = malloc((size_t)N * QD * sizeof *att), *p = malloc((size_t)(L + N) * sizeof *p);
    double *gu = malloc((size_t)2 * M * sizeof *gu), *tmp = malloc((size_t)D * sizeof *tmp);
    if (!h || !qkv || !att || !p || !gu || !tmp) {
        free(h); free(qkv); free(att); free(p); free(gu); free(tmp);
        return -1;
    }
    memmove(x, x_in, (size_t)N * D * sizeof *x);
    for (int l = 0; l < c->layers; l++) {
        const weights_llayer *W = weights_llm_layer(w, l);
        for (int n = 0; n < N; n++) {
            double *q = &qkv[(size_t)n * QKV];
            rmsnorm(&x[(size_t)n * D], W->rms1, D, c->rms_eps, h);
            matvec(h, W->w_qkv, NULL, D, QKV, q);
            for (int hh = 0; hh < H; hh++)
                rope(&q[hh * hd], hd, L + n, c->rope_theta);
            for (int g = 0; g < KV; g++) {
                rope(&q[QD + g * hd], hd, L + n, c->rope_theta);
                size_t at = ref_kv_at(kv, seq, l, g, L + n);
                memcpy(&kv->k[at], &q[QD + g * hd], (size_t)hd * sizeof(double));
                memcpy(&kv->v[at], &q[QD + KVD + g * hd], (size_t)hd * sizeof(double));
            }
        }
        for (int n = 0; n < N; n++)
            for (int hh = 0; hh < H; hh++) {
                int g = hh / G, nk = L + n + 1;   /* causal: positions 0..L+n */
                const double *q = &qkv[(size_t)n * QKV + hh * hd];
                for (int j = 0; j < nk; j++) {
                    const double *k = &kv->k[ref_kv_at(kv, seq, l, g, j)];
                    double s = 0;
                    for (int e = 0; e < hd; e++)
                        s += q[e] * k[e];
                    p[j] = s / sqrt((double)hd);
                }
                softmax(p, nk);
                for (int e = 0; e < hd; e++) {
                    double s = 0;
                    for (int j = 0; j < nk; j++)
                        s += p[j] * kv->v[ref_kv_at(kv, seq, l, g, j) + e];
                    att[(size_t)n * QD + hh * hd + e] = s;
                }
            }
        for (int n = 0; n < N; n++) {
            double *xn = &x[(size_t)n * D];
            matvec(&att[(size_t)n * QD], W->w_o, NULL, QD, D, tmp);
            for (int j = 0; j < D; j++)
                xn[j] += tmp[j];
            rmsnorm(xn, W->rms2, D, c->rms_eps, h);
            matvec(h, W->w_13, NULL, D, 2 * M, gu);
            for (int i = 0; i < M; i++)
                gu[i] = silu(gu[i]) * gu[M + i];
            matvec(gu, W->w_2, NULL, M, D, tmp);
            for (int j = 0; j < D; j++)
                xn[j] += tmp[j];
        }
    }
    free(h); free(qkv); free(att); free(p); free(gu); free(tmp);
    return 0;
}

int ref_llm_decode(const weights_llm *w, ref_kv *kv, int B, int L, const double *x, double *out)
{
    size_t D = (size_t)w->cfg.width;
    if (B < 1 || B > kv->seqs)
        return -1;
    for (int b = 0; b < B; b++)
        if (ref_llm_prefill(w, kv, b, L, 1, x + b * D, out + b * D))
            return -1;
    return 0;
}
