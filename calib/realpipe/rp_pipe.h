/* rp_pipe.h — the real multi-threaded streaming pipeline (issue 7).
 *
 * Threads: a source releasing every stream's H.264 frames on schedule
 * (CLOCK_MONOTONIC, absolute sleeps); decode_workers libavcodec decoders
 * sharing one bounded queue (one decoder context per stream); a sampler;
 * one executor thread that plays the simulator's single GPU — encode (the
 * tiny vision encoder, CPU kernels), ToMe reduce and LLM prefill with
 * dynamic batching, and the continuous-batching LLM decode of queries — in
 * gpu.c's priority order; a query source (Poisson); and a response thread.
 * Queues, capacities, drop policies, timeouts and batching follow the
 * scenario rp_scen writes from the same rp_params. OpenBLAS runs on one
 * thread, so the pipeline's own threads are all the parallelism there is.
 *
 * Every frame's span at every stage goes into a preallocated rp_record
 * (no locks, no allocation for it while running); the caller writes it. */
#ifndef VL_RP_PIPE_H
#define VL_RP_PIPE_H

#include <stddef.h>
#include "calib/realpipe/rp_oplog.h"
#include "calib/realpipe/rp_params.h"
#include "calib/realpipe/rp_span.h"

typedef struct {
    int frames, queries;       /* released */
    int dropped, sampled_out, completed, answered;
    double wall_s;
    double cpu_s;              /* the threads' CPU time (user + system, getrusage) */
    double sys_s;              /* the system part of it */
    long vcsw, ivcsw;          /* their voluntary and involuntary context switches */
} rp_summary;

/* Run p once: rec is initialised here (free with rp_record_free). ops:
 * NULL, or a log (rp_oplog_init'd) that gets every decode and executor op
 * with its thread's CPU time and CPU. 0, or -1 and a message. */
int rp_pipe_run(const rp_params *p, rp_record *rec, rp_summary *sum, rp_oplog *ops, char *err,
                size_t errlen);

#endif
