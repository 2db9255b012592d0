/* cpu.h — the CPU float32 path of every calibration op.
 *
 * Every matrix product goes through OpenBLAS cblas_sgemm (projections,
 * attention scores and their product with V, the ToMe similarity matrix);
 * the rest (norms, softmax, GELU, SwiGLU, RoPE, merging) are plain loops.
 * Results must match ref.h to a relative error of 1e-4.
 *
 * Timed code must never allocate: every op works in a caller-owned
 * workspace whose size the matching *_ws_* function gives, so vlcalib
 * allocates once per grid point, outside the timed region. The layouts are
 * those of ref.h, in float. This module keeps no state (OpenBLAS's thread
 * count is OpenBLAS's own). */
#ifndef VL_CALIB_CPU_H
#define VL_CALIB_CPU_H

#include <stddef.h>
#include "calib/presets.h"
#include "calib/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KV caches, laid out as ref_kv (keys after RoPE):
 * k[((((s * layers + l) * kv_heads + g) * cap + pos) * head_dim + e]. */
typedef struct {
    int seqs, layers, kv_heads, cap, head_dim;
    float *k, *v;
} cpu_kv;

int cpu_kv_init(cpu_kv *c, const preset_llm *cfg, int seqs, int cap);   /* zeroed */
void cpu_kv_free(cpu_kv *c);
size_t cpu_kv_at(const cpu_kv *c, int seq, int layer, int kv_head, int pos);

/* OpenBLAS threads (n <= 0 leaves OpenBLAS's default) and the count in use. */
void cpu_set_threads(int n);
int cpu_threads(void);

/* Vision encoder (the math of ref_vision_encode): pixels [B][C][H][W],
 * out [B][T][D], ws of cpu_vision_ws_floats(cfg, batch) floats. */
size_t cpu_vision_ws_floats(const preset_vision *c, int batch);
void cpu_vision_encode(const weights_vision *w, int batch, const float *pixels, float *out, float *ws);

/* ToMe (the rules of ref_tome_merge / ref_tome_reduce). Workspace in bytes.
 * cpu_tome_merge: one round on one image; 0, or -1 on a bad r.
 * cpu_tome_reduce: `batch` images of n_in tokens each, x [batch][n_in][d],
 * size NULL (ones) or [batch][n_in]; x_out [batch][n_out][d],
 * size_out [batch][n_out]. */
size_t cpu_tome_merge_ws_bytes(int n, int d);
int cpu_tome_merge(int n, int d, const float *x, const float *size, int r,
                   float *x_out, float *size_out, void *ws);
size_t cpu_tome_reduce_ws_bytes(int n_in, int d);
int cpu_tome_reduce(int batch, int n_in, int n_out, int d, const float *x, const float *size,
                    float *x_out, float *size_out, void *ws);

/* LLM decoder layers (the math of ref_llm_prefill / ref_llm_decode).
 * ws of cpu_llm_ws_floats(cfg, ntok, max_keys) floats, where ntok is N
 * (prefill) or B (decode) and max_keys >= L + N (prefill) or L + 1 (decode).
 * x and out [ntok][D] (out may equal x). 0, or -1 on a bad shape. */
size_t cpu_llm_ws_floats(const preset_llm *c, int ntok, int max_keys);
int cpu_llm_prefill(const weights_llm *w, cpu_kv *kv, int seq, int L, int N,
                    const float *x, float *out, float *ws);
int cpu_llm_decode(const weights_llm *w, cpu_kv *kv, int B, int L,
                   const float *x, float *out, float *ws);

#ifdef __cplusplus
}
#endif

#endif
