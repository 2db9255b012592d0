/* plot.h — `vlsim plot DIR`: pictures of a sweep's results.csv, drawn by
 * gnuplot.
 *
 * For each plot, plot_dir writes into DIR a data file (NAME.dat), a gnuplot
 * script (NAME.gp, made from the template NAME.gp.in in the template
 * directory by filling in file names, titles and the SLA lines) and the
 * pictures NAME.png and NAME.svg, which gnuplot draws (found on PATH). The
 * script stands alone: `cd DIR && gnuplot NAME.gp` draws them again.
 *
 *   frontier   cost per stream-hour ($) against frame p99 (ms), one series
 *              per FPS: every eligible point as a dot, the Pareto set
 *              (frontier.h) joined by a line; the frame p99 targets as
 *              horizontal lines.
 *   capacity   a heatmap of streams x GPUs -> frame p99 (ms), one cell per
 *              point (no point: an empty cell), with the SLA contour: the
 *              cell edges between cells that meet a frame p99 target and
 *              cells that do not (as frontier.h judges a target: the CI's
 *              upper end by default; a cell dropping more frames than the
 *              limit fails). When another configuration column (fps, an
 *              axis) has several values, only the rows holding the first
 *              value (in row order) of each are drawn, and the title says
 *              so. Skipped, with a note, when results.csv has no streams or
 *              no gpus column.
 *
 * Files appear whole or not at all: data files and scripts through
 * sim/out.h, pictures drawn to temporaries (NAME.tmp-XXXXXX.png / .svg,
 * names a sweep directory allows) renamed into place once gnuplot succeeds.
 * gnuplot runs with fork/execvp (no shell) in DIR; its stderr is captured,
 * and a gnuplot error is a failure whose message holds gnuplot's first error
 * line. Nothing here prints or exits; no global mutable state. */
#ifndef VL_PLOT_H
#define VL_PLOT_H

#include <stdio.h>
#include <stddef.h>
#include "models/frontier.h"
#include "models/run.h"

/* Where the templates are when plot_opts.template_dir is NULL; the build
 * may define it (make install: $(PREFIX)/share/vlsim/plots). */
#ifndef PLOT_TEMPLATE_DIR
#define PLOT_TEMPLATE_DIR "plots"
#endif

/* Return codes of plot_dir. */
enum { PLOT_OK = 0, PLOT_FAIL = -1, PLOT_BAD_INPUT = -2 };

#define PLOT_MAX_FILES 32
#define PLOT_MAX_NOTES 8

/* What plot_dir did. */
typedef struct {
    int nfiles;
    char files[PLOT_MAX_FILES][64];    /* the files written, names within DIR, in order */
    int nnotes;
    char notes[PLOT_MAX_NOTES][256];   /* plots skipped, targets not drawn, rows left out */
} plot_summary;

typedef struct {
    /* SLA lines; only frame p99 targets are drawn (both plots show frame
     * p99), others get a note. NULL / 0: frame p99 <= 200 ms. */
    const frontier_target *targets;
    int ntargets;
    frontier_opts fo;          /* drop-rate limit and CI rule (frontier_opts_default) */
    const char *template_dir;  /* NULL: PLOT_TEMPLATE_DIR */
    const char *gnuplot;       /* the program; NULL: "gnuplot", searched on PATH */
    const char *run_label;     /* plot_run: a line added to each title, e.g. which sweep
                                  point the run is ("point 5 (streams=32, gpus=2)"); NULL: none */
    plot_summary *summary;     /* filled when not NULL */
} plot_opts;

void plot_opts_default(plot_opts *o);

/* Draw the plots of dir/results.csv into dir (see above); existing files of
 * the same names are replaced. Returns PLOT_OK, PLOT_BAD_INPUT (no or bad
 * results.csv, a missing template) or PLOT_FAIL (gnuplot missing or
 * failing, I/O), with a message. */
int plot_dir(const char *dir, const plot_opts *o, char *err, size_t errlen);

/* The pictures of one run (`vlsim run FILE --plot DIR`), into dir, which
 * must exist; same files, atomic writes, gnuplot rules and return codes as
 * plot_dir (o->targets unused). NAME.dat + NAME.gp + NAME.png + NAME.svg for
 *   cdf      per-stage latency CDFs (log x, ms): one curve per frame-path
 *            stage's pooled sojourn histogram (r->cdf_stage[s]; empty:
 *            skipped with a note) and the frame's end to end (r->cdf_e2e);
 *            each curve is (bucket upper edge, fraction <= it), thinned to
 *            points 0.25 % of the fraction apart, ending at fraction 1.
 *   budget   the frame-path stages' p99s stacked beside their budgets
 *            (budget_ms, 0 = none, drawn 0 and said so in the key), with the
 *            true frame p99 (r->e2e.p99.mean) as a line.
 *   series   replication 0 over time (r->series): arrivals (frames/s) and
 *            windowed frame p99, degradation level and queue fill; skipped
 *            with a note when r->nseries == 0. */
int plot_run(const run_result *r, const char *dir, const plot_opts *o, char *err, size_t errlen);

/* One more picture from data the caller made: write dir/NAME.dat (len
 * bytes), fill the template NAME.gp.in's @KEY@ fields (keys[k] -> vals[k],
 * at most 12; GP, DATA, PNG and SVG are filled in too), write NAME.gp and
 * draw NAME.png and NAME.svg; same rules and return codes as plot_dir.
 * (`vlsim warmpool` draws warmpool this way.) */
int plot_named(const char *dir, const char *name, const char *data, size_t len,
               const char *const *keys, const char *const *vals, int nkv, const plot_opts *o,
               char *err, size_t errlen);

/* The summary as lines of text: "wrote DIR/frontier.png, ..." then the
 * notes, each on a line starting "note: ". */
void plot_summary_report(FILE *f, const char *dir, const plot_summary *s);

#endif
