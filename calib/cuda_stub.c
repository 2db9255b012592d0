/* cuda_stub.c — stands in for cuda_ops.cu when vlcalib is built without
 * CUDA (the default): cuda_compiled() is 0 and every other call fails with
 * a message saying how to get the real backend. It must never pretend to
 * run anything. */
#include "calib/cuda_ops.h"
#include <stdio.h>

#define NO_CUDA "this vlcalib was built without CUDA; rebuild with `make CUDA=1 vlcalib` on a machine with nvcc"

int cuda_compiled(void) { return 0; }

cuda_ctx *cuda_ctx_new(char *err, size_t errlen)
{
    snprintf(err, errlen, NO_CUDA);
    return NULL;
}

void cuda_ctx_free(cuda_ctx *c) { (void)c; }
const char *cuda_error(const cuda_ctx *c) { (void)c; return NO_CUDA; }
int cuda_take_oom(cuda_ctx *c) { (void)c; return 0; }
int cuda_describe(cuda_ctx *c, char *buf, size_t len) { (void)c; snprintf(buf, len, "no CUDA"); return -1; }

int cuda_time(cuda_ctx *c, cuda_enqueue_fn enqueue, void *arg, const harness_opts *o, harness_result *r)
{
    (void)c; (void)enqueue; (void)arg; (void)o; (void)r;
    return -1;
}

cuda_vision *cuda_vision_new(cuda_ctx *c, const weights_vision *w, int max_batch, int nslots)
{
    (void)c; (void)w; (void)max_batch; (void)nslots;
    return NULL;
}
void cuda_vision_free(cuda_vision *v) { (void)v; }
int cuda_vision_set_input(cuda_vision *v, int slot, int batch, const float *pixels)
{
    (void)v; (void)slot; (void)batch; (void)pixels;
    return -1;
}
int cuda_vision_enqueue(cuda_vision *v, int slot, int batch) { (void)v; (void)slot; (void)batch; return -1; }
int cuda_vision_get_output(cuda_vision *v, int slot, int batch, float *out)
{
    (void)v; (void)slot; (void)batch; (void)out;
    return -1;
}

cuda_reduce *cuda_reduce_new(cuda_ctx *c, int max_batch, int tokens_in, int dim, int nslots)
{
    (void)c; (void)max_batch; (void)tokens_in; (void)dim; (void)nslots;
    return NULL;
}
void cuda_reduce_free(cuda_reduce *r) { (void)r; }
int cuda_reduce_set_input(cuda_reduce *r, int slot, int batch, const float *x)
{
    (void)r; (void)slot; (void)batch; (void)x;
    return -1;
}
int cuda_reduce_enqueue(cuda_reduce *r, int slot, int batch, int tokens_out)
{
    (void)r; (void)slot; (void)batch; (void)tokens_out;
    return -1;
}
int cuda_reduce_get_output(cuda_reduce *r, int slot, int batch, int tokens_out, float *x, float *size)
{
    (void)r; (void)slot; (void)batch; (void)tokens_out; (void)x; (void)size;
    return -1;
}

cuda_llm *cuda_llm_new(cuda_ctx *c, const weights_llm *w) { (void)c; (void)w; return NULL; }
void cuda_llm_free(cuda_llm *m) { (void)m; }
cuda_llm_ws *cuda_llm_ws_new(cuda_llm *m, int max_tokens, int seqs, int cap, int nslots)
{
    (void)m; (void)max_tokens; (void)seqs; (void)cap; (void)nslots;
    return NULL;
}
void cuda_llm_ws_free(cuda_llm_ws *s) { (void)s; }
int cuda_llm_fill_cache(cuda_llm_ws *s, uint64_t seed) { (void)s; (void)seed; return -1; }
int cuda_llm_set_cache(cuda_llm_ws *s, int seq, const float *k, const float *v, int host_cap)
{
    (void)s; (void)seq; (void)k; (void)v; (void)host_cap;
    return -1;
}
int cuda_llm_set_input(cuda_llm_ws *s, int slot, int ntok, const float *x)
{
    (void)s; (void)slot; (void)ntok; (void)x;
    return -1;
}
int cuda_llm_prefill_enqueue(cuda_llm_ws *s, int slot, int L, int N)
{
    (void)s; (void)slot; (void)L; (void)N;
    return -1;
}
int cuda_llm_decode_enqueue(cuda_llm_ws *s, int slot, int B, int L)
{
    (void)s; (void)slot; (void)B; (void)L;
    return -1;
}
int cuda_llm_get_output(cuda_llm_ws *s, int slot, int ntok, float *out)
{
    (void)s; (void)slot; (void)ntok; (void)out;
    return -1;
}
