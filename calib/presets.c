/* presets.c — the model shape tables and their derived sizes. See presets.h.
 * Constant data only: never weights, never allocation, never mutable state. */
#include "calib/presets.h"
#include <stdio.h>
#include <string.h>

/*                                 name               L   width heads mlp  patch  H    W  C  eps */
static const preset_vision siglip_so400m = { "siglip-so400m-384", 27, 1152, 16, 4304, 14, 384, 384, 3, 1e-6 };
static const preset_vision siglip_base   = { "siglip-base-224",   12,  768, 12, 3072, 16, 224, 224, 3, 1e-6 };
static const preset_vision vit_l         = { "vit-l-14-224",      24, 1024, 16, 4096, 14, 224, 224, 3, 1e-6 };
static const preset_vision tiny_vision   = { "tiny",               2,   64,  4,  256,  8,  56,  56, 3, 1e-6 };

/*                            name          L   width heads kv  mlp    theta   eps */
static const preset_llm llama3_8b = { "llama-3-8b", 32, 4096, 32, 8, 14336, 500000.0, 1e-5 };
static const preset_llm qwen2_7b  = { "qwen2-7b",   28, 3584, 28, 4, 18944, 1000000.0, 1e-6 };
static const preset_llm tiny_llm  = { "tiny",        2,   64,  4, 2,   176, 10000.0, 1e-5 };

static const preset_model models[] = {
    { "siglip-so400m-384", &siglip_so400m, NULL },
    { "siglip-base-224", &siglip_base, NULL },
    { "vit-l-14-224", &vit_l, NULL },
    { "llama-3-8b", NULL, &llama3_8b },
    { "qwen2-7b", NULL, &qwen2_7b },
    { "tiny", &tiny_vision, &tiny_llm },
};

const preset_model *preset_find(const char *name)
{
    for (size_t i = 0; i < preset_count(); i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

size_t preset_count(void) { return sizeof models / sizeof models[0]; }
const preset_model *preset_at(size_t i) { return i < preset_count() ? &models[i] : NULL; }

int preset_vision_grid_h(const preset_vision *p) { return p->image_h / p->patch; }
int preset_vision_grid_w(const preset_vision *p) { return p->image_w / p->patch; }
int preset_vision_tokens(const preset_vision *p) { return preset_vision_grid_h(p) * preset_vision_grid_w(p); }
int preset_vision_head_dim(const preset_vision *p) { return p->width / p->heads; }
int preset_vision_patch_dim(const preset_vision *p) { return p->channels * p->patch * p->patch; }

int preset_llm_head_dim(const preset_llm *p) { return p->width / p->heads; }
int preset_llm_q_dim(const preset_llm *p) { return p->heads * preset_llm_head_dim(p); }
int preset_llm_kv_dim(const preset_llm *p) { return p->kv_heads * preset_llm_head_dim(p); }
int preset_llm_group(const preset_llm *p) { return p->heads / p->kv_heads; }

#define REQUIRE(cond, ...) do { if (!(cond)) { snprintf(err, errlen, __VA_ARGS__); return -1; } } while (0)

int preset_vision_check(const preset_vision *p, char *err, size_t errlen)
{
    REQUIRE(p->layers >= 1, "%s: layers must be >= 1", p->name);
    REQUIRE(p->heads >= 1 && p->width >= p->heads && p->width % p->heads == 0,
            "%s: width %d is not a multiple of heads %d", p->name, p->width, p->heads);
    REQUIRE(p->mlp >= 1, "%s: mlp must be >= 1", p->name);
    REQUIRE(p->channels >= 1, "%s: channels must be >= 1", p->name);
    REQUIRE(p->patch >= 1 && p->image_h >= p->patch && p->image_w >= p->patch,
            "%s: image %dx%d is smaller than one patch of %d", p->name, p->image_h, p->image_w, p->patch);
    REQUIRE(p->ln_eps > 0, "%s: ln_eps must be > 0", p->name);
    return 0;
}

int preset_llm_check(const preset_llm *p, char *err, size_t errlen)
{
    REQUIRE(p->layers >= 1, "%s: layers must be >= 1", p->name);
    REQUIRE(p->heads >= 1 && p->width >= p->heads && p->width % p->heads == 0,
            "%s: width %d is not a multiple of heads %d", p->name, p->width, p->heads);
    REQUIRE(p->kv_heads >= 1 && p->heads % p->kv_heads == 0,
            "%s: heads %d is not a multiple of kv_heads %d", p->name, p->heads, p->kv_heads);
    REQUIRE(preset_llm_head_dim(p) % 2 == 0, "%s: head_dim %d must be even for RoPE",
            p->name, preset_llm_head_dim(p));
    REQUIRE(p->mlp >= 1, "%s: mlp must be >= 1", p->name);
    REQUIRE(p->rope_theta > 1 && p->rms_eps > 0, "%s: rope_theta must be > 1 and rms_eps > 0", p->name);
    return 0;
}
