/* rp_corefile.h — corecal's file (`vlrealpipe corecal --out`, `corepool`):
 * a result written as text, and its rounds read back, so that several
 * calibrations of one machine can be pooled (rp_cores_pool).
 *
 * The file, one line each (the lists as rp_flow writes them):
 *   # comment lines: what was measured, and how
 *   cpus: C                      the CPUs the process could run on
 *   units_per_s: [u1, .., uT]    each k's median units per second
 *   speedup: [1, s2, .., sT]     the line the scenario tools read
 *   rounds_k1: [..]  ..  rounds_kT: [..]   units per second with k busy,
 *                                round by round (R each)
 * A file from before the rounds lines (2026-12-04) can still give its
 * speedup line to the scenario tools but cannot be pooled.
 * Nothing here measures anything or keeps state. */
#ifndef VL_RP_COREFILE_H
#define VL_RP_COREFILE_H

#include <stddef.h>
#include "calib/realpipe/rp_cores.h"

/* The file's text for r (malloc'd, NULL when out of memory); comment, a
 * line of its own without the "# " (newlines in it are not allowed). */
char *rp_corefile_text(const rp_cores_result *r, const char *comment);

/* Read path's cpus and rounds lines into r (threads, rounds, cpus,
 * round_units) and summarise it (rp_cores_summarise). 0, or -1 and a
 * message naming the file and line. */
int rp_corefile_read(const char *path, rp_cores_result *r, char *err, size_t errlen);

#endif
