#include "log.h"

#include "quiet_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int log_verbose;
static int warned[GW_WARN_COUNT];

void gw_log_set_verbose(int verbose) { log_verbose = verbose; }

static void emit(const char *fmt, va_list args)
{
    char line[512];
    int saved_errno = errno;
    int n = snprintf(line, sizeof line, "gpuwatch[%d]: ", (int)getpid());
    if (n < 0)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, args);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* (stderr may be a pipe whose reader left: no SIGPIPE from a warning) */
    ssize_t ignored = gw_quiet_write(STDERR_FILENO, line, len);
    (void)ignored;
    errno = saved_errno;
}

void gw_debug(const char *fmt, ...)
{
    if (!log_verbose)
        return;
    va_list args;
    va_start(args, fmt);
    emit(fmt, args);
    va_end(args);
}

void gw_warn(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    emit(fmt, args);
    va_end(args);
}

void gw_warn_once(enum gw_warn_once topic, const char *fmt, ...)
{
    if (__atomic_exchange_n(&warned[topic], 1, __ATOMIC_RELAXED))
        return;
    va_list args;
    va_start(args, fmt);
    emit(fmt, args);
    va_end(args);
}

void gw_log_reset_after_fork(void)
{
    /* A child is a new process: it deserves its own warnings. */
    for (int i = 0; i < GW_WARN_COUNT; i++)
        warned[i] = 0;
}
