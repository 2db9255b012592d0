/* stop.h — a request to stop, from SIGINT or SIGTERM.
 *
 * stop_install() sets handlers that only record the signal; long loops (a
 * replication's event loop, the sweep's work queue) poll stop_requested()
 * now and then and wind down cleanly: nothing half-written, temporaries
 * removed. A second signal while the first is being honoured ends the
 * process at once (the default action), for a user who will not wait.
 * This module holds the one piece of global mutable state the program has:
 * the flag a signal handler must be able to reach. */
#ifndef VL_STOP_H
#define VL_STOP_H

/* Catch SIGINT and SIGTERM from now on. 0, or -1 (sigaction failed). */
int stop_install(void);

/* The signal that asked to stop (SIGINT, SIGTERM), or 0. Async-signal-safe
 * to read; cheap enough to call every few thousand events. */
int stop_requested(void);

#endif
