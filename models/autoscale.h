/* autoscale.h — the fleet over time: the autoscaler with cold starts and
 * a warm pool, billing, SLA-violation windows (autoscale.c).
 *
 * The run-time part works on a replication's state (pipe_int.h, asc_*);
 * this header holds what the rest of vlsim needs: turning one
 * replication's fleet_stats into a fleet_digest, and digests into
 * estimates. Never prints. */
#ifndef VL_AUTOSCALE_H
#define VL_AUTOSCALE_H

#include "models/config.h"
#include "models/fleet.h"

/* One replication's record over a measured window of window_ms. */
void asc_digest(const scenario_cfg *cfg, const fleet_stats *f, double window_ms,
                fleet_digest *d);
/* Estimates (95 % CIs) over n digests; events are the caller's to copy. */
void asc_reduce(const fleet_digest *d, int n, fleet_est *e);
/* The name of a FLEET_* event kind ("up_cold", ...). */
const char *asc_event_name(int kind);

#endif
