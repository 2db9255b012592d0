/* slurp.c — whole-file reads. See slurp.h. */
#include "sim/slurp.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

char *slurp_file(const char *path, size_t max, size_t *len, int *errnum)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *errnum = errno;
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = NULL;
    int e = 0;
    for (;;) {
        if (max && cap > max + 1)
            cap = max + 1;                          /* read at most one byte too many */
        char *nb = realloc(buf, cap + 1);          /* + 1: the terminating NUL */
        if (!nb) {
            e = ENOMEM;
            break;
        }
        buf = nb;
        n += fread(buf + n, 1, cap - n, f);
        if (ferror(f)) {
            e = errno ? errno : EIO;
            break;
        }
        if (max && n > max) {
            e = EFBIG;
            break;
        }
        if (n < cap)
            break;                                  /* end of file */
        cap *= 2;
    }
    fclose(f);
    if (e) {
        free(buf);
        *errnum = e;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}
