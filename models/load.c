/* load.c — static load figures of a configuration: the rate reaching each
 * stage, its mean service time per item and its offered load as a
 * fraction of capacity. Pure functions of the config (see load.h); they
 * run nothing and never print. */
#include "models/load.h"
#include <math.h>

/* Items per second reaching stage s: the rate that starts its path (frames,
 * or the streams' queries and proactive triggers for the response path)
 * thinned by the samplers before it on that path. */
static double stage_rate_hz(const scenario_cfg *cfg, int s)
{
    const workload_cfg *w = &cfg->workload;
    path_kind path = cfg->stages[s].path;
    double rate = path == PATH_RESPONSE
                ? (w->arrival == ARRIVAL_PERIODIC
                   ? w->streams * (w->queries_per_min + w->proactive_per_min) / 60.0 : 0.0)
                : w->arrival == ARRIVAL_POISSON ? w->rate_hz : w->streams * w->fps;
    for (int k = 0; k < s; k++) {
        const stage_cfg *st = &cfg->stages[k];
        if (st->path != path)
            continue;
        if (st->keep == KEEP_EVERY)
            rate /= st->keep_every;
        else if (st->keep == KEEP_RATIO) {
            /* a frame is kept by a scene-change burst when a change fell in
             * the burst's frame intervals before it: 1 - e^-x, x = changes
             * per frame interval x burst; the rest with keep_ratio */
            double x = st->scene_per_min > 0 && w->fps > 0
                     ? st->scene_per_min * st->scene_burst / (60.0 * w->fps) : 0.0;
            rate *= 1.0 - exp(-x) * (1.0 - st->keep_ratio);
        }
    }
    return rate;
}

/* The tokens a frame carries when it reaches stage s: the last tokens_out
 * before it on its path (0 if none). */
static double tokens_at(const scenario_cfg *cfg, int s)
{
    double tokens = 0;
    for (int k = 0; k < s; k++)
        if (cfg->stages[k].path == cfg->stages[s].path && cfg->stages[k].tokens_out > 0)
            tokens = cfg->stages[k].tokens_out;
    return tokens;
}

/* The mean time the jitter sources add to an item's service. */
static double jitter_mean_ms(const stage_cfg *st)
{
    double ms = 0, p = 1;
    for (int k = 1; k <= st->retransmit.max_retries && st->retransmit.loss > 0; k++) {
        p *= st->retransmit.loss;                  /* P(at least k retransmissions) */
        ms += p * st->retransmit.rtt_ms;
    }
    if (st->cache_miss.prob > 0)
        ms += st->cache_miss.prob * st->cache_miss.ms_per_token * st->cache_miss.context_tokens;
    return ms;
}

/* A worker stage's mean service time, jitter sources included. */
static double worker_ms_per_item(const stage_cfg *st)
{
    double ms = dist_mean(&st->service);
    if (st->gop.length > 0 && st->gop.has_i_service)   /* one I-frame per GOP */
        ms = ((st->gop.length - 1) * ms + dist_mean(&st->gop.i_service)) / st->gop.length;
    else if (st->gop.length > 0)
        ms *= (st->gop.length - 1 + st->gop.i_factor) / st->gop.length;
    return ms + jitter_mean_ms(st);
}

/* GPU stage s: the least GPU time per item, at a full batch (a token
 * table read at the tokens a full batch carries). */
static double gpu_ms_per_item(const scenario_cfg *cfg, int s)
{
    const stage_cfg *st = &cfg->stages[s];
    double x = st->table.by_tokens ? st->max_batch * tokens_at(cfg, s) : st->max_batch;
    double ms = st->has_table ? cfg_table_ms(&st->table, x) : dist_mean(&st->service);
    return ms / st->max_batch + jitter_mean_ms(st);
}

static int pool_of(const scenario_cfg *cfg, int s)
{
    for (int k = 0; k < cfg->cluster.npools; k++)
        if (cfg->cluster.pools[k].stage_mask >> s & 1)
            return k;
    return -1;
}

double load_offered(const scenario_cfg *cfg, int s)
{
    const stage_cfg *st = &cfg->stages[s];
    if (st->on != RES_GPU)
        return stage_rate_hz(cfg, s) * worker_ms_per_item(st) / 1000.0 / st->servers;
    /* A GPU stage shares its GPUs with the other stages of its pool: the
     * load is theirs together, at full batches (a lower bound). */
    int pool = pool_of(cfg, s);
    int ngpus = pool >= 0 ? cfg->cluster.pools[pool].gpus : cfg->cluster.gpus;
    double load = 0;
    for (int t = 0; t < cfg->nstages; t++)
        if (cfg->stages[t].on == RES_GPU && pool_of(cfg, t) == pool)
            load += stage_rate_hz(cfg, t) * gpu_ms_per_item(cfg, t) / 1000.0;
    return load / ngpus;
}

double load_ms_per_item(const scenario_cfg *cfg, int s)
{
    const stage_cfg *st = &cfg->stages[s];
    return st->on == RES_GPU ? gpu_ms_per_item(cfg, s) : worker_ms_per_item(st);
}

int load_servers(const scenario_cfg *cfg, int s)
{
    const stage_cfg *st = &cfg->stages[s];
    if (st->on != RES_GPU)
        return st->servers;
    int pool = pool_of(cfg, s);
    return pool >= 0 ? cfg->cluster.pools[pool].gpus : cfg->cluster.gpus;
}
