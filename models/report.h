/* report.h — the writers of a run's results: a readable table, JSON, CSV
 * and Prometheus text exposition. Each writes to a FILE* it is given and
 * nothing else; the caller makes the files atomic (sim/out.h). Writers do
 * no arithmetic beyond formatting: estimates come finished from run.c. */
#ifndef VL_REPORT_H
#define VL_REPORT_H

#include <stdio.h>
#include "models/run.h"

#define VLSIM_VERSION "0.1.0"

void report_table(FILE *f, const run_result *r, double wall_s);
/* JSON keys are documented in README.md ("Output reference"). */
void report_json(FILE *f, const run_result *r, double wall_s);
void report_csv(FILE *f, const run_result *r);
void report_prom(FILE *f, const run_result *r);

#endif
