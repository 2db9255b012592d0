/* test_crash.c — crash safety of ./vlsim as a user meets it: SIGINT and
 * SIGTERM during `run` leave the user's files as they were (no output, no
 * temporary) with exit status 128 + the signal and a one-line message;
 * SIGINT during `sweep` keeps the finished points (whole files), abandons
 * the running ones without a file, says to --resume, and --resume then
 * gives the results.csv of an uninterrupted sweep byte for byte; and 20
 * SIGKILLs at seeded random moments, each followed by --resume, end in
 * that same results.csv with nothing stray left. The reference is always
 * an uninterrupted run of the same command. Runs ./vlsim (built by make)
 * from the repository root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include "tests/kit_files.h"

#define SWEEP_SCN "scenarios/sweep-example.yaml"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&t, NULL);
}

/* Start ./vlsim with argv (NULL-terminated, argv[0] included), stdout and
 * stderr into files (or /dev/null). */
static pid_t spawn(char *const argv[], const char *out, const char *errf)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errf ? errf : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0)
            _exit(127);
        dup2(fo, 1);
        dup2(fe, 2);
        execv("./vlsim", argv);
        _exit(127);
    }
    return pid;
}

static int wait_status(pid_t pid)
{
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

/* Names in dir that contain ".tmp." (temporaries of sim/out.h). */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ---- vlsim run ------------------------------------------------------------ */

/* A run that takes minutes: stopped by sig after 0.5 s. */
static void run_interrupted(int sig)
{
    char d[64], scn[128], js[128], csv[128], errf[128];
    kit_tmpdir(d, sizeof d, "crash");
    snprintf(scn, sizeof scn, "%s/long.yaml", d);
    snprintf(js, sizeof js, "%s/out.json", d);
    snprintf(csv, sizeof csv, "%s/new.csv", d);
    snprintf(errf, sizeof errf, "%s.err", d);
    kit_write_file(scn, "name: long\nseed: 1\nduration_s: 1000000\nreplications: 2\n"
                    "workload: {arrival: poisson, rate_hz: 500}\n"
                    "stages:\n  - name: server\n    service: {dist: exponential, mean_ms: 1}\n");
    kit_write_file(js, "the user's own file\n");
    char *argv[] = { "vlsim", "run", scn, "--json", js, "--csv", csv, "--force", "--threads", "2",
                     NULL };
    pid_t pid = spawn(argv, NULL, errf);
    sleep_s(0.5);
    kill(pid, sig);
    int st = wait_status(pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "status %d, want exit %d", st,
              128 + sig);
    char *kept = kit_slurp(js);
    cr_expect(kept && strcmp(kept, "the user's own file\n") == 0, "out.json changed: %s", kept);
    free(kept);
    cr_expect(!kit_exists(csv), "new.csv written by an interrupted run");
    cr_expect_eq(entries(d), 2, "stray files in %s", d);   /* long.yaml, out.json */
    char *msg = kit_slurp(errf);
    cr_assert_not_null(msg);
    cr_expect(strstr(msg, sig == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"),
              "%s", msg);
    char *nl = strchr(msg, '\n');
    cr_expect(nl && nl[1] == 0, "not one line: %s", msg);
    free(msg);
    unlink(errf);
    kit_rm_rf(d);
}

Test(crash, sigint_during_run_writes_nothing, .timeout = 60)
{
    run_interrupted(SIGINT);
}

Test(crash, sigterm_during_run_writes_nothing, .timeout = 60)
{
    run_interrupted(SIGTERM);
}

/* ---- vlsim sweep ------------------------------------------------------------ */

/* 16 points of about 0.2 s each. */
static void sweep_argv(char **argv, const char *dir, int resume)
{
    int k = 0;
    argv[k++] = "vlsim";
    argv[k++] = "sweep";
    argv[k++] = SWEEP_SCN;
    argv[k++] = "--out";
    argv[k++] = (char *)dir;
    argv[k++] = "--axis";
    argv[k++] = "streams=4,8,12,16,20,24,28,32";
    argv[k++] = "--axis";
    argv[k++] = "gpus=1,2";
    argv[k++] = "--duration";
    argv[k++] = "150";
    argv[k++] = "--jobs";
    argv[k++] = "2";
    argv[k++] = "-q";
    if (resume)
        argv[k++] = "--resume";
    argv[k] = NULL;
}

#define NPOINTS 16

/* An uninterrupted sweep into ref; returns its wall time. */
static double reference(const char *ref)
{
    char *argv[20];
    sweep_argv(argv, ref, 0);
    double t0 = now_s();
    int st = wait_status(spawn(argv, NULL, NULL));
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reference sweep failed: %d", st);
    return now_s() - t0;
}

static void expect_same_results(const char *ref, const char *d)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/results.csv", ref);
    snprintf(b, sizeof b, "%s/results.csv", d);
    char *x = kit_slurp(a), *y = kit_slurp(b);
    cr_assert_not_null(x);
    cr_assert_not_null(y, "no results.csv in %s", d);
    cr_expect(strcmp(x, y) == 0, "results.csv differs from the uninterrupted sweep's");
    free(x);
    free(y);
}

static int point_files(const char *d)
{
    char pd[128];
    snprintf(pd, sizeof pd, "%s/points", d);
    return entries(pd) - temporaries(pd);
}

Test(crash, sigint_during_sweep_keeps_points_and_resumes, .timeout = 120)
{
    char ref[64], d[64], first[128], pd[128], errf[128], res[128];
    kit_tmpdir(ref, sizeof ref, "crash");
    kit_tmpdir(d, sizeof d, "crash");
    reference(ref);
    snprintf(first, sizeof first, "%s/points/00000.json", d);
    snprintf(pd, sizeof pd, "%s/points", d);
    snprintf(errf, sizeof errf, "%s.err", d);
    snprintf(res, sizeof res, "%s/results.csv", d);
    char *argv[20];
    sweep_argv(argv, d, 0);
    pid_t pid = spawn(argv, NULL, errf);
    double t0 = now_s();
    while (!kit_exists(first) && now_s() - t0 < 60)      /* once a point is finished */
        sleep_s(0.002);
    kill(pid, SIGINT);
    int st = wait_status(pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d, want exit 130", st);
    char *msg = kit_slurp(errf);
    cr_assert_not_null(msg);
    cr_expect(strstr(msg, "--resume") != NULL, "%s", msg);
    free(msg);
    unlink(errf);
    cr_expect(!kit_exists(res), "results.csv written by an interrupted sweep");
    cr_expect_eq(temporaries(pd), 0, "temporaries left in %s", pd);
    cr_expect_eq(temporaries(d), 0, "temporaries left in %s", d);
    int kept = point_files(d);
    cr_expect(kept >= 1 && kept < NPOINTS, "%d point files after the interrupt", kept);
    for (int p = 0; p < NPOINTS; p++) {              /* every kept file is whole */
        char f[160];
        snprintf(f, sizeof f, "%s/%05d.json", pd, p);
        char *text = kit_slurp(f);
        if (!text)
            continue;
        size_t n = strlen(text);
        cr_expect(n > 2 && strcmp(text + n - 2, "}\n") == 0, "%s is cut short", f);
        free(text);
    }
    sweep_argv(argv, d, 1);
    st = wait_status(spawn(argv, NULL, NULL));
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the resumed sweep failed: %d", st);
    expect_same_results(ref, d);
    kit_rm_rf(ref);
    kit_rm_rf(d);
}

/* 20 SIGKILLs at random moments (seeded fractions of the uninterrupted
 * sweep's wall time: during the set-up, a point's run, its file's write,
 * results.csv's write, or after the end), each run with --resume; then one
 * more --resume to the end. */
Test(crash, twenty_sigkills_then_resume_give_identical_results, .timeout = 180)
{
    char ref[64], d[64];
    kit_tmpdir(ref, sizeof ref, "crash");
    kit_tmpdir(d, sizeof d, "crash");
    double t_ref = reference(ref);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20261201);
    char *argv[20];
    sweep_argv(argv, d, 1);
    int landed = 0;
    for (int k = 0; k < 20; k++) {
        double delay = gsl_rng_uniform(r) * 0.15 * t_ref;
        pid_t pid = spawn(argv, NULL, NULL);
        sleep_s(delay);
        kill(pid, SIGKILL);
        int st = wait_status(pid);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
            landed++;
        else
            cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kill %d: status %d", k, st);
    }
    gsl_rng_free(r);
    cr_log_info("%d of 20 SIGKILLs landed while the sweep ran (uninterrupted: %.2f s); "
                "%d point files then", landed, t_ref, point_files(d));
    cr_expect_geq(landed, 8, "only %d of 20 kills hit a running sweep", landed);
    int st = wait_status(spawn(argv, NULL, NULL));
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the last resume failed: %d", st);
    expect_same_results(ref, d);
    char pd[128];
    snprintf(pd, sizeof pd, "%s/points", d);
    cr_expect_eq(entries(pd), NPOINTS, "stray files in %s", pd);
    cr_expect_eq(entries(d), 2, "stray files in %s", d);      /* points/, results.csv */
    kit_rm_rf(ref);
    kit_rm_rf(d);
}
