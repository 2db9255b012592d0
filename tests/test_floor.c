/* test_floor.c — calib/realpipe/floor.awk, what a model exactly right could
 * reach against `make validate`'s real runs: on runs whose figures are
 * written here, each figure's standard error (sd / sqrt(n) over the mean;
 * the drop rate in points) and the chance erf(tol / (sqrt(2) SE)) are
 * those computed here by hand with libm's erf (not the script's own
 * approximation), and so are the expected count and the chance of every
 * percentile at once; a load point with one run has no SE; -v by_dir=1
 * names each validation by its folder. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_files.h"

/* the chance a right model is within tol, SE se: by hand */
static double chance(double tol, double se)
{
    return se <= 0 ? 1.0 : erf(tol / (sqrt(2.0) * se));
}

/* the relative SE of n values: sd (n - 1) / sqrt(n) / mean */
static double rel_se(const double *x, int n)
{
    double m = 0, ss = 0;
    for (int i = 0; i < n; i++)
        m += x[i] / n;
    for (int i = 0; i < n; i++)
        ss += (x[i] - m) * (x[i] - m);
    return sqrt(ss / (n - 1)) / sqrt((double)n) / m;
}

#define SPREAD "load,run,frames,p50,p95,p99,drop_rate_pct\n"
/* 0.30: p50 10/11/12, p95 20 three times, p99 30/33/36, drops 0/1/2 %;
 * 0.50: one run */
#define ROWS_30 "0.30,0,100,10,20,30,0\n0.30,1,100,11,20,33,1\n0.30,2,100,12,20,36,2\n"
#define ROWS_50 "0.50,0,100,7,25,40,0.5\n"

Test(floor, table_is_the_normal_chance_by_hand, .timeout = 30)
{
    char dir[256], path[512];
    kit_tmpdir(dir, sizeof dir, "floor");
    snprintf(path, sizeof path, "%s/spread-used.csv", dir);
    kit_write_file(path, SPREAD ROWS_30 ROWS_50);
    cr_assert_eq(kit_sh("awk -f calib/realpipe/floor.awk %s > %s/table", path, dir), 0);
    snprintf(path, sizeof path, "%s/table", dir);
    char *t = kit_slurp(path);
    cr_assert_not_null(t);

    double p50[] = {10, 11, 12}, p99[] = {30, 33, 36};
    double se50 = rel_se(p50, 3), se99 = rel_se(p99, 3);
    double sedrop = 1.0 / sqrt(3.0);            /* sd 1 point over sqrt(3) */
    double c50 = chance(0.05, se50), c95 = 1.0, c99 = chance(0.10, se99), cd = chance(1.0, sedrop);
    cr_assert(c50 > 0.6 && c50 < 0.7 && c99 > 0.9 && c99 < 0.96, "the hand figures are not trivial: %g %g", c50, c99);
    char want[256];
    snprintf(want, sizeof want, "| 0.30 | p50 | 3 | %.1f %% | %.2f |", 100 * se50, c50);
    cr_expect_not_null(strstr(t, want), "want %s in:\n%s", want, t);
    cr_expect_not_null(strstr(t, "| 0.30 | p95 | 3 | 0.0 % | 1.00 |"), "%s", t);
    snprintf(want, sizeof want, "| 0.30 | p99 | 3 | %.1f %% | %.2f |", 100 * se99, c99);
    cr_expect_not_null(strstr(t, want), "want %s in:\n%s", want, t);
    snprintf(want, sizeof want, "| 0.30 | drop_rate | 3 | %.2f pt | %.2f |", sedrop, cd);
    cr_expect_not_null(strstr(t, want), "want %s in:\n%s", want, t);
    cr_expect_not_null(strstr(t, "| 0.50 | p50 | 1 | - | - |"), "one run has no SE: %s", t);

    /* the summary: the expected count, every percentile at once, and with
     * four times the runs (each SE halved) */
    snprintf(want, sizeof want,
             "within target in %.1f of these 3 frame percentiles and %.1f of 1 drop rates on average;"
             " in all 3 percentiles at once with a chance of %.3g (every figure: %.3g), and with four"
             " times the runs (SE halved) %.3g.",
             c50 + c95 + c99, cd, c50 * c95 * c99, c50 * c95 * c99 * cd,
             chance(0.05, se50 / 2) * chance(0.10, se99 / 2));
    cr_expect_not_null(strstr(t, want), "want %s in:\n%s", want, t);
    free(t);
    kit_rm_rf(dir);
}

Test(floor, rows_name_each_validation_by_its_folder, .timeout = 30)
{
    char dir[256], path[512];
    kit_tmpdir(dir, sizeof dir, "floor");
    cr_assert_eq(kit_sh("mkdir -p %s/v1/runs/0.30 %s/v2/runs/0.50", dir, dir), 0);
    snprintf(path, sizeof path, "%s/v1/runs/0.30/spread-used.csv", dir);
    kit_write_file(path, SPREAD ROWS_30);
    snprintf(path, sizeof path, "%s/v2/runs/0.50/spread-used.csv", dir);
    kit_write_file(path, SPREAD ROWS_50);
    cr_assert_eq(kit_sh("awk -v mode=rows -v by_dir=1 -f calib/realpipe/floor.awk %s/v1/runs/0.30/spread-used.csv"
                        " %s/v2/runs/0.50/spread-used.csv > %s/rows.csv", dir, dir, dir), 0);
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    char *t = kit_slurp(path);
    cr_assert_not_null(t);
    cr_expect_eq(strncmp(t, "validation,load,metric,runs,se,p_within\n", 40), 0, "%s", t);
    double p50[] = {10, 11, 12};
    const char *row = strstr(t, "\nv1,0.30,p50,3,");
    cr_assert_not_null(row, "%s", t);
    double se, p;
    cr_assert_eq(sscanf(row + strlen("\nv1,0.30,p50,3,"), "%lf,%lf", &se, &p), 2);
    cr_expect_float_eq(se, rel_se(p50, 3), 1e-6);
    /* A&S 7.1.26 is within 1.5e-7 of erf; the CSV rounds to 1e-6 */
    cr_expect_float_eq(p, chance(0.05, rel_se(p50, 3)), 2e-6);
    cr_expect_not_null(strstr(t, "\nv2,0.50,p50,1,-,-\n"), "%s", t);
    free(t);
    kit_rm_rf(dir);
}
