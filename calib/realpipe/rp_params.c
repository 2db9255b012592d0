/* rp_params.c — the default experiment. See rp_params.h. */
#include "calib/realpipe/rp_params.h"

#include <string.h>

void rp_params_default(rp_params *p)
{
    memset(p, 0, sizeof *p);
    p->streams = 8;
    p->fps = 30;
    p->duration_s = 12;
    p->warmup_s = 2;
    p->seed = 1;
    p->queries_per_min = 6;
    p->width = 640;
    p->height = 360;
    p->gop = 30;
    p->clip_frames = 60;
    p->decode_workers = 2;
    p->decode_capacity = 64;
    p->decode_drop_oldest = 1;
    p->keep_every = 2;
    p->max_batch = 8;
    p->batch_timeout_ms = 2;
    p->encode_capacity = 32;
    p->encode_drop_oldest = 1;
    p->encode_timeout_ms = 50;
    p->keep_tokens = 16;
    p->prefill_cache = 64;
    p->response_tokens = 8;
    p->decode_max_batch = 4;
    p->decode_cache = 128;
    p->response_ms = 5;
    p->cores = 2;
    p->wake_ms = 0;
    p->handoff_ms = 0;
    p->timer_ms = 0;
}

double rp_speedup_at(const rp_params *p, int k)
{
    double s = p->speedup[k - 1];
    return s > p->cores ? p->cores : s;
}
