/* scenario.h — turns a YAML scenario into a scenario_cfg.
 *
 * This is the only module that touches libyaml. Every error it reports names
 * file:line:column and the key path, e.g.
 *   s.yaml:12:5: stages[1].service.mean_ms: must be > 0, got -3
 * Unknown keys are rejected with a did-you-mean. On error nothing is left
 * allocated in *out. It never prints and never exits: messages go to err. */
#ifndef VL_SCENARIO_H
#define VL_SCENARIO_H

#include <stddef.h>
#include "config.h"

/* Limits the loader enforces that the command line's --duration, --warmup
 * and --replications must respect too (cli_args.c). */
#define SCN_MAX_SECONDS 1e9          /* duration_s, warmup_s: the ms clock still resolves 1 us */
#define SCN_MAX_REPS    100000       /* replications: a digest is kept per replication */

/* Load the scenario at path. Returns 0 on success, -1 on bad input (err holds
 * one line, no trailing newline). Relative file names inside the scenario
 * (empirical samples) are resolved against the scenario's directory. */
int scn_load(const char *path, scenario_cfg *out, char *err, size_t errlen);

/* Same, from text in memory; display_name is used in messages and basedir
 * resolves relative file names ("." if NULL). */
int scn_load_string(const char *text, size_t len, const char *display_name,
                    const char *basedir, scenario_cfg *out, char *err, size_t errlen);

/* An override of one scalar before the scenario is checked: key is a path
 * as in error messages — "workload.streams", "cluster.gpus",
 * "stages.encode.max_batch" (a stage by name) or "stages[3].servers" — and
 * value its new text ("16"). The key must name a scalar the scenario may
 * hold: a missing one is added (its parent mappings too), an unknown one is
 * an error with a did-you-mean, as in the file. The short names `fps`,
 * `streams` and `gpus` stand for workload.fps, workload.streams and
 * cluster.gpus. Overridden values are checked like any other; a message
 * about one names it as "override KEY=VALUE" instead of a file position. */
typedef struct {
    const char *key;
    const char *value;
} scn_override;

int scn_load_ex(const char *path, const scn_override *ov, size_t nov,
                scenario_cfg *out, char *err, size_t errlen);

#endif
