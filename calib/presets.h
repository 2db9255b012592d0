/* presets.h — the model shapes vlcalib times: a vision encoder (ViT/SigLIP)
 * and a Llama-style decoder, by name.
 *
 * Only shapes live here: timing depends on nothing else, and the weights are
 * random (weights.h). This module must never hold weights, allocate, or keep
 * mutable state; the tables are constant. */
#ifndef VL_CALIB_PRESETS_H
#define VL_CALIB_PRESETS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A pre-LN vision transformer. Tokens = (image_h / patch) * (image_w / patch),
 * rounded down: edge pixels that do not fill a patch are ignored (as SigLIP
 * does at 384 px with patch 14). */
typedef struct {
    const char *name;
    int layers, width, heads, mlp;
    int patch, image_h, image_w, channels;
    double ln_eps;
} preset_vision;

/* A Llama-style decoder layer stack (no embedding, no final norm, no head:
 * the vocabulary does not enter the timed work). */
typedef struct {
    const char *name;
    int layers, width, heads, kv_heads, mlp;
    double rope_theta, rms_eps;
} preset_llm;

/* A named model: a vision part, an LLM part, or both (tiny). */
typedef struct {
    const char *name;
    const preset_vision *vision;   /* NULL when the model has none */
    const preset_llm *llm;         /* NULL when the model has none */
} preset_model;

const preset_model *preset_find(const char *name);   /* NULL if unknown */
size_t preset_count(void);
const preset_model *preset_at(size_t i);             /* i < preset_count() */

int preset_vision_grid_h(const preset_vision *p);
int preset_vision_grid_w(const preset_vision *p);
int preset_vision_tokens(const preset_vision *p);
int preset_vision_head_dim(const preset_vision *p);
int preset_vision_patch_dim(const preset_vision *p);  /* channels * patch^2 */

int preset_llm_head_dim(const preset_llm *p);
int preset_llm_q_dim(const preset_llm *p);            /* heads * head_dim */
int preset_llm_kv_dim(const preset_llm *p);           /* kv_heads * head_dim */
int preset_llm_group(const preset_llm *p);            /* heads / kv_heads */

/* 0 when the shape is usable, else -1 and a message naming the field. */
int preset_vision_check(const preset_vision *p, char *err, size_t errlen);
int preset_llm_check(const preset_llm *p, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
