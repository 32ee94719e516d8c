/*
 * The shim's own writes raise no signal the program did not ask for. A write past the
 * process's file-size limit (ulimit -f) raises SIGXFSZ, one to a pipe whose reader left
 * (stderr piped to `head`) SIGPIPE, both fatal by default, and both sent to the thread that
 * wrote: the program's own thread at the exit flush, the first call or a warning. Each write
 * here blocks the two in the calling thread, takes back the one it raised (sigtimedwait,
 * zero timeout) and restores the mask: the write fails with EFBIG or EPIPE and the caller
 * ends tracing with one warning. A signal already pending before the write is left alone.
 */
#ifndef GW_QUIET_IO_H
#define GW_QUIET_IO_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The calling thread blocks every signal for good (the writer thread): its writes need no
 * masking, a signal they raise stays pending on it and is never delivered. */
void gw_quiet_io_thread_blocks_all(void);

ssize_t gw_quiet_write(int fd, const void *buf, size_t len);
ssize_t gw_quiet_writev(int fd, const struct iovec *parts, int nparts);
ssize_t gw_quiet_pwrite(int fd, const void *buf, size_t len, off_t at);
int gw_quiet_fallocate(int fd, off_t at, off_t len);

/* 1 when `end` bytes of file fit under the process's file-size limit (or there is none).
 * The limit is read again at most once a second: a syscall per chunk would cost the writer
 * more than its chunk (a limit lowered since is still met safely: the write fails quietly). */
int gw_below_file_size_limit(off_t end);

#endif
