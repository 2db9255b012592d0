/* calib_read.c — reads a calibration file (see calib_read.h and
 * calib/README.md) with libyaml's document API, and turns one op of it into
 * a batch table.
 *
 * Required keys are checked, unknown keys are ignored (a later writer may add
 * fields, such as codec or resolution for video decode). Every error names
 * the file, LINE:COL and the key path. Never prints, never exits, no global
 * state; on failure nothing stays allocated. */
#include "models/calib_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "sim/slurp.h"

typedef struct {
    yaml_document_t doc;
    const char *path;
    char *err;
    size_t errlen;
} reader;

static int rfail(reader *r, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
    if (!r->err || !r->errlen)
        return -1;
    int k = snprintf(r->err, r->errlen, "%s:%zu:%zu: %s: ", r->path, n->start_mark.line + 1,
                     n->start_mark.column + 1, key);
    if (k >= 0 && (size_t)k < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    for (char *s = r->err; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
    return -1;
}

static int key_cmp(const void *a, const void *b)
{
    const yaml_node_t *x = *(const yaml_node_t *const *)a, *y = *(const yaml_node_t *const *)b;
    int c = strcmp((const char *)x->data.scalar.value, (const char *)y->data.scalar.value);
    return c ? c : (x->start_mark.index > y->start_mark.index) - (x->start_mark.index < y->start_mark.index);
}

/* Bounds on what one mapping and one op may hold: YAML aliases can repeat
 * a large mapping many times for a few bytes each, and every lookup walks
 * its keys, so both are bounded (a real file has 15 keys a point and
 * hundreds of points). */
#define CALF_MAX_KEYS 256
#define CALF_MAX_POINTS 4096     /* each samples CSV row is matched against every point */
#define CALF_MAX_OPS 4096

/* No scalar key of map given twice (keys it does not know are allowed, so
 * a duplicate would otherwise pass unseen): sorted, in O(n log n). At most
 * CALF_MAX_KEYS keys. */
static int rnodup(reader *r, const yaml_node_t *map, const char *path)
{
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start), k = 0;
    if (n > CALF_MAX_KEYS)
        return rfail(r, map, *path ? path : "(root)", "more than %d keys in one mapping", CALF_MAX_KEYS);
    if (n < 2)
        return 0;
    const yaml_node_t **keys = malloc(n * sizeof *keys);
    if (!keys)
        return rfail(r, map, *path ? path : "(root)", "out of memory");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = yaml_document_get_node(&r->doc, p->key);
        if (kn && kn->type == YAML_SCALAR_NODE)
            keys[k++] = kn;
    }
    qsort(keys, k, sizeof *keys, key_cmp);
    for (size_t i = 1; i < k; i++)
        if (!strcmp((const char *)keys[i]->data.scalar.value, (const char *)keys[i - 1]->data.scalar.value)) {
            char kp[256];
            snprintf(kp, sizeof kp, "%s%s%.64s", path, *path ? "." : "", keys[i]->data.scalar.value);
            const yaml_node_t *later = keys[i], *first = keys[i - 1];
            free(keys);
            return rfail(r, later, kp, "duplicate key (first given at line %zu)", first->start_mark.line + 1);
        }
    free(keys);
    return 0;
}

static yaml_node_t *rget(reader *r, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
            return yaml_document_get_node(&r->doc, p->value);
    }
    return NULL;
}

/* The value under key, which must be there and of type; NULL after a message. */
static yaml_node_t *rneed(reader *r, const yaml_node_t *map, const char *path, const char *key,
                          yaml_node_type_t type)
{
    static const char *const what[] = { "", "a scalar", "a list", "a mapping" };
    char kp[256];
    snprintf(kp, sizeof kp, "%s%s%s", path, *path ? "." : "", key);
    yaml_node_t *v = rget(r, map, key);
    if (!v)
        rfail(r, map, path[0] ? path : "(root)", "missing required key '%s'", key);
    else if (v->type != type)
        rfail(r, v, kp, "expected %s", what[type == YAML_SCALAR_NODE ? 1 : type == YAML_SEQUENCE_NODE ? 2 : 3]);
    else
        return v;
    return NULL;
}

static int rstr(reader *r, const yaml_node_t *map, const char *path, const char *key, char *out, size_t size)
{
    char kp[256];
    const yaml_node_t *v = rneed(r, map, path, key, YAML_SCALAR_NODE);
    if (!v)
        return -1;
    snprintf(kp, sizeof kp, "%s%s%s", path, *path ? "." : "", key);
    if (v->data.scalar.length >= size)
        return rfail(r, v, kp, "longer than %zu characters", size - 1);
    if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
        return rfail(r, v, kp, "holds a NUL character (\\0)");
    memcpy(out, v->data.scalar.value, v->data.scalar.length + 1);
    return 0;
}

static int rnum(reader *r, const yaml_node_t *map, const char *path, const char *key, double *out)
{
    char kp[256], *end;
    const yaml_node_t *v = rneed(r, map, path, key, YAML_SCALAR_NODE);
    if (!v)
        return -1;
    snprintf(kp, sizeof kp, "%s%s%s", path, *path ? "." : "", key);
    const char *s = (const char *)v->data.scalar.value;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(x))
        return rfail(r, v, kp, "expected a finite number, got '%.40s'", s);
    *out = x;
    return 0;
}

static int rint_(reader *r, const yaml_node_t *map, const char *path, const char *key, int min, int *out)
{
    char kp[256], *end;
    const yaml_node_t *v = rneed(r, map, path, key, YAML_SCALAR_NODE);
    if (!v)
        return -1;
    snprintf(kp, sizeof kp, "%s%s%s", path, *path ? "." : "", key);
    const char *s = (const char *)v->data.scalar.value;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno == ERANGE || x < min || x > INT_MAX)
        return rfail(r, v, kp, "expected an integer >= %d, got '%.40s'", min, s);
    *out = (int)x;
    return 0;
}

/* frame_type: I | P | B — required on decode_video points, optional elsewhere. */
static int read_frame_type(reader *r, const yaml_node_t *m, const char *path, bool video, calf_point *p)
{
    char kp[256];
    if (!video && !rget(r, m, "frame_type"))
        return 0;
    if (rstr(r, m, path, "frame_type", p->frame_type, sizeof p->frame_type))
        return -1;
    if (strcmp(p->frame_type, "I") && strcmp(p->frame_type, "P") && strcmp(p->frame_type, "B")) {
        snprintf(kp, sizeof kp, "%s.frame_type", path);
        return rfail(r, rget(r, m, "frame_type"), kp, "expected I, P or B, got '%s'", p->frame_type);
    }
    return 0;
}

static int read_point(reader *r, const yaml_node_t *m, const char *path, bool video, calf_point *p)
{
    if (m->type != YAML_MAPPING_NODE)
        return rfail(r, m, path, "expected a mapping (a grid point)");
    if (rnodup(r, m, path))
        return -1;
    char fp[256];
    double ks = 0;
    const yaml_node_t *fit, *dist;
    if (rint_(r, m, path, "batch", 1, &p->batch) || rint_(r, m, path, "tokens_in", 0, &p->tokens_in) ||
        rint_(r, m, path, "tokens_out", 0, &p->tokens_out) ||
        rint_(r, m, path, "new_tokens", 0, &p->new_tokens) ||
        rint_(r, m, path, "cache_len", 0, &p->cache_len) || rint_(r, m, path, "n", 1, &p->n) ||
        read_frame_type(r, m, path, video, p) ||
        rnum(r, m, path, "p50_ms", &p->p50_ms) || rnum(r, m, path, "p95_ms", &p->p95_ms) ||
        rnum(r, m, path, "p99_ms", &p->p99_ms) || rnum(r, m, path, "mean_ms", &p->mean_ms) ||
        rnum(r, m, path, "sd_ms", &p->sd_ms) || rnum(r, m, path, "min_ms", &p->min_ms) ||
        !(fit = rneed(r, m, path, "fit", YAML_MAPPING_NODE)))
        return -1;
    snprintf(fp, sizeof fp, "%s.fit", path);
    if (rnodup(r, fit, fp))
        return -1;
    if (!(dist = rneed(r, fit, fp, "dist", YAML_SCALAR_NODE)))
        return -1;
    if (strcmp((const char *)dist->data.scalar.value, "lognormal") != 0) {
        snprintf(fp, sizeof fp, "%s.fit.dist", path);
        return rfail(r, dist, fp, "only lognormal fits are known, got '%.40s'", dist->data.scalar.value);
    }
    if (rnum(r, fit, fp, "mu", &p->mu) || rnum(r, fit, fp, "sigma", &p->sigma) || rnum(r, fit, fp, "ks", &ks))
        return -1;
    p->ks = ks;
    const char *bad = !(p->p50_ms > 0) ? "p50_ms" : !(p->mean_ms > 0) ? "mean_ms"
                      : !(p->sigma >= 0) ? "fit.sigma" : NULL;
    if (bad) {
        snprintf(fp, sizeof fp, "%s.%s", path, bad);
        return rfail(r, m, fp, "must be > 0 (sigma >= 0)");
    }
    return 0;
}

static int read_op(reader *r, const yaml_node_t *m, const char *path, calf_op *o)
{
    static const char *const ops[] = { "encode", "reduce", "prefill", "decode", "decode_video" };
    char pp[192];
    const yaml_node_t *pts;
    if (m->type != YAML_MAPPING_NODE)
        return rfail(r, m, path, "expected a mapping with op, model, dtype and points");
    if (rnodup(r, m, path))
        return -1;
    if (rstr(r, m, path, "op", o->op, sizeof o->op) || rstr(r, m, path, "model", o->model, sizeof o->model) ||
        rstr(r, m, path, "dtype", o->dtype, sizeof o->dtype) ||
        !(pts = rneed(r, m, path, "points", YAML_SEQUENCE_NODE)))
        return -1;
    bool known = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        known |= !strcmp(o->op, ops[i]);
    if (!known) {
        snprintf(pp, sizeof pp, "%s.op", path);
        return rfail(r, rget(r, m, "op"), pp, "unknown op '%s' (encode, reduce, prefill, decode, decode_video)", o->op);
    }
    bool video = !strcmp(o->op, "decode_video");
    if (video && (rstr(r, m, path, "codec", o->codec, sizeof o->codec) ||
                  rstr(r, m, path, "resolution", o->resolution, sizeof o->resolution)))
        return -1;
    size_t n = (size_t)(pts->data.sequence.items.top - pts->data.sequence.items.start);
    snprintf(pp, sizeof pp, "%s.points", path);
    if (n < 1)
        return rfail(r, pts, pp, "an op needs at least one point");
    if (n > CALF_MAX_POINTS)
        return rfail(r, pts, pp, "more than %d points in one op", CALF_MAX_POINTS);
    if (!(o->points = calloc(n, sizeof *o->points)))
        return rfail(r, pts, pp, "out of memory");
    o->npoints = (int)n;
    for (size_t i = 0; i < n; i++) {
        snprintf(pp, sizeof pp, "%s.points[%zu]", path, i);
        if (read_point(r, yaml_document_get_node(&r->doc, pts->data.sequence.items.start[i]), pp, video, &o->points[i]))
            return -1;
    }
    return 0;
}

static int read_root(reader *r, const yaml_node_t *root, calf_file *f)
{
    const yaml_node_t *dev, *ops, *v;
    if (!root || root->type != YAML_MAPPING_NODE) {
        snprintf(r->err, r->errlen, "%s: not a calibration file (expected a mapping with vlcalib: 1)", r->path);
        return -1;
    }
    if (rnodup(r, root, ""))
        return -1;
    if (!(v = rget(r, root, "vlcalib"))) {
        snprintf(r->err, r->errlen, "%s: not a calibration file (no 'vlcalib' version key)", r->path);
        return -1;
    }
    if (rint_(r, root, "", "vlcalib", 1, &f->version))
        return -1;
    if (f->version != CALF_VERSION)
        return rfail(r, v, "vlcalib", "version %d is not known (this reader reads %d)", f->version, CALF_VERSION);
    if (!(dev = rneed(r, root, "", "device", YAML_MAPPING_NODE)) || rnodup(r, dev, "device") ||
        rstr(r, dev, "device", "name", f->device.name, sizeof f->device.name) ||
        rstr(r, dev, "device", "backend", f->device.backend, sizeof f->device.backend) ||
        rstr(r, dev, "device", "driver", f->device.driver, sizeof f->device.driver) ||
        rstr(r, dev, "device", "libraries", f->device.libraries, sizeof f->device.libraries) ||
        rstr(r, dev, "device", "clocks", f->device.clocks, sizeof f->device.clocks) ||
        rstr(r, root, "", "date", f->date, sizeof f->date) ||
        rstr(r, root, "", "backend", f->backend, sizeof f->backend) ||
        !(ops = rneed(r, root, "", "ops", YAML_SEQUENCE_NODE)))
        return -1;
    size_t n = (size_t)(ops->data.sequence.items.top - ops->data.sequence.items.start);
    if (n > CALF_MAX_OPS)
        return rfail(r, ops, "ops", "more than %d ops", CALF_MAX_OPS);
    if (n && !(f->ops = calloc(n, sizeof *f->ops)))
        return rfail(r, ops, "ops", "out of memory");
    f->nops = (int)n;
    for (size_t i = 0; i < n; i++) {
        char pp[64];
        snprintf(pp, sizeof pp, "ops[%zu]", i);
        if (read_op(r, yaml_document_get_node(&r->doc, ops->data.sequence.items.start[i]), pp, &f->ops[i]))
            return -1;
    }
    return 0;
}

/* More than CALF_MAX_DEPTH levels of nesting (a calibration file has 5),
 * CALF_MAX_ANCHORS anchors or CALF_MAX_ALIASES aliases (vlcalib writes
 * none): refused from the events before the document is built, since
 * libyaml's scanner does work in proportion to the depth for every token
 * and its loader looks each alias up among all anchors. Syntax errors are
 * left to the load. */
#define CALF_MAX_DEPTH 256
#define CALF_MAX_ANCHORS 1000
#define CALF_MAX_ALIASES 10000
static int deep(reader *r, const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int depth = 0, rc = 0, anchors = 0, aliases = 0;
    if (!yaml_parser_initialize(&p)) {
        snprintf(r->err, r->errlen, "%s: out of memory", r->path);
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (rc == 0 && yaml_parser_parse(&p, &ev)) {
        yaml_event_type_t t = ev.type;
        const yaml_char_t *anchor = t == YAML_SCALAR_EVENT ? ev.data.scalar.anchor
                                  : t == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                  : t == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.anchor : NULL;
        const char *what = NULL;
        int limit = 0;
        if ((t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) && ++depth > CALF_MAX_DEPTH)
            what = "levels of nesting", limit = CALF_MAX_DEPTH;
        else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
            depth--;
        if (anchor && ++anchors > CALF_MAX_ANCHORS)
            what = "anchors (&name)", limit = CALF_MAX_ANCHORS;
        if (t == YAML_ALIAS_EVENT && ++aliases > CALF_MAX_ALIASES)
            what = "aliases (*name)", limit = CALF_MAX_ALIASES;
        if (what) {
            snprintf(r->err, r->errlen, "%s:%zu:%zu: (syntax): more than %d %s", r->path,
                     ev.start_mark.line + 1, ev.start_mark.column + 1, limit, what);
            rc = -1;
        }
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    return rc;
}

int calf_read_mem(const char *text, size_t len, const char *name, calf_file *f, char *err,
                  size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    memset(f, 0, sizeof *f);
    reader r = { .path = name ? name : "(string)", .err = err, .errlen = errlen };
    if (len > CALF_MAX_BYTES) {
        snprintf(err, errlen, "%s: file is larger than %d MiB", r.path, CALF_MAX_BYTES >> 20);
        return -1;
    }
    yaml_parser_t p;
    int rc = -1;
    if (deep(&r, text ? text : "", text ? len : 0))
        return -1;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "%s: out of memory", r.path);
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)(text ? text : ""), text ? len : 0);
    if (!yaml_parser_load(&p, &r.doc)) {
        snprintf(err, errlen, "%s:%zu:%zu: (syntax): %s", r.path, p.problem_mark.line + 1,
                 p.problem_mark.column + 1, p.problem ? p.problem : "invalid YAML");
    } else {
        rc = read_root(&r, yaml_document_get_root_node(&r.doc), f);
        yaml_document_delete(&r.doc);
    }
    yaml_parser_delete(&p);
    if (rc)
        calf_free(f);
    return rc;
}

int calf_read(const char *path, calf_file *f, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    memset(f, 0, sizeof *f);
    size_t len = 0;
    int e = 0;
    char *text = slurp_file(path, CALF_MAX_BYTES, &len, &e);
    if (!text) {
        if (e == EFBIG)
            snprintf(err, errlen, "%s: file is larger than %d MiB", path, CALF_MAX_BYTES >> 20);
        else
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
        return -1;
    }
    int rc = calf_read_mem(text, len, path, f, err, errlen);
    free(text);
    return rc;
}

void calf_free(calf_file *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->nops && f->ops; i++)
        free(f->ops[i].points);
    free(f->ops);
    memset(f, 0, sizeof *f);
}

const calf_op *calf_find(const calf_file *f, const char *op, const char *model)
{
    for (int i = 0; i < f->nops; i++)
        if (!strcmp(f->ops[i].op, op) && !strcmp(f->ops[i].model, model))
            return &f->ops[i];
    return NULL;
}

/* ---- one op -> a batch table ---- */

static int field(const calf_point *p, int k)
{
    return k == 0 ? p->tokens_in : k == 1 ? p->tokens_out : p->cache_len;
}

bool calf_selected(const calf_point *p, const calf_select *sel)
{
    const int want[3] = { sel->tokens_in, sel->tokens_out, sel->cache_len };
    for (int k = 0; k < 3; k++)
        if (want[k] >= 0 && field(p, k) != want[k])
            return false;
    return true;
}

int calf_table(const calf_op *op, const calf_select *sel, batch_table *t, int *raised,
               double *sigma_rms, char *err, size_t errlen)
{
    static const char *const names[] = { "tokens_in", "tokens_out", "cache_len" };
    const int want[3] = { sel->tokens_in, sel->tokens_out, sel->cache_len };
    bool by_tokens = !strcmp(op->op, "prefill");
    memset(t, 0, sizeof *t);
    t->by_tokens = by_tokens;
    int n = 0, nraised = 0, first = -1;
    double s2 = 0;
    for (int i = 0; i < op->npoints; i++) {
        const calf_point *p = &op->points[i];
        bool keep = true;
        for (int k = 0; k < 3; k++)
            keep &= want[k] < 0 || field(p, k) == want[k];
        if (!keep)
            continue;
        if (first < 0)
            first = i;
        for (int k = 0; k < 3; k++)
            if (field(p, k) != field(&op->points[first], k)) {
                char list[160] = "";
                size_t len = 0;
                int seen[CFG_MAX_TABLE], ns = 0;
                for (int j = 0; j < op->npoints && ns < CFG_MAX_TABLE; j++) {
                    int v = field(&op->points[j], k);
                    bool dup = false;
                    for (int q = 0; q < ns; q++)
                        dup |= seen[q] == v;
                    if (dup)
                        continue;
                    seen[ns++] = v;
                    if (len < sizeof list)
                        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", ns > 1 ? ", " : "", v);
                }
                snprintf(err, errlen, "the %s points have several %s (%s); choose one with %s: N",
                         op->op, names[k], list, names[k]);
                return -1;
            }
        double x = by_tokens ? (double)p->new_tokens * p->batch : p->batch;
        int at = n;                                   /* insertion sort by x */
        while (at > 0 && t->batch[at - 1] > x)
            at--;
        if (at > 0 && t->batch[at - 1] == x) {
            snprintf(err, errlen, "the %s points give %s %.0f twice", op->op, by_tokens ? "tokens" : "batch", x);
            return -1;
        }
        if (n == CFG_MAX_TABLE) {
            snprintf(err, errlen, "more than %d %s points", CFG_MAX_TABLE, op->op);
            return -1;
        }
        memmove(&t->batch[at + 1], &t->batch[at], (size_t)(n - at) * sizeof t->batch[0]);
        memmove(&t->ms[at + 1], &t->ms[at], (size_t)(n - at) * sizeof t->ms[0]);
        t->batch[at] = x;
        t->ms[at] = sel->use_mean ? p->mean_ms : p->p50_ms;
        s2 += p->sigma * p->sigma;
        n++;
    }
    if (n < 1) {
        snprintf(err, errlen, "no %s point matches the selection", op->op);
        return -1;
    }
    if (!by_tokens && t->batch[0] != 1) {
        snprintf(err, errlen, "the %s points start at batch %.0f; a batch table needs batch 1",
                 op->op, t->batch[0]);
        return -1;
    }
    for (int i = 1; i < n; i++)
        if (t->ms[i] < t->ms[i - 1]) {
            t->ms[i] = t->ms[i - 1];
            nraised++;
        }
    t->n = n;
    if (raised)
        *raised = nraised;
    if (sigma_rms)
        *sigma_rms = sqrt(s2 / n);
    return 0;
}

/* ---- the raw-samples CSV ---- */

int calf_samples_path(const char *yaml_path, char *buf, size_t size)
{
    size_t len = strlen(yaml_path);
    const char *slash = strrchr(yaml_path, '/'), *dot = strrchr(yaml_path, '.');
    if (dot && (!slash || dot > slash + 1) && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml")))
        len = (size_t)(dot - yaml_path);
    int n = snprintf(buf, size, "%.*s.samples.csv", (int)len, yaml_path);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

#define SAMPLES_HEADER "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,rep,ms"
#define SAMPLES_HEADER_FT "op,model,batch,tokens_in,tokens_out,new_tokens,cache_len,frame_type,rep,ms"

static int csv_int(const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno == ERANGE || x < min || x > INT_MAX)
        return -1;
    *out = (int)x;
    return 0;
}

static void free_vals(double **vals, size_t *counts, int n)
{
    for (int i = 0; i < n; i++) {
        free(vals[i]);
        vals[i] = NULL;
        counts[i] = 0;
    }
}

int calf_samples(const char *csv, const calf_op *op, double **vals, size_t *counts, char *err,
                 size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    size_t blen = 0;
    int e = 0;
    char *buf = slurp_file(csv, CALF_MAX_SAMPLES_BYTES, &blen, &e);
    if (!buf) {
        if (e == EFBIG)
            snprintf(err, errlen, "%s: larger than %d MiB", csv, CALF_MAX_SAMPLES_BYTES >> 20);
        else
            snprintf(err, errlen, "cannot open %s (the samples CSV beside the calibration file): %s",
                     csv, strerror(e));
        return -1;
    }
    size_t *caps = calloc((size_t)op->npoints, sizeof *caps);
    size_t lineno = 0;
    int rc = 0, nf = 0;   /* nf: fields per row, known after the header */
    if (!caps) {
        snprintf(err, errlen, "%s: out of memory", csv);
        rc = -1;
    }
    for (char *line = buf, *next; rc == 0 && line < buf + blen; line = next) {
        char *nl = memchr(line, '\n', (size_t)(buf + blen - line));
        next = nl ? nl + 1 : buf + blen;
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(line);
        if (len != (size_t)(next - line) - (nl != NULL)) {
            snprintf(err, errlen, "%s:%zu: holds a NUL byte", csv, lineno);
            rc = -1;
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!nf) {
            if (!strcmp(line, SAMPLES_HEADER))
                nf = 9;
            else if (!strcmp(line, SAMPLES_HEADER_FT))
                nf = 10;
            else {
                snprintf(err, errlen, "%s:%zu: expected the header " SAMPLES_HEADER
                         " (or with frame_type after cache_len)", csv, lineno);
                rc = -1;
            }
            continue;
        }
        if (!len)
            continue;
        char *f[10];
        int k = 0;
        for (char *s = line; k < 10; k++) {
            f[k] = s;
            char *c = strchr(s, ',');
            if (!c) {
                k++;
                break;
            }
            *c = '\0';
            s = c + 1;
        }
        if (k != nf || (k == 10 && strchr(f[9], ','))) {
            snprintf(err, errlen, "%s:%zu: expected %d comma-separated fields", csv, lineno, nf);
            rc = -1;
            break;
        }
        calf_point p = { 0 };
        int rep = 0;
        const char *ft = nf == 10 ? f[7] : "";
        char *end;
        errno = 0;
        double ms = strtod(f[nf - 1], &end);
        if (csv_int(f[2], 1, &p.batch) || csv_int(f[3], 0, &p.tokens_in) ||
            csv_int(f[4], 0, &p.tokens_out) || csv_int(f[5], 0, &p.new_tokens) ||
            csv_int(f[6], 0, &p.cache_len) || csv_int(f[nf - 2], 0, &rep)) {
            snprintf(err, errlen, "%s:%zu: batch, tokens_in, tokens_out, new_tokens, cache_len and "
                     "rep must be integers >= 0 (batch >= 1)", csv, lineno);
            rc = -1;
            break;
        }
        if (!*f[nf - 1] || *end || errno == ERANGE || !isfinite(ms) || !(ms > 0)) {
            snprintf(err, errlen, "%s:%zu: ms must be a finite number > 0, got '%.40s'", csv, lineno,
                     f[nf - 1]);
            rc = -1;
            break;
        }
        if (strcmp(f[0], op->op) || strcmp(f[1], op->model))
            continue;
        for (int i = 0; i < op->npoints; i++) {
            const calf_point *q = &op->points[i];
            if (q->batch != p.batch || q->tokens_in != p.tokens_in || q->tokens_out != p.tokens_out ||
                q->new_tokens != p.new_tokens || q->cache_len != p.cache_len || strcmp(q->frame_type, ft))
                continue;
            if (counts[i] == caps[i]) {
                size_t nc = caps[i] ? 2 * caps[i] : 64;
                double *nv = realloc(vals[i], nc * sizeof *nv);
                if (!nv) {
                    snprintf(err, errlen, "%s:%zu: out of memory", csv, lineno);
                    rc = -1;
                    break;
                }
                vals[i] = nv;
                caps[i] = nc;
            }
            vals[i][counts[i]++] = ms;
            break;
        }
    }
    if (rc == 0 && !nf) {
        snprintf(err, errlen, "%s:1: empty file (expected the header " SAMPLES_HEADER ")", csv);
        rc = -1;
    }
    free(buf);
    free(caps);
    if (rc)
        free_vals(vals, counts, op->npoints);
    return rc;
}

int calf_empirical_ratios(const char *csv, const calf_op *op, const calf_select *sel,
                          double **ratios, size_t *n, char *err, size_t errlen)
{
    double **vals = calloc((size_t)op->npoints, sizeof *vals);
    size_t *counts = calloc((size_t)op->npoints, sizeof *counts), total = 0;
    int rc = -1;
    *ratios = NULL;
    *n = 0;
    if (!vals || !counts) {
        snprintf(err, errlen, "%s: out of memory", csv);
        goto out;
    }
    if (calf_samples(csv, op, vals, counts, err, errlen))
        goto out;
    for (int i = 0; i < op->npoints; i++) {
        const calf_point *p = &op->points[i];
        if (!calf_selected(p, sel))
            continue;
        if (!counts[i]) {
            snprintf(err, errlen, "%s: no samples for %s %s at batch %d, tokens_in %d, tokens_out %d, "
                     "new_tokens %d, cache_len %d", csv, op->op, op->model, p->batch, p->tokens_in,
                     p->tokens_out, p->new_tokens, p->cache_len);
            goto out;
        }
        total += counts[i];
    }
    if (!total || !(*ratios = malloc(total * sizeof **ratios))) {
        snprintf(err, errlen, "%s: %s", csv, total ? "out of memory" : "no samples");
        goto out;
    }
    for (int i = 0; i < op->npoints; i++) {
        if (!calf_selected(&op->points[i], sel))
            continue;
        double s = 0;
        for (size_t j = 0; j < counts[i]; j++)
            s += vals[i][j];
        double mean = s / (double)counts[i];
        for (size_t j = 0; j < counts[i]; j++)
            (*ratios)[(*n)++] = vals[i][j] / mean;
    }
    rc = 0;
out:
    if (vals && counts)
        free_vals(vals, counts, op->npoints);
    free(vals);
    free(counts);
    return rc;
}
