/* slurp.h — read a whole file into memory, with a size limit.
 * One helper instead of a read loop in every module that parses a file
 * (results.csv, point files, templates). It never prints. */
#ifndef VL_SLURP_H
#define VL_SLURP_H

#include <stddef.h>

/* The bytes of path, NUL-terminated (malloc'd; the caller frees), with the
 * length in *len. NULL on failure with *errnum set: the open or read error,
 * EFBIG when the file holds more than max bytes (0: no limit; at most max + 1
 * bytes are read), ENOMEM. */
char *slurp_file(const char *path, size_t max, size_t *len, int *errnum);

#endif
