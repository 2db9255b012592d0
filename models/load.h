/* load.h — static load figures of a configuration, computed from the
 * scenario alone (no simulation): what run.c warns about and reports in an
 * unstable verdict, and the time scale the stability test in the pipeline
 * waits for. Pure functions; nothing here runs or prints. */
#ifndef VL_LOAD_H
#define VL_LOAD_H

#include "models/config.h"

/* Offered load of stage s as a fraction of its capacity:
 * (arrival rate) x (mean service) / servers, ignoring upstream drops. A GPU
 * stage's load is its pool's, at full batches (a lower bound). */
double load_offered(const scenario_cfg *cfg, int s);

/* The mean service time of one item at stage s, ms (a GPU stage: its share
 * of a full batch). */
double load_ms_per_item(const scenario_cfg *cfg, int s);

/* The servers of stage s (a GPU stage: the GPUs of its pool). */
int load_servers(const scenario_cfg *cfg, int s);

#endif
