/* config.c — defaults for, and release of, the plain configuration structs.
 *
 * It must never know about YAML or files, never print, and never keep state:
 * it only fills a scenario_cfg with the values a scenario may omit and frees
 * what a loaded config owns. */
#include "models/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prometheus bucket upper bounds (ms) used when a scenario names none. */
static const double default_buckets_ms[] = {5, 10, 20, 33, 50, 100, 200, 500};

void cfg_defaults(scenario_cfg *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->name, "unnamed");
    c->seed = 1;
    c->duration_s = 0;                  /* required: the loader insists on it */
    c->warmup_s = 0;
    c->warmup_auto = false;
    c->replications = 5;

    c->workload.arrival = ARRIVAL_POISSON;
    c->workload.streams = 1;
    c->workload.jitter_ms = 0;
    c->workload.phase = PHASE_RANDOM;

    c->nbuckets = (int)(sizeof default_buckets_ms / sizeof default_buckets_ms[0]);
    memcpy(c->buckets_ms, default_buckets_ms, sizeof default_buckets_ms);

    c->stages = NULL;
    c->nstages = 0;

    c->cluster.gpus = 0;
    strcpy(c->cluster.gpu_type, "gpu");
    c->cluster.gpu_hour_usd = 0;
    c->cluster.placement = PLACE_HASH;
    c->cluster.policy = GPU_PRIORITY;
    c->frame_deadline_ms = 0;
    c->nsla = 0;

    c->degrade.nmodes = 0;
    c->degrade.interval_s = 1;
    c->degrade.window_s = 10;
    c->degrade.high_water = 0.7;
    c->degrade.low_water = 0.3;
    c->degrade.deescalate = 0.8;
    c->degrade.cooldown_s = 30;
    for (int s = 0; s < CFG_MAX_STAGES; s++)
        c->degrade.quality_scale[s] = 1.0;
    c->alerts.window_s = 60;
    c->alerts.p99_sla_factor = 1.5;
    c->alerts.drop_rate = 0.01;
    c->alerts.gpu_util_below = 0.2;
    c->alerts.gpu_util_for_s = 300;
    c->alerts.p99_p95_ratio = 1.5;
    /* canary rollout: the seed's gates (004 §3) */
    for (int s = 0; s < CFG_MAX_STAGES; s++) {
        c->canary.scale[s] = 1.0;
        c->canary.dist_of[s] = -1;
    }
    c->canary.p99_ratio = 1.3;
    c->canary.drop_rate = 0.02;
    c->canary.gpu_util = 0.9;
    c->canary.min_frames = 10000;
}

void cfg_stage_defaults(stage_cfg *s, const char *name)
{
    static const struct { const char *name; int priority; } canon[] = {
        { "llm_decode", 4 }, { "llm_prefill", 3 }, { "reduce", 2 }, { "encode", 1 },
    };
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->on = RES_WORKERS;
    s->servers = 1;
    s->capacity = -1;
    s->on_full = ONFULL_DROP_OLDEST;     /* real time: the freshest frame matters */
    s->max_batch = 1;
    s->keep = KEEP_ALL;
    s->keep_ratio = 1.0;
    s->keep_every = 1;
    for (size_t k = 0; k < sizeof canon / sizeof canon[0]; k++)
        if (strcmp(name, canon[k].name) == 0)
            s->priority = canon[k].priority;
    s->path = strcmp(name, "llm_decode") == 0 || strcmp(name, "response") == 0
            ? PATH_RESPONSE : PATH_FRAME;
}

double cfg_table_ms(const batch_table *t, double k)
{
    if (t->n == 1 || k <= t->batch[0])
        return t->ms[0];
    int j = 0;
    while (j + 2 < t->n && t->batch[j + 1] < k)
        j++;
    if (k > t->batch[j + 1] && !t->by_tokens)
        return t->ms[j + 1];             /* batch tables are never asked beyond their end */
    /* between points j and j+1, or (token tables) beyond the last point on
     * the last segment's line */
    return t->ms[j] + (t->ms[j + 1] - t->ms[j]) * (k - t->batch[j]) / (t->batch[j + 1] - t->batch[j]);
}

void cfg_free(scenario_cfg *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nstages && c->stages; i++) {
        dist_free(&c->stages[i].service);
        dist_free(&c->stages[i].jitter);
        dist_free(&c->stages[i].gop.i_service);
        free(c->stages[i].gop.content);
    }
    for (int k = 0; k < c->canary.ndists; k++)
        dist_free(&c->canary.dists[k]);
    free(c->stages);
    free(c->workload.phase_ms);
    free(c->profile.trace_t);            /* fleet (issue 6) */
    free(c->profile.trace_n);
    dist_free(&c->profile.session);
    dist_free(&c->autoscale.cold_start);
    for (int k = 0; k < c->cpu.nwake_busy; k++)
        dist_free(&c->cpu.wake_busy[k]);
    for (int k = 0; k < c->cpu.ntimer_busy; k++)
        dist_free(&c->cpu.timer_busy[k]);
    free(c->cpu.speed);
    dist_free(&c->cpu.stall_ms);         /* zeroed when not given: frees nothing */
    memset(c, 0, sizeof *c);
}
