/* weights.h — random model weights, drawn once from a fixed seed.
 *
 * Timing depends only on shapes, so no checkpoint is ever downloaded: every
 * tensor is drawn from its own random stream (sim/rng.h), keyed by (seed,
 * layer set, tensor), so a tensor's values depend on nothing else. All
 * weights are float32 on the host; the reference promotes them to double,
 * the CUDA path rounds them to bf16 on upload. The three forms of every op
 * read these same values.
 *
 * Scales (never zeros): matrices N(0, 1/sqrt(fan_in)), so activations stay
 * O(1) through depth and every branch matters to the output (with N(0, 0.02)
 * the residual would hide the attention and MLP); biases N(0, 0.02);
 * norm gains 1 + N(0, 0.1), LayerNorm shifts N(0, 0.02); position
 * embeddings N(0, 0.5).
 *
 * Big models: the caller may cap the number of distinct layer weight sets;
 * layer l then uses set l % n_sets. Each set of a real preset is far larger
 * than any cache (siglip-so400m: 61 MB float, 30 MB bf16; llama-3-8b: 873 MB
 * float), so cycling them does not flatter the timings.
 *
 * Tensors are row-major [in][out] (y = x W). Each set is one allocation with
 * every tensor aligned to 64 floats. This module never computes an op. */
#ifndef VL_CALIB_WEIGHTS_H
#define VL_CALIB_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>
#include "calib/presets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One vision layer (D = width, M = mlp). */
typedef struct {
    float *ln1_g, *ln1_b;     /* [D] */
    float *w_qkv, *b_qkv;     /* [D][3D], [3D]: columns Q | K | V; head h at h*hd in each */
    float *w_o, *b_o;         /* [D][D], [D] */
    float *ln2_g, *ln2_b;     /* [D] */
    float *w_fc1, *b_fc1;     /* [D][M], [M] */
    float *w_fc2, *b_fc2;     /* [M][D], [D] */
    float *block;             /* the one allocation holding them */
    size_t block_len;         /* floats in block */
} weights_vlayer;

typedef struct {
    preset_vision cfg;
    float *w_patch, *b_patch; /* [C*P*P][D] (rows in order channel, dy, dx), [D] */
    float *pos;               /* [T][D] */
    float *lnf_g, *lnf_b;     /* [D]: final LayerNorm */
    float *block;             /* the allocation holding the five above */
    size_t block_len;
    int n_sets;               /* distinct layer sets; layer l uses set[l % n_sets] */
    weights_vlayer *set;
} weights_vision;

/* One decoder layer (D = width, QD = heads*hd, KVD = kv_heads*hd, M = mlp). */
typedef struct {
    float *rms1;              /* [D] */
    float *w_qkv;             /* [D][QD + 2 KVD]: columns Q | K | V */
    float *w_o;               /* [QD][D] */
    float *rms2;              /* [D] */
    float *w_13;              /* [D][2M]: columns gate W1 | up W3 */
    float *w_2;               /* [M][D] */
    float *block;
    size_t block_len;
} weights_llayer;

typedef struct {
    preset_llm cfg;
    int n_sets;
    weights_llayer *set;
} weights_llm;

/* Floats in one layer set (for choosing max_sets against a memory budget). */
size_t weights_vision_set_floats(const preset_vision *cfg);
size_t weights_llm_set_floats(const preset_llm *cfg);

/* Draw the weights. max_sets <= 0 means one set per layer. 0, or -1 and a
 * message (bad shape, out of memory); on error nothing stays allocated. */
int weights_vision_init(weights_vision *w, const preset_vision *cfg, uint64_t seed,
                        int max_sets, char *err, size_t errlen);
int weights_llm_init(weights_llm *w, const preset_llm *cfg, uint64_t seed,
                     int max_sets, char *err, size_t errlen);
void weights_vision_free(weights_vision *w);
void weights_llm_free(weights_llm *w);

const weights_vlayer *weights_vision_layer(const weights_vision *w, int layer);
const weights_llayer *weights_llm_layer(const weights_llm *w, int layer);

/* x rounded to the nearest bfloat16 (ties to even), as a float. */
float weights_bf16_round(float x);
/* Round every weight in place to bf16, so a bf16 device path and the
 * reference see identical values and a check measures arithmetic only. */
void weights_vision_round_bf16(weights_vision *w);
void weights_llm_round_bf16(weights_llm *w);

#ifdef __cplusplus
}
#endif

#endif
