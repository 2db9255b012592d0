/* config.c — defaults for, and release of, the plain configuration structs.
 *
 * It must never know about YAML or files, never print, and never keep state:
 * it only fills a scenario_cfg with the values a scenario may omit and frees
 * what a loaded config owns. */
#include "models/config.h"

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
}

void cfg_free(scenario_cfg *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nstages && c->stages; i++)
        dist_free(&c->stages[i].service);
    free(c->stages);
    memset(c, 0, sizeof *c);
}
