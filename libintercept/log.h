/* Shim diagnostics: stderr only, formatted on the stack and written with write(2) so they
 * are safe in signal handlers and never touch the program's stdio buffers. */
#ifndef GW_LOG_H
#define GW_LOG_H

enum gw_warn_once {
    GW_WARN_OUTPUT,
    GW_WARN_WRITE,
    GW_WARN_CONFIG,
    GW_WARN_DRIVER,
    GW_WARN_CUPTI,
    GW_WARN_RINGS,
    GW_WARN_COUNT
};

void gw_log_set_verbose(int verbose);
void gw_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like gw_warn, but at most once per process for each topic. */
void gw_warn_once(enum gw_warn_once topic, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gw_log_reset_after_fork(void);

#endif
