/* config.h — the plain configuration structs a scenario turns into.
 *
 * The scenario loader (scenario.c) fills these from YAML; tests and other
 * front ends may fill them by hand. Nothing here knows about YAML or files,
 * and nothing here holds run-time state: a config is read-only once loaded. */
#ifndef VL_CONFIG_H
#define VL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include "dist.h"

#define CFG_NAME_MAX 64
#define CFG_MAX_BUCKETS 32

typedef enum { ARRIVAL_POISSON, ARRIVAL_PERIODIC } arrival_kind;
typedef enum { PHASE_RANDOM, PHASE_ALIGNED } phase_kind;

typedef struct {
    arrival_kind arrival;
    double rate_hz;          /* poisson: total arrival rate (Hz, > 0) */
    int streams;             /* periodic: number of independent sources (>= 1) */
    double fps;              /* periodic: frames per second per stream (> 0) */
    double jitter_ms;        /* periodic: sd of a Gaussian offset per frame (>= 0) */
    phase_kind phase;        /* periodic: random phase per stream, or all at t=0 */
} workload_cfg;

typedef enum { ONFULL_DROP_NEWEST, ONFULL_DROP_OLDEST } onfull_kind;

typedef struct {
    char name[CFG_NAME_MAX];
    int servers;             /* >= 1 */
    dist_t service;
    long capacity;           /* waiting room, excluding items in service; -1 = unbounded */
    onfull_kind on_full;
    double timeout_ms;       /* > 0: an item that waited longer is dropped; 0 = none */
} stage_cfg;

typedef struct {
    char name[CFG_NAME_MAX];
    char path[4096];         /* the scenario file, for messages ("" if built in code) */
    uint64_t seed;
    double duration_s;       /* measured time per replication, after warm-up (> 0) */
    double warmup_s;         /* discarded prefix (>= 0); ignored when warmup_auto */
    bool warmup_auto;        /* choose the warm-up by MSER-5 on a pilot run */
    int replications;        /* >= 1 */
    workload_cfg workload;
    stage_cfg *stages;       /* malloc'd, nstages >= 1, names unique */
    int nstages;
    double buckets_ms[CFG_MAX_BUCKETS]; /* Prometheus bucket upper bounds, ascending */
    int nbuckets;
} scenario_cfg;

/* Fill the defaults that a scenario may omit (everything but stages). */
void cfg_defaults(scenario_cfg *c);
/* Release what a config owns (stages and their distributions). */
void cfg_free(scenario_cfg *c);

#endif
