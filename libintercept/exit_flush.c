/* _exit and _Exit, interposed: the trace is flushed before the process ends. */
#include "exit_flush.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gw_cuda.h"
#include "recorder.h"

#define EXIT_FLUSH_TIMEOUT_MS 500

/* _exit skips atexit, and it is how Python's multiprocessing workers (DataLoader) and many
 * forked children end: flush first. _exit may be called from a signal handler that
 * interrupted us holding a lock, so only ask the writer for a bounded flush (as the signal
 * handler does) rather than shutting down. A vfork child shares the parent's memory and must
 * not touch the parent's recorder, hence the pid check. */
_Noreturn void gw_exit_now(int status)
{
    if (gw_recorder_active() && (uint32_t)getpid() == gw_recorder_pid())
        gw_recorder_flush_now(EXIT_FLUSH_TIMEOUT_MS);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

GW_EXPORT void _exit(int status) { gw_exit_now(status); }

GW_EXPORT void _Exit(int status) { gw_exit_now(status); }
