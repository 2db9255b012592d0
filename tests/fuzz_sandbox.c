/* fuzz_sandbox.c — the fopen every fuzz target's code under test gets
 * (see fuzz_sandbox.h). Test code only; never linked into vlsim. */
#include "tests/fuzz_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *__real_fopen(const char *path, const char *mode);

#define SB_MAX 64

static struct {
    int n;
    char name[SB_MAX][128];
    char full[SB_MAX][PATH_MAX];
    char allowed[PATH_MAX];
} sb;

static void add_dir(const char *root, const char *sub)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && sb.n < SB_MAX) {
        char full[PATH_MAX];
        struct stat st;
        if (strlen(e->d_name) >= sizeof sb.name[0]
            || snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full
            || lstat(full, &st) || !S_ISREG(st.st_mode))
            continue;
        strcpy(sb.name[sb.n], e->d_name);
        strcpy(sb.full[sb.n], full);
        sb.n++;
    }
    closedir(d);
}

void sandbox_init(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        if (!getcwd(exe, sizeof exe))
            return;
    } else {
        exe[n] = '\0';
        for (int up = 0; up < 3; up++) {         /* ROOT/build/fuzz/NAME -> ROOT */
            char *slash = strrchr(exe, '/');
            if (slash)
                *slash = '\0';
        }
    }
    add_dir(exe, "calib/data");
    add_dir(exe, "tests/data/scenario");
}

void sandbox_allow(const char *path)
{
    snprintf(sb.allowed, sizeof sb.allowed, "%s", path ? path : "");
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
    if (!path || !mode || mode[0] != 'r' || strchr(mode, '+')) {
        errno = EACCES;
        return NULL;
    }
    if (sb.allowed[0] && strcmp(path, sb.allowed) == 0)
        return __real_fopen(path, mode);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < sb.n; i++)
        if (strcmp(base, sb.name[i]) == 0)
            return __real_fopen(sb.full[i], mode);
    errno = ENOENT;
    return NULL;
}
