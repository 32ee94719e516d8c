#include "quiet_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gw_cuda.h"

static GW_TLS int blocks_all;

void gw_quiet_io_thread_blocks_all(void) { blocks_all = 1; }

struct quiet {
    sigset_t old;
    int pipe_was_pending, fsize_was_pending, skip;
};

static void hush(struct quiet *q)
{
    q->skip = blocks_all;
    if (q->skip)
        return;
    sigset_t both, pending;
    sigemptyset(&both);
    sigaddset(&both, SIGPIPE);
    sigaddset(&both, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &both, &q->old);
    sigemptyset(&pending);
    sigpending(&pending);
    q->pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;
    q->fsize_was_pending = sigismember(&pending, SIGXFSZ) == 1;
}

static void take_back(int sig)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    struct timespec now = {0, 0};
    while (sigtimedwait(&one, NULL, &now) < 0 && errno == EINTR)
        ;
}

/* Takes back what the write raised (only on the errors that raise them), restores the mask
 * and the write's errno. */
static ssize_t unhush(struct quiet *q, ssize_t rc)
{
    if (q->skip)
        return rc;
    int saved = errno;
    if (rc < 0 && (saved == EPIPE || saved == EFBIG)) {
        sigset_t pending;
        sigemptyset(&pending);
        sigpending(&pending);
        if (saved == EPIPE && !q->pipe_was_pending && sigismember(&pending, SIGPIPE) == 1)
            take_back(SIGPIPE);
        if (saved == EFBIG && !q->fsize_was_pending && sigismember(&pending, SIGXFSZ) == 1)
            take_back(SIGXFSZ);
    }
    pthread_sigmask(SIG_SETMASK, &q->old, NULL);
    errno = saved;
    return rc;
}

ssize_t gw_quiet_write(int fd, const void *buf, size_t len)
{
    struct quiet q;
    hush(&q);
    return unhush(&q, write(fd, buf, len));
}

ssize_t gw_quiet_writev(int fd, const struct iovec *parts, int nparts)
{
    struct quiet q;
    hush(&q);
    return unhush(&q, writev(fd, parts, nparts));
}

ssize_t gw_quiet_pwrite(int fd, const void *buf, size_t len, off_t at)
{
    struct quiet q;
    hush(&q);
    return unhush(&q, pwrite(fd, buf, len, at));
}

int gw_quiet_fallocate(int fd, off_t at, off_t len)
{
    struct quiet q;
    hush(&q);
    return (int)unhush(&q, fallocate(fd, 0, at, len));
}

int gw_below_file_size_limit(off_t end)
{
    static rlim_t limit = RLIM_INFINITY;
    static time_t read_at = -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);  /* (the vDSO's: no syscall) */
    if (__atomic_load_n(&read_at, __ATOMIC_RELAXED) != now.tv_sec) {
        struct rlimit lim;
        __atomic_store_n(&limit, getrlimit(RLIMIT_FSIZE, &lim) == 0 ? lim.rlim_cur
                                                                     : RLIM_INFINITY,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&read_at, now.tv_sec, __ATOMIC_RELAXED);
    }
    rlim_t cur = __atomic_load_n(&limit, __ATOMIC_RELAXED);
    return cur == RLIM_INFINITY || (rlim_t)end <= cur;
}
