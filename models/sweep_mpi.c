/* sweep_mpi.c — the MPI side of `vlsim sweep` (see sweep_mpi.h). Every MPI
 * call of vlsim is here, behind VLSIM_MPI; the normal build compiles only
 * the stubs and never sees mpi.h.
 *
 * Protocol (tag 1, one int each way): a worker sends 0 when it starts and
 * 1 each time it has finished (and written) a point; rank 0 answers every
 * message with the next point number, or -1 when none is left. When every
 * worker has been told -1, every point is done. */
#include <stdio.h>
#include <stdlib.h>
#include "models/sweep_mpi.h"

#ifdef VLSIM_MPI
#include <mpi.h>

enum { TAG = 1 };

static int g_rank, g_size = 1, g_started;

int sweep_mpi_init(void)
{
    if (!g_started) {
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited)
            MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &g_size);
        g_started = 1;
    }
    return g_size;
}

int sweep_mpi_rank(void)
{
    return g_rank;
}

static int serve(void *dctx, const int *todo, int n,
                 void (*progress)(void *pctx, int done, int total), void *pctx, char *err,
                 size_t errlen)
{
    (void)dctx;
    int next = 0, done = 0, stopped = 0;
    while (stopped < g_size - 1) {
        int msg;
        MPI_Status st;
        if (MPI_Recv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS) {
            snprintf(err, errlen, "sweep: MPI_Recv failed");
            return -1;
        }
        if (msg == 1) {
            done++;
            if (progress)
                progress(pctx, done, n);
        }
        int p = next < n ? todo[next++] : -1;
        if (p < 0)
            stopped++;
        if (MPI_Send(&p, 1, MPI_INT, st.MPI_SOURCE, TAG, MPI_COMM_WORLD) != MPI_SUCCESS) {
            snprintf(err, errlen, "sweep: MPI_Send to rank %d failed", st.MPI_SOURCE);
            return -1;
        }
    }
    if (done != n) {
        snprintf(err, errlen, "sweep: %d of %d points reported done", done, n);
        return -1;
    }
    return 0;
}

static int g_asked;

static int next_point(void *dctx)
{
    (void)dctx;
    int msg = g_asked ? 1 : 0, p = -1;
    g_asked = 1;
    if (MPI_Send(&msg, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Recv(&p, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        sweep_mpi_abort("sweep: lost contact with rank 0", 1);
    return p;
}

static sweep_dist g_dist;

const sweep_dist *sweep_mpi_dist(void)
{
    if (!g_started || g_size < 2)
        return NULL;
    g_dist = (sweep_dist){ g_rank, serve, next_point, NULL };
    return &g_dist;
}

void sweep_mpi_abort(const char *msg, int code)
{
    fprintf(stderr, "vlsim sweep (rank %d of %d): %s\n", g_rank, g_size, msg);
    fflush(stderr);
    if (g_started)
        MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
    exit(code ? code : 1);
}

void sweep_mpi_finalize(void)
{
    if (g_started)
        MPI_Finalize();
    g_started = 0;
}

#else /* !VLSIM_MPI */

int sweep_mpi_init(void)
{
    return 1;
}

int sweep_mpi_rank(void)
{
    return 0;
}

const sweep_dist *sweep_mpi_dist(void)
{
    return NULL;
}

void sweep_mpi_abort(const char *msg, int code)
{
    fprintf(stderr, "vlsim sweep: %s\n", msg);
    exit(code ? code : 1);
}

void sweep_mpi_finalize(void)
{
}

#endif
