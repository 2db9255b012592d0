/* ref.h — the double-precision reference for every calibration op.
 *
 * The yardstick the CPU and CUDA paths are checked against: plain loops over
 * tokens, heads and features, one token at a time, written for reading and
 * not for speed. It must never call BLAS, never share code with cpu.c or
 * cuda_ops.cu (an error common to both would pass unseen), and never be timed.
 * Weights are the float32 tensors of weights.h, promoted to double.
 *
 * Layouts (row-major): pixels [B][C][H][W]; vision output [B][T][D];
 * token features [n][d]; LLM hidden states [N][D]. Functions return 0, or -1
 * when out of memory or given an impossible shape. */
#ifndef VL_CALIB_REF_H
#define VL_CALIB_REF_H

#include <stddef.h>
#include "calib/presets.h"
#include "calib/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KV caches of `seqs` sequences, keys already rotated (RoPE):
 * k[((((s * layers + l) * kv_heads + g) * cap + pos) * head_dim + e]; v alike. */
typedef struct {
    int seqs, layers, kv_heads, cap, head_dim;
    double *k, *v;
} ref_kv;

int ref_kv_init(ref_kv *c, const preset_llm *cfg, int seqs, int cap);   /* zeroed */
void ref_kv_free(ref_kv *c);
size_t ref_kv_at(const ref_kv *c, int seq, int layer, int kv_head, int pos);

/* Vision encoder forward: patch embedding, + position embedding, L pre-LN
 * layers (LayerNorm, QKV, softmax(QK^T/sqrt(hd))V, projection, residual,
 * LayerNorm, MLP with tanh-GELU, residual), final LayerNorm. */
int ref_vision_encode(const weights_vision *w, int batch, const double *pixels, double *out);

/* One round of ToMe bipartite soft matching on n tokens of d features with
 * sizes `size`: A = even tokens, B = odd tokens; each A token's best B match
 * by cosine similarity of the features (ties: lowest B index); the r A tokens
 * with the highest best similarity (ties: lowest A index) merge into their
 * match by size-weighted average, sizes adding. Output: the unmerged A tokens
 * in order, then all B tokens in order (n - r rows). Needs 0 <= r <= |A| and,
 * when r > 0, |B| >= 1. */
int ref_tome_merge(int n, int d, const double *x, const double *size, int r,
                   double *x_out, double *size_out);
/* n_in -> n_out tokens by rounds of ref_tome_merge, each merging
 * min(remaining, n / 2). size NULL means all ones. 1 <= n_out <= n_in. */
int ref_tome_reduce(int n_in, int n_out, int d, const double *x, const double *size,
                    double *x_out, double *size_out);

/* LLM prefill of N new tokens x [N][D] of sequence `seq`, whose cache holds
 * positions 0..L-1: per layer RMSNorm, Q/K/V (grouped-query), RoPE at
 * positions L..L+N-1 (rotate-half pairs (i, i + hd/2), angle
 * pos * theta^(-2i/hd)), keys and values stored at L..L+N-1, causal
 * attention, output projection, residual, RMSNorm, SwiGLU
 * (silu(x W1) * (x W3)) W2, residual. out [N][D]. */
int ref_llm_prefill(const weights_llm *w, ref_kv *kv, int seq, int L, int N,
                    const double *x, double *out);
/* Decode: one token for each of sequences 0..B-1, each at cache length L. */
int ref_llm_decode(const weights_llm *w, ref_kv *kv, int B, int L, const double *x, double *out);

#ifdef __cplusplus
}
#endif

#endif
