/* rp_mix.c — the mix calibration. See rp_mix.h. It must never read a
 * span file or run the pipeline's threads: it is a calibration, and the
 * pipeline is what it is later judged against. */
#define _GNU_SOURCE                   /* pthread_setaffinity_np */
#include "calib/realpipe/rp_mix.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "calib/calfile.h"
#include "calib/decode_time.h"
#include "calib/realpipe/rp_clock.h"
#include "calib/realpipe/rp_ops.h"
#include "calib/realpipe/rp_vec.h"
#include "sim/out.h"

#define WARM_ROUNDS 2

/* ---- sample lists (rp_vec.h) ------------------------------------------------------ */

/* Hand a's samples to r (harness_stats owns them then); an empty list gives n = 0. */
static int vec_stats(rp_vec *a, harness_result *r)
{
    memset(r, 0, sizeof *r);
    if (a->n == 0 || harness_stats(a->v, (int)a->n, r)) {
        int bad = a->n != 0;
        free(a->v);
        a->v = NULL;
        return bad ? -1 : 0;
    }
    a->v = NULL;
    return 0;
}

/* ---- decoding on another core ------------------------------------------------------ *
 * In the pipeline whichever decode worker is free takes a stream's next frame, so
 * its decoder state is often in another core's caches than the last frame's. The
 * mix decodes each frame on a core drawn uniformly from the first `cores` CPUs it
 * may use (the stream's last core with chance 1 / cores, as with workers placed
 * at random): core 0 is the mix's own thread, each other one a helper pinned there
 * that decodes one frame when asked while the mix's thread waits (nothing runs
 * beside it: the op is still timed alone). */

typedef struct {
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int job, stop;                   /* job: 1 asked, 0 done */
    int s;
    long seq;
    float *pix;
    double ms;
    rp_ops *ops;
} core_helper;

static int pin_to(pthread_t th, int cpu)
{
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(cpu, &cs);
    return pthread_setaffinity_np(th, sizeof cs, &cs);
}

static void *helper_main(void *arg)
{
    core_helper *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->job && !h->stop)
            pthread_cond_wait(&h->cv, &h->mu);
        if (h->stop)
            break;
        double t0 = rp_now_ms();
        rp_ops_decode(h->ops, h->s, h->seq, h->pix);
        h->ms = rp_now_ms() - t0;
        h->job = 0;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* Decode on helper h: the time the decode took there. */
static double helper_decode(core_helper *h, int s, long seq, float *pix)
{
    pthread_mutex_lock(&h->mu);
    h->s = s;
    h->seq = seq;
    h->pix = pix;
    h->job = 1;
    pthread_cond_broadcast(&h->cv);
    while (h->job)
        pthread_cond_wait(&h->cv, &h->mu);
    double ms = h->ms;
    pthread_mutex_unlock(&h->mu);
    return ms;
}

/* ---- the run --------------------------------------------------------------------- */

/* The clip frames a list holds, as ints (at least one slot): NULL out of memory. */
static int *frames_of(const rp_vec *a)
{
    int *k = malloc((a->n ? a->n : 1) * sizeof *k);
    for (size_t i = 0; k && i < a->n; i++)
        k[i] = (int)a->v[i];
    return k;
}

typedef struct {
    const rp_params *p;
    rp_ops ops;
    float *pix, *tok, *red;          /* max_batch frames' buffers */
    float **bpix, **btok, **bred;
    long next;                       /* the next frame, all streams interleaved */
    rp_vec enc[RP_MIX_MAX_BATCH], redu[RP_MIX_MAX_BATCH], pre[RP_MIX_MAX_BATCH], llm[RP_MIX_MAX_BATCH];
    rp_vec dec_i, dec_p;
    rp_vec at_i, at_p;               /* each decode sample's frame in the clip */
    /* the back-to-back reference: its own decoder (stream p->streams) */
    long ref_seq;
    rp_vec r_enc[RP_MIX_MAX_BATCH], r_redu[RP_MIX_MAX_BATCH], r_pre[RP_MIX_MAX_BATCH],
        r_llm[RP_MIX_MAX_BATCH];
    rp_vec r_dec_i, r_dec_p;
    /* the cores the mix decodes on: 0 is this thread, helper[c - 1] core c */
    int ncores;
    core_helper helper[RP_MIX_MAX_CORES - 1];
    uint64_t pick;                   /* splitmix64 state for the core draws */
} mix_t;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* This thread on the first CPU it may run on, helpers on the next want - 1
 * (allowed: the CPUs this thread may use, NULL: 0, 1, ...): the cores used
 * (1 when pinning is refused: then everything runs here, unpinned). */
static int start_helpers(mix_t *m, int want, const cpu_set_t *allowed)
{
    int cpu[RP_MIX_MAX_CORES], ncpu = 0;
    for (int c = 0; c < CPU_SETSIZE && ncpu < RP_MIX_MAX_CORES && ncpu < want; c++)
        if (allowed ? CPU_ISSET(c, allowed) : c < sysconf(_SC_NPROCESSORS_ONLN))
            cpu[ncpu++] = c;
    want = ncpu;
    if (want < 2 || pin_to(pthread_self(), cpu[0]))
        return 1;
    int n = 1;
    for (int c = 1; c < want; c++) {
        core_helper *h = &m->helper[c - 1];
        h->ops = &m->ops;
        pthread_mutex_init(&h->mu, NULL);
        pthread_cond_init(&h->cv, NULL);
        if (pthread_create(&h->th, NULL, helper_main, h)) {
            pthread_mutex_destroy(&h->mu);
            pthread_cond_destroy(&h->cv);
            break;
        }
        h->started = 1;
        if (pin_to(h->th, cpu[c]))
            break;
        n = c + 1;
    }
    return n;
}

static void stop_helpers(mix_t *m)
{
    for (int c = 0; c < RP_MIX_MAX_CORES - 1; c++) {
        core_helper *h = &m->helper[c];
        if (!h->started)
            continue;
        pthread_mutex_lock(&h->mu);
        h->stop = 1;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->th, NULL);
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        h->started = 0;
    }
}

/* Decode frames round robin over the streams until b are kept; timed when
 * keep is set. Frame n is stream n mod streams, its frame n / streams, as
 * the pipeline's source releases them (every stream in step). */
static int decode_until(mix_t *m, int b, int timed)
{
    const rp_params *p = m->p;
    int kept = 0;
    while (kept < b) {
        long n = m->next++;
        int s = (int)(n % p->streams);
        long seq = n / p->streams;
        int keep = seq % p->keep_every == 0;
        float *pix = keep ? m->bpix[kept] : m->pix + (size_t)p->max_batch * RP_PIX_FLOATS;
        int core = m->ncores > 1 ? (int)(splitmix64(&m->pick) % (uint64_t)m->ncores) : 0;
        double ms;
        if (core > 0) {
            ms = helper_decode(&m->helper[core - 1], s, seq, pix);
        } else {
            double t0 = rp_now_ms();
            rp_ops_decode(&m->ops, s, seq, pix);
            ms = rp_now_ms() - t0;
        }
        int i = seq % p->gop == 0;
        if (timed && (rp_vec_push(i ? &m->dec_i : &m->dec_p, ms)
                      || rp_vec_push(i ? &m->at_i : &m->at_p, (double)(seq % p->clip_frames))))
            return -1;
        kept += keep;
    }
    return 0;
}

static int cycle(mix_t *m, int b, int q, int timed)
{
    if (decode_until(m, b, timed))
        return -1;
    double t0 = rp_now_ms();
    rp_ops_encode(&m->ops, b, m->bpix, m->btok);
    double t1 = rp_now_ms();
    rp_ops_reduce(&m->ops, b, m->btok, m->bred);
    double t2 = rp_now_ms();
    rp_ops_prefill(&m->ops, b, m->bred);
    double t3 = rp_now_ms();
    rp_ops_decode_step(&m->ops, q);
    double t4 = rp_now_ms();
    if (!timed)
        return 0;
    return rp_vec_push(&m->enc[b - 1], t1 - t0) || rp_vec_push(&m->redu[b - 1], t2 - t1)
        || rp_vec_push(&m->pre[b - 1], t3 - t2) || rp_vec_push(&m->llm[q - 1], t4 - t3) ? -1 : 0;
}

/* The reference for batch b and LLM batch q: each op twice, the second
 * timed; 2b frames of the reference stream in a row, all but the first timed. */
static int reference(mix_t *m, int b, int q, int timed)
{
    const rp_params *p = m->p;
    for (int j = 0; j < 2 * b; j++) {
        long seq = m->ref_seq++;
        double t0 = rp_now_ms();
        rp_ops_decode(&m->ops, p->streams, seq, m->pix + (size_t)p->max_batch * RP_PIX_FLOATS);
        double ms = rp_now_ms() - t0;
        if (timed && j > 0 && rp_vec_push(seq % p->gop == 0 ? &m->r_dec_i : &m->r_dec_p, ms))
            return -1;
    }
    double t[9];
    t[0] = rp_now_ms();
    for (int k = 0; k < 2; k++) {
        rp_ops_encode(&m->ops, b, m->bpix, m->btok);
        t[1 + k] = rp_now_ms();
    }
    for (int k = 0; k < 2; k++) {
        rp_ops_reduce(&m->ops, b, m->btok, m->bred);
        t[3 + k] = rp_now_ms();
    }
    for (int k = 0; k < 2; k++) {
        rp_ops_prefill(&m->ops, b, m->bred);
        t[5 + k] = rp_now_ms();
    }
    for (int k = 0; k < 2; k++) {
        rp_ops_decode_step(&m->ops, q);
        t[7 + k] = rp_now_ms();
    }
    if (!timed)
        return 0;
    return rp_vec_push(&m->r_enc[b - 1], t[2] - t[1]) || rp_vec_push(&m->r_redu[b - 1], t[4] - t[3])
        || rp_vec_push(&m->r_pre[b - 1], t[6] - t[5]) || rp_vec_push(&m->r_llm[q - 1], t[8] - t[7]) ? -1 : 0;
}

int rp_mix_run(const rp_params *p, int rounds, rp_mix_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (rounds < 1 || p->max_batch < 1 || p->max_batch > RP_MIX_MAX_BATCH || p->decode_max_batch < 1
        || p->decode_max_batch > RP_MIX_MAX_BATCH || p->streams < 1 || p->keep_every < 1
        || p->gop < 1) {
        snprintf(err, errlen, "mixcal: rounds, streams, keep_every, gop >= 1 and batches 1..%d",
                 RP_MIX_MAX_BATCH);
        return -1;
    }
    cpu_set_threads(1);                   /* as the pipeline runs its kernels */
    mix_t m;
    memset(&m, 0, sizeof m);
    m.p = p;
    dect_clip *clip = NULL;
    int rc = -1;
    size_t B = (size_t)p->max_batch;
    cpu_set_t before;                     /* this thread's CPUs, given back at the end */
    int had_mask = pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0;
    rp_params with_ref = *p;
    with_ref.streams = p->streams + 1;     /* the last decoder is the reference's */
    if (rp_ops_clip(p, &clip, err, errlen) || rp_ops_init(&m.ops, &with_ref, clip, err, errlen))
        goto out;
    m.pix = calloc((B + 1) * RP_PIX_FLOATS, sizeof(float));   /* + 1: a frame not kept */
    m.tok = calloc(B * RP_TOK_FLOATS, sizeof(float));
    m.red = calloc(B * (size_t)p->keep_tokens * 64, sizeof(float));
    m.bpix = malloc(B * sizeof *m.bpix);
    m.btok = malloc(B * sizeof *m.btok);
    m.bred = malloc(B * sizeof *m.bred);
    if (!m.pix || !m.tok || !m.red || !m.bpix || !m.btok || !m.bred) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < B; j++) {
        m.bpix[j] = m.pix + j * RP_PIX_FLOATS;
        m.btok[j] = m.tok + j * RP_TOK_FLOATS;
        m.bred[j] = m.red + j * (size_t)p->keep_tokens * 64;
    }
    m.pick = p->seed;
    m.ncores = start_helpers(&m, p->cores, had_mask ? &before : NULL);
    double t_start = 0;
    int q = 0;
    for (int round = 0; round < WARM_ROUNDS + rounds; round++) {
        int timed = round >= WARM_ROUNDS;
        if (round == WARM_ROUNDS)
            t_start = rp_now_ms();
        /* every batch size once per round, starting one further each round */
        for (int i = 0; i < p->max_batch; i++) {
            int b = 1 + (i + round) % p->max_batch;
            if (cycle(&m, b, 1 + q++ % p->decode_max_batch, timed)) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
        for (int b = 1; b <= p->max_batch; b++)
            if (reference(&m, b, 1 + (b - 1) % p->decode_max_batch, timed)) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
    }
    r->seconds = (rp_now_ms() - t_start) / 1e3;
    r->max_batch = p->max_batch;
    r->decode_cores = m.ncores;
    r->clip_bytes = rp_ops_clip_bytes(clip);
    r->decode_max_batch = p->decode_max_batch;
    for (int b = 0; b < p->max_batch; b++)
        if (vec_stats(&m.enc[b], &r->encode[b]) || vec_stats(&m.redu[b], &r->reduce[b])
            || vec_stats(&m.pre[b], &r->prefill[b]) || vec_stats(&m.r_enc[b], &r->b2b_encode[b])
            || vec_stats(&m.r_redu[b], &r->b2b_reduce[b]) || vec_stats(&m.r_pre[b], &r->b2b_prefill[b])) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    for (int b = 0; b < p->decode_max_batch; b++)
        if (vec_stats(&m.llm[b], &r->llm_decode[b]) || vec_stats(&m.r_llm[b], &r->b2b_llm_decode[b])) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    if (!(r->decode_i_at = frames_of(&m.at_i)) || !(r->decode_p_at = frames_of(&m.at_p))
        || vec_stats(&m.dec_i, &r->decode_i) || vec_stats(&m.dec_p, &r->decode_p)
        || vec_stats(&m.r_dec_i, &r->b2b_decode_i) || vec_stats(&m.r_dec_p, &r->b2b_decode_p)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = 0;
out:
    stop_helpers(&m);
    if (had_mask)
        pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    for (int b = 0; b < RP_MIX_MAX_BATCH; b++) {
        free(m.enc[b].v); free(m.redu[b].v); free(m.pre[b].v); free(m.llm[b].v);
        free(m.r_enc[b].v); free(m.r_redu[b].v); free(m.r_pre[b].v); free(m.r_llm[b].v);
    }
    free(m.dec_i.v); free(m.dec_p.v); free(m.r_dec_i.v); free(m.r_dec_p.v);
    free(m.at_i.v); free(m.at_p.v);
    free(m.pix); free(m.tok); free(m.red); free(m.bpix); free(m.btok); free(m.bred);
    rp_ops_free(&m.ops);
    dect_clip_free(clip);
    if (rc)
        rp_mix_result_free(r);
    return rc;
}

void rp_mix_result_free(rp_mix_result *r)
{
    for (int b = 0; b < RP_MIX_MAX_BATCH; b++) {
        harness_result_free(&r->encode[b]);
        harness_result_free(&r->reduce[b]);
        harness_result_free(&r->prefill[b]);
        harness_result_free(&r->llm_decode[b]);
        harness_result_free(&r->b2b_encode[b]);
        harness_result_free(&r->b2b_reduce[b]);
        harness_result_free(&r->b2b_prefill[b]);
        harness_result_free(&r->b2b_llm_decode[b]);
    }
    free(r->decode_i_at);
    free(r->decode_p_at);
    harness_result_free(&r->decode_i);
    harness_result_free(&r->decode_p);
    harness_result_free(&r->b2b_decode_i);
    harness_result_free(&r->b2b_decode_p);
    memset(r, 0, sizeof *r);
}

/* ---- the files ---------------------------------------------------------------------- */

int rp_mix_check(const char *calib_out, const char *decode_out, bool force, char *err,
                 size_t errlen)
{
    char sp[4096];
    if (out_check(calib_out, force, err, errlen))
        return -1;
    if (calfile_samples_path(calib_out, sp, sizeof sp)) {
        snprintf(err, errlen, "%s: name too long", calib_out);
        return -1;
    }
    if (out_check(sp, force, err, errlen))
        return -1;
    return dect_check_files(decode_out, force, err, errlen);
}

typedef struct {
    const char *op;
    int batch, tokens_in, tokens_out, new_tokens, cache_len;
    const harness_result *h;
} mix_point;

/* The tiny model's points: the shapes rp_scen's scenario selects. */
static int mix_points(const rp_params *p, const rp_mix_result *r, mix_point *pt, int max)
{
    int n = 0;
    for (int b = 1; b <= r->max_batch && n < max; b++)
        pt[n++] = (mix_point){"encode", b, RP_NTOK, RP_NTOK, 0, 0, &r->encode[b - 1]};
    for (int b = 1; b <= r->max_batch && n < max; b++)
        pt[n++] = (mix_point){"reduce", b, RP_NTOK, p->keep_tokens, 0, 0, &r->reduce[b - 1]};
    for (int b = 1; b <= r->max_batch && n < max; b++)
        pt[n++] = (mix_point){"prefill", 1, 0, 0, b * p->keep_tokens, p->prefill_cache, &r->prefill[b - 1]};
    for (int b = 1; b <= r->decode_max_batch && n < max; b++)
        pt[n++] = (mix_point){"decode", b, 0, 0, 1, p->decode_cache, &r->llm_decode[b - 1]};
    return n;
}

static int build_tiny(const rp_params *p, const rp_mix_result *r, calf_file *f, char *err,
                      size_t errlen)
{
    char cpu[200];
    struct utsname u;
    memset(f, 0, sizeof *f);
    f->version = CALF_VERSION;
    calfile_cpu_name(cpu, sizeof cpu);
    snprintf(f->device.name, sizeof f->device.name, "%s (%ld CPUs online)", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(f->device.backend, sizeof f->device.backend,
             "cpu (float32, OpenBLAS sgemm, 1 thread; timed in the pipeline's op mix)");
    if (uname(&u) == 0)
        snprintf(f->device.driver, sizeof f->device.driver, "none (CPU); kernel %s %s", u.sysname, u.release);
    else
        snprintf(f->device.driver, sizeof f->device.driver, "unknown");
    snprintf(f->device.libraries, sizeof f->device.libraries, "OpenBLAS, libavcodec");
    snprintf(f->device.clocks, sizeof f->device.clocks, "unknown");
    calfile_now_utc(f->date, sizeof f->date);
    snprintf(f->backend, sizeof f->backend, "cpu");
    mix_point pt[4 * RP_MIX_MAX_BATCH];
    int n = mix_points(p, r, pt, 4 * RP_MIX_MAX_BATCH);
    calf_op *o = NULL;
    for (int i = 0; i < n; i++) {
        if (!o || strcmp(o->op, pt[i].op)) {
            o = calfile_add_op(f, pt[i].op, "tiny", "float32");
            if (!o)
                goto oom;
        }
        const harness_result *h = pt[i].h;
        if (h->n == 0)
            continue;
        calf_point c = {.batch = pt[i].batch, .tokens_in = pt[i].tokens_in,
                        .tokens_out = pt[i].tokens_out, .new_tokens = pt[i].new_tokens,
                        .cache_len = pt[i].cache_len};
        if (calfile_point_from(&c, h->samples, h->n, h->p50, h->p95, h->p99, h->mean, h->sd, h->min)
            || calfile_add_point(o, &c))
            goto oom;
    }
    return 0;
oom:
    calf_free(f);
    snprintf(err, errlen, "out of memory (or a sample <= 0)");
    return -1;
}

static int write_csv(FILE *f, const rp_params *p, const rp_mix_result *r)
{
    mix_point pt[4 * RP_MIX_MAX_BATCH];
    int n = mix_points(p, r, pt, 4 * RP_MIX_MAX_BATCH);
    fputs(CALFILE_SAMPLES_HEADER, f);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < pt[i].h->n; k++)
            fprintf(f, "%s,tiny,%d,%d,%d,%d,%d,%d,%.6f\n", pt[i].op, pt[i].batch, pt[i].tokens_in,
                    pt[i].tokens_out, pt[i].new_tokens, pt[i].cache_len, k, pt[i].h->samples[k]);
    return ferror(f) ? -1 : 0;
}

int rp_mix_save(const rp_params *p, const rp_mix_result *r, int rounds, const char *calib_out,
                const char *decode_out, char *err, size_t errlen)
{
    char comment[1024], sp[4096];
    snprintf(comment, sizeof comment,
             "vlrealpipe mixcal (calib/realpipe/rp_mix.h): CPU timings of model tiny in the pipeline's op\n"
             "mix, one op at a time (decode %d streams round robin, each frame on one of %d cores at random,\n"
             "keep every %d, then encode, reduce, prefill and one LLM decode step), batch sizes 1..%d in\n"
             "turn, %d timed rounds after %d; raw samples beside this file", p->streams, r->decode_cores,
             p->keep_every, p->max_batch, rounds, WARM_ROUNDS);
    calf_file f;
    if (build_tiny(p, r, &f, err, errlen))
        return -1;
    int bad = calfile_save(calib_out, &f, comment, true, err, errlen);
    calf_free(&f);
    if (bad || calfile_samples_path(calib_out, sp, sizeof sp))
        return -1;
    out_file of;
    memset(&of, 0, sizeof of);
    if (out_open(&of, sp, err, errlen))
        return -1;
    if (write_csv(of.f, p, r)) {
        out_abort(&of);
        snprintf(err, errlen, "%s: write error", sp);
        return -1;
    }
    if (out_commit(&of, err, errlen))
        return -1;
    /* the clip's decode, in vlcalib decode's format */
    dect_params dp;
    rp_ops_clip_params(p, &dp);
    dp.passes = rounds;
    dect_result dr;
    memset(&dr, 0, sizeof dr);
    dr.type[DECT_I] = r->decode_i;            /* borrowed: dr is not dect_result_free'd */
    dr.type[DECT_P] = r->decode_p;
    dr.frames = p->clip_frames;
    dr.bytes = r->clip_bytes;
    snprintf(dr.encoder, sizeof dr.encoder, "libx264");
    const int *at[DECT_NTYPES] = {r->decode_i_at, r->decode_p_at, NULL};
    if (dect_content(&dr, at)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char note[256];
    snprintf(note, sizeof note,
             "Timed by vlrealpipe mixcal in the pipeline's op mix (%d streams round robin, each frame on one\n"
             "of %d cores at random, between the executor's batches), not back to back: \"passes\" above\n"
             "counts the mix's rounds.", p->streams, r->decode_cores);
    int rc = dect_write_files(decode_out, &dp, &dr, note, err, errlen);
    free(dr.content);
    for (int t = 0; t < DECT_NTYPES; t++)
        free(dr.resid[t]);
    return rc;
}
