/* rp_span.h — the real pipeline's per-frame span record (issue 7): for every
 * frame (and query) and every stage it reaches, when it was enqueued there,
 * when service started and ended, and how it left (done, dropped, sampled
 * out), on CLOCK_MONOTONIC in ns from the run's start.
 *
 * The record is preallocated from the run's frame count: one slot per
 * (frame, stage), written only by the thread serving that frame there, so
 * recording takes no lock and no allocation while the pipeline runs. The
 * file (CSV, below) is written once, at the end. The reader turns span
 * files back into rows for rp_stats. This module starts no threads, never
 * prints, and keeps no global state.
 *
 * File: '#' comment lines, then the header
 *   kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms
 * and one row per span reached: kind frame|query, stage one of rp_stage_name,
 * outcome done|drop_full|drop_timeout|sampled_out, times in ms (6 decimals)
 * from the run's start; arrive_ms is the frame's release (or the query's
 * arrival), repeated on each of its rows. */
#ifndef VL_RP_SPAN_H
#define VL_RP_SPAN_H

#include <stddef.h>
#include <stdint.h>

enum { RP_DECODE, RP_SAMPLE, RP_ENCODE, RP_REDUCE, RP_PREFILL,      /* frame path */
       RP_LLM_DECODE, RP_RESPONSE,                                   /* response path */
       RP_NSTAGES };
#define RP_NFRAME_STAGES 5
enum { RP_NONE, RP_DONE, RP_DROP_FULL, RP_DROP_TIMEOUT, RP_SAMPLED_OUT, RP_NOUTCOMES };
enum { RP_FRAME, RP_QUERY };

const char *rp_stage_name(int stage);       /* "decode", ..., "response" */
const char *rp_outcome_name(int outcome);   /* "", "done", ... */
int rp_stage_find(const char *name);        /* index, or -1 */

typedef struct {
    int64_t enq, start, end;   /* ns from the run's start */
    uint8_t outcome;           /* RP_NONE: not reached */
} rp_span;

typedef struct {
    int nframes, nqueries;     /* slots */
    int64_t *f_arrive;         /* per frame: release time (ns) */
    uint32_t *f_stream;
    uint64_t *f_seq;
    rp_span *f;                /* [frame][RP_NFRAME_STAGES] */
    int64_t *q_arrive;
    rp_span *q;                /* [query][2]: llm_decode, response */
    int nstreams;
    double *phase_ms;          /* per stream: its first frame's release after the start (ms) */
} rp_record;

/* 0, or -1 when out of memory (nothing left allocated). */
int rp_record_init(rp_record *r, int nframes, int nqueries, int nstreams);
void rp_record_free(rp_record *r);
static inline rp_span *rp_fspan(rp_record *r, int frame, int stage)
{
    return &r->f[(size_t)frame * RP_NFRAME_STAGES + (size_t)stage];
}
static inline rp_span *rp_qspan(rp_record *r, int query, int stage)
{
    return &r->q[(size_t)query * 2 + (size_t)(stage - RP_LLM_DECODE)];
}

/* Write every reached span to path atomically (sim/out.h), `comment` (may
 * hold newlines; NULL for none) as '#' lines first, then the streams' phases
 * as a "# phases_ms: [a, b, ...]" line (rp_phases_read). nframes / nqueries: the
 * slots actually used. 0, or -1 and a message. */
int rp_record_write(const rp_record *r, int nframes, int nqueries, const char *comment,
                    const char *path, char *err, size_t errlen);

/* One row of a span file, as read back. */
typedef struct {
    uint8_t kind, stage, outcome;
    uint16_t run;              /* which file of a set it came from */
    uint32_t id, stream;
    uint64_t seq;
    double arrive, enq, start, end;   /* ms */
} rp_row;

typedef struct {
    rp_row *rows;
    size_t n, cap;
    int runs;                  /* files read */
} rp_set;

/* Append the rows of the span file at path to s (its run number: s->runs,
 * then incremented). 0, or -1 and "PATH:LINE: message". */
int rp_set_read(rp_set *s, const char *path, char *err, size_t errlen);
void rp_set_free(rp_set *s);

/* The streams' phases of the span file at path (its "# phases_ms:" line):
 * exactly `streams` of them into out, and the file's fps (its "fps X" header)
 * into *fps. 0, or -1 and "PATH: message". */
int rp_phases_read(const char *path, int streams, double *out, double *fps, char *err,
                   size_t errlen);

#endif
