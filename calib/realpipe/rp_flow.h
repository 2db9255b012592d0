/* rp_flow.h — the flow-style number lists ("[0.25, 0.5, 1]") that the
 * calibration tools' summary lines hold and the scenarios they write take:
 * read one from a line, write one to a stream. Nothing here opens a file
 * or keeps state. */
#ifndef VL_RP_FLOW_H
#define VL_RP_FLOW_H

#include <stdio.h>

/* Read "[a, b, ...]" at *s (spaces allowed before a comma or the bracket)
 * into x, at most max finite numbers, moving *s past the "]": the count
 * (>= 1), or -1 (*s unmoved) when it is not such a list or is longer. */
int rp_flow_read(const char **s, double *x, int max);

/* Write x[0..n) as "[a, b, ...]" (each %.6g). */
void rp_flow_write(FILE *f, const double *x, int n);

#endif
