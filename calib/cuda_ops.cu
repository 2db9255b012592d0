/* cuda_ops.cu — the CUDA bf16 path of every calibration op (cuda_ops.h).
 *
 * bf16 weights and activations; fp32 accumulation, fp32 residual stream,
 * fp32 softmax. Matrix products on cuBLAS (cublasGemmEx and
 * cublasGemmStridedBatchedEx, bf16 in, CUBLAS_COMPUTE_32F), everything
 * else in the kernels below, fused where it saves a pass over memory:
 *   - residual add + bias (+ position embedding) + LayerNorm/RMSNorm: one kernel
 *   - QKV bias + split into heads (vision); RoPE + split + KV-cache append (LLM)
 *   - scale + causal mask + softmax + bf16 cast: one kernel
 *   - decode attention: one split-K kernel over each sequence's cache and a
 *     combine, never materialising the scores in global memory
 *   - ToMe: normalise, match (argmax + rank), scatter-merge, finalise; the
 *     similarity matrix on cuBLAS in fp32 (no TF32) so the matching
 *     decisions agree with the reference.
 * Vision and prefill attention use cuBLAS batched GEMMs for QK^T and PV
 * around the fused softmax (tensor cores; the score matrix does touch
 * global memory: a fused flash-attention kernel is the next step for
 * speed, not for correctness).
 *
 * Rules: every CUDA and cuBLAS call is checked (CK, CKB) and every launch
 * too (LAUNCHED), reporting file:line, the call and the error string into
 * the context; enqueue functions only enqueue on the context's stream (no
 * allocation, no host synchronisation), so CUDA events time them honestly.
 * This file must never time with a host clock and never keep global
 * mutable state. */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "calib/cuda_ops.h"
#include "calib/presets.h"
#include "calib/tome.h"

typedef __nv_bfloat16 bf16;

struct cuda_ctx {
    cudaStream_t stream;
    cublasHandle_t blas;
    char err[768];
    int oom; /* the last failure was a device allocation that did not fit */
};

/* ---- error checking ---- */

static int fail(cuda_ctx *cx, const char *file, int line, const char *call, const char *msg)
{
    snprintf(cx->err, sizeof cx->err, "%s:%d: %s: %s", file, line, call, msg);
    return -1;
}

/* Each needs a cuda_ctx *cx in scope and returns -1 from the function. */
#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess)                                                     \
            return fail(cx, __FILE__, __LINE__, #call, cudaGetErrorString(e_));    \
    } while (0)
#define CKB(call)                                                                  \
    do {                                                                           \
        cublasStatus_t s_ = (call);                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
            return fail(cx, __FILE__, __LINE__, #call, cublasGetStatusString(s_)); \
    } while (0)
#define LAUNCHED(kernel)                                                           \
    do {                                                                           \
        cudaError_t e_ = cudaGetLastError();                                       \
        if (e_ != cudaSuccess)                                                     \
            return fail(cx, __FILE__, __LINE__, "launch " kernel, cudaGetErrorString(e_)); \
    } while (0)
#define REQUIRE(cond, ...)                                                         \
    do {                                                                           \
        if (!(cond)) {                                                             \
            snprintf(cx->err, sizeof cx->err, __VA_ARGS__);                        \
            return -1;                                                             \
        }                                                                          \
    } while (0)

/* ---- memory ---- */

/* Out of device memory is not sticky: the error is cleared and flagged
 * (cuda_take_oom), so that the caller can skip a point too large for this
 * GPU and go on with the context. */
template <class T> static int dalloc(cuda_ctx *cx, T **p, size_t n)
{
    *p = nullptr;
    size_t bytes = (n ? n : 1) * sizeof(T);
    cudaError_t e = cudaMalloc((void **)p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        cx->oom = 1;
        char what[96];
        snprintf(what, sizeof what, "cudaMalloc of %.2f GiB", (double)bytes / (1 << 30));
        return fail(cx, __FILE__, __LINE__, what, cudaGetErrorString(e));
    }
    CK(e);
    return 0;
}

/* Host float -> device bf16, in chunks (no host copy of the whole tensor). */
static int upload_bf16(cuda_ctx *cx, bf16 *dst, const float *src, size_t n)
{
    const size_t chunk = (size_t)1 << 20;
    bf16 *tmp = (bf16 *)malloc((n < chunk ? (n ? n : 1) : chunk) * sizeof(bf16));
    REQUIRE(tmp, "upload: out of host memory");
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < m; i++)
            tmp[i] = __float2bfloat16(src[at + i]);
        cudaError_t e = cudaMemcpyAsync(dst + at, tmp, m * sizeof(bf16), cudaMemcpyHostToDevice, cx->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(cx->stream);
        if (e != cudaSuccess) {
            free(tmp);
            return fail(cx, __FILE__, __LINE__, "cudaMemcpyAsync(bf16 upload)", cudaGetErrorString(e));
        }
    }
    free(tmp);
    return 0;
}

static int download_bf16(cuda_ctx *cx, float *dst, const bf16 *src, size_t n)
{
    const size_t chunk = (size_t)1 << 20;
    bf16 *tmp = (bf16 *)malloc((n < chunk ? (n ? n : 1) : chunk) * sizeof(bf16));
    REQUIRE(tmp, "download: out of host memory");
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = n - at < chunk ? n - at : chunk;
        cudaError_t e = cudaMemcpyAsync(tmp, src + at, m * sizeof(bf16), cudaMemcpyDeviceToHost, cx->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(cx->stream);
        if (e != cudaSuccess) {
            free(tmp);
            return fail(cx, __FILE__, __LINE__, "cudaMemcpyAsync(bf16 download)", cudaGetErrorString(e));
        }
        for (size_t i = 0; i < m; i++)
            dst[at + i] = __bfloat162float(tmp[i]);
    }
    free(tmp);
    return 0;
}

static int upload_f32(cuda_ctx *cx, float *dst, const float *src, size_t n)
{
    CK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, cx->stream));
    CK(cudaStreamSynchronize(cx->stream));
    return 0;
}

static int download_f32(cuda_ctx *cx, float *dst, const float *src, size_t n)
{
    CK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, cx->stream));
    CK(cudaStreamSynchronize(cx->stream));
    return 0;
}

static unsigned blocks_for(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b);   /* grid-stride loops cover the rest */
}

/* ---- GEMM (row-major, on cuBLAS's column-major) ----
 * C[M][N] = A[M][K] op(B), op(B) = B ([K][N], ldb) or, when tb, B^T with B
 * stored [N][K]. Row-major C is column-major C^T = op(B)^T A^T, so cuBLAS
 * gets (B, A) swapped. Batched with strides when batch > 1. */
static int gemm(cuda_ctx *cx, bool tb, int M, int N, int K,
                const void *A, cudaDataType ta, int lda, long long sA,
                const void *B, cudaDataType tB, int ldb, long long sB,
                void *C, cudaDataType tc, int ldc, long long sC, int batch)
{
    const float alpha = 1.0f, beta = 0.0f;
    cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch == 1)
        CKB(cublasGemmEx(cx->blas, opB, CUBLAS_OP_N, N, M, K, &alpha, B, tB, ldb, A, ta, lda, &beta,
                         C, tc, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        CKB(cublasGemmStridedBatchedEx(cx->blas, opB, CUBLAS_OP_N, N, M, K, &alpha, B, tB, ldb, sB, A, ta, lda, sA,
                                       &beta, C, tc, ldc, sC, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 0;
}

/* bf16 x bf16 -> out_type (bf16 or fp32), fp32 accumulation. */
static int gemm_bf(cuda_ctx *cx, bool tb, int M, int N, int K, const bf16 *A, int lda, long long sA,
                   const bf16 *B, int ldb, long long sB, void *C, cudaDataType tc, int ldc, long long sC, int batch)
{
    return gemm(cx, tb, M, N, K, A, CUDA_R_16BF, lda, sA, B, CUDA_R_16BF, ldb, sB, C, tc, ldc, sC, batch);
}

/* ---- device helpers ---- */

__device__ __forceinline__ float bf(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ void store(bf16 *p, float v) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void store(float *p, float v) { *p = v; }

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block-wide sum / max (blockDim a multiple of 32); sh holds 32 floats. */
__device__ float block_sum(float v, float *sh)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < nw ? sh[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0)
            sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

__device__ float block_max(float v, float *sh)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < nw ? sh[lane] : -INFINITY;
        v = warp_max(v);
        if (lane == 0)
            sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

/* ---- kernels: norms and elementwise ---- */

/* One row per block: x = (resid ? x : 0) + a + bias + pos[row % T] (each
 * optional), written back (fp32); then, when y, y = norm(x) in bf16:
 * LayerNorm (x - mean) / sqrt(var + eps) * g + b, or RMSNorm
 * x / sqrt(mean(x^2) + eps) * g. */
__global__ void k_add_norm(float *x, const float *a, const bf16 *bias, const bf16 *pos, int T, int resid,
                           const bf16 *g, const bf16 *b, bf16 *y, int D, float eps, int rms)
{
    __shared__ float sh[32];
    size_t row = blockIdx.x;
    float *xr = x + row * D;
    const float *ar = a ? a + row * D : nullptr;
    const bf16 *pr = pos ? pos + (row % (size_t)T) * D : nullptr;
    float s = 0.0f, s2 = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        float v = (resid ? xr[i] : 0.0f) + (ar ? ar[i] : 0.0f) + (bias ? bf(bias[i]) : 0.0f) + (pr ? bf(pr[i]) : 0.0f);
        xr[i] = v;
        s += v;
        s2 += v * v;
    }
    if (!y)
        return;
    float mean = 0.0f, inv;
    if (rms) {
        inv = rsqrtf(block_sum(s2, sh) / D + eps);
    } else {
        mean = block_sum(s, sh) / D;
        float v2 = 0.0f;
        for (int i = threadIdx.x; i < D; i += blockDim.x)
            v2 += (xr[i] - mean) * (xr[i] - mean);
        inv = rsqrtf(block_sum(v2, sh) / D + eps);
    }
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        float v = (xr[i] - mean) * inv * bf(g[i]) + (rms ? 0.0f : bf(b[i]));
        y[row * D + i] = __float2bfloat16(v);
    }
}

/* f = gelu_tanh(f + b[col]) over rows of M, in place. */
__global__ void k_bias_gelu(bf16 *f, const bf16 *b, size_t n, int M)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float x = bf(f[i]) + bf(b[i % M]);
        f[i] = __float2bfloat16(0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
    }
}

/* out[r][c] = silu(gu[r][c]) * gu[r][M + c]. */
__global__ void k_swiglu(const bf16 *gu, bf16 *out, size_t rows, int M)
{
    size_t n = rows * M;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / M, c = i % M;
        float g = bf(gu[r * 2 * M + c]), u = bf(gu[r * 2 * M + M + c]);
        out[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * u);
    }
}

/* Patches: row (b, t), column (channel, dy, dx), from pixels [B][C][H][W]. */
__global__ void k_unfold(const bf16 *pix, bf16 *patches, int B, int C, int Hi, int Wi, int P, int gw, int T)
{
    int K = C * P * P;
    size_t n = (size_t)B * T * K;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t row = i / K;
        int k = (int)(i % K), b = (int)(row / T), t = (int)(row % T);
        int c = k / (P * P), dy = (k / P) % P, dx = k % P, py = t / gw, px = t % gw;
        patches[i] = pix[(((size_t)b * C + c) * Hi + py * P + dy) * Wi + px * P + dx];
    }
}

/* Vision: qkv [B*T][3D] + bias -> q, k, v head-major [B][H][T][hd]. */
__global__ void k_vis_qkv_split(const bf16 *qkv, const bf16 *bias, bf16 *q, bf16 *k, bf16 *v,
                                int B, int T, int H, int hd)
{
    int D = H * hd;
    size_t n = (size_t)B * T * 3 * D;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t row = i / (3 * D), b = row / T, t = row % T;
        int c = (int)(i % (3 * D)), which = c / D, h = (c % D) / hd, e = c % hd;
        bf16 *dst = which == 0 ? q : which == 1 ? k : v;
        dst[((b * H + h) * T + t) * hd + e] = __float2bfloat16(bf(qkv[i]) + bf(bias[c]));
    }
}

/* Head-major [B][H][T][hd] -> token-major [B][T][H*hd]. */
__global__ void k_heads_to_tokens(const bf16 *in, bf16 *out, int B, int H, int T, int hd)
{
    int D = H * hd;
    size_t n = (size_t)B * T * D;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t b = i / ((size_t)T * D), t = (i / D) % T;
        int h = (int)(i % D) / hd, e = (int)(i % hd);
        out[i] = in[((b * H + h) * T + t) * hd + e];
    }
}

/* One row of scores per block: P = softmax(scale * S) over the first
 * `valid` columns, zero after; causal_n > 0: row r is new token r % causal_n,
 * which sees keys 0 .. L + (r % causal_n). */
__global__ void k_softmax(const float *S, bf16 *P, int ld, int n, float scale, int causal_n, int L)
{
    __shared__ float sh[32];
    size_t row = blockIdx.x;
    const float *s = S + row * ld;
    bf16 *p = P + row * ld;
    int valid = causal_n ? min(n, L + (int)(row % causal_n) + 1) : n;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < valid; j += blockDim.x)
        mx = fmaxf(mx, s[j] * scale);
    mx = block_max(mx, sh);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < valid; j += blockDim.x)
        sum += __expf(s[j] * scale - mx);
    float inv = 1.0f / block_sum(sum, sh);
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        p[j] = __float2bfloat16(j < valid ? __expf(s[j] * scale - mx) * inv : 0.0f);
}

/* LLM: RoPE on Q and K, Q to its layout, K and V appended to the cache.
 * Block (n, head) with head in [0, H) for Q, [H, H+KV) for K, then V.
 * Token n is at position pos0 + n * pos_step of sequence n * seq_step.
 * q[head * q_sh + n * q_sn + e]; cache at kc/vc + seq * seq_stride +
 * (g * cap + pos) * hd. Angles in double: pos * theta^(-2i/hd) reaches
 * thousands of radians, where float would lose ~1e-4. */
__global__ void k_llm_qkv_rope(const bf16 *qkv, int ldqkv, int H, int KV, int hd,
                               bf16 *q, long long q_sh, long long q_sn,
                               bf16 *kc, bf16 *vc, long long seq_stride, int cap,
                               int pos0, int pos_step, int seq_step, double theta)
{
    int n = blockIdx.x, hh = blockIdx.y, half = hd / 2;
    int pos = pos0 + n * pos_step;
    long long seq = (long long)n * seq_step;
    const bf16 *row = qkv + (size_t)n * ldqkv;
    const bf16 *src;
    bf16 *dst;
    bool rot = true;
    if (hh < H) {
        src = row + (size_t)hh * hd;
        dst = q + hh * q_sh + n * q_sn;
    } else if (hh < H + KV) {
        int g = hh - H;
        src = row + (size_t)(H + g) * hd;
        dst = kc + seq * seq_stride + ((size_t)g * cap + pos) * hd;
    } else {
        int g = hh - H - KV;
        src = row + (size_t)(H + KV + g) * hd;
        dst = vc + seq * seq_stride + ((size_t)g * cap + pos) * hd;
        rot = false;
    }
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        if (rot) {
            float a = bf(src[i]), b = bf(src[i + half]);
            double sn, cs;
            sincos((double)pos * pow(theta, -2.0 * i / hd), &sn, &cs);
            float c = (float)cs, s = (float)sn;
            dst[i] = __float2bfloat16(a * c - b * s);
            dst[i + half] = __float2bfloat16(b * c + a * s);
        } else {
            dst[i] = src[i];
            dst[i + half] = src[i + half];
        }
    }
}

/* ---- kernels: decode attention (split-K over the cache) ---- */

#define DEC_CHUNK 128     /* keys per block */
#define DEC_THREADS 128
#define DEC_MAXE 8        /* head_dim <= 32 * DEC_MAXE = 256 */

/* Block (split, kv head g, sequence b): the G query heads of g against keys
 * [split*CHUNK, ...) of b's cache. Writes per head the partial output
 * (unnormalised, relative to the block max), the max and the sum of exps:
 * part[((b*H + head) * splits + split) * (hd + 2) + {0..hd-1, hd, hd+1}]. */
__global__ void k_decode_partial(const bf16 *q, const bf16 *kc, const bf16 *vc, long long seq_stride, int cap,
                                 int H, int KV, int hd, int nkeys, float scale, float *part, int splits)
{
    extern __shared__ float sm[];
    int G = H / KV;
    float *qs = sm, *ps = qs + G * hd, *mx = ps + G * DEC_CHUNK, *ls = mx + G;
    int split = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
    int k0 = split * DEC_CHUNK, nk = min(nkeys, k0 + DEC_CHUNK) - k0;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const bf16 *qb = q + ((size_t)b * H + (size_t)g * G) * hd;
    for (int i = threadIdx.x; i < G * hd; i += blockDim.x)
        qs[i] = bf(qb[i]) * scale;
    __syncthreads();
    const bf16 *K = kc + b * seq_stride + (size_t)g * cap * hd, *V = vc + b * seq_stride + (size_t)g * cap * hd;
    for (int k = warp; k < nk; k += nw) {   /* a warp per key: G dot products */
        const bf16 *kr = K + (size_t)(k0 + k) * hd;
        float kv[DEC_MAXE];
#pragma unroll
        for (int u = 0; u < DEC_MAXE; u++) {
            int e = lane + 32 * u;
            kv[u] = e < hd ? bf(kr[e]) : 0.0f;
        }
        for (int j = 0; j < G; j++) {
            float acc = 0.0f;
#pragma unroll
            for (int u = 0; u < DEC_MAXE; u++) {
                int e = lane + 32 * u;
                if (e < hd)
                    acc += qs[j * hd + e] * kv[u];
            }
            acc = warp_sum(acc);
            if (lane == 0)
                ps[j * DEC_CHUNK + k] = acc;
        }
    }
    __syncthreads();
    for (int j = warp; j < G; j += nw) {   /* a warp per head: max, exp, sum */
        float m = -INFINITY, s = 0.0f;
        for (int k = lane; k < nk; k += 32)
            m = fmaxf(m, ps[j * DEC_CHUNK + k]);
        m = warp_max(m);
        for (int k = lane; k < nk; k += 32) {
            float p = __expf(ps[j * DEC_CHUNK + k] - m);
            ps[j * DEC_CHUNK + k] = p;
            s += p;
        }
        s = warp_sum(s);
        if (lane == 0) {
            mx[j] = m;
            ls[j] = s;
        }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < G * hd; idx += blockDim.x) {
        int j = idx / hd, e = idx % hd;
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += ps[j * DEC_CHUNK + k] * bf(V[(size_t)(k0 + k) * hd + e]);
        float *dst = part + (((size_t)b * H + (size_t)g * G + j) * splits + split) * (hd + 2);
        dst[e] = acc;
        if (e == 0) {
            dst[hd] = mx[j];
            dst[hd + 1] = ls[j];
        }
    }
}

/* Block (head, sequence): merge the splits into o [B][H*hd]. */
__global__ void k_decode_combine(const float *part, int splits, int hd, int H, bf16 *o)
{
    int h = blockIdx.x, b = blockIdx.y;
    const float *p = part + ((size_t)b * H + h) * splits * (hd + 2);
    float M = -INFINITY, den = 0.0f;
    for (int s = 0; s < splits; s++)
        M = fmaxf(M, p[s * (hd + 2) + hd]);
    for (int s = 0; s < splits; s++)
        den += p[s * (hd + 2) + hd + 1] * __expf(p[s * (hd + 2) + hd] - M);
    for (int e = threadIdx.x; e < hd; e += blockDim.x) {
        float num = 0.0f;
        for (int s = 0; s < splits; s++)
            num += p[s * (hd + 2) + e] * __expf(p[s * (hd + 2) + hd] - M);
        o[((size_t)b * H + h) * hd + e] = __float2bfloat16(num / den);
    }
}

/* Random bf16 in [-1, 1) from a hash of (seed, index): cache contents for timing. */
__global__ void k_fill_random(bf16 *p, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        p[i] = __float2bfloat16((float)(z >> 40) * (1.0f / 8388608.0f) - 1.0f);
    }
}

/* ---- kernels: ToMe ---- */

/* Block (t, b): token t of image b, normalised to unit length, into the A
 * (even t) or B (odd t) matrix. */
template <class T>
__global__ void k_tome_norm(const T *x, int n, int d, float *an, float *bn)
{
    __shared__ float sh[32];
    int t = blockIdx.x, b = blockIdx.y, nA = (n + 1) / 2, nB = n / 2;
    const T *row = x + ((size_t)b * n + t) * d;
    float ss = 0.0f;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        ss += to_f(row[e]) * to_f(row[e]);
    ss = block_sum(ss, sh);
    float inv = ss > 0.0f ? 1.0f / sqrtf(ss) : 0.0f;
    float *dst = (t & 1) ? bn + ((size_t)b * nB + t / 2) * d : an + ((size_t)b * nA + t / 2) * d;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        dst[e] = to_f(row[e]) * inv;
}

/* Block b: each A token's best B (first maximum), then its rank by score
 * (ties: lower index first); the r best merge. dst[b][i] is A token i's
 * output row: its place among the unmerged A tokens, or (nA - r) + its B match. */
__global__ void k_tome_match(const float *S, int nA, int nB, int r, int *dst)
{
    extern __shared__ float tm[];
    float *score = tm;
    int *best = (int *)(score + nA), *merged = best + nA;
    int b = blockIdx.x;
    const float *Sb = S + (size_t)b * nA * nB;
    for (int i = threadIdx.x; i < nA; i += blockDim.x) {
        float bs = -INFINITY;
        int bj = 0;
        for (int j = 0; j < nB; j++) {
            float v = Sb[(size_t)i * nB + j];
            if (v > bs) {
                bs = v;
                bj = j;
            }
        }
        score[i] = bs;
        best[i] = bj;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nA; i += blockDim.x) {
        int rank = 0;
        for (int k = 0; k < nA; k++)
            rank += score[k] > score[i] || (score[k] == score[i] && k < i);
        merged[i] = rank < r;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nA; i += blockDim.x) {
        int o;
        if (merged[i]) {
            o = nA - r + best[i];
        } else {
            o = 0;
            for (int k = 0; k < i; k++)
                o += !merged[k];
        }
        dst[(size_t)b * nA + i] = o;
    }
}

/* Block (t, b): add size * x of token t into its output row's accumulator. */
template <class T>
__global__ void k_tome_scatter(const T *x, const float *size_in, const int *dst, int n, int d, int r,
                               float *acc, float *size_out, int n_out)
{
    int t = blockIdx.x, b = blockIdx.y, nA = (n + 1) / 2;
    float s = size_in ? size_in[(size_t)b * n + t] : 1.0f;
    int o = (t & 1) ? nA - r + t / 2 : dst[(size_t)b * nA + t / 2];
    const T *row = x + ((size_t)b * n + t) * d;
    float *ar = acc + ((size_t)b * n_out + o) * d;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        atomicAdd(&ar[e], s * to_f(row[e]));
    if (threadIdx.x == 0)
        atomicAdd(&size_out[(size_t)b * n_out + o], s);
}

template <class T>
__global__ void k_tome_finalize(const float *acc, const float *size, size_t rows, int d, T *out)
{
    size_t n = rows * d;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        store(&out[i], acc[i] / size[i / d]);
}

__global__ void k_fill_f32(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

/* ---- context ---- */

extern "C" int cuda_compiled(void) { return 1; }

static int ctx_init(cuda_ctx *cx)
{
    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&cx->stream));
    CKB(cublasCreate(&cx->blas));
    CKB(cublasSetStream(cx->blas, cx->stream));
    CKB(cublasSetMathMode(cx->blas, CUBLAS_DEFAULT_MATH));   /* no TF32 for the fp32 GEMMs */
    return 0;
}

extern "C" cuda_ctx *cuda_ctx_new(char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        snprintf(err, errlen, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return nullptr;
    }
    cuda_ctx *cx = (cuda_ctx *)calloc(1, sizeof *cx);
    if (!cx) {
        snprintf(err, errlen, "out of host memory");
        return nullptr;
    }
    if (ctx_init(cx)) {
        snprintf(err, errlen, "%s", cx->err);
        cuda_ctx_free(cx);
        return nullptr;
    }
    return cx;
}

extern "C" void cuda_ctx_free(cuda_ctx *cx)
{
    if (!cx)
        return;
    if (cx->blas)
        cublasDestroy(cx->blas);
    if (cx->stream)
        cudaStreamDestroy(cx->stream);
    free(cx);
}

extern "C" const char *cuda_error(const cuda_ctx *cx)
{
    return cx ? cx->err : "no CUDA context";
}

extern "C" int cuda_take_oom(cuda_ctx *cx)
{
    int oom = cx && cx->oom;
    if (cx)
        cx->oom = 0;
    return oom;
}

extern "C" int cuda_describe(cuda_ctx *cx, char *buf, size_t len)
{
    cudaDeviceProp p;
    int dev = 0, drv = 0, rt = 0, blas = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&p, dev));
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    CKB(cublasGetVersion(cx->blas, &blas));
    snprintf(buf, len, "%s, sm_%d%d, %d SMs, %.1f GiB, driver %d.%d, runtime %d.%d, cuBLAS %d",
             p.name, p.major, p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / (1 << 30),
             drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, blas);
    return 0;
}

/* ---- timing with CUDA events ---- */

static void destroy_events(cudaEvent_t *ev, int n)
{
    for (int i = 0; i < n; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
}

extern "C" int cuda_time(cuda_ctx *cx, cuda_enqueue_fn enqueue, void *arg, const harness_opts *o, harness_result *r)
{
    memset(r, 0, sizeof *r);
    REQUIRE(o->reps >= 1 && o->warmups >= HARNESS_MIN_WARMUPS && o->nbuf >= 1,
            "cuda_time: need reps >= 1, warmups >= %d, nbuf >= 1", HARNESS_MIN_WARMUPS);
    for (int i = 0; i < o->warmups; i++)
        if (enqueue(arg, i % o->nbuf))
            return -1;
    CK(cudaStreamSynchronize(cx->stream));
    int nev = 2 * o->reps, made = 0;
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)nev, sizeof *ev);
    double *samples = (double *)malloc((size_t)o->reps * sizeof *samples);
    cudaError_t e = cudaSuccess;
    const char *what = "";
    int rc = -1;
    if (!ev || !samples) {
        snprintf(cx->err, sizeof cx->err, "cuda_time: out of host memory");
        goto out;
    }
    for (; made < nev; made++)
        if ((e = cudaEventCreate(&ev[made])) != cudaSuccess) {
            what = "cudaEventCreate";
            goto cuda_fail;
        }
    for (int i = 0; i < o->reps; i++) {
        if ((e = cudaEventRecord(ev[2 * i], cx->stream)) != cudaSuccess) {
            what = "cudaEventRecord(start)";
            goto cuda_fail;
        }
        if (enqueue(arg, (o->warmups + i) % o->nbuf))
            goto out;
        if ((e = cudaEventRecord(ev[2 * i + 1], cx->stream)) != cudaSuccess) {
            what = "cudaEventRecord(stop)";
            goto cuda_fail;
        }
    }
    if ((e = cudaEventSynchronize(ev[nev - 1])) != cudaSuccess) {
        what = "cudaEventSynchronize";
        goto cuda_fail;
    }
    for (int i = 0; i < o->reps; i++) {
        float ms = 0.0f;
        if ((e = cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])) != cudaSuccess) {
            what = "cudaEventElapsedTime";
            goto cuda_fail;
        }
        samples[i] = ms;
    }
    if (harness_stats(samples, o->reps, r) == 0) {
        samples = nullptr;   /* r owns them */
        rc = 0;
    } else {
        snprintf(cx->err, sizeof cx->err, "cuda_time: out of host memory");
    }
    goto out;
cuda_fail:
    fail(cx, __FILE__, __LINE__, what, cudaGetErrorString(e));
out:
    if (ev)
        destroy_events(ev, made);
    free(samples);
    return rc;
}

/* ---- vision encoder ---- */

struct dev_vlayer {
    bf16 *block;
    const bf16 *ln1_g, *ln1_b, *w_qkv, *b_qkv, *w_o, *b_o, *ln2_g, *ln2_b, *w_fc1, *b_fc1, *w_fc2, *b_fc2;
};

struct cuda_vision {
    cuda_ctx *cx;
    preset_vision cfg;
    int max_batch, nslots, T, D, M, H, hd, K, gw;
    bf16 *stem;
    const bf16 *w_patch, *b_patch, *pos, *lnf_g, *lnf_b;
    int n_sets;
    dev_vlayer *sets;
    bf16 **pix, **out;                 /* per slot */
    bf16 *patches, *h, *qkv, *qh, *kh, *vh, *P, *oh, *o, *f;
    float *x, *a, *S;
};

/* A device pointer at the same offset in dev as host is in hbase. */
#define MAPW(dev, dbase, host, hbase) ((dev) = (dbase) + ((host) - (hbase)))

static int round8(int n) { return (n + 7) / 8 * 8; }

static int vision_init(cuda_vision *v, const weights_vision *w)
{
    cuda_ctx *cx = v->cx;
    const preset_vision *c = &w->cfg;
    v->cfg = *c;
    v->T = preset_vision_tokens(c);
    v->D = c->width;
    v->M = c->mlp;
    v->H = c->heads;
    v->hd = c->width / c->heads;
    v->K = preset_vision_patch_dim(c);
    v->gw = preset_vision_grid_w(c);
    if (dalloc(cx, &v->stem, w->block_len) || upload_bf16(cx, v->stem, w->block, w->block_len))
        return -1;
    MAPW(v->w_patch, v->stem, w->w_patch, w->block);
    MAPW(v->b_patch, v->stem, w->b_patch, w->block);
    MAPW(v->pos, v->stem, w->pos, w->block);
    MAPW(v->lnf_g, v->stem, w->lnf_g, w->block);
    MAPW(v->lnf_b, v->stem, w->lnf_b, w->block);
    v->sets = (dev_vlayer *)calloc((size_t)w->n_sets, sizeof *v->sets);
    REQUIRE(v->sets, "cuda_vision_new: out of host memory");
    v->n_sets = w->n_sets;
    for (int s = 0; s < w->n_sets; s++) {
        const weights_vlayer *hl = &w->set[s];
        dev_vlayer *dl = &v->sets[s];
        if (dalloc(cx, &dl->block, hl->block_len) || upload_bf16(cx, dl->block, hl->block, hl->block_len))
            return -1;
        MAPW(dl->ln1_g, dl->block, hl->ln1_g, hl->block); MAPW(dl->ln1_b, dl->block, hl->ln1_b, hl->block);
        MAPW(dl->w_qkv, dl->block, hl->w_qkv, hl->block); MAPW(dl->b_qkv, dl->block, hl->b_qkv, hl->block);
        MAPW(dl->w_o, dl->block, hl->w_o, hl->block);     MAPW(dl->b_o, dl->block, hl->b_o, hl->block);
        MAPW(dl->ln2_g, dl->block, hl->ln2_g, hl->block); MAPW(dl->ln2_b, dl->block, hl->ln2_b, hl->block);
        MAPW(dl->w_fc1, dl->block, hl->w_fc1, hl->block); MAPW(dl->b_fc1, dl->block, hl->b_fc1, hl->block);
        MAPW(dl->w_fc2, dl->block, hl->w_fc2, hl->block); MAPW(dl->b_fc2, dl->block, hl->b_fc2, hl->block);
    }
    size_t B = (size_t)v->max_batch, BT = B * v->T, D = (size_t)v->D, ldS = (size_t)round8(v->T);
    size_t npix = B * c->channels * c->image_h * c->image_w;
    v->pix = (bf16 **)calloc((size_t)v->nslots, sizeof *v->pix);
    v->out = (bf16 **)calloc((size_t)v->nslots, sizeof *v->out);
    REQUIRE(v->pix && v->out, "cuda_vision_new: out of host memory");
    for (int s = 0; s < v->nslots; s++)
        if (dalloc(cx, &v->pix[s], npix) || dalloc(cx, &v->out[s], BT * D))
            return -1;
    return dalloc(cx, &v->patches, BT * v->K) || dalloc(cx, &v->h, BT * D) || dalloc(cx, &v->qkv, BT * 3 * D) ||
           dalloc(cx, &v->qh, BT * D) || dalloc(cx, &v->kh, BT * D) || dalloc(cx, &v->vh, BT * D) ||
           dalloc(cx, &v->P, BT * v->H * ldS) || dalloc(cx, &v->oh, BT * D) || dalloc(cx, &v->o, BT * D) ||
           dalloc(cx, &v->f, BT * v->M) || dalloc(cx, &v->x, BT * D) || dalloc(cx, &v->a, BT * D) ||
           dalloc(cx, &v->S, BT * v->H * ldS) ? -1 : 0;
}

extern "C" void cuda_vision_free(cuda_vision *v)
{
    if (!v)
        return;
    cudaFree(v->stem);
    for (int s = 0; v->sets && s < v->n_sets; s++)
        cudaFree(v->sets[s].block);
    free(v->sets);
    for (int s = 0; s < v->nslots; s++) {
        if (v->pix)
            cudaFree(v->pix[s]);
        if (v->out)
            cudaFree(v->out[s]);
    }
    free(v->pix);
    free(v->out);
    void *bufs[] = { v->patches, v->h, v->qkv, v->qh, v->kh, v->vh, v->P, v->oh, v->o, v->f, v->x, v->a, v->S };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    free(v);
}

extern "C" cuda_vision *cuda_vision_new(cuda_ctx *cx, const weights_vision *w, int max_batch, int nslots)
{
    if (max_batch < 1 || nslots < 1) {
        snprintf(cx->err, sizeof cx->err, "cuda_vision_new: max_batch and nslots must be >= 1");
        return nullptr;
    }
    cuda_vision *v = (cuda_vision *)calloc(1, sizeof *v);
    if (!v) {
        snprintf(cx->err, sizeof cx->err, "cuda_vision_new: out of host memory");
        return nullptr;
    }
    v->cx = cx;
    v->max_batch = max_batch;
    v->nslots = nslots;
    if (vision_init(v, w)) {
        cuda_vision_free(v);
        return nullptr;
    }
    return v;
}

extern "C" int cuda_vision_set_input(cuda_vision *v, int slot, int batch, const float *pixels)
{
    cuda_ctx *cx = v->cx;
    REQUIRE(slot >= 0 && slot < v->nslots && batch >= 1 && batch <= v->max_batch,
            "cuda_vision_set_input: slot %d / batch %d out of range", slot, batch);
    return upload_bf16(cx, v->pix[slot], pixels, (size_t)batch * v->cfg.channels * v->cfg.image_h * v->cfg.image_w);
}

extern "C" int cuda_vision_enqueue(cuda_vision *v, int slot, int batch)
{
    cuda_ctx *cx = v->cx;
    REQUIRE(slot >= 0 && slot < v->nslots && batch >= 1 && batch <= v->max_batch,
            "cuda_vision_enqueue: slot %d / batch %d out of range", slot, batch);
    cudaStream_t st = cx->stream;
    const preset_vision *c = &v->cfg;
    int T = v->T, D = v->D, M = v->M, H = v->H, hd = v->hd, K = v->K, BT = batch * T, ldS = round8(T);
    float eps = (float)c->ln_eps, scale = 1.0f / sqrtf((float)hd);
    const cudaDataType F32 = CUDA_R_32F, BF = CUDA_R_16BF;

    k_unfold<<<blocks_for((size_t)BT * K, 256), 256, 0, st>>>(v->pix[slot], v->patches, batch, c->channels,
                                                                c->image_h, c->image_w, c->patch, v->gw, T);
    LAUNCHED("k_unfold");
    if (gemm_bf(cx, false, BT, D, K, v->patches, K, 0, v->w_patch, D, 0, v->a, F32, D, 0, 1))
        return -1;
    k_add_norm<<<BT, 256, 0, st>>>(v->x, v->a, v->b_patch, v->pos, T, 0, v->sets[0].ln1_g, v->sets[0].ln1_b,
                                   v->h, D, eps, 0);
    LAUNCHED("k_add_norm(embed)");
    for (int l = 0; l < c->layers; l++) {
        const dev_vlayer *L = &v->sets[l % v->n_sets];
        if (gemm_bf(cx, false, BT, 3 * D, D, v->h, D, 0, L->w_qkv, 3 * D, 0, v->qkv, BF, 3 * D, 0, 1))
            return -1;
        k_vis_qkv_split<<<blocks_for((size_t)BT * 3 * D, 256), 256, 0, st>>>(v->qkv, L->b_qkv, v->qh, v->kh, v->vh,
                                                                            batch, T, H, hd);
        LAUNCHED("k_vis_qkv_split");
        /* S[b,h] = Q K^T over batch * heads. */
        if (gemm_bf(cx, true, T, T, hd, v->qh, hd, (long long)T * hd, v->kh, hd, (long long)T * hd,
                    v->S, F32, ldS, (long long)T * ldS, batch * H))
            return -1;
        k_softmax<<<batch * H * T, 128, 0, st>>>(v->S, v->P, ldS, T, scale, 0, 0);
        LAUNCHED("k_softmax");
        if (gemm_bf(cx, false, T, hd, T, v->P, ldS, (long long)T * ldS, v->vh, hd, (long long)T * hd,
                    v->oh, BF, hd, (long long)T * hd, batch * H))
            return -1;
        k_heads_to_tokens<<<blocks_for((size_t)BT * D, 256), 256, 0, st>>>(v->oh, v->o, batch, H, T, hd);
        LAUNCHED("k_heads_to_tokens");
        if (gemm_bf(cx, false, BT, D, D, v->o, D, 0, L->w_o, D, 0, v->a, F32, D, 0, 1))
            return -1;
        k_add_norm<<<BT, 256, 0, st>>>(v->x, v->a, L->b_o, nullptr, T, 1, L->ln2_g, L->ln2_b, v->h, D, eps, 0);
        LAUNCHED("k_add_norm(attn)");
        if (gemm_bf(cx, false, BT, M, D, v->h, D, 0, L->w_fc1, M, 0, v->f, BF, M, 0, 1))
            return -1;
        k_bias_gelu<<<blocks_for((size_t)BT * M, 256), 256, 0, st>>>(v->f, L->b_fc1, (size_t)BT * M, M);
        LAUNCHED("k_bias_gelu");
        if (gemm_bf(cx, false, BT, D, M, v->f, M, 0, L->w_fc2, D, 0, v->a, F32, D, 0, 1))
            return -1;
        bool last = l + 1 == c->layers;
        const dev_vlayer *N = &v->sets[(l + 1) % v->n_sets];
        k_add_norm<<<BT, 256, 0, st>>>(v->x, v->a, L->b_fc2, nullptr, T, 1, last ? v->lnf_g : N->ln1_g,
                                       last ? v->lnf_b : N->ln1_b, last ? v->out[slot] : v->h, D, eps, 0);
        LAUNCHED("k_add_norm(mlp)");
    }
    return 0;
}

extern "C" int cuda_vision_get_output(cuda_vision *v, int slot, int batch, float *out)
{
    cuda_ctx *cx = v->cx;
    REQUIRE(slot >= 0 && slot < v->nslots && batch >= 1 && batch <= v->max_batch,
            "cuda_vision_get_output: slot %d / batch %d out of range", slot, batch);
    CK(cudaStreamSynchronize(cx->stream));
    return download_bf16(cx, out, v->out[slot], (size_t)batch * v->T * v->D);
}

/* ---- ToMe reduce ---- */

struct cuda_reduce {
    cuda_ctx *cx;
    int max_batch, n, d, nslots;
    bf16 **in, **out;
    float **osize;
    float *an, *bn, *S, *acc, *xs[2], *ss[2];
    int *dst;
};

extern "C" void cuda_reduce_free(cuda_reduce *r)
{
    if (!r)
        return;
    for (int s = 0; s < r->nslots; s++) {
        if (r->in)
            cudaFree(r->in[s]);
        if (r->out)
            cudaFree(r->out[s]);
        if (r->osize)
            cudaFree(r->osize[s]);
    }
    free(r->in);
    free(r->out);
    free(r->osize);
    void *bufs[] = { r->an, r->bn, r->S, r->acc, r->xs[0], r->xs[1], r->ss[0], r->ss[1], r->dst };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    free(r);
}

static int reduce_init(cuda_reduce *r)
{
    cuda_ctx *cx = r->cx;
    size_t B = (size_t)r->max_batch, n = (size_t)r->n, d = (size_t)r->d, nA = (n + 1) / 2, nB = n / 2;
    r->in = (bf16 **)calloc((size_t)r->nslots, sizeof *r->in);
    r->out = (bf16 **)calloc((size_t)r->nslots, sizeof *r->out);
    r->osize = (float **)calloc((size_t)r->nslots, sizeof *r->osize);
    REQUIRE(r->in && r->out && r->osize, "cuda_reduce_new: out of host memory");
    for (int s = 0; s < r->nslots; s++)
        if (dalloc(cx, &r->in[s], B * n * d) || dalloc(cx, &r->out[s], B * n * d) || dalloc(cx, &r->osize[s], B * n))
            return -1;
    return dalloc(cx, &r->an, B * nA * d) || dalloc(cx, &r->bn, B * nB * d) || dalloc(cx, &r->S, B * nA * nB) ||
           dalloc(cx, &r->acc, B * n * d) || dalloc(cx, &r->xs[0], B * n * d) || dalloc(cx, &r->xs[1], B * n * d) ||
           dalloc(cx, &r->ss[0], B * n) || dalloc(cx, &r->ss[1], B * n) || dalloc(cx, &r->dst, B * nA) ? -1 : 0;
}

extern "C" cuda_reduce *cuda_reduce_new(cuda_ctx *cx, int max_batch, int tokens_in, int dim, int nslots)
{
    if (max_batch < 1 || tokens_in < 1 || dim < 1 || nslots < 1) {
        snprintf(cx->err, sizeof cx->err, "cuda_reduce_new: sizes must be >= 1");
        return nullptr;
    }
    cuda_reduce *r = (cuda_reduce *)calloc(1, sizeof *r);
    if (!r) {
        snprintf(cx->err, sizeof cx->err, "cuda_reduce_new: out of host memory");
        return nullptr;
    }
    r->cx = cx;
    r->max_batch = max_batch;
    r->n = tokens_in;
    r->d = dim;
    r->nslots = nslots;
    if (reduce_init(r)) {
        cuda_reduce_free(r);
        return nullptr;
    }
    return r;
}

extern "C" int cuda_reduce_set_input(cuda_reduce *r, int slot, int batch, const float *x)
{
    cuda_ctx *cx = r->cx;
    REQUIRE(slot >= 0 && slot < r->nslots && batch >= 1 && batch <= r->max_batch,
            "cuda_reduce_set_input: slot %d / batch %d out of range", slot, batch);
    return upload_bf16(cx, r->in[slot], x, (size_t)batch * r->n * r->d);
}

/* One round: n tokens (x, sizes; sizes NULL = ones) -> n - rr into out/out_size. */
template <class Tin, class Tout>
static int tome_round(cuda_reduce *r, int batch, int n, int rr, const Tin *x, const float *size,
                      Tout *out, float *out_size)
{
    cuda_ctx *cx = r->cx;
    cudaStream_t st = cx->stream;
    int d = r->d, nA = (n + 1) / 2, nB = n / 2, m = n - rr;
    dim3 tok((unsigned)n, (unsigned)batch);
    k_tome_norm<Tin><<<tok, 128, 0, st>>>(x, n, d, r->an, r->bn);
    LAUNCHED("k_tome_norm");
    if (gemm(cx, true, nA, nB, d, r->an, CUDA_R_32F, d, (long long)nA * d, r->bn, CUDA_R_32F, d,
             (long long)nB * d, r->S, CUDA_R_32F, nB, (long long)nA * nB, batch))
        return -1;
    k_tome_match<<<batch, 256, (size_t)nA * 3 * sizeof(float), st>>>(r->S, nA, nB, rr, r->dst);
    LAUNCHED("k_tome_match");
    CK(cudaMemsetAsync(r->acc, 0, (size_t)batch * m * d * sizeof(float), st));
    CK(cudaMemsetAsync(out_size, 0, (size_t)batch * m * sizeof(float), st));
    k_tome_scatter<Tin><<<tok, 128, 0, st>>>(x, size, r->dst, n, d, rr, r->acc, out_size, m);
    LAUNCHED("k_tome_scatter");
    k_tome_finalize<Tout><<<blocks_for((size_t)batch * m * d, 256), 256, 0, st>>>(r->acc, out_size,
                                                                                 (size_t)batch * m, d, out);
    LAUNCHED("k_tome_finalize");
    return 0;
}

extern "C" int cuda_reduce_enqueue(cuda_reduce *r, int slot, int batch, int tokens_out)
{
    cuda_ctx *cx = r->cx;
    REQUIRE(slot >= 0 && slot < r->nslots && batch >= 1 && batch <= r->max_batch && tokens_out >= 1 &&
            tokens_out <= r->n, "cuda_reduce_enqueue: slot %d / batch %d / tokens_out %d out of range",
            slot, batch, tokens_out);
    cudaStream_t st = cx->stream;
    size_t nd = (size_t)batch * r->n * r->d;
    if (tokens_out == r->n) {   /* nothing to merge: copy, sizes 1 */
        CK(cudaMemcpyAsync(r->out[slot], r->in[slot], nd * sizeof(bf16), cudaMemcpyDeviceToDevice, st));
        k_fill_f32<<<blocks_for((size_t)batch * r->n, 256), 256, 0, st>>>(r->osize[slot], (size_t)batch * r->n, 1.0f);
        LAUNCHED("k_fill_f32");
        return 0;
    }
    int n = r->n, p = 0;
    const float *xf = nullptr, *sf = nullptr;   /* the current fp32 tokens after round 1 */
    while (n > tokens_out) {
        int rr = tome_round_r(n, tokens_out);
        bool first = n == r->n, last = n - rr == tokens_out;
        int rc;
        if (first && last)
            rc = tome_round<bf16, bf16>(r, batch, n, rr, r->in[slot], nullptr, r->out[slot], r->osize[slot]);
        else if (first)
            rc = tome_round<bf16, float>(r, batch, n, rr, r->in[slot], nullptr, r->xs[p], r->ss[p]);
        else if (last)
            rc = tome_round<float, bf16>(r, batch, n, rr, xf, sf, r->out[slot], r->osize[slot]);
        else
            rc = tome_round<float, float>(r, batch, n, rr, xf, sf, r->xs[p], r->ss[p]);
        if (rc)
            return -1;
        xf = r->xs[p];
        sf = r->ss[p];
        p ^= 1;
        n -= rr;
    }
    return 0;
}

extern "C" int cuda_reduce_get_output(cuda_reduce *r, int slot, int batch, int tokens_out, float *x, float *size)
{
    cuda_ctx *cx = r->cx;
    REQUIRE(slot >= 0 && slot < r->nslots && batch >= 1 && batch <= r->max_batch && tokens_out >= 1 &&
            tokens_out <= r->n, "cuda_reduce_get_output: arguments out of range");
    CK(cudaStreamSynchronize(cx->stream));
    if (download_bf16(cx, x, r->out[slot], (size_t)batch * tokens_out * r->d))
        return -1;
    return download_f32(cx, size, r->osize[slot], (size_t)batch * tokens_out);
}

/* ---- LLM ---- */

struct dev_llayer {
    bf16 *block;
    const bf16 *rms1, *w_qkv, *w_o, *rms2, *w_13, *w_2;
};

struct cuda_llm {
    cuda_ctx *cx;
    preset_llm cfg;
    int n_sets;
    dev_llayer *sets;
};

struct cuda_llm_ws {
    cuda_llm *m;
    int max_tokens, seqs, cap, nslots, max_splits;
    float **in, **out;
    bf16 *h, *qkv, *qh, *P, *oh, *o, *gu, *g, *kc, *vc;
    float *a, *S, *part;
};

extern "C" void cuda_llm_free(cuda_llm *m)
{
    if (!m)
        return;
    for (int s = 0; m->sets && s < m->n_sets; s++)
        cudaFree(m->sets[s].block);
    free(m->sets);
    free(m);
}

static int llm_upload(cuda_llm *m, const weights_llm *w)
{
    cuda_ctx *cx = m->cx;
    m->sets = (dev_llayer *)calloc((size_t)w->n_sets, sizeof *m->sets);
    REQUIRE(m->sets, "cuda_llm_new: out of host memory");
    m->n_sets = w->n_sets;
    for (int s = 0; s < w->n_sets; s++) {
        const weights_llayer *hl = &w->set[s];
        dev_llayer *dl = &m->sets[s];
        if (dalloc(cx, &dl->block, hl->block_len) || upload_bf16(cx, dl->block, hl->block, hl->block_len))
            return -1;
        MAPW(dl->rms1, dl->block, hl->rms1, hl->block);
        MAPW(dl->w_qkv, dl->block, hl->w_qkv, hl->block);
        MAPW(dl->w_o, dl->block, hl->w_o, hl->block);
        MAPW(dl->rms2, dl->block, hl->rms2, hl->block);
        MAPW(dl->w_13, dl->block, hl->w_13, hl->block);
        MAPW(dl->w_2, dl->block, hl->w_2, hl->block);
    }
    return 0;
}

extern "C" cuda_llm *cuda_llm_new(cuda_ctx *cx, const weights_llm *w)
{
    int G = w->cfg.heads / w->cfg.kv_heads, hd = w->cfg.width / w->cfg.heads;
    size_t smem = ((size_t)G * (hd + DEC_CHUNK) + 2 * G) * sizeof(float);
    if (hd > 32 * DEC_MAXE || smem > 48 * 1024) {
        snprintf(cx->err, sizeof cx->err, "cuda_llm_new: %s: head_dim %d (max %d) or group %d too large for "
                 "the decode kernel", w->cfg.name, hd, 32 * DEC_MAXE, G);
        return nullptr;
    }
    cuda_llm *m = (cuda_llm *)calloc(1, sizeof *m);
    if (!m) {
        snprintf(cx->err, sizeof cx->err, "cuda_llm_new: out of host memory");
        return nullptr;
    }
    m->cx = cx;
    m->cfg = w->cfg;
    if (llm_upload(m, w)) {
        cuda_llm_free(m);
        return nullptr;
    }
    return m;
}

extern "C" void cuda_llm_ws_free(cuda_llm_ws *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nslots; i++) {
        if (s->in)
            cudaFree(s->in[i]);
        if (s->out)
            cudaFree(s->out[i]);
    }
    free(s->in);
    free(s->out);
    void *bufs[] = { s->h, s->qkv, s->qh, s->P, s->oh, s->o, s->gu, s->g, s->kc, s->vc, s->a, s->S, s->part };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    free(s);
}

static size_t kv_elems(const cuda_llm_ws *s)
{
    const preset_llm *c = &s->m->cfg;
    return (size_t)s->seqs * c->layers * c->kv_heads * s->cap * (c->width / c->heads);
}

static int llm_ws_init(cuda_llm_ws *s)
{
    cuda_ctx *cx = s->m->cx;
    const preset_llm *c = &s->m->cfg;
    size_t T = (size_t)s->max_tokens, D = (size_t)c->width, H = (size_t)c->heads, hd = D / H;
    size_t QD = H * hd, KVD = (size_t)c->kv_heads * hd, M = (size_t)c->mlp, ldS = (size_t)round8(s->cap);
    s->max_splits = (s->cap + DEC_CHUNK - 1) / DEC_CHUNK;
    s->in = (float **)calloc((size_t)s->nslots, sizeof *s->in);
    s->out = (float **)calloc((size_t)s->nslots, sizeof *s->out);
    REQUIRE(s->in && s->out, "cuda_llm_ws_new: out of host memory");
    for (int i = 0; i < s->nslots; i++)
        if (dalloc(cx, &s->in[i], T * D) || dalloc(cx, &s->out[i], T * D))
            return -1;
    return dalloc(cx, &s->h, T * D) || dalloc(cx, &s->qkv, T * (QD + 2 * KVD)) || dalloc(cx, &s->qh, T * QD) ||
           dalloc(cx, &s->P, H * T * ldS) || dalloc(cx, &s->oh, T * QD) || dalloc(cx, &s->o, T * QD) ||
           dalloc(cx, &s->gu, T * 2 * M) || dalloc(cx, &s->g, T * M) || dalloc(cx, &s->kc, kv_elems(s)) ||
           dalloc(cx, &s->vc, kv_elems(s)) || dalloc(cx, &s->a, T * D) || dalloc(cx, &s->S, H * T * ldS) ||
           dalloc(cx, &s->part, T * H * s->max_splits * (hd + 2)) ? -1 : 0;
}

extern "C" cuda_llm_ws *cuda_llm_ws_new(cuda_llm *m, int max_tokens, int seqs, int cap, int nslots)
{
    cuda_ctx *cx = m->cx;
    if (max_tokens < 1 || seqs < 1 || cap < 1 || nslots < 1) {
        snprintf(cx->err, sizeof cx->err, "cuda_llm_ws_new: sizes must be >= 1");
        return nullptr;
    }
    cuda_llm_ws *s = (cuda_llm_ws *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(cx->err, sizeof cx->err, "cuda_llm_ws_new: out of host memory");
        return nullptr;
    }
    s->m = m;
    s->max_tokens = max_tokens;
    s->seqs = seqs;
    s->cap = cap;
    s->nslots = nslots;
    if (llm_ws_init(s)) {
        cuda_llm_ws_free(s);
        return nullptr;
    }
    return s;
}

extern "C" int cuda_llm_fill_cache(cuda_llm_ws *s, uint64_t seed)
{
    cuda_ctx *cx = s->m->cx;
    size_t n = kv_elems(s);
    k_fill_random<<<blocks_for(n, 256), 256, 0, cx->stream>>>(s->kc, n, (unsigned long long)seed);
    LAUNCHED("k_fill_random(k)");
    k_fill_random<<<blocks_for(n, 256), 256, 0, cx->stream>>>(s->vc, n, (unsigned long long)seed ^ 0xabcdefULL);
    LAUNCHED("k_fill_random(v)");
    CK(cudaStreamSynchronize(cx->stream));
    return 0;
}

extern "C" int cuda_llm_set_cache(cuda_llm_ws *s, int seq, const float *k, const float *v, int host_cap)
{
    cuda_ctx *cx = s->m->cx;
    const preset_llm *c = &s->m->cfg;
    REQUIRE(seq >= 0 && seq < s->seqs && host_cap >= 1, "cuda_llm_set_cache: seq %d out of range", seq);
    int hd = c->width / c->heads, npos = host_cap < s->cap ? host_cap : s->cap;
    for (int l = 0; l < c->layers; l++)
        for (int g = 0; g < c->kv_heads; g++) {
            size_t dev = ((((size_t)seq * c->layers + l) * c->kv_heads + g) * s->cap) * hd;
            size_t host = (((size_t)l * c->kv_heads + g) * host_cap) * hd;
            if (upload_bf16(cx, s->kc + dev, k + host, (size_t)npos * hd) ||
                upload_bf16(cx, s->vc + dev, v + host, (size_t)npos * hd))
                return -1;
        }
    return 0;
}

extern "C" int cuda_llm_set_input(cuda_llm_ws *s, int slot, int ntok, const float *x)
{
    cuda_ctx *cx = s->m->cx;
    REQUIRE(slot >= 0 && slot < s->nslots && ntok >= 1 && ntok <= s->max_tokens,
            "cuda_llm_set_input: slot %d / tokens %d out of range", slot, ntok);
    return upload_f32(cx, s->in[slot], x, (size_t)ntok * s->m->cfg.width);
}

extern "C" int cuda_llm_get_output(cuda_llm_ws *s, int slot, int ntok, float *out)
{
    cuda_ctx *cx = s->m->cx;
    REQUIRE(slot >= 0 && slot < s->nslots && ntok >= 1 && ntok <= s->max_tokens,
            "cuda_llm_get_output: slot %d / tokens %d out of range", slot, ntok);
    CK(cudaStreamSynchronize(cx->stream));
    return download_f32(cx, out, s->out[slot], (size_t)ntok * s->m->cfg.width);
}

/* The layers on ntok tokens: prefill (decode = false: N tokens of sequence 0
 * at positions L..) or decode (one token for each of sequences 0..ntok-1 at
 * position L). The residual stream is out[slot]. */
static int llm_layers(cuda_llm_ws *s, int slot, int L, int ntok, bool decode)
{
    cuda_llm *m = s->m;
    cuda_ctx *cx = m->cx;
    cudaStream_t st = cx->stream;
    const preset_llm *c = &m->cfg;
    int D = c->width, H = c->heads, KV = c->kv_heads, hd = D / H, G = H / KV, M = c->mlp;
    int QD = H * hd, KVD = KV * hd, QKV = QD + 2 * KVD;
    int nk = decode ? L + 1 : L + ntok, ldS = round8(nk);
    float eps = (float)c->rms_eps, scale = 1.0f / sqrtf((float)hd);
    long long layer_kv = (long long)KV * s->cap * hd, seq_stride = (long long)c->layers * layer_kv;
    const cudaDataType F32 = CUDA_R_32F, BF = CUDA_R_16BF;
    float *x = s->out[slot];
    int rope_threads = hd / 2 < 32 ? 32 : hd / 2 > 128 ? 128 : hd / 2;

    CK(cudaMemcpyAsync(x, s->in[slot], (size_t)ntok * D * sizeof(float), cudaMemcpyDeviceToDevice, st));
    k_add_norm<<<ntok, 256, 0, st>>>(x, nullptr, nullptr, nullptr, 1, 1, m->sets[0].rms1, nullptr, s->h, D, eps, 1);
    LAUNCHED("k_add_norm(rms1)");
    for (int l = 0; l < c->layers; l++) {
        const dev_llayer *W = &m->sets[l % m->n_sets];
        bf16 *kc = s->kc + l * layer_kv, *vc = s->vc + l * layer_kv;
        if (gemm_bf(cx, false, ntok, QKV, D, s->h, D, 0, W->w_qkv, QKV, 0, s->qkv, BF, QKV, 0, 1))
            return -1;
        dim3 rg((unsigned)ntok, (unsigned)(H + 2 * KV));
        if (decode)   /* q token-major [B][H][hd]; sequence b at position L */
            k_llm_qkv_rope<<<rg, rope_threads, 0, st>>>(s->qkv, QKV, H, KV, hd, s->qh, hd, QD, kc, vc, seq_stride,
                                                        s->cap, L, 0, 1, c->rope_theta);
        else          /* q head-major [H][N][hd]; sequence 0 at positions L.. */
            k_llm_qkv_rope<<<rg, rope_threads, 0, st>>>(s->qkv, QKV, H, KV, hd, s->qh, (long long)ntok * hd, hd,
                                                        kc, vc, seq_stride, s->cap, L, 1, 0, c->rope_theta);
        LAUNCHED("k_llm_qkv_rope");
        if (decode) {
            int splits = (nk + DEC_CHUNK - 1) / DEC_CHUNK;
            size_t smem = ((size_t)G * (hd + DEC_CHUNK) + 2 * G) * sizeof(float);
            k_decode_partial<<<dim3((unsigned)splits, (unsigned)KV, (unsigned)ntok), DEC_THREADS, smem, st>>>(
                s->qh, kc, vc, seq_stride, s->cap, H, KV, hd, nk, scale, s->part, splits);
            LAUNCHED("k_decode_partial");
            k_decode_combine<<<dim3((unsigned)H, (unsigned)ntok), 128, 0, st>>>(s->part, splits, hd, H, s->o);
            LAUNCHED("k_decode_combine");
        } else {
            /* Per KV head g: its G query heads' N rows at once, against the cache. */
            int rows = G * ntok;
            if (gemm_bf(cx, true, rows, nk, hd, s->qh, hd, (long long)rows * hd, kc, hd, (long long)s->cap * hd,
                        s->S, F32, ldS, (long long)rows * ldS, KV))
                return -1;
            k_softmax<<<H * ntok, 256, 0, st>>>(s->S, s->P, ldS, nk, scale, ntok, L);
            LAUNCHED("k_softmax(causal)");
            if (gemm_bf(cx, false, rows, hd, nk, s->P, ldS, (long long)rows * ldS, vc, hd, (long long)s->cap * hd,
                        s->oh, BF, hd, (long long)rows * hd, KV))
                return -1;
            k_heads_to_tokens<<<blocks_for((size_t)ntok * QD, 256), 256, 0, st>>>(s->oh, s->o, 1, H, ntok, hd);
            LAUNCHED("k_heads_to_tokens");
        }
        if (gemm_bf(cx, false, ntok, D, QD, s->o, QD, 0, W->w_o, D, 0, s->a, F32, D, 0, 1))
            return -1;
        k_add_norm<<<ntok, 256, 0, st>>>(x, s->a, nullptr, nullptr, 1, 1, W->rms2, nullptr, s->h, D, eps, 1);
        LAUNCHED("k_add_norm(rms2)");
        if (gemm_bf(cx, false, ntok, 2 * M, D, s->h, D, 0, W->w_13, 2 * M, 0, s->gu, BF, 2 * M, 0, 1))
            return -1;
        k_swiglu<<<blocks_for((size_t)ntok * M, 256), 256, 0, st>>>(s->gu, s->g, (size_t)ntok, M);
        LAUNCHED("k_swiglu");
        if (gemm_bf(cx, false, ntok, D, M, s->g, M, 0, W->w_2, D, 0, s->a, F32, D, 0, 1))
            return -1;
        bool last = l + 1 == c->layers;
        k_add_norm<<<ntok, 256, 0, st>>>(x, s->a, nullptr, nullptr, 1, 1, last ? nullptr : m->sets[(l + 1) % m->n_sets].rms1,
                                         nullptr, last ? nullptr : s->h, D, eps, 1);
        LAUNCHED("k_add_norm(mlp)");
    }
    return 0;
}

extern "C" int cuda_llm_prefill_enqueue(cuda_llm_ws *s, int slot, int L, int N)
{
    cuda_ctx *cx = s->m->cx;
    REQUIRE(slot >= 0 && slot < s->nslots && N >= 1 && N <= s->max_tokens && L >= 0 && L + N <= s->cap,
            "cuda_llm_prefill_enqueue: slot %d, N %d, L %d out of range (max tokens %d, cap %d)",
            slot, N, L, s->max_tokens, s->cap);
    return llm_layers(s, slot, L, N, false);
}

extern "C" int cuda_llm_decode_enqueue(cuda_llm_ws *s, int slot, int B, int L)
{
    cuda_ctx *cx = s->m->cx;
    REQUIRE(slot >= 0 && slot < s->nslots && B >= 1 && B <= s->max_tokens && B <= s->seqs && L >= 0 &&
            L + 1 <= s->cap, "cuda_llm_decode_enqueue: slot %d, B %d, L %d out of range (seqs %d, cap %d)",
            slot, B, L, s->seqs, s->cap);
    return llm_layers(s, slot, L, B, true);
}
