/* rp_scen.c — capacity and the simulator's scenario from calibration files.
 * See rp_scen.h. Only calibration files are read here; never span files. */
#include "calib/realpipe/rp_scen.h"
#include "calib/realpipe/rp_flow.h"
#include "calib/realpipe/rp_stack.h"
#include "calib/realpipe/rp_wake.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/calib_read.h"

const char *rp_resource_name(int r)
{
    switch (r) {
    case RP_RES_DECODE: return "decode workers";
    case RP_RES_EXECUTOR: return "executor";
    case RP_RES_CORES: return "cores";
    default: return "?";
    }
}

/* Mean ms at x (batch, or tokens) of op from f: the calibration's means,
 * interpolated as the simulator does (calf_table, cfg_table_ms). */
int rp_mean_at(const calf_file *f, const char *path, const char *op, int tokens_out,
               int cache_len, double x, double *ms, char *err, size_t errlen)
{
    const calf_op *o = calf_find(f, op, "tiny");
    if (!o) {
        snprintf(err, errlen, "%s: no op %s for model tiny", path, op);
        return -1;
    }
    calf_select sel = {-1, tokens_out, cache_len, true};
    batch_table t;
    char msg[256];
    if (calf_table(o, &sel, &t, NULL, NULL, msg, sizeof msg)) {
        snprintf(err, errlen, "%s: op %s: %s", path, op, msg);
        return -1;
    }
    *ms = cfg_table_ms(&t, x);
    return 0;
}

int rp_capacity_of(const rp_params *p, const char *tiny_calib, const char *decode_calib,
                   rp_capacity *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    calf_file ft, fd;
    if (calf_read(tiny_calib, &ft, err, errlen))
        return -1;
    if (calf_read(decode_calib, &fd, err, errlen)) {
        calf_free(&ft);
        return -1;
    }
    int rc = -1;
    const calf_op *dv = NULL;
    for (int k = 0; k < fd.nops && !dv; k++)
        if (!strcmp(fd.ops[k].op, "decode_video"))
            dv = &fd.ops[k];
    if (!dv) {
        snprintf(err, errlen, "%s: no op decode_video", decode_calib);
        goto done;
    }
    double sum = 0, n = 0;
    for (int k = 0; k < dv->npoints; k++) {
        sum += dv->points[k].mean_ms * dv->points[k].n;
        n += dv->points[k].n;
        if (!strcmp(dv->points[k].frame_type, "I"))
            c->decode_i_ms = dv->points[k].mean_ms;
        if (!strcmp(dv->points[k].frame_type, "P"))
            c->decode_p_ms = dv->points[k].mean_ms;
    }
    c->decode_ms = sum / n;
    if (rp_mean_at(&ft, tiny_calib, "encode", -1, -1, 1, &c->encode_ms, err, errlen)
        || rp_mean_at(&ft, tiny_calib, "reduce", p->keep_tokens, -1, 1, &c->reduce_ms, err, errlen)
        || rp_mean_at(&ft, tiny_calib, "prefill", -1, p->prefill_cache, p->keep_tokens,
                   &c->prefill_ms, err, errlen)
        || rp_mean_at(&ft, tiny_calib, "decode", -1, p->decode_cache, 1, &c->llm_decode_ms, err,
                   errlen))
        goto done;
    double x = c->encode_ms + c->reduce_ms + c->prefill_ms;        /* ms per kept frame */
    double per_frame = x / p->keep_every;
    c->query_share = p->streams * p->queries_per_min / 60.0 * p->response_tokens
                     * c->llm_decode_ms / 1000.0;
    c->rate[RP_RES_DECODE] = 1000.0 * p->decode_workers / c->decode_ms;
    c->rate[RP_RES_EXECUTOR] = 1000.0 * (1.0 - c->query_share) / per_frame;
    /* the cores as the simulator shares them when every thread with real work
     * is busy: the decode workers and the executor (the sampler's work is a
     * modulo); their speed-up, or the last one measured when fewer */
    int busy = p->decode_workers + 1;
    double cores = p->nspeedup > 0 ? rp_speedup_at(p, busy < p->nspeedup ? busy : p->nspeedup)
                                   : (busy < p->cores ? busy : p->cores);
    /* and each frame's handoffs, each handoff_ms of CPU: to a decode worker, to the
     * sampler, and (kept frames) to the executor */
    double handoffs = p->handoff_ms * (2.0 + 1.0 / p->keep_every);
    c->cpu_ms = c->decode_ms + per_frame + handoffs;
    c->rate[RP_RES_CORES] = 1000.0 * (cores - c->query_share) / c->cpu_ms;
    c->bottleneck = 0;
    for (int r = 1; r < RP_NRES; r++)
        if (c->rate[r] < c->rate[c->bottleneck])
            c->bottleneck = r;
    c->capacity = c->rate[c->bottleneck];
    rc = 0;
done:
    calf_free(&ft);
    calf_free(&fd);
    return rc;
}

static void queue_line(FILE *f, long capacity, int drop_oldest)
{
    if (capacity >= 0)
        fprintf(f, "    queue: {capacity: %ld, on_full: %s}\n", capacity,
                drop_oldest ? "drop_oldest" : "drop_newest");
}

/* cpu.speed: how the machine's speed moved (rp_drift.h), each factor times
 * speed_scale when that is set (a lone factor of it without a drift). */
static void rp_speed_yaml(FILE *f, const rp_params *p)
{
    double scale = p->speed_scale > 0 ? p->speed_scale : 1;
    if (!p->speed) {
        if (scale != 1)
            fprintf(f, "speed: {window_ms: 1000, factors: [%.6g]}, ", scale);
        return;
    }
    const char *w = strstr(p->speed, "window_ms:"), *fa = strstr(p->speed, "factors: [");
    if (scale == 1 || !w || !fa) {
        fprintf(f, "speed: %s, ", p->speed);
        return;
    }
    fprintf(f, "speed: {window_ms: %.9g, factors: [", strtod(w + strlen("window_ms:"), NULL));
    const char *c = fa + strlen("factors: [");
    for (int k = 0;; k++) {
        char *end;
        double x = strtod(c, &end);
        if (end == c)
            break;
        fprintf(f, "%s%.6g", k ? ", " : "", x * scale);
        c = end;
        while (*c == ',' || *c == ' ')
            c++;
    }
    fprintf(f, "]}, ");
}

/* The workload's phase_ms: one list per recorded run, to the ns, rounded
 * down so that a phase stays below one frame interval. */
static void phase_lines(FILE *f, const rp_params *p, const double *phase_ms, int nsets)
{
    fprintf(f, "  phase_ms:   # each stream's first frame (ms), from the real runs' spans, one list per run\n");
    for (int k = 0; k < nsets; k++) {
        fprintf(f, "    - [");
        for (int j = 0; j < p->streams; j++) {
            double x = phase_ms[(size_t)k * (size_t)p->streams + (size_t)j];
            fprintf(f, "%s%.6f", j ? ", " : "", floor(x * 1e6) / 1e6);
        }
        fprintf(f, "]\n");
    }
}

void rp_stack_yaml(FILE *f, const rp_params *p)
{
    fprintf(f, "stack: {share: ");
    /* with the run factors, the shares fitted beside them (rp_stack_runfit) */
    const double *by_load = p->nstack_run > 0 ? p->stack_run_share : p->stack_load_share;
    if (p->nstack_load > 0) {          /* the share by the cores' utilisation */
        rp_flow_write(f, by_load, p->nstack_load);
        fprintf(f, ", share_load: ");
        rp_flow_write(f, p->stack_load_util, p->nstack_load);
    } else {
        fprintf(f, "%.6g", p->nstack_run > 0 ? p->stack_run_share[0] : p->stack_share);
    }
    if (p->nstack_run > 0) {           /* and by the busy core's run */
        fprintf(f, ", run: {age_ms: ");
        rp_flow_write(f, p->stack_run_age_ms, p->nstack_run);
        fprintf(f, ", factor: ");
        rp_flow_write(f, p->stack_run_factor, p->nstack_run);
        fprintf(f, ", bridge_ms: %.6g}", RP_STACK_BRIDGE_MS);
    }
    fprintf(f, ", migrate_ms: %.6g, pull_ms: %.6g", p->stack_migrate_ms, p->stack_pull_ms);
    const rp_turns *t = &p->turns;
    if (t->tick_ms > 0) {              /* turns at the scheduler's tick (rp_turn.h) */
        fprintf(f, ", tick_ms: %.6g, slice_ms: %.6g", t->tick_ms, t->slice_ms);
        if (t->nthrough > 0) {         /* and ops running through */
            fprintf(f, ", through: {work_ms: ");
            rp_flow_write(f, t->work_ms, t->nthrough);
            fprintf(f, ", share: ");
            rp_flow_write(f, t->share, t->nthrough);
            fprintf(f, "}");
        }
        if (t->nprotect > 0) {         /* and woken ops held beside a protected run */
            fprintf(f, ", protect: {ms: %.6g, work_ms: ", t->protect_ms);
            rp_flow_write(f, t->pwork_ms, t->nprotect);
            fprintf(f, ", share: ");
            rp_flow_write(f, t->pshare, t->nprotect);
            fprintf(f, "}");
        }
        fprintf(f, "}");
    } else
        fprintf(f, ", switch_ms: %.6g}", p->stack_switch_ms);
}

void rp_scenario_write(FILE *f, const rp_params *p, const char *tiny_calib,
                       const char *decode_calib, const rp_capacity *c, double sim_s, int reps,
                       const double *phase_ms, int nsets)
{
    fprintf(f,
            "# Generated by vlrealpipe scenario (calib/realpipe/README.md): the real pipeline's\n"
            "# stages, threads, batching and drop policies, every service time from the\n"
            "# isolated calibration (%s, %s) and the measured wake-up\n"
            "# latency; nothing from the pipeline's own spans.\n",
            tiny_calib, decode_calib);
    fprintf(f, "name: realpipe\nseed: %llu\nduration_s: %g\nwarmup_s: %g\nreplications: %d\n",
            (unsigned long long)p->seed, sim_s, p->warmup_s, reps);
    fprintf(f, "workload:\n  arrival: periodic\n  streams: %d\n  fps: %.9g\n", p->streams, p->fps);
    if (phase_ms && nsets > 0)
        phase_lines(f, p, phase_ms, nsets);
    else
        fprintf(f, "  phase: random\n");
    if (p->queries_per_min > 0)
        fprintf(f, "  queries_per_min: %.9g\n", p->queries_per_min);
    fprintf(f, "cluster: {gpus: 1, gpu_type: cpu-executor-thread, gpu_policy: priority}\n");
    fprintf(f, "cpu: {cores: %d, wake_ms: %.9g, ", p->cores, p->wake_ms);
    if (p->handoff_ms > 0)
        fprintf(f, "handoff_ms: %.9g, ", p->handoff_ms);
    if (p->timer_ms > 0)   /* the batch timeout's timed wait, the one release thread's,
                              the query thread's */
        fprintf(f, "timer_ms: %.9g, source: one_thread, query_source: timer, ", p->timer_ms);
    if (p->nspeedup > 0) {
        fprintf(f, "speedup: [");
        for (int k = 0; k < p->nspeedup; k++)
            fprintf(f, "%s%.6g", k ? ", " : "", rp_speedup_at(p, k + 1));
        fprintf(f, "], ");
    }
    rp_speed_yaml(f, p);
    if (p->cold)                       /* an op after its core idled (rp_cold.h) */
        fprintf(f, "cold: %s, ", p->cold);
    if (p->duty)                       /* an op while the cores idled lately (rp_duty.h) */
        fprintf(f, "duty: %s, ", p->duty);
    if (p->stalls)                     /* an idle core the host runs late (rp_stall.h) */
        fprintf(f, "stalls: %s, ", p->stalls);
    if (p->has_stack) {                /* where a woken op lands (rp_stack.h) */
        rp_stack_yaml(f, p);
        fprintf(f, ", ");
    }
    for (int fam = 0; p->nwake_busy > 0 && fam < 2; fam++) {   /* by ops beside it (rp_wake.h) */
        fprintf(f, "%s: [", fam ? "timer_busy" : "wake_busy");
        for (int k = 0; k < p->nwake_busy; k++) {
            char sp[1100];
            if (rp_wake_samples_path(p->wake_calib, fam, k, sp, sizeof sp) == 0)
                fprintf(f, "%s{dist: empirical, file: \"%s\"}", k ? ", " : "", sp);
        }
        fprintf(f, "], %s: [", fam ? "timer_held" : "wake_held");
        for (int k = 0; k < p->nwake_busy; k++)
            fprintf(f, "%s%.6g", k ? ", " : "", fam ? p->timer_held[k] : p->wake_held[k]);
        fprintf(f, "], ");
    }
    /* the response thread sleeps out its 5 ms (a timed wait), off the cores */
    fprintf(f, "stages: [decode, sample, encode, reduce, llm_prefill, llm_decode], "
               "sleepers: [response]}\n");
    fprintf(f, "stages:\n");
    fprintf(f, "  - name: decode\n    workers: %d\n", p->decode_workers);
    queue_line(f, p->decode_capacity, p->decode_drop_oldest);
    if (c->decode_i_ms > 0 && c->decode_p_ms > 0) {
        size_t len = strlen(decode_calib);
        int stem = len > 5 && !strcmp(decode_calib + len - 5, ".yaml") ? (int)len - 5 : (int)len;
        /* with the clip's content beside it (dect_content): each frame's factor, and
         * the samples over their frames' factors to draw from */
        char cp[4200];
        int content = snprintf(cp, sizeof cp, "%.*s.content", stem, decode_calib) < (int)sizeof cp
                      && access(cp, R_OK) == 0;
        const char *draw = content ? "resid." : "";
        fprintf(f, "    service: {dist: empirical, file: %.*s.P.%ssamples}   # P-frames, measured\n",
                stem, decode_calib, draw);
        fprintf(f, "    gop: {length: %d, i_service: {dist: empirical, file: %.*s.I.%ssamples}",
                p->gop, stem, decode_calib, draw);
        if (content)
            fprintf(f, ", content: {file: %s}", cp);
        fprintf(f, "}   # I-frames, measured%s\n", content ? "; the clip's frames, measured" : "");
    } else {
        fprintf(f, "    service: {calib: {file: %s, op: decode_video}}\n", decode_calib);
    }
    fprintf(f, "  - name: sample\n    workers: 1\n    keep: {every: %d}\n"
               "    service: {dist: constant, ms: 0.001}   # a modulo: not worth a calibration\n",
            p->keep_every);
    fprintf(f, "  - name: encode\n    on: gpu\n    max_batch: %d\n    batch_timeout_ms: %.9g\n"
               "    tokens_per_frame: 49\n", p->max_batch, p->batch_timeout_ms);
    queue_line(f, p->encode_capacity, p->encode_drop_oldest);
    if (p->encode_timeout_ms > 0)
        fprintf(f, "    timeout_ms: %.9g\n", p->encode_timeout_ms);
    fprintf(f, "    service: {calib: {file: %s, op: encode, model: tiny, sampling: empirical}}\n",
            tiny_calib);
    fprintf(f, "  - name: reduce\n    on: gpu\n    max_batch: %d\n    keep_tokens: %d\n"
               "    service: {calib: {file: %s, op: reduce, model: tiny, tokens_out: %d, "
               "sampling: empirical}}\n", p->max_batch, p->keep_tokens, tiny_calib, p->keep_tokens);
    fprintf(f, "  - name: llm_prefill\n    on: gpu\n    max_batch: %d\n"
               "    service: {calib: {file: %s, op: prefill, model: tiny, cache_len: %d, "
               "sampling: empirical}}\n", p->max_batch, tiny_calib, p->prefill_cache);
    fprintf(f, "  - name: llm_decode\n    on: gpu\n    max_batch: %d\n    response_tokens: %d\n"
               "    service: {calib: {file: %s, op: decode, model: tiny, cache_len: %d, "
               "sampling: empirical}}\n", p->decode_max_batch, p->response_tokens, tiny_calib,
            p->decode_cache);
    fprintf(f, "  - name: response\n    workers: 1\n    service: {dist: constant, ms: %.9g}\n",
            p->response_ms);
}
