/* Flushing the trace when SIGINT or SIGTERM ends the program, invisibly to the program. */
#ifndef GW_SIGNALS_H
#define GW_SIGNALS_H

/* Puts the flushing handler in front of the program's disposition of SIGINT and SIGTERM
 * (none for an ignored signal). Once per process image, after tracing started. */
void gw_signals_install(void);

#endif
