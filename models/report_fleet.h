/* report_fleet.h — the fleet section of a run's table and JSON (traffic
 * over time, autoscaling, billing, SLA-violation minutes). Writers only:
 * the numbers come finished from run.c / autoscale.c. */
#ifndef VL_REPORT_FLEET_H
#define VL_REPORT_FLEET_H

#include <stdio.h>
#include "models/run.h"
#include "sim/jsonw.h"

void report_fleet_table(FILE *f, const run_result *r);
/* The object "fleet": {...} inside the run's JSON object. */
void report_fleet_json(jw_t *w, const run_result *r);

#endif
