/* _exit and _Exit end the process without atexit: the shim flushes first. */
#ifndef GW_EXIT_FLUSH_H
#define GW_EXIT_FLUSH_H

/* A bounded flush, then the exit (the shim's _exit/_Exit; resolve.c hands it out under
 * those names to a sanitizer runtime asking for the next definition). */
_Noreturn void gw_exit_now(int status);

#endif
