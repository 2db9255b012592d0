/* kit_files.h — files and shell commands for the tests that drive ./vlsim
 * as a user would (test_cli.c, test_sweep.c, test_crash.c, ...): read a
 * whole file, write one, test that one exists, make and remove a scratch
 * directory, run a command and get its exit status.
 * Header-only and static inline, so a test file pays only for what it uses.
 * These helpers are for tests only: they abort the test on a failure that
 * is the harness's own (a scratch directory that cannot be made). */
#ifndef VL_TEST_KIT_FILES_H
#define VL_TEST_KIT_FILES_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Run a shell command built like printf; its exit status, or -1 when it
 * did not exit (killed by a signal). */
__attribute__((format(printf, 1, 2)))
static inline int kit_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0 && (size_t)n < sizeof cmd, "kit_sh: command longer than %zu bytes", sizeof cmd);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole file as a NUL-terminated string (malloc'd), or NULL when it
 * cannot be opened. Works on pipes and other unseekable files too. */
static inline char *kit_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_not_null(m);
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    return buf;
}

static inline void kit_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "cannot write %s", path);
}

static inline int kit_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A new scratch directory /tmp/vlsim-<tag>-XXXXXX into dir[n]. */
static inline void kit_tmpdir(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/vlsim-%s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir), "cannot make %s", dir);
}

static inline void kit_rm_rf(const char *dir)
{
    cr_expect_eq(kit_sh("rm -rf '%s'", dir), 0);
}

#endif
