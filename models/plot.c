/* plot.c — `vlsim plot DIR`: the frontier and the capacity heatmap of a
 * sweep's results.csv, as data files, gnuplot scripts made from the
 * templates in plots/, and PNG + SVG pictures drawn by gnuplot. See plot.h. */
#include "models/plot.h"
#include "sim/slurp.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sim/out.h"

#define GNUPLOT_PKG "gnuplot-nox"

static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- a growable string ------------------------------------------------------------ */

typedef struct {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if (b->s && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
}

/* Append s as the inside of a gnuplot double-quoted string. */
static void sb_quoted(sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_add(b, "\\%c", *s);
        else if (*s == '\n')
            sb_add(b, "\\n");
        else if ((unsigned char)*s >= 0x20)
            sb_add(b, "%c", *s);
    }
}

static const char *sb_str(const sbuf *b)
{
    return b->s ? b->s : "";
}

/* ---- the summary ------------------------------------------------------------------- */

static void note(const plot_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const plot_opts *o, const char *fmt, ...)
{
    plot_summary *s = o->summary;
    if (!s || s->nnotes >= PLOT_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->notes[s->nnotes++], sizeof s->notes[0], fmt, ap);
    va_end(ap);
}

static void wrote(const plot_opts *o, const char *name)
{
    plot_summary *s = o->summary;
    if (s && s->nfiles < PLOT_MAX_FILES)
        snprintf(s->files[s->nfiles++], sizeof s->files[0], "%s", name);
}

void plot_opts_default(plot_opts *o)
{
    memset(o, 0, sizeof *o);
    frontier_opts_default(&o->fo);
}

/* A one-run picture's title: base (already gnuplot-quoted text), then the
 * run's label on a line of its own when there is one. */
static void run_title(sbuf *t, const char *base, const plot_opts *o)
{
    sb_add(t, "%s", base);
    if (o->run_label && *o->run_label) {
        sb_add(t, "\\n");
        sb_quoted(t, o->run_label);
    }
}

void plot_summary_report(FILE *f, const char *dir, const plot_summary *s)
{
    if (s->nfiles) {
        fprintf(f, "wrote");
        for (int k = 0; k < s->nfiles; k++)
            fprintf(f, "%s %s/%s", k ? "," : "", dir, s->files[k]);
        fprintf(f, "\n");
    }
    for (int k = 0; k < s->nnotes; k++)
        fprintf(f, "note: %s\n", s->notes[k]);
}

/* ---- table access -------------------------------------------------------------------- */

static double cell(const frontier_table *t, int r, int c)
{
    return c < 0 ? NAN : t->num[(size_t)r * (size_t)t->ncols + (size_t)c];
}

static const char *text(const frontier_table *t, int r, int c)
{
    return c < 0 ? "" : t->text[(size_t)r * (size_t)t->ncols + (size_t)c];
}

/* "NaN" for an empty cell, so every data line has all its columns. */
static const char *dat_text(const frontier_table *t, int r, int c)
{
    const char *s = text(t, r, c);
    return *s && !strpbrk(s, " \t\"#") ? s : "NaN";
}

static bool drops_too_many(const frontier_table *t, int r, const frontier_opts *fo)
{
    double d = cell(t, r, t->c_drop), m = fo->max_drop_rate;
    return isfinite(m) && m >= 0 && isfinite(d) && d > m;
}

/* ---- files ------------------------------------------------------------------------- */

static int path_join(char *buf, size_t n, const char *dir, const char *name, char *err,
                     size_t errlen)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n) {
        fmt_err(err, errlen, "%s: directory name too long", dir);
        return -1;
    }
    return 0;
}

/* Write text to dir/name atomically. */
static int write_atomic(const char *dir, const char *name, const char *textv, size_t len,
                        const plot_opts *o, char *err, size_t errlen)
{
    char path[4096];
    if (path_join(path, sizeof path, dir, name, err, errlen) != 0)
        return PLOT_FAIL;
    out_file f;
    if (out_open(&f, path, err, errlen) != 0)
        return PLOT_FAIL;
    if (len && fwrite(textv, 1, len, f.f) != len) {
        fmt_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        out_abort(&f);
        return PLOT_FAIL;
    }
    if (out_commit(&f, err, errlen) != 0)
        return PLOT_FAIL;
    wrote(o, name);
    return PLOT_OK;
}

static char *slurp(const char *path, size_t *len)
{
    int e;
    char *s = slurp_file(path, 0, len, &e);
    if (!s)
        errno = e;
    return s;
}

/* The template tdir/NAME.gp.in with every @KEY@ of keys replaced; other
 * text (gnuplot's own @macros included) as it is. */
typedef struct {
    const char *key;
    const char *val;
} field;

static int fill_template(const char *tdir, const char *name, const field *fs, int nf, sbuf *out,
                         char *err, size_t errlen)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.gp.in", tdir, name) >= sizeof path) {
        fmt_err(err, errlen, "%s: template directory name too long", tdir);
        return PLOT_BAD_INPUT;
    }
    size_t len = 0;
    char *tp = slurp(path, &len);
    if (!tp) {
        fmt_err(err, errlen, "%s: cannot read the gnuplot template: %s (the templates ship in "
                "the source tree's plots/ and are installed with vlsim)", path, strerror(errno));
        return PLOT_BAD_INPUT;
    }
    for (size_t i = 0; i < len;) {
        bool done = false;
        if (tp[i] == '@') {
            for (int k = 0; k < nf; k++) {
                size_t kl = strlen(fs[k].key);
                if (i + kl + 2 <= len && strncmp(tp + i + 1, fs[k].key, kl) == 0 &&
                    tp[i + 1 + kl] == '@') {
                    sb_add(out, "%s", fs[k].val);
                    i += kl + 2;
                    done = true;
                    break;
                }
            }
        }
        if (!done) {
            size_t j = i + 1;
            while (j < len && tp[j] != '@')
                j++;
            sb_add(out, "%.*s", (int)(j - i), tp + i);
            i = j;
        }
    }
    free(tp);
    if (out->oom) {
        fmt_err(err, errlen, "out of memory");
        return PLOT_FAIL;
    }
    return PLOT_OK;
}

/* ---- running gnuplot ------------------------------------------------------------------ */

/* The first line of gnuplot's stderr that reports an error ("file" line N:
 * ..., not a warning), else its first non-empty line. */
static void first_error_line(const char *s, char *buf, size_t n)
{
    const char *first = NULL, *firstend = NULL;
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        size_t l = (size_t)(e - p);
        bool blank = strspn(p, " \t\r^") >= l;
        if (!blank) {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
            if (strstr(line, " line ") && strchr(line, ':') && !strstr(line, "warning:")) {
                snprintf(buf, n, "%.*s", (int)(n > 1 ? n - 1 : 0), line);
                return;
            }
            if (!first) {
                first = p;
                firstend = e;
            }
        }
        p = *e ? e + 1 : e;
    }
    if (first)
        snprintf(buf, n, "%.*s", (int)(firstend - first), first);
    else
        snprintf(buf, n, "(no message)");
}

static int read_all(int fd, sbuf *b)
{
    char chunk[4096];
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return (int)k;
        if (b->n < 65536)
            sb_add(b, "%.*s", (int)k, chunk);
    }
}

/* Run `gnuplot -e "png_out='..'; svg_out='..'" NAME.gp` in dir, drawing to
 * temporaries renamed to NAME.png and NAME.svg when it succeeds. */
static int draw(const char *dir, const char *name, const plot_opts *o, char *err, size_t errlen)
{
    const char *prog = o->gnuplot ? o->gnuplot : "gnuplot";
    char tpng[4096], tsvg[4096], fpng[4096], fsvg[4096], gp[128], gpath[4096];
    snprintf(gp, sizeof gp, "%s.gp", name);
    if ((size_t)snprintf(tpng, sizeof tpng, "%s/%s.tmp-XXXXXX.png", dir, name) >= sizeof tpng ||
        (size_t)snprintf(tsvg, sizeof tsvg, "%s/%s.tmp-XXXXXX.svg", dir, name) >= sizeof tsvg ||
        (size_t)snprintf(fpng, sizeof fpng, "%s/%s.png", dir, name) >= sizeof fpng ||
        (size_t)snprintf(fsvg, sizeof fsvg, "%s/%s.svg", dir, name) >= sizeof fsvg ||
        (size_t)snprintf(gpath, sizeof gpath, "%s/%s", dir, gp) >= sizeof gpath) {
        fmt_err(err, errlen, "%s: directory name too long", dir);
        return PLOT_FAIL;
    }
    int fd1 = mkstemps(tpng, 4);
    if (fd1 < 0) {
        fmt_err(err, errlen, "%s/%s.png: cannot create a temporary file: %s", dir, name,
                strerror(errno));
        return PLOT_FAIL;
    }
    close(fd1);
    int fd2 = mkstemps(tsvg, 4);
    if (fd2 < 0) {
        fmt_err(err, errlen, "%s/%s.svg: cannot create a temporary file: %s", dir, name,
                strerror(errno));
        unlink(tpng);
        return PLOT_FAIL;
    }
    close(fd2);
    chmod(tpng, 0644);
    chmod(tsvg, 0644);

    /* the temporaries' names are ours: name + [A-Za-z0-9] + suffix, safe in quotes */
    char earg[512];
    snprintf(earg, sizeof earg, "png_out='%s'; svg_out='%s'", strrchr(tpng, '/') + 1,
             strrchr(tsvg, '/') + 1);
    char *argv[] = { (char *)prog, (char *)"-e", earg, gp, NULL };

    int rc = PLOT_FAIL;
    int epipe[2] = { -1, -1 }, opipe[2] = { -1, -1 };
    sbuf msg = { 0 };
    if (pipe(epipe) != 0 || pipe(opipe) != 0) {
        fmt_err(err, errlen, "cannot run %s: %s", prog, strerror(errno));
        goto out;
    }
    fcntl(epipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(epipe[1], F_SETFD, FD_CLOEXEC);
    fcntl(opipe[0], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        fmt_err(err, errlen, "cannot run %s: %s", prog, strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* the child: stderr to the pipe, stdin and stdout to /dev/null, in dir */
        int what[2] = { 0, 0 };
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
        }
        dup2(opipe[1], 2);
        if (chdir(dir) != 0) {
            what[0] = 1;
            what[1] = errno;
        } else {
            execvp(prog, argv);
            what[0] = 2;
            what[1] = errno;
        }
        ssize_t w = write(epipe[1], what, sizeof what);
        (void)w;
        _exit(127);
    }
    close(epipe[1]);
    epipe[1] = -1;
    close(opipe[1]);
    opipe[1] = -1;
    read_all(opipe[0], &msg);
    int what[2] = { 0, 0 };
    ssize_t got;
    do
        got = read(epipe[0], what, sizeof what);
    while (got < 0 && errno == EINTR);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == (ssize_t)sizeof what && what[0] == 1) {
        fmt_err(err, errlen, "%s: cannot run gnuplot there: %s", dir, strerror(what[1]));
        goto out;
    }
    if (got == (ssize_t)sizeof what && what[0] == 2) {
        if (what[1] == ENOENT)
            fmt_err(err, errlen, "%s: not found%s; vlsim plot needs gnuplot (Debian/Ubuntu: "
                    "apt-get install %s, or make deps)", prog, strchr(prog, '/') ? "" : " on PATH",
                    GNUPLOT_PKG);
        else
            fmt_err(err, errlen, "cannot run %s: %s", prog, strerror(what[1]));
        goto out;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char line[512];
        first_error_line(sb_str(&msg), line, sizeof line);
        if (WIFSIGNALED(status))
            fmt_err(err, errlen, "%s: gnuplot killed by signal %d: %s", gpath, WTERMSIG(status),
                    line);
        else
            fmt_err(err, errlen, "%s: gnuplot failed: %s", gpath, line);
        goto out;
    }
    struct stat s1, s2;
    if (stat(tpng, &s1) != 0 || s1.st_size == 0 || stat(tsvg, &s2) != 0 || s2.st_size == 0) {
        char line[512];
        first_error_line(sb_str(&msg), line, sizeof line);
        fmt_err(err, errlen, "%s: gnuplot drew nothing: %s", gpath, line);
        goto out;
    }
    if (rename(tpng, fpng) != 0) {
        fmt_err(err, errlen, "%s: cannot write: %s", fpng, strerror(errno));
        goto out;
    }
    tpng[0] = 0;
    wrote(o, strrchr(fpng, '/') + 1);
    if (rename(tsvg, fsvg) != 0) {
        fmt_err(err, errlen, "%s: cannot write: %s", fsvg, strerror(errno));
        goto out;
    }
    tsvg[0] = 0;
    wrote(o, strrchr(fsvg, '/') + 1);
    rc = PLOT_OK;
out:
    for (int k = 0; k < 2; k++) {
        if (epipe[k] >= 0)
            close(epipe[k]);
        if (opipe[k] >= 0)
            close(opipe[k]);
    }
    if (tpng[0])
        unlink(tpng);
    if (tsvg[0])
        unlink(tsvg);
    free(msg.s);
    return rc;
}

/* Fill template NAME.gp.in with fs, write NAME.gp, draw NAME.png and NAME.svg. */
static int script_and_draw(const char *dir, const char *name, field *fs, int nf,
                           const plot_opts *o, char *err, size_t errlen)
{
    char gp[64], dat[64], png[64], svg[64];
    snprintf(gp, sizeof gp, "%s.gp", name);
    snprintf(dat, sizeof dat, "%s.dat", name);
    snprintf(png, sizeof png, "%s.png", name);
    snprintf(svg, sizeof svg, "%s.svg", name);
    fs[nf++] = (field){ "GP", gp };
    fs[nf++] = (field){ "DATA", dat };
    fs[nf++] = (field){ "PNG", png };
    fs[nf++] = (field){ "SVG", svg };
    sbuf script = { 0 };
    int rc = fill_template(o->template_dir ? o->template_dir : PLOT_TEMPLATE_DIR, name, fs, nf,
                           &script, err, errlen);
    if (rc == PLOT_OK)
        rc = write_atomic(dir, gp, sb_str(&script), script.n, o, err, errlen);
    free(script.s);
    if (rc == PLOT_OK)
        rc = draw(dir, name, o, err, errlen);
    return rc;
}

/* ---- SLA targets ------------------------------------------------------------------------- */

static bool is_frame_p99(const frontier_target *g)
{
    return strcmp(g->metric, "frame") == 0 && g->percentile == 99;
}

static const char *const SLA_COLORS[] = { "#c00000", "#7030a0", "#1f4e9a", "#404040" };
#define NSLA_COLORS ((int)(sizeof SLA_COLORS / sizeof SLA_COLORS[0]))

/* ---- the frontier ------------------------------------------------------------------------ */

static void group_title(const frontier_table *t, double fps, char *buf, size_t n)
{
    if (isnan(fps))
        snprintf(buf, n, "%s", t->c_fps >= 0 ? "no fps" : "all points");
    else
        snprintf(buf, n, "%g fps", fps);
}

static int plot_frontier(const char *dir, const frontier_table *t, const frontier_target *tg,
                         int ntg, const plot_opts *o, char *err, size_t errlen)
{
    frontier_pareto_set ps;
    if (frontier_pareto(t, &o->fo, &ps, err, errlen) != 0)
        return PLOT_FAIL;
    if (ps.ngroups == 0) {
        note(o, "frontier: skipped, no point has a cost per stream-hour, a frame p99 and a drop "
             "rate within the limit");
        frontier_pareto_free(&ps);
        return PLOT_OK;
    }
    sbuf d = { 0 }, series = { 0 }, sla = { 0 }, title = { 0 };
    double lo = INFINITY, hi = -INFINITY;
    int npoints = 0;
    sb_add(&d, "# frontier.dat — written by vlsim plot from %s: cost per stream-hour against "
           "frame p99,\n# per fps group an index of its eligible points, then an index of its "
           "Pareto set (by cost).\n# columns: cost_per_stream_hour_usd frame_p99_ms point "
           "streams gpus fps\n", t->name);
    for (int gi = 0; gi < ps.ngroups; gi++) {
        const frontier_group *g = &ps.g[gi];
        char gt[64];
        group_title(t, g->fps, gt, sizeof gt);
        sb_add(&d, "%s# index %d: %s, all %d eligible points\n", gi ? "\n\n" : "", 2 * gi, gt,
               g->neligible);
        for (int r = 0; r < t->nrows; r++) {
            if (!frontier_row_eligible(t, r, &o->fo))
                continue;
            double f = cell(t, r, t->c_fps);
            if (!(f == g->fps || (isnan(f) && isnan(g->fps))))
                continue;
            double p = cell(t, r, t->c_p99);
            lo = fmin(lo, p);
            hi = fmax(hi, p);
            npoints++;
            sb_add(&d, "%.10g %.10g %s %s %s %s\n", cell(t, r, t->c_cost), p,
                   dat_text(t, r, t->c_point), dat_text(t, r, t->c_streams),
                   dat_text(t, r, t->c_gpus), dat_text(t, r, t->c_fps));
        }
        sb_add(&d, "\n\n# index %d: %s, Pareto set (%d points, by cost)\n", 2 * gi + 1, gt,
               g->n);
        for (int k = 0; k < g->n; k++) {
            int r = g->rows[k];
            sb_add(&d, "%.10g %.10g %s %s %s %s\n", cell(t, r, t->c_cost), cell(t, r, t->c_p99),
                   dat_text(t, r, t->c_point), dat_text(t, r, t->c_streams),
                   dat_text(t, r, t->c_gpus), dat_text(t, r, t->c_fps));
        }
        sb_add(&series, "%s\"", gi ? ", " : "");
        char st[96];
        snprintf(st, sizeof st, "%s: Pareto set", gt);
        sb_quoted(&series, st);
        sb_add(&series, "\"");
    }
    int drawn = 0;
    for (int k = 0; k < ntg; k++) {
        char ts[128];
        frontier_target_str(&tg[k], ts, sizeof ts);
        if (!is_frame_p99(&tg[k])) {
            note(o, "frontier: target %s not drawn (the plots show frame p99)", ts);
            continue;
        }
        lo = fmin(lo, tg[k].ms);
        hi = fmax(hi, tg[k].ms);
        sb_add(&sla, ", \\\n         %.10g with lines dt 2 lw 2 lc rgb \"%s\" title \"SLA: ", tg[k].ms,
               SLA_COLORS[drawn % NSLA_COLORS]);
        sb_quoted(&sla, ts);
        sb_add(&sla, "\"");
        drawn++;
    }
    sb_add(&title, "Cost vs frame p99: which configurations are worth running, per FPS\\n");
    char sub[256];
    snprintf(sub, sizeof sub, "dots: the %d eligible point%s; line: the Pareto set (no other "
             "point is both cheaper and faster)", npoints, npoints == 1 ? "" : "s");
    sb_quoted(&title, sub);
    if (ps.left_out_drops) {
        snprintf(sub, sizeof sub, "\n%d point%s left out for dropping over %g%% of frames",
                 ps.left_out_drops, ps.left_out_drops == 1 ? "" : "s", 100 * o->fo.max_drop_rate);
        sb_quoted(&title, sub);
        note(o, "frontier: %d point%s left out for dropping over %g%% of frames",
             ps.left_out_drops, ps.left_out_drops == 1 ? "" : "s", 100 * o->fo.max_drop_rate);
    }
    if (ps.left_out_empty)
        note(o, "frontier: %d point%s left out for an empty cost or frame p99", ps.left_out_empty,
             ps.left_out_empty == 1 ? "" : "s");
    char ns[16];
    snprintf(ns, sizeof ns, "%d", ps.ngroups);
    const char *yscale = lo > 0 && hi / lo > 30 ? "set logscale y" : "unset logscale y";
    frontier_pareto_free(&ps);

    int rc = PLOT_FAIL;
    if (d.oom || series.oom || sla.oom || title.oom) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    rc = write_atomic(dir, "frontier.dat", sb_str(&d), d.n, o, err, errlen);
    if (rc != PLOT_OK)
        goto done;
    field fs[16] = {
        { "TITLE", sb_str(&title) }, { "NSERIES", ns }, { "SERIES", sb_str(&series) },
        { "SLA_PLOT", sb_str(&sla) }, { "YSCALE", yscale },
    };
    rc = script_and_draw(dir, "frontier", fs, 5, o, err, errlen);
done:
    free(d.s);
    free(series.s);
    free(sla.s);
    free(title.s);
    return rc;
}

/* ---- the capacity heatmap ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n) into v; returns how many. */
static int distinct(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    return m;
}

static int index_of(const double *v, int n, double x)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else if (v[mid] > x)
            hi = mid - 1;
        else
            return mid;
    }
    return -1;
}

static int plot_capacity(const char *dir, const frontier_table *t, const frontier_target *tg,
                         int ntg, const plot_opts *o, char *err, size_t errlen)
{
    if (t->c_streams < 0 || t->c_gpus < 0) {
        note(o, "capacity: skipped, %s has no %s column", t->name,
             t->c_streams < 0 && t->c_gpus < 0 ? "streams or gpus"
             : t->c_streams < 0 ? "streams" : "gpus");
        return PLOT_OK;
    }
    int rc = PLOT_FAIL;
    int n = t->nrows;
    bool *keep = calloc((size_t)n + 1, sizeof *keep);
    double *xs = malloc(((size_t)n + 1) * sizeof *xs), *ys = malloc(((size_t)n + 1) * sizeof *ys);
    int *grid = NULL;
    bool *pass = NULL;
    sbuf d = { 0 }, title = { 0 }, xt = { 0 }, yt = { 0 }, sla = { 0 }, fixed = { 0 };
    if (!keep || !xs || !ys) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    int first = -1, nkeep = 0;
    for (int r = 0; r < n; r++) {
        keep[r] = isfinite(cell(t, r, t->c_streams)) && isfinite(cell(t, r, t->c_gpus)) &&
                  isfinite(cell(t, r, t->c_p99));
        if (keep[r] && first < 0)
            first = r;
    }
    if (first < 0) {
        note(o, "capacity: skipped, no point has streams, gpus and a frame p99");
        rc = PLOT_OK;
        goto done;
    }
    /* other configuration columns with several values: keep the first value's rows */
    for (int c = t->cfg_first; c < t->cfg_end; c++) {
        if (c == t->c_streams || c == t->c_gpus)
            continue;
        const char *v0 = text(t, first, c);
        bool varies = false;
        for (int r = first; r < n && !varies; r++)
            varies = keep[r] && strcmp(text(t, r, c), v0) != 0;
        if (!varies)
            continue;
        for (int r = first; r < n; r++)
            if (keep[r] && strcmp(text(t, r, c), v0) != 0)
                keep[r] = false;
        sb_add(&fixed, "%s%s %s", fixed.n ? ", " : "", t->cols[c], *v0 ? v0 : "(empty)");
    }
    for (int r = 0; r < n; r++)
        if (keep[r]) {
            xs[nkeep] = cell(t, r, t->c_streams);
            ys[nkeep] = cell(t, r, t->c_gpus);
            nkeep++;
        }
    int nx = distinct(xs, nkeep), ny = distinct(ys, nkeep);
    grid = malloc((size_t)nx * (size_t)ny * sizeof *grid);
    if (!grid) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    for (int k = 0; k < nx * ny; k++)
        grid[k] = -1;
    int dups = 0, ndrop = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < n; r++) {
        if (!keep[r])
            continue;
        int i = index_of(xs, nx, cell(t, r, t->c_streams)),
            j = index_of(ys, ny, cell(t, r, t->c_gpus));
        if (grid[j * nx + i] >= 0) {
            dups++;
            continue;
        }
        grid[j * nx + i] = r;
        lo = fmin(lo, cell(t, r, t->c_p99));
        hi = fmax(hi, cell(t, r, t->c_p99));
    }
    if (dups)
        note(o, "capacity: %d point%s repeat a (streams, gpus) cell; the first is drawn", dups,
             dups == 1 ? "" : "s");

    sb_add(&d, "# capacity.dat — written by vlsim plot from %s: frame p99 per (streams, gpus)"
           "\n# index 0 columns: x_index y_index frame_p99_ms label point streams gpus "
           "drops_too_many\n", t->name);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            int r = grid[j * nx + i];
            if (r < 0)
                continue;
            double p = cell(t, r, t->c_p99);
            bool dr = drops_too_many(t, r, &o->fo);
            ndrop += dr;
            sb_add(&d, "%d %d %.10g \"%.*f%s\" %s %s %s %d\n", i, j, p, p >= 100 ? 0 : 1, p,
                   dr ? "*" : "", dat_text(t, r, t->c_point), dat_text(t, r, t->c_streams),
                   dat_text(t, r, t->c_gpus), dr);
        }
    pass = malloc((size_t)nx * (size_t)ny * sizeof *pass);
    if (!pass) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    int drawn = 0;
    for (int k = 0; k < ntg; k++) {
        char ts[128];
        frontier_target_str(&tg[k], ts, sizeof ts);
        if (!is_frame_p99(&tg[k])) {
            note(o, "capacity: target %s not drawn (the plots show frame p99)", ts);
            continue;
        }
        int npass = 0, ncells = 0;
        for (int c = 0; c < nx * ny; c++) {
            int r = grid[c];
            pass[c] = false;
            if (r < 0)
                continue;
            bool missing;
            double v = frontier_target_value(t, r, &tg[k], &o->fo, &missing);
            pass[c] = !drops_too_many(t, r, &o->fo) && v <= tg[k].ms;
            npass += pass[c];
            ncells++;
        }
        drawn++;
        const char *color = SLA_COLORS[(drawn - 1) % NSLA_COLORS];
        sb_add(&d, "\n\n# index %d: the contour of %s: cell edges between cells meeting it and "
               "cells missing it\n", drawn, ts);
        int nseg = 0;
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int c = j * nx + i;
                if (grid[c] < 0)
                    continue;
                if (i + 1 < nx && grid[c + 1] >= 0 && pass[c] != pass[c + 1]) {
                    sb_add(&d, "%g %g\n%g %g\n\n", i + 0.5, j - 0.5, i + 0.5, j + 0.5);
                    nseg++;
                }
                if (j + 1 < ny && grid[c + nx] >= 0 && pass[c] != pass[c + nx]) {
                    sb_add(&d, "%g %g\n%g %g\n\n", i - 0.5, j + 0.5, i + 0.5, j + 0.5);
                    nseg++;
                }
            }
        char what[256];
        snprintf(what, sizeof what, "SLA %s (%s)%s", ts,
                 o->fo.use_ci ? "95% CI upper end" : "estimate",
                 nseg ? ""
                 : npass == ncells ? ": every cell meets it"
                 : npass == 0 ? ": no cell meets it" : ": no boundary between adjacent cells");
        if (nseg)
            sb_add(&sla, ", \\\n         datafile index %d using 1:2 with lines lw 4 lc rgb \"%s\" "
                   "title \"", drawn, color);
        else
            sb_add(&sla, ", \\\n         NaN with lines lw 4 lc rgb \"%s\" title \"", color);
        sb_quoted(&sla, what);
        sb_add(&sla, "\"");
    }
    if (ndrop) {
        char w[128];
        snprintf(w, sizeof w, "* drops over %g%% of frames (misses the SLA)",
                 100 * o->fo.max_drop_rate);
        sb_add(&sla, ", \\\n         NaN with points pt -1 title \"");
        sb_quoted(&sla, w);
        sb_add(&sla, "\"");
    }
    for (int i = 0; i < nx; i++)
        sb_add(&xt, "%s\"%g\" %d", i ? ", " : "", xs[i], i);
    for (int j = 0; j < ny; j++)
        sb_add(&yt, "%s\"%g\" %d", j ? ", " : "", ys[j], j);
    sb_add(&title, "How many streams each GPU count carries: frame p99 by streams x GPUs");
    if (fixed.n) {
        sb_add(&title, "\\n");
        char *only = NULL;
        size_t ol = fixed.n + 64;
        only = malloc(ol);
        if (only) {
            snprintf(only, ol, "only the points with %s (the first value of each)", fixed.s);
            sb_quoted(&title, only);
            free(only);
        }
        note(o, "capacity: drew only the points with %.180s", fixed.s);
    }
    char snx[16], sny[16], cbs[128];
    snprintf(snx, sizeof snx, "%d", nx);
    snprintf(sny, sizeof sny, "%d", ny);
    if (lo == hi)
        snprintf(cbs, sizeof cbs, "set cbrange [%.10g:%.10g]", lo * 0.9, hi * 1.1 + 1e-9);
    else if (lo > 0 && hi / lo > 20)
        snprintf(cbs, sizeof cbs, "set logscale cb");
    else
        snprintf(cbs, sizeof cbs, "unset logscale cb");
    if (d.oom || title.oom || xt.oom || yt.oom || sla.oom || fixed.oom) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    rc = write_atomic(dir, "capacity.dat", sb_str(&d), d.n, o, err, errlen);
    if (rc != PLOT_OK)
        goto done;
    field fs[16] = {
        { "TITLE", sb_str(&title) }, { "XTICS", sb_str(&xt) }, { "YTICS", sb_str(&yt) },
        { "NX", snx }, { "NY", sny }, { "CBSCALE", cbs }, { "SLA_PLOT", sb_str(&sla) },
    };
    rc = script_and_draw(dir, "capacity", fs, 7, o, err, errlen);
done:
    free(keep);
    free(xs);
    free(ys);
    free(grid);
    free(pass);
    free(d.s);
    free(title.s);
    free(xt.s);
    free(yt.s);
    free(sla.s);
    free(fixed.s);
    return rc;
}

/* Clear the summary; dir must be a directory. */
static int check_dir(const char *dir, const plot_opts *o, char *err, size_t errlen)
{
    if (o->summary)
        memset(o->summary, 0, sizeof *o->summary);
    struct stat st;
    if (stat(dir, &st) != 0) {
        fmt_err(err, errlen, "%s: %s", dir, strerror(errno));
        return PLOT_BAD_INPUT;
    }
    if (!S_ISDIR(st.st_mode)) {
        fmt_err(err, errlen, "%s: not a directory", dir);
        return PLOT_BAD_INPUT;
    }
    return PLOT_OK;
}

/* ---- plot_dir ------------------------------------------------------------------------------ */

int plot_dir(const char *dir, const plot_opts *o, char *err, size_t errlen)
{
    if (check_dir(dir, o, err, errlen) != PLOT_OK)
        return PLOT_BAD_INPUT;
    char csv[4096];
    if (path_join(csv, sizeof csv, dir, "results.csv", err, errlen) != 0)
        return PLOT_BAD_INPUT;
    if (access(csv, F_OK) != 0) {
        fmt_err(err, errlen, "%s: no such file; run `vlsim sweep FILE --out %s` first", csv, dir);
        return PLOT_BAD_INPUT;
    }
    frontier_table t;
    if (frontier_read(csv, &t, err, errlen) != 0)
        return PLOT_BAD_INPUT;
    frontier_target def;
    const frontier_target *tg = o->targets;
    int ntg = o->ntargets;
    if (!tg || ntg <= 0) {
        memset(&def, 0, sizeof def);
        snprintf(def.metric, sizeof def.metric, "frame");
        def.percentile = 99;
        def.ms = 200;
        tg = &def;
        ntg = 1;
    }
    int rc = plot_frontier(dir, &t, tg, ntg, o, err, errlen);
    if (rc == PLOT_OK)
        rc = plot_capacity(dir, &t, tg, ntg, o, err, errlen);
    frontier_free(&t);
    return rc;
}

/* ---- one run: the per-stage CDFs ------------------------------------------------------------ */

/* The CDF of h as "x fraction" lines: (bucket upper edge, fraction <= it),
 * a point only when the fraction moved >= 0.25 % since the last one, the
 * first and last bucket always; values over the range end it at h->max.
 * Returns the number of points (0: nothing on a log axis). */
static int cdf_curve(sbuf *d, const hist_t *h)
{
    if (h->n == 0 || h->n <= h->n_low + h->n_high)
        return 0;
    double n = (double)h->n, last = -1;
    uint64_t cum = h->n_low;
    int np = 0;
    for (uint32_t i = h->lo; i <= h->hi; i++) {
        if (!h->counts[i])
            continue;
        cum += h->counts[i];
        double f = (double)cum / n;
        if (i == h->lo || i == h->hi || f - last >= 0.0025) {
            sb_add(d, "%.10g %.10g\n", hist_bucket_upper(i), f);
            last = f;
            np++;
        }
    }
    if (h->n_high) {
        sb_add(d, "%.10g 1\n", h->max);
        np++;
    }
    return np;
}

static int plot_cdf(const char *dir, const run_result *r, const plot_opts *o, char *err,
                    size_t errlen)
{
    const scenario_cfg *cfg = r->cfg;
    sbuf d = { 0 }, names = { 0 };
    int nc = 0;
    sb_add(&d, "# cdf.dat — written by vlsim run --plot: latency CDFs, one index per curve\n"
           "# (pooled over all replications), thinned to points 0.25 %% of the fraction apart\n"
           "# columns: ms fraction_at_or_below\n");
    for (int s = 0; s <= cfg->nstages; s++) {
        bool e2e = s == cfg->nstages;
        if (!e2e && cfg->stages[s].path != PATH_FRAME)
            continue;
        static const hist_t none;
        const hist_t *h = e2e ? &r->cdf_e2e : r->cdf_stage ? &r->cdf_stage[s] : &none;
        char title[128];
        if (e2e)
            snprintf(title, sizeof title, "frame end to end");
        else
            snprintf(title, sizeof title, "%s (sojourn)", cfg->stages[s].name);
        if (h->n == 0) {
            note(o, "cdf: %s skipped, no values", title);
            continue;
        }
        if (h->n <= h->n_low + h->n_high && h->n_high == 0) {
            note(o, "cdf: %s skipped, every value is 0 (no place on a log axis)", title);
            continue;
        }
        sb_add(&d, "%s# index %d: %s, %llu values\n", nc ? "\n\n" : "", nc, title,
               (unsigned long long)h->n);
        cdf_curve(&d, h);
        sb_add(&names, "%s\"", nc ? ", " : "");
        sb_quoted(&names, title);
        sb_add(&names, "\"");
        nc++;
    }
    int rc = PLOT_FAIL;
    if (nc == 0) {
        note(o, "cdf: skipped, no latencies recorded");
        rc = PLOT_OK;
        goto done;
    }
    if (d.oom || names.oom) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    rc = write_atomic(dir, "cdf.dat", sb_str(&d), d.n, o, err, errlen);
    if (rc != PLOT_OK)
        goto done;
    char ns[16];
    snprintf(ns, sizeof ns, "%d", nc);
    sbuf title = { 0 };
    run_title(&title, "Per-stage latency: where the tail comes from (CDF, log scale)", o);
    if (title.oom) {
        fmt_err(err, errlen, "out of memory");
        rc = PLOT_FAIL;
        goto done;
    }
    field fs[16] = {
        { "TITLE", sb_str(&title) },
        { "NSERIES", ns }, { "SERIES", sb_str(&names) },
    };
    rc = script_and_draw(dir, "cdf", fs, 3, o, err, errlen);
    free(title.s);
done:
    free(d.s);
    free(names.s);
    return rc;
}

/* ---- one run: stage p99s against the budget --------------------------------------------------- */

static int plot_budget(const char *dir, const run_result *r, const plot_opts *o, char *err,
                       size_t errlen)
{
    const scenario_cfg *cfg = r->cfg;
    sbuf d = { 0 }, names = { 0 }, title = { 0 };
    int ns = 0, nobudget = 0;
    double sp = 0, sb = 0, e2e = r->e2e.p99.mean;
    sb_add(&d, "# budget.dat — written by vlsim run --plot: per frame-path stage, its p99 "
           "(mean over replications)\n# and its budget (0 = none), with where each sits in "
           "its stacked bar\n# columns: stage name p99_ms budget_ms p99_from p99_to "
           "budget_from budget_to\n");
    for (int s = 0; s < cfg->nstages; s++) {
        const stage_cfg *st = &cfg->stages[s];
        if (st->path != PATH_FRAME)
            continue;
        double p = r->stage[s].sojourn.p99.mean, b = st->budget_ms > 0 ? st->budget_ms : 0;
        if (!isfinite(p))
            p = 0;
        sb_add(&d, "%d %s %.10g %.10g %.10g %.10g %.10g %.10g\n", s, st->name, p, b, sp, sp + p,
               sb, sb + b);
        sp += p;
        sb += b;
        char key[128];
        snprintf(key, sizeof key, "%s%s", st->name, b > 0 ? "" : " (no budget: 0)");
        nobudget += b <= 0;
        sb_add(&names, "%s\"", ns ? ", " : "");
        sb_quoted(&names, key);
        sb_add(&names, "\"");
        ns++;
    }
    int rc = PLOT_FAIL;
    if (ns == 0) {
        note(o, "budget: skipped, no frame-path stage");
        rc = PLOT_OK;
        goto done;
    }
    if (nobudget)
        note(o, "budget: %d stage%s without a budget, drawn as 0", nobudget,
             nobudget == 1 ? "" : "s");
    sb_add(&title, "Stage p99s stacked against the budget (they add to more than the true "
           "frame p99)\\n");
    char sub[256];
    snprintf(sub, sizeof sub, "sum of stage p99s %.4g ms, sum of budgets %.4g ms, true frame "
             "p99 %.4g ms", sp, sb, e2e);
    sb_quoted(&title, sub);
    run_title(&title, "", o);
    if (d.oom || names.oom || title.oom) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    rc = write_atomic(dir, "budget.dat", sb_str(&d), d.n, o, err, errlen);
    if (rc != PLOT_OK)
        goto done;
    char nss[16], es[64], ymax[64];
    snprintf(nss, sizeof nss, "%d", ns);
    snprintf(es, sizeof es, "%.10g", isfinite(e2e) ? e2e : 0.0);
    snprintf(ymax, sizeof ymax, "%.10g", 1.15 * fmax(fmax(sp, sb), isfinite(e2e) ? e2e : 0) + 1e-9);
    field fs[16] = {
        { "TITLE", sb_str(&title) }, { "NSERIES", nss }, { "SERIES", sb_str(&names) },
        { "E2E_P99", es }, { "YMAX", ymax },
    };
    rc = script_and_draw(dir, "budget", fs, 5, o, err, errlen);
done:
    free(d.s);
    free(names.s);
    free(title.s);
    return rc;
}

/* ---- one run: the time series ------------------------------------------------------------------ */

static const char *num_or_nan(char *buf, size_t n, double v)
{
    if (isfinite(v))
        snprintf(buf, n, "%.10g", v);
    else
        snprintf(buf, n, "NaN");
    return buf;
}

static int plot_series(const char *dir, const run_result *r, const plot_opts *o, char *err,
                       size_t errlen)
{
    if (r->nseries <= 0 || !r->series) {
        note(o, "series: skipped, the run recorded no time series");
        return PLOT_OK;
    }
    sbuf d = { 0 };
    int maxlevel = 0;
    sb_add(&d, "# series.dat — written by vlsim run --plot: replication 0 over time (warm-up "
           "included), one line per control tick\n# columns: t_s fps level queue_fill "
           "p99_ms\n");
    for (int k = 0; k < r->nseries; k++) {
        const series_point *p = &r->series[k];
        char a[32], b[32], c[32], e[32];
        sb_add(&d, "%s %s %d %s %s\n", num_or_nan(a, sizeof a, p->t_s),
               num_or_nan(b, sizeof b, p->fps), p->level, num_or_nan(c, sizeof c, p->queue_fill),
               num_or_nan(e, sizeof e, p->p99_ms));
        if (p->level > maxlevel)
            maxlevel = p->level;
    }
    int rc = PLOT_FAIL;
    if (d.oom) {
        fmt_err(err, errlen, "out of memory");
        goto done;
    }
    rc = write_atomic(dir, "series.dat", sb_str(&d), d.n, o, err, errlen);
    if (rc != PLOT_OK)
        goto done;
    char ml[16];
    snprintf(ml, sizeof ml, "%d", maxlevel < 1 ? 1 : maxlevel);
    sbuf title = { 0 };
    run_title(&title, "One run over time: load, degradation, queue fill and frame p99", o);
    if (title.oom) {
        fmt_err(err, errlen, "out of memory");
        rc = PLOT_FAIL;
        goto done;
    }
    field fs[16] = {
        { "TITLE", sb_str(&title) },
        { "MAXLEVEL", ml },
    };
    rc = script_and_draw(dir, "series", fs, 2, o, err, errlen);
    free(title.s);
done:
    free(d.s);
    return rc;
}

/* ---- a named plot from its data (vlsim warmpool) ---------------------------------------- */

int plot_named(const char *dir, const char *name, const char *data, size_t len,
               const char *const *keys, const char *const *vals, int nkv, const plot_opts *o,
               char *err, size_t errlen)
{
    char dat[64];
    field fs[16];
    if (nkv < 0 || nkv > 12 || strlen(name) > 40) {
        fmt_err(err, errlen, "plot %s: too many fields or too long a name", name);
        return PLOT_FAIL;
    }
    for (int k = 0; k < nkv; k++)
        fs[k] = (field){ keys[k], vals[k] };
    snprintf(dat, sizeof dat, "%s.dat", name);
    int rc = write_atomic(dir, dat, data, len, o, err, errlen);
    return rc == PLOT_OK ? script_and_draw(dir, name, fs, nkv, o, err, errlen) : rc;
}

/* ---- plot_run ------------------------------------------------------------------------------------ */

int plot_run(const run_result *r, const char *dir, const plot_opts *o, char *err, size_t errlen)
{
    if (check_dir(dir, o, err, errlen) != PLOT_OK)
        return PLOT_BAD_INPUT;
    if (!r || !r->cfg || !r->stage) {
        fmt_err(err, errlen, "plot_run: no run result");
        return PLOT_BAD_INPUT;
    }
    int rc = plot_cdf(dir, r, o, err, errlen);
    if (rc == PLOT_OK)
        rc = plot_budget(dir, r, o, err, errlen);
    if (rc == PLOT_OK)
        rc = plot_series(dir, r, o, err, errlen);
    return rc;
}
