/* report_canary.h — the canary rollout's part of a run's table and JSON.
 * Writers only: they format what canary.c recorded and counted, to the FILE
 * or JSON writer they are given, and never compute an estimate of their own. */
#ifndef VL_REPORT_CANARY_H
#define VL_REPORT_CANARY_H

#include <stdio.h>
#include "models/canary.h"
#include "models/config.h"
#include "sim/jsonw.h"

/* The rollout of replication 0 step by step, its timeline, and what all
 * nrep replications' rollouts did. */
void report_canary_table(FILE *f, const canary_cfg *c, const canary_rec *reps, int nrep);
/* The same as the JSON member "canary" (README: Output reference). */
void report_canary_json(jw_t *w, const canary_cfg *c, const canary_rec *reps, int nrep);

#endif
