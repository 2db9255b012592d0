/* rep.h — run independent replications on a pool of threads.
 *
 * Replication r is a pure function of r (its random streams are derived
 * from (seed, r)), and it writes only its own result slot, so the results
 * are identical for any number of threads and any scheduling. Threads take
 * the next replication from a shared counter. The progress callback runs
 * under a lock after each replication, on whichever thread finished it.
 * This module knows nothing of what a replication computes. */
#ifndef VL_REP_H
#define VL_REP_H

/* Run replication `rep`; return 0 on success, non-zero to stop the batch. */
typedef int (*rep_fn)(void *ctx, int rep);
/* Called with the number of replications finished so far. */
typedef void (*rep_progress_fn)(void *pctx, int done, int total);

/* Run fn for rep = 0..nrep-1 on up to nthreads threads (<= 1: in this
 * thread, in order). Returns 0, or the first non-zero code (by replication
 * index) that fn returned; -1 if a thread could not be started. */
int rep_run_all(int nrep, int nthreads, rep_fn fn, void *ctx,
                rep_progress_fn progress, void *pctx);

/* The number of online processors (at least 1). */
int rep_default_threads(void);

#endif
