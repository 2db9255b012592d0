/* rp_span.c — the span record, its file and its reader. See rp_span.h.
 * It must never be called on the pipeline's hot path except through the
 * inline slot accessors (no locks, no allocation there). */
#include "calib/realpipe/rp_span.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/out.h"

static const char *const stage_names[RP_NSTAGES] = {
    "decode", "sample", "encode", "reduce", "llm_prefill", "llm_decode", "response"};
static const char *const outcome_names[RP_NOUTCOMES] = {
    "", "done", "drop_full", "drop_timeout", "sampled_out"};

const char *rp_stage_name(int stage)
{
    return stage >= 0 && stage < RP_NSTAGES ? stage_names[stage] : "?";
}

const char *rp_outcome_name(int outcome)
{
    return outcome >= 0 && outcome < RP_NOUTCOMES ? outcome_names[outcome] : "?";
}

int rp_stage_find(const char *name)
{
    for (int s = 0; s < RP_NSTAGES; s++)
        if (!strcmp(name, stage_names[s]))
            return s;
    return -1;
}

static int outcome_find(const char *name)
{
    for (int o = 1; o < RP_NOUTCOMES; o++)
        if (!strcmp(name, outcome_names[o]))
            return o;
    return -1;
}

int rp_record_init(rp_record *r, int nframes, int nqueries, int nstreams)
{
    memset(r, 0, sizeof *r);
    r->nframes = nframes;
    r->nqueries = nqueries;
    r->nstreams = nstreams;
    r->phase_ms = calloc((size_t)(nstreams > 0 ? nstreams : 1), sizeof *r->phase_ms);
    size_t nf = (size_t)(nframes > 0 ? nframes : 1), nq = (size_t)(nqueries > 0 ? nqueries : 1);
    r->f_arrive = calloc(nf, sizeof *r->f_arrive);
    r->f_stream = calloc(nf, sizeof *r->f_stream);
    r->f_seq = calloc(nf, sizeof *r->f_seq);
    r->f = calloc(nf * RP_NFRAME_STAGES, sizeof *r->f);
    r->q_arrive = calloc(nq, sizeof *r->q_arrive);
    r->q = calloc(nq * 2, sizeof *r->q);
    if (!r->f_arrive || !r->f_stream || !r->f_seq || !r->f || !r->q_arrive || !r->q || !r->phase_ms) {
        rp_record_free(r);
        return -1;
    }
    return 0;
}

void rp_record_free(rp_record *r)
{
    free(r->f_arrive);
    free(r->f_stream);
    free(r->f_seq);
    free(r->f);
    free(r->q_arrive);
    free(r->q);
    free(r->phase_ms);
    memset(r, 0, sizeof *r);
}

static void put_row(FILE *f, const char *kind, int id, uint32_t stream, uint64_t seq, int stage,
                    int64_t arrive, const rp_span *sp)
{
    fprintf(f, "%s,%d,%u,%llu,%s,%s,%.6f,%.6f,%.6f,%.6f\n", kind, id, stream,
            (unsigned long long)seq, stage_names[stage], outcome_names[sp->outcome],
            1e-6 * (double)arrive, 1e-6 * (double)sp->enq, 1e-6 * (double)sp->start,
            1e-6 * (double)sp->end);
}

int rp_record_write(const rp_record *r, int nframes, int nqueries, const char *comment,
                    const char *path, char *err, size_t errlen)
{
    out_file o;
    if (out_open(&o, path, err, errlen))
        return -1;
    if (comment) {
        const char *c = comment;
        while (*c) {
            const char *nl = strchr(c, '\n');
            size_t len = nl ? (size_t)(nl - c) : strlen(c);
            fprintf(o.f, "# %.*s\n", (int)len, c);
            c += len + (nl != NULL);
        }
    }
    fprintf(o.f, "# phases_ms: [");
    for (int j = 0; j < r->nstreams; j++)
        fprintf(o.f, "%s%.6f", j ? ", " : "", r->phase_ms[j]);
    fprintf(o.f, "]\n");
    fprintf(o.f, "kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms\n");
    for (int i = 0; i < nframes && i < r->nframes; i++)
        for (int s = 0; s < RP_NFRAME_STAGES; s++) {
            const rp_span *sp = &r->f[(size_t)i * RP_NFRAME_STAGES + (size_t)s];
            if (sp->outcome != RP_NONE)
                put_row(o.f, "frame", i, r->f_stream[i], r->f_seq[i], s, r->f_arrive[i], sp);
        }
    for (int i = 0; i < nqueries && i < r->nqueries; i++)
        for (int s = 0; s < 2; s++) {
            const rp_span *sp = &r->q[(size_t)i * 2 + (size_t)s];
            if (sp->outcome != RP_NONE)
                put_row(o.f, "query", i, 0, (uint64_t)i, RP_LLM_DECODE + s, r->q_arrive[i], sp);
        }
    return out_commit(&o, err, errlen);
}

/* ---- reading ------------------------------------------------------------ */

static const char header[] = "kind,id,stream,seq,stage,outcome,arrive_ms,enqueue_ms,start_ms,end_ms";

static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return -1;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno || x > max)
        return -1;
    *v = x;
    return 0;
}

static int parse_ms(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

int rp_set_read(rp_set *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open %s (%s)", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, seen_header = 0, rc = -1;
    size_t n0 = s->n;
#define BAD(...) do { snprintf(err, errlen, "%s:%d: ", path, lineno);                  \
                      size_t u_ = strlen(err);                                          \
                      snprintf(err + u_, errlen > u_ ? errlen - u_ : 0, __VA_ARGS__);   \
                      goto done; } while (0)
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] != '\n' && !feof(f))
            BAD("line too long");
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!len || line[0] == '#')
            continue;
        if (!seen_header) {
            if (strcmp(line, header))
                BAD("expected the header %s", header);
            seen_header = 1;
            continue;
        }
        char *field[10];
        int nf = 0;
        char *p = line;
        for (;;) {
            if (nf == 10)
                BAD("more than 10 fields");
            field[nf++] = p;
            char *c = strchr(p, ',');
            if (!c)
                break;
            *c = '\0';
            p = c + 1;
        }
        if (nf != 10)
            BAD("expected 10 fields, got %d", nf);
        rp_row r;
        memset(&r, 0, sizeof r);
        if (!strcmp(field[0], "frame"))
            r.kind = RP_FRAME;
        else if (!strcmp(field[0], "query"))
            r.kind = RP_QUERY;
        else
            BAD("kind must be frame or query, got '%s'", field[0]);
        uint64_t v;
        if (parse_u64(field[1], UINT32_MAX, &v))
            BAD("id must be an integer >= 0, got '%s'", field[1]);
        r.id = (uint32_t)v;
        if (parse_u64(field[2], UINT32_MAX, &v))
            BAD("stream must be an integer >= 0, got '%s'", field[2]);
        r.stream = (uint32_t)v;
        if (parse_u64(field[3], UINT64_MAX, &r.seq))
            BAD("seq must be an integer >= 0, got '%s'", field[3]);
        int st = rp_stage_find(field[4]);
        if (st < 0)
            BAD("unknown stage '%s'", field[4]);
        if ((r.kind == RP_FRAME) != (st < RP_NFRAME_STAGES))
            BAD("stage %s is not on the %s path", field[4], field[0]);
        r.stage = (uint8_t)st;
        int oc = outcome_find(field[5]);
        if (oc < 0)
            BAD("unknown outcome '%s'", field[5]);
        r.outcome = (uint8_t)oc;
        double *t[4] = {&r.arrive, &r.enq, &r.start, &r.end};
        for (int k = 0; k < 4; k++)
            if (parse_ms(field[6 + k], t[k]))
                BAD("%s must be a finite number, got '%s'",
                    k == 0 ? "arrive_ms" : k == 1 ? "enqueue_ms" : k == 2 ? "start_ms" : "end_ms",
                    field[6 + k]);
        if (!(r.enq <= r.start && r.start <= r.end))
            BAD("times must satisfy enqueue <= start <= end");
        r.run = (uint16_t)s->runs;
        if (s->n == s->cap) {
            size_t ncap = s->cap ? 2 * s->cap : 4096;
            rp_row *nr = realloc(s->rows, ncap * sizeof *nr);
            if (!nr)
                BAD("out of memory");
            s->rows = nr;
            s->cap = ncap;
        }
        s->rows[s->n++] = r;
    }
    if (!seen_header)
        BAD("no header (an empty span file)");
    s->runs++;
    rc = 0;
done:
#undef BAD
    if (rc)
        s->n = n0;
    fclose(f);
    return rc;
}

void rp_set_free(rp_set *s)
{
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* ---- the phases ----------------------------------------------------------- */

int rp_phases_read(const char *path, int streams, double *out, double *fps, char *err,
                   size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
        return -1;
    }
    char line[1 << 16];
    int got = -1, have_fps = 0;
    while (got == -1 && fgets(line, sizeof line, f) && line[0] == '#') {
        const char *at = strstr(line, ", fps ");
        if (!have_fps && at && sscanf(at + 6, "%lf", fps) == 1)
            have_fps = 1;
        if (strncmp(line, "# phases_ms: [", 14))
            continue;
        if (!strchr(line, '\n')) {
            snprintf(err, errlen, "%s: the phases_ms line is longer than %zu bytes", path, sizeof line);
            fclose(f);
            return -1;
        }
        got = 0;
        const char *c = line + 14;
        while (*c && *c != ']') {
            char *end;
            double x = strtod(c, &end);
            if (end == c || !isfinite(x) || x < 0 || got == streams) {
                got = -2;
                break;
            }
            out[got++] = x;
            c = end;
            while (*c == ',' || *c == ' ')
                c++;
        }
    }
    fclose(f);
    if (got == -1 || !have_fps)
        snprintf(err, errlen, "%s: no %s line (written by vlrealpipe run)", path,
                 got == -1 ? "\"# phases_ms: [...]\"" : "\"fps\" in the header");
    else if (got != streams)
        snprintf(err, errlen, "%s: phases_ms must list %d phases (one per stream), %s", path,
                 streams, got == -2 ? "got more or a bad number" : "got fewer");
    return got == streams && have_fps ? 0 : -1;
}
