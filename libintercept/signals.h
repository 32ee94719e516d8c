/* Flushing the trace when a signal ends the program (SIGINT, SIGTERM, a crash), invisibly
 * to the program. */
#ifndef GW_SIGNALS_H
#define GW_SIGNALS_H

/* Puts the flushing handler in front of the program's disposition of each such signal
 * (none for an ignored one). Once per process image, after tracing started. */
void gw_signals_install(void);

/* The program's sigaction() and signal() (exported under those names; resolve.c hands
 * these out to a sanitizer runtime asking for the next definition). */
#include <signal.h>
int gw_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
__sighandler_t gw_signal(int sig, __sighandler_t handler);

#endif
