/* sweep_point.c — one point of a finished sweep, again. See sweep_point.h.
 *
 * It reads the sweep's results.csv and point files, loads the scenario with
 * the point's overrides exactly as sweep.c did, runs it, and hands the
 * result to plot_run. It must never write anything but the one-run pictures
 * (through plot_run), print, or exit. */
#include "models/sweep_point.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "models/scenario.h"
#include "models/sweep.h"
#include "models/sweep_int.h"
#include "sim/slurp.h"

#define MSG 1024

int sweep_pick_point(const char *dir, const frontier_opts *fo, int *point, char *why,
                     size_t whylen, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    frontier_table t;
    if (frontier_read(path, &t, err, errlen) != 0)
        return -1;
    int r = frontier_cheapest_sla(&t, fo);
    const char *w = "the cheapest point that meets every SLA line";
    if (r < 0 && t.c_sla >= 0) {
        for (int k = 0; k < t.nrows && r < 0; k++)
            if (t.num[(size_t)k * (size_t)t.ncols + (size_t)t.c_sla] == 1)
                r = k;
        w = "the first point that meets every SLA line (none has a cost within the "
            "drop-rate limit)";
    }
    if (r < 0) {
        r = 0;
        w = t.c_sla >= 0 ? "the first point (none meets every SLA line)"
                         : "the first point (the scenario has no SLA lines)";
    }
    int rc = 0;
    double p = t.nrows > 0 ? t.num[(size_t)r * (size_t)t.ncols + (size_t)t.c_point] : NAN;
    if (!(p >= 0 && p < SWEEP_MAX_POINTS && p == floor(p))) {
        sweep_fmt_err(err, errlen, "%s: %s", path, t.nrows ? "a row without a point number"
                                                     : "no points");
        rc = -1;
    } else {
        *point = (int)p;
        snprintf(why, whylen, "%s", w);
    }
    frontier_free(&t);
    return rc;
}

int sweep_rerun_point(const char *dir, int point, const char *scenario_path, int threads,
                      scenario_cfg *cfg, run_result *res, bool *same, char *label,
                      size_t labellen, char *err, size_t errlen)
{
    char pp[4300];
    if (point < 0 || point >= SWEEP_MAX_POINTS) {
        sweep_fmt_err(err, errlen, "point %d: sweep points are numbered 0 to %d", point,
                SWEEP_MAX_POINTS - 1);
        return -2;
    }
    snprintf(pp, sizeof pp, "%s/points/%05d.json", dir, point);
    size_t len;
    int e = 0;
    char *text = slurp_file(pp, 0, &len, &e);
    if (!text) {
        sweep_fmt_err(err, errlen, "%s: %s (is point %d in this sweep?)", pp, strerror(e ? e : EIO),
                point);
        return -2;
    }
    sweep_point_rec rec;
    int prc = sweep_point_parse(text, len, &rec);
    free(text);
    int rc = -2;
    if (prc != 0 || rec.point != point || !rec.result) {
        sweep_fmt_err(err, errlen, "%s: not a finished sweep point file", pp);
        goto done;
    }
    const char *scn = scenario_path ? scenario_path : rec.scenario;
    if (!scn) {
        sweep_fmt_err(err, errlen, "%s: does not record its scenario (a sweep written by an older "
                "vlsim); name it with --scenario FILE", pp);
        goto done;
    }
    char fnv[17];
    if (sweep_fnv_file(scn, fnv) != 0) {
        sweep_fmt_err(err, errlen, "%s: cannot read the scenario of %s: %s%s", scn, pp,
                strerror(errno), scenario_path ? "" : "; name it with --scenario FILE");
        goto done;
    }
    if (strcmp(fnv, rec.fnv) != 0) {
        sweep_fmt_err(err, errlen, "%s: its bytes are not those of the scenario %s ran (FNV-1a %s, "
                "recorded %s); the point cannot be run again as it was", scn, pp, fnv, rec.fnv);
        goto done;
    }
    /* the overrides exactly as sweep.c made them (point_overrides) */
    scn_override ov[CFG_MAX_AXES + 2];
    size_t nov = 0;
    bool reps_axis = false, dur_axis = false;
    for (int a = 0; a < rec.naxes; a++) {
        reps_axis = reps_axis || strcmp(rec.axkey[a], "replications") == 0;
        dur_axis = dur_axis || strcmp(rec.axkey[a], "duration_s") == 0;
    }
    if (rec.reps[0] && !reps_axis)
        ov[nov++] = (scn_override){ "replications", rec.reps };
    if (rec.dur[0] && !dur_axis)
        ov[nov++] = (scn_override){ "duration_s", rec.dur };
    for (int a = 0; a < rec.naxes; a++)
        ov[nov++] = (scn_override){ rec.axkey[a], rec.axval[a] };
    sweep_point_label(point, rec.axkey, rec.axval, rec.naxes, label, labellen);
    char msg[MSG] = "";
    if (scn_load_ex(scn, ov, nov, cfg, msg, sizeof msg) != 0) {
        sweep_fmt_err(err, errlen, "%s: %s", label, msg);
        goto done;
    }
    run_opts ro = { threads, NULL, NULL, NULL };
    if (run_scenario(cfg, &ro, res, msg, sizeof msg) != 0) {
        sweep_fmt_err(err, errlen, "%s: %s", label, msg);
        cfg_free(cfg);
        rc = -1;
        goto done;
    }
    char *now = sweep_point_result_text(res);
    if (!now) {
        sweep_fmt_err(err, errlen, "out of memory");
        run_result_free(res);
        cfg_free(cfg);
        rc = -1;
        goto done;
    }
    *same = strcmp(now, rec.result) == 0;
    free(now);
    rc = 0;
done:
    sweep_point_rec_free(&rec);
    return rc;
}

int sweep_plot_point(const char *dir, int point, const char *scenario_path, int threads,
                     const plot_opts *po, sweep_plot_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    if (point >= 0) {
        info->point = point;
        snprintf(info->why, sizeof info->why, "chosen with --point");
    } else if (sweep_pick_point(dir, &po->fo, &info->point, info->why, sizeof info->why, err,
                                errlen) != 0) {
        return PLOT_BAD_INPUT;
    }
    scenario_cfg cfg;
    run_result res;
    int rc = sweep_rerun_point(dir, info->point, scenario_path, threads, &cfg, &res, &info->same,
                               info->label, sizeof info->label, err, errlen);
    if (rc != 0)
        return rc == -2 ? PLOT_BAD_INPUT : PLOT_FAIL;
    plot_opts o = *po;
    o.run_label = info->label;
    rc = plot_run(&res, dir, &o, err, errlen);
    run_result_free(&res);
    cfg_free(&cfg);
    return rc;
}
