/* out.c — atomic output files (temporary + fsync + rename). See out.h. */
#include "sim/out.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, n, ".");
    } else if (slash == path) {
        snprintf(dir, n, "/");
    } else {
        size_t len = (size_t)(slash - path);
        snprintf(dir, n, "%.*s", (int)(len < n ? len : n - 1), path);
    }
}

int out_check(const char *path, bool force, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return 0;
    if (!*path || strlen(path) > 4000) {
        snprintf(err, errlen, "%s: not a usable output file name", path);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a directory", path);
            return -1;
        }
        if (!force) {
            snprintf(err, errlen, "%s: already exists; pass --force to replace it", path);
            return -1;
        }
    }
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: directory %s does not exist", path, dir);
        return -1;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, errlen, "%s: directory %s is not writable", path, dir);
        return -1;
    }
    return 0;
}

int out_open(out_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->is_stdout = true;
        snprintf(o->path, sizeof o->path, "-");
        return 0;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create temporary file: %s", path, strerror(errno));
        o->tmp[0] = 0;
        return -1;
    }
    fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = 0;
        return -1;
    }
    return 0;
}

int out_commit(out_file *o, char *err, size_t errlen)
{
    if (o->is_stdout) {
        if (fflush(stdout) != 0) {
            snprintf(err, errlen, "stdout: %s", strerror(errno));
            return -1;
        }
        o->f = NULL;
        return 0;
    }
    int bad = ferror(o->f) || fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    o->f = NULL;
    if (bad || rename(o->tmp, o->path) != 0) {
        if (!bad)
            saved = errno;
        snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(saved));
        unlink(o->tmp);
        o->tmp[0] = 0;
        return -1;
    }
    o->tmp[0] = 0;
    return 0;
}

void out_abort(out_file *o)
{
    if (o->f && !o->is_stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = 0;
}
