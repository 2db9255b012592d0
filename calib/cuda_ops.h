/* cuda_ops.h — the CUDA bf16 path of every calibration op, as a C API.
 *
 * Implemented by cuda_ops.cu (built with `make CUDA=1`, nvcc -arch=sm_90):
 * bf16 weights and activations, fp32 accumulation and residual stream; the
 * matrix products on cuBLAS (cublasGemmEx / GemmStridedBatchedEx, bf16 in,
 * fp32 compute), and its own kernels for the rest. Without CUDA, cuda_stub.c
 * stands in: cuda_compiled() is 0 and everything else fails with a message.
 *
 * Use: a context (device, stream, cuBLAS handle); an op object that uploads
 * the weights and owns its workspace and `nslots` input/output slots; set
 * inputs, enqueue (asynchronous, on the context's stream, never a host sync
 * or an allocation), fetch outputs (synchronises). cuda_time times an
 * enqueue callback with CUDA events after warm-ups. Every call returns 0, or
 * -1 (NULL for constructors) with "file:line: call: error string" in
 * cuda_error(ctx). This header must never expose a CUDA type. */
#ifndef VL_CALIB_CUDA_OPS_H
#define VL_CALIB_CUDA_OPS_H

#include <stddef.h>
#include <stdint.h>
#include "calib/harness.h"
#include "calib/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuda_ctx cuda_ctx;
typedef struct cuda_vision cuda_vision;
typedef struct cuda_reduce cuda_reduce;
typedef struct cuda_llm cuda_llm;
typedef struct cuda_llm_ws cuda_llm_ws;

/* 1 when the CUDA backend is linked in, 0 for the stub. */
int cuda_compiled(void);

/* A context on device 0; NULL with a message in err when there is none. */
cuda_ctx *cuda_ctx_new(char *err, size_t errlen);
void cuda_ctx_free(cuda_ctx *c);
const char *cuda_error(const cuda_ctx *c);
/* 1 when a device allocation did not fit since the last call (the error is
 * cleared and the context still usable: the caller may skip that size). */
int cuda_take_oom(cuda_ctx *c);
/* One line: device name, compute capability, memory, driver, runtime, cuBLAS. */
int cuda_describe(cuda_ctx *c, char *buf, size_t len);

/* Time enqueue(arg, slot): warm-ups, a synchronise, then per repetition an
 * event, the enqueue, an event; the device time between each pair is the
 * sample. o->max_seconds is ignored. */
typedef int (*cuda_enqueue_fn)(void *arg, int slot);
int cuda_time(cuda_ctx *c, cuda_enqueue_fn enqueue, void *arg, const harness_opts *o, harness_result *r);

/* Vision encoder: pixels [B][C][H][W] (float on the host, bf16 on the
 * device), output [B][T][D] (bf16 on the device, float on the host). */
cuda_vision *cuda_vision_new(cuda_ctx *c, const weights_vision *w, int max_batch, int nslots);
void cuda_vision_free(cuda_vision *v);
int cuda_vision_set_input(cuda_vision *v, int slot, int batch, const float *pixels);
int cuda_vision_enqueue(cuda_vision *v, int slot, int batch);
int cuda_vision_get_output(cuda_vision *v, int slot, int batch, float *out);

/* ToMe reduction of `batch` images of tokens_in tokens of dim features
 * (bf16 in, sizes start at 1), to tokens_out tokens (bf16) and their sizes
 * (float). Similarities in fp32 (cuBLAS, no TF32) so the matching decisions
 * are those of the reference. */
cuda_reduce *cuda_reduce_new(cuda_ctx *c, int max_batch, int tokens_in, int dim, int nslots);
void cuda_reduce_free(cuda_reduce *r);
int cuda_reduce_set_input(cuda_reduce *r, int slot, int batch, const float *x);
int cuda_reduce_enqueue(cuda_reduce *r, int slot, int batch, int tokens_out);
int cuda_reduce_get_output(cuda_reduce *r, int slot, int batch, int tokens_out, float *x, float *size);

/* LLM: the weights (cuda_llm), and a workspace with KV caches (cuda_llm_ws)
 * for up to max_tokens tokens per call (N for prefill, B for decode), `seqs`
 * sequences of capacity cap. Hidden states in and out are float [ntok][D]
 * (fp32 on the device). Caches are bf16 on the device, laid out as
 * cpu_kv / ref_kv. Prefill works on sequence 0; decode on 0..B-1. */
cuda_llm *cuda_llm_new(cuda_ctx *c, const weights_llm *w);
void cuda_llm_free(cuda_llm *m);
cuda_llm_ws *cuda_llm_ws_new(cuda_llm *m, int max_tokens, int seqs, int cap, int nslots);
void cuda_llm_ws_free(cuda_llm_ws *s);
/* Random bf16 values in every cache entry (for timing). */
int cuda_llm_fill_cache(cuda_llm_ws *s, uint64_t seed);
/* One sequence's caches from the host: k and v [layers][kv_heads][host_cap][hd]. */
int cuda_llm_set_cache(cuda_llm_ws *s, int seq, const float *k, const float *v, int host_cap);
int cuda_llm_set_input(cuda_llm_ws *s, int slot, int ntok, const float *x);
int cuda_llm_prefill_enqueue(cuda_llm_ws *s, int slot, int L, int N);
int cuda_llm_decode_enqueue(cuda_llm_ws *s, int slot, int B, int L);
int cuda_llm_get_output(cuda_llm_ws *s, int slot, int ntok, float *out);

#ifdef __cplusplus
}
#endif

#endif
