/* rp_oplog.h — each op the real pipeline ran, with its thread's CPU time
 * and the CPU it ran on (`vlrealpipe run --ops FILE`, issue 7).
 *
 * The spans say how long an op took, not why: in the pipeline an op with
 * another beside it takes up to 1.4 x as long as alone, where the simulator,
 * sharing two cores between two ops, says 1.0. If the op's own CPU time
 * grows as much, the ops slow each other down (caches, memory); if it does
 * not, the op waited off its core (the other thread on the same core, a
 * short thread, the hypervisor). Each op records its wall span, its
 * thread's CPU time over it (CLOCK_THREAD_CPUTIME_ID) and the CPU it
 * started and ended on (sched_getcpu), so both can be told apart, and so
 * can two ops sharing one core while the other has none. The span ends
 * the instant the op does, before the CPU time is read: that read is a
 * system call, where a pending reschedule takes the thread off its CPU
 * (logs before 2026-12-06 09:00 UTC ended after it, and an executor op
 * beside the I-frames' decodes carried 0.5 ms of such a wait on average).
 * Each decode also records its clip frame: the clip's frames differ up to
 * 1.5 x in decode time, and a long decode is the more likely to meet
 * another op, so only the same frame's decodes compare alone and beside one
 * (rp_oplog_beside).
 * Adding a record is lock-free (a fetch-add into a preallocated array);
 * nothing here prints or keeps global state. */
#ifndef VL_RP_OPLOG_H
#define VL_RP_OPLOG_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

enum { RP_OP_DECODE, RP_OP_ENCODE, RP_OP_REDUCE, RP_OP_PREFILL, RP_OP_LLM_DECODE, RP_OP_NKINDS };
#define RP_OP_MAX_CPU 64

typedef struct {
    uint8_t kind, batch;
    int16_t cpu0, cpu1;            /* where it started and ended (-1: unknown) */
    int64_t start, end;            /* ns from the run's start */
    int64_t cpu_ns;                /* its thread's CPU time over the span */
    int32_t frame;                 /* a decode's clip frame (-1: none, or unknown) */
} rp_op;

typedef struct {
    rp_op *op;
    int cap;
    atomic_int n;                  /* records claimed; those past cap are lost */
} rp_oplog;

typedef struct {
    long n[RP_OP_NKINDS];
    double wall_ms[RP_OP_NKINDS], cpu_ms[RP_OP_NKINDS];   /* sums */
    long lost;                     /* records past the log's capacity */
    long moved;                    /* ops that ended on another CPU than they started */
    double busy_ms;                /* time with at least one op running (of those not moved) */
    double two_ms;                 /* time with exactly two running */
    double two_same_ms;            /* of it, both on one CPU (every other CPU without an op) */
} rp_opsum;

const char *rp_op_name(int kind);
/* 0, or -1 when out of memory. */
int rp_oplog_init(rp_oplog *l, int cap);
void rp_oplog_free(rp_oplog *l);
/* Record one op (any thread). */
void rp_oplog_add(rp_oplog *l, int kind, int batch, int frame, int cpu0, int cpu1, int64_t start,
                  int64_t end, int64_t cpu_ns);
/* The records kept (at most cap). */
int rp_oplog_len(const rp_oplog *l);
/* The summary of the ops that started at or after from_ns. The overlap
 * figures count the ops that started and ended on one CPU (0..RP_OP_MAX_CPU-1).
 * 0, or -1 when out of memory. */
int rp_oplog_summarize(const rp_op *op, int n, int64_t from_ns, rp_opsum *s);
/* Does an op run slower (more CPU) while another runs on another CPU
 * (caches, memory bandwidth)? Of the ops that started at or after from_ns
 * on one CPU and ended there: "alone" if no other op overlapped any of
 * its span; "beside" if none overlapped it on its own CPU (nor one that
 * moved CPU) and ops on other CPUs covered at least RP_BESIDE_COVER of its
 * span. Like is compared with like: a decode with the decodes of its clip
 * frame, an executor op with those of its batch size (its key). ratio is
 * the beside ops' CPU time over what their keys' alone ops took on
 * average (sum over beside ops of cpu / sum of their key's alone mean),
 * over the beside ops whose key has alone ops (paired); naive is the
 * beside ops' mean CPU over the alone ops' mean, keys mixed. 0 where
 * there is nothing to divide. 0, or -1 when out of memory. */
#define RP_BESIDE_COVER 0.9
typedef struct {
    long alone[RP_OP_NKINDS], beside[RP_OP_NKINDS], paired[RP_OP_NKINDS];
    double ratio[RP_OP_NKINDS], naive[RP_OP_NKINDS];
} rp_opbeside;
int rp_oplog_beside(const rp_op *op, int n, int64_t from_ns, rp_opbeside *b);
/* The records as CSV: kind,batch,cpu_start,cpu_end,start_ms,end_ms,cpu_ms,frame. */
void rp_oplog_write(FILE *f, const rp_op *op, int n);

#endif
