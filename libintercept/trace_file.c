/* The trace file: created once per process, header first, then chunks appended by the
 * writer thread. A write that fails stops tracing; the program never notices. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "gpuwatch/chunk_crc.h"
#include "log.h"
#include "quiet_io.h"
#include "recorder_internal.h"

static int make_dirs(const char *dir)
{
    char path[1024];
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(path, dir);
    for (char *slash = path + 1; *slash; slash++) {
        if (*slash != '/')
            continue;
        *slash = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *slash = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static int32_t env_int(const char *primary, const char *fallback)
{
    const char *text = getenv(primary);
    if (!text && fallback)
        text = getenv(fallback);
    if (!text || !*text)
        return -1;
    char *end;
    long value = strtol(text, &end, 10);
    return (*end || value < 0 || value > INT32_MAX) ? -1 : (int32_t)value;
}

static void read_cmdline(char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

/* What the DataLoader advice divides among workers; unknown (no flag) when neither count
 * can be had. */
static void count_cpus(struct gw_file_header *header)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (online <= 0 && usable <= 0)
        return;
    header->cpus_online = online > 0 ? (uint32_t)online : (uint32_t)usable;
    header->cpus_usable = usable > 0 ? (uint32_t)usable : header->cpus_online;
    header->feature_flags |= GW_FEAT_CPU_COUNT;
}

static void fill_header(struct gw_file_header *header)
{
    memset(header, 0, sizeof *header);
    memcpy(header->magic, GW_FILE_MAGIC, sizeof header->magic);
    header->version = GW_FORMAT_VERSION;
    header->min_reader_version = GW_MIN_READER_VERSION;
    header->header_size = GW_FILE_HEADER_SIZE;
    header->endian_mark = GW_ENDIAN_MARK;
    header->feature_flags = GW_FEAT_HOST_CALLS | GW_FEAT_CPU_SAMPLES |  /* (writer.c) */
                            GW_FEAT_CORR_DELTA;                       /* (recorder.c) */
    header->clock_source = (uint32_t)gw_clock_state.source;
    header->pid = (uint32_t)getpid();
    header->ppid = (uint32_t)getppid();
    header->rank = env_int("RANK", "SLURM_PROCID");
    header->local_rank = env_int("LOCAL_RANK", "SLURM_LOCALID");
    header->world_size = env_int("WORLD_SIZE", "SLURM_NTASKS");
    header->device_ordinal = -1;
    header->cupti_status = GW_CUPTI_NOT_TRIED;
    header->start_ns = gw_now();
    header->realtime_minus_trace_ns = (int64_t)(gw_realtime_ns() - gw_now());
    gethostname(header->hostname, sizeof header->hostname - 1);
    read_cmdline(header->cmdline, sizeof header->cmdline);
    count_cpus(header);
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *bytes = data;
    while (len > 0) {
        ssize_t n = gw_quiet_write(fd, bytes, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        bytes += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_parts(int fd, struct iovec parts[2], size_t total)
{
    ssize_t n;
    do
        n = gw_quiet_writev(fd, parts, 2);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if ((size_t)n == total)
        return 0;
    /* A short write (signal, nearly full disk): finish byte-wise from where it stopped. */
    size_t done = (size_t)n;
    for (int i = 0; i < 2; i++) {
        if (done >= parts[i].iov_len) {
            done -= parts[i].iov_len;
            continue;
        }
        if (write_all(fd, (const uint8_t *)parts[i].iov_base + done, parts[i].iov_len - done))
            return -1;
        done = 0;
    }
    return 0;
}

/* The trace's descriptor is moved high, out of the way of a program that closes
 * descriptors and opens its own: the lowest free number goes to the program, not onto ours. */
#define HIGH_FD_FLOOR 900

static int move_high(int fd)
{
    int floor = HIGH_FD_FLOOR;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        lim.rlim_cur < (rlim_t)HIGH_FD_FLOOR + 64)
        floor = lim.rlim_cur > 128 ? (int)lim.rlim_cur - 64 : fd;
    int high = floor > fd ? fcntl(fd, F_DUPFD_CLOEXEC, floor) : -1;
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

static int remember(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    gw_rec.fd = fd;
    gw_rec.dev = st.st_dev;
    gw_rec.ino = st.st_ino;
    return 0;
}

/* Under file_lock, before each write: 1 when gw_rec.fd is still the trace file. A program
 * may have closed it (closefrom(3) in a daemon) and opened its own file on the number: that
 * descriptor is the program's and is never written, closed or moved; the trace is reopened
 * by its path and written on from its end. 0 when it cannot be (tracing then stops). */
static int is_ours(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == gw_rec.dev && st.st_ino == gw_rec.ino;
}

static int still_ours(void)
{
    if (is_ours(gw_rec.fd))
        return 1;
    gw_rec.fd = -1;
    struct stat st;
    int fd = open(gw_rec.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != gw_rec.dev || st.st_ino != gw_rec.ino ||
                    lseek(fd, 0, SEEK_END) < 0)) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        gw_rec.failed = 1;
        gw_warn_once(GW_WARN_WRITE, "the program closed the trace's descriptor and %s cannot "
                     "be reopened; tracing stopped, the program continues", gw_rec.path);
        return 0;
    }
    gw_rec.fd = move_high(fd);
    return 1;
}

int gw_trace_file_open(const char *dir)
{
    fill_header(&gw_rec.header);
    if (make_dirs(dir) != 0) {
        gw_warn_once(GW_WARN_OUTPUT, "cannot create trace directory %s: %s; tracing is off",
                     dir, strerror(errno));
        return -1;
    }
    char rank[24] = "";
    if (gw_rec.header.rank >= 0)
        snprintf(rank, sizeof rank, "-rank%d", gw_rec.header.rank);
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        char suffix[16] = "";
        if (attempt)
            snprintf(suffix, sizeof suffix, ".%d", attempt);
        snprintf(gw_rec.path, sizeof gw_rec.path, "%s/%s-%u%s%s%s", dir,
                 gw_rec.header.hostname, gw_rec.header.pid, rank, suffix, GW_TRACE_SUFFIX);
        fd = open(gw_rec.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        gw_warn_once(GW_WARN_OUTPUT, "cannot create a trace file in %s: %s; tracing is off",
                     dir, strerror(errno));
        gw_rec.path[0] = '\0';
        return -1;
    }
    if (write_all(fd, &gw_rec.header, sizeof gw_rec.header) != 0) {
        gw_warn_once(GW_WARN_WRITE, "cannot write %s: %s; tracing is off", gw_rec.path,
                     strerror(errno));
        close(fd);
        unlink(gw_rec.path);
        gw_rec.path[0] = '\0';
        return -1;
    }
    fd = move_high(fd);
    if (remember(fd) != 0) {
        close(fd);
        unlink(gw_rec.path);
        gw_rec.path[0] = '\0';
        return -1;
    }
    gw_rec.bytes = sizeof gw_rec.header;
    return 0;
}

int gw_trace_file_write_chunk(uint16_t kind, uint32_t tid, uint64_t base_ts, uint32_t seq,
                              const uint8_t *payload, size_t len)
{
    struct gw_chunk_header chunk = {
        .magic = GW_CHUNK_MAGIC,
        .payload_len = (uint32_t)len,
        .tid = tid,
        .kind = kind,
        .base_ts_ns = base_ts,
        .seq = seq,
    };
    chunk.crc32 = gw_chunk_crc(&chunk, payload, len, GW_FORMAT_VERSION);
    pthread_mutex_lock(&gw_rec.file_lock);
    int rc = -1;
    if (gw_rec.fd >= 0 && !gw_rec.failed &&
        !gw_below_file_size_limit((off_t)(gw_rec.bytes + sizeof chunk + len))) {
        /* the file-size limit (ulimit -f) is the trace's end: the chunk is not begun, so the
         * file ends on a whole chunk and the kernel raises no SIGXFSZ */
        gw_rec.failed = 1;
        gw_warn_once(GW_WARN_WRITE, "%s reached the file-size limit (ulimit -f); tracing "
                     "stopped, the program continues", gw_rec.path);
    } else if (gw_rec.fd >= 0 && !gw_rec.failed && still_ours()) {
        /* Header and payload in one writev, so a crash never leaves a header without its
         * payload in the middle of the file. */
        struct iovec parts[2] = {{&chunk, sizeof chunk}, {(void *)payload, len}};
        rc = write_parts(gw_rec.fd, parts, sizeof chunk + len);
        if (rc != 0) {
            gw_rec.failed = 1;
            gw_warn_once(GW_WARN_WRITE, "cannot write %s: %s; tracing stopped, the program "
                         "continues", gw_rec.path, strerror(errno));
        } else {
            gw_rec.chunks++;
            gw_rec.bytes += sizeof chunk + len;
        }
    }
    pthread_mutex_unlock(&gw_rec.file_lock);
    return rc;
}

void gw_trace_file_patch_header(void)
{
    pthread_mutex_lock(&gw_rec.file_lock);
    if (gw_rec.fd >= 0 && !gw_rec.failed && still_ours()) {
        ssize_t n = gw_quiet_pwrite(gw_rec.fd, &gw_rec.header, sizeof gw_rec.header, 0);
        (void)n; /* a failed patch leaves the first header, which is still valid */
    }
    pthread_mutex_unlock(&gw_rec.file_lock);
}

void gw_trace_file_close(void)
{
    pthread_mutex_lock(&gw_rec.file_lock);
    if (gw_rec.fd >= 0 && (gw_rec.failed ? is_ours(gw_rec.fd) : still_ours())) {
        if (!gw_rec.failed) {
            ssize_t n = gw_quiet_pwrite(gw_rec.fd, &gw_rec.header, sizeof gw_rec.header, 0);
            (void)n;
        }
        close(gw_rec.fd);
    }
    gw_rec.fd = -1;
    pthread_mutex_unlock(&gw_rec.file_lock);
}

void gw_trace_file_forget(void)
{
    if (gw_rec.fd >= 0 && is_ours(gw_rec.fd))
        close(gw_rec.fd);
    gw_rec.fd = -1;
}
