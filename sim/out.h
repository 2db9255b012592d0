/* out.h — output files that appear whole or not at all.
 *
 * An output is written to a temporary file beside its destination and
 * renamed over it only on commit, so a crash or an error never leaves a
 * half-written file, and an existing file is replaced only when the caller
 * allows it (--force). "-" means standard output (written directly).
 * Check every destination with out_check before any work starts. */
#ifndef VL_OUT_H
#define VL_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;                 /* where to write */
    bool is_stdout;
    char path[4096];         /* the destination */
    char tmp[4096];          /* the temporary beside it */
} out_file;

/* 0 when path can be written: "-", or a file in an existing writable
 * directory that does not exist yet (or force). Else -1 and a message. */
int out_check(const char *path, bool force, char *err, size_t errlen);
/* Open the temporary for path. 0, or -1 and a message. */
int out_open(out_file *o, const char *path, char *err, size_t errlen);
/* Flush, close and rename into place. 0, or -1 and a message (the
 * temporary is removed and the destination untouched). */
int out_commit(out_file *o, char *err, size_t errlen);
/* Give up: close and remove the temporary. Safe on a file never opened. */
void out_abort(out_file *o);

#endif
