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
    char root[PATH_MAX], probe[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", root, sizeof root - 1);
    if (n <= 0)
        return;
    root[n] = '\0';
    for (int up = 0; up < 8; up++) {      /* the nearest directory above with calib/data */
        char *slash = strrchr(root, '/');
        if (!slash)
            return;
        *slash = '\0';
        struct stat st;
        snprintf(probe, sizeof probe, "%s/calib/data", root);
        if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode))
            break;
    }
    add_dir(root, "calib/data");
    add_dir(root, "tests/data/scenario");
}

void sandbox_allow(const char *path)
{
    snprintf(sb.allowed, sizeof sb.allowed, "%s", path ? path : "");
}

FILE *sandbox_fopen(const char *path, const char *mode)
{
    if (!path || !mode || mode[0] != 'r' || strchr(mode, '+')) {
        errno = EACCES;
        return NULL;
    }
    if (sb.allowed[0] && strcmp(path, sb.allowed) == 0)
        return fopen(path, mode);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < sb.n; i++)
        if (strcmp(base, sb.name[i]) == 0)
            return fopen(sb.full[i], mode);
    errno = ENOENT;
    return NULL;
}
