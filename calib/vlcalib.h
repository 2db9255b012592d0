/* vlcalib.h — the vlcalib command as a function, so tests can run it in
 * process. calib/vlcalib.c is only main() around it. This interface must
 * never grow logic of its own. */
#ifndef VL_CALIB_VLCALIB_H
#define VL_CALIB_VLCALIB_H

#include <stdio.h>

/* Run vlcalib with argv (argv[0] is the program name), writing the summary
 * to out and messages to err. Returns the exit status: 0 done, 1 a --check
 * found an error above tolerance, 2 any error (bad usage, unknown model,
 * existing output without --force, a failing backend). */
int vlcalib_main(int argc, char **argv, FILE *out, FILE *err);

#endif
