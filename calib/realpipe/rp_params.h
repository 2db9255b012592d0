/* rp_params.h — the shape of one real-pipeline experiment (issue 7): the
 * workload, the clip, the stages' threads, batching and drop policies. The
 * real pipeline (rp_pipe) runs it and the scenario writer (rp_scen) turns
 * the same struct into the simulator's scenario, so the two cannot drift
 * apart. Plain data; nothing here runs anything. */
#ifndef VL_RP_PARAMS_H
#define VL_RP_PARAMS_H

#include <stdint.h>
#include "calib/realpipe/rp_turn.h"

typedef struct {
    /* workload */
    int streams;               /* camera streams */
    double fps;                /* frames per second per stream */
    double duration_s;         /* frames are released for this long */
    double warmup_s;           /* frames released earlier are not measured */
    uint64_t seed;             /* stream phases, query times */
    double queries_per_min;    /* per stream, Poisson */
    /* the clip (vlcalib decode's synthetic content, H.264, no B-frames) */
    int width, height, gop, clip_frames;
    /* decode: workers sharing one bounded queue */
    int decode_workers;
    long decode_capacity;      /* -1: unbounded */
    int decode_drop_oldest;
    /* sample: keep frame numbers divisible by keep_every */
    int keep_every;
    /* the executor thread (the simulator's one "GPU"): encode -> reduce ->
     * llm_prefill and llm_decode, priority order as gpu.c */
    int max_batch;             /* encode, reduce, llm_prefill */
    double batch_timeout_ms;   /* encode */
    long encode_capacity;      /* -1: unbounded */
    int encode_drop_oldest;
    double encode_timeout_ms;  /* 0: none */
    int keep_tokens;           /* ToMe 49 -> keep_tokens */
    int prefill_cache;         /* cache length the prefill appends to */
    int response_tokens, decode_max_batch, decode_cache;
    double response_ms;        /* response: a network send (sleep), 1 thread */
    /* the machine, for the scenario */
    int cores;
    double wake_ms;
    double handoff_ms;         /* the CPU one handoff costs (vlcalib wakeup's cpu_ms); 0: none */
    double timer_ms;           /* how late a timed wait wakes (vlcalib wakeup's timer); 0: none.
                                  The scenario then also says source: one_thread (the release thread) */
    int nspeedup;              /* 0: none; else the cores' measured speed-up (vlcalib wakeup --ring) */
    double speedup[16];
    int nwake_busy;            /* 0: none; else the wake-up by ops running beside it, in this many
                                  classes (vlrealpipe wakecal): the scenario's cpu.wake_busy */
    char wake_calib[1024];     /* that wakecal file (its samples lie beside it: rp_wake.h) */
    double wake_held[9], timer_held[9];   /* its held shares by class: cpu.wake_held, timer_held */
    const char *speed;         /* NULL: none; else the cores' speed over time, the flow mapping
                                  "{window_ms: W, factors: [...]}" of a vlrealpipe driftcal file
                                  (the caller's string): the scenario's cpu.speed */
    double speed_scale;        /* 0 or 1: none; else every cpu.speed factor times this (one
                                  factor of it without `speed`): the machine measured faster or
                                  slower than its calibration (vlrealpipe scenario --speed-scale) */
    const char *cold;          /* NULL: none; else an op's slow-down after its core idled, the
                                  flow mapping "{idle_ms: [...], factor: [...]}" of a vlrealpipe
                                  coldcal file (the caller's string): the scenario's cpu.cold */
    const char *duty;          /* NULL: none; else an op's slow-down when the cores were idle
                                  lately, the flow mapping "{util: [...], factor: [...]}" of a
                                  vlrealpipe dutycal file: the scenario's cpu.duty */
    const char *stalls;        /* NULL: none; else the host's spells of not running an idle core,
                                  the flow mapping "{per_s: R, ms: {...}}" of a vlrealpipe
                                  stallcal file: the scenario's cpu.stalls */
    int has_stack;             /* 1: jobs placed on cores (vlrealpipe stackcal): cpu.stack */
    double stack_share, stack_migrate_ms, stack_pull_ms;
    double stack_switch_ms;    /* 0: the jobs on a core share it; > 0: they take turns */
    rp_turns turns;            /* tick_ms 0: turns as stack_switch_ms says; > 0 (vlrealpipe
                                  turncal): at ticks, cpu.stack's tick_ms, slice_ms, through */
    int nstack_load;           /* 0: stack_share throughout; else the share by utilisation */
    double stack_load_util[8], stack_load_share[8];
    int nstack_run;            /* 0: the share as above; else by load and run (stackcal's
                                  stack_run line): cpu.stack.run */
    double stack_run_age_ms[8], stack_run_factor[8];
    double stack_run_share[8]; /* the share by load with the run factors (nstack_load of them;
                                  [0] alone when nstack_load is 0) */
} rp_params;

/* 8 streams at 30 FPS for 12 s (2 s warm-up), 640x360 GOP 30 (60-frame
 * clip), 2 decode workers (capacity 64, drop_oldest), keep every 2nd frame,
 * batches of up to 8 with a 2 ms encode batch timeout (encode queue 32,
 * drop_oldest, 50 ms timeout), ToMe 49 -> 16 tokens, prefill at cache 64,
 * 6 queries per stream-minute decoding 8 tokens at cache 128 in batches of
 * up to 4, a 5 ms response; 2 cores, no wake-up delay. */
void rp_params_default(rp_params *p);
/* The speed-up with k (>= 1, <= nspeedup) threads busy, at most p->cores:
 * a faster spell of the machine while corecal counted can give more, but k
 * threads on p->cores cores cannot do more than that many cores' work. */
double rp_speedup_at(const rp_params *p, int k);

#endif
