/* sweep_mpi.h — `vlsim sweep` over MPI ranks (build with `make MPI=1`).
 *
 * Rank 0 only coordinates: it sets the sweep up, hands point numbers out
 * one at a time to whichever rank asks (dynamic scheduling), and writes
 * results.csv once every point file is there. Every other rank runs one
 * point at a time and writes its point file itself, so DIR must be on a
 * filesystem all ranks see. Without VLSIM_MPI (the normal build) these
 * are stubs: no MPI, one process. All MPI calls are in sweep_mpi.c. */
#ifndef VL_SWEEP_MPI_H
#define VL_SWEEP_MPI_H

#include "models/sweep.h"

/* Start MPI (once). Returns the number of ranks, 1 without MPI. */
int sweep_mpi_init(void);

/* This process's rank (0 without MPI). */
int sweep_mpi_rank(void);

/* The hooks for sweep_opts.dist: NULL without MPI or with a single rank
 * (then rank 0 runs every point itself, as the normal build does). */
const sweep_dist *sweep_mpi_dist(void);

/* Print "vlsim sweep (rank R): msg" to stderr and abort every rank with
 * code (MPI_Abort); exit(code) without MPI. */
void sweep_mpi_abort(const char *msg, int code);

/* Shut MPI down (no-op without MPI). */
void sweep_mpi_finalize(void);

#endif
