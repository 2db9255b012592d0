/* stop.c — see stop.h. The handler only stores the signal number (and on a
 * second signal restores the default action and raises it again): nothing
 * else is async-signal-safe to do there. */
#include "sim/stop.h"
#include <signal.h>
#include <string.h>

/* The program's only global mutable state, by necessity: a signal handler
 * can reach nothing else. Written by the handler, read by stop_requested. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    if (stop_signal) {                 /* asked twice: stop now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
}

int stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;          /* reads and writes carry on; loops poll the flag */
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
        return -1;
    return 0;
}

int stop_requested(void)
{
    return stop_signal;
}
