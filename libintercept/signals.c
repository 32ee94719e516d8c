/*
 * The signals that end a program and that a handler can see: SIGINT and SIGTERM, and the
 * crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, abort()'s SIGABRT). The shim's handler flushes
 * the trace (bounded: a crash inside a lock the writer needs costs half a second, never a
 * hang), then does what the program's disposition says. The program must see exactly what it would see without the shim:
 *
 * - sigaction() and signal() are interposed for these signals while the shim's handler
 *   is in the kernel: a query answers the program's disposition, a change is kept as the
 *   program's and the kernel gets the shim's handler with the program's mask and flags
 *   (SA_RESETHAND, SA_NODEFER, SA_RESTART, SA_ONSTACK), so what is blocked during the
 *   handler, what is restarted and when the disposition resets are the program's;
 * - an ignored signal is left to the kernel ignored (it stays ignored across exec, and
 *   nothing is delivered): the shim then does not flush on it;
 * - a one-shot handler (SA_RESETHAND) runs once: the kernel resets the disposition on
 *   delivery, the program's view becomes SIG_DFL with it, and the shim's handler goes back
 *   in front of that default;
 * - SIG_DFL: after the flush the process dies of the same signal (the parent's status).
 * A sanitizer runtime first in LD_PRELOAD calls sigaction through these before it is
 * initialized: they are built without instrumentation (GW_NO_SANITIZE).
 */
#include "signals.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "gw_cuda.h"
#include "recorder.h"

#define SIGNAL_FLUSH_TIMEOUT_MS 500
#define FLUSH_SIGNALS 7

static const int flush_signals[FLUSH_SIGNALS] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS,
                                                 SIGFPE, SIGILL, SIGABRT};
/* what the program set, and whether the kernel holds the shim's handler in its place */
static struct sigaction program_action[FLUSH_SIGNALS];
static int ours_installed[FLUSH_SIGNALS];
static pthread_mutex_t signals_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under the lock with every signal blocked: a handler that changes its own disposition
 * (signal(sig, SIG_DFL) before re-raising) never interrupts this thread inside the lock. */
GW_NO_SANITIZE static void lock_blocking(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, saved);
    pthread_mutex_lock(&signals_lock);
}

GW_NO_SANITIZE static void unlock_restoring(const sigset_t *saved)
{
    pthread_mutex_unlock(&signals_lock);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef __sighandler_t (*signal_fn)(int, __sighandler_t);

GW_NO_SANITIZE static void *next_libc(const char *name)
{
    /* dlvsym: the shim's own dlsym is interposed; these names are not versioned twice */
    static const char *const versions[] = {"GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
    void *fn = NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !fn; i++)
        fn = dlvsym(RTLD_NEXT, name, versions[i]);
    return fn;
}

GW_NO_SANITIZE static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    static sigaction_fn real;
    if (!real)
        real = (sigaction_fn)next_libc("sigaction");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(sig, act, old);
}

GW_NO_SANITIZE static int slot_of(int sig)
{
    for (int i = 0; i < FLUSH_SIGNALS; i++)
        if (flush_signals[i] == sig)
            return i;
    return -1;
}

GW_NO_SANITIZE static int ignores(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN;
}

static void on_signal(int sig, siginfo_t *info, void *context);

/* The shim's handler in the kernel, behaving as the program's action asked. */
GW_NO_SANITIZE static int put_ours(int sig, const struct sigaction *program)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_signal;
    ours.sa_mask = program->sa_mask;
    ours.sa_flags = SA_SIGINFO |
                    (program->sa_flags & (SA_RESETHAND | SA_NODEFER | SA_RESTART | SA_ONSTACK));
    return real_sigaction(sig, &ours, NULL);
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    gw_recorder_flush_now(SIGNAL_FLUSH_TIMEOUT_MS);
    int slot = slot_of(sig);
    if (slot < 0)
        return;
    struct sigaction program = program_action[slot];
    if (program.sa_flags & SA_RESETHAND) {
        /* the kernel reset the disposition as it delivered this one: the program's is
         * SIG_DFL now, and the shim's handler goes back in front of it (the next one still
         * flushes before it kills) */
        memset(&program_action[slot], 0, sizeof program_action[slot]);
        program_action[slot].sa_handler = SIG_DFL;
        ours_installed[slot] = put_ours(sig, &program_action[slot]) == 0;
    }
    errno = saved_errno;
    if (program.sa_flags & SA_SIGINFO) {
        if (program.sa_sigaction)
            program.sa_sigaction(sig, info, context);
        return;
    }
    if (program.sa_handler == SIG_IGN)
        return;
    if (program.sa_handler == SIG_DFL) {
        /* die of the same signal, so the parent sees the right status */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        real_sigaction(sig, &dfl, NULL);
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, sig);
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
        raise(sig);
        return;
    }
    program.sa_handler(sig);
}

void gw_signals_install(void)
{
    sigset_t saved;
    lock_blocking(&saved);
    for (int i = 0; i < FLUSH_SIGNALS; i++) {
        struct sigaction current;
        if (ours_installed[i] || real_sigaction(flush_signals[i], NULL, &current) != 0 ||
            ignores(&current))
            continue;  /* (an ignored signal stays ignored: never make it deliverable) */
        program_action[i] = current;
        ours_installed[i] = put_ours(flush_signals[i], &current) == 0;
    }
    unlock_restoring(&saved);
}

GW_NO_SANITIZE int gw_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int slot = slot_of(sig);
    if (slot < 0)
        return real_sigaction(sig, act, old);
    sigset_t saved;
    lock_blocking(&saved);
    int rc = 0;
    if (!ours_installed[slot]) {
        rc = real_sigaction(sig, act, old);
    } else {
        struct sigaction previous = program_action[slot];
        if (act && ignores(act)) {
            rc = real_sigaction(sig, act, NULL);  /* ignored: the kernel's, as without us */
            if (rc == 0)
                ours_installed[slot] = 0;
        } else if (act) {
            rc = put_ours(sig, act);
        }
        if (rc == 0) {
            if (act)
                program_action[slot] = *act;
            if (old)
                *old = previous;
        }
    }
    int saved_errno = errno;
    unlock_restoring(&saved);
    errno = saved_errno;
    return rc;
}

/* glibc's signal(): BSD semantics, the signal blocked in its handler, calls restarted. */
GW_NO_SANITIZE __sighandler_t gw_signal(int sig, __sighandler_t handler)
{
    int slot = slot_of(sig);
    if (slot < 0) {
        static signal_fn real;
        if (!real)
            real = (signal_fn)next_libc("signal");
        if (!real) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return real(sig, handler);
    }
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (gw_sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;  /* (one union with sa_sigaction: an SA_SIGINFO one comes back too) */
}

GW_EXPORT GW_NO_SANITIZE int sigaction(int sig, const struct sigaction *act,
                                       struct sigaction *old)
{
    return gw_sigaction(sig, act, old);
}

GW_EXPORT GW_NO_SANITIZE __sighandler_t signal(int sig, __sighandler_t handler)
{
    return gw_signal(sig, handler);
}
